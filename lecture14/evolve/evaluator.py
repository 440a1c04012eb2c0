"""
级联评估器：先静态检查，再在 6 个探针形状上试，有希望的才在全部训练形状上评估；一样的程序直接查缓存。

一个提出来的程序恰好落进下面一类（计数器，和就是提出的程序数；解析失败的由进化循环记）：
  n_cached         不用跑内核就有结论：和以前完整评估过（或静态拒掉）的程序一模一样，或者以前只跑过探针、
                   对着这一次的父程序仍然没希望
  n_static_reject  某个分支返回的配置启动不了（寄存器、共享内存……），一个内核都不跑
  n_eval_probe     在探针形状上比父程序差（超过 PROBE_SLACK），只跑了探针
  n_eval_full      在全部训练形状上评估
缓存只存和父程序无关的东西（探针上的分数、完整评估的结果）；"探针上有没有希望"每次对着当前的父程序重新判断，
所以查缓存和重新评估给出同样的结论。
bench_runs 数"跑了几次内核"：每个被评估的程序 × 它被评估的不同形状（完整评估复用探针那几次；训练形状里重复的
形状只算一次，探针也不会重复）。
分数 = 相对专家启发式的几何平均加速比（训练形状上）。时间来自 TimeTable（解析模型，不是实测）。
"""

from __future__ import annotations

import copy
import math
import traceback

import numpy as np
from kernel_lab import VALID_INDEX, Config

from sched_lab import roofline

from .problem import EXPERT, TimeTable, first_cover, launch_errors, launch_message, shape_array
from .program import Program, choose, rule_corner

N_PROBE = 6
PROBE_SLACK = 0.02                 # 探针上的几何平均比父程序差 2% 以内也算"有希望"
BRANCH_CACHE = 4096                # 按盒子缓存的"每个形状走哪个分支"最多存这么多份（满了清空）
BRANCH_CACHE_CORNERS = 200_000     # ……键里的角一共最多这么多个（上千条规则的程序，键也大）


