"""02 的"看进化后期的一步"（--after 500）：演示 2 里一次新修改都提不出来的种类，表下面说出原因（从父程序的规则数和
MockLLM 的上限算出来）；默认运行的建议先替学生跑过，说的父程序分数、提不出新修改的种类、演示 2 的观察 1 成不成立，
和真的照着跑的那次一致（两个分支：--after 500 时不成立，--after 1000 时成立——都从那次运行的数据判断，不抄结果）。"""

import os
import re

import pytest

from conftest import TESTS_GPU, ahead, base_env, load_script, prefetch, run_script
from evolve import EXPERT, Config, Program, Rule
from evolve.mock_llm import MAX_RULES, Prompt
from printed import find, find_table, section, unfold

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = "lecture14/02_llm_proposal.py"
MARK = "【本次不成立】"


s02 = load_script(SCRIPT, "proposal_02_late")
RUNS = {"default": [], "500": ["--after", "500"], "1000": ["--after", "1000"], "seed3": ["--seed", "3"],
        "seed3-500": ["--seed", "3", "--after", "500"]}


PREFETCH = [(SCRIPT, *a) for a in RUNS.values()]     # conftest：收集完测试后在后台先跑（默认运行别的文件也用）


@pytest.fixture(scope="module")
def outputs():
    prefetch(*PREFETCH)                                       # 同时跑（conftest.run_script：整个会话只跑一次）
    done = [run_script(SCRIPT, *a, timeout=180) for a in RUNS.values()]
    for name, p in zip(RUNS, done):
        assert p.returncode == 0 and "Traceback" not in p.stderr, (name, p.stderr[-2000:])
    return {name: p.stdout for name, p in zip(RUNS, done)}


def flat(text):
    return re.sub(r"\s+", "", text)


def idle_kinds(stdout):
    """演示 2 第二张表里"和父程序一模一样"是 100% 的种类。"""
    t = find_table(section(stdout, "演示 2"), "和父程序一模一样")
    col = t.col("和父程序一模一样")
    return [r[0] for r in t.rows if float(r[col].rstrip("%")) == 100]        # 有一格要小数时整列印一位小数：100.0%


def test_idle_kinds_reads_a_column_printed_with_one_decimal():
    # 助教报过：加了一种修改（stages）以后，--after 500 的表里有一格是 0.5%，整列印成 100.0%、0.0%；这里只认 "100%"，
    # 读不出 add_rule、crossover，test_late_suggestion_says_what_the_student_will_see 说 02 的建议和运行对不上——其实对得上
    bar = "=" * 30
    text = (f"{bar}\n演示 2：同一个父程序\n{bar}\n\n修改的种类  和父程序一模一样\n----------  ----------------\n"
            "targeted                0.5%\nadd_rule              100.0%\ncrossover             100.0%\n")
    assert idle_kinds(text) == ["add_rule", "crossover"]
    assert idle_kinds(text.replace("100.0%", "100%").replace("0.5%", "0%")) == ["add_rule", "crossover"]


def parent(stdout):
    m = find(r"父程序就是演示 1 的那个（(\d+) 条规则，分数 ([\d.]+)×）", section(stdout, "演示 2"))
    return int(m[1]), m[2]


def demo2_failed(stdout):
    return MARK in section(stdout, "演示 2").split("观察：", 1)[1]


@pytest.mark.h100_claim
@pytest.mark.parametrize("run", list(RUNS))
def test_table_explains_kinds_that_proposed_nothing_new(outputs, run):
    """02 演示 2：提了却每次都没想到新修改的修改种类，表下面那句说明点的正是它们。"""
    from printed import sections
    if not any(title.startswith("演示 2") for title in sections(outputs[run])):
        # 那一段找不到比父程序好的提议时 02 不印演示 2（照实说了）：这条没有可核对的（助教报过：A100 上 --after 1000
        # 这样，它被报成"讲义论断不成立"）
        pytest.skip(f"02 {' '.join(RUNS[run])} 这次没有演示 2（那一段找不到比父程序好的提议），没有表可核对")
    out = section(outputs[run], "演示 2")
    idle = idle_kinds(outputs[run])
    rules, _ = parent(outputs[run])
    note = re.search(r"（([a-z_、]+) 提了 \d+ 次，每次都是没想到新的修改[^）]*(?:）[^）]*)*?。）", out.replace("\n", ""))
    if not idle:
        assert "没想到新的修改、子程序和父程序一样" not in flat(out)
        return
    assert note, out
    assert sorted(note[1].split("、")) == sorted(idle)
    if rules >= MAX_RULES and set(idle) <= {"add_rule", "crossover"}:
        assert f"已经有{rules}条规则" in flat(note[0]) and f"MAX_RULES={MAX_RULES}" in flat(note[0])


