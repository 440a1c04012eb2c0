"""
第 1 讲 · svg —— 把 console 的四种图写成独立的 SVG 文件（放进幻灯片用）。只用标准库，不用任何画图的包。

    line_svg(title, series, ...)            折线图，参数和 console.format_line 一样
    scatter_svg(title, series, ...)         散点图，参数和 console.format_scatter 一样
    heatmap_svg(title, rows, cols, values)  热力图，参数和 console.format_heatmap 一样
    bars_svg(title, labels, values, ...)    横条 / 堆叠横条，参数和 console.format_bars 一样

每个函数返回一个完整的 SVG 文档（字符串）：标题、坐标轴和刻度、轴名、图例；字体列表里有能显示中文的字体。
同样的数据，字节完全相同（坐标保留两位小数，没有时间戳）。每个画出来的点、格子、横条都带着它的数据
（data-x、data-y、data-value），画布上有坐标的换算（data-x-min 等），测试用它们把像素换算回数据来核对。
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from xml.sax.saxutils import escape, quoteattr

from layout import (Axis, as_steps, display_width, extremes_note, finite, grouped, heat_edges, heat_extremes,
                    heat_levels, hidden_series, hidden_tails, series_marks, wrap, wrap_command)

FONT = ("'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', "
        "'WenQuanYi Micro Hei', 'Noto Sans', 'DejaVu Sans', sans-serif")
BACKGROUND = "#b0b0b0"           # 散点图里当衬底的那条序列（background=）的颜色
# 序列的颜色：Okabe–Ito 的色盲友好配色（红绿色弱时也分得开；审读时报过旧配色里蓝和紫、红和绿在色弱模拟下分不开）。
# 折线另外按 DASHES 换线型、堆叠横条的段之间有白色的缝：不只靠颜色分（终端里靠 ●○◆◇▲ 这些记号）。
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c6d31")
DASHES = ("", "9 4", "2 3", "12 3 2 3", "5 3", "1 2", "14 4 4 4", "3 5")
HEAT = ("#f7f4e9", "#fde0a5", "#f9a35a", "#e0522f", "#a3171c")   # 热力图五档，浅到深（和终端的 · ░ ▒ ▓ █ 对应）
W, H = 760, 460                  # 折线 / 散点图的画布（像素）
BOX = (78, 56, 520, 320)         # 绘图区：左、上、宽、高（右边留给参考线标签和图例）
INSET = 8                        # 框比绘图区四边各大几像素：落在轴的两端的点（对数轴上正好是 10 的幂的数）不压在框线上
Y_LABEL_X = 18                   # 竖着写的 y 轴名的基线（字在它左边约 11 像素、右边约 2 像素）
LINE, CASING = 2, 4.5             # 折线宽 2 像素；每条折线先画一道 4.5 像素宽的白边（两边各宽出 1.25 像素），再画线
# 审读报过：05 --quick 的"不进化"在"小模型"的虚线下面，图下说"被盖住了"，虚线的空隙里却一段段露出绿色；07 --budget 5
# --seeds 1 说"看不到"的线在上面那条线的边上透出一道颜色（抗锯齿）。有了白边，盖住的就真的看不到
COVER = 0.5                      # 看一条线、一个记号被盖住没有时的格子（像素）
NEAR = (CASING - LINE) / 2       # 一条线离上面那条线不到这么多像素（1.25 像素）：整个落在上面那条的白边里，看不到
RIM = 0.5                        # 再远不到这么多像素：只从白边外面露出不到半个像素的细边，图下照样说（说"最多露出一道细边"）
STACK = 2                        # 两个记号的中心相距不到这么多像素：叠在一起，下面那个最多露出一点边
COVER_GAP = 0.05                 # 折线中间连着这么多（图宽的比例，约 26 像素）被盖住时图下说一句（终端是 1/10：格子粗）


def n(v: float) -> str:
    """坐标：两位小数，去掉多余的 0（"12.50" → "12.5"）。"""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def text_width(s: str, size: float) -> float:
    """估计一段字在 SVG 里多宽：西文约 0.6 个字号，中文 1 个字号（按显示宽度，中文两列）。"""
    return display_width(s) * size * 0.6


def _text(x, y, s, size=12, anchor="start", extra="") -> str:
    return f'<text x="{n(x)}" y="{n(y)}" font-size="{size}" text-anchor="{anchor}"{extra}>{escape(s)}</text>'


BREAK_AFTER = "，；：、。,"        # 标题在这些字后面可以换行（空格不算：西文公式、"88 个"里的空格不拆）
SHORT_PAREN = 24                  # 显示宽度不超过这么多列的括号（连括号）整个不拆开


def _phrases(title: str) -> list[str]:
    """把标题切成短语：在 BREAK_AFTER 后面、最外层的"（"前面、"）"后面切开；短的括号整个是一个短语（里面不切）。"""
    out, cur, opened = [], "", []                    # opened：还没合上的括号在 title 里的位置
    for i, ch in enumerate(title):
        if ch == "（" and not opened and cur:
            out.append(cur)
            cur = ""
        cur += ch
        if ch in "（(":
            opened.append(i)
        elif ch in "）)" and opened:
            opened.pop()
        inside_short = False
        for start in opened:                             # 在一个短括号里面：不切
            end = title.find("）" if title[start] == "（" else ")", i)
            inside_short = inside_short or (end >= 0 and display_width(title[start:end + 1]) <= SHORT_PAREN)
        if (ch in BREAK_AFTER and not inside_short) or (ch == "）" and not opened):
            out.append(cur)
            cur = ""
    return out + ([cur] if cur else [])


def title_lines(title: str, width: int) -> list[str]:
    """标题折成每行不超过 width 列的几行，只在短语之间换行（_phrases）；一个短语比一行还长时才在短语里面按字折。"""
    lines, cur = [], ""
    for ph in _phrases(title):
        if display_width(cur + ph.rstrip(" ")) <= width:
            cur += ph
            continue
        if cur.strip():
            lines.append(cur.rstrip(" "))
        cur = ph.lstrip(" ")
        if display_width(cur.rstrip(" ")) > width:               # 一个短语比一行还长
            *full, cur = wrap(cur, width)
            lines += full
    return lines + ([cur.rstrip(" ")] if cur.strip() else [])


SOURCE_SIZE, SOURCE_INDENT = 11, 12   # 图下命令的字号；续行往里缩几像素


def source_lines(command: str, width: float) -> list[str]:
    """图下的命令折成每行放得进 width 像素宽的画布的几行（左右各留 10 像素，续行多缩 SOURCE_INDENT）：在词之间折开，
    选项和它的值（--knob L2_BW=…）、python3 和脚本在一行，除了最后一行都以 " \\" 结尾（shell 的续行：照抄还是同一条
    命令）。一个词本身比一行还宽时它自己一行，字缩小到放得下（_doc；引号里的词折开就不是同一条命令了，画布加宽又让
    图缩在左边）。审读报过：04 带着
    --gpu a100 和四个 --knob，命令一行印到底，画布从 760 加宽到 1,201 像素，图缩在左半边、标题居中在整个画布上。"""
    return wrap_command(command, (width - 20 - SOURCE_INDENT) / (SOURCE_SIZE * 0.6) - 2)   # 显示列；行尾留 " \\"


def _doc(width, height, kind, title, body, source="") -> str:
    """整个文档：白底、标题（比画布宽就在短语之间折成几行，图整体往下挪）、正文；source 是画这张图的命令，
    灰色小字印在最下面（幻灯片上的图离开了终端，A100 上、改了旋钮的和默认运行的图要分得出来），放不下就折成几行
    （source_lines）。"""
    lines = title_lines(title, max(20, int((width - 40) / (17 * 0.6))))    # 按显示宽度折行（中文两列）
    shift = 22 * (len(lines) - 1)
    if source:
        said = source_lines(source, width)
        for k, line in enumerate(said):                          # 一个参数本身比一行还宽（很长的路径）：这一行的字
            x = 10 + (SOURCE_INDENT if k else 0)                 # 缩小到放得下，画布不加宽（以前加宽，整张图缩在
            size = min(SOURCE_SIZE, math.floor(SOURCE_SIZE * (width - 10 - x) / text_width(line, SOURCE_SIZE) * 100) / 100)
            body = body + [_text(x, height + 4 + 14 * k, line, size, "start", ' class="source" fill="#777"')]  # 左半边）
        height += 14 * len(said)
    height += shift
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family={quoteattr(FONT)} data-chart="{kind}">')
    titles = [_text(width / 2, 28 + 22 * i, line, 17, "middle", ' font-weight="bold"') for i, line in enumerate(lines)]
    return "\n".join([head, f"<title>{escape(title)}</title>",
                      f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>'] + titles
                      + [f'<g transform="translate(0 {shift})">'] + body + ["</g>", "</svg>", ""])


def _plot(kind, title, series, *, x_label, y_label, x_fmt, y_fmt, refs=(), curves=(), connect, same_range=False,
          log_x=False, log_y=False, diagonal=False, background=None, source="") -> str:
    """折线图和散点图共用：轴、刻度、网格、参考线、辅助线、序列、图例。轴的范围和终端里的图一样算。"""
    series = {name: list(pts) for name, pts in series.items()}
    xs = finite([p[0] for pts in series.values() for p in pts], f"图「{title}」的 x ", log_x)
    ys = finite([p[1] for pts in series.values() for p in pts], f"图「{title}」的 y ", log_y)
    refs = [(label, float(y)) for label, y in refs]
    curves = [(label, [(float(x), float(y)) for x, y in pts]) for label, pts in curves]
    ys += [y for _, y in refs]
    for _, pts in curves:
        xs += [p[0] for p in pts]
        ys += [p[1] for p in pts]
    if same_range:
        xs = ys = xs + ys
    ya = Axis(ys, 61, log_y, y_fmt, 5)
    xa = Axis(xs, 61, log_x, x_fmt, 6, like=ya if same_range else None)     # y = x：两根轴同一个范围、同样的刻度
    L, T, PW, PH = BOX
    # y 刻度宽（"1.0125×"）时绘图区往右挪：竖着的 y 轴名和刻度之间留 4 像素（审读报过：04 --budget 5 --seeds 1 的散点图
    # 上"测试形状上比专家快"贴着"1.065×"）
    L = max(L, math.ceil(Y_LABEL_X + 2 + 4 + max(text_width(lab, 12) for lab in ya.labels) + 6 + INSET))

    def px(x):
        return L + xa.pos(x) / (xa.cells - 1) * PW

    def py(y):
        return T + PH - ya.pos(y) / (ya.cells - 1) * PH

    body = [f'<g class="plot" data-x-min="{xa.lo!r}" data-x-max="{xa.hi!r}" data-y-min="{ya.lo!r}" '
            f'data-y-max="{ya.hi!r}" data-log-x="{int(log_x)}" data-log-y="{int(log_y)}" '
            f'data-left="{L}" data-top="{T}" data-width="{PW}" data-height="{PH}">']
    F = INSET                                                    # 框、网格线和刻度在绘图区外面留 INSET 像素
    for t, lab in zip(xa.ticks, xa.labels):                      # 竖网格线和 x 刻度
        x = L + (t - xa.lo) / (xa.hi - xa.lo) * PW
        body += [f'<line x1="{n(x)}" y1="{T - F}" x2="{n(x)}" y2="{T + PH + F}" stroke="#e6e6e6"/>',
                 _text(x, T + PH + F + 18, lab, 12, "middle", ' class="tick-x"')]
    for t, lab in zip(ya.ticks, ya.labels):                      # 横网格线和 y 刻度
        y = T + PH - (t - ya.lo) / (ya.hi - ya.lo) * PH
        body += [f'<line x1="{L - F}" y1="{n(y)}" x2="{L + PW + F}" y2="{n(y)}" stroke="#e6e6e6"/>',
                 _text(L - F - 6, y + 4, lab, 12, "end", ' class="tick-y"')]
    body += [f'<rect x="{L - F}" y="{T - F}" width="{PW + 2 * F}" height="{PH + 2 * F}" fill="none" stroke="#444"/>',
             _text(L + PW / 2, T + PH + F + 42, x_label, 13, "middle"),
             _text(Y_LABEL_X, T + PH / 2, y_label, 13, "middle",
                   f' transform="rotate(-90 {Y_LABEL_X} {n(T + PH / 2)})"')]
    labels = []                                                  # 右边的标签：(y 像素, 文字, 颜色)
    for label, y in refs:
        body.append(f'<line class="ref" data-y="{y!r}" x1="{L - F}" y1="{n(py(y))}" x2="{L + PW + F}" y2="{n(py(y))}" '
                    f'stroke="#555" stroke-dasharray="6 4"/>')
        labels.append((py(y), label, "#333"))
    for label, pts in curves:
        pts_s = " ".join(f"{n(px(x))},{n(py(y))}" for x, y in pts)
        body.append(f'<polyline class="curve" data-name={quoteattr(label)} points="{pts_s}" fill="none" '
                    f'stroke="#888" stroke-width="1.2"/>')
        labels.append((py(pts[-1][1]), label, "#555"))
    if diagonal:                                                 # y = x：两根轴同一个范围，从左下角画到右上角
        lo, hi = (10 ** xa.lo, 10 ** xa.hi) if log_x else (xa.lo, xa.hi)
        body.append(f'<polyline class="curve" data-name="y = x" points="{n(px(lo))},{n(py(lo))} {n(px(hi))},{n(py(hi))}" '
                    f'fill="none" stroke="#888" stroke-width="1.2"/>')
        angle = math.degrees(math.atan2(py(hi) - py(lo), px(hi) - px(lo)))
        dots = [(px(x), py(y)) for pts in series.values() for x, y in pts]
        x0, y0, dy = _diagonal_label(px(lo), py(lo), px(hi), py(hi), dots)
        body.append(_text(x0, y0 + dy, "y = x", 12, "end",
                          f' class="diagonal-label" fill="#555" transform="rotate({n(angle)} {n(x0)} {n(y0 + dy)})"'))
    own = [name for name in series if name != background]
    marks = series_marks(series, background)                    # 和终端一样的记号：散点画成同样形状的点
    colors = {name: PALETTE[k % len(PALETTE)] for k, name in enumerate(own)} | {background: BACKGROUND}
    dashes = {name: (f' stroke-dasharray="{DASHES[k % len(DASHES)]}"' if DASHES[k % len(DASHES)] else "")
              for k, name in enumerate(own)} | {background: ""}
    order = [name for name in series if name == background] + own[::-1]
    for name in order:                                                 # 衬底最先画；其余的第一条序列画在最上面（和终端一样）
        pts, color = series[name], colors[name]
        line = " ".join(f"{n(px(x))},{n(py(y))}" for x, y in pts)
        if connect and len(pts) > 1:                                   # 白边：盖住下面的线，虚线的空隙里也不露出来
            body.append(f'<polyline class="casing" fill="none" stroke="white" stroke-width="{CASING}" '
                        f'points="{line}"/>')
        body.append(f'<g class="series" data-name={quoteattr(name)} fill="{color}" stroke="{color}">')
        if connect and len(pts) > 1:
            body.append(f'<polyline fill="none" stroke-width="{LINE}"{dashes[name]} points="{line}"/>')
        else:
            shape = marks[name][0]          # 衬底也用终端的记号（○，灰色空心）：学生报过图例说 ○、图上却是实心点
            body += [_point(shape, px(x), py(y), color, f' data-x="{float(x)!r}" data-y="{float(y)!r}"')
                     for x, y in pts]
        body.append("</g>")
    notes = _covered(series, marks, order, background, connect, px, py, L, T, PW, PH, x_fmt)
    labels.sort()                                                # 标签挤在一起时上下错开 15 像素，都留在框的高度里：
    at = [y for y, _, _ in labels]                               # 往下挤出框的整串往上挪（审读报过：三条靠近横轴的参考线，
    for i in range(1, len(at)):                                  # 最下面那个标签挤到了横轴的刻度"1000"旁边）
        at[i] = max(at[i], at[i - 1] + 15)
    for i in range(len(at) - 1, -1, -1):
        at[i] = min(at[i], T + PH + F if i == len(at) - 1 else at[i + 1] - 15)
    for i in range(len(at)):
        at[i] = max(at[i], T - F if i == 0 else at[i - 1] + 15)
    for y, (_, label, color) in zip(at, labels):
        body.append(_text(L + PW + F + 6, y + 4, label, 12, "start", f' fill="{color}"'))
    ref_ys = sorted((py(y), label) for label, y in refs)         # 两条参考线相距不到 2 像素：画出来是同一条线，和终端一样说一句
    notes = [f"（参考线「{a}」和「{b}」相差不到 2 像素，在图上是同一条线。）"
             for (ya, a), (yb, b) in zip(ref_ys, ref_ys[1:]) if yb - ya < 2] + notes
    body.append("</g>")
    ly = T + PH + F + 64                                         # 图例在下面
    x = L
    for name in series:
        color = colors[name]
        as_line = connect and len(series[name]) > 1              # 只有一个点的折线画成一个记号：图例也画记号
        gap = 34 if as_line else 24                              # 折线的图例画长一点，看得出线型
        x, ly, lines, after, last = _legend_place(x, ly, L, W - 10, gap, 22, name)
        mark = (f'<line x1="{n(x)}" y1="{ly - 4}" x2="{n(x + 28)}" y2="{ly - 4}" stroke="{color}" stroke-width="2"'
                f'{dashes[name]}/>' if as_line else
                _point(marks[name][0], x + 9, ly - 4, color))
        body += [mark] + [_text(x + gap, ly + 18 * k, line, 12) for k, line in enumerate(lines)]
        x, ly = after, last
    # 右边的标签（参考线、辅助线的名字）比画布宽时画布跟着加宽（审读报过："屋顶（峰值 989.4 TFLOPS）"的右括号被裁掉）
    width = int(max([W] + [L + PW + F + 6 + text_width(label, 12) + 10 for _, label, _ in labels]))
    # 被别的序列整条、一段或后半段盖住的：图例下面说一句，和终端一样（审读报过：07 --budget 5 --seeds 1 的图例里有
    # "OpenEvolve 种子 0"，图上一笔也看不到；05 --gpu a100 的"没有级联"中间一段看不到，像是断了）
    for text in notes:                                           # 续行往里缩一个字（SVG 不留行首的空格）
        for k, line in enumerate(wrap(text, max(20, int((width - L - 22) / (12 * 0.6))))):
            ly += 18
            body.append(_text(L + (12 if k else 0), ly, line, 12, "start", ' class="note" fill="#333"'))
    # 最下面一行字（图例或说明）和画图的命令之间留出和一行图例时一样的空（审读报过：两行图例时命令贴着图例）
    return _doc(width, max(H + 20, int(ly) + 32), kind, title, body, source)


def _legend_place(x, y, left, right, gap, sep, name) -> tuple:
    """图例的一项（记号或色块占 gap 像素，后面是名字）放在哪：这一行放不下（又不在行首）就换一行；名字比一整行还长
    就按显示宽度折成几行，这一项独占那几行（审读报过：很长的序列名、横条的段名一行印到底，伸出画布被裁掉；
    横条图的图例从不换行，段名长一点第四项就在画布外面）。sep 是两项之间的空。
    返回 (这一项的 x, 第一行的 y, 名字的各行, 下一项的 x, 这一项最后一行的 y)。"""
    if x > left and x + gap + text_width(name, 12) > right:
        x, y = left, y + 20
    lines = wrap(name, max(4, int((right - x - gap) / (12 * 0.6))))
    if len(lines) > 1:
        return x, y, lines, right, y + 18 * (len(lines) - 1)          # 下一项从新的一行起
    return x, y, lines, x + gap + text_width(name, 12) + sep, y


class _Grid:
    """layout.hidden_series / hidden_tails 要的 grid[行][列]，只存画过东西的格子（整个绘图区按 COVER 像素一格有几十万格）。"""

    def __init__(self, cells: dict, cols: int):
        self.cells, self.cols = cells, cols

    def __getitem__(self, r):
        return _Row(self.cells, r, self.cols)


class _Row:
    def __init__(self, cells, r, cols):
        self.cells, self.r, self.cols = cells, r, cols

    def __getitem__(self, c):
        return self.cells.get((self.r, c), (" ", None))

    def __len__(self):
        return self.cols


DIAGONAL_SPOTS = (0.92, 0.84, 0.76, 0.68, 0.6, 0.52, 0.44, 0.36, 0.28, 0.2, 0.12)   # "y = x" 的右端放在斜线的哪儿（先试的在前）


def _diagonal_label(x_lo, y_lo, x_hi, y_hi, dots) -> tuple[float, float, float]:
    """"y = x" 这几个字放在哪：右端贴着斜线上的一点 (x0, y0)，往下挪 dy 像素印在线下面（放不下再试线上面），顺着斜线
    转过去。先试靠右上角的地方，离每个点（记号的中心）都至少 7 像素才用（审读报过：04 --budget 300 --gpu a100 的
    一个点压在"y"上）；处处都有点时用第一个。返回 (x0, y0, dy)。"""
    a = math.atan2(y_hi - y_lo, x_hi - x_lo)
    w = text_width("y = x", 12)
    for dy in (14, -6):
        for t in DIAGONAL_SPOTS:
            x0, y0 = x_lo + t * (x_hi - x_lo), y_lo + t * (y_hi - y_lo)
            clear = True
            for x, y in dots:                                    # 换到字的坐标里：u 顺着字往左为负，v 往下为正
                u = (x - x0) * math.cos(a) + (y - y0 - dy) * math.sin(a)
                v = -(x - x0) * math.sin(a) + (y - y0 - dy) * math.cos(a)
                if -w - 7 <= u <= 7 and -12 - 7 <= v <= 3 + 7:   # 字高约 12 像素（基线以上），下伸约 3 像素
                    clear = False
                    break
            if clear:
                return x0, y0, dy
    return x_lo + DIAGONAL_SPOTS[0] * (x_hi - x_lo), y_lo + DIAGONAL_SPOTS[0] * (y_hi - y_lo), 14


def _covered(series, marks, order, background, connect, px, py, L, T, PW, PH, x_fmt) -> list[str]:
    """图上被别的序列盖住的序列要说的话（layout.hidden_series / hidden_tails，和终端同一套判据）：按画的顺序把每条
    序列描到 COVER 像素一格的格子上（后画的盖住先画的），整条、后半段或中间一长段（COVER_GAP）都被盖住的，各说一句。
    一条线盖住的是离它不到 NEAR 的格子（它的白边），一个记号盖住的是它的形状（_inside）：只露出一个角的记号不算看不到
    （审读报过：05 --budget 1 说"图上看不到「没有级联」"，▲ 的两个角从 ● 下面露出来）。记号的中心和画在上面的
    记号相距不到 STACK 的，另说一句（_stacked）。折线按它的名字称呼（SVG 的折线靠颜色和线型分，没有 ● 这种记号），
    散点带上记号。"""
    M = INSET                                                    # 记号可以伸出绘图区几个像素：格子也往外留出这么多
    cols, rows = int((PW + 2 * M) / COVER) + 1, int((PH + 2 * M) / COVER) + 1
    top: dict = {}                      # 画过的线、记号的每一格 → (现在最上面的记号, 怎么盖的：line、mark、full、rim)
    where: dict = {}                    # 每一格里那一点真正的位置（像素）：算它离后画的线多远，不受格子取整的影响
    drawn: dict = {}
    by_row: dict = {}                   # 行 → 这一行画过东西的列

    def cell(x, y):
        return round((y - T + M) / COVER), round((x - L + M) / COVER)

    def own(placed, ch, how):
        """placed：[((行, 列), (x, y))]，ch 画上的每一点和它落在哪一格。"""
        mine = drawn.setdefault(ch, set())
        for (r, c), (x, y) in placed:
            if 0 <= r < rows and 0 <= c < cols and (top.get((r, c), (None,))[0] != ch or (r, c) not in mine):
                top[r, c], where[r, c] = (ch, how), (x, y)             # 一格里取最先落进来的那一点
                mine.add((r, c))
                by_row.setdefault(r, set()).add(c)

    shapes: dict = {}                   # (记号, 中心) → mark_rows 的结果：叠在同一个位置的记号只算一次

    def mark_rows(ch, x, y):
        """记号 ch 画在 (x, y) 时盖住的格子（形状里的格点，_inside），一行一段：[(行, 左端的列, 右端的列)]。记号都是
        凸的、左右对称，一行里盖住的格子连成一段，有的话中心那一列就在里面：每行从中心那一列往两边数到形状的边为止，
        不用把方圆 7 像素的格子一个个试一遍（审读量过：04 --seeds 1000 的散点图，每个记号试 961 格，画图多花一秒多）。"""
        if (ch, x, y) not in shapes:
            r0, c0 = cell(x, y)
            reach = int(7 / COVER) + 1
            spans = []
            for r in range(r0 - reach, r0 + reach + 1):
                dy = T - M + r * COVER - y
                hi = c0
                while hi - c0 <= reach and _inside(ch, L - M + hi * COVER - x, dy):
                    hi += 1
                lo = c0 - 1
                while c0 - lo <= reach and _inside(ch, L - M + lo * COVER - x, dy):
                    lo -= 1
                if lo + 1 <= hi - 1:
                    spans.append((r, lo + 1, hi - 1))
            shapes[ch, x, y] = spans
        return shapes[ch, x, y]

    def casing(pts, ch):
        """折线 pts 的白边盖住已经画过的格子：离线不到 NEAR 的整个盖住（full），再远不到 RIM 的还露出一道细边（rim）。"""
        best: dict = {}
        reach = NEAR + RIM
        for (x0, y0), (x1, y1) in _straight(pts):
            r_lo, c_lo = cell(min(x0, x1) - reach - COVER, min(y0, y1) - reach - COVER)
            r_hi, c_hi = cell(max(x0, x1) + reach + COVER, max(y0, y1) + reach + COVER)
            dx, dy = x1 - x0, y1 - y0
            for r in range(r_lo, r_hi + 1):
                row = by_row.get(r)
                if not row:
                    continue
                for c in (row if len(row) < c_hi - c_lo else range(c_lo, c_hi + 1)):
                    if not c_lo <= c <= c_hi or c not in row or top[r, c][0] == ch:
                        continue
                    x, y = where[r, c]
                    t = ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy) if dx or dy else 0.0
                    t = max(0.0, min(1.0, t))                            # 线段上离这一点最近的地方
                    d = math.hypot(x - x0 - t * dx, y - y0 - t * dy)
                    if d <= reach and d < best.get((r, c), math.inf):
                        best[r, c] = d
        for key, d in best.items():
            if d <= NEAR or top[key][1] not in ("full", "mark"):       # 细边不把已经整个盖住的格子改成"露出细边"
                top[key] = (ch, "full" if d <= NEAR else "rim")

    centres = []                                                 # 画出来的每个记号：(中心 x, 中心 y, 序列名)，先画的在前
    for name in order:
        ch, pts = marks[name][0], [(px(x), py(y)) for x, y in series[name]]
        if not connect or len(pts) == 1:
            for x, y in pts:                                     # 记号：盖住它的形状里的格子（原来在那里的），
                centres.append((x, y, name))                     # 那些格子也是它自己的
                own((((r, c), (L - M + c * COVER, T - M + r * COVER)) for r, lo, hi in mark_rows(ch, x, y)
                     for c in range(lo, hi + 1)), ch, "mark")
            continue
        casing(pts, ch)
        samples = []
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):             # 沿线段每半格取一个点
            steps = int(max(abs(x1 - x0), abs(y1 - y0)) / COVER * 2) + 1
            samples += [(x0 + (x1 - x0) * j / steps, y0 + (y1 - y0) * j / steps) for j in range(steps + 1)]
        own([(cell(x, y), (x, y)) for x, y in samples], ch, "line")
    grid = _Grid(top, cols)
    show = (lambda name: f"「{name}」") if connect else (lambda name: f"{marks[name][0]} {name}")

    def covered(name, cells):                                    # 一段里有 CASING 那么长只被外面那一圈盖着：露出细边
        rim = {c for r, c in cells if grid[r][c][1] == "rim"}
        return "被盖住了" + ("（最多露出一道不到半个像素的细边）" if len(rim) >= CASING / COVER else "")
    out = hidden_series(series, marks, drawn, grid, background, show, "重合", covered)
    out = [t.replace("（图上看不到", "（图上几乎看不到") if "细边" in t else t for t in out]
    out += _stacked(series, centres, background, out, show, connect)
    if connect:
        xaxis = SimpleNamespace(pos=lambda x: (px(x) - L + M) / COVER)
        lines = {name: pts for name, pts in series.items() if len(pts) > 1}     # 只有一个点的画成记号，上面说过了
        # 线的最后一小段碰上另一条线（台阶往上跳的那一竖）时，它的白边总要盖住这条线末尾一两个像素：不算被盖住的尾巴
        out += hidden_tails(lines, marks, drawn, grid, background, xaxis, x_fmt, show, "重合", COVER_GAP,
                            int(CASING / COVER), covered)
    return [t.replace(" 「", "「").replace("」 ", "」") for t in out]   # "和「完整系统」重合"：书名号两边不空格


def _straight(pts) -> list:
    """折线的各段，同一个方向上接着走的横线、竖线并成一段（台阶图的一段横线由几千个提议的点连成，04、05 --budget
    100000 有几十万段）：白边盖住哪些格子只看线在哪，和线上有几个点无关；一格一格地量每一小段要多花几倍的时间。"""
    out = []
    for a, b in zip(pts, pts[1:]):
        if out:
            (x0, y0), (x1, y1) = out[-1]
            if ((y0 == y1 == b[1] and (x1 - x0) * (b[0] - x1) > 0)          # 横线接着往同一边走
                    or (x0 == x1 == b[0] and (y1 - y0) * (b[1] - y1) > 0)):   # 竖线接着往同一边走
                out[-1] = ((x0, y0), b)
                continue
        out.append((a, b))
    return out


def _stacked(series, centres, background, said, show, connect) -> list[str]:
    """叠在一起的记号（中心和画在它上面的某个记号相距不到 STACK 像素）要说的话：一条序列的每个点都叠在别的序列下面、
    又不是整个看不到（hidden_series 说过了）时，说它只露出一点边角；散点图再像终端那样数一数几个点画成了几个记号
    （审读报过：04 --budget 1 的散点图上 10 个种子只看得到 6 个记号，图下什么也没说；终端说了）。衬底不算。"""
    # 从最后画的往前看，画过的中心按 STACK 像素一格分桶（格 → 序列 → 中心的集合）：相距不到 STACK 的只在相邻的格里，
    # 每个点只看周围 9 格（审读量过：以前每个点和后画的每个点都比一次，04 --seeds 1000 的 2000 个点要比两百万次）
    later: dict = {}
    above_of = []                                                # 每个点上面叠着的序列（按 centres 倒着排）
    for x, y, name in reversed(centres):
        bx, by = math.floor(x / STACK), math.floor(y / STACK)
        above = set()
        for gx in (bx - 1, bx, bx + 1):
            for gy in (by - 1, by, by + 1):
                for other, spots in later.get((gx, gy), {}).items():
                    if other not in above and any(math.hypot(x2 - x, y2 - y) < STACK for x2, y2 in spots):
                        above.add(other)
        above_of.append(above)
        later.setdefault((bx, by), {}).setdefault(name, set()).add((x, y))
    under: dict = {}                                             # 序列 → 它每个点上面叠着的别的序列
    buried, points = 0, 0
    for (x, y, name), above in zip(centres, reversed(above_of)):
        if name == background:
            continue
        points += 1
        buried += bool(above)
        under.setdefault(name, []).append(above - {name})
    out = []
    for name in series:
        tops = under.get(name)
        if not tops or not all(tops) or any(show(name) in text for text in said):
            continue
        over = [other for other in series if any(other in t for t in tops)]
        out.append(f"（{show(name)} 的每个点都叠在 {'、'.join(show(o) for o in over)} 下面（中心相距不到 {STACK} 像素），"
                   "只露出一点边角。）")
    if not connect and buried:
        out.append(f"（{points} 个点在图上是 {points - buried} 个记号：有 {buried} 个叠在别的点下面（中心相距不到 {STACK} "
                   "像素）。）")
    return out


def line_svg(title, series, *, x_label="", y_label="", x_fmt="{:g}", y_fmt="{:g}", refs=(), log_x=False, log_y=False,
             steps=False, source="", **_) -> str:
    """折线图（参数同 console.format_line；steps=True 按台阶画）。"""
    if steps:
        series = {name: as_steps(pts) for name, pts in series.items()}
    return _plot("line", title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, refs=refs,
                 connect=True, log_x=log_x, log_y=log_y, source=source)


R_DOT, R_RING, R_SHAPE, STROKE = 4.5, 4, 5.5, 1.8   # 实心圆、空心圆的半径，菱形、三角、方块的"半径"，空心记号的描边
CORNERS = {"◆": [(0, -R_SHAPE), (R_SHAPE, 0), (0, R_SHAPE), (-R_SHAPE, 0)],
           "▲": [(0, -R_SHAPE), (R_SHAPE, 0.75 * R_SHAPE), (-R_SHAPE, 0.75 * R_SHAPE)],
           "■": [(-0.8 * R_SHAPE, -0.8 * R_SHAPE), (0.8 * R_SHAPE, -0.8 * R_SHAPE), (0.8 * R_SHAPE, 0.8 * R_SHAPE),
                 (-0.8 * R_SHAPE, 0.8 * R_SHAPE)]}
SOLID = {"◇": "◆", "△": "▲", "□": "■"}


def _point(mark: str, x: float, y: float, color: str, extra: str = "") -> str:
    """散点图的一个点，形状照终端的记号：●○ 圆、◆◇ 菱形、▲△ 三角、■□ 方块；空心的（○◇△□）白底、描边。
    圆是 <circle cx cy>，别的是 <path>，中心写在 data-cx、data-cy（测试和读图的人按它换算回数据）。"""
    hollow = mark in "○◇△□"
    paint = f' fill="white" stroke="{color}" stroke-width="{STROKE}"' if hollow else f' fill="{color}" stroke="none"'
    if mark in "●○":
        return f'<circle cx="{n(x)}" cy="{n(y)}" r="{R_RING if hollow else R_DOT}"{paint}{extra}/>'
    d = "M" + " L".join(f"{n(x + dx)},{n(y + dy)}" for dx, dy in CORNERS[SOLID.get(mark, mark)]) + " Z"
    return f'<path d="{d}" data-cx="{n(x)}" data-cy="{n(y)}"{paint}{extra}/>'


def _inside(mark: str, dx: float, dy: float) -> bool:
    """离记号中心 (dx, dy) 的一点在不在 _point 画出来的形状里（空心的连同描边的外半圈）。"""
    edge = STROKE / 2 if mark in "○◇△□" else 0.0
    if mark in "●○":
        return math.hypot(dx, dy) <= (R_RING if mark == "○" else R_DOT) + edge
    pts = CORNERS[SOLID.get(mark, mark)]
    inside = False
    for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):        # 射线法
        if (y0 > dy) != (y1 > dy) and dx < x0 + (dy - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    if inside or not edge:
        return inside
    for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):        # 描边：离某条边不到半个描边宽
        t = max(0.0, min(1.0, ((dx - x0) * (x1 - x0) + (dy - y0) * (y1 - y0)) / ((x1 - x0) ** 2 + (y1 - y0) ** 2)))
        if math.hypot(dx - x0 - t * (x1 - x0), dy - y0 - t * (y1 - y0)) <= edge:
            return True
    return False


def scatter_svg(title, series, *, x_label="", y_label="", x_fmt="{:g}", y_fmt="{:g}", diagonal=False, curves=(),
                log_x=False, log_y=False, background=None, source="", **_) -> str:
    """散点图（参数同 console.format_scatter；background 那条序列是灰色的衬底，画在最下面）。"""
    return _plot("scatter", title, series, x_label=x_label, y_label=y_label, x_fmt=x_fmt, y_fmt=y_fmt, curves=curves,
                 connect=False, same_range=diagonal, log_x=log_x, log_y=log_y, diagonal=diagonal, background=background,
                 source=source)


def heatmap_svg(title, rows, cols, values, *, fmt="{:.2f}", x_label="", y_label="", log=False, marks=(),
                marks_note="", source="", span=None, **_) -> str:
    """热力图（参数同 console.format_heatmap）：每格的颜色按五档，格子里印数值，下面是刻度。marks 里的格子 (行, 列)
    在数值后面加 *，marks_note 是最下面说 * 是什么的一行（终端里的热力图不印每格的数，* 在它上面那张表里）。"""
    values, fmt = [finite(r, f"热力图「{title}」的数据") for r in values], grouped(fmt)
    lo, hi, levels = heat_levels(values, log, fmt, span)
    marks = set(marks)
    label = lambda i, j: fmt.format(values[i][j]) + ("*" if (i, j) in marks else "")   # noqa: E731
    lw = max(text_width(s, 12) for s in rows + [y_label]) + 16
    cw, ch = max(44, max(text_width(label(i, j), 11) for i, r in enumerate(values) for j in range(len(r))) + 8), 30
    L, T = lw, 92
    width, height = int(max(L + cw * len(cols) + 20, 560)), int(T + ch * len(rows) + 84 + (22 if marks_note else 0))
    body = [_text(L + cw * len(cols) / 2, T - 34, x_label, 13, "middle"), _text(8, T - 8, y_label, 13)]
    flat = [(v, i, j) for i, r in enumerate(values) for j, v in enumerate(r)]
    big, small = heat_extremes(flat, fmt)                        # 和终端里一样：并列取第一个，都一样时只标一格
    body += [_text(L + cw * (j + 0.5), T - 8, c, 12, "middle") for j, c in enumerate(cols)]
    for i, name in enumerate(rows):
        y = T + ch * i
        body.append(_text(L - 8, y + ch / 2 + 4, name, 12, "end"))
        for j, v in enumerate(values[i]):
            lv = levels[i][j]
            body += [f'<rect x="{n(L + cw * j)}" y="{n(y)}" width="{n(cw)}" height="{ch}" fill="{HEAT[lv]}" '
                     f'stroke="white" data-row={quoteattr(name)} data-col={quoteattr(cols[j])} data-value="{v!r}"/>',
                     _text(L + cw * (j + 0.5), y + ch / 2 + 4, label(i, j), 11, "middle",
                           (' fill="white"' if lv >= 3 else "") + (' font-weight="bold"' if (v, i, j) in (big, small)
                                                                    else ""))]
    for v, i, j in {big, small}:                                 # 最大、最小的格子描一圈黑框
        body.append(f'<rect class="extreme" x="{n(L + cw * j + 1)}" y="{n(T + ch * i + 1)}" width="{n(cw - 2)}" '
                    f'height="{ch - 2}" fill="none" stroke="black" stroke-width="2"/>')
    y = T + ch * len(rows) + 24                                  # 刻度：五个色块和各自的范围
    x = L
    edges = heat_edges(lo, hi, log)
    for k, color in enumerate(HEAT if hi > lo else HEAT[:1]):
        span = f"{fmt.format(edges[k])}–{fmt.format(edges[k + 1])}" if hi > lo else f"全部 = {fmt.format(lo)}"
        body += [f'<rect x="{n(x)}" y="{y - 11}" width="14" height="14" fill="{color}" stroke="#999"/>',
                 _text(x + 18, y, span, 11)]
        x += 18 + text_width(span, 11) + 16
    if hi > lo:                                                  # 印着边界上那个数的格子在上面一档
        rule = "（按比例分档，每档含下界）" if log else "（每档含下界）"   # 按比例：每档的上界是下界的同一个倍数
        body.append(_text(x, y, rule, 11))
        x += text_width(rule, 11)
    extremes = extremes_note(flat, big, small, fmt, lambda t: f"{rows[t[1]]}，{x_label or '列'} = {cols[t[2]]}",
                             "黑框")                              # 和终端里一样的说法
    body.append(_text(L, y + 26, extremes, 12))
    if marks_note:
        body.append(_text(L, y + 48, marks_note, 12))
    width = int(max(width, x + 12, L + text_width(extremes, 12) + 12,       # 刻度和最大最小那一行不被裁掉
                    L + text_width(marks_note, 12) + 12))
    return _doc(width, height, "heatmap", title, body, source)


def bars_svg(title, labels, values, *, segments=None, fmt="{:g}", relative=False, notes=None, source="", **_) -> str:
    """横条 / 堆叠横条（参数同 console.format_bars）。"""
    fmt = grouped(fmt)
    parts = [[v] if segments is None else list(v) for v in values]
    finite([v for p in parts for v in p], f"横条图「{title}」的数据")
    totals = [sum(p) for p in parts]                             # 整数加起来还是整数，和终端里印的一样
    lw = max(text_width(s, 12) for s in labels) + 16
    L, T, BW, BH = lw, 56, 480, 22
    tail = max(text_width(t, 12) for t in (notes or [fmt.format(t) for t in totals]))
    width, height = int(L + BW + tail + 24), int(T + (BH + 10) * len(labels) + (50 if segments else 20))
    body = []
    sep = 'stroke="white" stroke-width="1.5" ' if segments else ""   # 堆叠的段之间一道白缝：相邻两段不只靠颜色分
    for i, (label, p) in enumerate(zip(labels, parts)):
        top = (sum(p) if relative else max(totals)) or 1.0
        y = T + (BH + 10) * i
        body.append(_text(L - 8, y + BH / 2 + 4, label, 12, "end"))
        x = L
        for k, v in enumerate(p):
            w = v / top * BW
            seg = f' data-segment={quoteattr(segments[k])}' if segments else ""
            body.append(f'<rect x="{n(x)}" y="{y}" width="{n(w)}" height="{BH}" fill="{PALETTE[k % len(PALETTE)]}" '
                        f'{sep}data-label={quoteattr(label)}{seg} data-value="{float(v)!r}"/>')
            x += w
        body.append(_text(x + 6, y + BH / 2 + 4, fmt.format(totals[i]) if notes is None else notes[i], 12))
    if segments:
        x, y = L, T + (BH + 10) * len(labels) + 20
        for k, s in enumerate(segments):
            x, y, lines, after, last = _legend_place(x, y, L, width - 10, 18, 18, s)
            body += [f'<rect x="{n(x)}" y="{y - 11}" width="14" height="14" fill="{PALETTE[k % len(PALETTE)]}"/>']
            body += [_text(x + 18, y + 18 * j, line, 12) for j, line in enumerate(lines)]
            x, y = after, last
        height = max(height, int(y) + 30)                        # 图例换了行：画布跟着加高
    return _doc(width, height, "bars", title, body, source)
