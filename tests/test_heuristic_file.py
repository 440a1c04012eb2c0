"""学生的启发式文件（evolve.problem.read_heuristic / load_heuristic）：编码、看起来一样其实不一样的字符、
读得进来但不起作用的改动。文件都是测试自己写在临时目录里的，不依赖 expert_heuristic.py 现在是什么样子。"""


import os
import shutil
import subprocess
import sys

import pytest

from conftest import LECTURE_EXPERT, ROOT, run_in_pty
from console import display_width
from evolve.problem import EXPERT_FILE, Heuristic, display_path, load_heuristic, read_heuristic
from evolve.program import Program, Rule
from evolve.source import ProgramError, find_block, parse
from kernel_lab import Config

HEAD = '''"""我的启发式：第 1 行是说明文字。"""
from kernel_lab import Config  # noqa: F401

# EVOLVE-BLOCK-START
def choose_config(M, N, K):
'''
BODY = '''    if M <= 16:                                          # 第 6 行：decode，小块
        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)
    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
'''
TAIL = "# EVOLVE-BLOCK-END\n"
GOOD = Program((Rule((("M", 16),), Config(16, 64, 128, 4, 4, 1)),), Config(128, 128, 64, 4, 3, 8))


def write(tmp_path, text, encoding="utf-8", name="h.py"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return str(path)


def error(path) -> ProgramError:
    with pytest.raises(ProgramError) as e:
        load_heuristic(path)
    return e.value


def test_reads_program_source_and_no_warnings(tmp_path):
    # 正常的文件：程序对、source 是两行标记之间的原文（注释、空格照写的样子）、没有提醒；load_heuristic 给同一个程序
    path = write(tmp_path, HEAD + BODY + TAIL)
    h = read_heuristic(path)
    assert isinstance(h, Heuristic) and h.program == GOOD == load_heuristic(path)
    assert h.source == "def choose_config(M, N, K):\n" + BODY and h.warnings == ()
    assert [r.line for r in h.program.rules] == [6]


def test_lecture_expert_reads_without_warnings():
    # 讲义的专家文件（现在的样子）：读得进来，source 就是它两行标记之间的原文
    with open(EXPERT_FILE, encoding="utf-8") as f:
        text = f.read()
    h = read_heuristic(EXPERT_FILE)
    assert h.source == find_block(text)[1] and h.program == parse(text)


def test_gbk_file_says_save_as_utf8(tmp_path):
    # Windows 编辑器存成 GBK：不是 15 行的 UnicodeDecodeError，而是一句话：哪个文件、第几行、另存为 UTF-8
    path = write(tmp_path, HEAD + BODY + TAIL, encoding="gbk")
    e = error(path)
    assert e.lineno == 1 and display_path(path) == e.filename
    assert "不是 UTF-8" in e.message and "另存为 UTF-8" in e.message and "GBK" in e.message
    with pytest.raises(ProgramError, match="不是 UTF-8"):
        read_heuristic(path)


@pytest.mark.skipif(shutil.which("iconv") is None, reason="这台机器没有 iconv")
@pytest.mark.parametrize("name", ["h.py", "我的 启发式.py"])
def test_the_gbk_message_gives_a_command_that_converts_the_file_as_printed(tmp_path, monkeypatch, name):
    # 那句话后面单独一行的命令，在学生运行脚本的目录里照抄给 shell：文件变成 UTF-8，读出来和原来的程序一样
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, HEAD + BODY + TAIL, encoding="gbk", name=name)
    said = error(path).message
    command = said.split("\n    ", 1)[1]
    assert "\n" not in command and command.startswith("iconv ") and not command.endswith("。"), said
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True, timeout=30)
    assert load_heuristic(path) == GOOD and os.listdir(tmp_path) == [name]


GBK_RUNS = [("06", ["lecture14/06_your_heuristic.py", "mine.py"], {}),
            ("04", ["lecture14/04_alphaevolve_tiling.py", "--budget", "5", "--seeds", "1"], {"expert": "mine.py"})]


