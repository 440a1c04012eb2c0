"""
第 14 讲 · 讲义的专家启发式，钉住的一份（别改它：测试和讲义的论断都以它
为准）。学生改的是 lecture14/expert_heuristic.py。

这是一段给 (M, N, K) 挑分块配置的代码。evolve 不 import 它，而是把两条
标记之间的文本交给 evolve.parse 解析成 Program（从不执行它）。能写的是：
一串 `if 条件: return Config(...)`（也可以写 `elif`、`else`），最后一个
无条件的 `return Config(...)`；条件是 M、N、K 和整数的比较，用 `<=` 或
`<`，几个比较用 `and` 连起来。要表达 `M > 16`，就把 `M <= 16` 的规则放在
前面。

改完存盘，在仓库根目录运行（用时见 README 的脚本表；系统的 python3 没有
numpy 时，脚本会自己改用 make run 建的 .venv）：
    python3 lecture14/04_alphaevolve_tiling.py
写错了（语法、DSL 不支持的写法、某个分支返回的配置启动不了）会得到一条
带文件名和行号的错误信息。所有"相对专家快几倍"的数字都会跟着变，04 脚本
的观察会重新检验，说不成立的会直接说不成立。04 只读这个文件；复制成别的
文件（比如 my_heuristic.py）改的话，用 06 打分：把文件名写在
lecture14/06_your_heuristic.py 后面。
想恢复讲义的原样：git checkout lecture14/expert_heuristic.py
（测试用的是 evolve/lecture_expert.py 里钉住的一份，改这个文件不会让和它
无关的测试失败）。

这个专家只分两档：
  decode（M ≤ 16）：16 行的小块、BN = 64、BK = 128、4 级流水线——
    在读权重，要很多 CTA 同时读。
  其余：128×128×64、4 个 warp、3 级流水线、group 8——常见的"万金油"配置。
"""

from kernel_lab import Config  # noqa: F401  （让这个文件也是合法的 Python）

# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    if M <= 16:
        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)
    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
# EVOLVE-BLOCK-END
