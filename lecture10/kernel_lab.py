"""
第 10 讲 · kernel_lab —— Triton 式矩阵乘法内核的配置空间，以及每个配置要占多少寄存器、多少共享内存。

一个配置 = (BM, BN, BK, warps, stages, group)：
    BM × BN   一个 CTA（线程块）算的输出块大小
    BK        沿 K 方向每一步从显存搬进共享内存的宽度
    warps     每个 CTA 的 warp 数（每个 warp 32 个线程）
    stages    软件流水线的级数：共享内存里同时放几份 (BM + BN) × BK 的输入
    group     GROUP_SIZE_M：相邻的 group 行输出块一起走，提高 L2 复用（Triton 矩阵乘法教程）

候选网格（每个字段的取值）：
    BM, BN ∈ {16, 32, 64, 128, 256}    BK ∈ {32, 64, 128, 256}
    warps  ∈ {2, 4, 8, 16}             stages ∈ {1, 2, 3, 4}      group ∈ {1, 4, 8, 16}
一共 5 × 5 × 4 × 4 × 4 × 4 = 6400 个组合，其中能启动的是 VALID（H100 上 3744 个，A100 上少一些：共享内存小）。

资源模型（bf16 输入、fp32 累加；上限取自选定的 GPU，gpus.py，默认 H100）：
    寄存器 / 线程 = BM·BN / (32·warps) + 40      累加器每线程 BM·BN/(线程数) 个 fp32，外加约 40 个地址、循环变量
    寄存器 / CTA  = 寄存器/线程 × 32·warps         一个 CTA 的寄存器必须放进一个 SM 的 64K 个
    共享内存      = stages · (BM + BN) · BK · 2 B  每级流水线放一块 A (BM×BK) 和一块 B (BK×BN)，bf16 两字节
    warp 的最小工作量：每个 warp 至少拥有 16×16 = 256 个累加器（一条 MMA 指令的输出），否则 warp 多了也没活干
能启动 = 寄存器/线程 ≤ 255、寄存器/CTA ≤ 65536、共享内存 ≤ 每 CTA 的上限（H100 227 KB = 232,448 B，A100 163 KB）、
线程 ≤ 1024、warp 工作量 ≥ 256。
例：256×128 的块配 4 个 warp 要 256·128/128 + 40 = 296 个寄存器/线程 > 255，启动不了；配 8 个 warp 是 168 个，可以。

哪些是硬件的启动上限、哪些是这个模型的约定：
    硬件：每个 CTA 的寄存器 ≤ 65,536、共享内存 ≤ 227 KB、线程 ≤ 1024（CUDA 编程指南的计算能力表、Hopper 调优指南），
        超了真机上确实启动不了。
    约定：每线程最多 255 个寄存器是硬件的上限，但超了在真机上不会启动失败——ptxas 把寄存器压在 255 个、多的溢出到
        本地内存，内核照样跑，只是多了进出本地内存的读写（triton-lang/triton#5572 就是这样一个 255 个寄存器加溢出的
        内核）；这个模型把它算作启动不了。"每个 warp 至少 256 个累加器"也是模型的选择，不是硬件规则。
    所以第 14 讲的"山谷"（256×128 配 4 个 warp，296 个寄存器/线程）在真机上是会溢出、变慢的一步，不是启动不了的一步；
    讲义的论点（一次只挪一个字段会走进很差的中间一步）不变，模型和论断也不因此改动。

本模块只管"能不能启动、占多少资源"，不管快慢（快慢是第 13 讲 sched_lab 的事），也不打印任何东西。
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import gpus

# ---- 硬件上限：选定的那块 GPU（gpus.py 的记录，带出处；默认 H100 SXM5）----
GPU = gpus.selected()
MAX_REGS_PER_THREAD = GPU.max_regs_per_thread      # H100：每线程最多 255 个 32 位寄存器
REGS_PER_SM = GPU.regs_per_sm                      # H100：每个 SM 64K 个 32 位寄存器
MAX_SMEM_PER_BLOCK = GPU.smem_per_block            # H100：每个 CTA 最多 227 KB 共享内存
SMEM_PER_SM = GPU.smem_per_sm                      # H100：每个 SM 228 KB 共享内存
MAX_THREADS_PER_BLOCK = GPU.max_threads_per_block
MAX_THREADS_PER_SM = GPU.max_threads_per_sm        # H100：64 个 warp
MAX_BLOCKS_PER_SM = GPU.max_blocks_per_sm
WARP = 32                          # 每个 warp 32 个线程

# ---- 模型的约定（估计值，不是手册上的数）----
REG_OVERHEAD = 40                  # 累加器以外每线程约 40 个寄存器（地址、循环变量、epilogue）
MIN_ACC_PER_WARP = 256             # 每个 warp 至少 16×16 个累加器
SMEM_RESERVED_PER_BLOCK = 1024     # 驱动给每个 CTA 保留 1 KB 共享内存（计算每 SM 放几个 CTA 时用）
BYTES = 2                          # bf16

# ---- 候选网格 ----
BM_VALUES = (16, 32, 64, 128, 256)
BN_VALUES = (16, 32, 64, 128, 256)
BK_VALUES = (32, 64, 128, 256)
WARPS_VALUES = (2, 4, 8, 16)
STAGES_VALUES = (1, 2, 3, 4)
GROUP_VALUES = (1, 4, 8, 16)
FIELDS = ("BM", "BN", "BK", "warps", "stages", "group")
GRID = dict(zip(FIELDS, (BM_VALUES, BN_VALUES, BK_VALUES, WARPS_VALUES, STAGES_VALUES, GROUP_VALUES)))


@dataclass(frozen=True, order=True)
class Config:
    """一个内核配置。不可变、可哈希、可排序（按字段顺序）。"""
    BM: int
    BN: int
    BK: int
    warps: int
    stages: int
    group: int

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        return (self.BM, self.BN, self.BK, self.warps, self.stages, self.group)

    def __repr__(self) -> str:
        return (f"Config(BM={self.BM}, BN={self.BN}, BK={self.BK}, "
                f"warps={self.warps}, stages={self.stages}, group={self.group})")

    def replace(self, **changes: int) -> "Config":
        """改几个字段，返回新配置（原配置不变）。"""
        return Config(**{**dict(zip(FIELDS, self.as_tuple())), **changes})


def regs_per_thread(c: Config) -> int:
    return c.BM * c.BN // (WARP * c.warps) + REG_OVERHEAD   # fp32 累加器 + 开销


def threads(c: Config) -> int:
    return WARP * c.warps


def regs_per_block(c: Config) -> int:
    return regs_per_thread(c) * threads(c)


def smem_bytes(c: Config) -> int:
    return c.stages * (c.BM + c.BN) * c.BK * BYTES           # 每级一块 A 和一块 B


def acc_per_warp(c: Config) -> int:
    return c.BM * c.BN // c.warps


def problems(c: Config) -> list[str]:
    """这个配置启动不了的原因（每条写明哪种资源、用了多少、上限多少）；能启动就返回空列表。"""
    out = []
    r = regs_per_thread(c)
    if r > MAX_REGS_PER_THREAD:
        out.append(f"寄存器 {r} 个/线程 > {MAX_REGS_PER_THREAD}（{c.BM}×{c.BN} 的 fp32 累加器分给 {threads(c)} 个线程，"
                   f"每线程 {c.BM * c.BN // threads(c)} 个，再加 {REG_OVERHEAD} 个开销）")
    if regs_per_block(c) > REGS_PER_SM:
        out.append(f"寄存器 {regs_per_block(c):,} 个/CTA > 一个 SM 的 {REGS_PER_SM:,} 个")
    if smem_bytes(c) > MAX_SMEM_PER_BLOCK:
        out.append(f"共享内存 {smem_bytes(c):,} B > {MAX_SMEM_PER_BLOCK:,} B（{MAX_SMEM_PER_BLOCK / 1024:.0f} KB）"
                   f"：{c.stages} 级 × ({c.BM}+{c.BN}) × {c.BK} × 2 B")
    if threads(c) > MAX_THREADS_PER_BLOCK:
        out.append(f"线程 {threads(c)} 个/CTA > {MAX_THREADS_PER_BLOCK}")
    if acc_per_warp(c) < MIN_ACC_PER_WARP:
        out.append(f"每个 warp 只有 {acc_per_warp(c)} 个累加器 < {MIN_ACC_PER_WARP}（16×16）：{c.warps} 个 warp 分 "
                   f"{c.BM}×{c.BN} 的块，warp 太多")
    return out


def one_field_fixes(c: Config) -> list[str]:
    """启动不了的配置只改一个字段就能启动的写法（"warps=8"）：按 warps、stages、BK、BN、BM 的次序，每个字段取离原值
    最近（按倍数算，一样近时取小的：warps=4 先试 2 再试 8）的一个能启动的值；group 不影响能不能启动，不列。不在候选
    网格上的配置返回空列表（先改回网格上）。stages 不是 2 的幂，所以按倍数、不按二进制位数比（审读报过：stages=4 的
    共享内存超了，按位数 2 和 3 一样近，建议了 stages=2，其实 stages=3 就能启动、少丢一级流水线）。
    学生报过：BM=256 的信息只说寄存器超了，没说第 10 讲讲的改法（warp 加倍，每线程的累加器减半）。"""
    if off_grid(c):
        return []
    out = []
    for f in ("warps", "stages", "BK", "BN", "BM"):
        now = getattr(c, f)
        for v in sorted(GRID[f], key=lambda v: (max(v, now) / min(v, now), v)):
            if v != now and can_launch(c.replace(**{f: v})):
                out.append(f"{f}={v}")
                break
    return out


def off_grid(c: Config) -> list[str]:
    """不在候选网格上的字段（例如 BM=48）。"""
    return [f"{f}={v} 不在候选值 {GRID[f]} 里" for f, v in zip(FIELDS, c.as_tuple()) if v not in GRID[f]]


# 每种资源一个检查：名字 → 这个配置是不是超了它（rejection_counts 和 overflow_kinds 共用）
RESOURCE_CHECKS = {"寄存器/线程": lambda c: regs_per_thread(c) > MAX_REGS_PER_THREAD,
                   "寄存器/CTA": lambda c: regs_per_block(c) > REGS_PER_SM,
                   "共享内存": lambda c: smem_bytes(c) > MAX_SMEM_PER_BLOCK,
                   "线程/CTA": lambda c: threads(c) > MAX_THREADS_PER_BLOCK,
                   "warp 工作量": lambda c: acc_per_warp(c) < MIN_ACC_PER_WARP}


def can_launch(c: Config) -> bool:
    """能启动：哪种资源都没超。和"problems(c) 是空列表"一样，只是不拼说明文字（import 时网格上的 6,400 个配置
    各查一次）；tests/test_kernel_lab.py 对整个网格比过两者。"""
    return not any(f(c) for f in RESOURCE_CHECKS.values())


def check(c: Config) -> None:
    """启动不了就抛 ValueError，信息里写明哪种资源超了。"""
    msgs = off_grid(c) + problems(c)
    if msgs:
        raise ValueError(f"{c!r} 不能启动：" + "；".join(msgs))


def ctas_per_sm(c: Config) -> int:
    """一个 SM 上同时能驻留几个这样的 CTA（受寄存器、共享内存、线程数、32 个 CTA 的上限限制）。"""
    by_regs = REGS_PER_SM // regs_per_block(c)
    by_smem = SMEM_PER_SM // (smem_bytes(c) + SMEM_RESERVED_PER_BLOCK)
    by_threads = MAX_THREADS_PER_SM // threads(c)
    return max(0, min(by_regs, by_smem, by_threads, MAX_BLOCKS_PER_SM))


def all_configs() -> tuple[Config, ...]:
    """候选网格上的全部组合（能不能启动都算），按字段顺序。"""
    return tuple(Config(*v) for v in itertools.product(*GRID.values()))


VALID: tuple[Config, ...] = tuple(c for c in all_configs() if can_launch(c))
VALID_INDEX: dict[Config, int] = {c: i for i, c in enumerate(VALID)}


def overflow_kinds(c: Config) -> list[str]:
    """这个配置超了哪几种资源（RESOURCE_CHECKS 的名字）；不在候选网格上的记作"不在网格上"。"""
    return (["不在网格上"] if off_grid(c) else []) + [k for k, f in RESOURCE_CHECKS.items() if f(c)]


def rejection_counts() -> dict[str, int]:
    """候选网格里被每种资源挡掉的配置数（一个配置可能同时超几种）。"""
    cs = all_configs()
    return {k: sum(map(f, cs)) for k, f in RESOURCE_CHECKS.items()}

