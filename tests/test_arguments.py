"""参数：每个编号脚本 --help 退出码 0；不认识的、缩写的、不合法的值都只说一句话（哪个参数、允许什么），退出码 2，
不印 traceback，也不悄悄改用默认值。"""

import os
import sys
import re

import pytest

import gpus
from conftest import prefetch, run_script
from evolve.loop import MAX_BUDGET, MAX_JOBS, MAX_SEEDS
from runner import int_between
from sched_lab import MAX_DIM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = ["lecture10/01_config_space.py", "lecture13/01_timing_model.py", "lecture14/04_alphaevolve_tiling.py",
           "lecture14/05_ablations.py"]


def outcome(script, *args):
    """python script args 的结果（conftest.run_script：整个测试会话里同样的命令只跑一次，别的文件也共用）。
    第一次调用时把这个文件里要跑的所有命令同时跑完（各是独立的子进程，结果和一个个跑一样，只是在 2 核上快一些）。"""
    prefetch(*PREFETCH)
    return run_script(script, *args, timeout=60)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_exits_0(script):
    p = outcome(script, "--help")
    assert p.returncode == 0 and p.stdout.strip() and not p.stderr, p.stderr


BAD = [("lecture14/04_alphaevolve_tiling.py", ["--budget", "0"], "--budget"),
       ("lecture14/04_alphaevolve_tiling.py", ["--seeds", "0"], "--seeds"),
       ("lecture14/04_alphaevolve_tiling.py", ["--seed", "-1"], "--seed"),
       ("lecture14/04_alphaevolve_tiling.py", ["--jobs", "0"], "--jobs"),
       ("lecture14/04_alphaevolve_tiling.py", ["--budget", "abc"], "--budget"),
       ("lecture14/04_alphaevolve_tiling.py", ["--see", "3"], "--see"),            # 缩写不算数
       ("lecture14/05_ablations.py", ["--budget", "0"], "--budget"),
       ("lecture14/05_ablations.py", ["--seeds", "0"], "--seeds"),
       ("lecture14/05_ablations.py", ["--seed", "3"], "--seed"),                  # 不再被当成 --seeds
       ("lecture14/05_ablations.py", ["--small-targeted", "1.5"], "--small-targeted"),
       ("lecture13/01_timing_model.py", ["--tolerance", "2"], "--tolerance"),
       ("lecture13/01_timing_model.py", ["--tol", "0.05"], "--tol"),
       ("lecture13/01_timing_model.py", ["--knob", "L2_BW"], "名字=数值"),
       ("lecture13/01_timing_model.py", ["--knob", "SMS=100"], "不是 sched_lab 的校准旋钮"),    # 数据手册常数不能改
       ("lecture13/01_timing_model.py", ["--knob", "L2_BW=fast"], "不是数"),
       ("lecture13/01_timing_model.py", ["--knob", "L2_BW=nan"], "L2_BW 要在"),
       ("lecture13/01_timing_model.py", ["--knob", "L2_BW=1e13", "--knob", "L2_BW=2e13"], "两次"),
       ("lecture14/04_alphaevolve_tiling.py", ["--knob", "LOAD_LATENCY_BUSY=5e-7"], "不能小于 LOAD_LATENCY_IDLE"),
       ("lecture14/04_alphaevolve_tiling.py", ["--knob", "HBM_EFFICIENCY=1.2"], "HBM_EFFICIENCY 要在"),
       ("lecture10/01_config_space.py", ["1", "2"], "6 个整数"),
       ("lecture10/01_config_space.py", ["256", "128", "64", "8", "4", "3"], "group"),
       ("lecture10/01_config_space.py", ["--smem", "0"], "--smem"),
       ("lecture14/01_heuristic_as_code.py", ["--shape", "3000"], "参数 --shape 后面要跟 3 个值")]   # 学生报过：expected 3 arguments
# 上限：手滑多敲几个 0 不该变成 traceback（MemoryError、ValueError），而是一句话说出允许的范围
TOO_BIG = [("lecture14/01_heuristic_as_code.py", ["--shape", "99999999999", "1", "1"], "2**24"),
           ("lecture14/02_llm_proposal.py", ["--after", str(MAX_BUDGET + 1)], "--after"),
           ("lecture14/03_cascade_and_database.py", ["--budget", str(MAX_BUDGET + 1)], "--budget"),
           ("lecture14/03_cascade_and_database.py", ["--seeds", str(MAX_SEEDS + 1)], "--seeds"),
           ("lecture14/03_cascade_and_database.py", ["--jobs", str(MAX_JOBS + 1)], "--jobs"),
           ("lecture14/04_alphaevolve_tiling.py", ["--budget", "10000000000"], "--budget"),
           ("lecture14/04_alphaevolve_tiling.py", ["--seeds", str(MAX_SEEDS + 1)], "--seeds"),
           ("lecture14/04_alphaevolve_tiling.py", ["--jobs", str(MAX_JOBS + 1)], "--jobs"),
           ("lecture14/05_ablations.py", ["--budget", str(MAX_BUDGET + 1)], "--budget"),
           ("lecture14/05_ablations.py", ["--seeds", str(MAX_SEEDS + 1)], "--seeds"),
           ("lecture14/05_ablations.py", ["--jobs", str(MAX_JOBS + 1)], "--jobs"),
           ("lecture14/06_your_heuristic.py", ["--evolve", "--budget", str(MAX_BUDGET + 1)], "--budget")]
