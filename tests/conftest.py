"""让测试能直接 import console、kernel_lab、sched_lab、evolve：把各讲的目录（从仓库根算出的绝对路径）放进 sys.path。
还有几个测试文件共用的 fixture：时间表、默认划分的训练形状。"""

import os
import signal
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for lecture in ("lecture01", "lecture10", "lecture13", "lecture14"):
    sys.path.insert(0, os.path.join(ROOT, lecture))

# 引擎和讲义论断的测试都用讲义的专家（钉住的一份），不用学生正在改的 lecture14/expert_heuristic.py：
# 在 import evolve 之前设好环境变量，测试启动的子进程（跑 04、05 脚本）也继承它。
# 学生的那份只由 tests/test_student_expert.py 检查（能不能解析；和讲义的不同时在测试结果的末尾说一行）。
LECTURE_EXPERT = os.path.join(ROOT, "lecture14", "evolve", "lecture_expert.py")
STUDENT_EXPERT = os.path.join(ROOT, "lecture14", "expert_heuristic.py")
os.environ["MINI_ALPHAEVOLVE_EXPERT"] = LECTURE_EXPERT

# make test 被放到后台跑（没有作业控制的 shell 里的 "make test &"、nohup、某些 CI）时，SIGINT 是"忽略"，
# 而"忽略"会经 exec 传给测试起的每个脚本：它们就收不到 Ctrl-C，测 Ctrl-C 的测试全失败。这里恢复成 Python 的默认处理
# （exec 时变回"默认"，子进程里的 Python 照常把 Ctrl-C 变成 KeyboardInterrupt）。
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


def run_concurrently(*commands, cwd=ROOT, timeout=180):
    """几条命令（参数列表）同时跑，各是独立的子进程（结果和一条条跑一样，只是在 2 核上快一些）；
    按顺序返回 subprocess.CompletedProcess（text，stdout 和 stderr 都收下）。每条命令在自己的进程组里跑，
    结束时（包括超时、出错）整组杀掉：不留下脚本的后台 worker。"""
    import subprocess
    procs = []
    out = []
    try:
        for c in commands:
            procs.append(subprocess.Popen(list(c), cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          start_new_session=True))
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    finally:
        for p in procs:
            stop_group(p)
    return out


def student_expert_note():
    """学生的 expert_heuristic.py 和讲义的不同时，返回一行说明；相同（或读不了）时返回 None。"""
    try:
        from evolve.problem import load_heuristic
        lecture, student = load_heuristic(LECTURE_EXPERT), load_heuristic(STUDENT_EXPERT)
    except Exception:                                    # noqa: BLE001  读不了的由 test_student_expert 报出来
        return None
    if student == lecture:
        return None
    return ("注意：lecture14/expert_heuristic.py 和讲义的专家不同（改过；有意改的没关系，其余测试用的是讲义的那份）；"
            "git checkout lecture14/expert_heuristic.py 可以恢复。")


def pytest_terminal_summary(terminalreporter):
    note = student_expert_note()
    if note:
        terminalreporter.write_line(note)


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
