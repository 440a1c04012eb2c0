"""evolve.program / evolve.diff 的性质测试（Hypothesis，固定种子、例子个数有限）：什么样的文本交给 parse 都只会得到
ProgramError 或一个程序，而且不超过一秒；读得进来的程序都能 render 并读回同一个程序；三条读法（render 格式、
逐行、ast）读出同一个程序；SEARCH/REPLACE 的应用和一个独立写的参照实现一致；simplify / equivalent 和老的
"枚举所有阈值组合"的参照实现一致；评估器和 geomean_speedup 一次算出的各形状的分支和逐个 choose 一致。"""

import os
import re
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.diff import AMBIGUOUS, EMPTY_SEARCH, NOT_FOUND, DiffError, apply_diff, format_diff, make_diff, parse_diff
from evolve.program import (NO_BOUND, Program, Rule, _merge_conds, branch_index, choose_mnk, dead_rules, equivalent,
                            removed_lines, render, simplify, unreachable_lines)
from evolve.source import ProgramError, _block, _parse_ast, _parse_lines, _parse_rendered, parse
from evolve import Evaluator, all_shapes
from kernel_lab import VALID, VALID_INDEX, Config

# CI：固定的例子（derandomize），个数有限。想多找找：EVOLVE_FUZZ=20 python -m pytest tests/test_program_properties.py
# 会换成随机的例子、每个测试多 20 倍。
FUZZ = int(os.environ.get("EVOLVE_FUZZ", "0"))
SETTINGS = settings(derandomize=not FUZZ, database=None, deadline=None, max_examples=100 * max(1, FUZZ),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def examples(n: int) -> settings:
    return settings(SETTINGS, max_examples=n * max(1, FUZZ))
MNK = st.sampled_from("MNK")
THRESHOLD = st.one_of(st.sampled_from((0, 1, 2, 16, 17, 64, 100, 4096, -1, 10 ** 9, -(10 ** 9))),
                      st.integers(-5, 20000))
CONFIG = st.sampled_from(VALID[::37] + (Config(48, 64, 64, 4, 3, 8), Config(4096, 1, 1, 1, 1, 1)))


@st.composite
def programs(draw, max_rules=8, thresholds=THRESHOLD):
    rules = draw(st.lists(st.builds(Rule, st.lists(st.tuples(MNK, thresholds), max_size=3).map(tuple), CONFIG),
                          max_size=max_rules))
    return Program(tuple(rules), draw(CONFIG))


# ---------------------------------------------------------------- 学生 / LLM 会写出来的源代码

def cond_text(draw, f, t):
    """一个条件的几种写法，意思都是 f <= t。"""
    way = draw(st.integers(0, 3))
    sp = draw(st.sampled_from((" ", "", "  ")))
    return (f"{f}{sp}<={sp}{t}", f"{f}{sp}<{sp}{t + 1}", f"{t}{sp}>={sp}{f}", f"{t + 1}{sp}>{sp}{f}")[way]


def config_text(draw, c):
    values = list(zip(("BM", "BN", "BK", "warps", "stages", "group"), c.as_tuple()))
    n_pos = draw(st.integers(0, 6))
    kw = values[n_pos:]
    if draw(st.booleans()):
        kw = kw[::-1]
    sep = draw(st.sampled_from((", ", ",", " , ")))
    return "Config(" + sep.join([str(v) for _, v in values[:n_pos]] + [f"{k}={v}" for k, v in kw]) + ")"


@st.composite
def student_sources(draw):
    """一个程序和它的一种"学生写法"：elif / else、< 和反着写、位置参数、注释、空行、说明文字……"""
    p = draw(programs(thresholds=st.integers(0, 9999)))
    lines = ["def choose_config(M, N, K):"]
    if draw(st.booleans()):
        lines.append('    """按形状选配置。"""')
    for k, r in enumerate(p.rules):
        kw = "elif" if k and draw(st.booleans()) else "if"
        cond = " and ".join(cond_text(draw, f, t) for f, t in r.conds) or "True"
        comment = draw(st.sampled_from(("", "  # 小批量，用小块", "# x")))
        lines.append(f"    {kw} {cond}:{comment}")
        lines.append(f"        return {config_text(draw, r.config)}")
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(("", "    # 注释", "   ", "# 顶格的注释"))))
    if p.rules and draw(st.booleans()):
        lines += ["    else:", f"        return {config_text(draw, p.default)}"]
    else:
        lines.append(f"    return {config_text(draw, p.default)}")
    return p, "\n".join(lines) + draw(st.sampled_from(("\n", "", "\n\n# 结尾\n")))


