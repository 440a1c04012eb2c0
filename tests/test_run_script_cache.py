"""conftest.run_script（整个测试会话共用的脚本运行）：环境、工作目录、instance 不同就是不同的运行，一样才共用；
测试 monkeypatch 过的环境变量子进程照样继承、也算在键里；返回的结果每次是新的对象，一个测试改不到别人的。
conftest.ahead（只算一次的函数）和后台预跑的线程：出错的下次重算；停下时不开始新的；后台的优先级低、前台的不变。"""

import os
import sys
import threading

import pytest

import conftest
from conftest import ROOT, run_script

SHOW = ("-c", "import os, random; print(os.environ.get('RUN_SCRIPT_PROBE'), os.getcwd(), random.random(), sep='\\n')")
# 一行一个值：工作目录里可能有空格（TMPDIR="/tmp/课程 材料" 时 tmp_path 就有），不能按空白切


def test_same_command_is_run_once_and_results_are_copies():
    a = run_script(*SHOW)
    b = run_script(*SHOW)
    assert a.returncode == 0 and a.stdout == b.stdout          # random.random() 一样：是同一次运行
    assert a is not b
    a.stdout = "changed"
    assert run_script(*SHOW).stdout == b.stdout


def test_environment_cwd_and_instance_make_separate_runs(tmp_path, monkeypatch):
    base = run_script(*SHOW).stdout
    other = run_script(*SHOW, env={**os.environ, "RUN_SCRIPT_PROBE": "x"}).stdout
    assert other.split("\n")[0] == "x" and other != base
    assert run_script(*SHOW, cwd=tmp_path).stdout.split("\n")[1] == str(tmp_path)
    second = run_script(*SHOW, instance=2).stdout
    assert second.split("\n")[:2] == base.split("\n")[:2] and second != base   # 另外跑的一次：随机数不一样
    monkeypatch.setenv("RUN_SCRIPT_PROBE", "y")                # 像 subprocess 一样继承此刻的环境，不拿缓存里的
    assert run_script(*SHOW).stdout.split("\n")[0] == "y"


def test_prefetched_runs_use_the_session_environment(monkeypatch):
    # 预跑（PREFETCH）不继承测试此刻 monkeypatch 的环境：COLUMNS 这类会改变输出的变量不会混进缓存
    monkeypatch.setenv("RUN_SCRIPT_PROBE", "z")
    out = run_script("-c", "import os; print(os.environ.get('RUN_SCRIPT_PROBE'))", _prefetch=True).stdout
    assert out.strip() == "None"
    key = conftest._run_key(("a",), conftest._full_env(None, True), ROOT)
    assert key == conftest._run_key(("a",), dict(conftest._BASE_ENV, PYTEST_CURRENT_TEST="t"), ROOT)


def test_a_background_thread_never_inherits_a_foreground_monkeypatch(monkeypatch):
    """干净克隆里的 CI 报过：后台线程里的 @ahead 函数（OpenEvolve 的那次运行）用 run_concurrently 起进程，继承了那一刻
    前台测试 monkeypatch 的 COLUMNS，管道里印出 128 列的行，测试偶尔失败。后台线程里没给 env 的运行（run_script、
    run_concurrently、run_in_pty 都一样）用会话开始时的环境；前台照旧继承此刻的 os.environ。"""
    monkeypatch.setenv("COLUMNS", "128")
    monkeypatch.setenv("RUN_SCRIPT_PROBE", "foreground")
    probe = [sys.executable, "-c", "import os; print(os.environ.get('COLUMNS'), os.environ.get('RUN_SCRIPT_PROBE'))"]
    seen = {}

    def background():
        seen["env"] = conftest._full_env(None)
        seen["ran"] = conftest.run_concurrently(probe)[0].stdout.split()
    t = threading.Thread(target=background)
    t.start()
    t.join(60)
    assert "COLUMNS" not in seen["env"] and "RUN_SCRIPT_PROBE" not in seen["env"]
    assert seen["ran"] == ["None", "None"]
    assert conftest.run_concurrently(probe)[0].stdout.split() == ["128", "foreground"]       # 前台：照旧继承


def test_ahead_computes_once_and_retries_after_an_error():
    calls = []

    @conftest.ahead
    def once():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("第一次出错")
        return ("结果", len(calls))
    try:
        once()
        raise AssertionError("第一次应该报错")
    except RuntimeError:
        pass
    assert once() == ("结果", 2) and once() == ("结果", 2) and len(calls) == 2   # 出错后重算一次，之后共用


