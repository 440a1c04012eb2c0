"""
=============================================================================
CS349E · 第 14 讲 · 07_openevolve.py —— 本讲的迷你循环和真的开源 AlphaEvolve（OpenEvolve）并排跑同一个问题
=============================================================================

【这个脚本要回答的问题】
    04 的进化循环是为讲课写的迷你版。同一个问题、同一个 MockLLM、同样多的提议，交给最常用的开源实现
    OpenEvolve（PyPI 的 openevolve 0.4.0：MAP-Elites 加岛屿的程序库、更长的提示、异步的 worker 进程），
    最好的程序更好还是更差？多少提议被浪费了、多少程序做了完整评估？每个提议要花多少时间、多长的提示？
      每个种子：开一个 MockLLM 服务器（lecture14/mock_llm_server.py，127.0.0.1），本讲的 evolve 经 HTTP 问它
      --budget 个提议；再开一个同样种子的服务器，OpenEvolve（lecture14/openevolve/ 的 initial_program.py、
      evaluator.py、config.yaml）也问它 --budget 个提议。两边的"LLM"都是 MockLLM，反馈都由服务器从时间表算。
      一张表、一张"最好分数随提议数"的图，几句在代码里检验过的观察。

【关于数字】"硬件"是第 13 讲 sched_lab 的解析模型（不是在 GPU 上量的）；"LLM"是 MockLLM，没有真的语言模型，
    所以比的是两个进化框架（程序库、提示、级联）在同一个假模型下的表现，不是谁的模型更聪明。
    本讲的循环那几行每次逐字节相同。OpenEvolve 那几行不保证：我们固定了它的种子、程序名（uuid）、哈希种子，只用
    一个 worker，可量过的运行里常有在几十个提议之后分岔的（原因在 OpenEvolve 内部，
    没有找到），所以它的数每次可能不同，差别可以比两个种子之间的还大——脚本在表下面也这么说。墙上时间每次不同，印在标准错误上。
【运行】python3 lecture14/07_openevolve.py                     （默认：2 个种子，每边每个种子 150 个提议）
       python3 lecture14/07_openevolve.py --budget 1000 --seeds 3 （和 04 的预算一样，更慢）
       代价：默认两边一共 2 × 2 × 150 = 600 个提议，其中 OpenEvolve 300 个；--budget 1000 --seeds 3 一共 6,000 个，
       OpenEvolve 3,000 个，用时是默认的十倍左右——用时几乎全在 OpenEvolve 那边，和它的提议数成正比
       （OpenEvolve 每个提议的墙上时间，空闲的 2 核机器上量到本讲循环的十几到几十倍，机器忙时低到 7.7 倍；脚本的观察只要求
       至少常数 SLOWER 那么多倍。两种设置量到的秒数见 README 的"更进一步"一节）。
       OpenEvolve 的几个种子默认两个同时跑（--jobs，只影响快慢）。进度印到标准错误；Ctrl-C 一秒内停下，
       OpenEvolve 和它的 worker 进程、服务器都结束。--svg DIR 把图另存成 SVG。
【依赖】numpy；OpenEvolve（可选的依赖：make openevolve 或 .venv/bin/pip install -r requirements-openevolve.txt，
       没装时这个脚本说一句话、退出码 1）；本目录的 evolve、mock_llm_server.py、openevolve/；../lecture01 的 console。
"""

import itertools
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from runner import ensure_numpy, int_between, on_interrupt, parser, progress, run, say, took  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "openevolve"))    # make openevolve 的几个文件：哪个放哪一部分见 run_openevolve.py 开头
import oe_env  # noqa: E402
import oe_processes  # noqa: E402
import oe_results  # noqa: E402
import oe_settings  # noqa: E402
import oe_start  # noqa: E402
import run_openevolve  # noqa: E402   make openevolve 本身：它默认跑几个提议（"可以试试"里说）

MISSING = ("07 要 OpenEvolve（可选的依赖，别的脚本都不需要它）：在仓库根目录运行 make openevolve（它装好以后还会跑一次 "
           "OpenEvolve）")


def _need_openevolve() -> None:
    """没装 OpenEvolve：仓库的 .venv 里装了就换成它重新运行，否则说一句话、退出码 1（oe_env.need_openevolve）。"""
    oe_env.need_openevolve(MISSING, "python3 lecture14/07_openevolve.py")


