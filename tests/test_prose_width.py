"""Prose printed to a file or pipe is wrapped at 100 columns like every other sentence (README: 重定向到文件时固定
100 列); only table rows and verbatim code/prompt text may be wider. Seen before: lecture10/01 --smem printed its
result as one 170-column line, 05's "划分：…" line was 121 columns, 04's "最好的程序：…" line 124."""

import pytest

from console import PIPE_WIDTH, display_width
from conftest import run_script


def is_prose(line):
    """A sentence, not a table row: no run of two spaces after the indentation (table columns are separated by two)."""
    body = line.strip()
    return bool(body) and "  " not in body and not body.startswith(("#", "if ", "return ", "def "))


CASES = [
    ("lecture10/01_config_space.py", ["--smem", "166912"]),
    ("lecture14/04_alphaevolve_tiling.py", ["--budget", "30", "--seeds", "1", "--jobs", "1"]),
    ("lecture14/05_ablations.py", ["--budget", "20", "--seeds", "1", "--jobs", "1"]),
]
# 管道里的运行本来就不上色（console：只有标准输出是终端时才上色），不用再设 NO_COLOR：和别的测试的同一条命令是
# 同一次运行（conftest.run_script 的缓存，键里有环境），不为多出来的一个环境变量另跑一次
PREFETCH = [(script, *args) for script, args in CASES]   # conftest：后台先跑


@pytest.mark.parametrize("script, args", CASES)
def test_prose_lines_fit_in_100_columns(script, args):
    r = run_script(script, *args, timeout=120)
    assert r.returncode == 0, r.stderr
    wide = [line for line in r.stdout.splitlines() if is_prose(line) and display_width(line) > PIPE_WIDTH]
    assert not wide, wide
