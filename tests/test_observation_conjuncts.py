"""第 14 讲 01、02、03、06 每一句被检验的观察，判据的每一个条件单独打破一次：判据是 a and b and c 时，表里有只打破 a、
只打破 b、只打破 c 的三行，都要印成【本次不成立】；判据里有阈值（< 0.8 倍、1% 以内、≥ 父程序 − 容差）的，正好在
阈值上的那一行也在表里（该成立的成立，该不成立的不成立）。每个函数还有一行"全部成立"作对照。
两个分支的措辞由 test_lecture14_scripts.test_each_observation_holds_and_fails 检查；这里只看判断本身。"""

from collections import Counter

import pytest

from conftest import load_script
from console import FAILED, Observation
from kernel_lab import Config

s01 = load_script("lecture14/01_heuristic_as_code.py", "conj_01")
s02 = load_script("lecture14/02_llm_proposal.py", "conj_02")
s03 = load_script("lecture14/03_cascade_and_database.py", "conj_03")
s06 = load_script("lecture14/06_your_heuristic.py", "conj_06")
TIE, SAME = s03.TIE, s06.SAME
N = s03.N_PROBE

C = Config(128, 128, 64, 4, 3, 8)


def v(ok, regs, score):
    return dict(cfg=C, ok=ok, over=[] if ok else ["寄存器/线程"], regs=regs, score=score)


KINDS = {"targeted": dict(n=10, better=5, bad=0, same=0), "single_field": dict(n=10, better=1, bad=3, same=0),
         "threshold": dict(n=10, better=1, bad=0, same=0)}
MISTAKES = Counter({"SEARCH/REPLACE 打不上": 2, "子程序解析不了": 1, "子程序启动不了": 3})
POL = dict(best=1.0, uniform=1.0, tournament=1.0, islands=1.0)
PARENTS = dict(best=19, uniform=300, tournament=200, islands=190)
CHAIN = [(0, "起点", "", 1.0), (1, "a", "", 1.1), (2, "b", "", 1.2), (3, "c", "", 1.3)]
RUNS, FALSE, REJ = {3: 30000, N: 25000, 12: 27000}, {3: 14, N: 2, 12: 4}, {3: 160, N: 200, 12: 230}
CASCADE_REST = ([0.8, 0.9], 200, 500, 38)   # shares（每个种子）、caught、passed_worse、rest：一半以上不比父程序好

