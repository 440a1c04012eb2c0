"""
=============================================================================
CS349E · 第 10 讲 · 01_config_space.py —— 矩阵乘法内核的配置空间：6,400 个组合，哪些能启动、为什么
=============================================================================

【这个脚本要回答的问题】
    一个 Triton 式矩阵乘法内核有 6 个旋钮 (BM, BN, BK, warps, stages, group)。候选网格上一共多少个组合？
    寄存器、共享内存这些硬件上限挡掉了哪些？第 14 讲的进化说"在 3,744 个配置里挑"，这个数是怎么来的？
      演示 1：候选网格——每个字段的取值、组合总数、能启动的个数。
      演示 2：每种资源各挡掉多少组合；按块大小 BM×BN 数能启动的配置。
      演示 3：几个例子：每线程寄存器、共享内存、每个 SM 驻留几个 CTA，能不能启动，启动不了的原因。

【关于数字】寄存器和共享内存是 kernel_lab 的资源模型按公式算出来的（H100 的上限；"累加器 + 40 个"是估计），
    不是编译器报告的数字。这里只看能不能启动，不看快慢——快慢是第 13 讲的事。
    五条规则里三条是硬件的启动上限（每个 CTA 的寄存器 65,536、共享内存 227 KB、线程 1,024：CUDA 编程指南的计算能力表），
    两条是这个模型的约定：超过 255 个寄存器/线程在真机上不会启动失败，ptxas 把多的溢出到本地内存（triton-lang/triton#5572），
    内核变慢但照样跑；"每个 warp 至少 256 个累加器"是模型的选择。kernel_lab 开头的说明写得更细；演示 2 的表下面印的是同一句话。
    "专家"是第 14 讲讲义的专家（lecture14/evolve/lecture_expert.py 钉住的那份）给大 M 的配置，不随学生改的 expert_heuristic.py 变。
【运行】python3 lecture10/01_config_space.py [BM BN BK warps stages group] [--smem BYTES]   （在仓库根目录；用时见 README 的"计时"）
    可以在命令行给一个配置（6 个整数），它会加到演示 3 表格的最后一行；--smem 换一个共享内存上限再数一遍（命令行给的配置也按它说一句）。
【依赖】只用标准库；本目录的 kernel_lab，../lecture01 的 console。
"""

import argparse
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from runner import parser, positive_int, run  # noqa: E402   # 最先 import：这之后按的 Ctrl-C 只印一行、退出码 130

from console import Charts, check  # noqa: E402

CHARTS = Charts()                               # 图的出口：印到终端；--svg DIR 时也写 SVG

from kernel_lab import (FIELDS, GPU, GRID, MAX_REGS_PER_THREAD, MAX_SMEM_PER_BLOCK, MAX_THREADS_PER_BLOCK,  # noqa: E402
                        MIN_ACC_PER_WARP, REG_OVERHEAD, REGS_PER_SM, RESOURCE_CHECKS, SMEM_PER_SM, SMEM_RESERVED_PER_BLOCK,
                        VALID, WARP, Config,
                        acc_per_warp, all_configs,
                        can_launch, ctas_per_sm, off_grid, problems, regs_per_block, regs_per_thread,
                        overflow_kinds, rejection_counts, smem_bytes)
from console import print_header, print_note, print_observations, print_table, print_try  # noqa: E402

EXPERT_BIG = Config(128, 128, 64, 4, 3, 8)      # 第 14 讲讲义的专家（lecture14/evolve/lecture_expert.py）给大 M 的配置
EXAMPLES = [                                    # 演示 3 的例子；想看别的配置就加一行，或在命令行给 6 个数
    ("讲义专家的大块", EXPERT_BIG),
    ("只把 BM 加倍", EXPERT_BIG.replace(BM=256)),
    ("再把 warps 加倍", EXPERT_BIG.replace(BM=256, warps=8)),
    ("再加到 4 级流水线", EXPERT_BIG.replace(BM=256, warps=8, stages=4)),
    ("再把 BK 加倍", EXPERT_BIG.replace(BM=256, warps=8, stages=4, BK=128)),
    ("最大的块、16 warp", Config(256, 256, 32, 16, 1, 8)),
    ("小块配 4 warp", Config(16, 32, 128, 4, 4, 1)),
    ("decode 式的小块", Config(16, 64, 256, 2, 4, 1)),
]
MEANING = {"BM": "一个 CTA 算的输出块的行数", "BN": "输出块的列数", "BK": "沿 K 每一步搬进共享内存的宽度",
           "warps": "每个 CTA 的 warp 数（每个 32 线程）", "stages": "软件流水线级数（共享内存里放几份输入）",
           "group": "相邻几行输出块一起走（L2 复用）"}
