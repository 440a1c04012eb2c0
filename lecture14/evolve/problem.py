"""
问题本身：形状（讲义是 88 个）、训练/测试划分、时间表与逐形状最优（oracle）、专家启发式、几条基线和加速比。

形状 = Llama-3 8B 一层的四个 GEMM，加上 Llama-3 70B 按 8 路张量并行切开后一层的四个 GEMM，
每个配 11 个 M（token 数，decode 的批大小到 prefill 的 token 数）。(N, K) 由模型维度算出（LAYERS、TOKENS 在
../lecture13/llama_shapes.py，第 13 讲的演示也用它们）。
所有时间来自第 13 讲的解析模型 sched_lab（lecture10/gpus.py 里选定的那块 GPU 的参数，默认 H100；不是实测）。
"""

from __future__ import annotations

import errno
import math
import os
import re
import shlex
import sys
from dataclasses import dataclass, field

import numpy as np
from kernel_lab import VALID, VALID_INDEX, Config, off_grid, one_field_fixes, problems
from llama_shapes import LAYERS, MODEL_OF, PROJECTIONS, TOKENS  # noqa: F401  （投影的 (N, K)、所属模型和 M，第 13 讲定义）
from sched_lab import time_valid

from .program import COMMAND_INDENT, Program, Rule, branch_index, choose, dead_rules, equivalent
from .source import EmptyExpertError, ProgramError, find_block, ignored_code, parse

LOG_QUANTUM = 2.0 ** -24           # log(时间) 的量化步长（约 6e-8，相对时间误差远小于模型本身的误差）


def score_digits(n_shapes: int) -> int:
    """n_shapes 个形状上的分数（几何平均）印几位小数，两个不同的分数一定印得不一样：log 分数是 n_shapes 个量化过的
    log 的平均，两个不同的至少差 LOG_QUANTUM / n_shapes（44 个训练形状时约 1.4e-9），分数也至少差这么多的量级，
    再多印一位。学生报过：04 --seed 8 的两次刷新印成两个 1.25549447×（按"至少差 6e-8"只印到 8 位）。"""
    return 1 + math.ceil(math.log10(max(1, n_shapes) / LOG_QUANTUM))
SPLIT_SEED = 14                    # 随机对半分的种子：每次运行都是同一个划分

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))                         # 仓库根：lecture14/evolve 的上两级
STUDENT_EXPERT_FILE = os.path.normpath(os.path.join(HERE, "..", "expert_heuristic.py"))   # 学生可以改的那份
LECTURE_EXPERT_FILE = os.path.join(HERE, "lecture_expert.py")       # 讲义的专家，原样钉住的一份（测试用它）
EXPERT_ENV = "MINI_ALPHAEVOLVE_EXPERT"     # 设了这个环境变量，就从它给的文件读专家（tests/conftest.py 指向 LECTURE_EXPERT_FILE）
EXPERT_FILE = os.environ.get(EXPERT_ENV) or STUDENT_EXPERT_FILE
MY_HEURISTIC = "my_heuristic.py"   # 练习里学生自己那份的名字（在仓库根目录；01、06 的"可以试试"让学生从专家复制一份）


def copy_suggestion(why: str, scored: str) -> list[tuple[str, str]]:
    """"可以试试"里复制专家、开始自己那份的一条：[(why, cp 命令)]。这次看的文件 scored 不是专家（学生在看自己的
    那份）时是空的——照抄那条 cp 会把学生改过的文件盖掉（学生报过：给自己的 my_heuristic.py 打完分，下面还让他
    复制一遍）。只看命令行，不看磁盘上有没有 my_heuristic.py：同样的参数印同样的字节。"""
    if not is_expert_file(scored):
        return []
    return [(why, f"cp lecture14/expert_heuristic.py {MY_HEURISTIC}")]


def is_expert_file(path: str) -> bool:
    """path 是不是专家启发式的文件（学生的 expert_heuristic.py、钉住的讲义专家，或 MINI_ALPHAEVOLVE_EXPERT 指的那份）。"""
    experts = {os.path.realpath(p) for p in (STUDENT_EXPERT_FILE, LECTURE_EXPERT_FILE, EXPERT_FILE)}
    return os.path.realpath(path) in experts


def file_to_edit(scored: str) -> str:
    """"可以试试"让学生接着改、再打分的文件（命令行上的写法，在仓库根目录运行）：这次看的是专家时是练习的
    my_heuristic.py（上一条建议先复制一份）；看的是学生自己的文件时就是它（一位同学报过：给 my_h3.py 打完分，
    建议却让他改 my_heuristic.py——那个文件可能根本不存在）。只看命令行，不看磁盘：同样的参数印同样的字节。"""
    import shlex
    return MY_HEURISTIC if is_expert_file(scored) else shlex.quote(from_root(scored))


