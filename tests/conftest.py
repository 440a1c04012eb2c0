"""测试的机器（make test = python -m pytest -q tests）。维护测试的人读这一段就够了；细节在下面各节的注释里。

给测试的东西
  - 各讲的目录在 sys.path 上（测试直接 import console、runner、evolve……）；换一个模块的时钟、Popen：only_in（后台线程在跑）。
  - MINI_ALPHAEVOLVE_EXPERT 指向钉住的讲义专家（lecture14/evolve/lecture_expert.py），子进程也继承：学生改
    expert_heuristic.py 不影响讲义论断的测试；学生那份只由 test_student_expert.py 检查，不同时结果末尾说一行。
  - fixture：table（整个会话一张时间表）、train（默认划分的训练形状）、no_numpy_path（PATH 上的 python3 没有 numpy）。
  - 跑脚本：run_script(参数...)（python 带这些参数跑一次，返回 CompletedProcess）、run_script_fresh（一定新跑一次）、
    run_concurrently（几条命令同时跑）、run_in_pty（在给定列宽的伪终端里跑）、ctrl_c_in_a_terminal（在终端里按一次
    Ctrl-C）、load_script（把编号脚本当模块载入）。
    测试自己用 subprocess 起进程时：start_new_session=True，finally 里 stop_group(p)（整个进程组杀掉、收掉）。

一个机制让它快：脚本的一次运行是一个值，早一点、便宜一点地算出来（2026-11-30 的 2 核机器上，933 个测试每次新起进程、
按顺序跑约 100 秒，用这个机制约 46 秒；现在的数见 README 的"计时"）。2026-12-05 晚上 2,659 个测试约 310–330 CPU 秒（会话
放进自己的 cpuacct cgroup 量；逐个量：OpenEvolve 约 52，脚本的运行约 130，其余是进程内的测试、新起解释器的 Ctrl-C 和计时测试），
墙钟约 200–225 秒，前台的测试线程一直跑到最后：再快要么少算，要么让前台也并行。结果和新起一个解释器跑一模一样——只是什么时候、在哪里跑。
  1. 缓存：同样的命令行、工作目录和环境（和会话开始时不同的变量都进键）整个会话只跑一次（run_script，线程安全）。
  2. 预热过的解释器（tests/zygote.py）：一个已经 import 好 numpy 和课程模块的进程，每次 fork 一个出来跑脚本，省掉
     启动和 import 的零点几秒；标准输出、标准错误、退出码和新解释器逐字节相同（test_zygote.py 对照：课程的脚本、
     改过的拷贝、改过的环境、没接住的异常、Ctrl-C、伪终端里的运行）。run_in_pty 也用它（伪终端的一端传过去）。
     改了影响解释器启动的环境变量（PYTHON*、LANG、LC_*、BLAS 线程数）
     或 python -m 时照旧新起进程；照印出来的样子跑"可以试试"的测试、量 Ctrl-C 的测试也起真正的进程。TMPDIR 太长、
     它的 socket 路径超过 107 字节时整个会话不用它（每次新起进程，只测它的测试跳过、说明原因）。
  3. 后台预跑：测试文件的 PREFETCH = [命令 或 @ahead 的函数, ...] 列出它要的确定性运行；收集完一个文件就开始跑它的，
     收集完全部测试后按测试的顺序排好，一个后台线程先跑（脚本的优先级 nice +10，前台要 CPU 时先给前台），测试来要时
     多半已经在缓存里；前台等一条还没跑完的运行时，先替后台跑它排着的下一条。大半时间在等计时器或别的进程的
     （@ahead(waits=True)：桩服务器的超时、OpenEvolve 的运行）另有一个线程，也是低优先级。测试的先后：量时间的
     （@pytest.mark.quiet：Ctrl-C 一秒内停之类）最先，那时前台没有别的事；只在本进程里算的其次；要预跑脚本的最后。
     sys.setswitchinterval 缩短后台线程等 GIL 的时间。
  为什么不在 pytest 进程里直接调用脚本的 main()：脚本要的是一个真正的进程——退出码（runner.run 用 os._exit）、
  信号处理和 Ctrl-C、argv 和 sys.path、模块级的状态、进程池 fork 出来的 worker、标准输出是不是终端。fork 出来的进程
  天然各有一份，在 pytest 里每样都得重置，而且测的就不再是学生运行的那个东西了。

不留下进程：测试会话不管怎样结束（跑完、失败、pytest-timeout、Ctrl-C，或者 pytest 被 SIGKILL），它起的进程都结束。
  会话开始时在环境里放一个记号 TESTS_SESSION=随机值，之后起的每个进程（脚本、预热过的解释器和它 fork 出来的、
  后台 worker、被过继出去的孤儿）都继承它；收尸人 tests/reaper.py 在会话结束时（pytest 被杀掉时由内核关上管道通知它）
  杀掉所有带记号的进程。pytest 自己 fork 出来的进程（multiprocessing）没有记号，由内核随 pytest 一起杀掉
  （PR_SET_PDEATHSIG，_die_with_parent）。测试里故意忙的子进程另有自己的期限。临时文件也一样：会话和它起的进程的
  临时目录都在 TMPDIR=tests-session-*（SESSION_TMP）里，收尸人最后删掉它。test_no_process_left.py 检查。

Ctrl-C：make test 约一秒内停下（pytest 的退出码 2；pytest 那段 KeyboardInterrupt 换成一句 INTERRUPTED_SAID）；按的那一刻 Python 要是把 KeyboardInterrupt 吞掉了（它落在
  Hypothesis 的垃圾回收回调里时会这样），就在当前的测试结束时停（test_background_run.py）。

调试用的开关（环境变量）
  TESTS_NO_PREFETCH=1      不预跑、不调顺序：看一个测试自己跑要多久（933 个测试时量过：整个会话约 73 秒）
  TESTS_NO_ZYGOTE=1        不用预热过的解释器，每次新起进程（同时量的：约 61 秒）
  TESTS_RUN_LOG=文件        run_script 的每次运行记一行：CPU 秒、墙钟秒、命令、和会话开始时不同的环境、是预热过的
                           解释器跑的还是新起的（找慢的、重复的运行；和 TESTS_NO_ZYGOTE 一起用也记）
  pytest --timeout 0       每个测试的 60 秒上限（pytest.ini，pytest-timeout）调试时取消；用 pdb 停在测试里时要它
  TESTS_PREFETCH_REPORT=1  结果末尾列出预跑了却没用到的命令、测试要时还没预跑的命令（维护 PREFETCH 用）
  TESTS_GPU=a100           引擎测试和"印出来的数对得上"的测试换成 A100 的记录（lecture10/gpus.py）；讲义在 H100 上的论断
                           （@pytest.mark.h100_claim）、H100 上的金标运行（@pytest.mark.h100_golden：一次具体运行的
                           前提，失败时说"金标运行的前提变了"，不说讲义论断不成立）和 H100 上的具体数、印出来的东西
                           （@pytest.mark.h100_only：手算钉住的时间、默认运行印的命令；失败时说"不是讲义的论断"）
                           跳过，跳过的原因写明。默认 h100。"印出来的数对得上"的测试要找的那句观察在这块 GPU 上印成了
                           【本次不成立】时（tests/printed.py 的 find 抛 ObservationFailed），那个测试也跳过、说是哪句
                           不成立：它要核对的数无从核对。find 只知道它找的那段文字里有不成立的观察——一个测试把整段观察
                           交给 find、一句不成立，整个测试都跳过；要逐句核对，把 observations(...)[i] 单独交给它
  TESTS_GPU_CLAIMS=1       和 TESTS_GPU 一起用：讲义的论断不跳过，在那块 GPU 上照样检查——不成立的每条都以"讲义论断
                           不成立：哪条；GPU：哪块"开头（换 GPU 的助教用它看讲义的哪些话要改）
"""

import os
import secrets
import signal
import sys

import pytest

# 后台线程（下面的 PREFETCH）和前台的测试在同一个进程里轮流拿 GIL。前台在算（Hypothesis 之类）时，后台线程每做
# 一次系统调用（读管道、拷文件、桩服务器回一个请求）都要等前台让出 GIL，默认最多等 5 毫秒：一次只用 0.06 秒 CPU 的
# 运行因此要等上一秒才拿到结果。把这个间隔缩短到 0.5 毫秒，整个测试快约 1.5 秒（3 次对 3 次：46.4–46.6 对 47.7–49.5）。
sys.setswitchinterval(0.0005)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for lecture in ("lecture01", "lecture10", "lecture13", "lecture14"):
    sys.path.insert(0, os.path.join(ROOT, lecture))

# 引擎和讲义论断的测试都用讲义的专家（钉住的一份），不用学生正在改的 lecture14/expert_heuristic.py：
# 在 import evolve 之前设好环境变量，测试启动的子进程（跑 04、05 脚本）也继承它。
# 学生的那份只由 tests/test_student_expert.py 检查（能不能解析；和讲义的不同时在测试结果的末尾说一行）。
LECTURE_EXPERT = os.path.join(ROOT, "lecture14", "evolve", "lecture_expert.py")
STUDENT_EXPERT = os.path.join(ROOT, "lecture14", "expert_heuristic.py")
os.environ["MINI_ALPHAEVOLVE_EXPERT"] = LECTURE_EXPERT


