"""
第 1 讲 · runner —— 每个编号脚本（lecture*/NN_*.py）共用的"怎样运行"：找 numpy、读参数、Ctrl-C、进度。

    ensure_numpy()          在 import numpy 之前调用：系统的 python3 没有 numpy 时，改用仓库里 `make run` 建的
                            .venv/bin/python 重新运行同一个脚本；连 .venv 也没有，就说一句该怎么办，退出码 1。
    parser(description)     argparse.ArgumentParser：不接受缩写（--seed 不会被当成 --seeds）；参数不对时只说一句话、
                            退出码 2；--help 退出码 0。类型：positive_int、nonnegative_int、fraction。
    run(main)               调用 main()：Ctrl-C 时先杀掉后台的子进程（和 on_interrupt 登记的清理函数），印一行
                            "已中断。"，退出码 130，不印 traceback；输出接到 head 之类提前关掉的管道时安静地退出。
    progress(text)          进度写到标准错误：标准输出逐字节不变，进度也不会混进被重定向的结果里。
    heartbeat(describe)     with 块里每隔几秒报一行进度（等后台进程的时候用）。
    --gpu 名字              每个 parser() 都有的公共参数：模型用哪块 GPU（lecture10/gpus.py 的 GPUS 里的一条，默认 h100）。
                            runner 一被 import 就在命令行里找它、写进环境变量 MINI_ALPHAEVOLVE_GPU：那时课程模块
                            还没 import，kernel_lab、sched_lab 读到的就是这块 GPU（进程池的子进程也继承）。
    sigint_ignored()        with 块里创建的子进程不理 Ctrl-C（由父进程统一收拾），块里收到的 Ctrl-C 块结束后照常生效。

只用标准库，导入时不 import numpy、不打印任何东西。

Ctrl-C 的细节（README 只说"一秒之内停下，只印一行，退出码 130"）：
  - 任何时候按 Ctrl-C，一秒之内停下（后台进程一起），只印一行"已中断。"，退出码 130。例外只有下面的 _excepthook
    装上之前的头二十几毫秒（这台 VM 上用项目的 .venv：解释器启动约 10 毫秒，编译脚本本身约 10 毫秒——运行的脚本
    从不缓存字节码——再编译、执行 runner 到 _excepthook 那几行约 4 毫秒；一位同学在 80 列的终端里量到：10 毫秒时
    按 5 次都印 traceback，20 毫秒时 5 次里 1 次，25 毫秒以后没有）：那时按的 Ctrl-C 照 Python 自己的做法，印一段
    traceback（可能停在脚本的 from runner import 那一行或 runner 的开头）后退出（shell 看到的也是 130），CPython 检查 argv[0] 的
    那一两毫秒里按的还会被 Python 自己吞掉。site-packages 里有 .pth 启动钩子的 python3（装了很多包的系统 Python）
    这一段要长得多：一位同学在那样的 python3 上量到一百多毫秒，落在 site 初始化里的 Ctrl-C 让 Python 印
    "Fatal Python error: init_import_site"、退出码 1——都在脚本的第一行代码之前，脚本管不到。python3 是 pyenv 这类
    shell 包装、机器又很忙（负载 6–10）时，另一位同学量到这一段长到 0.4 秒左右；过了 0.5 秒就总是只印"已中断。"。
  - PATH 上的 python3 没有 numpy、脚本换成 .venv 的 python 重新运行（reexec）时，换的那一段挡着 Ctrl-C：挂着的
    Ctrl-C 在新解释器 import runner 时放开，照样只印一行、退出码 130（tests/test_interrupt.py 造出这种情形）。
  - 第三方 C 扩展（numpy 和 numpy.random）都在挡住 Ctrl-C 的时候 import（ensure_numpy）：numpy.random 的 Cython 扩展
    初始化时会吞掉落在里面的 Ctrl-C。
  - Python 把 Ctrl-C 吞掉时（KeyboardInterrupt 落在 weakref 回调、__del__ 里，只印 "Exception ignored"）：第一次
    Ctrl-C 另起的后备线程在 BACKSTOP_SECONDS（0.6）秒后替主线程收拾，照样只印一行、退出码 130（_backstop）。
  - 最后一行印出来以后（Python 收尾的十几毫秒）按的 Ctrl-C 不算打断：什么也不多印，退出码 0（_finished）。
  - 终端把按下的 Ctrl-C 回显成 "^C"：标准错误是这样的终端时，"已中断。"前面先换一行（interrupted_line），
    不和 "^C" 挤在一起；管道和文件里就是"已中断。"一行（tests/test_interrupt.py 在伪终端里真的按一次）。清理函数
    在"已中断。"之前要说的话（make openevolve 说最好的程序存在哪里）用 say_after_ctrl_c，同样自成一行；按过
    Ctrl-C 以后别的线程的进度行（progress）不再印。
  - 后两条由 tests/test_ctrl_c_imports.py 检查，一秒之内停下由 tests/test_interrupt.py 检查。make test 自己怎样停见
    tests/conftest.py 的开头。
"""

from __future__ import annotations

import os
import sys

INTERRUPTED = "已中断。"
EXIT_INTERRUPTED = 130                        # 128 + SIGINT，shell 的惯例


# lecture14/evolve/loop.py 里有一份一样的：evolve 只往下依赖第 13、10 讲，不 import 第 1 讲；runner 要在任何
# 课程模块之前 import（好接住 Ctrl-C），也不能反过来依赖 evolve。两处改的时候一起改。
def _interrupt_inside(e: BaseException | None) -> bool:
    """e 是不是一个被 Python 包成别的异常的 Ctrl-C：KeyboardInterrupt 落在 import 的类定义里会变成 RuntimeError
    （"Error calling __set_name__"），C 扩展里会变成 ImportError……顺着 __cause__ / __context__ 找。"""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _echoes_caret() -> bool:
    """标准错误是不是一个把按下的 Ctrl-C 回显成 "^C" 的终端（光标停在 "^C" 后面）。"""
    try:
        import termios                                     # 内建模块，import 很快；Windows 上没有
        fd = sys.stderr.fileno()
        if os.isatty(fd):
            lflag = termios.tcgetattr(fd)[3]
            return bool(lflag & termios.ECHO and lflag & termios.ECHOCTL)
    except Exception:                                      # noqa: BLE001  （没有 termios、标准错误关了……）
        pass
    return False


