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
dead_rules（哪些规则不起作用）。
parse 先按 render 的固定格式认（快），认不出来再用 ast 读；从不 eval / exec，也不检查配置能不能启动（那是评估器的事）。
DSL 里的数有界：阈值的绝对值不超过 MAX_THRESHOLD，Config 的字段是 1 到 MAX_FIELD；读得进来的程序一定能 render。
dead_rules 找出写了也没用的规则（给学生的提醒）。SEARCH/REPLACE 的代码在 diff.py，这里只是转引。
本模块不打印任何东西。
"""

from __future__ import annotations

import ast
import bisect
import functools
import operator
import re
import sys
import warnings
from dataclasses import dataclass, field, replace

from kernel_lab import FIELDS, VALID_INDEX, Config

AXES = ("M", "N", "K")
NO_BOUND = sys.maxsize             # 没有条件的那一维：上界当作无穷大
MAX_THRESHOLD = 10 ** 9            # 阈值（规则的上界）的绝对值最多这么大：GEMM 的维度远小于它
MAX_FIELD = 4096                   # Config 的字段最大这么大（候选网格最大 256；再大的数只会是写错了）
BLOCK_START = "# EVOLVE-BLOCK-START"
BLOCK_END = "# EVOLVE-BLOCK-END"


# ---------------------------------------------------------------- 规则与程序

def _short_int(n: int) -> str:
    """给错误信息用的整数：太长的只写位数（str() 写不出超过 4300 位的整数，错误信息自己不能再出错）。"""
    return str(n) if abs(n) < 10 ** 30 else f"（一个 {n.bit_length()} 位二进制的整数）"


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
            if type(t) is not int:
                object.__setattr__(self, "conds", tuple((g, operator.index(u)) for g, u in self.conds))
                return self.__post_init__()
            if not -MAX_THRESHOLD <= t <= MAX_THRESHOLD:
                raise ValueError(f"阈值 {f} <= {_short_int(t)} 超出范围：绝对值最多 {MAX_THRESHOLD:,}")
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


_ALLOWED = ("DSL 只允许：if 条件: return Config(...)（也可以用 elif / else），最后一句不带条件的 return Config(...)；"
            "条件是 M/N/K <= 整数（或 < 整数），用 and 连接")
_THRESHOLD_BOUND = f"阈值要是 {-MAX_THRESHOLD:,} 到 {MAX_THRESHOLD:,} 之间的整数"
_FIELD_BOUND = f"Config 的字段要是 1 到 {MAX_FIELD:,} 之间的整数"
_SHOW = 60                                  # 出错信息里最多引用源代码的这么多个字符


def _clip(text: str, n: int = _SHOW) -> str:
    """引用一段源代码：太长就截断，看不见的控制字符写成 \\x01 这样。"""
    short = text[:n]
    if not short.isprintable():
        short = "".join(c if c.isprintable() else repr(c)[1:-1] for c in short)
    return short + ("……" if len(text) > n else "")


_MARKER_RE = {name: re.compile(rf"^[ \t]*#[ \t]*{name}", re.M) for name in ("EVOLVE-BLOCK-START", "EVOLVE-BLOCK-END")}


def _marker(source: str, name: str, begin: int = 0) -> int:
    """从 begin 起第一个单独成行的 "# 标记" 所在行的行首位置；没有就返回 -1。（正则一遍扫完，不会因为同一行里
    有很多个标记词而变慢。）"""
    m = _MARKER_RE[name].search(source, begin)
    return -1 if m is None else m.start()


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
    """把源代码读成程序；不合法就抛 ProgramError（行号是文件里的真实行号）。除了 ProgramError 不抛别的异常，
    不打印任何东西（Python 的 SyntaxWarning 也不让它印出来）。"""
    if not isinstance(source, str):
        raise ProgramError(filename, 1, f"源代码应该是一段文本，却是 {type(source).__name__}")
    return _parse_cached(source, str(filename))


@functools.lru_cache(maxsize=4096)
def _parse_cached(source: str, filename: str) -> Program:
    offset, block = _block(source, filename)
    program = _parse_rendered(offset, block)
    if program is None:
        program = _parse_lines(offset, block)
    return program if program is not None else _parse_ast(block, filename, offset)


# render 的输出格式是固定的，逐行用正则就能认出来，比 ast.parse 快十几倍（进化时要读上万个子程序，
# 它们和父程序大多只差一条规则，所以每一行的结果也缓存起来）。
# 认不出来的（学生手写的 elif、位置参数、注释、超出范围的数……）交给后面的 ast 读法；两条路读出的程序相同（tests 检查）。
_INT = r"-?(?:0|[1-9][0-9]{0,9})"
_IF_RE = re.compile(rf"    if (True|[MNK] <= {_INT}(?: and [MNK] <= {_INT})*):")
_RETURN_RE = re.compile(r" *return Config\(" + ", ".join(f"{f}=([1-9][0-9]{{0,4}})" for f in FIELDS) + r"\)")


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
    if any(not -MAX_THRESHOLD <= t <= MAX_THRESHOLD for _, t in conds):
        return None                                           # 超出范围：让 ast 读法给出说明
    return Rule(conds, config, lineno)


@functools.lru_cache(maxsize=4096)
def _rendered_config(return_line: str) -> Config | None:
    m = _RETURN_RE.fullmatch(return_line)
    if m is None:
        return None
    values = tuple(map(int, m.groups()))
    return Config(*values) if max(values) <= MAX_FIELD else None


# 学生和 LLM 常写的其他样子（elif / else、<、反着写的比较、位置参数、注释、空行、多余的空格）也逐行用正则认：
# 1 万条规则的文件，ast.parse 一下就要将近一秒。这条路只认一个很保守的子集——缩进正好 4 / 8 个空格、
# 代码里只有可打印的 ASCII 字符、没有括号套括号、没有字符串——在这个子集里它和 ast 读法读出同一个程序（tests 检查）；
# 子集以外的（哪怕是合法的写法）一律交给 ast。
_NUM = r"-?(?:0|[1-9][0-9]{0,9})"
_TERM_RE = re.compile(rf"([MNK])\s*(<=|<)\s*({_NUM})|({_NUM})\s*(>=|>)\s*([MNK])|True")
_AND_RE = re.compile(r"\s+and\s+")
_CODE_BAD = re.compile(r"[^ -~]|[\\;'\"]")                 # 不可打印的、非 ASCII 的字符，反斜杠、分号、引号
_DEF_RE = re.compile(r"def\s+choose_config\s*\(\s*M\s*,\s*N\s*,\s*K\s*\)\s*:")
_BRANCH_RE = re.compile(r"    (?:(if|elif)\s+(.+?)|(else))\s*:")
_CONFIG_RE = re.compile(r"( {4}| {8})return\s+Config\s*\(([^()]*)\)")
_DOC_RE = re.compile(r'    """[^"\\]*"""|    \'\'\'[^\'\\]*\'\'\'')   # 函数开头一行的说明文字


