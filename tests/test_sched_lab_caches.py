"""sched_lab 为了快加的缓存：结果必须和清空缓存后从头算的一位不差，而且改旋钮（knobs(...)、--knob 用的同一个，
或者测试直接替换模块里的值）以后绝不会拿到改之前算的数。
缓存有：time_valid（按形状和全部旋钮）、breakdown(VALID_ARRAYS, …) 的各项（最近 96 个形状）、cheap_cost(VALID_ARRAYS, …)、
_derived 里按 K 存的整波；optimum 数"完全一样快的配置在哪些字段上不同"改成了按列比较。"""

from unittest import mock

import numpy as np
import pytest

import sched_lab as sl
from kernel_lab import VALID

# 同一个 K（28672×4096 的 gate_up）的几个 M：整波按 K 缓存，先算的形状会把整波留给后算的
SAME_K = ((1, 28672, 4096), (128, 28672, 4096), (8192, 28672, 4096))
SHAPES = SAME_K + ((512, 4096, 4096), (128, 1280, 8192), (3, 777, 12000))
# 每个旋钮一个允许的新值（knob_problem 通过）；每个都至少改变一个形状上的时间
CHANGED = {"HBM_EFFICIENCY": 0.5, "L2_BW": 1.54e13, "L2_BW_PER_SM": 1.8e11, "LOAD_LATENCY_IDLE": 0.5e-6,
           "LOAD_LATENCY_BUSY": 9e-7, "OVERLAP_P": 4.0, "CHIP_OVERLAP_P": 5.0, "MMA_FALLBACK": 0.3,
           "WARP_TILE_HALF": 1024, "HBM_LATENCY": 2e-6, "LAUNCH_OVERHEAD": 2e-5, "L2_USABLE": 4 * 2**20}


def fresh(M, N, K):
    """参照：清空 sched_lab 的全部缓存，在现在的旋钮下从头算一遍（之后再清一次，不让参照的结果留在缓存里）。"""
    sl.clear_cache()
    try:
        b = sl.breakdown(sl.VALID_ARRAYS, M, N, K)
        return dict(parts={k: np.array(v) for k, v in b.items()}, time=np.array(sl.time_valid(M, N, K)),
                    cheap=np.array(sl.cheap_cost(sl.VALID_ARRAYS, M, N, K)), optimum=sl.optimum(M, N, K),
                    tune=sl.guided_tune(M, N, K))
    finally:
        sl.clear_cache()


def cached(M, N, K):
    """同样几样东西，走缓存（调用前不清）。"""
    b = sl.breakdown(sl.VALID_ARRAYS, M, N, K)
    return dict(parts={k: np.array(v) for k, v in b.items()}, time=np.array(sl.time_valid(M, N, K)),
                cheap=np.array(sl.cheap_cost(sl.VALID_ARRAYS, M, N, K)), optimum=sl.optimum(M, N, K),
                tune=sl.guided_tune(M, N, K))


def assert_identical(got, want, note):
    """一位不差：数组逐个元素相等（不是近似），Optimum / TuneResult 整个相等。"""
    assert got["parts"].keys() == want["parts"].keys()
    for k in want["parts"]:
        assert np.array_equal(got["parts"][k], want["parts"][k]), (note, k)
    assert np.array_equal(got["time"], want["time"]), note
    assert np.array_equal(got["cheap"], want["cheap"]), note
    assert got["optimum"] == want["optimum"], note
    assert got["tune"] == want["tune"], note


def warm(shapes=SHAPES):
    """在讲义的旋钮下把各个缓存填上（之后改旋钮，缓存里全是改之前的数）。"""
    for s in shapes:
        cached(*s)


# 讲义的旋钮：走缓存的和清空后从头算的一位不差（第一次算、第二次查缓存都一样）
def test_cached_equals_fresh_with_lecture_knobs():
    sl.clear_cache()
    for s in SHAPES:
        want = fresh(*s)
        assert_identical(cached(*s), want, s)          # 第一次：填缓存（整波从同一个 K 的前一个形状来）
        assert_identical(cached(*s), want, s)          # 第二次：全是缓存


# 每个旋钮：缓存里还留着讲义旋钮下的数时进 knobs(...)，拿到的和在那组旋钮下从头算的一位不差，而且确实变了；
# 出来以后又和讲义旋钮下从头算的一样（讲义旋钮下算好的缓存项还能用）
@pytest.mark.parametrize("name", sl.KNOBS)
def test_knobs_never_see_stale_cache(name):
    lecture = {s: fresh(*s) for s in SHAPES}
    sl.clear_cache()
    warm()
    with sl.knobs(**{name: CHANGED[name]}):
        changed = {s: fresh(*s) for s in SHAPES}
        warm()                                         # 把改过的旋钮下的数也放进缓存，再来一遍
        for s in SHAPES:
            assert_identical(cached(*s), changed[s], (name, s))
    if name == "MMA_FALLBACK" and not sl.WGMMA:        # 没有 wgmma 的 GPU（A100）只有一条 mma 路径：这个旋钮不起作用
        return
    assert any(not np.array_equal(lecture[s]["time"], changed[s]["time"]) for s in SHAPES), name
    for s in SHAPES:
        assert_identical(cached(*s), lecture[s], (name, "back", s))