_CARET_LINE_ENDED: list = []                               # say_after_ctrl_c 已经在 "^C" 后面换过行了


def interrupted_line() -> str:
    """按 Ctrl-C 以后印的那一行。终端会把 Ctrl-C 回显成 "^C"，光标停在它后面：这时先换一行，免得印成
    "^C已中断。"（清理函数用 say_after_ctrl_c 先说过话、已经换过行了就不再换）。标准错误不是终端（管道、文件）时
    就是 "已中断。\n"。"""
    if not _CARET_LINE_ENDED and _echoes_caret():
        return "\n" + INTERRUPTED + "\n"
    return INTERRUPTED + "\n"


def say_after_ctrl_c(text: str) -> None:
    """Ctrl-C 以后、"已中断。"之前的一句话（on_interrupt 登记的清理函数用，比如 make openevolve 说最好的程序存在
    哪里）：和 interrupted_line 一样，终端回显了 "^C" 时先换一行——讲师报过印成了 "^C停下之前……"，下面还空一行
    才是"已中断。"。之后"已中断。"紧跟在这句话下面。清理函数也在别的时候跑（管道被关掉、磁盘满了、一句话的错误：
    没有按 Ctrl-C，终端里也就没有 "^C"）：那时不先换行（只有 Ctrl-C 的收拾拿着 _STOPPING）。"""
    if _STOPPING.locked() and not _CARET_LINE_ENDED and _echoes_caret():
        _CARET_LINE_ENDED.append(True)
        try:
            sys.stderr.write("\n")
        except Exception:                                  # noqa: BLE001
            pass
    say(text)


def _excepthook(kind, value, tb):
    """脚本还没走到 run()（比如正在 import numpy）时按了 Ctrl-C、或者 Ctrl-C 被包成了别的异常（run() 抛出来的
    也走到这里）：同样只印一行、退出码 130。这个函数写在文件最前面、一 import runner 就装上：runner 自己还在
    import（argparse 之类，约 10 毫秒）时按的 Ctrl-C 也这样处理，那时还没有子进程要收拾。"""
    if issubclass(kind, KeyboardInterrupt) or _interrupt_inside(value):
        interrupted = globals().get("_interrupted")        # runner 完整 import 了才有（杀子进程、印一行、130）
        if interrupted is not None:
            interrupted()
        try:
            sys.stderr.write(interrupted_line())
            sys.stderr.flush()
        finally:
            os._exit(EXIT_INTERRUPTED)
    if getattr(value, "one_sentence", False):             # 课程代码自己查出来的问题（import 时就查出来的也算：助教加了
        prog = sys.argv[0] if sys.argv and sys.argv[0] else "script.py"   # 修改种类、方法名拼错，以前是一段 traceback）
        try:
            sys.stderr.write(f"{prog}：{str(value).rstrip('。')}。\n")
            sys.stderr.flush()
        finally:
            os._exit(1)
    sys.__excepthook__(kind, value, tb)


def _numbered_script(path: str) -> bool:
    """path 是不是一个编号脚本（lecture*/NN_名字.py）。不用 re：这时 re 还没 import（它要好几毫秒）。"""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = name[3:-3]
    return (name[:2].isdecimal() and name[2:3] == "_" and name.endswith(".py") and stem != ""
            and stem.replace("_", "a").isalnum())


if _numbered_script(sys.argv[0] if sys.argv and sys.argv[0] else ""):
    sys.excepthook = _excepthook                           # 只在直接运行编号脚本时装；被测试 import 时不动