BAD += TOO_BIG

LIMITS = {"--shape": MAX_DIM, "--after": MAX_BUDGET, "--budget": MAX_BUDGET, "--seeds": MAX_SEEDS, "--jobs": MAX_JOBS}


HELP = SCRIPTS + ["lecture14/01_heuristic_as_code.py", "lecture14/02_llm_proposal.py", "lecture14/03_cascade_and_database.py",
                  "lecture14/06_your_heuristic.py"]
PREFETCH = [(s, "--help") for s in HELP] + [(s, *a) for s, a, _ in BAD]    # conftest：收集完测试后在后台先跑


@pytest.mark.parametrize("script,args,word", BAD)
def test_bad_values_get_one_sentence_and_exit_2(script, args, word):
    p = outcome(script, *args)
    assert p.returncode == 2, (p.returncode, p.stdout[:200], p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in p.stderr, p.stderr
    assert not p.stdout                               # 没有悄悄地用默认值跑起来
    assert not re.search(r"\b(expected|argument|invalid|choose from|not allowed)\b", lines[0]), lines[0]  # argparse 的英文


@pytest.mark.parametrize("script,args,word", TOO_BIG)
def test_too_large_values_name_the_allowed_range(script, args, word):
    p = outcome(script, *args)
    option = next(a for a in args if a in LIMITS)
    assert f"{LIMITS[option]:,}" in p.stderr and option in p.stderr, p.stderr


@pytest.mark.parametrize("script,option", [("lecture14/02_llm_proposal.py", "--after"),
                                           ("lecture14/03_cascade_and_database.py", "--budget"),
                                           ("lecture14/03_cascade_and_database.py", "--seeds"),
                                           ("lecture14/04_alphaevolve_tiling.py", "--budget"),
                                           ("lecture14/04_alphaevolve_tiling.py", "--seeds"),
                                           ("lecture14/04_alphaevolve_tiling.py", "--jobs"),
                                           ("lecture14/05_ablations.py", "--seeds"),
                                           ("lecture14/06_your_heuristic.py", "--budget"),
                                           ("lecture14/01_heuristic_as_code.py", "--shape")])
def test_help_documents_the_upper_bound(script, option):
    p = outcome(script, "--help")
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    own = text[text.rindex(option):]                       # 这个选项自己的说明（用法那一行在前面）
    own = re.split(r" --?[a-z]", own[len(option):], maxsplit=1)[0]
    assert f"{LIMITS[option]:,}" in own, (option, own)


def test_int_between_accepts_both_ends_and_nothing_outside():
    import argparse
    check = int_between(1, 5)
    assert check("1") == 1 and check(" 5 ") == 5
    for bad in ("0", "6", "-1", "1e3", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            check(bad)


def test_readme_states_the_same_upper_bounds():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = "".join(f.read().split())
    assert (f"最多{MAX_BUDGET:,}、种子最多{MAX_SEEDS:,}个、进程最多{MAX_JOBS}个") in text


NUMBERED = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d in
                  (os.path.join(ROOT, x) for x in os.listdir(ROOT) if x.startswith("lecture"))
                  for f in os.listdir(d) if re.match(r"\d\d_.*\.py$", f))


@pytest.mark.parametrize("script", NUMBERED)
def test_help_fits_the_terminal_with_chinese_two_columns_wide(script, cols=80):
    """学生报过：argparse 按字数折行，01_config_space --help 在 80 列的终端里有 105 列宽的行，04 的 --knob 那一条的
    说明没和别的对齐。现在按显示宽度折（runner._HelpFormatter），参数名是西文的。"""
    from layout import display_width
    p = run_script(script, "--help", env={**os.environ, "COLUMNS": str(cols)}, timeout=60)
    assert p.returncode == 0 and not p.stderr, p.stderr
    lines = p.stdout.split("\n")
    assert max(map(display_width, lines)) <= cols, [x for x in lines if display_width(x) > cols]
    # 学生报过：开头是 argparse 的英文 "usage:"、"options:"，分组标题后面是半角冒号。现在是"用法: "、"选项："，
    # 用法的续行和第一行的参数对齐（"用法: " 比字数宽 2 列）
    assert lines[0].startswith("用法: ") and "选项：" in lines and not re.search(r"^(usage|options|positional)", p.stdout, re.M)
    assert not [x for x in lines if re.match(r"\S.*[\u3400-\u9fff）]:$", x)]
    usage = lines[:lines.index("")]
    first_arg = display_width(usage[0].split(" [", 1)[0]) + 1
    assert all(display_width(x) - display_width(x.lstrip()) == first_arg for x in usage[1:]), usage
    options = [x for x in lines if re.match(r"  -", x)]                # 选项那几行：说明从同一列开始
    starts = {len(re.match(r"(  \S.*?  +)\S", x)[1]) for x in options if re.search(r"\S  +\S", x)}
    assert len(starts) == 1, starts


@pytest.mark.parametrize("script", [s for s in NUMBERED if "07_openevolve" not in s])   # 07 要 OpenEvolve，同一个 run()
def test_a_full_disk_is_one_sentence_and_exit_1(script):
    """学生报过：04 --quick > /dev/full 是一段 traceback（OSError: [Errno 28] No space left on device）。现在 runner.run
    说一句写不下去了、怎么办，退出码 1。"""
    import subprocess

    from conftest import stop_group
    with open(os.devnull, "rb") as stdin, open("/dev/full", "w") as full:
        p = subprocess.Popen([sys.executable, os.path.join(ROOT, script)], stdin=stdin, stdout=full,
                             stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
        try:
            _, err = p.communicate(timeout=60)
        finally:
            stop_group(p)
    err = err.decode()
    assert p.returncode == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == ("写不下去了：磁盘满了（标准输出重定向到的文件，或者脚本写的文件）。"
                                            "腾出磁盘空间（或者换一个地方写），再运行一次。"), err


UNKNOWN_GPU = next(f"x{k}" for k in range(9000, 10000) if f"x{k}" not in gpus.GPUS)   # 助教报过：用的是 b200，加了
#                                                                      B200 的记录以后 --gpu b200 照样跑完，这个测试就红了


@pytest.mark.parametrize("args,says", [
    (["--gpu", UNKNOWN_GPU], f"参数 --gpu 不能取 '{UNKNOWN_GPU}'：只能取 " + ", ".join(map(repr, gpus.GPUS)) + " 之一"),
    (["--bud", "50"], "不认识的参数：--bud。是不是 --budget？"),
    (["--seeed", "3"], "是不是 --seed？"),
    (["--quick=1"], "参数 --quick 是一个开关，后面不跟值：把 =1 去掉"),               # 学生报过：夹着
    (["--help=1"], "参数 -h/--help 是一个开关，后面不跟值：把 =1 去掉"),              # "ignored explicit argument"
    (["--", "--seed", "3"], "单独的 -- 后面的都被当成了位置参数，不是选项：把 -- 去掉"),  # 以前反问"是不是 --seed"
])
def test_a_wrong_choice_or_a_misspelt_option_is_said_in_chinese_with_what_was_meant(args, says):
    """学生报过：--gpu b200 印成"只能取这些值之一：'b200' (choose from …)"（读起来像 b200 才是允许的值，还夹着英文）；
    --bud 50 只说不认识，不说是不是 --budget。"""
    r = run_script("lecture14/04_alphaevolve_tiling.py", *args, env={k: v for k, v in os.environ.items()
                                                                        if k != "MINI_ALPHAEVOLVE_GPU"}, timeout=60)
    assert r.returncode == 2 and says in r.stderr and "choose from" not in r.stderr, r.stderr
    assert not re.search(r"[a-z]{3,} [a-z]{3,}", r.stderr.replace("--help", "")), r.stderr   # 没有 argparse 的英文句子
    assert len(r.stderr.strip().splitlines()) == 1
    guess = run_script("lecture14/04_alphaevolve_tiling.py", "--s", "3", timeout=60)    # --seed、--seeds、--svg……：都说
    assert guess.returncode == 2 and "是不是 --seed、--seeds 或 --svg？" in guess.stderr, guess.stderr
    none = run_script("lecture14/04_alphaevolve_tiling.py", "--xyz", timeout=60)        # 哪个都不像：不猜
    assert none.returncode == 2 and "是不是" not in none.stderr


@pytest.mark.parametrize("script,args", [("lecture10/01_config_space.py", ["--budget", "0"]),
                                         ("lecture14/06_your_heuristic.py", ["--shape", "0", "1", "1"]),
                                         ("lecture14/01_heuristic_as_code.py", ["--budget", "0"])])
def test_an_option_the_script_does_not_have_is_named_before_its_value_is_read(script, args):
    """学生报过：lecture10/01 --budget 0 说的是"参数 BM BN BK warps stages group：要是正整数……收到的是 0"——
    argparse 先把 0 当成了这个脚本的位置参数。不认识的 --选项现在先说。"""
    from runner import parser
    with pytest.raises(SystemExit) as e:
        parser("x").parse_args(args)
    r = run_script(script, *args, timeout=60)
    assert r.returncode == 2 and f"不认识的参数：{args[0]}。" in r.stderr and "正整数" not in r.stderr, r.stderr
    assert e.value.code == 2


def test_a_lone_double_dash_is_named_even_when_a_positional_swallows_what_follows():
    """审读报过：06 -- --seed 3 说"不认识的参数：3"（可选的 FILE 把 --seed 吞了），没说是 -- 的事。"""
    r = run_script("lecture14/06_your_heuristic.py", "--", "--seed", "3", timeout=60)
    assert r.returncode == 2 and "单独的 -- 后面的都被当成了位置参数，不是选项：把 -- 去掉" in r.stderr, r.stderr
