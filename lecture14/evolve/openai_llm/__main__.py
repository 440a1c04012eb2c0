"""PYTHONPATH=lecture14 python -m evolve.openai_llm：只印出系统提示。README 的"用真的语言模型"教的是在仓库根目录
运行 python3 lecture14/02_llm_proposal.py --system-prompt（印的是同一段；没有 numpy 的 python3 也行）。"""

import os
import sys

from .prompt import SYSTEM_PROMPT

if __name__ == "__main__":                              # 印出系统提示
    try:
        print(SYSTEM_PROMPT, flush=True)
    except BrokenPipeError:                             # ... | head -3：读的那头先关了，不印 traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
