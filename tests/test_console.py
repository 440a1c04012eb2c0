"""lecture01/console：按显示宽度对齐的表格、折行、观察的编号。"""

import io
import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from console import (apart_digits, cell_text, display_width, format_table, print_header, print_observations, print_table,
                     print_try, wrap, wrap_width)

LONG_ZH = ("最优配置随形状变化很大：decode（M = 1、16）的时间几乎全花在读权重上，很多小块配置一样快；"
           "prefill 要 256×128 的大块、8 个 warp、4 级流水线，专家用的 128×128×64 / 4 warp / 3 级慢 30% 左右。"
           "差得最多的是中间的 M（例如 70B 分片的 qkv 在 M = 128 时慢 2.5 倍）。")
LONG_EN = "The best config changes a lot with the shape: decode reads weights, prefill wants 256x128 tiles and 8 warps."


def columns(line):
    """参考实现：逐字符算出每个字符从第几列开始，返回 [(列, 字符)]。"""
    out, col = [], 0
    for ch in line:
        out.append((col, ch))
        col += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return out


def cut(line, a, b):
    """参考实现：取出从第 a 列到第 b 列（不含）之间的字符。"""
    return "".join(ch for col, ch in columns(line) if a <= col < b)


def test_display_width():
    assert display_width("abc") == 3
    assert display_width("形状") == 4               # 汉字两列
    assert display_width("８Ｂ") == 4               # 全角字母数字两列
    assert display_width("（M，") == 5              # 全角标点两列，M 一列
    assert display_width("e\u0301") == 1            # e + 组合重音：一列
    assert display_width("12.3 µs 1.2×") == 12      # µ、× 是窄字符
    assert display_width("ดั้ง") == 2                # 泰文：ั（U+0E31）的规范组合类是 0，可它叠在 ด 上、不占地方
    assert display_width("a\ufe0f") == 1            # 变体选择符：不占地方（以前这两个都多算一列，表格错开一格）


def test_fmt_with_more_than_six_digits_prints_them():
    from console import fmt
    assert fmt(1.0, 7) == "1.0000000"              # 以前 digits > 6 时 UnboundLocalError（循环一次也没走，d 没有定义）
    assert fmt(0.5, 8, percent=True) == "50.00000000%"
    assert display_width("") == 0


def test_fmt_never_rounds_a_number_onto_or_across_the_bound_it_is_judged_by():
    # fmt 的说明：四舍五入以后和判据的界（或 0、100%）的大小关系变了就多印一位——判据"至少 75%"、量到 74.96% 时
    # 印成"75%"，读的人以为成立，旁边却是【本次不成立】。两个方向都查：差一点够不着、差一点超过
    from console import fmt
    assert fmt(0.7496, 0, (0.75,), percent=True) == "74.96%"      # 判据 >= 75%：不能印成 75%
    assert fmt(0.7504, 0, (0.75,), percent=True) == "75.04%"      # 正好超过一点：也不印成 75%（和界相等）
    assert fmt(1.0104, 2, (1.01,)) == "1.0104"                     # 判据 <= 1.01：不能印成 1.01
    assert fmt(1.0096, 2, (1.01,)) == "1.0096"
    assert fmt(0.004, 0, percent=True) == "0.4%"                    # 不是 0%
    assert fmt(0.9996, 0, percent=True) == "99.96%"                 # 不是 100%
    assert fmt(0.8, 0, (0.75,), percent=True) == "80%"             # 离界远：照要的位数


ROWS = [["8B gate_up M=128", "(256, 128, 64, 8, 4, 8)", "12.3 µs", 1.5, 1234],
        ["形状", "专家启发式", "0（手写）", -0.25, "…"],
        ["70B/8 qkv", "ascii", "85%", "+3.1", "1,234"]]
HEADERS = ["形状", "最优配置", "时间", "倍数", "次数"]


