"""
=============================================================================
CS349E · 第 14 讲 · 01_heuristic_as_code.py —— 被进化的是什么：一段挑分块配置的代码
=============================================================================

【这个脚本要回答的问题】
    AlphaEvolve 进化的不是一张"形状 → 配置"的表，而是一段代码。这段代码长什么样、怎样被读成一个可以比较、
    可以化简的结构？为什么要进化代码，而不是一张表？
      演示 1：专家启发式——学生改的那个文件、它解析成的 Program，以及 choose 在几个形状上走哪条分支、给出哪个配置。
      演示 2：为什么是代码——同一段代码直接回答没见过的形状（M = 3000、405B/8 的新投影），逐形状的表里没有这一项；
              程序的空间（每个分支的配置数 × 阈值）和每个形状 3744 个配置比有多大。
      演示 3：render / parse 来回一趟不变；simplify 删掉死规则（被挡住的、空区域的、去掉也一样的），
              证明的想法一句话：每条规则管一个从 (1, 1, 1) 开始的盒子——第 12 讲的删死代码。

【关于数字】时间来自第 13 讲 sched_lab 的解析模型（默认是 H100 的参数，--gpu a100 换成 A100；不是在 GPU 上量的）。这个脚本不进化，也不用 LLM；
    程序个数是按公式数出来的写法个数，不是跑出来的。下面每一句观察都由这次运行算出来、在代码里检验过；
    不成立的会印成【本次不成立】，并写出判据和这次的值。
【出处】"AlphaEvolve 进化的是一段代码、用 LLM 提修改、用程序库挑父程序"出自 AlphaEvolve 白皮书（arXiv 2506.13131）
    第 2 节（方法：提示、LLM 生成 SEARCH/REPLACE 修改、评估、程序库）和 3.3.2 节（进化 Gemini 内核的分块启发式）。
【运行】python3 01_heuristic_as_code.py                  （在本目录；在仓库根目录是 python3 lecture14/01_heuristic_as_code.py）
       python3 01_heuristic_as_code.py --shape 3000 2304 16384   （在演示 1 的表里多追踪一个形状 M N K）
       python3 01_heuristic_as_code.py --heuristic 文件        （演示 1 换成别的启发式文件，写法和 expert_heuristic.py 一样）
       用时见 README 的"计时"；不进化，几个演示都很快。
【依赖】numpy；本目录的 evolve（它用 ../lecture13 的 sched_lab 和 ../lecture10 的 kernel_lab）；../lecture01 的 console。
       接下来看 02_llm_proposal.py（一次提议的慢动作）。
"""

import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from runner import ensure_numpy, int_between, parser, run, say, took  # noqa: E402

ensure_numpy()                      # 系统的 python3 没有 numpy：改用 make run 建的 .venv 重新运行，或者说一句怎么办

from console import check, print_header, print_note, print_observations, print_table, print_try  # noqa: E402
from console import LISTING_LINES, display_width, print_numbered, wrap_width  # noqa: E402
from console import Charts, gpu_flag  # noqa: E402
from evolve import (EXPERT, LAYERS, TOKENS, VALID, Config, Program, Rule, Shape,  # noqa: E402
                    TimeTable, all_shapes, choose, parse, per_m_table, render, simplify, split_shapes)
from evolve.problem import (EXPERT_FILE, copy_suggestion, distinct_sizes, file_to_edit, is_expert_file,  # noqa: E402
                            load_or_explain, source_view)
from sched_lab import MAX_DIM  # noqa: E402
from evolve.program import (NO_BOUND, branch_index, dead_rules, equivalent,  # noqa: E402
                            empty_lines, removed_lines, unreachable_lines)