import argparse  # noqa: E402
import contextlib  # noqa: E402
import difflib  # noqa: E402
import errno  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # 仓库根：lecture01 的上一级
VENV = os.path.join(ROOT, ".venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
REEXEC_FLAG = "MINI_ALPHAEVOLVE_REEXEC"      # 已经换过一次解释器：不再换第二次（防止来回重启）

# 换解释器（reexec）时 Ctrl-C 是挡着的（挡着的信号和挂着的信号都跟着 execve 过去）：新解释器启动的那几十毫秒里按的
# Ctrl-C 挂着，到这里（_excepthook 已经装好）才放开，照样只印一行、退出码 130。不挡的话，那一刻按的 Ctrl-C 按默认
# 的做法直接杀掉进程，什么也不印；早一点按的印一段 traceback。
if os.environ.get(REEXEC_FLAG) and hasattr(signal, "pthread_sigmask"):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
_cleanups: list = []

# Ctrl-C 的后备：Python 默认的 SIGINT 处理只是在主线程里抛 KeyboardInterrupt；它要是落在 weakref 的回调、__del__ 里
# （import 的模块锁 _get_module_lock 的回调就是一个），Python 只印一行 "Exception ignored in: …" 就把它吞了，脚本照常
# 跑下去（助教在很忙的机器上见过一次：04 过了 5 秒还在跑）。所以第一次 Ctrl-C 时另外起一个线程：BACKSTOP_SECONDS 秒后
# 主线程还没开始收拾（_interrupted），就由它来杀子进程、印那一行、以 130 退出。谁先拿到 _STOPPING 谁收拾，只印一行。
BACKSTOP_SECONDS = 0.6
_STOPPING = __import__("threading").Lock()


def _backstop() -> None:
    time.sleep(BACKSTOP_SECONDS)
    if not _STOPPING.acquire(blocking=False):            # 主线程在收拾了（或者已经收拾完在退出）
        return
    _kill_children()
    try:
        os.write(2, interrupted_line().encode("utf-8"))
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


def _on_sigint(signum, frame):
    _PRESSED.append(True)
    if not _backstop_started:
        _backstop_started.append(True)
        __import__("threading").Thread(target=_backstop, daemon=True, name="ctrl-c-backstop").start()
    raise KeyboardInterrupt


def _unraisable(u) -> None:
    """被吞掉的 Ctrl-C 不印 "Exception ignored in: … KeyboardInterrupt" 那一段：后备线程会收拾、只印一行。"""
    if u.exc_type is not None and issubclass(u.exc_type, KeyboardInterrupt):
        return
    sys.__unraisablehook__(u)


_backstop_started: list = []
_PRESSED: list = []          # 按过 Ctrl-C 了：别的线程的进度行不再印（progress）


def install_ctrl_c() -> None:
    """Ctrl-C 的处理（一行"已中断。"、一秒内停下的后备线程、不印被吞掉的 KeyboardInterrupt）装到这个进程上。编号脚本
    一 import runner 就装好了；别的命令行入口（lecture14/openevolve/run_openevolve.py）import runner 以后调用它
    （讲师报过：从脚本里 & 起的 run_openevolve 继承了"不理 SIGINT"，kill -INT 它照样跑完，04 却一下就停）。"""
    sys.excepthook = _excepthook
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _unraisable


def replace_unencodable() -> None:
    """标准输出的编码不是 UTF-8 时（zh_CN.GBK 的终端、PYTHONIOENCODING=latin-1），编不出来的字（µs 的 µ、图里的 ▒）
    印成 ?，不在第一次印它的地方抛 UnicodeEncodeError、丢下一段 traceback 和半截输出（助教试过：GBK 的终端里
    13、14 讲的 01、04、06 都这样）。UTF-8 时什么也不改：标准输出逐字节不变。标准错误本来就是 backslashreplace。
    surrogateescape 也一样换掉：它只放过读文件名时留下的代理字符，汉字照样抛错（审读报过：LC_ALL=C PYTHONUTF8=0 时
    标准输出是 ascii + surrogateescape，01 在第一个汉字就抛 UnicodeEncodeError）。"""
    import codecs
    try:                                                   # 别名（u8、UTF8……）都认：按 codecs 的正式名字比
        encoding = codecs.lookup(getattr(sys.stdout, "encoding", None) or "ascii").name
    except LookupError:
        encoding = ""
    if encoding not in ("utf-8", "utf-8-sig") and getattr(sys.stdout, "errors", None) in ("strict", "surrogateescape"):
        try:
            sys.stdout.reconfigure(errors="replace")
        except (AttributeError, ValueError):              # 不是 TextIOWrapper（被换掉了）：照旧
            pass


if sys.excepthook is _excepthook:                          # 直接运行编号脚本时（和 _excepthook 一样；测试 import 时不动）
    install_ctrl_c()
    replace_unencodable()


def one_sentence_errors() -> None:
    """别的命令行入口（lecture14/mock_llm_server.py）也像编号脚本那样：课程代码自己查出来的问题（带 one_sentence 的
    异常，比如加修改种类时方法名拼错）只印一句、退出码 1；别的异常照旧。助教报过：编号脚本只说一句，mock_llm_server.py
    照样是一段 traceback。"""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if getattr(value, "one_sentence", False):
            prog = sys.argv[0] if sys.argv and sys.argv[0] else "script.py"
            sys.stderr.write(f"{prog}：{str(value).rstrip('。')}。\n")
            return                                         # 没接住的异常：解释器照样以退出码 1 结束
        previous(kind, value, tb)
    sys.excepthook = hook


# ---------------------------------------------------------------- GPU（--gpu）

def _load_gpus():
    """lecture10/gpus.py（只用标准库）：已经 import 过就用那一个，否则按路径载入并登记成 gpus，kernel_lab 随后
    import gpus 拿到的是同一个模块。"""
    if "gpus" in sys.modules:
        return sys.modules["gpus"]
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpus", os.path.join(ROOT, "lecture10", "gpus.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpus"] = module
    try:
        spec.loader.exec_module(module)
    except (SyntaxError, NameError) as e:               # 助教改 GPUS 那行时少打一个逗号、拼错记录名：一句话，不是
        sys.modules.pop("gpus", None)                   # 每个编号脚本一段 traceback（by_key 查得出来的那些本来就是一句话）
        raise GpusUnreadable(gpus_unreadable(e, spec.origin)) from None
    except BaseException:
        sys.modules.pop("gpus", None)
        raise
    return module


GPUS_LINE = "GPUS: dict[str, GPU] = by_key(H100, A100)"   # 和 gpus.GPUS_LINE 一样（测试里比）：文件里找不到记录时照它说


def gpus_line_in(lines: list[str]) -> str:
    """gpus.py 没读进来时，那句话里 GPUS 那行该怎样写：括号里是文件里写着的每条记录（行首的 名字 = GPU(、按先后），
    找不到就是 GPUS_LINE（和 gpus.gpus_line 一样；gpus.py 没读进来，用不了它）。助教报过：加了第三块 GPU（L40S），GPUS 那行少打一个逗号，那句话说的写法是
    by_key(H100, A100)——照抄以后是下一句"L40S 写好了，却没放进 GPUS"。"""
    names = list(dict.fromkeys(m[1] for x in lines if (m := re.match(r"([A-Za-z_]\w*)\s*=\s*GPU\(", x))))
    return f"GPUS: dict[str, GPU] = by_key({', '.join(names)})" if names else GPUS_LINE


class GpusUnreadable(Exception):
    """lecture10/gpus.py 读不进来（语法错误、没定义的名字）。one_sentence：编号脚本只印这一句、退出码 1。"""
    one_sentence = True


def gpus_unreadable(e: BaseException, path: str) -> str:
    """gpus.py 的 SyntaxError / NameError 说成一句话：文件:行（从运行命令的目录看，照着打得开）、那一行、Python 说了什么。"""
    line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
    if line is None:                                   # NameError：traceback 里 gpus.py 的最后一帧
        tb = e.__traceback__
        while tb is not None:
            if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
                line = tb.tb_lineno
            tb = tb.tb_next
    shown = os.path.relpath(path) if os.path.relpath(path).split(os.sep).count(os.pardir) <= 1 else os.path.abspath(path)
    shown = shown.replace(os.sep, "/")                 # 和 gpus.shown_path 一样（gpus.py 没读进来，用不了它）
    text = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    if line:
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    said = e.msg if isinstance(e, SyntaxError) else str(e)
    return (f"{shown}{f':{line}' if line else ''} 读不进来（Python 说：{said}）"
            + (f"：{text}" if text else "") + f"；改好再运行。GPUS 那行的写法是 {gpus_line_in(lines)}"
            f"（括号里逐个写记录的变量名，用逗号隔开），加一块 GPU 照 A100 的那条写（见 {shown} 开头和 README 的"
            "\"改编这门课\"）")


def _gpu_from_argv(argv: list[str]) -> str | None:
    """命令行里 --gpu 的值（--gpu a100 或 --gpu=a100；最后一个算数，-- 之后的不看）；没有就是 None。"""
    value = None
    for i, a in enumerate(argv):
        if a == "--":
            break
        if a == "--gpu" and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--gpu="):
            value = a[len("--gpu="):]
    return value


def _stderr_width() -> int | None:
    """标准错误是终端时它的列数（环境变量 COLUMNS 优先，和 shutil.get_terminal_size 一样），不是终端时 None。"""
    try:
        if not sys.stderr.isatty():
            return None
        columns = os.environ.get("COLUMNS", "")
        return max(int(columns) if columns.isdigit() else os.get_terminal_size(sys.stderr.fileno()).columns, 40)
    except (AttributeError, OSError, ValueError):
        return None


COMMAND_INDENT = "    "   # say 的一行以它开头：那是一条要照抄的命令（和 evolve.program.COMMAND_INDENT 同一个约定）


def _fold(line: str, width: int) -> list[str]:
    """say 的一行在 width 列的终端里印成几行：说明按显示宽度折、续行缩进两格；COMMAND_INDENT 开头的命令行在参数之间
    折开，除了最后一行都以 " \\" 结尾（shell 的续行，和"可以试试"的命令一样：整段复制到终端里是同一条命令）。"""
    from layout import display_width, wrap, wrap_command   # 只用标准库；用到时才 import，runner 本身照旧最先、最轻
    if display_width(line) <= width:
        return [line]
    if line.startswith(COMMAND_INDENT) and line.strip():
        indent = len(COMMAND_INDENT)
        lines = wrap_command(line.strip(), width - indent - 2, width - indent - 4)    # 行尾留 " \\"；续行多缩进 2 列
        return [" " * (indent + (2 if k else 0)) + part for k, part in enumerate(lines)]
    return wrap(line, width, "  ")


def say(text: str) -> None:
    """一句话（报错、提醒）写到标准错误（标准输出逐字节不变）。标准错误是终端时，比终端宽的行按显示宽度（中文两列）
    折成几行、续行缩进两格：80 列的终端里也不会被终端从中间截断；管道、重定向里原样一行（测试和日志按行读）。
    COMMAND_INDENT 开头的一行是要照抄的命令，折的时候按 shell 的续行折（_fold）。"""
    width = _stderr_width()
    if width is not None and len(text) * 2 > width:        # 最多每个字两列：短的一行不用量
        text = "\n".join(part for line in text.split("\n") for part in _fold(line, width))
    try:
        sys.stderr.write(text + "\n")                      # 一次写完一整行：几个进程同时报进度也不会串行
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass


def rerun_command(option: str, value: str, argv: list[str] | None = None, also=()) -> str | None:
    """这次运行的命令，option 换成（或者加上）value，照抄就能在仓库根目录再跑一次：写成 "python3 脚本 参数…"（脚本相对于
    仓库的根目录，和"可以试试"一样），每个参数照命令行上的样子（shell 的引号）。--record 已经录进了这次的文件（--record
    不覆盖已有的文件）：换成旁边一个还没有的文件名（run.jsonl → run-2.jsonl）；--record、--svg 的相对路径改成从根目录
    照抄也指向同一个地方（_from_root）。标准错误是终端时按它的宽度在参数之间折成
    几行（shell 的续行，行尾 " \\"），缩进 4 格，和 say 一起印也不会被折断；不是终端时一行。参数里的网址带着查询串、
    "#…"（托管 API 的密钥常放在查询串里）时不印命令，是 None（openai_llm 那时只说加上哪个参数）。also：另外要换（或者
    加上）的 (参数, 值)，同一条命令里一起换（接连失败里既有被截断的、又有超时的：--llm-max-tokens 和 --llm-timeout）。
    讲师报过：运行最后只说"加上 --llm-max-tokens 4096"，照抄不成一条命令。"""
    import re
    import shlex
    argv = list(sys.argv if argv is None else argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.abspath(argv[0]) if argv and argv[0] else ""
    rel = os.path.relpath(script, root) if script else ""
    words = ["python3", rel if rel and not rel.startswith(os.pardir) else script]
    wanted = {option: value, **dict(also)}
    rest, replaced = argv[1:], set()
    while rest:
        a = rest.pop(0)
        name, eq, given = a.partition("=")
        if name in (*wanted, "--record", "--svg") and name.startswith("--") and (eq or rest):
            old = given if eq else rest.pop(0)
            new = wanted[name] if name in wanted else _from_root(_fresh_name(old) if name == "--record" else old, root)
            if name in wanted:
                replaced.add(name)
            words += [name, new]
            continue
        if re.search(r"(?i)https?://\S*[?#]", a):
            return None
        words.append(a)
    for name, new in wanted.items():
        if name not in replaced:
            words += [name, new]
    command = " ".join(shlex.quote(w) for w in words)
    width = _stderr_width()
    if width is None:
        return "    " + command
    from layout import wrap_command
    lines = wrap_command(command, width - 4 - 2, width - 6 - 2)
    return "\n".join(("      " if k else "    ") + line for k, line in enumerate(lines))


def _from_root(path: str, root: str) -> str:
    """命令行上的一个路径，写成在仓库根目录照抄也指向同一个地方的样子：根目录里的写成相对于根目录的（lecture14/run.jsonl），
    根目录外面的写成绝对路径。原样照抄时，在 lecture14 里跑的 --record run.jsonl 会录到根目录的 run.jsonl（不是那次旁边）。"""
    where = os.path.abspath(path)
    rel = os.path.relpath(where, root)
    return rel if not rel.startswith(os.pardir) else where


def _fresh_name(path: str) -> str:
    """path 旁边一个还没有的文件名：run.jsonl → run-2.jsonl（有了就 run-3.jsonl……）。"""
    stem, ext = os.path.splitext(path)
    k = 2
    while os.path.lexists(f"{stem}-{k}{ext}"):
        k += 1
    return f"{stem}-{k}{ext}"


def progress(text: str) -> None:
    """一行进度（"第 200 个提议……"），写到标准错误，和 say 一样按终端宽度折行。按过 Ctrl-C 以后不印：主线程在往外
    退、收拾的时候，别的线程（07 里看着 OpenEvolve 的那几个）还在报进度，讲师见过 "^COpenEvolve，种子 1：79/150 个
    提议"，再空一行才是"已中断。"。"""
    if _PRESSED:
        return
    say(text)


def took(start: float) -> None:
    """脚本最后那一行"（用时 … 秒）"（标准错误；从 main 开始算，不含解释器启动和 import）。不到 0.05 秒的不印成
    "0.0 秒"（学生报过：01 印"用时 0.0 秒"，墙钟明明约 0.8 秒——差的是启动和 import），说"不到 0.1 秒"。"""
    seconds = time.perf_counter() - start
    say("\n（用时" + (f" {seconds:.1f} 秒" if seconds >= 0.05 else "不到 0.1 秒") + "）")


ETA_AFTER = 3.0         # 跑了这么多秒以后，"做完几次"的进度才说还要多久（几秒就跑完的演示不多这一句）


def time_left(done: int, total: int, started: float, now: float | None = None) -> str:
    """"做完几次、一共几次"的进度行末尾的"，还要约多久"：按到现在为止平均一次的用时估计剩下的（started、now 是
    time.monotonic() 的读数）。还没做完一次、已经做完、或者跑了不到 ETA_AFTER 秒时是空串。--seeds 999 这样的
    运行要好几分钟：学生一开始就知道要等多久，可以按 Ctrl-C 改小。"""
    now = time.monotonic() if now is None else now
    if not 0 < done < total or now - started < ETA_AFTER:
        return ""
    left = (now - started) / done * (total - done)
    if left < 10:
        return "，还要几秒"
    if left < 60:
        return f"，还要约 {round(left / 5) * 5} 秒"
    return f"，还要约 {round(left / 60)} 分钟" if left < 5400 else f"，还要约 {left / 3600:.1f} 小时"


PROGRESS_EVERY = 1.0    # "做完几次"的进度行最多每这么多秒一行（做完最后一次的那行总说）


def progress_gate(every: float = PROGRESS_EVERY):
    """返回 due(done, total)：这一次"做完几次"该不该印一行进度——离上一次印（或者开始）过了 every 秒，或者全做完了。
    一秒多就跑完的 03 以前在标准错误上刷 21 行"做完 k/21 次进化"，把 80 列终端里的一屏挤掉；跑得久的照样每秒
    知道做到哪（等得更久时另有 heartbeat）。"""
    last = [time.monotonic()]

    def due(done: int, total: int) -> bool:
        now = time.monotonic()
        if done >= total or now - last[0] >= every:
            last[0] = now
            return True
        return False
    return due


def _select_gpu() -> None:
    """直接运行编号脚本时（import 课程模块之前）：命令行的 --gpu 认识就写进环境变量（不认识的留给 argparse 说一句话）；
    环境变量本身的值不认识时说一句话、退出码 2。"""
    gpus = _load_gpus()
    value = _gpu_from_argv(sys.argv[1:])
    if value is not None and gpus.problem(value) is None:
        os.environ[gpus.ENV] = value
    problem = gpus.problem(gpus.selected_key())
    if problem:
        prog = sys.argv[0] if sys.argv and sys.argv[0] else "script.py"
        say(f"{prog}：环境变量 {gpus.ENV}：{problem}。")
        raise SystemExit(2)


if sys.excepthook is _excepthook:
    _select_gpu()


# ---------------------------------------------------------------- numpy

def _in_venv() -> bool:
    """当前解释器是不是就是仓库的 .venv（比 sys.prefix，不比可执行文件：.venv/bin/python 常常是系统 python 的链接）。"""
    try:
        return os.path.samefile(sys.prefix, VENV)
    except OSError:
        return False


def ensure_numpy() -> None:
    """import numpy 不成功时：有 .venv 就用它重新运行这个脚本（同样的参数）；没有就说一句该怎么办，退出码 1。"""
    # 课程的代码不做矩阵乘（不调 BLAS）：OpenBLAS 的线程池只会在 import numpy 时空转一下（约 0.1 秒 CPU），
    # 设成一个线程省掉它；结果不受影响。环境里已经设了的照用。
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        with _sigint_held():        # numpy 的 C 扩展初始化时被 Ctrl-C 打断，报的是"装坏了"的 ImportError，不是中断：
            import numpy  # noqa: F401          # 挡住 Ctrl-C 到 import 完（零点几秒），挂着的那次放开时照常抛出
            import numpy.random  # noqa: F401   # 也在这里 import：它的 Cython 扩展初始化时跑 Python 代码，在那里抛出的
            # KeyboardInterrupt 被它自己吞掉（约一成的时机），脚本照常跑下去、Ctrl-C 就丢了。课程脚本都用 np.random，
            # 放到后面第一次用到时才 import 的话，那一刻按的 Ctrl-C 会丢（CI 里见过：04 按了 Ctrl-C 还跑了 5 秒以上）
        return
    except ImportError:
        pass
    if os.path.exists(VENV_PYTHON) and not _in_venv() and not os.environ.get(REEXEC_FLAG):
        reexec()                                             # 回来了就是 .venv 坏了：落到下面那句话
    say(f"这个脚本要用 numpy，但 {sys.executable} 里没有：在仓库根目录（{ROOT}）运行一次 make run"
        "（它会建 .venv 并装好 numpy，之后 python3 运行脚本会自动改用 .venv）"
        + ("。" if externally_managed() else "，或者 pip install numpy。"))
    raise SystemExit(1)


def externally_managed() -> bool:
    """这个 Python 是不是系统管着的（PEP 668：标准库目录里有 EXTERNALLY-MANAGED，Debian、Ubuntu 的 python3 就是）：
    那里 pip install numpy 会被拒绝，不要建议它（学生报过）。虚拟环境里不算。"""
    import sysconfig
    if sys.prefix != sys.base_prefix:
        return False
    return os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))