def test_whole_numbers_in_a_table_have_thousands_separators_like_the_sentences():
    """学生报过：04 --budget 4000 的表印"single_field  1209"，下面的观察说"14/1,209"。表里的整数和句子里的一样带千分位；
    小数、文字、布尔值照原样（印几位小数是调用的人定的）。"""
    assert [cell_text(c) for c in (1209, -12345, 7, True, 1234.5, "1209")] == ["1,209", "-12,345", "7", "True", "1234.5",
                                                                              "1209"]
    assert "1,209" in format_table(["修改", "提出"], [["single_field", 1209]])


def test_table_columns_line_up_by_display_width():
    lines = format_table(HEADERS, ROWS).split("\n")
    widths = [max(display_width(cell_text(r[j])) for r in [HEADERS] + ROWS) for j in range(len(HEADERS))]
    starts = [sum(widths[:j]) + 2 * j for j in range(len(widths))]            # 列间两个空格
    assert lines[1] == "  ".join("-" * w for w in widths)                      # 表头下面每列一段 ----
    for line, row in zip([lines[0]] + lines[2:], [HEADERS] + ROWS):
        assert line == line.rstrip()                                           # 行尾不留空格
        for cell, a, w in zip(map(cell_text, row), starts, widths):
            right = row is not HEADERS and a >= starts[2] and cell != "…"      # 后三列的数（带单位的也算）靠右；名字靠左
            lo = a + w - display_width(cell) if right else a
            assert cut(line, lo, lo + display_width(cell)) == cell, (line, cell)   # 单元格正好占它该占的列
            assert cut(line, a, a + w).strip() == cell.strip()                     # 这一列里没有别的东西


def test_numbers_right_aligned_text_left_aligned():
    lines = format_table(["名字", "值"], [["a", "1"], ["bbbb", "12.5 µs"], ["c", "文字"], ["d", -3]]).split("\n")
    assert lines[2] == "a           1"          # 数字靠右
    assert lines[3] == "bbbb  12.5 µs"
    assert lines[4] == "c     文字"             # 文字靠左（行尾空格去掉）
    assert lines[5] == "d          -3"          # 负数也靠右
    assert lines[0] == "名字  值"               # 表头一律靠左


@pytest.mark.parametrize("cell, right", [
    ("8B gate_up M=1", False), ("70B/8 qkv", False), ("496 条规则的专家", True), ("2.5倍", True), ("1,052", True),
    ("1.5e+13", True), ("-0.25", True), ("+3.1%", True), ("12.3 µs", True), ("3x3", False), ("1.2.3", False),
    ("(16, 32)", False), ("M=1", False)])
def test_a_name_that_starts_with_a_digit_is_text_not_a_number(cell, right):
    """学生读表时看到的：第一列的形状名 "8B gate_up M=1" 以前被当成数靠右，和 "70B/8 qkv" 参差不齐地挤在右边。
    数后面紧跟西文字母、数字、斜杠、点、逗号的是名字，靠左；数后面跟空格、单位、汉字的是数，靠右。"""
    lines = format_table(["名字", "值"], [["x" * 20, "y"], [cell, "z"]]).split("\n")
    assert lines[3].startswith(cell) != right, lines


def test_empty_and_short_rows():
    assert format_table(["a", "形状"], []) == "a  形状\n-  ----"      # 没有数据行：只有表头和 ----
    assert format_table(["a", "b", "c"], [["x"]]).split("\n")[2] == "x"  # 短行补空串
    with pytest.raises(ValueError):
        format_table(["a"], [["x", "y"]])                                # 比表头长的行是错误


def test_print_table_prints_blank_line_then_table(capsys):
    print_table(["a"], [[1]])
    assert capsys.readouterr().out == "\na\n-\n1\n"


@pytest.mark.parametrize("text", [LONG_ZH, LONG_EN, LONG_ZH + " " + LONG_EN, "短", "", "x" * 250])
@pytest.mark.parametrize("width", [12, 20, 33, 60, 100])
def test_wrap_fits_width_and_loses_nothing(text, width):
    indent = "     "
    lines = wrap(text, width, indent)
    assert all(display_width(line) <= width for line in lines)                     # 不超宽
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")               # 一个字符都不丢（只丢换行处的空格）
    assert all(line.startswith(indent) for line in lines[1:])                     # 续行悬挂缩进
    assert all(not line[len(indent):].startswith(" ") for line in lines[1:])      # 缩进之后不再有空格