# (名字, 函数, 参数, 应不应该成立)
CASES = [
    # 01 obs_branches：各分支的形状数加起来正好是形状总数（多了、少了都不成立）
    ("01 branches holds", s01.obs_branches, ({0: 16, 1: 72}, 88, [25, 27], set(), set()), True),
    ("01 branches one short", s01.obs_branches, ({0: 16, 1: 71}, 88, [25, 27], set(), set()), False),
    ("01 branches one over", s01.obs_branches, ({0: 17, 1: 72}, 88, [25, 27], set(), set()), False),
    # 01 obs_new_shapes：answered == n_new and in_table == 0
    ("01 new shapes holds", s01.obs_new_shapes, (3, 3, 0, 2.5), True),
    ("01 new shapes not all answered", s01.obs_new_shapes, (2, 3, 0, 2.5), False),
    ("01 new shapes one in the table", s01.obs_new_shapes, (3, 3, 1, 2.5), False),
    # 01 obs_space：small > runs > per_shape and big > small（等号都不算）
    ("01 space holds", s01.obs_space, (10 ** 8, 10 ** 33, 3744, 164736), True),
    ("01 space small == runs", s01.obs_space, (164736, 10 ** 33, 3744, 164736), False),
    ("01 space runs == per_shape", s01.obs_space, (10 ** 8, 10 ** 33, 3744, 3744), False),
    ("01 space big == small", s01.obs_space, (10 ** 8, 10 ** 8, 3744, 164736), False),
    # 01 obs_roundtrip：same and same_text and differ == 0
    ("01 roundtrip holds", s01.obs_roundtrip, (True, True, 88, 0), True),
    ("01 roundtrip program differs", s01.obs_roundtrip, (False, True, 88, 0), False),
    ("01 roundtrip text differs", s01.obs_roundtrip, (True, False, 88, 0), False),
    ("01 roundtrip one shape differs", s01.obs_roundtrip, (True, True, 88, 1), False),
    # 01 obs_simplify：match and equiv and n_after < n_before and corners_ok
    ("01 simplify holds", s01.obs_simplify, (True, True, 8, 4, True, "x"), True),
    ("01 simplify not the same rules", s01.obs_simplify, (False, True, 8, 4, True, "x"), False),
    ("01 simplify not equivalent", s01.obs_simplify, (True, False, 8, 4, True, "x"), False),
    ("01 simplify nothing removed", s01.obs_simplify, (True, True, 8, 8, True, "x"), False),
    ("01 simplify a corner elsewhere", s01.obs_simplify, (True, True, 8, 4, False, "x"), False),
    # 02 obs_probe：passed == (child >= parent - slack)，正好在 parent - slack 上算过
    ("02 probe passed above", s02.obs_probe, (0.07, 0.08, 0.02, True), True),
    ("02 probe passed exactly at the slack", s02.obs_probe, (0.25, 0.5, 0.25, True), True),
    ("02 probe rejected at the slack", s02.obs_probe, (0.25, 0.5, 0.25, False), False),
    ("02 probe rejected below", s02.obs_probe, (0.05, 0.08, 0.02, False), True),
    ("02 probe passed below", s02.obs_probe, (0.05, 0.08, 0.02, True), False),
    ("02 probe rejected above", s02.obs_probe, (0.07, 0.08, 0.02, False), False),
    # 02 obs_database：predicted == actual and new_best == was_best
    # 02 obs_stalled：最后一次刷新最好分数在 --after 之前（正好在 --after 上就不算停住）
    ("02 stalled holds", s02.obs_stalled, (dict(improvements=[(0, 1.0, "起点"), (1818, 1.268, "threshold")]), 2000), True),
    ("02 stalled at after", s02.obs_stalled, (dict(improvements=[(0, 1.0, "起点"), (2000, 1.27, "targeted")]), 2000), False),
    ("02 stalled after after", s02.obs_stalled, (dict(improvements=[(0, 1.0, "起点"), (2100, 1.27, "targeted")]), 2000), False),
    ("02 database holds", s02.obs_database, (1, 1, 8, False, False), True),
    ("02 database other place", s02.obs_database, (1, 2, 8, False, False), False),
    ("02 database not on the island", s02.obs_database, (1, None, 8, False, False), False),
    ("02 database best predicted wrong", s02.obs_database, (1, 1, 8, True, False), False),
    ("02 database best missed", s02.obs_database, (1, 1, 8, False, True), False),
    # 02 obs_kinds：比父程序好的比例最高的是 targeted and 启动不了最多的是 single_field
    ("02 kinds holds", s02.obs_kinds, (KINDS,), True),
    ("02 kinds threshold beats targeted", s02.obs_kinds, ({**KINDS, "threshold": dict(n=10, better=6, bad=0, same=0)},),
     False),
    ("02 kinds threshold launches worse", s02.obs_kinds, ({**KINDS, "threshold": dict(n=10, better=1, bad=4, same=0)},),
     False),
    # 02 obs_mistakes：五个条件
    ("02 mistakes holds", s02.obs_mistakes, (MISTAKES, 6, {"a": 2, "b": 1}, 2, 0, 1), True),
    ("02 mistakes total off", s02.obs_mistakes, (MISTAKES, 7, {"a": 2, "b": 1}, 2, 0, 1), False),
    ("02 mistakes a correct reply", s02.obs_mistakes, (MISTAKES + Counter({"没有错": 1}), 7, {"a": 2, "b": 1}, 2, 0, 1),
     False),
    ("02 mistakes failed count off", s02.obs_mistakes, (MISTAKES, 6, {"a": 2, "b": 2}, 2, 0, 1), False),
    ("02 mistakes one in the database", s02.obs_mistakes, (MISTAKES, 6, {"a": 2, "b": 1}, 2, 1, 1), False),
    ("02 mistakes unlaunchable unaccounted", s02.obs_mistakes, (MISTAKES, 6, {"a": 2, "b": 1}, 1, 0, 1), False),
    # 02 obs_valley：只改 BM 启动不了、只改 warps 能启动且不比起点好、两个一起改能启动且比起点好
    ("02 valley holds", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 0.999), v(True, 168, 1.02)],),
     True),
    ("02 valley warps ties the start", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 1.0),
                                                          v(True, 168, 1.02)],), True),
    ("02 valley BM launches", s02.obs_valley, ([v(True, 168, 1.0), v(True, 296, 0.99), v(True, 104, 0.999),
                                                 v(True, 168, 1.02)],), False),
    ("02 valley warps does not launch", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(False, 104, None),
                                                           v(True, 168, 1.02)],), False),
    ("02 valley warps beats the start", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 1.0001),
                                                           v(True, 168, 1.02)],), False),
    ("02 valley both do not launch", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 0.999),
                                                        v(False, 168, None)],), False),
    ("02 valley both only tie", s02.obs_valley, ([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 0.999),
                                                   v(True, 168, 1.0)],), False),
    # 03 obs_cascade_saves：runs6 < 0.8 × runs0（正好 80% 不算），分数相差不到 TIE（按印出来的三位小数），
    # 每个种子里跑过内核的子程序一半以上不比父程序好（最小的那个 > 50%，正好一半不算）
    ("03 cascade holds", s03.obs_cascade_saves, (20000, 15000, 1.28, 1.279, *CASCADE_REST), True),
    ("03 cascade saves exactly 20%", s03.obs_cascade_saves, (20000, 16000, 1.28, 1.279, *CASCADE_REST), False),
    ("03 cascade saves just over 20%", s03.obs_cascade_saves, (20000, 15999, 1.28, 1.279, *CASCADE_REST), True),
    ("03 cascade score off by more than TIE", s03.obs_cascade_saves,
     (20000, 15000, 1.0, 1.0 * (1 - TIE) - 0.001, *CASCADE_REST), False),
    ("03 cascade score just inside TIE", s03.obs_cascade_saves, (20000, 15000, 1.0, 0.991, *CASCADE_REST), True),
    ("03 cascade score just outside TIE", s03.obs_cascade_saves, (20000, 15000, 1.0, 0.989, *CASCADE_REST), False),
    ("03 cascade score higher by more than TIE", s03.obs_cascade_saves, (20000, 15000, 1.0, 1.0 * (1 + TIE) + 0.001, *CASCADE_REST),
     False),
    ("03 cascade worse share exactly half", s03.obs_cascade_saves, (20000, 15000, 1.28, 1.279, [0.5, 0.9], 200, 500, 38),
     False),
    ("03 cascade worse share just over half", s03.obs_cascade_saves,
     (20000, 15000, 1.28, 1.279, [0.501, 0.9], 200, 500, 38), True),
    # 03 obs_probe_size：runs[N] 最少（并列算）、false[N] <= false[3]（并列算）、rejected[3] < rejected[N]（并列不算）
    ("03 probe size holds", s03.obs_probe_size, (RUNS, FALSE, REJ), True),
    ("03 probe size runs tie", s03.obs_probe_size, ({**RUNS, 12: RUNS[N]}, FALSE, REJ), True),
    ("03 probe size 3 runs fewer", s03.obs_probe_size, ({**RUNS, 3: RUNS[N] - 1}, FALSE, REJ), False),
    ("03 probe size 12 runs fewer", s03.obs_probe_size, ({**RUNS, 12: RUNS[N] - 1}, FALSE, REJ), False),
    ("03 probe size false ties", s03.obs_probe_size, (RUNS, {**FALSE, 3: FALSE[N]}, REJ), True),
    ("03 probe size more false", s03.obs_probe_size, (RUNS, {**FALSE, 3: FALSE[N] - 0.5}, REJ), False),
    ("03 probe size rejections tie", s03.obs_probe_size, (RUNS, FALSE, {**REJ, 3: REJ[N]}), False),
    # 03 obs_spread：均匀取的错杀严格少于随机取的
    ("03 spread holds", s03.obs_spread, (2, 49, N), True),
    ("03 spread tie", s03.obs_spread, (9, 9, N), False),
    ("03 spread half more", s03.obs_spread, (9.5, 9, N), False),
    # 03 obs_greedy：永远挑最好的比另外三种每一种都少（各打破一种；并列不算）
    ("03 greedy holds", s03.obs_greedy, (PARENTS, POL, POL, POL), True),
    ("03 greedy ties uniform", s03.obs_greedy, ({**PARENTS, "uniform": 19}, POL, POL, POL), False),
    ("03 greedy above tournament", s03.obs_greedy, ({**PARENTS, "tournament": 18}, POL, POL, POL), False),
    ("03 greedy above islands", s03.obs_greedy, ({**PARENTS, "islands": 18.5}, POL, POL, POL), False),
    # 03 obs_lineage：至少 3 次修改，最大的一步 < 60%
    ("03 lineage holds", s03.obs_lineage, (CHAIN,), True),
    ("03 lineage two steps", s03.obs_lineage, (CHAIN[:3],), False),
    ("03 lineage one big step", s03.obs_lineage, ([(0, "起点", "", 1.0), (1, "a", "", 1.01), (2, "b", "", 1.02),
                                                   (3, "c", "", 1.3)],), False),
    ("03 lineage biggest just over 60%", s03.obs_lineage, ([(0, "起点", "", 1.0), (1, "a", "", 1.2 ** 0.2),
                                                            (2, "b", "", 1.2 ** 0.39), (3, "c", "", 1.2)],), False),
    ("03 lineage biggest just under 60%", s03.obs_lineage, ([(0, "起点", "", 1.0), (1, "a", "", 1.2 ** 0.2),
                                                             (2, "b", "", 1.2 ** 0.41), (3, "c", "", 1.2)],), True),
    # 06 obs_vs_expert：两种划分的测试形状都 > 1 + SAME
    ("06 vs expert holds", s06.obs_vs_expert, (False, {"random": (1.1, 1.05), "by_model": (1.1, 1.02)}, "e"), True),
    ("06 vs expert random split lost", s06.obs_vs_expert, (False, {"random": (1.1, 0.99), "by_model": (1.1, 1.02)}, "e"),
     False),
    ("06 vs expert by model lost", s06.obs_vs_expert, (False, {"random": (1.1, 1.05), "by_model": (1.1, 0.99)}, "e"),
     False),
    ("06 vs expert exactly 1", s06.obs_vs_expert, (False, {"random": (1.1, 1.05), "by_model": (1.1, 1.0)}, "e"), False),
    # 06 obs_rank：你的不超过逐形状最优（等于也算）
    ("06 rank holds", s06.obs_rank, (dict(yours=1.2, expert=1, per_m=1.25, evolved=1.28, oracle=1.35),), True),
    ("06 rank equals the oracle", s06.obs_rank, (dict(yours=1.35, expert=1, per_m=1.25, evolved=1.28, oracle=1.35),), True),
    ("06 rank above the oracle", s06.obs_rank, (dict(yours=1.351, expert=1, per_m=1.25, evolved=1.28, oracle=1.35),),
     False),
    # 06 obs_per_shape：快 + 慢 + 一样 == n（多了、少了都不成立）
    ("06 per shape holds", s06.obs_per_shape, (3, 5, 80, 88, "x", 2.0), True),
    ("06 per shape one short", s06.obs_per_shape, (3, 5, 79, 88, "x", 2.0), False),
    ("06 per shape one over", s06.obs_per_shape, (3, 6, 80, 88, "x", 2.0), False),
    # 06 obs_explain：n_checked > 0 and n_bigger == n_checked
    ("06 explain holds", s06.obs_explain, (5, 5), True),
    ("06 explain one not bigger", s06.obs_explain, (5, 4), False),
    ("06 explain nothing checked", s06.obs_explain, (0, 0), False),
    # 06 obs_evolve：进化后的最好分数不低于起点（相等也算）
    ("06 evolve holds", s06.obs_evolve, (1.1, 1.3, 1.28), True),
    ("06 evolve stays", s06.obs_evolve, (1.1, 1.1, 1.28), True),
    ("06 evolve drops", s06.obs_evolve, (1.1, 1.0999, 1.28), False),
]


