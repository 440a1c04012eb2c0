"""A failed observation reads as two sentences: the criterion, then "这次：" and the measured value.
A criterion that ends in a parenthetical (…（中位数）) still needs its full stop before "这次：";
one whose parenthetical already ends the sentence (…。）) does not get a second one."""
from console import FAILED, check


def test_criterion_ending_in_parenthesis_gets_its_full_stop():
    text = str(check(False, "成立时的话", "讲义说相差不到 3%（中位数）", "相差 4.3%"))
    assert text == f"{FAILED}讲义说相差不到 3%（中位数）。这次：相差 4.3%。"


def test_sentence_already_closed_inside_parenthesis_is_not_doubled():
    text = str(check(False, "", "讲义说 X（见上表。）", "Y。"))
    assert text == f"{FAILED}讲义说 X（见上表。）这次：Y。"


def test_plain_criterion_and_finished_sentences():
    assert str(check(False, "", "讲义说 X", "Y")) == f"{FAILED}讲义说 X。这次：Y。"
    assert str(check(False, "", "讲义说 X！", "Y？")) == f"{FAILED}讲义说 X！这次：Y？"
    assert str(check(True, "成立时的话。", "讲义说 X", "Y")) == "成立时的话。"


def test_a_criterion_in_parts_names_the_parts_that_did_not_hold():
    # 学生报过：判据有三条、这次的值也都列了，看不出是哪一条没做到（M = 64 明明在 32–1024 里）
    parts = [("差得最多的形状 M 在 32–1024 之间", True), ("慢 2.2–2.8×", False), ("CTA 不到 66 个", True)]
    text = str(check(False, "", "讲义说 A；B；C", "M = 64，慢 3.58×，5 个 CTA", parts))
    assert text.endswith("这次：M = 64，慢 3.58×，5 个 CTA。没做到的是：慢 2.2–2.8×。")
    assert str(check(True, "都成立。", "讲义说", "x", [("a", True)])) == "都成立。"


def test_parts_must_agree_with_the_verdict():
    import pytest
    with pytest.raises(ValueError):
        check(True, "", "讲义说", "x", [("a", True), ("b", False)])
    with pytest.raises(ValueError):
        check(False, "", "讲义说", "x", [("a", True)])


def test_every_check_with_an_and_names_its_parts():
    """判据是几条用 and 连起来的：check(...)（第 13 讲是 verdict(...)）要给 parts（每条一句话和它成立与否），不成立时才说得出是哪条没做到。
    以后加的观察也照这个写（README 的"两条规矩"）；这里读每个编号脚本的源码（ast，不运行）检查。"""
    import ast
    import glob
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def several(e):
        return (isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And)
                or isinstance(e, ast.Compare) and len(e.ops) > 1                  # a and b；a < b < c
                and not (isinstance(e.left, ast.Constant)                          # 1.25 <= x <= 1.45 是一个
                         and isinstance(e.comparators[-1], ast.Constant)))         # 范围，算一条

    missing = []
    for path in sorted(glob.glob(os.path.join(root, "lecture*", "[0-9][0-9]_*.py"))):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))]:
            # 先算进一个变量的也算：ok = a and b; check(ok, ...)——看同一个函数里在它之前最后一次给这个名字赋的值
            assigned = sorted(((n.lineno, t.id, n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
                               for t in n.targets if isinstance(t, ast.Name)), key=lambda a: a[0])
            for node in ast.walk(func):
                name = getattr(getattr(node, "func", None), "id", None)
                if not (isinstance(node, ast.Call) and name in ("check", "verdict") and node.args):   # verdict：第 13 讲的
                    continue
                first = node.args[0]
                if isinstance(first, ast.Name):
                    first = ([v for line, n, v in assigned if n == first.id and line < node.lineno] or [first])[-1]
                if (several(first)
                        and len(node.args) < {"check": 5, "verdict": 4}[name]
                        and not any(k.arg == "parts" for k in node.keywords)):
                    missing.append(f"{os.path.relpath(path, root)}:{node.lineno}")
    assert not missing, sorted(set(missing))


def test_the_missed_label_is_never_split_across_lines():
    # 学生报过：80 列时印成"……5 个 CTA。没做到\n     的是：……"
    from console import wrap
    for pad in range(0, 40):
        text = "这" * pad + "慢 3.58×、5 个 CTA。没做到的是：70B/8 qkv M = 128 上专家慢 2.2–2.8×。"
        lines = wrap(text, 40)
        assert sum("没做到的是：" in line for line in lines) == 1, lines


def test_fmt_uses_thousands_separators_like_the_tables():
    # 审读报过：第 13 讲不成立的那句印"4036.6 / …"，旁边的表和句子印"30,312.2"
    from console import fmt
    assert fmt(4036.6234, 1) == "4,036.6" and fmt(0.7994, 0, (0.8,), percent=True) == "79.9%"
    assert fmt(1234567.0, 0) == "1,234,567" and fmt(1.19929, 2, (1.2,)) == "1.199"


def test_fmt_of_a_number_equal_to_its_bound_adds_no_digits():
    # 以前四个完全相等的分级时间互相当界，各印成 6 位小数（"4,036.622592"）：相等的数用同样的位数印出来就相等
    from console import fmt
    ts = [4036.622592] * 4
    assert [fmt(t, 1, ts[max(0, i - 1):i] + ts[i + 1:i + 2]) for i, t in enumerate(ts)] == ["4,036.6"] * 4
    assert fmt(0.8, 0, (0.8,), percent=True) == "80%" and fmt(1.2, 2, (1.2,)) == "1.20"
    assert fmt(4036.64, 1, (4036.63,)) == "4,036.64"          # 不相等的界照旧多印一位
