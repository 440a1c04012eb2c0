"""README 说 MockLLM 有几种修改的两处（脚本表 02 那行的"六种修改"、"数字是什么"的"六种模板化的修改（targeted、……）"）
和 evolve/mock_llm.py 开头的列表，跟着 mock_llm.OPS。README 的"改编这门课"让加修改种类的助教改这三处。
助教报过：照 README 加了一种修改（stages：流水线级数加一级或减一级），02、04、05 和整套测试都照常，README 还说"六种"、
模块开头的列表也没有它——和 GPU 的那句（tests/test_readme_gpus.py）一样，没有一个测试提醒他改。"""

import os
import re

import evolve.mock_llm as mock_llm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMERALS = dict(zip("一二三四五六七八九十", range(1, 11)))


def readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def count(word: str) -> int:
    return int(word) if word.isdigit() else NUMERALS[word]


def stale(readme_text: str, module_doc: str, ops) -> list[str]:
    """三处里和 ops 对不上的，每处一句（空的就是都对得上）。"""
    out = []
    row = next((line for line in readme_text.splitlines() if line.startswith("| `lecture14/02_llm_proposal.py`")), "")
    said = re.search(r"([一二三四五六七八九十]|\d+) ?种修改", row)
    if not said or count(said[1]) != len(ops):
        shown = said[0] if said else "（找不到“几种修改”）"
        out.append(f"README 脚本表 02 那行说的是 {shown}，OPS 有 {len(ops)} 种")
    said = re.search(r"([一二三四五六七八九十]|\d+) ?种模板化的修改（([^）]*)）", readme_text)
    if not said or count(said[1]) != len(ops) or said[2].split("、") != list(ops):
        shown = said[0] if said else "（找不到“几种模板化的修改（…）”）"
        out.append(f"README“数字是什么”说的是 {shown}，OPS 是 {'、'.join(ops)}")
    listed = re.findall(r"^  ([a-z_]+) {2,}\S", module_doc, re.M)
    if listed != list(ops):
        out.append(f"lecture14/evolve/mock_llm.py 开头的列表是 {'、'.join(listed)}，OPS 是 {'、'.join(ops)}")
    return out


def test_readme_and_the_module_docstring_name_every_edit_kind():
    problems = stale(readme(), mock_llm.__doc__, mock_llm.OPS)
    assert not problems, "加了或去掉一种修改，这几处要跟着改（README 的\"改编这门课\"）：" + "；".join(problems)


def test_a_kind_added_only_in_the_code_is_caught():
    """助教做的那样：OPS 多一种，README 和模块开头没改——三处都被点名。"""
    problems = stale(readme(), mock_llm.__doc__, (*mock_llm.OPS, "stages"))
    assert len(problems) == 3 and all("stages" in p or f"有 {len(mock_llm.OPS) + 1} 种" in p for p in problems), problems
