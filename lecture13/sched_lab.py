"""
第 13 讲 · sched_lab —— 分块 GEMM 在 H100 式 GPU 上要跑多久：一个解析模型（不是实测），以及代价模型引导的调优器。

time(configs, M, N, K) 一次算一个形状在很多配置下的时间（numpy 向量化）。从上往下读，每一步一种效应：
  1. 分块与波次   T = ⌈M/BM⌉·⌈N/BN⌉ 个输出块（边上的块按整块算：分块量化）。一波最多放 132·cps 个 CTA
                 （cps = 每 SM 能驻留的 CTA 数，寄存器、共享内存、warp 数决定）。
  2. 整波和零头   前 ⌊T / (132·cps)⌋ 波是整波：每个 SM 驻留 cps 个 CTA，132 个 SM 都在拉数据；剩下的零头是最后一波，
                 它**有自己的活跃 SM 数** min(零头, 132)，最忙的 SM 驻留 ⌈零头/132⌉ 个。活跃的 SM 少，每个 SM 分到的
                 L2 带宽多、加载延迟短，所以只剩几十块的最后一波比整波快（波次量化还在，但不像整波那么重）。
                 一个 SM 只驻留 1 个 CTA 的大块（prefill 的最优）零头最多省到只剩张量核的时间，省不掉一整波：
                 方阵 2304 的 162 块（128×256）要两波，最优 TFLOPS 比 2048 低约 19%。真机 cuBLAS 在这里不掉，
                 靠的是 split-K / stream-K，这个配置空间里没有（tests/test_sched_lab.py 逐个配置算了下界）。
  3. 每一波里最忙的 SM 的一步（沿 K 走 BK）三件事互相重叠但重叠不完美（p-范数合成，OVERLAP_P）：
       算     q·2·BM·BN·BK 次浮点 / (每 SM 峰值 × MMA 路径效率 × warp 块效率)
       搬     q·(BM+BN)·BK·2 字节从 L2 搬进共享内存 / 每 SM 分到的 L2 带宽 min(L2_BW_PER_SM, L2_BW / 这一波活跃的 SM 数)
       等     Little 定律：每个 CTA 有 stages-1 级加载在路上（stages = 1 算半级：只靠别的 warp 顶着），
              一步至少要 延迟 / (stages-1)；延迟在内存系统空闲时是 LOAD_LATENCY_IDLE，
              所有 SM 都在拉数据时排队变长到 LOAD_LATENCY_BUSY（按这一波活跃 SM 的比例插值）。
     一波 = K 方向的步数 × 一步 + 开头等一次加载；最忙的 SM 的时间 = 各波相加。
  4. 显存（DRAM）  读 A、B、写 C 的字节数。按 group 顺序（GROUP_SIZE_M）发射时，相邻的 group 个行块一起走完所有列块：
                 它们同时在跑、共用同一块 B 列面板，所以 B 每 ⌈行块数 / 一起走的行块数⌉ 遍才从显存重读一次
                 （一起走的行块数 = max(group, 一波放得下的整行数)，不超过行块数）；放得进 L2 的 B 只读一次，
                 一个行块的 A 面板在它那一组里一直留在 L2，只读一次。
                 显存时间 = max(字节 / (HBM 峰值 × HBM_EFFICIENCY), Little 定律的读流时间)：每一行 A、每一列 B 是一条读流，
                 在路上 (stages-1)·BK 个元素，一条流每秒拉 (stages-1)·BK·2 / HBM_LATENCY 字节；同时在读的最多 M 行、
                 N 列（边上的块只算真有的行列），也最多一波 CTA 盖得住的那么多。A 的流和 B 的流并行，各自的时间取大。
                 所以只有几个列块的网格读不满显存（例：70B/8 qkv、M = 128、128×128 的块只有 10 列），
                 而多一个行块、多一列、多一步 K 都不会让它变快。
  5. L2 总量      从显存读进来的字节也要写进 L2，和 SM 从 L2 搬走的字节**抢同一份 L2 带宽**（不是躲在它后面）：
                 L2 总量时间 = (全部 CTA 搬的字节 + 显存字节) / L2_BW。它和最忙 SM 的时间按 p-范数合成（CHIP_OVERLAP_P），
                 两者都看得见。**它产生的效应**：prefill（8B gate_up，M = 4096、8192）里 256×128 比 128×256 快约 1%、
                 group = 16 比 8 快——两者每一步搬的字节、块数都一样，但 group 最大只到 16，BM = 256 时一起走的
                 16 行块盖住 4096 行，B（235 MB 的权重）从显存重读的遍数是 128×256 的一半，填进 L2 的字节少 30% 左右；
                 8 个 warp 比 16 个 warp 快（warp 块大、张量核效率高），因为合成不是纯 max，"算"也看得见。
                 这是讲义"prefill 要 256×128 的大块"的来由；真机上调好的配置更常是 128×256（见 README）。
  6. 合成         时间 = 启动开销 + max(p-范数(最忙 SM 的时间, L2 总量), 显存时间)，且永远不快于屋顶线
                 max(FLOPs / 989.4 TFLOPS, 唯一字节 / 3.35 TB/s)。每一项都随 M、N、K 单调不减，所以多做活不会更快。

硬件常数和旋钮取自选定 GPU 的记录（lecture10/gpus.py，带出处；这段说明里的数字都按默认的 H100 SXM5 写，
--gpu a100 时 SM 数、峰值、带宽换成 A100 的）；标了【估计】的是校准用的旋钮（第三方测量或假设），各自产生的效应：
  HBM_EFFICIENCY     decode（读权重）能跑到峰值带宽的多少            → M = 1 时最优配置约 84% 的 3.35 TB/s
  L2_BW              全部 SM 合起来从 L2 搬数据的速度                → prefill 受它限制：块越大、每字节算得越多，
                                                                       128×128 比 128×256 慢约 30%（只在 SM 都忙时起作用）
  L2_BW_PER_SM       一个 SM 最多能从 L2 拉多快                      → 只在一波的活跃 SM 少于 L2_BW / L2_BW_PER_SM（约 86 个）
                                                                       时起作用：网格小的形状、最后一波的零头
  LOAD_LATENCY_IDLE / LOAD_LATENCY_BUSY
                     一级流水线从发出加载到数据能用的时间（满载时含排队）→ 流水线级数、占用率有用；stages=1 很慢；
                                                                       CTA 很少的网格、最后一波的零头延迟短一些
  OVERLAP_P          一步里算、搬、等的重叠不完美                    → 4 级流水线比 3 级略好
  CHIP_OVERLAP_P     最忙 SM 的时间和 L2 总量的重叠不完美            → prefill 上 8 warp 比 16 warp 快、group 16 比 8 快，
                                                                       而不是因为 L2 总量更大而打平（纯 max 会打平）
  MMA_FALLBACK       没有 wgmma（BM 不是 64 的倍数或 warp 数不是 4 的倍数）时张量核的效率
  WARP_TILE_HALF     warp 块效率 = 累加器/warp ÷ (累加器/warp + 它)：小 warp 块每次浮点要多读共享内存
  HBM_LATENCY        显存延迟（显存那一层的 Little 定律）            → 只有几个列块的网格读不满显存
  LAUNCH_OVERHEAD    每次启动的固定开销
  L2_USABLE          L2 里能留给一个矩阵的容量
这组旋钮沿用上一版的取值，只新加了 CHIP_OVERLAP_P。试过 10、20、30 和 10^6（等于纯 max），要找的是：prefill（8B gate_up，
M = 4096、8192）的最优是 256×128 / 8 warp / 4 级，而且比下一名慢 0.1% 以上（不靠 VALID 的顺序），同时别的数尽量不动。
10^6 在 M = 8192 上让 8 warp 和 16 warp 打平；10、20、30 都分得开（下一名慢 0.16–0.22%），但越小 prefill 掉得越多
（M = 8192 的最优 588、609、616 TFLOPS，纯 max 是 628），所以取 30。第 14 讲的 claims 在 tests/test_claims.py 里都过。
这个模型里张量核很少是瓶颈：prefill 受 L2 带宽限制，decode 受显存带宽限制，所以 MMA_FALLBACK、WARP_TILE_HALF
的影响小。它是为了讲清楚这些效应的形状，不是为了逐个数字对上真机。

最优和平局：optimum(M, N, K) 给出最优配置，外加在它 0.1% 以内的配置数、和它完全一样快的配置数，以及印出来的那个
是按什么规则挑的（Optimum.rule）。decode 上上千个配置一样快（都在等显存读权重）是讲义的论点，不是模型的缺陷；
这时印出来的是 VALID 顺序里的第一个，rule 会这样说。

代价模型引导的调优器 guided_tune：用一个故意简化的模型 cheap_cost（最忙 SM 的算和搬、唯一字节的显存时间）给配置
排序，按顺序"跑"（调用 time），数跑了几次才进入最优的 1% 以内。cheap_cost 看不见流水线级数、warp 块、group，
打平的配置按 VALID 的顺序试——这正是它要试几十到几百次的原因（01_timing_model.py 的演示 3 比较了别的顺序）。

M、N、K 必须是 1 到 2**24 之间的整数（Python int 或 numpy 整数，进来就转成 Python int），否则抛 ValueError，
点名是哪个维度。本模块不打印任何东西。依赖：numpy；../lecture10 的 kernel_lab。
"""