TOKENS = ("def choose_config(M, N, K):", "\n", "    ", "        ", "if ", "elif ", "else", ":", "M", "N", "K", " <= ",
          " < ", " >= ", "16", "0", "-", "not ", "(", ")", " and ", " or ", "return ", "Config(", "BM=", "BN=", ",",
          "0x10", "9" * 40, "\t", "#", "：", "\u00a0", '"""', "True", "\r", "\x00", "\ufeff", "\ud800", "f'\x01{1}'",
          "# EVOLVE-BLOCK-START\n", "# EVOLVE-BLOCK-END\n", "pass", "x = 1", "lambda: 0", "[", "]", "**", "@", "\\")


@st.composite
def mutated(draw):
    """render 的输出（或一种学生写法），再随手改几刀：删一段、插一个记号、复制一行。"""
    text = draw(st.one_of(programs().map(render), student_sources().map(lambda x: x[1])))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.integers(0, 2))
        if how == 0:
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif how == 1:
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        else:
            lines = text.split("\n")
            k = at % len(lines)
            text = "\n".join(lines[:k + 1] + lines[k:])
    return text


ANY_SOURCE = st.one_of(st.text(max_size=300), st.lists(st.sampled_from(TOKENS), max_size=60).map("".join), mutated(),
                       student_sources().map(lambda x: x[1]))


@SETTINGS
@given(ANY_SOURCE)
def test_parse_only_raises_program_error_and_round_trips(src):
    # 任何文本：要么读成程序（它能 render、读回来一样），要么 ProgramError（带行号），不超过一秒
    t0 = time.perf_counter()
    try:
        p = parse(src, "f.py")
    except ProgramError as e:
        assert isinstance(e.lineno, int) and e.lineno >= 1 and str(e).startswith(f"f.py:{e.lineno}: ")
        p = None
    assert time.perf_counter() - t0 < 1.0
    if p is not None:
        assert parse(render(p)) == p


@SETTINGS
@given(student_sources())
def test_student_spellings_read_the_same_three_ways(case):
    # 学生写法：读出来就是生成它的那个程序；逐行读法和 ast 读法给出同一个程序、同样的行号
    p, src = case
    offset, block = _block(src, "f")
    slow = _parse_ast(block, "f", offset)
    assert slow == p == parse(src)
    fast = _parse_lines(offset, block)
    if fast is not None:
        assert fast == slow
        assert [r.line for r in fast.rules] == [r.line for r in slow.rules] and fast.default_line == slow.default_line


@SETTINGS
@given(ANY_SOURCE)
def test_fast_paths_never_disagree_with_ast(src):
    # 任何文本：render 格式的读法、逐行读法只要认了，就和 ast 读法一样（ast 读不了的，它们也不能认）；
    # parse 报错（可能只单独读了认不出的那一句）当且仅当整个文件的 ast 读法也报错
    try:
        offset, block = _block(src, "f")
    except ProgramError:
        return
    try:
        slow = _parse_ast(block, "f", offset)
    except ProgramError:
        slow = None
    for fast in (_parse_rendered(offset, block), _parse_lines(offset, block)):
        if fast is not None:
            assert fast == slow and [r.line for r in fast.rules] == [r.line for r in slow.rules]
    try:
        assert parse(src) == slow
    except ProgramError:
        assert slow is None


# ---------------------------------------------------------------- simplify / equivalent

def grid_equivalent(p: Program, q: Program) -> bool:
    """参照实现（老办法）：每一维切成阈值之间的段，每段取一个点，把所有组合都试一遍。"""
    axes = []
    for i in range(3):
        ts = {box[i] for box in p.boxes + q.boxes if 0 <= box[i] < NO_BOUND}
        axes.append(sorted({1} | {t + 1 for t in ts}))
    return all(choose_mnk(p, M, N, K) == choose_mnk(q, M, N, K) for M in axes[0] for N in axes[1] for K in axes[2])


