"""测试会话不管怎样结束，都不留下它起的进程（conftest 的收尸人 tests/reaper.py，和 pytest fork 出来的进程上的
PR_SET_PDEATHSIG）。以前一次被外面杀掉的 make test 留下了 test_stop_group 的忙循环孙进程，占着一个核跑了两个半小时。

做法：用真的 conftest（-p conftest）跑一个小的测试会话。里面的测试用各种办法起进程——预热过的解释器（前台和后台
预跑）、新起的解释器、自己的会话里的脚本和它被过继出去的孙进程（不理 Ctrl-C）、带进程池的脚本、pytest
自己 fork 出来的进程——然后故意不收拾。等它们都起来了，从外面结束这个会话：SIGKILL pytest、按 Ctrl-C（只发给
pytest 一个进程），或者测试自己失败。几秒之内，这个会话起的进程（它的子孙，以及环境里带它的记号的）一个都不剩。"""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SESSION_TMP, SOCKET_PATH_MAX, ahead, base_env, requested_nice, session_dir, stop_group

TESTS = os.path.dirname(os.path.abspath(__file__))

# 起的进程都不理 Ctrl-C（像脚本的 worker），各有自己的期限（60 秒）：这里的机制坏了，它们也不会一直留着（外面的
# 测试最后也会杀掉剩下的）。它们睡着而不是忙着：对收尸人是一样的（SIGKILL 不管进程在做什么），这台 2 核的机器却
# 不用在测试里多转几个核几秒钟。
INNER = r'''
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time

from conftest import run_script

PIDS = os.environ["INNER_PIDS"]
BUSY = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
time.sleep(60)
"""
ORPHAN = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
if os.fork() == 0:
    with open(sys.argv[1], "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(60)
    os._exit(0)
"""
POOL = """
import multiprocessing as mp, os, signal, sys, time
def busy(_):
    with open(sys.argv[1], "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(60)
if __name__ == "__main__":
    pool = mp.get_context("fork").Pool(2, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    pool.map_async(busy, range(2))
    time.sleep(60)
"""
EXPECTED = 7

PREFETCH = [("-c", BUSY, PIDS)]            # 后台的预跑线程也起一个


def _busy():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(PIDS, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(60)


def test_starts_processes_and_never_cleans_up():
    threading.Thread(target=run_script, args=("-c", BUSY, PIDS), kwargs=dict(instance=2), daemon=True).start()
    threading.Thread(target=run_script, args=("-c", BUSY, PIDS), daemon=True,       # 改了 PYTHONHASHSEED：新的解释器
                     kwargs=dict(env={**os.environ, "PYTHONHASHSEED": "1"})).start()
    subprocess.Popen([sys.executable, "-c", ORPHAN, PIDS], start_new_session=True)
    subprocess.Popen([sys.executable, "-c", POOL, PIDS], start_new_session=True)
    mp.get_context("fork").Process(target=_busy, daemon=True).start()
    while True:
        with open(PIDS) as f:
            if len(f.read().split()) >= EXPECTED:
                break
        time.sleep(0.05)
    with open(os.environ["INNER_READY"], "w") as f:
        f.write(os.environ["TESTS_SESSION"])
    deadline = time.monotonic() + 60                 # 等外面数完活着的进程再失败：不然外面数的时候会话已经在收尾了
    while not os.path.exists(os.environ["INNER_GO"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    if os.environ["INNER_END"] == "fail":
        assert False, "这个测试失败了，进程还在"
    time.sleep(60)
'''


