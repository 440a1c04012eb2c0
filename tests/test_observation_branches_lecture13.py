"""lecture13/01_timing_model.py 的每一句观察，两个分支都走一遍：默认的模型上都成立；再用 sched_lab.knobs 临时改一个
【估计】旋钮（项目自己"改了会怎样"的机制）、改演示 3 的 --tolerance，或者把一个判断用的函数换掉，让某一句不成立，
断言它印成了【本次不成立】、写出了判据（讲义说……和阈值）和量到的值（这里用 sched_lab 的公开接口独立算一遍再比）。
"默认的模型上都成立"是讲义的论断（h100_claim）；每个失败分支的测试从 H100 上那个都成立的模型出发、只让一句不成立，
是 H100 上一次具体运行的前提（h100_golden）：换了 GPU，出发点本来就有不成立的句子，这些测试跳过。"""

import pytest
import io
import re
import math
import os
from contextlib import contextmanager, redirect_stdout
from unittest import mock

import numpy as np

import sched_lab as sl
from conftest import load_script
from console import FAILED
from kernel_lab import VALID, Config
from llama_shapes import LAYERS, TOKENS
from printed import ObservationFailed, find, observations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TM = load_script("lecture13/01_timing_model.py", "timing_01_branches")

SMALL, BIG = Config(16, 64, 128, 4, 4, 1), Config(128, 128, 64, 4, 3, 8)      # 第 14 讲专家的两档


def S(name, M):
    return (M, *LAYERS[name])


def t(c, name, M):
    return sl.explain(c, *S(name, M))["time_us"]


def items(demo, *args, knobs=None):
    """在（可能改过旋钮的）模型上跑一个演示，返回它印的观察（每条拼成一整句）。"""
    buf = io.StringIO()
    with sl.knobs(**(knobs or {})), redirect_stdout(buf):
        demo(*args)
    return observations(buf.getvalue())


@contextmanager
def beyond_the_datasheet(**values):
    """把旋钮改成 sched_lab.knobs 会拒绝的值（比如可达带宽高过峰值）：只为让一句观察的失败分支跑起来。"""
    with mock.patch.multiple(sl, **values, HBM_ACHIEVABLE=sl.HBM_BW * values.get("HBM_EFFICIENCY", sl.HBM_EFFICIENCY)):
        sl.clear_cache()
        try:
            yield
        finally:
            sl.clear_cache()


def failing(obs, keyword, criterion, measured, markers=1):
    """含 keyword 的那条不成立：标记（markers 个）、"讲义说"和判据里的词、量到的值（独立算出的数）都在。"""
    found = [o for o in obs if keyword in o]
    assert len(found) == 1, (f"测试的前提变了（不是引擎坏了）：这次印的观察里含\"{keyword}\"的有 {len(found)} 句，"
                             "不是正好一句——那句观察的写法变了（改这个测试的 keyword），或者它这次没印出来", obs)
    o = found[0]
    assert o.count(FAILED) == markers, (f"测试的前提没做到（不是引擎坏了）：这样改了模型，这句观察在现在的形状数据上仍然成立，"
                                        f"换一个让它不成立的改法：{o}")
    assert "讲义说" in o
    assert o.count("没做到的是：") == markers, o        # 判据有几条：点名没做到的那几条（学生报过：看不出是哪条）
    for w in criterion:
        assert w in o, (w, o)
    for w in measured:
        assert w.replace(" ", "") in o.replace(" ", ""), (w, o)


@pytest.mark.h100_claim
def test_everything_holds_on_the_default_model():
    """第 13 讲 01 的每条观察在默认的模型上都成立（时间拆解、每种效应、代价模型引导的调优）。"""
    for demo, args, n in ((TM.demo1_breakdown, (), 5), (TM.demo2_effects, (), 7), (TM.demo3_guided, (TM.TOLERANCE,), 3)):
        obs = items(demo, *args)
        assert len(obs) >= n and not any(FAILED in o for o in obs), obs


# ---------------------------------------------------------------- 演示 1

