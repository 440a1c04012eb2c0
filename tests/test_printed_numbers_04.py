"""04 脚本印出来的数，对着用 evolve 的公开接口独立算出来的值检查（默认设置和 --quick）。
脚本当子进程跑，解析它的标准输出：表格按表头的词和行首的标签找，观察拼回整句后按句子里的词找；测试里不抄任何印出来的数。
抓的是这样的 bug：印一个写死的倍数、百分比用错了分母、演示 3 把训练分数记成测试分数、成本表的某一行数错了。"""

import os
import re
import numpy as np
import pytest

from evolve import (EXPERT, LAYERS, TOKENS, VALID, Shape, all_shapes, best_single_config, choose,
                    geomean_speedup, oracle_speedup, per_m_table, simplify, split_shapes)
from evolve.evaluator import N_PROBE
from printed import find, find_table, number, numbers, observations, pct_shows, section, shows
from sched_lab import HBM_BW, SMS, guided_tune
from conftest import run_script
from reruns import demo3, watched

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
EARLY = 300
SETTINGS = {(): (0, 1000, 5),                        # 默认设置（讲义印出来的那组）
            ("--quick",): (0, 300, 2)}               # 只有 2 个种子：演示 3 的中位数、最小、最大每一次运行都算数


PREFETCH = [("lecture14/04_alphaevolve_tiling.py", *a) for a in SETTINGS]    # conftest：收集完测试后在后台先跑


@pytest.fixture(scope="module", params=list(SETTINGS), ids=lambda a: " ".join(a) or "default")
def settings(request):
    """(种子, 预算, 种子个数, 标准输出, 标准错误)：脚本第一行回显的设置要和参数一致。"""
    seed, budget, seeds = SETTINGS[request.param]
    p = run_script("lecture14/04_alphaevolve_tiling.py", *request.param)     # 别的测试文件也共用这次运行
    assert p.returncode == 0, p.stderr
    first = p.stdout.split("\n", 1)[0]
    assert f"--seed {seed} " in first and f"--budget {budget} " in first and f"--seeds {seeds}" in first, first
    return seed, budget, seeds, p.stdout, p.stderr


@pytest.fixture(scope="module")
def stdout(settings):
    return settings[3]


@pytest.fixture(scope="module")
def run(table, settings):
    """演示 2 的那次进化，在测试进程里重跑：默认划分、同样的种子和预算（tests/reruns.py：只在旁边数数、不改路线的
    那次；默认设置的种子 0、1000 个提议和 02、03、06 的测试共用一次）。"""
    seed, budget = settings[:2]
    w = watched(table, seed, budget)
    return w["out"], w["ev"], w["train"], w["test"]


def S(name, M):
    return Shape(name, M, *LAYERS[name])


def ratio(table, s):
    return table.time(choose(EXPERT, s), s) / table.oracle(s)[1]


# ---------------------------------------------------------------- 演示 1

def test_demo1_shape_table(stdout, table):
    # 每一行：最优配置、最优时间、TFLOPS、专家比最优慢几倍，都按那一行印的形状重算
    t = find_table(section(stdout, "演示 1"), "形状", "最优配置")
    assert len(t.rows) >= 5
    c_cfg, c_t, c_fl, c_r = t.col("最优配置"), t.col("最优时间"), t.col("TFLOPS"), t.col("专家")
    for r in t.rows:
        name, M = re.fullmatch(r"(.+) M=(\d+)", r[0]).groups()
        s = S(name, int(M))
        best, tb = table.oracle(s)
        assert tuple(int(x) for x in numbers(r[c_cfg])) == best.as_tuple(), r
        assert shows(r[c_t], tb * 1e6) and "µs" in r[c_t], r
        assert shows(r[c_fl], s.flops / tb / 1e12), r
        assert shows(r[c_r], ratio(table, s)), r


def test_demo1_counts(stdout, train):
    text = section(stdout, "演示 1")
    m = find(r"共 (\d+) × (\d+) = (\d+) 个形状", text)
    assert [int(x) for x in m.groups()] == [len(LAYERS), len(TOKENS), len(all_shapes())]
    _, test = split_shapes(all_shapes())
    m = find(r"配对随机对半分[（：]训练 (\d+) 个，测试 (\d+) 个", text)
    assert [int(x) for x in m.groups()] == [len(train), len(test)]


