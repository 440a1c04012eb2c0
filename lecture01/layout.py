"""
第 1 讲 · layout —— 终端（console.py）和 SVG（svg.py）共用的排版几何：显示宽度、折行、图的坐标轴、热力图的分档。

    display_width(s)               字符串在终端里占几列（中文、全角两列）
    wrap(text, width, indent)      按显示宽度折行；"【本次不成立】"永远不拆开
    tokens(text) / kind(ch)        折行用的小段和字符种类（console 折表头时也用）
    Axis(values, cells, ...)       一根轴：数据 → 格子坐标，整刻度
    grouped(fmt)                   格式加上千分位：刻度、热力图、横条上的数和表格一样印成 1,000
    finite(values, what)           图的数据转成 float，有 NaN、无穷大就报错
    heat_edges / heat_levels       热力图五档的边界、每格的档位（按印出来的数）
    printed_ties / extreme_note    热力图下面"最大、最小"那一句：印出来一样的有几格、怎么说
    heat_extremes / extremes_note  标出哪一两格（最大、最小），那一整句；所有格子印出来都一样时只说这一件事
    printed_value(v, fmt)          v 照 fmt 印出来再读回的数
    series_marks(names, background) 折线、散点每条序列的记号（●、○、◆……）：终端印它，SVG 画同样形状的点
    hidden_series / hidden_tails   被别的序列整条、一段或后半段盖住的序列：图下说一句（终端和 SVG 都说）

依赖方向只有一个：console 和 svg 都 import 这里，这里不 import 它们（console 写 SVG 文件时才 import svg）。
只用标准库；导入时不打印任何东西。
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from functools import lru_cache

OPENING = "（「『《【〔"                             # 不放在行尾的全角开括号
CLOSING = "，。、；：！？）」』》】〕"                 # 不放在行首的全角标点
ASCII_CLOSING = ",.:;!?)]}%"                      # 紧跟在汉字后面时也不放在行首的半角标点（"if 条件: return"）
PATH_OR_NUMBER = re.compile(r"\.+[/\w]")             # 点开头的 "../mine.py"、".5" 不是标点：可以在行首（助教报过：
#                                                    仓库在 /tmp 下时 "注意：../…" 折成了 "注意⏎：../…"）
FAILED = "【本次不成立】"                          # 不成立的观察的标记：折行时永远不拆开（grep 得到，一行一个）
UNBREAKABLE = (FAILED, "没做到的是：", "# EVOLVE-BLOCK-START", "# EVOLVE-BLOCK-END")   # 折行时当作一个字的片段：观察
# 不成立的标记和它点名没做到的那几个字（学生报过"没做到\n的是"）；
# 学生要照抄的两行标记（写在第 14 讲的 evolve.program 里；console 不 import evolve，这里照写一遍）
HEAT_LEVELS = 5                                   # 热力图分几档（终端里 · ░ ▒ ▓ █，SVG 里五种颜色）
LOG_SNAP = 0.01                      # 对数轴：最小的数比 10 的幂小不到 0.01 个数量级（约 2%）时，轴从这个幂开始


def display_width(s: str) -> int:
    """字符串在终端里占几列：宽字符、全角字符 2 列，组合字符 0 列，其余 1 列。
    折行、对齐表格时对每一段都要算（一次运行上万次），所以纯 ASCII 直接取长度（ASCII 里没有组合字符、没有宽字符，
    每个都是 1 列），其余按字符查 _char_width 的缓存。"""
    if s.isascii():
        return len(s)
    return sum(map(_char_width, s))


@lru_cache(maxsize=4096)
def _char_width(ch: str) -> int:
    """一个字符占几列（display_width 的定义）；按字符缓存：课程印的不同字符只有几百个。组合字符看的是 Unicode 的类别
    （Mn、Me：叠在前一个字上、不占地方），不只是规范组合类：泰文的 ั（U+0E31）、变体选择符 U+FE0F 的组合类是 0，
    以前各算一列，表格在它们后面错开一格。"""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def kind(ch: str) -> str:
    """字符的种类：空格 " "、宽字符 "w"（汉字、全角标点）、其余 "n"（西文字母、数字、半角符号）。"""
    return " " if ch == " " else "w" if display_width(ch) == 2 else "n"


def tokens(text: str, glue: bool = True) -> list[str]:
    """切成可以在其间换行的小段：一串空格、一个宽字符、一个不含空格的西文词 / 数字，或一整个 UNBREAKABLE 片段
    （"【本次不成立】"永远在同一行）。glue：把 _glue 说的"中间的空格不折"的几段连成一段（表头不连）。"""
    out: list[str] = []
    pieces = re.split("(" + "|".join(map(re.escape, UNBREAKABLE)) + ")", text)
    for piece in pieces:
        if piece in UNBREAKABLE:
            out.append(piece)
            continue
        start, prev = 0, None                              # 同一个西文词、同一串空格连在一起（切片，不逐字符
        for i, ch in enumerate(piece):                     # 往列表里的字符串上接：那样一长串是平方级）
            k = kind(ch)
            if i and (k == "w" or k != prev):
                out.append(piece[start:i])
                start = i
            prev = k
        if piece:
            out.append(piece[start:])
    return _glued(out) if glue else out           # 表头（很窄的一列）不连：它要尽量多的折点


UNIT = re.compile(r"(µs|ms|s|B|KB|MB|GB|TB/s|GB/s|TFLOPS|FLOP/B)(?![A-Za-z0-9])")   # 跟着数走的单位（后面可以接标点）
SPEEDUP = re.compile(r"[\d.,]+×")                    # 几倍："1.18×"
MEASURE = set("个次倍行条格列秒种轮层步") | {"毫秒"}   # 跟着数走的量词（"16 个 warp"、"464 次"、"2.1 毫秒"）
WORDS = ("毫秒", "中位数")                           # 不拆开的词：先连成一段（"毫⏎秒"、表格里的"中⏎位数"没法读）
OPERATORS = ("<=", ">=", "<", ">", "≤", "≥", "=", "==")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _glue(left: str, right: str) -> bool:
    """left、right 之间的那个空格不折行：命令行选项和它的值（"--knob L2_BW=1.8e+11"）、数和它的单位或量词（"11.3 µs——"、
    "227 KB"、"16 个"）、"慢""快"和倍数（"慢 1.18×"）、比较和它的数（"> 255"、"M <= 16:"、"if M"）、配置元组（"(128, 128, 64, 4, 3, 8)"）。
    学生报过 "--knob⏎LOAD_LATENCY_BUSY=9e-07"、"（227⏎KB）"、"86.5⏎µs——"、"if⏎M <= 16:"、"(128,⏎128, …)"。"""
    last = left.split(" ")[-1]
    if last.startswith("--") and right[:1].isascii() and right[:1].isalnum():
        return True
    if _command_glue(last, right) or _git_dir_glue(left.split(" "), right):
        return True
    if left[-1:].isdigit() and (UNIT.match(right) or right in MEASURE):
        return True
    if left[-1:] in "慢快" and SPEEDUP.match(right):
        return True                                  # "慢 1.18×"（学生报过 01 的表格里折成 "（慢⏎1.18×）"）
    if re.fullmatch(r"(?:[0-9A-F]{2} )*[0-9A-F]{2}", left) and re.search("[A-F]", left) and re.match(r"[0-9A-F]{2}(?![\w])", right):
        return True                                  # 一串字节 "B5 DA 20 31"（学生报过 GBK 的报错折成 "B5 DA 20⏎31"）
    if last == "return" and right.startswith("Config"):
        return True                                  # "return Config(...)"（学生报过 "return⏎Config(...)"）
    if (last in ("if", "elif") and right in ("M", "N", "K")) or (IDENT.fullmatch(last) and right in OPERATORS):
        return True                                  # "M <="、"MMA_FALLBACK = 0.6"：名字、比较、数在一行
    if last.endswith(OPERATORS) and right[:1].isdigit():
        return True
    return "(" in left and ")" not in left.split("(")[-1] and left.endswith(",") and right[:1].isdigit()


def _command_glue(last: str, right: str) -> bool:
    """句子里的一条命令，前几个词不折开：python3 和脚本（还有紧跟的 --help）、make 和目标、git checkout 和文件、
    pip install -r 和文件。学生在 80 列的终端里报过 "make⏎openevolve"（只复制第一行就成了 make run）、
    "git checkout⏎lecture14/expert_heuristic.py"、"python3⏎lecture14/04_alphaevolve_tiling.py"、"….py⏎--help"。"""
    word = bool(re.fullmatch(r"[\w./-]+", right)) and right[:1].isascii()
    return word and (last in ("python3", "python", "checkout", "-r") or last.endswith(("/python", "/python3"))
                     or (last == "make" and right[:1].islower()) or (last == "git" and right == "checkout")
                     or (last.endswith("pip") and right == "install") or (last == "install" and right == "-r")
                     or (last.endswith(".py") and right == "--help"))


def _git_dir_glue(words: list[str], right: str) -> bool:
    """在仓库外面恢复专家文件的命令 git -C 仓库 checkout 文件（evolve.problem.restore_command）也不折开：git 和 -C、
    -C 和仓库、仓库和 checkout（checkout 和文件 _command_glue 已经管了）。学生在 80 列里、从仓库的上一层运行时见过
    "git -C repo⏎checkout lecture14/expert_heuristic.py"：只复制第一行，git 只印一段用法说明。"""
    path = bool(re.fullmatch(r"[\w./-]+", right)) and right[:1].isascii()
    return ((words[-1:] == ["git"] and right == "-C") or (words[-2:] == ["git", "-C"] and path)
            or (len(words) >= 3 and words[-3:-1] == ["git", "-C"] and right == "checkout"))


def _glued(toks: list[str]) -> list[str]:
    """把 _glue 说的"中间的单个空格不折行"的相邻小段连成一段（连过的还可以再连："M <=" 再连 "16:"）。"""
    joined: list[str] = []
    for t in toks:                                   # "毫"、"秒" 两段先连成 "毫秒"（07 的用时行折成过 "毫⏎秒"）
        if joined and any(w.startswith(joined[-1] + t) for w in WORDS):
            joined[-1] += t
        else:
            joined.append(t)
    toks = joined
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == " " and out and i + 1 < len(toks) and _glue(out[-1], toks[i + 1]):
            out[-1] += t + toks[i + 1]
            i += 2
            continue
        out.append(t)
        i += 1
    return out


def _role(tok: str, quotes: int) -> tuple[bool, bool]:
    """折行时这一小段 (不放在行首, 不放在行尾)：不放在行首的是全角的逗号、右括号，紧跟的半角标点，收尾的半角引号；
    不放在行尾的是全角的左括号、开头的半角引号。quotes：它前面已经有几个半角引号 \"——单数时下一个是收尾的，
    双数时是开头的（"算"、"探针淘汰" 这样的引号各不落单；\"\" 这样连着的两个，两头都算）。"""
    return (tok in CLOSING or (tok[0] in ASCII_CLOSING and not PATH_OR_NUMBER.match(tok)) or tok[0] in "”’"
            or (tok[0] == '"' and quotes % 2 == 1),
            tok in OPENING or tok[-1] in "“‘" or (tok[-1] == '"' and (quotes + tok.count('"')) % 2 == 1))
    # 弯引号 “ ” 也一样（讲师报过：80 列里"记作“"落在行尾、"接连失败后没再调用 LLM”"在下一行开头）


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """把一段文字按显示宽度折成每行不超过 width 列的若干行；第二行起以 indent 开头（悬挂缩进）。标点、收尾的引号
    不落在行首，开括号、开头的引号不落在行尾（_role）。"""
    room = width - display_width(indent)                   # 续行除去缩进还剩几列
    todo = tokens(text)[::-1]                              # 倒过来当栈用
    lines, cur, roles = [], [], []                         # 折好的行；当前行的小段和它们的 _role
    quotes = 0                                             # 到目前为止读过几个半角引号
    while todo:
        tok = todo.pop()
        if tok.isspace():
            if cur or not lines:                           # 续行不以空格开头；行尾的空格换行时去掉
                cur.append(tok)
                roles.append((False, False))
            continue
        if len(tok) > 1 and display_width(tok) > room and tok not in UNBREAKABLE:
            # 一整行都放不下：连起来的几段（_glued："git -C 仓库 checkout 文件"）先在它们之间的空格处拆回去，
            # 一个词本身放不下才按字符拆（审读报过：很长的仓库路径把整条命令按字符折在了路径中间）
            todo.extend(re.split("( +)", tok)[::-1] if " " in tok.strip(" ") else tok[::-1])
            continue
        role = _role(tok, quotes)
        quotes += tok.count('"')
        head = indent if lines else ""
        if display_width(head + "".join(cur) + tok) <= width:
            cur.append(tok)
            roles.append(role)
            continue
        carry, carried = [tok], [role]                     # 放不下就换行：前一段跟着换过去，直到两边都不犯忌
        while (len(cur) > 1 and not cur[-1].isspace() and (carried[0][0] or roles[-1][1])
               and display_width(indent + cur[-1] + "".join(carry)) <= width):
            carry.insert(0, cur.pop())
            carried.insert(0, roles.pop())
        lines.append(head + "".join(cur).rstrip(" "))
        cur, roles = carry, carried
    lines.append((indent if lines else "") + "".join(cur).rstrip(" "))
    return lines