ensure_numpy()

import numpy as np  # noqa: E402

from console import MARKS, Charts, check, gpu_flag, listing, print_header, print_note, print_observations, print_table, print_try  # noqa: E402
from evolve import Evaluator, TimeTable, evolve, geomean_speedup, oracle_speedup, render, split_shapes  # noqa: E402
from evolve.openai_llm import OpenAILLM  # noqa: E402
from mock_llm_server import MockServer  # noqa: E402

BUDGET = 150        # 每边、每个种子多少个提议
SEEDS = 2           # 几个种子（0, 1, ...）
MAX_BUDGET = 5000   # 命令行上限：OpenEvolve 每个提议零点几秒，再大就要等很久
MAX_SEEDS = 20
JOBS = 2            # OpenEvolve 的种子同时跑几个（2 核的笔记本上两个同时跑，墙上时间约减半）
MAX_JOBS = 8
OURS, THEIRS = "本讲的循环", "OpenEvolve"
SLOWER = 5          # 观察：OpenEvolve 每个提议的墙上时间至少是本讲循环的这么多倍（空闲的 2 核机器上十几到几十倍；
                    # 学生报过：机器忙时量到 7.7 倍，默认运行就印了【本次不成立】。墙上时间随机器负载变，留足余量）
LONGER = 1.5        # 观察：OpenEvolve 的提示（系统提示加用户消息）至少是本讲的这么多倍长
CHARTS = Charts()


# ---------------------------------------------------------------- 跑

