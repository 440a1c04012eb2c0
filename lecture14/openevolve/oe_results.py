"""
make openevolve 和 07 的一部分：一次运行的结果——read_run 从 OpenEvolve 的输出目录读（日志为准：每个做完的提议一行），
提议分成五类（count）、每类怎么说，最好的程序（OpenEvolve 返回的和 evaluator 记下的，取训练形状上高的），
跑到一半停下时 evaluator 记下的最好程序。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库（和本讲的 evolve）。
"""

from __future__ import annotations

import json
import os
import re

from oe_failures import LOG_HEAD, raise_max_tokens
from oe_start import BEST_FILE

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "output")


_PROGRAM = re.compile(LOG_HEAD.decode() + r"Iteration (\d+): Program \S+")
_METRICS = re.compile(LOG_HEAD.decode() + r"Metrics: (.*)$")


def read_run(output: str) -> dict:
    """一次运行的结果：best_code、best_metrics（OpenEvolve 记下的）、iterations、
    trace=[(第几个提议, 子程序的 metrics)]（评估过的子程序，按提议排好；没变成子程序的提议不在里面）。
    哪些提议变成了评估过的子程序，从 OpenEvolve 的日志读（每个做完的提议一行 "Iteration N: Program …"，下一行是它的
    Metrics）：evolution_trace.jsonl 少记一些——子程序在 MAP-Elites 的格子里挤掉了自己的父程序时，父程序被删掉，那一行
    就不写了（OpenEvolve 0.4.0；一位同学在 make openevolve 里数到 19 个"没变成子程序"，日志里只有 4 个出错的提议，
    少掉的常是刷新了最好分数的子程序）。metrics 的数用 trace 里的（日志只印 4 位小数），trace 里没有的才用日志的。"""
    with open(os.path.join(output, "result.json"), encoding="utf-8") as f:
        res = json.load(f)
    exact = {}
    path = os.path.join(output, "evolution_trace.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    t = json.loads(line)
                    exact[int(t["iteration"])] = t.get("child_metrics", {})
    logged = {}
    with open(os.path.join(output, "openevolve.log"), encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = _PROGRAM.match(line)
        if not m:
            continue
        for nxt in lines[i + 1:i + 4]:                  # 它的 Metrics 紧跟在后面（中间可能夹着别的线程的一两行）
            got = _METRICS.match(nxt)
            if got:
                logged[int(m.group(1))] = _metrics(got.group(1))
                break
    res["trace"] = sorted((k, exact.get(k, v)) for k, v in logged.items())
    return res


def _metrics(text: str) -> dict:
    """日志里的 "combined_score=1.0532, probe_speedup=1.0400, …" -> {名字: 数}（读不懂的项跳过）。"""
    out = {}
    for part in text.split(", "):
        k, _, v = part.partition("=")
        try:
            out[k.strip()] = float(v)
        except ValueError:
            pass
    return out


def eval_failed(m: dict) -> bool:
    """OpenEvolve 记下的 metrics 是不是"评估出错"：evaluator.py 的某一级抛了异常、超时，或者回的不是 metrics。
    OpenEvolve 0.4.0 那时写 error、stage1_passed = 0、stage2_passed = 0 或 timeout（evaluator.py 的 _cascade_evaluate），
    不是我们的 evaluator 给的分数。"""
    return ("error" in m or m.get("timeout") in (True, 1.0)
            or any(m.get(f"stage{i}_passed") == 0.0 for i in (1, 2, 3)))


def count(res: dict) -> dict:
    """一次运行的提议分成五类：full（完整评估）、probe（只过了探针级）、rejected（evaluator 给 0 分：读不懂、启动不了）、
    eval_error（evaluator.py 出错或超时：OpenEvolve 记下的是它的错误，不是分数，eval_failed）、no_child（没变成子程序：
    OpenEvolve 在评估之前就丢掉了）。五个数加起来是 iterations。学生报过：evaluator.py 里拼错一个变量名，每个完整评估
    都出错，make openevolve 说它们"在探针级就停了"。"""
    ms = [m for _, m in res["trace"]]
    broken = sum(map(eval_failed, ms))
    ms = [m for m in ms if not eval_failed(m)]
    full = sum(m.get("full_evaluation") == 1.0 for m in ms)
    rejected = sum(m.get("launchable") != 1.0 for m in ms)
    return dict(full=full, probe=len(ms) - full - rejected, rejected=rejected, eval_error=broken,
                no_child=res["iterations"] - len(ms) - broken)


def eval_error_said(n: int) -> str:
    """count 的 eval_error 不是 0 时接在提议数那句话里的一段（是 0 时空串）。"""
    return (f"，{n} 个评估出错（evaluator.py 抛了异常或超时，不是程序的分数：日志里 \"Error in stage\"、"
            "\"timed out\" 那几行说了是哪里）" if n else "")


def no_child_said(c: dict, res: dict) -> str:
    """没变成子程序的提议怎么说：LLM 调用失败的按种类数出来（OpenEvolve 日志里的），其余是回复打不上、没改动。"""
    failed = res.get("llm_failed") or {}
    n_failed = sum(failed.values())
    rest = c["no_child"] - n_failed
    if not n_failed:
        return f"{c['no_child']} 个没变成子程序（回复打不上、没改动……）"
    kinds = "、".join(f"{k} ×{n}" for k, n in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0])))
    from evolve.openai_llm import CUT_OFF
    advice = raise_max_tokens() if failed.get(CUT_OFF) else ""      # 怎样调高只说一次：最后那句说了就不在这里说
    return (f"{c['no_child']} 个没变成子程序：{n_failed} 个是 LLM 调用失败（{kinds}；详细的在 OpenEvolve 的日志里）"
            + (f"，{rest} 个是回复打不上、没改动……" if rest else "")
            + (f"；被截断的那些：{advice}" if advice and advice not in res.get("gave_up", "") else ""))


