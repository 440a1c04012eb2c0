"""
第 14 讲 · evolve.program —— 被进化的"程序"：一串 `if M <= ...: return Config(...)` 规则。

一个程序 = 若干条规则 + 一个默认配置：
    # EVOLVE-BLOCK-START
    def choose_config(M, N, K):
        if M <= 16:                                   一条规则：条件都是"某一维 <= 整数"，用 and 连接
            return Config(BM=16, BN=64, ...)
        return Config(BM=128, BN=128, ...)            默认配置：前面的规则都不满足时用它
    # EVOLVE-BLOCK-END
从上往下，第一条条件全部满足的规则说了算。每条规则管的区域是一个从 (1, 1, 1) 开始的"盒子"。

本模块：Rule / Program、choose（按形状选配置）、render（程序 -> 源代码）、simplify / equivalent（删死规则、判等价）、
has_dead_rules、dead_rules（哪些规则写了也没用，给学生的提醒）。
DSL 里的数有界：阈值的绝对值不超过 MAX_THRESHOLD，Config 的字段是 1 到 MAX_FIELD；能构造出来的程序一定能 render。
DSL 的类型和界（Rule、Program、AXES、MAX_THRESHOLD、MAX_FIELD、EVOLVE-BLOCK 标记）都在这里；源代码 -> 程序（parse、
ProgramError）在 source.py，它 import 本模块，本模块不 import 它（依赖只有一个方向）。SEARCH/REPLACE 在 diff.py，
这里转引它的名字（diff 不依赖本模块）。脚本要的名字 evolve/__init__.py 都转引了。
不检查配置能不能启动（那是评估器的事）。本模块不打印任何东西。
"""

from __future__ import annotations

import bisect
import functools
import operator
import sys
from dataclasses import dataclass, field, replace

from kernel_lab import FIELDS, VALID, VALID_INDEX, Config

AXES = ("M", "N", "K")
NO_BOUND = sys.maxsize             # 没有条件的那一维：上界当作无穷大
MAX_THRESHOLD = 10 ** 9            # 阈值（规则的上界）的绝对值最多这么大：GEMM 的维度远小于它
MAX_FIELD = 4096                   # Config 的字段最大这么大（候选网格最大 256；再大的数只会是写错了）
BLOCK_START = "# EVOLVE-BLOCK-START"
BLOCK_END = "# EVOLVE-BLOCK-END"


# ---------------------------------------------------------------- 规则与程序

@functools.lru_cache(maxsize=4096)
def _config_src(c: Config) -> str:
    return "Config(" + ", ".join(f"{f}={v}" for f, v in zip(FIELDS, c.as_tuple())) + ")"


def _short_int(n: int) -> str:
    """给错误信息用的整数：太长的只写位数（str() 写不出超过 4300 位的整数，错误信息自己不能再出错）。"""
    return str(n) if abs(n) < 10 ** 30 else f"（一个 {n.bit_length()} 位二进制的整数）"