def _break_points(command: str) -> list[str]:
    """命令按能折行的空格切成几段：引号外面的空格；make 的 ARGS="…" 里面的空格也行（make 把 ARGS 按空白再切开，
    续行多出来的空格不改变它）。别的引号里面的空格不折：续行会在那里多出空格，改了参数本身。引号原样保留。"""
    pieces, cur, quote, args_quote = [], "", None, False
    for ch in command:
        if quote is None and ch in "'\"":
            quote, args_quote = ch, ch == '"' and cur.endswith("ARGS=")
        elif ch == quote:
            quote = None
        if ch == " " and (quote is None or args_quote) and cur:
            pieces.append(cur)
            cur = ""
        elif ch != " " or cur:
            cur += ch
    return pieces + ([cur] if cur else [])


def wrap_command(command: str, room: float, rest: float | None = None) -> list[str]:
    """一条要照抄的命令折成几行（终端的"可以试试"和图下的命令都用它）：第一行最多 room 列、续行最多 rest 列（不给就
    也是 room；都不含行尾的 " \\"），在参数之间折开，除了最后一行都以 " \\" 结尾（shell 的续行：整段复制到终端里
    是同一条命令）。选项和它的值（--knob L2_BW=…）、python3 和脚本、make 和目标、&& 和下一条命令尽量在同一行；
    一个参数本身比一行还宽时它自己一行（引号里的词折开就不是同一条命令了）。返回的行不带缩进。"""
    atoms: list[str] = []
    for piece in _break_points(command):
        glue = atoms and (atoms[-1].split()[-1] in ("&&", "python3", "make")
                          or (atoms[-1].startswith("-") and " " not in atoms[-1] and "=" not in atoms[-1]
                              and not piece.startswith("-")))
        atoms[-1:] = [f"{atoms[-1]} {piece}"] if glue else [*atoms[-1:], piece]
    lines, cur = [], ""
    for piece in atoms:
        if cur and display_width(cur) + 1 + display_width(piece) > (rest if lines and rest is not None else room):
            lines.append(cur)
            cur = piece
        else:
            cur = f"{cur} {piece}" if cur else piece
    lines.append(cur)
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