@functools.lru_cache(maxsize=16384)
def _line_kind(line: str):
    """一行代码（注释已去掉）是什么：("blank",)、("def",)、("if"/"elif", conds)、("else",)、("return", 缩进, config)；
    不在保守的子集里就返回 None。"""
    if not line.strip(" "):
        return ("blank",)
    if _CODE_BAD.search(line):
        return None
    if _DEF_RE.fullmatch(line):
        return ("def",)
    m = _BRANCH_RE.fullmatch(line)
    if m:
        if m.group(3):
            return ("else",)
        conds = []
        for term in _AND_RE.split(m.group(2)):
            t = _TERM_RE.fullmatch(term)
            if t is None:
                return None
            if t.group(1):                                    # M <= 16 / M < 17
                v = int(t.group(3)) - (t.group(2) == "<")
                conds.append((t.group(1), v))
            elif t.group(4):                                  # 16 >= M / 17 > M
                v = int(t.group(4)) - (t.group(5) == ">")
                conds.append((t.group(6), v))
        if any(not -MAX_THRESHOLD <= v <= MAX_THRESHOLD for _, v in conds):
            return None
        return (m.group(1), tuple(conds))
    m = _CONFIG_RE.fullmatch(line)
    if m:
        args = [a.strip(" ") for a in m.group(2).split(",")]
        if args and args[-1] == "" and len(args) > 1:
            args.pop()                                        # 结尾多一个逗号也行
        values: dict[str, int] = {}
        for k, a in enumerate(args):
            name, eq, val = a.partition("=")
            if not eq:
                if values.keys() - set(FIELDS[:k]) or k >= len(FIELDS):
                    return None                               # 位置参数在关键字参数后面、或者太多
                name, val = FIELDS[k], a
            name, val = name.strip(" "), val.strip(" ")
            if name not in FIELDS or name in values or not re.fullmatch(r"[1-9][0-9]{0,4}", val):
                return None
            values[name] = int(val)
        if len(values) != len(FIELDS) or max(values.values()) > MAX_FIELD:
            return None
        return ("return", len(m.group(1)), Config(**values))
    return None