@pytest.mark.h100_golden
def test_decode_and_mid_fail_with_twice_the_hbm_efficiency():
    eff = 2 * sl.HBM_EFFICIENCY                                    # 可达带宽比峰值还高：decode 的带宽对不上可达带宽
    with beyond_the_datasheet(HBM_EFFICIENCY=eff):                 # （--knob 和 sched_lab.knobs 都不许这样改）
        obs = items(TM.demo1_breakdown)
    failing(obs, "decode 最优配置", ["2%", "1%"], [f"{sl.HBM_BW / 1e12:.2f} × {eff} = {sl.HBM_BW * eff / 1e12:.2f}"])
    M, N, K = S("8B gate_up", 128)
    ai = 2 * M * N * K / ((M * K + K * N + M * N) * 2)
    failing(obs, "M = 128：", ["20%"], [f"算术强度 {ai:.0f}（拐点 {sl.PEAK_FLOPS / sl.HBM_BW:.0f}）"])


@pytest.mark.h100_golden
def test_decode_fails_when_launch_overhead_is_most_of_the_time():
    # 审读时报过：--knob LAUNCH_OVERHEAD=4e-4 时 480 µs 里 400 µs 是启动开销，这句仍说"几乎只是在读权重"，
    # 还把到不了屋顶线只归给"按峰值算"
    k = dict(LAUNCH_OVERHEAD=4e-4)
    with sl.knobs(**k):
        best = min((sl.explain(c, *S("8B gate_up", 1)) for c in VALID), key=lambda e: e["time_us"])
        share = 400 / best["time_us"]
    obs = items(TM.demo1_breakdown, knobs=k)
    failing(obs, "decode 最优配置", ["80%"], [f"启动开销占 {share:.0%}", f"{best['time_us']:,.1f}"])
    o = next(o for o in obs if "decode 最优配置" in o)                       # 判据有四条：点名没做到的那一条
    assert o.replace("\n", "").replace(" ", "").endswith("没做到的是：读权重至少占总时间的80%。"), o


def test_decode_names_both_reasons_it_stays_below_the_roofline():
    o = next(o for o in items(TM.demo1_breakdown) if "几乎只是在读" in o or "decode 最优配置" in o)
    if FAILED in o:                        # 助教报过：H200 上这句不成立，这里是 StopIteration，看不出是哪句话
        raise ObservationFailed(f"decode 那句观察这次不成立：{o}")
    e = min((sl.explain(c, *S("8B gate_up", 1)) for c in VALID), key=lambda e: e["time_us"])
    assert f"启动开销又占了总时间的 {sl.LAUNCH_OVERHEAD * 1e6 / e['time_us']:.0%}" in o.replace("\n", "")


@pytest.mark.h100_golden
def test_prefill_fails_with_a_faster_l2():
    with sl.knobs(L2_BW=2 * sl.L2_BW):
        e = sl.explain(BIG, *S("8B gate_up", 8192))
    obs = items(TM.demo1_breakdown, knobs=dict(L2_BW=2 * sl.L2_BW))
    failing(obs, "prefill 的瓶颈", ["拐点", "一半"], [f"专家 {e['bound'].split('（')[0]}", f"{e['time_us']:,.1f}"])


@pytest.mark.h100_golden
def test_few_ctas_fails_with_a_short_hbm_latency():
    k = dict(HBM_LATENCY=sl.HBM_LATENCY / 4)
    with sl.knobs(**k):
        shape = S("70B/8 qkv", 128)
        # 用表里印出来的（一位小数的）两个时间算：句子说的就是读者照着表算的（助教报过）
        ratio = (round(sl.explain(BIG, *shape)["time_us"], 1)
                 / round(sl.explain(sl.optimum(*shape).config, *shape)["time_us"], 1))
    tiles = math.ceil(shape[0] / BIG.BM) * math.ceil(shape[1] / BIG.BN)
    obs = items(TM.demo1_breakdown, knobs=k)
    failing(obs, "70B/8 qkv M=128：", ["10 个 CTA", "4 倍", "1.5 倍"], [f"专家 {tiles} 个 CTA", f"专家慢 {ratio:.2f}×"])