def run_ours(table, train, test, seed: int, budget: int) -> dict:
    """本讲的 evolve 经 HTTP 问一个 MockLLM 服务器（一次一个请求：服务器按到达的顺序回答，结果可复现）。"""
    t0 = time.perf_counter()
    with MockServer(seed=seed, table=table, train=train) as s:
        llm = OpenAILLM(s.url, "mock", concurrency=1, seed=None)
        ev = Evaluator(train, table)
        # 进度行和 OpenEvolve 的一个样（"k/n 个提议"）：evolve 每 every 个提议调一次 log，第 i 次就是第 i·every 个。
        # 以前转印 evolve 自己的那行（带"完整评估……跑了几次内核"），84 列，80 列的终端里"内核"被拆在两行
        every, calls = max(1, budget // 4), itertools.count(1)
        out = evolve(ev, budget, seed=seed, llm=llm, log_every=every,
                     log=lambda _: progress(f"{OURS}，种子 {seed}：{next(calls) * every}/{budget} 个提议"))
        stats = s.answerer
    best, res = out["best"]
    return dict(system=OURS, seed=seed, seconds=time.perf_counter() - t0, best=best, train=res["score"],
                test=geomean_speedup(best, test, table), history=[1.0] + list(out["history"]),
                failed=sum(out["failed"].values()) + ev.n_static_reject, full=ev.n_eval_full, cached=ev.n_cached,
                probe=ev.n_eval_probe, prompt_chars=stats.prompt_chars / max(1, stats.n),
                system_chars=stats.system_chars / max(1, stats.n),
                others=stats.others / max(1, stats.n), crossover=stats.ops.get("crossover", 0), asked=stats.n,
                mock_seconds=stats.seconds)


def run_theirs(table, train, test, seed: int, budget: int, procs, workdir: str) -> dict:
    """OpenEvolve（单独的进程组）问一个同样种子的 MockLLM 服务器（在这个进程的一个线程里）。"""
    t0 = time.perf_counter()
    with MockServer(seed=seed, table=table, train=train) as s:
        res = oe_processes.run_openevolve(procs, s.url, budget, seed, os.path.join(workdir, f"seed{seed}"),
                                          watch=lambda: s.bug and "MockLLM 出了程序错误",   # 退出 with 时抛出那个错
                                          progress=lambda k, n: progress(f"{THEIRS}，种子 {seed}：{k}/{n} 个提议"))
        stats = s.answerer
    if res.get("gave_up"):                              # 它问的是本讲的 MockLLM：调用都失败时它那几行比不了什么
        raise RuntimeError(f"{res['gave_up']}。它问的是本讲的 MockLLM 服务器，这些调用本不该失败，一个可能的原因是装的 "
                           "OpenEvolve 不是 requirements-openevolve.txt 钉住的版本；没有印比较的表")
    c = oe_results.count(res)
    if c["eval_error"]:                                 # evaluator.py 出错、超时：那些提议没有分数，并排比不了
        raise RuntimeError(f"{THEIRS} 种子 {seed} 有 {c['eval_error']} 个提议评估出错（evaluator.py 抛了异常或超时，"
                           f"不是程序的分数），没有印比较的表；日志里 \"Error in stage\"、\"timed out\" 那几行说了是哪里")
    best, final, returned = oe_results.evaluated_best(res, os.path.join(workdir, f"seed{seed}"), train, table)
    history, top, by_iter = [1.0], 1.0, {}
    for k, m in res["trace"]:
        if m.get("full_evaluation") == 1.0:             # 训练形状上的分数：evaluate_stage2 才写 train_speedup
            by_iter[k] = max(by_iter.get(k, 0.0), float(m.get("train_speedup", m["combined_score"])))
    for k in range(1, budget + 1):
        top = max(top, by_iter.get(k, 0.0))
        history.append(top)
    # 曲线是"到这一步为止评估过的最好的"：不会比最后的最好程序（它评估过的最好的，evaluated_best）还高。高了就是
    # 从 OpenEvolve 的日志读来的分数对不上——不悄悄改掉，表下面说出来
    wrong = sorted(k for k, v in by_iter.items() if v > final * (1 + 1e-9))
    return dict(system=THEIRS, seed=seed, seconds=time.perf_counter() - t0, best=best, curve_wrong=wrong, returned=returned,
                train=final, test=geomean_speedup(best, test, table), history=history,
                failed=c["rejected"] + c["no_child"], full=c["full"], cached=0, probe=c["probe"],
                prompt_chars=stats.prompt_chars / max(1, stats.n), system_chars=stats.system_chars / max(1, stats.n),
                others=stats.others / max(1, stats.n),
                crossover=stats.ops.get("crossover", 0), asked=stats.n, mock_seconds=stats.seconds,
                reported=res["best_metrics"].get("combined_score"))


def run_theirs_all(table, train, test, seeds: int, budget: int, procs, workdir: str, jobs: int) -> list[dict]:
    """OpenEvolve 的每个种子（各自一个服务器、一个 OpenEvolve 进程组、一个输出目录）最多 jobs 个同时跑：它大半时间在
    自己的进程里，两个核上两个种子同时跑，墙上时间差不多减半。主线程只等（每 0.1 秒醒一次），Ctrl-C 照常一秒内停；
    一个种子出错，其余的也停下，报第一个错。结果按种子排。"""
    results: list = [None] * seeds
    errors: list = []
    slots = threading.Semaphore(jobs)

    def one(seed):
        with slots:
            if errors:
                return
            try:
                results[seed] = run_theirs(table, train, test, seed, budget, procs, workdir)
            except BaseException as e:                  # noqa: BLE001  在主线程里再抛
                errors.append(e)
    threads = [threading.Thread(target=one, args=(seed,), daemon=True, name=f"openevolve-{seed}")
               for seed in range(seeds)]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.1)
            if errors:
                procs.close()                           # 别的种子的 OpenEvolve 也结束：它们的线程随之出错返回
    if errors:
        raise errors[0]
    return results


# ---------------------------------------------------------------- 观察（只用数，测试拿造出来的数检查两种说法）

def median(runs, key):
    return float(np.median([r[key] for r in runs]))


def score(x: float) -> str:
    """一个中位数加速比：三位小数；两个种子的中位数（两个三位小数的平均）落在半格上时多印一位——"1.188" 和 "1.189"
    的中位数印成 1.1885，不印成读者照表算不出来的 1.188（审读报过）。"""
    return f"{x:.3f}" if abs(float(f"{x:.3f}") - x) < 1e-9 else f"{x:.4f}"