def _parse_lines(offset: int, block: str) -> Program | None:
    """保守子集里的写法逐行认出来就返回程序，否则返回 None（交给 ast）。"""
    if "\r" in block or "\x00" in block:
        return None                                           # Python 把单独的 \r 也当换行：交给 ast
    if not block.isascii():
        try:
            block.encode("utf-8")
        except UnicodeEncodeError:                            # 落单的代理字符：ast 会报错，这里也不认
            return None
    rules: list[Rule] = []
    state = "start"             # start → body（函数里）→ want_return（if 后面要一句 return）→ … → done（默认配置读到了）
    pending = None              # 刚读到的 if / elif：(行号, 条件)；else 是 None
    doc = False                 # 读到过函数开头的说明文字
    chain = False               # 上一条是 if/elif 的分支：后面可以接 elif / else
    default = None
    for k, raw in enumerate(block.split("\n")):
        if state == "body" and not rules and _DOC_RE.fullmatch(raw.rstrip(" ")):
            if doc:
                return None
            doc = True                                        # 函数开头的说明文字（只能有一句）
            continue
        code = raw.split("#", 1)[0].rstrip(" ")
        kind = _line_kind(code)
        if kind is None:
            return None
        tag = kind[0]
        if tag == "blank":
            continue
        lineno = offset + k + 1
        if state == "start":
            if tag != "def" or code != code.lstrip(" "):
                return None
            state = "body"
        elif state == "body":
            if tag == "if" or (tag == "elif" and chain):
                pending, state = (lineno, kind[1]), "want_return"
            elif tag == "else" and chain:
                pending, state = None, "want_return"
            elif tag == "return" and kind[1] == 4:
                default, state = (kind[2], lineno), "done"
            else:
                return None
        elif state == "want_return":
            if tag != "return" or kind[1] != 8:
                return None
            if pending is None:                               # else: 的 return 就是默认配置
                default, state = (kind[2], lineno), "done"
            else:
                rules.append(Rule(pending[1], kind[2], pending[0]))
                state, chain = "body", True
        else:                                                 # 默认配置之后只能有空行和注释
            return None
    if default is None:
        return None
    return Program(tuple(rules), default[0], default[1])



# 学生（或 LLM）常敲错的字符：全角标点、不换行空格、BOM……Python 只说 "invalid character"，这里说该敲什么
_LOOKALIKES = {
    "：": ":", "，": ",", "（": "(", "）": ")", "＜": "<", "＞": ">", "＝": "=", "；": ";", "．": ".", "＃": "#",
    "＿": "_", "＊": "*", "＋": "+", "－": "-", "、": ",", "。": ".", "“": '"', "”": '"', "‘": "'", "’": "'",
    "≤": "<=", "≦": "<=", "\u00a0": " ", "\u3000": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ",
    "\u200b": "", "\ufeff": "",
}
_LOOKALIKES.update({chr(0xFF10 + d): str(d) for d in range(10)})      # 全角数字 ０–９
_CHAR_NAMES = {"\u00a0": "不换行空格（U+00A0，看起来和空格一样）", "\u3000": "全角空格（U+3000）",
               "\u2002": "en 空格（U+2002）", "\u2003": "em 空格（U+2003）", "\u2009": "窄空格（U+2009）",
               "\u200b": "看不见的零宽空格（U+200B）", "\ufeff": "看不见的 BOM 字符（U+FEFF，有的编辑器会在文件开头加上它）"}


