"""
岛屿模型的程序库（evolve.loop.ProgramDatabase）自己的测试（issue 12 §3）：迁移按时把每个岛最好的程序送到下一个岛；
同一个程序加两次只留一份，迁移之后岛里也没有重复；灵感程序从不来自父程序自己的岛；全局最好的程序经得起任何裁剪。
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evolve import VALID, Evaluator, Program, evolve
from evolve.loop import ISLAND_SIZE, MIGRATE_EVERY, N_INSPIRATIONS, N_ISLANDS, ProgramDatabase
from evolve.mock_llm import Dice

PROGRAMS = [Program((), c) for c in VALID[:200]]        # 200 个互不相同的程序（只有默认配置）


def res(score):
    return {"score": float(score)}


def programs_of(island):
    return [e[2] for e in island]


def filled(seed=0, n_islands=N_ISLANDS, size=ISLAND_SIZE, per_island=5):
    """每个岛放 per_island 个互不相同的程序（岛和岛之间也不重复），分数互不相同。"""
    db = ProgramDatabase(Dice(seed), n_islands, size)
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n_islands * per_island) + 1.0
    for i in range(n_islands):
        for j in range(per_island):
            k = i * per_island + j
            db.add(PROGRAMS[k], res(scores[k]), i)
    return db


# ---------------------------------------------------------------- 迁移

def test_migration_moves_each_leader_to_the_next_island():
    # 迁移之后，岛 i 原来最好的程序出现在岛 i+1（环形）里，按分数排在该在的位置；别的岛的内容不受影响。
    # 岛 0 最好的程序是全局最好的：如果迁移顺着做、边做边取"最好的"，岛 2 收到的就会是它而不是岛 1 原来的最好者
    db = filled(per_island=3)
    top = max(((e[0], i) for i, isl in enumerate(db.islands) for e in isl))[1]
    db.islands = db.islands[top:] + db.islands[:top]                     # 让全局最好的在岛 0
    before = [[(e[2], e[3]["score"]) for e in isl] for isl in db.islands]
    leaders = [isl[0][2] for isl in db.islands]
    db.migrate()
    for i in range(N_ISLANDS):
        got = [(e[2], e[3]["score"]) for e in db.islands[i]]
        incoming = (leaders[i - 1], dict(before[i - 1])[leaders[i - 1]])
        expected = sorted(before[i] + [incoming], key=lambda x: -x[1])[:ISLAND_SIZE]
        assert got == expected, i


def test_migration_happens_every_migrate_every_proposals(table, train):
    # evolve 每 MIGRATE_EVERY 个提议迁移一次，不多不少；每次迁移时已经挑过 k × MIGRATE_EVERY 次父程序
    class Spy(ProgramDatabase):
        def __init__(self, rng):
            super().__init__(rng)
            self.samples, self.migrations = 0, []

        def sample(self):
            self.samples += 1
            return super().sample()

        def migrate(self):
            self.migrations.append(self.samples)
            super().migrate()

    made = []
    evolve(Evaluator(train, table), 3 * MIGRATE_EVERY + 50, seed=0,
           database=lambda rng: made.append(Spy(rng)) or made[-1])
    assert made[0].migrations == [MIGRATE_EVERY, 2 * MIGRATE_EVERY, 3 * MIGRATE_EVERY]


def test_leaders_spread_around_the_ring():
    # 迁移 N_ISLANDS - 1 次之后，全局最好的程序在每个岛上都有（好想法会传开）
    db = filled()
    best = db.best[0]
    for _ in range(N_ISLANDS - 1):
        db.migrate()
    assert all(isl[0][2] == best for isl in db.islands)


# ---------------------------------------------------------------- 去重

def test_adding_the_same_program_twice_keeps_one_entry():
    db = ProgramDatabase(Dice(0))
    db.add(PROGRAMS[0], res(1.0), 0)
    db.add(PROGRAMS[1], res(0.5), 0)
    db.add(PROGRAMS[0], res(1.0), 0)
    db.add(Program((), PROGRAMS[0].default), res(1.0), 0)                # 相等但不是同一个对象
    assert programs_of(db.islands[0]) == [PROGRAMS[0], PROGRAMS[1]]


def test_islands_stay_duplicate_free_after_migrations():
    # 连续迁移（下一个岛已经有了这个领头的程序）不会产生重复
    db = filled()
    for _ in range(3 * N_ISLANDS):
        db.migrate()
        for isl in db.islands:
            assert len(set(programs_of(isl))) == len(isl) <= ISLAND_SIZE


def test_islands_are_duplicate_free_after_a_run(table, train):
    db = []
    evolve(Evaluator(train, table), 5 * MIGRATE_EVERY, seed=1, database=lambda rng: db.append(ProgramDatabase(rng))
           or db[-1])
    for isl in db[0].islands:
        assert len(set(programs_of(isl))) == len(isl)
    assert sum(len(isl) for isl in db[0].islands) > N_ISLANDS             # 真的进化过：库里不只有起点


# ---------------------------------------------------------------- 抽样

def test_inspirations_never_come_from_the_parents_island():
    # 各岛的程序互不相同：父程序来自它的岛，灵感是别的岛（不同的岛）最好的程序，不超过 N_INSPIRATIONS 个
    db = filled(seed=3)
    home = {e[2]: i for i, isl in enumerate(db.islands) for e in isl}
    seen_islands = set()
    for _ in range(500):
        island, parent, insp = db.sample()
        seen_islands.add(island)
        assert home[parent[2]] == island
        assert len(insp) == min(N_INSPIRATIONS, N_ISLANDS - 1)
        from_islands = [home[e[2]] for e in insp]
        assert island not in from_islands and len(set(from_islands)) == len(from_islands)
        assert all(e is db.islands[home[e[2]]][0] for e in insp)
    assert seen_islands == set(range(N_ISLANDS))


def test_a_lone_island_gets_no_inspirations():
    lone = ProgramDatabase(Dice(0), 1, 4)
    lone.add(PROGRAMS[0], res(1.0), 0)
    assert lone.sample()[2] == []


def test_parents_are_picked_by_rank():
    # 名次 r 的程序被挑中的权重 1/(r+1)：领头的最常被挑中，最后一名最少
    db = ProgramDatabase(Dice(0), 1, ISLAND_SIZE)
    for j in range(ISLAND_SIZE):
        db.add(PROGRAMS[j], res(10.0 - j), 0)
    n = 8000
    counts = np.zeros(ISLAND_SIZE)
    for _ in range(n):
        counts[PROGRAMS.index(db.sample()[1][2])] += 1
    w = 1 / np.arange(1, ISLAND_SIZE + 1)
    expected = n * w / w.sum()
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))


# ---------------------------------------------------------------- 裁剪

ops = st.lists(st.one_of(st.tuples(st.just("add"), st.integers(0, 59), st.integers(0, 40), st.integers(0, 3)),
                         st.just(("migrate",))), max_size=80)


@settings(max_examples=150, derandomize=True, deadline=None, database=None)
@given(ops=ops, size=st.integers(1, 4))
def test_best_survives_any_trimming(ops, size):
    # 随便加、随便迁移：全局最好的就是加进来过的最高分，而且还在某个岛上；每个岛不超过 size 个、按分数排好、不重复，
    # 岛上最好的就是进过这个岛的最高分（裁剪只裁掉差的）
    db = ProgramDatabase(Dice(0), 4, size)
    entered = [[] for _ in range(4)]                                    # 进过每个岛的分数（含迁移来的）
    scores = {}
    for op in ops:
        if op[0] == "add":
            _, p, s, i = op
            s = scores.setdefault(p, float(s))                          # 同一个程序总是同一个分数
            db.add(PROGRAMS[p], res(s), i)
            entered[i].append(s)
        elif all(db.islands):
            leaders = [isl[0][3]["score"] for isl in db.islands]
            db.migrate()
            for i in range(4):
                entered[(i + 1) % 4].append(leaders[i])
    if not scores:
        assert db.best is None
        return
    assert db.best[1]["score"] == max(scores.values())
    assert any(db.best[0] in programs_of(isl) for isl in db.islands)
    for i, isl in enumerate(db.islands):
        assert len(isl) <= size and len(set(programs_of(isl))) == len(isl)
        assert [e[3]["score"] for e in isl] == sorted((e[3]["score"] for e in isl), reverse=True)
        if entered[i]:
            assert isl[0][3]["score"] == max(entered[i])