from __future__ import annotations

import math
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lecture10"))
import kernel_lab as _kernel_lab  # noqa: E402
from kernel_lab import VALID, Config, check, ctas_per_sm  # noqa: E402

# ---- 硬件（数据手册）：选定的那块 GPU，和 kernel_lab 读的是同一条记录（gpus.py，带出处；默认 H100 SXM5）----
GPU = _kernel_lab.GPU
SMS = GPU.sms                      # SM 数（H100 132）
PEAK_FLOPS = GPU.peak_flops        # 稠密 BF16 张量核峰值，FLOP/s（H100 989.4e12）
PEAK_PER_SM = PEAK_FLOPS / SMS     # H100 约 7.5 TFLOPS / SM
HBM_BW = GPU.hbm_bw                # 显存峰值带宽，B/s（H100 HBM3 3.35e12）
L2_BYTES = GPU.l2_bytes            # L2（H100 50 MB）
WGMMA = GPU.wgmma                  # 有没有 Hopper 的 wgmma 快路径；没有时所有配置走同一条 mma 路径（MMA_FALLBACK 不起作用）
BYTES = 2                          # bf16

# ---- 校准旋钮【估计】：取自 GPU 记录（H100 上校准；A100 的记录写明哪些没校准，GPU.knob_note）----
# H100 的取值和由来：HBM_EFFICIENCY 0.88 可达带宽约为峰值的 80-90%（微基准）；L2_BW 7.7e12 L2 合计带宽约 2.3 倍 HBM，
# 所有活跃 SM 分；L2_BW_PER_SM 90e9 一个 SM 最多从 L2 拉约 50 B/时钟；LOAD_LATENCY_IDLE 0.7e-6 / LOAD_LATENCY_BUSY 1.3e-6
# 一级流水线从发出加载到数据可用（空闲时 / 所有 SM 都在拉时，排队让延迟变长），s；OVERLAP_P 9 算、搬、等的 p-范数合成
# （越大越接近完美重叠 max()）；MMA_FALLBACK 0.6 旧 mma 路径相对 wgmma 的效率；WARP_TILE_HALF 256 warp 块效率减半时的
# 累加器个数/warp；HBM_LATENCY 0.5e-6 空载显存延迟，s；LAUNCH_OVERHEAD 4e-6 启动开销，s；CHIP_OVERLAP_P 30 最忙 SM
# 的时间和全芯片 L2 总量的 p-范数合成（重叠得比一步里的三件事好）；L2_USABLE = L2 的一半，一个矩阵能留在 L2 里的容量。
HBM_EFFICIENCY = GPU.knobs["HBM_EFFICIENCY"]
L2_BW = GPU.knobs["L2_BW"]
L2_BW_PER_SM = GPU.knobs["L2_BW_PER_SM"]
LOAD_LATENCY_IDLE = GPU.knobs["LOAD_LATENCY_IDLE"]
LOAD_LATENCY_BUSY = GPU.knobs["LOAD_LATENCY_BUSY"]
OVERLAP_P = GPU.knobs["OVERLAP_P"]
MMA_FALLBACK = GPU.knobs["MMA_FALLBACK"]
WARP_TILE_HALF = GPU.knobs["WARP_TILE_HALF"]
HBM_LATENCY = GPU.knobs["HBM_LATENCY"]
LAUNCH_OVERHEAD = GPU.knobs["LAUNCH_OVERHEAD"]
L2_USABLE = L2_BYTES // 2
CHIP_OVERLAP_P = GPU.knobs["CHIP_OVERLAP_P"]

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


