"""runner.say（报错、提醒）和 runner.progress（进度）：标准错误是终端时，比终端宽的一行按显示宽度（中文两列）折行、续行缩进两格；管道和重定向里原样一行
（日志、测试、grep 看到的都是一整行）。编号脚本在真的 80 列终端里连标准错误一起看，见 test_terminal_width.py。"""

import io
import re
import sys

import pytest

import runner
from conftest import only_in, run_in_pty, run_script
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


def test_a_multi_line_message_is_folded_line_by_line(monkeypatch):
    err = FakeTerminal()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "60")
    runner.say("短的一行\n" + LONG)
    lines = err.getvalue().rstrip("\n").split("\n")
    assert lines[0] == "短的一行" and len(lines) > 2 and all(display_width(line) <= 60 for line in lines)


# 学生报过：参数错了、没装 OpenEvolve 时的那句话在 80 列终端里有 100–400 列宽，终端把它从字中间截断
ERRORS = [("lecture14/04_alphaevolve_tiling.py", "--knob", "FOO=1"),
          ("lecture14/05_ablations.py", "--budget", "0"),
          ("lecture14/02_llm_proposal.py", "--llm", "ftp://example.com/v1", "--model", "x"),
          ("lecture14/07_openevolve.py", "--jobs", "0")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
@pytest.mark.parametrize("args", ERRORS, ids=[a[0].split("/")[1][:2] + " " + a[1] for a in ERRORS])
def test_an_error_sentence_fits_an_80_column_terminal_and_stays_one_line_in_a_pipe(args):
    term = run_in_pty(list(args), 80, {"NO_COLOR": "1"}, timeout=60, stderr_too=True)
    piped = run_script(*args, timeout=60)
    assert term.returncode == piped.returncode == 2, (term.stdout, piped.stderr)
    assert len(piped.stderr.strip().split("\n")) == 1 and display_width(piped.stderr.strip()) > 80
    lines = term.stdout.strip().split("\n")
    assert len(lines) > 1 and all(display_width(line) <= 80 for line in lines), lines
    assert "".join(line.strip() for line in lines).replace(" ", "") == piped.stderr.strip().replace(" ", "")


@pytest.mark.parametrize("done, total, elapsed, said", [
    (0, 10, 30.0, ""), (10, 10, 30.0, ""), (5, 10, 2.0, ""),              # 还没做完一个、做完了、刚开始：不说
    (5, 10, 4.0, "，还要几秒"), (1, 10, 4.0, "，还要约 35 秒"), (1, 999, 4.0, "，还要约 67 分钟"),
    (1, 999, 6.0, "，还要约 1.7 小时")])
def test_long_runs_say_how_long_is_left(done, total, elapsed, said):
    # --seeds 999 这样的运行要好几分钟：进度行按到现在为止平均一次的用时说还要多久
    from runner import time_left
    assert time_left(done, total, 100.0, now=100.0 + elapsed) == said


def test_the_time_left_fits_the_progress_lines_of_a_long_run():
    # 05 --seeds 999 的进度行加上"还要多久"也放得进 80 列
    from console import display_width
    from runner import time_left
    for line in (f"999/1998 次进化跑完（2 个进程{time_left(1, 1998, 0.0, now=9.0)}）",
                 f"演示 3：9999 次进化做完了 1 次{time_left(1, 9999, 0.0, now=9.0)}",
                 f"  做完 1/9999 次进化{time_left(1, 9999, 0.0, now=9.0)}"):
        assert "小时" in line and display_width(line) <= 80, line


def test_count_progress_is_at_most_one_line_a_second_and_always_says_the_end(monkeypatch):
    """学生报过：03 一秒多跑完，标准错误上刷了 21 行"做完 k/21 次进化"，80 列终端里一屏都是它。"做完几次"的进度行
    现在最多每秒一行（runner.progress_gate），做完最后一次的那行总说。"""
    now = [100.0]
    only_in(monkeypatch, runner, "time", monotonic=lambda: now[0])        # 不改整个进程的时钟（后台线程在用）
    due = runner.progress_gate()
    said = []
    for done in range(1, 22):
        now[0] += 0.3                                          # 每 0.3 秒做完一次
        if due(done, 21):
            said.append(done)
    assert said == [4, 8, 12, 16, 20, 21]                     # 1.2、2.4、3.6、4.8、6.0 秒，和最后一次
    due = runner.progress_gate()
    assert [due(k, 3) for k in (1, 2, 3)] == [False, False, True]   # 一眨眼跑完：只说做完了


@pytest.mark.parametrize("script, word", [("lecture14/03_cascade_and_database.py", "次进化"),
                                          ("lecture14/05_ablations.py", "次进化跑完")])
def test_a_run_of_a_few_seconds_prints_a_few_progress_lines(script, word):
    r = run_script(script)
    lines = [line for line in r.stderr.splitlines() if word in line]
    seconds = float(re.search(r"（用时 ([\d.]+) 秒）", r.stderr).group(1))
    assert r.returncode == 0 and 1 <= len(lines) <= seconds + 2, r.stderr


@pytest.mark.parametrize("seconds, said", [(0.01, "（用时不到 0.1 秒）"), (0.049, "（用时不到 0.1 秒）"),
                                           (0.051, "（用时 0.1 秒）"), (2.34, "（用时 2.3 秒）")])
def test_the_time_line_never_says_zero_seconds(monkeypatch, seconds, said):
    # 学生报过：01 印"（用时 0.0 秒）"，墙钟明明约 0.8 秒（差的是解释器启动和 import，用时从 main 开始算）
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    only_in(monkeypatch, runner, "time", perf_counter=lambda: 100.0 + seconds)
    runner.took(100.0)
    assert err.getvalue() == "\n" + said + "\n"
