"""
MockLLM 自己的测试（issue 12 §3）：犯错按说好的概率发生，犯的错在进化里记作失败或被静态检查拒掉；
common_sense_config 给的配置在所有形状、很多种子下都能启动（_launchable 的减流水线级数真的用上了）；
定向修改按说好的权重加出只管 M、管 M 和 N、管 M、N、K 的规则，阈值就是那个慢形状的维度。
"""

import functools
import math
import os
import re
import sys

import numpy as np
import pytest

import evolve.mock_llm as mock_llm
from evolve import EXPERT, VALID, Evaluator, Program, ProgramError, all_shapes, evolve, render
from evolve.mock_llm import COND_FIELDS, COND_WEIGHTS, MISTAKE, MISTAKE_RATE, Dice, MockLLM, Prompt, common_sense_config
from evolve.problem import launch_errors
from evolve.program import DiffError, apply_diff, parse_diff
from evolve.source import parse
from conftest import ROOT, base_env, launchable
from kernel_lab import GRID, MAX_SMEM_PER_BLOCK, VALID_INDEX, Config, can_launch


def prompt_for(program, ev):
    """和 evolve 拼的一样的提示（父程序 program，没有灵感程序）。"""
    res = ev.evaluate(program)
    fb = tuple((s, floor, best, VALID[i]) for s, floor, best, i in ev.feedback(res))
    return Prompt(render(program), program, res["score"], fb, ())


def within(count, n, p, sigmas=5):
    """count 是 n 次里 p 概率的事件发生的次数：离 n·p 不超过 sigmas 个标准差。"""
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p)) + 1


def classify(reply, parent_src):
    """一个回复在进化里落到哪儿：SEARCH 打不上、子程序解析不了、有分支启动不了、正常的子程序。"""
    try:
        child_src = apply_diff(parent_src, parse_diff(reply))
    except DiffError:
        return "diff"
    try:
        child = parse(child_src)
    except ProgramError:
        return "parse"
    return "static" if launch_errors(child) else "ok"


# ---------------------------------------------------------------- 犯错

@pytest.mark.parametrize("rate", [0.0, MISTAKE_RATE, 0.1, 0.5])
def test_mistakes_happen_at_the_stated_rate(table, train, rate):
    ev = Evaluator(train, table)
    pr = prompt_for(EXPERT, ev)
    llm = MockLLM(Dice(11), mistake_rate=rate)
    n = 3000
    ops = [llm.propose(pr)[0] for _ in range(n)]
    k = ops.count(MISTAKE)
    assert within(k, n, rate), (k, n * rate)


def test_every_mistake_fails_or_is_rejected(table, train):
    # 直接看每个犯错的回复：三种错（SEARCH 抄错、DSL 不认的条件、启动不了的配置）都有，没有一个变成能评估的子程序
    ev = Evaluator(train, table)
    llm = MockLLM(Dice(5), mistake_rate=1.0)
    kinds = []
    for parent in (EXPERT, Program((), launchable(128, 256, 64, 8, 4, 8))):
        pr = prompt_for(parent, ev)
        for _ in range(300):
            op, reply = llm.propose(pr)
            assert op == MISTAKE
            kinds.append(classify(reply, pr.parent_src))
    counts = {k: kinds.count(k) for k in ("diff", "parse", "static", "ok")}
    assert counts["ok"] == 0, counts
    assert all(within(counts[k], len(kinds), 1 / 3) for k in ("diff", "parse", "static")), counts


def test_mistake_rate_one_means_no_proposal_is_evaluated(table, train):
    # mistake_rate=1 的进化：每个提议要么记作失败，要么被静态检查拒掉（第一次拒掉、或者从缓存里拿到"拒掉"），
    # 一个内核都没跑，最好的还是起点
    ev = Evaluator(train, table)
    runs = ev.bench_runs
    budget = 300
    out = evolve(ev, budget, seed=0, llm=MockLLM(Dice(0), mistake_rate=1.0))
    assert out["tried"] == {MISTAKE: budget}
    assert ev.n_eval_full == ev.n_eval_probe == 0 and ev.bench_runs == runs + len({(s.M, s.N, s.K) for s in train})
    assert sum(out["failed"].values()) > 0 and out["static_reject"][MISTAKE] > 0
    assert sum(out["failed"].values()) + ev.n_static_reject + ev.n_cached == budget
    assert all(r["status"] == "static_reject" for p, r in ev.cache.items() if p != EXPERT)
    assert out["best"][0] == EXPERT and out["accepted"] == {}
    assert any("寄存器" in k for k in out["static_kinds"][MISTAKE])     # 256×128 配 4 个 warp：寄存器超了


