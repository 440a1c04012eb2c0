"""SVG 当文件格式测：每种图（折线、散点、热力图、横条、堆叠横条）的标题、轴名、序列名、行列名里放上 <、>、&、
引号和中文，写出来的文件 xml.etree 读得进、字原样读得回来（幻灯片软件和浏览器打不开没转义的 "M <= 16"）；
每个选项（对数轴、y = x 对角线、热力图里最大最小值并列）在终端和 SVG 两种形式里各画一次，两边说的是同一个点、同一格。
终端的图按印出来的刻度读回数据（不调用 console 的换算），SVG 按它自带的 data-* 换算读回。"""

import math
import os
import re
import xml.etree.ElementTree as ET

import pytest

import svg
from console import CURVE, MARKS, display_width, format_heatmap, format_line, format_scatter, format_bars

NS = "{http://www.w3.org/2000/svg}"
NASTY = ['M <= 16 & N > 4096', '"引号" 和 \'单引号\'', '<script>alert(1)</script>', 'a && b < c > d', '形状 &amp; 配置']


def parse(text):
    root = ET.fromstring(text)                              # 没转义的 < 或 & 在这里就抛 ParseError
    assert root.tag == NS + "svg"
    return root


def q(root, tag):
    return list(root.iter(NS + tag))


def texts(root):
    return [t.text or "" for t in q(root, "text")]


def title_round_trips(root, title):
    assert q(root, "title")[0].text == title
    drawn = [t.text for t in q(root, "text") if t.get("font-weight") == "bold" and t.get("font-size") == "17"]
    assert "".join(drawn).replace(" ", "") == title.replace(" ", "")     # 折成几行也是原来的字


@pytest.mark.parametrize("k", range(len(NASTY)))
def test_line_and_scatter_with_markup_characters_parse_and_round_trip(k):
    title, xl, yl = NASTY[k], NASTY[(k + 1) % len(NASTY)], NASTY[(k + 2) % len(NASTY)]
    names = [NASTY[(k + 3) % len(NASTY)], NASTY[(k + 4) % len(NASTY)]]
    series = {names[0]: [(1, 1.0), (2, 1.5), (3, 1.2)], names[1]: [(1, 0.9), (3, 1.1)]}
    ref, curve = "上限 <1.33> & \"ref\"", "辅助 <线> & 'c'"
    for root in (parse(svg.line_svg(title, series, x_label=xl, y_label=yl, refs=[(ref, 1.33)])),
                 parse(svg.scatter_svg(title, series, x_label=xl, y_label=yl, curves=[(curve, [(1, 1), (3, 1.4)])]))):
        title_round_trips(root, title)
        t = texts(root)
        assert xl in t and yl in t and all(name in t for name in names)
        assert [g.get("data-name") for g in q(root, "g") if g.get("class") == "series"] == names[::-1]
        assert ref in t or curve in t
    assert [e.get("data-name") for e in q(root, "polyline") if e.get("class") == "curve"] == [curve]


@pytest.mark.parametrize("k", range(len(NASTY)))
def test_heatmap_with_markup_characters_parses_and_round_trips(k):
    rows = [NASTY[k], NASTY[(k + 1) % len(NASTY)], "中文行"]
    cols = ["<1", "&2", '"3"']
    values = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5]]
    root = parse(svg.heatmap_svg(NASTY[(k + 2) % len(NASTY)], rows, cols, values, x_label="M & <N>",
                                 y_label=NASTY[(k + 3) % len(NASTY)]))
    title_round_trips(root, NASTY[(k + 2) % len(NASTY)])
    t = texts(root)
    assert all(r in t for r in rows) and all(c in t for c in cols) and "M & <N>" in t
    cells = {(e.get("data-row"), e.get("data-col")): float(e.get("data-value")) for e in q(root, "rect")
             if e.get("data-value")}
    assert cells == {(r, c): values[i][j] for i, r in enumerate(rows) for j, c in enumerate(cols)}
    note = next(x for x in t if x.startswith("最大"))
    assert "最大 9.50：中文行，M & <N> = \"3\"" in note and f"最小 1.00：{rows[0]}，M & <N> = <1" in note