def _kept(output: str) -> dict | None:
    """evaluator 在 output 里记下的 {"score": 训练形状上的分数, "code": 程序}；没有（还没完整评估过一个程序）或者
    读不懂时是 None。"""
    try:
        with open(os.path.join(output, BEST_FILE), encoding="utf-8") as f:
            kept = json.load(f)
        return dict(score=float(kept["score"]), code=str(kept["code"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def kept_best(output: str):
    """跑到一半停下的运行里，evaluator 记下的最好的程序（完整评估过的里面训练形状上最好的），用 evolve.parse 读；
    没有或者读不了时是 None。"""
    from evolve import ProgramError, parse
    kept = _kept(output)
    try:
        return None if kept is None else parse(kept["code"], filename="OpenEvolve 停下之前最好的程序")
    except ProgramError:
        return None


def kept_said(output: str, say) -> None:
    """Ctrl-C 时（"已中断。"之前）：evaluator 记下过最好的程序，就用一句话说它在哪、训练形状上多少（文件里记的分数，
    不重算：要在一秒内停下），下次默认的 make openevolve 会清空输出目录。没有就不说。"""
    kept = _kept(output)
    if kept is None:
        return
    score = kept["score"]
    from evolve.problem import display_path
    say(f"停下之前完整评估过的最好程序（训练形状上比专家快 {score:.3f}×）存在 {display_path(os.path.join(output, BEST_FILE))}"
        + ("；下次 make openevolve 会清空这个目录，要留着就先复制走。" if os.path.abspath(output) == os.path.abspath(OUTPUT) else "。"))


def best_program(res: dict):
    """OpenEvolve 最好的程序（用本讲的 evolve.parse 读，从不执行）。"""
    from evolve import parse
    return parse(res["best_code"], filename="OpenEvolve 最好的程序")


def evaluated_best(res: dict, output: str, train, table):
    """(程序, 训练形状上的分数, 返回的分数)：OpenEvolve 返回的最好程序，和 evaluator 在 output 里记下的、它完整评估过的
    最好的程序（best_so_far.json）比，训练形状上高的那个（分数用本讲的 evolve 重算）。返回的分数：OpenEvolve 返回的
    那个比它评估过的最好的低时是它的分数（要说一声），否则 None。学生报过：07 的曲线（完整评估过的最好分数）高过
    表里 OpenEvolve 最后的最好程序——它返回的不是它评估过的最好的那个。本讲的循环比的是它评估过的最好程序，
    OpenEvolve 也一样比。"""
    from evolve import geomean_speedup
    best = best_program(res)
    score = geomean_speedup(best, train, table)
    kept = kept_best(output)
    if kept is not None:
        kept_score = geomean_speedup(kept, train, table)
        if kept_score > score * (1 + 1e-9):
            return kept, kept_score, score
    return best, score, None


def returned_said(label: str, returned: float, score: float) -> str:
    """OpenEvolve 返回的最好程序比它评估过的最好的低时，说一声（evaluated_best）。"""
    return (f"{label} 最后返回的最好程序训练形状上是 {returned:.3f}×，比它完整评估过的最好的（{score:.3f}×）低："
            "这里用的是后者（evaluator 记在输出目录的 best_so_far.json 里），本讲的循环也是拿它评估过的最好的程序来比。")


def rules_said(program) -> str:
    """"8 条规则，其中 1 条是死规则"（走不到，或者去掉也一样：simplify 删得掉）：OpenEvolve 的最好程序常带着。"""
    from evolve import simplify
    dead = program.n_rules() - simplify(program).n_rules()
    return f"{program.n_rules()} 条规则" + (f"，其中 {dead} 条是死规则" if dead else "")
