"""
第 14 讲 · evolve.diff —— AlphaEvolve 论文的 SEARCH/REPLACE 修改格式：LLM 回复里的修改怎么写、怎么读、怎么打上去。

一块修改长这样（回复里可以有好几块，块外的说明文字、``` 代码围栏都不管）：
    <<<<<<< SEARCH
        if M <= 16:                 父程序里原样出现、而且只出现一次的几行
    =======
        if M <= 32:                 换成这几行
    >>>>>>> REPLACE
format_diff 把修改写成这种文本，parse_diff 从（LLM 的）回复里读出来，apply_diff 打到源代码上，
make_diff 反过来求"把 A 改成 B"的一块修改。修改按整行写：没有结尾换行的文本，最后一行的 SEARCH 也能匹配它
（见 apply_diff）。出错抛 DiffError，它的 kind 是一个短名字（下面的 NO_BLOCK 等），进化循环按它分类计数。
进化循环和将来真的 LLM 后端都用这一个模块。本模块不打印任何东西。
"""

from __future__ import annotations

import functools
import re
from itertools import accumulate, compress, count
from operator import ne

Diff = tuple[tuple[str, str], ...]      # 若干块 (search, replace)，按顺序应用

# DiffError.kind：失败的种类（进化循环按它计数，所以要短、要稳定）
NOT_TEXT = "回复不是文本"
NO_BLOCK = "没有 SEARCH/REPLACE 块"
MALFORMED = "SEARCH/REPLACE 块不完整"
EMPTY_SEARCH = "SEARCH 是空的"
NOT_FOUND = "SEARCH 找不到"
AMBIGUOUS = "SEARCH 不唯一"
TOO_MANY = "SEARCH/REPLACE 块太多"

MAX_BLOCKS = 64                         # 一个回复最多这么多块（要的是一两块；程序本身也就十几行）


class DiffError(ValueError):
    """修改的格式不对，或者应用不上。kind 是失败的种类（NO_BLOCK、NOT_FOUND……），str 是给人看的一句话。"""

    def __init__(self, message: str, kind: str = MALFORMED):
        super().__init__(message)
        self.kind = kind

    def __reduce__(self):
        return DiffError, (str(self), self.kind)


_SEARCH, _DIVIDER, _REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
# 读的时候宽松一点：标记前后可以有空白，箭头和等号写成 5–9 个也认（LLM 常多写或少写一个）
_SEARCH_RE = re.compile(r"[ \t]*<{5,9}[ \t]*SEARCH[ \t]*")
_DIVIDER_RE = re.compile(r"[ \t]*={5,9}[ \t]*")
_REPLACE_RE = re.compile(r"[ \t]*>{5,9}[ \t]*REPLACE[ \t]*")
_SHOW = 200                             # 出错信息里最多引用这么多个字符


_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")   # ASCII 里 splitlines 也当换行的字符