@pytest.mark.h100_only
@pytest.mark.parametrize("printer,target", [("default", "500"), ("500", "1000")])
def test_late_suggestion_says_what_the_student_will_see(outputs, printer, target):
    text = flat(unfold(outputs[printer]).split("可以试试：", 1)[1])
    cmd = f"python3lecture14/02_llm_proposal.py--after{target}"
    assert cmd in text
    item = text.split(cmd)[0].rsplit("看进化后期的一步", 1)[1]
    rules, score = parent(outputs[target])
    assert f"父程序的分数是{score}×" in item and f"{rules}条规则" in item
    assert f"这次{parent(outputs[printer])[1]}×" in item
    idle = idle_kinds(outputs[target])
    if idle:
        assert f"{'、'.join(idle)}一次新修改都提不出来" in item
    else:
        assert "一次新修改都提不出来" not in item
    if demo2_failed(outputs[target]) and demo2_failed(outputs[printer]):
        # 两次都不成立：说"也会被标成……（和这次一样）"（02 的 late_text；助教报过：加了一个模型，--after 500 和 1000
        # 的观察 1 都不成立，这里只认另一种说法，失败成"H100 上的具体数或印出来的东西对不上"，可那句话是对的）
        assert "观察1在那里也会被标成\"本次不成立\"（和这次一样）" in item and "也成立" not in item, item
    elif demo2_failed(outputs[target]):
        assert "观察1在那里会被标成\"本次不成立\"" in item and "也成立" not in item
    else:                   # "也"只在这次运行的观察 1 也成立时说（学生报过：--after 500 里不成立，却说"那里也成立"）
        also = "也" if not demo2_failed(outputs[printer]) else ""
        assert f"观察1在那里{also}成立" in item and "本次不成立" not in item and (also or "也成立" not in item)
    assert MARK not in outputs[printer].split("可以试试：", 1)[1]       # 建议里不出现标记本身


def printed_02_commands(stdout):
    """这次运行的"可以试试"里 02 自己的命令（python3 lecture14/02_llm_proposal.py ...），原样。"""
    tail = unfold(stdout).split("可以试试：", 1)[1]
    return [line.strip() for line in tail.splitlines() if line.strip().startswith("python3 lecture14/02_llm")]


# 默认运行印的命令，和那些命令印的命令（再往下一层）：学生照着一条条跑下去时会跑到的
FOLLOW = [["--seed", "4"], ["--seed", "3", "--after", "1000"], ["--after", "2000"], ["--seed", "4", "--after", "500"]]
PREFETCH += [(SCRIPT, *a) for a in FOLLOW]


@pytest.mark.h100_only
def test_following_the_printed_02_commands_two_steps_deep_works(outputs):
    # 以前 02 → 02 --after 500 → 它印的 02 --seed 3 --after 500 以 AssertionError 的 traceback 退出：演示 1 慢放的
    # 那一步，子程序以前一模一样地提过、评估器直接查了缓存，"计数器变了"的断言不成立。现在慢放只挑真的评估了的那一步。
    # 这里把 RUNS 里每次运行印的 02 命令都照着跑一遍（FOLLOW 是 RUNS 里没有的那几条）
    printed = {cmd for out in outputs.values() for cmd in printed_02_commands(out)}
    known = {" ".join(["python3", SCRIPT, *a]).strip() for a in list(RUNS.values()) + FOLLOW}
    assert printed <= known, printed - known               # 建议变了：把新的命令加进 FOLLOW
    for a in FOLLOW:
        p = run_script(SCRIPT, *a, timeout=180)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (a, p.stderr[-2000:])
        assert "演示 1：一次提议的慢动作" in p.stdout and "可以试试：" in p.stdout, a


