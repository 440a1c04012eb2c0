"""Ctrl-C 的三个边角：不会丢在第三方 C 扩展的 import 里；runner 是编号脚本最先 import 的课程模块；
脚本做完以后（Python 收尾时）按的 Ctrl-C 不算中断。

第一件。
CI 里见过：04 跑起来 0.2 秒时按 Ctrl-C，脚本没停，5 秒后还在跑演示 2。原因：演示 1 前第一次用 np.random 时才
import numpy.random，它的 Cython 扩展初始化时跑 Python 代码，那一刻抛出的 KeyboardInterrupt 被扩展自己吞掉
（按的时机落在那十来毫秒里时约一成会这样），import 照常成功，Ctrl-C 就没了。修法（lecture01/runner.ensure_numpy）：
numpy 和 numpy.random 都在挡住 SIGINT 的块里 import，挂着的 Ctrl-C 在块结束时照常变成 KeyboardInterrupt。

这里不靠碰运气去按 Ctrl-C：用审计钩子（sys.addaudithook 的 "import" 事件）记下每个模块开始 import 时 SIGINT
是不是挡着，检查每个编号脚本跑完时，所有第三方的 C 扩展（site-packages 里的 .so）都是在挡着的时候 import 的。
检查本身会失败：一个 ensure_numpy 之后才 import numpy.fft 的小脚本被它抓出来。"""
import ast
import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, ahead, base_env, session_dir

SCRIPTS = [("lecture10/01_config_space.py",), ("lecture13/01_timing_model.py",),
           ("lecture14/01_heuristic_as_code.py",), ("lecture14/02_llm_proposal.py",),
           ("lecture14/03_cascade_and_database.py", "--budget", "20", "--seeds", "2"),     # 小预算：import 的模块
           ("lecture14/04_alphaevolve_tiling.py", "--budget", "20", "--seeds", "2"),      # 和默认参数一样（也起进程池），
           ("lecture14/05_ablations.py", "--budget", "20", "--seeds", "2"),               # 只是跑得快
           ("lecture14/06_your_heuristic.py",), ("lecture14/06_your_heuristic.py", "--evolve", "--budget", "20")]

# 在一个新的解释器里：装审计钩子，再照 python3 脚本 参数 那样运行脚本；结束时（正常结束、SystemExit 都算）把
# "第三方 C 扩展 import 时 SIGINT 挡着没有" 写进 out 文件。
HOOK = textwrap.dedent("""
    import json, os, runpy, signal, sys
    out, script, *args = sys.argv[1:]
    started = []                                   # (模块名, 开始 import 时 SIGINT 是否挡着)

    def hook(event, what):
        if event == "import":
            started.append((what[0], signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())))

    sys.addaudithook(hook)
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        def third_party_extension(name):
            f = getattr(sys.modules.get(name), "__file__", None) or ""
            parts = os.path.realpath(f).split(os.sep)
            return f.endswith(".so") and ("site-packages" in parts or "dist-packages" in parts)   # 标准库的不算
        late = sorted({name for name, held in started if not held and third_party_extension(name)})
        total = sorted({name for name, _ in started if third_party_extension(name)})
        with open(out, "w") as fh:
            json.dump({"late": late, "extensions": total}, fh)
    """)


