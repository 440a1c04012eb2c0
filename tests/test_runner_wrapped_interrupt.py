"""A Ctrl-C that Python wraps in another exception is still a Ctrl-C: one line "已中断。", exit 130, no traceback.
Seen in CI: Ctrl-C landed while lecture13/01 was importing svg.py (xml → urllib → ipaddress); inside a class body
KeyboardInterrupt becomes RuntimeError("Error calling __set_name__ ..."), and the script ended with a 30-line
traceback and exit 1. Also: drawing a chart in the terminal no longer imports svg.py at all."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LECTURE01 = os.path.join(ROOT, "lecture01")


def run_snippet(body):
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {LECTURE01!r})
        from runner import run
        def raise_wrapped(kind):
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as ki:
                raise kind("Error calling __set_name__ on 'cached_property' instance 'hostmask'") from ki
        """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", ["RuntimeError", "ImportError"])
def test_wrapped_ctrl_c_inside_run_is_an_interrupt(kind):
    p = run_snippet(f"run(lambda: raise_wrapped({kind}))")
    assert p.returncode == 130 and p.stderr.strip() == "已中断。", (p.returncode, p.stderr)


def test_wrapped_ctrl_c_before_run_is_an_interrupt():
    # 还没走到 run()（脚本在 import 时）：装好的 excepthook 一样处理
    p = run_snippet("""
        import runner
        sys.excepthook = runner._excepthook              # 编号脚本里 runner 自己装上（这里是 -c，所以手装）
        raise_wrapped(RuntimeError)
        """)
    assert p.returncode == 130 and p.stderr.strip() == "已中断。", (p.returncode, p.stderr)


def test_an_ordinary_error_still_shows_its_traceback():
    p = run_snippet("run(lambda: 1 / 0)")
    assert p.returncode == 1 and "ZeroDivisionError" in p.stderr and "已中断" not in p.stderr


def test_terminal_charts_do_not_import_svg():
    code = textwrap.dedent(f"""
        import sys, io, contextlib
        sys.path.insert(0, {LECTURE01!r})
        from console import Charts
        with contextlib.redirect_stdout(io.StringIO()):
            Charts().line("x", "t", {{"a": [(0, 1), (1, 2)]}})
        print("svg" in sys.modules, "xml.sax.saxutils" in sys.modules)
        """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.split() == ["False", "False"], (p.stdout, p.stderr)


def test_ctrl_c_while_runner_itself_is_importing(tmp_path):
    """Ctrl-C 落在 runner 自己的 import 里（argparse 之类，约 10 毫秒）：excepthook 在 runner 的最前面就装上了，
    同样只印一行、退出码 130，不是 Python 的 traceback。这里让 import argparse 抛出 KeyboardInterrupt 来模拟。"""
    script = tmp_path / "01_ctrl_c_at_import.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.modules.pop("argparse", None)

        class CtrlC:                                       # 谁 import argparse，谁就"被按了 Ctrl-C"
            def find_spec(self, name, path=None, target=None):
                if name == "argparse":
                    raise KeyboardInterrupt
                return None

        sys.meta_path.insert(0, CtrlC())
        sys.path.insert(0, {LECTURE01!r})
        import runner
        print("没有停下")
        """), encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (p.returncode, p.stderr.strip(), p.stdout) == (130, "已中断。", ""), (p.returncode, p.stderr)