@pytest.mark.parametrize("k", range(len(NASTY)))
def test_bars_with_markup_characters_parse_and_round_trip(k):
    labels = [NASTY[k], NASTY[(k + 1) % len(NASTY)]]
    segments = ["算 <tensor>", "搬 & 等", '"显存"']
    root = parse(svg.bars_svg(NASTY[(k + 2) % len(NASTY)], labels, [[1, 2, 3], [3, 0, 1]], segments=segments))
    title_round_trips(root, NASTY[(k + 2) % len(NASTY)])
    t = texts(root)
    assert all(x in t for x in labels + segments)
    got = [(e.get("data-label"), e.get("data-segment")) for e in q(root, "rect") if e.get("data-value")]
    assert got == [(lab, s) for lab in labels for s in segments]
    notes = ["<慢 2×>", "& 快"]
    root = parse(svg.bars_svg("t", labels, [1.0, 2.0], notes=notes))
    assert all(x in texts(root) for x in labels + notes)
    assert [e.get("data-label") for e in q(root, "rect") if e.get("data-value")] == labels


# ---------------------------------------------------------------- 终端的图按印出来的刻度读回数据

def terminal_axes(text):
    """终端折线 / 散点图：(每个绘图格的行列 → 字符, x 刻度 {列: 值}, y 刻度 {行: 值}, 绘图区左边的显示列)。
    值是印出来的刻度标签（数字，去掉单位）。"""
    lines = text.split("\n")
    plot = [i for i, line in enumerate(lines) if re.match(r"^ *\S* [┤│]", line)]
    axis = next(i for i, line in enumerate(lines) if "└" in line)
    left = display_width(lines[plot[0]].split("┤")[0].split("│")[0]) + 1
    grid = {}
    for r, i in enumerate(plot):
        line = lines[i]
        col = 0
        for ch in line:
            if col >= left and ch != " ":
                grid[(r, col - left)] = ch
            col += display_width(ch)
    ys = {}
    for r, i in enumerate(plot):
        m = re.match(r"^ *(\S+) ┤", lines[i])
        if m:
            ys[r] = float(re.sub(r"[^\d.e+-]", "", m[1]))
    rule = lines[axis]
    ticks = [display_width(rule[:k]) - left for k, ch in enumerate(rule) if ch == "┬"]
    xs = {}
    under = lines[axis + 1]
    for m in re.finditer(r"\S+", under):
        centre = display_width(under[:m.start()]) + (display_width(m[0]) - 1) / 2 - left
        c = min(ticks, key=lambda t: abs(t - centre))
        if abs(c - centre) <= 1:
            xs[c] = float(re.sub(r"[^\d.e+-]", "", m[0]))
    return grid, xs, ys


def reader(ticks: dict, log: bool):
    """刻度 {格: 值} → 格坐标 → 数据值的换算（对数轴在 log10 上线性）。"""
    (c0, v0), (c1, v1) = sorted(ticks.items())[:2]
    f = (lambda v: math.log10(v)) if log else (lambda v: v)
    g = (lambda t: 10 ** t) if log else (lambda t: t)
    return lambda c: g(f(v0) + (c - c0) * (f(v1) - f(v0)) / (c1 - c0)), abs(f(v1) - f(v0)) / abs(c1 - c0)


def svg_ticks(root):
    """SVG 的 x、y 刻度标签（印着的字，千分位去掉："1,000" → "1000"）和绘图区。"""
    plot = next(e for e in q(root, "g") if e.get("class") == "plot")
    xs = [t.text.replace(",", "") for t in q(plot, "text") if t.get("class") == "tick-x"]
    ys = [t.text.replace(",", "") for t in q(plot, "text") if t.get("class") == "tick-y"]
    return xs, ys, plot