def reexec() -> None:
    """用 .venv/bin/python 重新运行这个脚本（同样的参数，照学生敲的写法：当前目录没变，报错里的命令也一样），
    环境里加上 REEXEC_FLAG。换的时候挡住 Ctrl-C，新解释器 import runner 时放开（见 REEXEC_FLAG 下面）。
    只在 execve 失败（.venv 坏了）时返回。"""
    sys.stdout.flush()
    sys.stderr.flush()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
    try:
        os.execve(VENV_PYTHON, [VENV_PYTHON, sys.argv[0], *sys.argv[1:]], dict(os.environ, **{REEXEC_FLAG: "1"}))
    except OSError:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def _sigint_held():
    """块里挡住 SIGINT（不是忽略）：块里按的 Ctrl-C 挂着，块结束放开时照常抛出 KeyboardInterrupt。"""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# ---------------------------------------------------------------- 参数

_ENGLISH = [                                  # argparse 自己的英文报错 → 中文
    (r"^argument (.+?): expected one argument$", r"参数 \1 后面要跟一个值"),
    (r"^argument (.+?): expected at least one argument$", r"参数 \1 后面至少要跟一个值"),
    (r"^argument (.+?): expected at most one argument$", r"参数 \1 后面最多跟一个值"),
    (r"^argument (.+?): expected (\d+) arguments?$", r"参数 \1 后面要跟 \2 个值"),
    (r"^argument (.+?): not allowed with argument (.+)$", r"参数 \1 和 \2 不能一起用"),
    (r"^ambiguous option: (\S+) could match (.*)$", r"参数 \1 不知道指的是哪一个：\2 都以它开头"),
    (r"^argument (.+?): invalid choice: ('.*') \(choose from (.*)\)$", r"参数 \1 不能取 \2：只能取 \3 之一"),
    (r"^argument (.+?): invalid choice: (.*)$", r"参数 \1 只能取这些值之一：\2"),
    (r"^argument (.+?): invalid (\w+) value: '(.*)'$", r"参数 \1 的值 '\3' 不是合法的 \2"),
    (r"^argument (.+?): ignored explicit argument '(.*)'$", r"参数 \1 是一个开关，后面不跟值：把 =\2 去掉"),
    (r"^argument (.+?): (.*)$", r"参数 \1：\2"),
    (r"^unrecognized arguments: (.*)$", r"不认识的参数：\1"),
    (r"^the following arguments are required: (.*)$", r"缺少参数：\1"),
]


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):    # noqa: D102  --gpu 要和已经载入的硬件是同一块
        # 不认识的 --选项先说（学生报过：lecture10/01 --budget 0 说的是"参数 BM BN BK…要是正整数，收到的是 0"——
        # argparse 先把 0 当成了位置参数）。单独一个 -- 后面的是位置参数，不看
        words = list(sys.argv[1:] if args is None else args)
        self._lone_dash = "--" in words                  # 单独一个 --：_guess 说它（06 的 FILE 会把 -- 后面的第一个吞掉）
        for word in words[:words.index("--")] if "--" in words else words:
            if isinstance(word, str) and word.startswith("--") and word.split("=", 1)[0] not in self._option_string_actions:
                self.error(f"unrecognized arguments: {word}")
        ns, rest = super().parse_known_args(args, namespace)
        loaded = getattr(sys.modules.get("kernel_lab"), "GPU", None)
        wanted = getattr(ns, "gpu", None)
        if loaded is not None and wanted is not None and loaded.key != wanted:
            self.error(f"--gpu {wanted} 要在 import 课程模块之前选定（这个进程已经按 {loaded.key} 载入了 kernel_lab）："
                       f"在命令行上运行脚本时给 --gpu，或者设环境变量 {_load_gpus().ENV}={wanted}")
        if loaded is None and wanted is not None:          # 解析完才 import 课程模块的（run_openevolve.py）：这里选定，
            os.environ[_load_gpus().ENV] = wanted          # 它起的子进程（评估器、MockLLM 服务器）也继承（助教报过：
            #                                                make openevolve ARGS="--gpu l40s" 悄悄还是 H100）
        console = sys.modules.get("console")
        if console is not None and hasattr(console, "GPU_SAID") and wanted is not None:
            gpus = _load_gpus()                            # 新的一次运行：不是默认的 GPU 时，console 在第一个标题前
            console.RUN_GPU[0] = gpus.GPUS[wanted] if wanted != gpus.DEFAULT else None   # 说一次换了哪块 GPU，
            console.GPU_SAID[0] = False                    # "可以试试"的命令带上同样的 --gpu
        return ns, rest

    def error(self, message: str) -> None:           # noqa: D102  一句话、退出码 2，不印整段用法
        guess = self._guess(message)
        for pattern, repl in _ENGLISH:
            if re.match(pattern, message):
                message = re.sub(pattern, repl, message)
                break
        message = message.rstrip("。.") + "。" + guess
        say(f"{self.prog}：{message}（运行 python3 {self.prog} --help 看所有选项。）")
        self.exit(2)


    def _guess(self, message: str) -> str:
        """不认识的选项（--bud、--seeed）像哪个认识的：参数不接受缩写，打短了、打错了都说一声是不是那个。"""
        if not message.startswith("unrecognized arguments:"):
            return ""
        known = [o for o in self._option_string_actions if o.startswith("--")]
        if "--" in message.split(":", 1)[1].split() or getattr(self, "_lone_dash", False):   # 单独一个 --：它后面的都成了位置参数（学生报过：
            return "单独的 -- 后面的都被当成了位置参数，不是选项：把 -- 去掉。"   # 以前反问"是不是 --seed"）
        for word in message.split(":", 1)[1].split():
            flag = word.split("=", 1)[0]
            if not flag.startswith("--"):
                continue
            near = [o for o in known if o.startswith(flag)] or difflib.get_close_matches(flag, known, n=1, cutoff=0.7)
            if len(near) == 1:
                return f"是不是 {near[0]}？"
            if 1 < len(near) <= 4:                             # --s：--seed、--seeds、--svg 都有可能，都说出来
                return f"是不是 {'、'.join(near[:-1])} 或 {near[-1]}？"
        return ""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """--help 按显示宽度（中文两列）折行：argparse 自己按字数折，一行中文的说明在 80 列的终端里会有 100 多列。
    说明段（description、epilog）保留作者的换行和缩进，只把太宽的行折开；选项的说明照常重新折行。
    参数名（metavar）用西文写（NAME=VALUE、FILE）：argparse 按字数对齐说明那一列。"""

    def _format_usage(self, usage, actions, groups, prefix):
        """"usage: " 换成 "用法: "：它比字数宽 2 列，所以按窄 2 列的宽度排，续行再往右挪 2 列（和第一行的参数对齐）。"""
        from layout import display_width
        prefix = "用法: " if prefix is None else prefix
        extra = display_width(prefix) - len(prefix)
        self._width -= extra
        try:
            text = super()._format_usage(usage, actions, groups, prefix)
        finally:
            self._width += extra
        first, *rest = text.split("\n")
        return "\n".join([first] + [" " * extra + line if line.strip() else line for line in rest])

    def start_section(self, heading):                                       # noqa: D102  分组的标题用中文
        super().start_section({"options": "选项", "positional arguments": "位置参数"}.get(heading, heading))

    def format_help(self):                                                  # noqa: D102
        # argparse 在分组标题后面加半角的 ":"：中文标题（顶格、以汉字或全角括号结尾）换成全角的"："
        return re.sub(r"^(\S[^\n]*[\u3400-\u9fff）]):$", r"\1：", super().format_help(), flags=re.M)

    def _split_lines(self, text, width):
        from layout import wrap
        return wrap(self._whitespace_matcher.sub(" ", text).strip(), width)

    def _fill_text(self, text, width, indent):
        from layout import display_width, wrap
        out = []
        for line in text.splitlines():
            lead = line[:len(line) - len(line.lstrip(" "))]
            out += wrap(line, width, lead + "  ") if display_width(indent + line) > width else [line]
        return "\n".join(indent + line for line in out) + "\n"


