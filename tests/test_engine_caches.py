"""进化引擎里为了快加的缓存和捷径，结果必须和不走捷径的算法逐个相同：
parse_diff（一个正则找标记行 + 按文本缓存）和原来逐行走的读法；make_diff（父程序的行缓存 + 不加上下文就唯一时直接返回）
和原来的倍增二分；评估器按规则的盒子缓存"每个形状走哪个分支"和逐个形状 choose；feedback 提前停下和不停下；
MockLLM 的常识配置缓存和不缓存；Rule / Program 把相等的配置换成 VALID 里那一个（值不变）。"""

import random
from itertools import accumulate, compress, count
from operator import ne

import numpy as np
import pytest

from evolve import EXPERT, Evaluator, evolve
from evolve import diff as diff_mod
from evolve import evaluator as evaluator_mod
from evolve import mock_llm
from evolve.diff import DiffError, apply_diff, make_diff, parse_diff
from evolve.program import Program, Rule, choose_mnk, render
from kernel_lab import VALID, VALID_INDEX, Config


# ---------------------------------------------------------------- 参照实现：原来的写法（逐行走、逐个试）

def _ref_lines(text):
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _ref_parse_diff(text, empty_ok=True):
    if not isinstance(text, str):
        raise DiffError(f"回复应该是一段文本，却是 {type(text).__name__}", diff_mod.NOT_TEXT)
    text = text.replace("\r\n", "\n")
    S, D, R = diff_mod._SEARCH, diff_mod._DIVIDER, diff_mod._REPLACE
    blocks, state, search, repl, start = [], None, [], [], 0
    for lineno, line in enumerate(_ref_lines(text), 1):
        body = line[:-1] if line.endswith("\n") else line
        if diff_mod._SEARCH_RE.fullmatch(body):
            if state is not None:
                raise DiffError(f"第 {lineno} 行：第 {start} 行开始的 SEARCH 块还没结束（缺 {D} 或 {R}）")
            state, search, repl, start = "search", [], [], lineno
        elif state == "search" and diff_mod._DIVIDER_RE.fullmatch(body):
            state = "replace"
        elif diff_mod._REPLACE_RE.fullmatch(body):
            if state != "replace":
                raise DiffError(f"第 {lineno} 行：{R} 前面缺 {S} 或 {D}")
            blocks.append(("".join(search), "".join(repl)))
            state = None
        elif state == "search":
            search.append(diff_mod._ending(line))
        elif state == "replace":
            repl.append(diff_mod._ending(line))
    if state is not None:
        raise DiffError(f"第 {start} 行开始的 SEARCH 块没有结束（缺 {D if state == 'search' else R}）")
    if not blocks and not empty_ok:
        raise DiffError(f"回复里没有 SEARCH/REPLACE 块（{S} … {D} … {R}）", diff_mod.NO_BLOCK)
    return tuple(blocks)


def _ref_make_diff(parent_src, child_src):
    """原来的 make_diff：一行一行地加上下文，直到 SEARCH 非空且唯一（不倍增、不缓存、不走捷径）。"""
    if parent_src == child_src:
        return ()
    a, b = _ref_lines(parent_src), _ref_lines(child_src)
    n = min(len(a), len(b))
    pre = next(compress(count(), map(ne, a, b)), n)
    suf = min(next(compress(count(), map(ne, reversed(a), reversed(b))), n), n - pre)
    lo, hi = pre, len(a) - suf
    offset = list(accumulate(map(len, a), initial=0))
    e = 0
    while True:
        l, h = max(0, lo - e), min(len(a), hi + e)
        search = parent_src[offset[l]:offset[h]]
        if (l == 0 and h == len(a)) or (search != "" and parent_src.find(search, parent_src.find(search) + 1) < 0):
            return ((search, "".join(b[l:len(b) - (len(a) - h)])),)
        e += 1


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except DiffError as e:
        return "DiffError", str(e), e.kind