MAX_DIM = 2 ** 24                  # 模型能表示的最大维度（16,777,216）：再大，块数、字节数的浮点运算就不再精确


def _check_shape(M, N, K) -> tuple[int, int, int]:
    """检查 M、N、K 并转成 Python int（numpy 的定宽整数在乘法里会悄悄溢出）；不合法就抛 ValueError，点名是哪个维度。"""
    out = []
    for name, v in (("M", M), ("N", N), ("K", K)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} 必须是正整数，拿到的是 {v!r}")
        v = int(v)
        if v > MAX_DIM:
            raise ValueError(f"{name} = {v} 超出了模型能表示的范围（最大 2**24 = {MAX_DIM:,}）；请用更小的维度")
        out.append(v)
    return out[0], out[1], out[2]


def roofline(M: int, N: int, K: int) -> float:
    """屋顶线：任何配置都不可能比它快——峰值算力算完全部浮点，或峰值带宽把 A、B、C 各搬一次。"""
    M, N, K = _check_shape(M, N, K)
    return max(2.0 * M * N * K / PEAK_FLOPS, (M * K + K * N + M * N) * BYTES / HBM_BW)


def _power(x, p):
    """x ** p；p 是不大的整数时用连乘（比 numpy 的通用幂快几倍，结果在浮点误差以内相同）。"""
    if p != int(p) or not 1 <= p <= 64:
        return x ** p
    p, out, base = int(p), None, x
    while p:
        if p & 1:
            out = base if out is None else out * base
        p >>= 1
        if p:
            base = base * base
    return out


def _pnorm(p, *xs):
    """(Σ x^p)^(1/p)：先除以最大的一项，既不溢出也不下溢。"""
    m = xs[0]
    for x in xs[1:]:
        m = np.maximum(m, x)
    return m * sum(_power(x / m, p) for x in xs) ** (1.0 / p)


def _fast_path(c: ConfigArrays) -> np.ndarray:
    """哪些配置走张量核的快路径：有 wgmma 的 GPU（Hopper）要 BM 是 64 的倍数、warp 数是 4 的倍数，其余的退回旧 mma
    路径（效率 MMA_FALLBACK）；没有 wgmma 的 GPU（A100）只有一条 mma 路径，峰值就是它的，全部算快路径。"""
    if not WGMMA:
        return np.ones(c.BM.shape, dtype=bool)
    return (c.BM % 64 == 0) & (c.warps % 4 == 0)


def _mma_factors(c: ConfigArrays):
    """张量核效率的两个因子（模型和 mma_parts 共用）：(走快路径吗, 路径的效率, warp 块效率, 每个 warp 的累加器数)。"""
    wgmma = _fast_path(c)
    acc_per_warp = c.BM * c.BN / c.warps
    return wgmma, np.where(wgmma, 1.0, MMA_FALLBACK), acc_per_warp / (acc_per_warp + WARP_TILE_HALF), acc_per_warp


_DERIVED: dict = {}
_CACHE_LIMIT = 64                  # _DERIVED、每个配置组的整波缓存最多各留这么多项（满了就整个清掉重来）


def _model_key() -> tuple:
    """模型现在用的全部常数（校准旋钮、由它们导出的 HBM_ACHIEVABLE、硬件常数）：按形状、按配置的缓存都用它做键的一部分。
    旋钮不管是 knobs(...) 改的、--knob 改的，还是测试直接替换模块里的值，键都跟着变，不会拿到改之前算的数。"""
    g = globals()
    return (tuple(g[k] for k in KNOBS)
            + (g["HBM_ACHIEVABLE"], g["SMS"], g["PEAK_PER_SM"], g["PEAK_FLOPS"], g["HBM_BW"], g["BYTES"], g["WGMMA"]))


