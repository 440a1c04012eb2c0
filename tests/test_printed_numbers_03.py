"""03 脚本（默认运行：预算 1000、2 个种子）印出来的数，对着在测试进程里独立重跑的进化检查（tests/reruns.py）：
探针用 evolve 的评估器自己搭，被探针淘汰的子程序自己用时间表的整行算完整分数、数错杀；当过父程序的程序、最长不动、
活着的程序、测试分数都自己算；演示 3 自己记下每个提议是第几个、说了什么，从最好的程序顺着父程序走回起点。
重跑全部 20 次进化太贵（一分钟的测试预算），只重跑每一列都用到的两行（不用级联、6 个按 M 均匀取——后者也是演示 2
岛屿模型那一行和演示 3 的那一次）；每一行都核对读者能核对的：2 个种子的中位数是最小和最大的平均。
句子里的百分比（省了多少、最大的一步占多少）按读者的算法从印出来的数核对。测试里不抄任何印出来的数。"""

import itertools
import math
import re

import numpy as np
import pytest

from conftest import load_script, run_script
from evolve import EXPERT, parse, render, simplify
from printed import find, find_table, find_wide_table, number, numbers, observations, pct_shows, section, shows
from reruns import log_speedup, watched

SCRIPT = "lecture14/03_cascade_and_database.py"
PREFETCH = [(SCRIPT,)]                      # conftest：后台先跑（test_lecture14_scripts、test_03_sentences 也用这次运行）
BUDGET, SEEDS = 1000, 2
s03 = load_script(SCRIPT, "cascade_03_numbers")          # 只拿实验的定义：挑父程序的几个程序库类、探针的个数


@pytest.fixture(scope="module")
def stdout():
    p = run_script(SCRIPT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"设置：--budget {BUDGET} --seeds {SEEDS}"), p.stdout[:80]
    return p.stdout


# 重跑哪几行：省 CPU（一次 1000 个提议的进化在 2 核上要一秒多），只重跑每一列、每一句都至少用到一次的几行——
# 不用级联、6 个按 M 均匀取（它也是演示 2 岛屿模型那一行和演示 3 的那一次，种子 0 那次 02、06 的测试也用）；
# 其余的行核对读者能核对的：两个种子的中位数是最小和最大的平均、句子里的数就是表里的格子。
RERUN = [(0, "spread"), (s03.N_PROBE, "spread")]


@pytest.fixture(scope="module")
def runs(table):
    out = {}
    for n, how in RERUN:
        out["cascade", (n, how)] = []
        for seed in range(SEEDS):
            w = watched(table, seed, BUDGET, n, how)
            o, ev, best = w["out"], w["ev"], w["out"]["best"][0]
            out["cascade", (n, how)].append(dict(
                score=o["best"][1]["score"], runs=ev.bench_runs, rejected=ev.rejected, false=ev.false, missed=ev.missed,
                parents=len(w["watch"].parents), alive=len(set(o["population"])), flat=longest_flat(o["improvements"][0][1], o["history"]),
                test=math.exp(log_speedup(table, best, w["test"])), best=best, ev=ev, watch=w["watch"]))
    out["db", "islands"] = out["cascade", (s03.N_PROBE, "spread")]      # 脚本说：岛屿模型那一行就是这一次
    return out


def longest_flat(start, history) -> int:
    """最长接连几个提议没刷新最好分数：起点接上每个提议之后的最好分数，一段相等的值里除了第一个都是"没变"。"""
    return max(len(list(g)) - 1 for _, g in itertools.groupby([start] + history.tolist()))


def med(rs, key):
    return float(np.median([r[key] for r in rs]))


def check_spread(cell, values):
    """"1.242× (1.240×–1.244×)"：中位数、最小、最大；读者：两个种子的中位数是两头的平均。"""
    m, lo, hi = numbers(cell)
    assert lo <= m <= hi, cell
    if SEEDS == 2:
        assert abs(m - (lo + hi) / 2) <= 0.0015, cell
    if values is None:
        return
    assert shows(str(m), float(np.median(values))) or shows(f"{m:.3f}", float(np.median(values))), (cell, values)
    assert shows(f"{lo:.3f}", min(values)) and shows(f"{hi:.3f}", max(values)), (cell, values)


def same_count(cell, value):
    """计数的中位数：整数照印，x.5 印一位小数。"""
    return number(cell) == value


def label_of(n, how):
    return "不用级联（0 个）" if n == 0 else f"{n} 个，{'按 M 均匀取' if how == 'spread' else '随机取'}"