def printed_ties(flat, value: float, fmt: str) -> int:
    """热力图里印出来和 value 一样的格子有几个（flat 是 (数, 行, 列) 的列表）：1.002 和 1.003 照 {:.2f} 都印成 1.00，
    算并列（审读报过：只数正好相等的，"最小 1.00：14 格"，印着 1.00 的有 20 格）。终端和 SVG 都用它。"""
    shown = fmt.format(value)
    return sum(1 for u in flat if fmt.format(u[0]) == shown)


def extreme_note(word: str, value: str, where: str, ties: int, marked: str) -> str:
    """热力图下面说最大、最小的那一句的一半："最大 3.39：70B/8 qkv，M = 32（黑框）"；几格印出来一样时先说有几格、再说
    标出来的是哪一格（学生报过："最小 1.00：8B qkv，M = 1 等 12 格（黑框）"读着像 12 格都框了，其实只框了一格）。
    marked：图上怎么标出这一格（SVG 是"黑框"，终端里是"印出数值"）。"""
    if ties > 1:
        return f"{word} {value}：{ties} 格，{marked}的是 {where}"
    return f"{word} {value}：{where}" + (f"（{marked}）" if marked == "黑框" else "")


def heat_extremes(flat, fmt: str) -> tuple:
    """热力图要标出的最大、最小的格子（flat 是 (数, 行, 列) 的列表；并列取第一个）。所有格子照 fmt 印出来都一样时
    （学生的文件处处是最优，88 格都是 1.00）两个都是最大的那一格：只标一格。终端和 SVG 都用它。"""
    big, small = max(flat, key=lambda t: (t[0], -t[1], -t[2])), min(flat)
    return (big, big) if fmt.format(big[0]) == fmt.format(small[0]) else (big, small)