def test_02_never_suggests_itself(outputs):
    # 每次运行印的"可以试试"里，02 自己的命令都和这次运行不同（种子或 --after 至少一个不一样）
    for name, args in RUNS.items():
        a = s02.parse_args(args)
        cmds = printed_02_commands(outputs[name])
        assert cmds, name
        for cmd in cmds:
            b = s02.parse_args(cmd.split()[2:])
            assert (b.seed, b.after) != (a.seed, a.after), (name, cmd)


def test_why_nothing_new_is_computed_from_the_parent():
    full = Program(tuple(Rule((("M", 2 ** k),), Config(16, 32, 256, 2, 4, 8)) for k in range(MAX_RULES)), EXPERT.default)
    prompt = Prompt("", full, 1.0, (), ())
    assert f"已经有 {MAX_RULES} 条规则，正是" in s02.why_nothing_new("add_rule", prompt)
    # 学生报过：贴进来 500 条规则的表，句子说"已经有 500 条规则，是 MockLLM 写规则的上限 MAX_RULES = 8"
    table = Program(full.rules * 3, EXPERT.default)
    said = s02.why_nothing_new("add_rule", Prompt("", table, 1.0, (), ()))
    assert f"已经有 {3 * MAX_RULES} 条规则，已经超过了" in said and f"MAX_RULES = {MAX_RULES}" in said
    small = Program(EXPERT.rules[:1], EXPERT.default)
    bare = Prompt("", small, 1.0, (), ())
    assert "灵感程序里没有一条规则可借" in s02.why_nothing_new("crossover", bare)
    assert "上限" not in s02.why_nothing_new("add_rule", bare)
    stats = {op: dict(n=10, better=0, bad=0, same=10 if op in ("add_rule", "crossover") else 0) for op in s02.OPS}
    note = s02.nothing_new_note(stats, prompt)
    assert note.startswith("（add_rule、crossover 提了") and f"MAX_RULES = {MAX_RULES}" in note
    assert s02.nothing_new_note({op: dict(n=10, better=1, bad=0, same=3) for op in s02.OPS}, prompt) is None


@pytest.mark.h100_claim
def test_valley_sentence_prints_the_table_cells(outputs):
    # 山谷那句的分数和表里那两格印得一样（同样的位数），不是表里 1.0182×、句子里 1.018×
    out = section(outputs["default"], "演示 3")
    t = find_table(out, "专家的默认分支换成")
    col = t.col("分数")
    m = find(r"（分数 ([\d.]+×) → ([\d.]+×)）", out.split("观察：", 1)[1])
    assert (m[1], m[2]) == (t.rows[0][col], t.rows[-1][col])
    m = find(r"能启动，但 ([\d.]+×) 不比起点好", out.split("观察：", 1)[1])
    assert m[1] == t.rows[2][col]



@pytest.mark.h100_claim
def test_a_late_step_that_finds_nothing_is_not_offered_as_showing_demo_2():
    """学生报过：--after 2000 的"可以试试"说"看演示 2 里各种修改比父程序好的比例怎么变"，同一句又说演示 2 不印；
    演示 3 还说"对演示 1 的父程序"，可演示 1 没印父程序。"""
    p = run_script(SCRIPT, "--after", "2000", timeout=180)
    assert p.returncode == 0
    # "可以试试"逐条看（助教报过：加了一块 L40S，那里换种子的第 1 条也说"演示 2 不印"，以前按"2."切文字找第 2 条，
    # 找不到就是 IndexError，报成"讲义论断的测试没跑完……先当测试或引擎的问题查"）
    items = [flat(x) for x in re.split(r"^  \d+\. ", unfold(p.stdout).split("\n可以试试：\n", 1)[1], flags=re.M)[1:]]
    for item in items:
        if "没有一个比父程序好的" in item and "演示2不印" in item:
            assert "比例怎么变" not in item, item
            assert "还找不找得到比父程序好的一步" in item or "--seed" in item, item          # 更后期的那条，或换种子的那条
    if "父程序就是演示 1 的那个" not in p.stdout:                   # 演示 1 没找到父程序
        assert "对演示 1 的父程序" not in p.stdout and "对专家启发式" in p.stdout


