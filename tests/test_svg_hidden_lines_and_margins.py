"""SVG 的折线、散点图（svg.py）：审读时在 PNG 上看到的几处。

- 一条线整条、后半段或中间一长段被别的线盖住时，终端的图下面说一句，SVG 什么也不说：07 --budget 5 --seeds 1 的图例里
  有"OpenEvolve 种子 0"，图上一笔也看不到；05 --gpu a100 的"没有级联"在 564–628 之间钻到"完整系统"下面，像是断了。
- 只有一个点的折线（05 --budget 1 --seeds 1）画成记号，图例却画线段：图例和图对不上。
- y 刻度宽（"1.045×"）时竖着的 y 轴名贴着刻度（04 --budget 5 --seeds 1 的散点图），再宽一位就压上去。
- 图例两行时，最下面画图的命令贴着第二行图例（07、13 的屋顶线）。"""

import xml.etree.ElementTree as ET

import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(text):
    return ET.fromstring(text)


def notes(root):
    return [t.text for t in root.iter(NS + "text") if t.get("class") == "note"]


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