def _lookalike(line: str) -> str | None:
    """这一行里第一个"长得像、其实不是"的字符，说成一句话；没有就返回 None。注释（# 后面）不算。"""
    for ch in line:
        if ch == "#":
            return None
        want = _LOOKALIKES.get(ch)
        if want is not None:
            name = _CHAR_NAMES.get(ch, f"全角的 '{ch}'")
            todo = "把它删掉" if want == "" else f"换成半角的 '{want}'" if want.strip() else "换成普通空格"
            return f"这一行有一个{name}，Python 不认；{todo}（用英文输入法重新敲一遍这一行最稳妥）"
    return None


# 语句的种类 -> 学生会怎么说它（DSL 不支持的语句）
_STATEMENT_WORDS = {
    "Assign": "DSL 没有变量：不能写 x = …（也不能先算出一个值再用）",
    "AugAssign": "DSL 没有变量：不能写 x += …",
    "AnnAssign": "DSL 没有变量：不能写 x: int = …",
    "Expr": "这一行只是一个单独的表达式（比如 print(...) 或一个函数调用），DSL 里不能这样写",
    "Pass": "DSL 里用不着 pass：每个 if 下面写一句 return Config(...)；不想要这条规则就把整个 if 删掉",
    "For": "DSL 没有循环（for）", "While": "DSL 没有循环（while）", "AsyncFor": "DSL 没有循环（async for）",
    "FunctionDef": "choose_config 里面不能再定义函数", "AsyncFunctionDef": "choose_config 里面不能再定义函数",
    "ClassDef": "DSL 里不能定义类", "Import": "import 只能写在函数外面", "ImportFrom": "import 只能写在函数外面",
    "Try": "DSL 里不能写 try", "TryStar": "DSL 里不能写 try", "With": "DSL 里不能写 with",
    "Raise": "DSL 里不能写 raise", "Assert": "DSL 里不能写 assert", "Delete": "DSL 里不能写 del",
    "Global": "DSL 没有变量：不能写 global", "Nonlocal": "DSL 没有变量：不能写 nonlocal",
    "Break": "DSL 没有循环，不能写 break", "Continue": "DSL 没有循环，不能写 continue", "Match": "DSL 里不能写 match",
}