def from_root(path: str) -> str:
    """从仓库根目录看的路径（"可以试试"里的命令都在仓库根目录运行）；不在仓库里的文件给绝对路径。"""
    full = os.path.abspath(path)
    return os.path.relpath(full, REPO) if full.startswith(REPO + os.sep) else full


def edited_example(program, text: str | None = None) -> Program | None:
    """edit_example 说"把 if M <= 16 改成 if M <= 64"时，改完的程序（脚本可以先替学生算出这一改的分数）；不这么说时 None。
    text：程序的源码（给了就要那一行真的写着 M <= 16——审读报过：文件里写的是 if M < 17:，解析出来一样，照"把 if M <= 16
    改成……"去找，文件里没有这一句）。"""
    lines = None if text is None else text.split("\n")
    for i, r in enumerate(program.rules):
        if r.conds == (("M", 16),) and (lines is None or (0 < r.line <= len(lines)
                                                          and re.search(r"\bM\s*<=\s*16\b", lines[r.line - 1]))):
            edited = Program(program.rules[:i] + (Rule((("M", 64),), r.config),) + program.rules[i + 1:], program.default)
            if any(choose(edited, s) != choose(program, s) for s in all_shapes()):
                return edited
    return None


def edit_example(program, colon: str = "", text: str | None = None) -> str:
    """"可以试试"里"比如怎么改"：程序里还有专家起点的 if M <= 16 那一条、而且把它改成 64 真的会换掉某个形状的配置，
    才这么说（colon=":" 时照源码写"if M <= 16:"）；否则说别的改法（学生报过：文件里已经是 64，还让他把 16 改成 64；
    审读报过：前面有一条 if M <= 8192 挡住了它，照着改什么也不变）。"""
    if edited_example(program, text) is not None:
        return f"比如把 if M <= 16{colon} 改成 if M <= 64{colon}"
    if not program.rules:                      # 只有一句默认的 return：没有阈值可挪（审读报过）
        return f"比如在最后的 return 前面加一条规则（if M <= 16{colon} 下一行 return Config(...)），或者换一个配置"
    return "比如挪一条规则的阈值（if M <= 后面的数）、换一个配置，或者再加一条规则"


@dataclass(frozen=True, order=True)
class Shape:
    """一个 GEMM：C[M, N] = A[M, K] · B[K, N]，name 是它来自哪个投影，model 是那个投影属于哪个模型（按模型划分时用；
    不给就查 llama_shapes.MODEL_OF，查不到是 None）。model 不参与比较、哈希和排序。"""
    name: str
    M: int
    N: int
    K: int
    model: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.model is None:
            object.__setattr__(self, "model", MODEL_OF.get(self.name))

    def label(self) -> str:
        return f"{self.name} M={self.M}"

    @property
    def flops(self) -> float:
        return 2.0 * self.M * self.N * self.K


def distinct_sizes(shapes) -> int:
    """shapes 里有几种不同的 (M, N, K)。两个模型的投影可能一样大（加 Gemma2-9B 时它的 qkv 和 70B/8 的 down 一样），
    一样大的 GEMM 穷举一次就够：评估器的"跑了几次内核"和各脚本的"穷举要跑几次"都按它数。"""
    return len({(s.M, s.N, s.K) for s in shapes})


def all_shapes(projections=None, tokens=None) -> tuple[Shape, ...]:
    """投影 × M 的全部形状（讲义是 8 个投影 × 11 个 M = 88 个），按投影、再按 M 排。projections、tokens 默认是
    llama_shapes 的 PROJECTIONS、TOKENS；加模型的测试给别的。"""
    projections = PROJECTIONS if projections is None else projections
    tokens = TOKENS if tokens is None else tokens
    return tuple(Shape(p.name, M, p.N, p.K, p.model) for p in projections for M in tokens)


class ShapeSetError(ValueError):
    """形状集合没法按规则划分（比如有一个投影配不上对）。one_sentence：runner.run 只印这句话、退出码 1，不印 traceback。"""
    one_sentence = True


