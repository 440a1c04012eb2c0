"""lecture13/01_timing_model.py 当脚本跑：能跑完、三个演示都在、没有一句观察"本次不成立"、两次运行逐字节相同。"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "lecture13", "01_timing_model.py")
HEADERS = ("演示 1：屋顶线与时间拆解", "演示 2：每种效应一个实验", "演示 3：代价模型引导的调优")


def run_script(*args):
    """在 tests/ 目录下运行脚本（它自己找得到 sched_lab、kernel_lab 和 console）。"""
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__)), timeout=60)


@pytest.fixture(scope="module")
def first():
    return run_script()


def test_runs_and_has_three_demos(first):
    # 退出码 0；三个演示的标题都印出来了；结尾有"可以试试"
    assert first.returncode == 0, first.stderr
    for h in HEADERS:
        assert h in first.stdout, h
    assert "可以试试：" in first.stdout


def test_every_observation_holds(first):
    # 每句观察都在代码里检验过；在现在的模型上，没有一句印成"本次不成立"
    assert "本次不成立" not in first.stdout, [line for line in first.stdout.splitlines() if "本次不成立" in line]


def test_same_output_twice(first):
    # 同样的命令印出同样的字节；用时只印到 stderr，不进 stdout
    second = run_script()
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert "用时" not in first.stdout and "用时" in first.stderr
