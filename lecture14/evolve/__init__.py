"""
第 14 讲 · evolve —— 迷你 AlphaEvolve 的引擎。讲义的 04 脚本从 evolve 导入的名字都在这里（再加几个演示脚本常用的：
Config、parse、per_m_table、ProgramError）；更细的东西从各自的文件里导入。每一部分一个文件：
  problem.py    形状、划分、时间表和逐形状最优、专家启发式、基线和加速比
  program.py    启发式的 DSL：类型和界（Rule / Program、MAX_THRESHOLD……）、choose、render、simplify / equivalent、dead_rules、removed_lines、unreachable_lines、empty_lines
  source.py     源代码 -> 程序：parse、ProgramError（学生写错时的那一句话）；只往 program.py 依赖，反过来不
  diff.py       SEARCH/REPLACE 修改：format_diff / parse_diff / apply_diff / make_diff、DiffError（带 kind）
  mock_llm.py   提示词进去、SEARCH/REPLACE 出来的 MockLLM（没有真的语言模型）
  openai_llm/   同样的接口换成真的语言模型（OpenAI 兼容接口；04、05 的 --llm），录制和回放、成本账；
                一部分一个文件（client、wire、recording、replay、cli……），地图在它的 __init__.py 开头
  evaluator.py  静态检查、探针级联、缓存、计数器
  loop.py       岛屿模型的程序库和进化循环（Evolution：分段跑、拍快照）
"""

import os as _os
import sys as _sys

_ROOT = _os.path.normpath(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", ".."))
for _d in ("lecture13", "lecture10"):                  # evolve → sched_lab → kernel_lab，依赖只往下走
    _p = _os.path.join(_ROOT, _d)
    if _p not in _sys.path:
        _sys.path.insert(0, _p)

from kernel_lab import VALID, Config  # noqa: E402

from .evaluator import Evaluator  # noqa: E402
from .loop import evolve  # noqa: E402
from .mock_llm import MockLLM  # noqa: E402          # 讲义和各脚本开头说的 evolve.MockLLM（文档审读报过：以前没导出）
from .problem import (EXPERT, LAYERS, TOKENS, Shape, TimeTable, all_shapes, best_single_config,  # noqa: E402
                      geomean_speedup, oracle_speedup, per_m_table, split_shapes)
from .program import Program, Rule, choose, format_diff, render, simplify  # noqa: E402
from .source import ProgramError, parse  # noqa: E402

__all__ = ["EXPERT", "LAYERS", "TOKENS", "VALID", "Config", "Evaluator", "MockLLM", "Program", "ProgramError", "Rule", "Shape",
           "TimeTable", "all_shapes", "best_single_config", "choose", "evolve", "format_diff", "geomean_speedup",
           "oracle_speedup", "parse", "per_m_table", "render", "simplify", "split_shapes"]
