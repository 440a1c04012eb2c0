"""整个仓库的 import 关系（静态地读源代码，用 ast，不 import 任何东西）：没有环；课程模块不从别的文件 import 私有名字
（下划线开头的）。README 说的依赖方向（evolve → sched_lab → kernel_lab，console 单独）在各个文件夹里面也成立。

模块名和运行时一样：lecture01/10/13/14 在 sys.path 上（console、runner、svg、kernel_lab、sched_lab、llama_shapes、
evolve 包），lecture14/openevolve 也在（run_openevolve.py、07 放上它：oe_settings、oe_child……），tests/ 里的文件按
文件名（conftest、printed……）。函数里面的 import 也算（它也是依赖，只是晚一点才发生）；
import 一个包里的模块（evolve.program）时 Python 先跑包的 __init__，那不算一条边，不然包里每个模块都"成环"了。"""
import ast
import functools
import os
import sys

import pytest

from conftest import ROOT, STUDENT_EXPERT


def students_files() -> set[str]:
    """学生的文件：lecture14/expert_heuristic.py（它是启发式 DSL 的数据，学生可能正改到一半、存成 GBK）和 git 不管的
    .py（学生自己存的 my_heuristic.py 之类）。不在 import 关系里：学生改坏了它们，这些测试不该变红（学生报过：
    expert_heuristic.py 少了一个冒号，make test 里十个 import 关系的测试都是 SyntaxError）。不是 git 仓库时只有前者。"""
    import subprocess
    out = {os.path.realpath(STUDENT_EXPERT)}
    try:
        listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z", "--", *FOLDERS],
                                cwd=ROOT, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return out
    if listed.returncode == 0:
        out |= {os.path.realpath(os.path.join(ROOT, f)) for f in listed.stdout.decode(errors="replace").split("\0") if f}
    return out

FOLDERS = ("lecture01", "lecture10", "lecture13", "lecture14", "tests")
ON_PATH = (os.path.join("lecture14", "openevolve"),)      # 文件夹里面也在 sys.path 上的目录：里面的文件按文件名


def modules() -> dict:
    """{模块名: 文件路径}：各文件夹里的 .py（包里的按 包.模块 命名，包本身是它的 __init__.py）。"""
    out, skip = {}, students_files()
    for folder in FOLDERS:
        base = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            package = os.path.relpath(dirpath, base).replace(os.sep, ".")
            if os.path.relpath(dirpath, ROOT) in ON_PATH:
                package = "."
            for f in sorted(filenames):
                if not f.endswith(".py") or os.path.realpath(os.path.join(dirpath, f)) in skip:
                    continue
                name = f[:-3]
                if package != ".":
                    name = package if name == "__init__" else f"{package}.{name}"
                out.setdefault(name, os.path.join(dirpath, f))
    return out


def imports(name: str, path: str, known: dict) -> list[tuple[str, list[str], int]]:
    """文件里的每一条 import：(被 import 的本仓库模块, import 的名字, 行号)。标准库和 numpy 不算。"""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_package = path.endswith("__init__.py")
    here = name if is_package else name.rpartition(".")[0]          # 相对 import 从哪个包算起
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in known:
                    out.append((a.name, [], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = here.split(".") if here else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module
            names = [a.name for a in node.names]
            for n in names:                                         # from evolve import openai_llm：那是一个模块
                if f"{target}.{n}" in known:
                    out.append((f"{target}.{n}", [], node.lineno))
            rest = [n for n in names if f"{target}.{n}" not in known]
            if target in known and rest:                            # 只 import 子模块时，包本身不算一条边
                out.append((target, rest, node.lineno))
    return out


def graph() -> dict:
    return _graph(ROOT)


@functools.lru_cache(maxsize=None)
def _graph(root) -> dict:                                           # 读一遍整个仓库约一秒：几个测试共用
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(g: dict) -> list[list[str]]:
    """图里的环（每个强连通分量给出一个环上的模块，按名字排好）。Tarjan，不递归。"""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted({t for t, _, _ in g[root]})))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted({t for t, _, _ in g.get(w, ())}))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or any(t == v for t, _, _ in g.get(v, ())):
                        out.append(sorted(comp))
    return out


def folder_of(name: str, g_paths: dict) -> str:
    return os.path.relpath(g_paths[name], ROOT).split(os.sep)[0]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_import_cycle(folder):
    paths = modules()
    found = [c for c in cycles(graph()) if any(folder_of(m, paths) == folder for m in c)]
    assert found == [], f"import 成环：{found}"


