"""05 脚本（消融）印出来的数，对着在测试进程里用 evolve 的公开接口独立重跑的五个变体检查：每个变体的中位数、最小、最大、
第 100 / 300 个提议时的分数、跑了几次内核，演示 2 的成功率，观察里的涨幅占比、相差的百分比和倍数。
变体在这里自己搭（MockLLM 的权重、feedback=False、probe_slack=inf），只有"不进化"的程序库用脚本里的那个类。"""

import math
import os
import re
import numpy as np
import pytest

from evolve import Evaluator, all_shapes, evolve, geomean_speedup, oracle_speedup, split_shapes
from evolve.evaluator import N_PROBE
from evolve.mock_llm import OP_WEIGHTS, Dice, MockLLM
from printed import find, find_table, number, observations, pct_shows, section, shows
from test_05_ablations import ab
from conftest import run_script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "lecture14", "05_ablations.py")
# (预算, 种子个数)：--quick 的预算，3 个种子（2 个种子的中位数就是平均数，分不出来）。默认设置的那次运行由
# test_05_ablations 检查每句都成立；数字的算法一样，这里只跑小的那组（整个测试要在一分钟内跑完）。
SETTINGS = {("--quick", "--seeds", "3"): (300, 3)}
LABELS = {"full": "完整系统", "small": "小模型", "no_evolution": "不进化", "no_feedback": "没有逐形状反馈",
          "no_cascade": "没有级联"}
CHECKPOINTS = (100, 300)


def variant(name, train, table, seed):
    """按 05 脚本开头的说明自己搭每个变体：(评估器, 传给 evolve 的额外参数)。"""
    if name == "no_cascade":
        return Evaluator(train, table, probe_slack=math.inf), {}
    if name == "small":
        weights = dict(OP_WEIGHTS, targeted=ab.SMALL_TARGETED)
        return Evaluator(train, table), dict(llm=MockLLM(Dice(seed), op_weights=weights))
    if name == "no_evolution":
        return Evaluator(train, table), dict(database=ab.StartOnlyDatabase)
    if name == "no_feedback":
        return Evaluator(train, table), dict(feedback=False)
    return Evaluator(train, table), {}


PREFETCH = [("lecture14/05_ablations.py", *a) for a in SETTINGS]              # conftest：收集完测试后在后台先跑


@pytest.fixture(scope="module", params=list(SETTINGS), ids=lambda a: " ".join(a) or "default")
def settings(request):
    budget, seeds = SETTINGS[request.param]
    p = run_script("lecture14/05_ablations.py", *request.param)
    assert p.returncode == 0, p.stderr
    first = p.stdout.split("\n", 1)[0]
    assert f"--budget {budget} " in first and f"--seeds {seeds}" in first, first
    return budget, seeds, p.stdout


@pytest.fixture(scope="module")
def results(table, settings):
    budget, seeds, _ = settings
    train, test = split_shapes(all_shapes())
    out = {}
    for name in LABELS:
        out[name] = []
        for seed in range(seeds):
            ev, extra = variant(name, train, table, seed)
            o = evolve(ev, budget, seed=seed, log=lambda *a: None, **extra)
            best, res = o["best"]
            out[name].append(dict(train=res["score"], test=geomean_speedup(best, test, table), history=o["history"],
                                  runs=ev.bench_runs, cached=ev.n_cached, probe=ev.n_eval_probe, tried=o["tried"],
                                  accepted=o["accepted"], static_reject=o["static_reject"]))
    return out


def med(results, name, key):
    return float(np.median([r[key] for r in results[name]]))


def test_demo1_table(settings, results, table):
    budget, seeds, stdout = settings
    _, test = split_shapes(all_shapes())
    o_test = oracle_speedup(test, table)
    text = section(stdout, "演示 1")
    assert shows(find(r"逐形状最优在测试形状上是 ([\d.]+)×", text)[1], o_test)
    t = find_table(text, "变体", "训练")
    c_tr, c_te, c_frac, c_runs = t.col("训练"), t.col("测试形状"), t.col("最优"), t.col("内核")
    shown = [c for c in CHECKPOINTS if c <= budget]
    cols = {c: t.col(f"第 {c} 个提议") for c in shown}
    assert not any(f"第 {c} 个提议" in h for c in CHECKPOINTS if c > budget for h in t.headers)
    assert len(t.rows) == len(LABELS)
    for name, label in LABELS.items():
        r, rs = t.row(label), results[name]
        trs = [x["train"] for x in rs]
        m, lo, hi = re.fullmatch(r"([\d.]+)× \(([\d.]+)–([\d.]+)\)", r[c_tr]).groups()
        assert shows(m, float(np.median(trs))) and shows(lo, min(trs)) and shows(hi, max(trs)), r
        assert shows(r[c_te], med(results, name, "test")), r
        assert pct_shows(r[c_frac], med(results, name, "test") / o_test), r
        for c, j in cols.items():
            assert shows(r[j], float(np.median([x["history"][c - 1] for x in rs]))), (c, r)
        assert shows(r[c_runs], med(results, name, "runs")), r