def test_wrap_keeps_words_whole_and_punctuation_off_line_starts():
    for width in range(30, 101):
        lines = wrap(LONG_ZH + " " + LONG_EN, width, "  ")
        words = {w for line in lines for w in re.findall(r"[A-Za-z0-9.×%/]+", line)}
        assert words >= set(re.findall(r"[A-Za-z0-9.×%/]+", LONG_ZH + LONG_EN))   # 西文词和数字没被拆开
        assert not any(line.lstrip()[:1] in "，。、；：）" for line in lines[1:])    # 全角标点不在行首


def test_a_relative_path_may_start_a_line_so_the_colon_before_it_stays_behind():
    # 助教报过：仓库克隆在 /tmp 下时，tmp 里的文件印成 "../…"；"注意：../…/big_expert.py:7:" 折成了 "注意" 和
    # "：../…"——开头的点被当成了不落在行首的标点，冒号跟着它换了行。"../x"、"./x"、".5" 都可以在行首
    for width in range(20, 101):
        for path in ("../tests-session-c6p847lk/pytest-of-root/pytest-0/big_expert.py:7:", "./mine.py:3:", ".5"):
            lines = wrap(f"注意：{path} 这条规则永远用不到：它管的形状都先被第 5 行的规则接走了", width, "  ")
            assert not any(line.lstrip()[:1] in "，。、；：）" for line in lines[1:]), (width, lines)
            assert lines[0].startswith("注意："), (width, lines)


def test_a_glued_command_longer_than_the_line_breaks_at_its_spaces_not_inside_a_path():
    # 审读报过：git -C 很长的仓库路径 checkout 文件（连成一段）一行放不下时按字符折，折在了路径中间
    path = "/home/student/courses/cs349e/mini-alphaevolve/repo"
    text = f"（想恢复讲义的原样：git -C {path} checkout lecture14/expert_heuristic.py。）"
    for width in range(len(path) + 3, 90):                 # 路径本身放得进一行（续行缩进两格）的宽度
        lines = wrap(text, width, "  ")
        words = [w for line in lines for w in line.split()]
        assert path in words and any(w.startswith("lecture14/expert_heuristic.py") for w in words), (width, lines)


def test_a_table_cell_never_splits_median():
    # 讲师报过：80 列里 04 演示 4 的成本表把"（88 个形状的中位数，最少–最多）"折成了"……的中"和"位数，……"
    cell = "来了一个新形状：第 13 讲代价模型引导的调优（88 个形状的中位数，最少–最多）"
    for width in range(8, 60):
        lines = wrap(cell, width)
        assert "".join(lines).replace(" ", "") == cell.replace(" ", "")
        assert any("中位数" in line for line in lines), (width, lines)
    assert wrap("集中位置", 4) == ["集", "中位", "置"]          # 只是"中位"两个字不拆开，别的照常


def test_wrap_keeps_a_half_width_colon_with_the_chinese_word_before_it():
    # 学生报过：DSL 的说明"只允许：if 条件: return Config(...)"折成"……if 条件"和": return Config(...)"，正好拆开了要讲的写法
    text = "第 25 行：这一行 DSL 不认识。DSL 只允许：if 条件: return Config(...)，条件是 M、N、K 和整数的比较（<= 或 <）。"
    for width in range(16, 80):
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert not any(line.lstrip()[:1] in ",.:;!?)]}%" for line in lines[1:]), (width, lines)


def _quote_ends(lines):
    """每行（去掉缩进）开头的引号是不是收尾的、结尾的引号是不是开头的：按到这一行为止读过几个半角引号判断。"""
    bad, seen = [], 0
    for line in lines:
        body = line.lstrip()
        if body.startswith('"') and seen % 2:
            bad.append(f"行首是收尾的引号：{line!r}")
        seen += body.count('"')
        if body.endswith('"') and seen % 2:
            bad.append(f"行尾是开头的引号：{line!r}")
    return bad