def extremes_note(flat, big, small, fmt: str, where, marked: str) -> str:
    """热力图下面那一整句（不带句号）："最大 3.39：…；最小 1.00：…"。所有格子印出来都一样时只说这一件事："全部 88 格都是
    1.00，印出数值的是 8B qkv，M = 1"（审读报过：处处最优的文件得到"最大 1.00：88 格……；最小 1.00：88 格……"，
    对，可是说了两遍同一件事）。where(t)：格子 t 在哪（"8B qkv，M = 1"）；marked 同 extreme_note。"""
    if fmt.format(big[0]) == fmt.format(small[0]):
        return f"全部 {len(flat)} 格都是 {fmt.format(big[0])}，{marked}的是 {where(big)}"
    note = lambda word, t: extreme_note(word, fmt.format(t[0]), where(t), printed_ties(flat, t[0], fmt), marked)  # noqa: E731
    return note("最大", big) + "；" + note("最小", small)


MARKS = "●○◆◇▲△■□"                   # 折线 / 散点的第 1、2、… 条序列用的记号
BACKGROUND_MARK = "○"                # 散点图里当衬底的那条序列（background=）用的记号


def series_marks(names, background=None) -> dict:
    """每条序列的 (记号, 第几条自己的序列)：按次序用 ●、○、◆……；background（"其余的点"那一条，当衬底）是
    (BACKGROUND_MARK, None)，其余序列跳过这个记号。终端印这个记号；SVG 画同样形状的点（实心、空心的圆、菱形、
    三角、方块），印成黑白也分得出是哪条。"""
    own = [m for m in MARKS if background is None or m != BACKGROUND_MARK]
    out, k = {}, 0
    for name in names:
        if name == background:
            out[name] = (BACKGROUND_MARK, None)
        else:
            out[name] = (own[k % len(own)], k)
            k += 1
    return out


