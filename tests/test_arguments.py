"""参数：每个编号脚本 --help 退出码 0；不认识的、缩写的、不合法的值都只说一句话（哪个参数、允许什么），退出码 2，
不印 traceback，也不悄悄改用默认值。"""

import os

import pytest

from conftest import prefetch, run_script

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
       ("lecture10/01_config_space.py", ["--smem", "0"], "--smem")]


PREFETCH = [(s, "--help") for s in SCRIPTS] + [(s, *a) for s, a, _ in BAD]    # conftest：收集完测试后在后台先跑


@pytest.mark.parametrize("script,args,word", BAD)
def test_bad_values_get_one_sentence_and_exit_2(script, args, word):
    p = outcome(script, *args)
    assert p.returncode == 2, (p.returncode, p.stdout[:200], p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in p.stderr, p.stderr
    assert not p.stdout                               # 没有悄悄地用默认值跑起来
