"""
第 13 讲 · sched_lab —— 分块 GEMM 在 H100 式 GPU 上要跑多久：一个解析模型（不是实测），以及代价模型引导的调优器。

time(configs, M, N, K) 一次算一个形状在很多配置下的时间（numpy 向量化）。从上往下读，每一步一种效应：
  1. 分块与波次   T = ⌈M/BM⌉·⌈N/BN⌉ 个输出块分给 132 个 SM；最忙的 SM 分到 ⌈T/132⌉ 块（波次量化），
                 边上的块按整块算（分块量化）。
  2. 占用率       一个 SM 同时驻留 q = min(每 SM 能放的 CTA 数, 它分到的块数) 个 CTA（寄存器、共享内存、warp 数决定）。
  3. 一个 SM 的一步（沿 K 走 BK）三件事互相重叠但重叠不完美（p-范数合成，OVERLAP_P）：
       算     q·2·BM·BN·BK 次浮点 / (每 SM 峰值 × MMA 路径效率 × warp 块效率)
       搬     q·(BM+BN)·BK·2 字节从 L2 搬进共享内存 / 每 SM 分到的 L2 带宽 min(L2_BW_PER_SM, L2_BW / 活跃 SM 数)
       等     Little 定律：每个 CTA 有 stages-1 级加载在路上（stages = 1 算半级：只靠别的 warp 顶着），
              一步至少要 延迟 / (stages-1)；延迟在内存系统空闲时是 LOAD_LATENCY_IDLE，
              所有 SM 都在拉数据时排队变长到 LOAD_LATENCY_BUSY（按活跃 SM 的比例插值）。
     最忙的 SM 分几轮跑完它的块，每轮开头还要等一次加载。
  4. 显存（DRAM）  读 A、B、写 C 的字节数 / 可达带宽。B 的每一块列面板被 ⌈行块数 / 同时在跑的行块数⌉ 次重读，
                 group（GROUP_SIZE_M）让相邻的 group 行块一起走，减少重读；放得进 L2 的 B 只读一次。
                 可达带宽 = min(HBM 峰值 × HBM_EFFICIENCY, 在路上的不同字节 / HBM_LATENCY)（Little 定律）：
                 每个列块在读自己的 B 面板、每个行块读自己的 A 面板；不同行块读同一块 B 在 L2 里命中，
                 不多占显存请求。所以只有几个列块的网格读不满显存（例：70B/8 qkv、M = 128、128×128 的块只有 10 列），
                 而多做一个行块的活不会反而更快。
  5. 合成         时间 = 启动开销 + max(最忙 SM 的时间, 显存时间)，且永远不快于屋顶线
                 max(FLOPs / 989.4 TFLOPS, 唯一字节 / 3.35 TB/s)。

硬件常数取 H100 SXM5 数据手册的值；标了【估计】的是校准用的旋钮（第三方测量或假设），各自产生的效应：
  HBM_EFFICIENCY     decode（读权重）能跑到峰值带宽的多少            → M = 1 时最优配置约 84% 的 3.35 TB/s
  L2_BW              全部 SM 合起来从 L2 搬数据的速度                → prefill 受它限制：块越大、每字节算得越多，
                                                                       128×256 比 128×128 快约 30%（只在 SM 都忙时起作用）
  L2_BW_PER_SM       一个 SM 最多能从 L2 拉多快                      → 只在活跃的 SM 不到三分之二时起作用（网格小的形状）
  LOAD_LATENCY_IDLE / LOAD_LATENCY_BUSY
                     一级流水线从发出加载到数据能用的时间（满载时含排队）→ 流水线级数、占用率有用；stages=1 很慢；
                                                                       CTA 很少的网格延迟短一些
  OVERLAP_P          算、搬、等的重叠不完美                          → 4 级流水线比 3 级略好
  MMA_FALLBACK       没有 wgmma（BM 不是 64 的倍数或 warp 数不是 4 的倍数）时张量核的效率
  WARP_TILE_HALF     warp 块效率 = 累加器/warp ÷ (累加器/warp + 它)：小 warp 块每次浮点要多读共享内存
  HBM_LATENCY        显存延迟（显存那一层的 Little 定律）            → 只有几个列块的网格读不满显存
  LAUNCH_OVERHEAD    每次启动的固定开销
  L2_USABLE          L2 里能留给一个矩阵的容量
这个模型里张量核很少是瓶颈：prefill 受 L2 带宽限制，decode 受显存带宽限制，所以 MMA_FALLBACK、WARP_TILE_HALF
的影响小。它是为了讲清楚这些效应的形状，不是为了逐个数字对上真机。

代价模型引导的调优器 guided_tune：用一个故意简化的模型 cheap_cost（最忙 SM 的算和搬、唯一字节的显存时间）给配置
排序，按顺序"跑"（调用 time），数跑了几次才进入最优的 1% 以内。cheap_cost 看不见流水线级数、warp 块、group，
打平的配置按 VALID 的顺序试——这正是它要试几十到几百次的原因（01_timing_model.py 的演示 3 比较了别的顺序）。

本模块不打印任何东西。依赖：numpy；../lecture10 的 kernel_lab。
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lecture10"))
from kernel_lab import VALID, Config, check, ctas_per_sm  # noqa: E402

# ---- H100 SXM5（数据手册）----
SMS = 132                          # SM 数
PEAK_FLOPS = 989.4e12              # 稠密 BF16 张量核峰值，FLOP/s
PEAK_PER_SM = PEAK_FLOPS / SMS     # 约 7.5 TFLOPS / SM
HBM_BW = 3.35e12                   # HBM3 峰值带宽，B/s
L2_BYTES = 50 * 2**20              # 50 MB L2
BYTES = 2                          # bf16

# ---- 校准旋钮【估计】----
HBM_EFFICIENCY = 0.88              # 【估计】可达带宽约为峰值的 80-90%（微基准）
L2_BW = 7.7e12                     # 【估计】L2 合计带宽约 7.7 TB/s（约 2.3 倍 HBM），所有活跃 SM 分
L2_BW_PER_SM = 90e9                # 【估计】一个 SM 最多从 L2 拉约 90 GB/s（约 50 B/时钟）
LOAD_LATENCY_IDLE = 0.7e-6         # 【估计】一级流水线从发出加载到数据可用：内存系统空闲时，s
LOAD_LATENCY_BUSY = 1.3e-6         # 【估计】所有 SM 都在拉数据时（排队让延迟变长），s
OVERLAP_P = 9.0                    # 【估计】算、搬、等的 p-范数合成；越大越接近完美重叠 max()
MMA_FALLBACK = 0.6                 # 【估计】旧 mma 路径相对 wgmma 的效率
WARP_TILE_HALF = 256               # 【估计】warp 块效率减半时的累加器个数/warp
HBM_LATENCY = 0.5e-6               # 【估计】空载时的显存延迟，s
LAUNCH_OVERHEAD = 4e-6             # 【估计】启动开销，s
L2_USABLE = L2_BYTES // 2          # 【估计】一个矩阵能留在 L2 里的容量

HBM_ACHIEVABLE = HBM_BW * HBM_EFFICIENCY


@dataclass(frozen=True)
class ConfigArrays:
    """一组配置按字段拆成 numpy 数组（向量化计算用）。"""
    BM: np.ndarray
    BN: np.ndarray
    BK: np.ndarray
    warps: np.ndarray
    stages: np.ndarray
    group: np.ndarray
    cps: np.ndarray                # 每 SM 能驻留的 CTA 数


def config_arrays(configs) -> ConfigArrays:
    """把配置序列拆成数组；任何一个不能启动就抛 ValueError。"""
    configs = tuple(configs)
    for c in configs:
        if not isinstance(c, Config):
            raise ValueError(f"需要 kernel_lab.Config，拿到的是 {type(c).__name__}: {c!r}")
        check(c)
    return _arrays(configs)


@lru_cache(maxsize=64)
def _arrays(configs: tuple[Config, ...]) -> ConfigArrays:
    cols = np.array([c.as_tuple() for c in configs], dtype=np.float64).reshape(-1, 6).T
    return ConfigArrays(*cols, np.array([ctas_per_sm(c) for c in configs], dtype=np.float64))


VALID_ARRAYS = _arrays(VALID)


def _check_shape(M, N, K) -> None:
    for name, v in (("M", M), ("N", N), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} 必须是正整数，拿到的是 {v!r}")


def _pnorm(*xs):
    return sum(x ** OVERLAP_P for x in xs) ** (1.0 / OVERLAP_P)


def roofline(M: int, N: int, K: int) -> float:
    """屋顶线：任何配置都不可能比它快——峰值算力算完全部浮点，或峰值带宽把 A、B、C 各搬一次。"""
    return max(2.0 * M * N * K / PEAK_FLOPS, (M * K + K * N + M * N) * BYTES / HBM_BW)


def breakdown(c: ConfigArrays, M: int, N: int, K: int) -> dict[str, np.ndarray]:
    """模型的每一项（数组，每个配置一个值）。time() 只取其中的 'time'。"""
    # 1. 分块与波次
    tiles_m, tiles_n = np.ceil(M / c.BM), np.ceil(N / c.BN)
    tiles = tiles_m * tiles_n
    per_sm = np.ceil(tiles / SMS)                    # 最忙的 SM 分到几块（波次量化）
    k_steps = np.ceil(K / c.BK)                      # K 不整除时最后一步也按整步算
    # 2. 占用率
    q = np.minimum(c.cps, per_sm)                    # 这个 SM 上同时在跑的 CTA
    rounds = np.ceil(per_sm / q)
    # 3. 一个 SM 的一步
    wgmma = (c.BM % 64 == 0) & (c.warps % 4 == 0)    # Hopper 快路径要 64 的倍数行、整 warp 组
    acc_per_warp = c.BM * c.BN / c.warps
    mma_eff = np.where(wgmma, 1.0, MMA_FALLBACK) * acc_per_warp / (acc_per_warp + WARP_TILE_HALF)
    t_math = q * 2 * c.BM * c.BN * c.BK / (PEAK_PER_SM * mma_eff)
    active_sms = np.minimum(tiles, SMS)
    l2_per_sm = np.minimum(L2_BW_PER_SM, L2_BW / active_sms)   # SM 少的时候每个能多分一点 L2 带宽
    t_l2 = q * (c.BM + c.BN) * c.BK * BYTES / l2_per_sm
    in_flight = np.maximum(c.stages - 1, 0.5)        # stages=1：不预取，只靠别的 warp 顶半级
    latency = LOAD_LATENCY_IDLE + (LOAD_LATENCY_BUSY - LOAD_LATENCY_IDLE) * active_sms / SMS
    t_wait = latency / in_flight
    t_step = _pnorm(t_math, t_l2, t_wait)
    t_sm = rounds * (k_steps * t_step + latency)         # 每轮开头要等第一次加载
    # 4. 显存
    a_bytes, b_bytes, c_bytes = M * K * BYTES, N * K * BYTES, M * N * BYTES
    concurrent = np.minimum(tiles, SMS * c.cps)          # 同时在跑的 CTA
    rows_live = np.minimum(tiles_m, np.maximum(np.minimum(c.group, tiles_m), np.floor(concurrent / tiles_n)))
    b_reads = 1.0 if b_bytes <= L2_USABLE else np.ceil(tiles_m / rows_live)
    a_reads = 1.0                                        # 一个行块的 A 面板在它那一条里一直留在 L2
    dram = a_bytes * a_reads + b_bytes * b_reads + c_bytes
    # Little 定律：显存带宽 = 在路上的**不同**字节 / 显存延迟。每个列块在读自己的一块 B 面板、每个行块读自己的 A 面板，
    # 各有 (stages-1)·BK 列在路上；不同行块读同一块 B 在 L2 里命中，不多占显存请求。所以多一个行块只多一份 A 的请求，
    # 做更多的活不会反而更快；只有几个列块的网格（例：70B/8 qkv、M = 128、128×128 的块只有 10 列）读不满显存。
    panels_live = np.minimum(tiles_n, SMS * c.cps) * c.BN + np.minimum(tiles_m, SMS * c.cps) * c.BM
    bw = np.minimum(HBM_ACHIEVABLE, in_flight * panels_live * c.BK * BYTES / HBM_LATENCY)
    t_dram = dram / bw
    # 5. 合成
    flops = 2.0 * M * N * K
    floor = roofline(M, N, K)
    t = np.maximum(LAUNCH_OVERHEAD + np.maximum(t_sm, t_dram), floor)
    parts = dict(time=t, t_sm=t_sm, t_dram=t_dram, t_math=rounds * k_steps * t_math, t_l2=rounds * k_steps * t_l2,
                 t_wait=rounds * k_steps * t_wait, tiles=tiles, per_sm=per_sm, q=q, mma_eff=mma_eff,
                 dram_bytes=dram, bw=bw, floor=floor, flops=flops)
    return {k: np.broadcast_to(v, t.shape) for k, v in parts.items()}


def time(configs, M: int, N: int, K: int) -> np.ndarray:
    """这些配置在形状 (M, N, K) 上的时间（秒），一个配置一个值。configs 是 Config 序列或 ConfigArrays。"""
    _check_shape(M, N, K)
    arrays = configs if isinstance(configs, ConfigArrays) else config_arrays(configs)
    return breakdown(arrays, M, N, K)["time"]


def time_one(config: Config, M: int, N: int, K: int) -> float:
    """一个配置的时间（秒）。"""
    return float(time((config,), M, N, K)[0])


def time_valid(M: int, N: int, K: int) -> np.ndarray:
    """全部 3744 个能启动的配置（kernel_lab.VALID 的顺序）在 (M, N, K) 上的时间。按形状缓存，返回的数组只读。"""
    _check_shape(M, N, K)
    return _time_valid(int(M), int(N), int(K))


def clear_cache() -> None:
    """清掉 time_valid 的缓存（计时的时候用：要量的是算，不是查缓存）。"""
    _time_valid.cache_clear()


@lru_cache(maxsize=1024)
def _time_valid(M: int, N: int, K: int) -> np.ndarray:
    t = np.array(breakdown(VALID_ARRAYS, M, N, K)["time"])
    t.flags.writeable = False
    return t


def explain(config: Config, M: int, N: int, K: int) -> dict:
    """一个配置在一个形状上的时间拆解（教学用）：各项时间（µs）、块数、占用率、哪一项是瓶颈。
    dram_TBps 是这个网格按 Little 定律**最多**能拉的显存带宽；dram_avg_TBps 是整个内核时间里平均实际用到的。"""
    _check_shape(M, N, K)
    b = {k: float(v[0]) for k, v in breakdown(config_arrays((config,)), M, N, K).items()}
    parts = {"算（张量核）": b["t_math"], "搬（L2 → 共享内存）": b["t_l2"], "等（加载延迟）": b["t_wait"],
             "显存": b["t_dram"]}
    bound = max(parts, key=parts.get)
    if b["floor"] >= LAUNCH_OVERHEAD + max(b["t_sm"], b["t_dram"]):
        bound = "屋顶线"
    return dict(time_us=b["time"] * 1e6, bound=bound, parts_us={k: v * 1e6 for k, v in parts.items()},
                tiles=int(b["tiles"]), tiles_per_sm=int(b["per_sm"]), ctas_per_sm=int(b["q"]),
                mma_eff=b["mma_eff"], dram_MB=b["dram_bytes"] / 1e6, dram_TBps=b["bw"] / 1e12,
                dram_avg_TBps=b["dram_bytes"] / b["time"] / 1e12,
                tflops=b["flops"] / b["time"] / 1e12, floor_us=b["floor"] * 1e6)


# ---- 代价模型引导的调优 ----

def cheap_cost(c: ConfigArrays, M: int, N: int, K: int) -> np.ndarray:
    """故意简化的代价模型：最忙 SM 的算和搬（分块/波次量化、MMA 路径、块的算术强度）与唯一字节的显存时间取大。
    它不知道流水线级数、占用率、延迟、warp 块大小和 group，所以这些字段上的平局只能一个个试。"""
    per_sm = np.ceil(np.ceil(M / c.BM) * np.ceil(N / c.BN) / SMS)
    k_padded = np.ceil(K / c.BK) * c.BK
    wgmma = (c.BM % 64 == 0) & (c.warps % 4 == 0)
    t_math = per_sm * 2 * c.BM * c.BN * k_padded / (PEAK_PER_SM * np.where(wgmma, 1.0, MMA_FALLBACK))
    t_l2 = per_sm * (c.BM + c.BN) * k_padded * BYTES / np.minimum(L2_BW_PER_SM, L2_BW / SMS)
    t_mem = (M * K + N * K + M * N) * BYTES / HBM_ACHIEVABLE
    return np.maximum(np.maximum(t_math, t_l2), t_mem)


@dataclass(frozen=True)
class TuneResult:
    runs: int                      # "跑了几次内核"才进入最优的 tolerance 以内
    config: Config                 # 那时找到的配置
    time: float                    # 它的时间（秒）
    optimum: float                 # 穷举得到的最优时间（秒），只用来判断停在哪里


def guided_tune(M: int, N: int, K: int, tolerance: float = 0.01) -> TuneResult:
    """按代价模型从好到坏的顺序逐个"跑"配置，直到某个配置进入最优的 tolerance 以内。平局按 VALID 的顺序。"""
    _check_shape(M, N, K)
    true_t = time_valid(M, N, K)
    order = np.argsort(cheap_cost(VALID_ARRAYS, M, N, K), kind="stable")
    hit = np.flatnonzero(true_t[order] <= true_t.min() * (1 + tolerance))[0]
    i = order[hit]
    return TuneResult(int(hit) + 1, VALID[i], float(true_t[i]), float(true_t.min()))
