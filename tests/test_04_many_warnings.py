"""A student who pastes a big table as the expert (hundreds of rules, most shadowed) got one 150-column "注意：" line
per dead rule in demo 1 — 480 lines for a 500-rule table. 04 prints the first few, wrapped, and says how many more.
Every script that prints a program (the expert, a prompt, an LLM reply, an evolved best) prints a bounded listing of it,
and fits an 80-column terminal, whatever the size of the table."""
import functools
import itertools
import os
import re
import sys

import pytest

from conftest import ahead, base_env, launchable, run_in_pty, run_script_fresh, session_dir

from console import LISTING_LINES, PIPE_WIDTH, display_width

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_many_dead_rules_print_a_bounded_number_of_notes(tmp_path):
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):",
             "    if M <= 16:", "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)"]
    n_dead = 40
    for k in range(n_dead):                                  # each one shadowed by the first rule
        lines += [f"    if M <= {k % 15 + 1}:", "        return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)"]
    lines += ["    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)", "# EVOLVE-BLOCK-END", ""]
    expert = tmp_path / "big_expert.py"
    expert.write_text("\n".join(lines), encoding="utf-8")
    r = run_script_fresh(os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py"), "--budget", "5", "--seeds", "1",
                         "--jobs", "1", timeout=120, env={**os.environ, "MINI_ALPHAEVOLVE_EXPERT": str(expert)})
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stdout.splitlines() if line.startswith("注意：")]
    assert 1 <= len(notes) <= 10, len(notes)
    assert f"还有 {n_dead - len(notes)} 条" in r.stdout.replace("\n", "")
    demo1 = r.stdout.split("演示 2")[0]
    assert all(display_width(line) <= PIPE_WIDTH for line in demo1.splitlines() if "注意" in line or "还有" in line)


@ahead
def five_hundred_rule_run():
    """学生贴的那张 500 条规则的表（每条 if M <= k，499 条和默认配置一样）当专家，04 --quick 跑一次（后台先跑）；
    返回 (文件的行, 运行结果)。"""
    default = "Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)"
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):",
             "    if M <= 16:", "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)"]
    for k in range(1, 500):
        lines += [f"    if M <= {16 + k * 16}:", f"        return {default}"]
    lines += [f"    return {default}", "# EVOLVE-BLOCK-END", ""]
    expert = os.path.join(session_dir("500-rules"), "table_expert.py")
    with open(expert, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return lines, run_script_fresh(os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py"), "--quick", timeout=180,
                                   env={**base_env(), "MINI_ALPHAEVOLVE_EXPERT": expert})


def test_a_500_rule_table_is_listed_in_bounded_lines_and_its_redundant_rules_are_counted():
    """学生报过：贴进来一张 500 条规则的表（每条 if M <= k，499 条和默认配置一样），04 --quick 印了约 2,280 行：
    演示 1 把专家整个印了两遍、演示 2 把 500 条规则的最好程序整个印出来；还不说 499 条规则去掉也一样（01、06 说）。
    现在清单只印开头 MAX_LISTING 行并说一共几行、整份在哪；演示 1 说几条规则去掉也一样。"""
    limit = LISTING_LINES
    lines, r = five_hundred_rule_run()
    assert r.returncode == 0, r.stderr
    out = r.stdout.replace("\n", "")
    assert len(r.stdout.splitlines()) < 600, len(r.stdout.splitlines())
    assert f"一共 {len(lines) - 3} 行，这里只印了开头 {limit} 行；整份在" in out   # 两条标记和它们之间
    assert "其中 499 条规则去掉也一样" in out and "simplify 以后 1 条" in out
    assert not re.search(r"留下的(\d+)个里有\1个", "".join(out.split())), out  # 学生报过"29 个里有 29 个"：说"全都带"


def test_06_on_a_2000_rule_file_prints_a_bounded_listing_and_a_bounded_dead_rule_line(tmp_path):
    """学生报过：06 把 2000 条规则的文件 4004 行原样印出来，死规则的行号印成一行 11,541 列。"""
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):"]
    for k in range(2000):
        lines += [f"    if M <= {k + 1}:", "        return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)"]
    lines += ["    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)", "# EVOLVE-BLOCK-END", ""]
    mine = tmp_path / "big.py"
    mine.write_text("\n".join(lines), encoding="utf-8")
    r = run_script_fresh(os.path.join(ROOT, "lecture14", "06_your_heuristic.py"), str(mine), timeout=180)
    assert r.returncode == 0, r.stderr
    out = r.stdout.replace("\n", "")
    shown = [line for line in r.stdout.splitlines() if str(tmp_path) not in line]      # 临时目录的路径本身很长
    assert len(r.stdout.splitlines()) < 600 and max(map(display_width, shown)) <= PIPE_WIDTH
    assert f"一共 {len(lines) - 3} 行，这里只印了开头" in out and "其中 1999 条规则是死的" in out


