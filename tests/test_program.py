"""evolve.program 的测试：DSL 的 choose / render / parse / simplify / equivalent，以及 SEARCH/REPLACE 修改。"""

import itertools
import random

import pytest

from evolve.program import (DiffError, Program, ProgramError, Rule, apply_diff, choose, choose_mnk, equivalent,
                            format_diff, make_diff, parse, parse_diff, render, simplify)
from evolve.program import _block, _parse_ast
from kernel_lab import VALID, Config

THRESHOLDS = (1, 16, 64, 128, 512, 1024, 4096, 8192, 0, 3, 17, 100, 1000, 5000, 20000)   # 常见的 + 几个奇怪的
A = Config(16, 64, 128, 4, 4, 1)
B = Config(64, 128, 64, 4, 3, 8)
C = Config(128, 128, 64, 4, 3, 8)


def random_program(rng: random.Random, max_rules: int = 8, thresholds=THRESHOLDS) -> Program:
    """随机程序：0–max_rules 条规则，每条 0–3 个条件（同一维可以重复），配置从 VALID 里挑。"""
    rules = tuple(Rule(tuple((rng.choice("MNK"), rng.choice(thresholds)) for _ in range(rng.randint(0, 3))),
                       rng.choice(VALID)) for _ in range(rng.randint(0, max_rules)))
    return Program(rules, rng.choice(VALID))


def reference_choose(program: Program, M: int, N: int, K: int) -> Config:
    """独立的参照实现：直接按 conds 逐条判断。"""
    for r in program.rules:
        if all({"M": M, "N": N, "K": K}[f] <= t for f, t in r.conds):
            return r.config
    return program.default


def grid_points(program: Program, rng: random.Random, n: int = 300):
    """n 个形状，每一维从 {1, 10^6, 这一维每个阈值 t 的 t-1、t、t+1（正的）} 里随机取。"""
    vals = {f: {1, 10 ** 6} for f in "MNK"}
    for r in program.rules:
        for f, t in r.conds:
            vals[f] |= {v for v in (t - 1, t, t + 1) if v >= 1}
    vals = {f: sorted(v) for f, v in vals.items()}
    return [(rng.choice(vals["M"]), rng.choice(vals["N"]), rng.choice(vals["K"])) for _ in range(n)]


class S:                                                    # 只有 M N K 的形状
    def __init__(self, M, N, K):
        self.M, self.N, self.K = M, N, K


# ---------------------------------------------------------------- Rule / Program / choose

def test_rule_positional_and_line_ignored():
    # Rule 可以按位置构造；line 不参与相等和哈希；Program 可哈希
    r1, r2 = Rule((("M", 16),), A), Rule((("M", 16),), A, line=7)
    assert r1 == r2 and hash(r1) == hash(r2) and "line" not in repr(r2)
    p, q = Program((r1,), B), Program((r2,), B, default_line=9)
    assert p == q and hash(p) == hash(q) and len({p, q}) == 1 and p.n_rules() == 1


def test_choose_first_matching_rule():
    # 第一条条件全满足的规则说了算；都不满足用默认配置
    p = Program((Rule((("M", 16),), A), Rule((("M", 256), ("N", 4096)), B)), C)
    assert choose_mnk(p, 16, 99999, 99999) == A          # M <= 16
    assert choose_mnk(p, 17, 4096, 1) == B               # 第一条不满足，第二条满足
    assert choose_mnk(p, 17, 4097, 1) == C               # 都不满足
    assert choose(p, S(1, 1, 1)) == A and choose(Program((), C), S(5, 5, 5)) == C


def test_choose_matches_reference():
    # choose 和直接逐条判断的参照实现一致（包括同一维重复的条件、空条件、阈值 0）
    rng = random.Random(1)
    for _ in range(100):
        p = random_program(rng)
        for M, N, K in grid_points(p, rng):
            assert choose_mnk(p, M, N, K) == reference_choose(p, M, N, K) == choose(p, S(M, N, K))


# ---------------------------------------------------------------- render / parse

def test_render_exact_text():
    # render 的格式：标记、函数头、每条规则两行、默认配置、结尾换行
    p = Program((Rule((("M", 16),), A), Rule((("M", 256), ("N", 4096)), B), Rule((), A)), C)
    assert render(p) == (
        "# EVOLVE-BLOCK-START\n"
        "def choose_config(M, N, K):\n"
        "    if M <= 16:\n"
        "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
        "    if M <= 256 and N <= 4096:\n"
        "        return Config(BM=64, BN=128, BK=64, warps=4, stages=3, group=8)\n"
        "    if True:\n"
        "        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
        "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n"
        "# EVOLVE-BLOCK-END\n")