def parser(description: str, prog: str | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """一个不接受缩写的 ArgumentParser：参数错了只说一句话（退出码 2），--help / -h 印说明（退出码 0）。
    prog 默认是运行时敲的脚本路径（python3 04_alphaevolve_tiling.py 就是 04_alphaevolve_tiling.py），
    报错里"运行 python3 … --help"那条命令在同一个目录下照着就能运行。"""
    if prog is None:
        prog = sys.argv[0] if sys.argv and sys.argv[0] else "script.py"
    p = _Parser(prog=prog, description=description, epilog=epilog, allow_abbrev=False, add_help=False,
                formatter_class=_HelpFormatter)
    p.add_argument("-h", "--help", action="help", help="印这段说明并退出")
    gpus = _load_gpus()
    loaded = getattr(sys.modules.get("kernel_lab"), "GPU", None)     # 已经载入的那块（测试在进程里调用 main 时）
    p.add_argument("--gpu", choices=tuple(gpus.GPUS), default=loaded.key if loaded is not None else gpus.selected_key(),
                   help="模型用哪块 GPU 的数（lecture10/gpus.py，带出处）：" + "，".join(
                       f"{g.key} = {g.name}" for g in gpus.GPUS.values()) + f"（默认 {gpus.DEFAULT}）")
    return p


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        pass
    # 学生报过：--budget 1e3、--budget 1,000（照着印出来的"1,000 个提议"敲的）只得到"不是整数"：它是整数时说怎么写
    try:
        value = float(text.strip().replace(",", "").replace("，", ""))
    except ValueError:
        value = None
    hint = f"，写成 {int(value)}" if value is not None and value.is_integer() and abs(value) < 1e18 else ""
    raise argparse.ArgumentTypeError(f"'{text}' 不是整数{hint}") from None


def positive_int(text: str) -> int:
    """argparse 的 type：正整数（1、2、3……）。"""
    n = _int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"要是正整数（1、2、3……），收到的是 {text}")
    return n