def _derived(c: ConfigArrays, key: tuple | None = None) -> dict:
    """只和配置有关的量（按 ConfigArrays 和模型的全部常数缓存）：MMA 效率、一步的浮点数和 L2 字节、在路上的级数；
    waves 里按 K 存整波（见 _full_wave）。"""
    key = (id(c), _model_key() if key is None else key)
    d = _DERIVED.get(key)
    if d is None or d["arrays"] is not c:
        _, path, _, acc_per_warp = _mma_factors(c)         # Hopper 快路径要 64 的倍数行、整 warp 组
        mma_eff = path * acc_per_warp / (acc_per_warp + WARP_TILE_HALF)   # 运算的先后和以前一样：时间逐位不变
        in_flight = np.maximum(c.stages - 1, 0.5)          # stages=1：不预取，只靠别的 warp 顶半级
        d = dict(arrays=c, mma_eff=mma_eff, in_flight=in_flight,
                 step_math=2 * c.BM * c.BN * c.BK / (PEAK_PER_SM * mma_eff),   # 一个 CTA 一步的"算"（秒）
                 step_bytes=(c.BM + c.BN) * c.BK * BYTES,                      # 一个 CTA 一步从 L2 搬的字节
                 stream=in_flight * c.BK * BYTES / HBM_LATENCY,               # 一条显存读流的带宽（B/s）
                 slots=SMS * c.cps,                                           # 一波最多几个 CTA
                 waves={})                                                    # K → 整波的 (时间, 算, 搬, 等)
        for v in d.values():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False                  # 缓存里的数组谁也不能改（breakdown 会原样交出 mma_eff）
        if len(_DERIVED) > _CACHE_LIMIT:
            _DERIVED.clear()
        _DERIVED[key] = d
    return d


def _wave(d: dict, q, active, k_steps):
    """一波：最忙的 SM 上同时驻留 q 个 CTA，全芯片有 active 个 SM 在拉数据。
    返回这一波的 (时间, 算, 搬, 等)：时间 = k_steps × 一步（算、搬、等的 p-范数）+ 开头等一次加载。"""
    t_math = q * d["step_math"]
    t_l2 = q * d["step_bytes"] / np.minimum(L2_BW_PER_SM, L2_BW / active)   # SM 少的时候每个能多分一点 L2 带宽
    latency = LOAD_LATENCY_IDLE + (LOAD_LATENCY_BUSY - LOAD_LATENCY_IDLE) * active / SMS
    t_wait = latency / d["in_flight"]
    return k_steps * _pnorm(OVERLAP_P, t_math, t_l2, t_wait) + latency, k_steps * t_math, k_steps * t_l2, k_steps * t_wait


def _full_wave(d: dict, c: ConfigArrays, K: int, k_steps):
    """整波（每 SM cps 个 CTA，132 个 SM 都在拉）只和配置、K、旋钮有关，和 M、N 无关：按 K 存在 d（它的键已含全部旋钮）里，
    同一个 K 的形状（同一个投影的 11 个 M）只算一次。算法和直接调 _wave 一模一样，数一位不差。"""
    w = d["waves"].get(K)
    if w is None:
        w = _wave(d, c.cps, SMS, k_steps)
        for v in w:
            v.flags.writeable = False
        if len(d["waves"]) > _CACHE_LIMIT:
            d["waves"].clear()
        d["waves"][K] = w
    return w


def breakdown(c: ConfigArrays, M: int, N: int, K: int) -> dict[str, np.ndarray]:
    """模型的每一项（数组，每个配置一个值）。time() 只取其中的 'time'。"""
    M, N, K = _check_shape(M, N, K)
    if c is VALID_ARRAYS:
        return dict(_valid_parts(M, N, K, _model_key()))      # 缓存里已经是只读视图；给调用的人一个新的 dict
    return _views(_breakdown(c, M, N, K))


def _views(parts: dict) -> dict[str, np.ndarray]:
    """每一项都变成和 'time' 一样长的只读视图（标量项 floor、flops 也展开）：调用的人改不了模型里的数组。
    已经是这个长度的数组（除了两个标量项都是）：它本身先设成只读（_breakdown 这一次新算的，或者本来就只读的缓存），
    交出它的一个视图——和 np.broadcast_to 给的一样只读、也改不回可写，数一模一样，只是快十来倍
    （01_timing_model 一次运行要一万多个这样的视图）。"""
    shape = parts["time"].shape
    out = {}
    for k, v in parts.items():
        if type(v) is np.ndarray and v.shape == shape:
            v.flags.writeable = False
            out[k] = v.view()
        else:
            out[k] = np.broadcast_to(v, shape)
    return out


