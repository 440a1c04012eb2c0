"""
第 1 讲 · console —— 全课程共用的终端输出：标题、表格、观察。中文字符占两列，所以一律按"显示宽度"对齐和折行。

    print_header(title)            空一行，再印 ==== / 标题 / ====（标题比终端宽时折成几行）
    print_table(headers, rows)     按显示宽度对齐的表格；像数字的单元格右对齐；比终端宽时，比数据宽的表头折成几行，
                                   还放不下就像 pandas 那样分段印（每段重复行名那一列，第二段起上面印"（续上表）"）
    check(ok, text, criterion, measured)
                                   一句观察当作数据：成立时说 text；不成立时说"【本次不成立】"、讲义的判据和这次量到的值
    print_observations(items)      "观察：" 加编号的几段话，按终端宽度折行，续行缩进到编号之后；
                                   items 里可以是 Observation（会被检验的说法），也可以是普通字符串（引用、说明，不是论断）
    failed(items)                  items 里不成立的那些 Observation（测试和统计从数据数，不 grep 文字）
    print_note(text)               一段说明（表格的图例、列的含义），按终端宽度折行
    print_numbered(lines, limit, whole)  一个文件的原文带行号，太长只印开头、说整份在哪
    fit_lines(text)                原样印的几行字（提示词、回复）：只折比终端宽的行，续行多缩进四格
    print_try(items)               "可以试试：" 每条一句说明、一行完整的命令

图（文件后半）：format_line、format_scatter、format_heatmap、format_bars 把图排成字符串，跟着终端的宽度（放不下时
在图下面说一行它按最窄的样子印）；Charts 是脚本用的出口，每张图一行，印到终端，要的话再由同一目录的 svg.py 写成
SVG 文件。显示宽度、折行、坐标轴、热力图分档在 layout.py 里（svg.py 也用；依赖只有 console → svg → layout 一个方向）。

只用标准库；导入时不打印任何东西。
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache

from layout import (BACKGROUND_MARK, CLOSING, FAILED, MARKS, OPENING, UNBREAKABLE, Axis, as_steps,  # noqa: F401
                    display_width, extremes_note, finite, grouped, heat_edges, heat_extremes, heat_levels,
                    hidden_series, hidden_tails, kind, nice_ticks, series_marks, tokens, wrap, wrap_command)

MIN_WIDTH, MAX_WIDTH, PIPE_WIDTH = 60, 160, 100    # 终端宽度的上下限；输出不是终端时用 100 列


@dataclass(frozen=True)
class Observation:
    """一句会被检验的观察。ok：这次运行支不支持它；text：成立时印的话；criterion：判据（讲义的说法，用文字写出阈值）；
    measured：这次量到的值。不成立时印"【本次不成立】判据……；这次……"，判据和量到的值都看得见。"""
    ok: bool
    text: str
    criterion: str
    measured: str
    missed: tuple = ()

    def __str__(self) -> str:
        if self.ok:
            return self.text
        return f"{FAILED}{_sentence(self.criterion)}这次：{_sentence(self.measured)}{missed_sentence(self.missed)}"


def _sentence(s: str) -> str:
    """补上句号（已经以句末标点结尾的不补）。以括号结尾的，括号里的句号不算："……（中位数）" 也要补，"……。）" 不补。"""
    s = s.strip()
    return s if not s or s[-1] in "。！？" or s[-2:] in ("。）", "！）", "？）") else s + "。"


def check(ok, text: str, criterion: str, measured: str, parts=()) -> Observation:
    """一句观察：ok 为真就说 text；否则说它不成立，并写出判据 criterion（"讲义说……"）和量到的 measured。
    parts 是判据的几个部分 [(一句话, 这次成立吗), ...]（ok 就是它们都成立）：不成立时最后点名是哪几部分没做到
    （学生报过：判据有三条，这次的值也都列了，看不出是哪一条不成立）。"""
    return Observation(bool(ok), text, criterion, measured, missed_parts(ok, parts))


def missed_parts(ok, parts) -> tuple:
    """判据的几个部分 [(一句话, 这次成立吗), ...] 里没做到的那几句；ok 和"各部分都成立"对不上就抛 ValueError
    （写观察的人把判据和它的部分写岔了）。check 和第 13 讲的 verdict 共用。"""
    parts = [(name, bool(held)) for name, held in parts]
    if parts and bool(ok) != all(held for _, held in parts):
        raise ValueError(f"观察的 ok（{bool(ok)}）和它的各部分 {parts} 对不上")
    return tuple(name for name, held in parts if not held)


def missed_sentence(missed) -> str:
    """不成立的观察最后那句："没做到的是：……。"（没有部分时是空串）。"""
    return f"没做到的是：{'；'.join(missed)}。" if missed else ""


def fmt(x: float, digits: int = 0, bounds=(), percent: bool = False) -> str:
    """把 x 印成 digits 位小数（percent=True 时先乘 100、后面加 %）；如果四舍五入以后和 bounds 里某个界（同样的单位，
    percent 时也写成比例，例如 0.75）或 0、1 的大小关系变了（0.7496 印成 75% 而判据是 ≥ 75%；0.004 印成 0%），
    就多印一位，最多 6 位。印出来的数从不和判据、和表里的计数互相矛盾。正好等于 x 的界不用管：两个相等的数用同样的
    位数印出来也相等（以前四个相等的分级时间各印成 6 位小数，"4,036.622592"）。"""
    scale = 100.0 if percent else 1.0
    v = x * scale
    marks = [m for m in [b * scale for b in (*bounds, 0.0)] + ([scale] if percent else []) if m != v]
    for d in range(digits, max(digits, 6) + 1):          # 要的位数本来就超过 6 位时照要的印（以前 d 没有定义）
        r = round(v, d)
        if all((r < b) == (v < b) and (r > b) == (v > b) for b in marks):
            break
    return f"{v:,.{d}f}" + ("%" if percent else "")          # 千分位：4,036.6 µs 和表里一样


def of_seeds(n: int, short: bool = False) -> str:
    """"各列都是几个种子的中位数"里的那几个字：只有 1 个种子时说"1 个种子的结果"（审读时报过：--seeds 1 说"1 个种子的
    中位数（括号里是最小–最大）"）。short：不带括号里的解释（图的标题）。"""
    if n != 1:
        return f"{n:,} 个种子的中位数"
    return "1 个种子的结果" + ("" if short else "（只有一个种子：中位数、最小、最大都是它）")


def median_count(x) -> str:
    """一个计数的中位数：整数照印（千位加逗号）；种子数是偶数时可能是 x.5，就印一位小数——不把 61.5 印成 62
    （一位同学在 03 的表里读到 61.5，在 05 的句子里读到同一个数印成 62）。"""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def apart_digits(values, digits: int = 0, most: int = 6) -> int:
    """至少 digits 位、最多 most 位小数：相邻两个不相等的数印出来也不相等（一列"新的最好分数"不会印成三个 1.218×）。"""
    values = list(values)
    for d in range(digits, most):
        if all(round(a, d) != round(b, d) for a, b in zip(values, values[1:]) if a != b):
            return d
    return most


def failed(items) -> list[Observation]:
    """items 里不成立的观察（普通字符串不是论断，不算）。"""
    return [o for o in items if isinstance(o, Observation) and not o.ok]


def wrap_width() -> int:
    """折行宽度：终端的列数，限制在 60–160；输出不是终端（管道、重定向）时 100，同样的运行印出同样的字节——
    除非设了环境变量 COLUMNS（一个正整数，同样限制在 60–160）：学生报过，在 80 列的窗口里 | less 看，行行都是 100 列；
    COLUMNS=80 python3 … | less 就按 80 列排（和 shutil.get_terminal_size 一样，COLUMNS 优先）。"""
    if not sys.stdout.isatty():
        columns = os.environ.get("COLUMNS", "")
        ok = columns.isascii() and columns.isdecimal() and int(columns) > 0   # "²" 之类 isdigit() 却 int() 不了（审读报过）
        return min(max(int(columns), MIN_WIDTH), MAX_WIDTH) if ok else PIPE_WIDTH
    return min(max(shutil.get_terminal_size(fallback=(PIPE_WIDTH, 24)).columns, MIN_WIDTH), MAX_WIDTH)