@dataclass(frozen=True)
class Rule:
    """一条规则：conds 里的 (维, 阈值) 全部满足（维 <= 阈值）时返回 config。line 是它在源代码里的行号，不参与比较。"""
    conds: tuple[tuple[str, int], ...]
    config: Config
    line: int = field(default=0, compare=False, hash=False, repr=False)
    _box: tuple = field(init=False, compare=False, hash=False, repr=False)    # (M 上界, N 上界, K 上界, config)
    _corner: tuple = field(init=False, compare=False, hash=False, repr=False)  # (M 上界, N 上界, K 上界)
    _hash: int = field(init=False, compare=False, hash=False, repr=False)
    _index: int = field(init=False, compare=False, hash=False, repr=False)    # config 在 VALID 里的下标，启动不了是 -1
    _src: str = field(init=False, compare=False, hash=False, repr=False)      # render 里它的两行源代码

    def __post_init__(self) -> None:
        set_ = object.__setattr__                             # 冻结的 dataclass（不读 self.__dict__：那样实例的属性就慢了）
        if type(self.conds) is not tuple:
            set_(self, "conds", tuple(tuple(c) for c in self.conds))
        b = {"M": NO_BOUND, "N": NO_BOUND, "K": NO_BOUND}
        for f, t in self.conds:
            if f not in b:
                raise ValueError(f"条件只能针对 M、N、K，不能是 {f!r}")
            if type(t) is not int:
                set_(self, "conds", tuple((g, operator.index(u)) for g, u in self.conds))
                return self.__post_init__()
            if not -MAX_THRESHOLD <= t <= MAX_THRESHOLD:
                raise ValueError(f"阈值 {f} <= {_short_int(t)} 超出范围：绝对值最多 {MAX_THRESHOLD:,}")
            if t < b[f]:
                b[f] = t                                      # 同一维出现两次，取小的
        index = VALID_INDEX.get(self.config, -1)
        if index >= 0:
            set_(self, "config", VALID[index])                # 相等的配置换成 VALID 里那一个（以后查字典先比是不是同一个对象）
        corner = (b["M"], b["N"], b["K"])
        box = corner + (self.config,)
        set_(self, "_index", index)
        set_(self, "_corner", corner)
        set_(self, "_box", box)
        set_(self, "_hash", hash(box))
        cond = " and ".join([f"{f} <= {t}" for f, t in self.conds]) or "True"      # 没有条件：if True:
        set_(self, "_src", f"    if {cond}:\n        return {_config_src(self.config)}\n")

    def __hash__(self) -> int:        # 算一次存起来
        return self._hash

    def __eq__(self, other) -> bool:  # 和 dataclass 生成的一样（比 conds、config），只是先看是不是同一个对象、哈希同不同
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self is other or (self._hash == other._hash and self.conds == other.conds
                                 and (self._index == other._index >= 0 or self.config == other.config))  # 下标相同就是同一个配置

    def box(self) -> tuple[int, int, int]:
        """这条规则管的盒子的"角"：(M 的上界, N 的上界, K 的上界)；没有条件的维是 NO_BOUND。"""
        return self._box[:3]


@dataclass(frozen=True)
class Program:
    """规则（按顺序）加一个默认配置。不可变、可哈希，可以当字典的键。"""
    rules: tuple[Rule, ...]
    default: Config
    default_line: int = field(default=0, compare=False, hash=False, repr=False)
    boxes: tuple = field(init=False, compare=False, hash=False, repr=False)   # 每条规则的 (M上界, N上界, K上界, 配置)
    _hash: int = field(init=False, compare=False, hash=False, repr=False)
    config_indices: tuple = field(init=False, compare=False, hash=False, repr=False)  # 每个分支的配置在 VALID 里的下标

    def __post_init__(self) -> None:
        set_ = object.__setattr__                             # 冻结的 dataclass（不读 self.__dict__：那样实例的属性就慢了）
        rules = self.rules
        if type(rules) is not tuple:
            rules = tuple(rules)
            set_(self, "rules", rules)
        index = VALID_INDEX.get(self.default, -1)
        if index >= 0:
            set_(self, "default", VALID[index])               # 相等的配置换成 VALID 里那一个
        set_(self, "boxes", tuple(map(_BOX, rules)))
        set_(self, "config_indices", (*map(_INDEX, rules), index))
        set_(self, "_hash", hash((tuple(map(_HASH, rules)), self.default)))   # 不逐条调 __hash__

    def __hash__(self) -> int:        # 算一次存起来：程序常被当作缓存的键
        return self._hash

    def __eq__(self, other) -> bool:  # 和 dataclass 生成的一样（比 rules、default），只是哈希不同就直接不等（不逐条比规则）
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self is other or (self._hash == other._hash and self.default == other.default and self.rules == other.rules)

    def n_rules(self) -> int:
        return len(self.rules)

    def n_conditions(self) -> int:
        """所有规则的条件一共几个（"M <= 64 and N <= 4096" 是 2 个；同一维写了几遍就算几个）。"""
        return sum(len(r.conds) for r in self.rules)