@pytest.mark.skipif(shutil.which("iconv") is None, reason="这台机器没有 iconv")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
@pytest.mark.parametrize("cols", [80, 50])
@pytest.mark.parametrize("script, args, how", GBK_RUNS, ids=[r[0] for r in GBK_RUNS])
def test_the_gbk_command_copied_from_a_narrow_terminal_converts_the_file(tmp_path, script, args, how, cols):
    """学生在 80 列的终端里报过：GBK 的那句话把 iconv 命令嵌在句子里，折成三行（"命令行：iconv -f GBK -t UTF-8"
    一行、文件名在下一行）；照抄第一行，iconv 没有文件名，等着从键盘读。现在命令单独一行，放不下时按 shell 的续行
    折开：把终端上印的那几行原样交给 bash，文件变成 UTF-8，程序和原来的一样。06 读学生的文件、04 读专家文件
    （环境变量指向的那份；走的是 evolve.problem 模块载入时的那条路）。"""
    mine = tmp_path / "a folder with a long name" / "mine.py"
    mine.parent.mkdir()
    mine.write_bytes((HEAD + BODY + TAIL).encode("gbk"))
    env = {"NO_COLOR": "1", "MINI_ALPHAEVOLVE_EXPERT": str(mine) if how.get("expert") else LECTURE_EXPERT}
    argv = [os.path.join(ROOT, args[0]), *[str(mine) if a == "mine.py" else a for a in args[1:]]]
    term = run_in_pty(argv, cols, env, cwd=str(mine.parent), timeout=120, stderr_too=True)
    assert term.returncode == 1 and "Traceback" not in term.stdout, term.stdout
    lines = term.stdout.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("iconv ")]
    assert len(starts) == 1 and lines[starts[0]].startswith("    iconv "), term.stdout
    command = [lines[starts[0]]]
    while command[-1].endswith(" \\"):                          # shell 的续行：照原样拼给 bash
        command.append(lines[starts[0] + len(command)])
    assert all(display_width(line) <= cols for line in command), command
    subprocess.run(["bash", "-c", "\n".join(command)], cwd=mine.parent, check=True, timeout=30, stdin=subprocess.DEVNULL)
    assert load_heuristic(str(mine)) == GOOD and sorted(os.listdir(mine.parent)) == ["mine.py"]


def test_a_file_only_partly_gbk_gets_no_iconv_command(tmp_path):
    # 一半 GBK、一半 UTF-8：iconv 会转到半路停下，不给它
    path = tmp_path / "h.py"
    path.write_bytes("# 专家\n".encode("gbk") + (HEAD + BODY + TAIL).encode("utf-8"))
    said = error(str(path)).message
    assert "另存为 UTF-8" in said and "iconv" not in said


@pytest.mark.parametrize("line, encoding, bad", [("# 第 1 行\n", "gbk", "B5 DA"), ("# café\n", "latin-1", "E9"),
                                                 ("# 第一行\n", "gbk", "B5 DA D2 BB")])
def test_the_gbk_message_names_only_the_bytes_utf8_cannot_read(tmp_path, line, encoding, bad):
    # 学生报过："第 2 行有 UTF-8 读不了的字节 B5 DA 20 31"——20 31 是 " 1"，UTF-8 读得了
    path = tmp_path / "h.py"
    rest = HEAD.split("\n", 1)[1] + BODY + TAIL
    path.write_bytes("# 我的启发式\n".encode("utf-8") + line.encode(encoding) + rest.encode("utf-8"))
    e = error(str(path))
    assert e.lineno == 2 and f"读不了的字节 {bad}）" in e.message, e.message


def test_bom_at_start_and_crlf_are_fine(tmp_path):
    # 记事本的 BOM（文件开头）和 Windows 换行：照样读，行号不变
    path = write(tmp_path, "\ufeff" + (HEAD + BODY + TAIL).replace("\n", "\r\n"))
    h = read_heuristic(path)
    assert h.program == GOOD and [r.line for r in h.program.rules] == [6] and h.warnings == ()


