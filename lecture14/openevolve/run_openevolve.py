"""
第 14 讲的问题交给真的开源 AlphaEvolve——OpenEvolve（PyPI 上的 openevolve 0.4.0，可选的依赖）——离线跑一次：

    make openevolve                      （在仓库根目录：先装 requirements-openevolve.txt，再运行这个文件）
    python3 lecture14/openevolve/run_openevolve.py [--iterations 300] [--seed 0] [--output DIR]

它做三件事：开一个 MockLLM 服务器（lecture14/mock_llm_server.py，127.0.0.1 上一个空闲端口）；让 OpenEvolve 用本目录的
initial_program.py、evaluator.py、config.yaml 跑 --iterations 个提议（api_base 换成这个服务器的地址）；关掉服务器，
印出最好的程序和它在训练 / 测试形状上相对专家的加速比（用本讲的 evolve 重新算，和 evaluator 给 OpenEvolve 的分数
核对过）。"LLM"是 MockLLM，没有真的语言模型；"硬件"是第 13 讲的解析模型。换成真的模型见 config.yaml 开头。
用时见 README 的"更进一步"一节（几乎全是 OpenEvolve 自己的开销：空闲的机器上每个提议几十毫秒，忙的时候零点几秒，另有启动几秒）；进度印到标准错误。Ctrl-C 一秒内停下：OpenEvolve 和它的 worker 进程、服务器都结束。
OpenEvolve 的全部输出（日志、best/、evolution_trace.jsonl）在 --output 目录里；每个评估过的子程序在日志里都有一行
"Iteration N: Program …"，evolution_trace.jsonl 少记一些（见 oe_results.read_run）。

这个文件是命令本身（main：参数、开跑前按什么顺序检查、印什么）；别的部分各在本目录的一个文件里：
    oe_settings.py      config.yaml：照 OpenEvolve 的读法读，它会问哪些服务器，开跑前拒绝的设置，开跑前问一次服务器
    oe_env.py           装了 OpenEvolve 没有（.venv 里装了就换成它），OpenEvolve 的进程拿到的环境（不传的变量、代理）
    oe_start.py         OpenEvolve 的起点（这次运行的专家）和打分的 evaluator.py（开跑前试一次）
    oe_processes.py     进程：MockLLM 服务器，OpenEvolve 在自己的进程组里跑（run_openevolve），读它的日志、卡住时停下它
    oe_failures.py      日志里的提议和失败的种类，接连失败就停下，停下时那句话说查什么
    oe_results.py       一次运行的结果：读输出目录，提议分五类，最好的程序，停下时记下的最好程序
    oe_child.py         OpenEvolve 的进程里跑的（python run_openevolve.py --child SPEC）：child(spec)
    oe_careful_http.py  OpenEvolve 的进程里，每个 HTTP 请求有界：大小、整个请求的时间、不跟转向、不泄露密钥
07_openevolve.py 也用这些文件（oe_processes.run_openevolve 等）。都只用标准库；OpenEvolve 在一个单独的进程组里跑。
"""

from __future__ import annotations

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE14 = os.path.dirname(HERE)
ROOT = os.path.dirname(LECTURE14)
if HERE not in sys.path:                 # 旁边的 oe_*.py：当脚本运行时 Python 已经放上了，07、测试载入这个文件时这里放
    sys.path.append(HERE)

from oe_env import env_notes, need_openevolve  # noqa: E402
from oe_processes import Processes, run_openevolve, server_gone, start_server  # noqa: E402
from oe_results import (OUTPUT, count, eval_error_said, evaluated_best, kept_best, kept_said, no_child_said,  # noqa: E402
                        returned_said, rules_said)
from oe_settings import (MOCK_MODEL, VERSION, check_endpoints, config_refusal, configured_llm, is_mock_base,  # noqa: E402
                         shown_name)
from oe_start import BEST_FILE, evaluator_problem, start_notes  # noqa: E402