def svg_reader(plot):
    f = {k[5:]: float(v) for k, v in plot.attrib.items() if k.startswith("data-")}

    def x(px):
        t = f["x-min"] + (px - f["left"]) / f["width"] * (f["x-max"] - f["x-min"])
        return 10 ** t if f["log-x"] else t

    def y(py):
        t = f["y-min"] + (f["top"] + f["height"] - py) / f["height"] * (f["y-max"] - f["y-min"])
        return 10 ** t if f["log-y"] else t
    return x, y


LOG_PTS = [(1.0, 3.0), (30.0, 80.0), (4000.0, 650.0)]


def test_log_axes_terminal_and_svg_have_the_same_decades_and_points():
    text = format_scatter("屋顶线 <log>", {"点 & 点": LOG_PTS}, log_x=True, log_y=True, width=90, height=17, color=False)
    grid, xs, ys = terminal_axes(text)
    root = parse(svg.scatter_svg("屋顶线 <log>", {"点 & 点": LOG_PTS}, log_x=True, log_y=True))
    sx, sy, plot = svg_ticks(root)
    assert plot.get("data-log-x") == "1" and plot.get("data-log-y") == "1"
    assert sorted(ys.values()) == sorted(float(v) for v in sy)                       # 同样的十的幂
    assert set(xs.values()) <= {float(v) for v in sx} and len(xs) >= 2
    assert all(math.log10(v) == round(math.log10(v)) for v in list(xs.values()) + list(ys.values()))
    to_x, cx = reader(xs, True)
    row_of = {v: r for r, v in ys.items()}
    to_y, cy = reader({r: v for r, v in ys.items()}, True)
    marks = [(r, c) for (r, c), ch in grid.items() if ch == MARKS[0]]
    assert len(marks) == len(LOG_PTS)
    px, py = svg_reader(plot)
    circles = [(float(c.get("cx")), float(c.get("cy"))) for c in q(root, "circle") if c.get("data-x")]
    for (x, y) in LOG_PTS:                                   # 终端和 SVG 都把这个点画在它自己的位置上
        assert min(abs(math.log10(to_x(c)) - math.log10(x)) + abs(math.log10(to_y(r)) - math.log10(y))
                   for r, c in marks) <= cx + cy
        assert min(abs(math.log10(px(a)) - math.log10(x)) + abs(math.log10(py(b)) - math.log10(y))
                   for a, b in circles) < 0.01
    assert row_of


def test_log_line_chart_terminal_and_svg_agree():
    pts = [(1, 2.0), (10, 20.0), (100, 900.0)]
    text = format_line("t", {"a": pts}, log_x=True, log_y=True, width=80, height=13, color=False)
    _, xs, ys = terminal_axes(text)
    sx, sy, plot = svg_ticks(parse(svg.line_svg("t", {"a": pts}, log_x=True, log_y=True)))
    assert sorted(ys.values()) == sorted(float(v) for v in sy) and set(xs.values()) <= {float(v) for v in sx}


def test_diagonal_is_y_equals_x_in_both_forms():
    pts = {"训练 < 测试": [(1.2, 1.25), (1.3, 1.28), (1.05, 1.1)], "其余 &": [(1.26, 1.16)]}
    text = format_scatter("对角线", pts, diagonal=True, width=80, height=17, color=False)
    grid, xs, ys = terminal_axes(text)
    to_x, cx = reader(xs, False)
    to_y, cy = reader(ys, False)
    diag = [(r, c) for (r, c), ch in grid.items() if ch == CURVE]
    assert len(diag) >= 10 and "y = x" in text
    for r, c in diag:                                        # 终端：每个 · 都在 y = x 上（差不到一格）
        assert abs(to_x(c) - to_y(r)) <= cx + cy, (r, c, to_x(c), to_y(r))
    assert min(to_x(c) for _, c in diag) <= 1.05 + cx and max(to_x(c) for _, c in diag) >= 1.3 - cx
    root = parse(svg.scatter_svg("对角线", pts, diagonal=True))
    px, py = svg_reader(next(e for e in q(root, "g") if e.get("class") == "plot"))
    line = next(e for e in q(root, "polyline") if e.get("data-name") == "y = x")
    ends = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
    for a, b in ends:
        assert abs(px(a) - py(b)) < 1e-3
    assert "y = x" in texts(root)


