"""
第 14 讲 · evolve.source —— 源代码 -> 程序：parse，以及学生写错时的那一句话。

parse(源代码) 读出第一对 EVOLVE-BLOCK 标记之间的 def choose_config(M, N, K)，变成 program.Program（DSL 的类型和界都在 program.py：
本模块 import 它，反过来不 import）。三条读法，
读出的程序一样（tests 检查），只是快慢不同：
  1. render 的固定格式：整段一个正则，每一对 if / return 行的结果缓存（进化时要读上万个子程序，它们和父程序
     大多只差一两条规则）；
  2. 学生和 LLM 常写的样子（elif / else、<、反着写的比较、位置参数、注释）：逐行用正则认一个保守的子集；
  3. 其余的交给 ast：什么写法都能给出带行号、用学生的话说的说明（全角标点、x = 1、改了名字的函数……）。
     认不出来的那一句要是自己就错了，先单独读它，不必把上万行的文件交给 ast 读一遍。
从不 eval / exec；除了 ProgramError 不抛别的异常；不递归（很长的 elif 链也行）；不打印任何东西。
ignored_code 找出文件里会被忽略的代码（第二个 EVOLVE 块、标记外面的 def choose_config、块里的 import）。
"""

from __future__ import annotations

import ast
import functools
import os
import re
import warnings

from kernel_lab import FIELDS, GRID, Config

from .program import AXES, BLOCK_END, BLOCK_START, MAX_FIELD, MAX_THRESHOLD, Program, Rule, full_stop


class ProgramError(ValueError):
    """源代码不是合法的 DSL 程序。str 是 "文件名:行号: 说明"，说明里写 DSL 允许什么。"""

    def __init__(self, filename: str, lineno: int, message: str):
        message = full_stop(message)
        super().__init__(f"{filename}:{lineno}: {message}")
        self.filename, self.lineno, self.message = filename, lineno, message

    def __reduce__(self):
        return ProgramError, (self.filename, self.lineno, self.message)


class EmptyExpertError(ProgramError):
    """学生把专家文件清空了（或者两条标记之间是空的）：照它写就是照空文件写，这句话告诉他怎么恢复。restore 是恢复
    的命令；这里只会写仓库根目录下的那一种，evolve.problem 换成从当前目录照抄就能跑的（problem.restore_command）。"""

    def __init__(self, filename: str, lineno: int, restore: str = "git checkout lecture14/expert_heuristic.py"):
        super().__init__(filename, lineno, f"这个文件（或者两条标记之间）是空的：恢复讲义的那份用 {restore}（或者拷一份 "
                                           "lecture14/evolve/lecture_expert.py 过来），再改")
        self.restore = restore

    def __reduce__(self):
        return EmptyExpertError, (self.filename, self.lineno, self.restore)


_ALLOWED = ("DSL 只允许：if 条件: return Config(...)（也可以用 elif / else），最后一句不带条件的 return Config(...)；"
            "条件是 M/N/K <= 整数（或 < 整数），用 and 连接")
_THRESHOLD_BOUND = f"阈值要是 {-MAX_THRESHOLD:,} 到 {MAX_THRESHOLD:,} 之间的整数"
_FIELD_BOUND = f"Config 的字段要是 1 到 {MAX_FIELD:,} 之间的整数"
_SHOW = 60                                  # 出错信息里最多引用源代码的这么多个字符


