"""在测试进程里独立重跑的进化，带着记录（test_printed_numbers_02、_03、_06 共用；同样的参数整个测试会话只跑一次）。
记录不改变进化的路线：MockLLM 和程序库共用同一个 Dice（和 evolve 默认的一样），评估器只在 evaluate 前后数数。
记下的东西：第几个提议（k）、每个提示、挑到的岛、当过父程序的不同程序、每个提议说了什么（回复的第一行）、
每次 evaluate（第几个提议、父程序的结果、子程序、结果、是不是查的缓存）、被探针淘汰的个数和其中的错杀
（自己用时间表的整行算完整分数）、每个程序第一次完整评估是第几个提议。"""

from __future__ import annotations

import functools
import math

import numpy as np

from evolve import EXPERT, VALID, Evaluator, all_shapes, choose, evolve, split_shapes
from evolve.evaluator import N_PROBE
from evolve.loop import ProgramDatabase
from evolve.mock_llm import MockLLM

INDEX = {c: i for i, c in enumerate(VALID)}


def log_speedup(table, prog, shapes) -> float:
    """prog 相对专家的 log 加速比在 shapes 上的平均（时间表量化过的 log，逐形状查整行）。"""
    return sum(float(table.logs(s)[INDEX[choose(EXPERT, s)]] - table.logs(s)[INDEX[choose(prog, s)]])
               for s in shapes) / len(shapes)


class Watch:
    def __init__(self, db_cls):
        self.k, self.db_cls = 0, db_cls
        self.prompts, self.islands, self.parents, self.said = [], [], set(), {}

    def database(self, rng):
        self.llm = MockLLM(rng)
        watch = self

        class Watched(self.db_cls):
            def sample(self):
                out = super().sample()
                watch.islands.append(out[0])
                watch.parents.add(out[1][2])
                return out
        self.db = Watched(rng)
        return self.db

    def propose(self, prompt):
        self.k += 1
        self.prompts.append(prompt)
        op, reply = self.llm.propose(prompt)
        self.said[self.k] = (op, reply.split("\n", 1)[0])
        return op, reply


class Counted(Evaluator):
    def __init__(self, train, table, watch, **kw):
        self.table_ = table
        super().__init__(train, table, **kw)
        self.watch, self.rejected, self.false, self.missed = watch, 0, 0, 0.0
        self.seen, self.first_k = [], {}

    def evaluate(self, program, parent=None):
        fresh = program not in self.cache
        before = self.n_cached
        r = super().evaluate(program, parent)
        self.seen.append((self.watch.k, parent, program, r, self.n_cached > before))
        if fresh and r["status"] == "probe_reject":
            self.rejected += 1
            full = math.exp(log_speedup(self.table_, program, self.train))
            if full > parent["score"] * (1 + 1e-9):
                self.false += 1
                self.missed = max(self.missed, full)
        if fresh and r["status"] == "full":
            self.first_k[program] = self.watch.k
        return r


@functools.lru_cache(maxsize=None)
def watched(table, seed: int, budget: int = 1000, n_probe: int = N_PROBE, how: str = "spread", db_cls=ProgramDatabase,
            split: str = "random") -> dict:
    """一次带记录的进化（table：conftest 的那张时间表）：n_probe 个探针（0 = 不用级联）按 how（"spread" / "random"：种子 1000 + seed 抽）取。"""
    train, test = split_shapes(all_shapes(), split)
    watch = Watch(db_cls)
    ev = Counted(train, table, watch, **(dict(probe_slack=math.inf) if n_probe == 0 else dict(n_probe=n_probe)))
    if how == "random":
        ev.probe = np.sort(np.random.default_rng(1000 + seed).choice(len(train), n_probe, replace=False))
    out = evolve(ev, budget, seed=seed, llm=watch, database=watch.database)
    return dict(out=out, ev=ev, watch=watch, train=train, test=test, table=table)


@functools.lru_cache(maxsize=None)
def demo3(table, budget: int, seeds: int) -> dict:
    """04 演示 3 的进化在测试进程里重跑：两种划分 × 种子 0 .. seeds-1，用 evolve 的公开接口一次一次按顺序跑（不经
    04 用的 ManyRuns：和脚本的走法独立；ManyRuns 和顺序跑一样由 test_loop.py 检查）。{划分: [(种子, 最好的程序,
    它的结果), ...]}。test_claims（G1–G4）和 test_printed_numbers_04 共用（同样的参数整个会话只跑一次）。"""
    out = {}
    for how in ("random", "by_model"):
        train, _ = split_shapes(all_shapes(), how)
        out[how] = [(seed, *evolve(Evaluator(train, table), budget, seed=seed, log=lambda *a: None)["best"])
                    for seed in range(seeds)]
    return out