HIDDEN_GAP = 0.1        # 折线中间连着这么多（图宽的比例）被别的线盖住时说一句（几列看得出是交叉，更长的像是线断了）


def _sayers(marks, show, covered):
    """hidden_tails、hidden_series 的 show、covered 没给时的默认说法（终端的）：记号加名字、"被盖住了"。"""
    return (show or (lambda n: f"{marks[n][0]} {n}")), (covered or (lambda n, cells: "被盖住了"))


def _drawn_cells(name, marks, drawn, background):
    """(name 的记号, 它画过的格子)；背景序列（画在最底下、本来就让别的盖着）算没画过。"""
    ch = marks[name][0]
    return ch, (drawn.get(ch, set()) if name != background else set())


def hidden_tails(series, marks, drawn, grid, background, xaxis, x_fmt, show=None, same="落在同一格",
                 gap=HIDDEN_GAP, tail_min=0, covered=None) -> list[str]:
    """看得见、但从某一列起到它的最后一列都被别的线盖住的折线（两条线后半段重合），各说一句从横轴上哪儿起、被哪条盖住：
    不然学生以为这条线在那儿停了（或者以为另一条线结束得更高）。中间连着 gap（图宽的比例）以上被盖住的一段也说
    （一位同学读 05 的图：▲ 没有级联 在 270–515 之间看不见，像是断了）。整条被盖住的由 hidden_series 说。
    grid[行][列] 是 (画在那一格上面的记号, …)，drawn 是 记号 → 它画过的格子，xaxis.pos(x) 是 x 落在第几列（浮点）。
    终端和 SVG 都用它：终端的格子是字符，SVG 的是几个像素（svg.COVER）；show(名字) 是句子里怎么称呼一条序列
    （终端："● 完整系统"，SVG 的折线没有记号："「完整系统」"），same 是"重合"怎么说；被盖住的尾巴不到 tail_min 列的
    不说（SVG：一条线的末端碰上另一条线，那条线的白边总要盖住它最后一两个像素）。covered(名字, 被盖住的那些格子)
    是"被盖住了"怎么说（SVG：只被白边外面那一圈盖着的还露出一道细边）。"""
    show, covered = _sayers(marks, show, covered)
    x_fmt = grouped(x_fmt)                               # "从 1,000 起"：和刻度、表格一样带千分位
    out = []
    for name in series:
        ch, cells = _drawn_cells(name, marks, drawn, background)
        seen = {c for r, c in cells if grid[r][c][0] == ch}
        if not seen:
            continue
        cols = sorted({c for _, c in cells})
        runs: list[list[int]] = []                       # 连着被盖住的几段列
        for c in cols:
            if c in seen:
                continue
            if runs and runs[-1][-1] == c - 1:
                runs[-1].append(c)
            else:
                runs.append([c])
        spans, over, under = [], Counter(), set()        # 这条线要说的几段：(横轴上的起点, 终点或 None＝到最后)
        for run in runs:
            tail = run[-1] == cols[-1]                   # 最后一列也被盖住了就说：不然像是这条线提前停了
            if len(run) < (tail_min if tail else gap * len(grid[0])):
                continue
            hid = {(r, c) for r, c in cells if run[0] <= c <= run[-1] and grid[r][c][0] != ch}
            here = Counter(grid[r][c][0] for r, c in hid)
            if here:
                under |= hid
                spans.append((_nearest_x(series[name], xaxis, run[0], 1), None if tail else
                              _nearest_x(series[name], xaxis, run[-1], -1)))
                over += here
        if not spans:
            continue
        names = sorted((n for n in series if n != name and marks[n][0] in over), key=lambda n: -over[marks[n][0]])
        where = "、".join(f"从 {x_fmt.format(a)} 起" if b is None else x_fmt.format(a) if x_fmt.format(a) == x_fmt.format(b)
                         else f"{x_fmt.format(a)}–{x_fmt.format(b)}" for a, b in spans)    # 一个点不写成 "6–6"（审读报过）
        by = "、".join(show(n) for n in names)
        if len(spans) == 1 and spans[0][1] is None:
            out.append(f"（{show(name)} 从横轴 {x_fmt.format(spans[0][0])} 起和 {by} {same}，{covered(name, under)}，不是停了。）")
        else:
            space = "" if where.endswith("起") else " "          # "0–18 和"：数字和汉字之间空一格，和别处一样
            out.append(f"（{show(name)} 在横轴 {where}{space}和 {by} {same}，{covered(name, under)}，不是断了。）")
    return out