def int_between(lo: int, hi: int, why: str = ""):
    """argparse 的 type：lo 到 hi 之间（含两头）的整数。上限挡住手滑多敲的几个 0（一句话、退出码 2），
    而不是跑到内存不够才出 traceback。why：说明上限从哪来，接在范围后面（比如"2**24，模型能算的最大维度"）。"""
    def check(text: str) -> int:
        n = _int(text)
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"要在 {lo:,} 到 {hi:,}{'（' + why + '）' if why else ' '}之间（含两头），"
                                             f"收到的是 {text}")
        return n
    check.__name__ = "整数"
    return check


def nonnegative_int(text: str) -> int:
    """argparse 的 type：非负整数（0、1、2……）。"""
    n = _int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"要是非负整数（0、1、2……），收到的是 {text}")
    return n


def fraction(text: str) -> float:
    """argparse 的 type：0 到 1 之间（含 0、不含 1）的小数，例如 0.05。"""
    try:
        x = float(text)
    except ValueError:
        # 审读报过：--tolerance 5%（照着"放宽到 5% 以内"敲的）只得到"不是小数"：写的是百分数时说怎么写（和 _int 的 1e3 一样）
        try:
            y = float(text.strip()[:-1]) / 100 if text.strip()[-1:] in ("%", "％") else -1.0
        except ValueError:
            y = -1.0
        hint = f"，写成 {y:g}" if 0 <= y < 1 else ""           # 150%、nan% 不给一个照样不收的写法
        raise argparse.ArgumentTypeError(f"'{text}' 不是小数{hint}") from None
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError(f"要在 0 和 1 之间（0 ≤ x < 1，例如 0.05），收到的是 {text}")
    return x


