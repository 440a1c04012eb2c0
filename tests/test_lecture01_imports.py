"""lecture01 的几个模块之间的依赖只有一个方向：没有 import 环（函数里面的 import 也算），也没有哪个文件从另一个文件
import 下划线开头的私有名字。以前 console 写 SVG 时 import svg，svg 又从 console import _Axis、_check 等：两个文件互相
依赖、又都靠对方的私有细节。两者都要的（显示宽度、折行、坐标轴、热力图分档）现在在 layout.py 里，箭头都从那里出发。"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "lecture01")
MODULES = sorted(f[:-3] for f in os.listdir(LIB) if f.endswith(".py"))


def imports(path: str):
    """文件里每一条 import（包括函数里面的）：(模块名, [import 进来的名字]；import 整个模块时是 [])。"""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, [alias.name for alias in node.names]


def graph() -> dict[str, set[str]]:
    return {m: {name for name, _ in imports(os.path.join(LIB, m + ".py")) if name in MODULES and name != m}
            for m in MODULES}


def test_lecture01_has_no_import_cycle():
    edges = graph()
    assert edges["svg"] and "console" not in edges["svg"]              # svg 不再 import console
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", " → ".join(path + [m])          # 回到了还没走完的模块：有环
        state[m] = "open"
        for n in sorted(edges[m]):
            visit(n, path + [m])
        state[m] = "done"
    for m in MODULES:
        visit(m, [])


def test_no_file_imports_a_private_name_from_lecture01():
    found = []
    for d in sorted(os.listdir(ROOT)):
        if not d.startswith("lecture") or not os.path.isdir(os.path.join(ROOT, d)):
            continue
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(base, f)
                    found += [(os.path.relpath(path, ROOT), module, name) for module, names in imports(path)
                              for name in names if module in MODULES and name.startswith("_")]
    assert found == []
