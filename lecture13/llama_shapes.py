"""
第 13、14 讲共用的 GEMM 形状：Llama-3 8B 一层的四个投影，和 Llama-3 70B 按 8 路张量并行切开后一层的四个投影。

投影 (N, K)，C[M, N] = A[M, K] · B[K, N]，M 是 token 数：
    qkv: N = (Hq + 2·Hkv)·128, K = hidden    o: N = hidden, K = Hq·128
    gate_up: N = 2·intermediate, K = hidden   down: N = hidden, K = intermediate
8B：hidden 4096、intermediate 14336、Hq 32、Hkv 8；70B：hidden 8192、intermediate 28672、Hq 64、Hkv 8。
8 路张量并行切 qkv、gate_up 的 N，切 o、down 的 K。

形状是数据：加一个模型，就在 PROJECTIONS 里加它的四行（model 是它属于哪个模型，按模型划分时用它，不看名字）。
第 14 讲的训练 / 测试划分按 N 自动给投影配对（evolve/problem.py 的 pair_projections，规则写在那里）；
投影数是奇数、有一个配不上对时，划分会拒绝并点名它。印出来的形状数、投影数都从这里数，不写字面量。
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Projection:
    model: str                     # 属于哪个模型（"8B"、"70B/8"）：按模型划分训练 / 测试时用
    kind: str                      # qkv、o、gate_up、down
    N: int
    K: int

    @property
    def name(self) -> str:
        return f"{self.model} {self.kind}"


PROJECTIONS: tuple[Projection, ...] = (
    Projection("8B", "qkv", (32 + 2 * 8) * 128, 4096),
    Projection("8B", "o", 4096, 32 * 128),
    Projection("8B", "gate_up", 2 * 14336, 4096),
    Projection("8B", "down", 4096, 14336),
    Projection("70B/8", "qkv", (64 + 2 * 8) * 128 // 8, 8192),
    Projection("70B/8", "o", 8192, 64 * 128 // 8),
    Projection("70B/8", "gate_up", 2 * 28672 // 8, 8192),
    Projection("70B/8", "down", 8192, 28672 // 8),
)
LAYERS: dict[str, tuple[int, int]] = {p.name: (p.N, p.K) for p in PROJECTIONS}     # 名字 → (N, K)
MODEL_OF: dict[str, str] = {p.name: p.model for p in PROJECTIONS}                  # 名字 → 模型
MODELS: tuple[str, ...] = tuple(dict.fromkeys(p.model for p in PROJECTIONS))      # 模型，按出现的顺序
# 每个模型是什么（04 演示 1 的说明印它）：加了模型，在这里加一句
ABOUT: dict[str, str] = {
    "8B": "Llama-3 8B 一层的四个矩阵乘法",
    "70B/8": "Llama-3 70B 按 8 路张量并行切开以后，一张卡上那一份的四个矩阵乘法（N 或 K 是整层的 1/8）",
}
TOKENS: tuple[int, ...] = (1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)   # decode 的批大小到 prefill 的 token 数
