"""测试用的"预热过的解释器"（fork server）：conftest.run_script 用它跑编号脚本，省掉每次启动 Python、import numpy
和课程模块的零点几秒（一次测试会话要跑两百来次脚本）。

    python tests/zygote.py SOCKET_PATH

它 import 好 numpy、脚本会用的标准库和课程模块（lecture01/10/13/14 里的），算好 88 个形状的时间，然后在 SOCKET_PATH
（Unix socket）上等请求。每个请求是一行 JSON {"args": [脚本, 参数...], "env": {...}, "cwd": "...", "nice": N}，
连同两个文件描述符（标准输出、标准错误要写到哪里）；N 是脚本的优先级要调低多少（conftest 的后台线程要的是 10，
前台是 0）。对每个请求 fork 一个管理进程，管理进程再 fork 出真正跑脚本的进程（它在自己的会话和进程组里，
和 subprocess.Popen(start_new_session=True) 一样），先回一行 "pid N"，脚本结束后回一行 "exit CODE"
（和 Popen.returncode 一样：被信号杀掉时是负的信号号），后面跟着它和它收掉的子进程用的 CPU 秒数。

跑脚本的进程尽量和 "python 脚本 参数..." 一样：sys.argv、sys.path[0]（脚本所在目录）、__main__ 里的 __file__、
工作目录、环境变量、信号处理、退出码（SystemExit、没接住的异常、Ctrl-C）、退出时的 threading / atexit 清理、
标准输出是终端时（conftest.run_in_pty 传来伪终端）按行缓冲。
课程模块 import 时读的环境变量（IMPORT_ENV）和这个进程启动时不同时，先把课程模块从 sys.modules 里拿掉，让脚本重新
import（evolve.problem 在 import 时读 MINI_ALPHAEVOLVE_EXPERT）；命令行上有 --gpu 时也这样（runner 在 import 时据它选 GPU，
kernel_lab 在 import 时读那块 GPU 的记录）。影响解释器启动本身的环境变量（PYTHON*、LANG、LC_*、
numpy / BLAS 的线程设置）不同的请求，conftest 不发到这里，照旧起新的子进程。

标准输入关掉（pytest 读不到的东西脚本也读不到）。这个进程的标准输入是 conftest 那头的管道：pytest 退出（哪怕是被
杀掉）时管道关上，这个进程也跟着退出。
"""

import json
import os
import select
import signal
import socket
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
LECTURES = [os.path.join(ROOT, d) for d in ("lecture01", "lecture10", "lecture13", "lecture14")]
BASE_PATH = [p for p in sys.path if os.path.abspath(p or ".") != TESTS]   # 一个新解释器的 sys.path 去掉脚本目录以后
START_ENV = dict(os.environ)
# 课程模块 import 时读的环境变量（evolve.problem 读专家文件，gpus 经 kernel_lab 读选哪块 GPU，runner 读"已经换过一次
# 解释器"的记号）：请求的环境里它们和这个进程启动时不同，课程模块才重新 import。别的变量（OPENAI_API_KEY、代理、
# COLUMNS、NO_COLOR……）课程模块到用的时候才读，fork 出来的进程照样看得见，不用花约 0.2 CPU 秒重新 import
# （一次测试会话里约 20 次运行是这样）。值是要重新 import 的模块所在的目录：专家文件只有第 14 讲的模块读，别的讲不
# import 第 14 讲（依赖只朝一个方向），所以只换第 14 讲的（console、kernel_lab、sched_lab 和算好的时间表留着；一次
# 会话里约 20 次运行换了专家文件）；None 是全部。tests/test_zygote.py 在一个新解释器里记下 import 这些模块时谁读了
# 哪些变量、别的讲有没有拿着第 14 讲的东西，对照这一行。
IMPORT_ENV = {"MINI_ALPHAEVOLVE_EXPERT": ("lecture14",), "MINI_ALPHAEVOLVE_GPU": None, "MINI_ALPHAEVOLVE_REEXEC": None}

# 脚本会用到的标准库和 numpy（import 一次，fork 出来的进程都有）
import argparse, contextlib, dataclasses, hashlib, http.client, math, multiprocessing  # noqa: E401,E402,F401
import multiprocessing.pool, random, shutil, ssl, statistics, tempfile, textwrap, threading, traceback  # noqa: E401,E402,F401
import unicodedata, urllib.request, atexit, io, hmac, secrets  # noqa: E401,E402,F401
import numpy, numpy.ma, numpy.random  # noqa: E401,E402,F401

sys.path[:0] = LECTURES
try:
    import console, runner, svg, kernel_lab, sched_lab, evolve, evolve.loop, evolve.openai_llm  # noqa: E401,F401
    # 88 个形状在讲义旋钮下的时间先算好（sched_lab 按形状和全部旋钮缓存，约 0.04 秒）：第 14 讲的脚本每次都要这张表，
    # fork 出来的进程直接用。改了旋钮（--knob）的运行查不到这些项，照常自己算；输出不受影响（tests/test_zygote.py）
    for _shape in evolve.all_shapes():
        sched_lab.time_valid(_shape.M, _shape.N, _shape.K)