@pytest.mark.parametrize("values,big,small", [
    ([[1.0, 3.0, 3.0], [0.5, 3.0, 0.5]], (0, 1), (1, 0)),                 # 最大三格并列、最小两格并列：取第一个
    ([[2.0, 2.0], [2.0, 2.0]], (0, 0), (0, 0)),                           # 全部一样
    ([[0.5, 1.0], [3.0, 0.5]], (1, 0), (0, 0)),
])
def test_heatmap_ties_name_the_same_cell_in_both_forms(values, big, small):
    rows, cols = ["甲 <a>", "乙 & b"], [f"c{j}" for j in range(len(values[0]))]
    text = format_heatmap("并列", rows, cols, values, x_label="M", width=60, color=False)
    root = parse(svg.heatmap_svg("并列", rows, cols, values, x_label="M"))
    flat = [v for r in values for v in r]
    hi, lo = max(flat), min(flat)
    joined = "".join(line.strip() for line in text.split("\n"))
    if hi == lo:                  # 全部一样：只说这一件事、只框一格（数不全一样、印出来一样的在 test_charts.py）
        where = f"{rows[big[0]]}，M = {cols[big[1]]}"
        assert f"全部 {len(flat)} 格都是 {hi:.2f}，黑框的是 {where}" in texts(root)
        assert not any(t.startswith("最大") for t in texts(root))
    svg_note = next((t for t in texts(root) if t.startswith("最大")), "")
    for word, (i, j), v in (("最大", big, hi), ("最小", small, lo)) if hi > lo else ():
        n, where = flat.count(v), f"{rows[i]}，M = {cols[j]}"
        # 几格一样时先说几格、再说标出来的是哪一格（学生报过："…M = 1 等 12 格（黑框）"读着像 12 格都框了）
        name = f"{word} {v:.2f}：{n} 格，黑框的是 {where}" if n > 1 else f"{word} {v:.2f}：{where}（黑框）"
        assert name in svg_note, (name, svg_note)
        if hi > lo:
            flat_name = (f"{word}{v:.2f}：{n}格，印出数值的是{where}" if n > 1 else f"{word}{v:.2f}：{where}").replace(" ", "")
            assert flat_name in joined.replace(" ", ""), (flat_name, joined)
    # SVG 的黑框和终端里印出数值的格子是同一格
    cells = {(e.get("data-row"), e.get("data-col")): (float(e.get("x")), float(e.get("y"))) for e in q(root, "rect")
             if e.get("data-value")}
    boxed = {(float(e.get("x")) - 1, float(e.get("y")) - 1) for e in q(root, "rect") if e.get("class") == "extreme"}
    want = {cells[rows[i], cols[j]] for i, j in (big, small)}
    assert {(round(a, 1), round(b, 1)) for a, b in boxed} == {(round(a, 1), round(b, 1)) for a, b in want}
    lines = text.split("\n")
    body = [next(line for line in lines if line.startswith(r)) for r in rows]
    for i, row in enumerate(body):
        shown = re.findall(r"\d+\.\d\d", row[len(rows[i]):])
        expect = [f"{values[i][j]:.2f}" for j in range(len(cols)) if (i, j) in (big, small)]
        assert shown == expect, (row, expect)


def test_bars_terminal_and_svg_show_the_same_totals():
    labels, values = ["甲 <", "乙 &"], [[1, 2.5], [4, 0]]
    text = format_bars("t", labels, values, segments=["a", "b"], fmt="{:.1f}", width=60, color=False)
    root = parse(svg.bars_svg("t", labels, values, segments=["a", "b"], fmt="{:.1f}"))
    for label, v in zip(labels, values):
        line = next(x for x in text.split("\n") if x.startswith(label))
        assert line.rstrip().endswith(f"{sum(v):.1f}") and f"{sum(v):.1f}" in texts(root)