def pair_projections(shapes) -> tuple[tuple[str, str], ...]:
    """随机划分的投影配对，规则：每次在还没配对的投影里挑 N 最接近的两个配一对（接近 = 大的 N ÷ 小的 N 最小；
    一样接近时 N 小的那对先配，再一样就按投影出现的顺序），直到配完；一对里 (N, K) 小的在前。讲义的 8 个投影配出来是
    8B o 和 8B down（N 相同）、70B/8 o 和 70B/8 down（N 相同）、8B qkv 和 70B/8 gate_up（N 相近）、
    70B/8 qkv 和 8B gate_up（剩下的 N 最小和最大）。投影数是奇数时最后剩一个配不上：抛 ShapeSetError，点名它。"""
    nk: dict[str, tuple[int, int]] = {}
    seen: set[tuple[str, int]] = set()
    for s in shapes:
        if (s.name, s.M) in seen:                        # 同一个投影写了两遍（助教报过：数据里已经加了 Qwen2.5-7B，
            raise ShapeSetError(                         # 又加一遍，照样划分了，每个形状算两次）
                f"投影 {s.name} 在数据里出现了两次（M = {s.M} 的形状有两个）：lecture13/llama_shapes.py 的 PROJECTIONS 里"
                "每个投影（模型加种类）只写一行，删掉重复的那一行")
        seen.add((s.name, s.M))
        nk.setdefault(s.name, (s.N, s.K))
    left = list(nk)
    pairs = []
    while len(left) >= 2:
        def closeness(ij):
            a, b = nk[left[ij[0]]][0], nk[left[ij[1]]][0]
            return (max(a, b) / min(a, b), min(a, b), ij)
        i, j = min(((i, j) for i in range(len(left)) for j in range(i + 1, len(left))), key=closeness)
        pair = tuple(sorted((left[i], left[j]), key=lambda n: nk[n]))
        pairs.append(pair)
        left = [n for k, n in enumerate(left) if k not in (i, j)]
    if left:
        raise ShapeSetError(
            f"现在有 {len(nk)} 个投影（奇数），配对随机对半分要把投影按 N 两两配对：配完剩下投影 {left[0]} 配不上对"
            f"（剩下的是 N 和别人差得最远的，不一定是新加的；数据里最后一个投影是 {list(nk)[-1]}）；"
            f"在 lecture13/llama_shapes.py 的 PROJECTIONS 里再加一个投影或去掉一个，让投影数是偶数")
    return tuple(pairs)


def split_names(shapes=None) -> dict[str, str]:
    """两种划分印出来的名字：random 是"配对随机对半分"；by_model 从数据里数（第一个模型训练，其余测试）。"""
    models = list(dict.fromkeys(s.model for s in (all_shapes() if shapes is None else shapes)))
    return {"random": "配对随机对半分",
            "by_model": f"{models[0]} 训练、{'、'.join(str(m) for m in models[1:])} 测试"}


def split_shapes(shapes=None, how: str = "random", seed: int = SPLIT_SEED) -> tuple[tuple[Shape, ...], tuple[Shape, ...]]:
    """训练 / 测试划分，两半都保持原来的顺序。

    random：配对的随机对半分（实验设计里的"配对随机化"）。投影两两配对（pair_projections），M 也相邻两个配成一对
            （落单的最大 M 自成一组），于是形状分成一个个 2×2 的小块：{投影 a, b} × {M₁, M₂}。每个小块随机选一条
            对角线进训练、另一条进测试（落单的 M 只有两个形状：一对投影里随机一个进训练）。这样每个测试形状在训练里
            都有"它的配对投影、同一个 M"（配对是按 N 配的，不一定相似：讲义的最后一对是 N 最小的 70B/8 qkv 和
            N 最大的 8B gate_up），除了落单的 M 以外也都有"同一个投影、相邻的 M"；两边有同样的 M、同样的投影。
            固定种子，每次运行都一样。投影怎样配对见 pair_projections（按 N，配不上就拒绝）。
    by_model：形状的 model 是第一个模型（讲义是 8B）的训练，其余（70B/8）测试——测试形状的 (N, K) 组合训练时都没见过。"""
    shapes = tuple(all_shapes() if shapes is None else shapes)
    if how == "random":
        rng = np.random.default_rng(seed)
        ms = sorted({s.M for s in shapes})
        in_train: set[tuple[str, int]] = set()
        for pair in pair_projections(shapes):
            for k in range(0, len(ms), 2):
                m_pair = ms[k:k + 2]
                flip = int(rng.integers(2))                          # 选哪条对角线
                for j, name in enumerate(pair):
                    if len(m_pair) == 2:
                        in_train.add((name, m_pair[(j + flip) % 2]))
                    elif j == flip:                                  # 落单的 M：一对投影里随机一个进训练
                        in_train.add((name, m_pair[0]))
        train = tuple(s for s in shapes if (s.name, s.M) in in_train)
        test = tuple(s for s in shapes if (s.name, s.M) not in in_train)
    elif how == "by_model":
        first = shapes[0].model if shapes else None
        if first is None and shapes:
            raise ShapeSetError(f"形状 {shapes[0].label()} 不知道属于哪个模型：按模型划分要每个形状都有 model"
                                "（在 lecture13/llama_shapes.py 的 PROJECTIONS 里写明）")
        train = tuple(s for s in shapes if s.model == first)
        test = tuple(s for s in shapes if s.model != first)
    else:
        raise ValueError(f"不认识的划分方式 {how!r}：只有 'random' 和 'by_model'")
    return train, test