@pytest.mark.parametrize("name,fn,args,ok", CASES, ids=[c[0] for c in CASES])
def test_each_condition_of_each_check(name, fn, args, ok):
    o = fn(*args)
    assert isinstance(o, Observation)
    assert o.ok == ok, (name, o.measured)
    assert str(o).startswith(FAILED) != ok


def test_every_checked_observation_has_a_row():
    # 新加一个 obs_* 函数的脚本，这张表也要跟着加（至少一行成立、一行不成立）
    import inspect
    covered = {(c[1].__module__, c[1].__name__) for c in CASES}
    for m in (s01, s02, s03, s06):
        for name, f in inspect.getmembers(m, inspect.isfunction):
            if name.startswith("obs_") and f.__module__ == m.__name__:
                assert (m.__name__, name) in covered, name
                rows = [c[3] for c in CASES if c[1] is f]
                assert True in rows and False in rows, name


def test_02_valley_failure_names_what_the_step_that_cannot_launch_overflows():
    # 助教在 L40S 上报过：两个一起改的终点共享内存超了，寄存器没超，句子只说"两个一起改：不能启动"
    both = dict(v(False, 168, None), over=["共享内存"])
    said = str(s02.obs_valley([v(True, 168, 1.0), v(False, 296, None), v(True, 104, 0.999), both]))
    assert "两个一起改：不能启动（超了共享内存）" in said and "只改 BM：不能启动（超了寄存器/线程）" in said, said