def test_01_on_a_500_rule_table_lists_every_dead_rule_folded_but_not_the_whole_file(tmp_path):
    """学生报过：01 --heuristic 一张 500 条规则的表印了 3,964 行——整个文件、500 条 Rule、一行几千列的死规则行号，
    再加 476 行没折的提醒（04 和 06 正是让学生到 01 来"逐条列出"）。现在原文和规则只印开头，每条死规则的行号都列出、
    一模一样的提醒只说一次，按宽度折好；文件里 group=16 的那行（进化出的程序常有）也不比 100 列宽。"""
    from evolve import parse
    from evolve.program import dead_rules
    big = launchable(128, 256, 64, 8, 4, 16)                   # 进化出的程序常有的 group=16 那行（这块 GPU 放得下的级数）
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):",
             "    if M <= 16:", f"        return Config(BM=128, BN=256, BK=64, warps=8, stages={big.stages}, group=16)"]
    for k in range(499):
        lines += [f"    if M <= {k % 15 + 1}:", "        return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)"]
    lines += ["    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)", "# EVOLVE-BLOCK-END", ""]
    mine = tmp_path / "table.py"
    mine.write_text("\n".join(lines), encoding="utf-8")
    notes = dead_rules(parse("\n".join(lines)))
    r = run_script_fresh(os.path.join(ROOT, "lecture14", "01_heuristic_as_code.py"), "--heuristic", str(mine),
                         timeout=180)
    assert r.returncode == 0, r.stderr
    shown = [line for line in r.stdout.splitlines() if str(tmp_path) not in line]
    assert max(map(display_width, shown)) <= PIPE_WIDTH, max(shown, key=display_width)
    assert len(r.stdout.splitlines()) < 400, len(r.stdout.splitlines())                # 以前 3,964 行
    flat = r.stdout.replace("\n", "").replace(" ", "")
    # 每条死规则的行号都在（一模一样的提醒只说一次："第 7, 9, … 行（这 499 条一样）：……"）
    listed = set()
    for lines_said, count in re.findall(r"第([\d,]+)行（这(\d+)条一样）：", flat):
        got = [int(x) for x in lines_said.split(",")]
        assert len(got) == int(count)
        listed |= set(got)
    listed |= {int(x) for x in re.findall(r"(?<![\d,])第(\d+)行：这条规则", flat)}
    assert listed == {line for line, _ in notes} and len(notes) >= 400
    assert f"一共{len(lines) - 3}行，这里只印了开头" in flat and "还有" in flat
    assert re.search(r"删掉的：第[\d,]+行……一共\d+条走不到（任何形状都先被前面的规则接走，下面说为什么）", flat), \
        flat[:3000]                                                     # 重查时报的："等 499 条 行"


