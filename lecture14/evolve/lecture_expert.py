"""
第 14 讲 · 讲义的专家启发式，原样钉住的一份（不要改它；学生改的是 lecture14/expert_heuristic.py）。
测试（tests/conftest.py 设环境变量 MINI_ALPHAEVOLVE_EXPERT 指向这个文件）和讲义的论断都以它为准，
所以学生改了 expert_heuristic.py，和它无关的测试也不会失败。

这是一段给 (M, N, K) 挑分块配置的代码。evolve 不 import 它，而是把两条标记之间的文本交给 evolve.parse
解析成 Program（只接受一串 `if M/N/K <= 整数 and ...: return Config(...)`，最后一个无条件的 return）。

可以改它：改完重跑 `make run`（或 `python3 04_alphaevolve_tiling.py --quick`）。写错了（语法、DSL 不支持的写法、
某个分支返回的配置启动不了）会得到一条带文件名和行号的错误信息。注意：所有"相对专家快几倍"的数字都会跟着变，
04 脚本的观察会重新检验，说不成立的会直接说不成立。

这个专家只分两档：
  decode（M ≤ 16）：16 行的小块、BN = 64、BK = 128、4 级流水线——在读权重，要很多 CTA 同时读。
  其余：128×128×64、4 个 warp、3 级流水线、group 8——常见的"万金油"配置。
"""

from kernel_lab import Config  # noqa: F401  （让这个文件也是合法的 Python）

# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    if M <= 16:
        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)
    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
# EVOLVE-BLOCK-END