RULE = {"寄存器/线程": f"BM·BN/(32·warps) + {REG_OVERHEAD} ≤ {MAX_REGS_PER_THREAD}",
        "寄存器/CTA": f"寄存器/线程 × 32·warps ≤ {REGS_PER_SM:,}",
        "共享内存": f"stages·(BM+BN)·BK·2 B ≤ {MAX_SMEM_PER_BLOCK:,} B",
        "线程/CTA": f"warps·32 ≤ {MAX_THREADS_PER_BLOCK:,}",
        "warp 工作量": f"BM·BN/warps ≥ {MIN_ACC_PER_WARP}"}

# 哪些规则是硬件的启动上限、哪些是这个模型的约定（来源写在 kernel_lab 开头：CUDA 编程指南的计算能力表、triton-lang/triton#5572）
LIMITS_NOTE = (f"（哪些是硬件、哪些是模型的约定：寄存器/CTA ≤ {REGS_PER_SM:,}、共享内存 ≤ {MAX_SMEM_PER_BLOCK:,} B"
               f"（{MAX_SMEM_PER_BLOCK // 1024} KB）、线程/CTA ≤ {MAX_THREADS_PER_BLOCK:,} 是 {GPU.short} 真的启动上限，超了启动不了；"
               f"每线程 {MAX_REGS_PER_THREAD} 个寄存器是硬件给一个线程的上限，但在真机上超了不会启动失败：编译器（ptxas）把多的"
               "溢出到本地内存，内核照样跑，只是变慢（triton-lang/triton#5572），这个模型把它算作启动不了；"
               f"warp 工作量 ≥ {MIN_ACC_PER_WARP} 是这个模型的约定，不是硬件规则。）")


def parse_config(values, ap):
    """命令行的 6 个整数变成一个 Config；没给就返回 None，给错了就用 ap.error 说一句（退出码 2）。"""
    if not values:
        return None
    if len(values) != len(FIELDS):
        ap.error(f"要么不给配置，要么给 {len(FIELDS)} 个整数（{' '.join(FIELDS)}），例如 256 128 64 8 4 8；"
                 f"收到的是 {len(values)} 个")
    c = Config(*values)
    if off_grid(c):
        ap.error("；".join(off_grid(c)))
    return c


def verdict(c):
    """"能启动" 或 "启动不了"。"""
    return "能启动" if can_launch(c) else "启动不了"


def smem_arg(text: str) -> int:
    """--smem 的 argparse type：正整数（字节）。写成 163KB、227 KiB、164k 的说折成字节是多少（学生报过：只说"不是整数"）。"""
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as e:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(k|kb|kib)\s*", text, re.IGNORECASE)
        if m is None or not float(m[1]) * 1024 >= 1 or not (float(m[1]) * 1024).is_integer():
            raise
        raise argparse.ArgumentTypeError(f"{e}：--smem 要的是字节数，{m[1]} KB 是 {int(float(m[1]) * 1024)}"
                                         f"（{m[1]} × 1024）") from None


def launchable_with_smem(limit):
    """每个 CTA 的共享内存上限换成 limit 字节（其余上限照旧）时，候选网格上能启动的配置。"""
    return [c for c in all_configs() if launches_with_smem(c, limit)]


def launches_with_smem(c, limit) -> bool:
    """共享内存上限换成 limit 字节（其余上限照旧）时，c 能不能启动。"""
    return smem_bytes(c) <= limit and not any(f(c) for k, f in RESOURCE_CHECKS.items() if k != "共享内存")


