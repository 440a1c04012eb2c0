"""参数检查的两头：每个 argparse 的 type（runner 的 int_between、positive_int、nonnegative_int、fraction，
openai_llm 的 --llm-concurrency、--llm-timeout）在每一边都测"最大的合法值"和"最小的不合法值"，不只测离得很远的值；
01、02、03、06 的 parse_args 在进程里按同样的两头各调一次（上限来自 evolve.loop 和 sched_lab 的常数）。
边界挪一格（< 写成 <=、上限加一）这里就有一个测试变红。"""

import argparse
import contextlib
import io
import math

import pytest

from conftest import load_script
from evolve.loop import MAX_BUDGET, MAX_JOBS, MAX_SEEDS
from evolve.openai_llm.cli import _concurrency_arg, _seconds_arg
from runner import fraction, int_between, nonnegative_int, positive_int
from sched_lab import MAX_DIM


def rejects(check, text):
    with pytest.raises(argparse.ArgumentTypeError) as e:
        check(text)
    return str(e.value)


@pytest.mark.parametrize("lo,hi", [(1, 5), (0, 0), (-3, 3), (1, MAX_BUDGET)])
def test_int_between_edges(lo, hi):
    check = int_between(lo, hi)
    assert check(str(lo)) == lo and check(str(hi)) == hi               # 两头都收
    for bad in (lo - 1, hi + 1):                                       # 紧挨着的两个不收，说出范围
        msg = rejects(check, str(bad))
        assert f"{lo:,}" in msg and f"{hi:,}" in msg and str(bad) in msg, msg


def test_int_between_says_why_the_upper_bound():
    msg = rejects(int_between(1, MAX_DIM, "2**24"), str(MAX_DIM + 1))
    assert "2**24" in msg and f"{MAX_DIM:,}" in msg


def test_positive_int_edges():
    assert positive_int("1") == 1 and positive_int(str(10 ** 30)) == 10 ** 30
    assert "0" in rejects(positive_int, "0")
    rejects(positive_int, "-1")


def test_nonnegative_int_edges():
    assert nonnegative_int("0") == 0 and nonnegative_int(" 1 ") == 1
    assert "-1" in rejects(nonnegative_int, "-1")
    for junk in ("", "0.5", "1e3", "x"):
        rejects(nonnegative_int, junk)


@pytest.mark.parametrize("typed, want", [("1e3", "1000"), ("1,000", "1000"), ("4E3", "4000"), ("2000.0", "2000")])
def test_an_integer_typed_as_1e3_or_with_commas_is_refused_with_how_to_write_it(typed, want):
    # 学生报过：--budget 1e3、照着印出来的"1,000 个提议"敲的 --budget 1,000 只得到"不是整数"，没说该怎么写
    for check in (int_between(1, MAX_BUDGET), positive_int, nonnegative_int):
        msg = rejects(check, typed)
        assert f"'{typed}' 不是整数，写成 {want}" in msg, msg


@pytest.mark.parametrize("typed", ["1.5", "inf", "nan", "1e30", "x", ""])
def test_a_number_that_is_not_an_integer_gets_no_suggestion(typed):
    msg = rejects(positive_int, typed)
    assert msg == f"'{typed}' 不是整数", msg


def test_fraction_edges():
    below_one = math.nextafter(1.0, 0.0)
    assert fraction("0") == 0.0 and fraction(repr(below_one)) == below_one and fraction("0.05") == 0.05
    assert "1" in rejects(fraction, "1")                               # 1 本身不收（0 ≤ x < 1）
    rejects(fraction, "1.0")
    rejects(fraction, repr(-5e-324))                                   # 比 0 小一丁点也不收
    for junk in ("nan", "inf", "-inf", "x", ""):
        rejects(fraction, junk)


@pytest.mark.parametrize("typed, want", [("5%", "0.05"), ("1％", "0.01"), (" 12.5% ", "0.125")])
def test_a_fraction_typed_as_a_percentage_is_refused_with_how_to_write_it(typed, want):
    # 审读报过：13/01 --tolerance 5%（"放宽到 5% 以内"照着敲的）只得到"'5%' 不是小数"，没说该怎么写；
    # --budget 1e3 早就会说"写成 1000"
    msg = rejects(fraction, typed)
    assert f"'{typed}' 不是小数，写成 {want}" in msg, msg
    for out_of_range in ("150%", "nan%", "-5%", "x%", "%"):             # 照写了还是不收的，不给写法
        assert rejects(fraction, out_of_range) == f"'{out_of_range}' 不是小数"


@pytest.mark.parametrize("typed, bytes_", [("163KB", 166912), ("227 KiB", 232448), ("164k", 167936)])
def test_smem_typed_in_kilobytes_is_refused_with_the_byte_count_that_works(typed, bytes_):
    # 审读报过：10/01 --smem 163KB 只说"'163KB' 不是整数"。现在说折成字节是多少；照那个数再跑，说的正是它
    from conftest import run_script
    p = run_script("lecture10/01_config_space.py", "--smem", typed)
    assert p.returncode == 2 and f"--smem 要的是字节数，{typed.rstrip('KBkib ')} KB 是 {bytes_}" in p.stderr, p.stderr
    q = run_script("lecture10/01_config_space.py", "--smem", str(bytes_))
    assert q.returncode == 0 and f"共享内存上限 {bytes_:,} B" in "".join(q.stdout.split("\n")), q.stderr
    m = load_script("lecture10/01_config_space.py", "m10_smem")
    assert rejects(m.smem_arg, "0KB") == "'0KB' 不是整数" and rejects(m.smem_arg, "x") == "'x' 不是整数"