def _parse_ast(block: str, filename: str, offset: int = 0) -> Program:
    """用 ast 读（慢，但什么写法都能给出带行号的说明）。block 前面补 offset 个换行，ast 的行号就是文件的行号。
    不递归（1000 个分支的 elif 链也行）；出错信息里引用的源代码来自原文、截断过，拼这句话本身不会出错。"""
    text = "\n" * offset + block

    def seg(node) -> str:                                     # node 在源代码里的原文（截断）
        try:
            lines = text.split("\n")[node.lineno - 1:node.end_lineno]
            if len(lines) == 1:
                return _clip(lines[0][node.col_offset:node.end_col_offset])
            return _clip(" ".join([lines[0][node.col_offset:]] + lines[1:-1] + [lines[-1][:node.end_col_offset]]))
        except Exception:                                     # noqa: BLE001  （位置信息缺了也只是少引一段原文）
            return "…"

    def fail(node, message):
        raise ProgramError(filename, getattr(node, "lineno", None) or offset + 1, message)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                   # 例如 "is" with a literal：不许印到 stderr
            tree = ast.parse(text, filename)
    except SyntaxError as e:
        lineno = e.lineno if isinstance(e.lineno, int) and e.lineno >= 1 else offset + 1
        lines = text.split("\n")
        hint = _lookalike(lines[lineno - 1]) if lineno <= len(lines) else None
        if hint is None and "limit" in str(e.msg) and "digits" in str(e.msg):   # 超过 4300 位的整数，Python 都不读
            hint = f"这个数太长了（几千位）：{_THRESHOLD_BOUND}，{_FIELD_BOUND}"
        raise ProgramError(filename, lineno, hint or f"Python 语法错误：{_clip(str(e.msg), 200)}") from None
    except (RecursionError, MemoryError):                     # 括号、not、负号一层套一层，解析器的栈不够用
        raise ProgramError(filename, offset + 1, f"代码嵌套太深（括号、not 或负号一层套一层），DSL 用不着这么写；{_ALLOWED}") from None
    except ValueError as e:                                   # 例如源代码里有 NUL 字符
        raise ProgramError(filename, offset + 1, f"读不了这段源代码：{_clip(str(e))}") from None

    fn = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "choose_config":
            if fn is not None:
                fail(node, f"只能有一个 choose_config（第 {fn.lineno} 行已经有一个）")
            fn = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            pass                                              # import 和说明文字不算程序
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "choose_config":
                fail(node, "choose_config 要用 def 定义，不能是 async def")
            fail(node, f"函数必须叫 choose_config（这里叫 {_clip(node.name)}）：进化和评估只认这个名字，"
                       "而且只能有这一个函数")
        else:
            words = _STATEMENT_WORDS.get(type(node).__name__, "这里不能写这种语句")
            fail(node, f"{words}；函数外面只能有 import 和说明文字，程序必须是一个 def choose_config(M, N, K):")
    if fn is None:
        raise ProgramError(filename, offset + 1, "找不到 def choose_config(M, N, K):（函数必须叫这个名字）")
    a = fn.args
    if ([x.arg for x in a.args] != list(AXES) or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg
            or a.defaults or fn.decorator_list):
        fail(fn, "函数签名必须正好是 def choose_config(M, N, K):")

    body = fn.body[1:] if _is_docstring(fn.body[0]) else fn.body
    rules: list[Rule] = []
    default = _statements(body, rules, fail, seg)
    if default is None:
        raise ProgramError(filename, fn.end_lineno or fn.lineno,
                           "函数最后必须是一句不带条件的 return Config(...)（默认配置）")
    return Program(tuple(rules), default[0], default[1])


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _statements(stmts, rules, fail, seg):
    """依次读 if/return；elif、else 拉平成一串 if（每个分支都是 return，拉平不改变行为）。
    读到不带条件的 return 就返回 (默认配置, 行号)；一直没读到返回 None。
    用一个栈代替递归：elif 链多长都行。栈里每一项是 (一串语句, 下一个要读的下标)。"""
    stack = [(stmts, 0)]
    while stack:
        stmts, i = stack.pop()
        if i >= len(stmts):
            continue                                          # 这一串读完了，没有 return：回到外面那一串接着读
        st = stmts[i]
        if isinstance(st, ast.If):
            if len(st.body) != 1 or not isinstance(st.body[0], ast.Return):
                bad = st.body[0] if not isinstance(st.body[0], ast.Return) else st.body[1]
                if isinstance(bad, ast.If):
                    fail(bad, "if 里面不能再套 if：把两个条件用 and 写在一起（if M <= 16 and N <= 4096:）")
                fail(bad, "if 的分支里只能有一句 return Config(...)")
            rules.append(Rule(_conds(st.test, fail, seg), _config(st.body[0].value, st.body[0], fail, seg), st.lineno))
            stack.append((stmts, i + 1))                      # 先读 elif / else，再接着读后面的语句
            if st.orelse:
                stack.append((st.orelse, 0))
        elif isinstance(st, ast.Return):
            for rest, j in [(stmts, i + 1)] + stack[::-1]:    # 最里面的一串先查：return 之后还有代码吗
                if j < len(rest):
                    fail(rest[j], "最后的 return 之后还有代码，永远执行不到；删掉它")
            return _config(st.value, st, fail, seg), st.lineno
        else:
            words = _STATEMENT_WORDS.get(type(st).__name__, "这里不能写这种语句")
            fail(st, f"{words}；{_ALLOWED}")
    return None


def _conds(test, fail, seg) -> tuple[tuple[str, int], ...]:
    """条件里的 (维, 上界)，按写的顺序。and 套 and 也不递归。"""
    out: list[tuple[str, int]] = []
    todo = [test]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Constant) and node.value is True:
            continue                                          # if True: 总是成立
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.Or):
                fail(node, "条件只能用 and 连接：A or B 请拆成两条规则（if A: return X，再 if B: return X）")
            todo.extend(reversed(node.values))                # 倒着压栈，出栈时就是从左到右
            continue
        out.append(_compare(node, fail, seg))
    return tuple(out)