def test_demo1_table(stdout, runs):
    t = find_table(section(stdout, "演示 1"), "探针", "其中错杀")
    c_s, c_r, c_rej, c_f, c_m = (t.col("最后的分数"), t.col("跑了几次内核"), t.col("探针淘汰"), t.col("其中错杀"),
                                 t.col("最好的"))
    keys = [(n, how) for n in s03.PROBES for how in (("spread",) if n == 0 else ("spread", "random"))]
    assert [r[0] for r in t.rows] == [label_of(*k) for k in keys]
    for r in t.rows:                                          # 读者：两个种子的中位数是两头的平均
        check_spread(r[c_s], None)
    for key in RERUN:
        rs = runs["cascade", key]
        r = t.row(label_of(*key))
        check_spread(r[c_s], [x["score"] for x in rs])
        for col, k in ((c_r, "runs"), (c_rej, "rejected"), (c_f, "false")):
            assert same_count(r[col], med(rs, k)), (r, k, [x[k] for x in rs])
        hit = [x for x in rs if x["false"] > 0]
        if hit:
            assert shows(r[c_m], med(hit, "missed")), r
        else:
            assert r[c_m] == "", r
    assert f"{SEEDS} 个种子，每次 {BUDGET} 个提议" in stdout


@pytest.mark.h100_claim                 # 讲义在 H100 上印的那句话（换了 GPU 它可能标着【本次不成立】）
def test_demo1_savings_as_a_reader_computes_them(stdout):
    """03 演示 1：级联省下的内核比例和分数差，读者照表算得出同样的数。"""
    text = section(stdout, "演示 1")
    t = find_table(text, "探针", "其中错杀")
    c_r = t.col("跑了几次内核")
    runs0, runs6 = number(t.row("不用级联")[c_r]), number(t.row(f"{s03.N_PROBE} 个，按 M 均匀取")[c_r])
    obs = observations(text)[0]
    m = find(r"(\d+) 个探针时跑了 ([\d,.]+) 次，不用级联 ([\d,.]+) 次（省 ([\d.]+%)）", obs)
    assert int(m[1]) == s03.N_PROBE and (number(m[2]), number(m[3])) == (runs6, runs0)
    assert pct_shows(m[4], 1 - runs6 / runs0)                               # 省的是少跑的那部分，不是留下的


def test_demo2_table(stdout, runs):
    t = find_wide_table(section(stdout, "演示 2"), "挑父程序", "当过父程序")
    c_tr, c_te, c_p, c_a, c_f = (t.col("训练形状"), t.col("测试形状"), t.col("当过父程序"), t.col("最后活着"),
                                 t.col("不动"))
    assert len(t.rows) == len(s03.POLICIES)
    for r in t.rows:
        check_spread(r[c_tr], None) or check_spread(r[c_te], None)
    for r, policy in zip(t.rows, s03.POLICIES):
        if ("db", policy) not in runs:
            continue
        rs = runs["db", policy]
        check_spread(r[c_tr], [x["score"] for x in rs])
        check_spread(r[c_te], [x["test"] for x in rs])
        for col, k in ((c_p, "parents"), (c_a, "alive"), (c_f, "flat")):
            assert same_count(r[col], med(rs, k)), (r, k, [x[k] for x in rs])


def test_demo2_observations_quote_the_table(stdout):
    text = section(stdout, "演示 2")
    t = find_wide_table(text, "挑父程序", "当过父程序")
    c_tr, c_p, c_f = t.col("训练形状"), t.col("当过父程序"), t.col("不动")
    row = {p: r for p, r in zip(s03.POLICIES, t.rows)}
    obs = observations(text)
    med_of = lambda p: numbers(row[p][c_tr])[0]                              # noqa: E731
    m = find(r"训练形状上的中位数，岛屿模型 ([\d.]+)×", obs[0])
    assert float(m[1]) == med_of("islands")
    flat = re.sub(r"\s", "", obs[0])
    clauses = flat.split("×：", 1)[1].split("（相差不到")[0].split("；")        # "均匀挑（1.250×）、锦标赛（…）和岛屿模型打平"
    for p in ("best", "uniform", "tournament"):
        got = float(find(re.escape(s03.SHORT[p]) + r"（([\d.]+)×）", obs[0])[1])
        assert got == med_of(p)
        r = got / med_of("islands") - 1                                     # 读者：打平、更好、更差
        word = "和岛屿模型打平" if abs(r) <= s03.TIE else "比岛屿模型更好" if r > 0 else "比岛屿模型更差"
        [clause] = [c for c in clauses if s03.SHORT[p].replace(" ", "") + "（" in c]
        assert clause.endswith(word), (p, clause)
    m = find(r"只有 ([\d.]+) 个不同的程序当过父程序（其余三种 ([\d.]+) 个以上），最好分数最长 ([\d.]+) 个提议不动"
             r"（岛屿模型 ([\d.]+) 个）", obs[1])
    assert number(m[1]) == number(row["best"][c_p])
    assert number(m[2]) == min(number(row[p][c_p]) for p in ("uniform", "tournament", "islands"))
    assert (number(m[3]), number(m[4])) == (number(row["best"][c_f]), number(row["islands"][c_f]))