_SYNTAX_WORDS = [                 # ast.parse 的英文语法错误 → 学生的话（没列的：一句中文，原话放在括号里）。
                                  # 重复的字段、函数外的 return 不在这里：ast.parse 不报，下面读 DSL 时自己说
    (r"^expected ':'$", "这一行末尾少了一个冒号 :（if 和 def 那一行都要以半角冒号结尾）"),
    (r"^invalid syntax$", "这一行不是合法的 Python。" + _ALLOWED),
    (r"^unexpected indent$", "这一行缩进多了（和上一行不对齐）"),
    (r"^expected an indented block.*$", "下一行要缩进（if、def 那一行下面的 return 要多缩进 4 个空格）"),
    (r"^unindent does not match any outer indentation level$", "这一行的缩进和上面哪一行都对不上：同一层的行要缩进一样多（每层 4 个空格；"
     "文件里要是有 Tab，也换成空格）"),   # 学生报过：一个 Tab 也没有（缩进是 6 和 5 个空格），却问"空格和 Tab 混用了？"
    (r"^'(.)' was never closed$", r"括号 \1 没有配对的另一半"),
    (r"^unmatched '(.)'$", r"多了一个 \1（前面没有配对的括号）"),
    (r"^invalid character '(.)' \(U\+([0-9A-F]+)\)$", r"这里有一个 Python 不认的字符 \1（U+\2），多半是全角标点：换成半角的"),
    (r"^unterminated string literal.*$", "引号没有配对"),
    (r"^invalid syntax\. Maybe you meant '==' or ':=' instead of '='\?$",
     "条件里写了一个 =（那是赋值）：比较要写 <=，比如 if M <= 16:"),
    (r"^invalid syntax\. Perhaps you forgot a comma\?$", "这里少了一个逗号（Config 的字段之间用半角逗号 , 隔开）"),
    (r"^inconsistent use of tabs and spaces in indentation$",
     "这一行和上面几行的缩进，一边用 Tab、一边用空格（Tab 可能在上面那几行里）：全部换成空格（每层 4 个）"),
    (r"^unexpected character after line continuation character$", "这一行有一个多余的反斜杠 \\\\：删掉它"),
    (r"^invalid decimal literal$", "数字后面紧跟着字母（比如 16M）：阈值和字段都只能是整数"),
    (r"^leading zeros in decimal integer literals are not permitted.*$", "整数前面不能补 0（比如写 64，不写 064）"),
    (r"^positional argument follows keyword argument$", "Config 里每个字段都要写成 名字=值（比如 BM=128）"),
    (r"^closing parenthesis '(.)' does not match opening parenthesis '(.)'.*$", r"右括号 \1 和前面的左括号 \2 配不上"),
]


def _syntax_in_words(msg: str) -> str:
    """Python 的语法错误说成学生的话；没列到的也先说一句中文，原话放在括号里（截断）。"""
    for pattern, words in _SYNTAX_WORDS:
        if re.match(pattern, msg):
            return re.sub(pattern, words, msg)
    return f"这一行不是合法的 Python（Python 的原话：{_clip(msg, 200)}）。" + _ALLOWED


def _clip(text: str, n: int = _SHOW) -> str:
    """引用一段源代码：太长就截断，看不见的控制字符写成 \\x01 这样。"""
    short = text[:n]
    if not short.isprintable():
        short = "".join(c if c.isprintable() else repr(c)[1:-1] for c in short)
    return short + ("……" if len(text) > n else "")


def _marker(source: str, name: str, begin: int = 0) -> int:
    """从 begin 起第一个单独成行的 "# 标记" 所在行的行首位置；没有就返回 -1。
    一行里第一个标记词前面不只是 "#" 和空白的话，这一行后面的标记词前面就更不是了：直接跳到下一行，
    所以每一行最多往回看一次，一行里有几十万个标记词也是线性的。"""
    pos = begin
    while True:
        at = source.find(name, pos)
        if at < 0:
            return -1
        line_start = source.rfind("\n", 0, at) + 1
        if source[line_start:at].replace(" ", "").replace("\t", "") == "#":
            return line_start
        pos = source.find("\n", at) + 1
        if pos == 0:
            return -1


