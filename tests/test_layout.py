"""仓库的顶层就是设计里的那几样：lecture14、lecture13、lecture10、lecture01、README.md、Makefile、tests，加上两条命令
要用的 .ci/、requirements*.txt、pytest.ini、.gitignore。计时（make bench）在 tests/bench.py，pytest 不收集它。"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

DESIGN = {"lecture14", "lecture13", "lecture10", "lecture01", "README.md", "Makefile", "tests",
          ".ci", "requirements.txt", "requirements-dev.txt", "requirements-openevolve.txt", "pytest.ini", ".gitignore"}


def tracked_top_level():
    """git 管着的文件的第一级名字（学生自己放在根目录的 my_heuristic.py 之类不算）；不是 git 仓库时是 None。"""
    if shutil.which("git") is None:
        return None
    p = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or not p.stdout:
        return None
    return {line.split("/", 1)[0] for line in p.stdout.splitlines()}


def test_top_level_is_the_designs():
    top = tracked_top_level()
    if top is None:
        pytest.skip("不是 git 仓库（没法分清哪些是项目的文件）")
    assert top == DESIGN, top ^ DESIGN


def test_make_bench_runs_tests_bench_which_pytest_does_not_collect():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    recipe = re.search(r"^bench:.*\n\t(.*)$", makefile, re.M).group(1)
    assert recipe.split()[1] == "tests/bench.py" and os.path.isfile(os.path.join(ROOT, "tests", "bench.py"))
    assert not re.match(r"test_.*\.py$|.*_test\.py$", "bench.py")          # pytest 默认收集的文件名
    with open(os.path.join(ROOT, "pytest.ini"), encoding="utf-8") as f:
        assert "python_files" not in f.read()                               # 没有改过收集哪些文件


def test_the_test_machinery_is_explained_in_conftests_docstring():
    # 维护测试的人从 conftest.py 开头的一段读懂整个机器：每个调试开关（TESTS_... 环境变量）、每个帮手文件都在那里
    import ast
    with open(os.path.join(ROOT, "tests", "conftest.py"), encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read()))
    switches = set()
    for name in ("conftest.py", "zygote.py", "reaper.py"):
        with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
            switches |= set(re.findall(r"""environ(?:\.get\(|\[)["'](TESTS_[A-Z_]+)""", f.read()))
    assert {"TESTS_NO_PREFETCH", "TESTS_NO_ZYGOTE"} <= switches
    for s in sorted(switches) + ["tests/zygote.py", "tests/reaper.py", "PREFETCH", "@ahead", "quiet", "stop_group",
                                 "TESTS_SESSION", "test_no_process_left.py"]:
        assert s in doc, s
    assert len(doc.splitlines()) <= 60                                      # 一屏左右