@pytest.mark.h100_golden
def test_stages_one_fails_with_a_short_idle_latency():
    k = dict(LOAD_LATENCY_IDLE=sl.LOAD_LATENCY_IDLE / 2)
    with sl.knobs(**k):
        ratios = [sl.explain((SMALL if M <= 16 else BIG).replace(stages=1), *S(n, M))["time_us"]
                  / sl.explain(SMALL if M <= 16 else BIG, *S(n, M))["time_us"]
                  for n, M in (("8B gate_up", 1), ("8B gate_up", 128), ("8B gate_up", 8192), ("70B/8 qkv", 128))]
    obs = items(TM.demo1_breakdown, knobs=k)
    failing(obs, "stages = 1 的瓶颈", ["decode 慢得最少"], ["、".join(f"{r:.2f}×" for r in ratios)])


def test_stages_one_says_how_much_longer_decode_waits_than_it_reads():
    """审读报过：--knob LOAD_LATENCY_BUSY=3e-6 时 decode 的坏例"等"192 µs、显存 79.7 µs（2.4 倍），句子却照旧说"等"
    "只是比显存稍长"。现在印出两个数；只有专家本来卡在显存上、"等"又比显存长不到 25% 时才说"只比显存长"。"""
    for k in ({}, dict(LOAD_LATENCY_BUSY=3e-6)):
        with sl.knobs(**k):
            e = sl.explain(SMALL.replace(stages=1), *S("8B gate_up", 1))
            was = TM.short(sl.explain(SMALL, *S("8B gate_up", 1))["bound"])
        wait, mem = TM.judged_parts(e)["等"], TM.judged_parts(e)["显存"]
        found = [o for o in items(TM.demo1_breakdown, knobs=k) if "坏例只把" in o or "stages = 1 的瓶颈" in o]
        assert len(found) == 1
        o = found[0].replace(" ", "")
        if FAILED in o:                                          # 不成立时印的是判据和量到的值
            continue
        if was == "显存" and wait < 1.25 * mem:
            assert f"\"等\"（{wait:.1f}µs）只比显存（{mem:.1f}µs）长" in o, o
        else:
            assert "稍长" not in o and "只比显存" not in o, o
            assert f"\"等\"{wait:.1f}µs，是显存{mem:.1f}µs的{wait / mem:.2f}倍" in o, o
        if k:
            assert wait > 2 * mem or sl.GPU.key != "h100", "测试的前提（H100 上这个旋钮让等远长于显存）没做到"


# ---------------------------------------------------------------- 演示 2

@pytest.mark.h100_golden
def test_wave_quantization_fails_with_half_the_hbm_efficiency():
    k = dict(HBM_EFFICIENCY=sl.HBM_EFFICIENCY / 2)
    with sl.knobs(**k):
        wr = (sl.explain(BIG, 128, (sl.SMS + 1) * BIG.BN, 4096)["time_us"]
              / sl.explain(BIG, 128, sl.SMS * BIG.BN, 4096)["time_us"])
    failing(items(TM.demo2_effects, knobs=k), "最忙的 SM", ["×1.2"], [f"时间 ×{wr:.2f}"])


@pytest.mark.h100_golden
def test_stages_and_occupancy_fail_with_a_slow_l2():
    k = dict(L2_BW=sl.L2_BW / 4)
    with sl.knobs(**k):
        ts = [t(BIG.replace(stages=s), "8B o", 512) for s in (1, 2, 3, 4)]
        o3 = sl.explain(BIG, *S("70B/8 o", 8192))
    obs = items(TM.demo2_effects, knobs=k)
    failing(obs, "stages 1–4", ["2 倍", "占用率"], [f"3 级 {o3['time_us']:,.1f} µs / {o3['ctas_per_sm']} CTA/SM"], markers=2)
    o = next(o for o in obs if "stages 1–4" in o).replace("\n", "")
    printed = [float(x) for x in re.search(r"的时间 ([\d.]+) / ([\d.]+) / ([\d.]+) / ([\d.]+) µs", o).groups()]
    assert all(abs(p - x) <= 0.05 for p, x in zip(printed, ts)), (printed, ts)      # 至少一位小数，和算出来的一样
    for (p, q), (x, y) in zip(zip(printed, printed[1:]), zip(ts, ts[1:])):       # 相邻两级的先后印出来不颠倒、不变成一样
        assert (p > q) == (x > y) and (p == q) == (x == y), (printed, ts)     # （审读报过 107.5 / 107.5 其实是逐级变快）


