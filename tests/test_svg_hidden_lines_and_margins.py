"""SVG 的折线、散点图（svg.py）：审读时在 PNG 上看到的几处。

- 一条线整条、后半段或中间一长段被别的线盖住时，终端的图下面说一句，SVG 什么也不说：07 --budget 5 --seeds 1 的图例里
  有"OpenEvolve 种子 0"，图上一笔也看不到；05 --gpu a100 的"没有级联"在 564–628 之间钻到"完整系统"下面，像是断了。
- 只有一个点的折线（05 --budget 1 --seeds 1）画成记号，图例却画线段：图例和图对不上。
- y 刻度宽（"1.045×"）时竖着的 y 轴名贴着刻度（04 --budget 5 --seeds 1 的散点图），再宽一位就压上去。
- 图例两行时，最下面画图的命令贴着第二行图例（07、13 的屋顶线）。"""

import math
import re
import xml.etree.ElementTree as ET

import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(text):
    return ET.fromstring(text)


def notes(root):
    return [t.text for t in root.iter(NS + "text") if t.get("class") == "note"]


def sentences(root):
    """图下的说明，一句折成几行的接回一句（续行往里缩一个字）。"""
    texts = [t for t in root.iter(NS + "text") if t.get("class") == "note"]
    out = []
    for t in texts:
        if not out or float(t.get("x")) == min(float(u.get("x")) for u in texts):
            out.append(t.text)
        else:
            out[-1] += t.text
    return out


def test_a_line_wholly_under_another_is_named_under_the_svg_chart():
    same = [(0, 1.0), (1, 1.0), (4, 1.061), (5, 1.061)]
    root = parse(svg.line_svg("最好分数", {"本讲的循环 种子 0": same, "OpenEvolve 种子 0": list(same)}))
    assert notes(root) == ["（图上看不到「OpenEvolve 种子 0」：它的每个点都和「本讲的循环 种子 0」重合，被盖住了。）"]
    apart = parse(svg.line_svg("最好分数", {"a": same, "b": [(0, 1.0), (5, 1.2)]}))
    assert not any("看不到" in t for t in notes(apart))


def test_a_line_under_another_in_the_middle_is_said_to_be_covered_not_broken():
    a = [(x, 1.0) for x in range(0, 101)]
    b = [(x, 2.0 if x <= 20 or x > 80 else 1.0) for x in range(0, 101)]
    said = notes(parse(svg.line_svg("t", {"a": a, "b": b})))
    assert len(said) == 1 and said[0].startswith("（「b」在横轴 2") and "和「a」重合" in said[0] and "不是断了" in said[0]
    short = [(x, 2.0 if x <= 48 or x > 52 else 1.0) for x in range(0, 101)]      # 只有几个像素：看得出是交叉，不说
    assert notes(parse(svg.line_svg("t", {"a": a, "b": short}))) == []


def test_a_line_covered_to_its_end_says_from_where():
    full = [(i, 1 + i / 100) for i in range(100)]
    late = [(i, 1.45 - i / 100) for i in range(40)] + full[40:]
    said = notes(parse(svg.line_svg("t", {"完整系统": full, "没有级联": late})))
    assert len(said) == 1 and said[0].startswith("（「没有级联」从横轴 4") and "不是停了" in said[0], said


def test_a_covered_stretch_is_named_from_end_to_end_even_without_points_inside():
    # 05 --budget 2：从 1 到 2 整段被盖住，说的是"在横轴 1"；中间 2–8 被盖住、两头没有点在里面时什么也不说
    steps = {"完整系统": [(1, 1.016), (2, 1.053)], "小模型": [(1, 1.0), (2, 1.0)], "没有逐形状反馈": [(1, 1.0), (2, 1.059)]}
    said = notes(parse(svg.line_svg("t", steps, steps=True, y_fmt="{:.2f}×")))
    assert said == ["（「没有逐形状反馈」在横轴 1–2 和「小模型」重合，被盖住了，不是断了。）"], said
    dip = {"a": [(0, 1.0), (10, 1.0)], "b": [(0, 1.5), (2, 1.5), (2, 1.0), (8, 1.0), (8, 1.5), (10, 1.5)]}
    assert notes(parse(svg.line_svg("t", dip))) == ["（「b」在横轴 2–8 和「a」重合，被盖住了，不是断了。）"]