def rule_with_config(rule: Rule, config: Config) -> Rule:
    """Rule(rule.conds, config)，但不再检查一遍 rule 已经检查过的条件：盒子的角、if 那一行直接拿 rule 的。
    得到的规则和 Rule(rule.conds, config) 的每个字段都一样（tests/test_engine_caches.py 检查）。"""
    set_ = object.__setattr__
    new = object.__new__(Rule)
    index = VALID_INDEX.get(config, -1)
    if index >= 0:
        config = VALID[index]
    corner = rule._corner
    box = corner + (config,)
    src = rule._src
    set_(new, "conds", rule.conds)
    set_(new, "config", config)
    set_(new, "line", 0)
    set_(new, "_index", index)
    set_(new, "_corner", corner)
    set_(new, "_box", box)
    set_(new, "_hash", hash(box))
    set_(new, "_src", f"{src[:src.index(chr(10)) + 1]}        return {_config_src(config)}\n")
    return new


_BOX, _INDEX, _HASH, _SRC = (operator.attrgetter(a) for a in ("_box", "_index", "_hash", "_src"))
rule_corner = operator.attrgetter("_corner")    # rule_corner(r) == r.box()，快一些（评估器给分支的缓存做键用）


def choose_mnk(program: Program, M: int, N: int, K: int) -> Config:
    """第一条条件全部满足的规则的配置；都不满足就用默认配置。"""
    for bm, bn, bk, cfg in program.boxes:
        if M <= bm and N <= bn and K <= bk:
            return cfg
    return program.default


def choose(program: Program, shape) -> Config:
    """同 choose_mnk，形状是任何带 .M .N .K 的对象。"""
    return choose_mnk(program, shape.M, shape.N, shape.K)


def branch_index(program: Program, M: int, N: int, K: int) -> int:
    """(M, N, K) 走第几个分支：第一条条件都满足的规则的下标；都不满足是默认分支 len(rules)。"""
    for i, (bm, bn, bk, _) in enumerate(program.boxes):
        if M <= bm and N <= bn and K <= bk:
            return i
    return len(program.boxes)


# ---------------------------------------------------------------- 程序 -> 源代码

@functools.lru_cache(maxsize=256)
def render(program: Program) -> str:
    """程序的 Python 源代码（带 EVOLVE-BLOCK 标记，以换行结尾）。parse(render(p)) == p。"""
    return (f"{BLOCK_START}\ndef choose_config(M, N, K):\n" + "".join(map(_SRC, program.rules))
            + f"    return {_config_src(program.default)}\n{BLOCK_END}\n")


# ---------------------------------------------------------------- 等价与化简
#
# 每条规则管的是从 (1,1,1) 到它的角 box() 的"盒子"。所有盒子都从 (1,1,1) 开始，所以：
#   一个盒子被若干个盒子的并集盖住，当且仅当它被其中**某一个**盖住
#   （它的角落在并集里，就落在某一个盒子 A 里；A 也从 (1,1,1) 开始，于是整个盒子都在 A 里）。
# 两个盒子的交集还是这样的盒子（角取两个角的逐维最小值）。于是"某个区域里有没有形状"只要看一个点：那个角。
# 下面的判定都只看这样的角，不用枚举所有阈值的组合（那是阈值个数的三次方）。


def _lowest(bits: int) -> int:
    """位集里最小的下标。"""
    return (bits & -bits).bit_length() - 1


def _indices(bits: int):
    """位集里的下标，从小到大。"""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