def observations(ours: list[dict], theirs: list[dict], budget: int) -> list:
    """ours / theirs：每个种子一份 run_ours / run_theirs 的结果（只用其中的数）。加速比先舍入成表里印的三位小数，
    中位数、差、"最多差多少"都从印出来的数算：读者拿表上的数验算，得到的就是句子里的数。"""
    ours = [dict(r, train=round(r["train"], 3), test=round(r["test"], 3)) for r in ours]
    theirs = [dict(r, train=round(r["train"], 3), test=round(r["test"], 3)) for r in theirs]
    mo, mt = median(ours, "train"), median(theirs, "train")
    to, tt = median(ours, "test"), median(theirs, "test")
    obs = []
    worst = min(r["train"] for r in ours + theirs)
    obs.append(check(worst > 1.0,
                     f"两边都从专家出发，每一次运行最后都比专家快（最差的一次训练形状上 {worst:.3f}×）。",
                     "两边的每一次运行，最好的程序在训练形状上都比专家快（> 1.000×）",
                     f"最差的一次是 {worst:.3f}×"))
    # 差和"换个种子的差别"都是三位小数相减：比之前舍到 4 位，浮点误差不决定哪句话（助教报过："相差比……（最多 0.023）
    # 还大"，印出来的差也是 0.023）
    spread = round(max(max(r["train"] for r in runs) - min(r["train"] for r in runs) for runs in (ours, theirs)), 4)
    gap_train = round(abs(mo - mt), 4)
    if min(len(ours), len(theirs)) < 2:                     # 一个种子：不知道换个种子会差多少，谁高谁低说明不了什么
        # 印出来一样时不说"这点差别"（审读报过：--budget 1 --seeds 1 时两边都是 1.000×，句子照样这么说）
        same = score(mo) == score(mt) and score(to) == score(tt)
        obs.append(f"同样 {budget} 个提议、同一个 MockLLM，训练形状上本讲的循环 {score(mo)}×，OpenEvolve {score(mt)}×"
                   f"（测试形状上 {score(to)}× 对 {score(tt)}×）。每边只有 1 个种子，看不出换个种子会差多少，"
                   + ("两边印出来一样，也说明不了两边一样好" if same else "这点差别说明不了谁更好")
                   + "：多给几个种子（--seeds）再比。")
    elif gap_train <= spread:
        obs.append(f"同样 {budget} 个提议、同一个 MockLLM，训练形状上两边差不多：中位数本讲的循环 {score(mo)}×，OpenEvolve "
                   f"{score(mt)}×，相差 {score(gap_train)}，不比同一边换个种子的差别（最多 {spread:.3f}）大；"
                   f"测试形状上是 {score(to)}× 对 {score(tt)}×。")
    else:
        hi, lo = (OURS, THEIRS) if mo > mt else (THEIRS, OURS)
        same_order = (to > tt) == (mo > mt)
        gap = lambda name: " " if name.isascii() else ""      # noqa: E731  西文名字两边留空格：对 OpenEvolve 的
        obs.append(f"同样 {budget} 个提议、同一个 MockLLM，{hi}{gap(hi)}在训练形状上更高：中位数 {score(max(mo, mt))}× "
                   f"对{gap(lo)}{lo}{gap(lo)}的 "
                   f"{score(min(mo, mt))}×，相差 {score(gap_train)}，比同一边换个种子的差别（最多 {spread:.3f}）还大；测试形状上"
                   + ("也是它更高" if same_order else "反过来了") + f"（本讲的循环 {score(to)}×，OpenEvolve {score(tt)}×）。"
                   f"种子只有 {len(ours)} 个：多给几个种子（--seeds）再看。")
    fo, ft = median(ours, "full"), median(theirs, "full")
    cached, probe_o, probe_t = median(ours, "cached"), median(ours, "probe"), median(theirs, "probe")
    n = lambda x: f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"   # noqa: E731  偶数个种子的中位数可能是 x.5
    obs.append(check(fo < ft,
                     f"本讲的循环完整评估的程序更少（{n(fo)} 个对 {n(ft)} 个，中位数）：它有 {n(cached)} 个提议是评估过的"
                     f"程序、直接查了缓存，{n(probe_o)} 个在探针级停下（探针上比父程序差 2% 以上）；OpenEvolve 在探针级"
                     f"停下 {n(probe_t)} 个（它的门槛是固定的：比专家差 2% 以内都放行）。",
                     "本讲的循环完整评估的程序比 OpenEvolve 少（缓存 + 和父程序比的探针级）",
                     f"本讲的循环 {n(fo)} 个，OpenEvolve {n(ft)} 个（中位数）"))
    # 提示长度也从表里印的整数算（种子多于两个时中位数不是平均数：讲师报过，--seeds 3 时"平均 8,792 个字符"，照表
    # 那一列算平均是 8,823——那是三个种子的中位数）
    po, pt = (float(np.median([round(r["prompt_chars"]) for r in runs])) for runs in (ours, theirs))
    no, nt = median(ours, "others"), median(theirs, "others")
    so_, st_ = median(ours, "system_chars"), median(theirs, "system_chars")
    obs.append(check(pt >= LONGER * po and nt > no,
                     f"OpenEvolve 的提示平均 {n(pt)} 个字符（表里那一列，种子的中位数），是本讲的 {pt / po:.1f} 倍"
                     f"（两边都算上系统提示：本讲的 "
                     f"{so_:,.0f} 个字符，教 DSL、配置网格和启动上限；OpenEvolve 的 {st_:,.0f} 个）。多在用户消息里：除了"
                     f"当前程序，平均还有 {nt:.1f} 个别的程序（最好的几个、多样的几个、灵感；和当前程序一模一样的不算），"
                     f"本讲的只有 {no:.1f} 个灵感。"
                     "MockLLM 不在乎提示多长，真的模型按 token 收钱、读得也慢。",
                     f"OpenEvolve 的提示（系统提示加用户消息）至少是本讲的 {LONGER:g} 倍长，别的程序也更多",
                     f"OpenEvolve {n(pt)} 个字符、{nt:.1f} 个别的程序；本讲的 {n(po)} 个字符、{no:.1f} 个（种子的中位数）",
                     [(f"提示至少是本讲的 {LONGER:g} 倍长", pt >= LONGER * po), ("别的程序更多", nt > no)]))
    co, ct = median(ours, "crossover"), median(theirs, "crossover")
    # 审读报过（--budget 2）：上一句说"0.0 个别的程序"，这句说"从别的程序借规则 1 次"——借的那个灵感和当前程序一模一样
    # （上一句不算它）。这里说的是 crossover 做了几次，不说借自"别的"程序
    obs.append(f"MockLLM 做 crossover（从提示里的灵感抄一条规则）的次数：本讲的循环 {co:.0f} 次，OpenEvolve {ct:.0f} 次"
               f"（每边 {budget} 个提议，中位数）。")
    places = ms_places(ours + theirs, budget)                                    # 按标准错误上印的毫秒数
    so, st = per_proposal_ms(ours, budget, places) / 1000, per_proposal_ms(theirs, budget, places) / 1000
    mo_s, mt_s = median(ours, "mock_seconds") / budget, median(theirs, "mock_seconds") / budget
    obs.append(check(st >= SLOWER * so and max(mo_s, mt_s) < 0.01,
                     f"每个提议的墙上时间，OpenEvolve 是本讲循环的 {SLOWER} 倍以上（这次的倍数和毫秒数见上面几行）。"
                     "MockLLM 服务器回答两边的一个提示都只要几毫秒，评估都是查同一张时间表：多出来的是 OpenEvolve 框架"
                     "自己的时间（启动、拼提示、把程序库的快照传给 worker 进程、异步调度）。",
                     f"OpenEvolve 每个提议的墙上时间至少是本讲循环的 {SLOWER} 倍，MockLLM 服务器回答一个提示不到 10 毫秒",
                     f"是 {st / so:.1f} 倍（{st * 1000:,.{places}f} 毫秒对 {so * 1000:,.{places}f} 毫秒；服务器回答一个提示 "
                     f"{mt_s * 1000:.1f} 毫秒对 {mo_s * 1000:.1f} 毫秒）",
                     [(f"每个提议的墙上时间至少是本讲循环的 {SLOWER} 倍", st >= SLOWER * so),
                      ("服务器回答一个提示不到 10 毫秒", max(mo_s, mt_s) < 0.01)]))
    return obs