def test_the_notes_stay_on_the_canvas_and_the_command_below_them():
    same = [(x, 1.0) for x in range(10)]
    names = [f"一个相当长的序列名字 {k}" for k in range(4)]
    root = parse(svg.line_svg("t", {n: list(same) for n in names}, source="python3 x.py"))
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    texts = [t for t in root.iter(NS + "text") if t.get("class") == "note"]
    assert len(texts) >= 3
    for t in texts:
        assert float(t.get("x")) + svg.text_width(t.text, 12) <= width
    source = next(t for t in root.iter(NS + "text") if t.get("class") == "source")
    assert float(source.get("y")) - max(float(t.get("y")) for t in texts) >= 30


def test_a_one_point_line_has_a_mark_in_the_legend_like_on_the_chart():
    root = parse(svg.line_svg("第 1 个提议", {"完整系统": [(1, 1.016)], "小模型": [(1, 1.0)], "两点": [(0, 1), (1, 1.1)]}))
    legend_lines = [e for e in root.iter(NS + "line") if e.get("stroke") in svg.PALETTE]
    assert [e.get("stroke") for e in legend_lines] == [svg.PALETTE[2]]          # 只有两点的那条在图例里是线段
    marks = [e for e in root.iter() if e.tag in (NS + "circle", NS + "path") and e.get("data-x") is None]
    assert len(marks) == 2                                                      # 另外两条在图例里是它们的记号


def test_the_y_label_keeps_clear_of_wide_y_tick_labels():
    for ys in ([1.045, 1.075], [1.0, 1.0011], [1.25, 1.30]):
        root = parse(svg.scatter_svg("t", {"a": [(1.0, ys[0]), (2.0, ys[1])]}, y_label="测试形状上比专家快",
                                     y_fmt="{:.2f}×"))
        ticks = [t for t in root.iter(NS + "text") if t.get("class") == "tick-y"]
        left = min(float(t.get("x")) - svg.text_width(t.text, 12) for t in ticks)
        label = next(t for t in root.iter(NS + "text") if t.text == "测试形状上比专家快")
        assert "rotate(-90" in label.get("transform")
        assert float(label.get("x")) + 2 + 4 <= left, ([t.text for t in ticks], label.get("x"), left)
        plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
        assert max(float(t.get("x")) for t in ticks) < float(plot.get("data-left"))


def test_two_legend_rows_leave_room_above_the_command():
    series = {f"本讲的循环 种子 {k}": [(0, 1.0), (10, 1.0 + k / 20)] for k in range(4)}
    root = parse(svg.line_svg("t", series, source="python3 lecture14/07_openevolve.py"))
    legend = [t for t in root.iter(NS + "text") if (t.text or "").startswith("本讲的循环")]
    assert len({t.get("y") for t in legend}) == 2
    source = next(t for t in root.iter(NS + "text") if t.get("class") == "source")
    assert float(source.get("y")) - max(float(t.get("y")) for t in legend) >= 30


def _strokes(root):
    """每条画出来的折线（文档顺序，后面的画在上面）：(所属序列名或 None, 颜色, 线宽, 虚线, 各点)。颜色、线宽可以继承自
    外面的 <g>。"""
    out = []

    def walk(e, inherited, name):
        if e.tag == NS + "g":
            inherited = {**inherited, **{k: e.get(k) for k in ("stroke", "stroke-width") if e.get(k)}}
            name = e.get("data-name") if e.get("class") == "series" else name
        if e.tag == NS + "polyline" and e.get("class") != "curve":
            attr = {**inherited, **{k: e.get(k) for k in ("stroke", "stroke-width") if e.get(k)}}
            pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
            out.append((name, attr.get("stroke"), float(attr.get("stroke-width", 1)), e.get("stroke-dasharray"), pts))
        for child in e:
            walk(child, inherited, name)

    walk(root, {}, None)
    return out