# ---------------------------------------------------------------- parse_diff

_PIECES = ["<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", " <<<<< SEARCH\t", "==========", "  ====== ",
           ">>>>>>>>>REPLACE", "x", "    if M <= 16:", "\r", "\r\n", "\n", "\n", "é", "\x0c", "", "\t=====\t",
           "<<<<<<<<<< SEARCH", "=======\r", "a ======="]


def test_parse_diff_same_as_line_by_line_reading():
    rng = random.Random(7)
    texts = ["", "没有块", parse_diff.__doc__]
    for _ in range(20000):
        texts.append("".join(rng.choice(_PIECES) + ("\n" if rng.random() < 0.7 else "")
                             for _ in range(rng.randint(0, 12))))
    for t in texts:
        for empty_ok in (True, False):
            assert _outcome(parse_diff, t, empty_ok) == _outcome(_ref_parse_diff, t, empty_ok), (t, empty_ok)
            assert _outcome(parse_diff, t, empty_ok) == _outcome(parse_diff, t, empty_ok)     # 第二次走缓存


def test_parse_diff_of_real_replies_and_non_text():
    p = EXPERT
    child = Program(p.rules[1:], p.default)
    reply = "说明\n" + diff_mod.format_diff(make_diff(render(p), render(child)))
    assert parse_diff(reply) == _ref_parse_diff(reply)
    assert apply_diff(render(p), parse_diff(reply)) == render(child)

    class Weird(str):
        def __hash__(self):
            return 0
    assert parse_diff(Weird(reply)) == parse_diff(reply)
    for bad in (None, 3, b"<<<<<<< SEARCH", ["x"]):
        with pytest.raises(DiffError) as e:
            parse_diff(bad)
        assert e.value.kind == diff_mod.NOT_TEXT


# ---------------------------------------------------------------- make_diff

def _random_program(rng, n_rules=None, pool=None):
    rules = []
    for _ in range(rng.randint(0, 6) if n_rules is None else n_rules):
        conds = tuple((f, rng.choice((1, 16, 64, 256, 4096))) for f in rng.sample("MNK", rng.randint(0, 2)))
        rules.append(Rule(conds, rng.choice(pool or VALID[:40])))
    return Program(tuple(rules), rng.choice(pool or VALID[:40]))


def test_make_diff_same_as_adding_context_line_by_line():
    rng = random.Random(3)
    pool = VALID[:3]                                               # 配置少：重复的行多，要加上下文的情况多
    for _ in range(3000):
        parent = render(_random_program(rng, pool=pool))
        child = render(_random_program(rng, pool=pool)) if rng.random() < 0.3 else \
            rng.choice([parent.replace("16", "32", 1), parent.replace("        return", "        return", 1),
                        "\n".join(line for line in parent.split("\n") if rng.random() < 0.9)])
        for a, b in ((parent, child), (child, parent), (parent, parent + "x"), ("", child), (parent, "")):
            got = make_diff(a, b)
            assert got == _ref_make_diff(a, b), (a, b)
            assert apply_diff(a, got) == b
    # 只差结尾、没有结尾换行、非 ASCII 的文本也一样
    for a, b in (("a\nb", "a\nc"), ("x\r\ny\n", "x\r\nz\n"), ("é\na\n", "é\nb\n"), ("a\na\na\n", "a\na\n")):
        assert make_diff(a, b) == _ref_make_diff(a, b)


# ---------------------------------------------------------------- 评估器：按盒子缓存分支

def _indices_by_choose(ev, program):
    return np.array([VALID_INDEX.get(choose_mnk(program, s.M, s.N, s.K), -1) for s in ev.train])


