"""
=============================================================================
CS349E · 第 14 讲 · 04_alphaevolve_tiling.py —— 迷你 AlphaEvolve：进化一段"给矩阵乘法挑分块"的代码
=============================================================================

【这个脚本要回答的问题】
    AlphaEvolve 给 Gemini 的矩阵乘法内核做的，不是逐个形状去调优，而是进化**一段**挑分块配置的代码，
    让它对所有形状都管用：在一半形状上进化，在另一半上检验。这样进化出来的代码比专家手写的强多少？
    离"每个形状都调到最好"还差多远？花了多少次评估？
      演示 1：问题本身——88 个形状、各自的最优配置、专家启发式，和三条基线（一个配置通吃、按 M 查表、逐形状最优）。
      演示 2：一次进化——最好分数怎么涨、哪种修改管用、最后的程序、产生它的那段 SEARCH/REPLACE。
      演示 3：泛化——两种训练/测试划分（配对随机对半分；8B 训练、70B 分片测试），每种若干个随机种子。
      演示 4：成本——进化"跑了"多少次内核，和逐形状调优比；AlphaEvolve 论文报告的数字。

【关于数字】"硬件"是第 13 讲 sched_lab 的解析模型（H100 的参数，不是在 GPU 上量的）；"LLM"是 evolve.MockLLM：
    模板化的修改加一点内核常识，没有任何真的语言模型。看的是进化循环的结构和每个部件起的作用，不是 AlphaEvolve
    真实的效果。下面每一句观察都由这次运行算出来、在代码里检验过；不成立的会直说不成立。
【运行】python3 04_alphaevolve_tiling.py                 （2 核笔记本上约 3 秒；演示 3 用 2 个进程）
       python3 04_alphaevolve_tiling.py --quick         （预算 300、2 个种子，约 1 秒：改完专家启发式先用它试）
       其他旋钮：--seed 演示 2 的种子，--budget 每次进化提出多少个程序，--seeds 演示 3 的种子个数，--jobs 进程数。
       换成真的语言模型（README 的"用真的语言模型"一节）：
       python3 04_alphaevolve_tiling.py --llm http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b --budget 50 --seeds 1
       再加 --record run.jsonl 录下每次调用，之后 --replay run.jsonl 不联网重放，输出逐字节相同。
【依赖】numpy；本目录的 evolve（它用 ../lecture13 的 sched_lab 和 ../lecture10 的 kernel_lab）；../lecture01 的 console。
       专家启发式在本目录的 expert_heuristic.py，可以改。
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from console import print_header, print_observations, print_table, print_try  # noqa: E402
from evolve import (EXPERT, LAYERS, TOKENS, VALID, Evaluator, Shape, TimeTable, all_shapes,  # noqa: E402
                    best_single_config, choose, evolve, format_diff, geomean_speedup, oracle_speedup, parse,
                    per_m_table, render, simplify, split_shapes)
from evolve.loop import ManyRuns  # noqa: E402
from evolve.evaluator import N_PROBE  # noqa: E402
from evolve.program import apply_diff, equivalent  # noqa: E402
from evolve import openai_llm  # noqa: E402
from kernel_lab import MAX_REGS_PER_THREAD, Config, regs_per_thread  # noqa: E402
from sched_lab import HBM_BW, SMS, guided_tune  # noqa: E402

SEED = 0            # 演示 2 的随机种子：换一个看看进化的路线变不变
BUDGET = 1000       # 每次进化提出多少个程序（AlphaEvolve 里是 LLM 调用的次数）
SEEDS = 5           # 演示 3 每种划分跑几个种子
JOBS = 2            # 演示 3 用几个进程（结果和 1 个进程完全一样，只是快）
QUICK = dict(budget=300, seeds=2)
EARLY = 300         # "开头"：看第几个提议时已经拿到多少涨幅（讲义的说法是前 300 个）
MIN_TRIED = 20      # 比成功率至少要提过这么多次

SPLITS = {"random": "配对随机对半分", "by_model": "8B 训练、70B/8 测试"}
DECODE, PREFILL, MIDDLE = ("8B gate_up", 1), ("8B gate_up", 8192), ("70B/8 qkv", 128)


def shape(name, M):
    return Shape(name, M, *LAYERS[name])


def pct(x):
    return f"{x:.0%}"


def span(a, b):
    """两个百分比：相同就写一个，不同就写"小–大"。"""
    lo, hi = sorted((pct(a), pct(b)), key=lambda x: float(x[:-1]))
    return lo if lo == hi else f"{lo}–{hi}"


def verdict(ok, text, otherwise):
    """一句观察：成立就说 text；不成立就说 otherwise，并标明"本次不成立"。"""
    return text if ok else f"【本次不成立】{otherwise}"


# ---------------------------------------------------------------- 演示 1

def demo1_problem(table, train, test):
    print_header("演示 1：问题——88 个形状、各自的最优配置、专家启发式和三条基线")
    print("投影（N, K）：" + "，".join(f"{n} ({N}, {K})" for n, (N, K) in LAYERS.items()))
    print(f"token 数 M：{', '.join(map(str, TOKENS))}（decode 的批大小到 prefill 的长度）"
          f"——共 {len(LAYERS)} × {len(TOKENS)} = {len(LAYERS) * len(TOKENS)} 个形状；"
          f"配对随机对半分：训练 {len(train)} 个，测试 {len(test)} 个。")
    rows = []
    for name, M in (DECODE, ("8B gate_up", 16), ("8B gate_up", 128), ("8B gate_up", 1024), PREFILL, MIDDLE,
                    ("70B/8 qkv", 8192)):
        s = shape(name, M)
        best, t = table.oracle(s)
        rows.append([s.label(), str(best.as_tuple()), f"{t * 1e6:.1f} µs", f"{s.flops / t / 1e12:.0f}",
                     f"{table.time(choose(EXPERT, s), s) / t:.2f}×"])
    print_table(["形状", "最优配置 (BM,BN,BK,warps,stages,group)", "最优时间", "TFLOPS", "专家比最优慢"], rows)
    print("\n专家启发式（expert_heuristic.py，进化的起点）：\n" + render(EXPERT))

    one, pmt = best_single_config(train, table), per_m_table(train, table)
    o_train, o_test = oracle_speedup(train, table), oracle_speedup(test, table)
    exhaustive = len(VALID) * len(train)
    rows = []
    for name, prog, cost in (("专家启发式", EXPERT, "0（手写）"),
                             (f"一个配置通吃 {one.default.as_tuple()}", one, f"{exhaustive:,}"),
                             (f"按 M 查表（{pmt.n_rules()} 条规则）", pmt, f"{exhaustive:,}")):
        rows.append([name, f"{geomean_speedup(prog, train, table):.3f}×", f"{geomean_speedup(prog, test, table):.3f}×",
                     pct(geomean_speedup(prog, test, table) / o_test), cost])
    rows.append(["逐形状最优（每个形状都穷举）", f"{o_train:.3f}×", f"{o_test:.3f}×", "100%", f"每个新形状 {len(VALID):,}"])
    print_table(["方法", "训练形状（比专家快）", "测试形状（比专家快）", "测试上占最优的", "要跑几次内核"], rows)

    # 观察里的每个判断都在这里算
    ratio = lambda s: table.time(choose(EXPERT, s), s) / table.oracle(s)[1]  # noqa: E731
    dec = [shape(*DECODE), shape("8B gate_up", 16)]
    near = [int((table.times(s) <= table.oracle(s)[1] * 1.01).sum()) for s in dec]
    bw = dec[0].N * dec[0].K * 2 / table.oracle(dec[0])[1] / HBM_BW
    pre = shape(*PREFILL)
    pre_best, pre_exp = table.oracle(pre)[0], choose(EXPERT, pre)
    pre_r = ratio(pre)
    mid = shape(*MIDDLE)
    mid_r, mid_cfg = ratio(mid), choose(EXPERT, mid)
    mid_ctas = -(-mid.M // mid_cfg.BM) * -(-mid.N // mid_cfg.BN)
    worst = max(all_shapes(), key=ratio)
    big_tile = {pre_best.BM, pre_best.BN} == {128, 256} and pre_best.warps == 8 and pre_best.stages == 4
    p_one, p_pmt = geomean_speedup(one, test, table), geomean_speedup(pmt, test, table)
    print_observations([
        verdict(max(map(ratio, dec)) <= 1.01 and min(near) >= 20 and bw >= 0.75,
                f"decode（8B gate_up，M = 1 和 16）几乎只是在读权重：最优配置把 {pct(bw)} 的 HBM 带宽用来读 "
                f"{dec[0].N * dec[0].K * 2 / 1e6:.0f} MB 权重；离最优 1% 以内的配置，M = 1 时有 {near[0]} 个、"
                f"M = 16 时有 {near[1]} 个，专家的小块配置就在其中。",
                f"decode 上专家慢 {max(map(ratio, dec)):.2f}×、1% 以内的配置 {min(near)} 个、带宽利用 {pct(bw)}。")
        + verdict(big_tile and 1.2 <= pre_r <= 1.4 and pre_exp.BM * pre_exp.BN < pre_best.BM * pre_best.BN,
                  f"prefill（M = 8192）最优是 {pre_best.BM}×{pre_best.BN} 的大块、{pre_best.warps} 个 warp、"
                  f"{pre_best.stages} 级流水线，每次从 L2 搬的字节能算更多次；专家的 {pre_exp.BM}×{pre_exp.BN}×{pre_exp.BK} / "
                  f"{pre_exp.warps} warp / {pre_exp.stages} 级慢 {pre_r:.2f}×。",
                  f"prefill 最优是 {pre_best.as_tuple()}，专家慢 {pre_r:.2f}×（讲义说 256×128 / 8 warp / 4 级、慢 20–40%）。")
        + verdict(32 <= worst.M <= 1024 and 2.2 <= mid_r <= 2.8 and mid_ctas < SMS // 2,
                  f"差距最大的在中间的 M：最差的是 {worst.label()}（{ratio(worst):.2f}×）；{mid.label()} 上"
                  f"专家的 {mid_cfg.BM}×{mid_cfg.BN} 块只有 {mid_ctas} 个 CTA，{SMS} 个 SM 大多闲着，慢 {mid_r:.2f}×。",
                  f"最差的是 {worst.label()}（{ratio(worst):.2f}×），70B/8 qkv M = 128 慢 {mid_r:.2f}×。"),
        verdict(p_one < p_pmt < o_test and p_pmt / o_test >= 0.9,
                f"逐形状最优在测试形状上比专家快 {o_test:.2f}×，这是上限，但每个新形状都要重新穷举。"
                f"按 M 查表只用训练形状调出来，在测试形状上拿到上限的 {pct(p_pmt / o_test)}；一个配置通吃只有 "
                f"{pct(p_one / o_test)}。查表到不了 100%：同一个 M 下 N、K 不同的形状只能共用一个配置。",
                f"一个配置通吃 {pct(p_one / o_test)}、按 M 查表 {pct(p_pmt / o_test)}、上限 {o_test:.2f}×"
                f"（讲义说查表至少 90%，且三者依次变好）。"),
        "启发式是一段代码，新形状来了直接调用，不用再调一遍——AlphaEvolve 论文说，按形状搜索的调优每逢输入形状变化"
        "就得重来，打断研究的节奏；这是进化一段代码而不是一张表的理由。",
    ])
    return pmt


# ---------------------------------------------------------------- 演示 2

def demo2_one_run(table, train, test, seed, budget, llm=None):
    print_header(f"演示 2：一次进化（种子 {seed}，提出 {budget} 个程序）")
    ev = Evaluator(train, table)
    out = evolve(ev, budget, seed=seed, log_every=max(1, budget // 5), llm=llm)
    best, res = out["best"]
    imp = out["improvements"]
    shown = imp if len(imp) <= 12 else imp[:8] + [("…", None, None)] + imp[-4:]
    print("\n最好分数被刷新的时刻" + ("（前 8 次和最后 4 次）：" if len(imp) > 12 else "："))
    print_table(["第几个提议", "新的最好分数", "哪种修改"],
                [[str(k), "" if s is None else f"{s:.3f}×", op or ""] for k, s, op in shown])
    rate = lambda op: out["accepted"].get(op, 0) / max(1, out["tried"].get(op, 0))  # noqa: E731
    rows = [[op, out["tried"][op], out["accepted"].get(op, 0), out["static_reject"].get(op, 0), pct(rate(op))]
            for op in sorted(out["tried"])]
    print_table(["修改的种类", "提出", "比父程序好", "启动不了被拒", "成功率"], rows)

    simp = simplify(best)
    test_score = geomean_speedup(best, test, table)
    print(f"\n最好的程序：训练形状 {res['score']:.3f}×，测试形状 {test_score:.3f}×；{best.n_rules()} 条规则，"
          f"删掉死规则后 {simp.n_rules()} 条：\n" + render(simp))
    parent_src = render(res["parent"]) if res["parent"] is not None else None
    print("产生它的那次修改（对父程序的 SEARCH/REPLACE）：\n" + format_diff(res["diff"]))

    o_train = oracle_speedup(train, table)
    hist = out["history"]
    early = EARLY - 1
    gain_early = (hist[early] - 1) / max(1e-12, hist[-1] - 1) if budget > EARLY else None
    valley = Config(256, 128, 64, 4, 3, 8)
    population = set(out["population"])
    dead = sum(simplify(p).n_rules() < p.n_rules() for p in population)
    regs_rejects = out["static_kinds"].get("single_field", {}).get("寄存器/线程", 0)
    enough = min(out["tried"].get("targeted", 0), out["tried"].get("single_field", 0)) >= MIN_TRIED
    applies = parent_src is None or (apply_diff(parent_src, res["diff"]) == render(best)
                                     and parse(apply_diff(parent_src, res["diff"])) == best)
    same = equivalent(best, simp) and all(choose(best, s) == choose(simp, s) for s in all_shapes())
    print_observations([
        (f"预算只有 {budget} 个提议（不到 {EARLY + 1} 个），看不出开头和后面涨得一样不一样；最终训练形状上 "
         f"{res['score']:.3f}×，上限 {o_train:.3f}×（{pct(res['score'] / o_train)}）。"
         if gain_early is None else
         verdict(gain_early >= 0.7 and res["score"] >= 0.93 * o_train,
                 f"涨得最快的是开头：第 {EARLY} 个提议时已经拿到最终涨幅的 {pct(gain_early)}，之后越来越慢；"
                 f"{budget} 个提议后训练形状上 {res['score']:.3f}×，上限 {o_train:.3f}×（{pct(res['score'] / o_train)}）。"
                 "AlphaEvolve 论文的消融曲线也是这个形状：容易的改进先被找到。",
                 f"第 {EARLY} 个提议时拿到最终涨幅的 {pct(gain_early)}，最终 {res['score']:.3f}×"
                 f"（上限的 {pct(res['score'] / o_train)}；讲义说前 {EARLY} 个至少 70%、最终至少 93%）。")),
        llm_sentence(out, llm) if llm is not None else
        (f"targeted 提了 {out['tried'].get('targeted', 0)} 次、single_field 提了 {out['tried'].get('single_field', 0)} 次，"
         f"不到 {MIN_TRIED} 次，成功率比不出什么。" if not enough else
         verdict(rate("targeted") >= 2 * rate("single_field") and regs_rejects > 0,
                 f"按内核常识一次改好几个字段的 targeted 成功率 {pct(rate('targeted'))}，一次只挪一个字段的 "
                 f"single_field 只有 {pct(rate('single_field'))}。只挪一个字段常常掉进\"启动不了\"的山谷："
                 f"从 128×128 / 4 warp 到 256×128 / 8 warp，中间那步 256×128 / 4 warp 每线程要 {regs_per_thread(valley)} "
                 f"个寄存器（上限 {MAX_REGS_PER_THREAD}）；这次 single_field 的提议里有 "
                 f"{out['static_reject'].get('single_field', 0)} 个改出了启动不了的配置，其中 {regs_rejects} 个就是寄存器超了"
                 "（其余是共享内存或 warp 分不到活）。改得连贯，正是大模型比随机变异强的地方。",
                 f"targeted 成功率 {pct(rate('targeted'))}，single_field {pct(rate('single_field'))}，single_field 因寄存器"
                 f"超了被拒 {regs_rejects} 次（讲义说前者的成功率至少是后者的 2 倍）。")),
        verdict(same and applies and (dead > 0 or simp.n_rules() < best.n_rules()),
                f"进化出来的代码会带\"死规则\"（被前面的规则挡住、永远走不到）；程序库最后留下的 {len(population)} 个不同的程序里"
                f"有 {dead} 个带死规则，最好的程序从 {best.n_rules()} 条删到 {simp.n_rules()} 条，在所有 (M, N, K) 上选的配置一个不差"
                "（和第 12 讲删死代码是同一件事）。上面那段 SEARCH/REPLACE 打到父程序的源码上，得到的正是这个程序。",
                f"程序库里 {len(population)} 个不同的程序有 {dead} 个带死规则，最好的程序 {best.n_rules()} → {simp.n_rules()} 条"
                f"（simplify 行为不变：{'是' if same else '否'}；SEARCH/REPLACE 能重现它：{'是' if applies else '否'}）。"),
    ])
    return out, ev


def llm_sentence(out, llm):
    """用真的 LLM 时代替 targeted / single_field 那句：它不报修改的种类，只能说它自己那一行。"""
    kind = openai_llm.KIND
    n, acc, rej = out["tried"].get(kind, 0), out["accepted"].get(kind, 0), out["static_reject"].get(kind, 0)
    return (f"这次的修改都来自 {llm.model}，它不说自己做的是哪种修改，所以表里只有 {kind} 一行（调用本身失败的记在"
            f"\"（LLM 出错）\"）：拿到回复的 {n} 个提议里 {acc} 个比父程序好（{pct(acc / max(1, n))}），{rej} 个改出了"
            "启动不了的配置、被静态检查拒掉。MockLLM 的 targeted 和 single_field 对比，不加 --llm 再跑一次就看得到。")


# ---------------------------------------------------------------- 演示 3

def demo3_generalization(table, shapes, budget, seeds, runs, keys, reused):
    print_header(f"演示 3：泛化——两种划分，各 {seeds} 个种子（每次提出 {budget} 个程序）")
    rows, summary = [], {}
    done = dict(zip(keys, runs.results()))               # (划分, 种子) → (训练分数, 测试分数, 程序)
    done.update(reused)                                  # 演示 2 那一次（同样的划分、种子、预算）不用再跑
    for how, label in SPLITS.items():
        train, test = split_shapes(shapes, how)
        results = [done[how, seed] for seed in range(seeds)]
        trs, tes = [r[0] for r in results], [r[1] for r in results]
        o_tr, o_te = oracle_speedup(train, table), oracle_speedup(test, table)
        pmt = per_m_table(train, table)
        p_tr, p_te = geomean_speedup(pmt, train, table), geomean_speedup(pmt, test, table)
        med_tr, med_te = float(np.median(trs)), float(np.median(tes))
        summary[how] = dict(train=med_tr, test=med_te, frac=med_te / o_te, pmt=p_te, pmt_frac=p_te / o_te)
        rows += [[label, "进化（中位数，最小–最大）", f"{med_tr:.3f}× ({min(trs):.3f}–{max(trs):.3f})",
                  f"{med_te:.3f}× ({min(tes):.3f}–{max(tes):.3f})", pct(med_te / o_te)],
                 ["", "按 M 查表", f"{p_tr:.3f}×", f"{p_te:.3f}×", pct(p_te / o_te)],
                 ["", "逐形状最优（上限）", f"{o_tr:.3f}×", f"{o_te:.3f}×", "100%"]]
    print_table(["划分", "方法", "训练形状", "测试形状", "测试上占最优的"], rows)
    r, m = summary["random"], summary["by_model"]
    drop_r, drop_m = r["train"] - r["test"], m["train"] - m["test"]
    fracs = sorted([r["frac"], m["frac"]])
    close = max(abs(s["test"] / s["pmt"] - 1) for s in summary.values())
    train, test = split_shapes(shapes)
    seen = {(s.name, s.M) for s in train}
    adjacent = lambda m: TOKENS[max(0, TOKENS.index(m) - 1):TOKENS.index(m) + 2]  # noqa: E731  M 和它左右相邻的 M
    neighbour = lambda s: any((s.name, t) in seen for t in adjacent(s.M) if t != s.M)  # noqa: E731
    with_neighbour = sum(neighbour(s) for s in test)
    print_observations([
        verdict(abs(r["test"] / r["train"] - 1) <= 0.03,
                f"配对随机对半分时，两边有同样的 8 种投影、同样的 11 个 M，{len(test)} 个测试形状里有 {with_neighbour} 个"
                f"在训练里有同一投影、相邻 M 的形状。进化出的程序在测试形状上（{r['test']:.3f}×）和训练形状上"
                f"（{r['train']:.3f}×）差不多好：在训练形状上管用的规则，对这些没见过的形状也管用。",
                f"随机对半分：训练 {r['train']:.3f}×，测试 {r['test']:.3f}×，差了 3% 以上。"),
        verdict(drop_m > drop_r and min(fracs) >= 0.85,
                f"按模型分时，测试形状的 N、K 训练时都没见过（70B/8 qkv 的 N = 1280 比 8B 的都小），训练到测试掉得更多"
                f"（{m['train']:.3f}× → {m['test']:.3f}×；随机分{'只掉' if drop_r >= 0 else '反而涨了'} {abs(drop_r):.3f}）。"
                f"按各自的上限算，两种划分都拿到 {span(*fracs)}。测试形状应该像将来真会遇到的形状——AlphaEvolve 的形状就是从内核的真实用户那里收集的。",
                f"按模型分：{m['train']:.3f}× → {m['test']:.3f}×（随机分 {r['train']:.3f}× → {r['test']:.3f}×），占上限 {span(*fracs)}。"),
        verdict(close <= 0.05,
                f"进化出的程序和按 M 查表在测试形状上差不多（最多相差 {close:.1%}；查表占上限的 "
                f"{span(r['pmt_frac'], m['pmt_frac'])}）。"
                "查表要在每个训练形状上把全部配置跑一遍，进化只跑它挑中的（演示 4），还能用 N、K 写条件。"
                "在这个问题上 M 已经说明了大部分，所以简单的查表就很强——评价一个搜索方法，先要有一个强的基线。",
                f"进化和按 M 查表在测试形状上相差 {close:.1%}（讲义说在 5% 以内）。"),
    ])


# ---------------------------------------------------------------- 演示 4

def demo4_cost(table, out, ev, train, test, shapes, budget, book=None):
    """book：用真的 LLM 时演示 2 那一次进化的成本账（openai_llm.ledger），表里多几行 LLM 的成本；MockLLM 时是 None。"""
    print_header("演示 4：成本（演示 2 那一次进化）")
    failed = sum(out["failed"].values())
    tune = [guided_tune(s.M, s.N, s.K).runs for s in shapes]
    med_tune = int(np.median(tune))
    rows = [["进化：提出的程序（LLM 的回复）", f"{budget:,}"],
            ["  SEARCH/REPLACE 打不上或子程序解析不了", f"{failed:,}"],
            *([[f"    其中 {kind}", f"{n:,}"] for kind, n in sorted(out["failed"].items(), key=lambda x: (-x[1], x[0]))]
              if book is not None else []),
            ["  和评估过的程序一模一样，直接用缓存", f"{ev.n_cached:,}"],
            ["  静态检查拒掉（有分支返回启动不了的配置）", f"{ev.n_static_reject:,}"],
            [f"  只在 {N_PROBE} 个探针形状上跑过就淘汰", f"{ev.n_eval_probe:,}"],
            ["  在全部训练形状上评估", f"{ev.n_eval_full:,}"],
            ["进化：一共跑了几次内核（每个被评估的程序 × 它跑过的形状，含起点）", f"{ev.bench_runs:,}"],
            ["训练形状逐个穷举", f"{len(VALID) * len(train):,}"],
            ["全部 88 个形状逐个穷举", f"{len(VALID) * len(shapes):,}"],
            ["来了一个新形状：用启发式", "0"],
            ["来了一个新形状：穷举", f"{len(VALID):,}"],
            ["来了一个新形状：第 13 讲代价模型引导的调优（88 个形状的中位数，最少–最多）",
             f"{med_tune} ({min(tune)}–{max(tune)})"]]
    if book is not None:
        rows += llm_cost_rows(book, failed, budget)
    print_table(["项目", "次数"], rows)
    landed = failed + ev.n_cached + ev.n_static_reject + ev.n_eval_probe + ev.n_eval_full
    assert landed == budget, (landed, budget)          # 每个提议恰好落进一行
    exhaustive = len(VALID) * len(train)
    best = out["best"][0]
    c3 = geomean_speedup(best, test, table)
    print_observations(([llm_cost_observation(book, out, ev, failed, budget)] if book is not None else []) + [
        verdict(exhaustive / 100 < ev.bench_runs < exhaustive,
                f"这次进化跑了 {ev.bench_runs:,} 次内核，是穷举训练形状（{exhaustive:,} 次）的 "
                f"{pct(ev.bench_runs / exhaustive)}：少，但不是少几个数量级。换来的是一段能直接用在新形状上的代码；"
                f"要是每个新形状都调，穷举一次 {len(VALID):,} 次，代价模型引导也要 {med_tune} 次左右。"
                "真实系统里每跑一次内核都要上 GPU/TPU，所以 AlphaEvolve 的评估是并行的，整条流水线为吞吐设计。",
                f"进化跑了 {ev.bench_runs:,} 次，穷举训练形状 {exhaustive:,} 次（讲义说少于穷举、但多于它的 1%）。"),
        "AlphaEvolve 论文（arXiv 2506.13131，3.3.2 节）报告的真实结果，这里只是引用：进化出的分块启发式让所有内核"
        "平均比专家写的快 23%，Gemini 整体训练时间少 1%；内核优化从几个月的工程变成几天的自动实验；已经部署上线；"
        "只改分块、不改算什么，所以正确性由构造保证。",
        verdict(1.25 <= c3 <= 1.45,
                f"我们的迷你版比专家快 {c3:.2f}×（测试形状），但不能拿来和 23% 比：这个专家是讲义作者写的，"
                "强弱由作者决定。更有意义的是占逐形状最优的比例（演示 3 的最后一列）。",
                f"我们的迷你版在测试形状上比专家快 {c3:.2f}×（讲义说约 1.3–1.4×）。"),
    ])


def llm_cost_rows(book, failed, budget):
    """用真的 LLM 时成本表多出的几行：调用次数、token、用时、用不上的回复。"""
    tok = lambda n: "服务器没报" if n is None else f"{n:,}"  # noqa: E731
    return [["LLM：调用次数（每个提议一次）", f"{book['calls']:,}"],
            ["LLM：提示 token（输入）", tok(book["prompt_tokens"])],
            ["LLM：回复 token（输出）", tok(book["completion_tokens"])],
            ["LLM：等回复的时间合计（秒；并发时几个请求的时间叠在一起算）", f"{book['latency_total']:.1f}"],
            ["LLM：每次调用的时间（秒，中位数）", f"{book['latency_median']:.2f}"],
            ["LLM：用不上的回复（调用失败、打不上、解析不了）", f"{failed:,}（{pct(failed / max(1, budget))}）"]]


def llm_cost_observation(book, out, ev, failed, budget):
    """用真的 LLM 时成本的观察：两种成本各是多少、哪种失败最多；句子里的每个数都来自这次运行。"""
    worst = max(out["failed"].items(), key=lambda x: (x[1], x[0])) if out["failed"] else None
    tokens = ("服务器没报 token 数" if book["prompt_tokens"] is None else
              f"输入 {book['prompt_tokens']:,} 个 token、输出 {book['completion_tokens'] or 0:,} 个")
    return (f"这次进化有两种成本：问了 LLM {book['calls']:,} 次（{tokens}，一共等了 {book['latency_total']:.1f} 秒，"
            f"每次中位数 {book['latency_median']:.2f} 秒），跑了 {ev.bench_runs:,} 次“内核”。这里的“内核”只是查一张算好的时间表，"
            "不花机器时间；在 AlphaEvolve 里两样都花真的机器时间，所以它用评估级联少跑内核，用快的模型（Gemini Flash）"
            "出量、强的模型（Gemini Pro）出质量。"
            + (f"{budget:,} 个回复里 {failed:,} 个（{pct(failed / max(1, budget))}）用不上，最多的原因是“{worst[0]}”"
               f"（{worst[1]:,} 次）。" if worst else f"{budget:,} 个回复都用上了（打得上、解析得了）。"))


class SequentialRuns:
    """用真的 LLM 时演示 3 的几次进化：在这个进程里按顺序跑，每次都问同一个 LLM（调用按顺序录制和回放）。"""

    def __init__(self, table, tasks, budget, llm):
        self.table, self.tasks, self.budget, self.llm = table, list(tasks), budget, llm
        self.futures = None

    def results(self):
        out = []
        for train, test, seed in self.tasks:
            program, result = evolve(Evaluator(train, self.table), self.budget, seed=seed, llm=self.llm)["best"]
            out.append((result["score"], geomean_speedup(program, test, self.table), program))
        return out


def run_lecture(seed, budget, seeds, jobs, lap=lambda stage: None, llm=None):
    """四个演示按顺序跑一遍。lap(阶段名) 在每个阶段结束时调用一次（bench/bench.py 用它给每个演示计时）。
    llm：None 用 MockLLM；否则是 openai_llm 的后端，演示 2 和演示 3 的每次进化都问它（演示 3 在这个进程里依次跑）。"""
    shapes = all_shapes()
    table = TimeTable()
    for s in shapes:
        table.oracle(s)                     # 88 个形状 × 3744 个配置的时间，一次向量化算完
    # 演示 3 的 2 × seeds 次进化先在后台跑起来；"随机划分、种子 seed"那一次就是演示 2，结果一模一样，不重复跑
    keys = [(how, s) for how in SPLITS for s in range(seeds) if (how, s) != ("random", seed)]
    tasks = [(*split_shapes(shapes, how), s) for how, s in keys]
    runs = ManyRuns(table, tasks, budget, jobs) if llm is None else SequentialRuns(table, tasks, budget, llm)
    train, test = split_shapes(shapes)
    lap("准备：时间表 + 启动演示 3 的后台进程")
    demo1_problem(table, train, test)
    lap("演示 1：问题")
    first = len(llm.calls) if llm is not None else 0
    out, ev = demo2_one_run(table, train, test, seed, budget, llm)
    book = llm.ledger(first, len(llm.calls)) if llm is not None else None
    best, res = out["best"]
    reused = {("random", seed): (res["score"], geomean_speedup(best, test, table), best)}
    lap("演示 2：一次进化")
    demo3_generalization(table, shapes, budget, seeds, runs, keys, reused)
    lap("演示 3：泛化（后台已经跑了一阵，这里只剩等待）")
    demo4_cost(table, out, ev, train, test, shapes, budget, book)
    lap("演示 4：成本")


def main(argv=None):
    ap = argparse.ArgumentParser(description="迷你 AlphaEvolve：进化挑分块配置的代码（第 14 讲 04）")
    ap.add_argument("--seed", type=int, default=SEED, help="演示 2 的随机种子")
    ap.add_argument("--budget", type=int, default=None, help=f"每次进化提出多少个程序（默认 {BUDGET}）")
    ap.add_argument("--seeds", type=int, default=None, help=f"演示 3 每种划分的种子个数（默认 {SEEDS}）")
    ap.add_argument("--jobs", type=int, default=JOBS, help="演示 3 用几个进程")
    ap.add_argument("--quick", action="store_true", help=f"小规模：预算 {QUICK['budget']}、{QUICK['seeds']} 个种子")
    openai_llm.add_arguments(ap)
    a = ap.parse_args(argv)
    budget = a.budget or (QUICK["budget"] if a.quick else BUDGET)
    seeds = a.seeds or (QUICK["seeds"] if a.quick else SEEDS)
    if budget < 1 or seeds < 1 or a.jobs < 1:
        ap.error("--budget、--seeds、--jobs 都要是正整数")
    try:
        llm = openai_llm.from_arguments(a, f"04 --seed {a.seed} --budget {budget} --seeds {seeds}")
    except openai_llm.SetupError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    print(f"设置：--seed {a.seed} --budget {budget} --seeds {seeds}（--jobs {a.jobs} 只影响快慢，不影响结果）")
    if llm is not None:
        print(openai_llm.describe(llm) + "演示 3 的几次进化也问它，在这个进程里依次跑（--jobs 不起作用）。")

    start = time.perf_counter()
    try:
        run_lecture(a.seed, budget, seeds, a.jobs, llm=llm)
    except openai_llm.ReplayMismatch as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    finally:
        if llm is not None and hasattr(llm, "close"):
            llm.close()
    print_try([
        ("改专家启发式（比如把 M <= 16 改成 M <= 64，或者把默认配置换成 BN=256、warps=8），看所有\"比专家快\"的数字"
         "和观察怎么变；写错了会得到带行号的错误信息：", "$EDITOR lecture14/expert_heuristic.py && make run ARGS=--quick"),
        ("换一个种子，看进化的路线和最后的程序变不变：", "python3 lecture14/04_alphaevolve_tiling.py --seed 3"),
        ("给更多预算，看分数还能涨多少、演示 4 的成本怎么涨：", "python3 lecture14/04_alphaevolve_tiling.py --budget 4000 --seeds 2"),
    ])
    if isinstance(llm, openai_llm.ReplayLLM) and llm.unused():
        print(f"（回放文件里还有 {llm.unused()} 次调用没用上：这次的预算比录制时小）", file=sys.stderr)
    print(f"\n（用时 {time.perf_counter() - start:.1f} 秒）", file=sys.stderr)


if __name__ == "__main__":
    main()