@pytest.mark.h100_golden
def test_stages_are_not_said_to_shorten_the_wait_when_memory_latency_is_what_shrank():
    # 审读报过：--knob HBM_LATENCY=1e-05 时 8B o M=512 的 stages 1 → 4 从 1,284 降到 217 µs，"等"只从 164 降到 27 µs，
    # 少掉的几乎全是"显存"（1,280 → 213 µs：在路上的字节多了，显存的延迟也藏住了），句子照样说"缩短的是'等'"
    k = dict(HBM_LATENCY=1e-05)
    with sl.knobs(**k):
        one, four = (sl.explain(BIG.replace(stages=s), *S("8B o", 512)) for s in (1, 4))
    drop = lambda name: one["parts_us"][name] - four["parts_us"][name]       # noqa: E731
    wait = next(n for n in one["parts_us"] if n.startswith("等"))
    mem = next(n for n in one["parts_us"] if n.startswith("显存"))
    assert drop(wait) < 0.5 * (one["time_us"] - four["time_us"]) < drop(mem), "测试的前提（少掉的主要是显存）没做到"
    failing(items(TM.demo2_effects, knobs=k), "stages 1–4", ["缩短的主要是等"],
            [f"显存 {one['parts_us'][mem]:,.0f} → {four['parts_us'][mem]:,.0f} µs"])
    table = "".join(items_text(TM.demo2_effects, knobs=k).split())
    assert f"{one['time_us']:,.0f}/" in table, table                     # 表里的级数时间也带千分位，和句子里一样


def items_text(demo, *args, knobs=None):
    """和 items 一样跑一个演示，返回它印的全部文字。"""
    buf = io.StringIO()
    with sl.knobs(**(knobs or {})), redirect_stdout(buf):
        demo(*args)
    return buf.getvalue()


@pytest.mark.h100_golden
def test_group_fails_with_a_slow_per_sm_l2():
    k = dict(L2_BW_PER_SM=sl.L2_BW_PER_SM / 4)
    with sl.knobs(**k):
        gr = t(BIG, "8B gate_up", 8192) / t(BIG.replace(group=1), "8B gate_up", 8192)
    failing(items(TM.demo2_effects, knobs=k), "group 1 → 8", ["减半", "10%"], [f"时间 ×{gr:.2f}"])


@pytest.mark.h100_golden
def test_warps_claim_fails_if_four_warps_could_launch(monkeypatch):
    monkeypatch.setattr(TM, "can_launch", lambda c: True)           # 造一个"256×128 配 4 个 warp 能启动"的世界
    failing(items(TM.demo2_effects), "8 → 16 warp", ["4 warp 启动不了"], ["4 warp 能启动"])


@pytest.mark.h100_golden
def test_warps_claim_fails_when_compute_is_the_largest_term():
    """学生报过：L2 快一倍（13 的第一条"可以试试"）时 256×128 的瓶颈变成"算"，总时间多 4%，那句"'算'不是最大的一项、
    这一点点差别"却照样成立。现在判据里有：8 warp 时最大的一项不是"算"，总时间只多不到 1%。"""
    k = dict(L2_BW=2 * sl.L2_BW)
    big = Config(256, 128, 64, 8, 4, 16)
    with sl.knobs(**k):
        e8, e16 = sl.explain(big, *S("8B gate_up", 8192)), sl.explain(big.replace(warps=16), *S("8B gate_up", 8192))
    assert e8["bound"].startswith("算") or "算" in e8["bound"], e8["bound"]
    failing(items(TM.demo2_effects, knobs=k), "8 → 16 warp", ["不是最大的一项", "1%"],
            [f"总时间 ×{e16['time_us'] / e8['time_us']:.4f}", '最大的一项是"算"'])


@pytest.mark.h100_golden
def test_warps_difference_below_the_model_precision_is_not_called_the_reason(monkeypatch):
    """助教报过：另一块 GPU 上 16 个 warp 只慢 0.01%，句子照样说"这一点点差别就是 prefill 的最优是 8 个 warp 的原因"，
    同一次运行别处说差不到 0.1% 就比模型的精度还小。这里把"一样快"的界放宽到 1%，H100 上的 0.16% 就落在界里。"""
    monkeypatch.setattr(sl, "NEAR", 0.01)
    [o] = [o for o in items(TM.demo2_effects) if "16 个 warp" in o]
    assert FAILED not in o and "比 1.0% 还小（比模型的精度还小" in o and "就是 prefill 的最优" not in o


