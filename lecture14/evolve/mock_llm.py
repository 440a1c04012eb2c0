"""
MockLLM：提示词进去，SEARCH/REPLACE 出来。没有任何真正的语言模型，也不联网。

AlphaEvolve 的 LLM 收到的提示里有父程序的源码、它的分数、逐形状的反馈、一两个"灵感"程序，回一段 SEARCH/REPLACE。
这里的 MockLLM 做同样的事，只是"想法"来自几种模板化的修改（op），外加一点内核常识：
  targeted      按内核常识的定向修改：挑一个反馈里最差的形状，给它一个"连贯"的配置（块大小、warp、流水线一起改），
                新加一条管住它的规则，或改掉正在管它的那条规则
  single_field  一个配置的一个字段挪到相邻的候选值（例如 warps 4 → 8）
  threshold     把一条规则的阈值挪一挪（减半、加倍、换成邻近的 M）
  add_rule      复制一个已有的配置，套上一个新条件插进去
  remove_rule   删掉一条规则
  crossover     从灵感程序里拿一条规则插进来
它偶尔也会犯真 LLM 会犯的错（MISTAKE_RATE）：SEARCH 抄错、写出 DSL 不认的条件、给出启动不了的配置——
这种回复的种类记作 "mistake"；进化循环要把它们当作失败的提议记下来，而不是崩掉。
"""

from __future__ import annotations

import bisect
import copy
import functools
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from kernel_lab import GRID, MAX_SMEM_PER_BLOCK, VALID_INDEX, Config, off_grid
from sched_lab import SMS

from .program import Program, Rule, branch_index, format_diff, make_diff, render, rule_with_config

OPS = ("targeted", "single_field", "threshold", "add_rule", "remove_rule", "crossover")
MISTAKE = "mistake"                # 故意犯错的回复单独记成这一种，不算进它本来想做的修改
# 每种修改被抽到的相对权重，按名字写（和 OPS 的先后无关；抽的时候按 OPS 的顺序排）。加一种修改就在这里加一项
# "名字": 权重；少了 OPS 里的哪个名字、多了不在 OPS 里的名字，import 时一句话说出来（助教报过：以前是和 OPS 按位置
# 对应的元组，在中间加一种修改、权重放错了位置不报错，只是权重悄悄给了别的种类）
OP_WEIGHTS = {"targeted": 0.45, "single_field": 0.20, "threshold": 0.10, "add_rule": 0.08, "remove_rule": 0.07,
              "crossover": 0.10}
# 每种修改一句话：02 演示 2、04 演示 2 的表下面照这个逐个解释。加一种修改，在这里也写一句（test_mock_llm 检查每种都有）
OP_SAID = {
    "targeted": "按内核常识一次改好几个字段（块大小、warp、流水线），去修反馈里列出的一个慢形状",
    "single_field": "只把一个字段挪到相邻的候选值",
    "threshold": "挪一条规则的阈值",
    "add_rule": "复制一个配置、套上新条件，加一条规则",
    "remove_rule": "删一条规则",
    "crossover": "从灵感程序抄一条规则",
}


class KindsIncomplete(ImportError):
    """加修改种类时漏了一步或写错了（OPS、OP_WEIGHTS 的名字和权重、OP_SAID、MockLLM 的方法）。one_sentence：编号脚本
    只印这一句、退出码 1（runner._excepthook；助教报过：方法名拼错时是 11 行的 traceback，那句话在最后）。文件末尾检查。"""
    one_sentence = True


class KindBroken(TypeError):
    """一种修改的方法返回的不是 (子程序或 None, 一句说明)。one_sentence：编号脚本只印这一句、退出码 1（助教报过：
    方法只返回了子程序，是一段 traceback，最后一行 cannot unpack non-iterable Program object，没说是哪种修改）。"""
    one_sentence = True