def test_no_mistakes_means_no_failures(table, train):
    ev = Evaluator(train, table)
    out = evolve(ev, 300, seed=0, llm=MockLLM(Dice(0), mistake_rate=0.0))
    assert MISTAKE not in out["tried"] and out["failed"] == {}


# ---------------------------------------------------------------- 内核常识

def test_common_sense_configs_launch_everywhere(monkeypatch):
    # 所有形状（加上一些不在表里的 M）× 60 个种子：给出的配置都在候选网格上、都能启动；
    # 而且 _launchable 真的把放不下的流水线级数减下来过（不然这条测试就测不到它）
    lowered = []
    original = mock_llm._launchable

    def spy(cfg):
        out = original(cfg)
        if out is not None and out.stages < cfg.stages:
            lowered.append((cfg, out))
        return out

    monkeypatch.setattr(mock_llm, "_launchable", spy)
    shapes = [(s.M, s.N, s.K) for s in all_shapes()] + [(m, 4096, 4096) for m in (2, 3, 17, 100, 1000, 5000, 20000)]
    for seed in range(60):
        rng = Dice(seed)
        for M, N, K in shapes:
            cfg = common_sense_config(M, N, K, rng)
            assert cfg in VALID_INDEX and can_launch(cfg), (M, N, K, seed, cfg)
            assert all(getattr(cfg, f) in GRID[f] for f in GRID)
    assert lowered
    for before, after in lowered:                                  # 减的是共享内存放不下的那几级，其余不变
        assert before.stages * (before.BM + before.BN) * before.BK * 2 > MAX_SMEM_PER_BLOCK
        assert (after.BM, after.BN, after.BK, after.group) == (before.BM, before.BN, before.BK, before.group)


def test_common_sense_follows_its_rules():
    # 不随机微调的那一半：块的行数盖住 M，decode 用 16 行；CTA 数不少于 SM 数的一半时 BN 尽量大；group 8
    from sched_lab import SMS
    for M, N, K in [(1, 4096, 4096), (16, 28672, 4096), (64, 8192, 1024), (128, 1280, 8192), (8192, 4096, 14336)]:
        configs = [common_sense_config(M, N, K, Dice(seed)) for seed in range(40)]
        base = max(set(configs), key=configs.count)                   # 最常见的就是没微调的
        assert base.group == 8
        assert base.BM == (16 if M <= 16 else 32 if M <= 32 else 64 if M <= 128 else 128)
        tiles = math.ceil(M / base.BM) * math.ceil(N / base.BN)
        assert tiles >= SMS // 2 or base.BN == 32
        if base.BN < 256:                                             # 再宽一档 CTA 就不够了
            assert math.ceil(M / base.BM) * math.ceil(N / (2 * base.BN)) < SMS // 2


# ---------------------------------------------------------------- 定向修改的条件

def test_targeted_rules_condition_on_n_and_k_at_the_stated_weights(table, train):
    # 父程序没有规则：定向修改总是新加一条规则；条件只管 M / 管 M 和 N / 管 M、N、K 的比例是 COND_WEIGHTS，
    # 阈值就是某个反馈里的慢形状的维度，配置能启动
    ev = Evaluator(train, table)
    parent = Program((), Config(128, 128, 64, 4, 3, 8))
    pr = prompt_for(parent, ev)
    shapes = {(s.M, s.N, s.K) for s, *_ in pr.feedback}
    llm = MockLLM(Dice(2))
    n = 3000
    fields = []
    for _ in range(n):
        child, why = llm._targeted(pr)
        assert child.n_rules() == 1 and child.default == parent.default
        rule = child.rules[0]
        f = tuple(a for a, _ in rule.conds)
        fields.append(f)
        bounds = dict(rule.conds)
        assert any(all(bounds[a] == dict(zip("MNK", s))[a] for a in f) for s in shapes)
        assert rule.config in VALID_INDEX
    for f, w in zip(COND_FIELDS, COND_WEIGHTS):
        assert within(fields.count(f), n, w / sum(COND_WEIGHTS)), (f, fields.count(f))
    assert set(fields) == set(COND_FIELDS)