@pytest.mark.h100_golden
def test_sixteen_warps_are_not_called_slower_when_they_are_as_fast_to_rounding_error():
    """审读报过：--knob L2_BW=2e11 时 8 和 16 个 warp 一样快（相对差 1e-15，浮点误差），第 4 句照样成立，说"总时间
    只多 0.000000%……模型里 8 个 warp 略快"。现在"16 warp 更慢"要慢出 sched_lab.SAME 以外，这时就是不成立。"""
    k = dict(L2_BW=2e11)
    big = Config(256, 128, 64, 8, 4, 16)
    with sl.knobs(**k):
        e8, e16 = sl.explain(big, *S("8B gate_up", 8192)), sl.explain(big.replace(warps=16), *S("8B gate_up", 8192))
    assert abs(e16["time_us"] / e8["time_us"] - 1) <= sl.SAME, "金标运行的前提变了：这样改了以后 8、16 个 warp 不一样快"
    failing(items(TM.demo2_effects, knobs=k), "8 → 16 warp", ["16 warp 更慢"], ["总时间 ×1.0000"])


@pytest.mark.h100_golden
def test_stage_times_equal_to_rounding_error_are_printed_alike_and_not_called_faster():
    """审读报过：--knob L2_BW=2e11 时 8B o M=512 四级的时间只差 1e-11（浮点误差），第 2 句为了让相邻两级印出来不一样，
    印成"1,556.6 / 1,556.571476 / 1,556.57 / 1,556.6 µs"。一样快（相对差在 sched_lab.SAME 以内）的就印成一样的数，
    "逐级变快"不成立。"""
    k = dict(L2_BW=2e11)
    with sl.knobs(**k):
        ts = [t(BIG.replace(stages=s), "8B o", 512) for s in (1, 2, 3, 4)]
    assert max(ts) / min(ts) - 1 <= sl.SAME, "金标运行的前提变了：这样改了以后四级不是一样快"
    failing(items(TM.demo2_effects, knobs=k), "stages 1–4", ["逐级变快"], [], markers=2)
    o = next(o for o in items(TM.demo2_effects, knobs=k) if "stages 1–4" in o).replace("\n", "")
    printed = re.search(r"的时间 ([\d.,]+) / ([\d.,]+) / ([\d.,]+) / ([\d.,]+) µs", o).groups()
    assert set(printed) == {f"{ts[0]:,.1f}"}, printed


@pytest.mark.h100_golden
def test_no_config_bound_by_compute_is_said_as_none_not_zero_percent():
    """审读报过：--knob L2_BW=2e11 时 88 × 3744 个配置里没有一个"算"是最大的一项，第 6 句说"只占 0.0%"。现在说没有一个；
    不是 0 的比例照判据的位数印，不印成 0.0%。"""
    k = dict(L2_BW=2e11)
    with sl.knobs(**k):
        hits = 0
        for name, (N, K) in LAYERS.items():
            for M in TOKENS:
                b = sl.breakdown(sl.VALID_ARRAYS, M, N, K)
                hits += int(np.sum(b["t_math"] >= np.maximum.reduce([b["t_l2"], b["t_wait"], b["t_dram"]])))
    assert hits == 0, "金标运行的前提变了：这样改了以后有配置的\"算\"是最大的一项"
    [o] = [o for o in items(TM.demo2_effects, knobs=k) if "MMA 路径" in o]
    flat = "".join(o.split())
    assert FAILED not in o and "没有一个\"算\"是最大的一项" in flat and "0.0%" not in flat, o


@pytest.mark.h100_golden
def test_mid_sentence_does_not_call_an_equally_fast_expert_slower():
    # 审读时报过：--knob L2_BW=1.54e+13 时专家和最优一样快（86.5 = 86.5 µs），句子说"专家的瓶颈也是显存（慢 1.00×）"
    obs = "".join(items(TM.demo1_breakdown, knobs=dict(L2_BW=1.54e13)))
    assert "专家的瓶颈也是显存，和最优一样快" in obs and "慢 1.00×" not in obs