@pytest.mark.h100_golden          # 种子 0 在 H100 上的轨迹：第 2000 个提议以后那一段恰好没有比父程序好的
def test_a_window_with_nothing_better_says_the_evolution_stalled_not_a_failed_claim(table, train):
    """学生报过：02 --after 1000 的"可以试试"先说"第 2000–2400 个提议里没有一个比父程序好的"，照着跑
    --after 2000，演示 1 却把这个预告过的结果标成【本次不成立】，又接着建议同样找不到的 --after 4000。
    现在演示 1 说进化在那一段停住了（最好的程序是第几个提议找到的，自己重跑一遍核对），不再建议更后的一段。"""
    from evolve import Evaluator, evolve
    p = run_script(SCRIPT, "--after", "2000", timeout=180)
    demo1 = flat(section(p.stdout, "演示 1"))
    assert "没有一个比父程序好的" in demo1 and "本次不成立" not in demo1, demo1
    m = re.search(r"([\d,]+)个提议的进化里，最好的程序（([\d.]+)×）是第([\d,]+)个提议（(\w+)）找到的", demo1)
    n, k = int(m[1].replace(",", "")), int(m[3].replace(",", ""))
    out = evolve(Evaluator(train, table), n, seed=0)
    last, score, op = out["improvements"][-1]
    assert (k, m[2], m[4]) == (last, f"{score:.3f}", op) and last < 2000 and n == 2000 + s02.LOOK
    assert "--after 4000" not in p.stdout and "--after" in unfold(p.stdout).split("可以试试：")[1]


@pytest.mark.parametrize("run", list(RUNS))
def test_the_replayed_step_names_the_run_it_belongs_to(outputs, run):
    """学生报过：--after 1000 时第 1232 个提议也说"这一步是 04 那次进化的原样重演"，可 04 默认只跑 1,000 个提议；
    --seed 3 时也说"04 那次进化"，可 04 默认是种子 0。现在按第几步、哪个种子说是哪次进化。"""
    flat = "".join(outputs[run].split())
    m = re.search(r"这一步是(.*?)的原样重演：不经过这里、直接跑(\d+)个提议的进化", flat)
    if m is None:                                                # 这次没找到比父程序好的提议：没有这一步
        assert "没有一个" in flat
        return
    a = s02.parse_args(RUNS[run])
    k, seed = int(m[2]), a.seed
    if k <= s02.RUN_04[1]:
        gpu = "" if TESTS_GPU == "h100" else f"--gpu{TESTS_GPU}"   # 别的 GPU 上说的是 04 --gpu a100 那一次
        assert m[1] == (f"04{gpu}那次进化" if seed == 0 else f"04--seed{seed}{gpu}那次进化"), m[1]
    else:
        assert m[1].startswith(f"种子{seed}那次进化（比04默认的1,000个提议走得更远"), m[1]
    T04 = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_replay")
    assert s02.RUN_04 == (T04.SEED, T04.BUDGET)                 # 04 默认那次进化的种子和预算，两边一致


def test_a_new_edit_kind_says_why_it_proposed_nothing_new(monkeypatch):
    """助教报过：照 README 加一种修改（swap_rules，对调两条规则），父程序只有 1 条规则时 02 说它"每次改出来的都和父程序
    一模一样"，真正的原因是不到 2 条规则。现在每种修改做不了时自己说为什么（返回 (None, 一句话)），02 照印。"""
    from evolve import mock_llm

    def _swap_rules(self, pr):
        p = pr.parent
        if p.n_rules() < 2:
            return None, "父程序不到 2 条规则，没有两条可以对调"
        i = self.rng.below(p.n_rules() - 1)
        rules = p.rules[:i] + (p.rules[i + 1], p.rules[i]) + p.rules[i + 2:]
        return Program(rules, p.default), f"对调第 {i + 1}、{i + 2} 条规则"
    monkeypatch.setattr(mock_llm.MockLLM, "_swap_rules", _swap_rules, raising=False)
    monkeypatch.setattr(mock_llm, "OPS", mock_llm.OPS + ("swap_rules",))
    monkeypatch.setattr(mock_llm, "OP_WEIGHTS", dict(mock_llm.OP_WEIGHTS, swap_rules=0.1))
    monkeypatch.setattr(s02, "OPS", mock_llm.OPS)
    one = Prompt("", Program(EXPERT.rules[:1], EXPERT.default), 1.0, (), ())
    assert s02.why_nothing_new("swap_rules", one) == "父程序不到 2 条规则，没有两条可以对调"
    two = Prompt("", Program(EXPERT.rules[:1] * 2, EXPERT.default), 1.0, (), ())
    assert s02.why_nothing_new("swap_rules", two) == "每次改出来的都和父程序一模一样"       # 对调两条一样的规则


