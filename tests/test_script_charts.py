"""各脚本的图画的就是旁边表格和句子里的数：从印出来的文字里读出数，和图的数据（Charts.drawn、SVG 里的点）对照。
还有 --svg DIR：每个脚本都写出能解析的 SVG，标准输出和不加 --svg 时逐字节相同，SVG 本身逐字节可复现。"""

import io
import math
import os
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout

import pytest
import svg

import sched_lab

from console import Charts
from conftest import (TESTS_GPU, ahead, base_env, load_script, prefetch, run_in_pty, run_script as cached_run,
                      run_script_fresh, session_dir)
from evolve import all_shapes
from printed import RULE, find_wide_table, tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "{http://www.w3.org/2000/svg}"


def run_quiet(fn, *args):
    buf = io.StringIO()
    with redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def table_after(text, header_start, also=""):
    """印出来的表格：从以 header_start 开头（且含 also）的表头起，到空行为止；返回数据行按两个以上空格切开的单元格。
    表头可能折成了几行（表格比 100 列宽时）：also 在拼回去的表头里找，数据从 ---- 行的下一行开始。"""
    lines = text.split("\n")
    t = next(t for t in tables(text) if t.lines[0].startswith(header_start) and also in "  ".join(t.headers))
    i = lines.index(t.lines[0])
    i = next(k for k in range(i, len(lines)) if RULE.match(lines[k]))
    rows = []
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith("（"):                  # 空行或表下的说明：表格完了
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def num(cell):
    """单元格里的第一个数（去掉千分位逗号）。"""
    return float(re.search(r"[-+]?\d[\d,]*\.?\d*", cell).group().replace(",", ""))


@pytest.fixture(scope="module")
def run04():
    m = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_charts")
    m.CHARTS.reset(None)
    out = run_quiet(m.run_lecture, 0, 300, 2, 1)
    return m, out, m.CHARTS.drawn


def test_04_heatmap_is_the_expert_column_of_demo1(run04):
    m, out, drawn = run04
    kind, _, data = drawn["04_demo1_expert_vs_optimum"]
    assert kind == "heatmap" and data["rows"] == list(m.LAYERS) and data["cols"] == [str(M) for M in m.TOKENS]
    assert len(data["values"]) * len(data["values"][0]) == len(all_shapes())          # 形状数从数据数
    cell = {(r, int(c)): v for r, vals in zip(data["rows"], data["values"]) for c, v in zip(data["cols"], vals)}
    rows = table_after(out, "形状               最优配置")
    assert len(rows) == 7
    for r in rows:                                                   # 表里的 7 行都在热力图里，数值一样
        name, M = r[0].rsplit(" M=", 1)
        assert f"{cell[name, int(M)]:.2f}×" == r[-1]
    worst = max(cell, key=cell.get)                                  # 观察 3 说的"最差的是……"就是图里最大的格子
    assert f"最差的是 {worst[0]} M={worst[1]}（{cell[worst]:.2f}×）" in out
    # 图下面那句：几格一样大时说有几格、印出数值的是哪一格（助教报过：加了和 70B/8 qkv 一样的投影，这里写死了只有一格）
    from layout import extreme_note
    ties = sum(f"{v:.2f}" == f"{cell[worst]:.2f}" for v in cell.values())     # 印出来一样的格子
    said = extreme_note("最大", f"{cell[worst]:.2f}", f"{worst[0]}，M = {worst[1]}", ties, "印出数值")
    assert "".join(said.split()) in "".join(out.split()), said


def test_04_best_score_curve_is_the_improvement_table(run04):
    m, out, drawn = run04
    kind, _, data = drawn["04_demo2_best_score"]
    (pts,) = data["series"].values()
    assert [x for x, _ in pts] == list(range(301))
    curve = dict(pts)
    rows = table_after(out, "第几个提议")
    shown = [r for r in rows if r[0] != "…"]
    assert len(shown) >= 5
    for r in shown:                                                   # 每次刷新：曲线在那一步到了表里的分数
        k, printed = int(r[0]), r[1].strip().rstrip("×")
        digits = len(printed.split(".")[1])                           # 只差一点的两次刷新多印几位（console.apart_digits）
        assert f"{curve[k]:.{digits}f}" == printed, (k, curve[k], printed)
        assert k == 0 or curve[k - 1] < curve[k]                      # 而且正是在那一步涨上去的
    best = re.search(r"最好的程序：训练形状 ([\d.]+)×", out).group(1)
    assert f"{pts[-1][1]:.3f}" == best
    base = {r[0]: num(r[1]) for r in table_after(out, "方法 ")}       # 演示 1 的基线表：训练形状一列
    refs = dict((label.split()[0], y) for label, y in data["refs"])
    assert f"{refs['逐形状最优']:.3f}" == f"{base['逐形状最优（每个形状都穷举）']:.3f}"
    pmt = next(v for k, v in base.items() if k.startswith("按 M 查表"))
    assert f"{refs['按']:.3f}" == f"{pmt:.3f}"
    assert all(y <= refs["逐形状最优"] + 1e-12 for _, y in pts)       # 训练形状上永远到不了逐形状最优之上


