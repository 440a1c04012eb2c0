"""Ctrl-C：任何时候按下，脚本在约 1 秒内停下（后台的 worker 进程也停），标准错误只多一行"已中断。"，退出码 130，
没有 traceback。像终端那样把 SIGINT 发给整个进程组。还有：输出接到提前关掉的管道（| head）时安静地退出。"""

import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def alive(pid):
    """进程还在跑（不存在或是僵尸都算停了）。"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="要用 /proc 看子进程")
@pytest.mark.parametrize("script,wait", [("lecture14/04_alphaevolve_tiling.py", 0.2),     # 还在 import / 建时间表
                                         ("lecture14/04_alphaevolve_tiling.py", 1.2),     # 演示 2 / 3，后台进程在跑
                                         ("lecture14/05_ablations.py", 1.2),
                                         ("lecture13/01_timing_model.py", 0.3)])
def test_ctrl_c_stops_within_a_second_with_exit_130(script, wait):
    args = ["--budget", "100000"] if script.startswith("lecture14") else []
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, script), *args], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(wait)
    if p.poll() is not None:                         # 机器太快，还没按 Ctrl-C 就跑完了：这一例没有可测的
        p.communicate()
        pytest.skip(f"{script} 在 {wait} 秒内就跑完了")
    kids = children(p.pid)
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)                  # 终端的 Ctrl-C 发给整个前台进程组
    try:
        out, err = p.communicate(timeout=5)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    took = time.monotonic() - t0
    assert p.returncode == 130, err
    assert took < 2.0, took
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == "已中断。" and err.count("已中断。") == 1, err
    assert not any("Error" in line or "File \"" in line for line in lines), lines   # 之前只有进度行
    deadline = time.monotonic() + 1.0
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(k) for k in kids), kids
    if wait >= 1.0:
        assert kids, "这个时候应该有后台的 worker 进程"


def test_closed_pipe_is_quiet():
    p = subprocess.run(f"{sys.executable} lecture10/01_config_space.py | head -3", shell=True, cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert "演示 1" in p.stdout and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