def _lines(text: str) -> list[str]:
    """按 "\\n" 切成行，每行带着它的换行符；"".join 回去就是原文。"""
    if text.isascii() and not ("\r" in text or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text
                               or "\x1e" in text):           # 即 _OTHER_BREAKS 都不在（逐个写出来比 any(...) 快）
        return text.splitlines(True)                          # 这时它只按 "\\n" 切，而且快得多
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@functools.lru_cache(maxsize=64)
def _lines_offsets(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """(_lines(text), 每一行的起点)：第 i 行从第 offset[i] 个字符开始，最后多一个 len(text)。
    make_diff 的父程序来来回回就是程序库里那几十个，按文本缓存（结果是不可变的元组）。"""
    a = tuple(_lines(text))
    return a, tuple(accumulate(map(len, a), initial=0))


def _ending(text: str) -> str:
    return text if text == "" or text.endswith("\n") else text + "\n"


def _show(text: str) -> str:
    """引用一段文本（太长就截断），出错信息用。"""
    return text if len(text) <= _SHOW else text[:_SHOW] + f"……（共 {len(text):,} 个字符）"


def format_diff(diff: Diff | None) -> str:
    """把修改写成 SEARCH/REPLACE 块（每块的 SEARCH、REPLACE 按整行写，没有结尾换行的补一个）。"""
    if not diff:
        return "（这是起始程序，不是由哪次修改产生的）\n"
    return "".join(f"{_SEARCH}\n{_ending(search)}{_DIVIDER}\n{_ending(repl)}{_REPLACE}\n" for search, repl in diff)


def parse_diff(text, empty_ok: bool = True) -> Diff:
    """从一段文本（例如 LLM 的整个回复）里读出所有 SEARCH/REPLACE 块，块外的文字忽略；"\\r\\n" 当作 "\\n"。
    块不完整抛 DiffError(kind=MALFORMED)；text 不是字符串抛 DiffError(kind=NOT_TEXT)；
    超过 MAX_BLOCKS 块抛 DiffError(kind=TOO_MANY)（读到第 MAX_BLOCKS + 1 块就停，不再往下读）；
    一块都没有时 empty_ok=True 返回 ()，否则抛 DiffError(kind=NO_BLOCK)。花的时间和 text 的长度成正比。"""
    if not isinstance(text, str):
        raise DiffError(f"回复应该是一段文本，却是 {type(text).__name__}", NOT_TEXT)
    text, empty_ok = str(text), bool(empty_ok)
    return _parse_diff(text, empty_ok) if len(text) <= _CACHE_TEXT else _parse_diff.__wrapped__(text, empty_ok)


_CACHE_TEXT = 16_384                    # 只缓存不太长的回复：缓存最多占 512 × 16K 个字符


# 一行是不是标记行，和上面三个正则对这一行（去掉换行）做 fullmatch 一样：^ $ 在 MULTILINE 下正好是按 "\n" 切的行首、行尾
_MARKER_RE = re.compile(r"^[ \t]*(?:(<{5,9}[ \t]*SEARCH)|(={5,9})|(>{5,9}[ \t]*REPLACE))[ \t]*$", re.M)


@functools.lru_cache(maxsize=512)
def _parse_diff(text: str, empty_ok: bool) -> Diff:
    """parse_diff 的正文（结果是不可变的元组，按文本缓存：进化时同一段回复常常出现好几次）。
    不逐行走：一个正则找出所有标记行，标记之间的文本直接切片（每一行都以换行结尾，切出来和逐行拼起来一样）；
    普通的行只在它夹在哪两个标记之间时才有意义。行号只在出错时才数（每块都数一遍是平方级的）。"""
    text = text.replace("\r\n", "\n")
    blocks, state, start, at = [], None, 0, 0                 # start：当前 SEARCH 标记的位置；at：SEARCH 或 REPLACE 的文本从这里开始
    search = ""
    for m in _MARKER_RE.finditer(text):
        kind = m.lastindex
        if kind == 1:                                         # SEARCH
            if state is not None:
                raise DiffError(f"第 {_lineno(text, m.start())} 行：第 {_lineno(text, start)} 行开始的 SEARCH 块还没结束"
                                f"（缺 {_DIVIDER} 或 {_REPLACE}）")
            if len(blocks) >= MAX_BLOCKS:
                raise DiffError(f"第 {_lineno(text, m.start())} 行：回复里的 SEARCH/REPLACE 块超过 {MAX_BLOCKS} 块"
                                "（要的是一两块）", TOO_MANY)
            state, start, at = "search", m.start(), m.end() + 1
        elif kind == 2:                                       # =======：只在 SEARCH 块里是分隔线，别处是普通的行
            if state == "search":
                search, state, at = text[at:m.start()], "replace", m.end() + 1
        else:                                                 # REPLACE
            if state != "replace":
                raise DiffError(f"第 {_lineno(text, m.start())} 行：{_REPLACE} 前面缺 {_SEARCH} 或 {_DIVIDER}")
            blocks.append((search, text[at:m.start()]))
            state = None
    if state is not None:
        raise DiffError(f"第 {_lineno(text, start)} 行开始的 SEARCH 块没有结束（缺 {_DIVIDER if state == 'search' else _REPLACE}）")
    if not blocks and not empty_ok:
        raise DiffError(f"回复里没有 SEARCH/REPLACE 块（{_SEARCH} … {_DIVIDER} … {_REPLACE}）", NO_BLOCK)
    return tuple(blocks)


def _lineno(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def apply_diff(source: str, diff: Diff) -> str:
    """依次应用每一块：SEARCH 的文本必须在当前文本里恰好出现一次，换成 REPLACE 的文本。
    按整行写的修改也能改没有结尾换行的最后一行：SEARCH 找不到、但去掉它结尾的换行后正好是文本的结尾时，
    就改这个结尾，REPLACE 也去掉结尾的换行（文本原来没有结尾换行，改完也没有）。"""
    text = source
    for n, (search, repl) in enumerate(diff, 1):
        if search == "" and text != "":
            raise DiffError(f"第 {n} 块：SEARCH 是空的，不知道该改哪里", EMPTY_SEARCH)
        at = text.find(search)
        end = len(text) - len(search) + 1                     # 去掉结尾换行的 SEARCH 放在文本末尾时的起点
        if (at < 0 and search.endswith("\n") and not text.endswith("\n") and text.endswith(search[:-1])
                and (end == 0 or text[end - 1] == "\n")):       # 而且从一行的开头开始
            at, search = end, search[:-1]                     # 最后一行没有换行
            repl = repl[:-1] if repl.endswith("\n") else repl
        if at < 0:
            raise DiffError(f"第 {n} 块：SEARCH 没有匹配（当前文本里找不到这段）：\n{_show(search)}", NOT_FOUND)
        if text.find(search, at + 1) >= 0:                   # 用 find 而不是 count：重叠的出现也算两次
            raise DiffError(f"第 {n} 块：SEARCH 匹配了不止一处，有歧义；多带几行上下文：\n{_show(search)}", AMBIGUOUS)
        text = text[:at] + repl + text[at + len(search):]
    return text


def make_diff(parent_src: str, child_src: str) -> Diff:
    """一个 SEARCH/REPLACE 块把 parent 改成 child：先取两边不同的那几行，
    再往上下各加一行上下文，直到 SEARCH 非空且在 parent 里只出现一次。相同的文本返回空修改 ()。"""
    if parent_src == child_src:
        return ()
    a, offset = _lines_offsets(parent_src)
    b = _lines(child_src)
    n = min(len(a), len(b))
    pre = next(compress(count(), map(ne, a, b)), n)                                 # 共同的开头几行
    suf = min(next(compress(count(), map(ne, reversed(a), reversed(b))), n), n - pre)   # 共同的结尾几行（不和开头重叠）
    lo, hi = pre, len(a) - suf                                # parent 的 a[lo:hi] 换成 child 的 b[lo:len(b)-suf]
    if lo < hi:                                               # 最常见：不加上下文就行（下面的 good(0) 成立）
        search = parent_src[offset[lo]:offset[hi]]
        if (lo == 0 and hi == len(a)) or parent_src.find(search, parent_src.find(search) + 1) < 0:
            return ((search, "".join(b[lo:len(b) - suf])),)

    def window(e):                                            # 上下各加 e 行上下文
        return max(0, lo - e), min(len(a), hi + e)

    def good(e):
        l, h = window(e)
        if l == 0 and h == len(a):                            # 整个 parent 一定只出现一次
            return True
        search = parent_src[offset[l]:offset[h]]
        return search != "" and parent_src.find(search, parent_src.find(search) + 1) < 0

    # 上下文越多，SEARCH 越长：一旦唯一就一直唯一（长的出现两次，它里面短的那段也出现两次）。
    # 所以"最少加几行"可以先倍增、再二分，不用一行一行地试（重复很多的文本上一行一行试是平方级的）。
    top = max(lo, len(a) - hi)                                # good(top) 一定成立
    e_lo, e_hi = 0, 0
    while not good(e_hi):
        e_lo, e_hi = e_hi + 1, min(top, 2 * e_hi + 1)
    while e_lo < e_hi:
        mid = (e_lo + e_hi) // 2
        if good(mid):
            e_hi = mid
        else:
            e_lo = mid + 1
    l, h = window(e_lo)
    return ((parent_src[offset[l]:offset[h]], "".join(b[l:len(b) - (len(a) - h)])),)