@ahead
def live_table() -> str:
    """一张 216 条规则、条条都活着的表（M、N、K 各 6 档的网格，配置轮流取能启动的那些）当专家文件；返回它的路径。
    学生报的是 500 条上下；清单只印开头 LISTING_LINES 行、寄存器只说范围（超过 24 个分支时），几百条就都走到了。"""
    from evolve import render
    from evolve.program import Program, Rule
    from kernel_lab import VALID
    edges = [2 ** k for k in range(0, 16, 3)]                                 # 1, 8, 64, …, 32768
    rules = tuple(Rule((("M", m), ("N", n), ("K", k)), VALID[(i * 37) % len(VALID)])
                  for i, (m, n, k) in enumerate(itertools.product(edges, edges, edges)))
    path = os.path.join(session_dir("live-table"), "table_expert.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("from kernel_lab import Config  # noqa: F401\n\n" + render(Program(rules, VALID[0])) + "\n")
    return path


# 03 用预算 60（学生报的是 --quick，预算 300）：每个提议都要评估几百条规则的程序，--quick 要约 3.7 CPU 秒，预算 60
# 约 1 秒；印的是同样的演示、同样的清单（这张表在演示 3 里照样是"一共 4xx 行，这里只印了开头 40 行"），只是演示 3
# 的修改步数少一些。下面照样先断言清单确实被截短了
PASTED = [("lecture14/02_llm_proposal.py", "--after", "1"),
          ("lecture14/03_cascade_and_database.py", "--budget", "60", "--seeds", "2"),
          ("lecture14/04_alphaevolve_tiling.py", "--quick"), ("lecture14/06_your_heuristic.py", "--evolve", "--quick")]


def _pasted_run(args):
    """args 在 80 列的伪终端里、以 live_table() 为专家跑一次（标准错误也在终端上，和学生看到的一样）。"""
    env = {**base_env(), "MINI_ALPHAEVOLVE_EXPERT": live_table()}
    return env, run_in_pty(list(args), 80, {"NO_COLOR": "1"}, env=env, timeout=300, stderr_too=True)


# 每条都要几秒（几百条规则的程序，每个提议都贵一些）：后台先跑（conftest 的 PREFETCH），前台不用干等
PASTED_RUNS = {args: ahead(functools.partial(_pasted_run, args)) for args in PASTED}
PREFETCH = [five_hundred_rule_run, *PASTED_RUNS.values()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("args", PASTED, ids=[a[0].split("/")[1][:2] for a in PASTED])
def test_a_pasted_table_of_hundreds_of_live_rules_prints_bounded_listings_that_fit_80_columns(args):
    """学生报过：贴进来一张几百条规则、条条都活着的表，02 印了 2,582 行（提示词、MockLLM 的回复、子程序都是整份），
    03 --quick 1,179 行、06 --evolve 1,388 行（进化出的程序整份），04 那句"一共 1030 行，这里只印了开头 40 行"在
    80 列的终端里是 82 列。现在每份清单只印开头 console.LISTING_LINES 行、说一共几行，说明按终端宽度折好。"""
    env, p = PASTED_RUNS[args]()
    assert p.returncode == 0, p.stdout[-3000:]
    here = os.path.dirname(env["MINI_ALPHAEVOLVE_EXPERT"])                          # 临时目录的路径本身很长
    wide = [line for line in p.stdout.split("\n") if display_width(line) > 80 and here not in line]
    assert wide == [], wide[:5]
    assert len(p.stdout.split("\n")) < 500, len(p.stdout.split("\n"))
    assert re.search(r"……（一共 \d+ 行，这里只印了开头 \d+ 行", p.stdout) and "Traceback" not in p.stdout
    flat = "".join(p.stdout.split())
    if "04_" in args[0]:                                         # 只印了开头，就不说"下面是它的原样"
        m = re.search(r"它有(\d+)行，下面只印开头（末尾说印了几行）", flat)          # 学生报过：只说"太长"，没说多长
        assert m and "下面是它的原样" not in flat, flat[:2000]
        assert f"……（一共{m[1]}行，这里只印了开头" in flat
    if "06_" in args[0]:                                         # 你的文件也只印开头 LISTING_LINES 行（README 说的数）
        assert f"这里只印了开头{LISTING_LINES}行" in flat


def test_readme_says_how_many_lines_a_listing_shows():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        flat = "".join(f.read().split())
    assert f"只印开头{LISTING_LINES}行（`console.LISTING_LINES`）" in flat


@pytest.mark.parametrize("script", ["04", "06"])
def test_the_list_every_dead_rule_command_is_on_its_own_line_and_runs_as_printed(tmp_path, script):
    """学生报过：80 列的终端里，04 说"……还有 402 条同样的注意没有印出来（一共 412 条；python3 lecture14/01_heuristic_as_code.py"
    和"--heuristic lecture14/expert_heuristic.py 逐条列出死规则）"落在两行，照抄就是两条错的命令。现在命令单独一行
    （放不下时按 shell 续行折开）；照印出来的样子交给 bash 跑，01 逐条列出的正是那个文件的死规则。"""
    import subprocess
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):",
             "    if M <= 16:", "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)"]
    for k in range(40):
        lines += [f"    if M <= {k % 15 + 1}:", "        return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)"]
    lines += ["    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)", "# EVOLVE-BLOCK-END", ""]
    folder = tmp_path / "a folder with a rather long name for the student's heuristics"
    folder.mkdir()
    mine = folder / "table.py"
    mine.write_text("\n".join(lines), encoding="utf-8")
    if script == "04":
        args, env = ["lecture14/04_alphaevolve_tiling.py", "--budget", "5", "--seeds", "1", "--jobs", "1"], \
            {"MINI_ALPHAEVOLVE_EXPERT": str(mine)}
    else:
        args, env = ["lecture14/06_your_heuristic.py", str(mine)], {}
    term = run_in_pty(args, 80, {"NO_COLOR": "1", **env}, timeout=120)
    assert term.returncode == 0, term.stdout[-3000:]
    at = [i for i, line in enumerate(term.stdout.splitlines()) if "同样的" in line and "没有印出来" in line]
    assert at, term.stdout[:3000]
    shown = term.stdout.splitlines()[at[0]:at[0] + 6]
    block = "\n".join(shown)
    starts = [i for i, line in enumerate(shown) if line.lstrip().startswith("python3 lecture14/01_heuristic_as_code.py")]
    assert starts, block
    command = [shown[starts[0]]]
    while command[-1].endswith(" \\"):                         # shell 的续行：照原样拼给 bash
        command.append(shown[starts[0] + len(command)])
    assert all(display_width(line) <= 80 for line in shown if "a folder with" not in line), block  # 路径本身比一行宽
    r = subprocess.run(["bash", "-c", "\n".join(command)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=base_env())
    assert r.returncode == 0 and "table.py" in r.stdout and "死规则" in r.stdout, (block, r.stderr[-2000:])


def test_the_list_dead_rules_command_runs_from_the_repo_root_when_04_ran_in_lecture14(tmp_path):
    """助教报过：上课时的写法 cd lecture14 && python3 04_alphaevolve_tiling.py，专家文件有十几条死规则时，"逐条列出
    死规则"的命令印成 python3 lecture14/01_heuristic_as_code.py --heuristic expert_heuristic.py——脚本从仓库根写、
    文件却相对于 lecture14 写，在哪个目录都跑不了。照"可以试试"的约定，整条命令在仓库根目录照抄就能跑。"""
    import shlex
    import subprocess
    lines = ["from kernel_lab import Config", "", "# EVOLVE-BLOCK-START", "def choose_config(M, N, K):",
             "    if M <= 16:", "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)"]
    for k in range(15):                                      # 15 条被第一条挡住的规则：比 MAX_WARNINGS 多
        lines += [f"    if M <= {k % 15 + 1}:", "        return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)"]
    lines += ["    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)", "# EVOLVE-BLOCK-END", ""]
    expert = tmp_path / "big_expert.py"
    expert.write_text("\n".join(lines), encoding="utf-8")
    r = run_script_fresh("04_alphaevolve_tiling.py", "--budget", "5", "--seeds", "1", "--jobs", "1", timeout=120,
                         cwd=os.path.join(ROOT, "lecture14"), env={**os.environ, "MINI_ALPHAEVOLVE_EXPERT": str(expert)})
    assert r.returncode == 0, r.stderr
    block = re.search(r"逐条列出死规则：\n\s*(python3 (?:.* \\\n)*.*)", r.stdout).group(1)   # 长的命令按 shell 的续行折开
    command = re.sub(r" \\\n\s*", " ", block)
    args = shlex.split(command)
    assert args[:2] == ["python3", "lecture14/01_heuristic_as_code.py"], command
    listed = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, (command, listed.stderr)
