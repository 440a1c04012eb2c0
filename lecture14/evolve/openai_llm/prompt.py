"""
系统提示 SYSTEM_PROMPT：由 system_prompt() 从 kernel_lab 的网格和启动上限生成（教模型 DSL、配置网格、启动限制和
SEARCH/REPLACE 格式，要它回得短），约 3,100 个字符。用英文写：代码模型的指令数据大多是英文，跟英文指令更稳——这是
经验之谈，不是本仓库量出来的。用户消息就是 Prompt.text()，中文。录制文件的文件头里也存着它（回放时对不上就不放）。
看全文（在仓库根目录）：
    python3 lecture14/02_llm_proposal.py --system-prompt
（经编号脚本的 runner：没有 numpy 的 python3 也行，课程代码查出的问题只说一句。）
PYTHONPATH=lecture14 python -m evolve.openai_llm 也只印它（__main__.py）。
"""

from kernel_lab import (BYTES, GRID, MAX_REGS_PER_THREAD, MAX_SMEM_PER_BLOCK, MAX_THREADS_PER_BLOCK,
                        MIN_ACC_PER_WARP, REG_OVERHEAD, REGS_PER_SM, WARP, Config, regs_per_thread)
from sched_lab import GPU, SMS

from ..diff import format_diff, make_diff
from ..program import Program, Rule, render


def _example() -> tuple[str, str]:
    """系统提示里的例子：一个程序和一段把它改好的 SEARCH/REPLACE（由 render 和 make_diff 生成，保证打得上）。"""
    small = Rule((("M", 32),), Config(32, 64, 128, 4, 3, 4))
    mid = Rule((("M", 512), ("N", 4096)), Config(64, 128, 64, 4, 3, 8))
    before = Program((small,), Config(64, 64, 64, 4, 2, 8))
    after = Program((small, mid), Config(128, 128, 64, 8, 3, 8))
    return render(before), format_diff(make_diff(render(before), render(after)))


def system_prompt() -> str:
    """教模型 DSL、SEARCH/REPLACE 格式、配置网格和启动限制，要它回得短。用英文写：代码模型的指令数据大多是英文（经验之谈）。"""
    program, diff = _example()
    grid = "\n".join(f"  {f:<6} one of {', '.join(map(str, v))}" for f, v in GRID.items())
    big = Config(256, 128, 64, 4, 3, 8)
    return f"""You improve a small Python function that picks the tiling configuration of a Triton-style bf16
matrix-multiply kernel on an NVIDIA {GPU.short} ({SMS} SMs) for a GEMM of shape (M, N, K): C[M, N] = A[M, K] @ B[K, N].
M is the number of tokens (1 for decode up to 8192 for prefill); (N, K) are the projections of Llama-3 layers.
The score is the geometric-mean speedup over an expert heuristic on the training shapes; higher is better.
One function must serve every shape.

THE PROGRAM LANGUAGE (a tiny subset of Python; the program is parsed, never executed; anything else is rejected)
{program}- a sequence of rules `if CONDITION: return Config(...)`, then one final unconditional `return Config(...)`
  (the default). The first rule whose condition holds decides.
- CONDITION is one or more comparisons `M <= integer`, `N <= integer`, `K <= integer` joined by `and`.
  Upper bounds only: no `>`, `>=`, `or`, `not`, `==`, arithmetic, variables or calls. To handle large M
  differently, put the rule for small M first.
- Config takes exactly the six keyword arguments BM, BN, BK, warps, stages, group, each an integer literal.

THE CONFIG GRID (each field must be one of these values)
{grid}
  BM x BN is the output tile of one CTA, BK the K-step, stages the number of pipelined K-steps kept in shared
  memory, group the number of tile rows walked together for L2 reuse.

LAUNCH LIMITS (every branch is checked before anything runs; one unlaunchable branch rejects the program)
  registers/thread = BM*BN/({WARP}*warps) + {REG_OVERHEAD} <= {MAX_REGS_PER_THREAD}
  registers/CTA    = registers/thread * {WARP}*warps <= {REGS_PER_SM}
  shared memory    = stages * (BM + BN) * BK * {BYTES} bytes <= {MAX_SMEM_PER_BLOCK}
  threads/CTA      = {WARP}*warps <= {MAX_THREADS_PER_BLOCK}
  accumulators per warp = BM*BN/warps >= {MIN_ACC_PER_WARP}
  Example: BM=256, BN=128 with 4 warps needs {regs_per_thread(big)} registers/thread (too many);
  with 8 warps it needs {regs_per_thread(big.replace(warps=8))} (fine).

THE USER MESSAGE (in Chinese) gives the current program and its score, the training shapes where it is
furthest from the best time seen and from the roofline (with the config it picks for them now), and one or two
other good programs for inspiration.

YOUR REPLY: at most one sentence saying what you change, then one or more SEARCH/REPLACE blocks that edit the
current program, exactly in this format:
{diff}The SEARCH part must copy whole lines of the current program exactly (same spaces) and occur exactly once;
several blocks are applied in order. Change only what you need to. No code fences, no other text."""


SYSTEM_PROMPT = system_prompt()