def demo1_grid(total, smem=None):
    """每个字段的候选值、组合总数、能启动的个数；给了 smem 就再数一遍换了共享内存上限以后的。"""
    print_header(f"演示 1：候选网格——{len(FIELDS)} 个字段、{total:,} 个组合、{len(VALID):,} 个能启动")
    print_table(["字段", "含义", "候选值", "个数"], [[f, MEANING[f], GRID[f], len(GRID[f])] for f in FIELDS])
    print()
    print_note(f"组合总数 = {' × '.join(str(len(v)) for v in GRID.values())} = {total:,}；"
               f"能启动的（kernel_lab.VALID）{len(VALID):,} 个，占 {len(VALID) / total:.1%}。")
    if smem is not None:
        n = len(launchable_with_smem(smem))
        # 上限比一个 SM 的共享内存（减去每个 CTA 保留的）还大时，多出来的配置在这块 GPU 的 SM 上一个也放不下：
        # 数的是一块 SM 也跟着变大的假想 GPU（一位同学给了 --smem 300000，读到"其余上限照旧"，可那 296 个每 SM 0 个 CTA）
        room = SMEM_PER_SM - SMEM_RESERVED_PER_BLOCK
        beyond = (f"；它比 {GPU.short} 一个 SM 的共享内存 {SMEM_PER_SM:,} B 减去每个 CTA 保留的 "
                  f"{SMEM_RESERVED_PER_BLOCK:,} B 还大，所以这里数的是 SM 的共享内存也跟着变大、至少放得下一个这样的 CTA 的"
                  f"假想 GPU" if smem > room else "")
        kb = f"{smem / 1024:,.0f}" if smem >= 10 * 1024 else f"{smem / 1024:.2g}"   # 审读时报过："100 B（0 KB）"
        print_note(f"换成 --smem 给的共享内存上限 {smem:,} B（{kb} KB；{GPU.short} 是 {MAX_SMEM_PER_BLOCK:,} B"
                   f"{beyond}）、其余上限照旧：能启动的 {n:,} 个，占 {n / total:.1%}，"
                   + (f"和 {GPU.short} 的 {len(VALID):,} 个一样多。" if n == len(VALID) else
                      f"比 {GPU.short} 的 {len(VALID):,} 个{'少' if n < len(VALID) else '多'} {abs(len(VALID) - n):,} 个。")
                   + lecture14_count())


def lecture14_count() -> str:
    """第 14 讲用的配置数是哪块 GPU 的（审读时报过：--gpu a100 时说"第 14 讲的 3492 是 A100 的数"，第 14 讲默认在 H100 上）。"""
    import gpus
    if GPU.key == gpus.DEFAULT:
        return f"第 14 讲的 {len(VALID):,} 是 {GPU.short} 的数。"        # 和这一段别的个数一样，带千分位
    return (f"第 14 讲的脚本加 --gpu {GPU.key} 时用的就是这 {len(VALID):,} 个（不加时用的是 {gpus.GPUS[gpus.DEFAULT].short} "
            "的）。")


