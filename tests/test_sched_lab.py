"""lecture13/sched_lab：解析 H100 模型的逐配置标量参照实现、物理常识（屋顶线、单调性）、坏输入、
explain / time_one、第 14 讲依赖的校准事实（claims.md 的 P4–P6）和代价模型引导的调优器（C4）。"""

import functools
import itertools
import math
import re
import random
import statistics

import numpy as np
import pytest

import kernel_lab
import sched_lab
from kernel_lab import VALID, VALID_INDEX, Config

# ---- 形状 ----
LAYERS = {"8B qkv": (6144, 4096), "8B o": (4096, 4096), "8B gate_up": (28672, 4096), "8B down": (4096, 14336),
          "70B/8 qkv": (1280, 8192), "70B/8 o": (8192, 1024), "70B/8 gate_up": (7168, 8192),
          "70B/8 down": (8192, 3584)}
TOKENS = (1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
LECTURE_SHAPES = tuple((M, N, K) for (N, K) in LAYERS.values() for M in TOKENS)
FEW_SHAPES = tuple((M, N, K) for (N, K) in LAYERS.values() for M in (1, 128, 8192))
STEP_SHAPES = tuple((M, N, K) for (N, K) in LAYERS.values() for M in (1, 16, 64, 256, 2048, 8192))
ODD_SHAPES = ((3, 777, 12000), (12000, 3, 5), (1, 1, 1), (1, 1, 100_000), (100_000, 1, 1), (7, 13, 17),
              (8193, 28673, 4097), (129, 4097, 65), (1, 65536, 16), (5000, 5000, 5000))
REF_SHAPES = ((1, 28672, 4096), (16, 28672, 4096), (128, 1280, 8192), (8192, 28672, 4096), (512, 4096, 14336),
              (2048, 8192, 1024), (64, 7168, 8192), (4096, 8192, 3584), (1024, 4096, 4096), (256, 6144, 4096),
              (512, 25600, 512), (512, 25601, 512), (3, 777, 12000), (12000, 3, 5), (1, 1, 1))
# (1024, 4096, 4096)、(256, 6144, 4096)：B 在 L2_USABLE（25 MiB）和整个 L2（50 MiB）之间；
# (512, 25600, 512)：B 恰好 25 MiB（只读一次），(512, 25601, 512)：多一列就要重读

EXPERT_SMALL = Config(16, 64, 128, 4, 4, 1)      # 第 14 讲专家：M ≤ 16
EXPERT_BIG = Config(128, 128, 64, 4, 3, 8)       # 第 14 讲专家：其余
# 挑出来的几个（讲义的专家、prefill 的大块、几个边角）：只留选定的 GPU 上能启动的（A100 放不下 4 级的大块），
# 再加上 VALID 的头尾——夹具从数据里来，换一块 GPU 不会在收集时就出错
HAND_PICKED = tuple(c for c in (EXPERT_BIG, Config(128, 256, 64, 8, 4, 8), EXPERT_SMALL, Config(256, 128, 64, 8, 4, 8),
                                Config(64, 64, 64, 4, 1, 1), Config(16, 256, 128, 2, 3, 1),
                                Config(32, 64, 256, 2, 3, 16)) if c in VALID_INDEX) + (VALID[0], VALID[-1])
SAMPLE = tuple(dict.fromkeys(HAND_PICKED + tuple(random.Random(13).sample(VALID, 195))))   # 约 200 个，去重、顺序固定

BM_ARR, BN_ARR = np.array([c.BM for c in VALID]), np.array([c.BN for c in VALID])


@functools.lru_cache(maxsize=None)
def valid_times(M, N, K):
    """sched_lab.time_valid 的缓存（返回的数组只读），几个测试共用 88 个形状的结果。"""
    return sched_lab.time_valid(M, N, K)


def expert(M):
    return EXPERT_SMALL if M <= 16 else EXPERT_BIG


def roofline_by_hand(M, N, K):
    """数据手册的屋顶线：峰值（H100 989.4 TFLOPS）算完全部浮点，或峰值带宽（H100 3.35 TB/s）把 A、B、C 各搬一次
    （bf16）。数直接从 GPU 记录（lecture10/gpus.py）读，不经过 sched_lab。"""
    g = kernel_lab.GPU
    return max(2.0 * M * N * K / g.peak_flops, (M * K + K * N + M * N) * 2 / g.hbm_bw)


def ceil_div(a, b):
    return -(-a // b)


def pnorm(p, *xs):
    m = max(xs)
    return m * sum((x / m) ** p for x in xs) ** (1.0 / p)


def reference_time(cfg, M, N, K):
    """标量参照实现：照 sched_lab 文档（和 h100-model.md 的物理）一个配置一个配置用 math / 整数算，
    只从 sched_lab 读常数，不调用它的 breakdown / time，也不用 kernel_lab 的资源函数。"""
    S, G = sched_lab, kernel_lab.GPU                   # 硬件上限直接取 GPU 记录（H100：64K 寄存器、228 KB、2048 线程）
    BM, BN, BK, warps, stages, group = cfg.as_tuple()
    # 0. 每 SM 驻留几个 CTA：寄存器（累加器 + 40）、共享内存（每 CTA 另留 1 KB）、2048 线程、32 个 CTA
    threads = 32 * warps
    regs_per_cta = (BM * BN // threads + 40) * threads
    smem = stages * (BM + BN) * BK * 2
    cps = min(G.regs_per_sm // regs_per_cta, G.smem_per_sm // (smem + 1024), G.max_threads_per_sm // threads,
              G.max_blocks_per_sm)
    assert cps >= 1
    # 1. 分块；K 不整除时最后一步也是整步
    tiles_m, tiles_n = ceil_div(M, BM), ceil_div(N, BN)
    tiles = tiles_m * tiles_n
    k_steps = ceil_div(K, BK)
    # 2. 整波和零头：一波 132·cps 个 CTA；零头是最后一波，有自己的活跃 SM 数
    slots = S.SMS * cps
    full, rest = divmod(tiles, slots)
    acc = BM * BN / warps
    path = 1.0 if (not G.wgmma or (BM % 64 == 0 and warps % 4 == 0)) else S.MMA_FALLBACK   # 没有 wgmma：只有一条路径
    eff = path * acc / (acc + S.WARP_TILE_HALF)
    ahead = stages - 1 if stages > 1 else 0.5           # stages = 1：没有预取，算半级

    def wave(q, active):
        # 3. 一波里最忙的 SM：一步的算、搬、等按 p-范数合成，K 方向 k_steps 步，开头等一次加载
        t_math = q * 2.0 * BM * BN * BK / (S.PEAK_FLOPS / S.SMS * eff)
        t_move = q * (BM + BN) * BK * 2.0 / min(S.L2_BW_PER_SM, S.L2_BW / active)
        latency = S.LOAD_LATENCY_IDLE + (S.LOAD_LATENCY_BUSY - S.LOAD_LATENCY_IDLE) * active / S.SMS
        return k_steps * pnorm(S.OVERLAP_P, t_math, t_move, latency / ahead) + latency

    t_sm = full * wave(cps, S.SMS) + (wave(ceil_div(rest, S.SMS), min(rest, S.SMS)) if rest else 0.0)
    # 4. 显存：一起走的行块共用 B 面板，B 每 ⌈行块数 / 一起走的行块数⌉ 遍重读一次；放得进 L2 的 B 只读一次
    rows_together = min(tiles_m, max(group, slots // tiles_n))
    b_passes = 1 if N * K * 2 <= S.L2_USABLE else ceil_div(tiles_m, rows_together)
    dram_bytes = 2.0 * (M * K + N * K * b_passes + M * N)
    hbm = S.HBM_BW * S.HBM_EFFICIENCY
    # Little 定律：每行 A、每列 B 一条读流，(stages-1)·BK 个元素在路上；同时在读的最多 M 行 / N 列、一波盖得住的那么多
    stream = ahead * BK * 2.0 / S.HBM_LATENCY
    t_a = 2.0 * M * K / (min(M, slots * BM) * stream)
    t_b = 2.0 * N * K * b_passes / (min(N, slots * BN) * stream)
    t_dram = max(dram_bytes / hbm, t_a, t_b)
    # 5. L2 总量：SM 搬的字节 + 从显存填进 L2 的字节，共用 L2_BW；和最忙 SM 的时间按 p-范数合成
    l2_total = (tiles * k_steps * (BM + BN) * BK * 2.0 + dram_bytes) / S.L2_BW
    core = pnorm(S.CHIP_OVERLAP_P, t_sm, l2_total)
    # 6. 合成：启动开销 + 较慢的一边，且不快于屋顶线
    return max(S.LAUNCH_OVERHEAD + max(core, t_dram), roofline_by_hand(M, N, K))


def worst_drop(t_before, t_after, mask=None):
    """t_after 比 t_before 小得最多的那个（相对值，负数表示变快）和它的下标。"""
    r = t_after / t_before - 1.0
    if mask is not None:
        r = np.where(mask, r, np.inf)
    i = int(np.argmin(r))
    return float(r[i]), i


# ---------------------------------------------------------------- 1. 标量参照实现

# 参照实现本身合乎常识（有限、不快于屋顶线和启动开销、K 加倍更慢），不是空转
def test_reference_sanity_points():
    for M, N, K in REF_SHAPES:
        t = reference_time(EXPERT_BIG, M, N, K)
        assert math.isfinite(t) and t >= roofline_by_hand(M, N, K) and t > sched_lab.LAUNCH_OVERHEAD
    assert reference_time(EXPERT_BIG, 8192, 28672, 4096) < reference_time(EXPERT_BIG, 8192, 28672, 8192)


# 向量化的 sched_lab.time 和逐配置标量参照实现在约 200 个配置 × 15 个形状上相对误差 ≤ 1e-9
def test_vectorized_time_matches_scalar_reference():
    bad = []
    for M, N, K in REF_SHAPES:
        got = sched_lab.time(SAMPLE, M, N, K)
        assert got.shape == (len(SAMPLE),)
        bad += [((M, N, K), c, float(g), r) for c, g in zip(SAMPLE, got)
                if not math.isclose(g, r := reference_time(c, M, N, K), rel_tol=1e-9, abs_tol=0.0)]
    assert not bad, f"{len(bad)} 处不一致，例如 {bad[:3]}"


# ---------------------------------------------------------------- 2. 物理常识

# 全部 3744 个配置在 88 个课上形状（每个投影一组）和奇怪形状上：有限、为正、不快于屋顶线，也不快于启动开销
@pytest.mark.parametrize("shapes", [tuple((M, N, K) for M in TOKENS) for N, K in LAYERS.values()] + [ODD_SHAPES],
                         ids=list(LAYERS) + ["odd"])
def test_never_beats_the_roofline(shapes):
    for M, N, K in shapes:
        t = valid_times(M, N, K)
        assert t.shape == (len(VALID),)
        assert np.isfinite(t).all() and (t > 0).all(), (M, N, K)
        assert (t >= roofline_by_hand(M, N, K) * (1 - 1e-12)).all(), (M, N, K)
        assert (t >= sched_lab.LAUNCH_OVERHEAD).all(), (M, N, K)


# ---------------------------------------------------------------- 3. 单调性

# K → K+1、K → 2K 时，每个配置都不会变快（每个投影取 M = 1、128、8192，再加奇怪形状）
def test_time_non_decreasing_in_K():
    for M, N, K in FEW_SHAPES + ODD_SHAPES:
        t = valid_times(M, N, K)
        for K2 in (K + 1, 2 * K):
            r, i = worst_drop(t, sched_lab.time_valid(M, N, K2))
            assert r >= -1e-12, f"{VALID[i]}: ({M}, {N}, {K}) → K = {K2} 快了 {-r:.3%}"


# 按 BM（或 BN）分组的配置子集（预先拆好的 ConfigArrays）：每组只算一次 time，比 5 次 time_valid 快
BY_BM = {b: np.flatnonzero(BM_ARR == b) for b in (16, 32, 64, 128, 256)}
BY_BN = {b: np.flatnonzero(BN_ARR == b) for b in (16, 32, 64, 128, 256)}


def subset_arrays(idx):
    va = sched_lab.VALID_ARRAYS
    return sched_lab.ConfigArrays(*(getattr(va, f)[idx] for f in ("BM", "BN", "BK", "warps", "stages", "group", "cps")))


SUB_ARRAYS = {(axis, b): subset_arrays(idx) for axis, by in (("M", BY_BM), ("N", BY_BN)) for b, idx in by.items()}


@functools.lru_cache(maxsize=None)
def _tile_step_drops(axis):
    """每个配置把 M（或 N）加一个自己的 BM（或 BN）：(任何网格上最坏的变快幅度和例子, 只看占满 132 个 SM 的网格的)。"""
    worst = {False: (0.0, None), True: (0.0, None)}
    for M, N, K in STEP_SHAPES + ODD_SHAPES:
        t = valid_times(M, N, K)
        tiles = np.ceil(M / BM_ARR) * np.ceil(N / BN_ARR)
        for b, idx in (BY_BM if axis == "M" else BY_BN).items():
            shape2 = (M + b, N, K) if axis == "M" else (M, N + b, K)
            t2 = sched_lab.time(SUB_ARRAYS[axis, b], *shape2)
            for full_grid_only in (False, True):
                mask = tiles[idx] >= sched_lab.SMS if full_grid_only else None
                r, j = worst_drop(t[idx], t2, mask)
                if r < worst[full_grid_only][0]:
                    worst[full_grid_only] = (r, ((M, N, K), shape2, VALID[idx[j]]))
    return worst


# 网格已经占满 132 个 SM 时，M 跨过一个块边界（M → M + BM）每个配置都不会变快
def test_M_tile_step_non_decreasing_on_a_full_grid():
    r, example = _tile_step_drops("M")[True]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


# 网格已经占满 132 个 SM 时，N 跨过一个块边界（N → N + BN）每个配置都不会变快
def test_N_tile_step_non_decreasing_on_a_full_grid():
    r, example = _tile_step_drops("N")[True]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


# 任何网格上 M → M + BM（每个配置自己的 BM）都不会变快，块数不到 132 时也一样
def test_M_tile_step_non_decreasing():
    r, example = _tile_step_drops("M")[False]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


# 任何网格上 N → N + BN 都不会变快
def test_N_tile_step_non_decreasing():
    r, example = _tile_step_drops("N")[False]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


M_SWEEP = tuple(range(1, 130)) + tuple(range(130, 2100, 23))
SWEEP_CONFIGS = SAMPLE[:60]

@functools.lru_cache(maxsize=None)
def sweep_arrays():
    """SWEEP_CONFIGS 的数组：第一次用时才算（模块载入时不做会出错的事，收集不会因此中断）。"""
    return sched_lab.config_arrays(SWEEP_CONFIGS)



@functools.lru_cache(maxsize=None)
def _m_sweep_drops():
    """一批配置、M 逐个增大：(任何网格上最坏的变快幅度和例子, 只看占满 132 个 SM 的网格的)。"""
    worst = {False: (0.0, None), True: (0.0, None)}
    for N, K in ((4096, 14336), (1280, 8192), (28672, 4096)):
        prev = sched_lab.time(sweep_arrays(), M_SWEEP[0], N, K)
        for M0, M in zip(M_SWEEP, M_SWEEP[1:]):
            t = sched_lab.time(sweep_arrays(), M, N, K)
            full = np.array([ceil_div(M0, c.BM) * ceil_div(N, c.BN) >= sched_lab.SMS for c in SWEEP_CONFIGS])
            for full_grid_only in (False, True):
                r, i = worst_drop(prev, t, full if full_grid_only else None)
                if r < worst[full_grid_only][0]:
                    worst[full_grid_only] = (r, (M0, M, N, K, SWEEP_CONFIGS[i]))
            prev = t
    return worst


# 网格已经占满时，对一批配置 M 逐个增大（1..129 每个都试，再往上到 2100）时间不减
def test_time_non_decreasing_in_M_on_a_full_grid():
    r, example = _m_sweep_drops()[True]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


# 对一批配置 M 逐个增大时间不减（任何网格）
def test_time_non_decreasing_in_M():
    r, example = _m_sweep_drops()[False]
    assert r >= -1e-12, f"快了 {-r:.3%}：{example}"


OPT_EXTRA_M = (2, 15, 17, 33, 65, 100, 129, 257, 1025)


# 对每个投影，最优时间（3744 个配置里最小的）随 M 单调不减（课上的 11 个 M 加块边界两边的 M）
def test_optimum_non_decreasing_in_M():
    for N, K in LAYERS.values():
        best = [valid_times(M, N, K).min() for M in sorted(set(TOKENS) | set(OPT_EXTRA_M))]
        assert all(b >= a * (1 - 1e-12) for a, b in zip(best, best[1:])), (N, K)


# ---------------------------------------------------------------- 4. 坏输入

BAD_DIMS = (0, -1, -4096, 1.0, 16.0, 2.5, np.float64(16), True, False, None, "16")


def _entry_points(M, N, K):
    return (lambda: sched_lab.time((EXPERT_BIG,), M, N, K), lambda: sched_lab.time_valid(M, N, K),
            lambda: sched_lab.time_one(EXPERT_BIG, M, N, K), lambda: sched_lab.explain(EXPERT_BIG, M, N, K),
            lambda: sched_lab.guided_tune(M, N, K))


# M / N / K 是 0、负数、浮点、bool、None、字符串时，每个入口都抛 ValueError，信息开头点名是哪个参数
@pytest.mark.parametrize("name", ["M", "N", "K"])
def test_bad_dimension_raises_value_error_naming_it(name):
    for bad in BAD_DIMS:
        dims = {"M": 128, "N": 4096, "K": 4096, name: bad}
        for call in _entry_points(dims["M"], dims["N"], dims["K"]):
            with pytest.raises(ValueError, match=rf"^{name} ") as e:
                call()
            assert repr(bad) in str(e.value)


# numpy 整数是合法的维度，结果和 Python int 一样
def test_numpy_integer_dimensions_are_accepted():
    assert sched_lab.time_one(EXPERT_BIG, np.int64(128), np.int32(1280), np.int64(8192)) == \
        sched_lab.time_one(EXPERT_BIG, 128, 1280, 8192)


# 启动不了的配置（256×128 配 4 个 warp）抛 ValueError，信息里有"寄存器"和 296；混在好配置里也一样
def test_unlaunchable_config_raises_with_register_count():
    bad = Config(256, 128, 64, 4, 3, 8)
    for call in (lambda: sched_lab.time_one(bad, 128, 4096, 4096), lambda: sched_lab.explain(bad, 128, 4096, 4096),
                 lambda: sched_lab.time([EXPERT_BIG, bad], 128, 4096, 4096)):
        with pytest.raises(ValueError) as e:
            call()
        assert "寄存器" in str(e.value) and "296" in str(e.value) and repr(bad) in str(e.value)


# 不在候选网格上的配置（BM=48）抛 ValueError
def test_off_grid_config_raises():
    with pytest.raises(ValueError, match="BM=48"):
        sched_lab.time_one(Config(48, 128, 64, 4, 3, 8), 128, 4096, 4096)


# 不是 Config 的对象（元组、字符串、None、整数、字典）抛 ValueError
def test_non_config_raises_value_error():
    for obj in ((128, 128, 64, 4, 3, 8), "Config(128,128,64,4,3,8)", None, 3, {"BM": 128}):
        for call in (lambda: sched_lab.time([obj], 128, 4096, 4096), lambda: sched_lab.time([EXPERT_BIG, obj], 1, 1, 1),
                     lambda: sched_lab.time_one(obj, 128, 4096, 4096), lambda: sched_lab.explain(obj, 128, 4096, 4096)):
            with pytest.raises(ValueError, match="Config"):
                call()


# ---------------------------------------------------------------- 5. time_one 和 explain

# time_one、time（配置列表）、time_valid 三者给同一个配置同一个时间
def test_time_one_equals_vectorized():
    for n, (M, N, K) in enumerate(REF_SHAPES):
        batch = sched_lab.time(SAMPLE, M, N, K)
        valid = sched_lab.time_valid(M, N, K)
        if n < 3:                                            # 全部 3744 个按 Config 传进去（每个都要 check，慢）
            assert np.allclose(sched_lab.time(VALID, M, N, K), valid, rtol=1e-12, atol=0)
        for c, b in zip(SAMPLE[:30], batch):
            one = sched_lab.time_one(c, M, N, K)
            assert isinstance(one, float)
            assert math.isclose(one, b, rel_tol=1e-12) and math.isclose(one, valid[VALID_INDEX[c]], rel_tol=1e-12)


# explain：time_us = time_one × 1e6；瓶颈是四项里最大的（"搬"按 max(每 SM 的搬, L2 总量) 比）或"屋顶线"；
# 块数、整波和零头、屋顶线与手算一致
def test_explain_is_consistent():
    G = kernel_lab.GPU                                  # SM 数取 GPU 记录（H100 132 个）
    for (M, N, K), c in itertools.product(REF_SHAPES, SAMPLE[:15]):
        e = sched_lab.explain(c, M, N, K)
        assert math.isclose(e["time_us"], sched_lab.time_one(c, M, N, K) * 1e6, rel_tol=1e-12)
        assert len(e["parts_us"]) == 4 and all(v >= 0 and math.isfinite(v) for v in e["parts_us"].values())
        assert e["bound"] in (*e["parts_us"], "屋顶线")
        judged = dict(e["parts_us"])
        judged["搬（L2 → 共享内存）"] = max(judged["搬（L2 → 共享内存）"], e["l2_total_us"])
        if e["bound"] != "屋顶线":
            assert e["bound"] == max(judged, key=judged.get)
        else:
            assert e["time_us"] == pytest.approx(e["floor_us"], rel=1e-12)
        tiles = ceil_div(M, c.BM) * ceil_div(N, c.BN)
        assert e["tiles"] == tiles
        assert e["tiles_per_sm"] == ceil_div(tiles, G.sms) and 1 <= e["ctas_per_sm"] <= e["tiles_per_sm"]
        slots = G.sms * kernel_lab.ctas_per_sm(c)
        assert (e["full_waves"], e["last_wave_ctas"]) == divmod(tiles, slots)
        assert math.isclose(e["floor_us"], roofline_by_hand(M, N, K) * 1e6, rel_tol=1e-12)
        assert math.isclose(e["tflops"], 2 * M * N * K / e["time_us"] / 1e6, rel_tol=1e-12)


# explain 的派生字段按定义算（只用数据手册的常数和配置本身）：
#   dram_MB = 2·(M·K + N·K·B 读几遍 + M·N) / 1e6，B 读几遍和标量参照实现的一样（放得进 L2 的 25 MiB 就 1 遍）；
#   dram_TBps = 显存字节 / 显存时间（Little 定律给这个网格的上限），dram_avg_TBps = 显存字节 / 总时间；
#   平均带宽 ≤ 上限 ≤ 可达带宽 3.35 TB/s × 0.88；
#   mma_eff = (wgmma 1.0，否则 0.6) × 累加器/warp ÷ (累加器/warp + 256)
def test_explain_derived_fields_follow_their_definitions():
    G = kernel_lab.GPU                                  # 数取 GPU 记录（H100：132 SM、50 MiB L2、3.35 TB/s × 0.88、wgmma）
    for (M, N, K), c in itertools.product(REF_SHAPES + ODD_SHAPES, SAMPLE[:25]):
        e = sched_lab.explain(c, M, N, K)
        tiles_m, tiles_n = ceil_div(M, c.BM), ceil_div(N, c.BN)
        slots = G.sms * kernel_lab.ctas_per_sm(c)
        together = min(tiles_m, max(c.group, slots // tiles_n))
        b_reads = 1 if N * K * 2 <= G.l2_bytes // 2 else ceil_div(tiles_m, together)
        assert e["b_reads"] == b_reads
        dram = 2 * (M * K + N * K * b_reads + M * N)
        assert e["dram_MB"] == pytest.approx(dram / 1e6, rel=1e-12)
        assert e["dram_TBps"] == pytest.approx(dram / (e["parts_us"]["显存"] * 1e-6) / 1e12, rel=1e-9)
        assert e["dram_avg_TBps"] == pytest.approx(dram / (e["time_us"] * 1e-6) / 1e12, rel=1e-9)
        assert e["dram_avg_TBps"] <= e["dram_TBps"] * (1 + 1e-12) <= G.hbm_bw / 1e12 * G.knobs["HBM_EFFICIENCY"] * (1 + 1e-9)
        acc = c.BM * c.BN / c.warps
        path = 1.0 if not G.wgmma or (c.BM % 64 == 0 and c.warps % 4 == 0) else G.knobs["MMA_FALLBACK"]
        assert e["mma_eff"] == pytest.approx(path * acc / (acc + G.knobs["WARP_TILE_HALF"]), rel=1e-12)


# ---------------------------------------------------------------- 6. 校准事实（claims.md P4–P6）

def _ratio_and_optimum(M, N, K):
    t = valid_times(M, N, K)
    return sched_lab.time_one(expert(M), M, N, K) / t.min(), t


# P4：8B gate_up 在 M = 1、16：专家在最优 1% 以内，且至少 20 个配置在最优 1% 以内
@pytest.mark.h100_claim
@pytest.mark.parametrize("M", [1, 16])
def test_P4_decode_many_configs_equally_fast(M):
    ratio, t = _ratio_and_optimum(M, *LAYERS["8B gate_up"])
    assert ratio <= 1.01
    assert (t <= t.min() * 1.01).sum() >= 20


# P4：8B gate_up 在 M = 1 时最优配置读权重的速度 ≥ 75% × 显存峰值带宽（H100 3.35 TB/s；换了 GPU 用它的）
@pytest.mark.h100_claim
def test_P4_decode_reads_weights_near_hbm_bandwidth():
    N, K = LAYERS["8B gate_up"]
    assert N * K * 2 / valid_times(1, N, K).min() >= 0.75 * kernel_lab.GPU.hbm_bw


# P5：8B gate_up 在 M = 4096、8192：最优是 256×128、8 warp、4 级；专家慢 1.2–1.4 倍；最优 550–850 TFLOPS
@pytest.mark.h100_claim
@pytest.mark.parametrize("M", [4096, 8192])
def test_P5_prefill(M):
    N, K = LAYERS["8B gate_up"]
    ratio, t = _ratio_and_optimum(M, N, K)
    best = VALID[int(np.argmin(t))]
    assert (best.BM, best.BN, best.warps, best.stages) == (256, 128, 8, 4), best
    assert 1.2 <= ratio <= 1.4
    assert 550e12 <= 2 * M * N * K / t.min() <= 850e12


# P6：70B/8 qkv 在 M = 128：专家慢 2.2–2.8 倍
@pytest.mark.h100_claim
def test_P6_middle_M():
    ratio, _ = _ratio_and_optimum(128, *LAYERS["70B/8 qkv"])
    assert 2.2 <= ratio <= 2.8


# P6：88 个形状里专家比最优慢得最多的那个，M 在 32 到 1024 之间
@pytest.mark.h100_claim
def test_P6_worst_expert_ratio_is_at_middle_M():
    ratios = {(N, K, M): _ratio_and_optimum(M, N, K)[0] for (M, N, K) in LECTURE_SHAPES}
    N, K, M = max(ratios, key=ratios.get)
    assert 32 <= M <= 1024, (N, K, M, ratios[N, K, M])


# ---------------------------------------------------------------- 7. 代价模型引导的调优器（C4）

def _check_tune(M, N, K):
    r = sched_lab.guided_tune(M, N, K)
    t = valid_times(M, N, K)
    assert 1 <= r.runs <= len(VALID)
    assert isinstance(r.config, Config) and r.config in VALID_INDEX
    assert r.optimum == pytest.approx(t.min(), rel=1e-12)
    assert r.time == pytest.approx(sched_lab.time_one(r.config, M, N, K), rel=1e-12)
    assert sched_lab.time_one(r.config, M, N, K) <= t.min() * 1.01 * (1 + 1e-12)
    # runs 是最少的：按代价模型排序（平局按 VALID 顺序）时，前 runs-1 个都不在 1% 以内
    order = np.argsort(sched_lab.cheap_cost(sched_lab.VALID_ARRAYS, M, N, K), kind="stable")
    assert VALID[order[r.runs - 1]] == r.config
    assert (t[order[:r.runs - 1]] > t.min() * 1.01).all()
    return r.runs


# guided_tune 在 88 个形状上：runs 在 1..3744、找到的配置在最优 1% 以内，runs 的中位数在 10–500（C4）
@pytest.mark.h100_claim
def test_guided_tune_on_lecture_shapes():
    runs = [_check_tune(*s) for s in LECTURE_SHAPES]
    assert 10 <= statistics.median(runs) <= 500


# guided_tune 在奇怪形状上也满足同样的约束
def test_guided_tune_on_odd_shapes():
    for M, N, K in ODD_SHAPES:
        _check_tune(M, N, K)


# ---------------------------------------------------------------- 8. 手算钉住的时间（改常数必须是有意的、看得见的改动）

def pn(p, *xs):
    """(Σ x^p)^(1/p)。"""
    m = max(xs)
    return m * sum((x / m) ** p for x in xs) ** (1.0 / p)


PEAK_PER_SM = 989.4e12 / 132      # 数据手册：989.4 TFLOPS / 132 个 SM


# 下面的期望值只用字面常数算：数据手册（132 SM、989.4 TFLOPS、3.35 TB/s、bf16 2 字节）和模块开头写的旋钮
# （HBM_EFFICIENCY 0.88、L2_BW 7.7e12、L2_BW_PER_SM 90e9、延迟 0.7 / 1.3 µs、OVERLAP_P 9、CHIP_OVERLAP_P 30、
# MMA_FALLBACK 0.6、WARP_TILE_HALF 256、HBM_LATENCY 0.5 µs、启动 4 µs、L2_USABLE 25 MiB）。
# 改了任何一个常数，这里就失败：要改就把这里的算式一起改，让改动是有意的。

@pytest.mark.h100_only
def test_pinned_decode_time_is_weights_over_achievable_bandwidth():
    # 8B gate_up M = 1，专家的小块 (16,64,128,4,4,1)：时间 = 启动 + 显存字节 / 可达带宽
    #   显存字节 = 2·(1·4096 + 28672·4096 + 1·28672) = 234,946,560 B（A、B 各读一遍、写 C；B 只有 1 个行块，读 1 遍）
    #   可达带宽 = 3.35e12 × 0.88 = 2.948e12 B/s → 79.697 µs；再加 4 µs 启动 = 83.697 µs
    t = sched_lab.time_one(EXPERT_SMALL, 1, 28672, 4096)
    assert t == pytest.approx(4e-6 + 234_946_560 / (3.35e12 * 0.88), rel=1e-12)


@pytest.mark.h100_only
def test_pinned_tiny_shape_is_launch_plus_latency():
    # (1, 1, 1)，配置 (32,32,32,2,2,1)：1 个块、1 步、1 个活跃 SM，瓶颈是等
    #   延迟 = 0.7 µs + (1.3 − 0.7) µs × 1/132 = 0.704545 µs；2 级流水线 → 1 级在路上，等 = 0.704545 µs
    #   算 = 2·32·32·32 / (7.4955e12 × 0.6 × 512/(512+256)) = 21.9 ns；搬 = (32+32)·32·2 B / 90e9 B/s = 45.5 ns
    #   一波 = 1 步 × p9(算, 搬, 等) + 开头的延迟 ≈ 2 × 0.704545 µs；显存、L2 总量都是纳秒级
    #   时间 = 4 µs + 1.40909 µs = 5.40909 µs
    lat = 0.7e-6 + 0.6e-6 / 132
    step = pn(9, 2 * 32**3 / (PEAK_PER_SM * 0.6 * 512 / 768), 64 * 32 * 2 / 90e9, lat / 1)
    t = sched_lab.time_one(Config(32, 32, 32, 2, 2, 1), 1, 1, 1)
    assert t == pytest.approx(4e-6 + step + lat, rel=1e-12)
    assert t == pytest.approx(5.40909e-6, rel=1e-5)


@pytest.mark.h100_only
def test_pinned_prefill_optimum_time():
    # 8B gate_up M = 8192，(256,128,64,8,4,16)：共享内存 4·384·64·2 = 196,608 B → 每 SM 1 个 CTA，一波 132 个
    #   块 = 32·224 = 7168 = 54 整波 × 132 + 零头 40；K 方向 4096/64 = 64 步
    #   算/步 = 2·256·128·64 / (7.4955e12 × 4096/(4096+256)) = 0.594 µs（wgmma，8 warp 每个 4096 个累加器）
    #   整波：搬/步 = 384·64·2 B / (7.7e12/132) = 0.843 µs，等/步 = 1.3 µs / 3；一波 = 64 × p9(…) + 1.3 µs
    #   零头：40 个 SM，搬/步 = 49152 B / min(90e9, 7.7e12/40) = 0.546 µs，延迟 = 0.7 + 0.6·40/132 µs
    #   显存：B（235 MB）放不进 L2，16 行块一起走，32 行块 → B 读 2 遍；字节 = 2·(8192·4096 + 28672·4096·2 + 8192·28672)
    #   L2 总量 = (7168·64·49152 + 显存字节) / 7.7e12；核心 = p30(最忙 SM, L2 总量)；显存时间 0.34 ms 远小于它
    tm = 2 * 256 * 128 * 64 / (PEAK_PER_SM * 4096 / 4352)
    full = 64 * pn(9, tm, 49152 / (7.7e12 / 132), 1.3e-6 / 3) + 1.3e-6
    lat = 0.7e-6 + 0.6e-6 * 40 / 132
    last = 64 * pn(9, tm, 49152 / 90e9, lat / 3) + lat
    dram = 2 * (8192 * 4096 + 28672 * 4096 * 2 + 8192 * 28672)
    core = pn(30, 54 * full + last, (7168 * 64 * 49152 + dram) / 7.7e12)
    t = sched_lab.time_one(Config(256, 128, 64, 8, 4, 16), 8192, 28672, 4096)
    assert dram / (3.35e12 * 0.88) < core
    assert t == pytest.approx(4e-6 + core, rel=1e-12)
    assert t == pytest.approx(3.124e-3, rel=1e-3)


# ---------------------------------------------------------------- 9. 最优的来由：效应，不是 VALID 的顺序（issue 8）

# P5（收紧）：8B gate_up 在 M = 4096、8192：最优是 256×128、8 warp、4 级，而且唯一——别的 (BM, BN, warps, stages)
# 组合都比它慢 0.1% 以上（128×256 输在 B 要多读一倍遍数、填进 L2 的字节多；16 warp 输在张量核效率）
@pytest.mark.h100_claim
@pytest.mark.parametrize("M", [4096, 8192])
def test_prefill_optimum_is_256x128_by_a_modelled_effect(M):
    N, K = LAYERS["8B gate_up"]
    t = valid_times(M, N, K)
    best = VALID[int(np.argmin(t))]
    assert (best.BM, best.BN, best.warps, best.stages) == (256, 128, 8, 4), best
    other = np.array([(c.BM, c.BN, c.warps, c.stages) != (256, 128, 8, 4) for c in VALID])
    assert t[other].min() > t.min() * 1.001
    opt = sched_lab.optimum(M, N, K)
    assert opt.config == best and opt.near == 1 and opt.tied == 1 and "唯一" in opt.rule
    # 同样的 8 warp / 4 级，128×256 更慢：每步搬的字节、块数都一样，差在 B 从显存读的遍数
    wide = sched_lab.explain(Config(128, 256, 64, 8, 4, 16), M, N, K)
    tall = sched_lab.explain(Config(256, 128, 64, 8, 4, 16), M, N, K)
    assert wide["tiles"] == tall["tiles"] and wide["b_reads"] == 2 * tall["b_reads"]
    assert wide["time_us"] > tall["time_us"] * 1.005
    # group 16 比 8 快：一起走的行块多一倍，B 少读一半
    g8 = sched_lab.explain(Config(256, 128, 64, 8, 4, 8), M, N, K)
    assert g8["b_reads"] == 2 * tall["b_reads"] and g8["time_us"] > tall["time_us"] * 1.005


# decode 的平局是讲义的论点：optimum 说有多少个配置在 0.1% 以内、多少个完全相同、印的那个是 VALID 顺序里的第一个
@pytest.mark.parametrize("M", [1, 16])
def test_decode_ties_are_reported(M):
    N, K = LAYERS["8B gate_up"]
    t = valid_times(M, N, K)
    opt = sched_lab.optimum(M, N, K)
    assert opt.near == int(np.sum(t <= t.min() * 1.001)) >= 20
    tied = np.flatnonzero(t <= t.min() * (1 + 1e-9))
    assert opt.tied == len(tied) > 1 and opt.config == VALID[int(tied[0])]
    assert "VALID 顺序里的第一个" in opt.rule and f"{opt.tied:,} 个配置时间完全相同" in opt.rule \
        and f"{opt.near:,} 个配置在最优" in opt.rule           # 计数千位加逗号，和 04 印的一样（以前 13 印 1052）
    varying = {f for f in ("BM", "BN", "BK", "warps", "stages", "group") if len({getattr(VALID[i], f) for i in tied}) > 1}
    assert set(opt.tied_fields) == varying and "group" in varying


def test_optimum_takes_the_first_in_valid_order_among_times_equal_up_to_float_noise(monkeypatch):
    """助教报过：H200 上 optimum 用 np.argmin，挑中的是差在浮点误差里、VALID 里靠后的那个，句子却说印的是
    "VALID 顺序里的第一个"。造一组时间：最小的在第 5 个，第 2 个只比它大 1e-12（相对），第 2 个才是该印的。"""
    t = np.full(len(VALID), 2e-3)
    t[5], t[2], t[9] = 1e-3, 1e-3 * (1 + 1e-12), 1e-3 * (1 + 1e-6)
    monkeypatch.setattr(sched_lab, "time_valid", lambda M, N, K: t)
    opt = sched_lab.optimum(64, 4096, 4096)
    assert opt.config == VALID[2] and opt.tied == 2 and opt.near == 3 and opt.time == t[2]


# Optimum.rule 的三种情况：唯一最快；最快的唯一但另有几个在 0.1% 以内；几个完全相同、取 VALID 顺序里的第一个
def test_optimum_rule_cases():
    c = VALID[0]
    assert "唯一最快" in sched_lab.Optimum(c, 1e-3, 1, 1, (), 1e-3).rule
    r = sched_lab.Optimum(c, 1e-3, 5, 1, (), 1e-3).rule
    assert "另有 4 个配置在它的 0.1% 以内" in r and "VALID" not in r
    r = sched_lab.Optimum(c, 1e-3, 7, 3, ("group",), 1e-3).rule
    assert r.startswith("3 个配置时间完全相同") and "group" in r and "VALID 顺序里的第一个" in r and "7 个配置" in r


# ---------------------------------------------------------------- 10. 波次：零头有自己的活跃 SM 数（issue 8 §2）

# 一个固定配置：块数从一整波（SM 数，H100 是 132）到多一块时时间跳得明显（≥ 1.2×）——波次量化在真有的地方看得见；
# 但一整波 + 30 块的时间比两整波少得多：最后一波只有 30 个 SM 在拉，每个 SM 分到的 L2 带宽多、延迟短
@pytest.mark.h100_claim
def test_wave_quantization_visible_but_last_wave_is_cheaper():
    c = Config(256, 128, 64, 8, 4, 16)                   # 每 SM 1 个 CTA，一波 SMS 块（H100 132；SM 数从数据读：
    M, K, S = 256, 4096, sched_lab.SMS                   # 助教报过，B200 的 148 个 SM 上这里还按 132 算）
    one, jump = (sched_lab.time_one(c, M, n * 128, K) for n in (S, S + 1))
    assert jump >= 1.2 * one
    partial, two = (sched_lab.time_one(c, M, n * 128, K) for n in (S + 30, 2 * S))
    assert partial < 0.9 * two
    e = sched_lab.explain(c, M, (S + 30) * 128, K)
    assert (e["full_waves"], e["last_wave_ctas"]) == (1, 30)


# 方阵 n×n×n，n 从 2048 到 4096 每次加 256：最好的配置的 TFLOPS 相邻两个尺寸之间掉得不超过 20%。
# （issue 8 要的是 10%：在这个配置空间里做不到，下一个测试逐个配置证明——2048 的最优 128×256 / 8 warp 是 128 块的
#  一整波；2304 的 162 块要两波（每 SM 只驻留 1 个：寄存器 168 × 256 线程 = 43,008 个，共享内存 196,608 B），
#  第二波只剩 30 块。没有 split-K / stream-K 就平滑不了；cuBLAS 的平滑曲线正是靠它们。
#  改模型前整波零头按整波算时这里掉 32%，给零头自己的活跃 SM 数以后掉 19%。）
@pytest.mark.h100_claim                 # README 的"数字是什么"：H100 上相邻两个尺寸最多掉约 19%（别的 GPU 不一定）
def test_square_sizes_do_not_jump_too_much():
    tf = []
    for n in range(2048, 4097, 256):
        tf.append(2 * n**3 / valid_times(n, n, n).min())
    drops = [b / a for a, b in zip(tf, tf[1:])]
    assert min(drops) >= 0.8, [f"{x / 1e12:.0f}" for x in tf]


@pytest.mark.h100_claim
def test_readme_and_sched_lab_say_the_largest_square_size_drop_the_model_gives():
    # README 和 sched_lab 开头说的"最多掉约 N%"（2304 比 2048）就是模型给的这个数（助教报过：改了 L2_BW 以后它们
    # 还写着 19%，没有测试说它们过时了）
    import os
    tf = [2 * n**3 / valid_times(n, n, n).min() for n in range(2048, 4097, 256)]
    drops = [b / a for a, b in zip(tf, tf[1:])]
    worst = round(100 * (1 - min(drops)))
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"), encoding="utf-8") as f:
        readme = "".join(f.read().split())
    said = [int(x) for x in re.findall(r"相邻两个尺寸之间最多掉约(\d+)%", readme)]
    doc = [int(x) for x in re.findall(r"最优TFLOPS比2048低约(\d+)%", "".join(sched_lab.__doc__.split()))]
    assert said == [worst] and doc == [round(100 * (1 - drops[0]))] and drops[0] == min(drops), (said, doc, worst, drops)


def ideal_time_by_hand(cfg, n):
    """n×n×n 上一个配置的时间下界，比模型宽松得多：整波没有延迟、算和搬完美重叠（每步取 算、按 132 个 SM 均分的 L2
    带宽搬 两者的大者）；最后一波的零头**只按张量核峰值算**（不受 L2、延迟限制）；全芯片 L2 总量只算 SM 搬的字节。
    只从 sched_lab 读常数。"""
    S = sched_lab
    BM, BN, BK, warps, stages, _ = cfg.as_tuple()
    threads = 32 * warps
    cps = min(65536 // ((BM * BN // threads + 40) * threads), 233_472 // (stages * (BM + BN) * BK * 2 + 1024),
              2048 // threads, 32)
    tiles, k = ceil_div(n, BM) * ceil_div(n, BN), ceil_div(n, BK)
    full, rest = divmod(tiles, S.SMS * cps)
    acc = BM * BN / warps
    eff = (1.0 if (BM % 64 == 0 and warps % 4 == 0) else S.MMA_FALLBACK) * acc / (acc + S.WARP_TILE_HALF)
    step_math = 2.0 * BM * BN * BK / (S.PEAK_FLOPS / S.SMS * eff)
    step_move = (BM + BN) * BK * 2.0 / min(S.L2_BW_PER_SM, S.L2_BW / S.SMS)
    t_sm = full * k * cps * max(step_math, step_move) + k * ceil_div(rest, S.SMS) * step_math
    chip = tiles * k * (BM + BN) * BK * 2.0 / S.L2_BW
    return max(S.LAUNCH_OVERHEAD + max(t_sm, chip), roofline_by_hand(n, n, n))


# 为什么上一个测试是 20% 而不是 10%：2304 上即使用上面这个宽松得多的下界（最后一波只按张量核峰值算），3744 个配置里
# 也没有一个能到 2048 最优 TFLOPS 的 90%（最好的下界约 89%）。128×256 / 8 warp / BK 64：一整波 36 步 × 0.843 µs（49,152 B / (7.7 TB/s / 132)）
# + 零头 36 步 × 0.595 µs（张量核）+ 4 µs 启动 = 55.7 µs，约 439 TFLOPS；2048 的最优 512 TFLOPS 的 90% 要 ≤ 53.0 µs。
# 下界也确实是下界（模型的时间都不比它短）。加了 split-K / stream-K、非 2 的幂的块或改了旋钮以后这个测试会失败，
# 那时应该把上一个测试收紧到 10%。
@pytest.mark.h100_only                # H100 上算出来的具体界（手算钉住的），不是讲义的论断
def test_square_2304_cannot_reach_90_percent_of_2048_in_this_config_space():
    best_2048 = 2 * 2048**3 / valid_times(2048, 2048, 2048).min()
    model = valid_times(2304, 2304, 2304)
    bounds = np.array([ideal_time_by_hand(c, 2304) for c in VALID])
    assert np.all(bounds <= model * (1 + 1e-12))
    best_bound = 2 * 2304**3 / bounds.min()
    assert best_bound < 0.9 * best_2048, (best_bound / 1e12, best_2048 / 1e12)
    t = ideal_time_by_hand(Config(128, 256, 64, 8, 4, 1), 2304)
    assert t == pytest.approx(4e-6 + 36 * 49_152 / (7.7e12 / 132) + 36 * 2 * 128 * 256 * 64 / (989.4e12 / 132 * 4096 / 4352))


# ---------------------------------------------------------------- 11. 维度：转成 Python int；超出范围点名（issue 7 §4）

# 小 K 上多一行、多一列不会更快（issue 7 的两个复现）
def test_more_rows_at_small_K_is_never_faster():
    assert sched_lab.time_one(EXPERT_BIG, 513, 1024, 64) >= sched_lab.time_one(EXPERT_BIG, 512, 1024, 64)
    c = Config(256, 16, 32, 2, 1, 1)
    assert sched_lab.time_one(c, 270, 270, 2) >= sched_lab.time_one(c, 254, 270, 2)


# numpy 的定宽整数：int32 的 (1, 65536, 65536) 和 Python int 一样、不快于屋顶线；uint8 也能用
def test_fixed_width_numpy_dims_are_converted():
    a = sched_lab.time_one(EXPERT_BIG, np.int32(1), np.int32(65536), np.int32(65536))
    assert a == sched_lab.time_one(EXPERT_BIG, 1, 65536, 65536) >= roofline_by_hand(1, 65536, 65536)
    assert sched_lab.time_one(EXPERT_BIG, np.uint8(5), 4096, 4096) == sched_lab.time_one(EXPERT_BIG, 5, 4096, 4096)
    e = sched_lab.explain(EXPERT_BIG, np.int16(128), np.int32(1280), np.uint16(8192))
    assert e["floor_us"] == pytest.approx(roofline_by_hand(128, 1280, 8192) * 1e6, rel=1e-12)


# 太大的维度（10**308、10**103、2**24 + 1）：ValueError，点名是哪个维度，不溢出、不给 inf
@pytest.mark.parametrize("name", ["M", "N", "K"])
def test_too_large_dimension_raises_naming_it(name):
    for big in (10**308, 10**103, 2**24 + 1, np.uint64(2**40)):
        dims = {"M": 128, "N": 4096, "K": 4096, name: big}
        for call in _entry_points(dims["M"], dims["N"], dims["K"]) + (lambda: sched_lab.roofline(*dims.values()),):
            with pytest.raises(ValueError, match=rf"^{name} = {int(big)} 超出"):
                call()
    dims = {"M": 128, "N": 4096, "K": 4096, name: 2**24}
    assert math.isfinite(sched_lab.time_one(EXPERT_BIG, dims["M"], dims["N"], dims["K"]))


# ---------------------------------------------------------------- 12. 性质测试（Hypothesis，固定种子、有限个例子）

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

DIM = st.one_of(st.integers(1, 300), st.integers(1, 20_000))
SMALL_K = st.one_of(st.integers(1, 600), st.integers(1, 20_000))


# 随机形状（含小 K）× 全部 3744 个配置：有限、不快于屋顶线；M、N、K 各加一点（1 到 512）都不会更快
@settings(derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(M=DIM, N=DIM, K=SMALL_K, dm=st.integers(1, 512), dn=st.integers(1, 512), dk=st.integers(1, 512))
def test_property_finite_above_roofline_and_monotone(M, N, K, dm, dn, dk):
    check_physical(M, N, K, dm, dn, dk)


def check_physical(M, N, K, dm, dn, dk, note=""):
    """全部配置在 (M, N, K) 上有限、不快于屋顶线；M、N、K 各加 dm、dn、dk 都不会更快。"""
    t = sched_lab.time(sched_lab.VALID_ARRAYS, M, N, K)
    assert np.isfinite(t).all()
    assert (t >= roofline_by_hand(M, N, K) * (1 - 1e-12)).all()
    for M2, N2, K2 in ((M + dm, N, K), (M, N + dn, K), (M, N, K + dk)):
        r, i = worst_drop(t, sched_lab.time(sched_lab.VALID_ARRAYS, M2, N2, K2))
        assert r >= -1e-12, f"{note}{VALID[i]}: ({M}, {N}, {K}) → ({M2}, {N2}, {K2}) 快了 {-r:.3%}"


# ---------------------------------------------------------------- 13. 旋钮（--knob / sched_lab.knobs）：只接受讲得通的值

def test_knobs_restore_the_lecture_values_and_the_cache():
    before = sched_lab.time_valid(8192, 28672, 4096).min()
    with sched_lab.knobs(L2_BW=2 * sched_lab.L2_BW):
        assert sched_lab.changed_knobs() == {"L2_BW": 2 * sched_lab.LECTURE_KNOBS["L2_BW"]}
        assert sched_lab.time_valid(8192, 28672, 4096).min() < before        # 缓存按旋钮分开：新旋钮真的用上了
    assert sched_lab.changed_knobs() == {} and sched_lab.time_valid(8192, 28672, 4096).min() == before


@pytest.mark.parametrize("settings,words", [
    (["L2_BW"], "名字=数值"),
    (["=3"], "名字=数值"),
    (["SMS=100"], "不是 sched_lab 的校准旋钮"),
    (["L2_BW=fast"], "不是数"),
    (["L2_BW=1e13", "L2_BW=2e13"], "两次"),
    (["L2_BW=inf"], "L2_BW 要在"),
    (["L2_BW=-1"], "L2_BW 要在"),
    (["LAUNCH_OVERHEAD=0"], "LAUNCH_OVERHEAD 要在"),
    (["HBM_EFFICIENCY=1.01"], "HBM_EFFICIENCY 要在"),
    (["MMA_FALLBACK=2"], "MMA_FALLBACK 要在"),
    (["OVERLAP_P=0.5"], "OVERLAP_P 要在"),
    (["LOAD_LATENCY_BUSY=6e-7"], "不能小于 LOAD_LATENCY_IDLE"),
    (["LOAD_LATENCY_IDLE=2e-6"], "不能小于 LOAD_LATENCY_IDLE"),
])
def test_parse_knobs_says_what_is_wrong(settings, words):
    with pytest.raises(ValueError, match=words):
        sched_lab.parse_knobs(settings)
    if "=" in settings[0] and not settings[0].startswith("="):
        try:
            changes = {s.split("=")[0]: float(s.split("=")[1]) for s in settings}
        except ValueError:
            return
        if set(changes) <= set(sched_lab.KNOBS) and len(changes) == len(settings):
            with pytest.raises(ValueError, match=words):       # 脚本之外直接用 knobs(...) 也一样拒绝
                with sched_lab.knobs(**changes):
                    pass
            assert sched_lab.changed_knobs() == {}


@pytest.mark.parametrize("typed, meant", [("l2_bw", "L2_BW"), ("L2BW", "L2_BW"), ("hbm-latency", "HBM_LATENCY"),
                                           ("SMS", None)])
def test_a_knob_typed_in_another_case_or_without_underscores_names_the_knob_meant(typed, meant):
    # 学生报过：--bud 说了是 --budget，--knob l2_bw=2e11 只列出十几个名字。现在说是不是哪一个；真的没有的不猜
    with pytest.raises(ValueError) as e:
        sched_lab.parse_knobs([f"{typed}=1"])
    said = str(e.value)
    assert said.startswith(f"{typed} 不是 sched_lab 的校准旋钮") and "可以改的是" in said
    assert (f"是不是 {meant}？" in said) if meant else "是不是" not in said, said
    assert sched_lab.knob_problem({typed: 1.0}) == said


def test_parse_knobs_reads_what_the_scripts_print():
    # 建议的命令里印 knob_text(exact_knob(x))：读回来正好是先替学生算时用的 exact_knob(x)
    for value in (2 * sched_lab.L2_BW, 1.23456789012345e13, 3 * 7.7e12 / 7):
        assert sched_lab.parse_knobs([f"L2_BW={sched_lab.knob_text(sched_lab.exact_knob(value))}"]) == \
            {"L2_BW": sched_lab.exact_knob(value)}
    assert sched_lab.parse_knobs([" L2_BW = 1.54e13 ", "LOAD_LATENCY_BUSY=9e-07"]) == \
        {"L2_BW": 1.54e13, "LOAD_LATENCY_BUSY": 9e-07}


@pytest.mark.parametrize("name", sorted(sched_lab.KNOBS))
def test_an_out_of_range_knob_names_bounds_that_are_short_and_accepted(name):
    # 审读时报过："LAUNCH_OVERHEAD 要在 4e-08 到 3.9999999999999996e-04 之间"：界印得像浮点误差；照抄印出来的界要被接受
    base = sched_lab.LECTURE_KNOBS[name]
    text = sched_lab.knob_problem({name: base * sched_lab.KNOB_SPAN * 10})
    lo, hi = re.search(r"要在 (\S+) 到 (\S+) 之间", text).groups()
    for bound in (lo, hi):
        assert len(re.sub(r"\D", "", bound.split("e")[0]).strip("0")) <= 8, text   # 几位有效数字，不是 17 位
        changes = {name: float(bound)}
        if name == "LOAD_LATENCY_BUSY":
            changes["LOAD_LATENCY_IDLE"] = min(float(bound), sched_lab.LOAD_LATENCY_IDLE)
        if name == "LOAD_LATENCY_IDLE":
            changes["LOAD_LATENCY_BUSY"] = max(float(bound), sched_lab.LOAD_LATENCY_BUSY)
        assert sched_lab.knob_problem(changes) is None, (bound, sched_lab.knob_problem(changes))


def _knob_values():
    """每个旋钮在允许的范围里取值（对数均匀）；LOAD_LATENCY_BUSY 不小于 LOAD_LATENCY_IDLE。"""
    def one(name):
        base = sched_lab.LECTURE_KNOBS[name]
        lo, hi = base / sched_lab.KNOB_SPAN, base * sched_lab.KNOB_SPAN
        lo = max(lo, sched_lab._KNOB_BOUNDS.get(name, (None, None))[0] or lo)
        hi = min(hi, sched_lab._KNOB_BOUNDS.get(name, (None, None))[1] or hi)
        return st.floats(math.log(lo), math.log(hi)).map(lambda x: min(max(math.exp(x), lo), hi))
    return st.fixed_dictionaries({}, optional={k: one(k) for k in sched_lab.KNOBS}).filter(
        lambda d: d.get("LOAD_LATENCY_BUSY", sched_lab.LOAD_LATENCY_BUSY)
        >= d.get("LOAD_LATENCY_IDLE", sched_lab.LOAD_LATENCY_IDLE))


# 学生用 --knob 能给的任何一组值：模型仍然有限、不快于屋顶线，多做活不会更快
@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=_knob_values(), M=DIM, N=DIM, K=SMALL_K, dm=st.integers(1, 512), dn=st.integers(1, 512),
       dk=st.integers(1, 512))
def test_property_any_allowed_knobs_keep_the_model_physical(k, M, N, K, dm, dn, dk):
    assert sched_lab.knob_problem(k) is None
    with sched_lab.knobs(**k):
        check_physical(M, N, K, dm, dn, dk, note=f"{k}: ")
