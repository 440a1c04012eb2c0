"""
第 13、14 讲共用的 GEMM 形状：Llama-3 8B 一层的四个投影，和 Llama-3 70B 按 8 路张量并行切开后一层的四个投影。

投影 (N, K)，C[M, N] = A[M, K] · B[K, N]，M 是 token 数：
    qkv: N = (Hq + 2·Hkv)·128, K = hidden    o: N = hidden, K = Hq·128
    gate_up: N = 2·intermediate, K = hidden   down: N = hidden, K = intermediate
8B：hidden 4096、intermediate 14336、Hq 32、Hkv 8；70B：hidden 8192、intermediate 28672、Hq 64、Hkv 8。
8 路张量并行切 qkv、gate_up 的 N，切 o、down 的 K。
"""

LAYERS: dict[str, tuple[int, int]] = {
    "8B qkv": ((32 + 2 * 8) * 128, 4096),
    "8B o": (4096, 32 * 128),
    "8B gate_up": (2 * 14336, 4096),
    "8B down": (4096, 14336),
    "70B/8 qkv": ((64 + 2 * 8) * 128 // 8, 8192),
    "70B/8 o": (8192, 64 * 128 // 8),
    "70B/8 gate_up": (2 * 28672 // 8, 8192),
    "70B/8 down": (8192, 28672 // 8),
}
TOKENS: tuple[int, ...] = (1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)   # decode 的批大小到 prefill 的 token 数
