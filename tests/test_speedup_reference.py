"""加速比的几何平均对着独立算的参考值检查：非平凡的程序（不同形状上快慢差很多），时间直接从 sched_lab.time_one 拿
（不经过 TimeTable 的量化和缓存），程序选哪个配置用一个手写的 Python 函数（不经过 choose），平均用 math 逐项算。
"专家比专家 = 1.0" 这种断言抓不到算错的平均；这里的程序让算术平均、少算一个形状、分子分母颠倒都和几何平均差得远。"""

import math

import pytest

from evolve import EXPERT, Evaluator, Program, Rule, VALID, choose, geomean_speedup, oracle_speedup, split_shapes
from evolve.evaluator import function_speedup
from conftest import launchable
from kernel_lab import Config
from sched_lab import time_one, time_valid

A = launchable(32, 32, 256, 2, 4, 8)      # 小 M 的好配置（共享内存小的 GPU 上少几级流水线）
B = launchable(128, 256, 64, 8, 4, 8)     # 大块（这块 GPU 放不下 4 级时少一级：夹具从 VALID 来）
C = Config(16, 32, 32, 2, 1, 1)           # 哪儿都慢：最小的块、没有流水线


def by_hand(M, N, K):
    """参考程序（和 PROGRAM 同一个意思，手写成 Python）。"""
    if M <= 64 and N <= 8192:
        return A
    if M <= 512 and K <= 4096:
        return C
    return B


PROGRAM = Program((Rule((("M", 64), ("N", 8192)), A), Rule((("M", 512), ("K", 4096)), C)), B)


def reference(pick, shapes):
    """exp(平均 log(t_专家 / t_程序))，逐个形状用 time_one 算；专家的配置是 EXPERT 在这个形状上选的那个。"""
    logs = [math.log(time_one(choose(EXPERT, s), s.M, s.N, s.K) / time_one(pick(s.M, s.N, s.K), s.M, s.N, s.K))
            for s in shapes]
    return math.exp(math.fsum(logs) / len(logs))


def arithmetic(pick, shapes):
    return sum(time_one(choose(EXPERT, s), s.M, s.N, s.K) / time_one(pick(s.M, s.N, s.K), s.M, s.N, s.K)
               for s in shapes) / len(shapes)


@pytest.fixture(scope="module")
def halves():
    return split_shapes()


def test_reference_program_is_non_trivial(halves):
    # 先确认这个程序真能区分对错：在有的形状上比专家快、有的慢，几何平均和算术平均差 1% 以上，和少算一个形状的平均也
    # 差得远远超过比较的容差（1e-6）
    train, test = halves
    assert all(choose(PROGRAM, s) == by_hand(s.M, s.N, s.K) for s in train + test)
    ratios = [time_one(choose(EXPERT, s), s.M, s.N, s.K) / time_one(by_hand(s.M, s.N, s.K), s.M, s.N, s.K)
              for s in train]
    assert min(ratios) < 0.5 and max(ratios) > 1.5
    g = reference(by_hand, train)
    assert abs(arithmetic(by_hand, train) / g - 1) > 0.01
    assert abs(reference(by_hand, train[1:]) / g - 1) > 1e-4 and abs(reference(by_hand, train[:-1]) / g - 1) > 1e-4


def test_geomean_speedup_matches_the_reference(table, halves):
    for shapes in halves:
        assert geomean_speedup(PROGRAM, shapes, table) == pytest.approx(reference(by_hand, shapes), rel=1e-6)


def test_evaluator_score_matches_the_reference(table, train):
    # 评估器的分数（训练形状上，向量化的 choose 和缓存的 log 时间）等于参考值；探针分数是 6 个探针形状上的 log 平均
    res = Evaluator(train, table).evaluate(PROGRAM)
    assert res["score"] == pytest.approx(reference(by_hand, train), rel=1e-6)


def test_function_speedup_matches_the_reference(table, train):
    # 普通 Python 启发式：同一个手写函数，结果等于参考值
    assert function_speedup(by_hand, train, table) == pytest.approx(reference(by_hand, train), rel=1e-6)


def test_oracle_speedup_matches_the_reference(table, halves):
    # 逐形状最优：每个形状取 3744 个配置里最短的时间
    for shapes in halves:
        best = {s: VALID[int(time_valid(s.M, s.N, s.K).argmin())] for s in shapes}
        ref = reference(lambda M, N, K: next(c for s, c in best.items() if (s.M, s.N, s.K) == (M, N, K)), shapes)
        assert oracle_speedup(shapes, table) == pytest.approx(ref, rel=1e-6)
        assert ref > reference(by_hand, shapes)                        # 上限比这个程序高