def _breakdown(c: ConfigArrays, M: int, N: int, K: int, key: tuple | None = None) -> dict:
    """breakdown 的计算本身（M、N、K 已检查过；key 是现在的 _model_key()，不给就现取）：标量项（floor、flops）
    还是标量，数组也还没包成只读视图（_views 做）。对外一律走 breakdown。"""
    d = _derived(c, key)
    # 1. 分块与波次
    tiles_m, tiles_n = np.ceil(M / c.BM), np.ceil(N / c.BN)
    tiles = tiles_m * tiles_n
    per_sm = np.ceil(tiles / SMS)                    # 最忙的 SM 一共分到几块
    k_steps = np.ceil(K / c.BK)                      # K 不整除时最后一步也按整步算
    # 2. 占用率：一波最多 132·cps 个 CTA；整波之后剩下的 rest 个是最后一波（零头），它有自己的活跃 SM 数
    slots = d["slots"]
    full = np.floor(tiles / slots)
    rest = tiles - full * slots
    has_last = rest > 0
    q_last = np.maximum(np.ceil(rest / SMS), 1.0)
    # 3. 最忙的 SM：整波（每 SM cps 个 CTA，132 个 SM 都在拉）× full + 最后一波（q_last 个 CTA，min(rest, 132) 个 SM）
    w_full = _full_wave(d, c, K, k_steps)
    w_last = _wave(d, q_last, np.clip(rest, 1.0, SMS), k_steps)
    t_sm, t_math, t_l2, t_wait = (full * a + np.where(has_last, b, 0.0) for a, b in zip(w_full, w_last))
    q = np.where(full > 0, c.cps, q_last)            # 最忙的 SM 上同时驻留的 CTA
    # 4. 显存：B 的每一块列面板被 ⌈行块数 / 一起走的行块数⌉ 次重读；放得进 L2 的 B 只读一次
    a_bytes, b_bytes, c_bytes = M * K * BYTES, N * K * BYTES, M * N * BYTES
    rows_together = np.minimum(tiles_m, np.maximum(c.group, np.floor(slots / tiles_n)))
    b_reads = np.ceil(tiles_m / rows_together) if b_bytes > L2_USABLE else np.ones_like(tiles_m)
    dram = a_bytes + b_bytes * b_reads + c_bytes     # 一个行块的 A 面板在它那一组里一直留在 L2，只读一次
    t_a = a_bytes / (np.minimum(M, slots * c.BM) * d["stream"])
    t_b = b_bytes * b_reads / (np.minimum(N, slots * c.BN) * d["stream"])
    t_dram = np.maximum(dram / HBM_ACHIEVABLE, np.maximum(t_a, t_b))
    # 5. L2 总量：SM 搬的字节 + 从显存填进 L2 的字节，共用 L2_BW
    t_l2_total = (tiles * k_steps * d["step_bytes"] + dram) / L2_BW
    # 6. 合成
    t_core = _pnorm(CHIP_OVERLAP_P, t_sm, t_l2_total)
    flops = 2.0 * M * N * K
    floor = roofline(M, N, K)
    t = np.maximum(LAUNCH_OVERHEAD + np.maximum(t_core, t_dram), floor)
    return dict(time=t, t_sm=t_sm, t_l2_total=t_l2_total, t_core=t_core, t_dram=t_dram, t_math=t_math, t_l2=t_l2,
                t_wait=t_wait, tiles=tiles, per_sm=per_sm, q=q, full_waves=full, last_wave=rest,
                mma_eff=d["mma_eff"], dram_bytes=dram, b_reads=b_reads, floor=floor, flops=flops,
                # = dram / t_dram，但不绕一圈：卡在可达带宽上时正好是它（dram / (dram / x) 差最后一位，01 印出"可达的 100.000000%"）
                bw=np.minimum(HBM_ACHIEVABLE, dram / np.maximum(t_a, t_b)))


def time(configs, M: int, N: int, K: int) -> np.ndarray:
    """这些配置在形状 (M, N, K) 上的时间（秒），一个配置一个值。configs 是 Config 序列或 ConfigArrays。"""
    M, N, K = _check_shape(M, N, K)
    arrays = configs if isinstance(configs, ConfigArrays) else config_arrays(configs)
    return breakdown(arrays, M, N, K)["time"]


def time_one(config: Config, M: int, N: int, K: int) -> float:
    """一个配置的时间（秒）。"""
    return float(time((config,), M, N, K)[0])


def time_valid(M: int, N: int, K: int) -> np.ndarray:
    """全部 3744 个能启动的配置（kernel_lab.VALID 的顺序）在 (M, N, K) 上的时间。按形状和模型的全部常数（_model_key）
    缓存，返回的数组只读：knobs(...) 里算的和外面算的各占一项，改回讲义的旋钮时直接用改之前算好的。"""
    return _time_valid(*_check_shape(M, N, K), _model_key())


def clear_cache() -> None:
    """清掉按形状、按配置的缓存（计时的时候用：要量的是算，不是查缓存）。缓存的键里有全部旋钮，改旋钮不必清。"""
    _time_valid.cache_clear()
    _valid_parts.cache_clear()
    _cheap_valid.cache_clear()
    _DERIVED.clear()


KNOBS = ("HBM_EFFICIENCY", "L2_BW", "L2_BW_PER_SM", "LOAD_LATENCY_IDLE", "LOAD_LATENCY_BUSY", "OVERLAP_P",
         "CHIP_OVERLAP_P", "MMA_FALLBACK", "WARP_TILE_HALF", "HBM_LATENCY", "LAUNCH_OVERHEAD", "L2_USABLE")


LECTURE_KNOBS = {k: globals()[k] for k in KNOBS}     # 讲义用的取值（模块载入时的值）
KNOB_SPAN = 100.0                  # 旋钮能改到讲义取值的 1/100 到 100 倍：再远模型就不再描述一块 GPU 了
_KNOB_BOUNDS = {                   # 物理上的界：(下界, 上界)，含端点；None = 只受 KNOB_SPAN 限制
    "HBM_EFFICIENCY": (None, 1.0),  # 可达带宽不超过峰值
    "MMA_FALLBACK": (None, 1.0),    # 旧 mma 路径不比 wgmma 快
    "OVERLAP_P": (1.0, None),       # p-范数，p ≥ 1（p = 1 是完全不重叠：三件事相加）
    "CHIP_OVERLAP_P": (1.0, None),
}


def not_a_knob(name: str) -> str:
    """名字不是旋钮时的那句话；大小写、下划线不对的（l2_bw、L2BW）说是哪一个（学生报过：--bud 说了是 --budget，
    --knob l2_bw 只列出十几个名字）。"""
    key = lambda x: x.upper().replace("_", "").replace("-", "")          # noqa: E731
    meant = [k for k in KNOBS if key(k) == key(name)]
    return (f"{name} 不是 sched_lab 的校准旋钮" + (f"：是不是 {meant[0]}？旋钮的名字要照写大小写和下划线" if meant else "")
            + f"（可以改的是 {'、'.join(KNOBS)}）")


