"""lecture01/console 在真终端里：折行宽度取终端的列数，限制在 60–160 列（只测过管道的 100 列不够）。
一部分用假的终端（isatty 为真、COLUMNS 给列数），一部分在真的伪终端（pty）里跑，列数由内核的窗口大小给出。"""

import io
import os
import re
import sys

import pytest

from conftest import run_in_pty
from printed import continued_commands, unfold

from console import display_width, print_header, print_observations, print_try, wrap_width

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = ("最优配置随形状变化很大：decode（M = 1、16）的时间几乎全花在读权重上，很多小块配置一样快；prefill 要 256×128 "
        "的大块、8 个 warp、4 级流水线，专家用的 128×128×64 / 4 warp / 3 级慢 30% 左右。") * 4


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def terminal(monkeypatch):
    """把标准输出换成一个"终端"，列数由 COLUMNS 给（shutil.get_terminal_size 先看它）。"""
    def columns(n):
        monkeypatch.setenv("COLUMNS", str(n))
        out = FakeTerminal()
        monkeypatch.setattr(sys, "stdout", out)
        return out
    return columns


@pytest.mark.parametrize("columns, expected", [(20, 60), (59, 60), (60, 60), (87, 87), (100, 100), (133, 133),
                                               (160, 160), (161, 160), (400, 160)])
def test_wrap_width_follows_the_terminal_within_60_to_160(terminal, columns, expected):
    terminal(columns)
    assert wrap_width() == expected


@pytest.mark.parametrize("columns", [30, 72, 130, 250])
def test_observations_fill_but_never_exceed_the_terminal(terminal, columns):
    # 一段很长的观察：每行都不超过有效宽度，而且确实用到了它（折出来的行差不多一样宽，不是还按 100 列折）
    out = terminal(columns)
    limit = min(max(columns, 60), 160)
    print_observations([TEXT])
    lines = out.getvalue().split("\n")[2:-1]
    assert len(lines) > 1
    assert all(display_width(line) <= limit for line in lines), (limit, lines)
    assert max(map(display_width, lines)) >= limit - 3                # 行尾最多空出一个全角字符加一个标点的位置
    assert "".join(lines).replace(" ", "") == "1." + TEXT.replace(" ", "")   # 一个字不丢


@pytest.mark.parametrize("columns", [30, 130, 250])
def test_header_rule_and_try_command_in_a_terminal(terminal, columns):
    # 标题横线和标题一样宽，但在 60 列和终端宽度（最多 160）之间；"可以试试"的命令在窄终端里在参数之间续行，参数不折断
    out = terminal(columns)
    limit = min(max(columns, 60), 160)
    print_header("标" * 100)                                          # 200 列的标题
    print_header("短")
    command = "python3 lecture14/04_alphaevolve_tiling.py --budget 4000 --seeds 2 --jobs 2 --seed 3 " + "x" * 40
    print_try([(TEXT, command)])
    lines = out.getvalue().split("\n")
    rules = [line for line in lines if line and set(line) == {"="}]
    assert [len(r) for r in rules] == [limit, limit, 60, 60]
    text = "\n".join(lines)
    assert " " * 7 + command in unfold(text).split("\n")              # 缩进七格；续行拼回去就是原来的命令
    if 7 + len(command) > limit:                                       # 放不下：在参数之间按 shell 的续行折开
        assert continued_commands(text) and all(len(line) <= limit or "x" * 40 in line
                                                for line in continued_commands(text)[0].split("\n"))


PROBE = ("import sys; sys.path.insert(0, {lib!r}); from console import print_observations, wrap_width; "
         "print(wrap_width()); print_observations([{text!r}])")


def pty_lines(columns):
    """在一个 columns 列宽的伪终端里跑一小段打印观察的代码，返回它印的行（没有 COLUMNS 环境变量：列数来自终端本身）。"""
    p = run_in_pty(["-c", PROBE.format(lib=os.path.join(ROOT, "lecture01"), text=TEXT)], columns, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.split("\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
@pytest.mark.parametrize("columns, limit", [(40, 60), (120, 120), (300, 160)])
def test_real_terminal_width(columns, limit):
    lines = pty_lines(columns)
    assert int(lines[0]) == limit
    body = [line for line in lines[3:] if line]
    assert len(body) > 1 and all(display_width(line) <= limit for line in body)
    assert max(map(display_width, body)) >= limit - 3
    assert re.sub(r"\s", "", "".join(body)) == "1." + TEXT.replace(" ", "")
