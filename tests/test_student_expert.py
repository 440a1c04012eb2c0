"""【学生的专家】lecture14/expert_heuristic.py 是学生可以改的文件：这里只检查它能被读进来（写错了就用学生运行脚本时
看到的同一句"文件:行: ……"失败）。和讲义的专家不同时，测试结果的末尾有一行说明（conftest.pytest_terminal_summary）；
其余测试都用讲义的专家（lecture14/evolve/lecture_expert.py），学生改了这个文件也不会失败。"""

import os
import re

import pytest

from conftest import LECTURE_EXPERT, ROOT, STUDENT_EXPERT, run_script, run_script_fresh
from evolve import ProgramError, render
from evolve.problem import EXPERT, load_heuristic


def test_student_expert_heuristic_parses(request):
    message = None
    try:
        load_heuristic(STUDENT_EXPERT)
    except ProgramError as e:                        # 学生运行脚本时看到的同一句话
        message = str(e)
    if message is not None:
        # 和脚本一样按终端宽度折行、续行缩进两格（学生报过：80 列的终端里这一句是 248 列的一行，被终端从字中间截断）
        from console import wrap
        from layout import display_width
        width = request.config.get_terminal_writer().fullwidth
        said = "\n".join(part for line in f"lecture14/expert_heuristic.py 读不进来（和运行脚本时看到的一样）：\n{message}"
                         .split("\n") for part in (wrap(line, width, "  ") if display_width(line) > width else [line]))
        pytest.fail(said, pytrace=False)


def test_tests_use_the_pinned_lecture_expert():
    assert os.environ["MINI_ALPHAEVOLVE_EXPERT"] == LECTURE_EXPERT
    assert render(EXPERT) == render(load_heuristic(LECTURE_EXPERT))


def test_changed_student_expert_is_noted_in_one_line(tmp_path, monkeypatch):
    import conftest
    changed = tmp_path / "expert_heuristic.py"
    with open(LECTURE_EXPERT, encoding="utf-8") as f:                 # 不管学生的文件现在什么样
        changed.write_text(f.read().replace("if M <= 16:", "if M <= 64:"), encoding="utf-8")
    monkeypatch.setattr(conftest, "STUDENT_EXPERT", str(changed))
    note = conftest.student_expert_note()
    assert note is not None and note.split("\n")[1] == "    git checkout lecture14/expert_heuristic.py", note
    import console
    monkeypatch.setattr(console, "wrap_width", lambda: 80)           # 学生的 80 列终端（以前印成 157 列的一行）
    monkeypatch.delenv("TESTS_PREFETCH_REPORT", raising=False)        # 调试开关的清单也写在末尾，排在这一段后面
    lines = []
    conftest.pytest_terminal_summary(type("Reporter", (), {"write_line": lambda self, line: lines.append(line)})())
    assert lines[-1] == "    git checkout lecture14/expert_heuristic.py" and len(lines) >= 3
    assert max(map(console.display_width, lines)) <= 80, lines
    monkeypatch.setattr(conftest, "STUDENT_EXPERT", LECTURE_EXPERT)
    assert conftest.student_expert_note() is None