def test_04_train_test_scatter_is_demo3(run04):
    m, out, drawn = run04
    kind, _, data = drawn["04_demo3_train_vs_test"]
    assert kind == "scatter" and list(data["series"]) == list(m.SPLITS.values())
    rows = table_after(out, "划分    ")
    evolved = [r for r in rows if "进化" in " ".join(r)]
    assert len(evolved) == 2
    for r, pts in zip(evolved, data["series"].values()):
        assert len(pts) == 2                                          # 每个种子一点
        cells = [c for c in r if "×" in c]
        for cell, vals in zip(cells, zip(*pts)):                      # 训练一列、测试一列：中位数（最小–最大）
            lo, hi = min(vals), max(vals)
            med = sorted(vals)[len(vals) // 2] if len(vals) % 2 else (sorted(vals)[0] + sorted(vals)[1]) / 2
            assert cell == f"{med:.3f}× ({lo:.3f}–{hi:.3f})"


def test_05_curves_are_the_checkpoint_columns():
    m = load_script("lecture14/05_ablations.py", "ablations_05_charts")
    m.CHARTS.reset(None)
    out = run_quiet(m.run_ablations, 120, 2, 1)
    kind, _, data = m.CHARTS.drawn["05_demo1_best_score_by_variant"]
    assert kind == "line" and list(data["series"]) == [label for label, _ in m.VARIANTS.values()]
    rows = {r[0]: r for r in table_after(out, "变体", "训练形状")}
    for label, pts in data["series"].items():
        curve = dict(pts)
        assert sorted(curve) == list(range(1, 121))
        row = rows[label]
        assert f"{curve[100]:.3f}×" == row[4]                         # "第 100 个提议时"一列：同一个中位数
        assert f"{curve[120]:.3f}" == f"{num(row[1]):.3f}"            # 曲线的终点就是训练形状的中位数


def test_lecture13_bars_and_roofline_are_demo1_tables():
    m = load_script("lecture13/01_timing_model.py", "timing_13_charts")
    m.CHARTS.reset(None)
    out = run_quiet(m.demo1_breakdown)
    kind, _, data = m.CHARTS.drawn["13_demo1_time_breakdown"]
    assert kind == "bars" and len(data["labels"]) == 12
    lines = out.split("\n")
    for label, parts in zip(data["labels"], data["values"]):
        shape, who = label.rsplit(" ", 1)
        i = next(k for k, line in enumerate(lines) if line.startswith(shape + "（"))
        t = tables("\n".join(lines[i:]))[0]                          # 比 100 列宽时分段印：按表头拼回一张读
        row = next(r for r in t.rows if r[0].startswith(who + " "))
        for v, name in zip(parts, ("算 µs", "搬 µs", "等 µs", "显存 µs")):
            if name == "搬 µs":                                     # 判瓶颈的"搬"：搬和 L2 总里大的那个
                assert m.num(v) == max(row[t.col(name)], row[t.col("L2 总 µs")], key=lambda x: float(x.replace(",", "")))
            else:
                assert m.num(v) == row[t.col(name)]
    kind, _, data = m.CHARTS.drawn["13_demo1_roofline"]
    assert kind == "scatter"
    *named, rest = data["series"].values()                          # 上表的 4 个形状各是一条序列，图例里有名字
    assert list(data["series"]) == [m.label(*s) for s in m.DEMO1_SHAPES] + [f"其余 {len(all_shapes()) - 4} 个形状"]
    first = [p for pts in named for p in pts]
    assert len(first) == 4 and len(first) + len(rest) == len(all_shapes())
    table = table_after(out, "形状               N×K")
    for (x, y), r in zip(first, table):                              # 4 个形状：算术强度一样；TFLOPS 就是"最优"那行
        assert f"{x:,.1f}" == r[4]
        i = next(k for k, line in enumerate(lines) if line.startswith(r[0] + "（"))
        best = next(re.split(r"\s{2,}", line.strip()) for line in lines[i:] if line.startswith("最优 "))
        assert m.tflops(y) == best[2]                                  # 印法和表一样（不到 1 时两位有效数字）
    (roof_label, roof), = data["curves"]
    peak, bw = sched_lab.PEAK_FLOPS / 1e12, sched_lab.HBM_BW / 1e12          # H100：989.4 TFLOPS、3.35 TB/s
    assert max(y for _, y in roof) == pytest.approx(peak) and all(y <= peak * 1.0001 for _, y in first + rest)
    ridge = roof[1][0]
    assert all(y <= x * bw + 1e-9 for x, y in first + rest if x < ridge)   # 屋顶之下


def test_lecture10_bars_are_the_rejection_table():
    m = load_script("lecture10/01_config_space.py", "config_10_charts")
    m.CHARTS.reset(None)
    out = run_quiet(m.demo2_rejections, 6400)
    kind, _, data = m.CHARTS.drawn["10_rejections_by_resource"]
    rows = {r[0]: r for r in table_after(out, "资源 ")}
    assert data["labels"] == [k for k in rows if k != "至少超一种"]
    for label, v in zip(data["labels"], data["values"]):
        assert int(num(rows[label][-2])) == v


# ---------------------------------------------------------------- --svg DIR

SCRIPTS = [("lecture10/01_config_space.py", [], ["10_rejections_by_resource"]),
           ("lecture13/01_timing_model.py", [], ["13_demo1_roofline", "13_demo1_time_breakdown"]),
           ("lecture14/04_alphaevolve_tiling.py", ["--quick", "--jobs", "1"],
            ["04_demo1_expert_vs_optimum", "04_demo2_best_score", "04_demo3_train_vs_test"]),
           ("lecture14/05_ablations.py", ["--quick", "--jobs", "1"], ["05_demo1_best_score_by_variant"])]


def run_script(path, args):
    """标准输出的字节（不写 SVG 的运行：conftest 的缓存，同样的命令整个测试会话只跑一次，别的测试文件也共用）。"""
    r = cached_run(path, *args, env=_plain_env(), text=False, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def _plain_env():
    env = base_env()
    env.pop("NO_COLOR", None)
    return env


def svg_runs(path, args, times=1):
    """一个 @ahead 的函数：脚本带 --svg 跑 times 次（每次写到一个新的临时目录），返回
    [(标准输出的字节, {文件名: SVG 的字节}), ...]。写 SVG 的运行每次都是一次新的运行（要比两次独立运行写出的字节）；
    后台先跑好（PREFETCH）。"""
    @ahead
    def runs():
        out = []
        for _ in range(times):
            d = os.path.join(session_dir("svg"), "charts")
            r = run_script_fresh(path, *args, "--svg", d, env=_plain_env(), text=False, timeout=120)
            assert r.returncode == 0, r.stderr.decode()
            out.append((r.stdout, {session_name(n): open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}))
        return out
    return runs


def session_name(name: str) -> str:
    """TESTS_GPU=a100 时脚本（环境变量 MINI_ALPHAEVOLVE_GPU）写的是 04_demo2_best_score-a100.svg：去掉这个会话的 GPU
    后缀，测试照默认的名字找（后缀本身由 test_a_chart_from_another_gpu_says_so_at_its_foot 检查；助教报过
    TESTS_GPU=l40s 时这里的测试个个 KeyError）。"""
    suffix = f"-{TESTS_GPU}.svg"
    return name[:-len(suffix)] + ".svg" if TESTS_GPU != "h100" and name.endswith(suffix) else name


SVG = {path: svg_runs(path, args, times=2) for path, args, _ in SCRIPTS}
TICKS = svg_runs("lecture14/04_alphaevolve_tiling.py", ["--budget", "1", "--seeds", "1", "--jobs", "1"])
POINTS = svg_runs("lecture14/04_alphaevolve_tiling.py", ["--quick", "--jobs", "1"])


def svg_root(data: bytes):
    return ET.fromstring(data)


@pytest.mark.parametrize("path,args,names", SCRIPTS)
def test_svg_option_writes_every_chart(path, args, names):
    plain = run_script(path, args)
    (with_svg, files), (_, again) = SVG[path]()
    assert with_svg == plain                                          # --svg 不改标准输出
    assert "\033[" not in plain.decode()                              # 重定向：不上颜色
    assert sorted(files) == sorted(n + ".svg" for n in names)
    for n in names:
        root = svg_root(files[f"{n}.svg"])
        assert root.tag == NS + "svg"
        title = next(root.iter(NS + "title")).text
        assert title and title.split("（")[0][:6] in plain.decode()   # 终端里印的是同一张图
        assert not any("上表" in (t.text or "") for t in root.iter(NS + "text")) and "上表" not in title  # 幻灯片上没有"上表"
    assert again == files                                             # 另一次独立的运行：同样的参数，同样的字节
    command = " ".join(["python3", path, *(a for a in args if a not in ("--jobs", "1"))])
    for n in names:                                                   # 图的最下面写着画它的命令（没有 --svg、--jobs）
        assert [t.text for t in svg_root(files[f"{n}.svg"]).iter(NS + "text") if t.get("class") == "source"] == [command]


@pytest.mark.parametrize("path", list(SVG))
def test_no_svg_text_runs_past_the_canvas(path):
    # 审读报过：13 的屋顶线标签"屋顶（峰值 989.4 TFLOPS）"从 612 像素起、画布 760 宽，右括号被裁掉。按 svg.text_width
    # 估计每段字的宽度（中文一个字号、西文 0.6 个字号），没有哪段字伸出画布（旋转过的不算：y 轴名、y = x）
    (_, files), _ = SVG[path]()
    for name, data in files.items():
        root = svg_root(data)
        width = float(root.get("viewBox").split()[2])
        for t in root.iter(NS + "text"):
            if "transform" in t.attrib or not t.text:
                continue
            x, w = float(t.get("x")), svg.text_width(t.text, float(t.get("font-size")))
            left, right = {"start": (x, x + w), "middle": (x - w / 2, x + w / 2), "end": (x - w, x)}[t.get("text-anchor")]
            assert left >= 0 and right <= width, (name, t.text, left, right, width)


def test_13_roof_reaches_the_right_end_of_the_log_axis():
    # 审读时报过：屋顶停在最大的那个点（约 2,500 FLOP/B），对数轴却画到 10,000，右边四分之一像是屋顶断了
    (_, files), _ = SVG["lecture13/01_timing_model.py"]()
    root = svg_root(files["13_demo1_roofline.svg"])
    plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
    roof = next(e for e in root.iter(NS + "polyline") if e.get("class") == "curve")
    last_x = float(roof.get("points").split()[-1].split(",")[0])
    right = max(float(e.get("x2")) for e in plot.iter(NS + "line") if e.get("x1") == e.get("x2"))   # 最右边的竖网格线
    assert plot.get("data-log-x") == "1" and float(plot.get("data-x-max")).is_integer()     # 轴到整十倍（log10）
    assert abs(last_x - right) < 1.0, (last_x, right)


A100_SVG = svg_runs("lecture10/01_config_space.py", ["--gpu", "a100"])


@pytest.mark.skipif(TESTS_GPU != "h100", reason=f"比的是默认 GPU（H100）的图和 --gpu a100 的图；TESTS_GPU={TESTS_GPU} 时"
                                                 "这个会话里没有默认 GPU 的运行")
def test_a_chart_from_another_gpu_says_so_at_its_foot():
    # 审读时报过：--gpu a100 写出的 SVG 和默认运行的一模一样地没有说是哪块 GPU，放进幻灯片就分不出来
    (_, files), = A100_SVG()
    (_, default), _ = SVG["lecture10/01_config_space.py"]()
    # 文件名也带上 GPU（审读报过：写进同一个目录时，A100 的图悄悄换掉了 H100 的同名图）
    assert set(files) == {n.replace(".svg", "-a100.svg") for n in default}, (set(files), set(default))
    foot = [t.text for t in svg_root(files["10_rejections_by_resource-a100.svg"]).iter(NS + "text")
            if t.get("class") == "source"]
    assert foot == ["python3 lecture10/01_config_space.py --gpu a100"]
    assert files["10_rejections_by_resource-a100.svg"] != default["10_rejections_by_resource.svg"]


def test_04_one_proposal_axis_has_integer_ticks():
    (out, files), = TICKS()
    out = out.decode()
    lines = out.split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "第几个提议")
    assert all(re.fullmatch(r"\d+", s) for s in lines[i - 1].split())            # 终端：第几个提议只有整数
    root = svg_root(files["04_demo2_best_score.svg"])
    plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
    xt = [t.text for t in plot.iter(NS + "text") if t.get("class") == "tick-x"]
    assert xt and all(re.fullmatch(r"\d+", s) for s in xt), xt


def test_04_svg_points_are_the_printed_seeds():
    (out, files), = POINTS()
    out = out.decode()
    root = svg_root(files["04_demo3_train_vs_test.svg"])
    t = find_wide_table(out, "划分", "训练形状", "测试形状")            # 名字长时（加了模型）表分段印：拼回一张读
    rows = [[r[t.col("训练形状")], r[t.col("测试形状")]] for r in t.rows if "进化" in " ".join(r)]
    groups = {g.get("data-name"): g for g in root.iter(NS + "g") if g.get("class") == "series"}
    from evolve.problem import split_names
    for r, name in zip(rows, split_names().values()):                 # 划分的名字从形状数据来（加了模型也对）
        pts = [(float(c.get("data-x")), float(c.get("data-y"))) for c in groups[name].iter(NS + "circle")]
        xs, ys = zip(*pts)
        cells = [c for c in r if "×" in c]
        assert f"({min(xs):.3f}–{max(xs):.3f})" in cells[0] and f"({min(ys):.3f}–{max(ys):.3f})" in cells[1]
    plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
    f = {k[5:]: float(v) for k, v in plot.attrib.items() if k.startswith("data-")}
    for c in root.iter(NS + "circle"):                                # 像素位置换算回去就是数据
        if c.get("data-x"):
            x = f["x-min"] + (float(c.get("cx")) - f["left"]) / f["width"] * (f["x-max"] - f["x-min"])
            assert math.isclose(x, float(c.get("data-x")), abs_tol=(f["x-max"] - f["x-min"]) / f["width"] * 0.01)


def test_bad_svg_dir_is_one_sentence(tmp_path):
    afile = tmp_path / "f"
    afile.write_text("x")
    r = run_script_fresh(os.path.join(ROOT, "lecture10/01_config_space.py"), "--svg", str(afile), timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "是一个文件" in r.stderr
    assert len(r.stderr.strip().split("\n")) == 1


def test_an_svg_dir_under_a_file_is_said_in_the_students_words(tmp_path):
    """建不了目录的原因用中文说（以前是系统的英文原话 "Not a directory"）。"""
    afile = tmp_path / "f"
    afile.write_text("x")
    r = cached_run(os.path.join(ROOT, "lecture10/01_config_space.py"), "--svg", str(afile / "figs"), timeout=60)
    assert r.returncode == 2 and "路径里有一段不是目录" in r.stderr and "Not a directory" not in r.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="要一个已经有、却写不进文件的目录：Linux 的 /proc")
@pytest.mark.parametrize("script", ["lecture10/01_config_space.py", "lecture14/04_alphaevolve_tiling.py"])
def test_an_existing_svg_dir_that_cannot_be_written_is_one_sentence_before_the_run(script):
    """学生报过：--svg /usr（普通用户）、--svg /proc 先把演示算完，写第一张图时一段 PermissionError 的 traceback。
    现在开跑之前就试着在那里写一个文件：写不进去就一句话、退出码 2。"""
    r = run_script_fresh(os.path.join(ROOT, script), "--quick", "--svg", "/proc", timeout=60) if "04" in script else \
        run_script_fresh(os.path.join(ROOT, script), "--svg", "/proc", timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == "", r.stderr[-500:]
    assert "--svg 的目录 /proc 写不进去（那里不让新建文件）；换一个能写的目录" in r.stderr


def test_charts_that_cannot_be_written_mid_run_are_one_sentence_and_the_run_goes_on(tmp_path, capsys):
    # 跑到一半目录没了、原地换成了一个同名的文件：这张图和以后的图不写，终端里照常画，最后在标准错误上说一句
    where = tmp_path / "figs"
    charts = Charts(str(where), show=False)
    charts.line("a", "a", {"x": [(0, 1.0), (1, 2.0)]})
    os.remove(where / "a.svg")
    where.rmdir()
    where.write_text("not a directory")
    charts.line("b", "b", {"x": [(0, 1.0), (1, 2.0)]})
    charts.line("c", "c", {"x": [(0, 1.0), (1, 2.0)]})
    assert list(charts.drawn) == ["a", "b", "c"] and len(charts.files) == 1
    charts.report()
    err = capsys.readouterr().err
    assert "b.svg 时出错（那里有一个同名的文件）：从那张图起不再写 SVG，这次运行照常跑完" in "".join(err.split("\n")), err


def test_an_empty_svg_dir_is_one_sentence_that_says_so():
    """学生报过：--svg '' 说的是"--svg 的目录  建不了"（名字是空的，两个空格）。"""
    r = run_script_fresh(os.path.join(ROOT, "lecture10/01_config_space.py"), "--svg", "", timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "收到的是空的" in r.stderr and "  " not in r.stderr
    assert len(r.stderr.strip().split("\n")) == 1


def test_the_svg_report_on_standard_error_fits_the_terminal(tmp_path):
    """学生报过："写了 3 个 SVG 文件到 figs：…" 在 80 列的终端里有 110 列：它和别的报错、进度一样按终端宽度折行。"""
    from conftest import run_in_pty
    from console import display_width
    env = {k: v for k, v in os.environ.items() if k != "MINI_ALPHAEVOLVE_GPU"}   # 讲义的 H100（TESTS_GPU=a100 时命令多了 --gpu）
    p = run_in_pty(["lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "1", "--svg", str(tmp_path)],
                   80, {"NO_COLOR": "1"}, timeout=120, stderr_too=True, env=env)
    assert p.returncode == 0 and "写了 3 个 SVG 文件" in p.stdout
    assert max(map(display_width, p.stdout.split("\n"))) <= 80


def test_charts_add_argument_and_dir(tmp_path):
    import argparse
    ap = argparse.ArgumentParser()
    Charts.add_argument(ap)
    assert ap.parse_args([]).svg is None
    path = str(tmp_path / "new" / "dir")
    assert Charts.check_dir(ap, path) == path and os.path.isdir(path)


def pty_text(args, cols, env_extra):
    """在一个 cols 列宽的伪终端里运行脚本（测试会话开始时的环境去掉 NO_COLOR、COLUMNS，再加 env_extra），
    返回标准输出（就是终端）。"""
    p = run_in_pty(args, cols, env_extra, unset=("NO_COLOR", "COLUMNS", "LINES"), env=base_env())
    assert p.returncode == 0, p.stderr
    return p.stdout


def terminal_runs(cols):
    """@ahead：lecture13/01 在 cols 列宽的伪终端里跑两次（上色的、NO_COLOR 的）；后台先跑好（PREFETCH）。"""
    script = os.path.join(ROOT, "lecture13/01_timing_model.py")
    return ahead(lambda: (pty_text([script], cols, {}), pty_text([script], cols, {"NO_COLOR": "1"})))


TERMINAL = {cols: terminal_runs(cols) for cols in (80, 120)}


@pytest.mark.parametrize("cols", sorted(TERMINAL))
def test_charts_follow_a_real_terminal(cols):
    from console import display_width
    colored, plain = TERMINAL[cols]()
    assert "\033[" in colored and "\033[" not in plain                # 终端里上色；NO_COLOR 关掉
    assert re.sub(r"\033\[[0-9;]*m", "", colored) == plain            # 颜色之外一模一样
    lines = plain.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("屋顶线："))
    chart = lines[start:lines.index("", start)]
    assert len(chart) > 15
    assert all(display_width(line) <= min(cols, 100) for line in chart)   # 跟着终端宽度，最多 100 列
    assert max(display_width(line) for line in chart) > min(cols, 100) - 30  # 而且用上了这个宽度


NUMBERED = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d in
                  (os.path.join(ROOT, x) for x in os.listdir(ROOT) if x.startswith("lecture"))
                  for f in os.listdir(d) if re.match(r"\d\d_.*\.py$", f))


# conftest：收集完测试后在后台先跑（不写 SVG 的运行、每个编号脚本的 --help）
PREFETCH = ([((path, *args), dict(env=_plain_env())) for path, args, _ in SCRIPTS] + [(p, "--help") for p in NUMBERED]
            + list(SVG.values()) + [TICKS, POINTS, A100_SVG] + list(TERMINAL.values()))


@pytest.mark.parametrize("path", NUMBERED)
def test_every_numbered_script_takes_svg(path):
    prefetch(*((p, "--help") for p in NUMBERED))                      # 同时跑；和 test_arguments 等共用（conftest）
    r = cached_run(path, "--help", timeout=60)
    assert r.returncode == 0 and "--svg DIR" in r.stdout


def test_script_without_charts_says_it_wrote_nothing(tmp_path):
    r = run_script_fresh(os.path.join(ROOT, "lecture14/01_heuristic_as_code.py"), "--svg", str(tmp_path), timeout=60)
    assert r.returncode == 0 and os.listdir(tmp_path) == [] and "没有画图" in r.stderr


@pytest.mark.parametrize("path", ["lecture14/01_heuristic_as_code.py", "lecture14/02_llm_proposal.py",
                                  "lecture14/03_cascade_and_database.py"])
def test_a_script_without_charts_leaves_no_empty_directory_and_its_help_says_it_draws_none(tmp_path, path):
    # 审读时报过：01、02、03 给了 --svg 会建一个空目录，--help 还说"每张图另存一个 SVG 文件"
    new = tmp_path / "figs" / "lecture"                                   # 两层都是新建的（审读报过：上层留下了）
    small = ["--budget", "30", "--seeds", "1"] if "03" in path else []
    r = run_script_fresh(os.path.join(ROOT, path), "--svg", str(new), *small, timeout=120)
    assert r.returncode == 0 and "没有画图" in r.stderr and not (tmp_path / "figs").exists()
    help_text = " ".join(cached_run(path, "--help", timeout=60).stdout.split())
    assert "这个脚本不画图" in help_text and "每张图另存" not in help_text


def test_06_heatmap_is_the_demo2_table():
    m = load_script("lecture14/06_your_heuristic.py", "yours_06_charts")
    from evolve import TimeTable
    m.CHARTS.reset(None)
    out = run_quiet(m.demo2_per_shape, m.EXPERT, TimeTable())
    kind, _, data = m.CHARTS.drawn["06_demo2_yours_vs_optimum"]
    rows = {r[0]: r[1:] for r in table_after(out, "投影 \\ M")}
    assert data["rows"] == list(rows) and len(data["cols"]) == 11
    for name, vals in zip(data["rows"], data["values"]):
        assert [f"{v:.2f}" for v in vals] == [c.rstrip("*") for c in rows[name]]   # 每一格都是表里那个数


def test_06_svg_heatmap_marks_the_test_shapes_like_the_table(tmp_path):
    # 以前 SVG 的格子没有 *，说明文字却说"标着'测试形状 *'"：幻灯片上看不出哪些是测试形状
    m = load_script("lecture14/06_your_heuristic.py", "yours_06_svg_marks")
    from evolve import TimeTable
    m.CHARTS.reset(str(tmp_path))
    out = run_quiet(m.demo2_per_shape, m.EXPERT, TimeTable())
    rows = {r[0]: r[1:] for r in table_after(out, "投影 \\ M")}
    root = svg_root((tmp_path / "06_demo2_yours_vs_optimum.svg").read_bytes())
    shown = {(e.get("data-row"), e.get("data-col")): e for e in root.iter(NS + "rect") if e.get("data-value")}
    labels = [e.text for e in root.iter(NS + "text")]
    cols = m.CHARTS.drawn["06_demo2_yours_vs_optimum"][2]["cols"]
    starred = sum(c.endswith("*") for r in rows.values() for c in r)
    assert 0 < starred < len(shown) == sum(map(len, rows.values()))
    assert sum(t.endswith("*") for t in labels if t and t[0].isdigit()) == starred
    assert [t for t in labels if t.startswith("带 * 的是")] == ["带 * 的是配对随机对半分的测试形状。"]
    for name, cells in rows.items():
        for col, cell in zip(cols, cells):
            assert (name, col) in shown
    assert sorted(t for t in labels if t and t[0].isdigit() and t.endswith("*")) == sorted(
        c for r in rows.values() for c in r if c.endswith("*"))


def test_13_time_breakdown_bars_show_the_named_bottleneck_as_the_longest_segment():
    # 学生报过："8B gate_up M=128 专家 … 96.6 µs，瓶颈 搬"，可图上"搬"比"显存"短：瓶颈来自没画出来的 L2 总量。
    # 现在"搬"那一段就是判瓶颈用的那个数（表里的瓶颈就是最长的一段）；标题里总时间是最长一段的几倍，按表里的数算得出
    m = load_script("lecture13/01_timing_model.py", "timing_13_bottleneck")
    m.CHARTS.reset(None)
    lines = run_quiet(m.demo1_breakdown).split("\n")
    _, title, data = m.CHARTS.drawn["13_demo1_time_breakdown"]
    ratios = []
    for label, parts in zip(data["labels"], data["values"]):
        shape, who = label.rsplit(" ", 1)
        i = next(k for k, line in enumerate(lines) if line.startswith(shape + "（"))
        t = tables("\n".join(lines[i:]))[0]
        row = next(r for r in t.rows if r[0].startswith(who + " "))
        bound, total = row[t.col("瓶颈")], float(row[t.col("时间 µs")].replace(",", ""))
        if bound != "屋顶线":
            assert ("算", "搬", "等", "显存")[parts.index(max(parts))] == bound, (label, parts, bound)
        ratios.append((total - sched_lab.LAUNCH_OVERHEAD * 1e6) / max(parts))   # 启动开销不在四项里（审读报过：
    assert (f"总时间去掉 {sched_lab.LAUNCH_OVERHEAD * 1e6:g} µs 启动开销是最长一段的 "    # 调大它，"重叠"成了 21 倍）
            f"{min(ratios):.2f}–{max(ratios):.2f} 倍）") in title, (title, ratios)
    assert max(ratios) < 4                                                  # 四项互相重叠：不会超过四项之和


def test_readme_lists_every_svg_the_scripts_draw():
    """学生报过：07 --svg 写了 07_best_score.svg，README 的"图和 SVG"表里没有它。每个脚本画的每张图（CHARTS 的第一个
    参数）都在 README 里有名字。"""
    import glob
    import re
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    drawn = set()
    for path in glob.glob(os.path.join(root, "lecture*", "[0-9][0-9]_*.py")):
        with open(path, encoding="utf-8") as f:
            drawn |= set(re.findall(r'CHARTS\.[a-z_]+\(\s*f?"([0-9]{2}_[a-z0-9_]+)"', f.read()))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert len(drawn) >= 9 and not [d for d in sorted(drawn) if f"`{d}.svg`" not in readme], drawn


@pytest.mark.h100_only                      # README 印的是 H100 上默认运行的图
def test_the_readme_chart_is_what_the_default_04_run_prints():
    """README 的"图和 SVG"印了一张 04 演示 2 的图（"默认参数的一次运行"）：和默认运行印的那张逐字相同。图的刻度
    改成带千分位（1,000）以后，README 里还是旧的 1000（同一屏上的表格印 1,000 个程序）。"""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    shown = readme.split("04 演示 2 的图印出来是这样", 1)[1].split("```\n", 2)[1].rstrip("\n")
    r = cached_run("lecture14/04_alphaevolve_tiling.py", timeout=180)
    assert r.returncode == 0, r.stderr
    title = shown.split("\n", 1)[0]
    printed = r.stdout.split("\n" + title + "\n", 1)[1]
    printed = title + "\n" + printed[:printed.index("\n图例：")] + "\n" + printed[printed.index("图例："):].split("\n")[0]
    # 助教报过：加了一个模型（或一种修改）以后这里只是两张图的逐字 diff，README 的"改编这门课"也没说这张图要换
    assert shown == printed, ("README 的\"图和 SVG\"里那张 04 演示 2 的图不是这次默认运行印的：改了形状、MockLLM、专家"
                              "或模型，就把 README 里那段换成 python3 lecture14/04_alphaevolve_tiling.py 印的那张（从标题到"
                              "\"图例：\"那一行）")


def _legend(stdout: str, title_start: str) -> str:
    """印出来的热力图（标题以 title_start 开头）下面那行刻度。"""
    after = stdout.split(title_start, 1)[1]
    return next(line for line in after.splitlines() if line.startswith("刻度（"))


@pytest.mark.parametrize("body, same", [
    ("    if M <= 16:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
     "    if M <= 128:\n        return Config(BM=64, BN=64, BK=256, warps=4, stages=3, group=8)\n"
     "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n", True),        # README 练习的那段
    ("    return Config(BM=16, BN=32, BK=32, warps=2, stages=4, group=1)\n", False)])      # 大 M 上慢得多
def test_06_heatmap_keeps_the_experts_scale_unless_a_shape_is_slower(tmp_path, table, body, same):
    """学生报过：04 专家的热力图刻度是 "░ 1.28–1.63"，06 里他的是 "▒ 1.31–1.50"——刻度跟着每次的最大值走，prefill 那几格
    数一样（1.34–1.37），在他的图里却深了一档，像是他改坏了。现在 06 用专家那张的刻度（同一格的深浅可以比），
    他的形状比专家最慢的还慢时才放宽，标题说不能逐格比。"""
    path = tmp_path / "mine.py"
    path.write_text("# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n" + body + "# EVOLVE-BLOCK-END\n", encoding="utf-8")
    theirs = _legend(cached_run("lecture14/04_alphaevolve_tiling.py", timeout=120).stdout, "专家比逐形状最优慢几倍：")
    r = cached_run("lecture14/06_your_heuristic.py", str(path), timeout=120)
    if r.returncode == 1 and "不能启动" in r.stderr:     # 助教报过：README 那段的 BK=256 在 A100 上启动不了
        pytest.skip(f"这段程序在这块 GPU 上启动不了，没有图可比：{r.stderr.strip()[:200]}")
    assert r.returncode == 0, r.stderr
    # 刻度一样还是放宽，从数据定（参数里的 same 是 H100 上的情形）：这段程序最慢的形状比专家最慢的还慢时才放宽
    from evolve import EXPERT, all_shapes, choose, parse
    mine = parse(path.read_text(encoding="utf-8"))
    slow = lambda p: [table.time(choose(p, s), s) / table.oracle(s)[1] for s in all_shapes()]   # noqa: E731
    same = max(slow(mine)) <= max(slow(EXPERT)) and min(slow(mine)) >= min(slow(EXPERT))
    title = "".join(r.stdout.split("你的配置比逐形状最优慢几倍：全部", 1)[1].split("\n投影")[0].split())
    mine = _legend(r.stdout, "你的配置比逐形状最优慢几倍：全部")
    assert (mine == theirs) == same, (mine, theirs)
    assert ("刻度和04演示1专家的那张一样，同一格的深浅可以比" in title) == same, title
    assert ("刻度放宽了：深浅不能和04演示1那张逐格比" in title) == (not same), title
    if not same:                                                      # 放宽：下界一样（1.00），上界更大
        lo = lambda s: float(re.search(r"· ([\d.]+)–", s)[1])       # noqa: E731
        hi = lambda s: float(re.search(r"–([\d.]+)$", s)[1])         # noqa: E731
        assert lo(mine) == lo(theirs) and hi(mine) > hi(theirs)


def test_a_heatmap_scale_must_hold_every_value():
    from layout import heat_levels
    assert heat_levels([[1.0, 2.0]], span=(0.5, 4.0))[:2] == (0.5, 4.0)
    with pytest.raises(ValueError, match="没包住"):
        heat_levels([[1.0, 5.0]], span=(1.0, 4.0))


def test_the_lecture10_chart_says_smem_does_not_change_it():
    """学生报过：lecture10/01 --smem 166912 --svg 的图标题是"6400 个组合里 2656 个启动不了"——H100 的数，图上没说
    --smem 不改它。现在给了 --smem 时标题说这张图按哪块 GPU 的上限数；不给时照旧。"""
    from kernel_lab import GPU, MAX_SMEM_PER_BLOCK
    said = f"按{GPU.short}的上限（{MAX_SMEM_PER_BLOCK:,}B共享内存）数的，--smem不改这张图"
    given = cached_run("lecture10/01_config_space.py", "--smem", "166912", timeout=60)
    plain = cached_run("lecture10/01_config_space.py", timeout=60)
    assert given.returncode == plain.returncode == 0
    assert said in "".join(given.stdout.split()) and said not in "".join(plain.stdout.split())


def test_an_expert_at_the_optimum_everywhere_gets_axes_around_one(tmp_path, table):
    """审读报过：专家在每个形状上都已经最优（一个形状一条规则），04 演示 3 的种子、05 的曲线都在 1.000×，散点图和折线图的
    轴却是 0.00×–2.00×（数碰巧都是整数，当成了"第几个提议"那样的计数）：点挤在正中，y = x 从 0 画起。轴贴着 1 撑开一点。"""
    rules = [f"    if M <= {s.M} and N <= {s.N} and K <= {s.K}:\n        return {table.oracle(s)[0]!r}"
             for s in sorted(all_shapes(), key=lambda s: (s.M, s.N, s.K))]
    expert = tmp_path / "oracle_table.py"
    expert.write_text("# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n" + "\n".join(rules)
                      + "\n    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n# EVOLVE-BLOCK-END\n",
                      encoding="utf-8")
    env = {**_plain_env(), "MINI_ALPHAEVOLVE_EXPERT": str(expert)}
    for script, name, title in [("lecture14/04_alphaevolve_tiling.py", "04_demo3_train_vs_test", "每个种子一点"),
                                ("lecture14/05_ablations.py", "05_demo1_best_score_by_variant", "最好分数随提议增长")]:
        d = tmp_path / name
        r = run_script_fresh(script, "--budget", "5", "--seeds", "1", "--jobs", "1", "--svg", str(d), env=env,
                             timeout=120)
        assert r.returncode == 0, r.stderr
        root = svg_root({session_name(n): (d / n).read_bytes() for n in os.listdir(d)}[f"{name}.svg"])
        seeds = [float(c.get(k)) for c in root.iter(NS + "circle") if c.get("data-x") for k in ("data-x", "data-y")]
        assert not name.startswith("04") or set(seeds) == {1.0}, f"测试的前提变了：种子不都在 1.000×：{seeds}"
        plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
        lo, hi = float(plot.get("data-y-min")), float(plot.get("data-y-max"))
        assert 0.9 <= lo < 1.0 < hi <= 1.1, (name, lo, hi)
        chart = r.stdout.split("\n" + title, 1)[1].split("图例：")[0]                # 终端里同一张图的 y 刻度也一样
        printed = re.findall(r"^ *([\d.]+)× ┤", chart, re.M)
        assert len(printed) >= 2 and all(0.9 <= float(v) <= 1.1 for v in printed), chart