# 两个改法相继：knobs 里再嵌一层 knobs，每一层都不拿别的层的缓存
def test_nested_knobs_are_keyed_separately():
    s = SAME_K[2]
    base = fresh(*s)
    with sl.knobs(L2_BW=1.54e13):
        one = fresh(*s)
        with sl.knobs(LOAD_LATENCY_BUSY=9e-7):
            two = fresh(*s)
    sl.clear_cache()
    for _ in range(2):
        assert_identical(cached(*s), base, "base")
        with sl.knobs(L2_BW=1.54e13):
            assert_identical(cached(*s), one, "one")
            with sl.knobs(LOAD_LATENCY_BUSY=9e-7):
                assert_identical(cached(*s), two, "two")
            assert_identical(cached(*s), one, "one again")
    assert not np.array_equal(base["time"], one["time"]) and not np.array_equal(one["time"], two["time"])


# 不经过 knobs(...)、直接替换模块里的值（测试里用 mock.patch 这么做，也不调 clear_cache）：缓存的键跟着变
def test_patching_module_values_without_clearing_is_not_stale():
    s = SAME_K[1]
    warm()
    base = cached(*s)
    with mock.patch.multiple(sl, L2_BW=1.54e13, HBM_ACHIEVABLE=sl.HBM_BW * 0.5):
        want = fresh(*s)
        warm()
        assert_identical(cached(*s), want, "patched")
        assert not np.array_equal(want["time"], base["time"])
    assert_identical(cached(*s), base, "restored")


# 参照实现：不用任何缓存、逐个配置走 sched_lab.time（一个配置一组数组）——和 time_valid 一位不差
def test_time_valid_equals_one_config_at_a_time():
    picks = range(0, len(VALID), 97)
    for knobs in ({}, {"L2_BW": 1.54e13}, {"OVERLAP_P": 4.0}):
        with sl.knobs(**knobs):
            for M, N, K in SAME_K:
                t = sl.time_valid(M, N, K)
                for i in picks:
                    assert t[i] == sl.time((VALID[i],), M, N, K)[0], (knobs, (M, N, K), VALID[i])


# optimum 的 tied_fields：按列比较和原来的写法（逐个配置取字段、数集合里有几个不同的值）一样
@pytest.mark.parametrize("M,N,K", [(1, 28672, 4096), (1, 1280, 8192), (8192, 28672, 4096), (16, 4096, 14336),
                                   (1, 1, 1)])
def test_optimum_tied_fields_match_the_set_definition(M, N, K):
    o = sl.optimum(M, N, K)
    t = sl.time_valid(M, N, K)
    tied = np.flatnonzero(t <= o.time * (1 + sl.SAME))
    want = tuple(f for f in ("BM", "BN", "BK", "warps", "stages", "group") if len({getattr(VALID[j], f) for j in tied}) > 1)
    assert o.tied_fields == want and o.tied == len(tied)


# 缓存交出去的数组都是只读的：调用的人改不了缓存里的数
def test_cached_arrays_are_read_only():
    M, N, K = SAME_K[1]
    arrays = [sl.time_valid(M, N, K), sl.cheap_cost(sl.VALID_ARRAYS, M, N, K),
              *sl.breakdown(sl.VALID_ARRAYS, M, N, K).values(), *sl.breakdown(sl.config_arrays(VALID[:5]), M, N, K).values()]
    for a in arrays:
        with pytest.raises(ValueError):
            a[0] = 0.0


# 缓存有界：形状多过上限时只留最近的那些
def test_valid_parts_cache_is_bounded():
    sl.clear_cache()
    limit = sl._valid_parts.cache_info().maxsize
    assert limit is not None
    for M in range(1, limit + 20):
        sl.breakdown(sl.VALID_ARRAYS, M, 64, 64)
    assert sl._valid_parts.cache_info().currsize == limit
    sl.clear_cache()



# keeping_breakdowns()：块里 time_valid 算时间时把各项留下，breakdown 接着用；块外不留（第 14 讲只要时间，
# 留着 88 个形状的各项要白占 40 多 MB）。留下的各项也按旋钮分开，从来不旧。
def time_then_parts(M, N, K):
    t = np.array(sl.time_valid(M, N, K))
    return t, {k: np.array(v) for k, v in sl.breakdown(sl.VALID_ARRAYS, M, N, K).items()}


def same(got, want, label):
    t, parts = got
    assert np.array_equal(t, want["time"]), label
    assert parts.keys() == want["parts"].keys() and all(np.array_equal(parts[k], want["parts"][k]) for k in parts), label


@pytest.mark.parametrize("name", sl.KNOBS)
def test_keeping_breakdowns_reuses_the_parts_and_is_keyed_by_the_knobs(name):
    lecture = {s: fresh(*s) for s in SHAPES}
    with sl.knobs(**{name: CHANGED[name]}):
        changed = {s: fresh(*s) for s in SHAPES}
    sl.clear_cache()
    with sl.keeping_breakdowns():
        for s in SHAPES:
            same(time_then_parts(*s), lecture[s], (name, "lecture", s))
        with sl.knobs(**{name: CHANGED[name]}):
            for s in SHAPES:
                same(time_then_parts(*s), changed[s], (name, "changed", s))
        hits = sl._valid_parts.cache_info().hits
        for s in SHAPES:
            same(time_then_parts(*s), lecture[s], (name, "back", s))
        assert sl._valid_parts.cache_info().hits >= hits + len(SHAPES)      # 讲义旋钮下的各项还在，直接用上
    sl.clear_cache()


def test_time_valid_keeps_only_times_outside_keeping_breakdowns():
    sl.clear_cache()
    for s in SHAPES:
        sl.time_valid(*s)
    assert sl._valid_parts.cache_info().currsize == 0
    with sl.keeping_breakdowns():
        sl.time_valid(64, 64, 64)
    assert sl._valid_parts.cache_info().currsize == 1
    sl.clear_cache()