RUN_GPU = [None]                   # 这次运行选的不是默认的 GPU 时是它的记录（runner 解析完 --gpu 时设；默认 GPU 是 None）
GPU_SAID = [False]                 # 这次运行已经说过"硬件换成……"了（runner 解析完参数时清掉）


def gpu_flag() -> str:
    """这次运行选的不是默认的 GPU 时是 " --gpu a100" 这样（说"和 04 的那一次是同一次进化"时接在 04 后面：默认运行
    是 H100 上的，审读时报过 06 --gpu a100 说它和 04 的默认运行是同一次进化）；默认 GPU 是空串。"""
    return f" --gpu {RUN_GPU[0].key}" if RUN_GPU[0] is not None else ""


def print_header(title: str) -> None:
    """空一行，然后 ====、标题、====；横线和标题一样宽，但不窄于 60 列、不宽于折行宽度。比折行宽度宽的标题折成几行
    （都在两条横线中间）。
    这次运行用的不是默认的 GPU（--gpu a100）时，第一个标题前先印一段：换了哪块 GPU、哪些旋钮没校准（参数都检查过了
    才走到这里，参数错了的运行不印它）。"""
    gpu = RUN_GPU[0]
    if gpu is not None and not GPU_SAID[0]:
        GPU_SAID[0] = True
        print("\n" + "\n".join(wrap(sys.modules["gpus"].describe(gpu), wrap_width())))
    rule = "=" * min(max(display_width(title), MIN_WIDTH), wrap_width())
    print(f"\n{rule}\n" + "\n".join(wrap(title, wrap_width())) + f"\n{rule}")


_DIMENSIONS = re.compile(r"\d×[\dA-Za-z]")          # 尺寸、配置（"256×128"），不是"1.258×"这样的倍数
_LEADING_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?![\dA-Za-z_/.,])")


def _numeric(cell: str) -> bool:
    """单元格像不像数字（靠右）：去掉首尾空格后以一个数开头，数后面可以跟单位或说明（"1.234×"、"12.3 µs"、"85%"、
    "1,052"、"2.5倍"、"44 个"）；数后面紧跟西文字母或斜杠的是名字，不是数（"8B gate_up M=1"、"70B/8 qkv"），靠左。
    带全角逗号的是一句说明（"3 个，按 M 均匀取"，学生报过 03 的这一列忽左忽右），也靠左；尺寸和配置（"16×64×128 / 4 warp"、
    "128×N×4096"）是名字，也靠左。"""
    return (_LEADING_NUMBER.match(cell.strip()) is not None and "，" not in cell
            and not _DIMENSIONS.search(cell))         # "16×64×128 / 4 warp"、"128×N×4096" 是名字（表格审读报过靠右）


def _pad(cell: str, width: int, right: bool) -> str:
    """按显示宽度补空格到 width 列。"""
    gap = " " * (width - display_width(cell))
    return gap + cell if right else cell + gap


HEADER_LINES = 3        # 表格太宽时，一个表头最多折成几行（折成两行放得下就只折两行）
HEADER_CHUNK = 6        # 在两个汉字中间折时，折开的两行都至少这么宽（一两个字的碎片比稍宽一点的表更难读）
WORD_BREAK = "\u200b"   # 写表头的人标出"两个词之间，要折优先在这里折"（零宽空格，Unicode 换行规则里的换行机会）：
#                         f"跑了几次{WORD_BREAK}内核"，只在两个汉字之间算数。印出来的表里没有它（折或不折都去掉）；
#                         没标的表头照旧由 _header_breaks 挑折点（学生在 80 列的终端里报过"跑了几/次内核"、
#                         "错杀的里/面最好的"：中文不空格，程序不知道词在哪里）


def _plain(header: str) -> str:
    """表头印出来的样子：去掉 WORD_BREAK。"""
    return header.replace(WORD_BREAK, "")


def _header_tokens(header: str) -> list[str]:
    """表头切成的小段（tokens，不连）；WORD_BREAK 自成一段，标在两个词之间。"""
    out: list[str] = []
    for i, part in enumerate(header.split(WORD_BREAK)):
        if i:
            out.append(WORD_BREAK)
        out.extend(tokens(part, glue=False))
    return out


def _header_breaks(toks: list[str]) -> list[tuple[int, int, int]]:
    """表头可以在哪里折行：(这一行到第几个小段为止, 下一行从第几个小段开始, 折点的代价)。代价 0：在"（"前面、
    "）"后面；1：在"，、；："后面、在括号外的空格处（"时间 µs" 折成 "时间" 和 "µs"）、写表头的人标的 WORD_BREAK 处；
    2：括号里的空格处、括号里的 WORD_BREAK；3：两个汉字中间（可能拆开一个词；括号里面不这样折）。
    只在两种地方折：一个空格处（两边至少有一边是西文，空格折掉；拼回去时两边有西文就补一个空格），
    或者两个宽字符之间（不拆西文词和数字，全角标点不落在行首、开括号不落在行尾）。这样折开的表头总能原样拼回去。"""
    out, depth = [], 0                                 # depth：在几层全角括号里面
    for k in range(1, len(toks)):
        a, b = toks[k - 1], toks[k]
        depth += (a in OPENING) - (a in CLOSING and a not in "，。、；：！？")
        if b == WORD_BREAK:                            # 只在两个汉字之间算数：拼回去时不用猜要不要补空格
            after = toks[k + 1] if k + 1 < len(toks) else ""
            if (kind(a[-1]) == "w" and kind(after[:1] or " ") == "w" and a not in OPENING and after not in CLOSING
                    and a not in UNBREAKABLE and after not in UNBREAKABLE):
                out.append((k, k + 1, 1 if depth <= 0 else 2))
        elif b == " " and k + 1 < len(toks) and a != " " and toks[k + 1] != " ":
            if kind(a[-1]) == "n" or kind(toks[k + 1][0]) == "n":
                out.append((k, k + 1, 1 if depth <= 0 else 2))
        elif (kind(a[-1]) == "w" and kind(b[0]) == "w" and b not in CLOSING and a not in OPENING
              and a not in UNBREAKABLE and b not in UNBREAKABLE):
            cost = 0 if b[0] == "（" or a[-1] == "）" else 1 if a[-1] in "，、；：" else 3
            if cost < 3 or depth <= 0:                 # 括号里面只在逗号、顿号后面折（"（中"/"位数）" 没法读）
                out.append((k, k, cost))
    return out


@lru_cache(maxsize=1024)
def _header_options(header: str) -> list[tuple[int, int, int, int, list[str]]]:
    """一个表头所有的折法（最多 HEADER_LINES 行；在两个汉字中间折的，两边的行都至少 HEADER_CHUNK 列）：
    (最宽一行的列数, 行数, 折点的代价之和, 最贵的一个折点的代价, 各行)。不折也算一种。"""
    toks = _header_tokens(header)
    breaks = _header_breaks(toks)
    options = [(display_width(_plain(header)), 1, 0, 0, [_plain(header)])]

    def walk(start: int, chosen: list[tuple[int, int, int]]) -> None:
        for br in breaks:
            if br[0] <= start:
                continue
            picks = chosen + [br]
            cuts = [0] + [x for e, b, _ in picks for x in (e, b)] + [len(toks)]
            lines = [_plain("".join(toks[cuts[i]:cuts[i + 1]])) for i in range(0, len(cuts), 2)]
            widths = [display_width(line) for line in lines]
            if any(cost == 3 and min(widths[i], widths[i + 1]) < HEADER_CHUNK for i, (_, _, cost) in enumerate(picks)):
                continue                               # 再多折几处只会让这几行更窄
            costs = [cost for _, _, cost in picks]
            options.append((max(widths), len(lines), sum(costs), max(costs), lines))
            if len(lines) < HEADER_LINES:
                walk(br[1], picks)

    walk(0, [])
    return options


