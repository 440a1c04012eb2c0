"""04 prints how many programs were fully evaluated twice: demo 2's dead-rule observation and demo 4's cost table.
They count different things (demo 2: every distinct program in the cache, the starting expert included; demo 4: the
proposals that went to a full evaluation), so the one that includes the start must say so. Seen before: "完整评估过的
568 个不同的程序" next to "在全部训练形状上评估 567 个程序" with nothing to tell them apart."""
import re

from conftest import run_script

COMMAND = ("lecture14/04_alphaevolve_tiling.py", "--budget", "60", "--seeds", "1", "--jobs", "1")
PREFETCH = [COMMAND]                  # conftest：收集完测试后在后台先跑


def test_full_evaluation_counts_agree_or_say_why():
    r = run_script(*COMMAND, timeout=120)
    assert r.returncode == 0, r.stderr
    flat = re.sub(r"\s+", "", r.stdout)                                 # undo the wrapping
    demo2 = re.search(r"完整评估过的([\d,]+)个不同的程序（起点，加上演示4成本表里\"在全部训练形状上评估\"的([\d,]+)个）", flat)
    demo4 = re.search(r"在全部训练形状上评估\s+([\d,]+) 个程序", r.stdout)
    assert demo2 and demo4, r.stdout
    n2, named, n4 = (int(x.replace(",", "")) for x in (demo2.group(1), demo2.group(2), demo4.group(1)))
    assert n2 == n4 + 1 and named == n4                   # the cache holds the starting program too, and it says so