def demo2_rejections(total, smem=None):
    """每种资源挡掉多少组合；每种块大小 BM×BN 有多少能启动的配置。"""
    print_header("演示 2：每种资源挡掉多少组合")
    counts = rejection_counts()
    bad = total - len(VALID)
    print_table(["资源", "规则（满足才能启动）", "挡掉的组合", "占全部"],      # 个数带千分位（表格给整数加），
                [[k, RULE[k], n, f"{n / total:.1%}"] for k, n in counts.items()]        # 和下面句子里的 2,656 一样
                + [["至少超一种", "", bad, f"{bad / total:.1%}"]])                    # （学生报过：表里印 2656，旁边印 1,024）
    print_note(LIMITS_NOTE)
    # 学生报过：--smem 166912 时图上还是 H100 的 2656，图里没有一句说明（--smem 只改演示 1 的最后一句和演示 3 的那一行）
    limits = (f"；按 {GPU.short} 的上限（{MAX_SMEM_PER_BLOCK:,} B 共享内存）数的，--smem 不改这张图" if smem is not None
              else "")
    CHARTS.bars("10_rejections_by_resource", f"每种资源挡掉多少组合（{total:,} 个组合里 {bad:,} 个启动不了；"
                f"一个组合可以同时超几种，所以各条加起来比它多{limits}）", list(counts), list(counts.values()), fmt="{:,}")
    tiles = {(bm, bn): sum(c.BM == bm and c.BN == bn for c in VALID) for bm in GRID["BM"] for bn in GRID["BN"]}
    print_table([""] + [f"BN = {bn}" for bn in GRID["BN"]],
                [[f"BM = {bm}"] + [str(tiles[bm, bn]) for bn in GRID["BN"]] for bm in GRID["BM"]])
    print_note("（每一格：这个块大小在 BK × warps × stages × group 里能启动的配置数）")

    over = [len(problems(c)) for c in all_configs()]
    multi = sum(k > 1 for k in over)
    extra = sum(k - 1 for k in over if k > 1)                 # 多算的次数：超 3 种的组合在各行里多算 2 次
    dead = [f"{bm}×{bn}" for (bm, bn), n in tiles.items() if n == 0]
    small = Config(GRID["BM"][0], GRID["BN"][0], GRID["BK"][0], GRID["warps"][0], GRID["stages"][0], 1)
    big = Config(GRID["BM"][-1], GRID["BN"][-1], GRID["BK"][0], GRID["warps"][-1], GRID["stages"][0], 1)
    big_fewer = big.replace(warps=GRID["warps"][-2])
    by_count = {k: sum(x == k for x in over) for k in sorted(set(over)) if k > 1}
    how = "、".join(f"{n:,} 个超了 {k} 种" for k, n in by_count.items())
    obs = [f"第一张表各行加起来是 {sum(counts.values()):,}，比启动不了的 {bad:,} 个多 {sum(counts.values()) - bad:,}："
           f"有 {multi:,} 个组合同时超了不止一种资源（{how}），超几种就在几行里各算一次"
           f"（多算 {extra:,} 次）。"]
    if counts["线程/CTA"] == 0:
        obs.append(f"\"线程/CTA\" 这条规则在这个网格上一个也没挡掉：warps 最多 {max(GRID['warps'])}，"
                   f"也就是 {WARP * max(GRID['warps']):,} 个线程，不到 {MAX_THREADS_PER_BLOCK:,}。")
    obs.append(f"第二张表里是 0 的块大小：{'、'.join(dead) or '没有'}。"
               f"最小的 {small.BM}×{small.BN} 配最少的 {small.warps} 个 warp，"
               f"每个 warp 只分到 {acc_per_warp(small)} 个累加器（要 ≥ {MIN_ACC_PER_WARP}，{verdict(small)}）；最大的 {big.BM}×{big.BN} 配 {big.warps} 个 warp，"
               f"一个 CTA 要 {regs_per_block(big):,} 个寄存器（一个 SM 只有 {REGS_PER_SM:,} 个，{verdict(big)}），"
               f"配 {big_fewer.warps} 个 warp 每线程要 {regs_per_thread(big_fewer)} 个（上限 {MAX_REGS_PER_THREAD}，"
               f"{verdict(big_fewer)}）。")
    if all(can_launch(c) == can_launch(c.replace(group=GRID["group"][0])) for c in all_configs()):
        n = len(GRID["group"])
        obs.append(f"group 不占任何资源：同一个 (BM, BN, BK, warps, stages) 换哪种 group 结论都一样，"
                   f"所以 {len(VALID):,} = {n} × {len(VALID) // n:,}。group 只影响快慢（L2 复用），那是第 13 讲的事。")
    note = other_gpu_note()
    if note:
        obs.append(note)
    print_observations(obs)