class Evaluator:
    """在一组训练形状上给程序打分。"""

    def __init__(self, train, table: TimeTable, n_probe: int = N_PROBE, probe_slack: float = PROBE_SLACK):
        """probe_slack = math.inf 关掉级联：每个程序都完整评估（05 脚本的消融用）。"""
        self.train = tuple(train)
        self.probe_slack = probe_slack
        self.table = table
        self.mnk = shape_array(self.train)
        self._train_m = [s.M for s in self.train]
        self.log_t = table.log_times(self.train)                  # 形状 × 配置
        self.rows = rows = np.arange(len(self.train))
        self._branch_cache: dict[tuple, np.ndarray] = {}           # 规则的盒子的角 -> 每个形状走第几个分支
        self._branch_corners = 0                                   # 缓存的键里一共几个角
        self.n_best_updates = 0                                    # best_known 变了几次
        self._best_token = object()                                # best_known 每变一次换一个新的（反馈缓存的键）
        self.log_expert = self.log_t[rows, self.chosen(EXPERT)]
        self.best_known = self.log_expert.copy()                   # 每个形状目前见过的最好 log(时间)
        self.log_floor = np.log([roofline(s.M, s.N, s.K) for s in self.train])   # 屋顶线：不用跑内核就知道
        first: dict = {}                                            # 每个不同的形状第一次出现的位置
        for i, s in enumerate(self.train):
            first.setdefault((s.M, s.N, s.K), i)
        self.n_distinct = len(first)                               # 完整评估跑几次内核（重复的形状只跑一次）
        by_m = sorted(first.values(), key=lambda i: (self.train[i].M, self.train[i].name))
        # 按 M 均匀取 n_probe 个；不同的形状比探针少时，每个形状只当一次探针。n_probe = 0：没有探针，探针上的分数
        # 都是 0（谁也不比谁差），每个程序都完整评估（以前空的探针是一个 float 数组，第一次评估就 IndexError）
        self.probe = np.unique(np.array([by_m[round(x)] for x in np.linspace(0, len(by_m) - 1, n_probe)], dtype=np.intp))
        self.cache: dict[Program, dict] = {}
        self.n_cached = self.n_static_reject = self.n_eval_probe = self.n_eval_full = 0
        self.bench_runs = 0

    def copy(self) -> "Evaluator":
        """一个独立的副本（进化的快照：loop.Evolution.copy）：缓存、计数器、每个形状见过的最好都是自己的，之后和原来的
        各算各的；时间表、训练形状和缓存里的结果字典以后不再改，共用。子类有别的会变的状态时自己覆盖这个方法。"""
        new = copy.copy(self)
        new.cache = dict(self.cache)
        new.best_known = self.best_known.copy()
        new._branch_cache = dict(self._branch_cache)
        return new

    # ---- 程序在每个训练形状上选哪个配置（向量化的 choose）----
    def chosen(self, program: Program) -> np.ndarray:
        """每个训练形状走的分支的配置在 VALID 里的下标。走哪个分支只和规则的盒子有关（和配置无关），
        按盒子的角缓存（_branches）；换个配置、换条件写法但盒子一样的程序共用一份。"""
        branch = self._branch_cache.get(key := tuple(map(rule_corner, program.rules)))
        if branch is None:
            if len(self._branch_cache) >= BRANCH_CACHE or self._branch_corners + len(key) > BRANCH_CACHE_CORNERS:
                self._branch_cache.clear()                  # 有界：满了就清空（缓存里的都是纯函数的结果，清掉只是慢一点）
                self._branch_corners = 0
            branch = self._branch_cache[key] = self._branches(key)
            self._branch_corners += len(key)
        return np.array(program.config_indices)[branch]           # config_indices 最后一个是默认分支的下标（分支号 len(rules)）

    def _branches(self, corners: tuple) -> np.ndarray:
        """每个训练形状走第几个分支（problem.first_cover：所有规则的盒子一次对着所有训练形状比）。"""
        return first_cover(corners, self.mnk)

    # ---- 级联 ----
    def evaluate(self, program: Program, parent: dict | None = None) -> dict:
        """评估一个提出的程序（parent 是父程序的结果，用来判断探针上有没有希望）。返回结果字典，status 说落在哪一类。
        中途出任何错（比如程序里有离谱的数）：计数器和缓存都回到调用前的样子，再把异常抛给调用者（循环记作失败）。"""
        saved = (self.n_cached, self.n_static_reject, self.n_eval_probe, self.n_eval_full, self.bench_runs)
        try:
            return self._evaluate(program, parent)
        except BaseException:
            (self.n_cached, self.n_static_reject, self.n_eval_probe, self.n_eval_full, self.bench_runs) = saved
            raise

    def _evaluate(self, program: Program, parent: dict | None) -> dict:
        hit = self.cache.get(program)
        if hit is not None:
            if hit["status"] != "probe_reject" or self._hopeless(hit["probe_score"], parent):
                self.n_cached += 1
                return hit
            # 以前在更强的父程序下只跑了探针；对着这一次的父程序它有希望：探针不用重跑，补上其余的形状
            result = self._promote(program, self.chosen(program), hit["probe_score"])
        else:
            errors = launch_errors(program) if min(program.config_indices) < 0 else []
            if errors:
                bad = [c for c, i in zip([b[3] for b in program.boxes] + [program.default], program.config_indices) if i < 0]
                result = dict(status="static_reject", score=None, error="\n".join(errors), bad_configs=bad)
                self.n_static_reject += 1
            else:
                result = self._run(program, parent)
        self.cache[program] = result
        return result

    def evaluate_initial(self, program: Program) -> dict:
        """起点程序：不算"提出的程序"，直接完整评估（也算进 bench_runs）。"""
        errors = launch_errors(program)
        if errors:
            raise ValueError("起点程序有分支启动不了：\n" + "\n".join(errors))
        result = self._full(program, self.chosen(program))
        self.bench_runs += self.n_distinct
        self.cache[program] = result
        return result

    def _hopeless(self, probe_score: float, parent: dict | None) -> bool:
        """探针上比父程序差超过 probe_slack：没希望，不做完整评估。没有父程序时总是做完整评估。"""
        return parent is not None and probe_score < parent["probe_score"] - self.probe_slack

    def _run(self, program: Program, parent: dict | None) -> dict:
        idx = self.chosen(program)
        p = self.probe
        probe_score = float((self.log_expert[p] - self.log_t[p, idx[p]]).sum()) / max(1, len(p))
        self.bench_runs += len(p)
        if self._hopeless(probe_score, parent):
            self.n_eval_probe += 1
            return dict(status="probe_reject", score=None, probe_score=probe_score)
        return self._promote(program, idx, probe_score)

    def _promote(self, program: Program, idx: np.ndarray, probe_score: float) -> dict:
        """探针已经跑过（probe_score）：在其余的训练形状上跑完，完整评估。"""
        result = self._full(program, idx, probe_score)
        self.n_eval_full += 1
        self.bench_runs += self.n_distinct - len(self.probe)
        return result

    def _full(self, program: Program, idx: np.ndarray, probe_score: float | None = None) -> dict:
        log_prog = self.log_t[self.rows, idx]
        if (log_prog < self.best_known).any():
            np.minimum(self.best_known, log_prog, out=self.best_known)
            self.n_best_updates += 1
            self._best_token = object()
        if probe_score is None:
            probe_score = float((self.log_expert[self.probe] - log_prog[self.probe]).sum()) / max(1, len(self.probe))
        return dict(status="full", score=math.exp(float((self.log_expert - log_prog).sum()) / len(log_prog)),
                    probe_score=probe_score, log_time=log_prog, choices=idx)

    def feedback(self, result: dict, k: int = 6) -> list[tuple]:
        """给 LLM 的逐形状反馈：最值得改的 k 个训练形状，每个 M 最多一个（免得全是同一种形状），
        [(形状, 离屋顶线慢几倍, 离见过的最好慢几倍, 现在的配置索引)]。排序用两者的乘积：
        离屋顶线远说明还有空间，离见过的最好远说明别的程序已经做到了。"""
        # 缓存在结果字典里，键是 best_known 那一刻的记号：结果字典由评估器的副本（copy）共用，一个副本改了
        # best_known 就换了记号，另一个副本不会拿到按别人的 best_known 算的反馈
        cached = result.get("_feedback")
        if cached is not None and cached[0] is self._best_token:
            return cached[1]
        to_floor = result["log_time"] - self.log_floor
        to_best = result["log_time"] - self.best_known
        worst_per_m: dict[int, int] = {}                       # 每个 M 最差的那个形状，按第一次见到的顺序
        ms = self._train_m
        for i in np.argsort(-(to_floor + to_best), kind="stable").tolist():
            if ms[i] not in worst_per_m:
                worst_per_m[ms[i]] = i
                if len(worst_per_m) == k:                     # 后面的只会排在前 k 个之后
                    break
        choices = result["choices"]
        out = [(self.train[i], float(np.exp(to_floor[i])), float(np.exp(to_best[i])), int(choices[i]))
               for i in list(worst_per_m.values())[:k]]
        result["_feedback"] = (self._best_token, out)
        return out