def test_demo1_baselines(stdout, table, train):
    _, test = split_shapes(all_shapes())
    t = find_table(section(stdout, "演示 1"), "方法", "训练")
    c_tr, c_te, c_frac, c_cost = t.col("训练"), t.col("测试", "比专家"), t.col("最优"), t.col("内核")
    o_test = oracle_speedup(test, table)
    one, pmt = best_single_config(train, table), per_m_table(train, table)
    exhaustive = len(VALID) * len({(s.M, s.N, s.K) for s in train})
    for label, prog in (("专家", EXPERT), ("一个配置", one), ("按 M 查表", pmt)):
        r = t.row(label)
        assert shows(r[c_tr], geomean_speedup(prog, train, table)), r
        assert shows(r[c_te], geomean_speedup(prog, test, table)), r
        assert pct_shows(r[c_frac], geomean_speedup(prog, test, table) / o_test), r
        if label != "专家":
            assert number(r[c_cost]) == exhaustive, r
    assert tuple(int(x) for x in numbers(t.row("一个配置")[0])) == one.default.as_tuple()
    assert int(find(r"（(\d+) 条规则）", t.row("按 M 查表")[0])[1]) == pmt.n_rules()
    r = t.row("逐形状最优")
    assert shows(r[c_tr], oracle_speedup(train, table)) and shows(r[c_te], o_test), r
    assert number(r[c_cost]) == len(VALID)


