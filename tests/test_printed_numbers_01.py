"""01 脚本（默认运行）印出来的每个数，对着独立算出来的值检查：程序从它印出来的原文（带行号的那几行）自己读，
形状从表里印的标签自己拼，时间从时间表的整行（table.times）取最小值当最优，分支自己从上往下试；演示 2 的
程序个数用 itertools 数阈值的取法；演示 3 的表和"simplify 之后"的源码按印出来的条件和配置自己重建再比。
句子里引用表里的数（最差慢几倍、写法数、穷举次数），按读者的算法从表里的格子核对。测试里不抄任何印出来的数。"""

import itertools
import math
import re

import pytest

from conftest import load_script, run_script
from evolve import LAYERS, TOKENS, VALID, Config, Program, Rule, Shape, all_shapes, choose, parse, per_m_table, \
    render, simplify, split_shapes
from evolve.program import equivalent
from printed import find, find_wide_table, number, observations, section, shows

SCRIPT = "lecture14/01_heuristic_as_code.py"
PREFETCH = [(SCRIPT,)]                      # conftest：后台先跑（test_lecture14_scripts 也用这次运行）


@pytest.fixture(scope="module")
def stdout():
    p = run_script(SCRIPT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def shape_of(label: str) -> Shape:
    name, M, N, K = re.fullmatch(r"(.+) M=(\d+) \(N=(\d+), K=(\d+)\)", label).groups()
    return Shape(name, int(M), int(N), int(K))


def cfg_of(cell: str) -> Config:
    BM, BN, BK, w, st, g = (int(x) for x in re.match(r"(\d+)×(\d+)×(\d+) / (\d+) warp / (\d+) 级 / group (\d+)",
                                                     cell).groups())
    return Config(BM, BN, BK, w, st, g)


INDEX = {c: i for i, c in enumerate(VALID)}


def slowdown(table, cfg, s) -> float:
    """这个配置比这个形状上最快的配置慢几倍：最快的是整行时间的最小值（不用 table.oracle）。"""
    times = table.times(s)
    return float(times[INDEX[cfg]] / times.min())


def first_branch(program: Program, M, N, K) -> int:
    for i, r in enumerate(program.rules):
        if all({"M": M, "N": N, "K": K}[f] <= t for f, t in r.conds):
            return i
    return len(program.rules)


@pytest.fixture(scope="module")
def printed_program(stdout):
    """演示 1 印出来的原文（带行号）自己读成程序：(程序, 行号的偏移)。"""
    text = section(stdout, "演示 1")
    lines = re.findall(r"^ *(\d+) \| (.*)$", text, flags=re.M)
    first = int(lines[0][0])
    assert [int(n) for n, _ in lines] == list(range(first, first + len(lines)))
    return parse("\n".join(src for _, src in lines)), first - 1


def test_demo1_trace_table(stdout, table, printed_program):
    program, offset = printed_program
    t = find_wide_table(section(stdout, "演示 1"), "从上往下试条件")
    c_steps, c_line, c_cfg, c_slow = t.col("从上往下试条件"), t.col("走的分支"), t.col("给出的配置"), t.col("最优慢")
    assert len(t.rows) >= 4
    for r in t.rows:
        s = shape_of(r[0])
        assert (s.N, s.K) == LAYERS[s.name]
        i = first_branch(program, s.M, s.N, s.K)
        line = (program.rules[i].line if i < len(program.rules) else program.default_line) + offset
        assert r[c_line] == f"第 {line} 行", r
        cfg = program.rules[i].config if i < len(program.rules) else program.default
        assert cfg_of(r[c_cfg]) == cfg, r
        assert shows(r[c_slow], slowdown(table, cfg, s)) and r[c_slow].endswith("×"), r
        steps = r[c_steps].split("；")
        assert len(steps) == min(i + 1, len(program.rules)) + (i == len(program.rules)), r
        for k, step in enumerate(steps[:len(program.rules)]):
            assert step.endswith("？是" if k == i else "？否"), r


def test_demo1_branch_counts_and_simplify(stdout, printed_program):
    program, offset = printed_program
    text = section(stdout, "演示 1")
    obs = "\n".join(observations(text))
    counts = [0] * (len(program.rules) + 1)
    for s in all_shapes():
        counts[first_branch(program, s.M, s.N, s.K)] += 1
    lines = [r.line + offset for r in program.rules] + [program.default_line + offset]
    m = find(r"(\d+) 个形状里，(.*?)：每个形状恰好走一条分支", obs)
    assert int(m[1]) == len(all_shapes()) == sum(counts)
    printed = re.findall(r"第 (\d+) 行的分支 (\d+) 个", m[2])
    assert [(int(a), int(b)) for a, b in printed] == list(zip(lines, counts))
    m = find(r"simplify（演示 3 讲它怎么做）：(\d+) 条规则 → (\d+) 条", text)
    assert (int(m[1]), int(m[2])) == (len(program.rules), simplify(program).n_rules())


def test_demo2_new_shapes(stdout, table, printed_program):
    program, _ = printed_program
    train, _ = split_shapes(all_shapes())
    seen = {(s.M, s.N, s.K) for s in train}
    text = section(stdout, "演示 2")
    t = find_wide_table(text, "没见过的形状")
    c_table, c_exp, c_pmt = t.col("逐形状的表"), t.col("专家"), t.col("按 M 查表")
    sizes = "" if len(seen) == len(train) else f"，其中尺寸不同的 {len(seen)} 个"
    assert f"（{len(train)} 个训练形状{sizes}）" in t.headers[c_table]
    pmt = per_m_table(train, table)
    assert int(re.search(r"（(\d+) 条规则）", t.headers[c_pmt])[1]) == pmt.n_rules()
    worst = 0.0
    for r in t.rows:
        s = shape_of(r[0])
        unseen = ("这个测试的前提，不是引擎：01_heuristic_as_code.py 的 NEW_SHAPES（演示 2 的'没见过的形状'）现在在"
                  "形状数据（lecture13/llama_shapes.py）里了；在 NEW_LAYERS / NEW_SHAPES 里换一个数据里没有的投影或 M")
        assert (s.M, s.N, s.K) not in seen and r[c_table] == "没有这一项", (unseen, r)
        assert s.M not in TOKENS or (s.N, s.K) not in LAYERS.values(), (unseen, r)   # 真的没见过
        for cell, prog in ((r[c_exp], program), (r[c_pmt], pmt)):
            cfg = choose(prog, s)
            assert cfg_of(cell) == cfg, (cell, cfg)
            assert shows(re.search(r"慢 ([\d.]+)×", cell)[1], slowdown(table, cfg, s)), cell
        worst = max(worst, number(re.search(r"慢 ([\d.]+)×", r[c_exp])[1]))
    obs = observations(text)
    m = find(r"(\d+) 个没见过的形状，", obs[0])
    assert int(m[1]) == len(t.rows)
    m = find(r"专家在这几个形状上最差离最优慢 ([\d.]+)×", obs[0])
    assert number(m[1]) == worst                                                      # 读者：表里专家那列最大的一格


def test_demo2_program_space(stdout, train):
    text = section(stdout, "演示 2")
    t = find_wide_table(text, "空间", "大小")
    rows = {r[0]: r[1] for r in t.rows}
    per_shape = next(v for k, v in rows.items() if "一个形状的候选配置" in k)
    runs = next(v for k, v in rows.items() if "穷举全部训练形状" in k)
    assert number(per_shape) == len(VALID) and number(runs) == len(VALID) * len({(s.M, s.N, s.K) for s in train})
    cuts = len(TOKENS) - 1
    sizes = {}
    for k, v in rows.items():
        m = re.search(r"(\d+) 条规则的程序（(\d+) 种阈值 × ([\d,]+)\^(\d+) 种配置）", k)
        if not m:
            continue
        r, ways, base, power = int(m[1]), int(m[2]), number(m[3]), int(m[4])
        assert ways == sum(1 for _ in itertools.combinations(range(cuts), r))          # 在 10 个切点里挑 r 个
        assert base == len(VALID) and power == r + 1
        size = float(v)
        assert abs(size / (ways * base ** power) - 1) < 0.005 + 1e-12, (k, v)         # 印成三位有效数字
        sizes[r] = v
    assert 1 in sizes and 2 in sizes and max(sizes) == 8
    assert find(r"(\d+) 个 M 有 (\d+) 个切点", text).groups() == (str(len(TOKENS)), str(cuts))
    obs = observations(text)[1]
    m = find(r"的程序（只用 M 做条件）就有 (\S+) 种写法，比把训练形状逐个穷举的 ([\d,]+) 次", obs)
    assert m[1] == sizes[1] and m[2] == runs
    m = find(r"(\d+) 条规则时是 (\S+) 种", obs)
    assert (int(m[1]), m[2]) == (max(sizes), sizes[max(sizes)])
    assert find(r"每个形状只有 ([\d,]+) 个配置", obs)[1] == per_shape


def test_demo3_roundtrip(stdout):
    text = section(stdout, "演示 3")
    student = text.split("学生的写法：\n", 1)[1].split("\nrender(parse", 1)[0]
    back = text.split("写回的统一格式：\n", 1)[1].split("\n\n", 1)[0] + "\n"
    p = parse(student)
    assert back == render(p) and parse(back) == p
    obs = observations(text)[0]
    assert int(find(r"(\d+) 个形状上选的配置一个不差", obs)[1]) == len(all_shapes())


def test_demo3_fates_and_simplify(stdout):
    text = section(stdout, "演示 3")
    t = find_wide_table(text, "命运", "simplify 之后")
    c_cond, c_cfg, c_fate, c_after = t.col("条件"), t.col("配置"), t.col("命运"), t.col("simplify 之后")
    rules = []
    for r in t.rows[:-1]:
        conds = tuple((f, int(v)) for f, v in re.findall(r"([MNK]) <= (\d+)", r[c_cond]))
        rules.append(Rule(conds, cfg_of(r[c_cfg])))
    assert t.rows[-1][0] == "默认"
    program = Program(tuple(rules), cfg_of(t.rows[-1][c_cfg]))            # 从印出来的表重建的程序
    simp = simplify(program)
    after = text.split("simplify 之后：\n", 1)[1].split("\n\n", 1)[0] + "\n"
    assert parse(after) == simp and equivalent(parse(after), program)
    box = lambda r: tuple(dict(r.conds).get(f, math.inf) for f in "MNK")     # noqa: E731
    for i, (r, row) in enumerate(zip(rules, t.rows)):
        assert int(row[0]) == i + 1
        assert row[c_after] == ("留下" if r in simp.rules else "删掉"), row
        fate = row[c_fate]
        if fate == "空区域":
            assert min(box(r)) < 1, row
        elif fate.startswith("被第"):
            j = int(re.search(r"\d+", fate)[0]) - 1
            assert j < i and all(a >= b for a, b in zip(box(rules[j]), box(r))), row
            assert t.rows[j][c_fate] == "活", row
        elif fate == "去掉也一样":
            rest = Program(tuple(x for k, x in enumerate(rules) if k != i), program.default)
            assert equivalent(rest, program), row
        else:
            assert fate == "活" and r in simp.rules, row
    obs = observations(text)[1]
    m = find(r"simplify 把 (\d+) 条规则删到 (\d+) 条", obs)
    assert (int(m[1]), int(m[2])) == (len(rules), simp.n_rules())
    assert int(m[1]) - int(m[2]) == sum(row[c_after] == "删掉" for row in t.rows)     # 读者：表里"删掉"的行数
    # 学生报过：这张表紧跟在"学生的写法"后面，没说它是另一个程序。现在表前一句话说是哪个程序、几条规则
    lead = "".join(text.split("render(parse(...)) 写回的统一格式：", 1)[1].split("第几条", 1)[0].split())
    assert "下面换一个程序：" in lead and f"DEAD_PROGRAM，{len(rules)}条规则加默认配置" in lead, lead
    m = find(r"第 (\d+) 条被第 (\d+) 条单独盖住；第 (\d+) 条的角 \(([^)]*)\)", obs)
    six, five, seven = int(m[1]) - 1, int(m[2]) - 1, int(m[3]) - 1
    assert t.rows[six][c_fate] == f"被第 {five + 1} 条挡住"
    corner = tuple(int(x) if x.strip() != "任意" else math.inf for x in m[4].split(","))
    assert corner == box(rules[seven]) and t.rows[seven][c_fate] == "活"
    big = lambda v: 10 ** 6 if v == math.inf else v                          # noqa: E731
    assert first_branch(program, *map(big, corner)) == seven                  # 角走到它自己：不在前面任何一条里


def test_demo2_counts_training_shapes_and_distinct_sizes_apart(monkeypatch, table):
    """助教报过：加 Gemma2-9B（它的 qkv 和 70B/8 的 down 一样大）以后，01 的表头说"62 个训练形状"，04 说训练 66 个。
    逐形状的表按 (M, N, K) 记，两个一样大的形状只占一项：表头两个数都说。"""
    import contextlib
    import io
    s01 = load_script("lecture14/01_heuristic_as_code.py", "s01_dupes")
    train, test = split_shapes(all_shapes())
    twins = tuple(Shape("Twin 9B qkv", s.M, s.N, s.K, "Twin 9B") for s in train if s.name == "70B/8 down")
    assert twins                                                    # 训练形状里有和它们一样大的
    monkeypatch.setattr(s01, "split_shapes", lambda shapes, how="random": (train + twins, test))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        s01.demo2_why_code(table)
    n, distinct = len(train) + len(twins), len({(s.M, s.N, s.K) for s in train + twins})
    assert distinct == len({(s.M, s.N, s.K) for s in train}) < n
    assert f"逐形状的表（{n}个训练形状，其中尺寸不同的{distinct}个）" in "".join(out.getvalue().split())
