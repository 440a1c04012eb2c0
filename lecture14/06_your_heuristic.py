"""
=============================================================================
CS349E · 第 14 讲 · 06_your_heuristic.py —— 你自己写的启发式，打个分
=============================================================================

【这个脚本要回答的问题】
    看完 01–05，你能不能手写一个比专家好的分块启发式？离进化出来的、离逐形状最优还差多少？差在哪些形状、为什么？
      演示 1：你的文件（原文、读成的程序、死规则）和四个对手比：专家、按 M 查表、进化出的（和 04 同一个种子）、
              逐形状最优；两种划分（配对随机对半分；8B 训练、70B/8 测试），训练形状和测试形状分开算。
      演示 2：全部 88 个形状，每个形状上你的配置比最优慢几倍；和专家比，赢了几个、输了几个。
      演示 3：你输得最多的五个形状：你的配置和最优配置并排，用第 13 讲的 sched_lab.explain 拆开——
              哪一项时间最大、块数、每个 SM 放几个 CTA——看出为什么慢。
      --evolve：从你的文件出发进化，看进化循环在你的基础上又加了什么。

【关于数字】"硬件"是第 13 讲 sched_lab 的解析模型（默认是 H100 的参数，--gpu a100 换成 A100；不是在 GPU 上量的）；"进化出的"来自 evolve.MockLLM，
    没有真的语言模型。所有"比专家快几倍"都以 expert_heuristic.py 为分母（改了它，分母也跟着变）。
    下面每一句观察都由这次运行算出来、在代码里检验过；不成立的会印成【本次不成立】，并写出判据和这次的值。
【运行】python3 06_your_heuristic.py 你的文件.py          （不给文件就用 expert_heuristic.py）
       python3 06_your_heuristic.py 你的文件.py --evolve  （再从你的文件出发进化 1000 个提议；--quick 300 个）
       用时见 README 的"计时"；预算大时在标准错误上报进度，Ctrl-C 随时停下。
       其他旋钮：--seed 进化的种子（默认 0，和 04 一样），--budget 进化提出多少个程序。
       文件的写法和 expert_heuristic.py 一样：两条 EVOLVE-BLOCK 标记之间一个 choose_config(M, N, K)。
       写错了得到的信息和专家文件写错时一样：文件:行号、超了哪种资源、哪些形状走到那个分支。
【依赖】numpy；本目录的 evolve（它用 ../lecture13 的 sched_lab 和 ../lecture10 的 kernel_lab）；../lecture01 的 console。
"""

import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from runner import int_between, ensure_numpy, nonnegative_int, parser, progress, run, say, took  # noqa: E402

ensure_numpy()                      # 系统的 python3 没有 numpy：改用 make run 建的 .venv 重新运行，或者说一句怎么办

from console import LISTING_LINES, check, fmt, listing, print_header, print_note, print_numbered, print_observations, print_table  # noqa: E402
from console import WORD_BREAK as WB  # noqa: E402          # 表头里"要折优先在这里折"的记号（印出来没有它）
from console import apart_digits, print_try, print_with_command  # noqa: E402
from console import Charts, gpu_flag  # noqa: E402
from evolve import (EXPERT, LAYERS, TOKENS, Evaluator, TimeTable, all_shapes,  # noqa: E402
                    choose, evolve, geomean_speedup, oracle_speedup, per_m_table, render, simplify, split_shapes)
from evolve.loop import MAX_BUDGET, RUN_04, SEEDS_04  # noqa: E402  （04 默认运行的种子和预算：同样的两个数时，"进化出的"就是那一次）
from evolve.problem import (EXPERT_FILE, copy_suggestion, edit_example, edited_example, expert_changed_note, file_to_edit,  # noqa: E402
                            from_root, load_or_explain, source_or_none, source_view, split_names)
from evolve.program import dead_rules, equivalent, removed_lines  # noqa: E402
from sched_lab import GPU, SMS, explain, mma_parts  # noqa: E402

SEED = 0
BUDGET = 1000
QUICK_BUDGET = 300
MAX_NOTES = 10
OPPONENTS = ("专家", "按 M 查表", "进化出的", "逐形状最优")
WORST = 5            # 演示 3 看几个形状
LONG = 5000         # 预算到这么多，进化要跑好几秒：在标准错误上报进度
SAME = 1e-9          # 时间相对差小于它算一样快
SPLITS = split_names()                   # {"random": "配对随机对半分", "by_model": "8B 训练、70B/8 测试"}，从形状数据来

CHARTS = Charts()   # 图的出口：印到终端；--svg DIR 时每张图也写成 DIR 里的一个 SVG 文件


def pct(x, *bounds):
    """百分数；四舍五入后和 bounds 里的判据、0、100% 的大小关系不变（需要时多印一位：不会把 0.4% 印成 0%）。"""
    return fmt(x, 0, bounds, percent=True)


WARPS_ROW = "  warp、级数、group"      # 演示 3 的表里配置的第二行


read_program = load_or_explain          # (程序, "") 或 (None, 一句话)：和专家文件写错时的信息一样