class _Cover:
    """哪些盒子盖住一个点：每一维把盒子按上界排好，预先算出"这一维上界 >= v 的盒子"的位集（Python 整数当位集，
    第 i 位是第 i 个盒子）。查一个点 = 每一维二分一次、三个位集求与。"""

    def __init__(self, corners):
        self.axes = []
        for d in range(3):
            col = [c[d] for c in corners]
            order = sorted(range(len(corners)), key=col.__getitem__)
            bounds = [col[i] for i in order]
            suffix, acc = [0] * (len(order) + 1), 0
            for r in range(len(order) - 1, -1, -1):
                acc |= 1 << order[r]
                suffix[r] = acc
            self.axes.append((bounds, suffix))

    def covers(self, point) -> int:
        """角 >= point（逐维）的盒子的位集。"""
        (b0, s0), (b1, s1), (b2, s2) = self.axes
        return (s0[bisect.bisect_left(b0, point[0])] & s1[bisect.bisect_left(b1, point[1])]
                & s2[bisect.bisect_left(b2, point[2])])


def _branches(program: Program) -> tuple[list, list]:
    """程序的分支：(角的列表, 配置的列表)，没有正整数形状能走到的空盒子（某一维上界 < 1）不算，最后是默认分支
    （角是无穷大，什么形状都盖住）。"""
    corners, configs = [], []
    for bm, bn, bk, cfg in program.boxes:
        if bm >= 1 and bn >= 1 and bk >= 1:
            corners.append((bm, bn, bk))
            configs.append(cfg)
    return corners + [(NO_BOUND,) * 3], configs + [program.default]


def _min3(a, b):
    return (min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2]))


def equivalent(p: Program, q: Program) -> bool:
    """p 和 q 在每个正整数形状 (M, N, K) 上都选同一个配置吗？（精确判定，不是抽样）

    p 的第 i 个分支和 q 的第 j 个分支同时管的形状 = 两个盒子的交集（角 m = 两个角的逐维最小值），去掉 p 里 i 前面、
    q 里 j 前面的盒子。它非空当且仅当 m 不被那些盒子盖住。所以 p、q 不等价，当且仅当有一对配置不同的 (i, j) 的 m
    不被盖住。对 p 的每个分支 i：先看它的角 c 在 q 里走哪个分支 j0（配置不同就不等价了）；j0 后面的 j 不用看
    （m ≤ c 已经被 j0 盖住），只要看 j0 前面、配置和 i 不同的那几个。其中角和 p 里 i 前面某个盒子一样的 j 也不用看
    （m 被 p 的那个盒子盖住）：q 是 p 改了一两条规则、或者删了死规则（simplify）时，剩下要看的 j 只有几个，
    上千条规则的程序比较起来也接近线性（4,096 条的网格删一条：约 40 毫秒），不是规则数的平方。"""
    if p == q:
        return True
    pc, pcfg = _branches(p)
    qc, qcfg = _branches(q)
    ids = _config_ids(pcfg + qcfg)                            # 配置换成整数，比较快
    pcfg, qcfg = ids[:len(pcfg)], ids[len(pcfg):]
    pcover, qcover = _Cover(pc), _Cover(qc)
    first_in_p: dict = {}                                     # 角 -> 它在 p 里第一次出现的分支
    for i, c in enumerate(pc):
        first_in_p.setdefault(c, i)
    seen_at: dict = {}                                        # p 的分支 k -> 角和它一样（且在 p 里第一次出现在 k）的 q 分支（位集）
    with_config: dict = {}                                    # 配置 -> q 里用这个配置的分支（位集）
    for j, (c, cfg) in enumerate(zip(qc, qcfg)):
        if (k := first_in_p.get(c)) is not None:
            seen_at[k] = seen_at.get(k, 0) | 1 << j
        with_config[cfg] = with_config.get(cfg, 0) | 1 << j
    unseen = (1 << len(qc)) - 1                               # 角不和 p 里 i 前面任何盒子一样的 q 分支
    for i, c in enumerate(pc):
        if i:
            unseen &= ~seen_at.get(i - 1, 0)
        if pcover.covers(c) & ((1 << i) - 1):
            continue                                          # 被 p 前面的盒子整个挡住：这个分支管不到任何形状
        j0 = _lowest(qcover.covers(c))                        # q 的默认分支盖住一切，所以一定有
        if qcfg[j0] != pcfg[i]:
            return False                                      # 形状 c 上两边选的配置不同
        for j in _indices(unseen & ((1 << j0) - 1) & ~with_config.get(pcfg[i], 0)):
            m = _min3(c, qc[j])
            if not (pcover.covers(m) & ((1 << i) - 1)) and not (qcover.covers(m) & ((1 << j) - 1)):
                return False                                  # 形状 m 上 p 选 i、q 选 j
    return True