def other_gpu_note():
    """--gpu 不是讲义的 H100 时一句话：讲义那块 GPU 上能启动的配置有几个、这块上少了几个、少在哪种资源上
    （只在两块 GPU 除了每个 CTA 的共享内存以外的上限都一样时说；这时少掉的全是共享内存超了，数出来的）。"""
    import gpus
    ref = gpus.GPUS[gpus.DEFAULT]
    same = all(getattr(GPU, f) == getattr(ref, f) for f in ("regs_per_sm", "max_regs_per_thread", "max_threads_per_block"))
    if GPU.key == ref.key or not same:
        return None
    on_ref = launchable_with_smem(ref.smem_per_block)
    lost = [c for c in on_ref if not can_launch(c)]
    on_ref_set = set(on_ref)               # 一次建好：在推导式里每次新建一个集合是 6400 × 3744 次哈希
    gained = [c for c in VALID if c not in on_ref_set]
    head = f"换成 {GPU.short} 以后能启动的是 {len(VALID):,} 个，讲义的 {ref.short} 上是 {len(on_ref):,} 个："
    limits = f"每个 CTA 最多 {MAX_SMEM_PER_BLOCK:,} B 共享内存，{ref.short} 是 {ref.smem_per_block:,} B"
    others = "别的启动上限（寄存器、每个 CTA 的线程数）两块 GPU 一样"
    if not lost and not gained:            # 助教报过：H200 上说"少掉的 0 个全是共享内存超了"
        return (head + f"一个不差：{limits}，{others}。第 14 讲在 {ref.short} 上进化出的启发式，"
                f"在 {GPU.short} 上每个分支照样启动得了。")
    if lost:
        only_smem = all(overflow_kinds(c) == ["共享内存"] for c in lost)
        return (head + f"少掉的 {len(lost):,} 个{'全是' if only_smem else '不全是'}共享内存超了（{limits}），{others}。"
                + f"第 14 讲在 {ref.short} 上进化出的启发式里要是有这样的配置，在 {GPU.short} 上就启动不了。")
    return (head + f"多出的 {len(gained):,} 个在 {ref.short} 上共享内存超了（{limits}），{others}。"
            f"第 14 讲在 {ref.short} 上进化出的启发式，在 {GPU.short} 上每个分支照样启动得了。")