@pytest.fixture(scope="module")
def chain(runs):
    """种子 0、默认探针那一次：从最好的程序顺着父程序走回起点，[(第几个提议, 修改种类, 说明, 分数)]。"""
    r = runs["cascade", (s03.N_PROBE, "spread")][0]
    ev, watch = r["ev"], r["watch"]
    out, p = [], r["best"]
    while ev.cache[p].get("parent") is not None:
        k = ev.first_k[p]
        out.append((k, *watch.said[k], ev.cache[p]["score"]))
        p = ev.cache[p]["parent"]
    assert p == EXPERT
    return [(0, "起点", "专家启发式", ev.cache[p]["score"])] + out[::-1], r["best"]


def test_demo3_lineage_table(stdout, chain):
    steps, best = chain
    text = section(stdout, "演示 3")
    t = find_wide_table(text, "第几步", "第几个提议")
    c_k, c_op, c_why, c_s = t.col("第几个提议"), t.col("修改种类"), t.col("说了什么"), t.col("分数")
    assert len(t.rows) == len(steps)
    for i, (r, (k, op, why, score)) in enumerate(zip(t.rows, steps)):
        assert int(r[0]) == i and int(r[c_k]) == k and r[c_op] == op and r[c_why] == f"“{why}”", (r, k, op, why)
        assert shows(r[c_s], score), r
    after = text.split("最后的程序（删掉死规则后）：\n", 1)[1].split("\n\n", 1)[0] + "\n"
    assert after == render(simplify(best)) and parse(after) == simplify(best)


def test_demo3_observation(stdout, chain):
    steps, _ = chain
    text = section(stdout, "演示 3")
    obs = observations(text)[0]
    m = find(r"最好的程序是 (\d+) 次修改叠出来的（用到的种类：(.*?)），最大的一步只占总涨幅的 ([\d.]+%)", obs)
    assert int(m[1]) == len(steps) - 1
    assert m[2].replace(" ", "").split("、") == sorted({op for _, op, _, _ in steps[1:]})
    # 读者：从表里印的三位小数算出的正是句子里的数（审读时报过：03 --quick 的表算出 32%，句子按没印出来的位说 33%）
    t = find_wide_table(text, "第几步", "第几个提议")
    s = [number(r[t.col("分数")]) for r in t.rows]
    assert s == [round(x[3], 3) for x in steps]
    assert pct_shows(m[3], max(math.log(b / a) for a, b in zip(s, s[1:])) / math.log(s[-1] / s[0]))


ONE_SEED = ("--budget", "500", "--seeds", "1")
PREFETCH.append((SCRIPT, *ONE_SEED))                      # 下面两个测试（约 0.8 CPU 秒）


def test_with_one_seed_the_sentences_do_not_call_a_number_a_median(stdout):
    """学生报过：03 --budget 500 --seeds 1 的观察 1、3 说"另外 224 个……（中位数）""随机取 14 个（中位数）"——一个种子
    没有中位数可言（表下面的说明也这样说）。现在只有一个种子时不说"（中位数）"；几个种子时照说。"""
    one = run_script(SCRIPT, *ONE_SEED, timeout=120)
    assert one.returncode == 0, one.stderr
    obs = "\n".join(observations(section(one.stdout, "演示 1")))
    assert "（中位数）" not in "".join(obs.split()), obs
    find(r"不比父程序好——探针", obs)                             # 这一句印成了成立的样子（不成立时跳过、说是哪句）
    demo2 = "".join("".join(observations(section(one.stdout, "演示 2"))).split())   # 演示 2 也不说中位数、最差的种子
    assert "中位数" not in demo2 and "最差的种子" not in demo2 and "只有一个种子" in demo2, demo2
    find(r"不比父程序好（中位数）——探针", "\n".join(observations(section(stdout, "演示 1"))))   # 默认运行：几个种子


@pytest.mark.parametrize("args", [(), ONE_SEED])
def test_a_half_in_a_count_is_explained_under_the_table(args):
    # 学生报过："跑了 30,436.5 次内核"读着怪（两个种子的中位数）。表里有 .5 时表下面说它从哪里来，没有就不说
    out = run_script("lecture14/03_cascade_and_database.py", *args).stdout
    for demo, column, said in (("演示 1", "跑了几次内核", "所以次数、个数会带.5"), ("演示 2", "当过父程序的不同程序", "所以会带.5")):
        text = section(out, demo)
        t = find_table(text, column)
        halves = any(c.endswith(".5") for r in t.rows for c in r)
        assert halves == (said in "".join(text.split())), (demo, text[:3000])
        assert halves or args                              # 默认的 2 个种子确实有 .5（这个测试真的看到了那句话）