def reference_simplify(program: Program) -> Program:
    """参照实现（老办法）：逐条试着删，每次用 grid_equivalent 判等价。"""
    rules, default = [], program.default
    for r in program.rules:
        r = _merge_conds(r)
        if any(t < 1 for _, t in r.conds):
            continue
        if not r.conds:
            default = r.config
            break
        if any(all(b >= c for b, c in zip(q.box(), r.box())) for q in rules):
            continue
        rules.append(r)
    p = Program(tuple(rules), default)
    for i in reversed(range(len(rules))):
        q = Program(p.rules[:i] + p.rules[i + 1:], default)
        if grid_equivalent(q, p):
            p = q
    return p


SMALL_CONFIGS = st.sampled_from(VALID[:3])                   # 配置少：规则之间常常配置相同，才删得掉
SMALL_T = st.integers(-1, 12)


@st.composite
def small_programs(draw):
    rules = draw(st.lists(st.builds(Rule, st.lists(st.tuples(MNK, SMALL_T), max_size=3).map(tuple), SMALL_CONFIGS),
                          max_size=10))
    return Program(tuple(rules), draw(SMALL_CONFIGS))


@examples(100)
@given(small_programs(), small_programs())
def test_equivalent_matches_grid_reference(p, q):
    # 新的 equivalent（只看盒子的角）和老的"枚举所有阈值组合"一致；简化后的程序和原程序等价
    assert equivalent(p, q) == grid_equivalent(p, q)
    assert equivalent(p, simplify(p)) and grid_equivalent(p, simplify(p))


@st.composite
def edited_pairs(draw):
    """(p, q)：q 是 p 改了一两处的样子（LLM 的修改、simplify 删掉的规则）：删一条、插一条、换一条的配置或阈值、
    两条换位置。equivalent 跳过"角和 p 前面某个盒子一样"的分支，只有 p、q 共用许多角时这条捷径才走得到。"""
    p = draw(small_programs())
    rules = list(p.rules)
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(("drop", "insert", "config", "threshold", "swap")))
        k = draw(st.integers(0, max(0, len(rules) - 1)))
        if kind == "insert" or not rules:
            rules.insert(k, draw(st.builds(Rule, st.lists(st.tuples(MNK, SMALL_T), max_size=3).map(tuple),
                                           SMALL_CONFIGS)))
        elif kind == "drop":
            del rules[k]
        elif kind == "config":
            rules[k] = Rule(rules[k].conds, draw(SMALL_CONFIGS))
        elif kind == "threshold" and rules[k].conds:
            conds = list(rules[k].conds)
            conds[0] = (conds[0][0], draw(SMALL_T))
            rules[k] = Rule(tuple(conds), rules[k].config)
        elif kind == "swap" and len(rules) > 1:
            rules[k], rules[k - 1] = rules[k - 1], rules[k]
    return p, Program(tuple(rules), draw(st.one_of(st.just(p.default), SMALL_CONFIGS)))


@examples(150)
@given(edited_pairs())
def test_equivalent_of_an_edited_program_matches_grid_reference(pq):
    p, q = pq
    assert equivalent(p, q) == grid_equivalent(p, q) == equivalent(q, p)


@examples(150)
@given(small_programs())
def test_simplify_matches_reference(p):
    # 新的 simplify 和老的逐条试删给出同一个程序（同样的规则、同样的顺序）
    assert simplify(p) == reference_simplify(p)


@examples(100)
@given(small_programs())
def test_dead_rules_are_really_dead(p):
    # dead_rules 说用不到的规则：删掉它们，行为不变（和参照的 grid_equivalent 比）
    dead = {line for line, _ in dead_rules(Program(tuple(Rule(r.conds, r.config, k + 1) for k, r in enumerate(p.rules)),
                                                   p.default))}
    kept = tuple(r for k, r in enumerate(p.rules) if k + 1 not in dead)
    unconditional = next((r for k, r in enumerate(p.rules) if k + 1 in dead and not r.conds), None)
    if unconditional is not None:                            # if True：它自己起作用，后面的都不起作用
        kept = tuple(r for r in kept if p.rules.index(r) < p.rules.index(unconditional))
        q = Program(kept, unconditional.config)
    else:
        q = Program(kept, p.default)
    assert grid_equivalent(p, q)