@pytest.mark.parametrize("old, new, words", [
    ("    if M <= 16:", "    if M <= 16：", ["全角", "'：'", "':'"]),
    ("    if M <= 16:", "    if M\u00a0<= 16:", ["不换行空格", "普通空格"]),
    ("    if M <= 16:", "    if M <= 16\ufeff:", ["BOM", "删掉"]),
    ("group=1)", "group=1）", ["全角", "'）'", "')'"]),
    ("BN=64, ", "BN=64，", ["全角", "'，'", "','"]),
])
def test_lookalike_characters(tmp_path, old, new, words):
    # 全角标点、不换行空格、代码中间的 BOM：第几行、是哪个字符、该敲什么
    path = write(tmp_path, HEAD + BODY.replace(old, new, 1) + TAIL)
    e = error(path)
    line = 1 + (HEAD + BODY.replace(old, new, 1)).split("\n").index(next(x for x in BODY.replace(old, new, 1).split("\n") if new in x))
    assert e.lineno == line and all(w in e.message for w in words), e.message


@pytest.mark.parametrize("body, line, words", [
    ("    if M <= 0:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n", 6, "M <= 0"),
    ("    if M <= 4096 and N <= 8192:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
     "    if M <= 16 and N <= 4096:\n        return Config(BM=64, BN=128, BK=64, warps=4, stages=3, group=8)\n", 8, "第 6 行"),
    ("    if True:\n        return Config(BM=64, BN=128, BK=64, warps=4, stages=3, group=8)\n", 6, "if True"),
])
def test_rules_that_do_nothing_are_warned(tmp_path, body, line, words):
    # 读得进来、但不起作用的规则：一条提醒，"文件:行: 话"，行号是那条规则的 if
    path = write(tmp_path, HEAD + body + BODY + TAIL)
    h = read_heuristic(path)
    name = display_path(path)
    assert [w for w in h.warnings if w.startswith(f"{name}:{line}: ")], h.warnings
    assert any(words in w for w in h.warnings)


def test_the_lecture_expert_fits_an_80_column_editor():
    """学生在 80 列的编辑器里打开 expert_heuristic.py（发下去时是讲义专家的一份拷贝，只有开头一行不同）；删了标记时
    04、06 还会把整个文件照原样印出来（代码行不折）。只查钉住的那份：学生改过的文件不归这个测试管。"""
    with open(EXPERT_FILE, encoding="utf-8") as f:
        wide = [(n, line) for n, line in enumerate(f.read().split("\n"), 1) if display_width(line) > 80]
    assert wide == [], wide


@pytest.mark.parametrize("drop", ["START", "END"])
def test_a_missing_marker_says_which_line_to_add_back(tmp_path, drop):
    # 学生报过：删了一行标记，信息只说"有……却没有……"，没说怎么办
    text = "".join(line for line in (HEAD + BODY + TAIL).splitlines(keepends=True) if f"EVOLVE-BLOCK-{drop}" not in line)
    e = error(write(tmp_path, text))
    assert f"补上一行 # EVOLVE-BLOCK-{drop}" in e.message and "成对" in e.message, e.message


def test_markers_in_the_wrong_order_say_so(tmp_path):
    # 审读报过：两行标记的顺序反了（END 在 def 前面、START 在最后一行后面），信息说"有 START 却没有 END，在最后一行
    # 后面补上一行 END"——文件里明明有 END，照着补上一行还是同一句话
    text = (HEAD + BODY + TAIL).replace("# EVOLVE-BLOCK-START", "@@").replace("# EVOLVE-BLOCK-END", "# EVOLVE-BLOCK-START")
    text = text.replace("@@", "# EVOLVE-BLOCK-END")
    lines = text.split("\n")
    end, start = lines.index("# EVOLVE-BLOCK-END") + 1, lines.index("# EVOLVE-BLOCK-START") + 1
    e = error(write(tmp_path, text))
    assert e.lineno == start and f"第 {end} 行" in e.message, e
    assert "顺序反了" in e.message and "却没有" not in e.message, e.message