COND_FIELDS = (("M",), ("M", "N"), ("M", "N", "K"))   # 定向修改新加的规则管住哪些维度
COND_WEIGHTS = (0.6, 0.3, 0.1)
MISTAKE_RATE = 0.03                # 每次提议有 3% 的概率犯一个"LLM 式"的错
MAX_RULES = 8                      # 规则太多就不再加（MockLLM 自己定的上限；提示里没有这句话）
M_THRESHOLDS = (1, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)


class Dice:
    """一个带种子的 numpy Generator，按批取均匀随机数再一个个发（逐个调用 Generator 太慢）。同一个种子，同一串结果。"""

    def __init__(self, seed: int, batch: int = 4096):
        self.gen = np.random.default_rng(seed)
        self.batch = batch
        self.buf: list[float] = []

    def random(self) -> float:
        """[0, 1) 里的一个均匀随机数。"""
        if not self.buf:
            if self.gen is None:                    # 副本（copy）第一次要新的一批数时才造自己的 Generator
                self.gen = np.random.Generator(getattr(np.random, self._state["bit_generator"])(0))
                self.gen.bit_generator.state = self._state
            self.buf = self.gen.random(self.batch).tolist()[::-1]
        return self.buf.pop()

    def below(self, n: int) -> int:
        """0 .. n-1 里均匀的一个整数。和 int(self.random() * n) 一样（取的是同一个数），只是少调一层。"""
        buf = self.buf
        return int((buf.pop() if buf else self.random()) * n)

    def pick(self, seq):
        """序列里均匀的一个元素。"""
        return seq[self.below(len(seq))]

    def copy(self) -> "Dice":
        """一个独立的副本：之后两个发出同样的一串数，谁也不影响谁（进化的快照用：loop.Evolution.copy）。
        只记下 Generator 此刻的状态，等副本用完手上这批数、要下一批时才造它自己的（造一个比跑一步进化还贵）。"""
        new = copy.copy(self)
        new.gen, new._state = None, self._state if self.gen is None else self.gen.bit_generator.state
        new.buf = list(self.buf)
        return new


@dataclass(frozen=True)
class Prompt:
    """给 LLM 的提示。parent_src 是它读到的源码；parent 是同一段源码解析后的结构（Mock 省得再解析一次）。"""
    parent_src: str
    parent: Program
    score: float
    feedback: tuple                # ((形状, 离屋顶线慢几倍, 离见过的最好慢几倍, 现在选的配置), ...)，最值得改的在前
    inspirations: tuple            # ((源码, Program, 分数), ...)

    def text(self) -> str:
        """真 LLM 会收到的提示文本（MockLLM 自己读结构化字段；tests/test_evolve.py 检查它包含该有的东西）。"""
        fb = "\n".join(f"  {s.label()} (N={s.N}, K={s.K})" + ("" if floor is None else
                       f"：离屋顶线慢 {floor:.2f}×，比见过的最好慢 {best:.2f}×，现在用 {cfg.as_tuple()}")
                       for s, floor, best, cfg in self.feedback)
        ins = "\n".join(f"# 灵感程序（分数 {sc:.3f}×）：\n{src}" for src, _, sc in self.inspirations)
        timed = any(floor is not None for _, floor, _, _ in self.feedback)
        head = ("最值得改的训练形状（按 离屋顶线慢几倍 × 比见过的最好慢几倍 从大到小，每个 M 最多一个）" if timed
                else "几个训练形状（随便挑的，不给时间）")
        return (f"改进下面这个选分块配置的函数，让它在训练形状上更快。只用 SEARCH/REPLACE 回答。\n"
                f"# 当前程序（分数 {self.score:.3f}×，相对专家启发式）：\n{self.parent_src}\n"
                f"# {head}：\n{fb}\n{ins}")


@functools.lru_cache(maxsize=1024)
def _neighbors(field: str, value: int) -> tuple[int, ...]:
    """候选网格上和 value 相邻的值（不在网格上的 value 按最近的那个算）。按 (字段, 值) 缓存：结果是不可变的元组。"""
    vals = GRID[field]
    i = vals.index(value) if value in vals else min(range(len(vals)), key=lambda j: abs(vals[j] - value))
    return tuple(vals[j] for j in (i - 1, i + 1) if 0 <= j < len(vals))


