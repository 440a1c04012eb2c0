"""simplify removes rules that can never be reached *and* rules that are reachable but redundant (the branches after
them give the same config). 04 --seed 3 removes `if M <= 3072:` — reachable for 1537 <= M <= 3072 — and used to
call it "死规则（永远走不到的规则）". The wording must cover what simplify really removed."""

import pytest

from evolve import parse
from evolve.program import simplify
from conftest import run_script

COMMAND = ("lecture14/04_alphaevolve_tiling.py", "--seed", "3", "--seeds", "1", "--jobs", "1")
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
        f"the test's premise, not the engine: {' '.join(COMMAND)} no longer evolves a program with a rule to remove "
        "(the shapes or the MockLLM changed); pick a --seed whose best program simplify shrinks")
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
    assert any(corners)
    flat = "".join(line.strip() for line in out.splitlines())
    assert "删掉死规则（永远走不到的规则）" not in flat
    assert "去掉也一样" in flat.split("删掉死规则")[1][:60]
