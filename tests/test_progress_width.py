"""runner.progress：标准错误是终端时，比终端宽的一行按显示宽度（中文两列）折行、续行缩进两格；管道和重定向里原样一行
（日志、测试、grep 看到的都是一整行）。编号脚本在真的 80 列终端里连标准错误一起看，见 test_terminal_width.py。"""

import io

import pytest

import runner
from layout import display_width

LONG = "本讲的循环，种子 0：第    37 个提议：最好 1.106×，完整评估 30 个，跑了 1,382 次内核（83 列）"


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("cols", [40, 60, 80, 120])
def test_a_line_wider_than_the_terminal_is_folded_and_keeps_every_word(monkeypatch, cols):
    err = FakeTerminal()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", str(cols))
    runner.progress(LONG)
    lines = err.getvalue().rstrip("\n").split("\n")
    assert all(display_width(line) <= cols for line in lines), lines
    assert (len(lines) > 1) == (display_width(LONG) > cols)
    assert all(line.startswith("  ") for line in lines[1:])                 # 续行缩进两格
    assert "".join(line.strip() for line in lines).replace(" ", "") == LONG.replace(" ", "")


def test_a_pipe_gets_one_whole_line_however_long(monkeypatch):
    err = io.StringIO()                                                     # 不是终端
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "40")
    runner.progress(LONG * 3)
    assert err.getvalue() == LONG * 3 + "\n"


def test_a_short_line_on_a_terminal_is_unchanged(monkeypatch):
    err = FakeTerminal()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "80")
    runner.progress("OpenEvolve，种子 1：45/150 个提议")
    assert err.getvalue() == "OpenEvolve，种子 1：45/150 个提议\n"
