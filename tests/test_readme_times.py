"""README 里的用时来自 make bench：计时表里的每条命令正是 tests/bench.py 量的那些（SCRIPT_RUNS），写着量的机器；
脚本开头和"可以试试"不再各写一个估计的秒数（它们指向 README 的"计时"）。"""

import glob
import os
import re

from conftest import load_script, shipped_student_expert

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_times_are_the_commands_bench_measures():
    bench = load_script("tests/bench.py", "bench_mod")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme.split("## 计时")[1].split("\n## ")[0]
    assert "make bench" in section and "CPU 核" in section and "负载" in section
    rows = re.findall(r"^\| `([^`]+)`.*\| ([\d.]+) 秒", section, re.M)
    commands = {cmd for cmd, _ in rows}
    for args in bench.SCRIPT_RUNS:
        assert f"python3 {' '.join(args)}" in commands, args
    assert "make test" in section


def test_no_script_carries_its_own_time_estimate():
    # 学生报过：专家文件和 README 的"如何修改"一节说 04 "约 1 秒"，脚本表说 1.6 秒
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        how = f.read().split("## 如何修改专家启发式")[1].split("\n## ")[0]
    assert not re.search(r"约 ?\d+(\.\d+)? ?秒|不到 \d+ 秒", how)
    pinned = os.path.join(ROOT, "lecture14", "evolve", "lecture_expert.py")
    for path in glob.glob(os.path.join(ROOT, "lecture*", "[0-9][0-9]_*.py")) + [pinned]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert not re.search(r"约 ?\d+(\.\d+)? ?秒|不到 \d+ 秒", text), path
    # 学生的 expert_heuristic.py 查随仓库发的那份（学生存成 GBK 的不该让这个测试变红）
    assert not re.search(r"约 ?\d+(\.\d+)? ?秒|不到 \d+ 秒", shipped_student_expert())


def test_the_scripts_table_quotes_the_timing_tables_times():
    # 学生先看到的脚本表里的"用时"就是后面"计时"表里同一条命令（默认参数）的数
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    timing = dict(re.findall(r"^\| `python3 (lecture\d+/\d\d_[a-z_]+\.py)`(?:（[^）]*）)? \| ([\d.]+ 秒) \|",
                             readme.split("## 计时")[1].split("\n## ")[0], re.M))
    table = readme.split("## 脚本")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `(lecture\d+/\d\d_[a-z_]+\.py)[^`]*` \| .* \| ([\d.]+ 秒) \|$", table, re.M)
    # 07 要 OpenEvolve、一次一分钟上下，不在 make bench 里：它那一行的"约 N 秒"就是"更进一步"一节里量的那个数
    further = readme.split("## 更进一步")[1].split("\n## ")[0]
    rows07 = re.findall(r"^\| `(lecture14/07_openevolve\.py)` \| .* \| 约 (\d+) 秒（要 OpenEvolve；见\"更进一步\"） \|$", table, re.M)
    assert len(rows07) == 1 and re.search(rf"07 默认约 {rows07[0][1]} 秒", further), rows07
    scripts = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "lecture*", "[0-9][0-9]_*.py")))
    assert sorted([path for path, _ in rows] + [rows07[0][0]]) == scripts
    for path, time in rows:
        assert timing[path] == time, path