@pytest.mark.parametrize("folder", [f for f in FOLDERS if f != "tests"])
def test_no_private_name_imported_from_another_file(folder):
    # 课程模块之间只用公开的名字（测试为了测内部，可以 import 被测模块的私有函数）
    paths = modules()
    bad = [(name, target, n, line) for name, edges in graph().items() if folder_of(name, paths) == folder
           for target, names, line in edges for n in names if n.startswith("_") and not n.startswith("__")]
    assert bad == [], f"从别的文件 import 私有名字：{bad}"


def test_the_checker_finds_a_cycle_and_a_private_import(tmp_path, monkeypatch):
    # 检查本身会失败：两个互相 import 的文件是一个环；从别的文件拿 _x 会被找出来
    assert cycles({"a": [("b", [], 1)], "b": [("a", ["_x"], 1)], "c": [("a", [], 1)]}) == [["a", "b"]]
    assert cycles({"a": [("a", [], 1)]}) == [["a"]]
    pkg = tmp_path / "lecture14" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .one import x\n")
    (pkg / "one.py").write_text("def f():\n    from .two import _y\nx = 1\n")
    (pkg / "two.py").write_text("from pkg import one\n_y = 2\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    known = modules()
    assert set(known) >= {"pkg", "pkg.one", "pkg.two"}
    g = graph()
    assert ("pkg.two", ["_y"], 2) in g["pkg.one"] and ("pkg.one", [], 1) in g["pkg.two"]
    assert cycles(g) == [["pkg.one", "pkg.two"]]


def test_the_lecture_dependencies_point_one_way():
    # README 的图：evolve → sched_lab → kernel_lab；第 1 讲的 console、runner、svg、layout 不 import 别的讲
    g = graph()
    lecture01 = ("console", "svg", "runner", "layout")
    assert not {t for t, _, _ in g["kernel_lab"]} & {"sched_lab", "evolve", "console"}
    assert not {t for t, _, _ in g["sched_lab"]} & {"evolve", "console"}
    for m in lecture01:
        assert all(t in lecture01 for t, _, _ in g[m]), (m, g[m])
    # 以前 console 写 SVG 时 import svg，svg 又从 console import _Axis、_check 等：两个文件互相依赖、又都靠对方的私有
    # 细节。两者都要的（显示宽度、折行、坐标轴、热力图分档）现在在 layout.py 里，箭头都从那里出发
    assert {"layout"} <= {t for t, _, _ in g["svg"]} and "console" not in {t for t, _, _ in g["svg"]}
    # DSL：解析器（source）import 类型和界（program），反过来不
    assert "evolve.program" in {t for t, _, _ in g["evolve.source"]}
    assert "evolve.source" not in {t for t, _, _ in g["evolve.program"]}



def test_the_openai_llm_files_import_only_the_files_listed_before_them():
    """evolve/openai_llm/ 的 __init__.py 开头按依赖的顺序列出它的文件（助教照它找每一部分）：每个文件只 import 列在它
    前面的。新加的 import 让箭头朝上走时，这里说是哪个文件 import 了哪个（再往上挪它，或者把共用的东西挪到下面）。"""
    import re
    g = graph()
    init = os.path.join(ROOT, "lecture14", "evolve", "openai_llm", "__init__.py")
    with open(init, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read()))
    order = [f"evolve.openai_llm.{m}" for m in re.findall(r"^  (\w+)\.py ", doc, re.M)]
    files = {n for n in modules() if n.startswith("evolve.openai_llm.") and n != "evolve.openai_llm.__main__"}
    assert set(order) == files, set(order) ^ files                       # 地图里每个文件都在，没有多的
    upward = [(m, t, line) for i, m in enumerate(order) for t, _, line in g[m]
              if t.startswith("evolve.openai_llm.") and t not in order[:i]]
    assert upward == [], f"import 了列在后面的文件（文件, 被 import 的, 行号）：{upward}"

def test_the_students_file_is_not_read_as_a_module():
    """学生报过：expert_heuristic.py 少了一个冒号（或者存成了 GBK），make test 里这里的十个测试都变红。学生的文件是
    启发式 DSL 的数据，不在 import 关系里；git 不管的 .py（学生自己存的拷贝）也不在。"""
    assert os.path.realpath(STUDENT_EXPERT) in students_files()
    assert os.path.realpath(STUDENT_EXPERT) not in {os.path.realpath(p) for p in modules().values()}
    assert "evolve.lecture_expert" in modules()                       # 钉住的讲义专家还在（它是项目的一部分）