@pytest.mark.h100_claim
def test_demo1_observations(stdout, table, train):
    """04 演示 1 的观察里的数（decode、prefill、最差的形状、表占最优的比例）和这次的时间表一致。"""
    _, test = split_shapes(all_shapes())
    text = "\n".join(observations(section(stdout, "演示 1")))
    dec = S("8B gate_up", 1)
    t1 = table.oracle(dec)[1]
    m = find(r"把 ([\d.]+%) 的显存峰值带宽用来读 (\d+) MB", text)
    assert pct_shows(m[1], dec.N * dec.K * 2 / t1 / HBM_BW) and shows(m[2], dec.N * dec.K * 2 / 1e6)
    decs = (dec, S("8B gate_up", 16))
    near = [int((table.times(s) <= table.oracle(s)[1] * 1.01).sum()) for s in decs]           # 1% 以内（判据）
    near_table = [int((table.times(s) <= table.oracle(s)[1] * 1.001).sum()) for s in decs]    # 0.1% 以内（表里那列）
    m = find(r"差 0.1% 以内的配置\"M = 1 时有 ([\d,]+) 个、M = 16 时有 ([\d,]+) 个", text)
    assert [number(m[1]), number(m[2])] == near_table
    if near == near_table:
        assert find(r"放宽到差 1% 以内（[^）]*）也还是这么多", text)
    else:
        m = find(r"放宽到差 1% 以内（[^）]*），M = 1 时有 ([\d,]+) 个、M = 16 时有 ([\d,]+) 个", text)
        assert [number(m[1]), number(m[2])] == near
    # 学生报过：换了专家（M = 1 用 128×256），这句还说"专家的小块配置就在其中"。现在说出专家在这里选的块
    m = find(r"专家在这里选的 ([\d×、]+) 就在其中", "".join(text.split()))
    assert m[1].split("、") == list(dict.fromkeys(f"{choose(EXPERT, s).BM}×{choose(EXPERT, s).BN}" for s in decs))
    pre = S("8B gate_up", 8192)
    m = find(r"prefill（M = 8192）最优是 \(([\d, ]+)\)：(\d+)×(\d+) 的大块、(\d+) 个 warp、(\d+) 级流水线", text)
    b = table.oracle(pre)[0]
    assert tuple(int(x) for x in numbers(m[1])) == b.as_tuple()
    assert [int(x) for x in m.groups()[1:]] == [b.BM, b.BN, b.warps, b.stages]
    m = find(r"专家的 \(([\d, ]+)\) 慢 ([\d.]+)×", text)
    assert tuple(int(x) for x in numbers(m[1])) == choose(EXPERT, pre).as_tuple() and shows(m[2], ratio(table, pre))
    worst = max(all_shapes(), key=lambda s: ratio(table, s))
    m = find(r"最差的是 (.+? M=\d+)（([\d.]+)×）", text)
    assert m[1].replace(" ", "") == worst.label().replace(" ", "") and shows(m[2], ratio(table, worst))
    mid = S("70B/8 qkv", 128)
    cfg = choose(EXPERT, mid)
    m = find(r"只有 (\d+) 个 CTA，(\d+) 个 SM 大多闲着，慢 ([\d.]+)×", text)
    assert int(m[1]) == -(-mid.M // cfg.BM) * -(-mid.N // cfg.BN) and int(m[2]) == SMS and shows(m[3], ratio(table, mid))
    o_test = oracle_speedup(test, table)
    m = find(r"逐形状最优在测试形状上比专家快 ([\d.]+)×", text)
    assert shows(m[1], o_test)
    p_pmt = geomean_speedup(per_m_table(train, table), test, table)
    p_one = geomean_speedup(best_single_config(train, table), test, table)
    assert pct_shows(find(r"拿到上限的 ([\d.]+%)", text)[1], p_pmt / o_test)
    assert pct_shows(find(r"一个配置通吃只有 ([\d.]+%)", text)[1], p_one / o_test)


# ---------------------------------------------------------------- 演示 2

def test_demo2_progress_and_improvements(stdout, settings, run):
    out = run[0]
    text = section(stdout, "演示 2")
    progress = re.findall(r"演示 2：第\s+([\d,]+) 个提议：最好 ([\d.]+)×", settings[4])      # 进度在标准错误上
    assert len(progress) >= 2
    for k, best in progress:
        assert shows(best, out["history"][int(k.replace(",", "")) - 1]), (k, best)
    t = find_table(text, "第几个提议", "最好分数")
    printed = [r for r in t.rows if r[0] != "…"]
    imp = out["improvements"]
    expected = imp if len(imp) == len(printed) else imp[:8] + imp[-4:]
    assert len(printed) == len(expected)
    for r, (k, score, op) in zip(printed, expected):
        assert r[0] == f"{k:,}" and shows(r[1], score) and r[2] == op, (r, k, score, op)   # 千位加逗号（学生报过 1235、1818）


def test_demo2_new_bests_print_as_increasing_numbers(stdout):
    """学生报过：04 --seed 3 的"最好分数被刷新的时刻"连着三行都是 1.218×——三次"新的最好"看起来一样。
    只差一点的两次刷新要多印几位小数。种子 3 是那次报的例子（第 560、677、737 个提议只差万分之一）。"""
    seed3 = run_script("lecture14/04_alphaevolve_tiling.py", "--seed", "3", "--seeds", "1")
    assert seed3.returncode == 0, seed3.stderr
    for text in (stdout, seed3.stdout):
        t = find_table(section(text, "演示 2"), "第几个提议", "最好分数")
        scores = [number(r[1]) for r in t.rows if r[0] != "…"]
        assert len(scores) >= 2 and all(a < b for a, b in zip(scores, scores[1:])), scores


def test_demo2_op_table(stdout, run):
    out = run[0]
    t = find_table(section(stdout, "演示 2"), "修改的种类", "提出")
    c_tried, c_acc, c_rej, c_rate = t.col("提出"), t.col("比父程序好"), t.col("被拒"), t.col("成功率")
    assert sorted(r[0] for r in t.rows) == sorted(out["tried"])
    for r in t.rows:
        op = r[0]
        tried, acc = out["tried"][op], out["accepted"].get(op, 0)
        assert number(r[c_tried]) == tried and number(r[c_acc]) == acc, r
        assert number(r[c_rej]) == out["static_reject"].get(op, 0), r
        assert pct_shows(r[c_rate], acc / tried), r
    assert sum(number(r[c_tried]) for r in t.rows) == out["budget"]


def test_demo2_best_program_and_observations(stdout, run, table):
    out, ev, train, test = run
    best, res = out["best"]
    text = section(stdout, "演示 2")
    m = find(r"最好的程序：训练形状 ([\d.]+)×，测试形状 ([\d.]+)×；(\d+) 条规则", text)
    assert shows(m[1], res["score"]) and shows(m[2], geomean_speedup(best, test, table))
    assert int(m[3]) == best.n_rules()
    if simplify(best) != best:
        assert int(find(r"删掉死规则（[^）]*）以后是 ?(\d+) ?条", text.replace("\n", ""))[1]) == simplify(best).n_rules()
    obs = "\n".join(observations(text))
    hist, o_train = out["history"], oracle_speedup(train, table)
    if out["budget"] > EARLY:
        m = find(rf"第 {EARLY} 个提议时已经是 ([\d.]+)×，拿到最终涨幅的 ([\d.]+%)", obs)
        assert shows(m[1], hist[EARLY - 1])                       # 那时的分数印在句子里（学生报过：哪里都没印）
        rest = find(r"之后的 ([\d,]+) 个提议只从 ([\d.]+)× 涨到 ([\d.]+)×", obs)
        assert number(rest[1]) == out["budget"] - EARLY and rest[2] == m[1]
        final = number(rest[3])
        assert pct_shows(m[2], (number(m[1]) - 1) / (final - 1))  # 读者照印出来的两个分数算得出这个比例
        m = find(r"涨到 ([\d.]+)×；最终训练形状上是上限 ([\d.]+)× 的 ([\d.]+%)", obs)
    else:
        assert int(find(r"预算只有 (\d+) 个提议", obs)[1]) == out["budget"]
        m = find(r"训练形状上 ([\d.]+)×，上限 ([\d.]+)×，是上限的 ([\d.]+%)", obs)
    assert shows(m[1], res["score"]) and shows(m[2], o_train)
    assert pct_shows(m[3], number(m[1]) / number(m[2]))          # 比例按印出来的两个数算（读者照着算得出）
    for op, words in (("targeted", "targeted 成功率"), ("single_field", "single_field 只有")):
        m = find(words + r" ([\d,]+)/([\d,]+)（([\d.]+%)）", obs)
        acc, tried = out["accepted"].get(op, 0), out["tried"][op]
        assert (number(m[1]), number(m[2])) == (acc, tried) and pct_shows(m[3], acc / tried), m[0]
    m = find(r"single_field 第一次改出、又启动不了的子程序有 ([\d,]+) 个（它提了 ([\d,]+) 次，([\d.]+%)），"
             r"其中 ([\d,]+) 个就是每线程的寄存器超了", obs)        # 计数千位加逗号（学生报过 "235 个（它提了 1209 次"）
    assert number(m[1]) == out["static_reject"]["single_field"] and number(m[2]) == out["tried"]["single_field"]
    assert pct_shows(m[3], number(m[1]) / number(m[2]))
    assert number(m[4]) == out["static_kinds"]["single_field"]["寄存器/线程"]
    assert not re.search(r"(?<![\d,.])\d{4,}(?![\d,.])", m[0])
    population = set(out["population"])
    evaluated = [p for p, r in ev.cache.items() if r["status"] == "full"]
    dead = lambda programs: sum(simplify(p).n_rules() < p.n_rules() for p in programs)    # noqa: E731
    m = find(r"完整评估过的 ?([\d,]+) ?个不同的程序（[^）]*）里有 ([\d,]+) 个带死规则，程序库最后留下的 (\d+) 个里"
             r"(?:有 (\d+) 个|一个也没有|(全都带))", obs)   # 学生报过"27 个里有 0 个"、"29 个里有 29 个"
    n_dead = len(population) if m[5] else int(m[4] or 0)
    assert [number(m[1]), number(m[2]), int(m[3]), n_dead] == [len(evaluated), dead(evaluated), len(population),
                                                               dead(population)]
    assert ("一个也没有" in m[0]) == (dead(population) == 0)
    assert bool(m[5]) == (dead(population) == len(population) > 1)
    if simplify(best).n_rules() < best.n_rules():
        m = find(r"最好的程序从 (\d+) 条删到 (\d+) 条", obs)
        assert [int(m[1]), int(m[2])] == [best.n_rules(), simplify(best).n_rules()]
    else:
        assert int(find(r"最好的程序本身没有死规则，(\d+) 条都走得到", obs)[1]) == best.n_rules()


# ---------------------------------------------------------------- 演示 3

@pytest.fixture(scope="module")
def runs(table, settings):
    """演示 3：两种划分 × 种子 0 .. seeds-1，每次的 (训练分数, 测试分数)（tests/reruns.py 的 demo3：默认设置那次和
    test_claims 共用）。"""
    budget, seeds = settings[1:3]
    out = {}
    for how, done in demo3(table, budget, seeds).items():
        test = split_shapes(all_shapes(), how)[1]
        out[how] = [(res["score"], geomean_speedup(best, test, table)) for _, best, res in done]
    return out


def test_demo3_table(stdout, table, runs):
    text = section(stdout, "演示 3")
    t = find_table(text, "划分", "方法")
    c_tr, c_te, c_frac = t.col("训练"), t.col("测试形状"), t.col("最优")
    groups = t.groups()
    assert len(groups) == 2
    for (label, rows), how in zip(groups.items(), ("random", "by_model")):
        train, test = split_shapes(all_shapes(), how)
        assert ("8B" in label and "70B" in label) == (how == "by_model"), label
        trs, tes = [r[0] for r in runs[how]], [r[1] for r in runs[how]]
        o_tr, o_te = oracle_speedup(train, table), oracle_speedup(test, table)
        [evo] = [r for k, r in rows.items() if "进化" in k]
        for cell, scores in ((evo[c_tr], trs), (evo[c_te], tes)):
            med, lo, hi = re.fullmatch(r"([\d.]+)× \(([\d.]+)–([\d.]+)\)", cell).groups()
            assert shows(med, float(np.median(scores))) and shows(lo, min(scores)) and shows(hi, max(scores)), cell
        # 占上限的比例用表里印出来的（三位小数的）两个加速比算：读者照着表算得到的就是它（A100 上 1.0797 / 1.2345
        # 是 87.46%，印出来的 1.080 / 1.234 是 87.52%：04 印 88%）
        frac = lambda x, y: round(x, 3) / round(y, 3)                             # noqa: E731
        assert pct_shows(evo[c_frac], frac(float(np.median(tes)), o_te))
        [pm] = [r for k, r in rows.items() if "查表" in k]
        pmt = per_m_table(train, table)
        assert shows(pm[c_tr], geomean_speedup(pmt, train, table)) and shows(pm[c_te], geomean_speedup(pmt, test, table))
        assert pct_shows(pm[c_frac], frac(geomean_speedup(pmt, test, table), o_te))
        [orc] = [r for k, r in rows.items() if "逐形状最优" in k]
        assert shows(orc[c_tr], o_tr) and shows(orc[c_te], o_te)


def test_demo3_observations(stdout, table, runs):
    obs = "\n".join(observations(section(stdout, "演示 3")))
    med = {how: (float(np.median([r[0] for r in rs])), float(np.median([r[1] for r in rs]))) for how, rs in runs.items()}
    train, test = split_shapes(all_shapes())
    seen = {(s.name, s.M) for s in train}
    near = sum(any((s.name, t) in seen for t in TOKENS if t != s.M and abs(TOKENS.index(t) - TOKENS.index(s.M)) == 1)
               for s in test)
    # 相差几 % 按印出来的两个三位小数算（04 的规矩：读者照着表算得出同样的数）；以前这里用没四舍五入的中位数，
    # 句子不成立的那个分支（--quick 时可能走到）就和 04 对不上（讲师报过：印 3.05%，这里算 3.027%）
    gap = round(med["random"][1], 3) / round(med["random"][0], 3) - 1
    if "相邻 M 的形状" in obs:                                   # 这句成立：印的是形状个数和两个中位数
        m = find(r"(\d+) 个测试形状里有 (\d+) 个在训练里有同一投影、相邻 M 的形状", obs)
        assert [int(m[1]), int(m[2])] == [len(test), near]
        m = find(r"测试形状上（([\d.]+)×）和训练形状上（([\d.]+)×）差不多好（测试比训练(低|高) ([\d.]+)%；", obs)
        assert shows(m[1], med["random"][1]) and shows(m[2], med["random"][0])
        assert shows(m[4], abs(gap) * 100) and (m[3] == "低") == (gap < 0)      # 不带正负号，说谁高谁低
    else:                                                         # 不成立：印的是判据和量到的值
        m = find(r"这次：训练 ([\d.]+)×，测试 ([\d.]+)×，测试比训练(低|高) ([\d.]+)%", obs)
        assert shows(m[1], med["random"][0]) and shows(m[2], med["random"][1])
        assert shows(m[4], abs(gap) * 100) and (m[3] == "低") == (gap < 0)
    m = find(r"(?:掉得更多（|这次：按模型分 )([\d.]+)× → ([\d.]+)×", obs)          # 成立或不成立的那种说法
    assert shows(m[1], med["by_model"][0]) and shows(m[2], med["by_model"][1])
    fracs = []
    for how in ("random", "by_model"):
        tr, te = split_shapes(all_shapes(), how)
        # 按表里印出来的三位小数算，和 04 一样（助教报过：B200 上 85.3% 是 1.xxx / 1.xxx 的，这里用没四舍五入的算成 85.24%）
        fracs.append(round(med[how][1], 3) / round(oracle_speedup(te, table), 3))
    m = find(r"(?:两种划分都拿到|占上限) ([\d.]+%)(?:–([\d.]+%))?", obs)
    assert pct_shows(m[1], min(fracs)) and pct_shows(m[2] or m[1], max(fracs))


# ---------------------------------------------------------------- 演示 4

def test_demo4_cost_table(stdout, run):
    out, ev, train, test = run
    text = section(stdout, "演示 4")
    t = find_table(text, "项目", "个数")
    c = t.col("个数")
    row = lambda words: number(t.row(words)[c])              # noqa: E731
    assert row("进化：提出的程序") == out["budget"]
    assert row("SEARCH/REPLACE") == sum(out["failed"].values())
    assert row("和评估过的程序一模一样") == ev.n_cached
    assert row("静态检查拒掉") == ev.n_static_reject
    assert row(f"只在 {N_PROBE} 个探针形状") == ev.n_eval_probe
    assert row("在全部训练形状上评估") == ev.n_eval_full
    assert row("进化：一共跑了几次内核") == ev.bench_runs
    assert row("训练形状逐个穷举") == len(VALID) * len({(s.M, s.N, s.K) for s in train})
    assert row(f"全部 {len(all_shapes())} 个形状逐个穷举") == len(VALID) * len({(s.M, s.N, s.K) for s in all_shapes()})
    assert row("来了一个新形状：穷举") == len(VALID)
    tune = [guided_tune(s.M, s.N, s.K).runs for s in all_shapes()]
    med, lo, hi = numbers(t.row("来了一个新形状：第 13 讲")[c])
    assert (med, lo, hi) == (int(np.median(tune)), min(tune), max(tune))


@pytest.mark.h100_claim
def test_demo4_observations(stdout, run, table):
    """04 演示 4：跑了几次内核、占穷举训练形状的百分比和这次的进化一致。"""
    out, ev, train, test = run
    obs = "\n".join(observations(section(stdout, "演示 4")))
    exhaustive = len(VALID) * len({(s.M, s.N, s.K) for s in train})
    m = find(r"跑了 ([\d,]+) 次内核，是穷举训练形状（([\d,]+) 次）的 ([\d.]+%)", obs)
    assert number(m[1]) == ev.bench_runs and number(m[2]) == exhaustive
    assert pct_shows(m[3], ev.bench_runs / exhaustive)
    # 成立时"比专家快 1.28×（演示 2 那一次……）"，不成立时（--quick 可能这样）量到的值也是"比专家快 1.24×"：
    # 这里只核对印出来的数是这次的；在不在讲义的 1.25–1.45× 里由 test_claims 的 C3 在默认设置下检查
    assert shows(find(r"比专家快 ([\d.]+)×", obs)[1], geomean_speedup(out["best"][0], test, table))



def test_prose_prints_the_tables_speedups_with_the_tables_digits(stdout):
    """讲师审读报过：演示 1 的表里逐形状最优在测试形状上是 1.346×，观察 4 说"比专家快 1.35×"；演示 2 说最好的程序在
    测试形状上 1.282×，演示 4 的观察 3 说"我们的迷你版比专家快 1.28×"——同一个数印成两样，像是两个数。"""
    one = section(stdout, "演示 1")
    t = find_table(one, "方法", "测试形状")
    test = next(i for i, h in enumerate(t.headers) if h.startswith("测试形状"))
    upper = t.row("逐形状最优")[test]
    said = find(r"逐形状最优在测试形状上比专家快 ([\d.]+×)", "\n".join(observations(one)))[1]
    assert said == upper, (said, upper)
    best = find(r"最好的程序：训练形状 [\d.]+×，测试形状 ([\d.]+×)", section(stdout, "演示 2"))[1]
    said = find(r"比专家快 ([\d.]+×)", "\n".join(observations(section(stdout, "演示 4"))))[1]
    assert said == best, (said, best)

def test_the_split_description_accounts_for_the_test_shapes_without_a_neighbour(stdout):
    # 一位同学算过：演示 1 说"相邻的 M 两两配对"，照这个说法 44 个测试形状都该有相邻 M 的训练形状，演示 3 却说
    # "44 个里有 40 个"。少的 4 个都在落单的最大 M 上：演示 1 现在说出落单的那个 M
    from evolve import TOKENS
    train, test = split_shapes(all_shapes())
    have = {(s.name, s.M) for s in train}
    near = lambda s: any((s.name, m) in have for m in TOKENS if abs(TOKENS.index(m) - TOKENS.index(s.M)) == 1)  # noqa: E731
    lonely = [s for s in test if not near(s)]
    first = observations(section(stdout, "演示 3"))[0]
    if "本次不成立" not in first:                                    # --quick 时这一句可能不成立，不印这个数
        said = int(find(r"(\d+) 个测试形状里有 (\d+) 个 在训练里有同一投影、相邻 M", first)[2])
        assert said == len(test) - len(lonely)
    assert all(s.M == TOKENS[-1] for s in lonely)                     # 没有相邻 M 的只在落单的那个 M 上
    intro = "".join(section(stdout, "演示 1").split())
    assert (f"最大的{TOKENS[-1]}落单" in intro) == (len(TOKENS) % 2 == 1), intro[:600]


def shares_are_printed_speedups_divided(stdout: str) -> None:
    """演示 1、3 的"测试上占最优的"这一列按表里印的三位小数算：读者拿表上的两个数相除，得到的就是这一格。"""
    for demo in ("演示 1", "演示 3"):
        t = find_table(section(stdout, demo), "测试上占最优的")
        share, test = t.col("测试上占最优的"), next(i for i, h in enumerate(t.headers) if h.startswith("测试形状"))
        for k, row in enumerate(t.rows):
            if demo == "演示 1":                               # 最后一行是逐形状最优（上限）
                upper = numbers(t.rows[-1][test])[0]
            else:                                              # 每种划分三行，第三行是它的上限
                upper = numbers(t.rows[k - k % 3 + 2][test])[0]
            cell = row[share]
            digits = len(cell.rstrip("%").partition(".")[2])
            assert cell == f"{numbers(row[test])[0] / upper * 100:.{digits}f}%", (demo, row)


def test_shares_of_the_upper_bound_are_the_printed_speedups_divided(stdout):
    """学生报过：演示 3 表里进化的测试分数 1.229×、上限 1.285×，"测试上占最优的"却是 95.7%（照表算是 95.6%）。"""
    shares_are_printed_speedups_divided(stdout)


RECORD_ARGS = ((), ("--seed", "3", "--seeds", "1"), ("--seed", "8", "--seeds", "1"))
PREFETCH += [("lecture14/04_alphaevolve_tiling.py", *a) for a in RECORD_ARGS]     # 下面的测试


def test_the_record_table_says_why_it_prints_more_than_three_decimals():
    """学生报过：04 的"最好分数被刷新的时刻"有时印三位小数、有时五位（--seed 3 是 1.21800×、1.21804×），没说为什么。
    多于三位时表下说一句是几位、为什么；三位时不说。"""
    from conftest import run_script
    # --seed 8：两次刷新只差 8.5e-9，以前印成两个 1.25549447×（位数封顶在 8）。刷新的分数一个比一个高：印出来也是
    # 这张表是演示 2 那一次进化的，和 --seeds（演示 3 跑几个种子）无关：--seed 3、--seed 8 的演示 2 和加上
    # --seeds 1 时逐字节相同。加上它，演示 3 只跑 2 次进化、不是 10 次（--seed 3 --seeds 1 别的测试也跑，缓存里共用）
    for args in RECORD_ARGS:
        out = run_script("lecture14/04_alphaevolve_tiling.py", *args).stdout
        block = out.split("最好分数被刷新的时刻", 1)[1].split("修改的种类", 1)[0].split("最好分数随提议增长", 1)[0]
        scores = re.findall(r"(\d\.(\d+))×", block)
        digits = {len(frac) for _, frac in scores}
        assert len(digits) == 1, block
        d = digits.pop()
        said = "".join(block.split())
        assert (f"印到{d}位小数才分得开" in said) == (d > 3), (args, block)
        values = [float(v) for v, _ in scores]
        assert values == sorted(set(values)), (args, block)
