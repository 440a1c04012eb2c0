"""
第 14 讲 · evolve.program —— 被进化的"程序"：一串 `if M <= ...: return Config(...)` 规则。

一个程序 = 若干条规则 + 一个默认配置：
    # EVOLVE-BLOCK-START
    def choose_config(M, N, K):
        if M <= 16:                                   一条规则：条件都是"某一维 <= 整数"，用 and 连接
            return Config(BM=16, BN=64, ...)
        return Config(BM=128, BN=128, ...)            默认配置：前面的规则都不满足时用它
    # EVOLVE-BLOCK-END
从上往下，第一条条件全部满足的规则说了算。每条规则管的区域是一个从 (1, 1, 1) 开始的"盒子"。

本模块：choose（按形状选配置）、render / parse（程序 <-> 源代码）、simplify / equivalent（删死规则、判等价）、
以及 AlphaEvolve 论文的 SEARCH/REPLACE 修改格式（format_diff / parse_diff / apply_diff / make_diff）。
parse 先按 render 的固定格式认（快），认不出来再用 ast 读；从不 eval / exec，也不检查配置能不能启动（那是评估器的事）。
本模块不打印任何东西。
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass, field, replace

from kernel_lab import FIELDS, VALID_INDEX, Config

AXES = ("M", "N", "K")
NO_BOUND = sys.maxsize             # 没有条件的那一维：上界当作无穷大
BLOCK_START = "# EVOLVE-BLOCK-START"
BLOCK_END = "# EVOLVE-BLOCK-END"


# ---------------------------------------------------------------- 规则与程序

@dataclass(frozen=True)
class Rule:
    """一条规则：conds 里的 (维, 阈值) 全部满足（维 <= 阈值）时返回 config。line 是它在源代码里的行号，不参与比较。"""
    conds: tuple[tuple[str, int], ...]
    config: Config
    line: int = field(default=0, compare=False, hash=False, repr=False)
    _box: tuple = field(init=False, compare=False, hash=False, repr=False)    # (M 上界, N 上界, K 上界, config)
    _hash: int = field(init=False, compare=False, hash=False, repr=False)
    _index: int = field(init=False, compare=False, hash=False, repr=False)    # config 在 VALID 里的下标，启动不了是 -1

    def __post_init__(self) -> None:
        if type(self.conds) is not tuple:
            object.__setattr__(self, "conds", tuple(tuple(c) for c in self.conds))
        b = {"M": NO_BOUND, "N": NO_BOUND, "K": NO_BOUND}
        for f, t in self.conds:
            if f not in b:
                raise ValueError(f"条件只能针对 M、N、K，不能是 {f!r}")
            b[f] = min(b[f], t)                                # 同一维出现两次，取小的
        object.__setattr__(self, "_box", (b["M"], b["N"], b["K"], self.config))
        object.__setattr__(self, "_hash", hash(self._box))
        object.__setattr__(self, "_index", VALID_INDEX.get(self.config, -1))

    def __hash__(self) -> int:        # 算一次存起来
        return self._hash

    def box(self) -> tuple[int, int, int]:
        """这条规则管的盒子的"角"：(M 的上界, N 的上界, K 的上界)；没有条件的维是 NO_BOUND。"""
        return self._box[:3]


@dataclass(frozen=True)
class Program:
    """规则（按顺序）加一个默认配置。不可变、可哈希，可以当字典的键。"""
    rules: tuple[Rule, ...]
    default: Config
    default_line: int = field(default=0, compare=False, hash=False, repr=False)
    _boxes: tuple = field(init=False, compare=False, hash=False, repr=False)   # 每条规则的 (M上界, N上界, K上界, 配置)
    _hash: int = field(init=False, compare=False, hash=False, repr=False)
    _indices: tuple = field(init=False, compare=False, hash=False, repr=False)  # 每个分支的配置在 VALID 里的下标

    def __post_init__(self) -> None:
        if type(self.rules) is not tuple:
            object.__setattr__(self, "rules", tuple(self.rules))
        object.__setattr__(self, "_boxes", tuple(r._box for r in self.rules))
        object.__setattr__(self, "_indices", tuple(r._index for r in self.rules) + (VALID_INDEX.get(self.default, -1),))
        object.__setattr__(self, "_hash", hash((self.rules, self.default)))

    def __hash__(self) -> int:        # 算一次存起来：程序常被当作缓存的键
        return self._hash

    def n_rules(self) -> int:
        return len(self.rules)


def choose_mnk(program: Program, M: int, N: int, K: int) -> Config:
    """第一条条件全部满足的规则的配置；都不满足就用默认配置。"""
    for bm, bn, bk, cfg in program._boxes:
        if M <= bm and N <= bn and K <= bk:
            return cfg
    return program.default


def choose(program: Program, shape) -> Config:
    """同 choose_mnk，形状是任何带 .M .N .K 的对象。"""
    return choose_mnk(program, shape.M, shape.N, shape.K)


def branch_index(program: Program, M: int, N: int, K: int) -> int:
    """(M, N, K) 走第几个分支：第一条条件都满足的规则的下标；都不满足是默认分支 len(rules)。"""
    for i, (bm, bn, bk, _) in enumerate(program._boxes):
        if M <= bm and N <= bn and K <= bk:
            return i
    return len(program._boxes)


# ---------------------------------------------------------------- 程序 -> 源代码

@functools.lru_cache(maxsize=4096)
def _config_src(c: Config) -> str:
    return "Config(" + ", ".join(f"{f}={v}" for f, v in zip(FIELDS, c.as_tuple())) + ")"


@functools.lru_cache(maxsize=16384)
def _rule_src(r: Rule) -> str:
    cond = " and ".join(f"{f} <= {t}" for f, t in r.conds) or "True"      # 没有条件：if True:
    return f"    if {cond}:\n        return {_config_src(r.config)}\n"


@functools.lru_cache(maxsize=4096)
def render(program: Program) -> str:
    """程序的 Python 源代码（带 EVOLVE-BLOCK 标记，以换行结尾）。parse(render(p)) == p。"""
    return (f"{BLOCK_START}\ndef choose_config(M, N, K):\n" + "".join(map(_rule_src, program.rules))
            + f"    return {_config_src(program.default)}\n{BLOCK_END}\n")


# ---------------------------------------------------------------- 源代码 -> 程序

class ProgramError(ValueError):
    """源代码不是合法的 DSL 程序。str 是 "文件名:行号: 说明"，说明里写 DSL 允许什么。"""

    def __init__(self, filename: str, lineno: int, message: str):
        super().__init__(f"{filename}:{lineno}: {message}")
        self.filename, self.lineno, self.message = filename, lineno, message

    def __reduce__(self):
        return ProgramError, (self.filename, self.lineno, self.message)


_ALLOWED = ("DSL 只允许：if 条件: return Config(...)，最后一句不带条件的 return Config(...)；"
            "条件是 M/N/K <= 整数，用 and 连接")


def _marker(source: str, name: str, begin: int = 0) -> int:
    """从 begin 起第一个单独成行的 "# 标记" 所在行的行首位置；没有就返回 -1。"""
    at = source.find(name, begin)
    while at >= 0:
        line_start = source.rfind("\n", 0, at) + 1
        if source[line_start:at].replace(" ", "").replace("\t", "") == "#":
            return line_start
        at = source.find(name, at + 1)
    return -1


def _block(source: str, filename: str) -> tuple[int, str]:
    """(标记之前有几行, 标记之间的文本)；没有标记就是整个文件。"""
    start = _marker(source, "EVOLVE-BLOCK-START")
    if start < 0:
        end = _marker(source, "EVOLVE-BLOCK-END")
        if end >= 0:
            raise ProgramError(filename, source.count("\n", 0, end) + 1, f"有 {BLOCK_END} 却没有 {BLOCK_START}")
        return 0, source
    begin = source.find("\n", start) + 1                      # 标记的下一行
    end = _marker(source, "EVOLVE-BLOCK-END", begin) if begin > 0 else -1
    if end < 0:
        raise ProgramError(filename, source.count("\n", 0, start) + 1, f"有 {BLOCK_START} 却没有 {BLOCK_END}")
    return source.count("\n", 0, begin), source[begin:end]


def parse(source: str, filename: str = "<program>") -> Program:
    """把源代码读成程序；不合法就抛 ProgramError（行号是文件里的真实行号）。"""
    return _parse_cached(source, filename)


@functools.lru_cache(maxsize=4096)
def _parse_cached(source: str, filename: str) -> Program:
    offset, block = _block(source, filename)
    program = _parse_rendered(offset, block)
    return program if program is not None else _parse_ast(block, filename, offset)


# render 的输出格式是固定的，逐行用正则就能认出来，比 ast.parse 快十几倍（进化时要读上万个子程序，
# 它们和父程序大多只差一条规则，所以每一行的结果也缓存起来）。
# 认不出来的（学生手写的 elif、位置参数、注释……）交给后面的 ast 读法；两条路读出的程序相同（tests 检查）。
_INT = r"-?(?:0|[1-9][0-9]*)"
_IF_RE = re.compile(rf"    if (True|[MNK] <= {_INT}(?: and [MNK] <= {_INT})*):")
_RETURN_RE = re.compile(r" *return Config\(" + ", ".join(f"{f}=([1-9][0-9]*)" for f in FIELDS) + r"\)")


def _parse_rendered(offset: int, block: str) -> Program | None:
    """认出 render 的输出格式就返回程序，否则返回 None。行号 = offset + 下标 + 1。"""
    lines = block.split("\n")
    if lines[0] != "def choose_config(M, N, K):":
        return None
    rules, i = [], 1
    while i + 1 < len(lines) and lines[i].startswith("    if "):
        rule = _rendered_rule(lines[i], lines[i + 1], offset + i + 1)
        if rule is None:
            return None
        rules.append(rule)
        i += 2
    if i >= len(lines) or not lines[i].startswith("    return ") or any(x.strip(" ") for x in lines[i + 1:]):
        return None
    default = _rendered_config(lines[i])
    return None if default is None else Program(tuple(rules), default, offset + i + 1)


@functools.lru_cache(maxsize=16384)
def _rendered_rule(if_line: str, return_line: str, lineno: int) -> Rule | None:
    m = _IF_RE.fullmatch(if_line)
    config = _rendered_config(return_line) if m and return_line.startswith("        return ") else None
    if config is None:
        return None
    cond = m.group(1)
    conds = () if cond == "True" else tuple((c[0], int(c[5:])) for c in cond.split(" and "))   # "M <= 16"
    return Rule(conds, config, lineno)


@functools.lru_cache(maxsize=4096)
def _rendered_config(return_line: str) -> Config | None:
    m = _RETURN_RE.fullmatch(return_line)
    return None if m is None else Config(*map(int, m.groups()))


def _parse_ast(block: str, filename: str, offset: int = 0) -> Program:
    """用 ast 读（慢，但什么写法都能给出带行号的说明）。block 前面补 offset 个换行，ast 的行号就是文件的行号。"""
    def fail(node, message):
        raise ProgramError(filename, getattr(node, "lineno", offset + 1), message)

    try:
        tree = ast.parse("\n" * offset + block, filename)
    except SyntaxError as e:
        raise ProgramError(filename, e.lineno or 1, f"Python 语法错误：{e.msg}") from None
    except ValueError as e:                                   # 例如源代码里有 NUL 字符
        raise ProgramError(filename, offset + 1, f"读不了这段源代码：{e}") from None

    fn = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "choose_config":
            if fn is not None:
                fail(node, f"只能有一个 choose_config（第 {fn.lineno} 行已经有一个）")
            fn = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            pass                                              # import 和说明文字不算程序
        else:
            fail(node, "函数外面只能有 import 和说明文字；程序必须是一个 def choose_config(M, N, K):")
    if fn is None:
        raise ProgramError(filename, offset + 1, "找不到 def choose_config(M, N, K):")
    a = fn.args
    if ([x.arg for x in a.args] != list(AXES) or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg
            or a.defaults or fn.decorator_list):
        fail(fn, "函数签名必须正好是 def choose_config(M, N, K):")

    body = fn.body[1:] if _is_docstring(fn.body[0]) else fn.body
    rules: list[Rule] = []
    default = _statements(body, rules, fail)
    if default is None:
        raise ProgramError(filename, fn.end_lineno or fn.lineno,
                           "函数最后必须是一句不带条件的 return Config(...)（默认配置）")
    return Program(tuple(rules), default[0], default[1])


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _statements(stmts, rules, fail):
    """依次读 if/return；elif、else 拉平成一串 if（每个分支都是 return，拉平不改变行为）。
    读到不带条件的 return 就返回 (默认配置, 行号)；一直没读到返回 None。"""
    for i, st in enumerate(stmts):
        if isinstance(st, ast.If):
            if len(st.body) != 1 or not isinstance(st.body[0], ast.Return):
                bad = st.body[0] if not isinstance(st.body[0], ast.Return) else st.body[1]
                fail(bad, "if 的分支里只能有一句 return Config(...)")
            rules.append(Rule(_conds(st.test, fail), _config(st.body[0].value, st.body[0], fail), st.lineno))
            default = _statements(st.orelse, rules, fail) if st.orelse else None
        elif isinstance(st, ast.Return):
            default = (_config(st.value, st, fail), st.lineno)
        else:
            fail(st, f"这里不能写 {type(st).__name__} 语句；{_ALLOWED}")
        if default is not None:
            if i + 1 < len(stmts):
                fail(stmts[i + 1], "最后的 return 之后还有代码，永远执行不到；删掉它")
            return default
    return None


def _conds(test, fail) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    _add_conds(test, out, fail)
    return tuple(out)


def _add_conds(node, out, fail) -> None:
    if isinstance(node, ast.Constant) and node.value is True:
        return                                                # if True: 总是成立
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.Or):
            fail(node, "条件只能用 and 连接：A or B 请拆成两条规则（if A: return X，再 if B: return X）")
        for v in node.values:
            _add_conds(v, out, fail)
        return
    if not isinstance(node, ast.Compare):
        fail(node, f"条件只能是 M/N/K 和整数的比较（如 M <= 16），或者 True；{_ALLOWED}")
    if len(node.ops) != 1:
        fail(node, "一次只能比较一次：a <= M <= b 这种写法不行（DSL 只有上界）；写成 M <= b")
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if isinstance(left, ast.Name):                            # M <= 16 / M < 17
        name, lit, upper, strict = left, right, ast.LtE, ast.Lt
    elif isinstance(right, ast.Name):                         # 16 >= M / 17 > M
        name, lit, upper, strict = right, left, ast.GtE, ast.Gt
    else:
        fail(node, "比较的一边必须是 M、N 或 K")
    if name.id not in AXES:
        fail(name, f"条件里只能出现 M、N、K，不能是 {name.id}")
    if not isinstance(op, (upper, strict)):
        if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            fail(node, f"DSL 只有上界（{name.id} <= 整数）：写不了 {ast.unparse(node)}。"
                       f"把 {name.id} 较小的那条规则放在前面，后面的规则自然只管 {name.id} 更大的形状")
        fail(node, f"只能用 <= 或 < 比较（{name.id} <= 整数）；== != is in 都不行")
    t = _int_literal(lit)
    if t is None:
        fail(lit, f"{name.id} 只能和整数字面量比较，不能和 {ast.unparse(lit)} 比较")
    out.append((name.id, t if isinstance(op, upper) else t - 1))   # M < 17 就是 M <= 16


def _int_literal(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _config(node, stmt, fail) -> Config:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Config"):
        fail(node or stmt, "return 后面必须是 Config(BM=..., BN=..., BK=..., warps=..., stages=..., group=...)")
    if len(node.args) > len(FIELDS):
        fail(node, f"Config 最多 {len(FIELDS)} 个位置参数（{', '.join(FIELDS)}）")
    pairs = list(zip(FIELDS, node.args)) + [(k.arg, k.value) for k in node.keywords]
    values: dict[str, int] = {}
    for name, v in pairs:
        if name is None or isinstance(v, ast.Starred):
            fail(v, "Config 不能用 *args / **kwargs，每个字段写成 字段=整数")
        if name not in FIELDS:
            fail(v, f"Config 没有字段 {name}；字段是 {', '.join(FIELDS)}")
        if name in values:
            fail(v, f"Config 的字段 {name} 给了两次")
        if isinstance(v, ast.Constant) and type(v.value) is bool:
            fail(v, f"{name}={v.value} 是布尔值，要写正整数")
        if not (isinstance(v, ast.Constant) and type(v.value) is int and v.value > 0):
            fail(v, f"{name} 必须是正整数字面量，不能是 {ast.unparse(v)}")
        values[name] = v.value
    missing = [f for f in FIELDS if f not in values]
    if missing:
        fail(node, f"Config 缺少字段 {', '.join(missing)}；六个字段 {', '.join(FIELDS)} 都要给")
    return Config(**values)


# ---------------------------------------------------------------- 等价与化简

def equivalent(p: Program, q: Program) -> bool:
    """p 和 q 在每个正整数形状 (M, N, K) 上都选同一个配置吗？（精确判定，不是抽样）"""
    # 在一维上，choose 只取决于"这个值 <= 哪些阈值"，而这个集合只在 t 和 t+1 之间变。所以把每一维切成
    # [1, t1], [t1+1, t2], ..., [tn+1, ∞) 这些段，段内行为不变，每段取最小的值 1, t1+1, ..., tn+1 就够了
    # （t 本身和 t_{i-1}+1 在同一段，不用再试）。
    axes = []
    for i in range(3):
        ts = {box[i] for box in p._boxes + q._boxes if 0 <= box[i] < NO_BOUND}
        axes.append(sorted({1} | {t + 1 for t in ts}))
    return all(choose_mnk(p, M, N, K) == choose_mnk(q, M, N, K)
               for M in axes[0] for N in axes[1] for K in axes[2])


def simplify(program: Program) -> Program:
    """删掉死代码，行为在每个正整数形状上都不变：
    合并同一维的重复条件、删空规则、删被前面的规则挡住的规则、删去掉也不改变行为的规则。"""
    rules: list[Rule] = []
    default, default_line = program.default, program.default_line
    for r in program.rules:
        r = _merge_conds(r)
        if any(t < 1 for _, t in r.conds):
            continue                                          # 空区域：没有正整数满足 M <= 0
        if not r.conds:                                       # if True: 总会触发，它就是默认配置，后面全是死代码
            default, default_line = r.config, r.line
            break
        # 每条规则管的是从 (1,1,1) 到角 box() 的盒子。一个盒子被前面若干盒子的并集盖住，当且仅当它被其中**某一个**盖住：
        # 它的角落在并集里，就落在某一个盒子 A 里；而 A 也从 (1,1,1) 开始，于是整个盒子都在 A 里。
        if any(all(b >= c for b, c in zip(q.box(), r.box())) for q in rules):
            continue
        rules.append(r)
    p = Program(tuple(rules), default, default_line)
    for i in reversed(range(len(rules))):                     # 从后往前试着删，每删一条都要和原来等价
        q = Program(p.rules[:i] + p.rules[i + 1:], default, default_line)
        if equivalent(q, p):
            p = q
    return p


def _merge_conds(r: Rule) -> Rule:
    """同一维出现多次只留最紧的阈值（顺序按第一次出现）。"""
    best: dict[str, int] = {}
    for f, t in r.conds:
        best[f] = min(t, best.get(f, t))
    conds = tuple(best.items())
    return r if conds == r.conds else replace(r, conds=conds)


# ---------------------------------------------------------------- SEARCH/REPLACE 修改（AlphaEvolve 论文的格式）

Diff = tuple[tuple[str, str], ...]      # 若干块 (search, replace)，按顺序应用


class DiffError(ValueError):
    """修改的格式不对，或者应用不上。"""


_SEARCH, _DIVIDER, _REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"


def _lines(text: str) -> list[str]:
    """按 "\\n" 切成行，每行带着它的换行符；"".join 回去就是原文。"""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def format_diff(diff: Diff | None) -> str:
    """把修改写成 SEARCH/REPLACE 块。"""
    if not diff:
        return "（这是起始程序，不是由哪次修改产生的）\n"
    out = []
    for search, repl in diff:
        out.append(f"{_SEARCH}\n{_ending(search)}{_DIVIDER}\n{_ending(repl)}{_REPLACE}\n")
    return "".join(out)


def _ending(text: str) -> str:
    return text if text == "" or text.endswith("\n") else text + "\n"


def parse_diff(text: str) -> Diff:
    """从一段文本里读出所有 SEARCH/REPLACE 块（块外的文字忽略）；块不完整就抛 DiffError。"""
    blocks, state, search, repl = [], None, [], []
    for lineno, line in enumerate(_lines(text), 1):
        mark = line.rstrip()
        if mark == _SEARCH:
            if state is not None:
                raise DiffError(f"第 {lineno} 行：上一个 SEARCH 块还没结束（缺 {_DIVIDER} 或 {_REPLACE}）")
            state, search, repl = "search", [], []
        elif mark == _DIVIDER and state == "search":
            state = "replace"
        elif mark == _REPLACE:
            if state != "replace":
                raise DiffError(f"第 {lineno} 行：{_REPLACE} 前面缺 {_SEARCH} 或 {_DIVIDER}")
            blocks.append(("".join(search), "".join(repl)))
            state = None
        elif state == "search":
            search.append(_ending(line))
        elif state == "replace":
            repl.append(_ending(line))
    if state is not None:
        raise DiffError(f"最后一个 SEARCH 块没有结束（缺 {_DIVIDER if state == 'search' else _REPLACE}）")
    return tuple(blocks)


def apply_diff(source: str, diff: Diff) -> str:
    """依次应用每一块：SEARCH 的文本必须在当前文本里恰好出现一次，换成 REPLACE 的文本。"""
    text = source
    for n, (search, repl) in enumerate(diff, 1):
        if search == "" and text != "":
            raise DiffError(f"第 {n} 块：SEARCH 是空的，不知道该改哪里")
        at = text.find(search)
        if at < 0:
            raise DiffError(f"第 {n} 块：SEARCH 没有匹配（当前文本里找不到这段）：\n{search}")
        if text.find(search, at + 1) >= 0:                   # 用 find 而不是 count：重叠的出现也算两次
            raise DiffError(f"第 {n} 块：SEARCH 匹配了不止一处，有歧义；多带几行上下文：\n{search}")
        text = text[:at] + repl + text[at + len(search):]
    return text


def make_diff(parent_src: str, child_src: str) -> Diff:
    """一个 SEARCH/REPLACE 块把 parent 改成 child：先取两边不同的那几行，
    再往上下各加一行上下文，直到 SEARCH 非空且在 parent 里只出现一次。相同的文本返回空修改 ()。"""
    if parent_src == child_src:
        return ()
    a, b = _lines(parent_src), _lines(child_src)
    pre = 0                                                   # 共同的开头几行
    while pre < min(len(a), len(b)) and a[pre] == b[pre]:
        pre += 1
    suf = 0                                                   # 共同的结尾几行（不和开头重叠）
    while suf < min(len(a), len(b)) - pre and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    lo, hi = pre, len(a) - suf                                # parent 的 a[lo:hi] 换成 child 的 b[lo:len(b)-suf]
    while True:
        search = "".join(a[lo:hi])
        at = parent_src.find(search)
        unique = parent_src.find(search, at + 1) < 0
        if (search and unique) or (lo == 0 and hi == len(a)):   # 整个 parent 一定只出现一次
            return ((search, "".join(b[lo:len(b) - (len(a) - hi)])),)
        lo, hi = max(0, lo - 1), min(len(a), hi + 1)