def check_function(fn, shapes, filename: str = "<heuristic>") -> list[str]:
    """检查一个普通的 Python 启发式函数 fn(M, N, K) -> Config：在每个形状上调用它，收集所有问题
    （抛异常：哪个形状、哪一行、什么异常；返回类型不对；配置启动不了：哪种资源超了）。没问题返回空列表。"""
    problems = []
    for s in shapes:
        try:
            cfg = fn(s.M, s.N, s.K)
        except Exception as e:                                   # 学生的代码：什么异常都可能
            tb = traceback.extract_tb(e.__traceback__)[-1]
            problems.append(f"{tb.filename}:{tb.lineno}: 形状 {s.label()}：{type(e).__name__}: {e}")
            continue
        if not isinstance(cfg, Config) or cfg not in VALID_INDEX:
            problems.append(f"{filename}: {launch_message(cfg, s)}")
    return problems


def function_speedup(fn, shapes, table: TimeTable, filename: str = "<heuristic>") -> float:
    """普通 Python 启发式相对专家的几何平均加速比；有任何问题就抛 ValueError，信息里列出全部问题。"""
    problems = check_function(fn, shapes, filename)
    if problems:
        raise ValueError("启发式不能用：\n  " + "\n  ".join(problems))
    logs = [np.log(table.time(choose(EXPERT, s), s) / table.time(fn(s.M, s.N, s.K), s)) for s in shapes]
    return float(np.exp(np.mean(logs)))