def _fit_headers(head: list[str], data: list[int], target: int) -> list[list[str]]:
    """表格比 target 宽时，把比数据宽的表头折成几行：从最宽的表头开始，逐步降低表头每行最多占的列数（不低于
    这一列最宽的数据），直到表格放得下。先只在好的折点（括号、逗号、空格）折、只折两行，放不下再许三行，
    再放不下才许在两个汉字中间折（只折两行，不在括号里面）。每一列在给定的上限下取行数最少、折点代价最小、最窄、
    第一行最长的折法。怎样都放不下（数据本身就太宽）时，折了能让这一列变窄的表头折成两行，取最窄的（尽量只在括号、
    逗号和括号外的空格处折）：表还是窄了一些，但不为了一张反正放不下的表把表头拆成三四行碎片。返回每列表头的各行。"""
    gaps = 2 * (len(head) - 1)
    total = lambda heads: sum(max(d, *map(display_width, lines)) for lines, d in zip(heads, data)) + gaps  # noqa: E731
    hinted, head = head, [_plain(h) for h in head]
    natural = [[h] for h in head]
    if total(natural) <= target:
        return natural
    options = [_header_options(k) if display_width(h) > d else [] for k, h, d in zip(hinted, head, data)]

    def pick(cap: int, most: int, dearest: int, nicest: bool = False) -> list[list[str]]:
        out = []
        for h, d, opts in zip(head, data, options):
            opts = [o for o in opts if o[1] <= most and o[3] <= dearest]
            fits = [o for o in opts if o[0] <= max(cap, d)]
            if nicest:                                 # 放不下的表：让这一列变窄的两行折法里最窄的（尽量只用好的折点）
                narrower = [o for o in opts if max(o[0], d) < max(display_width(h), d)]
                out.append(min(narrower, key=lambda o: (o[3] > 1, o[0], o[2], -display_width(o[4][0])))[4]
                           if narrower else [h])
            elif fits:
                out.append(min(fits, key=lambda o: (o[1], o[2], o[0], -display_width(o[4][0])))[4])
            elif opts:                                 # 上限以下折不出来：取最窄的
                out.append(min(opts, key=lambda o: (o[0], o[1], o[2], -display_width(o[4][0])))[4])
            else:
                out.append([h])
        return out

    for dearest, most in [(1, 2)] + [(1, m) for m in range(3, HEADER_LINES + 1)] + [(3, 2)]:
        for cap in range(max(display_width(h) for h in head) - 1, 0, -1):
            chosen = pick(cap, most, dearest)
            if total(chosen) <= target:
                return chosen
    return pick(1, 2, 3, nicest=True)


CONTINUED = "（续上表）"    # 分成几段印的表，第二段起每段上面的一行（tests/printed.py 靠它把几段拼回一张表）
MIN_CELL = 12             # 不得不在格子里折行的文字列，最窄折到这么宽


def _table_lines(head: list[str], body: list[list[str]], target: int, fold: bool) -> list[str]:
    """一张表（或分段时的一段）排成的各行：表头（比数据宽的表头折成几行，见 _fit_headers）、----、数据行。
    fold=True 而且这样还比 target 宽时，有地方可折（有空格或汉字）的列一起压到同一个宽度（放得下的最宽的那个，
    最窄 MIN_CELL 列），比它宽的格子按显示宽度折成几行（续行的其他格子空着，原来有缩进的续行也缩进）。
    一个数（"164,736"、"1.258×"）没有地方可折，从不折开；数在格子里靠右。"""
    n = len(head)
    data = [max((display_width(r[j]) for r in body), default=0) for j in range(n)]
    caps = list(data)
    texts = [j for j in range(n) if any(len(tokens(r[j].strip())) > 1 for r in body)]     # 有地方可折的列

    def layout():
        heads = _fit_headers(head, caps, target)
        return heads, [max(c, *map(display_width, lines)) for lines, c in zip(heads, caps)]
    heads, widths = layout()
    if fold and sum(widths) + 2 * (n - 1) > target and any(data[j] > MIN_CELL for j in texts):
        # 能折的列一起压到同一个"水位"（最窄 MIN_CELL 列），取放得下的最高水位（二分）：不是只压最宽的那一列
        # （审读报过：80 列里一格很长的"3,744（穷举）或几十到几百（…）"占着 51 列，行名那一列被压到 27 列、折成三行）
        def at(level: int) -> tuple:
            caps[:] = [min(d, max(level, MIN_CELL)) if j in texts else d for j, d in enumerate(data)]
            return layout()
        lo, hi = MIN_CELL, max(data[j] for j in texts)         # lo 放不下也只能用它；hi 就是不折
        while lo < hi:
            mid = (lo + hi + 1) // 2
            heads, widths = at(mid)
            if sum(widths) + 2 * (n - 1) <= target:
                lo = mid
            else:
                hi = mid - 1
        heads, widths = at(lo)

    def line(cells: list[str], right: list[bool]) -> str:
        return "  ".join(_pad(c, w, r) for c, w, r in zip(cells, widths, right)).rstrip(" ")

    out = [line([h[k] if k < len(h) else "" for h in heads], [False] * n) for k in range(max(map(len, heads), default=1))]
    out.append("  ".join("-" * w for w in widths))
    for r in body:
        right = [_numeric(c) for c in r]
        cells = [wrap(c, w, " " * (len(c) - len(c.lstrip(" ")))) if display_width(c) > w else [c]
                 for c, w in zip(r, widths)]
        for k in range(max(map(len, cells))):
            out.append(line([c[k] if k < len(c) else "" for c in cells], right))
    return out


def format_table(headers: list[str], rows: list[list[object]], width: int | None = None, keys: int = 1) -> str:
    """把表格排成字符串：表头、一行 ----、数据行；列间两个空格，行尾不留空格。行可以比表头短（补空串）。
    表格比 width 宽（默认折行宽度 wrap_width()：终端的宽度，输出不是终端时 100 列）时，先把比数据宽的表头折成几行，
    都在 ---- 上面、每段靠左对齐在自己的列里（拼回去就是原来的表头：在空格处折的，两边有西文时补回一个空格）。
    还放不下，就像 pandas 印很宽的 DataFrame 那样分成几段（列块）：每段都从前 keys 列（行的名字）开始，后面接
    放得下的几列，第二段起上面印一行"（续上表）"，段与段之间空一行；一段只有一列还放不下时，那一段里的文字格子折成
    几行（_table_lines）。分了段还是放不下（一个数本身就太宽）时，分段和不分段取窄的那样。
    放得下的表和以前一个字节都不差；一个数从不折开。"""
    n = len(headers)
    if any(len(r) > n for r in rows):
        raise ValueError(f"有一行的单元格比表头的 {n} 列多")
    head = [str(h) for h in headers]
    body = [[cell_text(c) for c in r] + [""] * (n - len(r)) for r in rows]
    target = wrap_width() if width is None else width
    whole = _table_lines(head, body, target, fold=False)
    if max(map(display_width, whole)) <= target:
        return "\n".join(whole)
    if keys == 1 and n > 3 and body and body[0][0].strip() and any(not r[0].strip() and r[1].strip() for r in body):
        keys = 2                # 第一列是分组名（组里后面几行空着）：分段时第二列也是行名，一起重复（审读报过：讲师的 04
        #                         演示 3 那张表分段以后，第二段只剩"划分"，看不出哪行是查表、哪行是上限）
    k = max(1, min(keys, n - 1))

    def pick(cols: list[int]):
        return [head[j] for j in cols], [[r[j] for j in cols] for r in body]
    if n - k < 2 or max(map(display_width, _table_lines(*pick(list(range(k))), target, True))) > target:
        return "\n".join(_table_lines(head, body, target, fold=True))   # 只有一列可分、或行名本身就太宽：不分段
    blocks, cur = [], []
    for j in range(k, n):                                  # 从左往右装：装得下就放进这一段，装不下就另起一段
        if cur and max(map(display_width, _table_lines(*pick(list(range(k)) + cur + [j]), target, False))) > target:
            blocks.append(cur)
            cur = []
        cur.append(j)
    blocks.append(cur)
    if len(blocks) > 1:                                    # 段数不变，把列匀一匀（不要前几段满满的、最后一段只剩一两列）
        sizes = [max(display_width(c) for c in [_plain(head[j])] + [r[j] for r in body]) + 2 for j in range(k, n)]
        quota, even, used = sum(sizes) / len(blocks), [[]], 0.0
        for j, size in zip(range(k, n), sizes):
            if even[-1] and used + size / 2 > quota * len(even) and len(even) < len(blocks):
                even.append([])
            even[-1].append(j)
            used += size
        if len(even) == len(blocks) and all(
                max(map(display_width, _table_lines(*pick(list(range(k)) + b), target, False))) <= target for b in even):
            blocks = even
    parts = [_table_lines(*pick(list(range(k)) + b), target, fold=True) for b in blocks]
    widest = max(display_width(line) for p in parts for line in p)
    if widest > target:                                    # 分了段也放不下（数太宽）：分段和不分段，取窄的
        folded = _table_lines(head, body, target, fold=True)
        if max(map(display_width, folded)) <= widest:
            return "\n".join(folded)
    return f"\n\n{CONTINUED}\n".join("\n".join(p) for p in parts)


