"""04 的两句话对着同一次运行印出来的表检查（审读报过）：
  --budget 350：第 300 个提议以后最好分数没再涨，观察却说"之后的 50 个提议只从 1.223× 涨到 1.223×"；
  --seeds 1：演示 3 的表把一个种子的结果叫"进化（中位数，最小–最大）"，印"1.256× (1.256–1.256)"。"""

import re
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import load_script
from evolve import EXPERT, all_shapes, split_shapes
from test_observation_branches import flat, printed

T04 = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_flat_tail")


@pytest.fixture(scope="module")
def halves():
    return split_shapes(all_shapes())


def early_sentence(obs):
    found = [o for o in obs if "第 300 个提议" in str(getattr(o, "criterion", ""))]
    assert len(found) == 1
    return flat(found[0].text)


@pytest.mark.h100_golden         # 这次具体的进化（H100 上种子 0）第 300 个以后没再涨；别的 GPU 上不一定
def test_a_run_that_stops_rising_after_300_proposals_is_not_said_to_rise(table, halves):
    # 真实的一次进化：种子 0 的最好分数在第 300 个提议以前就停在了最后的值上，--budget 350 时后面 50 个提议没再涨
    (out, _, obs), text = printed(T04.demo2_one_run, table, *halves, 0, 350)
    hist = out["history"]
    assert hist[-1] == hist[T04.EARLY - 1]           # 这个输入确实是"后面没涨"的情形
    said = early_sentence(obs)
    assert said in flat(text)
    assert not re.search(r"只从([\d.]+)×涨到\1×", said), said
    assert flat(f"之后的 50 个提议没有再刷新最好分数（一直是 {hist[-1]:.3f}×）") in said


def test_a_rise_too_small_to_print_is_said_so(monkeypatch, table, halves):
    # 第 300 个以后只涨了不到 0.0005：印到三位小数一样，不能说"从 a 涨到 a"，也不能说"没有再刷新"
    def tiny_tail(out):
        hist = np.asarray(out["history"], dtype=float).copy()
        base = round(float(hist[T04.EARLY - 1]), 3)
        hist[:T04.EARLY] = np.minimum(hist[:T04.EARLY], base)
        hist[T04.EARLY:] = base + 0.0002
        out["history"] = hist
        program, res = out["best"]
        out["best"] = (program, dict(res, score=base + 0.0002))
        return out
    real = T04.evolve
    monkeypatch.setattr(T04, "evolve", lambda *a, **k: tiny_tail(real(*a, **k)))
    (out, _, obs), text = printed(T04.demo2_one_run, table, *halves, 0, 1000)
    said = early_sentence(obs)
    assert not re.search(r"只从([\d.]+)×涨到\1×", said), said
    assert "没有再刷新" not in said
    assert flat(f"只涨了不到 0.001（印到三位小数都是 {out['best'][1]['score']:.3f}×）") in said


def test_a_real_rise_after_300_is_still_said_as_from_to(table, halves):
    (out, _, obs), _ = printed(T04.demo2_one_run, table, *halves, 0, 1000)
    hist = out["history"]
    said = early_sentence(obs)
    assert flat(f"之后的 700 个提议只从 {hist[T04.EARLY - 1]:.3f}× 涨到 {hist[-1]:.3f}×") in said


def demo3(table, seeds, scores=(1.25, 1.27)):
    reused = {(how, s): (*scores, EXPERT) for how in T04.SPLITS for s in range(seeds)}
    runs = SimpleNamespace(tasks=[], results=lambda **kwargs: [])
    return printed(T04.demo3_generalization, table, all_shapes(), 1000, seeds, runs, [], reused)[1]


def test_one_seed_is_not_called_a_median_with_a_range(table):
    text = demo3(table, 1)
    table_text = text.split("观察")[0]
    assert "中位数" not in table_text.split("每个种子一点")[0]
    assert not re.search(r"\(([\d.]+)–\1\)", table_text), table_text
    assert "进化（1 个种子的结果）" in table_text


def test_several_seeds_keep_the_median_and_the_range(table):
    text = demo3(table, 3)
    assert "进化（中位数，最小–最大）" in text
    assert "1.250× (1.250–1.250)" in text            # 三个种子一样的分数：最小–最大照印（那是量出来的）
