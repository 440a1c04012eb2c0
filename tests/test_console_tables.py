"""表格跟着终端宽度：比目标宽度宽的表，比数据宽的表头折成几行（都在 ---- 上面），数据单元格从不折。
学生在 80–100 列的终端里看表，以前 05 的主表 174 列、每一行都被终端折断。
这里检查：放得下时就放得下；列从不比它的数据窄；表头拼回去就是原文（tests/printed.py 照样按表头里的词找列）；
每个编号脚本管道输出里的表不超过 100 列（放不下的几张在下面点名，说明为什么）；真终端 80、120 列时跟着终端。"""

import os
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_in_pty, run_script
from console import PIPE_WIDTH, display_width, format_table
from printed import RULE, _cut, join_header, tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# 05 演示 1 那种表：表头很长，数据很窄
WIDE_HEADERS = ["方法", "训练形状（比专家快）", "测试形状（比专家快）", "测试上占最优的（中位数）", "第 100 个提议时（中位数）",
                "要跑几次内核（中位数）"]
WIDE_ROWS = [["专家启发式", "1.000×", "1.000×", "74%", "1.000×", "0"],
             ["按 M 查表", "1.243×", "1.261×", "94%", "1.115×", "164,736"]]


def rule_and_header(text):
    """(表头的几行, ---- 行, 数据行)：表头是 ---- 上面的所有行（format_table 的输出只有一张表）。"""
    lines = text.split("\n")
    i = next(i for i, line in enumerate(lines) if RULE.match(line))
    return lines[:i], lines[i], lines[i + 1:]


def data_widths(rows, n):
    return [max((display_width(str(r[j])) if j < len(r) else 0 for r in rows), default=0) for j in range(n)]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_wide_table_fits_when_headers_can_shrink(width):
    natural = format_table(WIDE_HEADERS, WIDE_ROWS, width=1000)
    assert max(map(display_width, natural.split("\n"))) > 120            # 不折时比 120 列还宽
    text = format_table(WIDE_HEADERS, WIDE_ROWS, width=width)
    assert all(display_width(line) <= width for line in text.split("\n")), text
    head, rule, body = rule_and_header(text)
    assert len(head) > 1                                                   # 表头确实折了
    t, = tables(text)
    assert t.headers == WIDE_HEADERS                                       # 拼回去就是原来的表头
    assert t.rows == [[str(c) for c in r] for r in WIDE_ROWS]              # 数据一格不变
    assert body == natural.split("\n")[-len(body):] or all(                # 数据行只是列宽变了，内容没折
        line.split() == nat.split() for line, nat in zip(body, natural.split("\n")[-len(body):]))


def test_table_that_fits_is_unchanged_and_one_header_line():
    text = format_table(WIDE_HEADERS, WIDE_ROWS, width=1000)
    head, rule, _ = rule_and_header(text)
    assert head == ["  ".join(h.ljust(w - display_width(h) + len(h)) for h, w in
                              zip(WIDE_HEADERS, map(len, rule.split("  ")))).rstrip()]
    assert format_table(WIDE_HEADERS, WIDE_ROWS, width=display_width(text.split("\n")[0])) == text   # 正好放得下：不折


def test_headers_are_not_cut_into_fragments():
    # 数据本身就太宽、怎样都放不下时：表头最多折成两行；在两个汉字中间折时每段至少三个汉字宽；括号里面不折
    headers = ["说明", "跑了几次内核", "最后活着的不同程序", "测试形状（中位数）"]
    rows = [["x" * 90, "1", "2", "3"]]
    text = format_table(headers, rows, width=80)
    head, rule, _ = rule_and_header(text)
    t, = tables(text)
    assert t.headers == headers and len(head) == 2
    spans, col = [], 0
    for dashes in rule.split("  "):
        spans.append((col, col + len(dashes)))
        col += len(dashes) + 2
    chunks = list(zip(*[_cut(line, spans) for line in head]))[1:]      # 每列折成的几段
    assert all(display_width(c) >= 6 for column in chunks for c in column if c), chunks
    assert chunks[1] == ("最后活着的", "不同程序") and chunks[2] == ("测试形状", "（中位数）")
    # 在汉字中间折只折两行：72 列放得下；70 列要折成三段才放得下，那就不折三段（表宽 72 列）
    for width in (72, 70):
        text = format_table(["a", "最后活着的不同程序"], [["x" * 60, "2"]], width=width)
        head, _, _ = rule_and_header(text)
        assert [line.split()[-1] for line in head] == ["最后活着的", "不同程序"], head
        assert max(map(display_width, text.split("\n"))) == 72