@examples(100)
@given(small_programs())
def test_unreachable_lines_are_exactly_the_rules_no_shape_takes(p):
    # unreachable_lines 和参照（每一维在阈值之间各取一个点，所有组合都走一遍，看哪条规则有形状走到）一致；它们都是
    # simplify 删掉的（01 说"走不到"只对这些说，删掉的别的规则是"走得到、去掉也一样"——审读时 01 把后者也说成走不到）
    p = Program(tuple(Rule(r.conds, r.config, k + 1) for k, r in enumerate(p.rules)), p.default)
    axes = [sorted({1} | {box[i] + 1 for box in p.boxes if 0 <= box[i] < NO_BOUND}) for i in range(3)]
    taken = {branch_index(p, M, N, K) for M in axes[0] for N in axes[1] for K in axes[2]}
    assert unreachable_lines(p) == [k + 1 for k in range(len(p.rules)) if k not in taken]
    assert set(unreachable_lines(p)) <= set(removed_lines(p))


# ---------------------------------------------------------------- SEARCH/REPLACE

def reference_apply(source: str, diff) -> str:
    """参照实现：用正则的前瞻找出所有（可以重叠的）出现位置，恰好一处才替换；最后一行没有换行时按整行也能匹配。"""
    text = source
    for search, repl in diff:
        if search == "" and text != "":
            raise DiffError("", EMPTY_SEARCH)
        hits = [m.start() for m in re.finditer("(?=" + re.escape(search) + ")", text, re.S)]
        if not hits and search.endswith("\n") and not text.endswith("\n"):
            body = search[:-1]
            if text.endswith(body) and (len(text) == len(body) or text[len(text) - len(body) - 1] == "\n"):
                hits, search = [len(text) - len(body)], body
                repl = repl[:-1] if repl.endswith("\n") else repl
        if not hits:
            raise DiffError("", NOT_FOUND)
        if len(hits) > 1:
            raise DiffError("", AMBIGUOUS)
        text = text[:hits[0]] + repl + text[hits[0] + len(search):]
    return text


LINES = st.lists(st.sampled_from(("x\n", "y\n", "x\n", "\n", "z", "y", "xy\n", " x\n")), max_size=10).map("".join)


@examples(200)
@given(LINES, st.lists(st.tuples(LINES, LINES), max_size=3))
def test_apply_diff_matches_reference(source, diff):
    # apply_diff 和参照实现给出同样的结果，或者同样种类的 DiffError
    def run(f):
        try:
            return f(source, tuple(diff))
        except DiffError as e:
            return e.kind
    assert run(apply_diff) == run(reference_apply)


@examples(200)
@given(LINES, LINES)
def test_make_diff_through_text_round_trip(a, b):
    # make_diff 直接打上去得到 b；写成文本再读回来打上去也得到 b——两边结尾有没有换行一样时（整行的格式表达不了
    # "只加一个结尾换行"这种修改）
    diff = make_diff(a, b)
    assert apply_diff(a, diff) == b
    if a and a.endswith("\n") == b.endswith("\n"):
        assert apply_diff(a, parse_diff("说明\n```\n" + format_diff(diff) + "```\n")) == b


@examples(100)
@given(st.text(max_size=200))
def test_parse_diff_only_raises_diff_error(text):
    # 任何回复：要么读出若干块，要么 DiffError（带 kind）
    try:
        blocks = parse_diff(text)
    except DiffError as e:
        assert e.kind and str(e)
    else:
        assert all(isinstance(s, str) and isinstance(r, str) for s, r in blocks)


@examples(150)
@given(small_programs())
def test_has_dead_rules_matches_simplify(p):
    # has_dead_rules 是 simplify 会不会删掉规则的快速回答
    from evolve.program import has_dead_rules
    assert has_dead_rules(p) == (simplify(p).n_rules() < p.n_rules())


# ---------------------------------------------------------------- 评估器的向量化 choose、程序的比较

# 训练形状的 M、N、K 和它们两边的数：阈值正好落在形状上、差一点盖住或差一点盖不住
SHAPE_VALUES = sorted({v + d for s in all_shapes() for v in (s.M, s.N, s.K) for d in (-1, 0, 1)})
NEAR_SHAPES = st.one_of(st.sampled_from(SHAPE_VALUES), THRESHOLD)