class TimeTable:
    """每个形状 × 全部能启动的配置（kernel_lab.VALID，H100 上 3744 个）的解析时间，按形状缓存；一个形状一次向量化调用。

    所有比较和几何平均都用 log(时间)，并把它量化到 LOG_QUANTUM 的整数倍：不同的 CPU、不同版本的 numpy 算 log
    可能差最后一位，量化以后同一个形状的值逐位相同，进化的每一步选择（谁更快、谁打平）在哪台机器上都一样；
    量化的倍数之和在 float64 里是精确的，求和的顺序也不影响结果。"""

    def __init__(self):
        self._logs: dict[tuple[int, int, int], np.ndarray] = {}
        self._times: dict[tuple[int, int, int], np.ndarray] = {}
        self._stacks: dict[tuple[Shape, ...], np.ndarray] = {}
        self._expert_sums: dict[tuple[Shape, ...], tuple] = {}     # geomean_speedup 的专家那一半（见那里）

    def logs(self, shape: Shape) -> np.ndarray:
        """shape 在全部配置上的 log(秒)，量化过（VALID 的顺序）。"""
        key = (shape.M, shape.N, shape.K)
        lg = self._logs.get(key)
        if lg is None:
            lg = self._logs[key] = np.round(np.log(time_valid(*key)) / LOG_QUANTUM) * LOG_QUANTUM
            lg.flags.writeable = False
            self._times[key] = np.exp(lg)
        return lg

    def times(self, shape: Shape) -> np.ndarray:
        """shape 在全部配置上的时间（秒，VALID 的顺序）。"""
        key = (shape.M, shape.N, shape.K)
        if key not in self._times:
            self.logs(shape)
        return self._times[key]

    def _index(self, config: Config, shape: Shape) -> int:
        i = VALID_INDEX.get(config)
        if i is None:
            raise ValueError(launch_message(config, shape))
        return i

    def time(self, config: Config, shape: Shape) -> float:
        """config 在 shape 上的时间（秒）。config 不在能启动的配置（VALID）里就抛 ValueError 说明原因。"""
        return float(self.times(shape)[self._index(config, shape)])

    def log_time(self, config: Config, shape: Shape) -> float:
        """同 time，但给 log(秒)（量化过；比较和求几何平均用它）。"""
        return float(self.logs(shape)[self._index(config, shape)])

    def oracle(self, shape: Shape) -> tuple[Config, float]:
        """逐形状最优：穷举能启动的全部配置（VALID）里最快的那个（打平时取 VALID 里靠前的）。"""
        i = int(np.argmin(self.logs(shape)))
        return VALID[i], float(self.times(shape)[i])

    def log_times(self, shapes) -> np.ndarray:
        """形状 × 配置的 log(时间) 矩阵（评估器用它一次查完一个程序在所有形状上的时间）。"""
        shapes = tuple(shapes)
        m = self._stacks.get(shapes)
        if m is None:
            m = self._stacks[shapes] = np.stack([self.logs(s) for s in shapes])
            m.flags.writeable = False
        return m


def launch_message(config, shape: Shape | None = None) -> str:
    """为什么这个返回值不能用：类型不对、不在候选网格上、或者哪种资源超了。"""
    where = f"形状 {shape.label()}：" if shape is not None else ""
    if not isinstance(config, Config):
        return f"{where}返回了 {type(config).__name__} {config!r}，应该返回 Config(...)"
    return f"{where}{config!r} 不能启动：" + "；".join(off_grid(config) + problems(config))


def launch_problems(program: Program, shapes=(), advise: bool = False) -> list[tuple[int, str]]:
    """静态检查：每个分支返回的配置都要能启动。返回 [(行号, 说明：配置、超了的资源、shapes 里哪些形状会走到它)]，
    都能启动就是空列表。advise：再说只改一个字段就能启动的写法（给学生的文件；进化里被拒的子程序不用）。"""
    if min(program.config_indices) >= 0:                            # 每个分支的配置都在 VALID 里（常见情形，不逐条查）
        return []
    branches = [(r.line, r.config) for r in program.rules] + [(program.default_line, program.default)]
    out, which = [], None
    for i, (line, cfg) in enumerate(branches):
        if cfg in VALID_INDEX:
            continue
        if which is None:                                     # 每个形状走哪个分支只算一次（不是每个坏分支算一遍）
            which = [branch_index(program, s.M, s.N, s.K) for s in shapes]
        hit = [s for s, b in zip(shapes, which) if b == i]
        where = f"（{len(shapes)} 个形状里有 {len(hit)} 个走这个分支，例如 {hit[0].label()}）" if hit else ""
        fixes = one_field_fixes(cfg) if advise and isinstance(cfg, Config) else []
        fix = f"。只改一个字段就能启动，任选一个：{'、'.join(fixes)}" if fixes else ""
        out.append((line, f"这个分支 {launch_message(cfg)}{where}{fix}"))
    return out