def test_headers_break_at_brackets_and_spaces_first():
    text = format_table(["x", "训练形状（比专家快）", "时间 µs"], [["y" * 68, "1.0×", "12.5"]], width=88)
    assert all(display_width(line) <= 88 for line in text.split("\n"))
    t, = tables(text)
    head, _, _ = rule_and_header(text)
    assert t.headers == ["x", "训练形状（比专家快）", "时间 µs"]
    assert [line.split() for line in head] == [["x", "训练形状", "时间"], ["（比专家快）", "µs"]], head


def test_join_header_puts_back_the_space_only_next_to_latin_text():
    assert join_header(["第 100", "个提议时", "（中位数）"]) == "第 100 个提议时（中位数）"
    assert join_header(["时间", "µs"]) == "时间 µs"
    assert join_header(["最后活着的", "不同程序"]) == "最后活着的不同程序"
    assert join_header(["只有一段", ""]) == "只有一段"


# 表头的原料：汉字、全角标点、西文词、数字、空格（不连着两个空格：那是表格的列间距）
WORDS = st.sampled_from(["训练", "形状", "（", "）", "，", "、", "中位数", "最小–最大", "µs", "TFLOPS", "CTA/SM", "L2",
                         "100", "第", "个提议时", "占", "最优的", "比专家快", "×", "(BM,BN)", "的", "配置"])


@st.composite
def header_text(draw):
    parts = draw(st.lists(st.tuples(WORDS, st.booleans()), min_size=1, max_size=10))
    text = "".join(w + (" " if space else "") for w, space in parts).strip()
    return re.sub(" +", " ", text) or "x"


CELL = st.one_of(st.sampled_from(["1.000×", "95%", "164,736", "-3", "是", "被第 1 条挡住", "专家启发式", "", "x"]),
                 st.text(alphabet="形状ab12", min_size=1, max_size=12))


@settings(max_examples=100, deadline=None)
@given(headers=st.lists(header_text(), min_size=1, max_size=7), data=st.data(),
       width=st.integers(min_value=20, max_value=180))
def test_any_table_keeps_its_data_and_its_headers(headers, data, width):
    rows = data.draw(st.lists(st.lists(CELL, min_size=len(headers), max_size=len(headers)).filter(
        lambda r: any(c.strip() for c in r)), max_size=4))                 # 全空的一行就是空行：表格到那里为止
    text = format_table(headers, rows, width=width)
    natural = format_table(headers, rows, width=10_000)
    head, rule, body = rule_and_header(text)
    cols = [len(d) for d in rule.split("  ")]
    assert all(c >= d for c, d in zip(cols, data_widths(rows, len(headers))))      # 列从不比它的数据窄
    assert all(line == line.rstrip() for line in text.split("\n"))
    assert 1 <= len(head) <= 3
    assert max(map(display_width, text.split("\n"))) <= max(map(display_width, natural.split("\n")))   # 只会变窄
    if max(map(display_width, natural.split("\n"))) <= width:
        assert text == natural and len(head) == 1                          # 放得下：一个字节都不变
    if any(h.strip() for h in headers):
        t, = tables(text)
        assert t.headers == headers                                        # 表头拼回去就是原文
        assert t.rows == [[str(c).strip() for c in r] for r in rows]
        assert len(body) == len(rows)                                      # 数据行一行一行，没有折行


# ---------------------------------------------------------------- 编号脚本印出来的表

NUMBERED = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d in
                  (os.path.join(ROOT, x) for x in os.listdir(ROOT) if x.startswith("lecture"))
                  for f in os.listdir(d) if re.match(r"\d\d_.*\.py$", f))

# 管道输出（100 列）里还是比 100 列宽的表：(脚本, 表头第一格, 表头里的另一格)。表头折到底也放不下：
#   13/01 演示 1 大 M 那一张（104 列）：12 列数据（"4,247.1"、"14336"）加上折不了的短表头 TFLOPS、CTA/SM、占屋顶线；
#   14/01 演示 1 两张（121、160 列）：形状的全名（33–40 列）、配置写成 "16×64×128 / 4 warp / 4 级 / group 1"（36 列）、
#   条件的每一步、"（慢 1.35×）"，都是数据格（数据格从不折：折了就分不清续行和 04 演示 3 那种第一格空着的分组行）；
#   02 演示 1（104 列）：MockLLM 第一次提议说的话原文（64 列）；03 演示 3（108 列）：MockLLM 说的话原文（66 列）；
#   03 演示 2（117 列）：挑父程序的名字（31 列）和两列 "1.258× (1.255×–1.260×)"（22 列），三个长表头都已折成两行；
#   05 演示 1 主表（117 列）：每个数字列的表头都写着"（中位数）"（tests/test_terms.py 要求），"（中位数）"本身 10 列，
#   六列数据加上它们最少 101 列。
TOO_WIDE = {
    ("lecture13/01_timing_model.py", "配置", "瓶颈"),
    ("lecture14/01_heuristic_as_code.py", "形状", "从上往下试条件"),
    ("lecture14/01_heuristic_as_code.py", "没见过的形状", "专家启发式（和最优比）"),
    ("lecture14/02_llm_proposal.py", "修改的种类", "第一次提议说了什么"),
    ("lecture14/03_cascade_and_database.py", "挑父程序", "当过父程序的不同程序"),
    ("lecture14/03_cascade_and_database.py", "第几步", "MockLLM 说了什么"),
    ("lecture14/05_ablations.py", "变体", "测试形状（中位数）"),
}