@pytest.mark.h100_claim
def test_demo1_observations(settings, results):
    """05 演示 1 的观察：每个部件的贡献照表里印的分数算得出。"""
    budget, seeds, stdout = settings
    obs = observations(section(stdout, "演示 1"))
    # 脚本先把分数取到印出来的三位小数，再算涨幅、比例、差（读者照着表算得出同样的数）：这里也一样。助教报过：
    # 用没取整的分数算，讲义的数据上碰巧对得上，换一块 GPU、加一个模型就差在最后一位
    score = {n: round(med(results, n, "train"), 3) for n in LABELS}
    gain = {n: score[n] - 1 for n in LABELS}
    full = score["full"]
    text = "\n".join(obs)
    assert len(obs) == 5
    m = find(r"小模型.*?([\d.]+)× 对 ([\d.]+)×", obs[0])
    assert shows(m[1], score["small"]) and shows(m[2], full)
    if gain["full"] > 0 and "涨幅只有完整系统的" in obs[0]:
        assert pct_shows(find(r"涨幅只有完整系统的 ([\d.]+%)", obs[0])[1], gain["small"] / gain["full"])
    assert shows(find(r"不进化[^0-9]*([\d.]+)×", obs[1])[1], score["no_evolution"])
    if "涨幅是完整系统的" in obs[1]:
        assert pct_shows(find(r"涨幅是完整系统的 ([\d.]+%)", obs[1])[1], gain["no_evolution"] / gain["full"])
        assert shows(find(r"缓存命中中位数 ([\d,.]+) 个", obs[1])[1], med(results, "no_evolution", "cached"))
        assert pct_shows(find(r"内核只跑了完整系统的 ([\d.]+%)", obs[1])[1],
                         med(results, "no_evolution", "runs") / med(results, "full", "runs"))
    for k, name in ((2, "no_feedback"), (3, "no_cascade")):
        m = find(r"([\d.]+)× 对 ([\d.]+)×，?（?相差 ([+-][\d.]+%)", obs[k])
        assert shows(m[1], score[name]) and shows(m[2], full) and pct_shows(m[3], score[name] / full - 1), obs[k]
    cost = med(results, "no_cascade", "runs") / med(results, "full", "runs")
    m = find(r"([\d,.]+) 次对 ([\d,.]+) 次", obs[3])
    assert shows(m[1], med(results, "no_cascade", "runs")) and shows(m[2], med(results, "full", "runs"))
    assert shows(find(r"([\d.]+) 倍", obs[3])[1], cost)
    if "被淘汰" in obs[3]:
        m = find(r"中位数 ([\d,.]+) 个程序只跑 (\d+) 个探针形状就被淘汰，省下的是它们本该跑的另外 (\d+) 个形状", obs[3])
        train, _ = split_shapes(all_shapes())
        assert shows(m[1], med(results, "full", "probe")) and int(m[2]) == N_PROBE
        assert int(m[3]) == len(train) - N_PROBE
        assert pct_shows(find(r"级联省下的内核运行（不用级联那次的 ([\d.]+%)）", obs[3])[1], 1 - 1 / cost)
    drops = {n: full - score[n] for n in ("small", "no_evolution", "no_feedback", "no_cascade")}
    if "按对最终分数的影响排" in obs[4]:
        m = find(r"不进化少 ([\d.]+) > 小模型（small LLM）少 ([\d.]+) ≫ 反馈和级联（([\d.]+) 以内）", obs[4])
        assert shows(m[1], drops["no_evolution"]) and shows(m[2], drops["small"])
        assert shows(m[3], max(abs(drops["no_feedback"]), abs(drops["no_cascade"])))
    else:
        measured = obs[4].split("各变体比完整系统少：")[-1]      # 量到的值那段（前面的判据里也有"不进化"：助教报过
        for n, label in LABELS.items():                            # 在 A100 上从判据里读到了小模型的 +0.102）
            if n != "full":
                assert shows(find(re.escape(label) + r"[^+-]*([+-][\d.]+)", measured)[1], drops[n])
    if not any("本次不成立" in o for o in obs):      # 每一句都成立时，上面带条件的检查一个都没跳过
        assert all(w in text for w in ("涨幅只有完整系统的", "涨幅是完整系统的", "被淘汰", "按对最终分数的影响排"))


def test_demo2_op_table_and_observation(settings, results):
    budget, seeds, stdout = settings
    text = section(stdout, "演示 2")
    t = find_table(text, "修改的种类", "提出")
    c_tried, c_acc, c_rej, c_rate = t.col("提出"), t.col("比父程序好"), t.col("被拒"), t.col("成功率")
    total = lambda name, key, op: sum(r[key].get(op, 0) for r in results[name])      # noqa: E731
    for r in t.rows:
        label, op = r[0].split("：")
        [name] = [n for n, lab in LABELS.items() if label.startswith(lab)]
        tried, acc = total(name, "tried", op), total(name, "accepted", op)
        assert number(r[c_tried]) == tried and number(r[c_acc]) == acc, r
        assert number(r[c_rej]) == total(name, "static_reject", op), r
        assert pct_shows(r[c_rate], acc / max(1, tried)), r
    assert {r[0] for r in t.rows} >= {"完整系统：targeted", "完整系统：single_field"}
    [obs] = observations(text)
    for op, words in (("targeted", "targeted 的成功率"), ("single_field", "single_field 只有")):
        m = find(words + r" ([\d,]+)/([\d,]+)（([\d.]+%)）", obs)
        acc, tried = total("full", "accepted", op), total("full", "tried", op)
        assert (number(m[1]), number(m[2])) == (acc, tried) and pct_shows(m[3], acc / tried), m[0]
    m = find(r"：([\d.]+%) 的 single_field 提议第一次改出启动不了的配置", obs)
    assert pct_shows(m[1], total("full", "static_reject", "single_field") / total("full", "tried", "single_field"))