def test_render_parse_round_trip():
    # 500 个随机程序：parse(render(p)) == p，规则的行号是它的 if 所在行
    rng = random.Random(2)
    for _ in range(500):
        p = random_program(rng)
        q = parse(render(p))
        assert q == p
        assert [r.line for r in q.rules] == [3 + 2 * i for i in range(p.n_rules())]
        assert q.default_line == 3 + 2 * p.n_rules()


def test_fast_path_agrees_with_ast():
    # parse 对 render 的输出走正则快路径；它和 ast 读法给出同一个程序、同样的行号
    rng = random.Random(3)
    for _ in range(100):
        src = "'''说明'''\n" + render(random_program(rng))
        offset, block = _block(src, "f")
        slow, fast = _parse_ast(block, "f", offset), parse(src, "f")
        assert slow == fast
        assert [r.line for r in slow.rules] == [r.line for r in fast.rules] and slow.default_line == fast.default_line


def test_parse_accepts_student_spellings():
    # 学生常写的形式：< / 反着写 / elif / else / 位置参数 / 文档字符串 / True / 注释；都读成同一个程序
    src = '''"""专家启发式。"""
from kernel_lab import Config

# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    """按形状选配置。"""
    if M < 17:                      # 就是 M <= 16
        return Config(16, 64, 128, 4, 4, 1)
    elif 256 >= M and 4097 > N:
        return Config(64, 128, 64, warps=4, stages=3, group=8)
    elif True:
        return Config(group=1, stages=4, warps=4, BK=128, BN=64, BM=16)
    else:
        return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
# EVOLVE-BLOCK-END
print("外面的代码不算")
'''
    p = parse(src)
    assert p == Program((Rule((("M", 16),), A), Rule((("M", 256), ("N", 4096)), B), Rule((), A)), C)
    assert [r.line for r in p.rules] == [7, 9, 11] and p.default_line == 14