def _compare(node, fail, seg) -> tuple[str, int]:
    if not isinstance(node, ast.Compare):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            fail(node, f"条件里不能用 not（写的是 {seg(node)}）；DSL 只有上界 M/N/K <= 整数，"
                       "想要 not (M <= 16) 就把 M <= 16 的规则放在前面")
        fail(node, f"条件只能是 M/N/K 和整数的比较（如 M <= 16），或者 True，不能是 {seg(node)}；{_ALLOWED}")
    if len(node.ops) != 1:
        fail(node, "一次只能比较一次：a <= M <= b 这种写法不行（DSL 只有上界）；写成 M <= b")
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if isinstance(left, ast.Name):                            # M <= 16 / M < 17
        name, lit, upper, strict = left, right, ast.LtE, ast.Lt
    elif isinstance(right, ast.Name):                         # 16 >= M / 17 > M
        name, lit, upper, strict = right, left, ast.GtE, ast.Gt
    else:
        fail(node, f"比较的一边必须是 M、N 或 K（写的是 {seg(node)}）")
    if name.id not in AXES:
        fail(name, f"条件里只能出现 M、N、K，不能是 {_clip(name.id)}")
    if not isinstance(op, (upper, strict)):
        if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            fail(node, f"DSL 只有上界（{name.id} <= 整数）：写不了 {seg(node)}。"
                       f"把 {name.id} 较小的那条规则放在前面，后面的规则自然只管 {name.id} 更大的形状")
        fail(node, f"只能用 <= 或 < 比较（{name.id} <= 整数）；== != is in 都不行")
    t = _int_literal(lit)
    if t is None:
        fail(lit, f"{name.id} 只能和整数字面量比较，不能和 {seg(lit)} 比较")
    t = t if isinstance(op, upper) else t - 1                 # M < 17 就是 M <= 16
    if not -MAX_THRESHOLD <= t <= MAX_THRESHOLD:
        fail(lit, f"阈值 {seg(lit)} 超出范围：{_THRESHOLD_BOUND}")
    return name.id, t


def _int_literal(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _config(node, stmt, fail, seg) -> Config:
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
            fail(v, f"Config 没有字段 {_clip(name)}；字段是 {', '.join(FIELDS)}")
        if name in values:
            fail(v, f"Config 的字段 {name} 给了两次")
        if isinstance(v, ast.Constant) and type(v.value) is bool:
            fail(v, f"{name}={v.value} 是布尔值，要写正整数")
        if not (isinstance(v, ast.Constant) and type(v.value) is int and v.value > 0):
            fail(v, f"{name} 必须是正整数字面量，不能是 {seg(v)}")
        if v.value > MAX_FIELD:
            fail(v, f"{name}={seg(v)} 太大了：{_FIELD_BOUND}")
        values[name] = v.value
    missing = [f for f in FIELDS if f not in values]
    if missing:
        fail(node, f"Config 缺少字段 {', '.join(missing)}；六个字段 {', '.join(FIELDS)} 都要给")
    return Config(**values)


# ---------------------------------------------------------------- 等价与化简
#
# 每条规则管的是从 (1,1,1) 到它的角 box() 的"盒子"。所有盒子都从 (1,1,1) 开始，所以：
#   一个盒子被若干个盒子的并集盖住，当且仅当它被其中**某一个**盖住
#   （它的角落在并集里，就落在某一个盒子 A 里；A 也从 (1,1,1) 开始，于是整个盒子都在 A 里）。
# 两个盒子的交集还是这样的盒子（角取两个角的逐维最小值）。于是"某个区域里有没有形状"只要看一个点：那个角。
# 下面的判定都只看这样的角，不用枚举所有阈值的组合（那是阈值个数的三次方）。


def _lowest(bits: int) -> int:
    """位集里最小的下标。"""
    return (bits & -bits).bit_length() - 1


def _indices(bits: int):
    """位集里的下标，从小到大。"""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


class _Cover:
    """哪些盒子盖住一个点：每一维把盒子按上界排好，预先算出"这一维上界 >= v 的盒子"的位集（Python 整数当位集，
    第 i 位是第 i 个盒子）。查一个点 = 每一维二分一次、三个位集求与。"""

    def __init__(self, corners):
        self.axes = []
        for d in range(3):
            order = sorted(range(len(corners)), key=lambda i: corners[i][d])
            bounds = [corners[i][d] for i in order]
            suffix, acc = [0] * (len(order) + 1), 0
            for r in range(len(order) - 1, -1, -1):
                acc |= 1 << order[r]
                suffix[r] = acc
            self.axes.append((bounds, suffix))

    def covers(self, point) -> int:
        """角 >= point（逐维）的盒子的位集。"""
        (b0, s0), (b1, s1), (b2, s2) = self.axes
        return (s0[bisect.bisect_left(b0, point[0])] & s1[bisect.bisect_left(b1, point[1])]
                & s2[bisect.bisect_left(b2, point[2])])


def _branches(program: Program) -> tuple[list, list]:
    """程序的分支：(角的列表, 配置的列表)，没有正整数形状能走到的空盒子（某一维上界 < 1）不算，最后是默认分支
    （角是无穷大，什么形状都盖住）。"""
    corners, configs = [], []
    for bm, bn, bk, cfg in program._boxes:
        if bm >= 1 and bn >= 1 and bk >= 1:
            corners.append((bm, bn, bk))
            configs.append(cfg)
    return corners + [(NO_BOUND,) * 3], configs + [program.default]


def _min3(a, b):
    return (min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2]))