# ---------------------------------------------------------------- 印

def table_row(r: dict, o_tr: float) -> list[str]:
    """结果表的一行。占逐形状最优的：用这一行印的训练分数和表下面印的上限（都是三位小数）算，读者照着算得到一样的数
    （助教报过：用没舍入的数算，表里 79%，读者算 1.040 / 1.325 是 78%）。"""
    share = round(r["train"], 3) / round(o_tr, 3)
    return [r["system"], str(r["seed"]), f"{r['train']:.3f}×", f"{r['test']:.3f}×", f"{share:.0%}",
            f"{r['failed']:,}", f"{r['full']:,}", f"{r['prompt_chars']:,.0f}"]


def print_results(runs_ours, runs_theirs, table, train, test, budget) -> list:
    o_tr, o_te = oracle_speedup(train, table), oracle_speedup(test, table)
    rows = [table_row(r, o_tr) for r in runs_ours + runs_theirs]
    print_table(["系统", "种子", "训练形状", "测试形状", "训练上占逐形状最优的", "失败的提议", "完整评估的程序",
                 "提示平均几个字符（系统+用户）"], rows)
    workers = oe_workers()
    print_note("本讲的循环那几行每次运行逐字节相同。OpenEvolve 那几行不保证：种子、程序名、哈希种子都固定了，"
               + ("只用一个 worker，可它有时在几十个提议之后走上另一条路（原因在 OpenEvolve 内部）" if workers == 1 else
                  f"这次用 {workers} 个 worker（config.yaml 改过），讲义量过的是一个 worker：那时它也有时在几十个提议之后"
                  "走上另一条路（原因在 OpenEvolve 内部）")
               + "，同一个种子两次运行的差别可以比两个种子之间的还大。下面比较两边的那句观察说的是这一次的表。")
    print_note(f"上限（逐形状最优）：训练形状 {o_tr:.3f}×，测试形状 {o_te:.3f}×。失败的提议 = 没变成子程序的（回复打不上、"
               "没有改动）加上读不懂、启动不了的（本讲在静态检查里拒掉；OpenEvolve 的 evaluator 给 0 分）。"
               "完整评估 = 在全部训练形状上评估过（本讲的循环另外有 "
               f"{'、'.join(str(r['cached']) for r in runs_ours)} 个提议直接查了缓存）。")
    # 一张图最多画 len(MARKS) 条曲线：种子多了（--seeds 5 起，--help 允许到 20）每边画各种子的中位数（审读报过：
    # --seeds 5 跑完两边以后印 ValueError 的 traceback，表和观察都没印出来）
    many = len(runs_ours) + len(runs_theirs) > len(MARKS)
    if many:
        series = {f"{name} {len(runs)} 个种子的中位数": list(enumerate(np.median([r["history"] for r in runs], axis=0).tolist()))
                  for name, runs in ((OURS, runs_ours), (THEIRS, runs_theirs))}
    else:
        series = {f"{r['system']} 种子 {r['seed']}": list(enumerate(r["history"])) for r in runs_ours + runs_theirs}
    CHARTS.line("07_best_score", f"最好分数随提议数（训练形状，比专家快几倍；同一个 MockLLM，每边 {budget} 个提议"
                + (f"；每边 {len(runs_ours)} 个种子，画的是各种子的中位数" if many else "") + "）",
                series, refs=[(f"逐形状最优 {o_tr:.3f}×", o_tr)], x_label="第几个提议", y_label="最好分数", x_fmt="{:.0f}",
                y_fmt="{:.2f}×", steps=True)
    for r in runs_theirs:
        if r.get("returned") is not None:               # 学生报过两次"曲线比最后的最好程序还高"：原因在这里
            print_note(oe_results.returned_said(f"{THEIRS} 种子 {r['seed']}", r["returned"], r["train"]))
        if r.get("curve_wrong"):
            ks = r["curve_wrong"]
            print_note(f"注意：{THEIRS} 种子 {r['seed']} 的曲线上有 {len(ks)} 个提议（第 {ks[0]:,} 个起）的分数比它评估过的"
                       f"最好程序（{r['train']:.3f}×）还高：这些分数读自 OpenEvolve 的日志和 evolution_trace.jsonl，"
                       "和 evaluator 记下的最好程序对不上，" + ("画进中位数曲线的这个种子不可信" if many else "这条曲线不可信")
                       + "；表里的数是用本讲的 evolve 重新算的。")
    print_header("两边各自最好的程序（训练形状上分数最高的那个种子）")
    for r in (max(runs_ours, key=lambda r: r["train"]), max(runs_theirs, key=lambda r: r["train"])):
        print_note(f"{r['system']}，种子 {r['seed']}（训练 {r['train']:.3f}×，测试 {r['test']:.3f}×，{oe_results.rules_said(r['best'])}）：")
        print(listing(render(r["best"])))
    found = observations(runs_ours, runs_theirs, budget)
    # 墙上时间那一条每次运行不同（审读报过：机器忙时它在标准输出上印成【本次不成立】、带着毫秒数）：标准输出上只说
    # 讲义的判据在哪里检查，检查本身（成立与否、这次的数）印在标准错误上，和秒数在一起
    timing = found[-1]
    obs = print_observations(found[:-1] + [f"每个提议的墙上时间：讲义说 OpenEvolve 是本讲循环的 {SLOWER} 倍以上。墙上时间每次运行"
                                           "不同，这一条这次成不成立、是几倍，印在标准错误上（标准输出只放每次都一样的话）。"])
    obs[-1] = timing
    progress("用时（墙上时间，每次运行不同）：")
    places = ms_places(runs_ours + runs_theirs, budget)
    for r in runs_ours + runs_theirs:
        progress(f"  {r['system']} 种子 {r['seed']}：{r['seconds']:.1f} 秒，每个提议 {r['seconds'] / budget * 1000:,.{places}f} 毫秒"
                 f"（其中 MockLLM 服务器 {r['mock_seconds'] / budget * 1000:,.1f} 毫秒）")
    # 倍数按上面印的毫秒数（ms_places 位小数，一般是一位）的中位数算（学生报过：印的是 72.2、74.0 对 2.9、2.9 毫秒，倍数却是 25.5，照印的算是 25.2）
    mt, mo = per_proposal_ms(runs_theirs, budget, places), per_proposal_ms(runs_ours, budget, places)
    progress(f"  每个提议的墙上时间（各自种子的中位数）：OpenEvolve {mt:,.{places}f} 毫秒，本讲的循环 {mo:,.{places}f} 毫秒，是它的 "
             f"{mt / mo:.1f} 倍")
    progress(f"  观察 {len(obs)}（墙上时间）：" + ("成立。" if getattr(timing, "ok", True) else "") + str(timing))
    return obs


