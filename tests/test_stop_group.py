"""测试用的 conftest.stop_group：测试失败时（断言、超时）也不留下还在跑的进程——包括脚本已经退出、被过继给 init 的
后台 worker（它们不理 Ctrl-C、还占着管道，以前一个失败的测试留下的 worker 跑了 35 分钟）。"""
import os
import subprocess
import sys
import time

import pytest
from conftest import stop_group

pytestmark = pytest.mark.quiet      # 量时间（Ctrl-C、超时）：conftest 让它们最先跑（后台的优先级低）

# 孙进程像 worker 一样不理 Ctrl-C、一直忙，但有自己的期限（BUSY_LIMIT 秒），也盯着 pytest 的进程号（pytest 没了就走）：
# 以前 make test 被外面杀掉（finally 里的 stop_group 没机会跑），它占着一个核跑了两个半小时。
BUSY_LIMIT = 30
CHILD = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
pytest, limit = int(sys.argv[2]), float(sys.argv[3])
pid = os.fork()
if pid == 0:                                   # 孙进程：不理 Ctrl-C，忙到期限、或者 pytest 不在了
    end = time.monotonic() + limit
    while time.monotonic() < end:
        for _ in range(100000):
            pass
        try:
            os.kill(pytest, 0)
        except ProcessLookupError:
            break
    os._exit(0)
print(pid, flush=True)
time.sleep(60 if sys.argv[1] == "stay" else 0.1)
"""


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/stat") or not hasattr(os, "fork"), reason="要用 /proc 和 fork")
@pytest.mark.parametrize("parent", ["stay", "exit"])
def test_stop_group_kills_the_script_and_its_orphaned_workers(parent):
    p = subprocess.Popen([sys.executable, "-c", CHILD, parent, str(os.getpid()), str(BUSY_LIMIT)],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    worker = int(p.stdout.readline())
    try:
        if parent == "exit":
            p.wait(timeout=10)                     # 父进程走了，孙进程被过继出去，还在跑
        assert alive(worker)
    finally:
        stop_group(p)
    deadline = time.monotonic() + 2
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(worker) and p.returncode is not None


@pytest.mark.skipif(not os.path.exists("/proc/self/stat") or not hasattr(os, "fork"), reason="要用 /proc 和 fork")
def test_the_busy_grandchild_has_its_own_deadline_and_leaves_when_its_watched_pid_is_gone():
    # 没人杀它，它也会走：到了期限（这里 0.5 秒），或者它盯着的进程没了
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()                                    # 一个已经结束、收掉了的进程号（当作"pytest 没了"）
    for watched, limit in ((os.getpid(), 0.5), (gone.pid, 30)):
        p = subprocess.Popen([sys.executable, "-c", CHILD, "exit", str(watched), str(limit)], stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
        try:
            worker = int(p.stdout.readline())
            deadline = time.monotonic() + 10
            while alive(worker) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert not alive(worker), (watched, limit)
        finally:
            stop_group(p)
