"""测试会话的收尸人：测试会话不管怎样结束（跑完、失败、Ctrl-C、pytest-timeout，还是 pytest 被 SIGKILL），它起的每个
进程都跟着结束。conftest 在会话一开始启动它（自己的会话，终端的 Ctrl-C 打不到它）：

    python tests/reaper.py TOKEN PYTEST_PID [SESSION_TMP]

conftest 在 os.environ 里设了 TESTS_SESSION=TOKEN（每个会话一个新的随机值），测试起的进程（脚本、预热过的解释器
和它 fork 出来的、后台 worker、孤儿）都从环境里继承了它：/proc/PID/environ 是进程启动时的环境，进程自己改 os.environ
也改不掉。收尸人的标准输入是 conftest 那头的管道。它读到

  - 一行 "sweep"：马上扫一遍（杀掉所有带这个记号的进程，PYTEST_PID 和自己除外），回一行 "done"，接着等；
  - 文件结束（pytest 退出了，或者被杀了——内核替它关上管道）：扫到连着两遍都没有再看见，删掉会话的临时目录
    SESSION_TMP（conftest 建的 tests-session-*：会话和它起的进程的临时文件都在里面），然后退出。

一遍：读 /proc 里每个进程的 environ，带着 TESTS_SESSION=TOKEN 的发 SIGKILL。扫几遍，是因为杀的同时可能有进程正在
fork（进程池补 worker）。只看记号、不看父子关系：脚本的后台 worker 被过继给 init、或者自己 setsid 了也找得到。
pytest 自己 fork 出来的进程（不 exec，/proc 里还是 pytest 启动时的环境，没有记号）不归这里管：conftest 用
PR_SET_PDEATHSIG 让它们随 pytest 一起死。没有 /proc 的系统（macOS）上这里什么也不做。只用标准库，不 import numpy。
"""

import os
import signal
import sys
import time

VAR = "TESTS_SESSION"


def marked(token: str) -> list[int]:
    """带着这个会话记号的进程（自己和 pytest 除外）。"""
    mark = f"{VAR}={token}".encode()
    me, pytest = os.getpid(), int(sys.argv[2])
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (me, pytest):
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:                                         # 已经结束了，或者不是我们的进程
            continue
        if mark in env.split(b"\0"):
            out.append(int(name))
    return out


def sweep(token: str, quiet_rounds: int = 1, limit: float = 5.0) -> None:
    """杀掉带记号的进程，直到连着 quiet_rounds 遍没再看见（最多 limit 秒）。"""
    if not os.path.isdir("/proc"):
        return
    end = time.monotonic() + limit
    quiet = 0
    while quiet < quiet_rounds and time.monotonic() < end:
        found = marked(token)
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        quiet = 0 if found else quiet + 1
        if found or quiet < quiet_rounds:
            time.sleep(0.05)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    token = sys.argv[1]
    while line := sys.stdin.readline():
        if line.strip() == "sweep":
            sweep(token)
            sys.stdout.write("done\n")
            sys.stdout.flush()
    sweep(token, quiet_rounds=2)
    if len(sys.argv) > 3 and os.path.basename(sys.argv[3]).startswith("tests-session-"):   # 只删 conftest 建的那种
        import shutil
        shutil.rmtree(sys.argv[3], ignore_errors=True)


if __name__ == "__main__":
    main()