@examples(150)
@given(programs(max_rules=40, thresholds=NEAR_SHAPES))
def test_evaluator_indices_match_choose(table, train, p):
    # 评估器一次算出所有训练形状走哪个分支（规则 × 形状的向量化第一次匹配）：和逐个形状调 choose 一样，
    # 启动不了的配置是 -1
    ev = _evaluator(table, train)
    want = [VALID_INDEX.get(choose_mnk(p, s.M, s.N, s.K), -1) for s in ev.train]
    assert ev.chosen(p).tolist() == want


@examples(100)
@given(programs(max_rules=40, thresholds=NEAR_SHAPES))
def test_geomean_speedup_is_the_per_shape_geomean(table, train, p):
    # geomean_speedup 一次算出所有形状走哪个分支（problem.first_cover）：和逐个形状调 choose、逐项加 log 一样；
    # 有形状走到启动不了的配置时抛 ValueError，和逐项查时间表时一样
    import math

    from evolve import EXPERT, geomean_speedup
    shapes = train[::3]
    try:
        want = math.exp(sum(table.log_time(choose_mnk(EXPERT, s.M, s.N, s.K), s)
                            - table.log_time(choose_mnk(p, s.M, s.N, s.K), s) for s in shapes) / len(shapes))
    except ValueError as e:
        try:
            geomean_speedup(p, shapes, table)
        except ValueError as got:
            assert str(got) == str(e)
        else:
            raise AssertionError("应该抛 ValueError")
    else:
        assert geomean_speedup(p, shapes, table) == want


_EV = {}


def _evaluator(table, train):
    if "ev" not in _EV:
        _EV["ev"] = Evaluator(train, table)
    return _EV["ev"]


@examples(150)
@given(programs(max_rules=4, thresholds=st.sampled_from((1, 16, 64))), programs(max_rules=4, thresholds=st.sampled_from((1, 16, 64))))
def test_program_equality_is_rules_and_default(p, q):
    # Program 的 == 先比哈希再比内容：结果和直接比 (规则, 默认配置) 一样；相等的哈希也相等
    same = (p.rules, p.default) == (q.rules, q.default)
    assert (p == q) is same and (q == p) is same and (p != q) is (not same)
    assert not same or hash(p) == hash(q)
    assert p == Program(p.rules, p.default) and p != (p.rules, p.default)


def reference_lines(text):
    """按 "\\n" 切行的参照：每行带着它的 "\\n"（最后一行可以没有）。"""
    out, start = [], 0
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append(text[start:i + 1])
            start = i + 1
    return out + ([text[start:]] if start < len(text) else [])


def reference_common(a, b):
    """(共同的开头几行, 不和开头重叠的共同结尾几行)，一行一行地数。"""
    n = min(len(a), len(b))
    pre = 0
    while pre < n and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and a[len(a) - 1 - suf] == b[len(b) - 1 - suf]:
        suf += 1
    return pre, suf


ODD_BREAKS = st.text(alphabet=st.sampled_from("ab \n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028é"), max_size=30)


@examples(150)
@given(st.one_of(ODD_BREAKS, LINES))
def test_lines_split_only_at_newline(text):
    # make_diff 和 parse_diff 只按 "\n" 切行（"\r"、"\x0c"、"\u2028" 这些不是行尾）
    from evolve.diff import _lines
    assert _lines(text) == reference_lines(text)


@examples(200)
@given(st.one_of(LINES, ODD_BREAKS), st.one_of(LINES, ODD_BREAKS))
def test_make_diff_changes_only_the_differing_lines(a, b):
    # make_diff 的一块：REPLACE 去掉上下文以后，正好是 b 里去掉共同的开头和结尾几行后剩下的那几行
    diff = make_diff(a, b)
    if a == b:
        assert diff == ()
        return
    la, lb = reference_lines(a), reference_lines(b)
    pre, suf = reference_common(la, lb)
    (search, repl), = diff
    assert apply_diff(a, diff) == b
    ls, lr = reference_lines(search), reference_lines(repl)
    top = next(i for i in range(len(la) + 1) if "".join(la[i:i + len(ls)]) == search)   # SEARCH 从 a 的第几行开始
    assert "".join(lr[pre - top:len(lr) - (top + len(ls) - (len(la) - suf))]) == "".join(lb[pre:len(lb) - suf])