def _distance(p, pts):
    """点 p 到折线 pts 的距离（像素）。"""
    best = math.inf
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        dx, dy = x1 - x0, y1 - y0
        t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((p[0] - x0) * dx + (p[1] - y0) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.hypot(p[0] - x0 - t * dx, p[1] - y0 - t * dy))
    return best


def test_a_line_the_notes_call_covered_is_under_an_opaque_stroke():
    """审读报过：05 --quick 说"「不进化」在横轴 101–160 和「小模型」重合，被盖住了"，可"小模型"是虚线，空隙里一段段露出
    绿色的"不进化"；07 --budget 5 --seeds 1 说"图上看不到「OpenEvolve 种子 0」"，它的颜色在上面那条实线的边上透出来
    （两条一样宽的线叠在一起，抗锯齿的边上两种颜色掺在一起）。说被盖住的线，沿线每一点都要在后画的一道不带虚线的笔画
    里面，而且那道笔画比它每边宽出至少半个像素。"""
    up = [(x, 1.0 + (0.05 if x >= 40 else 0)) for x in range(0, 101)]
    series = {"完整系统": [(x, 1.3) for x in range(0, 101)], "小模型": up, "不进化": list(up)}
    root = parse(svg.line_svg("t", series, steps=True))
    assert notes(root) == ["（图上看不到「不进化」：它的每个点都和「小模型」重合，被盖住了。）"], notes(root)
    strokes = _strokes(root)
    k = next(i for i, s in enumerate(strokes) if s[0] == "不进化" and s[1] != "white")
    hidden = strokes[k]
    solid = [s for s in strokes[k + 1:] if not s[3]]            # 后画的、不带虚线的笔画（白边或实线）
    for a, b in zip(hidden[4], hidden[4][1:]):
        for t in (0, 0.25, 0.5, 0.75, 1):
            p = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
            assert any(_distance(p, s[4]) + hidden[2] / 2 + 0.5 <= s[2] / 2 for s in solid), p
    twin = parse(svg.line_svg("t", {"本讲的循环 种子 0": up, "OpenEvolve 种子 0": list(up)}, steps=True))
    strokes = _strokes(twin)
    k = next(i for i, s in enumerate(strokes) if s[0] == "OpenEvolve 种子 0" and s[1] != "white")
    assert all(any(_distance(p, s[4]) + strokes[k][2] / 2 + 0.5 <= s[2] / 2 for s in strokes[k + 1:] if not s[3])
               for p in strokes[k][4])


def test_a_mark_with_a_corner_showing_is_not_called_invisible():
    """审读报过（已知的一例）：05 --budget 1 的每条"线"只有一个点，画成记号；图下说"图上看不到「没有级联」"，可 ▲ 的
    两个角从 ● 下面露出来（◇ 的角也从 ○ 下面露出来）。露出一点的不说看不到，说它叠在哪条下面、只露出一点边角。"""
    one = {"完整系统": [(1, 1.0165)], "小模型（small LLM）": [(1, 1.0)], "不进化": [(1, 1.0279)],
           "没有逐形状反馈": [(1, 1.0)], "没有级联": [(1, 1.0165)]}
    root = parse(svg.line_svg("t", one, y_fmt="{:.2f}×"))
    said = sentences(root)
    assert not any("看不到" in t for t in said), said
    assert said == ["（「没有逐形状反馈」的每个点都叠在「小模型（small LLM）」下面（中心相距不到 2 像素），只露出一点边角。）",
                    "（「没有级联」的每个点都叠在「完整系统」下面（中心相距不到 2 像素），只露出一点边角。）"], said
    # 这两个记号真的露出来了：▲、◇ 的角在画在上面的 ●、○（连描边的外半圈）外面
    groups = {g.get("data-name"): g for g in root.iter(NS + "g") if g.get("class") == "series"}
    for lower, upper in (("没有级联", "完整系统"), ("没有逐形状反馈", "小模型（small LLM）")):
        circle = next(groups[upper].iter(NS + "circle"))
        reach = float(circle.get("r")) + float(circle.get("stroke-width") or 0) / 2
        path = next(groups[lower].iter(NS + "path")).get("d")
        corners = [tuple(map(float, p.split(","))) for p in re.findall(r"[\d.]+,[\d.]+", path)]
        cx, cy = float(circle.get("cx")), float(circle.get("cy"))
        assert any(math.hypot(x - cx, y - cy) > reach + 0.5 for x, y in corners), (lower, corners, cx, cy, reach)
    apart = notes(parse(svg.line_svg("t", {"a": [(1, 1.0)], "b": [(1, 2.0)], "c": [(1, 1.5)]}, y_fmt="{:.2f}×")))
    assert not apart                                            # 分得开的记号什么也不说
    two = sentences(parse(svg.scatter_svg("t", {"甲": [(1, 1.0), (2, 2.0)], "乙": [(1, 1.0)]})))
    assert two[0].startswith("（○ 乙 的每个点都叠在 ● 甲 下面")     # ○ 的描边从 ● 外面露出一圈