@pytest.mark.parametrize("start,end", [("# EVOLVE-BLOCK-START", "# EVOLVE-BLOCK-END"),
                                       ("#EVOLVE-BLOCK-START", "  #  EVOLVE-BLOCK-END  （到这里）")])
def test_source_view_lists_the_block_parse_reads(tmp_path, start, end):
    # 01、06 印的原文从 parse 认的那两行标记起止（parse 也认 "#EVOLVE-BLOCK-START"、行尾带说明的标记）
    from evolve.problem import source_view
    text = (HEAD + BODY + TAIL).replace("# EVOLVE-BLOCK-START", start).replace("# EVOLVE-BLOCK-END", end)
    view = source_view(write(tmp_path, text))
    assert view.marked and view.lines[0][1] == start and view.lines[-1][1] == end, view.lines
    assert [n for n, _ in view.lines] == list(range(view.lines[0][0], view.lines[-1][0] + 1))
    assert parse(text) == GOOD
    bare = source_view(write(tmp_path, "".join(l for l in text.splitlines(True) if "EVOLVE-BLOCK" not in l), name="b.py"))
    assert not bare.marked and bare.lines[0][0] == 1 and bare.lines[-1][1].strip().startswith("return Config")


def test_ignored_code_is_warned(tmp_path):
    # 第二个 EVOLVE 块、标记外面的 def choose_config：不会被读，要提醒（说明文字里写的 def 不算）
    extra = ('\n"""说明里写着\ndef choose_config(M, N, K):\n不算"""\n\n'
             "def choose_config(M, N, K):\n    return Config(BM=64, BN=64, BK=64, warps=4, stages=3, group=8)\n\n"
             "# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n"
             "    return Config(BM=64, BN=64, BK=64, warps=4, stages=3, group=8)\n# EVOLVE-BLOCK-END\n")
    text = HEAD + BODY + TAIL + extra
    h = read_heuristic(write(tmp_path, text))
    lines = text.split("\n")
    outside_def = lines.index("def choose_config(M, N, K):", 12) + 1
    second = lines.index("# EVOLVE-BLOCK-START", 10) + 1
    got = {int(w.split(":")[1]) for w in h.warnings}
    assert h.program == GOOD and got == {outside_def, second}
    assert any("第二个 EVOLVE 块" in w for w in h.warnings) and any("外面" in w for w in h.warnings)


def test_an_import_between_the_markers_is_warned_not_silently_ignored(tmp_path):
    """学生报过：EVOLVE 块里写 import math，04 一声不吭地跑完。程序只被读、不被执行：提醒这行不起作用（行号是它的）。
    没有标记的文件（整个文件都读）开头的 from kernel_lab import Config 是正常的，不提醒。"""
    block_at = (HEAD + BODY + TAIL).split("\n").index("# EVOLVE-BLOCK-START")
    lines = (HEAD + BODY + TAIL).split("\n")
    lines[block_at + 1:block_at + 1] = ["import math", "from os import path"]
    h = read_heuristic(write(tmp_path, "\n".join(lines)))
    assert h.program == GOOD
    got = {int(w.split(":")[1]): w for w in h.warnings}
    assert set(got) == {block_at + 2, block_at + 3} and all("import 不起作用" in w for w in got.values()), h.warnings
    bare = "".join(l for l in (HEAD + BODY + TAIL).splitlines(True) if "EVOLVE-BLOCK" not in l)
    assert "import" in bare and read_heuristic(write(tmp_path, bare, name="b.py")).warnings == ()
    # 函数里面的 import 是错（学生报过：以前说"import 只能写在函数外面"，挪出去又被说"不起作用、可以删掉"）：
    # 两处说的是同一件事——删掉它
    inside = write(tmp_path, HEAD + "    import math\n" + BODY + TAIL, name="c.py")
    e = error(inside)
    assert e.lineno == 6 and "DSL 用不到 import" in e.message and "删掉这一行" in e.message, e.message