@pytest.mark.parametrize("body, line, words", [
    ("    if M > 16:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "上界"),           # 只有上界
    ("    if M >= 16:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "上界"),
    ("    if 16 < M:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "上界"),
    ("    if M <= 16 or N <= 64:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "and"),  # 没有 or
    ("    if M == 16:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "<="),
    ("    if X <= 16:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "M、N、K"),          # 别的名字
    ("    if M <= 16.5:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "整数"),           # 非整数阈值
    ("    if 1 <= M <= 16:\n        return Config(16, 64, 128, 4, 4, 1)\n", 6, "上界"),        # 链式比较
    ("    if M <= 16:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, grp=1)\n", 7, "grp"),
    ("    if M <= 16:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4)\n", 7, "group"),  # 缺字段
    ("    if M <= 16:\n        return Config(16, BM=16, BN=64, BK=128, warps=4, stages=4)\n", 7, "两次"),
    ("    if M <= 16:\n        return Config(BM=16.0, BN=64, BK=128, warps=4, stages=4, group=1)\n", 7, "正整数"),
    ("    if M <= 16:\n        return Config(BM=True, BN=64, BK=128, warps=4, stages=4, group=1)\n", 7, "布尔"),
    ("    if M <= 16:\n        return Config(BM=0, BN=64, BK=128, warps=4, stages=4, group=1)\n", 7, "正整数"),
    ("    if M <= 16:\n        x = 1\n        return Config(16, 64, 128, 4, 4, 1)\n", 7, "return"),
    ("    x = 1\n", 6, "没有变量"),                                                         # 别的语句：学生的说法
    ("    if M <= 16:\n        return A\n", 7, "Config("),
])
def test_parse_errors(body, line, words):
    # 每种不合法写法：ProgramError，行号是文件里的真实行号（标记前有文档字符串和 import），说明里有提示词
    src = ('"""文档字符串\n占两行"""\nfrom kernel_lab import Config\n# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n'
           + body + "    return Config(128, 128, 64, 4, 3, 8)\n# EVOLVE-BLOCK-END\n")
    with pytest.raises(ProgramError) as e:
        parse(src, "expert_heuristic.py")
    assert e.value.lineno == line and e.value.filename == "expert_heuristic.py"
    assert str(e.value).startswith(f"expert_heuristic.py:{line}: ") and words in e.value.message
    assert isinstance(e.value, ValueError)


def test_parse_error_syntax_line():
    # Python 语法错误变成 ProgramError，行号是出错那一行（第 5 行少了冒号）
    src = '''"""说明"""

# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    if M <= 16
        return Config(16, 64, 128, 4, 4, 1)
    return Config(128, 128, 64, 4, 3, 8)
# EVOLVE-BLOCK-END
'''
    with pytest.raises(ProgramError) as e:
        parse(src, "h.py")
    assert e.value.lineno == 5 and str(e.value).startswith("h.py:5: Python 语法错误")


HEAD = """# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    if M <= 16:
        return Config(16, 64, 128, 4, 4, 1)
"""
RET = "    return Config(128, 128, 64, 4, 3, 8)\n"
END = "# EVOLVE-BLOCK-END\n"


def test_parse_error_missing_final_return_and_dead_code():
    # 缺最后的 return（报在函数最后一行）；return 之后还有代码；两个函数；标记不成对
    with pytest.raises(ProgramError, match=r"<program>:4: .*return Config"):
        parse(HEAD + END)
    with pytest.raises(ProgramError, match=r"<program>:6: .*执行不到"):
        parse(HEAD + RET + "    if N <= 4:\n        return Config(16, 64, 128, 4, 4, 1)\n" + END)
    with pytest.raises(ProgramError, match=r"<program>:7: .*只能有一个"):
        parse(HEAD + RET + "\ndef choose_config(M, N, K):\n" + RET + END)
    with pytest.raises(ProgramError, match=r"<program>:1: .*EVOLVE-BLOCK-END"):
        parse(HEAD + RET)
    assert parse(HEAD + RET + END).n_rules() == 1                       # 补齐以后就对了


# ---------------------------------------------------------------- equivalent / simplify

def test_equivalent_cases():
    # 真：规则顺序不影响的、被挡住的规则、和默认配置相同的最后一条；假：边界差 1
    p = Program((Rule((("M", 16),), A), Rule((("M", 256),), B)), C)
    assert equivalent(p, Program((Rule((("M", 16),), A), Rule((("M", 256),), B), Rule((("M", 8),), C)), C))
    assert equivalent(p, Program((Rule((("M", 16),), A), Rule((("M", 256),), B), Rule((("N", 8),), C)), C))
    assert equivalent(p, Program((Rule((("M", 16), ("M", 99)), A), Rule((("M", 256),), B)), C))
    assert not equivalent(p, Program((Rule((("M", 17),), A), Rule((("M", 256),), B)), C))
    assert not equivalent(p, Program((Rule((("M", 16),), A), Rule((("M", 256), ("K", 10 ** 9)), B)), C))
    assert not equivalent(p, Program((Rule((("M", 256),), B), Rule((("M", 16),), A)), C))


def test_equivalent_matches_brute_force():
    # 阈值都很小时，把 1..9 的每个 (M, N, K) 都试一遍就是真值；equivalent 必须和它一致
    rng = random.Random(4)
    small = (0, 1, 2, 3, 4, 5, 6, 7)
    n_equal = 0
    for _ in range(300):
        p = random_program(rng, 4, small)
        q = simplify(p) if rng.random() < 0.3 else random_program(rng, 4, small)
        if rng.random() < 0.3:                               # 把 q 改成和 p 只差一个配置
            q = Program(p.rules, rng.choice((p.default, A)))
        truth = all(choose_mnk(p, *x) == choose_mnk(q, *x) for x in itertools.product(range(1, 10), repeat=3))
        assert equivalent(p, q) == truth
        n_equal += truth
    assert 50 < n_equal < 250                                # 两种情况都测到了


def test_simplify_preserves_behaviour():
    # 随机程序化简后：在阈值 ±1 的网格上和随机形状上选的配置不变，规则不会变多，且和原程序 equivalent
    rng = random.Random(5)
    for _ in range(150):
        p = random_program(rng, 12)
        s = simplify(p)
        assert s.n_rules() <= p.n_rules() and equivalent(p, s)
        for M, N, K in grid_points(p, rng):
            assert choose_mnk(s, M, N, K) == reference_choose(p, M, N, K)
        for _ in range(20):
            M, N, K = (rng.randint(1, 20000) for _ in range(3))
            assert choose_mnk(s, M, N, K) == choose_mnk(p, M, N, K)
        assert simplify(s) == s                              # 化简一次就到底


def test_simplify_removes_dead_rules():
    # 被挡住的、空区域的、和默认配置相同的最后一条都删掉；同一维重复的条件合并成最紧的
    shadowed = Program((Rule((("M", 256), ("N", 8192)), A), Rule((("M", 16), ("N", 4096)), B)), C)
    assert simplify(shadowed) == Program((Rule((("M", 256), ("N", 8192)), A),), C)
    empty = Program((Rule((("M", 0),), A), Rule((("K", 64),), B)), C)
    assert simplify(empty) == Program((Rule((("K", 64),), B),), C)
    trailing = Program((Rule((("M", 16),), A), Rule((("N", 64),), C)), C)
    assert simplify(trailing) == Program((Rule((("M", 16),), A),), C)
    merged = Program((Rule((("M", 64), ("N", 8), ("M", 16)), A),), C)
    assert simplify(merged).rules[0].conds == (("M", 16), ("N", 8))
    always = Program((Rule((("M", 16),), A), Rule((), B), Rule((("N", 1),), C)), C)
    assert simplify(always) == Program((Rule((("M", 16),), A),), B)       # if True: 之后全是死代码
    keeps_lines = parse(render(shadowed))
    assert simplify(keeps_lines).rules[0].line == 3


# ---------------------------------------------------------------- SEARCH/REPLACE

def mutate(rng: random.Random, p: Program) -> Program:
    """像进化那样改一下：换一个配置、开头/结尾插一条、删一条、复制一条（相同规则重复）、什么都不改。"""
    rules = list(p.rules)
    kind = rng.randrange(6)
    new = Rule(((rng.choice("MNK"), rng.choice(THRESHOLDS)),), rng.choice(VALID))
    if kind == 0 and rules:
        i = rng.randrange(len(rules))
        rules[i] = Rule(rules[i].conds, rng.choice(VALID))
    elif kind == 1:
        rules.insert(0, new)
    elif kind == 2:
        rules.append(new)
    elif kind == 3 and rules:
        del rules[rng.randrange(len(rules))]
    elif kind == 4 and rules:
        i = rng.randrange(len(rules))
        rules.insert(i, rules[i])
    elif kind == 5:
        return Program(p.rules, rng.choice(VALID))
    return Program(tuple(rules), p.default)


def test_make_diff_round_trip_programs():
    # 主张 E5：SEARCH/REPLACE 应用到父程序的源代码上，正好得到子程序的源代码，它读回来就是子程序
    rng = random.Random(6)
    for _ in range(400):
        parent = random_program(rng)
        if rng.random() < 0.3:                               # 很多条相同的规则：SEARCH 要带上下文才唯一
            parent = Program(parent.rules + (Rule((("M", 16),), A),) * rng.randint(2, 4), parent.default)
        child = mutate(rng, parent)
        diff = make_diff(render(parent), render(child))
        assert apply_diff(render(parent), diff) == render(child)
        assert parse(apply_diff(render(parent), diff)) == child
        if diff:                                             # 打印出来再读回来也一样（块外有别的文字）
            assert parse_diff("LLM 的回答：\n" + format_diff(diff) + "就这些。\n") == diff


def test_make_diff_round_trip_any_text():
    # 任意文本（重复行、空行、没有结尾换行、空文本）：apply_diff(a, make_diff(a, b)) == b，且每块 SEARCH 非空（a 非空时）
    rng = random.Random(7)
    words = ["x\n", "y\n", "x\n", "\n", "z", "y"]
    for _ in range(2000):
        a = "".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        b = "".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        diff = make_diff(a, b)
        assert apply_diff(a, diff) == b
        assert all(s for s, _ in diff) or a == ""
        assert len(diff) <= 1


def test_format_and_parse_diff():
    # 格式：SEARCH / ======= / REPLACE 三个标记；块外的文字忽略；删除时 REPLACE 为空
    diff = (("    if M <= 16:\n", "    if M <= 32:\n"), ("a\nb\n", ""))
    text = format_diff(diff)
    assert text == ("<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"
                    "<<<<<<< SEARCH\na\nb\n=======\n>>>>>>> REPLACE\n")
    assert parse_diff("说明\n" + text + "结尾") == diff


def test_format_diff_start_program():
    # 没有修改（起始程序）：一句中文说明，不是 SEARCH/REPLACE
    assert "起始程序" in format_diff(None) and "SEARCH" not in format_diff(None)
    assert format_diff(()) == format_diff(None)


def test_parse_diff_malformed():
    # 块不完整：缺 =======、缺 REPLACE、REPLACE 前没有 SEARCH
    for bad in ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "<<<<<<< SEARCH\na\n=======\nb\n",
                ">>>>>>> REPLACE\n", "<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n"):
        with pytest.raises(DiffError):
            parse_diff(bad)


def test_apply_diff_errors():
    # SEARCH 找不到、找到两处（包括重叠的两处）、空 SEARCH：DiffError
    with pytest.raises(DiffError, match="SEARCH 没有匹配"):
        apply_diff("a\nb\n", (("c\n", "d\n"),))
    with pytest.raises(DiffError, match="不止一处"):
        apply_diff("a\nb\na\n", (("a\n", "d\n"),))
    with pytest.raises(DiffError, match="不止一处"):
        apply_diff("x\nx\nx\n", (("x\nx\n", "y\n"),))          # str.count 会说只有 1 处
    with pytest.raises(DiffError, match="空"):
        apply_diff("a\n", (("", "b\n"),))
    assert apply_diff("a\nb\n", (("a\n", "c\n"), ("c\nb", "d"))) == "d\n"   # 按顺序应用，后一块看到前一块的结果