def _rgb(color):
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def _deuteranope(rgb):
    """红绿色弱（deuteranopia）看到的颜色：Viénot、Brettel、Mollon（1999）的线性 RGB 矩阵，够用来比远近。"""
    lin = [((c / 255 + 0.055) / 1.055) ** 2.4 if c / 255 > 0.04045 else c / 255 / 12.92 for c in rgb]
    m = ((0.29275, 0.70725, 0.0), (0.29275, 0.70725, 0.0), (-0.02234, 0.02234, 1.0))
    return tuple(sum(a * b for a, b in zip(row, lin)) for row in m)


def test_lines_differ_by_dash_as_well_as_colour_and_legend_shows_the_same_dash():
    # 审读时报过：05 的五条线同样粗、都是实线，红绿色弱时"完整系统"和"没有逐形状反馈"、"小模型"和"不进化"分不开
    names = [f"序列 {k}" for k in range(5)]
    series = {name: [(1, 1.0 + k / 10), (2, 1.2 + k / 10)] for k, name in enumerate(names)}
    root = parse(svg.line_svg("五条线", series))
    drawn = {g.get("data-name"): (g.get("stroke"), next(iter(q(g, "polyline"))).get("stroke-dasharray"))
             for g in q(root, "g") if g.get("class") == "series"}
    assert len(set(drawn.values())) == 5 and len({dash for _, dash in drawn.values()}) == 5
    legend = {(e.get("stroke"), e.get("stroke-dasharray")) for e in q(root, "line") if e.get("stroke") in svg.PALETTE}
    assert legend == set(drawn.values())


def test_the_first_five_colours_stay_apart_for_a_red_green_colour_blind_reader():
    seen = [_deuteranope(_rgb(c)) for c in svg.PALETTE[:5]]
    close = [(svg.PALETTE[i], svg.PALETTE[j]) for i in range(5) for j in range(i)
             if sum((a - b) ** 2 for a, b in zip(seen[i], seen[j])) ** 0.5 < 0.08]
    assert not close, close


def test_stacked_segments_are_separated_and_a_ratio_heatmap_says_its_bands_are_ratios():
    root = parse(svg.bars_svg("堆叠", ["a", "b"], [[1, 2, 3], [2, 2, 2]], segments=["算", "搬", "等"]))
    assert all(r.get("stroke") == "white" for r in q(root, "rect") if r.get("data-segment"))
    for log, word in ((True, "按比例分档"), (False, "每档含下界")):
        root = parse(svg.heatmap_svg("倍数", ["r"], ["a", "b", "c"], [[1.0, 2.0, 4.0]], log=log))
        text = "".join(root.itertext())
        assert word in text and (("按比例" in text) == log)
        term = format_heatmap("倍数", ["r"], ["a", "b", "c"], [[1.0, 2.0, 4.0]], log=log, width=80)
        assert ("按比例分档" in term) == log


@pytest.mark.parametrize("cwd, argv", [("", ["lecture14/05_ablations.py", "--quick", "--svg", "figs", "--jobs=2", "--gpu", "a100"]),
                                       ("lecture14", ["05_ablations.py", "--svg=figs", "--quick", "--jobs", "2", "--gpu",
                                                      "a100"])])
def test_the_command_under_a_chart_is_the_same_from_any_directory_without_svg_and_jobs(monkeypatch, cwd, argv):
    import console
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.chdir(os.path.join(root, cwd))
    monkeypatch.setattr("sys.argv", argv)
    assert console.command_line() == "python3 lecture14/05_ablations.py --quick --gpu a100"


def test_an_odd_argument_under_a_chart_is_quoted_and_the_svg_still_parses(monkeypatch):
    import console
    monkeypatch.setattr("sys.argv", ["/elsewhere/my script.py", "a b", "x\x01<&>\x1b[31m"])
    line = console.command_line()
    assert line == "python3 'my script.py' 'a b' 'x\\x01<&>\\x1b[31m'"
    root = parse(svg.bars_svg("t", ["a"], [1.0], source=line))
    assert [t.text for t in q(root, "text") if t.get("class") == "source"] == [line]


