"""conftest 的预热过的解释器（tests/zygote.py）跑出来的，和新起一个 python 解释器跑出来的一样：标准输出、标准错误
逐字节相同（"用时"那行除外），退出码相同——课程里的脚本、项目的一份改过的拷贝、改过的环境、python -c、
没接住的异常、SystemExit、Ctrl-C。测试用它只是为了快；这里保证它不改变测试看到的东西。"""

import os
import re
import shutil
import sys

import pytest

from conftest import (ROOT, _execute, _full_env, _zygote, _zygote_can_run, _zygote_execute, base_env, run_in_pty,
                      zygote_missing)

TIMING = re.compile("\n?（用时(?: [\\d.]+ 秒|不到 0.1 秒)）\n".encode("utf-8"))     # runner.took 的两种说法


@pytest.fixture(autouse=True)
def _needs_the_zygote():
    why = zygote_missing()
    if why:
        pytest.skip(why)


def both(args, env=None, cwd=ROOT):
    """同一次运行，预热过的解释器跑一次、新起的解释器跑一次（TESTS_NO_ZYGOTE=1 时也比：这里查的就是它）。"""
    env = _full_env(env)
    assert _zygote_can_run(args, env, cwd), args
    warm = _zygote_execute(_zygote(), args, env, cwd, 120)
    cold = _execute(args, env, cwd, 120, zygote=False)
    return warm, cold


def assert_same(warm, cold, stderr=True):
    """stderr=False：标准错误里有按时间报的进度（后台进程做完几次），两次运行本来就可能不同，只比标准输出。"""
    assert warm.returncode == cold.returncode, (warm.returncode, cold.returncode, warm.stderr[-500:])
    assert warm.stdout == cold.stdout
    if stderr:
        assert TIMING.sub(b"", warm.stderr) == TIMING.sub(b"", cold.stderr)


@pytest.mark.parametrize("args", [("lecture14/04_alphaevolve_tiling.py", "--budget", "60", "--seeds", "2", "--jobs", "2"),
                                  ("lecture14/04_alphaevolve_tiling.py", "--budget", "abc"),
                                  ("lecture13/01_timing_model.py", "--help"),
                                  ("lecture14/06_your_heuristic.py", "no_such_file.py")])
def test_lecture_scripts_print_the_same(args):
    assert_same(*both(args), stderr="--jobs" not in args)


