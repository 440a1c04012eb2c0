"""让测试能直接 import console、kernel_lab、sched_lab、evolve：把各讲的目录（从仓库根算出的绝对路径）放进 sys.path。"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for lecture in ("lecture01", "lecture10", "lecture13", "lecture14"):
    sys.path.insert(0, os.path.join(ROOT, lecture))
