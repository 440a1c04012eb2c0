"""make test started as a background job of a non-interactive shell (`make test &` in a script, nohup, some CI)
inherits SIGINT = ignored, and so did every script the Ctrl-C tests start: 10 of them failed (exit 0 or a timeout
instead of 130). conftest.py restores the default handling, so the scripts the tests start get Ctrl-C again.
And Ctrl-C stops make test itself even when Python swallows the KeyboardInterrupt (it landed in a gc callback)."""
import signal
import subprocess
import sys


def test_scripts_started_by_the_tests_receive_ctrl_c():
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    child = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"],
                           capture_output=True, text=True, timeout=30)
    assert child.stdout.strip() == "False"


SWALLOWED = '''
import gc
import signal


def test_ctrl_c_lands_in_a_gc_callback():
    # 像 Hypothesis 装的那种垃圾回收回调：Ctrl-C 正好落在它里面时，Python 把 KeyboardInterrupt 当成
    # "Exception ignored in ..." 吞掉，测试照常往下跑
    def callback(phase, info):
        if phase == "start":
            gc.callbacks.remove(callback)
            signal.raise_signal(signal.SIGINT)
    gc.callbacks.append(callback)
    gc.collect()


def test_after_the_press():
    pass
'''


def test_ctrl_c_stops_the_tests_even_when_python_swallows_the_keyboardinterrupt(tmp_path):
    # 以前在第 20 秒左右按 Ctrl-C，两次都没停下：KeyboardInterrupt 落在 Hypothesis 的垃圾回收回调里被吞掉了，
    # 剩下的测试照样跑完、退出码 0。现在 conftest 记下按过 Ctrl-C，当前的测试一结束就停（pytest 的退出码 2）
    import os
    (tmp_path / "test_press.py").write_text(SWALLOWED, encoding="utf-8")
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=tests, TESTS_NO_ZYGOTE="1")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
                        "-p", "conftest", "-o", "timeout=60", str(tmp_path / "test_press.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr[-2000:]
    assert "1 passed" in p.stdout and "2 passed" not in p.stdout, p.stdout[-2000:]
    # 学生报过：停下时是 pytest 的 "!!! KeyboardInterrupt !!!"、conftest.py 的一行和 --full-trace 的提示；现在一句中文
    from conftest import INTERRUPTED_SAID
    assert INTERRUPTED_SAID in p.stdout and "--full-trace" not in p.stdout, p.stdout[-2000:]
    assert "! KeyboardInterrupt !" not in p.stdout, p.stdout[-2000:]
    # 学生报过：80 列的终端里那一行是 102 列（pytest 按 len() 排分隔线）；管道里 pytest 按 80 列排
    from layout import display_width
    said = [line for line in p.stdout.splitlines() if INTERRUPTED_SAID in line]
    assert len(said) == 1 and 70 < display_width(said[0]) <= 80, said