NO_EVOLUTION = [("lecture14/05_ablations.py",), ("lecture14/05_ablations.py", "--quick", "--gpu", "a100")]
PREFETCH += NO_EVOLUTION                                  # 下面的测试（--quick --gpu a100 约 0.5 CPU 秒）


@pytest.mark.parametrize("args", NO_EVOLUTION)
def test_no_evolution_says_it_stopped_growing_only_as_much_as_it_did(args):
    # 助教报过：A100 上"第 100 个提议时已经是 1.088×（最终涨幅的 100%），之后涨得很少"，表里却是一点没涨
    from conftest import run_script
    p = run_script(*args)
    obs = "".join(observations(section(p.stdout, "演示 1"))[1].split())
    if "本次不成立" in obs:
        return
    m = re.search(r"不进化掉得最多（([\d.]+)×.*?已经是([\d.]+)×.*?之后(一点没涨|涨得很少)", obs)
    assert m, obs
    assert (m[3] == "一点没涨") == (m[1] == m[2]), obs


def test_a_median_count_of_an_even_number_of_seeds_keeps_its_half():
    # 助教报过：05 --quick（2 个种子）说"中位数 62 个程序只跑 6 个探针形状就被淘汰"，03 --quick 的表里同样的进化
    # （6 个探针按 M 均匀取、同样的种子和预算）印成 61.5。两边用同一个 console.median_count，印出来一样
    from conftest import run_script
    from console import median_count
    from printed import find_table
    assert (median_count(61.5), median_count(62.0), median_count(26641.5)) == ("61.5", "62", "26,641.5")
    p05 = run_script("lecture14/05_ablations.py", "--quick")
    p03 = run_script("lecture14/03_cascade_and_database.py", "--quick")
    said = find(r"中位数 ([\d,.]+) 个程序只跑", observations(section(p05.stdout, "演示 1"))[3])   # 助教报过：这句不成立时
    #                                                 （L40S）是一个没说原因的失败；find 说"讲义的一句话不成立"
    t = find_table(section(p03.stdout, "演示 1"), "探针淘汰")
    assert said and said[1] == t.row("6 个，按 M 均匀取")[t.col("探针淘汰")], (said, t.rows)


TINY = ("--budget", "7", "--small-targeted", "0.05", "--seeds", "1")
PREFETCH.append(("lecture14/05_ablations.py", *TINY))


def test_one_program_and_one_point_are_said_in_the_singular():
    # 审读报过（--budget 7 --small-targeted 0.05 --seeds 1）：被探针淘汰的只有 1 个程序，观察 4 说"省下的是它们本该跑的"、
    # "另外 0 个提议本来就不跑内核"；图下的说明写"在横轴 6–6"
    p = run_script("lecture14/05_ablations.py", *TINY)
    assert p.returncode == 0, p.stderr
    flat = "".join(p.stdout.split())
    assert not re.search(r"在横轴(\d+)–\1和", flat), flat
    n = float(re.search(r"完整系统里(?:中位数)?([\d.]+)个程序只跑", flat).group(1))
    assert ("省下的是它本该跑的" in flat) == (n == 1) and ("省下的只来自这个程序" in flat) == (n == 1), flat
    assert "另外0个提议" not in flat


def test_demo2_a_kind_never_proposed_has_no_success_rate_not_zero_percent():
    """审读报过：--budget 1 --seeds 1 时完整系统只提了一个 targeted，single_field 一次没提，演示 2 的表里它的成功率
    印成 0%——0 ÷ 0 不是 0%。现在提出 0 次的那一行成功率一格写"没提过"，提过的照样是百分数。"""
    p = run_script(SCRIPT, "--budget", "1", "--seeds", "1", "--jobs", "1", timeout=120)
    assert p.returncode == 0, p.stderr
    t = find_table(section(p.stdout, "演示 2"), "修改的种类", "成功率")
    rate = t.col("成功率")
    assert any(number(r[t.col("提出")]) == 0 for r in t.rows), "测试的前提变了：--budget 1 时每种修改都提过了"
    for r in t.rows:
        if number(r[t.col("提出")]) == 0:
            assert r[rate].strip() == "没提过", r
        else:
            assert r[rate].strip().endswith("%") and pct_shows(r[rate], number(r[t.col("比父程序好")]) / number(r[t.col("提出")])), r