def test_stacked_scatter_points_are_counted_under_the_svg_chart_like_in_the_terminal():
    """审读报过：04 --budget 1 演示 3 的散点图，5 个种子两种划分一共 10 个点，其中 4 个空心圆、2 个实心圆都在
    (1.000×, 1.000×)，图上只看得到 5 个记号（一个实心圆边上露出一圈橙色）；终端说"10 个点在图上是 5 个记号"，
    SVG 什么也没说。"""
    random_split = [(1.0, 1.0), (1.0111, 1.0074), (1.0, 1.0), (1.0165, 1.0431), (1.0585, 1.0622)]
    by_model = [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0746, 1.0482), (1.0, 1.0)]
    root = parse(svg.scatter_svg("t", {"配对随机对半分": random_split, "8B 训练、70B/8 测试": by_model}, diagonal=True,
                                 x_fmt="{:.2f}×", y_fmt="{:.2f}×"))
    said = sentences(root)
    assert said == ["（10 个点在图上是 5 个记号：有 5 个叠在别的点下面（中心相距不到 2 像素）。）"], said
    marks = [(float(e.get("cx")), float(e.get("cy"))) for e in root.iter(NS + "circle") if e.get("data-x")]
    assert len(marks) == 10 and len(set(marks)) == 5              # 真的只有 5 个不同的位置
    apart = parse(svg.scatter_svg("t", {"a": [(1.0, 1.0), (2.0, 2.0)], "b": [(1.5, 1.2)]}))
    assert notes(apart) == []


def test_a_line_that_shows_only_a_hairline_is_said_to_be_almost_covered():
    """审读报过：05 --quick 的"不进化"在 101–160 之间比"小模型"低 1.26 像素：两条线几乎叠在一起，下面那条只从上面那条
    的边上露出一丝，看着像没有这条线。离上面那条线的白边不到半个像素的说"最多露出一道不到半个像素的细边"；
    离得更远、看得出是一条线的不说。"""
    def chart(gap_px):
        probe = parse(svg.line_svg("t", {"a": [(0, 1.0), (100, 1.0)], "c": [(0, 0.0), (100, 3.5)]}))
        plot = next(g for g in probe.iter(NS + "g") if g.get("class") == "plot")
        per_px = (float(plot.get("data-y-max")) - float(plot.get("data-y-min"))) / float(plot.get("data-height"))
        low = 1.0 - gap_px * per_px
        return parse(svg.line_svg("t", {"a": [(0, 1.0), (100, 1.0)], "c": [(0, 0.0), (100, 3.5)],
                                        "b": [(0, 2.0), (40, 2.0), (40, low), (100, low)]}))
    said = sentences(chart(1.5))              # b 的线（2 像素宽）比 a 的白边（4.5 像素宽）只多出 0.25 像素
    assert said == ["（「b」从横轴 40 起和「a」重合，被盖住了（最多露出一道不到半个像素的细边），不是停了。）"], said
    assert sentences(chart(0.5)) == ["（「b」从横轴 40 起和「a」重合，被盖住了，不是停了。）"]
    assert sentences(chart(3.0)) == []        # 露出 1.75 像素：看得见