def table_blocks(text):
    """每张表印出来的所有行（表头几行、----、数据行），和 tables(text) 的顺序一样。"""
    return [t.lines for t in tables(text)]


QUICK_05 = ("lecture14/05_ablations.py", "--quick", "--jobs", "2")      # 和默认运行一样的表（表头折两行），快 4 倍
PREFETCH = [(p,) for p in NUMBERED] + [QUICK_05, (QUICK_05, dict(instance=2)),
                                        (("lecture13/01_timing_model.py",), dict(instance=2))]


@pytest.fixture(scope="module")
def piped():
    """每个编号脚本用默认参数跑一次，输出到管道：{脚本: 标准输出}（conftest.run_script：别的测试文件也共用这些运行）。"""
    done = {p: run_script(p, timeout=300) for p in NUMBERED}
    for p, r in done.items():
        assert r.returncode == 0, (p, r.stderr)
    return {p: r.stdout for p, r in done.items()}


@pytest.mark.h100_claim
@pytest.mark.timeout(300)
def test_piped_tables_fit_in_100_columns_except_the_named_ones(piped):
    wide = set()
    for path, out in piped.items():
        for t, block in zip(tables(out), table_blocks(out)):
            w = max(map(display_width, block))
            if w > PIPE_WIDTH:
                named = [x for x in TOO_WIDE if x[0] == path and t.headers[0] == x[1] and x[2] in t.headers]
                assert named, (path, t.headers, w)
                wide.add(named[0])
                # 这些表的表头已经折过了（能折的都折成了两行，没有比不折时宽）
                assert w <= max(map(display_width, format_table(t.headers, t.rows, width=10_000).split("\n")))
    assert wide == TOO_WIDE                                              # 点名的每一张现在确实还宽（修好了就从清单里删）


@pytest.mark.timeout(300)
def test_piped_output_is_the_same_bytes_twice(piped):
    # 表头折了几行的两个脚本：另一次独立的运行逐字节相同（05 用 --quick --jobs 2：表一样，进程池也一样起）
    assert run_script("lecture13/01_timing_model.py", instance=2, timeout=300).stdout == \
        piped["lecture13/01_timing_model.py"]
    first, second = run_script(*QUICK_05, timeout=300), run_script(*QUICK_05, instance=2, timeout=300)
    assert first.returncode == 0 and "变体" in first.stdout and second.stdout == first.stdout


def pty_text(args, cols):
    """在 cols 列宽的伪终端里运行（NO_COLOR=1，不上色），返回它印的文字。"""
    p = run_in_pty(args, cols, {"NO_COLOR": "1"})
    assert p.returncode == 0, p.stderr
    return p.stdout


PROBE = ("import sys; sys.path.insert(0, {lib!r}); from console import print_table; "
         "print_table({headers!r}, {rows!r})")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
@pytest.mark.parametrize("cols", [80, 120])
def test_tables_follow_a_real_terminal(cols):
    # 一张自己造的宽表：终端多宽，表就多宽
    out = pty_text(["-c", PROBE.format(lib=os.path.join(ROOT, "lecture01"), headers=WIDE_HEADERS, rows=WIDE_ROWS)], cols)
    t, = tables(out)
    assert t.headers == WIDE_HEADERS
    assert all(display_width(line) <= cols for line in out.split("\n"))
    # 05 的两张表：终端里印的就是按终端宽度排的（不是管道的 100 列）；120 列时主表放得下、表头只有一行，80 列时折了
    out = pty_text(["lecture14/05_ablations.py", "--budget", "100", "--seeds", "1", "--jobs", "1"], cols)
    found = [(t, b) for t, b in zip(tables(out), table_blocks(out)) if t.headers[0] == "变体" and len(t.headers) > 2]
    assert found
    for t, block in found:
        assert block == format_table(t.headers, t.rows, width=cols).split("\n")
        lines = format_table(t.headers, t.rows, width=10_000).split("\n")
        if max(map(display_width, lines)) <= cols:
            assert block == lines                                       # 放得下：不折
        else:
            assert len(block) > len(lines)                              # 放不下：表头折了
            assert max(map(display_width, block)) < max(map(display_width, lines))
    t, main = found[0]
    if cols == 120:                                                     # 120 列放得下（管道的 100 列放不下）
        assert all(display_width(line) <= cols for line in main), main
        assert main != format_table(t.headers, t.rows, width=PIPE_WIDTH).split("\n")