def ms_places(runs: list[dict], budget: int) -> int:
    """标准错误上每个提议的毫秒数印几位小数：一位；哪一次在一位小数上舍成了 0，就多印几位，直到每次都不是 0
    （最多 6 位）——倍数从印出来的数算，除数不能是印成 0 的数。"""
    places = 1
    while places < 6 and any(round(r["seconds"] / budget * 1000, places) == 0 for r in runs):
        places += 1
    return places


def per_proposal_ms(runs: list[dict], budget: int, places: int = 1) -> float:
    """每个提议的墙上时间（毫秒）：每个种子先舍到标准错误上印的 places 位小数，再取种子的中位数。"""
    return float(statistics.median(round(r["seconds"] / budget * 1000, places) for r in runs))


def oe_workers() -> int:
    """OpenEvolve 用几个 worker 进程：config.yaml 的 evaluator.parallel_evaluations（照 OpenEvolve 自己的读法读）。
    学生报过：把它改成 4 再跑 07，开头和表下面照样说"一个 worker"。"""
    return int(oe_settings.read_config().evaluator.parallel_evaluations)


def workers_said(n: int) -> str:
    return "一个 worker" if n == 1 else f"{n} 个 worker：config.yaml 的 evaluator.parallel_evaluations 是 {n}"