def simplify(program: Program) -> Program:
    """删掉死代码，行为在每个正整数形状上都不变：
    合并同一维的重复条件、删空规则、删被前面的规则挡住的规则、删去掉也不改变行为的规则（从后往前试）。"""
    kept, default, default_line = _simplified(program)
    return Program(tuple(_merge_conds(program.rules[k]) for k in kept), default, default_line)


def removed_lines(program: Program) -> list[int]:
    """simplify 删掉的规则的行号，按 program 里的顺序（不带条件、成了默认配置的那条也算：它不再是一条规则）。
    按位置数，不按规则相等：贴进来的表里一模一样的两行，删掉的是后面那行，它也在这里（以前用集合比，一模一样的
    重复行算成"留着"）。"""
    kept = set(_simplified(program)[0])
    return [r.line for k, r in enumerate(program.rules) if k not in kept]


@functools.lru_cache(maxsize=64)
def _simplified(program: Program) -> tuple[tuple[int, ...], Config, int]:
    """simplify 的做法：(留下的规则在 program.rules 里的下标, 默认配置, 默认配置的行号)。脚本先 simplify、再问删了
    哪几行，缓存让上千条规则的表只化简一次。"""
    rules: list[Rule] = []
    at: list[int] = []                                        # rules[i] 是 program.rules[at[i]]
    default, default_line = program.default, program.default_line
    for k, r in enumerate(program.rules):
        if not r.conds:                                       # if True: 总会触发，它就是默认配置，后面全是死代码
            default, default_line = r.config, r.line
            break
        if min(r._box[:3]) >= 1:                              # 空区域（没有正整数满足 M <= 0）不要
            rules.append(r)
            at.append(k)
    n = len(rules)
    corners = [r._box[:3] for r in rules] + [(NO_BOUND,) * 3]    # 第 n 个是默认分支
    configs = _rule_config_ids(rules, default)
    cover = _Cover(corners)
    covering = [cover.covers(c) for c in corners]            # 盖住每条规则的角的盒子
    alive = (1 << (n + 1)) - 1                                # 还留着的分支（位集）
    for i in range(n):                                        # 被前面某一条整个盖住的规则
        if covering[i] & ((1 << i) - 1):
            alive &= ~(1 << i)
    for i in reversed(range(n)):                              # 从后往前试着删，每删一条都和原来等价
        if alive >> i & 1 and _removable(i, corners, configs, cover, covering[i], alive):
            alive &= ~(1 << i)
    return tuple(at[i] for i in range(n) if alive >> i & 1), default, default_line


def has_dead_rules(program: Program) -> bool:
    """simplify(program) 会不会删掉规则（它的规则会不会变少）？和 simplify(program).n_rules() < program.n_rules()
    一样，但找到第一条能删的就停（上千条规则、满是死规则的程序上快得多）。"""
    corners = []
    for r in program.rules:
        if not r.conds or min(r._box[:3]) < 1:
            return True                                       # if True 变成默认配置；空区域删掉
        corners.append(r._box[:3])
    n = len(corners)
    corners.append((NO_BOUND,) * 3)
    configs = _rule_config_ids(program.rules, program.default)
    cover = _Cover(corners)
    alive = (1 << (n + 1)) - 1
    # 贪心地从后往前删时，第一次删之前每一条都是对着完整的程序试的：有一条能删，simplify 就至少删一条
    return any(_removable(i, corners, configs, cover, cover.covers(corners[i]), alive) for i in reversed(range(n)))