def test_the_y_equals_x_label_keeps_clear_of_the_points():
    """审读报过：04 --budget 300 --gpu a100 的散点图上一个种子的点压在斜线旁边"y = x"的"y"上（字总放在斜线 92% 处的
    下面）。字的方框（顺着斜线转过去）离每个记号的中心都至少有一个记号的半径。"""
    seeds = [(1.1414, 1.1470), (1.1466, 1.1503), (1.1476, 1.1415), (1.1519, 1.1557), (1.1418, 1.1290)]
    others = [(1.145, 1.127), (1.1448, 1.106), (1.132, 1.091), (1.14, 1.085), (1.1415, 1.0625)]
    for data in ({"配对随机对半分": seeds, "8B 训练、70B/8 测试": others},
                 {"a": [(1.0 + k / 100, 1.0 + k / 100 - 0.004) for k in range(0, 11)]}):   # 斜线下面一串点
        root = parse(svg.scatter_svg("t", data, diagonal=True, x_fmt="{:.2f}×", y_fmt="{:.2f}×"))
        label = next(t for t in root.iter(NS + "text") if t.get("class") == "diagonal-label")
        turn = re.search(r"rotate\(([-\d.]+) ([-\d.]+) ([-\d.]+)\)", label.get("transform"))
        angle, ex, ey = (float(v) for v in turn.groups())
        assert (float(label.get("x")), float(label.get("y"))) == (ex, ey) and label.get("text-anchor") == "end"
        a, w = math.radians(angle), svg.text_width(label.text, 12)
        for e in root.iter():
            if e.get("data-x") is None:
                continue
            x, y = float(e.get("cx") or e.get("data-cx")), float(e.get("cy") or e.get("data-cy"))
            u = (x - ex) * math.cos(a) + (y - ey) * math.sin(a)       # 顺着字的方向（右端是 0）
            v = -(x - ex) * math.sin(a) + (y - ey) * math.cos(a)      # 垂直于字（基线是 0，往下为正）
            assert not (-w - 5 <= u <= 5 and -12 - 5 <= v <= 3 + 5), (data.keys(), x, y, u, v)


def test_crowded_reference_labels_stay_beside_the_frame_and_one_drawn_line_is_said_to_be_one():
    """三条几乎一样高、靠近横轴的参考线：以前标签一个个往下挤，最下面那个挤到了横轴刻度"1000"的旁边，离它的线 30 像素；
    终端说"参考线……在图上是同一条线"，SVG 不说。标签上下错开、都在框的高度里，图下说哪几条画成了同一条线。"""
    root = parse(svg.line_svg("t", {"a": [(0, 1.0), (1000, 1.3)]}, y_fmt="{:.2f}×",
                              refs=[("r1 1.000×", 1.0), ("r2 1.001×", 1.001), ("r3 1.002×", 1.002)]))
    plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
    bottom = float(plot.get("data-top")) + float(plot.get("data-height")) + svg.INSET
    labels = sorted(float(t.get("y")) for t in root.iter(NS + "text") if (t.text or "").startswith("r"))
    assert len(labels) == 3 and all(b - a >= 15 for a, b in zip(labels, labels[1:])), labels
    assert labels[-1] - 4 <= bottom, (labels, bottom)                  # 基线往上 4 像素是线的高度：不低于框的底边
    ticks = [float(t.get("y")) for t in root.iter(NS + "text") if t.get("class") == "tick-x"]
    assert min(ticks) - labels[-1] >= 12                               # 和横轴的刻度隔开一行字
    assert notes(root) == ["（参考线「r3 1.002×」和「r2 1.001×」相差不到 2 像素，在图上是同一条线。）",
                           "（参考线「r2 1.001×」和「r1 1.000×」相差不到 2 像素，在图上是同一条线。）"]
    apart = parse(svg.line_svg("t", {"a": [(0, 1.0), (1000, 1.3)]}, refs=[("上限", 1.3), ("查表", 1.2)]))
    assert notes(apart) == []