def demo3_examples(extra, smem=None):
    """几个例子配置的资源账，以及启动不了的原因。给了 --smem 时，命令行给的配置按那个上限再说一句（表照旧按
    这块 GPU 的上限：一位同学给了 --smem 166912 和一个 196,608 B 的配置，表里照样写"能"，没说换了上限会怎样）。"""
    print_header("演示 3：几个例子——占多少资源，能不能启动")
    rows, reasons = [], []
    for label, c in EXAMPLES + ([("命令行给的", extra)] if extra else []):
        if problems(c):
            reasons.append(f"{label}：" + "；".join(problems(c)))
        rows.append([label, f"{c.BM}×{c.BN}×{c.BK}", c.warps, c.stages, regs_per_thread(c), f"{smem_bytes(c):,}",
                     ctas_per_sm(c) if can_launch(c) else "", f"不能（原因 {len(reasons)}）" if problems(c) else "能"])
    print_table(["例子", "BM×BN×BK", "warps", "stages", "寄存器/线程", "共享内存 (B)", "CTA/SM", "能启动"], rows)
    if smem is not None:                     # 学生报过：--smem 166912 时这张表照样写 196,608 B 的"能"，没说按的是谁的上限
        over = [label for label, c in EXAMPLES if can_launch(c) and not launches_with_smem(c, smem)]
        said = (f"（表和下面的观察按 {GPU.short} 的共享内存上限 {MAX_SMEM_PER_BLOCK:,} B 算；--smem 给的 {smem:,} B 只用在"
                "演示 1 末尾那一行" + (f"，按它算，{'、'.join(over)}就启动不了" if over else "") + "。")
        if extra:
            ok = launches_with_smem(extra, smem)
            said += (f"按 --smem 给的 {smem:,} B：命令行给的配置要 {smem_bytes(extra):,} B，{'能启动' if ok else '启动不了'}"
                     + ("" if ok or smem_bytes(extra) > smem else "（别的资源超了）") + "。")
        print_note(said + "）")
    print_observations(reasons, title="启动不了的原因（kernel_lab.problems 的原话）")

    mid, good = EXPERT_BIG.replace(BM=256), EXPERT_BIG.replace(BM=256, warps=8)
    other = EXPERT_BIG.replace(warps=8)
    deep = good.replace(stages=4, BK=128)
    fits = deep.replace(BK=64)
    exceptions = bigger_tiles_fewer_ctas()
    valley = not can_launch(mid) and can_launch(good) and can_launch(other)
    print_observations([
        check(valley,
        f"同一个 {mid.BM}×{mid.BN} 块：{mid.warps} 个 warp 时每线程要 {regs_per_thread(mid)} 个寄存器"
        f"（上限 {MAX_REGS_PER_THREAD}，{verdict(mid)}）；{good.warps} 个 warp 把 {mid.BM * mid.BN:,} 个 fp32 累加器"
        f"分给 {WARP * good.warps} 个线程，每线程降到 {regs_per_thread(good)} 个（{verdict(good)}）。"
        f"从讲义专家的 {EXPERT_BIG.BM}×{EXPERT_BIG.BN} / {EXPERT_BIG.warps} warp 一次改一个字段走到 "
        f"{good.BM}×{good.BN} / {good.warps} warp：先改 BM，中间那一步{verdict(mid)}；"
        f"先改 warps，中间那一步{verdict(other)}。第 14 讲把这种\"中间一步启动不了\"的地方叫作单字段修改的山谷。"
        f"（在这个模型里；真机上每线程超过 {MAX_REGS_PER_THREAD} 个寄存器会溢出到本地内存、变慢，而不是启动不了，"
        "见演示 2 表下的说明。）",
        f"讲义说 {mid.BM}×{mid.BN} 配 {mid.warps} 个 warp 启动不了、配 {good.warps} 个 warp 能启动，从讲义专家的块先改 warps "
        "走得过去（中间那一步能启动）",
        f"{mid.BM}×{mid.BN} / {mid.warps} warp {verdict(mid)}，/ {good.warps} warp {verdict(good)}；"
        f"{other.BM}×{other.BN} / {other.warps} warp {verdict(other)}",
        [(f"{mid.BM}×{mid.BN} 配 {mid.warps} 个 warp 启动不了", not can_launch(mid)),
         (f"配 {good.warps} 个 warp 能启动", can_launch(good)), ("先改 warps 的中间那一步能启动", can_launch(other))]),
        check(not can_launch(deep) and can_launch(fits) and not exceptions,
        f"共享内存 = stages × (BM + BN) × BK × 2 B：{deep.stages} 级、{deep.BM}×{deep.BN}、BK = {deep.BK} 要 "
        f"{smem_bytes(deep):,} B（上限 {MAX_SMEM_PER_BLOCK:,} B，{verdict(deep)}）；BK 减半是 {smem_bytes(fits):,} B"
        f"（{verdict(fits)}），每个 SM 驻留 {ctas_per_sm(fits)} 个 CTA（讲义专家的块是 {ctas_per_sm(EXPERT_BIG)} 个）。"
        f"同样的 BK、warps、stages 下块越大，每个 SM 上同时跑的 CTA 只会一样多或更少（{len(VALID):,} 个能启动的配置里没有例外），"
        "这是不是更快要等第 13 讲的模型来算。",
        f"讲义说 {deep.stages} 级、{deep.BM}×{deep.BN}、BK = {deep.BK} 的共享内存超了上限、BK 减半就放得下；"
        "同样的 BK、warps、stages 下块越大，每个 SM 上同时跑的 CTA 只会一样多或更少",
        f"BK = {deep.BK} 要 {smem_bytes(deep):,} B，BK = {fits.BK} 要 {smem_bytes(fits):,} B，上限 {MAX_SMEM_PER_BLOCK:,} B；"
        + (f"块更大、CTA 反而更多的配置对有 {len(exceptions):,} 对，例如 {exceptions[0][0].BM}×{exceptions[0][0].BN} 和 "
           f"{exceptions[0][1].BM}×{exceptions[0][1].BN}（BK {exceptions[0][0].BK}、{exceptions[0][0].warps} warp、"
           f"{exceptions[0][0].stages} 级）" if exceptions else "块更大、CTA 反而更多的配置对一对也没有"),
        [(f"BK = {deep.BK} 的共享内存超了上限", not can_launch(deep)), ("BK 减半就放得下", can_launch(fits)),
         ("块越大、每个 SM 上的 CTA 只会一样多或更少", not exceptions)]),
    ])