def knob_problem(changes: dict) -> str | None:
    """这组旋钮取值能不能用；不能用时返回一句话（哪个旋钮、允许什么），能用返回 None。
    除了各自的范围，还要求 LOAD_LATENCY_BUSY ≥ LOAD_LATENCY_IDLE（否则 SM 越多延迟越短，多做活反而变快）。"""
    for name, value in changes.items():
        if name not in KNOBS:
            return not_a_knob(name)
        try:
            x = float(value)
        except (TypeError, ValueError):
            return f"{name} 要是一个数，收到的是 {value!r}"
        base = LECTURE_KNOBS[name]
        lo, hi = base / KNOB_SPAN, base * KNOB_SPAN
        bound_lo, bound_hi = _KNOB_BOUNDS.get(name, (None, None))
        lo = max(lo, bound_lo) if bound_lo is not None else lo
        hi = min(hi, bound_hi) if bound_hi is not None else hi
        if not lo * (1 - 1e-12) <= x <= hi * (1 + 1e-12):       # 界本身算在内（100 × 4e-06 的浮点误差不算越界）；NaN 被拒
            return (f"{name} 要在 {knob_text(exact_knob(lo))} 到 {knob_text(exact_knob(hi))} 之间"   # 100 × 4e-06 印成 4e-04，
                    f"（{knob_base_said(name)}），"                                                     # 不是 3.9999999999999996e-04
                    f"收到的是 {knob_text(x) if math.isfinite(x) else value}")
    busy = changes.get("LOAD_LATENCY_BUSY", globals()["LOAD_LATENCY_BUSY"])
    idle = changes.get("LOAD_LATENCY_IDLE", globals()["LOAD_LATENCY_IDLE"])
    if busy < idle:
        return (f"LOAD_LATENCY_BUSY（{knob_text(busy)}）不能小于 LOAD_LATENCY_IDLE（{knob_text(idle)}）：满载时的延迟不能比空闲时还短，"
                "否则 SM 越多反而越快，多做活会变快")
    return None


def parse_knobs(settings) -> dict[str, float]:
    """命令行的 ["L2_BW=1.54e13", ...] → {"L2_BW": 1.54e13}；不对时抛 ValueError，消息是一句学生看得懂的话。"""
    out: dict[str, float] = {}
    for text in settings:
        name, eq, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise ValueError(f"'{text}' 要写成 名字=数值，例如 L2_BW={knob_text(2 * LECTURE_KNOBS['L2_BW'])}")
        if name not in KNOBS:
            raise ValueError(not_a_knob(name))
        if name in out:
            raise ValueError(f"{name} 给了两次，只能给一次")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"{name} 的值 '{value}' 不是数（例如 {knob_text(LECTURE_KNOBS[name])}）") from None
    problem = knob_problem(out)
    if problem:
        raise ValueError(problem)
    return out


def knob_text(value: float) -> str:
    """旋钮的值写进命令、句子里的样子：读回来正好是这个数的最短写法；很大、很小的数用指数（1.54e+13、1.8e+11、
    9e-07），其余照常（0.88、30、256）。"""
    value = float(value)
    if value != 0 and math.isfinite(value) and not 1e-3 <= abs(value) < 1e6:
        digits = next(p for p in range(1, 18) if float(f"{value:.{p - 1}e}") == value)
        return f"{value:.{digits - 1}e}"
    text = repr(value)                                 # Python 的 repr 就是读回来不变的最短写法
    return text[:-2] if text.endswith(".0") else text


def exact_knob(value: float) -> float:
    """value 只留 12 位有效数字：建议的命令里印的数（knob_text）和先替学生算时用的数是同一个，而且印出来不会太长。"""
    return float(f"{value:.12g}")


def knob_arguments(changes: dict) -> list[str]:
    """命令行上写出这些旋钮的样子：["--knob L2_BW=1.54e+13", ...]（脚本的"设置："一行和建议的命令都用它）。"""
    return [f"--knob {k}={knob_text(v)}" for k, v in changes.items()]


def add_knob_argument(ap) -> None:
    """给脚本的 argparse 加 --knob 名字=数值（可以给几次）：这次运行里把一个【估计】旋钮改成这个值，文件不动。"""
    ap.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                    help="这次运行把 sched_lab 的一个校准旋钮改成这个值（lecture13/sched_lab.py 不动），可以给几次；"
                         f"旋钮：{', '.join(KNOBS)}。例如 --knob L2_BW={knob_text(2 * LECTURE_KNOBS['L2_BW'])}")


def knobs_from_arguments(ap, args) -> dict[str, float]:
    """add_knob_argument 收到的几项 → {名字: 值}；不对时 ap.error（一句话、退出码 2）。"""
    try:
        return parse_knobs(args.knob)
    except ValueError as e:
        ap.error(f"--knob：{e}")


def knob_base_said(name: str) -> str:
    """旋钮没改时的取值怎么说：讲义的 GPU 上是"讲义用 7.7e+12"；别的 GPU 上那是它在 lecture10/gpus.py 里的记录，
    不是讲义的数（助教报过：L40S 上说"讲义用 1.99e+12"，讲义的 H100 用的是 7.7e+12）。"""
    import gpus
    value = knob_text(LECTURE_KNOBS[name])
    return f"讲义用 {value}" if GPU.key == gpus.DEFAULT else f"lecture10/gpus.py 里 {GPU.short} 用 {value}"


def describe_knobs(changes: dict) -> str:
    """改过旋钮的运行开头要说的那句话：哪几个、讲义用的是多少、下面的数来自改过的模型。"""
    return ("模型改过（--knob，只在这次运行里）：" + "，".join(
        f"{k} = {knob_text(v)}（{knob_base_said(k)}）" for k, v in changes.items())
        + "。下面的数都来自改过的模型；观察仍按讲义的判据检查，不成立的会标出来。")