def imports_while_unblocked(script_args, cwd=ROOT):
    """在新解释器里跑一个编号脚本（参数照给）；返回 (退出码, 标准错误, {late: [SIGINT 没挡着时 import 的第三方 C 扩展],
    extensions: [所有第三方 C 扩展]})。"""
    out = os.path.join(session_dir("imports"), "imports.json")
    env = dict(base_env(), NO_COLOR="1")
    p = subprocess.run([sys.executable, "-c", HOOK, out, *script_args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=300)
    found = json.load(open(out)) if os.path.exists(out) else None
    return p.returncode, p.stderr, found


@ahead
def all_scripts():
    return {args: imports_while_unblocked(args) for args in SCRIPTS}


PREFETCH = [all_scripts]


@pytest.mark.parametrize("args", SCRIPTS, ids=[" ".join(a) for a in SCRIPTS])
def test_third_party_extensions_are_imported_while_ctrl_c_is_held(args):
    code, err, found = all_scripts()[args]
    assert code == 0 and found is not None, (code, err[-2000:])
    assert found["late"] == [], (f"{args[0]} 在 SIGINT 没挡着时 import 了这些 C 扩展：{found['late']}；"
                                 "这时按的 Ctrl-C 可能被扩展的初始化吞掉。把它们加进 lecture01/runner.ensure_numpy")
    if "lecture10" not in args[0]:
        assert "numpy.random._generator" in found["extensions"]     # 检查真的看到了这些 import


def test_the_check_catches_a_late_extension_import(tmp_path):
    """一个照编号脚本写法的小脚本：ensure_numpy 之后才 import numpy.fft（也带 C 扩展）。检查要把它抓出来。"""
    script = tmp_path / "01_late_import.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.join(ROOT, "lecture01")!r})
        from runner import ensure_numpy
        ensure_numpy()
        import numpy.fft
        """), encoding="utf-8")
    code, err, found = imports_while_unblocked((str(script),), cwd=str(tmp_path))
    assert code == 0, err
    assert "numpy.fft._pocketfft_umath" in found["late"], found
    assert not any(name.startswith("numpy.random") or name.startswith("numpy._core") for name in found["late"]), found


# ---------------------------------------------------------------- runner 最先 import

NUMBERED = sorted(glob.glob(os.path.join(ROOT, "lecture*", "[0-9][0-9]_*.py")))
COURSE = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "lecture*", "*.py"))} | {
    os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "lecture*", "*", "__init__.py"))}


@pytest.mark.parametrize("path", NUMBERED, ids=[os.path.relpath(p, ROOT) for p in NUMBERED])
def test_runner_is_the_first_course_module_a_script_imports(path):
    """runner 一 import 就装上 Ctrl-C 的处理（一行"已中断。"、130）。在它之前 import 的课程模块（比如 kernel_lab
    import 时就算好所有配置，几十毫秒）里按的 Ctrl-C 会印 Python 的 traceback：lecture10/01 以前就是这样。"""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    first = None
    for node in tree.body:                                  # 模块最外层、按顺序
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        course = [n for n in names if n.split(".")[0] in COURSE]
        if course:
            first = course[0]
            break
    assert first == "runner", f"{os.path.relpath(path, ROOT)} 先 import 的课程模块是 {first}，不是 runner"


def test_the_import_order_check_sees_course_modules():
    assert {"runner", "console", "kernel_lab", "sched_lab", "evolve"} <= COURSE


# ---------------------------------------------------------------- 做完以后按的 Ctrl-C

DONE_SCRIPT = """
import atexit, os, signal, sys, time
sys.path.insert(0, {lecture01!r})
from runner import run

class PressedDuringTeardown:               # __main__ 的全局变量在 Python 收尾的最后才清掉：那时 SIGINT 已经还原成默认
    def __del__(self):
        if {when!r} == "teardown":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)

def pressed_at_exit():                     # atexit：解释器还完整，Python 的 SIGINT 处理函数还在
    if {when!r} == "atexit":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)

atexit.register(pressed_at_exit)
keep = PressedDuringTeardown()

def main():
    print("最后一行")

run(main)
"""


@pytest.mark.parametrize("when", ["atexit", "teardown"])
def test_ctrl_c_after_the_last_line_is_not_an_interrupt(tmp_path, when):
    """脚本做完、最后一行印出来以后（Python 收尾的十几毫秒里）按的 Ctrl-C：照常以 0 退出，标准错误什么也没有。
    以前：落在 atexit 里印一段 "Exception ignored ... KeyboardInterrupt"；落在更后面，进程被 SIGINT 杀掉（-2）。"""
    script = tmp_path / "01_done.py"
    script.write_text(DONE_SCRIPT.format(lecture01=os.path.join(ROOT, "lecture01"), when=when), encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, "最后一行\n", "")


def test_ctrl_c_before_the_last_line_is_still_an_interrupt(tmp_path):
    """对照：main 还在跑时按的 Ctrl-C 照旧是一行"已中断。"、退出码 130（上面的"不理"只从 main 返回以后开始）。"""
    script = tmp_path / "01_not_done.py"
    script.write_text(DONE_SCRIPT.format(lecture01=os.path.join(ROOT, "lecture01"), when="never").replace(
        'print("最后一行")', 'print("最后一行"); os.kill(os.getpid(), signal.SIGINT); time.sleep(1)'), encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (p.returncode, p.stderr) == (130, "已中断。\n")
