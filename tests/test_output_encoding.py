"""终端的编码不是 UTF-8 时（zh_CN.GBK 的终端；PYTHONIOENCODING 模拟它）：编号脚本照样跑完，中文照样印出来，
编不出来的几个字（µs 的 µ、图里的 ▒ █）印成 ?（runner.replace_unencodable）。助教试过：以前 13 讲的 01、14 讲的
04、06 在第一个 µs 或第一张图那里抛 UnicodeEncodeError，印一段 traceback，退出码 1。"""

import pytest

from conftest import base_env, run_script

SCRIPTS = [("lecture13/01_timing_model.py",), ("lecture14/06_your_heuristic.py",),
           ("lecture14/04_alphaevolve_tiling.py", "--budget", "40", "--seeds", "1")]
ENCODINGS = ["gbk", "latin-1"]
C_LOCALE = ("lecture14/01_heuristic_as_code.py",), dict(LC_ALL="C", PYTHONUTF8="0")
# conftest：后台先跑。改了 PYTHONIOENCODING、LC_ALL 的运行每次新起解释器（不能用预热过的那个），测试自己跑时这个文件
# 在前台约 4 秒墙钟（2026-12-05 空闲时的整个会话里量的）
PREFETCH = ([*SCRIPTS, C_LOCALE[0]]
            + [(args, dict(env=dict(base_env(), PYTHONIOENCODING=e))) for args in SCRIPTS for e in ENCODINGS]
            + [(C_LOCALE[0], dict(env=dict(base_env(), **C_LOCALE[1])))])


@pytest.mark.parametrize("args", SCRIPTS, ids=[a[0] for a in SCRIPTS])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_terminal_that_is_not_utf8_gets_the_same_lines_with_question_marks(args, encoding):
    utf8 = run_script(*args, text=False)
    other = run_script(*args, text=False, env=dict(base_env(), PYTHONIOENCODING=encoding))
    assert other.returncode == utf8.returncode == 0, other.stderr.decode(encoding, "replace")[-2000:]
    assert b"Traceback" not in other.stderr
    # 逐字节就是 UTF-8 的那次运行换成这个编码、编不出来的字换成 ? 的样子：别的一个字不差
    assert other.stdout == utf8.stdout.decode("utf-8").encode(encoding, "replace")


def test_the_c_locale_without_utf8_mode_gets_question_marks_not_a_traceback():
    # 审读报过：LC_ALL=C PYTHONUTF8=0 时标准输出是 ascii、错误处理是 surrogateescape（不是 strict），以前照旧在第一个
    # 汉字抛 UnicodeEncodeError。现在和别的编码一样：编不出来的字印成 ?
    args, c_locale = C_LOCALE
    utf8 = run_script(*args, text=False)
    c = run_script(*args, text=False, env=dict(base_env(), **c_locale))
    assert c.returncode == utf8.returncode == 0 and b"Traceback" not in c.stderr, c.stderr[-2000:]
    assert c.stdout == utf8.stdout.decode("utf-8").encode("ascii", "replace")