def launch_errors(program: Program, filename: str = "<program>") -> list[str]:
    """同 launch_problems，每条写成"文件:行: 说明"。"""
    return [f"{filename}:{line}: {text}" for line, text in launch_problems(program)]


@dataclass(frozen=True)
class Heuristic:
    """读进来的启发式文件：program 是读出的程序，source 是 EVOLVE 块的原文（两行标记之间，照学生写的样子；
    没有标记时是整个文件，marked 是 False），warnings 是读得进来、但有地方不起作用的提醒，每条是"文件:行: 一句话"。"""
    program: Program
    source: str
    warnings: tuple[str, ...]
    marked: bool = True


@dataclass(frozen=True)
class SourceView:
    """给学生看的启发式文件（01、06 印它）：lines 是两行标记之间（含标记）的行 [(行号, 原文)]，没有标记时是整个
    文件（marked 是 False，这时要说一句"读的是整个文件"）；ignored 是会被忽略的代码 [(行号, 一句说明)]：
    第二个 EVOLVE 块、标记外面的 def choose_config（学生多半以为它们起作用，04 读专家文件时也这么提醒）。"""
    lines: tuple
    marked: bool
    ignored: tuple


MAX_SOURCE_BYTES = 10_000_000      # 启发式文件最多读这么多字节（一万条规则约 1 MB）；再大多半不是启发式


def read_source(path: str) -> str:
    """启发式文件的文本（decode_source）。最多读 MAX_SOURCE_BYTES 字节：学生报过 06 /dev/zero 一直读到被系统杀掉；
    更大的文件、读不完的设备一句话（ProgramError）。"""
    name = display_path(path)
    with open(path, "rb") as f:
        raw = f.read(MAX_SOURCE_BYTES + 1)
    if len(raw) > MAX_SOURCE_BYTES:
        raise ProgramError(name, 1, f"文件比 {MAX_SOURCE_BYTES / 1e6:g} MB 还大，不像启发式（一万条规则约 1 MB）："
                                    "检查给的是不是那个 .py 文件")
    return decode_source(raw, name)


def source_or_none(path: str) -> str | None:
    """read_source，读不了（文件在读过以后没了、改坏了）时 None：给"可以试试"照源码措辞用，读不了就不照源码说。"""
    try:
        return read_source(path)
    except (OSError, ProgramError):
        return None


def source_view(path: str) -> SourceView:
    """读一个已经读成程序的启发式文件（load_heuristic 没出错），给学生看它的原文。"""
    text = read_source(path)
    lines = text.split("\n")
    offset, block = find_block(text, display_path(path))      # 和 parse 认同样的标记（"#EVOLVE-BLOCK-START" 也算）
    if offset > 0:                                             # offset：START 那一行和它前面的行数
        start, end = offset - 1, offset + block.count("\n")    # 两行标记的下标（END 那一行紧跟着块的最后一行）
    else:
        start, end = 0, len(lines) - 1 - (lines[-1] == "")     # 整个文件（最后的换行后面不算一行）
    return SourceView(tuple((i + 1, lines[i]) for i in range(start, end + 1)), offset > 0, tuple(ignored_code(text)))


def read_heuristic(path: str = EXPERT_FILE) -> Heuristic:
    """读一个启发式文件：解码（不是 UTF-8 就抛 ProgramError，说清楚怎么另存）、解析（出错抛 ProgramError，带文件名和
    行号）、检查每个分支能否启动（启动不了也抛 ProgramError，行号是第一个坏分支，信息里列出所有坏分支），
    再找出不起作用的规则和被忽略的代码（warnings）。文件打不开抛 OSError。"""
    return _read_heuristic(path, warn=True)


def load_heuristic(path: str = EXPERT_FILE) -> Program:
    """同 read_heuristic，只要程序（不找 warnings）。"""
    return _read_heuristic(path, warn=False).program


def display_path(path: str) -> str:
    """给人看的文件名：在当前目录下面、或者就在上一层目录里就写相对路径（学生报过：他敲的 ../mine.py 印成了一长串
    绝对路径），再远就写绝对路径（不写 ../../../dev/null 这种）。"""
    rel = os.path.relpath(path)
    up = rel.split(os.sep).count(os.pardir)
    return os.path.abspath(path) if up > 1 or rel == os.pardir else rel


def with_restore(e: ProgramError) -> str:
    """解析器的那句话；专家文件是空的时，里面的恢复命令（source.py 不 import 这里，只会写仓库根目录下的那一种）换成
    从当前目录照抄就能跑的那一种（审读报过：清空专家文件后在仓库外面运行，印的 git checkout lecture14/… 跑不了）。"""
    return str(EmptyExpertError(e.filename, e.lineno, restore_command()) if isinstance(e, EmptyExpertError) else e)