def stat(pid):
    """(启动时刻, 状态)；进程不在了是 None。启动时刻用来认出同一个进程（进程号可能被重用）。"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[19]), fields[0]


def ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def descendants(root):
    """root 的子孙（按 /proc 里的父进程号）。"""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            children.setdefault(ppid(int(name)), []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def marked(token):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if f"TESTS_SESSION={token}".encode() in f.read().split(b"\0"):
                        out.append(int(name))
            except OSError:
                pass
    return out


def living(procs):
    """procs（{进程号: 启动时刻}）里还活着的（僵尸不算：它已经结束了，只是还没被收掉）。"""
    out = []
    for pid, start in procs.items():
        s = stat(pid)
        if s is not None and s[0] == start and s[1] != "Z":
            out.append(pid)
    return out


def end_a_session(end):
    """跑一个内层测试会话，等它起的进程都起来了，按 end 结束它（"SIGKILL"、"Ctrl-C"，或者 "fail"：测试自己失败、
    会话照常收尾），再等最多 5 秒。返回 (结束前活着的进程数, 还活着的进程的命令行, 还带着记号的进程, 内层的输出, 留下的临时目录)。
    剩下的进程返回之前杀掉（这个测试失败了也不留下它们）。"""
    tmp = session_dir("inner")
    with open(os.path.join(tmp, "test_inner.py"), "w", encoding="utf-8") as f:
        f.write(INNER)
    pids, ready, go = os.path.join(tmp, "pids"), os.path.join(tmp, "ready"), os.path.join(tmp, "go")
    open(pids, "w").close()
    env = dict(base_env(), PYTHONPATH=TESTS, INNER_PIDS=pids, INNER_READY=ready, INNER_GO=go, INNER_END=end,
               TMPDIR=tmp)                               # 内层会话的临时目录建在这里：结束以后看它删掉了没有
    for switch in ("TESTS_NO_ZYGOTE", "TESTS_NO_PREFETCH"):   # 内层总是用整套机器（外层开着调试开关时也一样）
        env.pop(switch, None)
    # 后台线程里跑时优先级低一些（和 conftest 请预热过的解释器跑的脚本一样）：os.nice 之后 exec 成 pytest，进程号不变
    nice = [sys.executable, "-c", "import os, sys; os.nice(int(sys.argv[1])); os.execv(sys.executable, sys.argv[2:])",
            str(requested_nice()), sys.executable]
    log = open(os.path.join(tmp, "output"), "w+b")       # 不用管道：留下的进程拿着管道时，读它会一直等下去
    p = subprocess.Popen([*nice, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
                          "-p", "conftest", "-o", "timeout=120", os.path.join(tmp, "test_inner.py")], cwd=tmp, env=env,
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs = {}
    try:
        deadline = time.monotonic() + 90
        while not os.path.exists(ready) and p.poll() is None and time.monotonic() < deadline:
            for pid in descendants(p.pid):               # 一边等一边记下它的子孙（有的进程一会儿就把自己过继出去）
                procs.setdefault(pid, (stat(pid) or (None,))[0])
            time.sleep(0.05)
        if not os.path.exists(ready):
            p.kill()
            p.wait()
            return 0, ["没有准备好"], [], output(log), []
        time.sleep(0.1)
        with open(ready) as f:
            token = f.read()
        with open(pids) as f:
            reported = [int(x) for x in f.read().split()]
        for pid in [*descendants(p.pid), *marked(token), *reported]:
            procs.setdefault(pid, (stat(pid) or (None,))[0])
        procs = {pid: start for pid, start in procs.items() if start is not None}
        before = len(living(procs))
        open(go, "w").close()                            # 数完了：end == "fail" 时里面的测试这才失败
        if end == "SIGKILL":
            p.kill()
        elif end == "Ctrl-C":
            p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
        deadline = time.monotonic() + 5
        while living(procs) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = []
        for pid in living(procs):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    left.append(f.read()[:80])
            except OSError:
                pass
        temp = sorted(name for name in os.listdir(tmp) if name.startswith(("tests-session-", "zygote-", "tests-")))
        return before, left, marked(token), output(log), temp
    finally:
        for pid in living(procs):                        # 这个测试失败了也不留下它们
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if p.poll() is None:
            p.kill()
        p.wait()
        log.close()


def output(log) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")


# 三个内层会话在后台先跑（conftest 的 PREFETCH）：它们大半时间在等，和前台的测试同时进行
@ahead
def killed():
    return end_a_session("SIGKILL")


@ahead
def interrupted():
    return end_a_session("Ctrl-C")


@ahead
def failed():
    return end_a_session("fail")


ENDS = {"SIGKILL": killed, "Ctrl-C": interrupted, "fail": failed}
PREFETCH = list(ENDS.values()) if os.path.isdir("/proc") and hasattr(os, "fork") else []


@pytest.mark.skipif(not os.path.isdir("/proc") or not hasattr(os, "fork"), reason="要用 /proc 和 fork（Linux）")
@pytest.mark.parametrize("end", list(ENDS))
def test_a_test_session_leaves_no_process_behind_however_it_ends(end):
    before, left, still_marked, output, temp = ENDS[end]()
    # 7 个不理 Ctrl-C 的，加上收尸人、脚本本身……和预热过的解释器——TMPDIR 长时里面那次会话没有它：它的 socket 在
    # 这次会话的临时目录下面的 tests-session-XXXXXXXX/zygote-XXXXXXXX/s（多 41 字节），超过上限就起不来（conftest._start_zygote）
    inner_socket = len(os.fsencode(SESSION_TMP)) + len("/tests-session-XXXXXXXX/zygote-XXXXXXXX/s")
    assert before >= (10 if inner_socket <= SOCKET_PATH_MAX else 9), output[-3000:]
    assert left == [] and still_marked == [], (left, still_marked)
    # 临时文件也不留下（助教报过：被杀掉的会话在 /tmp 里留下 zygote-*、tests-svg07-*）：会话的临时目录由收尸人删掉
    assert temp == [], temp
    if end != "SIGKILL":
        from conftest import INTERRUPTED_SAID                # Ctrl-C：pytest 那段 KeyboardInterrupt 换成了这一句
        assert ("1 failed" if end == "fail" else INTERRUPTED_SAID) in output, output[-3000:]


def test_a_session_that_stops_at_a_usage_error_leaves_no_temporary_directory(tmp_path):
    # 自己量到的：pytest --lf -p no:cacheprovider（参数冲突，退出码 4）在 /tmp 里留下一个空的 tests-session-*：
    # conftest 在 import 时建了它，收尸人还没起来 pytest 就退出了
    p = subprocess.Popen([sys.executable, "-m", "pytest", "-q", os.path.join(ROOT, "tests"), "--no-such-option"],
                         cwd=ROOT, env=dict(base_env(), TMPDIR=str(tmp_path)), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=120)
    finally:
        stop_group(p)
    assert p.returncode == 4, err.decode(errors="replace")[-2000:]
    assert not [name for name in os.listdir(tmp_path) if name.startswith("tests-session-")]