def test_branch_cache_matches_choose_and_never_mixes_configs(train, table):
    ev = Evaluator(train, table)
    rng = random.Random(5)
    programs = [_random_program(rng) for _ in range(400)]
    # 同样的盒子、不同的配置：共用一份分支，但选出的配置各是各的
    for p in programs[:100]:
        programs.append(Program(tuple(Rule(r.conds, rng.choice(VALID)) for r in p.rules), rng.choice(VALID)))
        # 同样的盒子、条件写法不同（多写一遍同一维的更松的条件）
        programs.append(Program(tuple(Rule(r.conds + tuple((f, t + 1) for f, t in r.conds), r.config)
                                      for r in p.rules), p.default))
    for _ in range(2):                                              # 第二遍全部走缓存
        for p in programs:
            assert np.array_equal(ev.chosen(p), _indices_by_choose(ev, p)), p


def test_branch_cache_is_bounded(train, table, monkeypatch):
    monkeypatch.setattr(evaluator_mod, "BRANCH_CACHE", 5)
    ev = Evaluator(train, table)
    rng = random.Random(9)
    for _ in range(60):
        p = _random_program(rng)
        assert np.array_equal(ev.chosen(p), _indices_by_choose(ev, p))
        assert len(ev._branch_cache) <= 5


# ---------------------------------------------------------------- feedback 提前停下

def _ref_feedback(ev, result, k=6):
    to_floor = result["log_time"] - ev.log_floor
    to_best = result["log_time"] - ev.best_known
    worst_per_m = {}
    for i in np.argsort(-(to_floor + to_best), kind="stable"):
        worst_per_m.setdefault(ev.train[i].M, int(i))
    return [(ev.train[i], float(np.exp(to_floor[i])), float(np.exp(to_best[i])), int(result["choices"][i]))
            for i in list(worst_per_m.values())[:k]]


def test_feedback_same_as_scanning_every_shape(train, table):
    ev = Evaluator(train, table)
    run = evolve(ev, 200, seed=1)
    results = [r for r in ev.cache.values() if r["status"] == "full"]
    assert len(results) > 10
    for r in results:
        for k in (0, 1, 3, 6, 11, 50):
            r.pop("_feedback", None)
            assert ev.feedback(r, k) == _ref_feedback(ev, r, k)
    assert run["best"][1]["score"] >= 1


# ---------------------------------------------------------------- MockLLM 的缓存

def test_common_sense_caches_return_what_the_uncached_functions_return():
    shapes = [(m, n, k) for m in (1, 7, 16, 100, 4096) for n in (256, 4096, 28672) for k in (128, 8192)]
    for M, N, K in shapes:
        assert mock_llm._common_sense_base(M, N, K) == mock_llm._common_sense_base.__wrapped__(M, N, K)
    for cfg in VALID[::97] + (Config(256, 256, 256, 2, 4, 8), Config(256, 128, 64, 4, 3, 8)):
        assert mock_llm._launchable(cfg) == mock_llm._launchable.__wrapped__(cfg)
    for seed in range(20):                                           # 同一个种子：缓存前后同一串配置
        a = [mock_llm.common_sense_config(*s, mock_llm.Dice(seed)) for s in shapes]
        mock_llm._common_sense_base.cache_clear()
        mock_llm._launchable.cache_clear()
        b = [mock_llm.common_sense_config(*s, mock_llm.Dice(seed)) for s in shapes]
        assert a == b


# ---------------------------------------------------------------- Rule / Program 换成 VALID 里的配置

def test_equal_config_is_swapped_for_the_valid_instance_without_changing_anything():
    v = VALID[123]
    same = Config(*v.as_tuple())
    assert same is not v
    r = Rule((("M", 16),), same)
    p = Program((r,), Config(*VALID[7].as_tuple()))
    assert r.config is v and r.config == same and p.default is VALID[7]
    assert r == Rule((("M", 16),), v) and hash(r) == hash(Rule((("M", 16),), v))
    assert p == Program((Rule((("M", 16),), v),), VALID[7])
    off = Config(48, 64, 64, 4, 3, 8)                                # 不在 VALID 里的配置原样保留
    q = Program((Rule((("M", 1),), off),), off)
    assert q.rules[0].config is off and q.default is off and q.config_indices == (-1, -1)