def _config_ids(configs: list) -> list[int]:
    """配置 -> 整数（相同的配置相同的数），比较起来比 Config 快。能启动的用它在 VALID 里的下标。"""
    other: dict = {}
    return [i if (i := VALID_INDEX.get(c, -1)) >= 0 else -1 - other.setdefault(c, len(other)) for c in configs]


def _rule_config_ids(rules, default: Config) -> list[int]:
    """同 _config_ids([r.config for r in rules] + [default])，但能启动的配置直接用规则建好时查过的下标 r._index
    （不用再逐条对 Config 求哈希）。"""
    other: dict = {}
    out = [r._index if r._index >= 0 else -1 - other.setdefault(r.config, len(other)) for r in rules]
    i = VALID_INDEX.get(default, -1)
    out.append(i if i >= 0 else -1 - other.setdefault(default, len(other)))
    return out


def _removable(i: int, corners, configs, cover: _Cover, covering_i: int, alive: int) -> bool:
    """删掉第 i 条（alive 里的）规则，行为变不变？第 i 条管的形状删掉以后归第一个盖住它的后面的分支 k。
    行为变了，当且仅当有一个配置不同的 k，使 i、k 的交集（角 m）不被除 i 以外、k 前面的盒子盖住。
    i 自己的角 c 归的那个分支 j 盖住了 c，也就盖住了 j 后面所有 k 的 m，所以只要看 j 和 i、j 之间的那几条。
    covering_i 是盖住 c 的盒子（位集）。"""
    c, cfg = corners[i], configs[i]
    if covering_i & alive & ((1 << i) - 1):
        return True                                           # 被前面的盒子整个挡住：本来就走不到
    j = i + 1 + _lowest((covering_i & alive) >> (i + 1))
    if configs[j] != cfg:
        return False                                          # 形状 c 改走 j，配置变了
    others = alive & ~(1 << i)
    between = others & ((1 << j) - 1) & ~((1 << (i + 1)) - 1)
    for k in _indices(between):
        if configs[k] != cfg and not (cover.covers(_min3(c, corners[k])) & others & ((1 << k) - 1)):
            return False
    return True


def _merge_conds(r: Rule) -> Rule:
    """同一维出现多次只留最紧的阈值（顺序按第一次出现）。"""
    if len({f for f, _ in r.conds}) == len(r.conds):
        return r                                              # 没有重复的维（最常见）
    best: dict[str, int] = {}
    for f, t in r.conds:
        best[f] = min(t, best.get(f, t))
    conds = tuple(best.items())
    return r if conds == r.conds else replace(r, conds=conds)


def unreachable_lines(program: Program) -> list[int]:
    """没有任何正整数形状走到的规则的行号，按规则的顺序：条件是空区域（M <= 0）、被前面某一条整个盖住（盖住它的
    并集一定包含某一条，见上面"等价与化简"），或者在一条不带条件的规则（if True）后面。simplify 删掉的别的规则
    走得到，只是去掉也一样（它管的形状交给后面的分支，配置不变）。"""
    out, live = [], []
    for k, r in enumerate(program.rules):
        if not r.conds:                                       # if True：它后面的都走不到（它自己走得到）
            out.extend((j, q.line) for j, q in enumerate(program.rules[k + 1:], k + 1))
            break
        if min(r._box[:3]) < 1:
            out.append((k, r.line))
        else:
            live.append((k, r))
    cover = _Cover([r._box[:3] for _, r in live])
    out += [(k, r.line) for pos, (k, r) in enumerate(live) if cover.covers(r._box[:3]) & ((1 << pos) - 1)]
    return [line for _, line in sorted(out)]