def test_a_long_search_says_how_far_it_is_on_stderr_and_a_short_one_says_nothing(monkeypatch, table, train):
    """学生报过：02 --after 100000 印完标题后 43 秒什么都没有（03、04、05 都在标准错误上说做到哪）。现在 02 的每次
    进化跑了 SLOW 秒以后每秒说一行做到第几个提议；默认的几百个提议不到一秒，什么都不说。这里用假的钟：每一步 0.3 秒。"""
    # 先找一段找得到比父程序好的一步的（哪段找得到看数据和 GPU：H100 上种子 0 从 1000 起就有，A100 上没有）
    after = next(a for a in (1000, 500, 1500, 100, 2500) if s02.find_proposal(table, train, 0, a)[0] is not None)
    said = []
    monkeypatch.setattr(s02, "progress", said.append)
    clock = iter(range(10 ** 6))
    import runner
    from conftest import only_in                  # 只换这两个模块的时钟：后台线程同时在量时间
    only_in(monkeypatch, s02, "time", monotonic=lambda: 0.3 * next(clock))
    only_in(monkeypatch, runner, "time", monotonic=lambda: 0.3 * next(clock))
    k, _ = s02.find_proposal(table, train, 0, after, label="找")
    total = after + s02.LOOK
    assert said and all(re.fullmatch(rf"找：做完 [\d,]+/{total:,} 个提议(，还要.*)?", line) for line in said[:-1]), said
    done = [int(re.search(r"做完 ([\d,]+)/", line)[1].replace(",", "")) for line in said]
    assert done == sorted(done) and done[-2] <= k
    # 学生报过：屏幕上最后停在"做完 488/500 个提议"，像是半路停了。说过做到哪的，最后说一句做完了——找到了就停在
    # 那一步（后面的提议不跑），说是第几个
    assert said[-1] == f"找：做完 {k:,}/{total:,} 个提议——第 {k:,} 个就是要找的，不用再往后跑", said
    assert said.count(said[-1]) == 1
    said.clear()                                                           # 一段里找不到：走完整段，说做完了
    k, _ = s02.find_proposal(table, train, 0, 2000, label="找")           # （H100 上种子 0 在这一段停住了）
    total = 2000 + s02.LOOK
    assert said[-1] == (f"找：做完 {total:,}/{total:,} 个提议" if k is None else
                        f"找：做完 {k:,}/{total:,} 个提议——第 {k:,} 个就是要找的，不用再往后跑"), said
    said.clear()
    only_in(monkeypatch, s02, "time", monotonic=lambda: 0.0)               # 一瞬间跑完：一行都不说
    only_in(monkeypatch, runner, "time", monotonic=lambda: 0.0)
    s02.find_proposal(table, train, 0, 100)
    assert said == []


LAST_RAISE = r"最好的程序（([\d.]+)×）是第([\d,]+)个提议（(\w+)）找到的"


@ahead
def stalled_step_run():
    """下面的测试照 --after 2000 说的那一步（最后一次刷新最好分数的提议）跑 02 --after k（约 0.8 CPU 秒）：k 从那次的
    输出里读，在后台先跑进缓存（PREFETCH）；以前测试要时才在前台跑。"""
    p = run_script(SCRIPT, "--after", "2000", env=base_env(), timeout=180)
    m = re.search(LAST_RAISE, flat(section(p.stdout, "演示 1")))
    if m is not None:
        run_script(SCRIPT, "--after", m[2].replace(",", ""), env=base_env(), timeout=180)


PREFETCH.append(stalled_step_run)