def cell_text(c: object) -> str:
    """表里的一个格子：整数带千分位（1,209，和句子里、fmt 印的一样；学生报过：04 的表印 1209，下面的观察说 1,209），
    别的照 str。"""
    return f"{c:,}" if isinstance(c, int) and not isinstance(c, bool) else str(c)


def print_table(headers: list[str], rows: list[list[object]], keys: int = 1) -> None:
    """空一行，再印 format_table 排好的表格。没有数据行时只印表头和 ----。keys：分段印时每段都重复的前几列
    （第一列是分组名、第二列才分得清各行时写 2；不写时，第一列在组里后面几行空着的表 format_table 也按 2 算）。"""
    print("\n" + format_table(headers, rows, keys=keys))


def fit_lines(text: str, width: int | None = None) -> str:
    """原样印的几行字（提示词的原文、LLM 的回复）：比 width（默认折行宽度）宽的行才按显示宽度折开，续行比这一行
    多缩进四格（一眼看得出是接着上一行的）；放得下的行一个字节不动。"""
    width = wrap_width() if width is None else width
    out = []
    for line in text.split("\n"):
        lead = " " * (len(line) - len(line.lstrip(" ")))
        out += [line] if display_width(line) <= width else wrap(line, width, lead + "    ")
    return "\n".join(out)


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


def print_note(text: str, indent: str = "") -> None:
    """一段说明（图例、列的含义），按终端宽度折行，不编号。indent：整段缩进（一串提醒里的一条），续行再多缩进两格。"""
    print("\n".join(wrap(indent + text, wrap_width(), indent + "  " if indent else "")))


def print_with_command(text: str, command: str, indent: str = "") -> None:
    """一句说明，后面跟一条要照抄的命令：说明照常折行，命令单独一行（比说明多缩进 4 格），一行放不下时按 shell 的
    续行写法折开（command_lines）。嵌在句子里的命令会被折行拆成两半，照抄就成了两条错的命令（学生报过：04 的
    "还有 402 条同样的注意……python3 lecture14/01_heuristic_as_code.py" 和 "--heuristic …" 落在两行）。"""
    print_note(text, indent)
    print("\n".join(command_lines(command, wrap_width(), display_width(indent) + 4)))


LISTING_LINES = 40      # 一份代码清单最多印几行（学生贴进来一张 500 条规则的表时，不要印几千行）


FOLDED_FILE = "（比终端宽的行折开印了，续行多缩进四格；文件里那是一整行。）"


def _fold_code(line: str, width: int, prefix: str = "") -> tuple[list[str], bool]:
    """文件里的一行代码（前面可以有行号 prefix）：制表符按 Python 的规矩展开成空格（一个 tab 到下一个 8 的倍数），
    比 width 宽时按显示宽度折开，续行比这一行的缩进再多四格。返回 (印出来的几行, 折了没有)。学生报过：
    expert_heuristic.py 里一行长的中文注释在 80 列的终端里印成 113 列，制表符原样印出来、和上下行对不齐。"""
    code = line.expandtabs(8)
    full = prefix + code
    if display_width(full) <= width:
        return [full], False
    lead = " " * (display_width(prefix) + len(code) - len(code.lstrip(" ")))
    return wrap(full, width, lead + "    "), True


def listing(text: str, whole: str = "", limit: int = LISTING_LINES, fold: bool = False) -> str:
    """一份代码（程序、LLM 的回复）的清单：不超过 limit 行就整个原样返回（代码行不折，能照着抄）；更长的只留开头
    limit 行（第 limit 行以冒号结尾时少留一行：不停在一个 if 上），再加一句一共几行（whole 不空时说整份在哪），
    这句按终端宽度折行。fold=True（学生自己的文件，不用照着抄）时比终端宽的行折开、制表符展开，末尾说一句折过。"""
    lines = text.rstrip("\n").split("\n")
    shown = len(lines) if len(lines) <= limit else \
        limit - 1 if lines[limit - 1].rstrip().endswith(":") else limit   # 不停在一个 if 上、下面却没有它的 return
    out, folded = [], False
    for line in lines[:shown]:
        if fold:
            got, f = _fold_code(line, wrap_width())
            out += got
            folded |= f
        else:
            out.append(line)
    if folded:
        out += wrap(FOLDED_FILE, wrap_width())
    if shown < len(lines):
        out += wrap("    " + _cut_note(len(lines), shown, whole), wrap_width(), "      ")
    return "\n".join(out)


def _cut_note(total: int, shown: int, whole: str) -> str:
    """清单只印了开头时的那句：一共几行、印了几行、整份在哪（listing 和 print_numbered 共用）。"""
    return f"……（一共 {total} 行，这里只印了开头 {shown} 行" + (f"；整份在 {whole}" if whole else "") + "）"


def print_numbered(lines: list[tuple[int, str]], limit: int, whole: str) -> None:
    """一个文件的原文，左边是行号：(行号, 那一行) 的列表。行号占的宽度按印出来的行号算；比终端宽的行折开
    （续行多缩进四格，末尾说一句）、制表符展开成空格（_fold_code）。超过 limit 行只印开头 limit 行，再说一共几行、
    整份在哪（whole）。"""
    shown = lines[:limit]
    w = len(str(shown[-1][0])) if shown else 1
    folded = False
    for n, text in shown:
        got, f = _fold_code(text, wrap_width(), f"{n:>{w}} | ")
        print("\n".join(got))
        folded |= f
    if folded:
        print_note(FOLDED_FILE)
    if len(lines) > limit:
        print_note(_cut_note(len(lines), limit, whole))


def print_try(items: list[tuple[str, str | tuple[str, ...]]], note: str | None = None) -> None:
    """空一行，印"可以试试："；每条是 (说明, 命令)：说明照常折行，命令缩进在说明下面、单独一行，方便复制；一行放不下
    时按 shell 的续行写法（行尾 " \\"）在参数之间折成几行（command_lines），整段复制照样能跑，参数从不折断。命令也可以是
    几条依次跑的命令（元组）：每条单独一行（一行放不下 "A && B" 时用它；一行一条，各自复制）。
    note：所有命令共同的一句交代（比如"这些命令用的是 MockLLM"），折好行印在"可以试试："下面、第 1 条上面。
    这次运行选的不是默认的 GPU（--gpu a100）时，每条 python3 脚本.py 后面、make run 和 make openevolve 的 ARGS 里
    加上同样的 --gpu，照着运行还是同一块 GPU。"""
    gpu = RUN_GPU[0]
    if gpu is not None:
        def same_gpu(command: str) -> str:
            if "--gpu" in command:
                return command
            command = re.sub(r"(python3 \S+\.py)", rf"\1 --gpu {gpu.key}", command)
            m = re.match(r"make (run|openevolve)\b(?: ARGS=(?:\"([^\"]*)\"|(\S+)))?(.*)$", command)   # make 跑的也是编号脚本
            if m:
                given = m[2] or m[3]
                args = f"--gpu {gpu.key}" + (f" {given}" if given else "")
                command = f'make {m[1]} ARGS="{args}"{m[4]}'
            return command
        items = [(what, tuple(map(same_gpu, command)) if isinstance(command, tuple) else same_gpu(command))
                 for what, command in items]
    print("\n可以试试：")
    if note:
        print("\n".join(wrap("  " + note, wrap_width(), "  ")))
    for i, (what, command) in enumerate(items, 1):
        print(_numbered(i, what))
        for c in (command,) if isinstance(command, str) else command:
            print("\n".join(command_lines(c, wrap_width(), display_width(f"  {i}. ") + 2)))