def changed_knobs() -> dict[str, float]:
    """现在和讲义取值不同的旋钮（在 knobs(...) 里面时就是改过的那些），按 KNOBS 的顺序。"""
    g = globals()
    return {k: g[k] for k in KNOBS if g[k] != LECTURE_KNOBS[k]}


@contextmanager
def knobs(**changes):
    """临时改几个【估计】旋钮（演示"改了会怎样"时先替学生算一遍用，也是脚本 --knob 的实现），退出时改回来；
    缓存不用清：它们的键里有全部旋钮（_model_key）。取值不合理（见 knob_problem）时抛 ValueError。
    例：with knobs(L2_BW=2 * L2_BW): time_valid(...)"""
    problem = knob_problem(changes)
    if problem:
        raise ValueError(problem)
    g = globals()
    old = {k: g[k] for k in changes}
    try:
        g.update(changes)
        g["HBM_ACHIEVABLE"] = HBM_BW * g["HBM_EFFICIENCY"]
        yield
    finally:
        g.update(old)
        g["HBM_ACHIEVABLE"] = HBM_BW * g["HBM_EFFICIENCY"]


_KEEP_PARTS = [0]                  # > 0：在 keeping_breakdowns() 里，time_valid 顺手把各项留在 _valid_parts


@contextmanager
def keeping_breakdowns():
    """块里 time_valid 算一个形状的时间时，把 VALID 在这个形状上的各项也留下（_valid_parts：最近 96 个形状，一项约
    0.5 MB），之后 breakdown(VALID_ARRAYS, ...) 问同一个形状、同一组旋钮时不重算。01_timing_model 用它：先要 88 个
    形状的时间（演示 1），再要同样 88 个形状的各项（演示 2）。别处不用：第 14 讲只要时间，留着各项要白占 40 多 MB。
    算出来的数和块外一样（同一个 _breakdown）。"""
    _KEEP_PARTS[0] += 1
    try:
        yield
    finally:
        _KEEP_PARTS[0] -= 1


@lru_cache(maxsize=1024)
def _time_valid(M: int, N: int, K: int, key: tuple) -> np.ndarray:
    """key 是调用那一刻的 _model_key()：只用来区分缓存项（同一个形状在不同旋钮下各是一项），算的时候照样读模块里的值。"""
    parts = _valid_parts(M, N, K, key) if _KEEP_PARTS[0] else _breakdown(VALID_ARRAYS, M, N, K, key)
    t = np.array(parts["time"])
    t.flags.writeable = False
    return t


@lru_cache(maxsize=96)
def _valid_parts(M: int, N: int, K: int, key: tuple) -> dict:
    """VALID 全部配置在一个形状上的 breakdown（和 breakdown 交出的一样：各项都是只读视图）；key 同 _time_valid。只留最近的 96 个形状（一项约 0.5 MB）：
    够 01_timing_model 在同一组旋钮下先算 88 个形状的时间（演示 1 的屋顶线图）、再拿同样 88 个形状的各项
    （演示 2 数"算"是瓶颈的比例）而不重算（time_valid 只在 keeping_breakdowns() 里往这里放）；time_valid 另存一份
    时间，不受这里挤掉的影响。"""
    return _views(_breakdown(VALID_ARRAYS, M, N, K, key))


# ---- 最优配置，以及它是不是"唯一的"最优 ----

NEAR = 1e-3                        # "一样快"：在最优的 0.1% 以内（模型的差别比这小，真机上分不出）
SAME = 1e-9                        # "时间完全相同"：相对差小于 1e-9（浮点误差以内）


@dataclass(frozen=True)
class Optimum:
    config: Config                 # 印出来的那个最优配置
    time: float                    # 它的时间（秒）
    near: int                      # 在最优 within 以内的配置数（含它自己）
    tied: int                      # 和它时间完全相同的配置数（含它自己）
    tied_fields: tuple[str, ...]   # 时间完全相同的那些配置在哪些字段上不同（tied == 1 时为空）
    within: float

    @property
    def rule(self) -> str:
        """一句话：印出来的这个最优是怎样挑出来的。"""
        if self.tied > 1:
            return (f"{self.tied:,} 个配置时间完全相同（它们的 {'、'.join(self.tied_fields)} 各不相同，但卡在同一个瓶颈上），"
                    f"印的是 VALID 顺序里的第一个；{self.near:,} 个配置在最优的 {self.within:.1%} 以内")
        if self.near > 1:
            return (f"最快的只有它一个，但另有 {self.near - 1:,} 个配置在它的 {self.within:.1%} 以内"
                    "（差别比模型的精度还小，真机上分不出）")
        return f"唯一最快：其余配置都比它慢 {self.within:.1%} 以上"


def optimum(M: int, N: int, K: int, within: float = NEAR) -> Optimum:
    """穷举 3744 个配置的最优，外加：多少个配置在它的 within 以内、多少个和它完全一样快、印出来的是按什么规则挑的
    （完全一样快的——相对差在 SAME 以内——取 VALID 顺序里的第一个，和第 14 讲的 TimeTable.oracle 在量化过的
    log(时间) 上打平时一样）。"""
    t = time_valid(M, N, K)
    # 完全一样快（相对差在 SAME 以内）的取 VALID 顺序里的第一个：np.argmin 取的是浮点误差里最小的那个（助教在
    # H200 上报过：印出来的不是句子说的"VALID 顺序里的第一个"）
    tied = np.flatnonzero(t <= float(t.min()) * (1 + SAME))
    i = int(tied[0])
    best = float(t[i])
    # 完全一样快的那些配置在哪些字段上不同：直接比 VALID_ARRAYS 的列（整数存成 float64，比较是精确的），
    # 和逐个配置取字段、放进集合数不同的值是一回事（decode 上有上千个并列，逐个取要几毫秒）
    fields = tuple(f for f in ("BM", "BN", "BK", "warps", "stages", "group")
                   if np.any(getattr(VALID_ARRAYS, f)[tied] != getattr(VALID_ARRAYS, f)[tied[0]]))
    return Optimum(VALID[i], best, int(np.sum(t <= best * (1 + within))), len(tied), fields, within)