def common_sense_config(M: int, N: int, K: int, rng: Dice) -> Config:
    """一个懂内核的人会给 (M, N, K) 的配置（不查时间表）：
    块的行数刚好盖住 M（decode 用 16 行，M 大了用 128）；BN 尽量大，但 CTA 数至少要有 SM 数的一半；
    块越小 BK 越大（小块要多在路上的字节）；大块配 8 个 warp，中块 4 个，小块 2 个；流水线放得下就 4 级；group 8。
    一半的时候再随机微调一个字段，像人一样不总给同一个答案。"""
    base = cfg = _common_sense_base(M, N, K)
    if rng.random() < 0.5:
        field = rng.pick(("BM", "BN", "BK", "warps", "stages"))
        cfg = cfg.replace(**{field: rng.pick(_neighbors(field, getattr(cfg, field)))})
    return _launchable(cfg) or _launchable(base) or _shrunk(base)   # 微调出来的块启动不了（比如 256×256）：不微调了


@functools.lru_cache(maxsize=4096)
def _common_sense_base(M: int, N: int, K: int) -> Config:
    """common_sense_config 不微调时的配置（只看形状，不用随机数；按形状缓存）。"""
    BM = next((b for b in (16, 32, 64) if M <= (b if b < 64 else 128)), 128)
    tiles_m = math.ceil(M / BM)
    wide = [bn for bn in (32, 64, 128, 256) if tiles_m * math.ceil(N / bn) >= SMS // 2]
    BN = max(wide) if wide else 32
    acc = BM * BN
    BK = 256 if acc <= 64 * 64 else 128 if acc <= 128 * 128 else 64
    warps = 8 if acc >= 128 * 256 else 4 if acc >= 64 * 64 else 2
    return Config(BM, BN, BK, warps, 4, 8)


@functools.lru_cache(maxsize=4096)
def _launchable(cfg: Config) -> Config | None:
    """共享内存放不下就减流水线级数，warp 数不合适就换一个；这样还启动不了（块本身就不行）返回 None。
    common_sense_config 不微调时的块（BM ≤ 128、按块大小配的 BK 和 warp）在 H100、A100 上总能这样修好
    （tests/test_mock_llm.py 检查）；共享内存更小的 GPU 上修不好的，由 _shrunk 把块缩小。
    只看 cfg（不可变），按它缓存。"""
    while cfg.stages > 1 and cfg.stages * (cfg.BM + cfg.BN) * cfg.BK * 2 > MAX_SMEM_PER_BLOCK:
        cfg = cfg.replace(stages=cfg.stages - 1)
    for w in (cfg.warps,) + GRID["warps"]:
        if cfg.replace(warps=w) in VALID_INDEX:
            return cfg.replace(warps=w)
    return None


@functools.lru_cache(maxsize=4096)
def _shrunk(cfg: Config) -> Config:
    """cfg 连 1 级流水线都放不下时（共享内存小的 GPU，比如每个 CTA 99 KB：16×256 的块配 BK = 256 要 136 KB），
    懂内核的人会把块缩小：先把 BK 减半，还不行再把 BN、BM 减半，直到 _launchable 修得好。H100、A100 上用不到它
    （tests/test_mock_llm.py 检查），所以讲义的运行不变。网格最小的块也启动不了时给最小的那个：这个提议和别的
    启动不了的配置一样，在静态检查里被拒、记下来（tests/test_gpus.py 在一块这样的 GPU 上检查）。"""
    tries = [cfg]
    for field in ("BK", "BN", "BM"):
        while getattr(tries[-1], field) > GRID[field][0]:
            tries.append(tries[-1].replace(**{field: getattr(tries[-1], field) // 2}))
            if (fixed := _launchable(tries[-1])) is not None:
                return fixed
    return tries[-1]


NO_RULES = "父程序没有规则，没有阈值可挪、没有规则可删"


def _too_many(p: Program) -> str:
    at = "正是" if p.n_rules() == MAX_RULES else "已经超过了"
    return (f"父程序已经有 {p.n_rules()} 条规则，{at} MockLLM 写规则的上限 mock_llm.MAX_RULES = {MAX_RULES}"
            "（MockLLM 自己定的，提示里没有说），而这种修改只会再加一条规则")


def _configs(p: Program) -> list[Config]:
    return [r.config for r in p.rules] + [p.default]


def _with_config(p: Program, i: int, cfg: Config) -> Program:
    """把第 i 个分支（i == len(rules) 是默认分支）的配置换成 cfg。"""
    if i == len(p.rules):
        return Program(p.rules, cfg)
    rules = list(p.rules)
    rules[i] = rule_with_config(rules[i], cfg)             # 条件没变，不用再检查一遍
    return Program(tuple(rules), p.default)


def _insert(p: Program, i: int, rule: Rule) -> Program:
    return Program(p.rules[:i] + (rule,) + p.rules[i:], p.default)


def _weight_problems(op_weights, name: str = "op_weights") -> list[str]:
    """op_weights（{修改种类的名字: 权重}）哪里不对，每处一句；没问题返回空列表。名字要和 OPS 一一对应，
    权重是有限的非负数、至少一个大于 0。"""
    if not isinstance(op_weights, Mapping):
        return [f"{name} 要按名字给权重（{{名字: 非负数}}，名字是 {', '.join(OPS)}），收到的是 {op_weights!r}"]
    out = [f"{name} 里没有 {op} 的权重" for op in OPS if op not in op_weights]
    out += [f"{name} 里的 {k!r} 不是 OPS 里的修改种类（有的是 {', '.join(OPS)}）" for k in op_weights if k not in OPS]
    bad = []
    for k, w in op_weights.items():
        try:
            ok = not isinstance(w, bool) and math.isfinite(float(w)) and float(w) >= 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            bad.append(f"{k}: {w!r}")
    if bad:
        out.append(f"{name} 的权重要是有限的非负数，这几个不是：{', '.join(bad)}")
    elif not out and sum(float(op_weights[op]) for op in OPS) <= 0:
        out.append(f"{name} 的权重全是 0（至少一个要大于 0）")
    return out


def _check_weights(op_weights) -> tuple[float, ...]:
    """op_weights（{修改种类的名字: 权重}）按 OPS 的顺序排成元组；名字和 OPS 对不上、权重不是有限的非负数、全是 0 时
    抛 ValueError，一句话说哪里不对、要什么。"""
    said = _weight_problems(op_weights)
    if said:
        raise ValueError("；".join(said))
    return tuple(float(op_weights[op]) for op in OPS)


class MockLLM:
    """模板化的修改 + 一点内核常识。所有随机性来自传进来的 Dice（同一个种子，同样的提议）。"""

    # 进化循环把 LLM 抛的异常记作一次失败的提议（真的模型会超时、限流）。MockLLM 是本地的、确定的代码，它"故意犯的错"
    # 是回复（mistake），不是异常：它抛出异常就是程序写错了，循环照常抛出去（助教报过：加一种修改时方法名拼错，
    # 04 退出码 0，表里多一行"（LLM 出错）17"，原因 AttributeError 哪里都没印）。
    bugs_are_fatal = True

    def __init__(self, rng: Dice, mistake_rate: float = MISTAKE_RATE, op_weights=None):
        """op_weights 是 {修改种类的名字: 权重}，不给就是 OP_WEIGHTS；把 targeted 的权重设成 0
        （dict(OP_WEIGHTS, targeted=0)），就是一个没有内核常识的"小模型"（05 脚本的消融）。"""
        weights = _check_weights(OP_WEIGHTS if op_weights is None else op_weights)
        try:
            ok = 0 <= float(mistake_rate) <= 1
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"mistake_rate 是犯错的概率，要在 0 到 1 之间，收到的是 {mistake_rate!r}")
        self.rng = rng
        self.mistake_rate = mistake_rate
        self._op_cdf = np.cumsum(weights)[:-1] / sum(weights)                # 按权重抽修改种类
        self._cond_cdf = np.cumsum(COND_WEIGHTS)[:-1] / sum(COND_WEIGHTS)

    def propose(self, prompt: Prompt) -> tuple[str, str]:
        """返回 (修改的种类, 回复文本)。回复里有一句说明和一个或几个 SEARCH/REPLACE 块。"""
        rng = self.rng
        parent = prompt.parent
        for _ in range(4):                                   # 偶尔改出来和父程序一样，换个想法再来
            op = OPS[bisect.bisect(self._op_cdf, rng.random())]
            child, why = self._edit(op, prompt)
            if child is not None and child != parent:
                break
        if child is None or child == parent:
            child, why = parent, "没想到新的修改"
        # 不经过 render 的缓存：循环会把回复解析成一个相等、但不是同一个对象的程序，再 render 它；缓存里要是放着这个
        # child，那次查找就得逐条比较两份规则（上千条规则时比重新拼一遍源码还慢）
        child_src = render.__wrapped__(child)
        if rng.random() < self.mistake_rate:
            return MISTAKE, self._mistake(prompt, child_src)
        if child is parent:
            return op, why                                   # 没有 SEARCH/REPLACE 块：子程序就是父程序
        return op, f"{why}\n" + format_diff(make_diff(prompt.parent_src, child_src))

    def why_not(self, op: str, prompt: Prompt) -> str | None:
        """op 这种修改对这个父程序做不了的原因（一句话，给学生看）；做得了返回 None。02 演示 2 用它说明一种修改为什么
        提了 200 次一次新修改都没有。它真的试一次这种修改，会用掉这个 MockLLM 的随机数：用一个单独的实例问
        （02 每次新建一个），别拿进化正在用的那个问。"""
        child, why = self._edit(op, prompt)
        return why if child is None else None

    def copy(self, rng: Dice | None = None) -> "MockLLM":
        """一个独立的副本，用 rng 抽随机数；rng 是 None 时复制自己的 Dice。进化的快照（loop.Evolution.copy）给的是
        快照的 Dice：MockLLM 和程序库共用一个发生器，副本也得共用一个。"""
        new = copy.copy(self)
        new.rng = self.rng.copy() if rng is None else rng
        return new

    def _edit(self, op: str, prompt: Prompt):
        """调用修改 op 的方法 _op(prompt)，看它返回的是不是 (子程序或 None, 一句说明)；不是就说是哪一种、返回了什么。"""
        out = getattr(self, "_" + op)(prompt)
        if (type(out) is not tuple or len(out) != 2 or not isinstance(out[1], str)
                or not (out[0] is None or isinstance(out[0], Program))):
            shown = "一个 Program（只有子程序）" if isinstance(out, Program) else repr(out)
            raise KindBroken(f"MockLLM._{op} 返回的是 {shown if len(shown) <= 80 else shown[:79] + '…'}：每种修改的方法要返回"
                             " (子程序, 一句说明)，对这个父程序做不了时返回 (None, 一句为什么做不了)（见 README 的\"修改种类\"）")
        # 助教报过：加的 stages 修改写成了 stages + 1，4 级的分支改出 stages=5；评估器把它和真的启动不了的配置一起拒掉，
        # 02、04 的表里算成"启动不了"，看不出是方法写错了。字段的值只能是候选网格上的（启动不了的可以：静态检查会拒）
        # 先看 config_indices（Program 建好时查过的 VALID 下标，-1 是启动不了）：全都能启动就一定在网格上，不用逐个配置
        # 求哈希、查字典——每个提议都走这里，几乎总是这种情形
        bad = (out[0] is not None and min(out[0].config_indices) < 0
               and next((m for c in _configs(out[0]) if c not in VALID_INDEX for m in off_grid(c)), None))
        if bad:
            raise KindBroken(f"MockLLM._{op} 改出的配置里 {bad}：每种修改只能把字段换成候选网格（kernel_lab.GRID）上的值，"
                             "启动不了的可以（静态检查会拒掉，算作启动不了），网格外的值是这个方法写错了（见 README 的\"修改种类\"）")
        return out

    # ---- 各种修改：返回 (子程序, 一句说明)；做不了返回 (None, 一句为什么做不了)（why_not 给学生看） ----
    def _targeted(self, pr: Prompt):
        s = pr.feedback[self.rng.below(len(pr.feedback))][0]
        cfg = common_sense_config(s.M, s.N, s.K, self.rng)
        p = pr.parent
        i = branch_index(p, s.M, s.N, s.K)
        home = i < len(p.rules) and dict(p.rules[i].conds).get("M") == s.M
        if home and self.rng.random() < 0.5 or p.n_rules() >= MAX_RULES:
            return _with_config(p, i, cfg), f"{s.label()} 慢：把管它的分支换成 {cfg.as_tuple()}"
        fields = COND_FIELDS[bisect.bisect(self._cond_cdf, self.rng.random())]
        conds = tuple((f, getattr(s, f)) for f in fields)
        return _insert(p, i, Rule(conds, cfg)), f"{s.label()} 慢：给它加一条规则，用 {cfg.as_tuple()}"

    def _single_field(self, pr: Prompt):
        p = pr.parent
        i = self.rng.below(p.n_rules() + 1)
        cfg = _configs(p)[i]
        field = self.rng.pick(("BM", "BN", "BK", "warps", "stages", "group"))
        value = self.rng.pick(_neighbors(field, getattr(cfg, field)))
        return _with_config(p, i, cfg.replace(**{field: value})), f"试试把第 {i + 1} 个分支的 {field} 改成 {value}"

    def _threshold(self, pr: Prompt):
        p = pr.parent
        if not p.rules:
            return None, NO_RULES
        i = self.rng.below(p.n_rules())
        rule = p.rules[i]
        if not rule.conds:
            return None, f"挑中的第 {i + 1} 条规则没有条件，没有阈值可挪"
        j = self.rng.below(len(rule.conds))
        field, t = rule.conds[j]
        new = int(t * self.rng.pick((0.5, 2.0))) if field != "M" else self._near_m(t)
        conds = rule.conds[:j] + ((field, max(1, new)),) + rule.conds[j + 1:]
        rules = p.rules[:i] + (Rule(conds, rule.config),) + p.rules[i + 1:]
        return Program(rules, p.default), f"把第 {i + 1} 条规则的 {field} <= {t} 改成 {max(1, new)}"

    def _near_m(self, t: int) -> int:
        """M_THRESHOLDS 里紧挨着 t 的两个（比 t 小的最大的一个、比 t 大的最小的一个；t 在两头外面时只有一个）。
        t 不在表里（学生的文件、--evolve 的起点写了 M <= 100）时也是它两边的 96 和 128，不是隔一个的 192。"""
        lo, hi = bisect.bisect_left(M_THRESHOLDS, t), bisect.bisect_right(M_THRESHOLDS, t)
        options = M_THRESHOLDS[max(0, lo - 1):lo] + M_THRESHOLDS[hi:hi + 1]
        return self.rng.pick(options)

    def _add_rule(self, pr: Prompt):
        p = pr.parent
        if p.n_rules() >= MAX_RULES:
            return None, _too_many(p)
        cfg = _configs(p)[self.rng.below(p.n_rules() + 1)]
        m = self.rng.pick(M_THRESHOLDS)
        i = self.rng.below(p.n_rules() + 1)
        return _insert(p, i, Rule((("M", m),), cfg)), f"加一条 M <= {m} 的规则"

    def _remove_rule(self, pr: Prompt):
        p = pr.parent
        if not p.rules:
            return None, NO_RULES
        i = self.rng.below(p.n_rules())
        return Program(p.rules[:i] + p.rules[i + 1:], p.default), f"删掉第 {i + 1} 条规则"

    def _crossover(self, pr: Prompt):
        p = pr.parent
        donors = [q for _, q, _ in pr.inspirations if q.rules]
        if p.n_rules() >= MAX_RULES:
            return None, _too_many(p)
        if not donors:
            return None, "灵感程序里没有一条规则可借"
        q = donors[self.rng.below(len(donors))]
        rule = q.rules[self.rng.below(q.n_rules())]
        i = self.rng.below(p.n_rules() + 1)
        return _insert(p, i, rule), "从灵感程序里借一条规则"

    # ---- 犯错 ----
    def _mistake(self, pr: Prompt, child_src: str) -> str:
        kind = self.rng.below(3)
        lines = child_src.splitlines()
        ret = next(k for k, line in enumerate(lines) if "return Config" in line)
        if kind == 0:                                        # SEARCH 抄错：父程序里没有这一行
            bad = "    if M <= 12345:\n        return Config(BM=64, BN=64, BK=64, warps=4, stages=3, group=8)"
            return f"改第一个分支\n<<<<<<< SEARCH\n{bad}\n=======\n{lines[ret]}\n>>>>>>> REPLACE"
        if kind == 1:                                        # 写出 DSL 不认的条件（只有 <=）
            wrong = child_src.replace("if M <=", "if M >", 1) if "if M <=" in child_src else child_src.replace(
                "    return Config", "    if M > 64:\n        return Config", 1)
            return "用 > 写条件\n" + format_diff(make_diff(pr.parent_src, wrong))
        big = Config(256, 128, 64, 4, 3, 8)                  # 启动不了：256×128 配 4 个 warp，296 个寄存器
        lines[ret] = lines[ret][: lines[ret].index("return")] + (
            f"return Config(BM={big.BM}, BN={big.BN}, BK={big.BK}, warps={big.warps}, stages={big.stages}, group={big.group})")
        return "换成大块\n" + format_diff(make_diff(pr.parent_src, "\n".join(lines) + "\n"))


def _takes_a_prompt(method) -> bool:
    """method 能不能照 MockLLM 的调法 method(self, prompt) 调用。"""
    try:
        inspect.signature(method).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


def _kinds_missing() -> list[str]:
    """加修改种类的助教漏了哪几步，每步一句（按 README 的顺序：OPS、OP_WEIGHTS、OP_SAID、方法）。不在 import 时说清楚，
    02、04 要跑到表下面那段说明才是一个 KeyError；只写了说明和方法、没放进 OPS 的种类一次也不会被提出来，也没人说。"""
    missing = [f"OPS 里没有 {op}（OP_SAID 里有它的说明）" for op in OP_SAID if op not in OPS]
    missing += _weight_problems(OP_WEIGHTS, "OP_WEIGHTS")
    missing += [f"OP_SAID 里没有 {op} 的一句说明" for op in OPS if op not in OP_SAID]
    methods = {op: getattr(MockLLM, "_" + op, None) for op in OPS}
    missing += [f"MockLLM 没有方法 _{op}" for op, m in methods.items() if not callable(m)]
    missing += [f"MockLLM._{op} 要写成 def _{op}(self, prompt)" for op, m in methods.items()
                if callable(m) and not _takes_a_prompt(m)]
    return missing


if _MISSING := _kinds_missing():
    from .problem import display_path    # 文件名从运行命令的目录看（助教报过：写死的 evolve/mock_llm.py 在仓库根目录打不开）
    raise KindsIncomplete(f"{display_path(__file__)} 的修改种类没有配齐：" + "；".join(_MISSING)
                          + "（加一种修改要在 OPS 里加名字、在 OP_WEIGHTS 里加一项 \"名字\": 权重、在 OP_SAID 里加一句，"
                            "再写方法 _名字(self, prompt)，返回 (子程序, 一句说明)，见 README 的\"修改种类\"）。")