def test_background_runs_ahead_functions_and_commands():
    # 后台线程按顺序取命令和 @ahead 函数来跑，都跑完；stop() 以后不再开始新的
    seen = []

    @conftest.ahead
    def job():
        seen.append("job")
        return 1
    b = _lane([job, SHOW])
    b.join(timeout=60)
    assert seen == ["job"] and job() == 1 and seen == ["job"]     # 算过了：再调用不重算
    assert conftest._run_key(SHOW[0:2], conftest._full_env(None, True), ROOT) in conftest._RUNS
    stopped = conftest._Background()
    stopped.stop()
    stopped.add([conftest._normalise(job)])
    stopped.join(timeout=60)
    assert stopped.next == 0                                      # 停下以后一条也没开始


def _lane(commands):
    """一个后台线程，跑完 commands 就结束（像收集完测试以后那样 close）。"""
    b = conftest._Background()
    b.add([conftest._normalise(c) for c in commands])
    b.close()
    return b


def test_the_lane_starts_on_the_first_file_and_is_reordered_after_collection():
    # 收集时每收集完一个文件，它的命令就开始跑；收集完，还没开始的按测试的顺序重排，没有选中的测试要的去掉
    gate, ran = threading.Event(), []

    def job(name, wait=False):
        @conftest.ahead
        def run():
            if wait:
                gate.wait(30)
            ran.append(name)
        return run
    first, a, b, unused = job("first", wait=True), job("a"), job("b"), job("unused")
    lane = conftest._Background()
    lane.add([conftest._normalise(c) for c in (first, a, unused)])         # 第一个文件
    lane.add([conftest._normalise(b)])                                     # 第二个文件
    lane.order([conftest._normalise(c) for c in (first, b, a)])           # 测试的顺序：b 在 a 前，unused 没选中
    lane.close()
    gate.set()
    lane.join(timeout=60)
    assert ran == ["first", "b", "a"]


def test_the_foreground_runs_the_next_queued_command_while_it_waits(monkeypatch):
    # 前台等一条别的线程正在算的运行时，替后台跑它排着的下一条（两个核都不闲着）；跑完再等
    unblocked = threading.Event()

    @conftest.ahead
    def unblock():
        unblocked.set()
        return threading.current_thread() is threading.main_thread()
    lane = conftest._Background()                                         # 它自己的线程不启动：只有前台能拿
    lane.commands = [conftest._normalise(unblock)]
    monkeypatch.setitem(conftest._LANES, "prefetch", lane)
    table, computing = {}, threading.Event()

    def other():
        computing.set()
        return "算完了" if unblocked.wait(10) else "没人替后台跑"
    t = threading.Thread(target=conftest._once, args=(table, "k", other))
    t.start()
    computing.wait(10)
    assert conftest._once(table, "k", lambda: "前台自己算") == "算完了"
    assert unblock() is True and lane.next == 1
    t.join(10)


NICE = ("-c", "import os; print(os.nice(0))")


@pytest.mark.skipif(not conftest._for_zygote(NICE, dict(os.environ), ROOT), reason="这次不用预热过的解释器")
def test_background_scripts_run_at_a_lower_priority_and_the_foreground_ones_do_not():
    # 后台线程请预热过的解释器跑的脚本优先级调低 BACKGROUND_NICE；前台测试跑的脚本、后台线程自己（它和前台在同一个
    # 进程里抢 GIL）都不调
    front = os.nice(0)
    got = {}

    @conftest.ahead
    def background():
        got["thread"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) \
            if sys.platform.startswith("linux") else front
        return conftest._execute(NICE, dict(os.environ), ROOT, 60)
    _lane([background]).join(timeout=60)
    assert int(background().stdout) == min(front + conftest.BACKGROUND_NICE, 19) and got["thread"] == front
    assert int(conftest._execute(NICE, dict(os.environ), ROOT, 60).stdout) == front


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
def test_background_pty_runs_and_their_children_run_at_a_lower_priority():
    # 07 在伪终端里的运行在后台线程预跑（它起的 OpenEvolve worker、服务器也一样）：和 run_script 一样调低优先级
    front = os.nice(0)
    child = ["-c", "import subprocess, sys; print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'],"
                   " capture_output=True, text=True).stdout.strip())"]

    @conftest.ahead
    def background():
        return conftest.run_in_pty(child, 80, env=dict(os.environ), timeout=60)
    _lane([background]).join(timeout=60)
    assert int(background().stdout) == min(front + conftest.BACKGROUND_NICE, 19)
    assert int(conftest.run_in_pty(child, 80, env=dict(os.environ), timeout=60).stdout) == front