ITERATIONS = 300
MAX_ITERATIONS = 5000         # 和 07 的 --budget 一样：OpenEvolve 每个提议几十毫秒到零点几秒，再大要等很久（学生报过：多敲了几个 0 也照跑）
MAX_SEED = 2 ** 32 - 1        # OpenEvolve 的种子上限（更大的它在日志里报 ValueError，这里只说"出错退出"）
MISSING = "没装 OpenEvolve（可选的依赖，别的脚本都不需要它）：在仓库根目录运行 make openevolve（它先装好再跑）"


def main(argv=None) -> int:
    sys.path[:0] = [LECTURE14, os.path.join(ROOT, "lecture01")]
    from runner import ensure_numpy, int_between, on_interrupt, parser, progress, say, say_after_ctrl_c
    from console import print_note, print_try    # 解析参数之前 import：--gpu 不是默认的 GPU 时"可以试试"的命令带上它
    ap = parser("第 14 讲的问题交给 OpenEvolve，离线对着 MockLLM 服务器（或 config.yaml 里的模型）跑一次。")
    ap.add_argument("--iterations", type=int_between(1, MAX_ITERATIONS), default=ITERATIONS,
                    help=f"提议的个数，1 到 {MAX_ITERATIONS:,}（默认 {ITERATIONS}；1000 和 04 的默认预算一样）")
    ap.add_argument("--seed", type=int_between(0, MAX_SEED), default=0,
                    help=f"OpenEvolve 和 MockLLM 的随机种子，0 到 {MAX_SEED:,}（默认 0）")
    ap.add_argument("--output", default=None, help="OpenEvolve 的输出目录（默认 lecture14/openevolve/output，每次清空重来）")
    a = ap.parse_args(argv)
    need_openevolve(MISSING, "python3 lecture14/openevolve/run_openevolve.py")   # 在 .venv 里装了就换成它（审读报过）
    ensure_numpy()
    from evolve import TimeTable, geomean_speedup, oracle_speedup, render, split_shapes
    from evolve.openai_llm import clean_url, shown
    from evolve.problem import display_path
    output = a.output or OUTPUT
    if a.output is None and os.path.isdir(output):
        shutil.rmtree(output)
    elif os.path.isdir(output) and os.listdir(output):
        say(f"输出目录 {output} 不是空的：换一个 --output，或者先把它删掉。")
        return 2
    procs = Processes()
    on_interrupt(procs.close)
    on_interrupt(lambda: kept_said(output, say_after_ctrl_c))   # 讲师报过：Ctrl-C 停下长的运行，不知道最好的程序存下了、下次会被清空
    try:
        base, model = configured_llm()
    except ValueError as e:
        say(str(e) if str(e).endswith(("。", "？")) else str(e) + "。")
        return 2
    mock = is_mock_base(base)
    refused = config_refusal()
    if refused:
        say(refused)
        return 2
    for note in env_notes():                           # 不悄悄扔掉：说一声
        progress(note)
    problem = evaluator_problem()                      # 学生改坏了 evaluator.py：开服务器、起 OpenEvolve 之前一句话
    if problem:
        say(problem)
        return 2
    for note in start_notes():                         # 专家改过、initial_program.py 改过（不读它）：和 04、06 一样先说
        print_note(note)
    try:
        if mock:
            progress(f"开 MockLLM 服务器，再让 OpenEvolve {VERSION} 跑 {a.iterations} 个提议（进度在这里；Ctrl-C 随时停下）……")
            if model != MOCK_MODEL:                     # 学生报过：只改了 name，悄悄还是 MockLLM
                progress(f"（config.yaml 的 api_base 还是 MockLLM 服务器的地址，models 下的 name（{shown_name(model)}）这次"
                         "不管用：问的还是 MockLLM。换成真的模型要把 api_base 也改掉，写法在 config.yaml 开头）")
            server, url = start_server(procs, a.seed)
            watch = server_gone(server)
        else:
            problem = check_endpoints()
            if problem:
                say(problem)
                return 2
            progress(f"OpenEvolve {VERSION} 问 config.yaml 里的 {clean_url(base)}（模型 {shown(model, 100)}），"
                     f"跑 {a.iterations} 个提议……")
            url, watch = None, None
        res = run_openevolve(procs, url, a.iterations, a.seed, output, watch=watch,
                             progress=lambda k, n: progress(f"  OpenEvolve：{k}/{n} 个提议"), note=progress)
    except RuntimeError as e:
        say(str(e))
        kept = kept_best(output)
        if kept is not None:                                  # 停下之前找到的最好的程序不丢：印出来（也在输出目录里）
            table, (train, test) = TimeTable(), split_shapes()
            print_note(f"OpenEvolve {VERSION} 没有跑完 {a.iterations} 个提议（原因见标准错误）。停下之前完整评估过的程序里，"
                       f"训练形状上最好的是这个（用本讲的 evolve 重新算：训练形状上比专家快 "
                       f"{geomean_speedup(kept, train, table):.3f}×，测试形状上 {geomean_speedup(kept, test, table):.3f}×；"
                       f"{rules_said(kept)}；也存在 {display_path(os.path.join(output, BEST_FILE))}）：")
            print(render(kept), end="")
        return 1
    finally:
        procs.close()
    table = TimeTable()
    train, test = split_shapes()
    best, tr, returned = evaluated_best(res, output, train, table)
    te = geomean_speedup(best, test, table)
    who = ("LLM 是 MockLLM 服务器（没有真的语言模型）" if mock else      # 地址里的用户名、密码、查询串不印（讲师报过）
           f"LLM 是 {shown(model, 100)}（config.yaml 的 {clean_url(base)}）")
    from kernel_lab import GPU
    print_note(f"OpenEvolve {VERSION} 跑第 14 讲的问题：{a.iterations} 个提议，种子 {a.seed}；{who}，时间来自第 13 讲的解析模型"
               f"（{GPU.short} 的参数，不是实测）。")
    print_note(f"最好的程序（用本讲的 evolve 重新算：训练形状上比专家快 {tr:.3f}×，测试形状上 {te:.3f}×，"
               f"训练形状上是逐形状最优的 {tr / oracle_speedup(train, table):.0%}；{rules_said(best)}）：")
    print(render(best), end="")
    if returned is not None:
        print_note(returned_said(f"OpenEvolve {VERSION}", returned, tr))
    c = count(res)
    print_note(f"{a.iterations} 个提议：{c['full']} 个做了完整评估，{c['probe']} 个在探针级就停了，"
               f"{c['rejected']} 个读不懂或启动不了（0 分）{eval_error_said(c['eval_error'])}，{no_child_said(c, res)}。")
    print_note(f"OpenEvolve 的输出（日志、best/、evolution_trace.jsonl）在 {display_path(output)}。")
    print_try([("和本讲的迷你循环并排比：同一个问题、同一个 MockLLM、每边同样的预算，各跑两个种子：",
                "python3 lecture14/07_openevolve.py")]
              + ([("换一个种子再跑一次，看 OpenEvolve 一次和一次差多少（同一个种子它也不保证每次走同一条路：原因在它内部）：",
                   next_seed_command(a))] if mock else []))
    inside = res.get("seconds_inside", res["seconds"])
    progress(f"（用时 {res['seconds']:.1f} 秒：OpenEvolve 启动和收尾 {res['seconds'] - inside:.1f} 秒，"
             f"{a.iterations} 个提议 {inside:.1f} 秒，每个 {inside / a.iterations:.2f} 秒）")
    if res.get("gave_up"):                           # 和停下时一样是退出码 1（本讲的 --llm 接连失败时也是）
        say(f"（退出码 1：{res['gave_up']}。）")
        return 1
    return 0


def next_seed_command(a) -> str:
    """"换一个种子"的命令：下一个种子（不是这次的：讲师报过 --seed 1 跑完又建议 --seed 1），这次改过的提议数照写。"""
    extra = [f"--iterations {a.iterations}"] if a.iterations != ITERATIONS else []
    return f'make openevolve ARGS="{" ".join([f"--seed {a.seed + 1}", *extra])}"'


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, LECTURE14)
        from oe_child import child
        sys.exit(child(json.loads(sys.argv[2])))
    sys.path[:0] = [LECTURE14, os.path.join(ROOT, "lecture01")]
    from runner import install_ctrl_c, run
    install_ctrl_c()                                         # 和编号脚本一样的 Ctrl-C（一秒内停下、一行话）
    sys.exit(run(main))
