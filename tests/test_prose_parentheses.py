"""The printed sentences never stack full-width parentheses: "（5%）（26% 的…）" or "（…（…））" read as noise in
Chinese prose (a reader loses which remark belongs to which number). Seen before: 05 "36/765（5%）（26% 的 single_field
提议…）", lecture13/01 "启动不了（kernel_lab：…（…））", 02 "本次不成立"（…（1%）…（29%））". A sentence that needs a
second remark uses "：", "；" or "——" instead. Checked on every numbered script's default run (tables are skipped: their
cells sit side by side)."""
import re

import pytest

from conftest import run_script
from test_prose_width import is_prose

SCRIPTS = ["lecture10/01_config_space.py", "lecture13/01_timing_model.py",
           *(f"lecture14/{name}" for name in ("01_heuristic_as_code.py", "02_llm_proposal.py", "03_cascade_and_database.py",
                                               "04_alphaevolve_tiling.py", "05_ablations.py", "06_your_heuristic.py"))]
PREFETCH = [(script,) for script in SCRIPTS]                   # conftest：后台先跑（和别的测试共用同一次默认运行）


def stacked(text: str) -> list[str]:
    """"）（" 或嵌套的 "（…（…））" 出现的地方（前后各带十几个字）；段落（¶ 隔开）各自数。整段都在括号里的
    （表格下面的"（错杀 = ……）"那种说明）外面那一对不算。"""
    return [hit for part in text.split("¶") for hit in _stacked(part[1:-1] if _wrapped(part) else part)]


def _wrapped(part: str) -> bool:
    """整段是一对括号括起来的（开头的"（"和结尾的"）"配对）。"""
    if not (part.startswith("（") and part.endswith("）")):
        return False
    depth = 0
    for i, ch in enumerate(part):
        depth += (ch == "（") - (ch == "）")
        if depth == 0:
            return i == len(part) - 1
    return False


def _stacked(text: str) -> list[str]:
    hits, depth = [], 0
    for i, ch in enumerate(text):
        if ch == "（":
            depth += 1
            if depth == 2 or text[i - 1:i] == "）":
                hits.append(text[max(0, i - 15):i + 15])
        elif ch == "）":
            depth = max(0, depth - 1)
    return hits


def test_stacked_finds_both_forms():
    assert stacked("成功率 36/765（5%）（26% 的提议）") and stacked("启动不了（kernel_lab：寄存器（256×128））")
    assert stacked("比父程序好（1%），启动不了（29%）：") == [] == stacked("（错杀 = 被淘汰的（探针）子程序）")
    assert stacked("（错杀（探针））¶说明：成功率（5%）（26%）")


@pytest.mark.parametrize("script", SCRIPTS)
def test_default_run_prose_has_no_stacked_parentheses(script):
    r = run_script(script, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not stacked(paragraphs(r.stdout)), \
        f"{script} 的句子里括号叠着：{stacked(paragraphs(r.stdout))}（第二句说明改用：、；或——）"


def paragraphs(out: str) -> str:
    """印出来的句子接回折行以前的样子，段和段之间隔一个 ¶；表格行不要。一行以"。"、"）"、"："、"！"结尾，或者下一行
    是编号的一条（"  2. "），下一行就是新的一段；否则下一行是它的续行。"""
    text, more = "", False
    for line in out.splitlines():
        if not is_prose(line):
            text, more = text + "¶", False
            continue
        body = re.sub(r"\s+", "", line)
        text += ("" if more and not re.match(r"\s*\d+\. ", line) else "¶") + body
        more = not body.endswith(("。", "）", "：", "！"))
    return text