def test_rule_with_config_is_the_same_as_building_the_rule_again():
    import dataclasses
    from evolve.program import rule_with_config
    rng = random.Random(11)
    configs = list(VALID[::50]) + [Config(48, 64, 64, 4, 3, 8), Config(256, 128, 64, 4, 3, 8)]
    for _ in range(500):
        conds = tuple((f, rng.choice((-3, 0, 1, 16, 64, 10 ** 9))) for f in rng.choices("MNK", k=rng.randint(0, 4)))
        old = Rule(conds, rng.choice(configs), line=rng.randint(0, 50))
        cfg = rng.choice(configs)
        got, want = rule_with_config(old, cfg), Rule(conds, cfg)
        names = [f.name for f in dataclasses.fields(Rule)]
        assert [getattr(got, n) for n in names] == [getattr(want, n) for n in names]
        assert got == want and hash(got) == hash(want) and repr(got) == repr(want)
        assert render(Program((got,), cfg)) == render(Program((want,), cfg))


def test_dice_below_takes_the_same_numbers_as_random():
    a, b = mock_llm.Dice(4, batch=7), mock_llm.Dice(4, batch=7)
    for n in [1, 2, 3, 10, 1000] * 20:
        assert a.below(n) == int(b.random() * n)
    assert a.random() == b.random()


def test_branch_cache_bounded_by_corners_too(train, table, monkeypatch):
    monkeypatch.setattr(evaluator_mod, "BRANCH_CACHE_CORNERS", 12)
    ev = Evaluator(train, table)
    rng = random.Random(13)
    for _ in range(60):
        p = _random_program(rng, n_rules=rng.randint(0, 6))
        assert np.array_equal(ev.chosen(p), _indices_by_choose(ev, p))
        assert ev._branch_corners == sum(map(len, ev._branch_cache)) <= 12 or len(ev._branch_cache) == 1


def test_long_replies_are_read_the_same_without_the_cache():
    block = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"
    long_text = "说明\n" * (diff_mod._CACHE_TEXT // 3) + block
    assert len(long_text) > diff_mod._CACHE_TEXT
    assert parse_diff(long_text) == _ref_parse_diff(long_text) == (("    if M <= 16:\n", "    if M <= 32:\n"),)


def _speedup_shape_by_shape(program, expert, shapes, table):
    """参照：逐个形状 choose、查时间、求几何平均（不走 geomean_speedup 记下的专家那一半）。"""
    from evolve.program import choose
    logs = [table.log_time(choose(expert, s), s) - table.log_time(choose(program, s), s) for s in shapes]
    return float(np.exp(np.mean(logs)))


def test_geomean_speedup_keeps_the_expert_half_per_shape_group_and_notices_a_new_expert(train, table, monkeypatch):
    """geomean_speedup 按形状组记下专家那一半：同一组形状上打分多次、换一组形状、换了 EXPERT，都和逐个形状算的一样。"""
    from evolve import problem
    programs = [EXPERT, Program((), VALID[0]), Program(EXPERT.rules[:1], VALID[7])]
    groups = [tuple(train), tuple(train[:5]), tuple(train[3:9])]
    for _ in range(2):                                                    # 第二遍走记下的那一半
        for shapes in groups:
            for p in programs:
                assert problem.geomean_speedup(p, shapes, table) == pytest.approx(
                    _speedup_shape_by_shape(p, EXPERT, shapes, table), rel=1e-12)
    other = Program((), VALID[11])
    monkeypatch.setattr(problem, "EXPERT", other)
    for shapes in groups:
        for p in programs:
            assert problem.geomean_speedup(p, shapes, table) == pytest.approx(
                _speedup_shape_by_shape(p, other, shapes, table), rel=1e-12)