def restore_command() -> str:
    """恢复讲义的专家文件、照抄就能跑的命令。当前目录在仓库里时是 git checkout 文件（文件名照 display_path）；在仓库
    外面时 git 不认得那个文件（"not a git repository"），写成 git -C 仓库 checkout lecture14/expert_heuristic.py。
    路径带空格时加引号（助教报过：在仓库外面运行、仓库在"课程 材料"下面时，印的是 git checkout 课程 材料/repo/……）。"""
    import shlex
    here, repo = os.path.realpath(os.getcwd()), os.path.realpath(REPO)
    if here == repo or here.startswith(repo + os.sep):
        return f"git checkout {shlex.quote(display_path(STUDENT_EXPERT_FILE))}"
    return f"git -C {shlex.quote(display_path(REPO))} checkout {os.path.relpath(STUDENT_EXPERT_FILE, REPO)}"


def _return_line(text: str, line: int) -> int:
    """规则的行号是它的 if 那一行；配置启动不了时，学生要改的是下面 return Config(...) 那一行：从 line 起第一行
    （# 后面的注释不算）写着 return 的。if 和 return 写在同一行时就是 line 本身；找不到时还是 line。"""
    lines = text.split("\n")
    for n in range(line, min(len(lines), line + 50) + 1):
        if "return" in lines[n - 1].split("#", 1)[0]:
            return n
    return line


def _read_heuristic(path: str, warn: bool) -> Heuristic:
    name = display_path(path)
    text = read_source(path)
    program = parse(text, filename=name)
    bad = [(_return_line(text, line), msg) for line, msg in launch_problems(program, all_shapes(), advise=True)]
    if bad:
        (line, msg), rest = bad[0], bad[1:]
        raise ProgramError(name, line, msg + "".join(f"\n{name}:{n}: {t}" for n, t in rest))
    offset, block = find_block(text, name)
    found = sorted(dead_rules(program) + ignored_code(text)) if warn else []
    return Heuristic(program, block, tuple(f"{name}:{line}: {msg}" for line, msg in found), offset > 0)


def load_or_explain(path: str) -> tuple[Program | None, str]:
    """给演示脚本用：读启发式文件，出错不抛异常，返回 (None, 一句给学生看的话)；读得进来返回 (程序, "")。
    信息和专家文件写错时一样（文件:行: 说明）。"""
    name = display_path(path)
    try:
        return load_heuristic(path), ""
    except ProgramError as e:
        return None, f"{with_restore(e)}\n（改好再运行；写法见 {display_path(STUDENT_EXPERT_FILE)} 开头的说明。）"
    except IsADirectoryError:
        return None, f"{name}: 这是一个目录，要给一个 .py 文件。"
    except OSError as e:
        said = f"{name}: {os_words(e)}；检查路径，路径相对于运行脚本时所在的目录"
        there = os.path.join(REPO, path)
        if e.errno == errno.ENOENT and not os.path.isabs(path) and os.path.isfile(there):
            # 学生报过：在 lecture14/ 里、或者在仓库的上一层运行，my_heuristic.py 明明在仓库根目录，只得到"检查路径"
            said += f"（仓库根目录里有这个文件：写成 {display_path(there)}，或者回到仓库根目录再运行）"
        return None, said + "。"


_OS_WORDS = {errno.ENOENT: "没有这个文件", errno.ENOTDIR: "路径里有一段不是目录", errno.ENAMETOOLONG: "路径太长",
             errno.ELOOP: "符号链接绕成了圈", errno.EISDIR: "这是一个目录，不是文件", errno.EROFS: "这里的文件系统是只读的",
             errno.ENOSPC: "磁盘满了", errno.EFBIG: "文件超过了允许的大小", errno.EDQUOT: "磁盘配额用完了"}


def os_words(e: OSError, writing: bool = False) -> str:
    """打开文件出错的原因，学生的话（常见的几种，不带系统的英文原话）；别的是"读不了这个文件（系统的原话）"。
    writing=True 是写文件时的说法（没有这个文件 = 路径里的目录不存在）。"""
    verb = "写" if writing else "读"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"没有{verb}它的权限"
    if writing and e.errno == errno.ENOENT:
        return "路径里的目录不存在"
    return _OS_WORDS.get(e.errno) or f"{verb}不了这个文件（{e.strerror or e}）"