def _nearest_x(pts, xaxis, col: int, inward: int) -> float:
    """被盖住的一段的一头（第 col 列）在横轴上是多少：落在这一列的数据点里最靠外的那个；这一列没有数据点时（台阶的
    一整段横线只在两头有点），取列离它最近的数据点，一样近取往这一段里面的那个（inward：起点 1，终点 -1）。
    审读报过：05 --budget 2 的线从 1 到 2 整段被盖住，图下说"在横轴 1"；盖住的一段两头都没有点时一句也不说。"""
    here = [x for x, _ in pts if round(xaxis.pos(x)) == col]
    if here:
        return min(here) if inward > 0 else max(here)
    return min((x for x, _ in pts), key=lambda x: (abs(xaxis.pos(x) - col), -inward * x))


def hidden_series(series, marks, drawn, grid, background, show=None, same="落在同一格", covered=None) -> list[str]:
    """整条被别的序列盖住、图上一个记号也看不到的序列，各说一句（哪条、被哪几条盖住）：不然学生以为它没画。
    参数同 hidden_tails。"""
    show, covered = _sayers(marks, show, covered)
    out = []
    for name in series:
        ch, cells = _drawn_cells(name, marks, drawn, background)
        if not cells or any(grid[r][c][0] == ch for r, c in cells):
            continue
        over = [n for n in series if n != name and any(grid[r][c][0] == marks[n][0] for r, c in cells)]
        out.append(f"（图上看不到 {show(name)}：它的每个点都和 {'、'.join(show(n) for n in over)} {same}，"
                   f"{covered(name, cells)}。）")
    return out


