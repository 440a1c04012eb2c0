"""
第 1 讲 · console —— 全课程共用的终端输出：标题、表格、观察。中文字符占两列，所以一律按"显示宽度"对齐和折行。

    print_header(title)            空一行，再印 ==== / 标题 / ====
    print_table(headers, rows)     按显示宽度对齐的表格；像数字的单元格右对齐
    check(ok, text, criterion, measured)
                                   一句观察当作数据：成立时说 text；不成立时说"【本次不成立】"、讲义的判据和这次量到的值
    print_observations(items)      "观察：" 加编号的几段话，按终端宽度折行，续行缩进到编号之后；
                                   items 里可以是 Observation（会被检验的说法），也可以是普通字符串（引用、说明，不是论断）
    failed(items)                  items 里不成立的那些 Observation（测试和统计从数据数，不 grep 文字）
    print_note(text)               一段说明（表格的图例、列的含义），按终端宽度折行
    print_try(items)               "可以试试：" 每条一句说明、一行完整的命令

只用标准库；导入时不打印任何东西。
"""

from __future__ import annotations

import re
import shutil
import sys
import unicodedata
from dataclasses import dataclass

MIN_WIDTH, MAX_WIDTH, PIPE_WIDTH = 60, 160, 100    # 终端宽度的上下限；输出不是终端时用 100 列
OPENING = "（「『《【〔"                             # 不放在行尾的全角开括号
CLOSING = "，。、；：！？）」』》】〕"                 # 不放在行首的全角标点
FAILED = "【本次不成立】"                          # 不成立的观察的标记：折行时永远不拆开（grep 得到，一行一个）
UNBREAKABLE = (FAILED,)                           # 折行时当作一个字的片段


@dataclass(frozen=True)
class Observation:
    """一句会被检验的观察。ok：这次运行支不支持它；text：成立时印的话；criterion：判据（讲义的说法，用文字写出阈值）；
    measured：这次量到的值。不成立时印"【本次不成立】判据……；这次……"，判据和量到的值都看得见。"""
    ok: bool
    text: str
    criterion: str
    measured: str

    def __str__(self) -> str:
        if self.ok:
            return self.text
        return f"{FAILED}{_sentence(self.criterion)}这次：{_sentence(self.measured)}"


def _sentence(s: str) -> str:
    """补上句号（已经以句末标点结尾的不补）。"""
    s = s.strip()
    return s if not s or s[-1] in "。！？）" else s + "。"


def check(ok, text: str, criterion: str, measured: str) -> Observation:
    """一句观察：ok 为真就说 text；否则说它不成立，并写出判据 criterion（"讲义说……"）和量到的 measured。"""
    return Observation(bool(ok), text, criterion, measured)


def fmt(x: float, digits: int = 0, bounds=(), percent: bool = False) -> str:
    """把 x 印成 digits 位小数（percent=True 时先乘 100、后面加 %）；如果四舍五入以后和 bounds 里某个界（同样的单位，
    percent 时也写成比例，例如 0.75）或 0、1 的大小关系变了（0.7496 印成 75% 而判据是 ≥ 75%；0.004 印成 0%），
    就多印一位，最多 6 位。印出来的数从不和判据、和表里的计数互相矛盾。"""
    scale = 100.0 if percent else 1.0
    marks = [b * scale for b in (*bounds, 0.0)] + ([scale] if percent else [])
    v = x * scale
    for d in range(digits, 7):
        r = round(v, d)
        if all((r < b) == (v < b) and (r > b) == (v > b) for b in marks):
            break
    return f"{v:.{d}f}" + ("%" if percent else "")


def failed(items) -> list[Observation]:
    """items 里不成立的观察（普通字符串不是论断，不算）。"""
    return [o for o in items if isinstance(o, Observation) and not o.ok]


def display_width(s: str) -> int:
    """字符串在终端里占几列：宽字符、全角字符 2 列，组合字符 0 列，其余 1 列。"""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in s)


def wrap_width() -> int:
    """折行宽度：终端的列数，限制在 60–160；输出不是终端（管道、重定向）时固定 100，同样的运行印出同样的字节。"""
    if not sys.stdout.isatty():
        return PIPE_WIDTH
    return min(max(shutil.get_terminal_size(fallback=(PIPE_WIDTH, 24)).columns, MIN_WIDTH), MAX_WIDTH)


def _kind(ch: str) -> str:
    """字符的种类：空格 " "、宽字符 "w"（汉字、全角标点）、其余 "n"（西文字母、数字、半角符号）。"""
    return " " if ch == " " else "w" if display_width(ch) == 2 else "n"