def command_lines(command: str, width: int, indent: int) -> list[str]:
    """一条要照抄的命令印成几行：缩进 indent 列放得下就一行；放不下就在参数之间折开（layout.wrap_command），除了
    最后一行都以 " \\" 结尾（shell 的续行：整段复制到终端里是同一条命令），续行再多缩进 2 列。一个参数本身比一行
    还宽时，让终端去折它。"""
    if indent + display_width(command) <= width:
        return [" " * indent + command]
    lines = wrap_command(command, width - indent - 2, width - indent - 4)     # 行尾留 " \\"；续行多缩进 2 列
    return [" " * (indent + (2 if k else 0)) + line for k, line in enumerate(lines)]


# ================================================================ 图：折线、散点、热力图、条形图
#
#     format_line(title, series, ...)        几条折线共用一个 x 轴（例如最好分数随提议增长），可加带标签的水平参考线
#     format_scatter(title, series, ...)     散点（例如训练分数对测试分数），可加 y = x 和其他带标签的折线（屋顶线）
#     format_heatmap(title, rows, cols, v)   行 × 列的数值用深浅表示，附数值刻度；最大、最小的格子印出数值
#     format_bars(title, labels, values)     横条；values 的每一项是一串数时画成堆叠的横条，附图例
#     Charts(svg_dir)                        脚本用的"图的出口"：每张图一行代码，印到终端，给了目录就再写一个 SVG
#
# 和表格一样按显示宽度排（中文两列）。图只画形状，数字留在旁边的表格和句子里。
# 只有标准输出是终端、且没有设置 NO_COLOR 时才上颜色，否则单色。宽度：终端时跟着终端（最多 CHART_MAX 列），
# 不是终端时 PIPE_WIDTH 列（设了 COLUMNS 就按它），重定向到文件的输出每次逐字节相同。
# 画框、方块这些字符在 Unicode 里是"宽度不定"（A）：西文终端里占一列，这里也按一列算（× 和 µ 也是这样）。

CHART_MAX = 100                      # 图最宽多少列
FILLS = "█▓▒░▞"                      # 堆叠横条的第 1、2、… 段
SHADES = "·░▒▓█"                     # 热力图从小到大五档
EIGHTHS = " ▏▎▍▌▋▊▉"                 # 单条横条末端的 1/8 格
REF, CURVE = "╌", "·"                # 水平参考线；y = x、屋顶线这类辅助线
COLORS = (34, 31, 32, 35, 33, 36)    # ANSI 前景色：蓝、红、绿、紫、黄、青
HEAT_COLORS = (90, 32, 33, 31, 91)   # 热力图五档的颜色：灰、绿、黄、红、亮红


def use_color() -> bool:
    """上不上颜色：标准输出是终端，而且 NO_COLOR 没有设置（或是空串；见 no-color.org）。"""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def chart_width() -> int:
    """图的宽度：折行宽度（终端时跟着终端，不是终端时 100 列或 COLUMNS），最多 CHART_MAX 列。"""
    return min(wrap_width(), CHART_MAX)


ANSI = re.compile(r"\033\[[0-9;]*m")


def _at_least(chart: str, width: int) -> str:
    """排好的图比 width 宽时（数据多、终端窄：每格、每段刻度都有个最窄的样子），在图下面说一行它按最窄的样子印。"""
    need = max(display_width(ANSI.sub("", line)) for line in chart.split("\n"))
    return chart if need <= width else f"{chart}\n（这张图最窄也要 {need} 列，比 {width} 列宽：按最窄的样子印。）"


def _paint(text: str, code: int | None, on: bool) -> str:
    """给一段字加 ANSI 颜色（on 为假或 code 为空时原样返回）。"""
    return f"\033[{code}m{text}\033[0m" if on and code is not None and text.strip() else text


def _series_marks(series, background=None) -> dict:
    """每条序列的 (记号, 颜色)：记号见 layout.series_marks；background 那条不上色。"""
    return {name: (mark, None if k is None else COLORS[k % len(COLORS)])
            for name, (mark, k) in series_marks(series, background).items()}