def _seeds_like(n, seed=0):
    """像 04 演示 3 的散点图：一半的点叠在 (1.000×, 1.000×)（预算小时没涨），另一半散开；两条序列轮流。"""
    import random
    rng = random.Random(seed)
    pts = {"配对随机对半分": [], "8B 训练、70B/8 测试": []}
    for k in range(n):
        p = (1.0, 1.0) if k % 2 else (1 + 0.3 * rng.random(), 1 + 0.3 * rng.random())
        pts["配对随机对半分" if k % 4 < 2 else "8B 训练、70B/8 测试"].append(p)
    return pts


def test_a_big_scatter_is_checked_for_covered_marks_in_time_linear_in_its_points(monkeypatch):
    """审读量过：04 --seeds 1000 --svg 的散点图有 2000 个点。看谁叠在谁下面时每个点和后画的每个点都比一次（两百万次
    距离，点数翻倍就是四倍），每个记号又把方圆 7 像素的 961 格一个个试一遍：画这张图从几十分之一秒涨到几秒。
    现在每个点只和周围的点比、每个记号只试它盖住的格子加每行两头各一格：点数翻倍，花的也只翻倍。"""
    import types
    hypot, inside = [0], [0]
    fake_math = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
    fake_math.hypot = lambda *a: hypot.__setitem__(0, hypot[0] + 1) or math.hypot(*a)
    monkeypatch.setattr(svg, "math", fake_math)
    real_inside = svg._inside
    monkeypatch.setattr(svg, "_inside", lambda *a: inside.__setitem__(0, inside[0] + 1) or real_inside(*a))

    def cost(n):
        data = _seeds_like(n)
        centres = [(50 + 500 * (x - 1), 400 - 300 * (y - 1), name) for name, pts in data.items() for x, y in pts]
        hypot[0] = 0
        svg._stacked(data, centres, None, [], lambda name: name, False)          # 只数"叠在一起"这一步的距离
        stacked = hypot[0]
        inside[0] = 0
        svg.scatter_svg("t", data, diagonal=True, x_fmt="{:.2f}×", y_fmt="{:.2f}×")
        return stacked, inside[0]

    (s1, i1), (s2, i2) = cost(600), cost(1200)
    assert s2 < 2.5 * max(s1, 1), (s1, s2)                        # 叠在一起的：以前是 4 倍（每对点都比）
    assert i2 < 2.5 * i1 and i2 < 600 * 1200, (i1, i2)            # 每个记号以前试 961 格
    said = sentences(parse(svg.scatter_svg("t", _seeds_like(1200), x_fmt="{:.2f}×", y_fmt="{:.2f}×")))
    assert said[-1].startswith("（1200 个点在图上是 "), said          # 叠在一起的照样数出来


def test_counting_stacked_marks_by_neighbourhood_agrees_with_comparing_every_pair():
    # 上一个测试让 _stacked 只看周围的点：它找到的"上面叠着谁"和两两比较（定义）一模一样
    import random
    rng = random.Random(7)
    names = ["a", "b", "c"]
    for _ in range(200):
        centres = [(round(rng.uniform(0, 12), rng.choice([0, 1, 2])), round(rng.uniform(0, 12), rng.choice([0, 1, 2])),
                    rng.choice(names)) for _ in range(rng.randint(1, 40))]
        buried = sum(any(math.hypot(x2 - x, y2 - y) < svg.STACK for x2, y2, _ in centres[i + 1:])
                     for i, (x, y, _) in enumerate(centres))
        said = svg._stacked({n: [] for n in names}, centres, None, [], lambda n: n, False)
        counted = [t for t in said if "个点在图上是" in t]
        assert counted == ([f"（{len(centres)} 个点在图上是 {len(centres) - buried} 个记号：有 {buried} 个叠在别的点下面"
                             f"（中心相距不到 {svg.STACK} 像素）。）"] if buried else []), (centres, said)
        for name in names:
            mine = [i for i, c in enumerate(centres) if c[2] == name]
            under = bool(mine) and all(any(o != name and math.hypot(x2 - centres[i][0], y2 - centres[i][1]) < svg.STACK
                                           for x2, y2, o in centres[i + 1:]) for i in mine)
            assert any(t.startswith(f"（{name} 的每个点都叠在") for t in said) == under, (centres, said)


