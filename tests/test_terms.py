"""学生第一次碰到的词就地解释：70B/8、配对随机对半分、探针形状、修改种类表的每一种（mistake 不是一种修改、
它的失败记在哪里）；列名说清是什么：占最优的是加速比之比、成功率的分母、演示 4 分开程序和内核运行、05 的中位数。"""

import os
import re

from conftest import prefetch, run_script
from printed import find_table

from evolve.mock_llm import OPS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    p = run_script(script, *args)                    # conftest：同样的命令整个测试会话只跑一次
    assert p.returncode == 0, p.stderr
    return p.stdout


COMMANDS = (("lecture14/04_alphaevolve_tiling.py", "--budget", "100", "--seeds", "2"),
            ("lecture14/04_alphaevolve_tiling.py", "--budget", "100", "--seeds", "2", "--jobs", "1"),
            ("lecture14/05_ablations.py", "--budget", "40", "--seeds", "1"))
# conftest：收集完测试后在后台先跑
PREFETCH = [("lecture14/04_alphaevolve_tiling.py", "--budget", "300", "--seeds", "1"),
            ("lecture14/05_ablations.py", "--budget", "120", "--seeds", "1"), *COMMANDS]


def test_04_explains_terms_where_they_are_first_met():
    out = run("lecture14/04_alphaevolve_tiling.py", "--budget", "300", "--seeds", "1")
    flat = re.sub(r"\s+", "", out)
    demo1 = flat.split("演示2：")[0]
    assert "70B/8是" in demo1 and flat.index("70B/8是") < flat.index("70B/8qkvM=128")
    assert "配对随机对半分（" in demo1 and "对角线" in demo1
    assert "两个加速比之比" in demo1 and "条规则加一个默认" in demo1
    # 修改种类表：表里出现的每一种都在表下的图例里；mistake 说明不是一种修改、失败记在哪里
    demo2 = out.split("演示 2：")[1].split("演示 3：")[0]
    table = demo2.split("修改的种类")[1].split("\n\n")[0]
    ops = [line.split()[0] for line in table.splitlines()[2:] if line.strip() and not line.startswith("（")]
    legend = re.sub(r"\s+", "", demo2.split("（修改的种类")[1].split("）\n")[0])
    missing = [op for op in sorted(set(ops) | set(OPS)) if op not in legend]
    assert ops and not missing, f"04 演示 2 的修改种类表下面那段说明没有解释：{missing}（加了修改种类要在那里加一句）"
    assert "mistake不是一种修改" in legend and "演示4" in legend
    assert "成功率（比父程序好÷提出）" in flat
    demo4 = out.split("演示 4：")[1]
    assert "个程序" in demo4 and "次内核" in demo4 and "探针形状：" in re.sub(r"\s+", "", demo4)


def test_02_explains_every_edit_kind_under_its_table():
    """02 演示 2 的"各 200 次"表下面，每一种修改（mock_llm.OPS）各有一句说明：加了修改种类的助教在这里知道要补哪句。"""
    out = run("lecture14/02_llm_proposal.py")
    demo2 = out.split("演示 2：")[1].split("演示 3：")[0]
    note = re.sub(r"\s+", "", demo2.split("（各 200 次）")[1].split("观察：")[0])
    missing = [op for op in OPS if f"{op}：" not in note]
    assert not missing, f"02 演示 2 的表下面那段说明没有解释：{missing}（加了修改种类要在那里加一句）"


def zh_count(n: int) -> str:
    """0–99 写成汉字：6 → 六，11 → 十一，20 → 二十，36 → 三十六。"""
    digits = "零一二三四五六七八九"
    if n <= 10:
        return (digits + "十")[n]
    tens, ones = divmod(n, 10)
    return (digits[tens] if tens > 1 else "") + "十" + (digits[ones] if ones else "")


def test_zh_count():
    assert [zh_count(n) for n in (0, 6, 10, 11, 19, 20, 36, 99)] == ["零", "六", "十", "十一", "十九", "二十", "三十六", "九十九"]


def test_readme_counts_the_edit_kinds():
    """README 说 MockLLM 有几种修改的每一处（脚本表、"数字是什么"）都和 mock_llm.OPS 一样多（助教报过：加到第 11 种时
    这个测试自己出了 IndexError，脚本表里的"六种"也没人查）。"""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    said = zh_count(len(OPS)) + "种模板化的修改（" + "、".join(OPS) + "）"
    assert said in text, f"README 里 MockLLM 的修改种类要写成：{said}"
    counts = re.findall(r"(?<![\u4e00-\u9fff])([零一二三四五六七八九十]+)种(?:模板化的)?修改", text)   # "解释一种修改"不算
    assert len(counts) >= 2 and set(counts) == {zh_count(len(OPS))}, \
        f"README 里说修改有几种的地方要都写{zh_count(len(OPS))}种（mock_llm.OPS 有 {len(OPS)} 种），现在写的是：{counts}"


def test_05_labels_medians_and_denominators():
    out = run("lecture14/05_ablations.py", "--budget", "120", "--seeds", "1")
    numeric = find_table(out, "变体", "训练形状").headers[1:]      # 表头可能折成了几行：按列拼回去再看
    assert numeric and all("中位数" in h for h in numeric), numeric
    assert "成功率（比父程序好 ÷ 提出）" in out


def test_progress_goes_to_stderr_and_stdout_stays_the_same():
    prefetch(*COMMANDS)                                         # 三个同时跑（各是独立的子进程）
    a, b, c = (run_script(*c) for c in COMMANDS)
    assert a.returncode == b.returncode == 0
    body = lambda out: out.split("\n", 1)[1]                 # noqa: E731  第一行印着 --jobs，其余逐字节相同
    assert body(a.stdout) == body(b.stdout) and "提议：最好" not in a.stdout
    for err in (a.stderr, b.stderr):
        assert re.search(r"演示 2：第\s+\d+ 个提议", err) and re.search(r"演示 3：\d+ 次进化做完了 \d+ 次", err), err
    assert c.returncode == 0 and re.search(r"\d+/\d+ 次进化跑完", c.stderr), c.stderr