# ---------------------------------------------------------------- 运行、中断、进度

def on_interrupt(callback) -> None:
    """登记一个清理函数：Ctrl-C（或管道被关掉）时，在退出前调用它（比如关掉进程池）。"""
    _cleanups.append(callback)


def _kill_children() -> None:
    """先调用登记的清理函数，再杀掉 multiprocessing 起的所有子进程（进程池的 worker），不等它们把队列跑完。"""
    for cb in reversed(_cleanups):
        try:
            cb()
        except Exception:                                  # noqa: BLE001  清理失败也要接着退出
            pass
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    # 没登记清理函数的进程池：它的后台线程看见 worker 被杀，会马上补一个新的（新的继承"不理 Ctrl-C"，在脚本退出后
    # 接着跑，还占着标准输出的管道）。所以杀完再看一遍，补上来的也杀掉，直到没有为止（有限几轮）。
    for _ in range(20):
        try:
            children = mp.active_children()
        except Exception:                                  # noqa: BLE001
            return
        if not children:
            return
        for p in children:
            try:
                p.kill()
            except Exception:                              # noqa: BLE001
                pass
        for p in children:                                 # 收尸：不然它们是僵尸进程，要等 init 来收，看着像没结束
            try:
                p.join(0.5)
            except Exception:                              # noqa: BLE001
                pass


