"""
进化循环和程序库。

程序库用岛屿模型（AlphaEvolve 和 FunSearch 都这么做）：N_ISLANDS 个岛各自进化，每个岛只留 ISLAND_SIZE 个
最好的程序；每 MIGRATE_EVERY 个提议，每个岛把自己最好的程序送给下一个岛（环形），让好的想法传开又不至于
一下子把多样性抹平。全局最好的程序单独记着，永远不会丢。

一步：
  1. 从一个岛里挑父程序（按名次加权，越好越容易被挑中），再从别的岛挑一两个灵感程序
  2. 拼提示词（父程序源码、分数、最值得改的几个训练形状：离屋顶线远 × 离见过的最好远）交给 LLM（这里是 MockLLM）
  3. 把回复里的 SEARCH/REPLACE 打到父程序源码上，解析成子程序——LLM 出错、回复不对、打不上、解析不了、
     写不回源码、评估出错，都只记一次有名字的失败（failed），进化接着跑，最好的程序不受影响
  4. 级联评估（evaluator.py）；完整评估过的子程序进父程序所在的岛
所有随机性来自一个带种子的 numpy Generator（mock_llm.Dice），同一个种子，同样的结果。
能并发的 LLM（有 concurrency 和 propose_many）一批问几个提示，结果按提出的顺序处理，给定同样的回复结果就一样。
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import operator
import signal
from collections import Counter, defaultdict

import numpy as np
from kernel_lab import VALID, overflow_kinds

from .evaluator import Evaluator
from .mock_llm import Dice, MockLLM, Prompt
from .problem import EXPERT
from .program import DiffError, Program, apply_diff, parse_diff, render
from .source import ProgramError, parse

N_ISLANDS = 4
ISLAND_SIZE = 8
MIGRATE_EVERY = 100
N_INSPIRATIONS = 2
# 演示脚本的命令行上限（argparse 检查，超了说一句话、退出码 2）：比默认大两三个数量级，手滑多敲几个 0 才会碰到。
# 预算 100,000 的一次进化在 2 核的机器上约半分钟、一两百 MB 内存；再大就要等很久、内存也跟着涨。
MAX_BUDGET = 100_000     # --budget（02 的 --after 也是它）：一次进化最多提出多少个程序
MAX_SEEDS = 1000         # --seeds：最多跑几个种子
RUN_04 = (0, 1000)       # 04 默认的那次进化（演示 2）：种子和提议数。04 拿它当默认值，02、06 据它说是不是"04 那次进化"
SEEDS_04 = 5             # 04 默认的演示 3 每种划分跑的种子（0、1……SEEDS_04 − 1）；06 据它说是不是其中一次
MAX_JOBS = 64            # --jobs：最多几个进程
# 一次进化里的程序最多比起点（start：专家或学生的文件）多这么多条规则：要的是一两处小改动（MockLLM 整个程序最多加到
# 8 条）。一个 1 MB 的回复能合法地加上几千条规则；收下它，以后每个以它为父程序（或灵感）的提示都带着这几千行，真的
# 模型按 token 收钱。讲师的复查报过：上限原来是比父程序多，每代加 62 条走不到的规则，一代代叠上去，1000 个提议以后
# 父程序有 1,121 条规则、提示 223 KB、录制文件 289 MB。现在和起点比，一整次进化加起来最多这么多
MAX_ADDED_RULES = 64
TOO_MANY_RULES = "子程序比起点多出的规则太多"
# 条件也一样：讲师报过，一条永远走不到的规则带着八万个 "M <= 0 and M <= 0 …"（0.9 MB）不多加规则，分数和父程序一样、
# 收下了。每条新规则最多三维各一个条件，多出的条件也按这个算上限
MAX_ADDED_CONDITIONS = 3 * MAX_ADDED_RULES
TOO_MANY_CONDITIONS = "子程序比起点多出的条件太多"


def size_limits(start) -> tuple[int, int]:
    """一次进化里子程序最多几条规则、几个条件：比起点 start 多 MAX_ADDED_RULES 条、MAX_ADDED_CONDITIONS 个。"""
    return start.n_rules() + MAX_ADDED_RULES, start.n_conditions() + MAX_ADDED_CONDITIONS


def too_big(program, limits: tuple[int, int]) -> str | None:
    """program 超了 size_limits 给的上限时是记进 failed 的原因，否则 None。进化循环收下子程序之前查它；02 把同一个
    提示交给真模型时，回复走的也是这一关（讲师报过：02 收下了一个多出一万条规则的回复，04 说"多出的规则太多"）。"""
    max_rules, max_conditions = limits
    if program.n_rules() > max_rules:
        return TOO_MANY_RULES
    if program.n_conditions() > max_conditions:
        return TOO_MANY_CONDITIONS
    return None


# 岛里名次 r（从 0 数）的程序被挑中的权重 1/(r+1)；RANK_CDF[n] 是 n 个程序时的累积分布
RANK_CDF = [None] + [list(np.cumsum(1 / np.arange(1, n + 1)) / sum(1 / np.arange(1, n + 1)))[:-1] for n in range(1, 65)]


class ProgramDatabase:
    """岛屿模型的程序库：每个岛是按分数排好的 [(分数, 序号, 程序, 结果)]。"""

    def __init__(self, rng: Dice, n_islands: int = N_ISLANDS, size: int = ISLAND_SIZE):
        self.rng = rng
        self.size = size
        self.islands: list[list[tuple]] = [[] for _ in range(n_islands)]
        self.best: tuple[Program, dict] | None = None
        self._n = 0

    def add(self, program: Program, result: dict, island: int) -> None:
        isl = self.islands[island]
        if program in [e[2] for e in isl]:                    # 和逐个 e[2] == program 一样（先看是不是同一个对象）
            return
        self._n += 1
        isl.append((-result["score"], self._n, program, result))   # 分数一样时先来的排前面
        isl.sort(key=lambda e: e[:2])
        del isl[self.size:]
        if self.best is None or result["score"] > self.best[1]["score"]:
            self.best = (program, result)

    def copy(self, rng: Dice) -> "ProgramDatabase":
        """一个独立的副本，用 rng 挑父程序（进化的快照：loop.Evolution.copy）。岛上的项 (分数, 序号, 程序, 结果)
        以后不再改，共用；岛是新的列表。子类有别的会变的状态时自己覆盖这个方法。"""
        new = copy.copy(self)
        new.rng = rng
        new.islands = [list(isl) for isl in self.islands]
        return new

    def sample(self) -> tuple[int, tuple, list[tuple]]:
        """挑一个岛、岛里的父程序（名次 r 的权重 1/(r+1)）、别的岛上最好的几个作灵感。"""
        island = self.rng.below(len(self.islands))
        isl = self.islands[island]
        parent = isl[bisect.bisect(RANK_CDF[len(isl)], self.rng.random())]
        others = [i for i in range(len(self.islands)) if i != island and self.islands[i]]
        first = self.rng.below(len(others))                   # 从一个随机的岛开始，顺着取 N_INSPIRATIONS 个
        picks = [others[(first + j) % len(others)] for j in range(min(N_INSPIRATIONS, len(others)))]
        return island, parent, [self.islands[i][0] for i in picks]

    def migrate(self) -> None:
        """每个岛把最好的程序送给下一个岛（环形）。"""
        leaders = [isl[0] for isl in self.islands]
        for i, (_, _, program, result) in enumerate(leaders):
            self.add(program, result, (i + 1) % len(self.islands))


def evolve(evaluator: Evaluator, budget: int, seed: int = 0, log_every: int = 0, start: Program = EXPERT,
           llm=None, log=print, database=ProgramDatabase, feedback: bool = True) -> dict:
    """从 start 出发进化 budget 个提议。log_every > 0 时每隔这么多个提议用 log 打一行进度。
    llm：默认 MockLLM(Dice(seed))，也可以传一个有 propose(prompt) -> (修改种类, 回复文本) 方法的对象。
    如果它还有 concurrency > 1 和 propose_many(提示列表) -> [(修改种类, 回复文本) 或 Exception, ...]，
    就一批一批地问：每批最多 concurrency 个提示，都按这一批开始时的程序库来拼，一次交给 propose_many，
    回来的结果严格按提出的顺序处理（给定同样的回复，运行就是可复现的）；一批不会跨过一次迁移。
    database：程序库的类（消融时换掉）。
    feedback=False 时提示里不给逐形状的时间，只列几个随机的训练形状（05 脚本的消融）。

    一个坏的提议永远不会让进化停下来：LLM 调用抛异常、回复不是 (字符串, 字符串)、SEARCH/REPLACE 打不上、
    子程序解析不了、比起点多出 MAX_ADDED_RULES 条以上的规则（或 MAX_ADDED_CONDITIONS 个以上的条件）、写不回源码、评估时出错——都记进 failed（异常有 kind 属性就用它当原因，否则用一个按阶段命名的原因），
    然后接着进化；最好的程序不受影响。

    返回：best=(程序, 结果)（结果里有 score、diff=产生它的 SEARCH/REPLACE、parent=父程序），
    improvements=[(第几个提议, 新的最好分数, 修改种类)]（第 0 个是起点），history=每个提议之后的最好分数，
    tried / accepted / static_reject=每种修改提出的次数 / 比父程序好的次数 / 被静态检查拒掉的次数，
    static_kinds={修改种类: {资源: 次数}}（被拒的提议超了哪种资源，kernel_lab.overflow_kinds 的名字），
    failed=没能变成一个可评估的子程序（或评估出错）的提议按原因计数，population=程序库里最后留下的程序。
    sum(failed) 加上评估器的四个计数器（n_cached、n_static_reject、n_eval_probe、n_eval_full）正好是 budget。"""
    budget = _check_budget(budget)
    return Evolution(evaluator, seed, start, llm, database, feedback).run(budget, log_every, log).result()


class Evolution:
    """一次进化的全部状态：可以一段一段地跑（run），中途拍快照（copy）。evolve(...) 就是
    Evolution(...).run(budget).result()，参数的意思一样。

    run(n)：接着再跑 n 个提议（第几个提议接着上一段数，log 的行也是）；k 是到现在一共跑了几个。
    result()：到现在为止的结果，和跑了 k 个提议的 evolve 返回的字典一样。
    copy()：一份快照。之后原来的和快照各走各的，谁也不动谁；快照再跑 m 个提议，和不拍快照一口气跑完一模一样
    （tests/test_loop.py 对照）。复制的是循环带着的、会变的一切：随机数发生器（Dice）、LLM（它的 copy(rng)：
    和程序库共用循环的发生器时拿到快照的那个，否则 None、复制自己的；MockLLM 有这个方法，别的 LLM 没有就
    TypeError）、程序库（它的 copy(rng)）、评估器（它的 copy()：缓存、计数器、见过的最好）、各种计数、history、
    improvements。程序、结果字典、时间表以后不再改，共用。
    按批问的 LLM（propose_many）：一批不跨过一段的结尾，所以分段跑时批的切法可以和一口气跑不一样。"""

    def __init__(self, evaluator: Evaluator, seed: int = 0, start: Program = EXPERT, llm=None,
                 database=ProgramDatabase, feedback: bool = True):
        self.evaluator, self.seed, self.feedback = evaluator, seed, feedback
        self.rng = Dice(seed)
        self.llm = MockLLM(self.rng) if llm is None else llm
        self.db = database(self.rng)
        self.limits = size_limits(start)                     # 整次进化的上限（见 MAX_ADDED_RULES）
        first = evaluator.evaluate_initial(start)
        first.update(diff=None, parent=None)        # 缓存里的也是这个字典：以后再提出起点，不会被当成新程序
        for island in range(len(self.db.islands)):
            self.db.add(start, first, island)
        self.k = 0                                  # 已经跑了几个提议
        self.improvements = [(0, first["score"], "起点")]
        self.history: list[float] = []              # 每个提议之后的最好分数
        self.tried, self.accepted, self.failed, self.static_reject = Counter(), Counter(), Counter(), Counter()
        self.static_kinds: defaultdict[str, Counter] = defaultdict(Counter)   # 每种修改被拒时超了哪种资源

    def copy(self) -> "Evolution":
        """快照（见类的说明）。"""
        if not callable(getattr(self.llm, "copy", None)):
            raise TypeError(f"拍不了快照：LLM（{type(self.llm).__name__}）没有 copy(rng) 方法")
        new = copy.copy(self)
        new.rng = self.rng.copy()
        new.llm = self.llm.copy(new.rng if getattr(self.llm, "rng", None) is self.rng else None)
        new.db = self.db.copy(new.rng)
        new.evaluator = self.evaluator.copy()
        new.improvements, new.history = list(self.improvements), list(self.history)
        new.tried, new.accepted = Counter(self.tried), Counter(self.accepted)
        new.failed, new.static_reject = Counter(self.failed), Counter(self.static_reject)
        new.static_kinds = defaultdict(Counter, {op: Counter(c) for op, c in self.static_kinds.items()})
        return new

    def ask(self):
        """挑父程序和灵感，拼好提示。返回 (岛, 父程序, 父程序的结果, 父程序源码, 提示)。"""
        db, evaluator, rng = self.db, self.evaluator, self.rng
        island, (_, _, parent, presult), inspirations = db.sample()
        src = render(parent)                        # 进程序库的程序都写得回源码（_child 检查过）
        if self.feedback:
            fb = tuple((s, floor, best, VALID[i]) for s, floor, best, i in evaluator.feedback(presult))
        else:                                       # 不给时间：随便列几个训练形状，看不出哪个慢
            fb = tuple((evaluator.train[rng.below(len(evaluator.train))], None, None, None) for _ in range(6))
        prompt = Prompt(src, parent, presult["score"], fb,
                        tuple((render(q), q, r["score"]) for _, _, q, r in inspirations))
        return island, parent, presult, src, prompt

    def _apply(self, k, asked, reply) -> None:
        """第 k 个提议：把回复（或 LLM 抛的异常）变成子程序、评估、放进程序库。"""
        evaluator, db = self.evaluator, self.db
        island, parent, presult, src, _ = asked
        op, child = _child(reply, src, self.failed, self.limits)
        self.tried[op] += 1
        if child is None:
            return
        program, diff = child
        rejected_before = evaluator.n_static_reject
        try:
            result = evaluator.evaluate(program, presult)
        except Exception as e:                      # 评估器把计数器复原了：这个提议只记作失败
            self.failed[_named("评估出错", e)] += 1
            return
        if evaluator.n_static_reject > rejected_before:
            self.static_reject[op] += 1
            for kind in _overflow_kinds(result["bad_configs"]):
                self.static_kinds[op][kind] += 1
        if result["status"] == "full" and "diff" not in result:
            result.update(diff=diff, parent=parent)
            if result["score"] > presult["score"] * (1 + 1e-9):
                self.accepted[op] += 1
            db.add(program, result, island)
            if result is db.best[1]:
                self.improvements.append((k, result["score"], op))

    def run(self, n: int, log_every: int = 0, log=print) -> "Evolution":
        """接着再跑 n 个提议。log_every > 0 时第 k 个提议（从整次进化的开头数）是它的倍数时用 log 打一行进度。"""
        n = _check_budget(n)
        llm, db, evaluator = self.llm, self.db, self.evaluator
        width = _concurrency(llm)
        k, end = self.k + 1, self.k + n
        while k <= end:
            if width == 1:                          # 一次问一个（MockLLM）：拼提示、问、处理，和以前一步不差
                asked = [self.ask()]
                replies = [_ask_one(llm, asked[0][4])]
            else:                                   # 一批：不超过这一段的结尾，也不跨过下一次迁移
                m = min(width, end - k + 1, MIGRATE_EVERY - (k - 1) % MIGRATE_EVERY)
                asked = [self.ask() for _ in range(m)]
                replies = _ask_many(llm, [a[4] for a in asked])
            for a, reply in zip(asked, replies):
                self._apply(k, a, reply)
                self.history.append(db.best[1]["score"])
                self.k = k
                if k % MIGRATE_EVERY == 0:
                    db.migrate()
                if log_every and k % log_every == 0:
                    log(f"  第 {k:>6,} 个提议：最好 {db.best[1]['score']:.3f}×，完整评估 {evaluator.n_eval_full:,} 个，"
                        f"跑了 {evaluator.bench_runs:,} 次内核")
                k += 1
        return self

    def result(self) -> dict:
        """到现在为止的结果（evolve 的返回值，见它的说明）。"""
        db = self.db
        return dict(best=db.best, improvements=list(self.improvements), history=np.array(self.history, dtype=float),
                    tried=dict(self.tried), accepted=dict(self.accepted), failed=dict(self.failed),
                    static_reject=dict(self.static_reject),
                    static_kinds={op: dict(c) for op, c in self.static_kinds.items()},
                    population=[e[2] for isl in db.islands for e in isl], budget=self.k, seed=self.seed)


LLM_FAILED = "（LLM 出错）"          # 没拿到回复的提议（调用本身失败）在 tried 里记成这一种；拿到了却用不上的
#                                     （异常带 op，比如 openai_llm.ReplyUnusable）记在 op 那一行


class ReplyError(Exception):
    """LLM 的回复没法用（比如按批问时回复的个数不对）。kind 是记进 failed 的原因。"""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}：{detail}" if detail else kind)
        self.kind = kind


def _check_budget(budget) -> int:
    try:
        n = operator.index(budget)
    except TypeError:
        raise ValueError(f"budget 要是整数（>= 0），收到的是 {type(budget).__name__}：{budget!r}") from None
    if n < 0:
        raise ValueError(f"budget 要 >= 0（提多少个程序），收到的是 {n}")
    return n


def _concurrency(llm) -> int:
    """llm 一次能并发几个请求：有 propose_many 且 concurrency 是大于 1 的整数才按批问，否则一次一个。"""
    if not callable(getattr(llm, "propose_many", None)):
        return 1
    try:
        return max(1, operator.index(getattr(llm, "concurrency", 1)))
    except TypeError:
        return 1


# lecture01/runner.py 里有一份一样的（evolve 不 import 第 1 讲，runner 也不依赖 evolve）：两处改的时候一起改。
def _interrupt_inside(e: BaseException) -> bool:
    """e 是不是一个被 Python 包成别的异常的 Ctrl-C：KeyboardInterrupt 落在 import 的类定义里会变成 RuntimeError
    （"Error calling __set_name__"），C 扩展里会变成 ImportError……顺着 __cause__ / __context__ 找。"""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _not_an_interrupt(e: BaseException) -> None:
    """进化循环把提议里的异常记作失败之前先调它：被包起来的 Ctrl-C 照样当 Ctrl-C 抛出去，不记成失败、不接着跑。"""
    if _interrupt_inside(e):
        raise KeyboardInterrupt from e


def _ask_one(llm, prompt: Prompt):
    """问一次：返回 LLM 的回复，或者它抛出的异常（交给 _child 记账）。"""
    try:
        return llm.propose(prompt)
    except Exception as e:                          # 真的 LLM 调用也会失败（超时、限流……）：记下来，接着进化
        _bug_or_failure(llm, e)
        return e


def _bug_or_failure(llm, e: Exception) -> None:
    """本地的后端（MockLLM：bugs_are_fatal）抛的不带 kind 的异常是程序错：照常抛出去，不记作失败的提议。"""
    if getattr(llm, "bugs_are_fatal", False) and not getattr(e, "kind", None):
        raise e


def _ask_many(llm, prompts: list) -> list:
    """一批一起问。整批失败就每个提议都记这个异常；回复的个数不对，缺的记作失败、多的不要。"""
    try:
        replies = list(llm.propose_many(prompts))
    except Exception as e:
        _bug_or_failure(llm, e)
        return [e] * len(prompts)
    if len(replies) < len(prompts):
        missing = ReplyError("LLM 回复个数不对", f"问了 {len(prompts)} 个，回了 {len(replies)} 个")
        replies += [missing] * (len(prompts) - len(replies))
    return replies[:len(prompts)]


def _kind(e: BaseException, fallback: str) -> str:
    """记进 failed 的原因：异常自己的 kind（后端和解析器会给），没有就用 fallback。
    提议里的异常都经过这里才记作失败：被包起来的 Ctrl-C 在这里照样当 Ctrl-C 抛出去（_not_an_interrupt）。"""
    _not_an_interrupt(e)
    kind = getattr(e, "kind", None)
    return kind if isinstance(kind, str) and kind else fallback


def _named(stage: str, e: BaseException) -> str:
    """没料到的异常：原因写成"阶段（异常类型）"。"""
    return _kind(e, f"{stage}（{type(e).__name__}）")


def _child(reply, src: str, failed: Counter, limits: tuple[int, int]):
    """把一个回复变成子程序：打 SEARCH/REPLACE、解析、规则和条件不超过 limits（size_limits：比起点多
    MAX_ADDED_RULES 条、MAX_ADDED_CONDITIONS 个）、确认写得回源码。
    返回 (修改种类, (子程序, diff) 或 None)；没成的原因记进 failed。"""
    if isinstance(reply, Exception):
        failed[_named("LLM 调用出错", reply)] += 1
        op = getattr(reply, "op", None)                # 拿到了回复、只是用不上（openai_llm.ReplyUnusable）：记在它那一行
        return (op if isinstance(op, str) and op else LLM_FAILED), None
    if not (isinstance(reply, (tuple, list)) and len(reply) == 2 and isinstance(reply[0], str)
            and isinstance(reply[1], str)):
        failed["LLM 回复格式不对"] += 1             # 要的是 (修改种类, 回复文本)，两个都是字符串
        return LLM_FAILED, None
    op, text = reply
    try:
        diff = parse_diff(text)
        child_src = apply_diff(src, diff)
    except DiffError as e:
        failed[_kind(e, "SEARCH/REPLACE 打不上")] += 1
        return op, None
    except Exception as e:
        failed[_named("SEARCH/REPLACE 处理出错", e)] += 1
        return op, None
    try:
        program = parse(child_src)
    except ProgramError as e:
        failed[_kind(e, "子程序解析不了")] += 1
        return op, None
    except Exception as e:
        failed[_named("子程序解析出错", e)] += 1
        return op, None
    big = too_big(program, limits)
    if big is not None:
        failed[big] += 1
        return op, None
    try:
        render(program)                             # 以后被挑作父程序时要写回源码：现在就确认写得出来
    except Exception as e:
        failed[_named("子程序写不回源码", e)] += 1
        return op, None
    return op, (program, diff)


def _overflow_kinds(configs) -> set[str]:
    """被拒的配置超了哪几种资源；离谱到查不出来的记作"查不出"。"""
    kinds = set()
    for c in configs:
        try:
            kinds.update(overflow_kinds(c))
        except Exception as e:
            _not_an_interrupt(e)
            kinds.add("查不出")
    return kinds


# ---- 很多次独立的进化（演示 3）：每个 (划分, 种子) 一次，可以分给几个进程并行跑，结果和顺序跑完全一样 ----

_TABLE: list = []                   # 子进程里的时间表（fork 时直接继承，不用再算）


def _init_worker(table) -> None:
    _TABLE[:] = [table]


def _init_pool_worker(table) -> None:
    """子进程不理 Ctrl-C（SIGINT 会发给整个进程组）：只有主进程处理它，再用 close() 结束子进程。
    子进程是在 SIGINT 被挡住（_sigint_blocked）时 fork 出来的：先改成"不理"再放开，挡住期间到的那次也就丢掉了。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _init_worker(table)


