"""让测试能直接 import console、kernel_lab、sched_lab、evolve：把各讲的目录（从仓库根算出的绝对路径）放进 sys.path。
还有几个测试文件共用的 fixture：时间表、默认划分的训练形状。"""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for lecture in ("lecture01", "lecture10", "lecture13", "lecture14"):
    sys.path.insert(0, os.path.join(ROOT, lecture))


@pytest.fixture(scope="session")
def table():
    """一张时间表（按形状缓存），整个测试会话共用。"""
    from evolve import TimeTable
    return TimeTable()


@pytest.fixture(scope="session")
def train():
    """默认的配对随机划分的训练形状。"""
    from evolve import all_shapes, split_shapes
    return split_shapes(all_shapes())[0]