def mma_parts(config: Config) -> dict:
    """一个配置的张量核效率拆成两个因子（相乘就是 explain 的 mma_eff；和模型用的是同一个 _mma_factors）：fast（走不走
    wgmma 快路径）、path（快路径 1，旧 mma 路径 MMA_FALLBACK）、warp_tile（每个 warp 的累加器 acc_per_warp =
    BM×BN/warps 越小越吃不饱：acc / (acc + WARP_TILE_HALF)）。"""
    fast, path, warp_tile, acc = (np.asarray(x)[0] for x in _mma_factors(config_arrays((config,))))
    return dict(fast=bool(fast), path=float(path), warp_tile=float(warp_tile), acc_per_warp=float(acc))


def explain(config: Config, M: int, N: int, K: int) -> dict:
    """一个配置在一个形状上的时间拆解（教学用）：各项时间（µs）、块数、占用率、哪一项是瓶颈。
    parts_us 是最忙的 SM 花在算、搬、等上的时间和显存时间；l2_total_us 是全芯片 L2 总量（SM 搬的 + 从显存填进 L2 的）
    / L2_BW；judged_us 是判瓶颈用的四项（和 parts_us 一样，只是"搬"取 parts_us 的搬和 l2_total_us 里大的那个），
    bound 是其中最大的一项（或者"屋顶线"）。dram_TBps 是这个网格按 Little 定律**最多**能拉的显存带宽（= dram 字节 / 显存时间）；dram_avg_TBps 是
    整个内核时间里平均实际用到的（= dram 字节 / 总时间，不超过前者）。optimum 是这个形状的 Optimum（near、rule）。"""
    M, N, K = _check_shape(M, N, K)
    b = {k: float(v[0]) for k, v in breakdown(config_arrays((config,)), M, N, K).items()}
    parts = {"算（张量核）": b["t_math"], "搬（L2 → 共享内存）": b["t_l2"], "等（加载延迟）": b["t_wait"],
             "显存": b["t_dram"]}
    judged = dict(parts)
    judged["搬（L2 → 共享内存）"] = max(b["t_l2"], b["t_l2_total"])    # L2 总量也是"搬"这一类
    bound = max(judged, key=judged.get)
    if b["floor"] >= LAUNCH_OVERHEAD + max(b["t_core"], b["t_dram"]):
        bound = "屋顶线"
    return dict(time_us=b["time"] * 1e6, bound=bound, parts_us={k: v * 1e6 for k, v in parts.items()},
                judged_us={k: v * 1e6 for k, v in judged.items()},
                l2_total_us=b["t_l2_total"] * 1e6, tiles=int(b["tiles"]), tiles_per_sm=int(b["per_sm"]),
                ctas_per_sm=int(b["q"]), full_waves=int(b["full_waves"]), last_wave_ctas=int(b["last_wave"]),
                mma_eff=b["mma_eff"], dram_MB=b["dram_bytes"] / 1e6, b_reads=b["b_reads"],
                dram_TBps=b["bw"] / 1e12, dram_avg_TBps=b["dram_bytes"] / b["time"] / 1e12,
                tflops=b["flops"] / b["time"] / 1e12, floor_us=b["floor"] * 1e6, optimum=optimum(M, N, K))


# ---- 代价模型引导的调优 ----

def cheap_cost(c: ConfigArrays, M: int, N: int, K: int) -> np.ndarray:
    """故意简化的代价模型：最忙 SM 的算和搬（分块/波次量化、MMA 路径、块的算术强度）与唯一字节的显存时间取大。
    它不知道流水线级数、占用率、延迟、warp 块大小和 group，所以这些字段上的平局只能一个个试。
    c 是 VALID_ARRAYS 时按形状和旋钮缓存（guided_tune 和演示 3 对同一个形状各要一次），返回的数组只读。"""
    M, N, K = _check_shape(M, N, K)
    if c is VALID_ARRAYS:
        return _cheap_valid(M, N, K, _model_key())
    return _cheap_cost(c, M, N, K)


@lru_cache(maxsize=512)
def _cheap_valid(M: int, N: int, K: int, key: tuple) -> np.ndarray:
    """key 同 _time_valid：调用那一刻的 _model_key()，只用来区分缓存项。一项 30 KB；512 项放得下 01_timing_model
    的 4 组旋钮 × 88 个形状（讲义旋钮下的那组在最后的"可以试试 4"里还要用）。"""
    t = _cheap_cost(VALID_ARRAYS, M, N, K)
    t.flags.writeable = False
    return t


def _cheap_cost(c: ConfigArrays, M: int, N: int, K: int) -> np.ndarray:
    """cheap_cost 的计算本身（M、N、K 已检查过）。"""
    per_sm = np.ceil(np.ceil(M / c.BM) * np.ceil(N / c.BN) / SMS)
    k_padded = np.ceil(K / c.BK) * c.BK
    wgmma = _fast_path(c)
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
    M, N, K = _check_shape(M, N, K)
    true_t = time_valid(M, N, K)
    order = np.argsort(cheap_cost(VALID_ARRAYS, M, N, K), kind="stable")
    hit = np.flatnonzero(true_t[order] <= true_t.min() * (1 + tolerance))[0]
    i = order[hit]
    return TuneResult(int(hit) + 1, VALID[i], float(true_t[i]), float(true_t.min()))