except Exception:                                          # noqa: BLE001  import 不了的，脚本自己去 import、报错
    pass
sys.path[:] = BASE_PATH
PROJECT = {name for name, m in sys.modules.items()
           if any(os.path.abspath(getattr(m, "__file__", None) or "/").startswith(d + os.sep) for d in LECTURES)}


def _exit_code(e: SystemExit) -> int:
    """和解释器处理没接住的 SystemExit 一样：None 是 0，整数原样，别的印到标准错误、退出码 1。"""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:                                       # noqa: BLE001
        pass
    return 1


def _run_main(path, code=None):
    """像解释器跑 "python 脚本"（或 "python -c 代码"）一样执行：新的 __main__ 模块，脚本的 __file__ 是绝对路径，
    sys.argv[0] 不动（runpy.run_path 会把它改成路径，argparse 印的程序名就不一样了）。"""
    import builtins
    import types
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    if path is not None:
        main.__file__ = path
        main.__cached__ = None
        with open(path, "rb") as f:
            code = f.read()
    sys.modules["__main__"] = main
    exec(compile(code, "<string>" if path is None else path, "exec", dont_inherit=True), main.__dict__)


def _run_script(request, out_fd, err_fd):
    """在 fork 出来的进程里：把自己变成 "python 脚本 参数..."，跑完退出（不返回）。"""
    os.setsid()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    for fd in (out_fd, err_fd, devnull):
        os.close(fd)
    if os.isatty(1):                                        # 和解释器启动时一样：标准输出是终端就按行缓冲
        sys.stdout.reconfigure(line_buffering=True)
    for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request.get("nice"):                                 # conftest 的后台线程要的：优先级调低这么多
        try:
            os.nice(request["nice"])
        except OSError:
            pass
    env = request["env"]
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(env)
    script, *args = request["args"]
    if script == "-c":                                      # python -c 代码 参数...
        path = None
        sys.argv = ["-c", *args[1:]]
        sys.path[:] = ["", *BASE_PATH]
    else:
        path = os.path.join(os.getcwd(), script)
        sys.argv = [script, *args]
        sys.path[:] = [os.path.dirname(os.path.realpath(path)), *BASE_PATH]
    ours = path is not None and any(os.path.realpath(path).startswith(d + os.sep) for d in LECTURES)
    changed = [IMPORT_ENV[k] for k in IMPORT_ENV if env.get(k) != START_ENV.get(k)]
    gpu = any(a == "--gpu" or str(a).startswith("--gpu=") for a in args)   # 选了 GPU：kernel_lab 要重新载入
    if gpu or not ours or None in changed:                  # 别处的拷贝、python -c、GPU：课程模块全部重新 import
        for name in PROJECT:
            sys.modules.pop(name, None)
    elif changed:                                           # 只有读这些变量的那几讲的模块重新 import
        dirs = tuple(os.path.join(ROOT, d) + os.sep for scope in changed for d in scope)
        for name in PROJECT:
            if os.path.abspath(getattr(sys.modules.get(name), "__file__", None) or "/").startswith(dirs):
                sys.modules.pop(name, None)
    random.seed()
    code = 0
    try:
        try:
            _run_main(path, args[0] if path is None else None)
        except SystemExit as e:
            code = _exit_code(e)
        except BaseException as e:                          # noqa: BLE001  和解释器一样：印 traceback，退出码 1
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
                tb = tb.tb_next                             # traceback 从脚本开始，不带这个文件里的两层
            sys.excepthook(type(e), e.with_traceback(tb), tb)
            code = -signal.SIGINT if isinstance(e, KeyboardInterrupt) else 1
        try:
            threading._shutdown()
        except BaseException:                               # noqa: BLE001
            pass
        atexit._run_exitfuncs()
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:                           # noqa: BLE001
                pass
        if code < 0:                                        # Ctrl-C 没被接住：和解释器一样被 SIGINT 结束
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code)


def _serve(conn):
    """管理进程：收一个请求，fork 出跑脚本的进程，回它的进程号，等它结束，回退出码。"""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 2)
    while not msg.endswith(b"\n"):                             # 请求以换行结束；长的可能分几次到
        more = conn.recv(1 << 16)
        if not more:
            os._exit(1)
        msg += more
    request = json.loads(msg.decode("utf-8"))
    out_fd, err_fd = fds
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run_script(request, out_fd, err_fd)
    os.close(out_fd)
    os.close(err_fd)
    conn.sendall(f"pid {pid}\n".encode())
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    conn.sendall(f"exit {code} {usage.ru_utime + usage.ru_stime:.3f}\n".encode())
    conn.close()


def main():
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sys.argv[1])
    server.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)             # 管理进程结束时自动收掉，不留僵尸
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready:                                  # conftest 那头关了管道（pytest 结束了）
            return
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            try:
                _serve(conn)
            finally:
                os._exit(0)
        conn.close()


if __name__ == "__main__":
    main()