def try_items(budget: int, base: str, model: str) -> list[tuple[str, str]]:
    """结尾的"可以试试"。base、model：config.yaml 里 OpenEvolve 会问的（oe_settings.configured_llm）。07 两边问的总是 MockLLM，
    make openevolve 却问 config.yaml 里的：讲师在家把它换成了真的模型（付费的 API）以后，07 还说"只看 OpenEvolve 一次，
    300 个提议"、"换成真的模型：把 … 换成你的"——照抄就向那个模型发 300 个请求。那时说 make openevolve 问的是它，
    只建议问它 50 个提议。"""
    more = [("和 04 一样的预算、多一个种子（慢得多：时间几乎都在 OpenEvolve 那边）：",
             "python3 lecture14/07_openevolve.py --budget 1000 --seeds 3")] if budget < 1000 else []
    if not oe_settings.is_mock_base(base):
        from evolve.openai_llm import clean_url
        return more + [(f"make openevolve 问的不是 MockLLM：config.yaml 现在换成了 {oe_settings.shown_name(model)}（{clean_url(base)}），"
                        "每个提议问它一次（这里的两边照旧是 MockLLM）。先问它 50 个提议，日志（每个做完的提议一行）、best/、"
                        "evolution_trace.jsonl 都留在 lecture14/openevolve/output：", "make openevolve ARGS=\"--iterations 50\"")]
    return more + [(f"只看 OpenEvolve 一次，{run_openevolve.ITERATIONS} 个提议，它的日志（每个做完的提议一行）、best/、"
                    "evolution_trace.jsonl 都留在 lecture14/openevolve/output：", "make openevolve"),
                   ("换成真的模型：把 lecture14/openevolve/config.yaml 里 api_base 那一行和 models 下的 name 换成你的"
                    "（那个文件开头有 ollama 和托管 API 的写法），再问它 50 个提议：",
                    "make openevolve ARGS=\"--iterations 50\"")]