def empty_lines(program: Program) -> list[int]:
    """条件没有正整数形状满足（M <= 0 之类）的规则的行号，按规则的顺序：unreachable_lines 里不是被前面的规则挡住、
    而是自己就空的那些。"""
    return [r.line for r in program.rules if r.conds and min(r._box[:3]) < 1]


COMMAND_INDENT = "    "   # 出错信息里以它开头的一行是一条要照抄的命令（句子里放不下一整条命令：80 列的终端会把它折断）：
#                          full_stop 不给它加句号；runner.say 在终端里按 shell 的续行折它（第 1 讲不 import 这里，照写一遍）


def full_stop(message: str) -> str:
    """每一行说明都以句号（或问号、叹号、省略号、冒号）结尾（学生报过："……再重新运行"、"……最稳妥）"、
    "……把它挪到那条前面"后面没有句号）。出错信息（ProgramError）和读文件时的提醒都经过这里。COMMAND_INDENT 开头的
    命令行不加：句号会成为命令的一部分。"""
    return "\n".join(line if not line.strip() or line.startswith(COMMAND_INDENT)
                     or line.rstrip().endswith(("。", "？", "！", "…", "：")) else line.rstrip() + "。"
                     for line in message.split("\n"))


def dead_rules(program: Program) -> list[tuple[int, str]]:
    """哪些规则写了也没用（程序照样能读、能跑，只是这几条不起作用）：[(行号, 一句说明)]，按规则的顺序。三种：
    没有正整数形状满足的条件（M <= 0）；被前面某一条整个挡住的规则；不带条件的规则（if True:）——它后面的规则
    和最后的 return 都用不到。"""
    out, live = [], []                                        # live：前面那些非空的规则
    for idx, r in enumerate(program.rules):
        r = _merge_conds(r)
        empty = [(f, t) for f, t in r.conds if t < 1]
        if empty:
            f, t = empty[0]
            out.append((idx, r.line, f"这条规则永远用不到：没有形状满足 {f} <= {t}（M、N、K 都至少是 1）"))
        elif not r.conds:
            n_after = len(program.rules) - idx - 1
            after = f"它后面的 {n_after} 条规则和最后的 return" if n_after else "最后的 return"
            out.append((idx, r.line, f"这条规则没有条件（if True），所有形状都在这里返回：{after} 都永远用不到；"
                                "要让后面的代码起作用，给它加上条件，或者把它挪到最后"))
            break
        else:
            live.append((idx, r))
    cover = _Cover([r.box() for _, r in live])
    for pos, (idx, r) in enumerate(live):
        first = _lowest(cover.covers(r.box()) & ((1 << pos) - 1))
        if first >= 0:
            q_idx, q = live[first]                            # first 是 live 里的位置；说给人听的是它在程序里第几条
            where = f"第 {q.line} 行的规则" if q.line else f"前面第 {q_idx + 1} 条规则"
            cond = " and ".join(f"{f} <= {t}" for f, t in q.conds)
            if q.box() == r.box() and q.config == r.config:     # 学生贴表时常见：整条重复
                text = f"这条规则永远用不到：它和{where}（if {cond}:）一模一样（条件、配置都一样），是重复的；删掉这条"
            elif q.box() == r.box():                              # 条件一样、配置不同：挪到前面只是让那条变成死的
                text = (f"这条规则永远用不到：{where}（if {cond}:）的条件和它一样，形状都先被那条接走了；"
                        "两条只能留一条：想用这条的配置，就删掉那条")
            else:
                text = (f"这条规则永远用不到：它管的形状都先被{where}（if {cond}:）接走了——那条的条件更宽；"
                        "想让它起作用，把它挪到那条前面")
            out.append((idx, r.line, text))
    return [(line, full_stop(text)) for _, line, text in sorted(out, key=lambda x: x[0])]

# ---------------------------------------------------------------- 转引：SEARCH/REPLACE 修改在 diff.py（它不依赖本模块）

from .diff import Diff, DiffError, apply_diff, format_diff, make_diff, parse_diff  # noqa: E402,F401
