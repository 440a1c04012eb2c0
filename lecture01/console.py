"""
第 1 讲 · console —— 全课程共用的终端输出：标题、表格、观察。中文字符占两列，所以一律按"显示宽度"对齐和折行。

    print_header(title)            空一行，再印 ==== / 标题 / ====
    print_table(headers, rows)     按显示宽度对齐的表格；像数字的单元格右对齐；比终端宽时，比数据宽的表头折成几行
    check(ok, text, criterion, measured)
                                   一句观察当作数据：成立时说 text；不成立时说"【本次不成立】"、讲义的判据和这次量到的值
    print_observations(items)      "观察：" 加编号的几段话，按终端宽度折行，续行缩进到编号之后；
                                   items 里可以是 Observation（会被检验的说法），也可以是普通字符串（引用、说明，不是论断）
    failed(items)                  items 里不成立的那些 Observation（测试和统计从数据数，不 grep 文字）
    print_note(text)               一段说明（表格的图例、列的含义），按终端宽度折行
    print_try(items)               "可以试试：" 每条一句说明、一行完整的命令

图（文件后半）：format_line、format_scatter、format_heatmap、format_bars 把图排成字符串；Charts 是脚本用的出口，
每张图一行，印到终端，要的话再由同一目录的 svg.py 写成 SVG 文件。

只用标准库；导入时不打印任何东西。
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

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
    """补上句号（已经以句末标点结尾的不补）。以括号结尾的，括号里的句号不算："……（中位数）" 也要补，"……。）" 不补。"""
    s = s.strip()
    return s if not s or s[-1] in "。！？" or s[-2:] in ("。）", "！）", "？）") else s + "。"


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
    """字符串在终端里占几列：宽字符、全角字符 2 列，组合字符 0 列，其余 1 列。
    折行、对齐表格时对每一段都要算（一次运行上万次），所以纯 ASCII 直接取长度（ASCII 里没有组合字符、没有宽字符，
    每个都是 1 列），其余按字符查 _char_width 的缓存。"""
    if s.isascii():
        return len(s)
    return sum(map(_char_width, s))


@lru_cache(maxsize=4096)
def _char_width(ch: str) -> int:
    """一个字符占几列（display_width 的定义）；按字符缓存：课程印的不同字符只有几百个。"""
    return 0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1


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


RUN_GPU = [None]                   # 这次运行选的不是默认的 GPU 时是它的记录（runner 解析完 --gpu 时设；默认 GPU 是 None）
GPU_SAID = [False]                 # 这次运行已经说过"硬件换成……"了（runner 解析完参数时清掉）


def print_header(title: str) -> None:
    """空一行，然后 ====、标题、====；横线和标题一样宽，但不窄于 60 列、不宽于折行宽度。
    这次运行用的不是默认的 GPU（--gpu a100）时，第一个标题前先印一段：换了哪块 GPU、哪些旋钮没校准（参数都检查过了
    才走到这里，参数错了的运行不印它）。"""
    gpu = RUN_GPU[0]
    if gpu is not None and not GPU_SAID[0]:
        GPU_SAID[0] = True
        print("\n" + "\n".join(wrap(sys.modules["gpus"].describe(gpu), wrap_width())))
    rule = "=" * min(max(display_width(title), MIN_WIDTH), wrap_width())
    print(f"\n{rule}\n{title}\n{rule}")


def _numeric(cell: str) -> bool:
    """单元格像不像数字：去掉首尾空格后以数字开头，或以 +/- 加数字开头（"1.234×"、"12.3 µs"、"85%"）。"""
    return re.match(r"[+-]?\d", cell.strip()) is not None


def _pad(cell: str, width: int, right: bool) -> str:
    """按显示宽度补空格到 width 列。"""
    gap = " " * (width - display_width(cell))
    return gap + cell if right else cell + gap


HEADER_LINES = 3        # 表格太宽时，一个表头最多折成几行（折成两行放得下就只折两行）
HEADER_CHUNK = 6        # 在两个汉字中间折时，折开的两行都至少这么宽（一两个字的碎片比稍宽一点的表更难读）


def _header_breaks(tokens: list[str]) -> list[tuple[int, int, int]]:
    """表头可以在哪里折行：(这一行到第几个小段为止, 下一行从第几个小段开始, 折点的代价)。代价 0：在"（"前面、
    "）"后面；1：在"，、；："后面、在括号外的空格处（"时间 µs" 折成 "时间" 和 "µs"）；2：括号里的空格处；
    3：两个汉字中间（可能拆开一个词；括号里面不这样折）。
    只在两种地方折：一个空格处（两边至少有一边是西文，空格折掉；拼回去时两边有西文就补一个空格），
    或者两个宽字符之间（不拆西文词和数字，全角标点不落在行首、开括号不落在行尾）。这样折开的表头总能原样拼回去。"""
    out, depth = [], 0                                 # depth：在几层全角括号里面
    for k in range(1, len(tokens)):
        a, b = tokens[k - 1], tokens[k]
        depth += (a in OPENING) - (a in CLOSING and a not in "，。、；：！？")
        if b == " " and k + 1 < len(tokens) and a != " " and tokens[k + 1] != " ":
            if _kind(a[-1]) == "n" or _kind(tokens[k + 1][0]) == "n":
                out.append((k, k + 1, 1 if depth <= 0 else 2))
        elif (_kind(a[-1]) == "w" and _kind(b[0]) == "w" and b not in CLOSING and a not in OPENING
              and a not in UNBREAKABLE and b not in UNBREAKABLE):
            cost = 0 if b[0] == "（" or a[-1] == "）" else 1 if a[-1] in "，、；：" else 3
            if cost < 3 or depth <= 0:                 # 括号里面只在逗号、顿号后面折（"（中"/"位数）" 没法读）
                out.append((k, k, cost))
    return out


def _header_options(header: str) -> list[tuple[int, int, int, int, list[str]]]:
    """一个表头所有的折法（最多 HEADER_LINES 行；在两个汉字中间折的，两边的行都至少 HEADER_CHUNK 列）：
    (最宽一行的列数, 行数, 折点的代价之和, 最贵的一个折点的代价, 各行)。不折也算一种。"""
    tokens = _tokens(header)
    breaks = _header_breaks(tokens)
    options = [(display_width(header), 1, 0, 0, [header])]

    def walk(start: int, chosen: list[tuple[int, int, int]]) -> None:
        for br in breaks:
            if br[0] <= start:
                continue
            picks = chosen + [br]
            cuts = [0] + [x for e, b, _ in picks for x in (e, b)] + [len(tokens)]
            lines = ["".join(tokens[cuts[i]:cuts[i + 1]]) for i in range(0, len(cuts), 2)]
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
    natural = [[h] for h in head]
    if total(natural) <= target:
        return natural
    options = [_header_options(h) if display_width(h) > d else [] for h, d in zip(head, data)]

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


def format_table(headers: list[str], rows: list[list[object]], width: int | None = None) -> str:
    """把表格排成字符串：表头、一行 ----、数据行；列间两个空格，行尾不留空格。行可以比表头短（补空串）。
    表格比 width 宽（默认折行宽度 wrap_width()：终端的宽度，输出不是终端时 100 列）时，比数据宽的表头折成几行，
    都在 ---- 上面、每段靠左对齐在自己的列里（拼回去就是原来的表头：在空格处折的，两边有西文时补回一个空格）；
    列从不比它最宽的数据窄，数据单元格从不折。"""
    n = len(headers)
    if any(len(r) > n for r in rows):
        raise ValueError(f"有一行的单元格比表头的 {n} 列多")
    head = [str(h) for h in headers]
    body = [[str(c) for c in r] + [""] * (n - len(r)) for r in rows]
    data = [max((display_width(r[j]) for r in body), default=0) for j in range(n)]
    heads = _fit_headers(head, data, wrap_width() if width is None else width)
    widths = [max(d, *map(display_width, lines)) for lines, d in zip(heads, data)]

    def line(cells: list[str], align: bool) -> str:
        return "  ".join(_pad(c, w, align and _numeric(c)) for c, w in zip(cells, widths)).rstrip(" ")

    tops = [line([h[k] if k < len(h) else "" for h in heads], False) for k in range(max(map(len, heads), default=1))]
    return "\n".join(tops + ["  ".join("-" * w for w in widths)] + [line(r, True) for r in body])


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


def print_try(items: list[tuple[str, str]], note: str | None = None) -> None:
    """空一行，印"可以试试："；每条是 (说明, 命令)：说明照常折行，命令单独一行、从不折断，方便复制。
    note：所有命令共同的一句交代（比如"这些命令用的是 MockLLM"），折好行印在"可以试试："下面、第 1 条上面。
    这次运行选的不是默认的 GPU（--gpu a100）时，每条 python3 脚本.py 后面加上同样的 --gpu，照着运行还是同一块 GPU。"""
    gpu = RUN_GPU[0]
    if gpu is not None:
        items = [(what, re.sub(r"(python3 \S+\.py)(?! --gpu)", rf"\1 --gpu {gpu.key}", command)) for what, command in items]
    print("\n可以试试：")
    if note:
        print("\n".join(wrap("  " + note, wrap_width(), "  ")))
    for i, (what, command) in enumerate(items, 1):
        print(_numbered(i, what))
        print(" " * (display_width(f"  {i}. ") + 2) + command)


# ================================================================ 图：折线、散点、热力图、条形图
#
#     format_line(title, series, ...)        几条折线共用一个 x 轴（例如最好分数随提议增长），可加带标签的水平参考线
#     format_scatter(title, series, ...)     散点（例如训练分数对测试分数），可加 y = x 和其他带标签的折线（屋顶线）
#     format_heatmap(title, rows, cols, v)   行 × 列的数值用深浅表示，附数值刻度；最大、最小的格子印出数值
#     format_bars(title, labels, values)     横条；values 的每一项是一串数时画成堆叠的横条，附图例
#     Charts(svg_dir)                        脚本用的"图的出口"：每张图一行代码，印到终端，给了目录就再写一个 SVG
#
# 和表格一样按显示宽度排（中文两列）。图只画形状，数字留在旁边的表格和句子里。
# 默认单色；只有标准输出是终端、且没有设置 NO_COLOR 时才上颜色。宽度：终端时跟着终端（最多 CHART_MAX 列），
# 不是终端时固定 PIPE_WIDTH 列，重定向到文件的输出每次逐字节相同。
# 画框、方块这些字符在 Unicode 里是"宽度不定"（A）：西文终端里占一列，这里也按一列算（× 和 µ 也是这样）。

CHART_MAX = 100                      # 图最宽多少列
MARKS = "●○◆◇▲△■□"                   # 折线 / 散点的第 1、2、… 条序列用的记号
FILLS = "█▓▒░▞"                      # 堆叠横条的第 1、2、… 段
SHADES = "·░▒▓█"                     # 热力图从小到大五档
EIGHTHS = " ▏▎▍▌▋▊▉"                 # 单条横条末端的 1/8 格
REF, CURVE = "╌", "·"                # 水平参考线；y = x、屋顶线这类辅助线
LOG_SNAP = 0.01                      # 对数轴：最小的数比 10 的幂小不到 0.01 个数量级（约 2%）时，轴从这个幂开始
COLORS = (34, 31, 32, 35, 33, 36)    # ANSI 前景色：蓝、红、绿、紫、黄、青
HEAT_COLORS = (90, 32, 33, 31, 91)   # 热力图五档的颜色：灰、绿、黄、红、亮红


def use_color() -> bool:
    """上不上颜色：标准输出是终端，而且 NO_COLOR 没有设置（或是空串；见 no-color.org）。"""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def chart_width() -> int:
    """图的宽度：折行宽度（终端时跟着终端，不是终端时 100 列），最多 CHART_MAX 列。"""
    return min(wrap_width(), CHART_MAX)


def _paint(text: str, code: int | None, on: bool) -> str:
    """给一段字加 ANSI 颜色（on 为假或 code 为空时原样返回）。"""
    return f"\033[{code}m{text}\033[0m" if on and code is not None and text.strip() else text


def _check(values, what: str, positive: bool = False) -> list[float]:
    """把数据转成 float；有 NaN、无穷大（或对数轴上 ≤ 0 的数）就报错，说清是哪组数据。"""
    out = [float(v) for v in values]
    for v in out:
        if not math.isfinite(v) or (positive and v <= 0):
            raise ValueError(f"{what}里有 {v}：图只能画有限的数" + ("，对数轴上的数还必须大于 0" if positive else ""))
    return out


def nice_ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> tuple[float, list[float]]:
    """覆盖 [lo, hi] 的"整"刻度：步长是 1、2、5 乘 10 的幂（刻度印成两位小数也准），在 2 到 n + 2 段里挑多覆盖的范围
    最少的（一样少取段数离 n 近的）。integer=True（数据都是整数，比如第几个提议）：步长至少是 1，刻度都是整数
    （范围只有 1 时就是一段）。
    返回 (步长, 刻度)；lo == hi 时先撑开一点。"""
    if hi - lo <= max(1e-9 * max(abs(lo), abs(hi)), 1e-300):              # 一样大（或差得比浮点精度还小）
        pad = abs(lo) * 0.05 or 0.5
        lo, hi = lo - pad, hi + pad
    mag = 10.0 ** math.floor(math.log10((hi - lo) / max(1, n)))
    options = []                                                          # (多覆盖的范围, 段数离 n 多远, 步长, a, b)
    for step in (m * mag * e for e in (0.1, 1, 10, 100) for m in (1, 2, 5)):
        if integer and step < 1:
            continue
        a, b = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        if (1 if integer else 2) <= b - a <= n + 2:
            options.append((round((b - a) * step / (hi - lo), 9), abs(b - a - n), step, a, b))
    _, _, step, a, b = min(options)
    return step, [float(f"{k * step:.12g}") for k in range(a, b + 1)]    # 去掉 0.30000000000000004 这种尾巴


class _Axis:
    """一根轴：数据范围 → 0..cells-1 的格子坐标。对数轴先取 log10。刻度正好落在格子上（每段 per 格）。"""

    def __init__(self, values: list[float], cells: int, log: bool, fmt: str, n: int, soft: bool = False):
        self.log = log
        vals = [math.log10(v) for v in values] if log else values
        if log:                                            # 对数轴：刻度在 10 的整数次幂上；最大的数贴着顶时多留一格
            a, b = math.floor(min(vals) + LOG_SNAP), math.ceil(max(vals) - 1e-9)   # 比 10 的幂小一丁点的不多占一段
            b = max(b, a + 1) + (max(vals) > max(b, a + 1) - 0.05)
            ticks = [float(k) for k in range(a, b + 1)]
        else:
            _, ticks = nice_ticks(min(vals), max(vals), n, integer=all(v == int(v) for v in vals))
        self.lo, self.hi = ticks[0], ticks[-1]
        per = (cells - 1) / (len(ticks) - 1)
        self.per = max(1, round(per) if soft else int(per))   # 每段几格：soft（y 轴的高度）取最接近的，否则不超过给的格数
        self.cells = self.per * (len(ticks) - 1) + 1
        self.ticks = ticks
        self.labels = [fmt.format(10.0 ** t if log else t) for t in ticks]

    def pos(self, v: float) -> float:
        """数据值 → 格子坐标（浮点，0 是轴的起点）。"""
        t = math.log10(v) if self.log else v
        return (t - self.lo) / (self.hi - self.lo) * (self.cells - 1)


def _plot(title, series, *, x_label, y_label, x_fmt, y_fmt, refs=(), curves=(), connect, same_range=False,
          log_x=False, log_y=False, width=None, height=None, color=None) -> str:
    """折线图和散点图共用的画布：左边 y 刻度，右边参考线 / 辅助线的标签，下面 x 刻度、x 轴名和图例。"""
    width = width or chart_width()
    on = use_color() if color is None else color
    series = {name: list(pts) for name, pts in series.items()}
    if not series or not any(series.values()):
        raise ValueError(f"图「{title}」没有数据点")
    if len(series) > len(MARKS):
        raise ValueError(f"图「{title}」最多 {len(MARKS)} 条序列")
    xs = _check([p[0] for pts in series.values() for p in pts], f"图「{title}」的 x ", log_x)
    ys = _check([p[1] for pts in series.values() for p in pts], f"图「{title}」的 y ", log_y)
    refs = [(label, _check([y], f"参考线「{label}」", log_y)[0]) for label, y in refs]
    curves = [(label, [(float(x), float(y)) for x, y in pts]) for label, pts in curves]
    ys += [y for _, y in refs]
    for label, pts in curves:
        xs += _check([p[0] for p in pts], f"辅助线「{label}」的 x ", log_x)
        ys += _check([p[1] for p in pts], f"辅助线「{label}」的 y ", log_y)
    if same_range:                                         # 散点画 y = x 时两根轴用同一个范围
        xs = ys = xs + ys

    height = height or 13
    yaxis = _Axis(ys, height, log_y, y_fmt, 5, soft=True)
    left = max(display_width(s) for s in yaxis.labels) + 2              # "1.25× ┤"
    labels = [(label, "r", y) for label, y in refs] + [(label, "c", pts) for label, pts in curves]
    right = max((display_width(lab) + 2 for lab, _, _ in labels), default=0)
    inline = width - left - right >= max(24, width // 2) and len(labels) <= yaxis.cells  # 放不下时标签挪到图例里
    xaxis = _Axis(xs, width - left - (right if inline else 0), log_x, x_fmt,
                  max(2, min(6, (width - left - right) // 12)))
    H, P = yaxis.cells, xaxis.cells
    grid = [[(" ", None)] * P for _ in range(H)]

    def put(fx, fy, ch, code):
        c, r = round(fx), H - 1 - round(fy)
        if 0 <= c < P and 0 <= r < H:
            grid[r][c] = (ch, code)

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

    side = {}                                              # 行 → 右边的标签
    for label, kind, data in labels:
        if kind == "r":
            row = H - 1 - round(yaxis.pos(data))
            grid[row] = [(REF, None)] * P
        else:
            trace(data, CURVE, None, True)
            row = H - 1 - round(yaxis.pos(data[-1][1]))
        free = sorted(range(H), key=lambda r: (abs(r - row), r))          # 同一行已有标签就放到最近的空行
        if inline:
            side[next(r for r in free if r not in side)] = label
    for k, (name, pts) in reversed(list(enumerate(series.items()))):    # 第一条序列画在最上面
        trace(pts, MARKS[k], COLORS[k % len(COLORS)], connect)

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
    legend = [f"{MARKS[k]} {name}" for k, name in enumerate(series)]                 # 图例：记号 名字
    legend_painted = [_paint(MARKS[k], COLORS[k % len(COLORS)], on) + f" {name}" for k, name in enumerate(series)]
    if not inline:
        extra = [f"{REF if kind == 'r' else CURVE} {label}" for label, kind, _ in labels]
        legend, legend_painted = legend + extra, legend_painted + extra
    return "\n".join(out + _legend(legend, legend_painted if on else legend, width))


def _legend(items: list[str], painted: list[str], width: int) -> list[str]:
    """"图例："加各项，两项之间两个空格；一行放不下就换行（续行缩进），一项不拆开（除非一项就比一行长）。"""
    lines, cur, cur_w = [], "图例：", display_width("图例：")
    for item, shown in zip(items, painted):
        w = display_width(item)
        if cur_w > 6 and cur_w + 2 + w > width:
            lines.append(cur)
            cur, cur_w = " " * 6, 6
        if w > width - 6 and cur_w == 6 and shown == item:  # 一项比一行还长：按字折
            pieces = wrap(item, width - 6)
            lines += [" " * 6 + p for p in pieces[:-1]]
            item = shown = pieces[-1]
            w = display_width(item)
        cur += ("  " if cur_w > 6 else "") + shown
        cur_w += (2 if cur_w > 6 else 0) + w
    return lines + [cur]


def format_line(title: str, series: dict, *, x_label: str = "", y_label: str = "", x_fmt: str = "{:g}",
                y_fmt: str = "{:g}", refs=(), log_x: bool = False, log_y: bool = False, width: int | None = None,
                height: int | None = None, color: bool | None = None) -> str:
    """折线图。series：{名字: [(x, y), ...]}，按给的顺序用 ●、○、… 画；refs：[(标签, y)] 水平参考线，标签印在线的右端。"""
    return _plot(title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, refs=refs, connect=True,
                 log_x=log_x, log_y=log_y, width=width, height=height, color=color)


def format_scatter(title: str, series: dict, *, x_label: str = "", y_label: str = "", x_fmt: str = "{:g}",
                   y_fmt: str = "{:g}", diagonal: bool = False, curves=(), log_x: bool = False, log_y: bool = False,
                   width: int | None = None, height: int | None = None, color: bool | None = None) -> str:
    """散点图。series：{名字: [(x, y), ...]}；diagonal 画 y = x（两根轴用同一个范围）；curves：[(标签, [(x, y), ...])] 辅助折线。"""
    curves = list(curves)
    if diagonal:
        vals = [v for pts in series.values() for p in pts for v in p]
        lo, hi = min(vals), max(vals)
        curves.append(("y = x", [(lo, lo), (hi, hi)]))
    return _plot(title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, curves=curves,
                 connect=False, same_range=diagonal, log_x=log_x, log_y=log_y, width=width, height=height, color=color)


def heat_edges(lo: float, hi: float, log: bool = False) -> list[float]:
    """热力图五档的边界（6 个数）：把 [最小, 最大] 等分成五段；log=True 时按比例等分（1、1.28、1.63……，倍数用）。"""
    n = len(SHADES)
    if log:
        return [lo * (hi / lo) ** (k / n) for k in range(n + 1)]
    return [lo + (hi - lo) * k / n for k in range(n + 1)]


def heat_levels(values: list[list[float]], log: bool = False) -> tuple[float, float, list[list[int]]]:
    """热力图每格的档位 0..4（按 heat_edges 分档）。全部相等时都是 0 档。"""
    flat = [v for row in values for v in row]
    lo, hi = min(flat), max(flat)
    if log and lo <= 0:
        raise ValueError("按比例分档的热力图只能画大于 0 的数")
    edges = heat_edges(lo, hi, log)
    level = lambda v: 0 if hi == lo else sum(v >= e for e in edges[1:-1])  # noqa: E731
    return lo, hi, [[level(v) for v in row] for row in values]


def format_heatmap(title: str, rows: list[str], cols: list[str], values: list[list[float]], *, fmt: str = "{:.2f}",
                   x_label: str = "", y_label: str = "", log: bool = False, width: int | None = None,
                   color: bool | None = None) -> str:
    """热力图：rows × cols 个格子，深浅 · ░ ▒ ▓ █ 表示大小（log=True：按比例分档）；下面是刻度和最大、最小的格子
    （格子够宽时也印在格子里）。"""
    width = width or chart_width()
    on = use_color() if color is None else color
    if not rows or not cols or len(values) != len(rows) or any(len(r) != len(cols) for r in values):
        raise ValueError(f"热力图「{title}」要 {len(rows)} 行 × {len(cols)} 列的数")
    values = [_check(r, f"热力图「{title}」的数据") for r in values]
    lo, hi, levels = heat_levels(values, log)
    flat = [(v, i, j) for i, r in enumerate(values) for j, v in enumerate(r)]
    big, small = max(flat, key=lambda t: (t[0], -t[1], -t[2])), min(flat)     # 最大的、最小的（并列取第一个）
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
        return "\n".join(out + wrap(f"刻度：{SHADES[0]} 所有格子都是 {fmt.format(lo)}。", width, "  "))
    edges = heat_edges(lo, hi, log)
    scale = [f"{SHADES[k]} {fmt.format(edges[k])}–{fmt.format(edges[k + 1])}" for k in range(len(SHADES))]
    out += [line.replace("图例：", "刻度：") for line in
            _legend(scale, [_paint(x[0], HEAT_COLORS[k], on) + x[1:] for k, x in enumerate(scale)], width)]
    where = lambda t: f"{rows[t[1]]}，{x_label or '列'} = {cols[t[2]]}"  # noqa: E731
    ties = lambda v: sum(1 for t in flat if t[0] == v)  # noqa: E731
    more = lambda v: f" 等 {ties(v)} 格" if ties(v) > 1 else ""  # noqa: E731
    ext = (f"最大 {fmt.format(big[0])}：{where(big)}{more(big[0])}；"
           f"最小 {fmt.format(small[0])}：{where(small)}{more(small[0])}。")
    return "\n".join(out + wrap(ext, width, "  "))


def format_bars(title: str, labels: list[str], values: list, *, segments: list[str] | None = None, fmt: str = "{:g}",
                relative: bool = False, notes: list[str] | None = None, width: int | None = None,
                color: bool | None = None) -> str:
    """横条。values[i] 是一个数，或（给了 segments 时）一串数：画成 █ ▓ ▒ ░ 堆起来的横条，下面是图例。条尾印总数
    （按 fmt），给了 notes 就印 notes[i]。relative=True：每条按自己的总数画满整条，看的是各段的比例（总数差几个数量级时用）。"""
    width = width or chart_width()
    on = use_color() if color is None else color
    if len(labels) != len(values) or not labels:
        raise ValueError(f"横条图「{title}」要一样多的标签和数（{len(labels)} 个标签，{len(values)} 组数）")
    parts = [[v] if segments is None else list(v) for v in values]
    if segments is not None and (any(len(p) != len(segments) for p in parts) or len(segments) > len(FILLS)):
        raise ValueError(f"横条图「{title}」每条要 {len(segments)} 段（最多 {len(FILLS)} 段）")
    _check([v for p in parts for v in p], f"横条图「{title}」的数据")
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
            bar, edge, acc = "", 0, 0.0
            for k, v in enumerate(p):
                acc += v
                nxt = round(acc / top * bw)
                bar += _paint(FILLS[k] * (nxt - edge), COLORS[k % len(COLORS)], on)
                edge = nxt
            n = edge
        out += [label] if above else []
        out.append(_pad("" if above else label, lw, False) + bar + " " * (bw - n + 1) + text)
    if segments is not None:
        out += _legend([f"{FILLS[k]} {s}" for k, s in enumerate(segments)],
                       [f"{_paint(FILLS[k], COLORS[k % len(COLORS)], on)} {s}" for k, s in enumerate(segments)], width)
    return "\n".join(out)


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

    def reset(self, svg_dir: str | None = None, show: bool = True) -> "Charts":
        """重新开始：清空记录，换一个 SVG 目录（None：不写文件）。返回自己。"""
        self.__init__(svg_dir, show)
        return self

    @staticmethod
    def add_argument(parser) -> None:
        """给脚本的 argparse 加上 --svg DIR。"""
        parser.add_argument("--svg", metavar="DIR", default=None,
                            help="每张图另存一个 SVG 文件到 DIR（目录不存在就建；文件名说明画的是什么）")

    @staticmethod
    def check_dir(parser, path: str | None) -> str | None:
        """检查 --svg 给的目录：不存在就建；建不了、或者是个文件，就用 parser.error 说一句（退出码 2）。"""
        if path is None:
            return None
        if os.path.exists(path) and not os.path.isdir(path):
            parser.error(f"--svg 要的是一个目录，{path} 是一个文件；换一个目录名")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            parser.error(f"--svg 的目录 {path} 建不了（{e.strerror}）；换一个能写的目录")
        return path

    def report(self) -> None:
        """给了 --svg 时，在标准错误上说一句写了几个文件、在哪（标准输出不变）；这个脚本没有图也说一声。"""
        if self.svg_dir is not None and not self.files:
            print(f"\n这个脚本没有画图，--svg 没有往 {self.svg_dir} 写文件。", file=sys.stderr)
        if self.files:
            print(f"\n写了 {len(self.files)} 个 SVG 文件到 {self.svg_dir}：" + "、".join(map(os.path.basename, self.files)),
                  file=sys.stderr)

    def _emit(self, kind: str, name: str, title: str, data: dict, options: dict) -> None:
        """画一张图。options 里的 slide 是 SVG（幻灯片）上的标题（终端里的标题可以说"上表"，幻灯片上不行），
        slide_names 是 SVG 图例里换掉的序列名 {终端里的名字: 幻灯片上的名字}；都不给就和终端里一样。"""
        options = dict(options)
        slide, slide_names = options.pop("slide", None) or title, options.pop("slide_names", None) or {}
        self.drawn[name] = (kind, title, data)               # 同一个名字再画一次：记录和文件都换成新的
        if self.show:
            print("\n" + globals()[f"format_{kind}"](title, **data, **options))
        if self.svg_dir is not None:
            import svg                                       # 同一目录的 svg.py：只有写文件时才 import（它要 xml、urllib）
            os.makedirs(self.svg_dir, exist_ok=True)
            path = os.path.join(self.svg_dir, f"{name}.svg")
            options = {k: v for k, v in options.items() if k not in ("width", "height", "color")}
            if "series" in data:
                data = dict(data, series={slide_names.get(k, k): v for k, v in data["series"].items()})
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(getattr(svg, f"{kind}_svg")(slide, **data, **options))
            self.files.append(path)

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