def test_targeted_edits_reach_the_evolved_programs(table, train):
    # 进化里定向修改加的 N、K 条件确实会出现在程序库里（不是只在直接调用时）
    out = evolve(Evaluator(train, table), 1000, seed=0)
    axes = {a for p in out["population"] for r in p.rules for a, _ in r.conds}
    assert {"M", "N"} <= axes
    assert out["tried"]["targeted"] == max(out["tried"].values())


def test_targeted_replaces_the_home_rule_half_the_time(table, train):
    # 慢形状正好落在"M <= 它的 M"那条规则里：一半的时候换掉那条规则的配置，一半的时候新加一条
    ev = Evaluator(train, table)
    s = train[0]
    parent = Program((mock_llm.Rule((("M", s.M),), Config(16, 32, 32, 2, 1, 1)),), Config(128, 128, 64, 4, 3, 8))
    res = ev.evaluate(parent)
    fb = ((s, 2.0, 2.0, VALID[0]),)
    pr = Prompt(render(parent), parent, res["score"], fb, ())
    llm = MockLLM(Dice(4))
    n = 2000
    replaced = sum(llm._targeted(pr)[0].n_rules() == 1 for _ in range(n))
    assert within(replaced, n, 0.5)
    assert np.isclose(sum(COND_WEIGHTS), 1.0)


def test_every_edit_kind_is_explained_where_its_table_is_printed():
    # 助教报过：加了一种修改（drop_cond），02 演示 2、04 演示 2 的表里有它，表下面逐个解释的那段话却没有。
    # 现在那两段话都从 mock_llm.OP_SAID 拼出来：每种修改在这里有一句，两段话里就都有
    from evolve.mock_llm import OP_SAID, OPS
    from printed import section, unfold
    from conftest import run_script
    assert set(OP_SAID) == set(OPS) and all(OP_SAID[op] for op in OPS)
    for script, demo in (("lecture14/02_llm_proposal.py", "演示 2"), ("lecture14/04_alphaevolve_tiling.py", "演示 2")):
        text = "".join(unfold(section(run_script(script).stdout, demo)).split())
        for op in OPS:
            assert "".join(OP_SAID[op].split()) in text, (script, op)


def test_targeted_picks_any_of_the_listed_slow_shapes_not_only_the_slowest(table, train):
    # 助教报过：02、05 说 targeted "去修反馈里最慢的形状"/"有反馈就挑最慢的"，可它在反馈列出的几个形状里随便挑
    # 一个。现在的说法是"反馈里列出的一个慢形状"；这里看它确实会挑到第一个以外的、而且只挑列出来的
    from evolve.mock_llm import OP_SAID
    ev = Evaluator(train, table)
    parent = Program((), Config(128, 128, 64, 4, 3, 8))
    pr = prompt_for(parent, ev)
    listed = [s for s, *_ in pr.feedback]
    llm = MockLLM(Dice(5))
    picked = set()
    for _ in range(200):
        _, why = llm._targeted(pr)
        picked |= {s.label() for s in listed if why.startswith(s.label())}
    assert picked <= {s.label() for s in listed} and len(picked) > 1, picked
    assert "最慢" not in OP_SAID["targeted"] and "列出的一个" in OP_SAID["targeted"]


@pytest.mark.parametrize("skip, says", [("said", "OP_SAID 里没有 swap 的一句说明"), ("method", "MockLLM 没有方法 _swap")],
                         ids=["no-said", "no-method"])