def _tokens(text: str) -> list[str]:
    """切成可以在其间换行的小段：一串空格、一个宽字符、一个不含空格的西文词 / 数字，或一整个 UNBREAKABLE 片段
    （"【本次不成立】"永远在同一行）。"""
    out: list[str] = []
    pieces = re.split("(" + "|".join(map(re.escape, UNBREAKABLE)) + ")", text)
    for piece in pieces:
        if piece in UNBREAKABLE:
            out.append(piece)
            continue
        for ch in piece:
            if out and _kind(ch) != "w" and out[-1] not in UNBREAKABLE and _kind(out[-1][-1]) == _kind(ch):
                out[-1] += ch                              # 同一个西文词、同一串空格连在一起
            else:
                out.append(ch)
    return out


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """把一段文字按显示宽度折成每行不超过 width 列的若干行；第二行起以 indent 开头（悬挂缩进）。"""
    room = width - display_width(indent)                   # 续行除去缩进还剩几列
    todo = _tokens(text)[::-1]                             # 倒过来当栈用
    lines, cur = [], []                                    # 折好的行；当前行的小段
    while todo:
        tok = todo.pop()
        if tok.isspace():
            if cur or not lines:                           # 续行不以空格开头；行尾的空格换行时去掉
                cur.append(tok)
            continue
        if len(tok) > 1 and display_width(tok) > room and tok not in UNBREAKABLE:
            todo.extend(tok[::-1])                         # 一整行都放不下的长词：只好按字符拆开
            continue
        head = indent if lines else ""
        if display_width(head + "".join(cur) + tok) <= width:
            cur.append(tok)
            continue
        carry = [tok]                                      # 放不下就换行；全角标点不落在行首、开括号不落在行尾
        while (len(cur) > 1 and not cur[-1].isspace() and (carry[0] in CLOSING or cur[-1] in OPENING)
               and display_width(indent + cur[-1] + "".join(carry)) <= width):
            carry.insert(0, cur.pop())
        lines.append(head + "".join(cur).rstrip(" "))
        cur = carry
    lines.append((indent if lines else "") + "".join(cur).rstrip(" "))
    return lines


def print_header(title: str) -> None:
    """空一行，然后 ====、标题、====；横线和标题一样宽，但不窄于 60 列、不宽于折行宽度。"""
    rule = "=" * min(max(display_width(title), MIN_WIDTH), wrap_width())
    print(f"\n{rule}\n{title}\n{rule}")


def _numeric(cell: str) -> bool:
    """单元格像不像数字：去掉首尾空格后以数字开头，或以 +/- 加数字开头（"1.234×"、"12.3 µs"、"85%"）。"""
    return re.match(r"[+-]?\d", cell.strip()) is not None


def _pad(cell: str, width: int, right: bool) -> str:
    """按显示宽度补空格到 width 列。"""
    gap = " " * (width - display_width(cell))
    return gap + cell if right else cell + gap


def format_table(headers: list[str], rows: list[list[object]]) -> str:
    """把表格排成字符串：表头、一行 ----、数据行；列间两个空格，行尾不留空格。行可以比表头短（补空串）。"""
    n = len(headers)
    if any(len(r) > n for r in rows):
        raise ValueError(f"有一行的单元格比表头的 {n} 列多")
    head = [str(h) for h in headers]
    body = [[str(c) for c in r] + [""] * (n - len(r)) for r in rows]
    widths = [max(display_width(r[j]) for r in [head] + body) for j in range(n)]

    def line(cells: list[str], align: bool) -> str:
        return "  ".join(_pad(c, w, align and _numeric(c)) for c, w in zip(cells, widths)).rstrip(" ")

    return "\n".join([line(head, False), "  ".join("-" * w for w in widths)] + [line(r, True) for r in body])


def print_table(headers: list[str], rows: list[list[object]]) -> None:
    """空一行，再印 format_table 排好的表格。没有数据行时只印表头和 ----。"""
    print("\n" + format_table(headers, rows))


def _numbered(i: int, text: str) -> str:
    """第 i 条：编号 "  i. " 加折好行的文字，续行缩进到编号之后。"""
    prefix = f"  {i}. "
    return "\n".join(wrap(prefix + text, wrap_width(), " " * display_width(prefix)))


def print_observations(items: list, title: str = "观察") -> list:
    """空一行，印"观察："，再印编号、折好行的每一条（Observation 按 str() 印：不成立的带判据和量到的值）。
    返回 items 本身，调用者可以把它收起来（测试从这份数据数有几句不成立）。"""
    print(f"\n{title}：")
    for i, item in enumerate(items, 1):
        print(_numbered(i, str(item)))
    return items


def print_note(text: str) -> None:
    """一段说明（图例、列的含义），按终端宽度折行，不编号。"""
    print("\n".join(wrap(text, wrap_width())))


def print_try(items: list[tuple[str, str]]) -> None:
    """空一行，印"可以试试："；每条是 (说明, 命令)：说明照常折行，命令单独一行、从不折断，方便复制。"""
    print("\n可以试试：")
    for i, (what, command) in enumerate(items, 1):
        print(_numbered(i, what))
        print(" " * (display_width(f"  {i}. ") + 2) + command)
