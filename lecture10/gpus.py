"""
第 10、13 讲共用 · gpus —— 课程里"硬件"的唯一描述：每块 GPU 一条记录（数据手册的数 + 【估计】的校准旋钮），带出处。

kernel_lab（哪些配置能启动）和 sched_lab（解析模型的时间）都只从这里读硬件的数；别处不写 132、3744 这样的字面量。

    GPUS                    名字 → 记录，每块 GPU 一条（h100 是讲义默认的 H100 SXM5；别的见文件末尾的 GPUS：
                            by_key(H100, A100)，括号里逐个写记录的变量名）
    selected()              这个进程用哪一块：环境变量 MINI_ALPHAEVOLVE_GPU（GPUS 里的一个名字），没设就是 h100。
                            编号脚本的 --gpu 由 runner 在 import 课程模块之前写进这个环境变量（子进程也跟着用同一块）。
    problem(text)           这个名字能不能用：能用返回 None，不能用返回一句话（有哪些、怎样选）。

加一块 GPU：照 A100 写一条 GPU(...)，数据手册的数写出处（sources）；没在它上面校准过的旋钮照抄一块已有的，
并在 knob_note 里说明；然后放进 GPUS。
读进来时每条记录都查一遍（GPU(...) 的字段名对不对、齐不齐；record_problems：旋钮齐不齐、名字对不对，数的单位像不像
——共享内存、L2 按字节，带宽 B/s，峰值 FLOP/s；check_records：key 有没有重、写好的记录是不是都在 GPUS 里）：写错了，
编号脚本和 make test 只说一句话，哪条记录、哪个字段、要什么（文件名从运行命令的目录看）。
tests/test_gpus.py 检查每条记录的字段齐全、单位合理，并用 --gpu 把每个编号脚本在 A100 上跑一遍（--gpu h100 和默认
逐字节相同）；TESTS_GPU=a100 make test 把整套测试换到 A100。

只用标准库，import 时不打印任何东西。
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import MISSING, dataclass, field, fields

ENV = "MINI_ALPHAEVOLVE_GPU"
DEFAULT = "h100"


@dataclass(frozen=True)
class GPU:
    key: str                       # 命令行上的名字（--gpu 的取值）
    name: str                      # 全名（H100 SXM5）
    short: str                     # 句子里的短名（H100）
    sms: int                       # SM 数
    peak_flops: float              # 稠密 BF16 张量核峰值，FLOP/s
    hbm_bw: float                  # 显存峰值带宽，B/s
    hbm: str                       # 显存的种类（印出来用）
    l2_bytes: int                  # L2 容量，B
    smem_per_block: int            # 一个 CTA 最多能用的共享内存，B（opt-in 上限）
    smem_per_sm: int               # 一个 SM 的共享内存，B
    regs_per_sm: int               # 一个 SM 的 32 位寄存器数
    max_regs_per_thread: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    wgmma: bool                    # 有没有 Hopper 的 wgmma 快路径（没有时所有配置走同一条 mma 路径，不分快慢）
    knobs: dict = field(compare=False)          # 【估计】校准旋钮（名字见 sched_lab.KNOBS，不含由 L2 导出的 L2_USABLE）
    knob_note: str = ""            # 旋钮是在哪块 GPU 上校准的；没校准的是哪几个、用的是什么
    sources: tuple[str, ...] = ()  # 数据手册的数从哪来


class RecordProblem(ValueError):
    """GPUS 里一条记录写得不对。one_sentence：编号脚本只印这一句、退出码 1（lecture01/runner.py），没有 traceback。"""
    one_sentence = True


def shown_path(path: str) -> str:
    """给人看的文件名，从运行命令的目录看（照着打得开）：在当前目录下面或上一层就写相对路径，再远写绝对路径
    （和 evolve.problem.display_path 一样；助教报过：写死的 lecture10/gpus.py 在 lecture14/ 里运行时打不开）。"""
    path = os.path.abspath(path)
    try:
        rel = os.path.relpath(path)
    except ValueError:                                  # Windows 上不在同一个盘
        return path
    return path if rel.split(os.sep).count(os.pardir) > 1 else rel.replace(os.sep, "/")


def how_to_add() -> str:
    return f"加一块 GPU 照 A100 的那条写（见 {shown_path(__file__)} 开头和 README 的\"改编这门课\"）"


_FIELDS = tuple(f.name for f in fields(GPU))
_REQUIRED = tuple(f.name for f in fields(GPU) if f.default is MISSING and f.default_factory is MISSING)
_dataclass_init = GPU.__init__


def _checked_init(self, *args, **kwargs):
    """GPU(...) 的字段名拼错了、漏了一个时，一句话说是哪条记录（文件:行、key）、哪个字段，而不是 dataclass 的
    TypeError 和一段 traceback（助教报过：max_blocks_per_sm 写成 max_block_per_sm，每个编号脚本是 15 行 traceback）。"""
    unknown = [k for k in kwargs if k not in _FIELDS]
    given = set(_FIELDS[:len(args)]) | set(kwargs)
    missing = [n for n in _REQUIRED if n not in given]
    if unknown or missing or len(args) > len(_FIELDS):
        frame = sys._getframe(1)
        while frame.f_back is not None and os.path.basename(frame.f_code.co_filename) == "dataclasses.py":
            frame = frame.f_back                        # dataclasses.replace(...) 里调的：说调 replace 的那一行
        key = kwargs.get("key", args[0] if args else None)
        said = ([f"{', '.join(unknown)} 不是 GPU 的字段"] if unknown else []) \
            + ([f"少了 {', '.join(missing)}"] if missing else []) \
            + ([f"按位置给了 {len(args)} 个值（GPU 只有 {len(_FIELDS)} 个字段）"] if len(args) > len(_FIELDS) else [])
        raise RecordProblem(f"{shown_path(frame.f_code.co_filename)}:{frame.f_lineno} 的 GPU 记录"
                            + (f" {key}" if isinstance(key, str) else "") + " 不对：" + "；".join(said)
                            + f"（字段有 {', '.join(_FIELDS)}）。{how_to_add()}")
    _dataclass_init(self, *args, **kwargs)


GPU.__init__ = _checked_init


# 校准旋钮：在 H100 上定的（见 sched_lab 的模块说明：要 prefill 的最优是 256×128 / 8 warp / 4 级，等等）
_H100_KNOBS = dict(HBM_EFFICIENCY=0.88, L2_BW=7.7e12, L2_BW_PER_SM=90e9, LOAD_LATENCY_IDLE=0.7e-6,
                   LOAD_LATENCY_BUSY=1.3e-6, OVERLAP_P=9.0, MMA_FALLBACK=0.6, WARP_TILE_HALF=256,
                   HBM_LATENCY=0.5e-6, LAUNCH_OVERHEAD=4e-6, CHIP_OVERLAP_P=30.0)

H100 = GPU(
    key="h100", name="H100 SXM5", short="H100", sms=132, peak_flops=989.4e12, hbm_bw=3.35e12, hbm="HBM3",
    l2_bytes=50 * 2**20, smem_per_block=232_448, smem_per_sm=233_472, regs_per_sm=65536,
    max_regs_per_thread=255, max_threads_per_block=1024, max_threads_per_sm=2048, max_blocks_per_sm=32,
    wgmma=True, knobs=_H100_KNOBS,
    knob_note="旋钮都在 H100 上校准（对的是讲义的论点和公开的调优表，不是逐个数字对真机）。",
    sources=("NVIDIA H100 Tensor Core GPU datasheet（SXM5：132 SM、稠密 BF16 989.4 TFLOPS、HBM3 3.35 TB/s、50 MB L2）",
             "CUDA Hopper Tuning Guide（每 SM 228 KB 共享内存，每 CTA 最多 227 KB）",
             "CUDA C++ Programming Guide, compute capability 9.0 的表（寄存器、线程、每 SM 32 个 CTA）"))

A100 = GPU(
    key="a100", name="A100-80GB SXM4", short="A100", sms=108, peak_flops=312e12, hbm_bw=2.039e12, hbm="HBM2e",
    l2_bytes=40 * 2**20, smem_per_block=163 * 1024, smem_per_sm=164 * 1024, regs_per_sm=65536,
    max_regs_per_thread=255, max_threads_per_block=1024, max_threads_per_sm=2048, max_blocks_per_sm=32,
    wgmma=False,
    knobs=dict(_H100_KNOBS, L2_BW=round(_H100_KNOBS["L2_BW"] / 3.35e12 * 2.039e12, -10)),
    knob_note="旋钮没有在 A100 上校准：L2_BW 按 H100 的 L2/HBM 带宽比换算（约 2.3 倍 HBM），其余照抄 H100 的取值；"
              "A100 没有 wgmma，MMA_FALLBACK 不起作用（所有配置走同一条 mma 路径，峰值就是它的）。",
    sources=("NVIDIA A100 Tensor Core GPU datasheet（80GB SXM：稠密 BF16 312 TFLOPS、HBM2e 2,039 GB/s）",
             "NVIDIA Ampere GA100 architecture whitepaper（A100：108 SM、40 MB L2）",
             "CUDA Ampere Tuning Guide（A100 每 SM 最多 164 KB 共享内存，每 CTA 最多 163 KB）",
             "CUDA C++ Programming Guide, compute capability 8.0 的表（寄存器 64K/SM、255/线程，2048 线程、32 个 CTA/SM）"))


def by_key(*records) -> dict[str, GPU]:
    """GPUS 那行：by_key(H100, A100) -> {"h100": H100, "a100": A100}，括号里逐个写记录的变量名，用逗号隔开（只有一条时
    by_key(H100) 也行：不是 tuple，不用 (H100,) 那样的逗号）。括号里有不是 GPU 记录的东西时一句话（文件:行、该怎样写）。
    助教报过：以前那行是 {g.key: g for g in (H100, A100)}，只留一块写成 (H100)（Python 读到的是那条记录，不是只有它的
    tuple），每个编号脚本是 "TypeError: 'GPU' object is not iterable" 的一段 traceback。"""
    bad = [r for r in records if not isinstance(r, GPU)]
    if bad or not records:
        frame = sys._getframe(1)
        what = f"括号里有{_what(bad[0])}，不是 GPU 记录" if bad else "括号里一条记录也没有"
        # 例子里是文件里写着的每条记录（助教报过：加了 L40S、括号里多套了一层，例子是 by_key(H100, A100)，照抄以后是
        # 下一句"L40S 写好了，却没放进 GPUS"）
        example = gpus_line([n for n, v in frame.f_globals.items() if isinstance(v, GPU)])
        raise RecordProblem(f"{shown_path(frame.f_code.co_filename)}:{frame.f_lineno} 的 GPUS 不对：{what}；"
                            f"括号里逐个写记录的变量名、用逗号隔开，例如 {example}。{how_to_add()}")
    return {g.key: g for g in records}


GPUS_LINE = "GPUS: dict[str, GPU] = by_key(H100, A100)"     # GPUS 那行的写法（句子里照它说）


def gpus_line(names) -> str:
    """句子里建议的 GPUS 那行：括号里是文件里写着的这些记录（变量名）；一条也没有就是 GPUS_LINE。"""
    return f"GPUS: dict[str, GPU] = by_key({', '.join(names)})" if names else GPUS_LINE


def _what(value) -> str:
    """句子里说一个不是 GPU 记录（或者不是 GPUS 该有的字典）的值：是什么、（截短的）样子。"""
    if isinstance(value, GPU):
        return f"一条 GPU 记录（key 是 {value.key!r}）"
    if isinstance(value, (tuple, list, set)):
        return f"一个 {type(value).__name__}（{len(value)} 项）"
    text = repr(value)
    return f"一个 {type(value).__name__}（{text if len(text) <= 40 else text[:37] + '…'}）"


GPUS: dict[str, GPU] = by_key(H100, A100)


# ---- 每条记录读进来时检查一遍：助教加的那条漏了旋钮（以前是 sched_lab 里的 KeyError 和一段 traceback）、单位写错了
# （共享内存写成 99 KB 的 99：以前 04 说学生的 expert_heuristic.py 第 35 行"不能启动：共享内存 81,920 B > 99 B"）----
KNOB_NAMES = tuple(_H100_KNOBS)    # 每条记录都要有的【估计】旋钮（sched_lab.KNOBS 去掉由 L2 导出的 L2_USABLE）
# 字段的合理范围和单位：出了范围多半是单位写错了（KB 写成了数、GB/s 写成了数）
RANGES = dict(sms=(1, 1000, "1 到 1000 之间"), peak_flops=(1e13, 1e16, "1e13 到 1e16 FLOP/s 之间"),
              hbm_bw=(1e11, 1e14, "1e11 到 1e14 B/s 之间"), l2_bytes=(2**20, 2**30, "1 MB 到 1 GB 之间，按字节写"),
              smem_per_block=(16 * 1024, 2**20, "16 KB 到 1 MB 之间，按字节写"),
              smem_per_sm=(16 * 1024, 2**20, "16 KB 到 1 MB 之间，按字节写"), regs_per_sm=(16384, 2**20, "16,384 到 1,048,576 之间"),
              max_regs_per_thread=(63, 1024, "63 到 1024 之间"), max_threads_per_block=(256, 4096, "256 到 4096 之间"),
              max_threads_per_sm=(256, 8192, "256 到 8192 之间"), max_blocks_per_sm=(1, 256, "1 到 256 之间"))


def record_problems(g: GPU) -> list[str]:
    """这条记录哪里不对，每处一句；没问题返回空列表。"""
    out = []
    for name, (lo, hi, allowed) in RANGES.items():
        v = getattr(g, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            h = getattr(H100, name)
            out.append(f"{name} 是 {v!r}，要在 {allowed}（单位写错了？H100 的是 {h:,}）" if isinstance(h, int) else
                       f"{name} 是 {v!r}，要在 {allowed}（单位写错了？H100 的是 {h:g}）")
    if not out and g.smem_per_block > g.smem_per_sm:
        out.append(f"smem_per_block（{g.smem_per_block:,}）比 smem_per_sm（{g.smem_per_sm:,}）还大")
    missing = [k for k in KNOB_NAMES if k not in g.knobs]
    unknown = [k for k in g.knobs if k not in KNOB_NAMES]
    if missing:
        out.append(f"knobs 少了 {', '.join(missing)}（没在这块 GPU 上校准的照抄一块已有的，在 knob_note 里说明）")
    if unknown:
        out.append(f"knobs 里的 {', '.join(unknown)} 不是旋钮的名字（有的是 {', '.join(KNOB_NAMES)}）")
    bad = [k for k, v in g.knobs.items() if k in KNOB_NAMES and (isinstance(v, bool) or not isinstance(v, (int, float))
                                                                  or not 0 < v < float("inf"))]
    if bad:
        out.append(f"knobs 的 {', '.join(bad)} 不是正数")
    return out


def check_records(records: dict[str, GPU], written: dict | None = None) -> None:
    """每条记录都没问题就什么也不做；否则抛 RecordProblem，一句话说哪条记录、哪里不对。written 是写在文件里的记录
    （变量名 → GPU）：照 A100 抄了一条、忘了改 key（和 GPUS 里已有的重了，那条被悄悄盖掉），或者写好了没放进 GPUS，
    也说出来。"""
    if not isinstance(records, dict) or not all(isinstance(g, GPU) and g.key == k for k, g in records.items()):
        # 助教报过：GPUS = (H100)、GPUS = (H100, A100)——整行换成了一条记录、一个 tuple，每个编号脚本是
        # "'GPU' object has no attribute 'items'" 的一段 traceback
        line = _gpus_line()
        given = [records] if isinstance(records, GPU) else list(records.values() if isinstance(records, dict) else
                                                                records if isinstance(records, (tuple, list)) else [])
        names = [n for g in given for n, w in (written or {}).items() if w is g] or list(written or {})
        what = (f"是一个字典，可 {', '.join(repr(k) for k, g in records.items() if not (isinstance(g, GPU) and g.key == k))} "
                "对着的不是 key 和它一样的 GPU 记录" if isinstance(records, dict) else f"是{_what(records)}")
        raise RecordProblem(f"{shown_path(__file__)}{f':{line}' if line else ''} 的 GPUS 不对：它{what}，要的是从 key 到 "
                            f"GPU 记录的字典；照原来的写法写成 "
                            + gpus_line(names)
                            + f"（括号里逐个写记录的变量名，用逗号隔开）。{how_to_add()}")
    said = [f"{key} 的 " + "；".join(p) for key, g in records.items() if (p := record_problems(g))]
    written = written or {}
    for key in dict.fromkeys(g.key for g in written.values()):
        names = [name for name, g in written.items() if g.key == key]
        if len(names) > 1:
            said.append(f"{'、'.join(names)} 的 key 都是 {key!r}（每条记录要有自己的 key，--gpu 用它；照抄的那条要改）")
    said += [f"{name} 写好了，却没放进 GPUS（GPUS 那行的括号里加上 {name}）" for name, g in written.items()
             if g.key not in records and sum(o.key == g.key for o in written.values()) == 1]
    if said:
        raise RecordProblem(f"{shown_path(__file__)} 的 GPU 记录不对：" + "。".join(said) + "。" + how_to_add())


def _gpus_line() -> int | None:
    """这个文件里给 GPUS 赋值的那一行的行号（找不到是 None）。"""
    try:
        with open(__file__, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    found = [i for i, text in enumerate(lines, 1) if re.match(r"GPUS\s*(?::[^=]*)?=", text)]
    return found[-1] if found else None


check_records(GPUS, {name: g for name, g in globals().items() if isinstance(g, GPU) and name != "GPUS"})


def problem(text: str | None) -> str | None:
    """text 能不能当 GPU 的名字：能用返回 None，不能用返回一句话。"""
    if text in GPUS:
        return None
    return (f"不认识的 GPU '{text}'：可以选 {'、'.join(GPUS)}（命令行用 --gpu，或者设环境变量 {ENV}），"
            f"不选就是 {DEFAULT}")


def describe(gpu: GPU) -> str:
    """不是默认的 GPU 时，脚本开头印的那句话：哪块、数据手册的几个数、旋钮在哪块上校准的。"""
    return (f"硬件换成 {gpu.name}（--gpu {gpu.key}）：{gpu.sms} 个 SM、稠密 BF16 {gpu.peak_flops / 1e12:g} TFLOPS、"
            f"{gpu.hbm} {gpu.hbm_bw / 1e12:g} TB/s、{gpu.l2_bytes // 2**20} MB L2、每个 CTA 最多 "
            f"{gpu.smem_per_block // 1024} KB 共享内存（数据手册的数，出处见 lecture10/gpus.py）。{gpu.knob_note}"
            f"讲义的观察是在 {GPUS[DEFAULT].short} 上写的，这里照原来的判据检查，不成立的标出来。")


def selected_key() -> str:
    """这个进程选的 GPU 的名字（环境变量 MINI_ALPHAEVOLVE_GPU，没设或为空就是 h100）。"""
    return os.environ.get(ENV) or DEFAULT


def selected() -> GPU:
    """这个进程用的那块 GPU 的记录；环境变量的值不认识时抛 ValueError（一句话）。"""
    key = selected_key()
    msg = problem(key)
    if msg:
        raise ValueError(msg)
    return GPUS[key]