def _bash_words(text: str) -> list[str]:
    """bash 读这段文字（可以是几行，用 " \\" 续行）得到的词：和照抄进终端时 bash 看到的一样。"""
    import subprocess
    r = subprocess.run(["bash", "-c", "set -- " + text + "\nprintf '%s\\0' \"$@\""], capture_output=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize("draw", [lambda source: svg.line_svg("t", {"a": [(0, 1.0), (50, 1.15)]}, source=source),
                                  lambda source: svg.bars_svg("t", ["寄存器/线程", "共享内存"], [640, 944], source=source),
                                  lambda source: svg.heatmap_svg("t", ["a"], ["1", "16"], [[1.0, 1.6]], source=source)])
def test_a_long_command_under_a_chart_wraps_between_arguments_and_leaves_the_canvas_alone(draw):
    """审读报过：04 --budget 50 --seeds 1 --gpu a100 带四个 --knob 的图，最下面的命令一行印到底，画布从 760 加宽到
    1,000 多像素：放进幻灯片时图缩在左半边、标题居中在整个画布上。现在命令在参数之间折开（--knob 和它的值在一行），
    除了最后一行都以 " \\" 结尾：每行都在原来的画布里，整段照抄给 bash 还是同一条命令。"""
    short = parse(draw("python3 lecture14/04_alphaevolve_tiling.py"))
    command = ("python3 lecture14/04_alphaevolve_tiling.py --budget 50 --seeds 1 --gpu a100 --knob L2_BW=1.54e+13 "
               "--knob LOAD_LATENCY_BUSY=9e-07 --knob HBM_EFFICIENCY=0.85 --knob MMA_FALLBACK=0.6 'my 启发式.py'")
    root = parse(draw(command))
    width = float(root.get("viewBox").split()[2])
    assert width == float(short.get("viewBox").split()[2])                          # 画布没有因为命令加宽
    lines = [t for t in q(root, "text") if t.get("class") == "source"]
    assert len(lines) >= 2
    for t in lines:
        assert float(t.get("x")) + svg.text_width(t.text, float(t.get("font-size"))) <= width - 10, t.text
        assert not re.search(r"--knob \\?$|^[^-]*=", t.text), t.text                # 选项和它的值不分开
    assert [t.text.endswith(" \\") for t in lines] == [True] * (len(lines) - 1) + [False]
    assert _bash_words("\n".join(t.text for t in lines)) == _bash_words(command)    # 照抄还是同一条命令
    assert float(lines[-1].get("y")) + 4 <= float(root.get("viewBox").split()[3])    # 最后一行也在画布里


@pytest.mark.parametrize("draw", [lambda source: svg.line_svg("t", {"a": [(0, 1.0), (50, 1.15)]}, source=source),
                                  lambda source: svg.bars_svg("t", ["寄存器/线程", "共享内存"], [640, 944], source=source),
                                  lambda source: svg.heatmap_svg("t", ["a"], ["1", "16"], [[1.0, 1.6]], source=source)])
def test_one_argument_longer_than_a_line_shrinks_its_line_and_leaves_the_canvas_alone(draw):
    """审读报过：06 交给它一个很长的路径（'/home/…/my heuristic.py'，引号里的一个参数就比一行宽）时，图下的命令在参数
    之间折开了，那个参数自己一行，画布却照它加宽：放进幻灯片时图缩在左半边、标题居中在整个画布上。引号里的词折开
    就不是同一条命令了：那一行的字缩小到放得下，别的行照旧，整段照抄给 bash 还是同一条命令。"""
    short = parse(draw("python3 lecture14/06_your_heuristic.py"))
    path = "'/home/student/" + "a very long directory name/" * 6 + "my 启发式.py'"
    command = f"python3 lecture14/06_your_heuristic.py {path} --evolve --quick"
    root = parse(draw(command))
    width = float(root.get("viewBox").split()[2])
    assert width == float(short.get("viewBox").split()[2])                          # 画布没有因为这个参数加宽
    lines = [t for t in q(root, "text") if t.get("class") == "source"]
    assert [t.text for t in lines] == ["python3 lecture14/06_your_heuristic.py \\", path + " \\", "--evolve --quick"]
    sizes = [float(t.get("font-size")) for t in lines]
    assert sizes[0] == sizes[2] == svg.SOURCE_SIZE and 0 < sizes[1] < svg.SOURCE_SIZE, sizes    # 只缩那一行
    for t in lines:
        assert float(t.get("x")) + svg.text_width(t.text, float(t.get("font-size"))) <= width - 10, t.text
    assert _bash_words("\n".join(t.text for t in lines)) == _bash_words(command)    # 照抄还是同一条命令


def test_scatter_points_have_the_terminal_marks_shape_so_a_grey_print_tells_the_series_apart():
    """讲义的讲义印成黑白时：散点图的几条序列以前只差颜色（全是实心圆；13 的屋顶线上四个标出来的形状分不出）。
    现在每条序列的点和终端里的记号同形：●○ 实心、空心的圆，◆◇ 菱形，▲△ 三角，■□ 方块；衬底是灰色的实心圆。
    图例里的点也一样。"""
    from layout import MARKS, series_marks
    names = [f"序列 {k}" for k in range(len(MARKS) - 1)] + ["其余的点"]
    series = {name: [(1.0 + k, 2.0 + k)] for k, name in enumerate(names)}
    root = ET.fromstring(svg.scatter_svg("t", series, background="其余的点"))
    groups = {g.get("data-name"): g for g in q(root, "g") if g.get("class") == "series"}
    marks = series_marks(names, "其余的点")
    def shape_of(e):
        """(标签, 空心, 几个角, 第一个角在不在正上方)：菱形、三角从正上方起笔，方块从左上角。"""
        d = e.get("d", "")
        top = bool(d) and d[1:].split(",")[0] == e.get("data-cx")
        return e.tag.split("}")[1], e.get("fill") == "white", len(d.split("L")), top
    want = {"●": ("circle", False, 1, False), "○": ("circle", True, 1, False), "◆": ("path", False, 4, True),
            "◇": ("path", True, 4, True), "▲": ("path", False, 3, True), "△": ("path", True, 3, True),
            "■": ("path", False, 4, False), "□": ("path", True, 4, False)}
    for name in names:
        point = next(e for e in groups[name] if e.get("data-x"))
        expect = want[marks[name][0]]                  # 衬底也是终端的记号（○）：学生报过图例说 ○、图上是实心点
        assert shape_of(point) == expect, (name, marks[name], ET.tostring(point))
    diamonds = [e for g in groups.values() for e in g if e.get("data-x") and e.tag.endswith("path")]
    assert all(float(e.get("data-cx")) > 0 and float(e.get("data-cy")) > 0 for e in diamonds)
    in_series = {id(e) for g in groups.values() for e in g.iter()}
    legend = [e for e in root.iter() if e.tag.endswith(("circle", "path")) and id(e) not in in_series]
    assert [shape_of(e) for e in legend] == [want[marks[name][0]] for name in names]


@pytest.mark.parametrize("llm", [["--llm", "https://api.example.com/v1?key=sk-SECRETSECRET123"],
                                 ["--llm=https://u:sk-SECRETSECRET123@api.example.com/v1#sk-SECRETSECRET123"]])
def test_a_secret_in_the_llm_address_does_not_go_under_a_chart(monkeypatch, llm):
    # 图最下面那行命令来自 sys.argv：--llm 地址的查询串、用户名和密码（托管 API 的密钥常放在那里）以前原样写进 SVG
    # （标准输出、标准错误、录制文件里都没有它：那里的地址都去掉了查询串）
    import console
    monkeypatch.setattr("sys.argv", ["lecture14/04_alphaevolve_tiling.py", "--quick", *llm, "--model", "m"])
    line = console.command_line()
    assert "SECRET" not in line and "api.example.com/v1" in line and "--model m" in line