def test_scripts_without_the_variable_read_the_student_file(tmp_path):
    # 不设环境变量（学生直接运行）时，04 读的是 expert_heuristic.py：在一份拷贝里改它，印出来的专家跟着变
    import shutil
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(LECTURE_EXPERT, tmp_path / "lecture14" / "expert_heuristic.py")
    expert = tmp_path / "lecture14" / "expert_heuristic.py"
    expert.write_text(expert.read_text(encoding="utf-8").replace("if M <= 16:", "if M < 65:"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MINI_ALPHAEVOLVE_EXPERT"}
    code = ("import sys; sys.path[:0] = ['lecture14', 'lecture13', 'lecture10']; "
            "from evolve import EXPERT, render; print(render(EXPERT))")
    p = run_script_fresh("-c", code, cwd=tmp_path, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "if M <= 64:" in p.stdout
    # 04 印出来的专家先是学生写的原样（M < 65），再是规范化以后的（M <= 64）：学生看得到自己的修改被读到了
    p = run_script_fresh("lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "1", cwd=tmp_path, env=env,
                         timeout=60)
    assert p.returncode == 0, p.stderr
    demo1 = p.stdout.split("演示 2")[0]
    assert 0 <= demo1.index("if M < 65:") < demo1.index("if M <= 64:")


def test_unchanged_expert_is_printed_once():
    # 文件里写的和规范化以后的一样：只印一遍，不说"照原样 / 规范化以后"
    p = run_script("lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "1", timeout=60)
    assert p.returncode == 0, p.stderr
    demo1 = p.stdout.split("演示 2")[0]
    assert demo1.count("# EVOLVE-BLOCK-START") == 1 and "规范化" not in demo1


def test_04_shows_the_reader_warnings_for_the_expert(tmp_path):
    # 读得进来、但有一条规则永远用不到：04 在印出的专家下面说一句，带文件名和行号
    with open(LECTURE_EXPERT, encoding="utf-8") as f:
        text = f.read()
    dead = "    if M <= 0:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
    expert = tmp_path / "expert_heuristic.py"
    expert.write_text(text.replace("    if M <= 16:\n", dead + "    if M <= 16:\n"), encoding="utf-8")
    line = text[:text.index("    if M <= 16:")].count("\n") + 1
    p = run_script_fresh("lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "1", timeout=60,
                         env=dict(os.environ, MINI_ALPHAEVOLVE_EXPERT=str(expert)))
    assert p.returncode == 0, p.stderr
    demo1 = re.sub(r"\n *", "", p.stdout.split("演示 2")[0])      # 临时目录的路径比一行长时按字符折开：接回去
    assert re.search(rf"注意：[^：]*?expert_heuristic\.py:{line}: ", demo1), demo1[-800:]   # 临时目录的路径里可能有空格


def test_a_missing_or_misplaced_expert_file_is_one_sentence_in_chinese(tmp_path):
    """学生报过：把 expert_heuristic.py 挪走了（mv 当成了 cp），或者 MINI_ALPHAEVOLVE_EXPERT 指向一个不在的文件、一个目录，
    每个脚本都印 Python 的英文原话 "[Errno 2] No such file or directory: '…'"。现在一句中文：原因、怎么恢复。"""
    import shutil
    from conftest import base_env
    for d in ("lecture01", "lecture10", "lecture13"):
        os.symlink(os.path.join(ROOT, d), tmp_path / d)
    shutil.copytree(os.path.join(ROOT, "lecture14"), tmp_path / "lecture14", ignore=shutil.ignore_patterns("__pycache__"))
    os.remove(tmp_path / "lecture14" / "expert_heuristic.py")
    plain = {k: v for k, v in base_env().items() if k != "MINI_ALPHAEVOLVE_EXPERT"}
    runs = [(plain, "没有这个文件。进化从它开始，用 git checkout lecture14/expert_heuristic.py 恢复它。"),
            ({**plain, "MINI_ALPHAEVOLVE_EXPERT": "nope.py"}, "没有这个文件。它来自环境变量 MINI_ALPHAEVOLVE_EXPERT"),
            ({**plain, "MINI_ALPHAEVOLVE_EXPERT": str(tmp_path)}, "这是一个目录，不是文件。它来自环境变量")]
    for env, says in runs:
        r = run_script_fresh("lecture14/06_your_heuristic.py", cwd=str(tmp_path), env=env, timeout=60)
        assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
        flat = "".join(r.stderr.split())
        assert "".join(says.split()) in flat and "Errno" not in r.stderr and "No such" not in r.stderr, r.stderr


def test_01_gives_each_removed_rule_its_own_reason(tmp_path):
    """学生报过：专家的 if M <= 16 改成 if M <= 0，01 说"第 34 行走不到（任何形状都先被前面的规则接走……）"，可它前面
    没有规则，下一行又说"没有形状满足 M <= 0"。现在空条件的和被挡住的分开说，理由各是各的。"""
    from evolve.problem import read_heuristic
    from evolve.program import empty_lines, unreachable_lines
    with open(os.path.join(ROOT, "lecture14", "evolve", "lecture_expert.py"), encoding="utf-8") as f:
        text = f.read()
    first = "    if M <= 16:\n"
    assert first in text
    path = tmp_path / "mine.py"
    path.write_text(text.replace(first, "    if M <= 0:\n        return Config(BM=64, BN=64, BK=64, warps=4, stages=3, "
                                 "group=8)\n    if M <= 32:\n        return Config(BM=64, BN=64, BK=64, warps=4, "
                                 "stages=3, group=8)\n" + first), encoding="utf-8")
    program = read_heuristic(str(path)).program
    lines = path.read_text(encoding="utf-8").splitlines()
    # 行号从文件本身数出来（if M <= 0 那一行、原来的 if M <= 16 那一行），不从被测的 empty_lines 来：它坏了时说它坏了
    empty, blocked = [lines.index("    if M <= 0:") + 1], [lines.index(first.rstrip("\n")) + 1]
    assert empty_lines(program) == empty, "evolve.program.empty_lines 没认出 M <= 0 那条空规则"
    assert sorted(set(unreachable_lines(program)) - set(empty)) == blocked, "unreachable_lines 没认出被 M <= 32 挡住的那条"
    r = run_script("lecture14/01_heuristic_as_code.py", "--heuristic", str(path), timeout=120)
    assert r.returncode == 0, r.stderr
    said = "".join(r.stdout.split("simplify（")[1].split("\n\n")[0].split())       # 折行的句子拼回去
    assert f"第{empty[0]}行走不到（没有形状满足它的条件）" in said, said
    assert f"第{blocked[0]}行走不到（任何形状都先被前面的规则接走" in said, said


def test_the_restore_command_works_as_printed_from_inside_and_outside_the_repo(tmp_path):
    """助教报过：在仓库外面运行脚本（python3 repo/lecture14/06_your_heuristic.py），专家文件改坏时印的
    "git checkout 课程 材料/repo/lecture14/expert_heuristic.py" 照抄跑不了：路径里的空格没加引号，而且当前目录
    不在仓库里，git 说 not a git repository。这里在一个带空格和中文的目录下建一个 git 仓库，从仓库根、仓库外面各跑
    一次 06，把印出来的恢复命令照原样交给 shell：专家文件回到提交时的样子。"""
    import shutil
    import subprocess
    from conftest import base_env
    if shutil.which("git") is None:
        pytest.skip("没有 git")
    repo = tmp_path / "课程 材料" / "repo"
    repo.mkdir(parents=True)
    for d in ("lecture01", "lecture10", "lecture13"):
        os.symlink(os.path.join(ROOT, d), repo / d)
    shutil.copytree(os.path.join(ROOT, "lecture14"), repo / "lecture14", ignore=shutil.ignore_patterns("__pycache__"))
    expert = repo / "lecture14" / "expert_heuristic.py"
    shutil.copy(LECTURE_EXPERT, expert)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "lecture14/expert_heuristic.py"], ["commit", "-q", "-m", "expert"]):
        subprocess.run(git + args, cwd=repo, check=True, capture_output=True, timeout=60)
    good = expert.read_text(encoding="utf-8")
    plain = {k: v for k, v in base_env().items() if k != "MINI_ALPHAEVOLVE_EXPERT"}   # 像学生那样读 expert_heuristic.py
    # 改坏的两种：一个字段写错（解析器的话后面接一句怎么恢复）；整个文件清空（解析器自己说怎么恢复——审读报过：
    # 它说的是写死的 git checkout lecture14/…，在仓库外面照抄跑不了）
    for cwd, broken in [(c, b) for c in (repo, tmp_path)
                        for b in (good.replace("warps=4, stages=3", "warps=4.5, stages=3"), "")]:
        expert.write_text(broken, encoding="utf-8")
        r = run_script_fresh(str(repo / "lecture14" / "06_your_heuristic.py"), cwd=str(cwd), env=plain, timeout=60)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        command = re.search(r"(?:想恢复讲义的原样：(.+?)。）|恢复讲义的那份用 (.+?)（)", r.stderr)
        command = command.group(1) or command.group(2)
        done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (cwd, command, done.stderr)
        assert expert.read_text(encoding="utf-8") == good, (cwd, command)


def test_a_missing_file_that_is_in_the_repo_root_says_where_it_is(tmp_path, monkeypatch):
    """学生报过：在仓库的上一层（或者 lecture14/ 里）运行 06，给的 my_heuristic.py 在仓库根目录，只得到一句
    "没有这个文件；检查路径"。文件在仓库根目录时说出它在哪、怎样写才读得到；哪里都没有时还是原来那句。"""
    from evolve.problem import REPO, display_path, load_or_explain
    monkeypatch.chdir(tmp_path)
    # 仓库根目录下有，tmp_path 下没有。用钉住的讲义专家，不用学生的 expert_heuristic.py：学生把它存成了 GBK，
    # 这个和它无关的测试也变红（"照它说的写就读得到"读的是学生改坏的文件）
    name = os.path.join("lecture14", "evolve", "lecture_expert.py")
    program, said = load_or_explain(name)
    assert program is None and said.startswith(f"{name}: 没有这个文件；检查路径"), said
    there = os.path.join(REPO, name)
    assert f"仓库根目录里有这个文件：写成 {display_path(there)}" in said, said
    assert load_or_explain(there)[0] is not None                      # 照它说的写就读得到
    program, said = load_or_explain("nope_heuristic.py")
    assert program is None and said == "nope_heuristic.py: 没有这个文件；检查路径，路径相对于运行脚本时所在的目录。", said


# 读学生这份原文的测试，学生改坏它时不该跟着变红（各拿它当说明文字、当"仓库里有的文件"的例子）
READS_THE_TEXT = ["tests/test_readme_times.py::test_no_script_carries_its_own_time_estimate",
                  "tests/test_suggestions.py::test_expert_docstring_gives_a_command_and_the_whole_dsl",
                  "tests/test_student_expert.py::test_a_missing_file_that_is_in_the_repo_root_says_where_it_is"]


@pytest.mark.parametrize("broken", ["gbk", "empty"])
def test_a_student_file_saved_as_gbk_or_emptied_turns_only_its_own_test_red(tmp_path, broken):
    """学生把 expert_heuristic.py 存成 GBK（或者清空了）再 make test：只有 test_student_expert_heuristic_parses 变红，
    它说出运行脚本时的那句话。以前 READS_THE_TEXT 那几个也红（UnicodeDecodeError、IndexError、"照它说的写就读得到"）。
    在项目的一份拷贝里做：git init、提交一次（随仓库发的样子），再改坏学生的文件。"""
    import shutil
    import subprocess
    import sys
    if shutil.which("git") is None:
        pytest.skip("没有 git：随仓库发的那份要从 git 里读")
    project = tmp_path / "project"
    for d in ("lecture01", "lecture10", "lecture13", "lecture14", "tests"):
        shutil.copytree(os.path.join(ROOT, d), project / d, ignore=shutil.ignore_patterns("__pycache__", "output"))
    for f in ("pytest.ini", "README.md"):
        shutil.copy(os.path.join(ROOT, f), project / f)
    shutil.copy(LECTURE_EXPERT, project / "lecture14" / "expert_heuristic.py")   # 不管学生自己那份现在什么样
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "shipped"]):
        subprocess.run(git + args, cwd=project, check=True, capture_output=True, timeout=60)
    expert = project / "lecture14" / "expert_heuristic.py"
    text = expert.read_text(encoding="utf-8")
    expert.write_bytes(text.encode("gbk") if broken == "gbk" else b"")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}, "TESTS_NO_ZYGOTE": "1",
           "TESTS_NO_PREFETCH": "1", "COLUMNS": "80"}                 # 学生的 80 列终端
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                        "tests/test_student_expert.py::test_student_expert_heuristic_parses", *READS_THE_TEXT],
                       cwd=project, env=env, capture_output=True, text=True, timeout=120)
    failed = re.findall(r"^FAILED (\S+)", p.stdout, re.M) or re.findall(r"^_+ (test_\w+) _+$", p.stdout, re.M)
    assert failed and all("test_student_expert_heuristic_parses" in f for f in failed), p.stdout[-3000:]
    assert f"1 failed, {len(READS_THE_TEXT)} passed" in p.stdout, p.stdout[-3000:]
    assert "expert_heuristic.py:" in p.stdout and "Traceback" not in p.stdout, p.stdout[-3000:]
    from layout import display_width                                 # 那一句按 80 列折了行，没有一行比终端宽
    assert max(map(display_width, p.stdout.splitlines())) <= 80, p.stdout[-3000:]


