"""仓库的顶层就是设计里的那几样：lecture14、lecture13、lecture10、lecture01、README.md、Makefile、tests，加上两条命令
要用的 .ci/、requirements*.txt、pytest.ini、.gitignore。计时（make bench）在 tests/bench.py，pytest 不收集它。"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

DESIGN = {"lecture14", "lecture13", "lecture10", "lecture01", "README.md", "Makefile", "tests",
          ".ci", "requirements.txt", "requirements-dev.txt", "requirements-openevolve.txt", "pytest.ini", ".gitignore"}


def tracked_top_level():
    """git 管着的文件的第一级名字（学生自己放在根目录的 my_heuristic.py 之类不算）；不是 git 仓库时是 None。"""
    if shutil.which("git") is None:
        return None
    p = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or not p.stdout:
        return None
    return {line.split("/", 1)[0] for line in p.stdout.splitlines()}


def test_top_level_is_the_designs():
    top = tracked_top_level()
    if top is None:
        pytest.skip("不是 git 仓库（没法分清哪些是项目的文件）")
    assert top == DESIGN, top ^ DESIGN


def test_make_bench_runs_tests_bench_which_pytest_does_not_collect():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    recipe = re.search(r"^bench:.*\n\t(.*)$", makefile, re.M).group(1)
    assert recipe.split()[1] == "tests/bench.py" and os.path.isfile(os.path.join(ROOT, "tests", "bench.py"))
    assert not re.match(r"test_.*\.py$|.*_test\.py$", "bench.py")          # pytest 默认收集的文件名
    with open(os.path.join(ROOT, "pytest.ini"), encoding="utf-8") as f:
        assert "python_files" not in f.read()                               # 没有改过收集哪些文件


def test_the_test_machinery_is_explained_in_conftests_docstring():
    # 维护测试的人从 conftest.py 开头的一段读懂整个机器：每个调试开关（TESTS_... 环境变量）、每个帮手文件都在那里
    import ast
    with open(os.path.join(ROOT, "tests", "conftest.py"), encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read()))
    switches = set()
    for name in ("conftest.py", "zygote.py", "reaper.py"):
        with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
            switches |= set(re.findall(r"""environ(?:\.get\(|\[)["'](TESTS_[A-Z_]+)""", f.read()))
    assert {"TESTS_NO_PREFETCH", "TESTS_NO_ZYGOTE"} <= switches
    for s in sorted(switches) + ["tests/zygote.py", "tests/reaper.py", "PREFETCH", "@ahead", "quiet", "stop_group",
                                 "TESTS_SESSION", "test_no_process_left.py"]:
        assert s in doc, s
    assert len(doc.splitlines()) <= 60                                      # 一屏左右


PROCESS_WIDE = re.compile(r"monkeypatch\.setattr\(\s*[\w.]*\b(time|subprocess|socket|os|threading|select)\s*,")


def test_no_test_patches_a_module_the_background_threads_share():
    """一次 TESTS_GPU=a100 的运行里，SOCKS 代理那个测试红了（TypeError：标准错误是 bytes）：另一个测试在前台
    monkeypatch.setattr(runmod.subprocess, "Popen", …)，改的是整个进程的 subprocess，后台线程的那两次运行拿到了它
    "只会睡 30 秒"的假进程；假的 time.monotonic 也一样让后台量出的秒数不对。测试要换这些模块里的东西时用 conftest 的
    only_in（只换一个模块看到的），这里查没有测试再直接改它们。"""
    found = []
    for name in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        if name.endswith(".py") and name != "test_layout.py":          # 这个文件的说明里举了那个例子
            with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
                found += [f"tests/{name}:{i}: {line.strip()}" for i, line in enumerate(f, 1) if PROCESS_WIDE.search(line)
                          and "不要" not in line]
    assert not found, "这些测试改的是整个进程的模块（后台线程也在用），换成 conftest.only_in：\n" + "\n".join(found)


def test_only_in_changes_what_one_module_sees_and_nothing_else(monkeypatch):
    import time

    import runner
    from conftest import only_in
    real = time.monotonic
    only_in(monkeypatch, runner, "time", monotonic=lambda: 42.0)
    assert runner.time.monotonic() == 42.0 and time.monotonic is real and runner.time.sleep is time.sleep
    monkeypatch.undo()
    assert runner.time is time


def test_first_make_run_prints_short_lines_not_pip_command_lines():
    """学生报过：第一次 make run 时 make 把 pip 的命令行原样印出来，83–93 列，80 列的终端里折成两行。现在建 .venv、
    装依赖的每一步都不回显命令（@），只印一句 80 列以内的中文说在做什么。"""
    import re
    from console import display_width
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        text = f.read()
    recipes = re.findall(r"^(\$\(PY\)|\$\(VENV\)/\.\w+):.*\n((?:\t.*\n)+)", text, re.M)
    assert {target for target, _ in recipes} == {"$(PY)", "$(VENV)/.runtime", "$(VENV)/.openevolve", "$(VENV)/.dev"}
    for target, body in recipes:
        lines = body.replace("\\\n", " ").splitlines()          # 续行（行尾的反斜杠）接回去：一条命令一行
        lines = [line[1:] for line in lines if line.startswith("\t")]
        assert all(line.startswith("@") for line in lines), (target, lines)
        said = [m for line in lines for m in re.findall(r'^@echo "(.*)"$', line)]
        assert said, (target, lines)
        for s in said:
            shown = s.replace("$(VENV)", ".venv").replace("$(PYTHON)", "python3")
            assert display_width(shown) <= 80, shown


CLAIMS_MD = os.path.join(ROOT, "..", "shared", "claims.md")


@pytest.mark.skipif(not os.path.exists(CLAIMS_MD), reason="没有 ../shared/claims.md（讲义的论断清单）")
def test_every_claim_in_claims_md_has_a_test_named_after_it():
    """助教往 claims.md 里加了一条论断（**X9**），tests/test_claims.py 里就要有一个名字里带 X9 的测试：它失败时一眼看出是哪条论断。"""
    import test_claims
    with open(CLAIMS_MD, encoding="utf-8") as f:
        ids = re.findall(r"^- \*\*([A-Z]\d+)\b", f.read(), re.M)
    named = {part for name in vars(test_claims) if name.startswith("test_") for part in name.split("_")}
    assert len(ids) >= 20 and [i for i in ids if i not in named] == []


def test_make_openevolve_after_the_test_setup_installs_nothing_again(tmp_path):
    """讲师报过：make test（.venv/.dev）已经装好 OpenEvolve，make openevolve 又说"在 .venv 里安装
    requirements-openevolve.txt"、重装一遍。现在装 requirements-dev.txt 的那一步也记下另两份装好了。
    在临时目录里用一个假的 .venv/bin/python（只记下被怎样调用）跑 Makefile。"""
    import shutil
    for f in ("Makefile", "requirements.txt", "requirements-openevolve.txt", "requirements-dev.txt"):
        shutil.copy(os.path.join(ROOT, f), tmp_path / f)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    fake = tmp_path / ".venv" / "bin" / "python"
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/../calls"\n', encoding="utf-8")
    fake.chmod(0o755)
    make = lambda *a: subprocess.run(["make", *a], cwd=tmp_path, capture_output=True, text=True, timeout=60)  # noqa: E731
    assert make(".venv/.dev").returncode == 0
    assert make("-q", ".venv/.openevolve").returncode == 0 and make("-q", ".venv/.runtime").returncode == 0
    assert (tmp_path / ".venv" / "calls").read_text(encoding="utf-8").count("install") == 1


@pytest.mark.parametrize("text, kept", [
    ("设置：--tolerance 0.01 --knob L2_BW_PER_SM=1.8e+11 --knob LOAD_LATENCY_BUSY=9e-07", "--knob LOAD_LATENCY_BUSY=9e-07"),
    ("共享内存上限 166,912 B（一个 SM 最多 227 KB），等了 11.3 µs", "227 KB"),
    ("改专家启发式：用编辑器打开它，比如把 if M <= 16: 改成 if M <= 64:，看数字怎样变", "if M <= 16:"),
    ("batch 从 1 涨到 128，最优的时间只从 83.7 µs 涨到 86.5 µs——权重读一次，给 128 个 token 用。", "86.5 µs——"),
    ("prefill 最优是 (256, 128, 64, 8, 4, 16)：专家的 (128, 128, 64, 4, 3, 8) 慢 1.36×", "(128, 128, 64, 4, 3, 8)"),
    ("256×128 配 4 个 warp 要的寄存器 296 个/线程 > 255（上限），配 16 个 warp 才行", "> 255"),
    ("OpenEvolve 种子 0：15.4 秒，每个提议 102.9 毫秒（其中 MockLLM 服务器 2.1 毫秒）", "2.1 毫秒）"),
    ("MMA 路径：BM = 32 不是 64 的倍数，用不上 wgmma，张量核效率乘 MMA_FALLBACK = 0.6，\"算\"变成 1.67 倍", "MMA_FALLBACK = 0.6"),
    # 学生在 80 列里报过：句子里的命令从中间折开，只复制第一行就成了另一条命令（"make⏎openevolve" 是 make run）
    ("07 要 OpenEvolve（可选的依赖）：在仓库根目录运行 make openevolve（它装好以后还会跑一次 OpenEvolve）", "make openevolve"),
    ("（改好再运行；写法见它开头的说明。想恢复讲义的原样：git checkout lecture14/expert_heuristic.py。）",
     "git checkout lecture14/expert_heuristic.py"),
    # 学生在仓库外面（仓库的上一层）运行时，恢复的命令是 git -C repo checkout …（restore_command）：80 列里折成过
    # "git -C repo⏎checkout lecture14/expert_heuristic.py"，只复制第一行就是一条 git 的用法说明
    ("（改好再运行；写法见它开头的说明。想恢复讲义的原样：git -C repo checkout lecture14/expert_heuristic.py。）",
     "git -C repo checkout lecture14/expert_heuristic.py"),
    ("的是讲义的那份；恢复讲义的原样：git -C ../course/repo checkout lecture14/expert_heuristic.py。",
     "git -C ../course/repo checkout lecture14/expert_heuristic.py"),
    ("或者 .venv/bin/pip install -r requirements-openevolve.txt；再运行一次", ".venv/bin/pip install -r requirements-openevolve.txt"),
    ("--budget 100001 太大了（运行 python3 lecture14/04_alphaevolve_tiling.py --help 看所有选项。）",
     "python3 lecture14/04_alphaevolve_tiling.py --help"),
    ("这里不能写 pass：每个 if 下面写一句 return Config(...)，最后一句也是", "return Config(...)"),
    ("这个文件不是 UTF-8 编码（第 3 行有 UTF-8 读不了的字节 B5 DA 20 31），看起来是 GBK", "B5 DA 20 31"),
    # 学生报过：01 的表格里 "64×64×256 / 4 warp / 3 级 / group 1（慢⏎1.18×）"
    ("64×64×256 / 4 warp / 3 级 / group 1（慢 1.18×）", "慢 1.18×"),
    ("专家在这几个形状上最差离最优慢 2.53×——进化要做的事", "慢 2.53×")])
def test_wrap_keeps_an_option_with_its_value_a_number_with_its_unit_and_a_condition_whole(text, kept):
    # 学生报过："--knob⏎LOAD_LATENCY_BUSY=9e-07"、"（227⏎KB）"、"11.3⏎µs"、"if M ‹=⏎16:"
    from layout import wrap
    for width in range(max(32, len(kept) + 1), 90):    # 比要保住的那段宽：放得下才不拆
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert any(kept in line for line in lines), (width, lines)