def shipped_student_expert() -> str:
    """lecture14/expert_heuristic.py 随仓库发的原文（git show HEAD:…）。查它的说明文字（给学生的命令、DSL 的写法）的
    测试读这一份，不读学生正在改的那份：学生把它存成了 GBK、清空了，make test 里四个和它无关的测试变红
    （UnicodeDecodeError、IndexError）。不是 git 仓库（或者文件还没提交）时读工作区里的文件。"""
    import subprocess
    try:
        shown = subprocess.run(["git", "show", "HEAD:lecture14/expert_heuristic.py"], cwd=ROOT, capture_output=True,
                               timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        shown = None
    if shown is not None and shown.returncode == 0:
        return shown.stdout.decode("utf-8")
    with open(STUDENT_EXPERT, encoding="utf-8") as f:
        return f.read()

# 不留下进程（tests/reaper.py）：这个会话起的每个进程都从环境里继承一个记号 TESTS_SESSION=随机值；收尸人在会话结束时
# ——pytest 被 SIGKILL 也一样——杀掉所有带这个记号的进程。pytest 自己 fork 出来的进程（进程池、multiprocessing 的
# Process；没有 exec，/proc 里看不到记号）由内核在 pytest 死的时候杀掉（PR_SET_PDEATHSIG，见 _die_with_parent）。
SESSION_VAR = "TESTS_SESSION"
os.environ[SESSION_VAR] = secrets.token_hex(8)         # 嵌套的测试会话（测试里再跑 pytest）各有各的记号

# 也不留下临时文件：这个会话的临时目录（pytest 的 tmp_path、session_dir、预热过的解释器的 socket）和它起的进程的
# （TMPDIR 跟着环境传下去：OpenEvolve、脚本的 --svg 目录……）都在一个目录里，收尸人在会话结束时删掉它——pytest 被
# SIGKILL 也一样（助教报过：杀掉的会话在 /tmp 里留下几十个 zygote-*、tests-svg07-*）。
import atexit                                                   # noqa: E402
import shutil                                                   # noqa: E402
import tempfile                                                 # noqa: E402
SESSION_TMP = tempfile.mkdtemp(prefix="tests-session-")
os.environ["TMPDIR"] = tempfile.tempdir = SESSION_TMP
# pytest 在收尸人起来之前就退出时（参数写错、--lf 配 -p no:cacheprovider 这类用法错误，退出码 4）也不留下这个空目录
atexit.register(shutil.rmtree, SESSION_TMP, True)

# 测试在哪块 GPU 上跑（lecture10/gpus.py）：TESTS_GPU=a100 make test 让这个进程里 import 的 kernel_lab、sched_lab、
# evolve 和测试起的脚本（继承环境变量 MINI_ALPHAEVOLVE_GPU）都用 A100 的记录，引擎测试和"印出来的数对得上"的测试
# 照常检查；讲义在 H100 上的论断（@pytest.mark.h100_claim）这时跳过，跳过的原因写明。默认 h100，就是讲义。
# Hypothesis 自己的代码不做 pytest 的断言改写。pytest 给每个带插件入口的包（Hypothesis 带一个）的所有模块都做断言
# 改写：import hypothesis 因此要 1.0–1.5 秒 CPU（不改写 0.1 秒），它内部的 assert 在每个例子里也都慢一截（同一个
# 500 个例子的 @given 量过 1.7 对 1.3–1.45 秒）。测试文件自己的 assert 照样改写（失败时照样列出各部分的值）。
# 用的是 pytest 没公开的 _must_rewrite：哪天它改了名字，这里什么也不做（只是慢一点），测试照常。
for _hook in sys.meta_path:
    if type(_hook).__name__ == "AssertionRewritingHook" and isinstance(getattr(_hook, "_must_rewrite", None), set):
        _hook._must_rewrite.difference_update({"hypothesis", "_hypothesis_pytestplugin"})

# 默认的 h100 不放进环境、而是把外面可能设着的去掉：和"不给 --gpu"的运行（test_gpus.py）是同一个环境，缓存里共用一次。
TESTS_GPU = os.environ.get("TESTS_GPU") or "h100"
sys.path.insert(0, os.path.join(ROOT, "lecture10"))
try:
    import gpus as _gpus  # noqa: E402
except (SyntaxError, NameError) as _e:                # 助教改 GPUS 那行少打了括号、拼错了记录名：make test 和编号脚本
    from runner import gpus_unreadable                # 说同一句话（文件:行、那一行、该怎么写），不是 conftest 的 ImportError
    _gpus, _RECORD_PROBLEM = None, gpus_unreadable(_e, os.path.join(ROOT, "lecture10", "gpus.py"))
except ValueError as _e:                              # 助教加的 GPU 记录写得不对（gpus.RecordProblem）：pytest_configure 里
    if not getattr(_e, "one_sentence", False):        # 只说那一句，不是几十行"ImportError while loading conftest"
        raise
    _gpus, _RECORD_PROBLEM = None, str(_e)
else:
    _RECORD_PROBLEM = None
# 助教报过：TESTS_GPU=L40S 得到的是"命令行用 --gpu，或者设环境变量 MINI_ALPHAEVOLVE_GPU"：pytest_configure 里说 TESTS_GPU
TESTS_GPU_PROBLEM = _RECORD_PROBLEM or _gpus.problem(TESTS_GPU) and (
    f"TESTS_GPU={TESTS_GPU}：不认识这块 GPU；可以选 {'、'.join(_gpus.GPUS)}（lecture10/gpus.py 的 GPUS 里的名字），不设就是 h100。")
if TESTS_GPU == "h100":
    os.environ.pop("MINI_ALPHAEVOLVE_GPU", None)
else:
    os.environ["MINI_ALPHAEVOLVE_GPU"] = TESTS_GPU

# 外面的 shell 导出了 COLUMNS（有的 CI、IDE 会）时，接管道的脚本按它排（console.wrap_width）：测试里去掉它，管道里的
# 运行都是 100 列；要它的测试自己设（run_in_pty 在真的终端里按窗口大小）。
os.environ.pop("COLUMNS", None)

# 课程的代码不做矩阵乘（不调 BLAS）：numpy 的 OpenBLAS 线程池只会在 import 时白白空转一下（每个进程约 0.1 秒 CPU，
# 一次测试会话起一两百个进程）。和 lecture01/runner.ensure_numpy 给脚本设的一样；输出不受影响。
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Ctrl-C 停得下 make test。Python 把 Ctrl-C 变成 KeyboardInterrupt，抛在主线程那一刻正在跑的 Python 代码里；那一刻
# 要是垃圾回收的回调（Hypothesis 装了一个，每次回收都跑）或者 __del__，异常就被吞掉（"Exception ignored in ..."），
# 测试照样跑到底（在第 20 秒按，两次都是这样）。所以另外记下"按过 Ctrl-C"：这样被吞掉的，当前的测试一结束就停下
# 整个测试会话（pytest_runtest_logfinish）。
# 也管 make test 被放到后台跑（没有作业控制的 shell 里的 "make test &"、nohup、某些 CI）的时候：那时 SIGINT 是
# "忽略"，而"忽略"会经 exec 传给测试起的每个脚本，它们就收不到 Ctrl-C，测 Ctrl-C 的测试全失败。装了处理函数以后，
# exec 时变回"默认"，子进程里的 Python 照常把 Ctrl-C 变成 KeyboardInterrupt。
_CTRL_C: list = []


def _on_ctrl_c(signum, frame):
    _CTRL_C.append(signum)
    raise KeyboardInterrupt


signal.signal(signal.SIGINT, _on_ctrl_c)


def pytest_runtest_logfinish(nodeid, location):
    if _CTRL_C:                                         # 按过 Ctrl-C，KeyboardInterrupt 却被吞掉了：现在停
        raise KeyboardInterrupt


def stop_group(p, pids=()) -> None:
    """测试的 finally 里调用：p 是用 start_new_session=True 起的 subprocess.Popen。不管测试成败，杀掉它的整个进程组
    （脚本和它的后台 worker，包括已经被过继给 init 的孤儿），再杀掉 pids 里列出的进程（比如读到的 worker 进程号），
    并收掉 p。测试失败（断言、超时）时也不会留下还在跑的进程。"""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if p.poll() is None:
        p.wait()
    for f in (p.stdout, p.stderr, p.stdin):
        if f is not None:
            f.close()


def alive(pid: int) -> bool:
    """进程还在跑吗：不存在、或者已经退出只等人收（僵尸）都算停了。僵尸要算停：过继出去的孤儿退出以后由收养它的进程收，
    收养它的要是不及时收（一个 PR_SET_CHILD_SUBREAPER 的外层进程），os.kill(pid, 0) 照样说它在。"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def descendants(pid: int) -> set[int]:
    """pid 的所有后代（读 /proc）。"""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


_CTTY = """import fcntl, os, sys, termios
os.setsid()                                          # 新的会话，伪终端成了它的控制终端：像在终端里启动的
fd = int(sys.argv[1])                                # 伪终端的一端（pass_fds 传进来的）
fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
for i in (0, 1, 2):
    os.dup2(fd, i)
os.execv(sys.executable, [sys.executable] + sys.argv[2:])
"""


def ctrl_c_in_a_terminal(args, press, env=None, seconds: float = 60):
    """python args... 在一个伪终端里跑（伪终端是它的控制终端，像在终端里启动的）；press(到目前为止的输出字节, pid)
    第一次说 True 时"按"一次 Ctrl-C（往终端写 \\x03：终端回显 ^C、把 SIGINT 发给前台进程组）。press 可以返回一个
    pid 的集合（按下那一刻记下的后代进程，最后和进程组一起收掉）代替 True。返回 (退出码, 输出的文字（\\r\\n 换成
    \\n）, 按过没有)。只在 Linux 上（TIOCSCTTY）。"""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", _CTTY, str(slave), *map(str, args)], cwd=ROOT,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env if env is not None else {**os.environ, "NO_COLOR": "1"}, pass_fds=(slave,))
    os.close(slave)
    out, pressed, kids, deadline = b"", False, set(), time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:                              # 脚本退出、终端的另一端都关了
                    break
                if not chunk:
                    break
                out += chunk
            if not pressed:
                now = press(out, p.pid)
                if now:
                    kids = now if isinstance(now, set) else kids
                    os.write(master, b"\x03")
                    pressed = True
        code = p.wait(timeout=10)
    finally:
        os.close(master)
        stop_group(p, list(kids))
    return code, out.decode("utf-8", "replace").replace("\r\n", "\n"), pressed


def as_printed(command: str, timeout: float = 180) -> "subprocess.CompletedProcess":
    """一条印出来的命令（可能按 shell 的续行折成几行）照印出来的样子交给 bash、在仓库根目录跑，PATH 上的 python3
    没有 numpy（学生的机器）；超时也不留下还在跑的进程。空命令是退出码 99。"""
    env = dict(base_env(), PATH=f"{no_numpy_bin()}{os.pathsep}{base_env()['PATH']}")
    p = subprocess.Popen(["bash", "-c", command or "exit 99"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        stop_group(p)
    return subprocess.CompletedProcess(command, p.returncode, out, err)


def _lower_priority(p) -> None:
    """在后台线程里（@ahead 的函数预跑时）刚起的子进程 p 优先级调低 requested_nice()：它还没来得及起子进程，以后起的
    （脚本的 worker、OpenEvolve 的进程、服务器）都继承。前台不调。"""
    if requested_nice():
        try:
            os.setpriority(os.PRIO_PROCESS, p.pid, os.getpriority(os.PRIO_PROCESS, 0) + requested_nice())
        except OSError:
            pass


def run_concurrently(*commands, cwd=ROOT, timeout=180, env=None):
    """几条命令（参数列表）同时跑，各是独立的子进程（结果和一条条跑一样，只是在 2 核上快一些）；env 不给就继承
    （后台线程里是会话开始时的环境，见 _full_env）；
    按顺序返回 subprocess.CompletedProcess（text，stdout 和 stderr 都收下）。每条命令在自己的进程组里跑，
    结束时（包括超时、出错）整组杀掉：不留下脚本的后台 worker。在后台线程里优先级低（_lower_priority）。"""
    import subprocess
    procs = []
    out = []
    try:
        for c in commands:
            procs.append(subprocess.Popen(list(c), cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          start_new_session=True, env=_full_env(env)))
            _lower_priority(procs[-1])
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    finally:
        for p in procs:
            stop_group(p)
    return out


def load_script(path: str, name: str, register: bool = False):
    """编号脚本（文件名以数字开头，不能直接 import）当模块载入：path 相对仓库根，name 是模块名；导入时它们不打印、
    不跑演示。register=True 时放进 sys.modules（在进程里跑、用进程池时，子进程按名字找到脚本里的函数）。"""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if register:
        sys.modules[name] = module
    return module


def student_expert_note():
    """学生的 expert_heuristic.py 和讲义的不同、或者读不进来时，返回说明：一句话，再一行恢复它的命令；相同时返回 None。
    学生报过：改坏了的文件让 make test 红了一个测试，最后几行只有那句错误，不说怎样恢复（改过、读得进来的才说）。"""
    try:
        from evolve.problem import load_heuristic
        lecture = load_heuristic(LECTURE_EXPERT)
    except Exception:                                    # noqa: BLE001  讲义的那份读不了：别的测试会报出来
        return None
    try:
        student = load_heuristic(STUDENT_EXPERT)
    except Exception:                                    # noqa: BLE001  哪一行、怎么改由 test_student_expert 报出来
        return ("注意：lecture14/expert_heuristic.py 读不进来（哪一行、怎么改见上面的 test_student_expert_heuristic_parses；"
                "其余测试用的是讲义的那份）。想恢复讲义的原样：\n    git checkout lecture14/expert_heuristic.py")
    if student == lecture:
        return None
    return ("注意：lecture14/expert_heuristic.py 和讲义的专家不同（改过；有意改的没关系，其余测试用的是讲义的那份）。"
            "想恢复讲义的原样：\n    git checkout lecture14/expert_heuristic.py")


def pytest_terminal_summary(terminalreporter):
    note = student_expert_note()
    if note:                                             # 按终端宽度折行（学生的终端 80 列；讲师报过 157 列的一行）
        from console import wrap, wrap_width
        sentence, command = note.split("\n")
        config = getattr(terminalreporter, "config", None)  # pytest 自己的宽度（和上面红的测试那句话折得一样；
        width = config.get_terminal_writer().fullwidth if config is not None else wrap_width()   # 接管道时 80，不是 100）
        for line in wrap(sentence, width, "") + [command]:
            terminalreporter.write_line(line)
    if os.environ.get("TESTS_PREFETCH_REPORT"):          # 维护 PREFETCH 时用：预跑了、却没有测试要的命令
        for key in sorted(set(_RUNS) - _REQUESTED):
            terminalreporter.write_line(f"预跑了、但没有测试用到：{key}")
        for key, test in _RAN_IN_TEST:
            terminalreporter.write_line(f"测试自己跑的（没有预跑）：{key[0]} {key[2]} {key[3]}  ← {test}")


@pytest.fixture(autouse=True)
def _no_gpu_note_left_from_another_test():
    """runner 解析参数时告诉 console 这次运行用的哪块 GPU（不是默认的才印那一段、命令才带 --gpu）；一个测试在进程里
    跑过一次 --gpu a100（或 TESTS_GPU=a100 下的任何脚本）以后，别的测试直接调用 console 时不该还带着它。"""
    console = sys.modules.get("console")
    if console is not None and hasattr(console, "RUN_GPU"):
        console.RUN_GPU[0] = None
    yield


def launchable(BM, BN, BK, warps, stages, group):
    """引擎测试的夹具从数据里来：一个讲义式的配置（多半是 H100 上写的），这块 GPU 放不下时减流水线级数，
    取 kernel_lab.VALID 里最接近的那个（H100 上原样返回）。连 1 级都放不下时原样返回：用到它的测试自己报错
    （说哪种资源超了），而不是在收集时就中断。"""
    from kernel_lab import VALID_INDEX, Config
    c = Config(BM, BN, BK, warps, stages, group)
    while c not in VALID_INDEX and c.stages > 1:
        c = c.replace(stages=c.stages - 1)
    return c if c in VALID_INDEX else Config(BM, BN, BK, warps, stages, group)


@pytest.fixture(scope="session")
def table():
    """一张时间表（按形状缓存），整个测试会话共用。"""
    from evolve import TimeTable
    return TimeTable()


@pytest.fixture(scope="session")
def train():
    """默认的配对随机划分的训练形状。"""
    from evolve import all_shapes, split_shapes
    return split_shapes(all_shapes())[0]


# ---------------------------------------------------------------- 共用的脚本运行（整个测试会话只跑一次）

import functools                                                # noqa: E402
import locale                                                   # noqa: E402
import subprocess                                               # noqa: E402
import threading                                                # noqa: E402
import time                                                     # noqa: E402


class _Run:
    """缓存里的一项：结果和"算完了"的事件；还没算完时别的线程等它。"""

    def __init__(self):
        self.done = threading.Event()
        self.result = None
        self.error = None


def _once(table: dict, key, compute):
    """table[key] 整个测试会话只算一次（compute()）：几个线程同时要时，后来的等先来的那次算完、拿同一个结果。
    算的时候出错（超时之类）：这次调用报错，这一项从表里拿掉，之后再要的重新算（也就会再报出来）。"""
    while True:
        with _RUNS_LOCK:
            entry = table.get(key)
            mine = entry is None
            if mine:
                entry = table[key] = _Run()
        if mine:
            try:
                entry.result = compute()
            except BaseException as e:                          # noqa: BLE001
                with _RUNS_LOCK:
                    table.pop(key, None)
                entry.error = e
                entry.done.set()
                raise
            entry.done.set()
            return entry.result
        if threading.current_thread() is threading.main_thread():
            while not entry.done.is_set() and _steal():         # 前台在等：先替后台跑它排着的下一条，两个核都不闲着
                pass
        entry.done.wait()
        if entry.error is None:
            return entry.result


_RUNS: dict = {}
_RUNS_LOCK = threading.Lock()


# 测试会话开始时的环境（上面已经设好 MINI_ALPHAEVOLVE_EXPERT）。缓存的键里记的是和它不同的环境变量；预跑（PREFETCH）
# 用的就是它——而不是那一刻的 os.environ：那时可能有测试的 monkeypatch 还改着 COLUMNS、NO_COLOR。
_BASE_ENV = dict(os.environ)
_NOT_IN_KEY = {"PYTEST_CURRENT_TEST"}                  # pytest 自己的记号：每个测试不同，脚本不读它


def _full_env(env, session=False) -> dict:
    """子进程真正拿到的环境：给了就是它；没给时，测试里是此刻的 os.environ（和 subprocess 一样继承，测试
    monkeypatch 过的也算），预跑（PREFETCH）和后台线程里（@ahead 的函数）是会话开始时的环境——那一刻前台的测试
    也许正用 monkeypatch 改着 COLUMNS（一次干净克隆里的 CI 报过：后台跑的 run_openevolve.py 继承了前台测试的
    COLUMNS，管道里印出 128 列的行）。run_script、run_script_fresh、run_concurrently、run_in_pty 都经过这里。"""
    if env is not None:
        return dict(env)
    background = threading.current_thread() is not threading.main_thread()
    return dict(_BASE_ENV) if session or background else dict(os.environ)


def _run_key(args, env: dict, cwd, instance=1):
    """缓存的键：完整的命令行（sys.executable 之后的参数，原样）、工作目录、子进程的环境里和会话开始时不同的
    变量（测试改的、加的、删的都算：MINI_ALPHAEVOLVE_EXPERT、PATH、NO_COLOR、COLUMNS……任何会改变输出的东西都在
    键里），和 instance（同一条命令另外跑的第几次）。"""
    changed = tuple(sorted((k, v) for k, v in env.items() if _BASE_ENV.get(k) != v and k not in _NOT_IN_KEY))
    removed = tuple(sorted(k for k in _BASE_ENV if k not in env and k not in _NOT_IN_KEY))
    return tuple(str(a) for a in args), str(cwd), (changed, removed), instance


def _execute(args, env, cwd, timeout, zygote=True):
    """python 带 args 跑一次，返回字节的 CompletedProcess；zygote=False 时一定新起一个解释器。"""
    if zygote and _for_zygote(args, env, cwd):
        path = _zygote()
        if path is not None:
            return _zygote_execute(path, args, env, cwd, timeout)
    logged = bool(os.environ.get("TESTS_RUN_LOG"))              # 记运行时用 wait4 收尸：拿得到它用的 CPU 秒
    start = time.monotonic()
    p = (_TimedPopen if logged else subprocess.Popen)([sys.executable, *map(str, args)], cwd=cwd, env=env,
                                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                       start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        if logged:
            _log_run(p.cpu, time.monotonic() - start, args, env, cwd, "新起的解释器")
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)
    finally:                                                    # 超时或出错也不留下脚本和它的后台 worker
        stop_group(p)


class _TimedPopen(subprocess.Popen):
    """和 subprocess.Popen 一样，只是收尸时用 os.wait4，记下这个进程（和它收掉的子进程）用的 CPU 秒（cpu）。
    只在 TESTS_RUN_LOG 时用（助教报过：TESTS_NO_ZYGOTE=1 时那个文件一行也没有）。"""
    cpu = None

    def _try_wait(self, wait_flags):               # CPython 的 Popen 收尸都经过这里（和原来的一样，多记 rusage）
        try:
            pid, sts, usage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return self.pid, 0
        if pid:
            self.cpu = usage.ru_utime + usage.ru_stime
        return pid, sts


def _log_run(cpu, wall, args, env, cwd, how) -> None:
    """TESTS_RUN_LOG 里记一行：CPU 秒、墙钟秒、命令、和会话开始时不同的环境、怎么跑的（预热过的解释器或新起的）。"""
    with open(os.environ["TESTS_RUN_LOG"], "a", encoding="utf-8") as log:
        changed, removed = _run_key(args, env, cwd)[2]              # 和会话开始时不同的环境：找重复的运行
        where = "" if str(cwd) == ROOT else f" cwd={cwd}"
        cpu_said = "-" if cpu is None else f"{cpu:.3f}"
        log.write(f"{cpu_said} {wall:.3f} {' '.join(map(str, args))!r}{where}"
                  + (f" env={dict(changed)} unset={list(removed)}" if changed or removed else "") + f" [{how}]\n")


# ---------------------------------------------------------------- 预热过的解释器（tests/zygote.py）
#
# "python 脚本.py 参数..." 和 "python -c 代码" 交给一个已经 import 好 numpy（和课程模块）的进程 fork 出来跑：每次省掉
# 启动解释器和 import 的零点几秒。跑出来的和新起一个解释器一样（标准输出、标准错误逐字节相同、退出码相同；
# tests/test_zygote.py 对几种运行比过）。环境里改了影响解释器启动的变量（PYTHON*、LANG、LC_*、BLAS 线程数）、
# python -m、或者 TESTS_NO_ZYGOTE=1 时，照旧起新的子进程。

import json                                                     # noqa: E402
import re                                                       # noqa: E402
import select                                                   # noqa: E402
import selectors                                                # noqa: E402
import socket                                                   # noqa: E402

_STARTUP_ENV = re.compile(r"^(PYTHON|LC_|LANG$|LANGUAGE$|OPENBLAS|OMP_|MKL_|NUMPY|GOTO)")
_ZYGOTE_STATE: dict = {}
_ZYGOTE_LOCK = threading.Lock()


def _for_zygote(args, env, cwd) -> bool:
    """这次运行交不交给预热过的解释器：没有 TESTS_NO_ZYGOTE，_zygote_can_run，而且它起得来（TMPDIR 太长时起不来）。"""
    if os.environ.get("TESTS_NO_ZYGOTE") or not _zygote_can_run(args, env, cwd):
        return False
    _start_zygote()
    return "why" not in _ZYGOTE_STATE


def _zygote_can_run(args, env, cwd) -> bool:
    """预热过的解释器能不能跑这次：python 脚本.py ... 或 python -c 代码 ...，环境里没改影响解释器启动的变量。"""
    if not args or not hasattr(socket, "send_fds"):
        return False
    first = str(args[0])
    if first == "-c":
        if len(args) < 2:
            return False
    elif first.startswith("-") or not first.endswith(".py") or not os.path.isfile(os.path.join(str(cwd), first)):
        return False
    keys = {k for k in set(env) | set(_BASE_ENV) if env.get(k) != _BASE_ENV.get(k)}
    return not any(_STARTUP_ENV.match(k) for k in keys)


def _start_zygote():
    """启动预热过的解释器（不等它准备好）：pytest 收集测试的时候它就在 import 了。"""
    with _ZYGOTE_LOCK:
        if "proc" not in _ZYGOTE_STATE:
            d = tempfile.mkdtemp(prefix="zygote-")
            _ZYGOTE_STATE["dir"] = d
            if len(os.fsencode(os.path.join(d, "s"))) > SOCKET_PATH_MAX:
                # 助教报过：TMPDIR 长于约 66 字节（中文一个字 3 字节）时 socket 的路径超过上限，预热过的解释器起不来，
                # 17 个测试报 TypeError。现在不用它：每次新起解释器（慢一些，结果一样），只测它的测试跳过、说明原因
                _ZYGOTE_STATE.update(proc=None, path=None, why=f"预热过的解释器的 socket 路径 {os.path.join(d, 's')} "
                                     f"超过 {SOCKET_PATH_MAX} 字节（TMPDIR 太长）：这次每次新起解释器")
                return
            _ZYGOTE_STATE["proc"] = subprocess.Popen(
                [sys.executable, os.path.join(ROOT, "tests", "zygote.py"), os.path.join(d, "s")], cwd=ROOT,
                env=_BASE_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=True)


SOCKET_PATH_MAX = 107              # Linux 的 sockaddr_un 放得下的路径字节数（108 减去结尾的 0）


def _zygote():
    """预热过的解释器的 socket 路径（没启动的话先启动，等它准备好）；启动不了时是 None（照旧起子进程），
    原因在 _ZYGOTE_STATE["why"]（zygote_missing() 说给测试）。"""
    _start_zygote()
    with _ZYGOTE_LOCK:
        if "path" not in _ZYGOTE_STATE:
            ready = _ZYGOTE_STATE["proc"].stdout.readline() == b"ready\n"
            _ZYGOTE_STATE["path"] = os.path.join(_ZYGOTE_STATE["dir"], "s") if ready else None
            if not ready:
                _ZYGOTE_STATE["why"] = "预热过的解释器没有说 ready（它退出了）：这次每次新起解释器"
        return _ZYGOTE_STATE["path"]


def zygote_missing() -> str | None:
    """预热过的解释器这次用不了的原因（只测它的测试拿去跳过）；用得了是 None。"""
    return None if _zygote() is not None else _ZYGOTE_STATE.get("why", "预热过的解释器用不了")


def _stop_zygote():
    p = _ZYGOTE_STATE.get("proc")
    if p is not None:
        stop_group(p)
        shutil.rmtree(_ZYGOTE_STATE["dir"], ignore_errors=True)


def _zygote_start(path, args, env, cwd, out_fd, err_fd):
    """请预热过的解释器 fork 出 "python args..."，标准输出、标准错误是 out_fd、err_fd（调用的人之后关掉自己那份）。
    返回 (socket, 读回复的文件, 进程号)：回复里接着会有一行 "exit 退出码 CPU秒"（_zygote_wait 读）。"""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        request = json.dumps({"args": [str(a) for a in args], "env": env, "cwd": str(cwd),
                              "nice": requested_nice()}) + "\n"
        socket.send_fds(sock, [request.encode("utf-8")], [out_fd, err_fd])
        replies = sock.makefile("rb")
        return sock, replies, int(replies.readline().split()[1])
    except BaseException:
        sock.close()
        raise


def _zygote_wait(replies, sock, deadline, args, env, cwd, timeout) -> int:
    """等 _zygote_start 起的那次运行结束，返回退出码（过了 deadline 是 TimeoutExpired）；TESTS_RUN_LOG 记一行。"""
    sock.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        _, code, cpu = replies.readline().decode().split()
    except (socket.timeout, IndexError, ValueError):
        raise subprocess.TimeoutExpired([sys.executable, *map(str, args)], timeout) from None
    if os.environ.get("TESTS_RUN_LOG"):                         # 找慢的运行用：每次运行一行（CPU 秒、墙钟秒、命令）
        _log_run(float(cpu), timeout - (deadline - time.monotonic()), args, env, cwd, "预热过的解释器")
    return int(code)


def _kill_group(pid) -> None:
    """和 stop_group 一样：不留下脚本的后台 worker（pid 是进程组的组长）。"""
    if pid is not None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _zygote_execute(path, args, env, cwd, timeout):
    """和 _execute 一样（返回字节的 CompletedProcess，结束时杀掉整个进程组），只是由预热过的解释器 fork 出来跑。"""
    deadline = time.monotonic() + timeout
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sock = pid = None
    try:
        try:
            sock, replies, pid = _zygote_start(path, args, env, cwd, out_w, err_w)
        finally:
            os.close(out_w)
            os.close(err_w)
        chunks = {out_r: [], err_r: []}
        with selectors.DefaultSelector() as sel:
            for fd in chunks:
                sel.register(fd, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired([sys.executable, *map(str, args)], timeout)
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        sel.unregister(key.fd)
        code = _zygote_wait(replies, sock, deadline, args, env, cwd, timeout)
        return subprocess.CompletedProcess([sys.executable, *map(str, args)], code, b"".join(chunks[out_r]),
                                           b"".join(chunks[err_r]))
    finally:
        _kill_group(pid)
        os.close(out_r)
        os.close(err_r)
        if sock is not None:
            sock.close()


def pytest_sessionfinish(session, exitstatus):
    for b in _BACKGROUND:                               # 后台不再开始新的运行
        b.stop()
    if _CTRL_C:                                         # Ctrl-C：不等后台正在跑的那条，先停掉预热过的解释器
        _stop_zygote()
    deadline = time.monotonic() + 0.3
    for b in _BACKGROUND:                               # 正在跑的那条最多等 0.3 秒（后台线程是 daemon；没跑完的那条
        b.join(timeout=max(0.0, deadline - time.monotonic()))   # 由收尸人杀掉，它的结果反正没有测试要了）
    _stop_zygote()
    for d in _SESSION_DIRS:
        shutil.rmtree(d, ignore_errors=True)


def pytest_unconfigure(config):
    _sweep()


# ---------------------------------------------------------------- 不留下进程（收尸人：tests/reaper.py）

_REAPER: dict = {}


def _start_reaper() -> None:
    """启动收尸人（只在还没启动时）：它自己的会话，环境里没有记号（它不杀自己）。"""
    if "proc" in _REAPER or not os.path.isdir("/proc"):
        return
    env = {k: v for k, v in os.environ.items() if k != SESSION_VAR}
    _REAPER["proc"] = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "reaper.py"),
                                        os.environ[SESSION_VAR], str(os.getpid()), SESSION_TMP], env=env, cwd=ROOT,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       start_new_session=True)


def _sweep(timeout: float = 10.0) -> None:
    """会话正常结束时：请收尸人马上扫一遍，等它扫完（最多 timeout 秒），再关上管道。不等收尸人自己退出：pytest
    fork 出来的进程也拿着这根管道，它们要等 pytest 退出时才死（PR_SET_PDEATHSIG），那时管道才真的关上，收尸人再扫
    一遍、退出。pytest 被杀掉时走不到这里：管道由内核关上，收尸人照样扫。"""
    p = _REAPER.pop("proc", None)
    if p is None:
        return
    try:
        p.stdin.write(b"sweep\n")
        p.stdin.flush()
        if select.select([p.stdout], [], [], timeout)[0]:
            p.stdout.readline()                         # "done"
    except OSError:
        pass
    finally:
        p.stdin.close()
        p.stdout.close()
        p.returncode = 0                                # 不等它（见上）；也别让 subprocess 在退出时抱怨它还在跑


def _note_parent() -> None:
    _FORK_PARENT[0] = os.getpid()


def _die_with_parent() -> None:
    """在 pytest（或它 fork 出来的进程）fork 出来的子进程里：父进程一死，内核就发 SIGKILL（Linux 的 PR_SET_PDEATHSIG）。
    父进程在这之前已经死了（设上之前的那一瞬）：自己退出。只管 fork 不 exec 的（os.fork、multiprocessing）：
    subprocess 起的进程不经过这里，它们带着记号，归收尸人管。注意：内核看的是 fork 它的那个线程，那个线程结束时
    子进程也会收到 SIGKILL——测试里的进程池都在创建它的线程结束之前关掉了。"""
    if _PRCTL is None:
        return
    _PRCTL(1, signal.SIGKILL, 0, 0, 0)                  # PR_SET_PDEATHSIG = 1
    if os.getppid() != _FORK_PARENT[0]:
        os._exit(1)


_FORK_PARENT = [os.getpid()]
try:
    import ctypes
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None
if _PRCTL is not None:
    os.register_at_fork(before=_note_parent, after_in_child=_die_with_parent)


def _decode(data: bytes) -> str:
    """和 subprocess 的 text=True 一样：本地编码、统一换行。"""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


_REQUESTED: set = set()                                # 测试真的要过的命令（TESTS_PREFETCH_REPORT 用）
_RAN_IN_TEST: list = []                                # 测试要时还没有预跑、只好自己跑的命令（TESTS_PREFETCH_REPORT 用）


def run_script(*args, env=None, cwd=ROOT, text=True, timeout=180, instance=1, _prefetch=False):
    """python（sys.executable）带 args 跑一次，返回 subprocess.CompletedProcess（text=True 时是字符串）。
    同样的命令行、工作目录和环境在整个测试会话里只真正跑一次（几个测试文件共用；并发请求同一条时等先来的那次）：
    只给"同样的参数、同样的输出"的确定性运行用。要比两次独立运行的测试，第二次用 instance=2（缓存里单独的一项：
    同一条命令另外跑的一次，也可以预跑）或 run_script_fresh（不进缓存）。
    每次返回一个新的 CompletedProcess（字段是不可变的 str / bytes）：一个测试改不到别的测试拿到的结果。"""
    env = _full_env(env, _prefetch)
    key = _run_key(args, env, cwd, instance)
    if not _prefetch:
        with _RUNS_LOCK:
            _REQUESTED.add(key)

    def execute():
        if not _prefetch and threading.current_thread() is threading.main_thread():   # @ahead 的函数在后台线程里跑的不算
            _RAN_IN_TEST.append((key, os.environ.get("PYTEST_CURRENT_TEST", "")))
        return _execute(args, env, cwd, timeout)
    r = _once(_RUNS, key, execute)
    if text:
        return subprocess.CompletedProcess(r.args, r.returncode, _decode(r.stdout), _decode(r.stderr))
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout, r.stderr)


# 看"管道里印出来的样子"的测试（每行不超过 100 列、表格读得回来）用每个编号脚本的默认参数，只有 07 例外：它的默认
# 运行要约 25 CPU 秒（大半在 OpenEvolve 里），而印出来的版式和 --budget 8 --seeds 1 一样（同样的表、图、观察，只是
# 数不同）；07 的默认运行由 80 列伪终端的测试（test_terminal_width.py）整个看一遍。
PIPED_ARGS = {"lecture14/07_openevolve.py": ("--budget", "8", "--seeds", "1")}


def piped_args(path: str) -> tuple:
    """编号脚本 path 在"管道里的样子"的测试里用的命令行（run_script 的参数）。"""
    return (path, *PIPED_ARGS.get(path, ()))


def run_script_fresh(*args, env=None, cwd=ROOT, text=True, timeout=180):
    """和 run_script 一样，但一定是一次新的、独立的运行（不进缓存）：比"两次运行字节相同"的第二次。"""
    r = _execute(args, _full_env(env), cwd, timeout)
    if text:
        return subprocess.CompletedProcess(r.args, r.returncode, _decode(r.stdout), _decode(r.stderr))
    return r


def _prefetch_one(args, kw) -> None:
    """预跑一条（_normalise 过的）：kw 是 None 时 args 是 @ahead 的函数，算好放着；否则是 run_script 的命令。
    出错不管：真正用它的测试会再跑、把错报出来。"""
    try:
        if kw is None:
            args()
        else:
            run_script(*args, **kw, _prefetch=True)
    except Exception:                                           # noqa: BLE001
        pass


def prefetch(*commands, max_parallel=4):
    """几条 run_script 的命令（参数元组，或 (参数元组, dict(env=..., cwd=...))，或 @ahead 的函数）先同时跑完放进缓存：
    结果和一条条跑一样，只是在 2 核上快一些。已经在缓存里（或正在跑）的不再跑。"""
    threads = []
    sem = threading.Semaphore(max_parallel)

    def one(args, kw):
        with sem:
            _prefetch_one(args, kw)
    for c in commands:
        args, kw = _normalise(c)
        if kw is not None and _run_key(args, _full_env(kw.get("env")), kw.get("cwd", ROOT),
                                       kw.get("instance", 1)) in _RUNS:
            continue
        t = threading.Thread(target=one, args=(args, kw), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


_AHEAD: dict = {}
_SESSION_DIRS: list = []


def ahead(fn=None, *, waits=False):
    """装饰器，给没有参数、结果不随测试变的函数（比如在一个临时目录里跑一串命令，返回结果）：整个测试会话只算一次，
    之后的调用拿同一个结果（调用者不要改它）；写进测试文件的 PREFETCH 时，后台线程先算好（见下面）。算的时候
    出错：这次调用照常报错，后面的调用重新算。函数里不能用 pytest 的 fixture（tmp_path 之类），临时目录用
    session_dir()。@ahead(waits=True)：这个函数大半时间在等（桩服务器的 Retry-After、超时），几乎不用 CPU：
    后台另起一个线程一开始就跑它们，不占着跑脚本的那个线程。"""
    if fn is None:
        return functools.partial(ahead, waits=waits)

    @functools.wraps(fn)
    def wrapper():
        return _once(_AHEAD, fn, fn)
    wrapper.ahead = True
    wrapper.waits = waits
    return wrapper


def only_in(monkeypatch, owner, name: str, **replaced) -> None:
    """owner 这个模块里的全局名字 name（一个模块，比如 time、subprocess）换成它的一份拷贝，拷贝里 replaced 的属性换掉；
    测试结束时换回来。不要 monkeypatch.setattr(owner.time, "monotonic", …)：那改的是整个进程的 time 模块，后台线程
    （预跑的 @ahead 函数、测试服务器）同时在用——一次运行里假的时钟让它们量出几千秒，假的 Popen 让它们拿到别的进程。"""
    import types
    fake = types.ModuleType(name)
    fake.__dict__.update(vars(getattr(owner, name)))
    fake.__dict__.update(replaced)
    monkeypatch.setattr(owner, name, fake)


def base_env() -> dict:
    """测试会话开始时的环境（一份拷贝）。@ahead 的函数用它，不用 os.environ：它们可能在后台线程里跑，那时前台的
    测试也许正用 monkeypatch 改着 os.environ。"""
    return dict(_BASE_ENV)


def session_dir(prefix: str) -> str:
    """一个新的临时目录，测试会话结束时删掉（ahead 的函数用；它们可能在后台线程里跑，用不了 tmp_path）。"""
    d = tempfile.mkdtemp(prefix=f"tests-{prefix}-")
    _SESSION_DIRS.append(d)
    return d


def start_broken_mock_server(project):
    """在 project（课程四个目录的一份拷贝）里给 evolve/mock_llm.py 的 propose 开头放一个错（ZeroDivisionError），
    再开那份拷贝的命令行 MockLLM 服务器（--port 0）：返回 (Popen，start_new_session；finally 里 stop_group, 它的地址)。"""
    import pathlib
    project = pathlib.Path(project)
    src = project / "lecture14" / "evolve" / "mock_llm.py"
    text = src.read_text(encoding="utf-8")
    head = "    def propose(self, prompt"
    assert text.count(head) == 1, "测试的前提变了：mock_llm.py 里的 propose 不止一个或没有了"
    at = text.index(":\n", text.index(head)) + 2
    src.write_text(text[:at] + "        raise ZeroDivisionError('故意的错')\n" + text[at:], encoding="utf-8")
    p = subprocess.Popen([sys.executable, str(project / "lecture14" / "mock_llm_server.py"), "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=base_env())
    try:
        return p, p.stdout.readline().split("在 ", 1)[1].split("，")[0]
    except Exception:
        stop_group(p)
        raise


@ahead
def no_numpy_bin() -> str:
    """一个没有 numpy 的 python3 所在的目录（不带 pip 的 venv；学生机器上的系统 python3）。整个测试会话共用一个
    （建 venv 要一两秒，后台可以先建好）；测试不改它。"""
    venv = os.path.join(session_dir("nonumpy"), "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=120)
    bindir = os.path.join(venv, "bin")
    check = subprocess.run([os.path.join(bindir, "python3"), "-c", "import numpy"], capture_output=True)
    assert check.returncode != 0, "这个 python3 不该有 numpy"
    return bindir


@pytest.fixture(scope="session")
def no_numpy_path():
    """PATH 的最前面是一个没有 numpy 的 python3：编号脚本要自己改用项目的 .venv 重新运行。"""
    return f"{no_numpy_bin()}{os.pathsep}{os.environ['PATH']}"


# ---------------------------------------------------------------- 测试文件要的脚本在后台先跑
#
# 测试文件可以在模块里写 PREFETCH = [命令, ...]（和 prefetch 的参数一样：参数元组，或 (参数元组, dict(env=..., cwd=...))，
# 或 @ahead 的函数），列出它会用 run_script 跑的确定性命令、会调用的 @ahead 函数。收集完测试以后，后台线程按测试的
# 顺序把这些命令跑完、放进 run_script 的缓存，和前台的测试同时进行。结果和测试自己跑一样：同样的命令、同样的环境，
# 缓存的键里有全部参数、工作目录和环境；测试要的命令后台正在跑时等它，还没轮到时自己跑。@ahead(waits=True) 的函数
# （大半时间在等计时器）另有一个线程一开始就跑，不占着跑脚本的那个。
# 后台线程请预热过的解释器跑的脚本优先级低（nice 加 BACKGROUND_NICE）：前台要 CPU 时先给前台，后台只用剩下的。
# 量时间的测试（Ctrl-C 要在一秒内停、超时）标上 @pytest.mark.quiet：它们最先跑，那时前台没有别的事；后台的进程
# 优先级低，抢不走它们的 CPU。TESTS_NO_PREFETCH=1 关掉后台（想看每个测试自己跑要多久时）。

BACKGROUND_NICE = 10


def _normalise(c):
    if callable(c):                                             # @ahead 的函数
        return c, None
    return (tuple(c[0]), dict(c[1])) if len(c) == 2 and isinstance(c[1], dict) else (tuple(c), {})


_LANE = threading.local()                              # 后台线程里 _LANE.nice = BACKGROUND_NICE


def requested_nice() -> int:
    """这个线程请预热过的解释器跑的脚本要把优先级调低多少（nice 的增量）：后台线程里是 BACKGROUND_NICE，前台是 0。
    只调低脚本，不调低后台线程自己：它和前台的测试在同一个进程里抢 GIL，调低了它，连一次 0.06 秒 CPU 的运行都要等
    上一秒才拿到结果。"""
    return getattr(_LANE, "nice", 0)


class _Background:
    """后台的一个线程：按顺序跑一串 run_script 命令和 @ahead 函数（它请预热过的解释器跑的脚本优先级低）。收集测试时
    每收集完一个文件就 add() 它的命令、马上开始跑（收集要几秒，那时只有一个核在忙）；收集完 order() 把还没开始的
    按测试的顺序重排、去掉没有选中的测试要的，close() 以后做完就结束。stop() 以后不再开始新的（正在跑的跑完）。
    跑脚本的只有一个这样的线程：两个量过反而慢（51 秒对 47 秒），前台等的那条运行要和另一条分 CPU，反而晚拿到。"""

    def __init__(self, name="prefetch"):
        self.commands: list = []
        self.next = 0
        self.cond = threading.Condition()
        self.stopped = self.closed = False
        self.thread = threading.Thread(target=self._work, daemon=True, name=name)

    def _work(self):
        _LANE.nice = BACKGROUND_NICE
        while (command := self.take(wait=True)) is not None:
            _prefetch_one(*command)

    def take(self, wait=False):
        """排着的下一条（拿走）；没有了（或 stop() 过）是 None。wait=True 时收集还没完就等下一个文件的命令。"""
        with self.cond:
            while wait and not (self.stopped or self.closed or self.next < len(self.commands)):
                self.cond.wait()
            if self.stopped or self.next >= len(self.commands):
                return None
            self.next += 1
            return self.commands[self.next - 1]

    def add(self, commands):
        with self.cond:
            self.commands += commands
            self.cond.notify()
        if not self.thread.ident:                       # 第一次 add 时启动
            self.thread.start()

    def order(self, commands):
        """还没开始的命令换成 commands 里还没开始的那些，按 commands 的顺序（收集完以后：测试的顺序、只要选中的）。"""
        with self.cond:
            started = self.commands[:self.next]
            self.commands = started + [c for c in commands if c not in started]
            self.cond.notify()

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify()

    def stop(self):
        with self.cond:
            self.stopped = True
            self.cond.notify()

    def join(self, timeout=None):
        if self.thread.ident:
            self.thread.join(timeout)


_BACKGROUND: list = []


INTERRUPTED_SAID = "已中断（Ctrl-C）：下面一行数的是中断之前跑完的测试"


def _fit_wide_titles():
    """pytest 的分隔线（"!!! 标题 !!!"、"___ 测试名 ___"）按 len() 算标题多宽：中文一个字占两列，标题是中文时整行比
    终端宽、折成两行（学生报过：80 列里 Ctrl-C 停下时 INTERRUPTED_SAID 那行 102 列）。这里按显示宽度算，两边的
    分隔符相应少印几个。改的是 pytest 没公开的 TerminalWriter.sep：哪天它变了、import 不到，照旧用 pytest 的。"""
    try:
        from _pytest._io.terminalwriter import TerminalWriter
        from layout import display_width
    except ImportError:
        return
    original = TerminalWriter.sep

    def sep(self, sepchar, title=None, fullwidth=None, **markup):
        extra = display_width(title) - len(title) if title else 0
        if extra > 0:
            fullwidth = (self.fullwidth if fullwidth is None else fullwidth) - extra
        return original(self, sepchar, title, fullwidth, **markup)
    TerminalWriter.sep = sep


_fit_wide_titles()


@pytest.hookimpl(trylast=True)
def pytest_keyboard_interrupt(excinfo):
    """Ctrl-C 停下时 pytest 自己印一段：!!! KeyboardInterrupt !!!、conftest.py 里抛出它的那一行、"to show a full
    traceback … --full-trace"（学生报过：和脚本的"已中断。"不一样，还以为测试出了错）。这里把那段的标题换成
    INTERRUPTED_SAID（pytest 看到标题里没有 KeyboardInterrupt，就不印那一行和提示）。用的是 pytest 没公开的
    _keyboardinterrupt_memo：哪天它改了，这里什么也不做，照旧印 pytest 那段。"""
    reporter = _PYTEST_CONFIG[0].pluginmanager.get_plugin("terminalreporter") if _PYTEST_CONFIG else None
    crash = getattr(getattr(reporter, "_keyboardinterrupt_memo", None), "reprcrash", None)
    try:
        if crash is not None and "KeyboardInterrupt" in crash.message:
            crash.message = INTERRUPTED_SAID
    except Exception:                                   # noqa: BLE001
        pass


_PYTEST_CONFIG: list = []


def pytest_configure(config):
    _PYTEST_CONFIG[:] = [config]
    if TESTS_GPU_PROBLEM:
        os.rmdir(SESSION_TMP)                          # 收尸人还没起：这个会话的临时目录自己删（它还是空的）
        raise pytest.UsageError(TESTS_GPU_PROBLEM)
    _start_reaper()
    config.addinivalue_line("markers", "quiet: 量时间的测试：最先跑，那时前台没有别的事（conftest）")
    config.addinivalue_line("markers", "h100_claim: 讲义在 H100 上的论断：TESTS_GPU 不是 h100 时跳过（TESTS_GPU_CLAIMS=1 时照样检查）")
    config.addinivalue_line("markers", "h100_only: H100 上的具体数或印出来的东西（手算钉住的时间、默认运行印的命令），不是讲义的"
                                       "论断：TESTS_GPU 不是 h100 时跳过（TESTS_GPU_CLAIMS=1 也跳过）")
    config.addinivalue_line("markers", "h100_golden: H100 上一次具体运行（金标运行：一个种子的轨迹、讲义模型上只改一处）的前提，不是讲义的话："
                                       "TESTS_GPU 不是 h100 时跳过（TESTS_GPU_CLAIMS=1 也跳过）")
    if not os.environ.get("TESTS_NO_ZYGOTE") and hasattr(socket, "send_fds"):
        _start_zygote()


def _order(item) -> tuple:
    """测试跑的先后：量时间的测试（quiet）最先；然后是不预跑脚本的文件（多半只在本进程里算），这时后台已经在给后面的
    文件跑脚本；要预跑脚本的文件最后。同一个文件里的先后不变。"""
    module = getattr(item, "module", None)
    if item.get_closest_marker("quiet") is not None:
        return (0,)
    return (2,) if getattr(module, "PREFETCH", None) else (1,)


def _claim_said(function) -> str:
    """论断测试说的是哪条论断：文档字符串的第一句（跨行也接上）；没有文档字符串时，函数体开头（第一条语句之前）的注释
    （test_claims.py 的论断写在那里）；都没有就是空的（测试名本身就按论断起的）。"""
    import inspect
    def joined(lines):                                   # 折行处两边有一个是汉字时不加空格
        out = ""
        for line in filter(None, (x.strip() for x in lines)):
            out += ("" if not out or not (out[-1].isascii() and line[0].isascii()) else " ") + line
        return out
    doc = joined((inspect.getdoc(function) or "").splitlines())
    if not doc:
        try:
            source = inspect.getsource(function).splitlines()          # 从装饰器开始
        except (OSError, TypeError):
            source = []
        starts = [i for i, line in enumerate(source) if line.lstrip().startswith(("def ", "async def "))]
        body = source[starts[0] + 1:] if starts else []
        lead = []
        for line in body:                                # 只要开头的注释：断言中间的注释说的是后面那一段
            if not line.strip().startswith("#"):
                break
            lead.append(line.strip().lstrip("#").strip())
        doc = joined(lead)
    if not doc:                                          # 再没有：装饰器上面紧挨着的注释（"# P4：8B gate_up 在 M = 1 时……"）
        try:
            above = inspect.getcomments(function) or ""
        except (OSError, TypeError):
            above = ""
        doc = joined(line.strip().lstrip("#").strip() for line in above.splitlines())
    first = doc.split("。")[0]
    return first if len(first) <= 120 else first[:119] + "…"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """讲义论断（h100_claim）的测试失败时，失败信息的第一行说是哪条论断（和换了 GPU 时是哪块）：一眼分得出"讲义的
    一句话不成立了"和"引擎坏了"。核对印出来的数的测试要找的那句观察印成了【本次不成立】时（printed.ObservationFailed），
    不管有没有标记，也说是讲义论断不成立。只有断言失败才这样说；测试本身出错（别的异常：某个配置启动不了、找不到要读的那句
    话……）说的是"没跑完"，先当测试或引擎的问题查。"""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and call.when == "call" and "Timeout (>" in str(rep.longrepr) and "from pytest-timeout" in str(rep.longrepr):
        # 助教报过：负载 20 的机器上一个 Hypothesis 测试超时，报出来的是几百行 FlakyFailure（超时只落在一个例子里，
        # Hypothesis 重放时没超时），读着像引擎时好时坏。第一行先说是超时、那时机器多忙
        load = f"，现在 1 分钟平均负载 {os.getloadavg()[0]:.1f}（{os.cpu_count()} 个核）" if hasattr(os, "getloadavg") else ""
        rep.longrepr = (f"超时：{item.name} 跑了 pytest.ini 的上限（pytest-timeout）还没完{load}。机器很忙时会这样——"
                        "空闲时单独再跑一次它（pytest tests/文件::测试名）；空闲时也超时，才是测试或引擎的问题"
                        f"（死循环、平方级的慢）。\n{rep.longrepr}")
    elif (rep.failed and call.when == "call" and call.excinfo is not None and call.excinfo.typename == "ObservationFailed"
            and TESTS_GPU != "h100" and not os.environ.get("TESTS_GPU_CLAIMS")):
        # 换了 GPU：讲义的观察是 H100 上的论断，和 h100_claim 一样跳过并说明（助教报过：TESTS_GPU=l40s 时 04 的"山谷"
        # 那句在 L40S 上照实印成了【本次不成立】，核对那句话里的数的测试却以"讲义论断不成立"失败）
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0,
                        f"Skipped: 要核对的那句观察是讲义在 H100 上的论断，在 {TESTS_GPU} 上印成了【本次不成立】"
                        "（TESTS_GPU_CLAIMS=1 时照样报出来）")
    elif rep.failed and call.when == "call" and call.excinfo is not None and call.excinfo.typename == "ObservationFailed":
        gpu = "" if TESTS_GPU == "h100" else f"；GPU：{TESTS_GPU}（TESTS_GPU）"
        rep.longrepr = (f"讲义论断不成立（这个测试要核对的那句观察这次印成了【本次不成立】，句子里的数无从核对；"
                        f"不是引擎把数算错了）：{item.name}{gpu}\n{rep.longrepr}")
    elif rep.failed and call.when == "call" and item.get_closest_marker("h100_only") is not None:
        said = _claim_said(item.function)
        rep.longrepr = (f"H100 上的具体数或印出来的东西对不上（不是讲义的论断：按这个测试的说明查引擎、数据或它要的输出）："
                        f"{item.name}" + (f"（{said}）" if said else "") + f"\n{rep.longrepr}")
    elif rep.failed and call.when == "call" and item.get_closest_marker("h100_golden") is not None:
        said = _claim_said(item.function)
        rep.longrepr = (f"金标运行的前提变了（不是讲义的话错了，多半也不是引擎坏了：随机流、MockLLM 或模型的数变了，"
                        f"照这个测试的说明换一个种子或改法）：{item.name}" + (f"（{said}）" if said else "") + f"\n{rep.longrepr}")
    elif rep.failed and call.when == "call" and item.get_closest_marker("h100_claim") is not None:
        said = _claim_said(item.function)
        what = item.name + (f"（{said}）" if said else "")
        gpu = "" if TESTS_GPU == "h100" else f"；GPU：{TESTS_GPU}（TESTS_GPU）"
        launch = TESTS_GPU != "h100" and call.excinfo is not None and "不能启动" in str(call.excinfo.value)
        if call.excinfo is not None and call.excinfo.errisinstance(AssertionError) and launch:
            # 助教报过：A100 上 README 练习那段（BK=256）启动不了，读它的测试在 assert 上失败，被说成"讲义论断不成立"
            rep.longrepr = (f"讲义论断的前提在 {TESTS_GPU} 上没有（讲义用的配置在这块 GPU 上启动不了，多半也不是引擎坏了——"
                            f"换这块 GPU 时这条论断要换配置）：{what}{gpu}\n{rep.longrepr}")
        elif call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
            rep.longrepr = f"讲义论断不成立：{what}{gpu}\n{rep.longrepr}"
        else:
            kind = call.excinfo.typename if call.excinfo is not None else "出错"
            if TESTS_GPU != "h100" and call.excinfo is not None and "不能启动" in str(call.excinfo.value):
                # 助教报过：换成小共享内存的 GPU，测试里写死的 H100 配置启动不了，也被说成"先当测试或引擎的问题查"
                rep.longrepr = (f"讲义论断的测试没跑完（{kind}：讲义用的配置在 {TESTS_GPU} 上启动不了，不是断言失败，"
                                f"多半也不是引擎坏了——换这块 GPU 时这条论断要换配置）：{what}{gpu}\n{rep.longrepr}")
            else:
                rep.longrepr = (f"讲义论断的测试没跑完（{kind}，不是断言失败：先当测试或引擎的问题查）：{what}{gpu}\n"
                                f"{rep.longrepr}")


def pytest_collection_modifyitems(session, config, items):
    if TESTS_GPU != "h100" and not os.environ.get("TESTS_GPU_CLAIMS"):   # 换了 GPU：讲义在 H100 上的论断不适用，跳过并说明
        for item in items:
            if item.get_closest_marker("h100_claim") is not None:
                item.add_marker(pytest.mark.skip(reason=f"讲义在 H100 上的论断，这次引擎测试用的是 {TESTS_GPU}（TESTS_GPU）"))
    if TESTS_GPU != "h100":                             # 金标运行是 H100 上的一次具体运行：别的 GPU 上没有它
        for item in items:
            if item.get_closest_marker("h100_golden") is not None:
                item.add_marker(pytest.mark.skip(reason=f"H100 上的金标运行（一次具体的运行），这次用的是 {TESTS_GPU}（TESTS_GPU）"))
            elif item.get_closest_marker("h100_only") is not None:
                item.add_marker(pytest.mark.skip(reason=f"H100 上的具体数或输出（不是讲义的论断），这次用的是 {TESTS_GPU}（TESTS_GPU）"))
    if os.environ.get("TESTS_NO_PREFETCH"):
        return
    items.sort(key=_order)                              # sort 是稳定的：同一组里保持原来的顺序


_LANES: dict = {}                                      # "prefetch-waits"、"prefetch" -> _Background
_COLLECTED: set = set()                                # 已经把 PREFETCH 交给后台的测试文件（id(module)）


_STEALING: list = []


def _steal() -> bool:
    """前台（主线程）在等一条还没算完的运行时调用：从跑脚本的后台线程的队列里拿下一条，在前台跑（优先级不调低）。
    没有可拿的（或者已经在替后台跑）时返回 False。量过：不这样做时，前台等后台的那条单进程运行，一个核闲着。"""
    lane = _LANES.get("prefetch")
    command = None if lane is None or _STEALING else lane.take()
    if command is None:
        return False
    _STEALING.append(1)
    try:
        _prefetch_one(*command)
    finally:
        _STEALING.pop()
    return True


def _lanes(commands) -> dict:
    """命令分到两个后台线程：@ahead(waits=True) 的到"等着的"那个，其余的到跑脚本的那个。"""
    waiting = [c for c in commands if getattr(c[0], "waits", False)]
    return {"prefetch-waits": waiting, "prefetch": [c for c in commands if c not in waiting]}


def pytest_itemcollected(item):
    """收集到一个测试文件的第一个测试：这个文件的 PREFETCH 马上交给后台（不等别的文件收集完）。"""
    module = getattr(item, "module", None)
    if os.environ.get("TESTS_NO_PREFETCH") or module is None or id(module) in _COLLECTED:
        return
    _COLLECTED.add(id(module))
    for name, commands in _lanes([_normalise(c) for c in getattr(module, "PREFETCH", ())]).items():
        if commands:
            if name not in _LANES:
                _LANES[name] = _Background(name=name)
                _BACKGROUND.append(_LANES[name])
            _LANES[name].add(commands)


def pytest_collection_finish(session):
    """后台还没开始的命令按测试的顺序重排：文件里第一个不量时间的测试先跑的，它的命令先跑（量时间的测试虽然最先跑，
    却几乎不用预跑的结果）；没有选中的测试（-k 之类）要的命令去掉。"""
    if os.environ.get("TESTS_NO_PREFETCH"):
        return
    seen, commands = set(), []
    timed = [item for item in session.items if item.get_closest_marker("quiet") is not None]
    for item in [item for item in session.items if item.get_closest_marker("quiet") is None] + timed:
        module = getattr(item, "module", None)
        if module is None or id(module) in seen:
            continue
        seen.add(id(module))
        commands += [_normalise(c) for c in getattr(module, "PREFETCH", ())]
    for name, lane in _lanes(commands).items():
        if name in _LANES:
            _LANES[name].order(lane)
            _LANES[name].close()


# ---------------------------------------------------------------- 伪终端

def run_in_pty(args, cols, env_extra=None, unset=("COLUMNS", "LINES"), cwd=ROOT, timeout=120, env=None,
               stderr_too=False):
    """python（sys.executable）带 args 在一个 cols 列宽的伪终端里跑：标准输出是终端（列数来自终端本身，环境是 env
    （没给时是此刻的 os.environ，后台线程里是会话开始时的环境：_full_env）去掉 unset 列的变量，再加上 env_extra），标准错误单独收（stderr_too=True 时也写到
    这个终端上，和学生看到的一样混在一起，CompletedProcess 的 stderr 是空的）。返回 CompletedProcess
    （stdout 是终端上的文字，换行统一成 \\n）。只在 Linux 上用（窗口大小用 ioctl 设）。和 run_script 一样：能交给
    预热过的解释器的就由它 fork 出来跑（终端的两端照样传过去），在后台线程里优先级低。"""
    import fcntl
    import pty
    import struct
    import termios
    env = {k: v for k, v in _full_env(env).items() if k not in unset}
    env.update(env_extra or {})
    command = [sys.executable, *map(str, args)]
    deadline = time.monotonic() + timeout
    zygote = _zygote() if _for_zygote(args, env, cwd) else None
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    p = sock = pid = None
    chunks = []
    with tempfile.TemporaryFile() as err:
        try:
            try:
                if zygote is not None:
                    sock, replies, pid = _zygote_start(zygote, args, env, cwd, slave,
                                                       slave if stderr_too else err.fileno())
                else:
                    p = subprocess.Popen(command, stdout=slave, stderr=slave if stderr_too else err, env=env, cwd=cwd,
                                         start_new_session=True)
                    _lower_priority(p)
            finally:
                os.close(slave)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(command, timeout)
                if not select.select([master], [], [], left)[0]:
                    continue
                try:
                    data = os.read(master, 65536)
                except OSError:                          # Linux：子进程关掉终端以后读到 EIO
                    break
                if not data:
                    break
                chunks.append(data)
            if p is not None:
                code = p.wait(timeout=max(0.1, deadline - time.monotonic()))
            else:
                code = _zygote_wait(replies, sock, deadline, args, env, cwd, timeout)
        finally:                                         # 测试失败、超时也不留下子进程
            os.close(master)
            if p is not None:
                stop_group(p)
            _kill_group(pid)
            if sock is not None:
                sock.close()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    out = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    return subprocess.CompletedProcess(command, code, out, stderr)
