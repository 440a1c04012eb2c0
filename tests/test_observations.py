"""观察是数据：console.Observation 带着成不成立、判据和量到的值；不成立的印成一个不拆开的"【本次不成立】"、判据、
量到的值；04 和 05 的每个演示把观察交回来，测试从数据数不成立的句数，不 grep 文字。"""

import io
import os
import re
from contextlib import redirect_stdout

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_script

from console import FAILED, Observation, check, failed, fmt, print_observations, wrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_failed_observation_states_criterion_and_measured(capsys):
    o = check(False, "成立时的话", "讲义说 x 至少 0.9", "x = 0.85")
    print_observations([o, "一句引用，不是论断", check(True, "成立的话", "c", "m")])
    out = capsys.readouterr().out
    assert "成立时的话" not in out
    assert FAILED in out and "讲义说 x 至少 0.9" in out and "x = 0.85" in out
    assert "成立的话" in out and "一句引用" in out
    assert failed([o, "一句引用", check(True, "a", "b", "c")]) == [o]


@settings(max_examples=100, deadline=None)
@given(prefix=st.text(alphabet="汉字测试ab 1，。", max_size=80), width=st.integers(20, 120))
def test_marker_is_never_split_across_lines(prefix, width):
    text = prefix + FAILED + "讲义说……这次……" * 3
    lines = wrap(text, width, "   ")
    assert sum(line.count(FAILED) for line in lines) == 1


@settings(max_examples=60, deadline=None)
@given(prefix=st.text(alphabet="汉字测试ab 1，。", max_size=80), width=st.integers(30, 120))
def test_the_evolve_markers_are_never_split_across_lines(prefix, width):
    # 学生报过：错误信息"……却没有 #"、下一行"EVOLVE-BLOCK-END"——照抄的是半行标记
    from evolve.program import BLOCK_END, BLOCK_START
    lines = wrap(f"{prefix}有 {BLOCK_START} 却没有 {BLOCK_END}：补上一行 {BLOCK_END}", width, "  ")
    assert sum(line.count(BLOCK_END) for line in lines) == 2 and sum(line.count(BLOCK_START) for line in lines) == 1


@pytest.mark.parametrize("x,bounds,percent", [(0.7496, (0.75,), True), (0.004, (), True), (0.9999, (), True),
                                              (1.0149, (1.01,), False), (0.93, (0.93,), True), (2.2, (2.2,), False)])
def test_rounding_never_crosses_a_bound(x, bounds, percent):
    text = fmt(x, 0 if percent else 2, bounds, percent=percent)
    shown = float(text.rstrip("%")) / (100 if percent else 1)
    for b in (*bounds, 0.0) + ((1.0,) if percent else ()):
        assert (shown < b) == (x < b) and (shown > b) == (x > b), (x, text, b)


def _run_04(monkeypatch, **kw):
    m = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_obs")
    buf = io.StringIO()
    with redirect_stdout(buf):
        obs = m.run_lecture(kw.get("seed", 0), kw.get("budget", 300), kw.get("seeds", 2), 1)
    return obs, buf.getvalue()


def test_04_observations_are_data_and_match_the_printed_markers(monkeypatch):
    obs, out = _run_04(monkeypatch)
    assert set(obs) == {"演示 1", "演示 2", "演示 3", "演示 4"}
    claims = [o for items in obs.values() for o in items if isinstance(o, Observation)]
    assert len(claims) >= 8
    n_failed = sum(len(failed(items)) for items in obs.values())
    assert out.count(FAILED) == n_failed               # 每句不成立的恰好印一个完整的标记
    flat = re.sub(r"\s+", "", out)
    for o in failed(claims):                           # 不成立的：判据和量到的值都印出来了
        assert re.sub(r"\s+", "", o.criterion) in flat and re.sub(r"\s+", "", o.measured) in flat


def test_05_observations_are_data(monkeypatch):
    m = load_script("lecture14/05_ablations.py", "ablations_05_obs")
    buf = io.StringIO()
    with redirect_stdout(buf):
        obs = m.run_ablations(2, 1, 1)
    out = buf.getvalue()
    assert set(obs) == {"演示 1", "演示 2"}
    n_failed = sum(len(failed(items)) for items in obs.values())
    assert out.count(FAILED) == n_failed
    # 最小次数的保护：预算 2 时不比较成功率（演示 2 只有一句说明，不是论断）
    assert not any(isinstance(o, Observation) for o in obs["演示 2"])


def test_04_rates_print_with_their_counts_and_never_round_to_zero():
    m = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_rates")
    assert m.rate_text(58, 12_345) == "58/12,345（0.5%）"
    assert m.rate_text(0, 7) == "0/7（0%）" and m.pct(0.999) == "99.9%" and m.pct(0.7496, 0.75) == "74.96%"