def test_launch_errors_still_raised(tmp_path):
    # 启动不了的分支：还是 ProgramError，行号是那个分支（和以前一样）
    path = write(tmp_path, HEAD + BODY.replace("BM=128, BN=128", "BM=256, BN=128") + TAIL)
    e = error(path)
    assert e.lineno == 8 and "不能启动" in e.message


@pytest.mark.parametrize("body, line", [
    (BODY.replace("BM=16, BN=64", "BM=48, BN=64"), 7),                          # if 一行、return 下一行：改的是 return 那行
    ("    if M <= 16: return Config(BM=48, BN=64, BK=128, warps=4, stages=4, group=1)\n"
     "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n", 6),   # 写在同一行
    ("    if M <= 16:  # decode\n        # 小块\n        return Config(\n            BM=48, BN=64, BK=128,\n"
     "            warps=4, stages=4, group=1)\n"
     "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n", 8),   # 中间有注释、配置跨行
])
def test_a_branch_that_cannot_launch_is_reported_on_its_return_line(tmp_path, body, line):
    # 学生报过：把 return 那行的 BM 改成 48，错误却指着上面 if 那一行（写错字段的解析错误指的是 return 那行）
    e = error(write(tmp_path, HEAD + body + TAIL))
    assert e.lineno == line and "BM=48" in e.message and "不能启动" in e.message


def test_a_file_outside_the_current_directory_is_named_by_its_absolute_path(tmp_path, monkeypatch):
    # 06 /dev/null 曾经印成 ../../../dev/null:1：当前目录外面的文件写绝对路径，里面的写相对路径
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.py").write_text("x = 1\n", encoding="utf-8")
    assert display_path(str(tmp_path / "h.py")) == "h.py"
    assert display_path("/dev/null") == "/dev/null"
    # 学生报过：06 ../gbk_mine.py 说的是 /tmp/…/gbk_mine.py:2：上一层目录里的照他敲的写
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert display_path("../h.py") == os.path.join("..", "h.py")
    assert display_path(str(tmp_path / "h.py")) == os.path.join("..", "h.py")
    assert display_path("../../x.py") == os.path.abspath("../../x.py")
    with pytest.raises(ProgramError) as e:
        load_heuristic("/dev/null")
    assert str(e.value).startswith("/dev/null:")


def test_a_missing_file_is_said_in_the_students_words(tmp_path):
    """学生报过：06 nonexist.py 的那句话结尾是英文的"（No such file or directory）"。"""
    from evolve.problem import load_or_explain
    _, msg = load_or_explain(str(tmp_path / "nonexist.py"))
    assert "没有这个文件" in msg and "No such" not in msg and "\n" not in msg


def test_a_block_pasted_with_its_markers_between_the_markers_is_warned_about(tmp_path):
    # 学生报过：README 练习那段（自带两行标记）贴进了原来的两行标记之间，文件成了 START START … END END，一声不吭
    from conftest import LECTURE_EXPERT                            # 讲义的那份（学生改他的文件不影响这个测试）
    expert = open(LECTURE_EXPERT, encoding="utf-8").read()
    head, rest = expert.split("# EVOLVE-BLOCK-START\n", 1)
    body, tail = rest.split("# EVOLVE-BLOCK-END", 1)
    path = tmp_path / "doubled.py"
    path.write_text(head + "# EVOLVE-BLOCK-START\n# EVOLVE-BLOCK-START\n" + body + "# EVOLVE-BLOCK-END\n"
                    + "# EVOLVE-BLOCK-END" + tail, encoding="utf-8")
    h = read_heuristic(str(path))
    said = " ".join(h.warnings)
    start = head.count("\n") + 2                                   # 第二行 START 的行号
    assert f":{start}: 这是块里面又一行 # EVOLVE-BLOCK-START" in said, h.warnings
    assert "多余" in said and len(h.warnings) == 2, h.warnings
    assert h.program == read_heuristic(LECTURE_EXPERT).program     # 读出来的程序照旧