@contextlib.contextmanager
def _sigint_blocked():
    """块里挡住 SIGINT（不是忽略：到了的 Ctrl-C 先挂着，块结束放开时照常变成 KeyboardInterrupt）。
    块里 fork 的子进程和起的线程都继承"挡住"：子进程在设好"不理 Ctrl-C"之前不会被 Ctrl-C 打断（不会各印一段
    traceback），进程池还没建好、任务还没交完时也不会被打断成一个没人收拾的半截进程池。"""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)   # 挂着的 Ctrl-C 在这里抛出 KeyboardInterrupt


def _one_run(train, test, budget: int, seed: int) -> tuple[float, float, Program]:
    from .problem import geomean_speedup
    table = _TABLE[0]
    program, result = evolve(Evaluator(train, table), budget, seed=seed)["best"]
    return result["score"], geomean_speedup(program, test, table), program


class ManyRuns:
    """很多次从头开始的进化。tasks 是 [(训练形状, 测试形状, 种子)]。jobs > 1 时一创建就在后台的进程池里开跑，
    主进程可以先去做别的；results() 按 tasks 的顺序返回 [(训练分数, 测试分数, 最好的程序)]。
    每次进化只依赖自己的种子，所以并行和顺序跑的结果一模一样。
    子进程不理 Ctrl-C；主进程在 results() 里等的时候按了 Ctrl-C（或出了别的错），会先 close() 再把异常抛出去。
    创建时（建进程池、交任务）按的 Ctrl-C 挂到建好才抛出，抛出之前进程池已经 terminate 掉了。
    在别处被打断时，调用者自己调 close()（也可以用 with ManyRuns(...) as runs:）：马上结束所有子进程，不等排队的任务。"""

    def __init__(self, table, tasks, budget: int, jobs: int = 1):
        self.table, self.tasks, self.budget = table, list(tasks), budget
        self.pool = self.pending = self.out = None
        self.closed = False
        self.workers = 0                            # 后台进程数；0 = 在 results() 里、这个进程中依次跑
        if jobs > 1 and len(self.tasks) > 1:
            import multiprocessing as mp
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            self.workers = min(jobs, len(self.tasks))
            try:
                with _sigint_blocked():             # 建池、交任务的时候按的 Ctrl-C 挂到块结束才抛出来
                    self.pool = mp.get_context(method).Pool(self.workers, initializer=_init_pool_worker,
                                                            initargs=(table,))
                    self.pending = [self.pool.apply_async(_one_run, (train, test, budget, seed))
                                    for train, test, seed in self.tasks]
                    self.pool.close()               # 不会再加任务；子进程做完就退出
            except BaseException:                   # 包括块结束时抛出的 Ctrl-C：调用者还拿不到这个对象，
                self.close()                        # 只能在这里把进程池正经关掉（terminate，它不会再补 worker）
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def worker_pids(self) -> list[int]:
        """后台子进程的进程号（测试用）；没有进程池时是空的。"""
        return [] if self.pool is None else [p.pid for p in self.pool._pool]

    def close(self) -> None:
        """马上结束后台的子进程（正在跑的和排队的任务都不要了），等它们退出后返回。可以调用多次。"""
        self.closed = True
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.terminate()
            pool.join()

    def results(self, progress=None) -> list[tuple[float, float, Program]]:
        """按 tasks 的顺序返回每次进化的 (训练分数, 测试分数, 最好的程序)。progress(做完几个, 一共几个) 在开始时
        和每做完一个时调用（比如在标准错误上印进度）；做完的个数和顺序无关，结果和顺序有关。"""
        if self.out is not None:
            return self.out
        if self.closed:
            raise RuntimeError("ManyRuns 已经 close() 了，拿不到结果")
        total = len(self.tasks)
        if self.pending is None:
            _init_worker(self.table)
            out = []
            for train, test, seed in self.tasks:
                if progress:
                    progress(len(out), total)
                out.append(_one_run(train, test, self.budget, seed))
            if progress:
                progress(total, total)
            self.out = out
            return out
        try:
            reported = -1
            while True:
                done = sum(r.ready() for r in self.pending)
                if progress and done != reported:
                    progress(done, total)
                    reported = done
                if done == total:
                    break
                waiting = [r for r in self.pending if not r.ready()]   # 刚数完又有做完的：可能一个都不剩
                if waiting:
                    waiting[0].wait(0.2)
            out = [r.get() for r in self.pending]
        finally:                                    # 做完、出错或 Ctrl-C：子进程都结束掉
            self.close()
        self.out = out
        return out