def test_wrap_keeps_ascii_quotes_with_the_words_they_quote():
    # 学生在 80 列里读到：13 的 "……（块少了一半，"" 换行 "等"的步数……"、03 的 "……（表里的"" 换行 "探针淘汰"减……"：
    # 开头的引号落在行尾。收尾的引号也不该落在行首
    text = ("模型里\"搬\"也变成约 0.75 倍，总时间 0.76 倍（块少了一半，\"等\"的步数也少一半）。探针拦下其中的 219.5 个"
            "（表里的\"探针淘汰\"减\"其中错杀\"），\"算\"和\"搬\"重叠。")
    for width in range(12, 90):
        lines = wrap(text, width, "     ")
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert _quote_ends(lines) == [], (width, lines)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["形状", "搬", "等", "探针淘汰", "M = 128", "，", "。", "（", "）", " ", "2.5×"]),
                min_size=1, max_size=30),
       st.lists(st.booleans(), min_size=30, max_size=30), st.integers(16, 60))
def test_wrap_never_strands_a_quote_on_the_wrong_side(words, quoted, width):
    # 引号不挨着引号、也不挨着西文（"搬""等"、"形状"2.5×"搬" 这种粘成一串、比一行还长的，只能尽力）：
    # 这样不落单的一串总放得进一行
    # 西文：半角（一列宽）的字符都算，"2.5×" 的 × 也是（Hypothesis 找到过：形状"形状"2.5×"搬"，16 列放不下这一串）
    glued = lambda j: (0 <= j < len(words) and words[j].strip()                             # noqa: E731
                       and all(display_width(c) == 1 for c in words[j]))
    quoted = [q and bool(w.strip()) and not (i and quoted[i - 1]) and not glued(i - 1) and not glued(i + 1)
              and not all(display_width(c) == 1 for c in w) for i, (w, q) in enumerate(zip(words, quoted))]
    text = "".join(f'"{w}"' if q else w for w, q in zip(words, quoted))
    lines = wrap(text, width, "  ")
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(display_width(line) <= width for line in lines)
    assert _quote_ends(lines) == [], lines


def test_wrap_short_text_is_one_line():
    assert wrap("形状 M=128，快 2.5×", 60, "   ") == ["形状 M=128，快 2.5×"]


def test_wrap_width_is_100_when_piped(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())     # 不是终端
    assert wrap_width() == 100


def test_print_header(capsys):
    print_header("演示 1：问题")
    assert capsys.readouterr().out == "\n" + "=" * 60 + "\n演示 1：问题\n" + "=" * 60 + "\n"   # 至少 60 列
    print_header("标" * 40)
    assert capsys.readouterr().out.split("\n")[1] == "=" * 80                                # 和标题一样宽
    print_header("标" * 70)
    assert capsys.readouterr().out.split("\n")[1] == "=" * 100                               # 不超过折行宽度


def test_print_observations_numbering_and_hanging_indent(capsys):
    items = [LONG_ZH, "短的一条", LONG_EN] + [f"第 {i} 条" for i in range(4, 11)]
    print_observations(items)
    lines = capsys.readouterr().out.split("\n")
    assert lines[:2] == ["", "观察："]
    numbered = [line for line in lines if re.match(r"  \d+\. ", line)]
    assert [int(line.split(".")[0]) for line in numbered] == list(range(1, 11))          # 编号 1..10
    assert all(display_width(line) <= 100 for line in lines)                              # 管道输出按 100 列折
    first, second = lines.index(numbered[0]), lines.index(numbered[1])
    assert lines[first + 1].startswith(" " * 5) and lines[first + 1][5] != " "    # 续行缩进 5 列，对齐到 "  1. " 之后
    assert "".join(lines[first:second]).replace(" ", "") == "1." + LONG_ZH.replace(" ", "")   # 第 1 条一个字不丢
    assert "  10. 第 10 条" in lines


def test_observations_title(capsys):
    print_observations(["a"], title="原因")
    assert capsys.readouterr().out == "\n原因：\n  1. a\n"