def test_llm_concurrency_edges():
    assert _concurrency_arg("1") == 1 and _concurrency_arg("64") == 64
    for bad in ("0", "-1", "1.5", "x", ""):
        assert bad in rejects(_concurrency_arg, bad)


def test_llm_timeout_edges():
    # 讲师报过：--llm-timeout 0.000001 被接受，然后说"服务器在 1e-06 秒内没有回完"，错怪服务器。现在至少 MIN_TIMEOUT 秒
    # 又报过：--llm-timeout 1e10 让看门的计时器设不了（OverflowError 的 traceback），现在最多 MAX_TIMEOUT 秒
    from evolve.openai_llm import MAX_TIMEOUT, MIN_TIMEOUT
    assert _seconds_arg(repr(MIN_TIMEOUT)) == MIN_TIMEOUT and _seconds_arg("60") == 60.0
    assert _seconds_arg(repr(MAX_TIMEOUT)) == MAX_TIMEOUT
    below, above = math.nextafter(MIN_TIMEOUT, 0), math.nextafter(MAX_TIMEOUT, math.inf)
    for bad in ("0", "-0", "-1e-9", "5e-324", "0.000001", repr(below), repr(above), "1e10", "1e308", "inf", "nan", "1e309",
                "x", ""):
        rejects(_seconds_arg, bad)


# ---------------------------------------------------------------- 脚本的 parse_args（在进程里，不起子进程）

@pytest.fixture(scope="module")
def scripts():
    return {k: load_script(f"lecture14/{name}", f"edges_{k}") for k, name in
            (("01", "01_heuristic_as_code.py"), ("02", "02_llm_proposal.py"), ("03", "03_cascade_and_database.py"),
             ("06", "06_your_heuristic.py"))}


def parse(module, *argv):
    """parse_args 的结果；参数不合法时返回 (退出码, 标准错误)。"""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return module.parse_args(list(argv))
    except SystemExit as e:
        return e.code, err.getvalue()


EDGES = [("01", ["--shape", "{}", "1", "1"], 1, MAX_DIM), ("01", ["--shape", "1", "{}", "1"], 1, MAX_DIM),
         ("01", ["--shape", "1", "1", "{}"], 1, MAX_DIM),
         ("02", ["--after", "{}"], 1, MAX_BUDGET), ("02", ["--seed", "{}"], 0, None),
         ("02", ["--llm-concurrency", "{}"], 1, None),
         ("03", ["--budget", "{}"], 1, MAX_BUDGET), ("03", ["--seeds", "{}"], 1, MAX_SEEDS),
         ("03", ["--jobs", "{}"], 1, MAX_JOBS),
         ("06", ["--budget", "{}"], 1, MAX_BUDGET), ("06", ["--seed", "{}"], 0, None)]


@pytest.mark.parametrize("key,argv,lo,hi", EDGES, ids=[f"{k} {' '.join(a)}" for k, a, _, _ in EDGES])
def test_script_options_at_both_edges(scripts, key, argv, lo, hi):
    m = scripts[key]
    option = next(a for a in argv if a.startswith("--"))
    fill = lambda v: [a.format(v) for a in argv]                     # noqa: E731
    for good in (lo, hi) if hi is not None else (lo,):
        got = parse(m, *fill(good))
        assert not isinstance(got, tuple), (good, got)
    for bad in (lo - 1, hi + 1) if hi is not None else (lo - 1,):
        got = parse(m, *fill(bad))
        assert isinstance(got, tuple) and got[0] == 2, (bad, got)
        assert option in got[1] and str(bad) in got[1] and len(got[1].strip().splitlines()) == 1, got[1]


def test_readme_states_the_shortest_llm_timeout():
    import os
    from evolve.openai_llm import MAX_TIMEOUT, MIN_TIMEOUT
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"), encoding="utf-8") as f:
        assert f"超过就算一次超时（至少 {MIN_TIMEOUT:g}，最多 {MAX_TIMEOUT:,.0f}，" in f.read()


def test_readme_states_the_default_llm_timeout():
    # 助教报过：把 settings.TIMEOUT（--llm-timeout 的默认）改了，--help 跟着变，README 的"默认 300"和"config.yaml 的
    # timeout 是 300 秒（和 --llm-timeout 的默认一样）"没有测试对照，留着旧数
    import os
    import re
    from evolve.openai_llm import TIMEOUT
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    said = re.search(r"超过就算一次超时（至少 [^，]*，最多 [^，]*，\s*默认 ([\d,.]+)；", readme)
    assert said, "README 的\"其他参数\"里找不到 --llm-timeout 的\"默认 …；\""
    assert float(said.group(1).replace(",", "")) == TIMEOUT, (
        f"README 说 --llm-timeout 默认 {said.group(1)}，lecture14/evolve/openai_llm/settings.py 的 TIMEOUT 是 {TIMEOUT:g}："
        "改了默认，README 这句跟着改")
    same = re.search(r"`config.yaml` 的 `timeout` 是 ([\d,.]+) 秒（和 `--llm-timeout` 的默认一样", readme)
    assert same, "README 的\"更进一步\"里找不到\"config.yaml 的 timeout 是 … 秒（和 --llm-timeout 的默认一样\""
    assert float(same.group(1).replace(",", "")) == TIMEOUT, (
        f"README 说 config.yaml 的 timeout 是 {same.group(1)} 秒、和 --llm-timeout 的默认一样，settings.TIMEOUT 是 "
        f"{TIMEOUT:g}：改了默认，README 这句和 lecture14/openevolve/config.yaml 的 timeout 跟着改")