def smem_suggestion() -> tuple[str, str]:
    """"可以试试"里换共享内存上限的那条：换成另一块 GPU 的上限（讲义的 H100 上是 A100 的，别的 GPU 上先是 H100 的），
    说能启动的配置会少还是会多（助教报过：A100 上照样让人"换成 A100 的上限，看少多少"，数出来一个不少）。"""
    import gpus
    other = next(g for g in sorted(gpus.GPUS.values(), key=lambda g: g.key != gpus.DEFAULT)
                 if g.smem_per_block != MAX_SMEM_PER_BLOCK)
    more = "少" if other.smem_per_block < MAX_SMEM_PER_BLOCK else "多"
    return (f"换成 {other.short} 的共享内存上限（每个 CTA {other.smem_per_block:,} B，即 {other.smem_per_block // 1024} KB；"
            f"{GPU.short} 是 {MAX_SMEM_PER_BLOCK:,} B），"
            f"看能启动的配置{more}多少（演示 1 末尾多一行）：",
            f"python3 lecture10/01_config_space.py --smem {other.smem_per_block}")


def bigger_tiles_fewer_ctas():
    """同样的 BK、warps、stages、group 下，块更大（BM、BN 都不小、至少一个更大）的配置每个 SM 驻留的 CTA 却更多的
    (小, 大) 配置对；演示 3 的第 2 句观察靠它检验"块越大，每个 SM 上同时跑的 CTA 只会一样多或更少"。"""
    groups = {}
    for c in VALID:
        groups.setdefault((c.BK, c.warps, c.stages, c.group), []).append(c)
    return [(a, b) for cs in groups.values() for a in cs for b in cs
            if b.BM >= a.BM and b.BN >= a.BN and (b.BM, b.BN) != (a.BM, a.BN) and ctas_per_sm(b) > ctas_per_sm(a)]


def main(argv=None):
    ap = parser("第 10 讲 01：矩阵乘法内核的配置空间——6,400 个组合，哪些能启动、为什么。")
    ap.add_argument("config", nargs="*", type=positive_int, metavar="BM BN BK warps stages group",
                    help="一个配置（6 个正整数），加到演示 3 表格的最后一行，例如 256 128 64 8 4 8")
    ap.add_argument("--smem", type=smem_arg, default=None, metavar="BYTES",
                    help=f"换一个每 CTA 的共享内存上限（字节）再数能启动的配置，例如 A100 的 166912"
                         f"（{GPU.short} 是 {MAX_SMEM_PER_BLOCK}）")
    Charts.add_argument(ap)
    a = ap.parse_args(argv)
    CHARTS.reset(Charts.check_dir(ap, a.svg))
    extra = parse_config(a.config, ap)
    if extra:
        print_note(f"命令行给的配置：{extra!r}")              # 60 列的终端也折得开（学生报过 73 列的一行）
    total = math.prod(len(v) for v in GRID.values())
    demo1_grid(total, a.smem)
    demo2_rejections(total, a.smem)
    demo3_examples(extra, a.smem)
    # 这次已经看过的就不再建议（一位同学照着跑了 --smem 166912，结尾又让他跑同一条）
    mine, biggest, smem = Config(128, 256, 64, 8, 4, 8), Config(256, 256, 32, 8, 1, 8), smem_suggestion()
    keep = f" --smem {a.smem}" if a.smem is not None else ""      # 这次给了 --smem：照样带上（演示 3 下面那行跟着它）
    print_try([t for t, seen in (
        (("检查你自己的配置（6 个数依次是 BM BN BK warps stages group），结果加在演示 3 表格的最后一行：",
          f"python3 lecture10/01_config_space.py {' '.join(map(str, mine.as_tuple()))}{keep}"), extra == mine),
        (("看看最大的块配 8 个 warp 卡在哪里：",
          f"python3 lecture10/01_config_space.py {' '.join(map(str, biggest.as_tuple()))}{keep}"), extra == biggest),
        (smem, a.smem is not None and smem[1].endswith(f" --smem {a.smem}"))) if not seen])
    CHARTS.report()


if __name__ == "__main__":
    run(main)