@pytest.mark.h100_golden
def test_tuning_runs_say_all_when_every_shape_is_in_range():
    # 审读时报过：同一个旋钮下 88 个形状全在 10–999 次之间，句子说"88 个形状里 88 个（至少四分之三）"
    obs = "".join(items(TM.demo3_guided, TM.TOLERANCE, knobs=dict(L2_BW=1.54e13)))
    n = len(LAYERS) * len(TOKENS)
    assert f"{n}个形状里{n}个在10–999次之间（全部）" in re.sub(r"\s+", "", obs) and "四分之三" not in obs


def test_tuning_runs_say_what_share_is_in_range():
    # 学生报过："88 个形状里 85 个（至少四分之三）在 10–999 次之间"读着别扭（括号里是判据）：现在说占多少
    obs = re.sub(r"\s+", "", "".join(items(TM.demo3_guided, TM.TOLERANCE)))
    # 这句观察在别的 GPU 上印成【本次不成立】时（助教报过：L40S 上是一个光秃秃的 AssertionError），find 说是哪一句，
    # conftest 把它报成讲义的话不成立（或跳过），不是措辞错了
    m = find(r"(\d+)个形状里(\d+)个在10–999次之间（(全部|占(\d+)%)）", obs)
    assert "四分之三" not in obs, obs
    n, k = int(m[1]), int(m[2])
    assert (m[3] == "全部") == (k == n) and (k == n or int(m[4]) == round(100 * k / n)), m.group(0)


@pytest.mark.h100_golden
def test_orientation_fails_with_a_faster_l2():
    k = dict(L2_BW=2 * sl.L2_BW)
    with sl.knobs(**k):
        r = t(Config(256, 128, 64, 8, 4, 16), "8B gate_up", 8192) / t(Config(128, 256, 64, 8, 4, 16), "8B gate_up", 8192)
    failing(items(TM.demo2_effects, knobs=k), "128×256 → 256×128", ["0.5%", "搬"], [f"时间 ×{r:.4f}"])


@pytest.mark.h100_golden
def test_mma_path_fails_with_a_slow_fallback():
    k = dict(MMA_FALLBACK=sl.MMA_FALLBACK / 4)
    with sl.knobs(**k):
        tr = t(Config(32, 64, 128, 4, 3, 8), "8B o", 512) / t(Config(64, 32, 128, 4, 3, 8), "8B o", 512)
    failing(items(TM.demo2_effects, knobs=k), "MMA 路径", ["10%", "5%", "1 / MMA_FALLBACK"],
            [f"MMA_FALLBACK = {sl.MMA_FALLBACK / 4}", f"总时间 ×{tr:.3f}"])


def test_mma_path_compares_the_move_term_with_the_slowed_compute_term():
    """审读报过：--knob MMA_FALLBACK=0.3 时"搬"108 µs、变慢的"算"约 90 µs，句子却照旧说"搬"比"算"大得多。"""
    for fb in (sl.MMA_FALLBACK, 0.3):
        with sl.knobs(MMA_FALLBACK=fb):
            e = sl.explain(Config(32, 64, 128, 4, 3, 8), *S("8B o", 512))
        move, math_ = TM.parts(e)["搬"], TM.parts(e)["算"]
        o = [x for x in items(TM.demo2_effects, knobs=dict(MMA_FALLBACK=fb)) if "MMA 路径" in x][0].replace(" ", "")
        if FAILED in o:
            continue
        words = "还大得多" if move >= 2 * math_ else "还大（" if move > math_ else "小："
        assert f"\"搬\"（{move:.0f}µs）比变慢以后的\"算\"（{math_:.0f}µs）{words}" in o, o


def test_mma_path_criterion_names_the_slowdown_it_expects():
    """助教报过：A100（没有 wgmma）上这句标着不成立，印出来的"这次"（8.6%、×1.014）却满足印出来的判据（不到 10%、
    差不到 5%）——不成立的是没印出来的那一半："算"没有变慢。判据现在把它也写出来。"""
    with mock.patch.object(sl, "WGMMA", False):                             # 像 A100：只有一条 mma 路径
        sl.clear_cache()
        try:
            said = [o for o in items(TM.demo2_effects) if "MMA 路径" in o]
        finally:
            sl.clear_cache()
    assert len(said) == 1 and FAILED in said[0] and "算×1.00" in said[0].replace(" ", ""), said
    assert f"讲义说BM=32时\"算\"变成1/MMA_FALLBACK={1 / sl.MMA_FALLBACK:.2f}倍" in said[0].replace(" ", ""), said