def equivalent(p: Program, q: Program) -> bool:
    """p 和 q 在每个正整数形状 (M, N, K) 上都选同一个配置吗？（精确判定，不是抽样）

    p 的第 i 个分支和 q 的第 j 个分支同时管的形状 = 两个盒子的交集（角 m = 两个角的逐维最小值），去掉 p 里 i 前面、
    q 里 j 前面的盒子。它非空当且仅当 m 不被那些盒子盖住。所以 p、q 不等价，当且仅当有一对配置不同的 (i, j) 的 m
    不被盖住。对 p 的每个分支 i：先看它的角 c 在 q 里走哪个分支 j0（配置不同就不等价了）；j0 后面的 j 不用看
    （m ≤ c 已经被 j0 盖住），只要看 j0 前面的那几个。"""
    if p == q:
        return True
    pc, pcfg = _branches(p)
    qc, qcfg = _branches(q)
    pcover, qcover = _Cover(pc), _Cover(qc)
    for i, c in enumerate(pc):
        if pcover.covers(c) & ((1 << i) - 1):
            continue                                          # 被 p 前面的盒子整个挡住：这个分支管不到任何形状
        j0 = _lowest(qcover.covers(c))                        # q 的默认分支盖住一切，所以一定有
        if qcfg[j0] != pcfg[i]:
            return False                                      # 形状 c 上两边选的配置不同
        for j in range(j0):
            if qcfg[j] == pcfg[i]:
                continue
            m = _min3(c, qc[j])
            if not (pcover.covers(m) & ((1 << i) - 1)) and not (qcover.covers(m) & ((1 << j) - 1)):
                return False                                  # 形状 m 上 p 选 i、q 选 j
    return True


def simplify(program: Program) -> Program:
    """删掉死代码，行为在每个正整数形状上都不变：
    合并同一维的重复条件、删空规则、删被前面的规则挡住的规则、删去掉也不改变行为的规则（从后往前试）。"""
    rules: list[Rule] = []
    default, default_line = program.default, program.default_line
    for r in program.rules:
        r = _merge_conds(r)
        if any(t < 1 for _, t in r.conds):
            continue                                          # 空区域：没有正整数满足 M <= 0
        if not r.conds:                                       # if True: 总会触发，它就是默认配置，后面全是死代码
            default, default_line = r.config, r.line
            break
        rules.append(r)
    n = len(rules)
    corners = [r.box() for r in rules] + [(NO_BOUND,) * 3]    # 第 n 个是默认分支
    configs = [r.config for r in rules] + [default]
    cover = _Cover(corners)
    alive = (1 << (n + 1)) - 1                                # 还留着的分支（位集）
    for i in range(n):                                        # 被前面某一条整个盖住的规则
        if cover.covers(corners[i]) & ((1 << i) - 1):
            alive &= ~(1 << i)
    for i in reversed(range(n)):                              # 从后往前试着删，每删一条都和原来等价
        if alive >> i & 1 and _removable(i, corners, configs, cover, alive):
            alive &= ~(1 << i)
    return Program(tuple(r for i, r in enumerate(rules) if alive >> i & 1), default, default_line)