def test_a_changed_copy_of_the_project_is_what_runs(tmp_path):
    # 拷贝里改了 kernel_lab（脚本 import 的模块，预热的进程里已经有 ROOT 那份）：跑的是拷贝里的
    for d in ("lecture01", "lecture10"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    lab = tmp_path / "lecture10" / "kernel_lab.py"
    lab.write_text(lab.read_text(encoding="utf-8") + "\nprint('这是拷贝里的 kernel_lab')\n", encoding="utf-8")
    warm, cold = both(("lecture10/01_config_space.py",), cwd=tmp_path)
    assert_same(warm, cold)
    assert warm.returncode == 0 and "这是拷贝里的 kernel_lab".encode("utf-8") in warm.stdout


def test_a_changed_environment_is_seen_at_import(tmp_path):
    # evolve.problem 在 import 时读 MINI_ALPHAEVOLVE_EXPERT：改了它，04 印的专家跟着变
    mine = tmp_path / "mine.py"
    mine.write_text("def choose_config(M, N, K):\n    return Config(BM=64, BN=64, BK=32, warps=4, stages=3, group=8)\n",
                    encoding="utf-8")
    env = dict(os.environ, MINI_ALPHAEVOLVE_EXPERT=str(mine))
    warm, cold = both(("lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "1"), env=env)
    assert_same(warm, cold)
    assert warm.returncode == 0 and "BM=64, BN=64, BK=32" in warm.stdout.decode("utf-8")


def test_a_changed_variable_read_only_when_running_is_seen_without_a_reimport():
    # http_proxy 不在 IMPORT_ENV 里：课程模块不重新 import，fork 出来的脚本照样在用的时候读到它（连不上时说经哪个代理）
    env = dict(os.environ, http_proxy="http://127.0.0.1:9")
    env.pop("HTTP_PROXY", None)
    warm, cold = both(("lecture14/04_alphaevolve_tiling.py", "--budget", "2", "--seeds", "1", "--llm",
                       "http://192.0.2.7:8000/v1", "--model", "m"), env=env)
    assert_same(warm, cold)
    assert warm.returncode == 2 and "http://127.0.0.1:9".encode() in warm.stderr, warm.stderr.decode()[-500:]


# 在一个新解释器里照 tests/zygote.py 那样 import 课程模块（runpy 执行它的开头，不开 socket），记下课程模块的代码
# 读了哪些环境变量：从读的那一帧往外找，先碰到 lecture*/ 下的文件就记下（课程模块自己读的，或者它调用的函数读的）；
# 先碰到别的模块的模块级代码（课程模块 import 的标准库在 import 时读的，比如 xml.sax 读 PY_SAX_PARSER）不记：
# 那些模块重新 import 课程模块时也不重新 import，变量变了也不会再读
IMPORT_PROBE = """
import os, runpy, sys
zygote, lectures = sys.argv[1], sys.argv[2:]
reads = set()
getitem = os._Environ.__getitem__
def recorded(self, key):
    f = sys._getframe(1)
    while f is not None:
        if os.path.abspath(f.f_code.co_filename).startswith(tuple(d + os.sep for d in lectures)):
            reads.add((key, os.path.relpath(os.path.abspath(f.f_code.co_filename), os.path.dirname(lectures[0]))))
            break
        if f.f_code.co_name == "<module>":
            break
        f = f.f_back
    return getitem(self, key)
os._Environ.__getitem__ = recorded
g = runpy.run_path(zygote, run_name="zygote_probe")
# 每个课程模块拿着哪些课程模块的东西（模块本身，或者在那里定义的函数、类）：只重新 import 一讲的模块时，别的讲不能拿着它
where = {n: os.path.relpath(os.path.abspath(sys.modules[n].__file__), os.path.dirname(lectures[0])) for n in g["PROJECT"]}
holds = {n: sorted({where[m] for v in vars(sys.modules[n]).values()
                    for m in [getattr(v, "__name__", None) if type(v) is type(os) else getattr(v, "__module__", None)]
                    if m in where}) for n in g["PROJECT"]}
print(repr((sorted(reads), g["IMPORT_ENV"], {where[n]: holds[n] for n in g["PROJECT"]})))
"""


def test_the_variables_the_lecture_modules_read_at_import_are_the_ones_the_zygote_watches():
    """预热过的解释器只在 IMPORT_ENV 里的变量变了时重新 import 课程模块：课程模块 import 时读的变量都得在里面
    （有人在模块开头加了一句 os.environ.get("别的变量")，这里失败：把它加进 tests/zygote.py 的 IMPORT_ENV）。"""
    import subprocess
    lectures = [os.path.join(ROOT, d) for d in ("lecture01", "lecture10", "lecture13", "lecture14")]
    p = subprocess.run([sys.executable, "-c", IMPORT_PROBE, os.path.join(ROOT, "tests", "zygote.py"), *lectures],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, start_new_session=True)
    assert p.returncode == 0, p.stderr[-2000:]
    reads, watched, holds = eval(p.stdout.strip().splitlines()[-1])            # noqa: S307  （自己印的 repr）
    files = {f.replace(os.sep, "/") for f in holds}
    assert {"lecture14/evolve/problem.py", "lecture10/kernel_lab.py", "lecture01/runner.py"} <= files, files  # 真的 import 了
    assert ("MINI_ALPHAEVOLVE_EXPERT", os.path.join("lecture14", "evolve", "problem.py")) in reads, reads  # 真的记下了读
    assert {k for k, _ in reads} <= set(watched), sorted({k for k, _ in reads} - set(watched))
    for key, where in reads:                  # 只重新 import 一讲的模块时：读这个变量的模块在那一讲里
        scope = watched[key]
        assert scope is None or where.split(os.sep)[0] in scope, (key, where, scope)
    for scope in {s for s in watched.values() if s is not None}:   # 别的讲不拿着那一讲的东西（不然拿着的是旧的）
        inside = lambda f: f.split(os.sep)[0] in scope                                 # noqa: E731
        assert not {f: [h for h in held if inside(h)] for f, held in holds.items() if not inside(f)
                    and any(inside(h) for h in held)}, scope


@pytest.mark.parametrize("code", [
    "import sys; print(sys.argv, sys.path[0] == '', __name__)",
    "print('before'); raise ValueError('boom')",
    "raise SystemExit('一句话')",
    "raise SystemExit(3)",
    "raise KeyboardInterrupt",
])
def test_python_dash_c_behaves_the_same(code):
    assert_same(*both(("-c", code, "extra")))


def test_script_sees_the_same_argv_file_and_path(tmp_path):
    (tmp_path / "probe.py").write_text("import sys\nprint(sys.argv, __file__, sys.path[0], __name__)\n", encoding="utf-8")
    warm, cold = both(("probe.py", "a", "b"), cwd=tmp_path)
    assert_same(warm, cold)
    assert str(tmp_path).encode() in warm.stdout


def test_interpreter_startup_variables_get_a_fresh_interpreter():
    assert not _zygote_can_run(("lecture14/04_alphaevolve_tiling.py",), dict(os.environ, PYTHONIOENCODING="gbk"), ROOT)
    assert not _zygote_can_run(("-m", "pytest"), dict(os.environ), ROOT)
    assert _zygote_can_run(("lecture14/04_alphaevolve_tiling.py",), dict(os.environ, COLUMNS="60"), ROOT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端的窗口大小用 Linux 的 ioctl 设")
def test_a_run_in_a_terminal_looks_the_same(monkeypatch):
    # run_in_pty 也交给预热过的解释器：终端上看到的（标准输出按行缓冲、和标准错误上的进度交错的次序、折行的宽度）
    # 和新起的解释器一样
    args = ["lecture14/04_alphaevolve_tiling.py", "--seeds", "1", "--jobs", "1"]
    env = base_env()
    assert _zygote_can_run(args, env, ROOT)
    warm = run_in_pty(args, 80, {"NO_COLOR": "1"}, env=env, stderr_too=True, timeout=120)
    monkeypatch.setenv("TESTS_NO_ZYGOTE", "1")
    cold = run_in_pty(args, 80, {"NO_COLOR": "1"}, env=env, stderr_too=True, timeout=120)
    assert warm.returncode == cold.returncode == 0
    timing = re.compile(r"\n?（用时 [\d.]+ 秒）\n")
    assert timing.sub("", warm.stdout) == timing.sub("", cold.stdout)
    assert re.search(r"第 +200 个提议", warm.stdout)                # 标准错误上的进度也在终端上
    probe = ["-c", "import sys; print(sys.stdout.isatty(), sys.stdout.line_buffering)"]
    monkeypatch.delenv("TESTS_NO_ZYGOTE")
    assert run_in_pty(probe, 80, env=env).stdout == "True True\n"   # 终端上按行缓冲，和新起的解释器一样