def as_steps(pts: list) -> list:
    """折线图按台阶画（"到这一步为止最好的"这种只在新的一点上跳的曲线）：每两点之间先水平走到下一点的 x，再竖直跳上去。
    学生报过：--budget 1 的曲线从 1.000× 斜着爬到 1.016×，像是第 0.5 个提议时已经是 1.008×。"""
    out = list(pts[:1])
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y1 != y0:
            out.append((x1, y0))
        out.append((x1, y1))
    return out


# ---------------------------------------------------------------- 图的几何：数据检查、刻度、轴、热力图分档

def finite(values, what: str, positive: bool = False) -> list[float]:
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


_FIELD = re.compile(r"\{(?::([^{}]*))?\}")
_SPEC = re.compile(r"((?:.?[<>=^])?[-+ ]?z?#?0?\d*)((?:\.\d+)?[eEfFgGd%]?)")


def grouped(fmt: str) -> str:
    """fmt 加上千分位（"{:g}" → "{:,g}"、"{:.2f}×" → "{:,.2f}×"、"{}" → "{:,}"）：图的刻度、热力图的格子、横条尾巴上的数
    和表格、句子一样印成 1,000、10,000（console.fmt 和表格里的计数都带千分位）。学生报过：04 --budget 4000 的表里
    "第几个提议"是 1,235、1,559，下面那张图的横轴却是 1000 1500 2000。已经有千分位（"{:,}"）或不是数的格式原样返回。"""
    def add(m: re.Match) -> str:
        spec = m[1] or ""
        parts = _SPEC.fullmatch(spec)
        if parts is None or "," in spec or "_" in spec:
            return m[0]
        return "{:" + parts[1] + "," + parts[2] + "}"
    return _FIELD.sub(add, fmt)


DECIMALS = re.compile(r"\{:[^}]*\.[1-9]\d*[fe%]\}")   # 印出小数的格式（"{:.2f}×"）：轴上的量是连续的，不是计数


class Axis:
    """一根轴：数据范围 → 0..cells-1 的格子坐标。对数轴先取 log10。刻度正好落在格子上（每段 per 格）。
    like：用另一根轴的刻度（散点画 y = x 时两根轴同一个范围；各自挑刻度时 n 不同，范围也会不同）。"""

    def __init__(self, values: list[float], cells: int, log: bool, fmt: str, n: int, soft: bool = False,
                 like: "Axis | None" = None):
        self.log = log
        vals = [math.log10(v) for v in values] if log else values
        if like is not None:                               # 审读报过：专家很差时 04 的散点图 x 轴 17.50×–21.50×、
            ticks = list(like.ticks)                       # y 轴 17.00×–22.00×，斜线到不了右上角
        elif log:                                          # 对数轴：刻度在 10 的整数次幂上（最大的数贴着顶也不多占一个数量级）
            a, b = math.floor(min(vals) + LOG_SNAP), math.ceil(max(vals) - 1e-9)   # 比 10 的幂小一丁点的不多占一段
            b = max(b, a + 1)
            ticks = [float(k) for k in range(a, b + 1)]
        else:                                              # 整数刻度只给计数（"第几个提议"）：印小数的量碰巧都是整数
            counts = not DECIMALS.search(fmt) and all(v == int(v) for v in vals)    # 时不算（审读报过：专家处处最优，
            _, ticks = nice_ticks(min(vals), max(vals), n, integer=counts)          # 分数都是 1.000×，轴从 0.00× 到 2.00×）
        self.lo, self.hi = ticks[0], ticks[-1]
        per = (cells - 1) / (len(ticks) - 1)
        self.per = max(1, round(per) if soft else int(per))   # 每段几格：soft（y 轴的高度）取最接近的，否则不超过给的格数
        self.cells = self.per * (len(ticks) - 1) + 1
        self.ticks = ticks
        self.labels = _distinct_labels(grouped(fmt), [10.0 ** t if log else t for t in ticks])

    def pos(self, v: float) -> float:
        """数据值 → 格子坐标（浮点，0 是轴的起点）。"""
        t = math.log10(v) if self.log else v
        return (t - self.lo) / (self.hi - self.lo) * (self.cells - 1)