# 没见过的形状：M = 3000 不在 11 个 M 里；405B/8 是 Llama-3 405B 按 8 路张量并行切开的投影（hidden 16384、
# Hq 128、Hkv 8、intermediate 53248），它的 N、K 在 88 个形状里都没有（助教往 llama_shapes.py 里加了 405B/8 的话，
# 换一个数据里没有的投影：演示 2 的观察会标【本次不成立】，tests/test_printed_numbers_01.py 也说这里要换）
NEW_LAYERS = {"405B/8 qkv": ((128 + 2 * 8) * 128 // 8, 16384), "405B/8 gate_up": (2 * 53248 // 8, 16384)}
NEW_SHAPES = (Shape("8B gate_up", 3000, *LAYERS["8B gate_up"]), Shape("405B/8 qkv", 64, *NEW_LAYERS["405B/8 qkv"]),
              Shape("405B/8 gate_up", 5000, *NEW_LAYERS["405B/8 gate_up"]))
TRACE = (("8B qkv", 1), ("8B gate_up", 16), ("70B/8 qkv", 128), ("8B down", 8192))
MAX_RULES = 8       # MockLLM 最多写到 8 条规则（evolve.mock_llm.MAX_RULES）

# 演示 3 的"学生写法"：elif / else、< 、位置参数、注释——parse 都认，render 写回统一的格式
STUDENT_SRC = """\
def choose_config(M, N, K):
    if M < 17:                                   # decode：读权重
        return Config(16, 64, 128, 4, 4, 1)
    elif M <= 512 and N <= 4096:
        return Config(BM=64, BN=128, BK=64, warps=4, stages=4, group=8)
    else:
        return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
"""

A, B, C = Config(16, 64, 128, 4, 4, 1), Config(64, 128, 64, 4, 4, 8), Config(128, 128, 64, 4, 3, 8)
D, E = Config(32, 128, 128, 4, 4, 8), Config(64, 64, 128, 4, 4, 8)
MAX_RULES_SHOWN = LISTING_LINES // 2    # 读成的规则最多印几条（一条印两行）；文件的原文印 LISTING_LINES 行，死规则的行号全都列出
MAX_STEPS = 12              # "从上往下试条件"最多列几条、分支和死规则的行号最多逐个说几个（多了只数个数）
MAX_BRANCHES = 6            # 分支多时，观察 1 最多逐个说几个有形状走到的分支（其余的合起来说）

# 演示 3 的带死规则的程序：每条规则后面的注释是它的命运，由 classify() 算出来再和 simplify 对照
DEAD_PROGRAM = Program((
    Rule((("M", 16),), A),                       # 1 活
    Rule((("M", 8),), B),                        # 2 被 1 挡住：盒子 M≤8 在 M≤16 里
    Rule((("M", 0),), B),                        # 3 空区域：没有正整数 M ≤ 0
    Rule((("M", 64), ("N", 2048)), D),           # 4 活
    Rule((("M", 32),), E),                       # 5 活
    Rule((("M", 32), ("N", 4096)), B),           # 6 被 5 挡住（它也在 4 ∪ 5 里：并集盖住它，当且仅当某一个盖住它）
    Rule((("M", 64), ("N", 4096)), B),           # 7 活：角 (64, 4096) 既不在 4 里也不在 5 里
    Rule((("M", 4096),), C),                     # 8 去掉也一样：它给的就是默认配置
), C)

CHARTS = Charts()   # 这个脚本没有图；--svg DIR 和别的脚本一样接受，只是不写文件（标准错误上说一声）


def cond_text(conds) -> str:
    return " and ".join(f"{f} <= {t}" for f, t in conds) or "True"


def cfg_text(c: Config) -> str:
    return f"{c.BM}×{c.BN}×{c.BK} / {c.warps} warp / {c.stages} 级 / group {c.group}"


# ---------------------------------------------------------------- 演示 1

def trace(program: Program, M: int, N: int, K: int) -> tuple[list[str], int, Config]:
    """自己从上往下走一遍（不调用 choose）：每条规则的条件成立不成立，第几个分支给出配置。"""
    steps = []
    for i, r in enumerate(program.rules):
        ok = all({"M": M, "N": N, "K": K}[f] <= t for f, t in r.conds)
        steps.append(f"{cond_text(r.conds)}？{'是' if ok else '否'}")
        if ok:
            return steps, i, r.config
    steps.append("都不成立 → 默认")
    return steps, len(program.rules), program.default


def steps_text(steps: list[str]) -> str:
    """"从上往下试条件"那一格：几百条规则的表不一条条列，只列开头几条和最后两条，中间说试了几条（都不成立）。"""
    if len(steps) <= MAX_STEPS:
        return "；".join(steps)
    return "；".join(steps[:MAX_STEPS - 2] + [f"……中间 {len(steps) - MAX_STEPS} 条都不成立……"] + steps[-2:])


def obs_branches(counts: dict, n_shapes: int, lines: list, unreachable, same) -> str:
    """每个分支走到几个形状：加起来正好是全部形状。没有形状走到的分支有三种：走不到的死规则（unreachable：任何
    (M, N, K) 都走不到）、走得到但去掉也一样的（same：simplify 删了它，它管的形状交给后面的分支，配置不变）、
    和只是这些形状没用到的。分支多（贴进来的大表）时只数个数，不一条条说（演示 1 下面逐条列出了走不到的规则）。"""
    unused = [ln for ln, n in zip(lines, counts.values()) if n == 0]
    if len(lines) <= MAX_STEPS:
        parts = "，".join(f"第 {ln} 行的分支 {n} 个" for ln, n in zip(lines, counts.values()))
        tail = ("每条分支都有形状走到。" if not unused else
                "".join(f"第 {ln} 行的分支没有形状走到：" + (
                    "simplify 证明它在任何 (M, N, K) 上都走不到，是死规则。" if ln in unreachable else
                    "别的形状走得到它，只是这些形状都没用到；而且去掉它也一样（它管的形状交给后面的分支，配置不变），"
                    "simplify 删了它。" if ln in same else
                    "它不是死规则，只是这些形状都没用到它。") for ln in unused))
    else:
        used = [(ln, n) for ln, n in zip(lines, counts.values()) if n]
        # 学生报过：贴进来的 500 条规则的表，这句列了 43 个"第 k 行的分支 n 个"，十几行。只列前 MAX_BRANCHES 个，其余合起来说
        more = used[MAX_BRANCHES:]
        parts = "，".join(f"第 {ln} 行的分支 {n} 个" for ln, n in used[:MAX_BRANCHES]) + \
            (f"，另外 {len(more)} 个分支一共 {sum(n for _, n in more)} 个" if more else "") + \
            (f"，别的 {len(unused)} 个分支 0 个" if unused else "")
        k = len([ln for ln in unused if ln in unreachable])
        r = len([ln for ln in unused if ln in same])
        kinds = ([f"{k} 个在任何 (M, N, K) 上都走不到，是死规则（上面逐条列着）"] if k else []) + \
            ([f"{r} 个走得到、但去掉也一样（simplify 删了{'它们' if r > 1 else '它'}）"] if r else []) + \
            ([f"{len(unused) - k - r} 个不是死规则，只是这些形状都没用到"] if len(unused) - k - r else [])
        tail = f"没有形状走到的 {len(unused)} 个分支里，{'，'.join(kinds)}。" if unused else "每条分支都有形状走到。"
    return check(sum(counts.values()) == n_shapes,
                 f"{n_shapes} 个形状里，{parts}：每个形状恰好走一条分支（第一条条件全部成立的规则，都不成立就是默认），"
                 f"choose 就是这样一条一条往下试。{tail}",
                 f"每个形状恰好走一条分支：各分支的形状数加起来是 {n_shapes}",
                 f"{parts}，合计 {sum(counts.values())} 个")


def pointed(code: str, where: str) -> str:
    """一行代码，右边用"← 第几行"指出它在文件里的位置；终端窄、放不下时，"↑ 第几行"印在下一行、对着代码的开头。"""
    line = f"{code}      ← {where}"
    if display_width(line) <= wrap_width():
        return line
    return f"{code}\n{' ' * (len(code) - len(code.lstrip()))}↑ {where}"


def demo1_expert(program: Program, path: str, extra: list, table: TimeTable):
    print_header("演示 1：专家启发式——学生改的文件，和它解析成的 Program" if is_expert_file(path) else
                 f"演示 1：你的启发式 {os.path.basename(path)}，和它解析成的 Program")
    view = source_view(path)
    print_note(f"{os.path.relpath(path)} 里两条标记之间的原文（左边是行号）：" if view.marked else
               f"{os.path.relpath(path)} 的原文（左边是行号；文件里没有 EVOLVE-BLOCK 标记，读的是整个文件）：")
    print_numbered(list(view.lines), LISTING_LINES, os.path.relpath(path))   # 贴进来几千行的表：只印开头
    for line, text in view.ignored:                         # 第二个 EVOLVE 块、标记外面的 def：和 04 读专家文件时一样提醒
        print_note(f"注意：第 {line} 行：{text}")
    print()
    print_note("解析成的 Program（evolve.parse：用 ast 读，从不 import、eval 或 exec）：")
    for r in program.rules[:MAX_RULES_SHOWN]:              # 一条规则印两行：一行 100 列放不下
        print(f"  Rule(conds={r.conds},\n" + pointed(f"       config={r.config!r})", f"第 {r.line} 行"))
    if program.n_rules() > MAX_RULES_SHOWN:
        print_note(f"……还有 {program.n_rules() - MAX_RULES_SHOWN} 条规则没有印出来（一共 {program.n_rules()} 条）", "  ")
    print(pointed(f"  default = {program.default!r}", f"第 {program.default_line} 行"))

    shapes = [Shape(n, m, *LAYERS[n]) for n, m in TRACE] + list(extra)
    rows, agree = [], True
    for s in shapes:
        steps, i, cfg = trace(program, s.M, s.N, s.K)
        agree &= cfg == choose(program, s) and i == branch_index(program, s.M, s.N, s.K)
        line = program.rules[i].line if i < len(program.rules) else program.default_line
        best, t = table.oracle(s)
        rows.append([f"{s.name} M={s.M} (N={s.N}, K={s.K})", steps_text(steps), f"第 {line} 行", cfg_text(cfg),
                     f"{table.time(cfg, s) / t:.2f}×" if cfg in VALID else "启动不了"])
    print_table(["形状", "从上往下试条件", "走的分支", "给出的配置", "比逐形状最优慢"], rows)
    assert agree, "自己走一遍和 choose 的结果不一样"      # trace 是 choose 的另一种写法，两者必须一致

    counts = {i: 0 for i in range(program.n_rules() + 1)}
    for s in all_shapes():
        counts[branch_index(program, s.M, s.N, s.K)] += 1
    lines = [r.line for r in program.rules] + [program.default_line]
    simp = simplify(program)
    removed = removed_lines(program)
    unreachable = set(unreachable_lines(program))
    if simp.default_line != program.default_line:           # 有一条 if True：最后的 return 也走不到
        unreachable.add(program.default_line)
    same = [ln for ln in removed if ln not in unreachable and ln != simp.default_line]   # 走得到，去掉也一样
    empty = set(empty_lines(program))
    gone = [ln for ln in removed if ln in unreachable and ln not in empty]   # 被前面的规则挡住
    void = [ln for ln in removed if ln in empty]                              # 条件本身没有形状满足

    def said(where: list) -> str:
        return f"第 {', '.join(map(str, where[:MAX_STEPS]))} 行" + (f"……一共 {len(where)} 条" if len(where) > MAX_STEPS else "")
    print()
    print_note(f"simplify（演示 3 讲它怎么做）：{program.n_rules()} 条规则 → {simp.n_rules()} 条" + (
        "；删掉的：" + "；".join(([f"{said(void)}走不到（没有形状满足它的条件）"] if void else [])
                              + ([f"{said(gone)}走不到（任何形状都先被前面的规则接走，下面说为什么）"] if gone else [])
                              + ([f"{said(same)}走得到，但去掉也一样（它管的形状交给后面的分支，配置不变）"] if same else [])
                              + ([f"第 {simp.default_line} 行没有条件，成了默认配置"]
                                 if simp.default_line in removed else [])) + "。"
        if removed else "，没有死规则。"))
    groups: dict = {}                                       # 读文件时给学生的提醒（evolve.program.dead_rules）：每条规则都列出来，
    for line, text in dead_rules(program):                  # 一模一样的提醒只说一次（一张大表里几百条被同一条规则挡住）
        groups.setdefault(text, []).append(line)
    for text, at in groups.items():
        where = f"第 {at[0]} 行" if len(at) == 1 else f"第 {', '.join(map(str, at))} 行（这 {len(at)} 条一样）"
        print_note(f"{where}：{text}", "  ")
    return [obs_branches(counts, len(all_shapes()), lines, unreachable, set(same))]


# ---------------------------------------------------------------- 演示 2

def n_programs(n_rules: int, n_configs: int = len(VALID), n_cuts: int = len(TOKENS) - 1) -> int:
    """只用 M 做条件、n_rules 条规则的程序有几种写法：在 n_cuts 个切点（相邻两个 M 之间）里挑 n_rules 个作阈值
    （从小到大），每个分支（n_rules 条规则 + 默认）各挑一个配置。"""
    return math.comb(n_cuts, n_rules) * n_configs ** (n_rules + 1)


def obs_new_shapes(answered: int, n_new: int, in_table: int, worst: float, fields: frozenset = frozenset("M")) -> str:
    """fields：专家的条件用到了哪几维（改过的专家可能也按 N、K 分）。"""
    ok = answered == n_new and in_table == 0
    by = "、".join(f for f in "MNK" if f in fields)
    rule = f"（按 {by} 分档）" if by else "（一个配置管所有形状）"
    return check(ok, f"{n_new} 个没见过的形状，程序每个都直接给出了能启动的配置，不用重新调；逐形状的表一个都查不到。"
                     f"表只记得见过的点，代码写的是规律{rule}，规律能用到新的点上。答得好不好是另一回事："
                     f"专家在这几个形状上最差离最优慢 {worst:.2f}×——进化要做的，就是把规律写得更好。",
                 "程序对每个没见过的形状都给出能启动的配置，逐形状的表一个都查不到",
                 f"程序答出 {answered}/{n_new} 个，表查到 {in_table} 个",
                 [("程序每个形状都答出了", answered == n_new), ("表一个都查不到", in_table == 0)])


def obs_space(small: int, big: int, per_shape: int, runs: int, expert_rules: int = 1) -> str:
    """expert_rules：专家有几条规则（改过的专家文件可能不是一条，那就不说"和专家一样"）。"""
    ok = small > runs > per_shape and big > small
    like = "和专家一样只有一条规则" if expert_rules == 1 else "只有一条规则"
    return check(ok, f"{like}的程序（只用 M 做条件）就有 {small:.2e} 种写法，比把训练形状逐个穷举的 {runs:,} 次还多得多；"
                       f"{MAX_RULES} 条规则时是 {big:.2e} 种。一个一个评估不可能——所以要有会挑方向的搜索"
                       "（AlphaEvolve 用 LLM 提修改、用程序库挑父程序）。逐形状调优每个形状只有 "
                       f"{per_shape:,} 个配置可试，但它给不出代码。",
                 "一条规则的程序的写法数 > 穷举训练形状的次数 > 每个形状的配置数，且规则越多写法越多",
                 f"一条规则 {small:.2e} 种、{MAX_RULES} 条 {big:.2e} 种，穷举训练形状 {runs:,} 次，每个形状 {per_shape:,} 个配置",
                 [("一条规则的写法比穷举训练形状的次数多", small > runs),
                  ("穷举训练形状的次数比每个形状的配置数多", runs > per_shape),
                  (f"{MAX_RULES} 条规则的写法比一条的多", big > small)])


def demo2_why_code(table: TimeTable):
    print_header("演示 2：为什么进化代码，而不是一张表")
    train, _ = split_shapes(all_shapes())
    lookup = {(s.M, s.N, s.K): table.oracle(s)[0] for s in train}      # 逐形状调好的表：只有训练形状
    pmt = per_m_table(train, table)
    rows, answered, in_table, worst = [], 0, 0, 0.0
    for s in NEW_SHAPES:
        best, t = table.oracle(s)
        hit = lookup.get((s.M, s.N, s.K))
        in_table += hit is not None
        cells = [f"{s.name} M={s.M} (N={s.N}, K={s.K})", "没有这一项" if hit is None else cfg_text(hit)]
        for prog in (EXPERT, pmt):
            cfg = choose(prog, s)
            ok = cfg in VALID
            answered += ok and prog is EXPERT
            if ok:
                worst = max(worst, table.time(cfg, s) / t) if prog is EXPERT else worst
            cells.append(f"{cfg_text(cfg)}（慢 {table.time(cfg, s) / t:.2f}×）" if ok else "启动不了")
        rows.append(cells)
    sizes = "" if len(lookup) == len(train) else f"，其中尺寸不同的 {len(lookup)} 个"   # 两个模型的投影可能一样大
    print_table(["没见过的形状", f"逐形状的表（{len(train)} 个训练形状{sizes}）", "专家启发式（和最优比）",
                 f"按 M 查表的程序（{pmt.n_rules()} 条规则）"], rows)

    per_shape, runs = len(VALID), len(VALID) * distinct_sizes(train)   # 一样大的形状只穷举一次
    rows = [["逐形状调优：一个形状的候选配置", f"{per_shape:,}"],
            ["逐形状调优：穷举全部训练形状要跑几次", f"{runs:,}"]]
    rows += [[f"只用 M 做条件、{r} 条规则的程序（{math.comb(len(TOKENS) - 1, r)} 种阈值 × {per_shape:,}^{r + 1} 种配置）",
              f"{n_programs(r):.2e}"] for r in (1, 2, MAX_RULES)]
    print_table(["空间", "大小"], rows)
    print_note(f"（阈值只在相邻两个 M 之间切才有区别：{len(TOKENS)} 个 M 有 {len(TOKENS) - 1} 个切点；N、K 也能做条件，"
               "那样更多。）")
    return [obs_new_shapes(answered, len(NEW_SHAPES), in_table, worst,
                           frozenset(f for r in EXPERT.rules for f, _ in r.conds)),
            obs_space(n_programs(1), n_programs(MAX_RULES), per_shape, runs, EXPERT.n_rules())]


# ---------------------------------------------------------------- 演示 3

def classify(program: Program) -> list[str]:
    """每条规则的命运，自己判断（不调用 simplify）：空区域 / 被第 j 条挡住 / 去掉也一样 / 活。"""
    out, live = [], []
    for i, r in enumerate(program.rules):
        box = r.box()
        if min(box) < 1:
            out.append("空区域：没有正整数满足")
        elif (j := next((j for j in live if all(a >= b for a, b in zip(program.rules[j].box(), box))), None)) is not None:
            out.append(f"被第 {j + 1} 条挡住：它的盒子整个在第 {j + 1} 条的盒子里面")
        else:
            out.append("")
            live.append(i)
    for i in reversed(live):                    # 活着的规则里，去掉以后行为不变的也删（和 simplify 一样从后往前试）
        keep = [k for k in live if k != i]
        q = Program(tuple(program.rules[k] for k in keep), program.default)
        p = Program(tuple(program.rules[k] for k in live), program.default)
        if equivalent(p, q):
            out[i] = "去掉也一样：它管的形状，后面的分支给同样的配置"
            live = keep
    return [x or "活" for x in out]


def union_example(program: Program, fates: list) -> str:
    """用这个程序举例：第 6 条（被挡住）在哪几条的并集里、又被哪一条单独盖住；第 7 条（活）的角不在前面任何一条里。"""
    def inside(i, j):
        return all(a >= b for a, b in zip(program.rules[j].box(), program.rules[i].box()))

    def corner(i):
        return "(" + ", ".join(str(b) if b < NO_BOUND else "任意" for b in program.rules[i].box()) + ")"
    six, seven = 5, 6
    covers = [j + 1 for j in range(six) if inside(six, j) and fates[j] == "活"]
    outside = all(branch_index(program, *(b if b < NO_BOUND else 10 ** 6 for b in program.rules[seven].box())) != j
                  for j in range(seven))
    return (f"第 6 条被第 {'、'.join(map(str, covers))} 条单独盖住；第 7 条的角 {corner(seven)} "
            + ("不在前面任何一条里，它是活的" if outside else "落在前面某一条里"))


def corner_reaches(program: Program, i: int) -> bool:
    """第 i 条规则的盒子的角 (M, N, K) 走的是不是第 i 条（没有条件的维取一个大数）。"""
    M, N, K = (b if b < NO_BOUND else 10 ** 6 for b in program.rules[i].box())
    return branch_index(program, M, N, K) == i


def obs_roundtrip(same: bool, same_text: bool, n_shapes: int, differ: int) -> str:
    ok = same and same_text and differ == 0
    return check(ok, f"parse(render(p)) == p，render 两次得到同样的文本；学生的写法（elif、else、<、位置参数、注释）"
                       f"读进来、写回去只是换成统一的格式，{n_shapes} 个形状上选的配置一个不差。进化的每一步都是"
                       "\"源码 → 改源码 → 再读成程序\"，所以这一趟必须不丢东西。",
                 f"parse(render(p)) == p、render 两次文本相同、{n_shapes} 个形状上选的配置一个不差",
                 f"程序相同：{'是' if same else '否'}，文本相同：{'是' if same_text else '否'}，选的配置不同的形状 {differ} 个",
                 [("parse(render(p)) == p", same), ("render 两次文本相同", same_text),
                  (f"{n_shapes} 个形状上选的配置一个不差", differ == 0)])


def obs_simplify(match: bool, equiv: bool, n_before: int, n_after: int, corners_ok: bool, example: str) -> str:
    ok = match and equiv and n_after < n_before and corners_ok
    return check(ok, f"simplify 把 {n_before} 条规则删到 {n_after} 条，删掉的正是上表判为死的那几条，equivalent 确认"
                       "在每个正整数 (M, N, K) 上选的配置都不变。为什么只要和前面的规则一条一条比：每条规则管一个从 (1, 1, 1) "
                       "开始的盒子；盒子被几个盒子的并集盖住，它的角就在某一个盒子 A 里，而 A 也从 (1, 1, 1) 开始，"
                       f"于是整个盒子都在 A 里——被并集盖住，当且仅当被其中某一个盖住（{example}）。"
                       "这就是第 12 讲的删死代码：证明走不到，再删。",
                 "simplify 删掉的正是逐条判断为死的规则、行为不变、规则变少、留下的每条规则的角都走到它自己",
                 f"simplify {n_before} → {n_after} 条；和逐条判断一致：{'是' if match else '否'}；行为不变："
                 f"{'是' if equiv else '否'}；角都走到自己：{'是' if corners_ok else '否'}",
                 [("删掉的正是逐条判断为死的规则", match), ("行为不变", equiv), ("规则变少", n_after < n_before),
                  ("留下的每条规则的角都走到它自己", corners_ok)])


def demo3_render_simplify():
    print_header("演示 3：render / parse 来回一趟；simplify 删死规则")
    p = parse(STUDENT_SRC, "学生的写法")
    back = render(p)
    print("学生的写法：\n" + STUDENT_SRC + "\nrender(parse(...)) 写回的统一格式：\n" + back)
    again = parse(back)
    differ = sum(choose(p, s) != choose(again, s) for s in all_shapes())
    obs = [obs_roundtrip(again == p, render(again) == back, len(all_shapes()), differ)]

    fates = classify(DEAD_PROGRAM)
    simp = simplify(DEAD_PROGRAM)
    kept = [r for r, f in zip(DEAD_PROGRAM.rules, fates) if f == "活"]
    print_note(f"下面换一个程序：脚本里一份故意写进死规则的程序（DEAD_PROGRAM，{DEAD_PROGRAM.n_rules()} 条规则加默认配置）。"
               "\"命运\"是逐条自己判断的（不用 simplify），\"simplify 之后\"是 simplify 删没删它，两列对得上才算对：")
    print_table(["第几条", "条件", "配置", "命运（自己判断）", "simplify 之后"],      # 命运只印"："前面的名字，
                [[str(i + 1), cond_text(r.conds), cfg_text(r.config), fate.split("：")[0],   # 为什么写在表下面
                  "留下" if r in simp.rules else "删掉"] for i, (r, fate) in enumerate(zip(DEAD_PROGRAM.rules, fates))]
                + [["默认", "", cfg_text(DEAD_PROGRAM.default), "", "留下"]])
    why = {}                                             # 名字（"被第 j 条挡住"）→ 为什么，表里出现的每一种
    for fate in fates:
        if "：" in fate:
            name, reason = fate.split("：", 1)
            why.setdefault(re.sub(r"第 \d+ 条", "第 j 条", name), re.sub(r"第 \d+ 条", "第 j 条", reason))
    print_note("（命运：" + "；".join(f"{name}——{reason}" for name, reason in why.items()) + "。）")
    print("\nsimplify 之后：\n" + render(simp))
    equiv = equivalent(DEAD_PROGRAM, simp) and all(choose(DEAD_PROGRAM, s) == choose(simp, s) for s in all_shapes())
    corners = all(corner_reaches(simp, i) for i in range(simp.n_rules()))
    obs.append(obs_simplify(list(simp.rules) == kept, equiv, DEAD_PROGRAM.n_rules(), simp.n_rules(), corners,
                            union_example(DEAD_PROGRAM, fates)))
    return obs


def parse_args(argv):
    ap = parser("被进化的是什么：一段挑分块配置的代码（第 14 讲 01）。")
    ap.add_argument("--shape", type=int_between(1, MAX_DIM, "2**24 = sched_lab.MAX_DIM，模型能算的最大维度"), nargs=3, action="append", default=[], metavar=("M", "N", "K"),
                    help=f"在演示 1 的表里多追踪一个形状，三个 1 到 2**24 = {MAX_DIM:,} 的整数（模型能算的范围；可以给几次）")
    ap.add_argument("--heuristic", default=EXPERT_FILE, metavar="FILE", help="演示 1 用的启发式文件（默认 expert_heuristic.py）")
    Charts.add_argument(ap, draws=False)                # 这个脚本不画图
    a = ap.parse_args(argv)
    CHARTS.reset(Charts.check_dir(ap, a.svg))
    return a


read_program = load_or_explain          # (程序, "") 或 (None, 一句话)：和专家文件写错时的信息一样


def run_demos(a, program) -> list:
    """三个演示按顺序印出来，返回所有观察（测试从这份数据数有几句不成立）。"""
    table = TimeTable()
    extra = [Shape("你给的形状", M, N, K) for M, N, K in a.shape]
    print_note(f"设置：--heuristic {os.path.relpath(a.heuristic)}"       # 路径可能很长：按宽度折行
               + "".join(f" --shape {s.M} {s.N} {s.K}" for s in extra) + gpu_flag())
    return (print_observations(demo1_expert(program, a.heuristic, extra, table))
            + print_observations(demo2_why_code(table)) + print_observations(demo3_render_simplify()))


def dead_rule_edit(program) -> str:
    """"加一条永远走不到的规则"怎么加，照这个文件说（审读报过：一条规则都没有的文件，"在第一条规则后面加 if M <= 8:"
    没法照做，照着加了也不是死规则）。第一条规则只看 M <= t（t > 8，讲义的专家就是）：在它后面加 if M <= 8:；
    别的第一条：把它的 if 那一行原样再写一遍；没有规则：先加一条 if M <= 16:，再在它后面加 if M <= 8:。
    文件里已经有死规则时（演示 1 这次已经指出来了）反过来：删掉它们，看演示 1 不再提（审读报过：照样建议再加一条）。"""
    dead = sorted({line for line, _ in dead_rules(program)})
    if dead:
        lines = "、".join(map(str, dead[:3])) + (f" 等 {len(dead)} 条" if len(dead) > 3 else "")
        return (f"删掉演示 1 指出的死规则（第 {lines} 行的 if 和它下面的 return），再运行下面的命令，演示 1 就不再提"
                + ("它" if len(dead) == 1 else "它们"))
    return _add_dead_rule(program) + "，再看演示 1 怎样指出它是死规则"


def _add_dead_rule(program) -> str:
    """文件里还没有死规则时，怎样加一条（dead_rule_edit 的另一半）。"""
    if not program.rules:
        return ("在最后的 return 前面先加一条 if M <= 16: 规则，再在它后面加一条 if M <= 8: 规则（各配一个 Config；"
                "第二条被第一条挡住，永远走不到）")
    conds = program.rules[0].conds
    if len(conds) == 1 and conds[0][0] == "M" and conds[0][1] > 8:
        return "在第一条规则后面加一条永远走不到的规则（比如 if M <= 8: 配一个别的 Config）"
    return "在第一条规则后面把它 if 那一行原样再写一遍、配一个别的 Config（被第一条挡住，永远走不到）"


def main(argv=None):
    a = parse_args(argv)
    program, error = read_program(a.heuristic)
    if program is None:
        say(error)
        sys.exit(1)
    start = time.perf_counter()
    run_demos(a, program)
    print_try([
        *([] if any(tuple(s) == (3000, *NEW_LAYERS["405B/8 qkv"]) for s in a.shape or []) else [   # 这次已经追踪过
            ("追踪任何一个形状走哪条分支（给 M N K 三个数；这里是 M = 3000 配 405B/8 qkv 的 N、K，表里标作\"你给的形状\"；"
             "下面的命令都在仓库根目录运行）：",
             "python3 lecture14/01_heuristic_as_code.py "
             + ("" if is_expert_file(a.heuristic) else f"--heuristic {file_to_edit(a.heuristic)} ")   # 追踪的是这次的文件
             + "--shape 3000 {} {}".format(*NEW_LAYERS["405B/8 qkv"]))]),
        *copy_suggestion("用你自己的启发式文件：先复制一份专家启发式（只做一次：再做会覆盖你改过的文件）：", a.heuristic),
        (f"在编辑器里打开 {file_to_edit(a.heuristic)}，{dead_rule_edit(program)}（06 会给你的文件打分）：",
         f"python3 lecture14/01_heuristic_as_code.py --heuristic {file_to_edit(a.heuristic)}"),
        ("下一步，看一次提议的慢动作：", "python3 lecture14/02_llm_proposal.py"),
    ])
    CHARTS.report()
    took(start)


if __name__ == "__main__":
    run(main)
