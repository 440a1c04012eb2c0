"""
第 14 讲的问题交给 OpenEvolve：它的 evaluator。OpenEvolve 对每个子程序调用 evaluate(程序文件的路径)，要一个
combined_score（越大越好）；开了级联（config.yaml 的 cascade_evaluation）就先调 evaluate_stage1，过了门槛再调
evaluate_stage2。

这里从不 import、也从不执行程序文件：只把它当文本读进来，交给本讲的 evolve.parse 解析成 DSL 程序，再查讲义的
时间表（第 13 讲的解析模型，不是在 GPU 上量的）。读不懂、某个分支启动不了的程序得 0 分，OpenEvolve 的
artifacts 里是和学生看到的一样的那句话（文件:行: 说明）；它会把这句话放进下一次的提示里。

  evaluate_stage1  探针级（第 14 讲 03 说的那一级）：评估器挑的 6 个探针形状上相对专家的几何平均加速比。OpenEvolve 的门槛是
                   固定的数（config.yaml 的 cascade_thresholds），不像 03 那样和父程序比：门槛 0.9802 = exp(-0.02)，
                   即"探针上不比专家慢 2% 以上"（evolve.evaluator.PROBE_SLACK = 0.02 是对数上的余量）。
  evaluate_stage2  完整评估：combined_score = 训练形状上相对专家的几何平均加速比（和 04 的分数同一个定义），
                   另外报告测试形状上的加速比、占逐形状最优的比例、规则条数、能否启动。
  evaluate         不开级联时用：探针和完整评估一起做。
所有 metrics 都是数；full_evaluation = 1 表示做了完整评估（0 是只过了/没过探针级）。
"""

from __future__ import annotations

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE14 = os.path.dirname(HERE)
if LECTURE14 not in sys.path:
    sys.path.insert(0, LECTURE14)

import numpy as np  # noqa: E402

from evolve import Evaluator, ProgramError, TimeTable, oracle_speedup, split_shapes  # noqa: E402
from evolve.problem import load_heuristic  # noqa: E402

MAX_BYTES = 1_000_000              # 程序文件最多读这么多字节（OpenEvolve 默认的 max_code_length 是 10,000 个字符）
# run_openevolve 设的环境变量：完整评估过的程序里训练形状上最好的那个（分数、规范写法的代码）随时写进这个 JSON 文件。
# OpenEvolve 跑到一半被停下（LLM 服务器没了、接连失败）时没有 best/ 也没有 result.json，最好的程序就从这里拿（讲师报过：
# 服务器中途没了，make openevolve 只说了一句出错，之前找到的最好程序丢了）
BEST_ENV = "MINI_ALPHAEVOLVE_OE_BEST"
_STATE: dict = {}


def _state():
    """时间表、训练 / 测试形状、两个评估器（第一次用时建好，一个进程里只建一次）。"""
    if not _STATE:
        table = TimeTable()
        train, test = split_shapes()
        _STATE.update(table=table, train=train, test=test, ev=Evaluator(train, table), ev_test=Evaluator(test, table),
                      oracle=oracle_speedup(train, table))
    return _STATE


def read_program(program_path: str):
    """(程序, "") 或 (None, 一句话)。和学生的专家文件一样读：UTF-8、解析、每个分支能不能启动（evolve.problem）。"""
    try:
        if os.path.getsize(program_path) > MAX_BYTES:
            return None, f"{program_path}: 文件超过 {MAX_BYTES:,} 字节，不读。"
        return load_heuristic(program_path), ""
    except ProgramError as e:
        return None, str(e)
    except OSError as e:
        return None, f"{program_path}: 读不了这个文件（{e.strerror}）。"


def _speedup(ev: Evaluator, program, rows=None) -> float:
    """ev 的形状（或其中 rows 那几个）上相对专家的几何平均加速比（和 evolve.geomean_speedup 同一个量，向量化）。"""
    idx = ev.chosen(program)
    rows = ev.rows if rows is None else rows
    return math.exp(float(np.mean(ev.log_expert[rows] - ev.log_t[rows, idx[rows]])))


def _failed(error: str):
    return _result(dict(combined_score=0.0, launchable=0.0, full_evaluation=0.0), {"error": error})


def _result(metrics: dict, artifacts: dict | None = None):
    """OpenEvolve 的 EvaluationResult（metrics + artifacts）；没装 OpenEvolve 时（测试直接调用）返回同样内容的字典。"""
    try:
        from openevolve.evaluation_result import EvaluationResult
    except ImportError:
        return dict(metrics=metrics, artifacts=artifacts or {})
    return EvaluationResult(metrics=metrics, artifacts=artifacts or {})


def evaluate_stage1(program_path: str):
    """探针级：6 个探针形状上的加速比当 combined_score（门槛在 config.yaml）。"""
    program, error = read_program(program_path)
    if program is None:
        return _failed(error)
    s = _state()
    probe = _speedup(s["ev"], program, s["ev"].probe)
    return _result(dict(combined_score=probe, probe_speedup=probe, launchable=1.0, full_evaluation=0.0,
                        rules=float(program.n_rules())))


def evaluate_stage2(program_path: str):
    """完整评估：训练形状上的加速比当 combined_score，加上测试形状、占逐形状最优的比例、规则条数。"""
    program, error = read_program(program_path)
    if program is None:
        return _failed(error)
    s = _state()
    train = _speedup(s["ev"], program)
    _keep_best(program, train)
    return _result(dict(combined_score=train, train_speedup=train, test_speedup=_speedup(s["ev_test"], program),
                        oracle_fraction=train / s["oracle"], rules=float(program.n_rules()), launchable=1.0,
                        full_evaluation=1.0))


def _keep_best(program, score: float) -> None:
    """环境变量 BEST_ENV 指着一个文件时：score 比文件里记的高（或者还没有文件）就把 (score, 程序) 写进去。先写临时
    文件再改名，读到的总是完整的；加锁，几个评估进程同时写也不会把高分换成低分。"""
    path = os.environ.get(BEST_ENV)
    if not path:
        return
    import fcntl
    import json
    from evolve import render
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, encoding="utf-8") as f:
                old = float(json.load(f)["score"])
        except (OSError, ValueError, KeyError, TypeError):
            old = -math.inf
        if score > old:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(dict(score=score, code=render(program)), f, ensure_ascii=False)
            os.replace(path + ".tmp", path)


def evaluate(program_path: str):
    """不开级联时：完整评估（连同探针上的加速比）。"""
    r = evaluate_stage2(program_path)
    metrics = r["metrics"] if isinstance(r, dict) else r.metrics
    if metrics.get("launchable"):
        program, _ = read_program(program_path)
        s = _state()
        metrics["probe_speedup"] = _speedup(s["ev"], program, s["ev"].probe)
    return r