def test_a_half_added_edit_kind_is_named_when_mock_llm_is_imported(tmp_path, skip, says):
    """助教报过：加修改种类时漏了 OP_SAID 那一句，02、04 跑到表下面那段说明才是 KeyError: 'swap_rules' 的 traceback。
    现在 import evolve.mock_llm 时就说漏了哪一步、去哪里补（README 的"修改种类"）。"""
    import shutil
    import subprocess
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("__pycache__", "output"))
    src = tmp_path / "lecture14" / "evolve" / "mock_llm.py"
    text = src.read_text(encoding="utf-8")
    # 从 mock_llm.py 里现在的 OPS 行改（助教报过：写死了最后一种是 crossover，照 README 加了一种就失败）
    ops = re.search(r"^OPS = \((.*)\)$", text, re.M)
    assert ops and "OP_WEIGHTS = {" in text, "测试的前提变了：mock_llm.py 里找不到一行的 OPS = (…) 或 OP_WEIGHTS = {…}"
    edits = [(ops[0], f'OPS = ({ops[1]}, "swap")'), ("OP_WEIGHTS = {", 'OP_WEIGHTS = {"swap": 0.0, ')]
    if skip == "method":
        edits.append(("OP_SAID = {\n", 'OP_SAID = {\n    "swap": "交换两条规则",\n'))
    for old, new in edits:
        assert text.count(old) == 1, f"测试的前提变了：mock_llm.py 里找不到 {old!r}"
        text = text.replace(old, new)
    src.write_text(text, encoding="utf-8")
    code = ("import sys; sys.path[:0] = ['lecture01', 'lecture10', 'lecture13', 'lecture14']; import evolve.mock_llm")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env=base_env())
    last = p.stderr.strip().splitlines()[-1]
    # 文件名从运行命令的目录看（助教报过：以前说 evolve/mock_llm.py，在仓库根目录照着打不开）
    assert p.returncode == 1 and last.startswith("evolve.mock_llm.KindsIncomplete: lecture14/evolve/mock_llm.py 的修改种类"
                                                 "没有配齐：") and says in last, p.stderr[-2000:]
    # 编号脚本：只有那一句（助教报过：11 行的 traceback，那句话在最后），退出码 1
    p = subprocess.run([sys.executable, "lecture14/01_heuristic_as_code.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines[0].startswith("lecture14/01_heuristic_as_code.py：lecture14/evolve/mock_llm.py 的修改种类没有配齐：") and says in lines[0]
    # README 列出的 MockLLM 服务器也一样（助教的复查报过：编号脚本一句话，它还是一段 traceback）
    p = subprocess.run([sys.executable, "lecture14/mock_llm_server.py", "--help"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines[0].startswith("lecture14/mock_llm_server.py：lecture14/evolve/mock_llm.py 的修改种类没有配齐：") and says in lines[0]
    # README 印系统提示的命令也一样（助教报过：原来那条 python -m evolve.openai_llm 是一段 traceback）
    p = subprocess.run([sys.executable, "lecture14/02_llm_proposal.py", "--system-prompt"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines[0].startswith("lecture14/02_llm_proposal.py：lecture14/evolve/mock_llm.py 的修改种类没有配齐：") and says in lines[0]


SWAP_METHOD = """
    def _swap(self, pr):
        p = pr.parent
        if p.n_rules() < 2:
            return None, "父程序不到两条规则"
        return Program((p.rules[1], p.rules[0]) + p.rules[2:], p.default), "把前两条规则换个先后"

"""


def _copy_with_kind(tmp_path, ops=True, weight=True, said=True, method=SWAP_METHOD, at=None, weight_text='"swap": 0.05'):
    """课程目录拷一份，照 README 的"修改种类"加一种修改 swap，只做给了的那几步（method 是方法的源码，None 就不写）。
    at：swap 放在 OPS 的第几个位置（None 是最后）；weight_text 是加进 OP_WEIGHTS 的那一项（放在最前面：按名字配，
    和 OPS 的先后无关）。"""
    import shutil
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("__pycache__", "output"))
    src = tmp_path / "lecture14" / "evolve" / "mock_llm.py"
    text = src.read_text(encoding="utf-8")
    found = re.search(r"^OPS = \((.*?)\)(.*)$", text, re.M)
    assert found and "OP_WEIGHTS = {" in text, "测试的前提变了：mock_llm.py 里找不到一行的 OPS = (…) 或 OP_WEIGHTS = {…}"
    names = [n.strip() for n in found[1].split(",")]
    names.insert(len(names) if at is None else at, '"swap"')
    edits = ([(found[0], f'OPS = ({", ".join(names)}){found[2]}')] if ops else []) \
        + ([("OP_WEIGHTS = {", "OP_WEIGHTS = {" + weight_text + ", ")] if weight else []) \
        + ([("OP_SAID = {\n", 'OP_SAID = {\n    "swap": "交换前两条规则",\n')] if said else []) \
        + ([("    # ---- 犯错 ----\n", method.lstrip("\n") + "    # ---- 犯错 ----\n")] if method else [])
    for old, new in edits:
        assert text.count(old) == 1, f"测试的前提变了：mock_llm.py 里找不到 {old!r}"
        text = text.replace(old, new)
    src.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("parts, says", [
    (dict(ops=False, weight=False), "OPS 里没有 swap（OP_SAID 里有它的说明）"),
    (dict(ops=False), "OPS 里没有 swap（OP_SAID 里有它的说明）；OP_WEIGHTS 里的 'swap' 不是 OPS 里的修改种类"),
    (dict(weight=False), "OP_WEIGHTS 里没有 swap 的权重"),
    (dict(weight_text='"swpa": 0.05'), "OP_WEIGHTS 里没有 swap 的权重；OP_WEIGHTS 里的 'swpa' 不是 OPS 里的修改种类"),
    (dict(weight_text='"swap": -1'), "OP_WEIGHTS 的权重要是有限的非负数，这几个不是：swap: -1"),
    (dict(method=SWAP_METHOD.replace("(self, pr)", "(self)")), "MockLLM._swap 要写成 def _swap(self, prompt)"),
    (dict(said=False, method=None), "OP_SAID 里没有 swap 的一句说明；MockLLM 没有方法 _swap"),
], ids=["only-said-and-method", "no-ops", "no-weight", "misspelt-weight", "negative-weight", "no-prompt-argument",
        "said-and-method-both-missing"])
def test_every_missing_step_of_a_new_edit_kind_is_named_in_one_sentence(tmp_path, parts, says):
    """助教报过：写了 OP_SAID 的一句和方法 _swap、忘了放进 OPS（和 OP_WEIGHTS），04 照常跑完、退出码 0，这种修改一次也
    没被提出来，也没有一句话；只忘了 OPS 时说"OP_WEIGHTS 有 7 个权重、OPS 有 6 种修改"，没说是哪一种；方法少写了参数
    prompt，04 跑到第一次抽中它才是一段 TypeError 的 traceback。现在 import 时一句话列出漏掉的每一步，点名那种修改；
    OP_WEIGHTS 按名字给权重，少了、拼错了、不是非负数的也点名。"""
    import subprocess
    _copy_with_kind(tmp_path, **parts)
    p = subprocess.run([sys.executable, "lecture14/04_alphaevolve_tiling.py", "--quick"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and not p.stdout, (p.returncode, p.stderr[-2000:])
    assert lines[0].startswith("lecture14/04_alphaevolve_tiling.py：lecture14/evolve/mock_llm.py 的修改种类没有配齐："
                               + says), lines[0]


def test_a_kind_added_in_the_middle_of_ops_gets_its_own_weight_and_the_others_keep_theirs(tmp_path):
    """README 的"修改种类"：OP_WEIGHTS 按名字给权重。助教报过：以前它是和 OPS 按位置对应的元组，在 OPS 中间加一种
    修改、权重照常加在末尾，不报错，权重悄悄挪给了别的种类。这里照 README 把 swap 放在 OPS 的第 2 个位置、它的权重
    写在 OP_WEIGHTS 的最前面：每种修改被抽到的概率仍是它自己名字的权重；04 照常跑完，swap 真的被提出来。"""
    import json
    import subprocess
    _copy_with_kind(tmp_path, at=1, weight_text='"swap": 0.05')
    code = ("import sys, json; sys.path[:0] = ['lecture01', 'lecture10', 'lecture13', 'lecture14']\n"
            "import numpy as np, evolve.mock_llm as m\n"
            "llm = m.MockLLM(m.Dice(0))\n"
            "p = np.diff(np.concatenate([[0.0], llm._op_cdf, [1.0]]))\n"
            "print(json.dumps(dict(ops=list(m.OPS), p=p.tolist(), w=m.OP_WEIGHTS)))")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env=base_env())
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout)
    assert got["ops"][1] == "swap" and got["ops"][0] == mock_llm.OPS[0], got["ops"]
    total = sum(got["w"].values())
    probs = dict(zip(got["ops"], got["p"]))
    assert probs.keys() == got["w"].keys()
    for op, w in got["w"].items():
        assert probs[op] == pytest.approx(w / total), (op, probs, got["w"])
    assert got["w"]["swap"] == 0.05 and all(got["w"][op] == w for op, w in mock_llm.OP_WEIGHTS.items())
    p = subprocess.run([sys.executable, "lecture14/04_alphaevolve_tiling.py", "--quick"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, env=base_env())
    assert p.returncode == 0, p.stderr[-2000:]
    assert re.search(r"^swap +\d", p.stdout, re.M), "04 演示 2 的修改种类表里没有 swap 这一行"


def test_a_half_added_kind_names_the_file_from_where_the_command_was_run(tmp_path):
    """助教报过：那句话说 evolve/mock_llm.py（从 lecture14/ 看的），在仓库根目录运行的助教照着打不开。现在文件名从运行
    命令的目录看：在仓库根目录是 lecture14/evolve/mock_llm.py，在 lecture14/ 里（讲师原来的 04 就在那里跑）是
    evolve/mock_llm.py，在别处是绝对路径——每一种都真的打得开。"""
    import subprocess
    _copy_with_kind(tmp_path, ops=False, weight=False)
    far = tmp_path / "a" / "b"                          # 离得远（往上两层以上）：绝对路径
    far.mkdir(parents=True)
    for cwd in (tmp_path, tmp_path / "lecture14", tmp_path / "lecture14" / "evolve", far):
        code = (f"import sys; sys.path[:0] = {[str(tmp_path / d) for d in ('lecture01', 'lecture10', 'lecture13', 'lecture14')]!r}"
                "; import evolve.mock_llm")
        p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60,
                           env=base_env())
        last = p.stderr.strip().splitlines()[-1]
        said = re.match(r"evolve\.mock_llm\.KindsIncomplete: (\S+) 的修改种类没有配齐：", last)
        assert p.returncode == 1 and said, p.stderr[-2000:]
        assert (cwd / said[1]).resolve() == (tmp_path / "lecture14" / "evolve" / "mock_llm.py").resolve(), (cwd, said[1])
        assert os.path.isabs(said[1]) == (cwd == far), (cwd, said[1])


def test_an_edit_kind_that_returns_only_the_child_is_named_in_one_sentence(tmp_path):
    """README 说每种修改的方法返回 (子程序, 一句说明)。助教报过：只返回了子程序，04 是一段 traceback，最后一行
    "TypeError: cannot unpack non-iterable Program object"，没说是哪种修改。现在一句话说是哪个方法、返回了什么、该返回什么。"""
    import subprocess
    _copy_with_kind(tmp_path, method=SWAP_METHOD.replace('return Program((p.rules[1], p.rules[0]) + p.rules[2:], p.default), "把前两条规则换个先后"',
                                                        "return pr.parent"))
    p = subprocess.run([sys.executable, "lecture14/04_alphaevolve_tiling.py", "--quick"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines[-1] == ("lecture14/04_alphaevolve_tiling.py：MockLLM._swap 返回的是 一个 Program（只有子程序）：每种修改的方法"
                         "要返回 (子程序, 一句说明)，对这个父程序做不了时返回 (None, 一句为什么做不了)（见 README 的\"修改种类\"）。"), lines[-1]


STAGES_PLUS_ONE = """
    def _swap(self, pr):
        from .program import Rule as _Rule
        p = pr.parent
        if not p.rules:
            return None, "父程序没有规则"
        r = p.rules[0]
        return Program((_Rule(r.conds, r.config.replace(stages=r.config.stages + 1)),) + p.rules[1:], p.default), "第一条规则多一级流水线"

"""


def test_an_edit_kind_that_writes_a_value_off_the_grid_is_named_in_one_sentence(tmp_path):
    """助教报过：照 README 加了一种修改（流水线加一级），写成 stages + 1：4 级的分支改出 stages=5。评估器把它和真的启动
    不了的配置一起拒掉，02、04 的表里这种修改"启动不了"的比例很高，看着像是讲义说的"挪进资源超限的地方"，其实是方法写错了。
    现在第一次改出网格外的值就一句话说是哪个方法、哪个字段（退出码 1）；启动不了、但在网格上的照旧交给静态检查。"""
    import subprocess
    _copy_with_kind(tmp_path, method=STAGES_PLUS_ONE)
    p = subprocess.run([sys.executable, "lecture14/04_alphaevolve_tiling.py", "--quick"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, env=base_env())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines[-1].startswith("lecture14/04_alphaevolve_tiling.py：MockLLM._swap 改出的配置里 stages=5 不在候选值 (1, 2, 3, 4) 里：")


def test_threshold_moves_m_to_a_neighbouring_m_and_n_or_k_by_a_factor_of_two():
    # 挪阈值（threshold）：M 的阈值换成 M_THRESHOLDS 里紧挨着它的一个（_near_m），N、K 的阈值减半或加倍
    rule = mock_llm.Rule((("M", 128), ("N", 4096), ("K", 1024)), Config(128, 128, 64, 4, 3, 8))
    parent = Program((rule,), Config(16, 64, 128, 4, 4, 1))
    pr = Prompt(render(parent), parent, 1.0, (), ())
    llm = MockLLM(Dice(3))
    moved = {"M": set(), "N": set(), "K": set()}
    for _ in range(300):
        child, why = llm._threshold(pr)
        new = dict(child.rules[0].conds)
        changed = [f for f, t in rule.conds if new[f] != t]
        assert len(changed) == 1 and child.default == parent.default, why
        moved[changed[0]].add(new[changed[0]])
    assert moved == {"M": {96, 192}, "N": {2048, 8192}, "K": {512, 2048}}


def test_threshold_moves_an_off_list_m_to_its_two_neighbours():
    # "换成邻近的 M"：t 不在 M_THRESHOLDS 里时（学生的文件写了 M <= 100），邻近的是它两边的 96 和 128。以前取的是
    # searchsorted 下标的前一个和后一个：96 和 192，跳过了 128；M <= 0 时是 8（跳过了 1）
    llm = MockLLM(Dice(0))
    seen = lambda t: {llm._near_m(t) for _ in range(200)}  # noqa: E731
    assert seen(100) == {96, 128}
    assert seen(0) == {1}
    assert seen(9000) == {8192}
    assert seen(16) == {8, 32} and seen(8192) == {6144} and seen(1) == {8}   # 在表里的照旧：前一个和后一个



# ---------------------------------------------------------------- 每种修改做的是它那句说明（OP_SAID）说的事

def _edit_kind_prompt():
    """两条规则的父程序、一个带两条别的规则的灵感程序、一个反馈形状：六种修改都做得了。"""
    r1 = mock_llm.Rule((("M", 16),), Config(16, 64, 128, 4, 4, 1))
    r2 = mock_llm.Rule((("M", 128), ("N", 4096)), Config(64, 64, 128, 4, 3, 8))
    parent = Program((r1, r2), Config(128, 128, 64, 4, 3, 8))
    donor = Program((mock_llm.Rule((("M", 64),), Config(32, 64, 128, 4, 3, 8)),
                     mock_llm.Rule((("M", 512), ("K", 4096)), Config(128, 64, 64, 4, 3, 8))), Config(128, 128, 64, 4, 3, 8))
    s = next(s for s in all_shapes() if s.M == 256)
    return Prompt(render(parent), parent, 1.0, ((s, 2.0, 1.5, parent.default),), ((render(donor), donor, 1.1),))


def _configs(p):
    return [r.config for r in p.rules] + [p.default]


def _added(parent, child):
    """child 比 parent 多一条规则、其余原样按原来的顺序：返回多出的那条；不是这样返回 None。"""
    if child.n_rules() != parent.n_rules() + 1 or child.default != parent.default:
        return None
    for i, r in enumerate(child.rules):
        if child.rules[:i] + child.rules[i + 1:] == parent.rules:
            return r
    return None


def _removes_one_rule(pr, c):                 # "删一条规则"：其余的规则、默认配置原样
    return c.default == pr.parent.default and any(pr.parent.rules[:i] + pr.parent.rules[i + 1:] == c.rules
                                                  for i in range(pr.parent.n_rules()))


def _adds_an_m_rule_with_an_existing_config(pr, c):     # "复制一个配置、套上新条件，加一条规则"
    r = _added(pr.parent, c)
    return r is not None and [f for f, _ in r.conds] == ["M"] and r.config in _configs(pr.parent)


def _copies_a_rule_of_the_inspiration(pr, c):           # "从灵感程序抄一条规则"
    r = _added(pr.parent, c)
    return r is not None and r in pr.inspirations[0][1].rules


def _moves_one_threshold(pr, c):                         # "挪一条规则的阈值"：一个条件的数变了，别的都不动
    if c.n_rules() != pr.parent.n_rules() or _configs(c) != _configs(pr.parent):
        return False
    conds = [(x, y) for a, b in zip(pr.parent.rules, c.rules) for x, y in zip(a.conds, b.conds)]
    return (all(len(a.conds) == len(b.conds) for a, b in zip(pr.parent.rules, c.rules))
            and all(x[0] == y[0] for x, y in conds) and sum(x != y for x, y in conds) == 1)


def _moves_one_field_to_a_neighbour(pr, c):              # "只把一个字段挪到相邻的候选值"
    if [r.conds for r in c.rules] != [r.conds for r in pr.parent.rules]:
        return False
    diffs = [(a, b) for a, b in zip(_configs(pr.parent), _configs(c)) if a != b]
    if len(diffs) != 1:
        return False
    (a, b), = diffs
    fields = [f for f in GRID if getattr(a, f) != getattr(b, f)]
    return len(fields) == 1 and getattr(b, fields[0]) in mock_llm._neighbors(fields[0], getattr(a, fields[0]))


def _gives_the_slow_shape_a_common_sense_config(pr, c):  # "按内核常识一次改好几个字段……去修反馈里列出的一个慢形状"
    from evolve.program import choose
    s = pr.feedback[0][0]
    return c.n_rules() in (pr.parent.n_rules(), pr.parent.n_rules() + 1) and choose(c, s) in _common_sense(s.M, s.N, s.K)


@functools.lru_cache(maxsize=None)
def _common_sense(M, N, K):
    """common_sense_config 对这个形状给得出的配置（不微调的和各种微调的；300 个种子足够把它们都摸到）。"""
    return frozenset(common_sense_config(M, N, K, Dice(k)) for k in range(300))


EDIT_DOES = {"remove_rule": _removes_one_rule, "add_rule": _adds_an_m_rule_with_an_existing_config,
             "crossover": _copies_a_rule_of_the_inspiration, "threshold": _moves_one_threshold,
             "single_field": _moves_one_field_to_a_neighbour, "targeted": _gives_the_slow_shape_a_common_sense_config}


@pytest.mark.parametrize("op", [op for op in mock_llm.OPS if op in EDIT_DOES])   # 新加的种类：这里没有它的检查，不管它
def test_each_edit_kind_does_what_its_sentence_says(op):
    # 02、04 的表下面印着每种修改的一句说明（mock_llm.OP_SAID）：对一个六种修改都做得了的父程序各提 200 次，
    # 改出来的子程序和父程序的差别正是那句话说的
    pr = _edit_kind_prompt()
    llm = MockLLM(Dice(6))
    children = [llm._edit(op, pr)[0] for _ in range(200)]
    new = [c for c in children if c is not None and c != pr.parent]
    assert len(new) >= 100, f"{op}（{mock_llm.OP_SAID[op]}）：200 次里只有 {len(new)} 次改出了和父程序不同的子程序"
    wrong = [render(c) for c in new if not EDIT_DOES[op](pr, c)]
    assert not wrong, f"{op} 说的是“{mock_llm.OP_SAID[op]}”，改出的 {len(wrong)} 个子程序不是这样，例如：\n{wrong[0]}"
