"""conftest.run_script（整个测试会话共用的脚本运行）：环境、工作目录、instance 不同就是不同的运行，一样才共用；
测试 monkeypatch 过的环境变量子进程照样继承、也算在键里；返回的结果每次是新的对象，一个测试改不到别人的。"""

import os

import conftest
from conftest import ROOT, run_script

SHOW = ("-c", "import os, random; print(os.environ.get('RUN_SCRIPT_PROBE'), os.getcwd(), random.random())")


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
    assert other.split()[0] == "x" and other != base
    assert run_script(*SHOW, cwd=tmp_path).stdout.split()[1] == str(tmp_path)
    second = run_script(*SHOW, instance=2).stdout
    assert second.split()[:2] == base.split()[:2] and second != base   # 另外跑的一次：随机数不一样
    monkeypatch.setenv("RUN_SCRIPT_PROBE", "y")                # 像 subprocess 一样继承此刻的环境，不拿缓存里的
    assert run_script(*SHOW).stdout.split()[0] == "y"


def test_prefetched_runs_use_the_session_environment(monkeypatch):
    # 预跑（PREFETCH）不继承测试此刻 monkeypatch 的环境：COLUMNS 这类会改变输出的变量不会混进缓存
    monkeypatch.setenv("RUN_SCRIPT_PROBE", "z")
    out = run_script("-c", "import os; print(os.environ.get('RUN_SCRIPT_PROBE'))", _prefetch=True).stdout
    assert out.strip() == "None"
    key = conftest._run_key(("a",), conftest._full_env(None, True), ROOT)
    assert key == conftest._run_key(("a",), dict(conftest._BASE_ENV, PYTEST_CURRENT_TEST="t"), ROOT)