def test_a_stalled_run_suggests_the_step_that_last_raised_the_best_and_it_is_shown():
    """审读报过：02 --after 5000（进化在第 1,818 个提议后停住了）的"可以试试"建议"--seed 3 --after 5000"，说"提示词、
    回复、探针上的分数都会变"——种子 3 在那一段也停住了，照着跑什么都不慢放。现在停住的运行建议最后一次刷新最好分数的
    那一步，照着跑，演示 1 慢放的正是它。"""
    p = run_script(SCRIPT, "--after", "2000", timeout=180)
    assert p.returncode == 0, p.stderr
    demo1 = flat(section(p.stdout, "演示 1"))
    m = re.search(LAST_RAISE, demo1)
    if m is None:
        # 助教报过：GPU 没换、数据里加了一个模型时也跳过，原因却说"这块 GPU 上"：说这次的运行，不猜为什么
        pytest.skip(f"这次（TESTS_GPU={TESTS_GPU}）种子 0 的进化在第 2000–2400 个提议里还有比父程序好的一步：这条建议不出现")
    k = int(m[2].replace(",", ""))
    tries = flat(unfold(p.stdout).split("可以试试：", 1)[1])
    assert "换一个种子" not in tries and "提示词、回复、探针上的分数都会变" not in tries, tries
    assert f"第{k:,}个提议，{m[3]}改到{m[1]}×" in tries, tries
    cmd = [c for c in printed_02_commands(p.stdout)]
    gpu = "" if TESTS_GPU == "h100" else f" --gpu {TESTS_GPU}"          # 别的 GPU 上命令带着 --gpu（照这次的设置）
    assert cmd[0] == f"python3 {SCRIPT}{gpu} --after {k}", cmd
    q = run_script(SCRIPT, "--after", str(k), timeout=180)
    assert q.returncode == 0, q.stderr
    assert f"第{k:,}个：" in flat(section(q.stdout, "演示 1")), section(q.stdout, "演示 1")[:600]


def test_the_other_seed_suggestion_promises_a_step_only_when_that_seed_has_one():
    """审读报过：--seed 4 --after 2400 找到了一步，"可以试试"却建议"--seed 3 --after 2400"，说"看另一次进化里的另一步
    （提示词、回复、探针上的分数都会变）"——照着跑，种子 3 在第 2,400–2,800 个提议里没有比父程序好的，演示 1 只说停住了。
    现在先替学生试：承诺提示词会变，照着跑就真的慢放了一步；试过的种子都找不到时照实说。"""
    said, shown, q = other_seed_suggestion_run()
    if not shown:
        assert "没有一个比父程序好的" in said and "没有一个比父程序好的" in flat(section(q.stdout, "演示 1")), said


def other_seed_suggestion_run():
    """--seed 4 --after 2400 的第一条"可以试试"照着跑：(那句话, 照着跑慢放了一步没有, 那次运行)。"""
    import argparse
    a = argparse.Namespace(seed=4, after=2400, stalled=None, parent_shown=None)   # parent_shown=None：不再预告更后的一段
    said, cmd = s02.suggestions(a)[0]
    said = flat(said)
    assert cmd.startswith(f"python3 {SCRIPT} --seed ") and "--after 2400" in cmd, cmd
    q = run_script(SCRIPT, *cmd.split()[2:], timeout=180)
    assert q.returncode == 0, q.stderr
    shown = "① 提示词" in q.stdout
    assert ("提示词、回复、探针上的分数都会变" in said) == shown, (said, cmd)
    return said, shown, q


@pytest.mark.h100_golden          # 种子 3、5 在 H100 上的轨迹（助教报过：这句以前在上一个测试里，数据里加了一个模型时是
def test_the_premise_of_the_other_seed_test_above():   # 一个没有标记的裸失败，看着像 02 的建议坏了）
    """金标运行：上一个测试要测"试过的种子都找不到时照实说"那一支，要种子 3、5 在第 2,400–2,800 个提议里都找不到一步。"""
    _, shown, _ = other_seed_suggestion_run()
    assert not shown, "测试的前提变了：种子 3、5 在这一段里找得到一步，上一个测试测不到照实说的那一支"