def _plot(title, series, *, x_label, y_label, x_fmt, y_fmt, refs=(), curves=(), connect, same_range=False,
          log_x=False, log_y=False, width=None, height=None, color=None, background=None) -> str:
    """折线图和散点图共用的画布：左边 y 刻度，右边参考线 / 辅助线的标签，下面 x 刻度、x 轴名和图例。"""
    width = width or chart_width()
    on = use_color() if color is None else color
    series = {name: list(pts) for name, pts in series.items()}
    if not series or not any(series.values()):
        raise ValueError(f"图「{title}」没有数据点")
    if len(series) > len(MARKS):
        raise ValueError(f"图「{title}」最多 {len(MARKS)} 条序列")
    xs = finite([p[0] for pts in series.values() for p in pts], f"图「{title}」的 x ", log_x)
    ys = finite([p[1] for pts in series.values() for p in pts], f"图「{title}」的 y ", log_y)
    refs = [(label, finite([y], f"参考线「{label}」", log_y)[0]) for label, y in refs]
    curves = [(label, [(float(x), float(y)) for x, y in pts]) for label, pts in curves]
    ys += [y for _, y in refs]
    for label, pts in curves:
        xs += finite([p[0] for p in pts], f"辅助线「{label}」的 x ", log_x)
        ys += finite([p[1] for p in pts], f"辅助线「{label}」的 y ", log_y)
    if same_range:                                         # 散点画 y = x 时两根轴用同一个范围
        xs = ys = xs + ys

    height = height or 13
    yaxis = Axis(ys, height, log_y, y_fmt, 5, soft=True)
    left = max(display_width(s) for s in yaxis.labels) + 2              # "1.25× ┤"
    labels = [(label, "r", y) for label, y in refs] + [(label, "c", pts) for label, pts in curves]
    right = max((display_width(lab) + 2 for lab, _, _ in labels), default=0)
    inline = width - left - right >= max(24, width // 2) and len(labels) <= yaxis.cells  # 放不下时标签挪到图例里
    xaxis = Axis(xs, width - left - (right if inline else 0), log_x, x_fmt,
                  max(2, min(6, (width - left - right) // 12)), like=yaxis if same_range else None)
    H, P = yaxis.cells, xaxis.cells
    grid = [[(" ", None)] * P for _ in range(H)]
    if same_range:                                         # y = x（每个点 x = y 的那条辅助线）画满两根轴共有的范围，
        a, b = max(xaxis.lo, yaxis.lo), min(xaxis.hi, yaxis.hi)   # 和 SVG 一样从左下角到右上角（学生报过：
        ends = [10.0 ** v if log_x else v for v in (a, b)]        # 终端里它只画到数据的范围，左下角缺一截）
        labels = [(label, kind, [(e, e) for e in ends] if kind == "c" and all(x == y for x, y in data) else data)
                  for label, kind, data in labels]

    drawn: dict = {}                                       # 记号 → 它画过的格子（看一条序列是不是整条被盖住）

    def put(fx, fy, ch, code):
        c, r = round(fx), H - 1 - round(fy)
        if 0 <= c < P and 0 <= r < H:
            grid[r][c] = (ch, code)
            drawn.setdefault(ch, set()).add((r, c))

    def trace(pts, ch, code, joined):
        cells = [(xaxis.pos(x), yaxis.pos(y)) for x, y in pts]
        if not joined or len(cells) == 1:
            for fx, fy in cells:
                put(fx, fy, ch, code)
            return
        for (x0, y0), (x1, y1) in zip(cells, cells[1:]):   # 沿线段每半格取一个点
            steps = int(max(abs(x1 - x0), abs(y1 - y0)) * 2) + 1
            for k in range(steps + 1):
                put(x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps, ch, code)

    side, ref_rows, merged = {}, {}, []                    # 行 → 右边的标签；行 → 画在那一行的参考线
    for label, kind, data in labels:
        if kind == "r":
            row = H - 1 - round(yaxis.pos(data))
            grid[row] = [(REF, None)] * P
            if row in ref_rows:                            # 学生报过：两条参考线落在同一行，后一条的标签挪到上一行的
                merged.append((ref_rows[row], label))      # 刻度旁，像是比另一条高；说一句
            ref_rows.setdefault(row, label)
        else:
            trace(data, CURVE, None, True)
            row = H - 1 - round(yaxis.pos(data[-1][1]))
        free = sorted(range(H), key=lambda r: (abs(r - row), r))          # 同一行已有标签就放到最近的空行
        if inline:
            side[next(r for r in free if r not in side)] = label
    marks = _series_marks(series, background)
    order = [n for n in series if n == background] + [n for n in series if n != background][::-1]
    for name in order:                                                  # 衬底最先画；其余的第一条序列画在最上面
        trace(series[name], *marks[name], connect)
    hidden = hidden_series(series, marks, drawn, grid, background)
    hidden += [f"（参考线「{a}」和「{b}」相差不到一格，在图上是同一条线"
               + ("；「" + b + "」的标签印在了附近的另一行。）" if inline else "。）") for a, b in merged]
    if connect:
        hidden += hidden_tails(series, marks, drawn, grid, background, xaxis, x_fmt)
    else:                                                  # 散点：几个点落在同一格时记号比点少，说一句
        cells = [(H - 1 - round(yaxis.pos(y)), round(xaxis.pos(x))) for name in series if name != background
                 for x, y in series[name]]
        if len(set(cells)) < len(cells):                   # 学生报过：5 个种子的图上只数得出 4 个记号
            hidden.append(f"（{len(cells)} 个点在图上是 {len(set(cells))} 个记号：有 {len(cells) - len(set(cells))} 个"
                          "和别的点落在同一格（重合或挨得很近），被盖住了。）")

    tick_rows = {H - 1 - i * yaxis.per: lab for i, lab in enumerate(yaxis.labels)}
    out = wrap(title, width)
    if y_label:
        out.append(y_label)
    for r in range(H):
        lab = tick_rows.get(r, "")
        body = "".join(_paint(ch, code, on) for ch, code in grid[r])
        line = " " * (left - 2 - display_width(lab)) + lab + (" ┤" if lab else " │") + body
        if inline and r in side:
            line += " " + side[r]
        out.append(line.rstrip(" "))
    tick_cols = [i * xaxis.per for i in range(len(xaxis.ticks))]
    out.append(" " * (left - 1) + "└" + "".join("┬" if c in tick_cols else "─" for c in range(P)))
    under, end = "", -2                                     # x 刻度标签：居中在刻度下，不出右边界；挤不下就跳过
    for c, lab in zip(tick_cols, xaxis.labels):
        w = display_width(lab)
        start = max(0, min(left + c - (w - 1) // 2, width - w))
        if start < end + 2:
            continue
        under += " " * (start - display_width(under)) + lab
        end = start + w - 1
    out.append(under)
    if x_label:
        out.append(" " * max(0, left + (P - display_width(x_label)) // 2) + x_label)
    legend = [f"{marks[name][0]} {name}" for name in series]                       # 图例：记号 名字
    legend_painted = [_paint(*marks[name], on) + f" {name}" for name in series]
    if not inline:
        extra = [f"{REF if kind == 'r' else CURVE} {label}" for label, kind, _ in labels]
        legend, legend_painted = legend + extra, legend_painted + extra
    notes = [line for text in hidden for line in wrap(text, width, "  ")]
    return _at_least("\n".join(out + _legend(legend, legend_painted if on else legend, width) + notes), width)


def _legend(items: list[str], painted: list[str], width: int, label: str = "图例：") -> list[str]:
    """label 加各项，两项之间两个空格；一行放不下就换行（续行缩进 6 列），一项不拆开（除非一项就比一行长）。"""
    lines, cur, cur_w, first = [], label, display_width(label), True
    for item, shown in zip(items, painted):
        w = display_width(item)
        if not first and cur_w + 2 + w > width:
            lines.append(cur)
            cur, cur_w, first = " " * 6, 6, True
        if w > width - cur_w and first and shown == item:  # 一项比一行还长：按字折
            pieces = wrap(item, width - cur_w)
            lines += [cur + p for p in pieces[:-1]]
            cur, cur_w = " " * 6, 6
            item = shown = pieces[-1]
            w = display_width(item)
        cur += ("" if first else "  ") + shown
        cur_w += (0 if first else 2) + w
        first = False
    return lines + [cur]


def format_line(title: str, series: dict, *, x_label: str = "", y_label: str = "", x_fmt: str = "{:g}",
                y_fmt: str = "{:g}", refs=(), log_x: bool = False, log_y: bool = False, width: int | None = None,
                height: int | None = None, color: bool | None = None, steps: bool = False) -> str:
    """折线图。series：{名字: [(x, y), ...]}，按给的顺序用 ●、○、… 画；refs：[(标签, y)] 水平参考线，标签印在线的右端。
    steps=True：按台阶画（as_steps：到这一步为止最好的分数，只在新的一点上跳）。"""
    if steps:
        series = {name: as_steps(pts) for name, pts in series.items()}
    return _plot(title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, refs=refs, connect=True,
                 log_x=log_x, log_y=log_y, width=width, height=height, color=color)


def format_scatter(title: str, series: dict, *, x_label: str = "", y_label: str = "", x_fmt: str = "{:g}",
                   y_fmt: str = "{:g}", diagonal: bool = False, curves=(), log_x: bool = False, log_y: bool = False,
                   width: int | None = None, height: int | None = None, color: bool | None = None,
                   background: str | None = None) -> str:
    """散点图。series：{名字: [(x, y), ...]}；diagonal 画 y = x（两根轴用同一个范围）；curves：[(标签, [(x, y), ...])] 辅助折线。
    background：当衬底的那条序列的名字（"其余 84 个形状"）：画在最下面、用 ○、不上色，要看的几条各有自己的记号和名字。"""
    curves = list(curves)
    if diagonal:
        vals = [v for pts in series.values() for p in pts for v in p]
        lo, hi = min(vals), max(vals)
        curves.append(("y = x", [(lo, lo), (hi, hi)]))
    return _plot(title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, curves=curves,
                 connect=False, same_range=diagonal, log_x=log_x, log_y=log_y, width=width, height=height, color=color,
                 background=background)


def format_heatmap(title: str, rows: list[str], cols: list[str], values: list[list[float]], *, fmt: str = "{:.2f}",
                   x_label: str = "", y_label: str = "", log: bool = False, width: int | None = None,
                   color: bool | None = None, span: tuple[float, float] | None = None) -> str:
    """热力图：rows × cols 个格子，深浅 · ░ ▒ ▓ █ 表示大小（log=True：按比例分档）；下面是刻度和最大、最小的格子
    （格子够宽时也印在格子里）。span：刻度的两头（见 heat_levels），要和另一张图逐格比深浅时给同一个。"""
    width = width or chart_width()
    on = use_color() if color is None else color
    if not rows or not cols or len(values) != len(rows) or any(len(r) != len(cols) for r in values):
        raise ValueError(f"热力图「{title}」要 {len(rows)} 行 × {len(cols)} 列的数")
    values, fmt = [finite(r, f"热力图「{title}」的数据") for r in values], grouped(fmt)   # 千分位：和表格一样
    lo, hi, levels = heat_levels(values, log, fmt, span)
    flat = [(v, i, j) for i, r in enumerate(values) for j, v in enumerate(r)]
    big, small = heat_extremes(flat, fmt)          # 最大的、最小的（并列取第一个；印出来都一样时是同一格）
    lw = max(display_width(s) for s in rows + [y_label]) + 1
    vw = max(display_width(fmt.format(lo)), display_width(fmt.format(hi)))
    cw = max(2, min(max(vw, max(map(display_width, cols))) + 1, (width - lw) // len(cols)))
    out = wrap(title, width)
    if x_label:
        out.append(" " * lw + x_label)
    tiers = -(-(max(map(display_width, cols)) + 1) // cw)    # 列名太宽时错开印在几行上（第 j 列在第 j % tiers 行）
    for t in range(tiers):
        head = _pad(y_label if t == tiers - 1 else "", lw, False)
        for j, c in enumerate(cols):
            if j % tiers == t:
                head += _pad(c, cw - 1, display_width(c) <= cw - 1) + " "
            elif display_width(head) <= lw + j * cw:
                head += " " * cw
        out.append(head.rstrip())
    for i, name in enumerate(rows):
        line = _pad(name, lw, False)
        for j, lv in enumerate(levels[i]):
            cell = SHADES[lv] * (cw - 1)
            if (i, j) in ((big[1], big[2]), (small[1], small[2])) and display_width(fmt.format(values[i][j])) <= cw - 1:
                cell = _pad(fmt.format(values[i][j]), cw - 1, True)
            line += _paint(cell, HEAT_COLORS[lv], on) + " "
        out.append(line.rstrip())
    if hi == lo:
        return _at_least("\n".join(out + wrap(f"刻度：{SHADES[0]} 所有格子都是 {fmt.format(lo)}。", width, "  ")), width)
    edges = heat_edges(lo, hi, log)
    scale = [f"{SHADES[k]} {fmt.format(edges[k])}–{fmt.format(edges[k + 1])}" for k in range(len(SHADES))]
    out += _legend(scale, [_paint(x[0], HEAT_COLORS[k], on) + x[1:] for k, x in enumerate(scale)], width,
                   "刻度（按比例分档，每档含下界）：" if log else "刻度（每档含下界）：")
    ext = extremes_note(flat, big, small, fmt, lambda t: f"{rows[t[1]]}，{x_label or '列'} = {cols[t[2]]}",
                        "印出数值") + "。"
    return _at_least("\n".join(out + wrap(ext, width, "  ")), width)


def format_bars(title: str, labels: list[str], values: list, *, segments: list[str] | None = None, fmt: str = "{:g}",
                relative: bool = False, notes: list[str] | None = None, width: int | None = None,
                color: bool | None = None) -> str:
    """横条。values[i] 是一个数，或（给了 segments 时）一串数：画成 █ ▓ ▒ ░ 堆起来的横条，下面是图例。条尾印总数
    （按 fmt），给了 notes 就印 notes[i]。relative=True：每条按自己的总数画满整条，看的是各段的比例（总数差几个数量级时用）。"""
    width, fmt = width or chart_width(), grouped(fmt)                   # 千分位：和表格一样
    on = use_color() if color is None else color
    if len(labels) != len(values) or not labels:
        raise ValueError(f"横条图「{title}」要一样多的标签和数（{len(labels)} 个标签，{len(values)} 组数）")
    parts = [[v] if segments is None else list(v) for v in values]
    if segments is not None and (any(len(p) != len(segments) for p in parts) or len(segments) > len(FILLS)):
        raise ValueError(f"横条图「{title}」每条要 {len(segments)} 段（最多 {len(FILLS)} 段）")
    finite([v for p in parts for v in p], f"横条图「{title}」的数据")
    if any(v < 0 for p in parts for v in p):
        raise ValueError(f"横条图「{title}」的数据里有负数：横条只能画 ≥ 0 的数")
    totals = [sum(p) for p in parts]
    texts = [fmt.format(t) for t in totals] if notes is None else list(notes)
    lw = max(map(display_width, labels)) + 2
    above = width - lw - max(map(display_width, texts)) - 1 < 10        # 太窄：标签单独占一行，条缩进两格
    lw = 2 if above else lw
    bw = max(4, width - lw - max(map(display_width, texts)) - 1)        # 条最长几格
    out = wrap(title, width)
    for label, p, text in zip(labels, parts, texts):
        top = (sum(p) if relative else max(totals)) or 1
        if segments is None:                                 # 单条：整格 █ 加 1/8 格
            eighths = round(p[0] / top * bw * 8)
            bar = _paint("█" * (eighths // 8) + EIGHTHS[eighths % 8].strip(), COLORS[0], on)
            n = -(-eighths // 8)
        else:                                                # 堆叠：按累计值取整，每段至少不丢总长
            cells = _segment_cells(p, top, bw)
            bar = "".join(_paint(FILLS[k] * c, COLORS[k % len(COLORS)], on) for k, c in enumerate(cells))
            n = sum(cells)
        out += [label] if above else []
        out.append(_pad("" if above else label, lw, False) + bar + " " * (bw - n + 1) + text)
    if segments is not None:
        out += _legend([f"{FILLS[k]} {s}" for k, s in enumerate(segments)],
                       [f"{_paint(FILLS[k], COLORS[k % len(COLORS)], on)} {s}" for k, s in enumerate(segments)], width)
    return _at_least("\n".join(out), width)


def _segment_cells(parts, top: float, width: int) -> list[int]:
    """堆叠横条每段几格：按累计值取整（总长不丢）；最大的那一段（只有一段最大时）一定比别的段都长——取整能让
    46.6 和 47.7 画成 11 格和 10 格，图说"最长的一段就是瓶颈"就画反了（一位同学在第 13 讲的图里数出来的）。
    挪的那一格从和它一样长或更长的段里拿，误差不超过取整本来就有的一格。"""
    cells, edge, acc = [], 0, 0.0
    for v in parts:
        acc += v
        nxt = round(acc / top * width)
        cells.append(nxt - edge)
        edge = nxt
    big = max(range(len(parts)), key=lambda k: parts[k])
    if sum(v == parts[big] for v in parts) == 1:
        while True:
            rival = max((k for k in range(len(parts)) if k != big), key=lambda k: cells[k], default=None)
            if rival is None or cells[rival] < cells[big] or cells[rival] == 0:
                break
            cells[rival] -= 1
            cells[big] += 1
    return cells


_NOT_IN_COMMAND = {"--svg", "--jobs"}      # 画图的命令里不写它们：写到哪里、几个进程并行，图都一样
# 参数里的网址（--llm https://主机/v1?key=…）：用户名、密码、查询串、#… 不写进图里（托管 API 的密钥常放在查询串里；
# 幻灯片上的图会离开这台机器）。和 evolve.openai_llm 印地址时一样写成 "…@"、"?…"
_URL_SECRETS = re.compile(r"(?i)(https?://)([^/?#\s]*@)?([^?#\s]*)([?#]\S*)?")


def command_line() -> str:
    """这次运行的命令（SVG 图的最下面印它）："python3 lecture14/05_ablations.py --quick --gpu a100"。脚本的路径相对于
    仓库的根目录（从哪个目录运行都一样；仓库外面的拷贝只写文件名），参数照命令行上的样子，去掉 --svg、--jobs；
    参数里网址的用户名、密码、查询串写成 "…"（_URL_SECRETS）。"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    rel = os.path.relpath(script, root) if script else ""
    shown = rel if rel and not rel.startswith(os.pardir) else os.path.basename(script)
    args, rest = [], list(sys.argv[1:])
    while rest:
        a = rest.pop(0)
        if a in _NOT_IN_COMMAND:
            rest[:1] = []                                 # 连同它的值
        elif a.split("=", 1)[0] not in _NOT_IN_COMMAND:
            args.append(shlex.quote(_URL_SECRETS.sub(
                lambda m: m[1] + ("…@" if m[2] else "") + m[3] + ("?…" if m[4] else ""), a)))
    text = " ".join(["python3", shlex.quote(shown), *args])
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)   # 控制字符写成 \x..（XML 里放不下）


def _os_why(e: OSError, doing: str) -> str:
    """一个 OSError 用平常的话说（doing：在做什么，"建目录"、"写文件"）。"""
    return {errno.EACCES: f"没有在那里{doing}的权限", errno.EPERM: f"没有在那里{doing}的权限",
            errno.EROFS: "那里的文件系统是只读的", errno.ENOTDIR: "路径里有一段不是目录",
            errno.ENOENT: "那里不让新建文件" if doing == "写文件" else "路径里有一段不存在、也建不了",
            errno.ENOSPC: "磁盘满了", errno.ENAMETOOLONG: "路径太长",
            errno.EEXIST: "那里有一个同名的文件"}.get(e.errno) or e.strerror or str(e)


class Charts:
    """脚本用的"图的出口"：每张图一行代码。印到终端；svg_dir 不是 None 时，同一张图也写成 svg_dir/名字.svg。

        charts = Charts(args.svg)
        charts.line("04_demo2_best_score", "最好分数随提议增长", {"进化": list(enumerate(history))}, refs=[...])

    drawn 按顺序记着画过的每张图：名字 → (种类, 标题, 数据参数)，测试用它核对图里的数就是表格和句子里的数。
    脚本在开头建一个 CHARTS = Charts()，main() 里按 --svg 调 CHARTS.reset(目录)。
    """

    def __init__(self, svg_dir: str | None = None, show: bool = True):
        self.svg_dir, self.show = svg_dir, show
        self.drawn: dict[str, tuple[str, str, dict]] = {}
        self.files: list[str] = []
        self.replaced: list[str] = []                # 写之前目录里就有的同名文件（别的运行写的）：report 说一声
        self.svg_error: str | None = None            # 写 SVG 出错时的那半句（之后不再写，report 说一句）

    def reset(self, svg_dir: str | None = None, show: bool = True) -> "Charts":
        """重新开始：清空记录，换一个 SVG 目录（None：不写文件）。返回自己。"""
        self.__init__(svg_dir, show)
        return self

    CREATED: list = []               # check_dir 为这次运行新建的目录：一张图也没写时 report() 把它删掉（不留空目录）

    @staticmethod
    def add_argument(parser, draws: bool = True) -> None:
        """给脚本的 argparse 加上 --svg DIR。draws=False：这个脚本不画图（help 照实说；所有编号脚本都接受 --svg）。"""
        parser.add_argument("--svg", metavar="DIR", default=None,
                            help="每张图另存一个 SVG 文件到 DIR（目录不存在就建；文件名说明画的是什么）" if draws else
                            "这个脚本不画图：和别的编号脚本一样接受 --svg DIR，但不写文件、不建目录")

    @staticmethod
    def check_dir(parser, path: str | None) -> str | None:
        """检查 --svg 给的目录：不存在就建；建不了、或者是个文件，就用 parser.error 说一句（退出码 2）。"""
        if path is None:
            return None
        if not path.strip():
            parser.error("--svg 后面要一个目录名（收到的是空的），例如 --svg figs")
        if os.path.exists(path) and not os.path.isdir(path):
            parser.error(f"--svg 要的是一个目录，{path} 是一个文件；换一个目录名")
        try:
            if not os.path.isdir(path):
                made, up = [], os.path.abspath(path)
                while not os.path.exists(up):                 # 这次要新建的每一层（--svg a/b/c 时 a、a/b、a/b/c）
                    made.append(up)
                    up = os.path.dirname(up)
                os.makedirs(path)
                Charts.CREATED[:0] = made                     # 最里面的在前：删的时候先删它
        except FileExistsError:                               # 刚刚别的进程建了它
            pass
        except OSError as e:
            parser.error(f"--svg 的目录 {path} 建不了（{_os_why(e, '建目录')}）；换一个能写的目录")
        try:                                                  # 已经有的目录也得写得进去（学生报过：--svg /usr 算完
            fd, probe = tempfile.mkstemp(dir=path, prefix=".svg-check-")   # 演示 1 才在写第一张图时一段 traceback）
            os.close(fd)
            os.remove(probe)
        except OSError as e:
            parser.error(f"--svg 的目录 {path} 写不进去（{_os_why(e, '写文件')}）；换一个能写的目录")
        return path

    def report(self) -> None:
        """给了 --svg 时，在标准错误上说一句写了几个文件、在哪（标准输出不变）；这个脚本没有图也说一声。"""
        from runner import say                               # 标准错误是终端时按它的宽度折行（同一目录，只用标准库）
        if self.svg_dir is not None and not self.files:
            for d in Charts.CREATED:                          # 为这次运行建的，一个文件也没写：不留空目录（连同
                with contextlib.suppress(OSError):            # 新建的上层；别的东西放进去了的删不掉，就留着）
                    os.rmdir(d)
            say(f"\n这个脚本没有画图，--svg 没有往 {self.svg_dir} 写文件。")
        if self.files:
            say(f"\n写了 {len(self.files)} 个 SVG 文件到 {self.svg_dir}：" + "、".join(map(os.path.basename, self.files))
                + (f"（其中 {len(self.replaced)} 个换掉了目录里原有的同名文件）" if self.replaced else ""))
        if self.svg_error is not None:
            say(f"\n{self.svg_error}：从那张图起不再写 SVG，这次运行照常跑完。")
        Charts.CREATED.clear()                                # 同一个进程里的下一次运行（测试）只管它自己建的

    def _emit(self, kind: str, name: str, title: str, data: dict, options: dict) -> None:
        """画一张图。options 里的 slide 是 SVG（幻灯片）上的标题（终端里的标题可以说"上表"，幻灯片上不行），
        slide_names 是 SVG 图例里换掉的序列名 {终端里的名字: 幻灯片上的名字}；都不给就和终端里一样。热力图的 marks、
        marks_note（加 * 的格子和说明，见 svg.heatmap_svg）只给 SVG：终端里的格子不印数，* 在它上面的表里。"""
        options = dict(options)
        slide, slide_names = options.pop("slide", None) or title, options.pop("slide_names", None) or {}
        only_svg = {k: options.pop(k) for k in ("marks", "marks_note") if k in options}   # 热力图：只在 SVG 上的 * 记号
        self.drawn[name] = (kind, title, data)               # 同一个名字再画一次：记录和文件都换成新的
        if self.show:
            print("\n" + globals()[f"format_{kind}"](title, **data, **options))
        if self.svg_dir is not None:
            import svg                                       # 同一目录的 svg.py：只有写文件时才 import（它要 xml、urllib）
            # 不是默认的 GPU 时文件名带上它（审读报过：--gpu a100 的图悄悄换掉了同一目录里 H100 的同名图，标题也一样）
            path = os.path.join(self.svg_dir, f"{name}{'-' + RUN_GPU[0].key if RUN_GPU[0] is not None else ''}.svg")
            options = {k: v for k, v in options.items() if k not in ("width", "height", "color")}
            if "series" in data:
                data = dict(data, series={slide_names.get(k, k): v for k, v in data["series"].items()})
            text = getattr(svg, f"{kind}_svg")(slide, **data, **options, **only_svg, source=command_line())
            if self.svg_error is None:
                try:
                    os.makedirs(self.svg_dir, exist_ok=True)
                    if os.path.exists(path) and path not in self.files:
                        self.replaced.append(path)
                    with open(path, "w", encoding="utf-8", newline="\n") as f:
                        f.write(text)
                    if path not in self.files:               # 同一张图画第二遍：还是那一个文件
                        self.files.append(path)
                except OSError as e:                         # 跑到一半写不进去了（磁盘满了、目录被删了）：图不写了，
                    self.svg_error = f"写 {path} 时出错（{_os_why(e, '写文件')}）"   # 这次运行照常跑完，最后说一句

    def line(self, name: str, title: str, series: dict, *, refs=(), **options) -> None:
        """折线图（format_line）；refs 是 [(标签, y)]。"""
        self._emit("line", name, title, dict(series=series, refs=list(refs)), options)

    def scatter(self, name: str, title: str, series: dict, *, curves=(), **options) -> None:
        """散点图（format_scatter）；curves 是 [(标签, [(x, y), ...])]。"""
        self._emit("scatter", name, title, dict(series=series, curves=list(curves)), options)

    def heatmap(self, name: str, title: str, rows: list[str], cols: list[str], values, **options) -> None:
        """热力图（format_heatmap）。"""
        self._emit("heatmap", name, title, dict(rows=rows, cols=cols, values=values), options)

    def bars(self, name: str, title: str, labels: list[str], values, **options) -> None:
        """横条 / 堆叠横条（format_bars）。"""
        self._emit("bars", name, title, dict(labels=labels, values=values), options)