def _block(source: str, filename: str) -> tuple[int, str]:
    """(标记之前有几行, 标记之间的文本)；没有标记就是整个文件。"""
    start = _marker(source, "EVOLVE-BLOCK-START")
    if start < 0:
        end = _marker(source, "EVOLVE-BLOCK-END")
        if end >= 0:
            raise ProgramError(filename, source.count("\n", 0, end) + 1,
                               f"有 {BLOCK_END} 却没有 {BLOCK_START}：两行标记要成对，在 def choose_config 那一行的"
                               f"前面补上一行 {BLOCK_START}")
        return 0, source
    begin = source.find("\n", start) + 1                      # 标记的下一行
    end = _marker(source, "EVOLVE-BLOCK-END", begin) if begin > 0 else -1
    if end < 0:
        before = _marker(source, "EVOLVE-BLOCK-END")           # END 在 START 前面：不是少了一行，是顺序反了
        if 0 <= before < start:                                # （审读报过：照"补上一行 END"做，还是同一句话）
            raise ProgramError(filename, source.count("\n", 0, start) + 1,
                               f"{BLOCK_END}（第 {source.count(chr(10), 0, before) + 1} 行）在 {BLOCK_START} 的前面："
                               f"两行标记的顺序反了；把 {BLOCK_START} 挪到 def choose_config 那一行的前面、{BLOCK_END} "
                               "挪到 choose_config 最后一行的后面")
        raise ProgramError(filename, source.count("\n", 0, start) + 1,
                           f"有 {BLOCK_START} 却没有 {BLOCK_END}：两行标记要成对，在 choose_config 最后一行的后面"
                           f"补上一行 {BLOCK_END}")
    return source.count("\n", 0, begin), source[begin:end]