def log_args(budget: int) -> dict:
    """长的进化每五分之一报一次进度（写到标准错误，标准输出不变）。"""
    return dict(log_every=budget // 5, log=progress) if budget >= LONG else {}


# ---------------------------------------------------------------- 演示 1

def shown(x: float) -> float:
    """加速比印成三位小数以后的值：谁比谁快按它判（读者从表里看到的就是它）。"""
    return float(f"{x:.3f}")


def obs_vs_expert(is_expert: bool, yours: dict, expert_name: str):
    """yours：划分 → (训练, 测试) 相对专家的加速比。"""
    if is_expert:
        return (f"这个文件在每个正整数 (M, N, K) 上都和 {expert_name} 选同一个配置（equivalent 判定的），所以它的分数处处是 1.000×。"
                "复制一份、改一改，再把新文件交给这个脚本（见\"可以试试\"）。")
    tests = {how: v[1] for how, v in yours.items()}
    ok = all(shown(t) > 1 for t in tests.values())      # 按印出来的三位小数比（审读报过：印着 1.000× 却说"你赢了专家"）
    txt = "；".join(f"{SPLITS[how]}的测试形状上 {t:.3f}×" for how, t in tests.items())
    return check(ok, f"你赢了专家：{txt}。测试形状是进化挑程序时没用过的那一半；你写规则时要是也只看训练形状"
                       "（演示 2、3 里不带 * 的），在测试形状上也赢才说明规则写的是规律——照着带 * 的形状改出来的赢，"
                       "说明不了这一点。",
                 "\"打败专家\"：两种划分的测试形状上都比专家快（大于 1.000×）", txt)


def obs_rank(scores: dict, is_expert: bool = False):
    """scores：方法 → 随机划分测试形状上的加速比（含 "yours"、"oracle"）。is_expert：这个文件和专家处处选同一个配置
    （学生报过：给没改过的专家打分，说"还没超过专家……"——它就是专家）。"""
    mine, top = scores["yours"], scores["oracle"]
    above = [k for k in ("expert", "per_m", "evolved") if shown(mine) > shown(scores[k])]   # 印出来的数分得出高低
    names = {"expert": "专家", "per_m": "按 M 查表", "evolved": "进化出的"}
    ok = mine <= top * (1 + SAME)
    share = round(mine, 3) / round(top, 3)              # 按印出来的两个数算：读者照着算得出同样的比例
    return check(ok, f"配对随机对半分的测试形状上，你拿到逐形状最优的 {pct(share)}（{mine:.3f}× / {top:.3f}×）"
                       + (f"，超过了{'、'.join(f'{names[k]}（{scores[k]:.3f}×）' for k in above)}。" if above
                          else "，还没超过按 M 查表和进化出的任何一个（它就是专家，上一条）。" if is_expert
                          else "，还没超过专家、按 M 查表和进化出的任何一个。")   # 审读报过：百分数一样（94%）时，看不出超过了谁
                       + "逐形状最优是上限：没有哪个启发式能在一个形状上比穷举出的最快配置更快。",
                 "任何启发式都不超过逐形状最优（上限）", f"你的测试分数 {mine:.3f}×，逐形状最优 {top:.3f}×")


def demo1_scores(path, program, table, evolved, seed, budget):
    print_header(f"演示 1：你的启发式和{'一二三四五六'[len(OPPONENTS) - 1]}个对手（{'、'.join(OPPONENTS)}）")
    view = source_view(path)
    print_note(f"{from_root(path)} 里两条标记之间的原文（左边是行号）：" if view.marked else
               f"{from_root(path)} 的原文（左边是行号；文件里没有 EVOLVE-BLOCK 标记，读的是整个文件）：")
    print_numbered(list(view.lines), LISTING_LINES, from_root(path))     # 贴进来几千行的表：只印开头，说一共几行
    for line, text in view.ignored:                         # 第二个 EVOLVE 块、标记外面的 def：和 04 读专家文件时一样提醒
        print_note(f"注意：第 {line} 行：{text}")
    simp = simplify(program)
    promoted = simp.default_line if simp.default_line != program.default_line else None   # if True：成了默认配置
    dead = [ln for ln in removed_lines(program) if ln != promoted]                       # 它自己走得到，不算死规则
    where = ", ".join(map(str, dead[:MAX_NOTES])) + ("……" if len(dead) > MAX_NOTES else "")
    said = ([f"其中 {len(dead)} 条规则是死的（第 {where} 行；走不到，或者去掉也一样）"] if dead else []) + (
        [f"第 {promoted} 行的规则没有条件，成了默认配置（最后的 return 用不到）"] if promoted else [])
    print()
    print_note(f"读成 {program.n_rules()} 条规则 + 默认配置；" + (
        f"{'；'.join(said)}，simplify 删掉后 {simp.n_rules()} 条。" if said else "没有死规则。"))
    notes = dead_rules(program)
    for line, text in notes[:MAX_NOTES]:                    # 和读专家文件时给的提醒一样（evolve.program.dead_rules）
        print_note(f"第 {line} 行：{text}", "  ")
    if len(notes) > MAX_NOTES:
        print_with_command(f"……还有 {len(notes) - MAX_NOTES} 条同样的提醒没有印出来，逐条列出：",
                           f"python3 lecture14/01_heuristic_as_code.py --heuristic {shlex.quote(from_root(path))}", "  ")
    rows, yours, scores = [], {}, {}
    for how, label in SPLITS.items():
        train, test = split_shapes(all_shapes(), how)
        pmt = per_m_table(train, table)
        o_tr, o_te = oracle_speedup(train, table), oracle_speedup(test, table)
        for key, name, prog in (("yours", "你的启发式", program), ("expert", "专家启发式", EXPERT),
                                ("per_m", f"按 M 查表（{pmt.n_rules()} 条规则）", pmt),
                                ("evolved", f"进化出的（种子 {seed}、{budget} 个提议）", evolved[how])):
            tr, te = geomean_speedup(prog, train, table), geomean_speedup(prog, test, table)
            rows.append([label if key == "yours" else "", name, f"{tr:.3f}×", f"{te:.3f}×", pct(te / o_te)])
            if key == "yours":
                yours[how] = (tr, te)
            if how == "random":
                scores[key] = te
        rows.append(["", "逐形状最优（上限）", f"{o_tr:.3f}×", f"{o_te:.3f}×", "100%"])
        if how == "random":
            scores["oracle"] = o_te
    print_table(["划分", "方法", "训练形状（比专家快）", "测试形状（比专家快）", f"测试上{WB}占最优的"], rows, keys=2)
    run_04 = f"04{gpu_flag()}（其余参数默认）" if gpu_flag() else "04 默认运行"
    same_as_04 = ("种子 {}、{} 个提议，和 {}的演示 2 / 3 里的那一次是同一次进化。".format(*RUN_04, run_04)
                  if (seed, budget) == RUN_04 else
                  # 学生报过：--seed 1 时说"不是同一次"，可 04 演示 3 跑了种子 0–4，它的中位数正是这一次的分数
                  f"这次是种子 {seed}、{budget} 个提议：{run_04}的演示 3 每种划分跑种子 0–{SEEDS_04 - 1}，这是其中一次"
                  "（那里印的是几次的中位数和最小–最大，不是这一次本身）。"
                  if budget == RUN_04[1] and 0 <= seed < SEEDS_04 else
                  f"这次是种子 {seed}、{budget} 个提议；{run_04}用种子 {RUN_04[0]}、{RUN_04[1]} 个提议，"
                  "所以和它印的不是同一次进化。")
    print_note(f"（进化出的：从专家出发、在这一种划分的训练形状上进化；{same_as_04}"
               "\"测试上占最优的\" 是两个加速比之比：这个方法在测试形状上的加速比 ÷ 逐形状最优的加速比，不是形状的比例。"
         f"你的启发式不用训练，训练 / 测试只是把 {len(all_shapes())} 个形状分成两半来报；按 M 查表和进化出的只看过训练形状。）")
    same = equivalent(program, EXPERT)
    return [obs_vs_expert(same, yours, os.path.relpath(EXPERT_FILE)), obs_rank(scores, same)]


# ---------------------------------------------------------------- 演示 2

def worst_first(ratios: dict) -> list:
    """形状按"比最优慢几倍"从大到小排，一样慢的按形状的顺序：演示 2 说的"离最优最远的"和演示 3 拆的第一个是同一个
    （审读时报过：全都一样慢时，演示 2 按字典的顺序挑了一个，演示 3 按形状的顺序从另一个开始）。"""
    return sorted(ratios, key=lambda s: (-ratios[s], s))


def obs_per_shape(wins: int, losses: int, ties: int, n: int, worst_label: str, worst_ratio: float):
    ok = wins + losses + ties == n
    far = (f"离最优最远的是 {worst_label}（慢 {worst_ratio:.2f}×）——演示 3 从它开始拆。" if worst_ratio > 1 + SAME else
           "每个形状上你的配置都和最优一样快——演示 3 没有要拆的。")
    return check(ok, f"和专家逐个形状比：你快的 {wins} 个，慢的 {losses} 个，一样快的 {ties} 个（共 {n} 个）。{far}",
                 f"快、慢、一样的形状加起来是 {n} 个", f"快 {wins}、慢 {losses}、一样 {ties}")


def demo2_per_shape(program, table):
    print_header(f"演示 2：全部 {len(all_shapes())} 个形状——你的配置比这个形状的最优慢几倍")
    train, _ = split_shapes(all_shapes())
    seen = {(s.name, s.M) for s in train}
    rows, ratios, theirs = [], {}, []
    wins = losses = ties = 0
    for name in LAYERS:
        cells = [name]
        for M in TOKENS:
            s = next(x for x in all_shapes() if x.name == name and x.M == M)
            t, e, o = table.time(choose(program, s), s), table.time(choose(EXPERT, s), s), table.oracle(s)[1]
            ratios[s] = t / o
            theirs.append(e / o)
            wins += t < e * (1 - SAME)
            losses += t > e * (1 + SAME)
            ties += abs(t / e - 1) <= SAME
            cells.append(f"{t / o:.2f}" + (" " if (name, M) in seen else "*"))   # 空格占 * 的位置：小数点对齐
        rows.append(cells)
    print_table(["投影 \\ M"] + [str(m) for m in TOKENS], rows)
    print_note("（1.00 就是这个形状的最优；带 * 的是配对随机对半分的测试形状。）")
    # 刻度和 04 演示 1 专家的那张一样（专家的最快、最慢），学生的数超出去才放宽：同样深的格子慢得一样多（学生报过：
    # 刻度跟着这次的最大值走，没变的 prefill 格子在他的图里比专家的图里深，像是他改坏了）
    span = (min(min(theirs), min(ratios.values())), max(max(theirs), max(ratios.values())))
    same_scale = span == (min(theirs), max(theirs))
    CHARTS.heatmap("06_demo2_yours_vs_optimum", f"你的配置比逐形状最优慢几倍：全部 {len(ratios)} 个形状（就是上表，深浅代替数字；"
                   + ("刻度和 04 演示 1 专家的那张一样，同一格的深浅可以比）" if same_scale else
                      "你有的形状比专家最慢的还慢，刻度放宽了：深浅不能和 04 演示 1 那张逐格比）"),
                   list(LAYERS), [str(M) for M in TOKENS],
                   [[next(r for s, r in ratios.items() if (s.name, s.M) == (name, M)) for M in TOKENS] for name in LAYERS],
                   fmt="{:.2f}", x_label="M", y_label="投影", log=True, span=span,
                   slide=f"你的配置比逐形状最优慢几倍（全部 {len(ratios)} 个形状；"
                         + ("刻度和 04 专家那张一样）" if same_scale else "刻度放宽了，不能和 04 那张逐格比深浅）"),
                   marks={(i, j) for i, name in enumerate(LAYERS) for j, M in enumerate(TOKENS) if (name, M) not in seen},
                   marks_note="带 * 的是配对随机对半分的测试形状。")
    worst = worst_first(ratios)[0]
    return [obs_per_shape(wins, losses, ties, len(ratios), worst.label(), ratios[worst])], ratios


# ---------------------------------------------------------------- 演示 3

MMA_SHARE = 0.1     # "算"比最优多出的时间至少是两边总时间差的这么多，张量核效率才算一个慢的理由


def mma_matters(mine: dict, best: dict) -> bool:
    """张量核效率低是不是这个形状慢的理由：效率比最优低，"算"这一项比最优的长，而且长出来的至少是总时间差的
    MMA_SHARE。助教报过：A100 上效率 0.50 对 0.94，可"算"是 23.2 对 24.7 µs，比最优还短；学生报过：README 练习的
    64×64×256 在 8B gate_up M=128 上慢 71 µs，"算"只多 1.1 µs（慢在"搬"），06 却说"张量核吃不饱"——会去改 warp 块，白改。"""
    core = "算（张量核）"
    extra = mine["parts_us"][core] - best["parts_us"][core]
    return (mine["mma_eff"] < best["mma_eff"] and extra > 0
            and extra >= MMA_SHARE * (mine["time_us"] - best["time_us"]))


def reasons(mine: dict, best: dict, mine_cfg, best_cfg, digits: int = 1) -> list[str]:
    """从两份 explain 里读出为什么慢：每一句都是比较两个算出来的数（微秒印 digits 位小数，和上面的表一样）。张量核效率低时说清是哪个因子
    （sched_lab.mma_parts：旧的 MMA 路径，还是每个 warp 的块太小；效率是两个因子的积，低了至少一个因子低）。"""
    out = []
    big = max(mine["judged_us"], key=mine["judged_us"].get)       # 和 explain 判瓶颈一样："搬"取搬和 L2 总里大的
    how = "（按全芯片的 L2 总量算）" if mine["judged_us"][big] > mine["parts_us"][big] else ""
    theirs = "（按 L2 总量算）" if best["judged_us"][big] > best["parts_us"][big] else ""   # 最优那边也可能是 L2 总
    out.append(f"你的时间里最大的一项是\"{big}\"{how}：{mine['judged_us'][big]:,.{digits}f} µs，"
               f"最优配置的同一项{theirs or ' '}{best['judged_us'][big]:,.{digits}f} µs")     # "）"后面不空格
    if mine["tiles"] < SMS and best["tiles"] > mine["tiles"]:
        out.append(f"你只切出 {mine['tiles']} 个块，{SMS} 个 SM 有 {SMS - mine['tiles']} 个闲着；最优切出 {best['tiles']} 个")
    if mine["tiles_per_sm"] > best["tiles_per_sm"]:
        out.append(f"最忙的 SM 要做 {mine['tiles_per_sm']} 个块（最优 {best['tiles_per_sm']} 个）")
    if mma_matters(mine, best):
        why, a, b = [], mma_parts(mine_cfg), mma_parts(best_cfg)
        if a["path"] < b["path"]:
            why.append(f"你的配置走旧的 MMA 路径（BM 不是 64 的倍数或 warp 数不是 4 的倍数，效率 ×{a['path']:.2f}）")
        if a["warp_tile"] < b["warp_tile"]:
            why.append(f"每个 warp 的块小（{a['acc_per_warp']:,.0f} 个累加器，最优 {b['acc_per_warp']:,.0f} 个），"
                       f"张量核吃不饱（warp 块效率 {a['warp_tile']:.2f}，最优 {b['warp_tile']:.2f}）")
        both = f"（张量核效率合计 {mine['mma_eff']:.2f}，最优 {best['mma_eff']:.2f}）" if len(why) > 1 else ""
        out.append("；".join(why) + both)
    if mine["dram_MB"] > best["dram_MB"] * 1.05:
        out.append(f"显存流量 {mine['dram_MB']:,.1f} MB，最优只要 {best['dram_MB']:,.1f} MB（块小、重用少）")
    return out


def obs_explain(n_checked: int, n_bigger: int):
    ok = n_checked > 0 and n_bigger == n_checked
    return check(ok, f"这 {n_checked} 个形状上，你的时间里最大的那一项都比最优配置的同一项大：慢就慢在那一项上。"
                       "改哪条规则，先看它管的形状卡在哪一项——这就是 04 里 targeted 修改用的\"内核常识\"。",
                 "你输得最多的每个形状上，你的时间里最大的那一项都比最优配置的同一项大",
                 f"{n_checked} 个形状里有 {n_bigger} 个是这样",
                 [("至少拆开了一个形状", n_checked > 0), ("每个拆开的形状都是这样", n_bigger == n_checked)])


def ratio_digits(pairs) -> int:
    """演示 3 的表里微秒印几位小数（1 到 4，所有形状一样）：每个形状用印出来的两个时间相除，得到的正是它标题里印的
    "慢几倍"（两位小数）。pairs：[(你的 µs, 最优 µs, 倍数)]。学生报过：标题说慢 3.39×，表里 56.1 µs ÷ 16.5 µs 却是
    3.40；后来又报：各个形状各取各的位数，同样的时间这里印 56.10、那里印 56.1，像是出了错。"""
    return next((d for d in range(1, 5) if all(f"{round(a, d) / round(b, d):.2f}" == f"{r:.2f}" for a, b, r in pairs)), 4)


def demo3_explain(program, table, ratios):
    worst = [s for s in worst_first(ratios) if ratios[s] > 1 + SAME][:WORST]     # 只拆真的输了的
    if not worst:
        print_header("演示 3：拆开看输的形状——这次没有")
        print_note(f"你的配置在全部 {len(ratios)} 个形状上都和最优一样快（相对差不到 {SAME:g}），没有要拆的。")
        return []
    print_header(f"演示 3：你输得最多的 {len(worst)} 个形状，拆开看（第 13 讲的 sched_lab.explain）")
    print_note("四项是最忙的那个 SM 花在每件事上的时间；L2 总是全芯片 L2 的总流量 / L2 带宽，比\"搬\"大时"
               "\"搬\"这一类按它算（判瓶颈、下面的\"最大的一项\"都这样算，和第 13 讲一样）。标着\"测试形状 *\"的"
               "是配对随机对半分的测试形状（和演示 2 的表一样）。")
    train = set(split_shapes(all_shapes())[0])           # 和演示 2 的表一样标出测试形状（*）
    n_bigger = n_checked = 0
    configs = {s: (choose(program, s), table.oracle(s)[0]) for s in worst}      # 你的、最优的
    told = {s: (m, b, explain(m, s.M, s.N, s.K), explain(b, s.M, s.N, s.K)) for s, (m, b) in configs.items()}
    d = ratio_digits([(e["time_us"], f["time_us"], ratios[s]) for s, (_, _, e, f) in told.items()])
    us = lambda v: f"{v:,.{d}f} µs"                                                        # noqa: E731
    if d > 1:
        print_note(f"（时间都印 {d} 位小数：每个形状表里的两个时间相除，正好是它标题里的\"慢几倍\"。）")
    for s in worst:
        mine_cfg, best_cfg, mine, best = told[s]
        # 配置分两行：一行放得下时两列配置（36 列宽）加标签要 98 列，80 列的终端里表被拆成"你的""最优"两块
        rows = [["配置", f"{mine_cfg.BM}×{mine_cfg.BN}×{mine_cfg.BK}", f"{best_cfg.BM}×{best_cfg.BN}×{best_cfg.BK}"],
                [WARPS_ROW, *(f"{c.warps} warp / {c.stages} 级 / group {c.group}" for c in (mine_cfg, best_cfg))],
                ["时间", us(mine["time_us"]), us(best["time_us"])],
                ["瓶颈（explain 判的）", mine["bound"], best["bound"]]]
        rows += [[f"  {k}", us(v), us(best["parts_us"][k])] for k, v in mine["parts_us"].items()]
        rows += [["  L2 总（全芯片）", us(mine["l2_total_us"]), us(best["l2_total_us"])]]
        rows += [["块数", f"{mine['tiles']:,}", f"{best['tiles']:,}"],
                 ["最忙的 SM 做几个块", str(mine["tiles_per_sm"]), str(best["tiles_per_sm"])],
                 ["每个 SM 同时放几个 CTA", str(mine["ctas_per_sm"]), str(best["ctas_per_sm"])],
                 ["显存流量", f"{mine['dram_MB']:,.1f} MB", f"{best['dram_MB']:,.1f} MB"]]
        tested = "" if s in train else "；测试形状 *"
        print(f"\n{s.label()}（N={s.N}, K={s.K}{tested}）：你的比最优慢 {ratios[s]:.2f}×")
        print_table(["", "你的", "最优"], rows)
        big = max(mine["judged_us"], key=mine["judged_us"].get)
        n_checked += 1
        n_bigger += mine["judged_us"][big] > best["judged_us"][big]
        print_note("为什么：" + "；".join(reasons(mine, best, mine_cfg, best_cfg, d)) + "。")
    return [obs_explain(n_checked, n_bigger)]


# ---------------------------------------------------------------- --evolve

def obs_evolve(start: float, end: float, from_expert: float, at_top: bool = False):
    """at_top：你的文件在每个形状上都已经是最优（分数就是上限），进化不可能找到更好的。"""
    ok = end >= start
    # 高于、低于按印出来的三位小数比；三位小数一样、其实不一样时，多印几位把两个数都说出来（审读报过：
    # mixed.py --evolve --quick --seed 2 说"从专家出发是 1.229×，从你这里出发的结果低于它"，前半句刚印过"涨到 1.229×"）
    if shown(end) != shown(from_expert):
        rel = "高于它" if shown(end) > shown(from_expert) else "低于它"
    elif abs(end / from_expert - 1) <= SAME:
        rel = "等于它"
    else:
        d = apart_digits([end, from_expert], 4)
        rel = (f"和它印到三位小数一样，多印几位才分得出{'高' if end > from_expert else '低'}一点"
               f"（{end:.{d}f}× 对 {from_expert:.{d}f}×）")
    # 一位同学报过：从 04 进化出的最好程序出发，一次也没刷新，还说"从 1.256× 涨到 1.256×"
    moved = (f"从 {start:.3f}× 涨到 {end:.3f}×" if f"{end:.3f}" != f"{start:.3f}" else
             # 审读报过：每个形状都已经最优的文件也说"这个预算里一个更好的也没找到"，像是多给预算就能找到
             f"还是 {end:.3f}×：你的文件在每个形状上都已经是最优，分数就是上限，进化找不到更好的" if at_top else
             f"还是 {end:.3f}×，这个预算里一个更好的也没找到")
    return check(ok, f"从你的启发式出发，训练形状上{moved}（进化的最好分数只升不降）；"
                       f"同样的种子和预算从专家出发是 {from_expert:.3f}×，从你这里出发的结果{rel}。",
                 "进化以后的最好分数不低于起点", f"起点 {start:.3f}×，进化后 {end:.3f}×")


def demo_evolve(program, table, budget, seed, evolved_score, at_top=False):
    print_header(f"--evolve：从你的启发式出发进化（种子 {seed}，{budget} 个提议，配对随机对半分的训练形状）")
    train, test = split_shapes(all_shapes())
    ev = Evaluator(train, table)
    if budget >= LONG:
        progress(f"从你的启发式出发进化（{budget} 个提议）……")
    out = evolve(ev, budget, seed=seed, start=program, **log_args(budget))
    best, res = out["best"]
    start = out["improvements"][0][1]
    simp = simplify(best)
    before = {(r.conds, r.config) for r in simplify(program).rules}
    added = [r for r in simp.rules if (r.conds, r.config) not in before]
    print(f"训练形状：{start:.3f}× → {res['score']:.3f}×；测试形状：{geomean_speedup(program, test, table):.3f}× → "
          f"{geomean_speedup(best, test, table):.3f}×。最好分数刷新了 {len(out['improvements']) - 1} 次。")
    print(f"\n进化出的程序（删掉死规则后，{simp.n_rules()} 条规则；其中 {len(added)} 条是你的程序里没有的）：\n" + listing(render(simp)) + "\n")
    return [obs_evolve(start, res["score"], evolved_score, at_top)]


def parse_args(argv):
    ap = parser("给你自己写的启发式打分（第 14 讲 06）。")
    ap.add_argument("file", nargs="?", default=EXPERT_FILE, metavar="FILE",
                    help="你的启发式文件（写法和 expert_heuristic.py 一样；默认就是 expert_heuristic.py）")
    ap.add_argument("--evolve", action="store_true", help="再从你的文件出发进化")
    ap.add_argument("--seed", type=nonnegative_int, default=SEED, help=f"进化的种子，非负整数（默认 {SEED}，和 04 一样）")
    ap.add_argument("--budget", type=int_between(1, MAX_BUDGET), default=None,
                    help=f"进化提出多少个程序，1 到 {MAX_BUDGET:,} 的整数（默认 {BUDGET}；--quick 时 {QUICK_BUDGET}）")
    ap.add_argument("--quick", action="store_true", help=f"预算 {QUICK_BUDGET}")
    Charts.add_argument(ap)
    a = ap.parse_args(argv)
    CHARTS.reset(Charts.check_dir(ap, a.svg))
    a.budget = a.budget if a.budget is not None else (QUICK_BUDGET if a.quick else BUDGET)
    return a


def run_demos(a, program) -> list:
    """演示按顺序印出来，返回所有观察（测试从这份数据数有几句不成立）。"""
    print_note(f"设置：{from_root(a.file)} --seed {a.seed} --budget {a.budget}"      # 路径可能很长：按宽度折行
               + (" --evolve" if a.evolve else "") + gpu_flag())
    changed = expert_changed_note()                      # 你比的"专家"是改过的那份：练习的提示说的是讲义的那份
    if changed:
        print_note(changed)
    table = a.table = TimeTable()                        # "可以试试"先替学生算那一改的分数时也用它
    evolved, evolved_score = {}, None
    for how in SPLITS:                                   # 和 04 一样：从专家出发、同一个种子和预算
        train, _ = split_shapes(all_shapes(), how)
        if a.budget >= LONG:
            progress(f"从专家出发进化（{SPLITS[how]}，{a.budget} 个提议）……")
        best, res = evolve(Evaluator(train, table), a.budget, seed=a.seed, **log_args(a.budget))["best"]
        evolved[how] = best
        if how == "random":
            evolved_score = res["score"]
    out = print_observations(demo1_scores(a.file, program, table, evolved, a.seed, a.budget))
    a.ahead = still_ahead(program, table, evolved)       # "可以试试"说"再往上追"谁：只说还在你前面的
    obs, ratios = demo2_per_shape(program, table)
    a.at_top = all(r <= 1 + SAME for r in ratios.values())     # 每个形状上都已经是最优："可以试试"不再说往上追
    out += print_observations(obs)
    obs = demo3_explain(program, table, ratios)
    if obs:
        out += print_observations(obs)
    if a.evolve:
        out += print_observations(demo_evolve(program, table, a.budget, a.seed, evolved_score, a.at_top))
    return out


def edit_preview(program, table, text=None) -> tuple[str, bool]:
    """"比如把 if M <= 16 改成 if M <= 64"那一改，先替学生算出两种划分的测试分数：这一改不一定更好（文档审读报过：
    这条建议挂着"练习有提示"，照着改，随机划分上反而输给了专家）。返回 (那半句话, 两种划分是不是都变慢了)；
    不是那种改法时是 ("", False)。"""
    edited = edited_example(program, text)
    if edited is None:
        return "", False
    parts, moves = [], set()
    for how, label in SPLITS.items():
        _, test = split_shapes(all_shapes(), how)
        before, after = geomean_speedup(program, test, table), geomean_speedup(edited, test, table)
        parts.append(f"“{label}”从 {before:.3f}× 变成 {after:.3f}×")      # 划分的名字里有顿号：加引号、用分号隔开
        moves.add("快" if round(after, 3) > round(before, 3) else "慢" if round(after, 3) < round(before, 3) else "平")
    if "慢" not in moves:
        said = "两种划分都快了" if moves == {"快"} else "没有一边变慢" if "快" in moves else "分数没变"
    else:
        said = "两种划分反而都慢了" if moves == {"慢"} else "一边快一边慢，不一定更好"
    return "先替你算过了，这一改让测试形状上" + "；".join(parts) + f"：{said}；", moves == {"慢"}


def still_ahead(program, table, evolved) -> list[str]:
    """演示 1 的表里，至少在一种划分的测试形状上比你快（按印出来的三位小数）的对手：按 M 查表、进化出的程序。
    审读报过：从 04 进化出的程序抄来的文件两种划分都不比它们慢（1.282× 对 1.282×、1.261×；1.281× 对 1.209×、1.232×），
    "可以试试"还说"想再往上追按 M 查表和进化出的程序"。"""
    ahead = []
    for name, prog in (("按 M 查表", None), ("进化出的程序", evolved)):
        for how in SPLITS:
            train, test = split_shapes(all_shapes(), how)
            theirs = per_m_table(train, table) if prog is None else prog[how]
            if shown(geomean_speedup(theirs, test, table)) > shown(geomean_speedup(program, test, table)):
                ahead.append(name)
                break
    return ahead


def beats_expert(program, table) -> bool:
    """两种划分的测试形状上都比专家快（和演示 1 观察 1 的判据一样）。"""
    return all(shown(geomean_speedup(program, split_shapes(all_shapes(), how)[1], table)) > 1 for how in SPLITS)


def edit_suggestion(a, program) -> tuple[str, str]:
    """"改一改再打分"的建议：改法的例子、先替学生算好的那一改的分数、README 的提示（已经赢了专家时说往上追）。"""
    ahead = getattr(a, "ahead", None)                    # None：没跑演示 1（不知道谁还在前面）
    if getattr(a, "at_top", False):                     # 审读报过：88 个形状都已经是最优的文件，还说"再往上只剩逐形状
        #                                                 最优……一条一条加规则"——它就在上限上，加规则快不了
        return (f"在编辑器里打开 {file_to_edit(a.file)} 改：你的配置在全部 {len(all_shapes())} 个形状上都已经和逐形状最优"
                "一样快，分数到了上限，再加规则也快不了；试试删掉几条规则、把条件合并得更宽，看用更少的规则能保住多少分数"
                "——规则越少，越像规律而不是一张表。再打分：\"你的启发式\"那几行、演示 2 的输赢和演示 3 的形状都会跟着变：",
                f"python3 lecture14/06_your_heuristic.py {file_to_edit(a.file)}")
    if not beats_expert(program, a.table):
        hint = "怎样改得赢，README 的\"打败专家\"练习有提示"      # 学生报过：已经赢了，还说"怎样改得赢"
    elif ahead == []:
        hint = ("两种划分的测试形状上你都已经不比按 M 查表和进化出的程序慢；再往上只剩逐形状最优（上限），"
                "README 的\"打败专家\"练习第 4 步说怎样一条一条加规则")
    else:
        hint = f"想再往上追{'和'.join(ahead or ['按 M 查表', '进化出的程序'])}，README 的\"打败专家\"练习最后两步有提示"
    # 学生报过：--gpu a100 时照 README 那段改，BK=256 的配置在 A100 上启动不了，06 却照样指过去
    h100 = ("；那段是照 H100 写的，它的配置在 " + GPU.short + " 上不一定启动得了：先拿第 10 讲的 01_config_space.py "
            "加上同样的 --gpu 查一查" if smaller_than_h100() else "")
    text = source_or_none(a.file)                        # 建议照文件里写的说（if M < 17: 不说成"把 if M <= 16 改成"）
    preview, slower = edit_preview(program, a.table, text)
    example = edit_example(program, text=text)
    if slower:                                           # 审读报过：算出来两边都慢了，还建议这么改
        example, preview = "比如挪一条规则的阈值（if M <= 后面的数）、换一个配置，或者再加一条规则", ""
    return (f"在编辑器里打开 {file_to_edit(a.file)} 改，{example}（{preview}{hint}{h100}），"
            "再打分：\"你的启发式\"那几行、演示 2 的输赢和演示 3 的形状都会跟着变：",
            f"python3 lecture14/06_your_heuristic.py {file_to_edit(a.file)}")


def evolve_suggestion(a) -> tuple[str, str]:
    """"再进化一次"的建议，跟着这次做了什么走：没进化过就先小预算；小预算进化过就给默认预算；都做过就换种子。"""
    cmd = f"python3 lecture14/06_your_heuristic.py {file_to_edit(a.file)} --evolve"
    if getattr(a, "at_top", False):                 # 审读报过：每个形状都已经最优的文件，还建议"看进化还能加什么""多给
        #                                             进化一些预算，看分数还能不能涨"——从它出发的进化一步也涨不了
        return ("你的文件已经在上限上，从它出发的进化涨不了；看从专家出发的进化离上限有多近（04 的演示 2、3）：",
                "python3 lecture14/04_alphaevolve_tiling.py")
    if not a.evolve:
        return f"看进化在你的启发式上还能加什么（预算 {QUICK_BUDGET}）：", cmd + " --quick"
    if a.budget < BUDGET:                           # 种子照这次的（审读时报过：--seed 2 的运行建议的命令丢了种子，一下改了两样）
        return f"多给进化一些预算（{BUDGET} 个提议），看分数还能不能涨：", cmd + (f" --seed {a.seed}" if a.seed != SEED else "")
    return "换一个种子再进化，看进化出的程序变不变：", f"{cmd} --seed {a.seed + 1}" + (
        f" --budget {a.budget}" if a.budget != BUDGET else "")


def smaller_than_h100() -> bool:
    """这块 GPU 每个 CTA 的共享内存比 H100 少：照 H100 写的配置（README 练习的提示）在这里可能启动不了。助教报过：
    B200 上所有配置都启动得了，06 照样说"不一定启动得了"。"""
    import gpus
    return GPU.smem_per_block < gpus.GPUS[gpus.DEFAULT].smem_per_block


def main(argv=None):
    a = parse_args(argv)
    program, error = read_program(a.file)
    if program is None:
        say(error)
        sys.exit(1)
    start = time.perf_counter()
    run_demos(a, program)
    print_try([
        *copy_suggestion("复制一份专家启发式，当作你的起点（只做一次：再做会覆盖你改过的文件；下面的命令都在仓库根目录"
                         "运行）：", a.file),
        edit_suggestion(a, program),
        evolve_suggestion(a),
    ])
    CHARTS.report()
    took(start)


if __name__ == "__main__":
    run(main)
