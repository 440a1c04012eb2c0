"""
给人看的服务器文字。要印给人看的服务器文字（模型名、转向的地址、模型的回复……）先经过 shown()：控制字符写成
\\x1b 这样，太长的截断；多行的（模型的回复）用 shown_lines。录制文件里存的是原样的文字。服务器、录制文件给的 JSON
用 loads 读（整数最多 MAX_INT_DIGITS 位）。
"""

import json

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(ch: str) -> str:
    c = ord(ch)
    return _NAMED.get(ch) or (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}")


# 要换成转义的字符：C0（换行、制表符另说）、DEL、C1（含 ESC 开头的终端控制序列的 ESC 本身）、行和段落分隔符、
# 双向文字的控制符（能让终端上的字倒着显示）、看不见的零宽字符（零宽空格、词连接符、BOM：藏在模型名或回复里，
# 屏幕上看着一样的两段文字其实不同）、落单的代理项（UTF-8 写不出来，print 会抛 UnicodeEncodeError）、Unicode 的
# 标签字符 U+E0000–U+E007F（看不见，却能把一整段 ASCII 藏在一个模型名或回复里：讲师报过它们原样到了终端）
_UNSAFE = [*range(0x00, 0x20), *range(0x7f, 0xa0), 0x2028, 0x2029, 0x061c, 0x200b, 0x200e, 0x200f, 0x2060, 0xfeff,
           *range(0x202a, 0x202f), *range(0x2066, 0x206a), *range(0xd800, 0xe000), *range(0xe0000, 0xe0080)]
_INLINE = {c: _escape(chr(c)) for c in _UNSAFE}          # 一行里：换行、制表符也转义
_LINES = {c: e for c, e in _INLINE.items() if chr(c) not in "\n\t"}   # 多行的文字（模型的回复）：保留换行和制表符


def _int(digits: str):
    """JSON 里的整数：太长的（几千位）Python 默认不肯转、抛 ValueError，json.loads 就把一段合法的 JSON 说成读不懂
    （审读报过：usage 里一个 5000 位的数，回复被记作"不是 JSON"）。超过 MAX_INT_DIGITS 位的读成 ±inf：它不是
    哪个字段该有的值（token 数、模型名），用到它的地方照"没给"处理。花的时间和位数成正比。"""
    if len(digits) > MAX_INT_DIGITS:
        return float("-inf") if digits.startswith("-") else float("inf")
    return int(digits)


MAX_INT_DIGITS = 100


def loads(raw):
    """服务器、录制文件给的 JSON：整数最多 MAX_INT_DIGITS 位（再长的读成 ±inf，见 _int）。"""
    return json.loads(raw, parse_int=_int)


def shown(text, limit: int | None = 200, lines: bool = False, whole: str = "共", total: int | None = None) -> str:
    """服务器给的文字（模型名、转向的地址、模型的回复……）印到终端之前：把控制字符换成看得见的转义（ESC 写成 \\x1b；
    lines=True 时保留换行和制表符），转义以后最多 limit 个字符（截掉的写成"…（共 N 个字符）"，N 是原文的字符数；
    whole 换掉"共"；limit=None 时只转义、不截）。total：text 只是一段 total 个字符的原文的开头时给（N 写它，总写截断）。
    只管显示：录制文件里存的还是原样的文字。不是字符串的先 str()。花的时间和 limit 成正比，和原文多长无关。"""
    text = text if isinstance(text, str) else str(text)
    table = _LINES if lines else _INLINE
    if limit is None:
        return text.translate(table)
    head = text[:limit].translate(table)
    if total is None and len(text) <= limit and len(head) <= limit:
        return head                                 # 常见的情形：整段放得下（转义以后也是）
    # 转义以后最多 limit 个字符（讲师的复查报过：160 个 \x00、\ud800 这样的字符转义以后有 894 列），转义的写法不拆开
    out, n = [], 0
    for c in text[:limit]:
        piece = c.translate(table)
        if n + len(piece) > limit:
            break
        out.append(piece)
        n += len(piece)
    cut = f"…（{whole} {len(text) if total is None else total:,} 个字符）" if len(out) < len(text) or total is not None else ""
    return "".join(out) + cut


def shown_lines(text, line_chars: int = 160, max_lines: int = 60) -> str:
    """多行的服务器文字（模型的回复、它写的修改）印到终端之前：每行截到 line_chars 个字符（截掉的写成
    "…（这一行共 N 个字符）"）、控制字符转义，最多 max_lines 行（多的说一共几行）。讲师报过：一行 4,030 个字符的
    "思考"在 80 列的终端里占了五十几行，几十万个字符的注释整段印出来。花的时间和印出来的字数成正比。"""
    text = text if isinstance(text, str) else str(text)
    lines, out = text.split("\n", max_lines), []
    for line in lines[:max_lines]:
        out.append(shown(line, line_chars, lines=True, whole="这一行共"))
    if len(lines) > max_lines:
        out.append(f"…（一共 {text.count(chr(10)) + 1:,} 行，只印了前 {max_lines} 行）")
    return "\n".join(out)