def ignored_code(source: str) -> list[tuple[int, str]]:
    """文件里会被忽略的代码：[(行号, 一句说明)]。parse 只读第一对 EVOLVE-BLOCK 标记之间的文本，所以第二个 EVOLVE 块、
    标记外面的 def choose_config 都不起作用——学生多半以为它们起作用；块里的 import 也一样（程序只被读、不被执行）。
    没有标记时整个文件都读，没有什么被忽略（文件头的 from kernel_lab import Config 是让它也是合法的 Python）。
    （找 def 用 ast 读整个文件：说明文字里写的 def 不算；整个文件不是合法的 Python 时就不找了。）"""
    start = _marker(source, "EVOLVE-BLOCK-START")
    if start < 0:
        return []
    begin = source.find("\n", start) + 1
    end = _marker(source, "EVOLVE-BLOCK-END", begin) if begin > 0 else -1
    if end < 0:
        return []
    first, last = source.count("\n", 0, start) + 1, source.count("\n", 0, end) + 1    # 两行标记的行号
    after = source.find("\n", end) + 1 if source.find("\n", end) >= 0 else len(source)
    second = _marker(source, "EVOLVE-BLOCK-START", after)
    out = []
    # 学生报过：README 那段（连同两行标记）贴进了原来的两行标记之间，文件里成了 START START … END END，一声不吭
    inner = _marker(source, "EVOLVE-BLOCK-START", begin)
    if 0 <= inner < end:
        out.append((source.count("\n", 0, inner) + 1, f"这是块里面又一行 {BLOCK_START}：读的时候当它是注释；整段换代码时"
                                                       "连同原来的两行标记一起换，不要把标记也贴进两行标记之间"))
    stray = _marker(source, "EVOLVE-BLOCK-END", after)
    if stray >= 0 and (second < 0 or stray < second):
        out.append((source.count("\n", 0, stray) + 1, f"这一行 {BLOCK_END} 多余：第一个块在第 {last} 行已经结束，"
                                                       "它后面、这一行前面的代码不会被读；删掉多的那一对标记"))
    if second >= 0:
        second = source.count("\n", 0, second) + 1
        out.append((second, "这是第二个 EVOLVE 块，不会被读：只读第一个 "
                            f"{BLOCK_START} … {BLOCK_END} 之间的代码；把这里的规则挪进第一个块里"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    for node in tree.body if tree is not None else ():
        if isinstance(node, (ast.Import, ast.ImportFrom)) and first < node.lineno < last:
            # 学生报过：块里写 import math，运行一声不吭——程序只被读、不被执行，import 什么都不做
            out.append((node.lineno, "这行 import 不起作用：两条标记之间的代码只被读、不被执行，choose_config 里只能用 "
                                     "M、N、K、数字、if 和 return Config(...)，用不到模块；可以删掉"))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "choose_config" \
                and not first < node.lineno < last and not (second >= 0 and node.lineno > second):
            out.append((node.lineno, f"这个 def choose_config 在 {BLOCK_START} … {BLOCK_END} 外面，不会被读："
                                     "只有两行标记之间的那一个算数；要改就改标记之间的代码"))
    return sorted((line, full_stop(text)) for line, text in out)


def find_block(source: str, filename: str = "<program>") -> tuple[int, str]:
    """(标记之前有几行, 第一对 EVOLVE-BLOCK 标记之间的原文)；没有标记就是 (0, 整个文本)。标记不成对抛 ProgramError。"""
    return _block(source, filename)


def parse(source: str, filename: str = "<program>") -> Program:
    """把源代码读成程序；不合法就抛 ProgramError（行号是文件里的真实行号）。除了 ProgramError 不抛别的异常，
    不打印任何东西（Python 的 SyntaxWarning 也不让它印出来）。"""
    if not isinstance(source, str):
        raise ProgramError(filename, 1, f"源代码应该是一段文本，却是 {type(source).__name__}")
    return _parse_cached(source, str(filename))


@functools.lru_cache(maxsize=256)
def _parse_cached(source: str, filename: str) -> Program:
    offset, block = _block(source, filename)
    program = _parse_rendered(offset, block)
    if program is None:
        program, stop = _scan_lines(offset, block)
        if program is None and stop is not None:
            _statement_error(block, stop, offset, filename)   # 认不出的那一句自己就错了：直接报它，不用读整个文件
    return program if program is not None else _parse_ast(block, filename, offset)


# render 的输出格式是固定的，逐行用正则就能认出来，比 ast.parse 快十几倍（进化时要读上万个子程序，
# 它们和父程序大多只差一条规则，所以每一行的结果也缓存起来）。
# 认不出来的（学生手写的 elif、位置参数、注释、超出范围的数……）交给后面的 ast 读法；两条路读出的程序相同（tests 检查）。
_INT = r"-?(?:0|[1-9][0-9]{0,9})"
_IF_RE = re.compile(rf"    if (True|[MNK] <= {_INT}(?: and [MNK] <= {_INT})*):")
_RETURN_RE = re.compile(r" *return Config\(" + ", ".join(f"{f}=([1-9][0-9]{{0,4}})" for f in FIELDS) + r"\)")


# 最后一行的 [^\n]*+ 是占有的（不回吐）：普通的 [^\n]* 后面跟着 [ \n]*，一行里一长串空格时两个量词反复分那串空格，
# 平方级（一行 4 万个空格要 9 秒）。回吐的只会是空格，而后面的 [ \n]* 本来就接受它们，所以认出的程序不变。
_RENDERED_RE = re.compile(r"def choose_config\(M, N, K\):\n((?:    if [^\n]*\n        return [^\n]*\n)*)(    return [^\n]*+)[ \n]*")


def _parse_rendered(offset: int, block: str) -> Program | None:
    """认出 render 的输出格式就返回程序，否则返回 None。第 i 条规则在第 offset + 2 + 2i 行。
    整段的样子用一个正则查（C 的速度），每一对 if / return 行的结果缓存起来（子程序和父程序大多只差一两条规则）。"""
    m = _RENDERED_RE.fullmatch(block)
    if m is None:
        return None
    body = m.group(1).split("\n")[:-1]
    n = len(body) // 2
    rules = list(map(_rendered_rule, body[0::2], body[1::2], range(offset + 2, offset + 2 + 2 * n, 2)))
    if not all(rules):                                        # 有一对认不出来（Rule 的真值总是 True）
        return None
    default = _rendered_config(m.group(2))
    return None if default is None else Program(tuple(rules), default, offset + 2 + 2 * n)


@functools.lru_cache(maxsize=16384)
def _rendered_rule(if_line: str, return_line: str, lineno: int) -> Rule | None:
    """一对 if / return 行 -> 行号是 lineno 的规则；认不出来是 None。前面插了一条规则，后面每条的行号都变了，
    所以先按两行的文本查"模板"，再复制一份换上行号（比重新构造 Rule 便宜）。"""
    rule = _rendered_template(if_line, return_line)
    if rule is None or rule.line == lineno:
        return rule
    clone = object.__new__(Rule)
    clone.__dict__.update(rule.__dict__)
    clone.__dict__["line"] = lineno
    return clone


@functools.lru_cache(maxsize=16384)
def _rendered_template(if_line: str, return_line: str) -> Rule | None:
    m = _IF_RE.fullmatch(if_line)
    config = _rendered_config(return_line) if m else None
    if config is None:
        return None
    cond = m.group(1)
    conds = () if cond == "True" else tuple((c[0], int(c[5:])) for c in cond.split(" and "))   # "M <= 16"
    if any(not -MAX_THRESHOLD <= t <= MAX_THRESHOLD for _, t in conds):
        return None                                           # 超出范围：让 ast 读法给出说明
    return Rule(conds, config)


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
_TERM_RE = re.compile(rf"([MNK])\s*(<=|<)\s*({_INT})|({_INT})\s*(>=|>)\s*([MNK])|True")
_CODE_BAD = re.compile(r"[^ -~]|[\\;'\"]")                 # 不可打印的、非 ASCII 的字符，反斜杠、分号、引号
_DEF_RE = re.compile(r"def\s+choose_config\s*\(\s*M\s*,\s*N\s*,\s*K\s*\)\s*:")
_CONFIG_RE = re.compile(r"( {4}| {8})return\s+Config\s*\(([^()]*)\)")
_DOC_RE = re.compile(r'    """[^"\\]*"""|    \'\'\'[^\'\\]*\'\'\'')   # 函数开头一行的说明文字


def _branch(line: str) -> tuple[str, str] | None:
    """缩进 4 格的 if 条件: / elif 条件: / else: -> ("if" 或 "elif", 条件的文本) / ("else", "")；别的返回 None。
    用字符串操作而不是带 .+? 和 \\s* 的正则：那样的正则遇到一长串空格会回溯到平方甚至立方级。"""
    if not line.endswith(":"):
        return None
    head = line[:-1].rstrip(" ")
    if head == "    else":
        return "else", ""
    for kw in ("if", "elif"):
        if head.startswith(f"    {kw} "):
            return kw, head[len(kw) + 5:]
    return None


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
    branch = _branch(line)
    if branch is not None:
        if branch[0] == "else":
            return ("else",)
        terms, words = [[]], branch[1].split()               # 按空白切成词，再按 and 分组（不用正则：不会回溯）
        for w in words:
            if w == "and":
                terms.append([])
            else:
                terms[-1].append(w)
        conds = []
        for term in terms:
            t = _TERM_RE.fullmatch(" ".join(term))
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
        return (branch[0], tuple(conds))
    m = _CONFIG_RE.fullmatch(line)
    if m:
        args = [a.strip(" ") for a in m.group(2).split(",")]
        if args and args[-1] == "" and len(args) > 1:
            args.pop()                                        # 结尾多一个逗号也行
        values: dict[str, int] = {}
        keyword = False                                       # 已经有过关键字参数
        for k, a in enumerate(args):
            name, eq, val = a.partition("=")
            keyword = keyword or bool(eq)
            if not eq:
                if keyword or k >= len(FIELDS):
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
    return _scan_lines(offset, block)[0]


def _scan_lines(offset: int, block: str) -> tuple[Program | None, int | None]:
    """(程序, None)；认不出来时 (None, 第一句认不出的代码在 block 里的行下标)，不知道是哪一句时 (None, None)。"""
    if "\r" in block or "\x00" in block:
        return None, None                                     # Python 把单独的 \r 也当换行：交给 ast
    if not block.isascii():
        try:
            block.encode("utf-8")
        except UnicodeEncodeError:                            # 落单的代理字符：ast 会报错，这里也不认
            return None, None
    rules: list[Rule] = []
    state = "start"             # start → body（函数里）→ want_return（if 后面要一句 return）→ … → done（默认配置读到了）
    pending = None              # 刚读到的 if / elif：(行号, 条件)；else 是 None
    doc = False                 # 读到过函数开头的说明文字
    if_k = 0                    # 刚读到的 if / elif 在 block 里的行下标
    chain = False               # 上一条是 if/elif 的分支：后面可以接 elif / else
    default = None
    for k, raw in enumerate(block.split("\n")):
        if state == "body" and not rules and _DOC_RE.fullmatch(raw.rstrip(" ")):
            if doc:
                return None, k
            doc = True                                        # 函数开头的说明文字（只能有一句）
            continue
        code = raw.split("#", 1)[0].rstrip(" ")
        kind = _line_kind(code)
        if kind is None:                                      # 这一句（或者 if 下面的 return）认不出来
            return None, (k if state == "body" else if_k if state == "want_return" and pending else None)
        tag = kind[0]
        if tag == "blank":
            continue
        lineno = offset + k + 1
        if state == "start":
            if tag != "def" or code != code.lstrip(" "):
                return None, None
            state = "body"
        elif state == "body":
            if tag == "if" or (tag == "elif" and chain):
                pending, state, if_k = (lineno, kind[1]), "want_return", k
            elif tag == "else" and chain:
                pending, state = None, "want_return"
            elif tag == "return" and kind[1] == 4:
                default, state = (kind[2], lineno), "done"
            else:
                return None, k
        elif state == "want_return":
            if tag != "return" or kind[1] != 8:
                return None, if_k if pending is not None else None
            if pending is None:                               # else: 的 return 就是默认配置
                default, state = (kind[2], lineno), "done"
            else:
                rules.append(Rule(pending[1], kind[2], pending[0]))
                state, chain = "body", True
        else:                                                 # 默认配置之后只能有空行和注释
            return None, None
    if default is None:
        return None, None
    return Program(tuple(rules), default[0], default[1]), None


_DUMMY_RETURN = "    return Config(BM=16, BN=16, BK=32, warps=2, stages=1, group=1)\n"


def _statement_error(block: str, k: int, offset: int, filename: str) -> None:
    """block 的第 k 行起的那一句（函数体里缩进 4 格的一句，连同它下面缩进更深的行）单独拿出来按 DSL 读：
    它自己就是错的（Python 语法没问题、DSL 不认），就抛那个 ProgramError——前面的都认得，这就是第一个错，
    不用把上万行的文件交给 ast 读一遍。单独读不了（语法错误、或者它其实没错）就什么也不做，交给整个文件的 ast 读法。"""
    lines = block.split("\n")
    if k < 1 or not lines[k].startswith("    ") or lines[k].startswith("     "):
        return
    stmt = [lines[k]]
    for line in lines[k + 1:k + 50]:
        if line.strip(" ") and not line.startswith("     "):
            break
        stmt.append(line)
    head = "\n" * (offset + k - 1) + "def choose_config(M, N, K):\n" + "\n".join(stmt) + "\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(head)
        alone_is_return = isinstance(tree.body[0].body[0], ast.Return)
    except Exception:                                         # noqa: BLE001  （单独读不了：交给整个文件的读法）
        return
    _parse_ast(head if alone_is_return else head + _DUMMY_RETURN, filename)    # 它错了就在这里抛 ProgramError





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
               "\u200b": "看不见的零宽空格（U+200B）", "\ufeff": "看不见的 BOM 字符（U+FEFF，有的编辑器会在文件开头加上它）",
               "≤": "数学符号 '≤'", "≦": "数学符号 '≦'", "“": "中文的引号 '“'", "”": "中文的引号 '”'",
               "‘": "中文的引号 '‘'", "’": "中文的引号 '’'", "、": "顿号 '、'"}    # 这几个不是"全角"（学生报过 ≤）


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


# 把比较符号的两个字反着敲（=< 、=>）：Python 只说 invalid syntax，学生盯着 M、16 找不到错
_REVERSED_OPERATORS = {"=<": "<=", "=>": ">="}


def _reversed_operator(line: str) -> str | None:
    """这一行（# 后面的注释不算）里第一个反着敲的比较符号，说成一句话；没有就返回 None。"""
    code = line.split("#", 1)[0]
    for typo, want in _REVERSED_OPERATORS.items():
        if typo in code:
            return f"这一行写的是 {typo}：Python 没有这个符号，要写成 {want}（先 {want[0]}，后 =）。" + _ALLOWED
    return None


# 语句的种类 -> 学生会怎么说它（DSL 不支持的语句）
_STATEMENT_WORDS = {
    "Assign": "DSL 没有变量：不能先算出一个值存起来再用",
    "AugAssign": "DSL 没有变量：不能写 x += …",
    "AnnAssign": "DSL 没有变量：不能写 x: int = …",
    "Expr": "这一行只是一个单独的表达式（比如 print(...) 或一个函数调用），DSL 里不能这样写",
    "Pass": "DSL 里用不着 pass：每个 if 下面写一句 return Config(...)；不想要这条规则就把整个 if 删掉",
    "For": "DSL 没有 for 循环", "While": "DSL 没有 while 循环", "AsyncFor": "DSL 没有 async for 循环",
    "FunctionDef": "choose_config 里面不能再定义函数", "AsyncFunctionDef": "choose_config 里面不能再定义函数",
    "ClassDef": "DSL 里不能定义类", "Import": "DSL 用不到 import（程序只被读、不被执行）：删掉这一行",
    "ImportFrom": "DSL 用不到 import（程序只被读、不被执行）：删掉这一行",
    "Try": "DSL 里不能写 try", "TryStar": "DSL 里不能写 try", "With": "DSL 里不能写 with",
    "Raise": "DSL 里不能写 raise", "Assert": "DSL 里不能写 assert", "Delete": "DSL 里不能写 del",
    "Global": "DSL 没有变量：不能写 global", "Nonlocal": "DSL 没有变量：不能写 nonlocal",
    "Return": "return 在函数外面了（它要缩进在 def choose_config(M, N, K): 下面）",
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
            if isinstance(node, ast.stmt):                    # for / while / try / def……占好几行：只引"这一行"，
                return _clip(lines[0][node.col_offset:].rstrip())   # 不把下面几行连同缩进的空格接成一串
            parts = [lines[0][node.col_offset:]] + lines[1:-1] + [lines[-1][:node.end_col_offset]]
            return _clip(" ".join(part.strip() for part in parts))   # 折成几行的表达式：接成一行，去掉缩进
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
        if hint is None and lineno <= len(lines):
            hint = _reversed_operator(lines[lineno - 1])
        if hint is None and 2 <= lineno <= len(lines) + 1 and lines[lineno - 2].rstrip().endswith("\\"):
            lineno -= 1                                       # 行末的反斜杠把下一行接了上来：Python 报的是下一行
            hint = "这一行末尾有一个反斜杠 \\，它把下一行接到了这一行后面：删掉它"
        if hint is None and "limit" in str(e.msg) and "digits" in str(e.msg):   # 超过 4300 位的整数，Python 都不读
            hint = f"这个数太长了（几千位）：{_THRESHOLD_BOUND}，{_FIELD_BOUND}"
        raise ProgramError(filename, lineno, hint or f"Python 语法错误：{_syntax_in_words(str(e.msg))}") from None
    except (RecursionError, MemoryError):                     # 括号、not、负号一层套一层，解析器的栈不够用
        raise ProgramError(filename, offset + 1, "代码嵌套太深，Python 的解析器读不了（上千个 elif 连成一串，或者括号、not、负号一层套一层）："
                                               "很长的 elif 链请写成一串 if（意思一样）；" + _ALLOWED) from None
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
            fail(node, f"{words}（这一行写的是 {seg(node)}）；函数外面只能有 import 和说明文字，程序必须是一个 def choose_config(M, N, K):")
    if fn is None:
        if not block.strip():
            if os.path.basename(filename) == "expert_heuristic.py":      # 学生把专家文件清空了：照它写就是照空文件写
                raise EmptyExpertError(filename, offset + 1)
            raise ProgramError(filename, offset + 1, "这个文件（或者两条标记之间）是空的：照 "
                                                     "lecture14/expert_heuristic.py 的样子写一个 def choose_config(M, N, K):")
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


def _statement_words(node) -> str:
    """DSL 不支持的一句，学生的话。单独一行字符串（学生当注释写的说明）说用 # 写注释，不说"单独的表达式"。"""
    if _is_docstring(node):
        return "单独一行字符串不是规则，说明文字要写成 # 开头的注释"
    return _STATEMENT_WORDS.get(type(node).__name__, "这里不能写这种语句")


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
                if bad is not st.body[0]:                     # 分支里 return 之后还有语句
                    fail(bad, "if 的分支里 return 之后还有代码，永远执行不到：删掉它（分支里只能有一句 return Config(...)）")
                # 学生报过：函数里的 x = 1、pass、print(M) 各有一句学生的话，写在 if 下面却只说"只能有一句 return"
                words = _statement_words(bad)
                fail(bad, words if isinstance(bad, ast.Pass) else
                     f"{words}（这一行写的是 {seg(bad)}）；if 的分支里只能有一句 return Config(...)")
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
            fail(st, f"{_statement_words(st)}（这一行写的是 {seg(st)}）；{_ALLOWED}")
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


_EXAMPLE = {"M": 16, "N": 4096, "K": 4096}                    # 出错信息里举例用的阈值（讲义的形状里常见的）


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
        # 学生报过：if M % 2 == 0: 得到"比较的一边必须是 M、N 或 K"——M 明明就在左边。M 在一个算式里时说不能算
        dims = [n.id for side in (left, right) if isinstance(side, (ast.BinOp, ast.UnaryOp))
                for n in ast.walk(side) if isinstance(n, ast.Name) and n.id in AXES]
        if dims:
            fail(node, f"条件里不能拿 {dims[0]} 做运算（%、+、-、*、// 都不行，这里写的是 {seg(node)}）：DSL 只能拿 M、N、K "
                       f"本身和一个整数比大小，比如 {dims[0]} <= {_EXAMPLE[dims[0]]}，按大小分档写成几条规则")
        fail(node, f"比较的一边必须是 M、N 或 K 本身，另一边是一个整数，比如 M <= 16（这里写的是 {seg(node)}）")
    if name.id not in AXES:
        fail(name, f"条件里只能出现 M、N、K，不能是 {_clip(name.id)}")
    if not isinstance(op, (upper, strict)):
        if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            fail(node, f"DSL 只有上界（{name.id} <= 整数）：写不了 {seg(node)}。"
                       f"把 {name.id} 较小的那条规则放在前面，后面的规则自然只管 {name.id} 更大的形状")
        fail(node, f"只能用 <= 或 < 比较（{name.id} <= 整数）；== != is in 都不行")
    t = _int_literal(lit)
    if t is None:
        quoted = isinstance(lit, ast.Constant) and isinstance(lit.value, str)     # M <= "16"：去掉引号就对了
        fail(lit, f"{name.id} 只能和一个写出来的整数比较，比如 {name.id} <= {_EXAMPLE[name.id]}，不能和 {seg(lit)} 比较"
                  + ("（去掉引号）" if quoted else ""))
    written, t = t, (t if isinstance(op, upper) else t - 1)  # M < 17 就是 M <= 16
    if not -MAX_THRESHOLD <= t <= MAX_THRESHOLD:
        # 写出来的数在范围里、减 1 以后才出界（M < -1000000000）：说它读成了什么，免得"这个数明明在范围里"
        read = f"（{seg(node)} 就是 {name.id} <= {t}）" if -MAX_THRESHOLD <= written <= MAX_THRESHOLD else ""
        fail(lit, f"阈值 {seg(lit)} 超出范围{read}：{_THRESHOLD_BOUND}")
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
            fail(v, f"{name} 必须是正整数字面量，不能是 {seg(v)}；{name} 的候选值是 "     # 学生报过：warps=4.5 只说
                    f"{', '.join(map(str, GRID[name]))}（第 10 讲的配置空间）")           # 不行，不说能写什么
        if v.value > MAX_FIELD:
            fail(v, f"{name}={seg(v)} 太大了：{_FIELD_BOUND}，而且 {name} 的候选值只有 "   # 一次说全：改到 4096
                    f"{', '.join(map(str, GRID[name]))}（第 10 讲的配置空间）")        # 还会被能不能启动挡下
        values[name] = v.value
    missing = [f for f in FIELDS if f not in values]
    if missing:
        fail(node, f"Config 缺少字段 {', '.join(missing)}；六个字段 {', '.join(FIELDS)} 都要给")
    return Config(**values)