def _removable(i: int, corners, configs, cover: _Cover, alive: int) -> bool:
    """删掉第 i 条（alive 里的）规则，行为变不变？第 i 条管的形状删掉以后归第一个盖住它的后面的分支 k。
    行为变了，当且仅当有一个配置不同的 k，使 i、k 的交集（角 m）不被除 i 以外、k 前面的盒子盖住。
    i 自己的角 c 归的那个分支 j 盖住了 c，也就盖住了 j 后面所有 k 的 m，所以只要看 j 和 i、j 之间的那几条。"""
    c, cfg = corners[i], configs[i]
    j = i + 1 + _lowest((cover.covers(c) & alive) >> (i + 1))
    if configs[j] != cfg:
        return False                                          # 形状 c 改走 j，配置变了
    others = alive & ~(1 << i)
    between = others & ((1 << j) - 1) & ~((1 << (i + 1)) - 1)
    for k in _indices(between):
        if configs[k] != cfg and not (cover.covers(_min3(c, corners[k])) & others & ((1 << k) - 1)):
            return False
    return True


def _merge_conds(r: Rule) -> Rule:
    """同一维出现多次只留最紧的阈值（顺序按第一次出现）。"""
    best: dict[str, int] = {}
    for f, t in r.conds:
        best[f] = min(t, best.get(f, t))
    conds = tuple(best.items())
    return r if conds == r.conds else replace(r, conds=conds)


def dead_rules(program: Program) -> list[tuple[int, str]]:
    """哪些规则写了也没用（程序照样能读、能跑，只是这几条不起作用）：[(行号, 一句说明)]，按规则的顺序。三种：
    没有正整数形状满足的条件（M <= 0）；被前面某一条整个挡住的规则；不带条件的规则（if True:）——它后面的规则
    和最后的 return 都用不到。"""
    out, live = [], []                                        # live：前面那些非空的规则
    for idx, r in enumerate(program.rules):
        r = _merge_conds(r)
        empty = [(f, t) for f, t in r.conds if t < 1]
        if empty:
            f, t = empty[0]
            out.append((idx, r.line, f"这条规则永远用不到：没有形状满足 {f} <= {t}（M、N、K 都至少是 1）"))
        elif not r.conds:
            n_after = len(program.rules) - idx - 1
            after = f"它后面的 {n_after} 条规则和最后的 return" if n_after else "最后的 return"
            out.append((idx, r.line, f"这条规则没有条件（if True），所有形状都在这里返回：{after}都永远用不到；"
                                "要让后面的代码起作用，给它加上条件，或者把它挪到最后"))
            break
        else:
            live.append((idx, r))
    cover = _Cover([r.box() for _, r in live])
    for pos, (idx, r) in enumerate(live):
        first = _lowest(cover.covers(r.box()) & ((1 << pos) - 1))
        if first >= 0:
            q = live[first][1]
            where = f"第 {q.line} 行的规则" if q.line else f"前面第 {first + 1} 条规则"
            cond = " and ".join(f"{f} <= {t}" for f, t in q.conds)
            out.append((idx, r.line, f"这条规则永远用不到：它管的形状都先被{where}（if {cond}:）接走了——那条的条件更宽；"
                                f"想让它起作用，把它挪到那条前面"))
    return [(line, text) for _, line, text in sorted(out, key=lambda x: x[0])]

# ---------------------------------------------------------------- SEARCH/REPLACE 修改（在 diff.py 里；这里转引，老的 import 照样能用）

from .diff import Diff, DiffError, apply_diff, format_diff, make_diff, parse_diff  # noqa: E402,F401
