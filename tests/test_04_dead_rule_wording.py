"""simplify removes rules that can never be reached *and* rules that are reachable but redundant (the branches after
them give the same config). 04 --seed 3 removes `if M <= 3072:` — reachable for 1537 <= M <= 3072 — and used to
call it "死规则（永远走不到的规则）". The wording must cover what simplify really removed."""

import pytest

from evolve import parse
from evolve.program import simplify
from conftest import run_script

# No --jobs 1: it changes only how demo 3 is spread over processes (and the settings line, not read here); without it
# this is the very run test_printed_numbers_04 asks for, so the session's run cache runs it once, not twice.
COMMAND = ("lecture14/04_alphaevolve_tiling.py", "--seed", "3", "--seeds", "1")
PREFETCH = [COMMAND]                  # conftest：收集完测试后在后台先跑


@pytest.mark.h100_golden            # 种子 3 在 H100 上的那条轨迹：它最好的程序里恰好有一条走得到、去掉也一样的规则
def test_removed_reachable_rule_is_not_called_unreachable():
    r = run_script(*COMMAND, timeout=180)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    best_src = out.split("下面是它的原样")[1].split("# EVOLVE-BLOCK-START", 1)[1].split("# EVOLVE-BLOCK-END")[0]
    best = parse("# EVOLVE-BLOCK-START" + best_src + "# EVOLVE-BLOCK-END")
    simp = simplify(best)
    assert simp.n_rules() < best.n_rules(), (                   # this seed's best program does shrink
        f"测试的前提变了（不是引擎坏了）：{' '.join(COMMAND)} 进化出的最好程序里不再有去得掉的规则（形状或 MockLLM "
        "变了）；换一个 --seed，让它最好的程序 simplify 以后变短")
    kept = {(r.conds, r.config) for r in simp.rules}
    removed = [r for r in best.rules if (r.conds, r.config) not in kept]
    # at least one removed rule is reachable: its own corner is chosen by it in the unsimplified program
    def first_match(p, m, n, k):
        for i, rule in enumerate(p.rules):
            if all({"M": m, "N": n, "K": k}[d] <= b for d, b in rule.conds):
                return i
        return None
    corners = []
    for rule in removed:
        c = {"M": 10 ** 9, "N": 10 ** 9, "K": 10 ** 9}
        for d, b in rule.conds:
            c[d] = min(c[d], b)
        corners.append(first_match(best, c["M"], c["N"], c["K"]) == best.rules.index(rule))
    assert any(corners), (f"测试的前提变了（不是引擎坏了）：{' '.join(COMMAND)} 最好的程序里去掉的规则都走不到；"
                          "换一个 --seed，让去掉的规则里有一条走得到（它管的形状后面的分支给同样的配置）")
    flat = "".join(line.strip() for line in out.splitlines())
    assert "删掉死规则（永远走不到的规则）" not in flat
    assert "去掉也一样" in flat.split("删掉死规则")[1][:60]


def test_a_repeated_condition_is_not_called_zero_removable_rules(tmp_path):
    """学生报过：if M <= 16 and M <= 32: 让 04 说"其中 0 条规则去掉也一样……simplify 以后 1 条"，01 和 06 对同一个
    文件说"没有死规则"。simplify 只合并了重复的条件、规则数不变时，04 不说"去掉也一样"。"""
    import os
    from conftest import LECTURE_EXPERT, base_env, run_script_fresh
    with open(LECTURE_EXPERT, encoding="utf-8") as f:
        text = f.read()
    assert text.count("    if M <= 16:\n") == 1
    path = tmp_path / "expert.py"
    path.write_text(text.replace("    if M <= 16:\n", "    if M <= 16 and M <= 32:\n"), encoding="utf-8")
    r = run_script_fresh(os.path.join("lecture14", "04_alphaevolve_tiling.py"), "--budget", "30", "--seeds", "1",
                         "--jobs", "1", env={**base_env(), "MINI_ALPHAEVOLVE_EXPERT": str(path)}, timeout=120)
    flat = "".join(line.strip() for line in r.stdout.splitlines())
    assert r.returncode == 0 and "if M <= 16 and M <= 32:" in flat, r.stderr[-500:]
    assert "条规则去掉也一样" not in flat and "其中 0 条" not in flat


def test_an_if_true_rule_is_said_to_become_the_default_not_to_be_dead(tmp_path):
    """学生报过：把 if M <= 16: 改成 if True:，04 说"其中 1 条规则去掉也一样……simplify 以后 0 条"，06 说"其中 1 条规则是
    死的"——下一行却说所有形状都在这里返回。去掉它每个形状的配置都变；走不到的是最后的 return。01 早就说"成了默认配置"。"""
    import os
    from conftest import LECTURE_EXPERT, base_env, run_script_fresh
    with open(LECTURE_EXPERT, encoding="utf-8") as f:
        text = f.read()
    assert text.count("    if M <= 16:\n") == 1
    line = text[:text.index("    if M <= 16:\n")].count("\n") + 1
    path = tmp_path / "expert.py"
    path.write_text(text.replace("    if M <= 16:\n", "    if True:\n"), encoding="utf-8")
    env = {**base_env(), "MINI_ALPHAEVOLVE_EXPERT": str(path)}
    r04 = run_script_fresh(os.path.join("lecture14", "04_alphaevolve_tiling.py"), "--budget", "30", "--seeds", "1",
                           "--jobs", "1", env=env, timeout=120)
    r06 = run_script_fresh(os.path.join("lecture14", "06_your_heuristic.py"), str(path), "--quick", env=env, timeout=120)
    for r in (r04, r06):
        flat = "".join(r.stdout.split())
        assert r.returncode == 0, r.stderr[-500:]
        assert f"第{line}行的规则没有条件，成了默认配置" in flat, flat[:3000]
        assert "条规则去掉也一样" not in flat and "条规则是死的" not in flat, flat[:3000]