def _distinct_labels(fmt: str, values: list[float]) -> list[str]:
    """刻度的标签。范围很窄时按 fmt 印出来会有一样的（"1.14× 1.14× 1.15×"）：fmt 是 "{:.Nf}" 这种写法时多印一位，
    最多多三位，直到每个刻度的标签都不一样。"""
    labels = [fmt.format(v) for v in values]
    m = re.search(r"\{:([^}]*)\.(\d+)([fe%])\}", fmt)
    extra = 0
    while m and len(set(labels)) < len(labels) and extra < 3:
        extra += 1
        wider = fmt[:m.start()] + "{:" + m[1] + "." + str(int(m[2]) + extra) + m[3] + "}" + fmt[m.end():]
        labels = [wider.format(v) for v in values]
    return labels


def heat_edges(lo: float, hi: float, log: bool = False) -> list[float]:
    """热力图五档的边界（6 个数）：把 [最小, 最大] 等分成五段；log=True 时按比例等分（1、1.28、1.63……，倍数用）。"""
    n = HEAT_LEVELS
    if log:
        return [lo * (hi / lo) ** (k / n) for k in range(n + 1)]
    return [lo + (hi - lo) * k / n for k in range(n + 1)]


_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*)?\.?\d+(?:[eE][-+]?\d+)?")


def printed_value(v: float, fmt: str) -> float:
    """v 照 fmt 印出来以后读回的数（"1.2796" 用 "{:.2f}×" 印成 "1.28×"，读回 1.28）；印出来没有数时是 v 本身。"""
    m = _NUMBER.search(fmt.format(v))
    return float(m.group().replace(",", "")) if m else v


def heat_levels(values: list[list[float]], log: bool = False, fmt: str | None = None,
                span: tuple[float, float] | None = None) -> tuple[float, float, list[list[int]]]:
    """热力图每格的档位 0..4（按 heat_edges 分档，每档含下界、不含上界）。全部相等时都是 0 档。
    给了 fmt 时按印出来的数分档：格子的数和档的边界都先照 fmt 印出来再比，所以印着 1.28 的格子一定在刻度上
    "1.28–1.63" 那一档，不会因为没印出来的小数落到上一档；印出来全都一样时也都是 0 档（lo、hi 返回同一个数）。
    span=(lo, hi)：刻度的两头（要包住所有的数），不给就是最小、最大的数。两张要逐格比深浅的图用同一个 span
    （学生报过：06 里没变的格子因为刻度跟着这次的最大值变了，颜色变深，像是改坏了）。"""
    flat = [v for row in values for v in row]
    lo, hi = (min(flat), max(flat)) if span is None else span
    if lo > min(flat) or hi < max(flat):
        raise ValueError(f"热力图的刻度 {lo:g}–{hi:g} 没包住所有的数（{min(flat):g}–{max(flat):g}）")
    if log and lo <= 0:
        raise ValueError("按比例分档的热力图只能画大于 0 的数")
    shown = (lambda v: v) if fmt is None else (lambda v: printed_value(v, fmt))  # noqa: E731
    if shown(lo) == shown(hi):
        return lo, lo, [[0 for _ in row] for row in values]
    edges = [shown(e) for e in heat_edges(lo, hi, log)[1:-1]]
    level = lambda v: sum(shown(v) >= e for e in edges)  # noqa: E731
    return lo, hi, [[level(v) for v in row] for row in values]


