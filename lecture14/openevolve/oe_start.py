"""
make openevolve 和 07 的一部分：OpenEvolve 从哪个程序出发、用什么打分——起点是这次运行的专家（不是 initial_program.py
的 EVOLVE 块：改过它时说一声），打分的是本目录的 evaluator.py（开跑之前在这个进程里对起点试一次，写坏了就一句话），
它把完整评估过的最好程序随时记在输出目录的 best_so_far.json 里。OpenEvolve 的进程（oe_child.py）也从这里拿起点。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库（和本讲的 evolve）。
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INITIAL = os.path.join(HERE, "initial_program.py")
EVALUATOR = os.path.join(HERE, "evaluator.py")
BEST_ENV, BEST_FILE = "MINI_ALPHAEVOLVE_OE_BEST", "best_so_far.json"   # evaluator.py 随时记下最好的程序（evaluator.BEST_ENV）


EXPERT_SNAPSHOT = "expert_at_start.py"     # output 里：开跑时的专家（run_openevolve 让 OpenEvolve 的进程读它）


def starting_program(output: str, name: str = "initial_program.py") -> str:
    """OpenEvolve 从哪个程序出发：initial_program.py 的一份拷贝（在 output 里），EVOLVE 块换成这次运行的专家
    （evolve.EXPERT：lecture14/expert_heuristic.py，或者环境变量 MINI_ALPHAEVOLVE_EXPERT 指的文件）——和本讲的循环
    同一个起点、同一个打分的基准。学生报过：照练习改了 expert_heuristic.py，本讲的循环从改过的专家出发，OpenEvolve
    还从讲义的专家出发（训练形状上 0.992×），07 却说"两边都从专家出发"。返回那份拷贝（output 里的 name）的路径；
    同样的一份也是 OpenEvolve 的进程读的专家（EXPERT_SNAPSHOT）。"""
    from evolve import EXPERT, render
    head, tail = _around_block()
    path = os.path.join(output, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + render(EXPERT) + tail)                # render 自己带着 EVOLVE 块的两行标记
    return path


def _initial_text() -> str | None:
    """initial_program.py 的原文；读不了（删了、不是 UTF-8）时是 None。"""
    try:
        with open(INITIAL, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _around_block() -> tuple[str, str]:
    """initial_program.py 里 EVOLVE 块前后的文字（说明问题的注释），拷贝里原样留着。两行标记不全、文件读不了时是
    ("", "")：起点只有 EVOLVE 块（学生报过：initial_program.py 的标记被改坏了，make openevolve 印了一段 traceback）。"""
    from evolve.program import BLOCK_END, BLOCK_START
    text = _initial_text()
    if text is None or BLOCK_START not in text:
        return "", ""
    head, rest = text.split(BLOCK_START, 1)
    if BLOCK_END not in rest:
        return "", ""
    return head, rest.split(BLOCK_END, 1)[1].removeprefix("\n")


def initial_program_note() -> str:
    """initial_program.py 的 EVOLVE 块不再是讲义的专家（学生改过、写坏了、标记没了）时的一句提醒；还是时空串。
    make openevolve 和 07 从这次运行的专家出发（starting_program），不读那个块：学生报过，把自己的启发式写进
    initial_program.py 再 make openevolve，OpenEvolve 悄悄从专家出发，最好的程序看着像是从他的程序进化来的。"""
    from evolve import ProgramError, parse
    from evolve.problem import EXPERT_FILE, LECTURE_EXPERT_FILE, display_path, load_heuristic
    from evolve.program import BLOCK_END, BLOCK_START, equivalent
    text = _initial_text()
    try:
        same = (text is not None and BLOCK_START in text and BLOCK_END in text.split(BLOCK_START, 1)[1]
                and equivalent(parse(text), load_heuristic(LECTURE_EXPERT_FILE)))
    except (OSError, ProgramError):
        same = False
    if same:
        return ""
    return (f"注意：{display_path(INITIAL)} 的 EVOLVE 块不是讲义的专家（改过？）：make openevolve 和 07 不读它，"
            f"OpenEvolve 从这次运行的专家 {display_path(EXPERT_FILE)} 出发（和本讲的循环同一个起点、同一个分母）。"
            "要让 OpenEvolve 从你写的程序出发，照 config.yaml 开头的写法直接运行 openevolve-run，把你的文件放在第一个参数；"
            f"恢复原样：git checkout lecture14/openevolve/initial_program.py。")


def start_notes() -> list[str]:
    """开跑前在标准输出上说的话（make openevolve 和 07 都说）：专家改过（04、06 也说的那一句），initial_program.py
    改过（make openevolve 和 07 不读它）。学生报过：改了 expert_heuristic.py 再 make openevolve，"比专家快 1.037×"
    的分母是他改过的那份，04、06 都说了，这里一个字没说。"""
    from evolve.problem import expert_changed_note
    return [note for note in (expert_changed_note(), initial_program_note()) if note]


def evaluator_problem() -> str | None:
    """evaluator.py 写坏了（学生改它）：一句话（文件:行: 哪里错、怎么办）；没问题时是 None。先编译（语法错误），再在
    这个进程里载入它，对起点程序（starting_program）依次调用 OpenEvolve 会调用的 evaluate_stage1、evaluate_stage2、
    evaluate。学生报过：evaluator.py 少了一个冒号，make openevolve 只说"OpenEvolve 出错退出：看日志的最后几行"；
    evaluate_stage2 里拼错一个变量名，每个完整评估都出错，make openevolve 却说那些程序"在探针级就停了"。
    载入时不 import OpenEvolve（要一秒多）：evaluator 的 _result 没有它就回同样内容的字典。"""
    import tempfile
    import traceback
    import types

    from evolve.openai_llm import shown
    from evolve.problem import display_path
    where = display_path(EVALUATOR)
    fix = "改好它，或者 git checkout lecture14/openevolve/evaluator.py 恢复原样"
    try:
        with open(EVALUATOR, "rb") as f:
            code = compile(f.read(), EVALUATOR, "exec")
    except SyntaxError as e:
        return f"{where}:{e.lineno or 1}: 语法错误（{shown(str(e.msg), 200)}），OpenEvolve 载入不了它：{fix}。"
    except (OSError, ValueError) as e:
        return f"{where}: 读不了这个文件（{shown(str(getattr(e, 'strerror', None) or e), 200)}）：{fix}。"
    module = types.ModuleType("_mini_alphaevolve_oe_evaluator")
    module.__file__ = EVALUATOR
    step = "载入它的时候"
    blocked = "openevolve" not in sys.modules and "openevolve.evaluation_result" not in sys.modules
    if blocked:
        sys.modules["openevolve.evaluation_result"] = None       # import 它就是 ImportError：走字典那条路
    try:
        with tempfile.TemporaryDirectory(prefix="mini_oe_check_") as tmp:
            start = starting_program(tmp)
            exec(code, module.__dict__)
            if not callable(getattr(module, "evaluate", None)):
                return f"{where}: 没有 evaluate 函数（OpenEvolve 载入 evaluator 时要它）：{fix}。"
            for name in ("evaluate_stage1", "evaluate_stage2", "evaluate"):
                fn = getattr(module, name, None)
                if callable(fn):
                    step = f"{name} 给起点程序打分时"
                    fn(start)
    except Exception as e:                                        # noqa: BLE001  学生改出来的任何错
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == EVALUATOR]
        line = f":{lines[-1]}" if lines else ""
        return (f"{where}{line}: {step}出错（{type(e).__name__}: {shown(str(e), 200)}），OpenEvolve 评估时也会这样："
                f"{fix}。")
    finally:
        if blocked:
            sys.modules.pop("openevolve.evaluation_result", None)
    return None