@pytest.mark.h100_golden
def test_l2_intensity_fails_when_warp_tiles_dominate():
    k = dict(WARP_TILE_HALF=25_600)
    want = ((128 + 256) / (128 * 256)) / ((128 + 128) / (128 * 128))    # 每次乘加要搬的元素之比 = 0.75
    with sl.knobs(**k):
        tr = t(Config(128, 256, 64, 8, 4, 8), "8B gate_up", 8192) / t(Config(128, 128, 64, 4, 4, 8), "8B gate_up", 8192)
    failing(items(TM.demo2_effects, knobs=k), "128×128 → 128×256", ["3%", "15%"],
            [f"按字节算应是 ×{want:.2f}", f"总时间 ×{tr:.2f}"])


# ---------------------------------------------------------------- 演示 3

def shapes():
    return [S(n, M) for n in LAYERS for M in TOKENS]


@pytest.mark.h100_golden
def test_tuning_runs_fail_with_a_loose_tolerance():
    med = np.median([sl.guided_tune(*s, 0.5).runs for s in shapes()])
    failing(items(TM.demo3_guided, 0.5), "10–999", ["10 到 500"], [f"中位数 {med:.0f} 次"])


@pytest.mark.h100_golden
def test_score_ties_claim_fails_with_a_slow_l2():
    k = dict(L2_BW=sl.L2_BW / 4)
    with sl.knobs(**k):
        med = np.median([sl.guided_tune(*s, TM.TOLERANCE).runs for s in shapes()])
    failing(items(TM.demo3_guided, TM.TOLERANCE, knobs=k), "分数种数中位数", ["20", "一半"], [f"引导 {med:.0f}"])


@pytest.mark.h100_golden
def test_guided_vs_random_fails_with_zero_tolerance():
    runs, rnd = [], []
    for s in shapes():
        runs.append(sl.guided_tune(*s, 0.0).runs)
        tv = sl.time_valid(*s)
        rnd.append((len(VALID) + 1) / (int(np.sum(tv <= tv.min())) + 1))
    failing(items(TM.demo3_guided, 0.0), "比随机慢的形状", ["比随机少"],
            [f"引导中位数 {np.median(runs):.0f}，随机 {np.median(rnd):.0f}"])


@pytest.mark.h100_golden
@pytest.mark.parametrize("demo, knobs, args, said", [
    ("demo1_breakdown", dict(LAUNCH_OVERHEAD=2e-5), (), "读权重占最优总时间的 79.9%"),          # 0.7994 不印成 80%
    ("demo2_effects", dict(LAUNCH_OVERHEAD=3.9e-5), (), "时间 ×1.199"),                         # 1.19929 不印成 1.20
    ("demo1_breakdown", dict(LAUNCH_OVERHEAD=4.6e-5), (), "专家慢 1.498×"),                     # 印出来的时间之比 1.4978 不印成 1.50
    ("demo3_guided", {}, (0.5,), "随机 13.4"),                                                  # 13.43 对 13 不印成一样
])
def test_a_number_next_to_its_criterion_is_printed_so_that_it_agrees_with_the_verdict(demo, knobs, args, said):
    # 审读报过：数字四舍五入以后和判据的关系变了，"没做到的是：至少 80%"前面印的却是"80%"
    obs = items(getattr(TM, demo), *args, knobs=knobs)
    o = next(o for o in obs if said.replace(" ", "") in o.replace("\n", "").replace(" ", ""))
    assert FAILED in o and "没做到的是：" in o, o


@pytest.mark.h100_golden
def test_with_no_shape_slower_than_random_the_parts_about_that_shape_are_not_judged():
    # 审读报过：比随机慢的形状 0 个，却点名"白跑的多半是简化模型排错的"——说的是一个没印出来的形状
    obs = items(TM.demo3_guided, TM.TOLERANCE, knobs=dict(L2_BW_PER_SM=9e8))
    o = next(o for o in obs if "比随机慢的形状 0 个" in o.replace("\n", ""))
    flat = o.replace("\n", "").replace(" ", "")
    assert flat.endswith("没做到的是：至少一个形状比随机慢。"), o