def test_the_casing_of_a_long_step_line_is_measured_once_per_straight_stretch(monkeypatch):
    """04、05 的台阶图每个提议一个点（--budget 100000：每条线几十万段）。白边盖住谁以前一小段一小段地量：两条叠在一起的
    线，每一小段都要量它周围 9 格左右，花的和点数成正比（05 --budget 100000 的图多花几秒）。同一个方向接着走的横线、
    竖线现在并成一段量：点数翻十倍，量的次数不变；说的话和一段一段量时一样。"""
    import types
    hypot = [0]
    fake_math = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
    fake_math.hypot = lambda *a: hypot.__setitem__(0, hypot[0] + 1) or math.hypot(*a)
    monkeypatch.setattr(svg, "math", fake_math)

    def cost(n):
        up = [(i, 1.0 if i < n // 2 else 1.05) for i in range(1, n + 1)]
        hypot[0] = 0
        root = parse(svg.line_svg("t", {"小模型": up, "不进化": list(up), "完整系统": [(i, 1.1) for i in range(1, n + 1)]},
                                  steps=True))
        return hypot[0], notes(root)

    (small, said_small), (big, said_big) = cost(2000), cost(20000)
    assert big < 2 * small, (small, big)                         # 以前是 10 倍（每一小段各量一遍）
    assert said_small == said_big == ["（图上看不到「不进化」：它的每个点都和「小模型」重合，被盖住了。）"], said_big


def _text_boxes(root):
    """每段没转过的字的 (左, 上, 右, 下)，按 svg.text_width 估宽、字号当高；外层 <g> 的 translate(0 y) 算进去。"""
    boxes = []

    def walk(e, dy):
        for c in e:
            m = re.fullmatch(r"translate\(0 ([\d.]+)\)", c.get("transform", ""))
            if c.tag == NS + "text" and c.text and "rotate" not in c.get("transform", ""):
                x, y, size = float(c.get("x")), float(c.get("y")) + dy, float(c.get("font-size"))
                w = svg.text_width(c.text, size)
                left = {"start": x, "middle": x - w / 2, "end": x - w}[c.get("text-anchor", "start")]
                boxes.append((left, y - 0.8 * size, left + w, y + 0.2 * size, c.text))
            walk(c, dy + (float(m[1]) if c.tag == NS + "g" and m else 0))
    walk(root, 0)
    return boxes


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None, derandomize=True)
@given(names=st.lists(st.text(st.sampled_from("训练测试形状的很长名字 ab（）、，7"), min_size=1, max_size=120),
                      min_size=1, max_size=5, unique=True))
def test_legend_names_of_any_length_stay_on_the_canvas_and_apart(names):
    """审读报过：序列名、横条的段名长一点（改编课程时加模型、换说法），图例一行印到底：一个名字比整行还长时伸出画布
    被裁掉；横条图的图例从不换行，第四个段名整个在画布外面。现在放不下就换行，一个名字比整行还长就折成几行。
    每段字都在画布里，图例的字互不重叠（折线、散点、堆叠横条）。"""
    names = [s for s in names if s.strip()] or ["a"]
    drawn = [svg.line_svg("t", {s: [(0, 1.0 + k / 10), (5, 1.1 + k / 10)] for k, s in enumerate(names)}, source="python3 x.py"),
             svg.scatter_svg("t", {s: [(k, 1.0 + k / 10)] for k, s in enumerate(names)}),
             svg.bars_svg("t", ["a", "b"], [[1] * len(names), [2] * len(names)], segments=names, source="python3 x.py")]
    for text in drawn:
        root = parse(text)
        width, height = (float(v) for v in root.get("viewBox").split()[2:])
        boxes = _text_boxes(root)
        for b in boxes:
            assert b[0] >= 0 and b[2] <= width and b[1] >= 0 and b[3] <= height, (b, width, height)
        legend = [b for b in boxes if any(b[4] in s for s in names)]               # 图例的字（名字或折开的一段）
        for i, a in enumerate(legend):
            for b in legend[i + 1:]:
                assert not (a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1), (a, b)