def test_print_try_keeps_the_command_whole(capsys):
    command = "python3 lecture10/01_config_space.py 256 256 32 8 1 8"
    print_try([(LONG_ZH, command), ("再试一次：", "make run")])
    lines = capsys.readouterr().out.split("\n")
    assert lines[:2] == ["", "可以试试："]
    assert " " * 7 + command in lines                 # 命令单独一行、完整，缩进到说明文字之后再空两格
    assert lines[-3:] == ["  2. 再试一次：", "       make run", ""]


# ---------------------------------------------------------------- console.display_width 的捷径

def _ref_display_width(s):
    """原来的写法：逐个字符，组合字符（规范组合类不是 0，或者类别是 Mn、Me）0 列、宽字符和全角字符 2 列，其余 1 列。"""
    return sum(0 if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me")
               else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


# 纯 ASCII 直接取长度、其余按字符查缓存：和逐个字符算的一样（ASCII 全部 128 个、控制字符、汉字、全角、组合字符、emoji）
def test_display_width_shortcut_matches_the_definition():
    samples = [chr(i) for i in range(128)] + ["", "abc 123", "\t\n", "演示 1：屋顶线", "（µs）", "ＡＢ", "e\u0301", "×→–",
                                               "【本次不成立】", "😀", "a\u0300\u0301b", "128×256 / 8 warp"]
    samples += [chr(i) for i in range(0x300, 0x370)] + [chr(i) for i in range(0x3000, 0x3040)]
    for s in samples + ["".join(samples)]:
        assert display_width(s) == _ref_display_width(s), repr(s)


def test_a_command_that_does_not_fit_is_continued_with_backslashes_between_arguments(monkeypatch, capsys):
    """讲师报过：照"可以试试"跑了一次以后，下一轮建议的命令带着上一轮的 --knob，有 81–106 列，顶格印成一行，80 列的
    终端在参数中间折开；刚好放得下的又不缩进，看着像正文。现在命令总在说明下面缩进；放不下就在参数之间用 shell 的
    续行（行尾 " \\"）折成几行，选项和它的值在同一行。"""
    import console
    monkeypatch.setattr(console, "wrap_width", lambda: 80)
    fits = "python3 lecture14/05_ablations.py --quick --small-targeted 0.1"
    close = "python3 lecture14/05_ablations.py --budget 400 --seeds 2 --small-targeted 0.05"       # 78 列
    wide = "python3 lecture13/01_timing_model.py --tolerance 0.05 --knob L2_BW=1.54e+13 --knob L2_BW_PER_SM=1.8e+11"
    console.print_try([("一", fits), ("二", close), ("三", wide)])
    lines = capsys.readouterr().out.split("\n")
    assert "       " + fits in lines                             # 放得下：照常缩进七格
    k = lines.index("  2. 二") + 1
    assert lines[k].startswith("       python3 ") and lines[k].endswith(" \\")   # 缩进不变，折成两行
    k = lines.index("  3. 三") + 1
    assert lines[k:k + 2] == ["       python3 lecture13/01_timing_model.py --tolerance 0.05 \\",
                              "         --knob L2_BW=1.54e+13 --knob L2_BW_PER_SM=1.8e+11"]
    assert max(map(display_width, lines)) <= 80


WORDS = st.sampled_from(["lecture14/04_alphaevolve_tiling.py", "--knob", "L2_BW=1.54e+13", "--gpu", "a100",
                         "--budget", "4000", "my_heuristic.py", "'a b'", '"c  d"', "x" * 90, "--seeds", "2", "--evolve"])


@settings(max_examples=60, derandomize=True, deadline=None, database=None)
@given(segments=st.lists(st.tuples(st.sampled_from(["python3", "cp"]), st.lists(WORDS, max_size=8)), min_size=1,
                         max_size=3), make=st.booleans(), width=st.integers(30, 100))
def test_a_continued_command_is_the_same_command_to_the_shell(segments, make, width):
    """command_lines 折出来的几行整段交给 bash，和原来的一行是同一串参数（make 的 ARGS 按空白再切开以后）；
    每一行都不比 width 宽，除非一个参数本身就放不下。"""
    import shlex
    import subprocess
    from console import command_lines
    command = " && ".join(" ".join([program, *args]) for program, args in segments)
    if make:
        command = 'make run ARGS="' + " ".join(w for _, args in segments for w in args if "'" not in w and '"' not in w) + '"'
    lines = command_lines(command, width, 7)
    pieces = [p for p in shlex.split(command)]
    assert all(display_width(line) <= width for line in lines) or any(display_width(p) + 11 > width for p in pieces)
    show = "python3() { printf '%s\\0' python3 \"$@\"; }; cp() { printf '%s\\0' cp \"$@\"; }; " \
           "make() { printf '%s\\0' make \"$@\"; }\n"
    got = subprocess.run(["bash", "-c", show + "\n".join(lines)], capture_output=True, text=True, timeout=10).stdout
    want = [p for p in pieces if p != "&&"]
    said = got.split("\0")[:-1]
    if make:
        said = [" ".join(p.split()) for p in said]                     # make 把 ARGS 按空白切开：多出的空格不算
    assert said == want, (lines, said, want)


def test_apart_digits_prints_neighbours_that_differ_as_different_numbers():
    assert apart_digits([1.0, 1.037, 1.058], 3) == 3                      # 已经分得开：不多印
    assert apart_digits([1.218, 1.21804, 1.21807, 1.224], 3) == 5         # 04 --seed 3 的三次刷新
    assert apart_digits([1.5, 1.5, 1.6], 1) == 1                          # 本来就相等的两个数不算
    assert apart_digits([1.0, 1.0 + 1e-12], 3) == 6                       # 最多 6 位
    assert apart_digits([], 3) == 3


def test_a_students_file_is_folded_to_the_terminal_and_its_tabs_expanded(monkeypatch):
    """学生报过：expert_heuristic.py 里一行长的中文注释在 80 列的终端里印成 113 列，制表符原样印出来。学生自己的文件
    （带行号的 print_numbered，04 的 listing(fold=True)）折到终端宽度、续行多缩进四格、末尾说一句；不折的清单
    （LLM 的回复、渲染出的程序：要能照着抄）一个字节不动。"""
    import console
    monkeypatch.setattr(console, "wrap_width", lambda: 80)
    long = "    if M <= 16:  # " + "很长的中文注释" * 12
    lines = [(33, "def choose_config(M, N, K):"), (34, long), (35, "\t\treturn Config(BM=16)")]
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    console.print_numbered(lines, 40, "x.py")
    out = buf.getvalue().splitlines()
    assert all(display_width(x) <= 80 for x in out) and "\t" not in buf.getvalue(), out
    assert out[0] == "33 | def choose_config(M, N, K):" and out[1].startswith("34 |     if M <= 16:  # 很长")
    assert out[2].startswith(" " * (5 + 4 + 4)) and not out[2].startswith(" " * 14)     # 行号、这行的缩进、再四格
    assert re.sub(r"\s+", "", "".join(out[1:-2]))[3:] == re.sub(r"\s+", "", long)      # 折开的几行：字一个不少
    assert out[-2] == "35 |                 return Config(BM=16)" and "折开印了" in out[-1]
    folded = console.listing("\n".join(t for _, t in lines), fold=True).splitlines()
    assert all(display_width(x) <= 80 for x in folded) and "折开印了" in folded[-1] and "\t" not in "".join(folded)
    assert console.listing("\n".join(t for _, t in lines)) == "\n".join(t for _, t in lines)   # 不折的原样


def test_curly_quotes_do_not_dangle_at_a_line_end_or_start():
    # 讲师报过：80 列里"记作“"落在行尾，"接连失败后没再调用 LLM”。"在下一行开头
    from layout import wrap
    text = "LLM：接连 4 次调用失败（最后一次是“LLM 回 HTTP 429”），之后的提议不再问它，记作“接连失败后没再调用 LLM”。"
    for width in range(30, 90):
        lines = wrap(text, width)
        assert not any(line.rstrip().endswith(("“", "‘")) or line.lstrip().startswith(("”", "’")) for line in lines), \
            (width, lines)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