@contextlib.contextmanager
def sigint_ignored():
    """with 块里 fork 出来的子进程继承"不理 Ctrl-C"：终端的 Ctrl-C 发给整个进程组，worker 不会各印一段 traceback，
    由父进程的 run() 统一杀掉。块里主进程收到的 Ctrl-C 记下来，块结束时照常抛 KeyboardInterrupt。"""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got = []
    old = signal.signal(signal.SIGINT, lambda *_: got.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if got:
        raise KeyboardInterrupt


def ignore_sigint() -> None:
    """在子进程里调用（进程池的 initializer）：这个进程不理 Ctrl-C。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def heartbeat(describe, every: float = 5.0):
    """with 块跑得久的时候，每 every 秒在标准错误上报一行 describe(已经等了几秒)（比如"还在等……，做完了 k/n 次"）。
    用一个守护线程；块结束（包括 Ctrl-C）时停下。"""
    import threading
    stop = threading.Event()
    start = time.monotonic()

    def beat():
        while not stop.wait(every):
            progress(describe(time.monotonic() - start))

    t = threading.Thread(target=beat, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()


def _quit(code: int) -> None:
    try:
        sys.stdout.flush()
    except Exception:                                      # noqa: BLE001
        pass
    try:
        sys.stderr.flush()
    except Exception:                                      # noqa: BLE001
        pass
    os._exit(code)                                         # 不跑 atexit：进程池的 atexit 会等 worker，正是要避免的


_DISK_FULL = {errno.ENOSPC: "磁盘满了", errno.EDQUOT: "超了磁盘配额", errno.EFBIG: "文件太大"}   # 写不下的几种


def run(main, *args, **kwargs):
    """调用 main(*args, **kwargs)，返回它的返回值。Ctrl-C：杀掉子进程，标准错误印一行"已中断。"，退出码 130；
    标准输出的管道被关掉（| head）：杀掉子进程，安静地退出（退出码 0）。磁盘满了（> /dev/full 也是）：一句话，退出码 1。"""
    try:
        result = main(*args, **kwargs)
        sys.stdout.flush()                                 # 管道已经关掉的话，在这里就发现，而不是在退出时
        _finished()
        return result
    except KeyboardInterrupt:
        _interrupted()
    except BrokenPipeError:
        _kill_children()
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except Exception:                                  # noqa: BLE001
            pass
        _quit(0)
    except BaseException as e:
        if _interrupt_inside(e):                           # Ctrl-C 被包成了别的异常（见 _interrupt_inside）
            _interrupted()
        if isinstance(e, OSError) and e.errno in _DISK_FULL:   # 学生报过：> /dev/full 时一段 traceback
            _kill_children()
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)     # 收尾时不再往写不下的地方写
                os.dup2(devnull, sys.stdout.fileno())
                where = f"（{e.filename}）" if e.filename else "（标准输出重定向到的文件，或者脚本写的文件）"
                say(f"写不下去了：{_DISK_FULL[e.errno]}{where}。腾出磁盘空间（或者换一个地方写），再运行一次。")
            except Exception:                              # noqa: BLE001
                pass
            _quit(1)
        if getattr(e, "one_sentence", False):              # 数据本身的问题（比如形状配不上对）：只说这一句，退出码 1
            _kill_children()
            prog = sys.argv[0] if sys.argv and sys.argv[0] else "script.py"
            try:
                say(f"{prog}：{str(e).rstrip('。')}。")
            except Exception:                              # noqa: BLE001
                pass
            _quit(1)
        raise


def _finished() -> None:
    """脚本做完了、输出都印出来了：之后（解释器退出的最后十几毫秒）按的 Ctrl-C 不理，照常以 0 退出。不然它会落在
    Python 的收尾里：atexit 里印一段 "Exception ignored" 的 traceback，或者（Python 已经把 SIGINT 还原成默认以后）
    直接杀掉进程，shell 看到 130，其实什么也没少印。设成"不理"的 SIGINT，Python 收尾时不会改回默认。
    只在直接运行编号脚本时这样（测试在自己的进程里调用 run() 时不动）；收尾时没有会卡住的东西：LLM 的线程是
    daemon 的，进程池在 main 里已经收好，atexit 只剩 multiprocessing 收尸（terminate 之后 join，很快）。"""
    if sys.excepthook is not _excepthook:
        return
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:                                     # 不在主线程（不会发生在编号脚本里）
        pass


def _interrupted() -> None:
    """Ctrl-C 之后：不再理 Ctrl-C（收拾时再按也不打断收拾），杀掉子进程，印一行，退出码 130。后备线程（_backstop）
    已经在收拾了的话，等它退出。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _STOPPING.acquire(blocking=False):
        while True:
            time.sleep(1)
    _kill_children()
    try:
        print(interrupted_line(), end="", file=sys.stderr)
    except Exception:                                      # noqa: BLE001
        pass
    _quit(EXIT_INTERRUPTED)
