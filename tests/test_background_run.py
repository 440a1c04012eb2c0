"""make test started as a background job of a non-interactive shell (`make test &` in a script, nohup, some CI)
inherits SIGINT = ignored, and so did every script the Ctrl-C tests start: 10 of them failed (exit 0 or a timeout
instead of 130). conftest.py restores the default handling, so the scripts the tests start get Ctrl-C again."""
import signal
import subprocess
import sys


def test_scripts_started_by_the_tests_receive_ctrl_c():
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    child = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"],
                           capture_output=True, text=True, timeout=30)
    assert child.stdout.strip() == "False"