def test_one_step_prints_each_score_the_same_way_everywhere(outputs):
    """讲师审读报过：--after 1000 时演示 1 开头说父程序 1.2564×、演示 2 说它 1.256×；⑥说子程序 1.2587×、⑦说 1.259
    （岛上七个程序都印成 1.256，看不出名次从哪来）；默认运行反过来，⑥说 1.087×、⑦说 1.0873。同一个分数在开头那句、
    ⑥、⑦、演示 2 的第一句里印成同样的字（位数由这一步里最需要多印的那处定），⑦岛上的分数也印到同样的位数。"""
    for name, out in outputs.items():
        each_score_printed_one_way(name, out)


def each_score_printed_one_way(name, out):
    one = flat(section(out, "演示 1"))
    if "⑥" in one:                                            # 这一段有可慢放的一步（才印⑥⑦、演示 2）
        opening = find(r"按名次加权挑出父程序（分数([\d.]+)×）", one)[1]
        m = find(r"⑥完整评估：\d+个训练形状上相对专家的加速比([\d.]+)×（自己用时间表重算：([\d.]+)×），"
                 r"父程序([\d.]+)×，到目前最好([\d.]+)×", one)
        island = find(r"⑦程序库：第\d+个岛在放进子程序之前有\d+个程序（分数([\d.、]+)），子程序（([\d.]+)）", one)
        assert opening == m[3], (name, opening, m[3])
        assert m[1] == m[2] == island[2], (name, m[1], island[2])
        digits = {len(x.split(".")[1]) for x in [opening, *m.groups(), *island[1].split("、"), island[2]]}
        assert len(digits) == 1, (name, opening, m.groups(), island.groups())
        assert parent(out)[1] == opening, (name, parent(out)[1], opening)


PREFETCH.append((SCRIPT, "--seed", "2", "--after", "50"))


@pytest.mark.h100_golden
def test_demo_1_prints_the_parent_with_the_digits_demo_2_needs():
    """助教在 L40S 上报过（H100 上 --seed 2 --after 50 也一样）：演示 2 的表里有一行的分数和父程序三位上一样，
    演示 2 多印了几位（父程序 1.03570×），演示 1 的开头、⑥、⑦ 却已经印成了 1.036×。演示 1 先算好演示 2 要的位数。"""
    p = run_script(SCRIPT, "--seed", "2", "--after", "50", timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "⑥" in p.stdout and len(parent(p.stdout)[1].split(".")[1]) > 3, \
        "测试的前提变了：--seed 2 --after 50 的演示 2 不再要多印几位，换一个要的"
    each_score_printed_one_way("--seed 2 --after 50", p.stdout)


def test_the_step_that_is_found_is_said_once_on_stderr_even_when_it_is_a_progress_checkpoint(monkeypatch, table, train):
    """助教报过：找到的那一步正好也是一个进度点时，标准错误上先印"做完 k/…，还要约 4 分钟"，紧接着又是"做完 k/…——
    第 k 个就是要找的"，同一个数说两遍，像是印重了（机器忙时 02 --after 600：第 800 个提议）。现在看过这一步才说进度：
    找到的那一步只有最后那一句。这里每一步都是进度点（一段只有 150 个提议：every = 1），假的钟每读一次过 2 秒（每个
    进度点都该说）。"""
    said = []
    monkeypatch.setattr(s02, "progress", said.append)
    monkeypatch.setattr(s02, "LOOK", 150)
    clock = iter(range(10 ** 6))
    import runner
    for mod in (s02.time, runner.time):
        monkeypatch.setattr(mod, "monotonic", lambda: 2.0 * next(clock))
    k, _ = s02.find_proposal(table, train, 0, 40, label="找")
    assert k is not None, "种子 0 在第 40–190 个提议里该有一步比父程序好（前提）"
    assert max(1, (40 + 150) // 200) == 1 and len(said) >= 2, said          # 每一步都是进度点，而且都说了
    done = [int(re.search(r"做完 ([\d,]+)/", line)[1].replace(",", "")) for line in said]
    assert said[-1] == f"找：做完 {k:,}/190 个提议——第 {k:,} 个就是要找的，不用再往后跑", said
    assert done.count(k) == 1 and done[-2] == k - 1, said[-3:]
