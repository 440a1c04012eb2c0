"""kernel_lab.overflow_kinds：一个配置超了哪几种资源（不在网格上、寄存器、共享内存……）。
参考值照模块文档里的公式和 H100 上限逐个直接算，不调用 kernel_lab 的资源函数。"""

import itertools

import pytest

import kernel_lab
from kernel_lab import Config, can_launch, overflow_kinds

SMEM_LIMIT = kernel_lab.GPU.smem_per_block       # 每个 CTA 的共享内存上限，直接取 GPU 记录（H100 232,448 B）

GRID = ((16, 32, 64, 128, 256), (16, 32, 64, 128, 256), (32, 64, 128, 256), (2, 4, 8, 16), (1, 2, 3, 4),
        (1, 4, 8, 16))


def kinds_by_hand(BM, BN, BK, warps, stages, group):
    """参考实现：寄存器/线程 = BM·BN/(32·warps) + 40 ≤ 255，寄存器/CTA ≤ 65536，共享内存 = stages·(BM+BN)·BK·2 B
    ≤ 232,448，线程 = 32·warps ≤ 1024，每个 warp 的累加器 BM·BN/warps ≥ 256；字段不在候选值里就是不在网格上。"""
    regs = BM * BN // (32 * warps) + 40
    out = set()
    if any(v not in values for v, values in zip((BM, BN, BK, warps, stages, group), GRID)):
        out.add("不在网格上")
    if regs > 255:
        out.add("寄存器/线程")
    if regs * 32 * warps > 65536:
        out.add("寄存器/CTA")
    if stages * (BM + BN) * BK * 2 > SMEM_LIMIT:
        out.add("共享内存")
    if 32 * warps > 1024:
        out.add("线程/CTA")
    if BM * BN // warps < 256:
        out.add("warp 工作量")
    return out


def test_every_grid_config_reports_exactly_the_resources_it_overflows():
    # 全部 6400 个组合：超了的资源一个不多、一个不少；列表非空恰好当配置启动不了；网格上的没有"不在网格上"
    seen = set()
    for v in itertools.product(*GRID):
        got = overflow_kinds(Config(*v))
        assert len(got) == len(set(got)), (v, got)                     # 不重复
        assert set(got) == kinds_by_hand(*v), (v, got)
        assert bool(got) == (not can_launch(Config(*v))), (v, got)
        seen |= set(got)
    assert seen == {"寄存器/线程", "寄存器/CTA", "共享内存", "warp 工作量"}   # 网格上每种都出现过（线程数在网格上不会超）


@pytest.mark.h100_claim
def test_launchable_count_from_overflow_kinds_is_3744():
    # 没超任何资源的组合正好是第 14 讲说的 3744 个
    assert sum(not overflow_kinds(Config(*v)) for v in itertools.product(*GRID)) == 3744


# H100 上限下手算的例子（不是讲义的论断：助教报过 TESTS_GPU_CLAIMS=1 时 L40S 上它们被说成"讲义论断不成立"）；
# 换了 GPU，上面逐个组合对参考实现的那条照样跑
@pytest.mark.h100_only
@pytest.mark.parametrize("values, expected", [
    ((256, 128, 64, 4, 3, 8), {"寄存器/线程"}),                         # 256·128/128 + 40 = 296 > 255
    ((256, 128, 128, 8, 4, 8), {"共享内存"}),                          # 4 × 384 × 128 × 2 = 393,216 B
    ((256, 256, 32, 16, 1, 8), {"寄存器/CTA"}),                        # 168 × 512 = 86,016 > 65,536
    ((16, 32, 128, 4, 4, 1), {"warp 工作量"}),                          # 16·32/4 = 128 < 256
    ((256, 256, 256, 4, 4, 1), {"寄存器/线程", "寄存器/CTA", "共享内存"}),  # 552 个/线程、70,656 个/CTA、1 MB
    ((48, 128, 64, 4, 3, 8), {"不在网格上"}),                           # BM=48：资源都够，只是不在网格上
    ((128, 128, 64, 4, 3, 7), {"不在网格上"}),                          # group=7
    ((256, 128, 64, 4, 3, 7), {"不在网格上", "寄存器/线程"}),            # 两样都有
    ((256, 256, 64, 64, 1, 1), {"不在网格上", "寄存器/CTA", "线程/CTA"}),  # 64 warp = 2048 线程；72 × 2048 个寄存器
    ((128, 128, 64, 4, 3, 8), set()),                                   # 专家的默认配置：能启动
])
def test_examples(values, expected):
    """第 10 讲：手算的几个配置超了哪几种资源（256×128 配 4 个 warp 只超寄存器/线程……）。"""
    assert kinds_by_hand(*values) == expected                           # 参考实现自己先对上手算的例子
    assert set(overflow_kinds(Config(*values))) == expected


def test_off_grid_values_are_always_reported():
    # 每个字段换成一个不在候选值里的数（其余字段走遍网格的一部分）：都报"不在网格上"，其余资源照实报
    off = (48, 96, 48, 3, 5, 2)
    for k, v in enumerate(itertools.islice(itertools.product(*GRID), 0, None, 37)):
        field = k % 6
        w = v[:field] + (off[field],) + v[field + 1:]
        got = overflow_kinds(Config(*w))
        assert "不在网格上" in got and set(got) == kinds_by_hand(*w), (w, got)