def decode_source(raw: bytes, name: str) -> str:
    """文件的字节 -> 文本：UTF-8（开头的 BOM 去掉，Python 自己也这么做），换行统一成 \\n（和文本模式的 open 一样）。
    不是 UTF-8 就抛 ProgramError：第几行、多半是什么编码、怎么另存为 UTF-8。"""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        end = e.start + 1                                # 读不了的那一串：到下一个 ASCII 字节为止，最多 4 个（学生报过：
        while end < min(len(raw), e.start + 4) and raw[end] >= 0x80:   # "B5 DA 20 31"，后两个是 " 1"，读得了）
            end += 1
        bad = raw[e.start:end].hex(" ").upper()
        try:
            raw.decode("gbk")
            guess = "看起来是 GBK（中文 Windows 的记事本、老的编辑器常用它）"
            shell = f"；也可以照抄下面这条命令转换：\n{COMMAND_INDENT}{gbk_to_utf8_command(name)}"
        except UnicodeDecodeError:                       # 整个文件不是 GBK（比如一半 UTF-8）：不给 iconv，它会半路停下
            guess, shell = "可能是 GBK、Latin-1 之类的编码", ""
        raise ProgramError(name, line, f"这个文件不是 UTF-8 编码（第 {line} 行有 UTF-8 读不了的字节 {bad}），"
                                       f"{guess}：请在编辑器里把它另存为 UTF-8（VS Code：点右下角的编码 → "
                                       f"「通过编码保存」→ UTF-8；记事本：另存为时编码选 UTF-8），再重新运行{shell}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def gbk_to_utf8_command(name: str) -> str:
    """把 GBK 文件就地转成 UTF-8 的命令：从学生运行脚本的目录照抄就能跑（name 是 display_path 的写法，带空格、中文时
    加引号）。先写到旁边的文件、转成功了才换掉原文件。出错信息里它单独一行（COMMAND_INDENT 开头）：学生报过，嵌在
    句子里时 80 列的终端把它折成三行，照抄的第一行 "iconv -f GBK -t UTF-8" 没有文件名，等着从键盘读。"""
    q, tmp = shlex.quote(name), shlex.quote(name + ".utf8")
    return f"iconv -f GBK -t UTF-8 {q} > {tmp} && mv {tmp} {q}"


def first_cover(corners, mnk: np.ndarray) -> np.ndarray:
    """每个形状（mnk 的一行 (M, N, K)）走第几个分支：第一个盖住它的角的下标；一个都不盖住是 len(corners)（默认分支）。
    所有角一次对着所有形状比（角 × 形状），每个形状取第一个 True：代价和规则条数 × 形状数成正比，没有按规则的
    Python 循环（上千条规则的程序也快）。和逐形状调 choose 的结果一样（tests/test_program_properties.py 检查）。"""
    if not len(corners):
        return np.zeros(len(mnk), dtype=np.intp)
    b = np.array(corners, dtype=np.int64)                                   # 规则 × (M, N, K 的上界)
    cover = ((b[:, 0:1] >= mnk[:, 0]) & (b[:, 1:2] >= mnk[:, 1]) & (b[:, 2:3] >= mnk[:, 2]))   # 规则 × 形状
    first = cover.argmax(axis=0)                                            # 第一条盖住的规则（没有时是 0）
    return np.where(cover[first, np.arange(len(mnk))], first, len(corners))


def shape_array(shapes) -> np.ndarray:
    """形状 -> (M, N, K) 的整数矩阵（形状 × 3）。"""
    return np.array([(s.M, s.N, s.K) for s in shapes], dtype=np.int64).reshape(-1, 3)


def _branch_log_sum(program, mnk: np.ndarray, logs: np.ndarray, shapes, table: TimeTable) -> float:
    """program 在这些形状上走到的配置的 log(时间) 之和（量化过的 log 之和在 float64 里精确，和逐个相加一样）。
    某个形状走到启动不了的配置就抛 ValueError（说明是哪个形状、哪种资源）。"""
    idx = np.array(program.config_indices)[first_cover([box[:3] for box in program.boxes], mnk)]
    if (idx < 0).any():
        s = shapes[int(np.argmax(idx < 0))]
        table.log_time(choose(program, s), s)               # 抛 ValueError：哪个形状、配置哪里不行
    return float(logs[np.arange(len(shapes)), idx].sum())


def geomean_speedup(program, shapes, table: TimeTable) -> float:
    """program 相对专家启发式的加速比，在 shapes 上取几何平均：exp(平均 log(t_专家 / t_程序))。
    某个形状走到启动不了的配置就抛 ValueError（说明是哪个形状、哪种资源）。
    专家那一半按形状组记在 table 里（同一组形状上给几千个程序打分时——讲师的脚本按 M 挑最好的配置就是
    11 万次——只算一次）；记下的专家换了（测试换过 EXPERT）就重算。"""
    shapes = tuple(shapes)
    hit = table._expert_sums.get(shapes)
    if hit is None or hit[0] is not EXPERT:
        mnk, logs = shape_array(shapes), table.log_times(shapes)
        hit = table._expert_sums[shapes] = (EXPERT, mnk, logs, _branch_log_sum(EXPERT, mnk, logs, shapes, table))
    _, mnk, logs, expert_sum = hit
    return math.exp((expert_sum - _branch_log_sum(program, mnk, logs, shapes, table)) / len(shapes))


def oracle_speedup(shapes, table: TimeTable) -> float:
    """逐形状最优相对专家的几何平均加速比：任何一个启发式在这些形状上的上限。"""
    shapes = tuple(shapes)
    logs = sum(table.log_time(choose(EXPERT, s), s) - float(table.logs(s).min()) for s in shapes)
    return math.exp(logs / len(shapes))


def best_single_config(shapes, table: TimeTable) -> Program:
    """"一个配置走天下"：在 shapes 上几何平均最快的那一个配置（没有规则的程序）。"""
    return Program((), VALID[int(np.argmin(table.log_times(shapes).sum(axis=0)))])


def per_m_table(train, table: TimeTable) -> Program:
    """"按 M 分档查表"：训练形状里每个 M 挑几何平均最快的配置，写成 if M <= m 的规则链（最大的 M 做默认）。
    这是拿自动调优器按 M 调一遍就能得到的东西（Triton autotune 常用 M 做 key）。要在每个训练形状上跑全部配置。"""
    from .program import Rule, simplify
    ms = sorted({s.M for s in train})
    best = {}
    for m in ms:
        group = [s for s in train if s.M == m]
        best[m] = VALID[int(np.argmin(table.log_times(group).sum(axis=0)))]
    rules = tuple(Rule((("M", m),), best[m]) for m in ms[:-1])
    return simplify(Program(rules, best[ms[-1]]))


try:
    EXPERT: Program = load_heuristic()
except (OSError, ProgramError) as e:            # 学生改坏了专家启发式：给一句清楚的话，不给一长串 traceback
    if isinstance(e, ProgramError):
        _said = f"专家启发式 {display_path(EXPERT_FILE)} 读不进来：\n{with_restore(e)}"
        if "git checkout" not in str(e):            # 和 01、06 读学生的文件时一样，说一句怎么办
            _said += (f"\n（改好再运行；写法见它开头的说明。想恢复讲义的原样：{restore_command()}。）"
                      if os.path.abspath(EXPERT_FILE) == STUDENT_EXPERT_FILE else "\n（改好再运行。）")
    elif os.environ.get(EXPERT_ENV):                # 环境变量指向的文件不在、是个目录……
        _said = (f"专家启发式 {display_path(EXPERT_FILE)} 读不进来：{os_words(e)}。它来自环境变量 {EXPERT_ENV}："
                 f"改成一个启发式文件的路径，或者 unset {EXPERT_ENV}，用 {display_path(STUDENT_EXPERT_FILE)}。")
    else:                                           # 学生把 expert_heuristic.py 挪走、删了（比如 mv 当成了 cp）
        _said = (f"专家启发式 {display_path(EXPERT_FILE)} 读不进来：{os_words(e)}。进化从它开始，"
                 f"用 {restore_command()} 恢复它。")
    _say = getattr(sys.modules.get("runner"), "say", None)   # 编号脚本已经载入了 runner（不 import 它：evolve 不依赖第 1 讲）
    if _say is not None:                                     # 终端里按宽度折行，管道里一行
        _say(_said)
        raise SystemExit(1) from None
    raise SystemExit(_said) from None


def expert_changed_note() -> str:
    """专家启发式选的配置和讲义钉住的那份（LECTURE_EXPERT_FILE）不一样时的一句提醒；一样时（只改了说明文字、
    规则的写法）是空串。学生报过：照 04 的"可以试试"改了 expert_heuristic.py，再做 README 的练习，06 说没赢专家——
    它比的是改过的专家，却一个字没说。04、06 印这一句。"""
    try:
        lecture = load_heuristic(LECTURE_EXPERT_FILE)
    except (OSError, ProgramError):
        return ""
    if EXPERT == lecture or equivalent(EXPERT, lecture):
        return ""
    restore = (f"恢复讲义的原样：{restore_command()}"
               if os.path.realpath(EXPERT_FILE) == os.path.realpath(STUDENT_EXPERT_FILE) else
               f"它来自环境变量 {EXPERT_ENV}，unset {EXPERT_ENV} 就用回 {display_path(STUDENT_EXPERT_FILE)}")
    return (f"注意：专家启发式 {display_path(EXPERT_FILE)} 和讲义的专家选的配置不一样（改过？）：这里的\"比专家快几倍\""
            f"都以它为分母，讲义的论断和 README 练习里的提示说的是讲义的那份；{restore}。")