def build_parser():
    ap = parser("本讲的迷你进化循环和 OpenEvolve 并排跑同一个问题（第 14 讲 07）。")
    ap.add_argument("--budget", type=int_between(1, MAX_BUDGET), default=BUDGET,
                    help=f"每边、每个种子多少个提议，1 到 {MAX_BUDGET:,}（默认 {BUDGET}）")
    ap.add_argument("--seeds", type=int_between(1, MAX_SEEDS), default=SEEDS,
                    help=f"几个种子（0、1、……），1 到 {MAX_SEEDS}（默认 {SEEDS}）")
    ap.add_argument("--jobs", type=int_between(1, MAX_JOBS), default=JOBS,
                    help=f"OpenEvolve 的几个种子同时跑几个，1 到 {MAX_JOBS}（默认 {JOBS}；只影响快慢）")
    Charts.add_argument(ap)
    return ap


def main(argv=None):
    ap = build_parser()
    a = ap.parse_args(argv)
    CHARTS.reset(Charts.check_dir(ap, a.svg))
    _need_openevolve()
    try:                                             # 讲师报过：先跑完本讲的那一边才说，还留下一个空的临时目录
        refused = oe_settings.config_refusal()
    except ValueError as e:                          # config.yaml 读不了
        refused = str(e) if str(e).endswith(("。", "？")) else f"{e}。"
    if refused:
        say(refused)
        sys.exit(2)
    for note in oe_env.env_notes():                  # 不传给 OpenEvolve 的环境变量：和 make openevolve 一样说一声
        say(note)
    problem = oe_start.evaluator_problem()           # evaluator.py 改坏了：两边都还没跑就一句话（和 make openevolve 一样）
    if problem:
        say(problem)
        sys.exit(2)
    import shutil
    import tempfile
    workers = oe_workers()
    print_note(f"设置：--budget {a.budget} --seeds {a.seeds}{gpu_flag()}（OpenEvolve {oe_settings.VERSION}，{workers_said(workers)}；"
               f"LLM 是 MockLLM 服务器，没有真的语言模型；--jobs {a.jobs}：OpenEvolve 的种子同时跑几个，只影响快慢）")
    for note in oe_start.start_notes():              # 专家改过、initial_program.py 改过：和 04、06、make openevolve 一样先说
        print_note(note)
    table = TimeTable()
    train, test = split_shapes()
    procs = oe_processes.Processes()
    workdir = tempfile.mkdtemp(prefix="07_openevolve_")
    on_interrupt(procs.close)
    on_interrupt(lambda: shutil.rmtree(workdir, ignore_errors=True))
    start = time.perf_counter()
    keep = False                                     # OpenEvolve 出错时留着它的日志：那句话让人去看它
    try:
        ours = [run_ours(table, train, test, seed, a.budget) for seed in range(a.seeds)]
        theirs = run_theirs_all(table, train, test, a.seeds, a.budget, procs, workdir, a.jobs)
    except RuntimeError as e:
        keep = True
        say(f"{e}（这个目录留着，看完自己删：{workdir}）")
        sys.exit(1)
    finally:
        procs.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print_header(f"同一个问题、同一个 MockLLM、每边每个种子 {a.budget} 个提议")
    print_results(ours, theirs, table, train, test, a.budget)
    print_try(try_items(a.budget, *oe_settings.configured_llm()))
    CHARTS.report()
    took(start)


if __name__ == "__main__":
    run(main)
