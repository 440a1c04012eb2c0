# The lecture-14 problem for OpenEvolve: choose_config(M, N, K) picks the tiling of a bf16 GEMM on an H100-style
# analytic model. This file is only PARSED (lecture14/evolve.parse), never imported or executed. Allowed inside the
# block: rules `if M <= 64 and N <= 4096: return Config(...)` (conditions are `<=`/`<` on M, N, K joined by `and`),
# then one unconditional `return Config(BM=, BN=, BK=, warps=, stages=, group=)` with values from the grid in
# lecture10/kernel_lab.py. Score: geometric-mean speedup over the expert (below) on the training shapes. make openevolve
# and 07 start OpenEvolve from a copy whose block is the run's expert (lecture14/expert_heuristic.py, as edited).
# EVOLVE-BLOCK-START
def choose_config(M, N, K):
    if M <= 16:
        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)
    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)
# EVOLVE-BLOCK-END
