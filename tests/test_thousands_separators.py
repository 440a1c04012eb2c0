"""第 10 讲 01 和第 13 讲 01 印的个数，1,000 以上都带千分位，和同一屏上的 65,536、232,448 B、表格里的整数一样。
学生审读报过：10/01 印"6400 个组合、3744 个能启动"、表里"1280""2656"、观察里"不到 1024"，旁边的上限却是"1,024""65,536"；
13/01 同一次运行里既有"穷举 3,744 个配置"又有"88 个形状 × 3744 个配置"。

不加千分位的只有学生照着敲的、或者是尺寸的数（东西的个数加逗号；要照抄的值和尺寸按敲的样子印）：
要照抄的命令行（python3 …、--smem 166912）、矩阵的尺寸（28672×4096、N = 1280、M=8192、"盖住 4096 行"）、
issue 号（triton#5572）。图的刻度也带千分位（13/01 屋顶线的 1,000 ┤、横轴的 10,000）：和旁边表里的数一个印法
（审读报过：04 --budget 4000 的表里"第几个提议"是 1,235，下面那张图的横轴却是 1000 1500 2000）。"""

import re

import pytest

from conftest import run_script

RUNS = [("lecture10/01_config_space.py",), ("lecture10/01_config_space.py", "--smem", "166912"),
        ("lecture10/01_config_space.py", "--gpu", "a100"),
        ("lecture13/01_timing_model.py",), ("lecture13/01_timing_model.py", "--gpu", "a100")]
PREFETCH = RUNS

BARE = re.compile(r"(?<![\d,.])\d{4,}(?![\d,]|\.\d)")      # 4 位以上、不在 1,024 或 1,924.15 里面的整数
BEFORE = re.compile(r"×$"             # 尺寸：28672×4096、128×N×4096
                    r"|\b[MNK] ?= ?$"   # 尺寸：N = 1280、M=8192、K = 8192
                    r"|#$"              # issue 号
                    r"|--[\w-]+ $")     # 命令行的值：--smem 166912
AFTER = re.compile(r"^×"               # 尺寸：28672×4096
                   r"|^ ?行")           # 沿 M 的尺寸："BM = 256 盖住 4096 行"


def bare_counts(stdout: str) -> list[str]:
    """stdout 里没带千分位、又不是要照敲的值或尺寸的 4 位以上整数（连同它所在的那一行）。"""
    found = []
    for line in stdout.splitlines():
        text = line.strip()
        if text.startswith("python3 "):                                                   # 命令
            continue
        for m in BARE.finditer(line):
            before, after = line[max(0, m.start() - 16):m.start()], line[m.end():m.end() + 2]
            if not BEFORE.search(before) and not AFTER.search(after):
                found.append(f"{m[0]}：{text}")
    return found


@pytest.mark.parametrize("args", RUNS, ids=" ".join)
def test_counts_of_a_thousand_or_more_have_thousands_separators(args):
    r = run_script(*args)
    assert r.returncode == 0, r.stderr
    assert not bare_counts(r.stdout), (f"{' '.join(args)} 印的个数没带千分位（要照敲的值、尺寸不算）：\n"
                                       + "\n".join(bare_counts(r.stdout)))


def test_the_checker_tells_counts_from_dimensions_and_typed_values():
    # 这条测试能失败：以前的印法被认出来；尺寸、命令行的值、issue 号、已经带逗号的数不算
    old = ("演示 1：候选网格——6 个字段、6400 个组合、3744 个能启动\n"
           "warp 工作量  BM·BN/warps ≥ 256                        1280   20.0%\n"
           "  2. 也就是 512 个线程，不到 1024。\n"
           "     很少是瓶颈：88 个形状 × 3744 个配置里\n")
    assert [x.split("：")[0] for x in bare_counts(old)] == ["6400", "3744", "1280", "1024", "3744"]
    fine = ("8B gate_up M=8192  28672×4096  1,924.15\n"
            "  4. 70B/8 qkv M=128（N = 1280）要沿 K = 8192 独自走 128 步\n"
            "BM = 256 盖住 4096 行；（triton-lang/triton#5572）；加上 --smem 166912 看看\n"
            "       python3 lecture10/01_config_space.py --smem 166912\n"
            "1,000 ┤      ····\n      1               10             100             1,000          10,000\n"
            "6,400 个组合、3,744 个能启动、不到 1,024\n")
    assert bare_counts(fine) == []
    ticks = "1000 ┤      ····\n      1               10             100             1000           10000\n"
    assert [x.split("：")[0] for x in bare_counts(ticks)] == ["1000", "1000", "10000"]    # 以前的刻度