@pytest.mark.parametrize("broken", ["if M > 16:", "if M <= 16"])
def test_a_student_file_that_does_not_parse_is_noted_with_the_restore_command_and_the_command_restores_it(
        tmp_path, monkeypatch, broken):
    """学生改坏了 expert_heuristic.py（DSL 不认的条件、少了冒号）再 make test：红的只有 test_student_expert_heuristic_parses，
    以前最后几行只有那句错误，不说怎样恢复（改过、读得进来时才说）。现在读不进来时也说，说的命令照抄能把文件恢复。"""
    import subprocess
    import conftest
    import console
    repo = tmp_path / "repo"
    (repo / "lecture14").mkdir(parents=True)
    student = repo / "lecture14" / "expert_heuristic.py"
    with open(LECTURE_EXPERT, encoding="utf-8") as f:
        lecture = f.read()
    student.write_text(lecture, encoding="utf-8")
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, capture_output=True, text=True, timeout=30,   # noqa: E731
                                    env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                                         "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    assert git("init", "-q").returncode == 0 and git("add", ".").returncode == 0
    assert git("commit", "-qm", "lecture").returncode == 0
    assert lecture.count("if M <= 16:") == 1
    student.write_text(lecture.replace("if M <= 16:", broken), encoding="utf-8")
    with pytest.raises(ProgramError):
        load_heuristic(str(student))
    monkeypatch.setattr(conftest, "STUDENT_EXPERT", str(student))
    monkeypatch.setattr(console, "wrap_width", lambda: 80)
    monkeypatch.delenv("TESTS_PREFETCH_REPORT", raising=False)
    lines = []
    conftest.pytest_terminal_summary(type("Reporter", (), {"write_line": lambda self, line: lines.append(line)})())
    assert lines and lines[-1] == "    git checkout lecture14/expert_heuristic.py", lines
    assert "读不进来" in "".join(lines) and max(map(console.display_width, lines)) <= 80, lines
    p = subprocess.run(lines[-1].split(), cwd=repo, capture_output=True, text=True, timeout=30)   # 照抄那条命令
    assert p.returncode == 0 and student.read_text(encoding="utf-8") == lecture, p.stderr
