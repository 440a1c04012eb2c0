"""
lecture14/openevolve/：第 14 讲的问题交给 OpenEvolve（真的 openevolve 0.4.0 包，requirements-openevolve.txt）。
evaluator 只解析、从不执行程序；combined_score 就是本讲的 geomean_speedup；读不懂、启动不了的程序得 0 分，
artifacts 里是学生看到的那句话；级联的第一级是 03 讲的探针级。一条命令（run_openevolve.py，make openevolve 调它）
离线跑几个提议：开服务器、跑、关服务器、印出最好的程序和它的加速比；没装 OpenEvolve 时一句话、退出码 1；
Ctrl-C 或被杀以后什么都不留下。
"""

import functools
import importlib.util
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

import gpus

from console import PIPE_WIDTH, display_width

from conftest import (ROOT, ahead, alive, base_env, ctrl_c_in_a_terminal, descendants, load_script, only_in,
                      run_concurrently, run_script, session_dir, stop_group)
from printed import unfold

sys.path.insert(0, os.path.join(ROOT, "lecture14"))

from evolve import (EXPERT, Evaluator, ProgramError, best_single_config, evolve, geomean_speedup,  # noqa: E402
                    oracle_speedup, parse, per_m_table, render, split_shapes)
from evolve.evaluator import PROBE_SLACK  # noqa: E402
from evolve.openai_llm import BAD_JSON, COMPRESSED, MOCK_BUG, MOCK_BUG_REPLY, REDIRECT  # noqa: E402
from evolve.problem import display_path, load_heuristic  # noqa: E402
from hostile_server import SAME_KIND, same_kind  # noqa: E402

HERE = os.path.join(ROOT, "lecture14", "openevolve")
RUN = os.path.join(HERE, "run_openevolve.py")
ev = load_script("lecture14/openevolve/evaluator.py", "oe_evaluator")
runmod = load_script("lecture14/openevolve/run_openevolve.py", "oe_run")
# make openevolve 的各部分在 run_openevolve.py 旁边的 oe_*.py 里（载入它时 lecture14/openevolve 放上了 sys.path）；
# 换掉一个名字要换在用它的那个模块里：main 直接调用的（run_openevolve、start_server……）换 runmod 的
import oe_careful_http  # noqa: E402
import oe_child  # noqa: E402
import oe_env  # noqa: E402
import oe_failures  # noqa: E402
import oe_processes  # noqa: E402
import oe_results  # noqa: E402
import oe_settings  # noqa: E402
import oe_start  # noqa: E402
# TESTS_GPU 选了别的 GPU 时，"可以试试"的命令带着同一个 --gpu（照着运行还是那块 GPU）
GPU_FLAG = "" if gpus.selected_key() == gpus.DEFAULT else f" --gpu {gpus.selected_key()}"


def metrics(r):
    return r["metrics"] if isinstance(r, dict) else r.metrics


def artifacts(r):
    return r["artifacts"] if isinstance(r, dict) else r.artifacts


def write(tmp_path, block: str, name="prog.py", before="", after=""):
    path = tmp_path / name
    path.write_text(before + block + after, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def programs(table, train):
    """专家、按 M 查表、一个配置走天下，加上一次进化（200 个提议）最后留在程序库里的程序。"""
    out = evolve(Evaluator(train, table), 200, seed=2)
    return [EXPERT, per_m_table(train, table), best_single_config(train, table)] + out["population"]


def test_initial_program_is_the_lecture_expert_between_the_markers():
    with open(os.path.join(HERE, "initial_program.py"), encoding="utf-8") as f:
        text = f.read()
    assert parse(text) == EXPERT and render(EXPERT) in text


def test_combined_score_is_geomean_speedup_through_our_api(programs, table, tmp_path):
    train, test = split_shapes()
    for i, p in enumerate(programs[:12]):
        path = write(tmp_path, render(p), f"p{i}.py")
        m = metrics(ev.evaluate(path))
        tr = geomean_speedup(p, train, table)
        assert m["combined_score"] == pytest.approx(tr, rel=1e-12) and m["train_speedup"] == m["combined_score"]
        assert m["test_speedup"] == pytest.approx(geomean_speedup(p, test, table), rel=1e-12)
        assert m["oracle_fraction"] == pytest.approx(tr / oracle_speedup(train, table), rel=1e-12)
        assert (m["rules"], m["launchable"], m["full_evaluation"]) == (p.n_rules(), 1.0, 1.0)


@pytest.mark.parametrize("bad,says", [
    ("    return Config(BM=256, BN=128, BK=64, warps=4, stages=3, group=8)\n", "不能启动"),
    ("    if M > 16:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
     "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n", "DSL"),
])
def test_a_program_that_does_not_parse_or_launch_scores_0_with_the_students_sentence(bad, says, tmp_path):
    path = write(tmp_path, "# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n" + bad + "# EVOLVE-BLOCK-END\n")
    with pytest.raises(ProgramError) as student:              # 学生的专家文件写成这样时看到的那句话
        load_heuristic(path)
    for stage in (ev.evaluate, ev.evaluate_stage1, ev.evaluate_stage2):
        r = stage(path)
        assert metrics(r)["combined_score"] == 0.0 and metrics(r)["launchable"] == 0.0
        assert artifacts(r) == {"error": str(student.value)} and says in str(student.value)
        assert re.match(re.escape(display_path(path)) + r":\d+: ", artifacts(r)["error"])   # 学生看到的那样写


def test_code_in_the_program_scores_0_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    inside = write(tmp_path, "# EVOLVE-BLOCK-START\ndef choose_config(M, N, K):\n"
                             f"    __import__('os').system('touch {marker}')\n"
                             "    return Config(BM=128, BN=128, BK=64, warps=4, stages=3, group=8)\n# EVOLVE-BLOCK-END\n",
                   "inside.py")
    r = ev.evaluate(inside)
    assert metrics(r)["combined_score"] == 0.0 and "inside.py:3:" in artifacts(r)["error"]
    outside = write(tmp_path, render(EXPERT), "outside.py", before=f"open({str(marker)!r}, 'w').write('x')\n",
                    after=f"__import__('os').system('touch {marker}')\n")
    assert metrics(ev.evaluate(outside))["combined_score"] == pytest.approx(1.0)   # 块外的代码不读，也不执行
    assert not marker.exists()


def test_stage1_is_the_probe_stage_of_03(programs, table, train, tmp_path):
    # 同样的 6 个探针形状；过不过门槛（config.yaml）和 03 的评估器对着专家当父程序时"有没有希望"一样
    with open(os.path.join(HERE, "config.yaml"), encoding="utf-8") as f:
        config = f.read()
    threshold = float(re.search(r"cascade_thresholds: \[([\d.]+)\]", config).group(1))
    assert threshold == pytest.approx(math.exp(-PROBE_SLACK), abs=5e-5) and "cascade_evaluation: true" in config
    ours = Evaluator(train, table)
    expert = ours.evaluate_initial(EXPERT)
    assert list(ev._state()["ev"].probe) == list(ours.probe) and len(ours.probe) == 6
    agree = []
    for i, p in enumerate(programs):
        m = metrics(ev.evaluate_stage1(write(tmp_path, render(p), f"s{i}.py")))
        probe_log = math.log(m["combined_score"])
        assert probe_log == pytest.approx(ours._run(p, None)["probe_score"], abs=1e-12)
        agree.append((m["combined_score"] >= threshold) == (not ours._hopeless(probe_log, expert)))
    assert all(agree)


def run_oe(*args):
    return [sys.executable, RUN, "--iterations", "6", *args]


@ahead(waits=True)            # 大半时间在等 OpenEvolve 的 worker 和 MockLLM 服务器：会话一开始就在"等着的"后台线程跑
def two_runs():
    """run_openevolve.py 跑一次（后台先跑好：PREFETCH）。OpenEvolve 同样的种子不保证同样的运行（见 oe_child.py 的
    _seeded_ids），所以这里不比两次运行。"""
    d1 = os.path.join(session_dir("oe1"), "out")
    (p1,) = run_concurrently(run_oe("--output", d1), timeout=240)
    return (p1, d1), None


@ahead(waits=True)
def seed_1_run():
    """make openevolve 印的 make openevolve ARGS="--seed 1 --iterations 6"（Makefile 把 ARGS 原样交给 run_openevolve.py；
    这里的第一次运行提议数就是 6）。
    环境里设了 http_proxy（很多校园网的机器都设）：讲师报过，OpenEvolve 连本机 MockLLM 服务器的请求也交给了代理，
    并排比较就成了"OpenEvolve 全部失败"。返回 (CompletedProcess, 代理收到的请求)。"""
    from hostile_server import HostileServer
    d = os.path.join(session_dir("oe_seed1"), "out")
    with HostileServer() as proxy:
        env = {k: v for k, v in base_env().items() if k.lower() != "no_proxy"}
        env.update(http_proxy=proxy.origin, HTTP_PROXY=proxy.origin, https_proxy=proxy.origin, HTTPS_PROXY=proxy.origin)
        (p,) = run_concurrently(run_oe("--seed", "1", "--output", d), timeout=240, env=env)
        received = list(proxy.received)
    return p, received


@ahead(waits=True)
def a100_run():
    """run_openevolve.py --gpu a100（助教报过：make openevolve ARGS="--gpu l40s" 悄悄还是 H100）。"""
    d = os.path.join(session_dir("oe_a100"), "out")
    (p,) = run_concurrently([sys.executable, RUN, "--iterations", "6", "--gpu", "a100", "--output", d], timeout=240)
    return p, d


@ahead(waits=True)
def odd_loopback_run():
    """config.yaml 的 api_base 写成 http://127.1:端口/v1（本机，写法不常见）、删掉 api_key 那行（用环境变量里的密钥），
    环境里设了 http_proxy：返回 (CompletedProcess, 代理收到的请求)。讲师报过：开跑前的检查直接连，OpenEvolve 的
    httpx 却把请求连同 "authorization: Bearer 密钥" 明文交给了代理（它的 no_proxy 只认字面相同的 127.0.0.1）。"""
    import shutil

    from hostile_server import HostileServer
    from mock_llm_server import MockServer
    root = pathlib.Path(session_dir("oe_odd_loopback"))
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), root / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    cfg = root / "lecture14" / "openevolve" / "config.yaml"
    with MockServer(seed=0) as mock, HostileServer() as proxy:
        text = cfg.read_text(encoding="utf-8")
        assert "  api_base: http://127.0.0.1:8765/v1\n" in text and "  api_key: not-needed-for-the-mock\n" in text
        cfg.write_text(text.replace("  api_base: http://127.0.0.1:8765/v1\n", f"  api_base: http://127.1:{mock.port}/v1\n")
                       .replace("  api_key: not-needed-for-the-mock\n", ""), encoding="utf-8")
        env = {k: v for k, v in base_env().items() if k.lower() != "no_proxy"}
        env.update(http_proxy=proxy.origin, HTTP_PROXY=proxy.origin, OPENAI_API_KEY=ODD_KEY)
        (p,) = run_concurrently([sys.executable, str(root / "lecture14" / "openevolve" / "run_openevolve.py"),
                                 "--iterations", "2", "--output", str(root / "out")], timeout=240, env=env, cwd=str(root))
        received = list(proxy.received)
    return p, received


ODD_KEY = "sk-test-ODD-LOOPBACK-SECRET"
PREFETCH = [two_runs, seed_1_run, a100_run, odd_loopback_run]


def test_a_loopback_api_base_in_an_odd_spelling_never_sends_the_key_to_a_proxy():
    p, received = odd_loopback_run()
    assert received == [] and ODD_KEY not in repr(received), received[:2]
    assert p.returncode == 0 and ODD_KEY not in p.stdout + p.stderr, p.stderr[-2000:]
    m = re.search(r"2个提议：(\d+)个做了完整评估", "".join(p.stdout.split()))
    assert m and int(m.group(1)) >= 1, p.stdout[-2000:]       # 真的问到了 MockLLM 服务器


@pytest.mark.parametrize("host, plain", [("127.1", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("[::ffff:127.0.0.1]", "127.0.0.1"),
                                         ("[0:0:0:0:0:0:0:1]", "::1"), ("localhost", "localhost"), ("127.0.0.2", "127.0.0.2"),
                                         ("example.com", None), ("10.0.0.1", None)])
def test_loopback_literal_is_the_same_address_in_the_spelling_no_proxy_matches(host, plain):
    assert oe_child.loopback_literal(host) == plain


def test_make_openevolve_honours_gpu_in_its_sentences_its_evaluator_and_its_commands(table):
    p, out = a100_run()
    assert p.returncode == 0, p.stderr[-3000:]
    flat = "".join(p.stdout.split())
    assert "时间来自第13讲的解析模型（A100的参数，不是实测）" in flat, p.stdout
    tr = float(re.search(r"训练形状上比专家快([\d.]+)×", flat).group(1))
    best = parse(oe_results.read_run(out)["best_code"])
    assert round(oe_results.read_run(out)["best_metrics"]["combined_score"], 3) == tr    # 评估器（子进程）也是 A100
    assert tr > 1.0, "6 个提议没找到比专家好的程序：下面这句比不出 GPU"
    if gpus.selected_key() != "a100":                  # 这个测试进程的 GPU（默认 H100）上算出来不一样
        try:
            here = round(geomean_speedup(best, split_shapes()[0], table), 3)
        except ValueError:                             # A100 上能启动、这块 GPU 上启动不了：当然不是同一个模型
            here = None
        assert here != tr
    commands = [line.strip() for line in unfold(p.stdout).split("\n可以试试：\n", 1)[1].splitlines()
                if line.strip().startswith(("python3 ", "make "))]
    assert commands == ["python3 lecture14/07_openevolve.py --gpu a100",
                        'make openevolve ARGS="--gpu a100 --seed 1 --iterations 6"'], commands


def test_make_openevolve_suggests_commands_that_run_as_printed():
    """跑完 make openevolve 也有"可以试试"：和迷你循环并排比（07 的默认运行，test_terminal_width.py 在伪终端里照原样
    跑它），换一个种子（照印的参数跑）。"""
    import test_terminal_width
    (p, _), _ = two_runs()
    tail = unfold(p.stdout).split("\n可以试试：\n", 1)[1]
    commands = [line.strip() for line in tail.splitlines() if line.strip().startswith(("python3 ", "make "))]
    assert commands == [f"python3 lecture14/07_openevolve.py{GPU_FLAG}",
                        f'make openevolve ARGS="{GPU_FLAG[1:] + " " if GPU_FLAG else ""}--seed 1 --iterations 6"'], commands
    assert "lecture14/07_openevolve.py" in test_terminal_width.NUMBERED
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        assert re.search(r"^openevolve:.*\n\t\$\(PY\) lecture14/openevolve/run_openevolve\.py \$\(ARGS\)$", f.read(), re.M)
    q, _ = seed_1_run()
    assert q.returncode == 0 and "Traceback" not in q.stderr, q.stderr[-2000:]
    assert "种子1；LLM是MockLLM服务器" in "".join(q.stdout.split())
    # 讲师报过：--seed 1 跑完又建议 ARGS="--seed 1"。换种子的建议往前走一个
    again = [line.strip() for line in unfold(q.stdout).split("\n可以试试：\n", 1)[1].splitlines() if line.strip().startswith("make ")]
    assert again == [f'make openevolve ARGS="{GPU_FLAG[1:] + " " if GPU_FLAG else ""}--seed 2 --iterations 6"'], again


def test_openevolve_talks_to_the_local_mock_server_directly_even_when_a_proxy_is_set():
    q, proxied = seed_1_run()
    assert proxied == [] and q.returncode == 0, (proxied, q.stderr[-2000:])
    m = re.search(r"6个提议：(\d+)个做了完整评估", "".join(q.stdout.split()))
    assert m and int(m.group(1)) >= 1, q.stdout                  # 代理没接手：有提议真的变成了程序、评估过


def test_a_configured_server_that_is_not_running_is_one_sentence_before_openevolve_starts(tmp_path):
    """讲师报过：照"换成真的模型"改了 config.yaml、服务器却没开，make openevolve 跑了 98 秒、退出码 0，只说提议
    "没变成子程序"。现在开跑之前和 --llm 一样先看一眼：一句话、退出码 2，OpenEvolve 根本不启动。"""
    import shutil
    import socket
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    with socket.socket() as s:                                   # 一个刚空出来、没人听的端口
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "lecture14" / "openevolve" / "config.yaml"
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("  api_base: http://127.0.0.1:8765/v1\n", f"  api_base: http://127.0.0.1:{port}/v1\n")
                   .replace("    - name: mock\n", "    - name: qwen2.5-coder:7b\n"), encoding="utf-8")
    p = subprocess.run([sys.executable, str(tmp_path / "lecture14" / "openevolve" / "run_openevolve.py"),
                        "--iterations", "3", "--output", str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=60, env=base_env(), cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr[-2000:]
    said = "".join(p.stderr.split())
    assert "config.yaml的LLM用不了：连不上LLM服务器" in said and "config.yaml的api_base" in said and "--llm" not in said
    assert not os.path.exists(tmp_path / "out" / "openevolve.log")                 # OpenEvolve 没有启动


def test_the_best_program_counts_its_dead_rules():
    from evolve import EXPERT, Rule
    dead = EXPERT.__class__(EXPERT.rules + (Rule((("M", 8),), EXPERT.default),), EXPERT.default)   # M <= 8 被 M <= 16 挡住
    assert oe_results.rules_said(EXPERT) == f"{EXPERT.n_rules()} 条规则"
    assert oe_results.rules_said(dead) == f"{dead.n_rules()} 条规则，其中 1 条是死规则"


def test_config_yaml_names_only_make_variables_the_makefile_has():
    """讲师报过：config.yaml 说 make openevolve ITER=1000，Makefile 没有 ITER（make 照样跑 300 个提议，什么都不说）。"""
    with open(os.path.join(HERE, "config.yaml"), encoding="utf-8") as f:
        text = f.read()
    uses = set(re.findall(r"make openevolve ([A-Z_]+)=", text))
    assert uses <= {"ARGS"}, uses
    assert 'ARGS="--iterations 1000"' in text and "--iterations" in open(RUN, encoding="utf-8").read()


def test_openevolve_runs_a_few_iterations_offline_and_prints_the_best_program(table):
    (p, out), _ = two_runs()
    assert p.returncode == 0, p.stderr[-3000:]
    res = oe_results.read_run(out)
    best = parse(res["best_code"])
    train, test = split_shapes()
    tr, te = geomean_speedup(best, train, table), geomean_speedup(best, test, table)
    assert res["best_metrics"]["combined_score"] == pytest.approx(tr, rel=1e-12)     # evaluator 的分数 = 我们的 API
    flat = "".join(p.stdout.split())                             # 句子按宽度折过行
    assert f"训练形状上比专家快{tr:.3f}×，测试形状上{te:.3f}×" in flat
    assert render(best) in p.stdout and tr >= 1.0
    c = oe_results.count(res)
    assert sum(c.values()) == 6 and c["full"] >= 1
    assert f"6个提议：{c['full']}个做了完整评估，{c['probe']}个在探针级就停了" in flat
    assert max(map(display_width, p.stdout.split("\n"))) <= PIPE_WIDTH      # 管道里 100 列（以前有 124 列的行）
    assert "OpenEvolve：" in p.stderr                         # 进度在标准错误上


def test_without_openevolve_one_sentence_and_exit_1():
    code = f"import runpy, sys; sys.modules['openevolve'] = None; sys.argv = [{RUN!r}]; runpy.run_path({RUN!r}, run_name='__main__')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=base_env(), cwd=ROOT)
    assert (p.returncode, p.stdout) == (1, "") and p.stderr.startswith(runmod.MISSING) and p.stderr.count("\n") == 1
    assert "requirements-openevolve.txt" in p.stderr and "make openevolve" in p.stderr      # 有 .venv：两种装法
    assert "装好以后运行 python3 lecture14/openevolve/run_openevolve.py。" in p.stderr


def test_without_a_venv_only_make_openevolve_is_suggested(monkeypatch, capsys):
    """审读报过：新克隆的仓库（还没有 .venv）里，07 让人运行 .venv/bin/pip install ……，没有这个文件。"""
    import runner
    monkeypatch.setattr(runner, "VENV_PYTHON", os.path.join(ROOT, "no-such-venv", "bin", "python"))
    monkeypatch.setattr(oe_env, "have_openevolve", lambda: False)
    with pytest.raises(SystemExit) as e:
        oe_env.need_openevolve(runmod.MISSING, "python3 lecture14/07_openevolve.py")
    err = capsys.readouterr().err
    assert e.value.code == 1 and "make openevolve" in err and ".venv/bin/pip" not in err and "先建好 .venv" in err


def test_run_openevolve_switches_to_the_venv_that_has_openevolve():
    """审读报过：OpenEvolve 只装在 .venv 里时，python3 lecture14/openevolve/run_openevolve.py 说"没装"，07 却会换成 .venv。"""
    import runner
    code = ("import sys, os; sys.path[:0] = [sys.argv[1] + '/lecture01']; import runner; "
            "runner.VENV_PYTHON = sys.executable; sys.modules['openevolve'] = None; "
            "sys.path.insert(0, sys.argv[1] + '/lecture14/openevolve'); import run_openevolve as oe; "
            "runner.reexec = lambda: (print('REEXEC'), sys.exit(7)); "
            "sys.prefix = '/somewhere/else'; oe.need_openevolve(oe.MISSING, 'x')")
    p = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in base_env().items() if k != runner.REEXEC_FLAG}, cwd=ROOT)
    assert (p.returncode, p.stdout.strip()) == (7, "REEXEC"), p.stderr


def test_openevolve_is_pinned_in_its_own_requirements_file_and_ci_installs_it():
    with open(os.path.join(ROOT, "requirements-openevolve.txt"), encoding="utf-8") as f:
        assert "openevolve==0.4.0" in f.read().split()
    with open(os.path.join(ROOT, "requirements-dev.txt"), encoding="utf-8") as f:
        assert "-r requirements-openevolve.txt" in f.read()
    with open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8") as f:
        assert "openevolve" not in f.read()
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        assert "lecture14/openevolve/run_openevolve.py" in f.read()


@pytest.mark.parametrize("script,args,says", [
    (RUN, ["--iterations", "0"], "--iterations"), (RUN, ["--seed", "-1"], "--seed"), (RUN, ["--iter", "5"], "--iter"),
    # 学生报过：多敲了几个 0 的 --iterations 照跑，太大的 --seed 是"OpenEvolve 出错退出"、日志里一段 traceback
    (RUN, ["--iterations", "3000000"], "1 到 5,000"), (RUN, ["--seed", "99999999999999999999"], "0 到 4,294,967,295"),
    (os.path.join(ROOT, "lecture14", "mock_llm_server.py"), ["--port", "70000"], "--port"),
    (os.path.join(ROOT, "lecture14", "mock_llm_server.py"), ["--seed", "-1"], "--seed"),
])
def test_bad_arguments_are_one_sentence_and_exit_2(script, args, says):
    p = run_script(script, *args, env=base_env(), timeout=60)
    assert p.returncode == 2 and p.stdout == "" and says in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="读 /proc 找子进程")
@pytest.mark.parametrize("how", ["ctrl_c", "killed", "int_from_a_script"])
def test_make_openevolve_leaves_nothing_running_after_ctrl_c_or_being_killed(how):
    # Ctrl-C：一秒内停下（退出码 130），MockLLM 服务器、OpenEvolve 和它的 worker 都结束；
    # 被 SIGKILL（比如 pytest 自己被杀）：没人收拾，服务器和 OpenEvolve 发现启动它们的进程没了，自己在几秒内退出。
    # int_from_a_script：讲师报过，脚本里用 & 起的 run_openevolve 继承了"不理 SIGINT"，kill -INT 它照样跑完（323 秒），
    # 04 却一下就停；现在它和编号脚本一样接 Ctrl-C
    import signal
    import time
    out = os.path.join(session_dir("oe_kill"), "out")
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if how == "int_from_a_script" else None
    p = subprocess.Popen([sys.executable, RUN, "--iterations", "200", "--output", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True, env=base_env(), cwd=ROOT,
                         preexec_fn=ignore)
    kids = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if re.search(r"OpenEvolve：\d+/200", p.stderr.readline()):
                break
        kids = descendants(p.pid)
        assert len(kids) >= 3, kids                           # 服务器、OpenEvolve、它的 worker
        t = time.monotonic()
        if how == "int_from_a_script":
            os.kill(p.pid, signal.SIGINT)                     # kill -INT 进程号（不是整个进程组）
        else:
            os.killpg(p.pid, signal.SIGINT if how == "ctrl_c" else signal.SIGKILL)
        p.wait(10)
        if how != "killed":
            err = p.stderr.read()
            assert p.returncode == 130 and time.monotonic() - t < 1.5 and "Traceback" not in err
            # 讲师报过：Ctrl-C 以后不知道最好的程序存下了。说一句在哪（"已中断。"还是最后一行）
            assert os.path.exists(os.path.join(out, oe_start.BEST_FILE)) and oe_start.BEST_FILE in err, err
            assert err.strip().splitlines()[-1] == "已中断。"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and [k for k in kids if alive(k)]:
            time.sleep(0.1)
        assert not [k for k in kids if alive(k)]
    finally:
        stop_group(p, list(kids))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="伪终端和控制终端用 Linux 的 ioctl 设")
def test_ctrl_c_typed_in_a_terminal_says_where_the_best_program_is_on_its_own_line():
    """讲师报过：在终端里按 Ctrl-C 停下 make openevolve，终端回显的 "^C" 和"停下之前完整评估过的最好程序……"挤在
    一行（"^C停下之前……"），下面空一行才是"已中断。"。和 04 的"已中断。"一样（test_interrupt.py）：这里真的在
    伪终端里"按"一次，那句话自成一行，"已中断。"紧跟在它下面。"""
    out_dir = os.path.join(session_dir("oe_caret"), "out")
    best = os.path.join(out_dir, oe_start.BEST_FILE)

    def press(out, pid):                                         # 已经有最好的程序记下了：按 Ctrl-C，记下它的后代进程
        return re.search(r"OpenEvolve：\d+/300".encode(), out) and os.path.exists(best) and (descendants(pid) or {pid})

    code, text, pressed = ctrl_c_in_a_terminal([RUN, "--iterations", "300", "--output", out_dir], press, seconds=90,
                                               env={**base_env(), "NO_COLOR": "1", "COLUMNS": "1000"})  # 不折行：整句在一行里
    assert code == 130, text[-800:]
    assert pressed and "^C\n停下之前完整评估过的最好程序" in text, text[-800:]
    assert "\n\n已中断。" not in text and text.endswith("best_so_far.json。\n已中断。\n"), text[-800:]


@pytest.mark.parametrize("mode", ["redirect", "not_json", "ids_int", "status999", "no_such_model", "nobody_there",
                                  "bad_port"])
def test_a_bad_configured_server_is_named_in_config_yaml_words_not_command_line_flags(mode):
    """讲师报过：config.yaml 的 api_base 被转向时，make openevolve 说"信得过那个地址的话，就用 --llm ……"——它没有
    --llm。开跑前看一眼的每一种毛病，说法都是 config.yaml 的 api_base、name；转向时说把 api_base 改成哪个地址。"""
    import socket
    from hostile_server import HostileServer
    with HostileServer() as other:
        models = {"redirect": "302", "no_such_model": "list"}.get(mode, mode)
        with HostileServer(models=models if mode not in ("nobody_there", "bad_port") else "list",
                           location=other.url, model_ids=("another-model",)) as s:
            base = s.url
            if mode == "nobody_there":
                with socket.socket() as free:                    # 一个刚空出来、没人听的端口
                    free.bind(("127.0.0.1", 0))
                    base = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
            elif mode == "bad_port":
                base = "http://127.0.0.1:99999/v1"
            said = oe_settings.check_configured(base, "qwen2.5-coder:7b")
        assert other.received == []
    assert said and said.startswith("config.yaml 的 LLM 用不了：") and "\n" not in said, said
    assert "--llm" not in said and "--model" not in said, said
    if mode == "redirect":
        assert f"就把 config.yaml 的 api_base 改成 {other.url}" in said, said
    if mode == "no_such_model":
        assert "another-model" in said and "config.yaml 的 name" in said, said


@pytest.mark.parametrize("suffix, part", [("?api-key=sk-query-secret", "查询串"), ("#sk-query-secret", "#"),
                                          (";key=sk-query-secret", ";")])
def test_an_api_base_with_a_query_is_refused_before_openevolve_sends_it_anywhere(suffix, part):
    """讲师的复查报过：config.yaml 的 api_base 带着 ?key=… 时，OpenEvolve 发到 /v1?key=…/chat/completions，
    查询串连同里面的密钥进了它的日志。现在开跑之前一句话：哪一部分不行、改成什么，请求一个也不发，密钥不印。"""
    from hostile_server import HostileServer
    with HostileServer(models="list", model_ids=("m",)) as s:
        said = oe_settings.check_configured(s.url + suffix, "m")
        assert s.received == []
    assert said and said.startswith("config.yaml 的 LLM 用不了：api_base 带着") and part in said, said
    assert f"改成 {s.url}" in said and "sk-query-secret" not in said and "\n" not in said, said


@pytest.mark.parametrize("error, kind", [
    ("LLM generation failed: Error code: 500", "LLM 回 HTTP 500"),
    ("LLM generation failed: Error code: 429 - {'error': 'slow down'}", "LLM 回 HTTP 429"),
    ("LLM generation failed: ", "LLM 超时"),                               # asyncio 的 TimeoutError 没有文字
    ("LLM generation failed: Request timed out.", "LLM 超时"),
    ("LLM generation failed: Connection error.", "连不上 LLM 服务器"),
    ("LLM generation failed: Error code: 307 - Temporary Redirect", REDIRECT),   # careful_http 以后，转向是一次失败
    ("LLM generation failed: Error code: 304 - Not Modified", "LLM 回 HTTP 304"),   # 和 --llm 一样：304 不是转向
    ("LLM generation failed: LLM endpoint returned a raw string instead of a chat completion (streaming responses "
     "are not supported): '<html>nope</html>'", BAD_JSON),
    ("LLM generation failed: \x1b[31msk-secret", "LLM 调用出错（别的原因，见 openevolve.log）"),   # 服务器的字不印
    (f"LLM generation failed: Error code: 500 - {MOCK_BUG_REPLY}", MOCK_BUG),     # 本讲的 MockLLM 服务器出了程序错
    (f"LLM generation failed: Error code: 500 - {MOCK_BUG_REPLY}!", "LLM 回 HTTP 500"),   # 只认它那一整句
    ("LLM generation failed: 'utf-8' codec can't decode byte 0x8b in position 1: invalid start byte",
     BAD_JSON),                                                              # 旧的日志里这样说（现在是 COMPRESSED）
    ("No valid diffs found in response", None),                            # 回复来了，打不上：不是 LLM 调用失败
    ("LLM returned None response", None),
    # careful_kind 起的名字（讲师的复查报过：这两种以前是"连不上"、OpenEvolve 的 "None response"）
    ("LLM generation failed: LLM 回 HTTP 101", "LLM 回 HTTP 101"),
    ("LLM generation failed: LLM 回的是工具调用（tool_calls），不是文字", "LLM 回的是工具调用（tool_calls），不是文字"),
    # tame_replies 起的名字：服务器说不收哪个参数（服务器的 400 正文在 openai 库那句话里排在 "Error code: 400 - " 后面，
    # 冒充不了这个开头）
    ("LLM generation failed: LLM 回 HTTP 400，不收参数 max_tokens", "LLM 回 HTTP 400，不收参数 max_tokens"),
    ("LLM generation failed: Error code: 400 - LLM 回 HTTP 400，不收参数 x", "LLM 回 HTTP 400")])
def test_openevolve_log_errors_are_read_as_failure_kinds(error, kind):
    assert oe_failures.failure_kind(error) == kind


def test_only_a_server_on_this_machine_can_say_it_is_a_broken_mock_llm_under_openevolve():
    # 审读报过：OpenEvolve 那条路上，任何服务器回一句 MockLLM 出了程序错误就停下运行，还让人去看 MockLLM 的终端
    from evolve.openai_llm import MOCK_BUG, MOCK_BUG_REPLY
    error = f"LLM generation failed: Error code: 500 - {MOCK_BUG_REPLY}"
    assert oe_failures.failure_kind(error, local=True) == MOCK_BUG
    assert oe_failures.failure_kind(error, local=False) == "LLM 回 HTTP 500"
    assert oe_failures.only_local("http://127.0.0.1:8765/v1") and oe_failures.only_local("http://[::1]:8000/v1")
    assert not oe_failures.only_local("http://192.0.2.7:8000/v1") and not oe_failures.only_local("https://api.example.com/v1")


class _Noted(Exception):
    pass


def _run_against(server_url, iterations, tmp_path, **kw):
    procs = oe_processes.Processes()
    seen = []
    try:
        return oe_processes.run_openevolve(procs, server_url, iterations, 0, str(tmp_path / "out"),
                                     progress=lambda k, n: seen.append(k), **kw), seen
    finally:
        procs.close()


@ahead(waits=True)                # 大半时间在等 OpenEvolve 对 HTTP 500 的重试（约 15 秒）：会话一开始就在"等着的"后台线程跑
def failing_server_runs():
    """OpenEvolve 对着一个每次都回 HTTP 500 的服务器跑两次：正好 GIVE_UP_AFTER 个提议（跑完，最后接连那么多个失败），
    和 50 个（接连 GIVE_UP_AFTER 个失败就停下）。返回 (第一次的结果, 第二次抛的 RuntimeError 或 None,
    第二次停下之前 OpenEvolve 做完了几个提议：数它的日志)。"""
    from hostile_server import HostileServer
    n = oe_failures.GIVE_UP_AFTER
    tmp = pathlib.Path(session_dir("oe_http500"))
    with HostileServer(chat="http500", max_seconds=10) as s:
        res, _ = _run_against(s.url, n, tmp / "a")
        try:
            _run_against(s.url, 50, tmp / "b")
            stopped = None
        except RuntimeError as e:
            stopped = e
    with open(tmp / "b" / "out" / "openevolve.log", "rb") as f:
        done = {m[1] for line in f if (m := oe_failures._DONE.match(line))}
    return res, stopped, len(done)


# 停下得晚了多少算对：run_openevolve 每 LOG_READ_SECONDS 秒读一次 OpenEvolve 的日志，读到第 GIVE_UP_AFTER 个失败时
# OpenEvolve 也许已经做完了下一个；机器很忙时读得更晚。接连失败的提议每个至少要等 retry_delay × retries 秒
# （config.yaml：1 秒），晚读几秒就多做几个。数提议、不量秒：以前量的"50 个提议的那次不到 60 秒"在很忙的机器上
# 量的多半是 OpenEvolve 启动得多慢，接连 3 × GIVE_UP_AFTER 个失败才停下也不到 60 秒、看不出来
LATE_PROPOSALS = 6


PREFETCH.append(failing_server_runs)


def test_openevolve_against_a_failing_server_counts_the_failures_by_kind_and_stops_after_four_in_a_row():
    """讲师报过：config.yaml 指向一个每次都回 HTTP 500（或垃圾、或不回答）的服务器，make openevolve 照样跑完、退出码 0，
    只说提议"没变成子程序（回复打不上、没改动……）"——像是模型写得不好。现在从 OpenEvolve 的日志按种类数出 LLM 调用
    失败（和本讲的 --llm 客户端同样的叫法），接连 GIVE_UP_AFTER 个都失败就停下它、一句话说清楚。"""
    n = oe_failures.GIVE_UP_AFTER
    res, stopped, done = failing_server_runs()
    assert res["llm_failed"] == {"LLM 回 HTTP 500": n}                      # 预算正好用完：跑完，按种类数
    c = oe_results.count(res)
    said = oe_results.no_child_said(c, res)
    assert c["no_child"] == n and f"{n} 个是 LLM 调用失败（LLM 回 HTTP 500 ×{n}" in said, said
    # 讲师报过：这时说"4/4 个提议"，又说"停下了，没有跑完 4 个提议"。现在说跑完了、最后接连几个失败（main 退出码 1）
    assert res["gave_up"].startswith(f"OpenEvolve 跑完了 {n} 个提议，可 {n} 个全都是 LLM 调用失败"), res["gave_up"]
    assert "没有跑完" not in res["gave_up"]
    assert stopped is not None and n <= done <= n + LATE_PROPOSALS, (done, stopped)   # 接连 n 个就停下，不跑完 50 个
    msg = str(stopped)
    assert f"接连 {n} 个提议都是 LLM 调用失败（LLM 回 HTTP 500 ×{n}）" in msg and "没有跑完 50 个提议" in msg, msg
    assert "\n" not in msg and "openevolve.log" in msg
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:           # README 说的是同一个数
        assert f"接连{n}个提议都失败就停下它" in "".join(f.read().split())


@ahead(waits=True)
def reasoning_model_runs():
    """make openevolve 对着一个像 OpenAI 推理模型（gpt-5-mini）的桩：不收 max_tokens、temperature（reasoning_model），推理要
    2,000 个看不见的 token，上限不够时 content 是 ""、finish_reason 是 "length"（stub 的 reasoner）。在仓库的一份拷贝里
    照 README 改 config.yaml 的 api_base 和 name，max_tokens 改回以前的 1024，跑 12 个提议；再照停下时那句话说的改
    max_tokens，跑 3 个。返回 (第一次, 第二次, 两次之间那句话建议的值, 每次服务器收到的正文)。"""
    import shutil

    from stub_llm_server import StubServer, reasoning_model
    root = pathlib.Path(session_dir("oe_reasoner"))
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), root / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    cfg = root / "lecture14" / "openevolve" / "config.yaml"
    script = str(root / "lecture14" / "openevolve" / "run_openevolve.py")
    runs, bodies = [], []
    def slowly(body):                 # 每个回答先等 REFUSE_SECONDS（见那里：不然 OpenEvolve 有时在 make openevolve 读到
        time.sleep(REFUSE_SECONDS)    # 日志之前就做完了 12 个提议，没有"停下了"那句——一次满载的运行里见过）
        return reasoning_model(body)
    with StubServer(lambda n, text: "reasoner", models=("gpt-5-mini",), reject=slowly, max_requests=200) as s:
        text = cfg.read_text(encoding="utf-8")
        text = (text.replace("  api_base: http://127.0.0.1:8765/v1\n", f"  api_base: {s.url}\n")
                .replace("    - name: mock\n", "    - name: gpt-5-mini\n"))
        cfg.write_text(re.sub(r"(?m)^  max_tokens: \d+", "  max_tokens: 1024", text), encoding="utf-8")
        suggested = None
        for iterations, out in (("12", "a"), ("3", "b")):
            if out == "b":
                found = re.search(r"把 config\.yaml 的 max_tokens 从 [\d,]+ 调到 (\d+)", runs[0].stderr)
                suggested = found and found.group(1)
                cfg.write_text(re.sub(r"(?m)^  max_tokens: \d+", f"  max_tokens: {suggested}",
                                      cfg.read_text(encoding="utf-8")), encoding="utf-8")
            seen = len(s.requests)
            (p,) = run_concurrently([sys.executable, script, "--iterations", iterations, "--output", str(root / out)],
                                    timeout=240, env=base_env(), cwd=str(root))
            runs.append(p)
            bodies.append([r[3] for r in s.requests[seen:] if r[3] is not None])
    return runs[0], runs[1], suggested, bodies, (root / "a" / "openevolve.log").read_text(encoding="utf-8", errors="replace")


PREFETCH.append(reasoning_model_runs)


def test_openevolve_with_a_reasoning_model_counts_cut_off_replies_and_says_how_to_raise_max_tokens():
    """helper 照 OpenAI 的推理模型写的假服务器报过：config.yaml 的 max_tokens: 1024，OpenEvolve 0.4.0 对 gpt-5 这样的名字把它
    当作 max_completion_tokens 发，推理把它全用掉，回复是空的；OpenEvolve 不看 finish_reason，make openevolve 说 20 个提议
    "回复打不上、没改动"，退出码 0。现在被截断、修改没写完的回复是一次"回复到了 token 上限、被截断"，接连 4 个就停下，
    那句话说把 max_tokens 调到多少；照它改了 config.yaml，修改都写完了。"""
    from evolve.openai_llm import CUT_OFF
    short, raised, suggested, (before, after), log = reasoning_model_runs()
    assert before and all(b.get("max_completion_tokens") == 1024 and "max_tokens" not in b and "temperature" not in b
                          for b in before), (before[:2], short.stderr[-2000:])   # OpenEvolve 0.4.0 对 gpt-5 名字发的
    assert short.returncode == 1 and "Traceback" not in short.stderr, short.stderr[-2000:]
    said = [line for line in short.stderr.splitlines() if "停下了" in line]
    assert said and f"接连 {oe_failures.GIVE_UP_AFTER} 个提议都是 LLM 调用失败（{CUT_OFF} ×{oe_failures.GIVE_UP_AFTER}）" in said[0], said
    assert "把 config.yaml 的 max_tokens 从 1,024 调到 4096（" in said[0] and "检查 LLM 服务器" not in said[0], said
    assert short.stderr.count("max_tokens 从") == 1, short.stderr                 # 办法说一次
    # 讲师报过：OpenEvolve 按 config.yaml 的 retries（1）把每个被截断的回复再问一次，每次都按上限收钱。现在不重试
    # （OpenEvolve 每次重试都在日志里写 "Error on attempt k/n: … Retrying..."，最后一次写 "All n attempts failed"）
    assert re.search(r" - [A-Z]+ - Iteration \d+ error: LLM generation failed: " + re.escape(CUT_OFF), log), log[-2000:]
    assert "Retrying" not in log and "attempts failed" not in log, log[-2000:]
    assert suggested == "4096"
    assert raised.returncode == 0 and CUT_OFF not in raised.stdout + raised.stderr, raised.stderr[-2000:]
    assert after and all(b.get("max_completion_tokens") == 4096 for b in after)
    # 修改都写完了：每个提议都变成了子程序、读得懂（有几个过了探针要看 GPU：A100 上三个都停在探针级）
    assert "，0个读不懂或启动不了（0分），0个没变成子程序" in "".join(raised.stdout.split()), raised.stdout[-1500:]


# 慢得超时的模型：桩每个回复要 SLOW_REPLY 秒，config.yaml 的 timeout 先是 1 秒（一定等不到），照那句话调大（4 倍）
# 以后比它多 2.5 秒（机器忙时一次请求多出的远比这少，见 stub_llm_server.SLACK）
SLOW_REPLY = 1.5


@ahead(waits=True)
def timing_out_runs():
    """make openevolve 对着一个每个回复要 SLOW_REPLY 秒的桩：在仓库的一份拷贝里照 README 改 config.yaml 的 api_base 和
    name，timeout 改成 1（retries 0、retry_delay 0：一个提议一个请求，停得快），跑 12 个提议；再照停下时那句话说的改
    llm 下的 timeout，跑 3 个。返回 (第一次, 第二次, 那句话建议的 timeout)。"""
    import shutil

    from stub_llm_server import StubServer
    root = pathlib.Path(session_dir("oe_timeout"))
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), root / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    cfg = root / "lecture14" / "openevolve" / "config.yaml"
    script = str(root / "lecture14" / "openevolve" / "run_openevolve.py")
    runs, suggested = [], None
    with StubServer(lambda n, text: "slow", slow_seconds=SLOW_REPLY, max_requests=200) as s:
        text = (cfg.read_text(encoding="utf-8").replace("  api_base: http://127.0.0.1:8765/v1\n", f"  api_base: {s.url}\n")
                .replace("    - name: mock\n", "    - name: stub\n"))
        for key, value in (("timeout", "1"), ("retries", "0"), ("retry_delay", "0")):   # 只改 llm 下的（evaluator 另有 timeout）
            text = re.sub(rf"(?m)^  {key}: \d+$", f"  {key}: {value}", text, count=1)
        assert "  timeout: 1\n" in text and "  timeout: 30\n" in text, text
        cfg.write_text(text, encoding="utf-8")
        for iterations, out in (("12", "a"), ("3", "b")):
            if out == "b":
                found = re.search(r"比如 timeout: (\d+)；", runs[0].stderr)
                suggested = found and found.group(1)
                cfg.write_text(cfg.read_text(encoding="utf-8").replace("  timeout: 1\n", f"  timeout: {suggested}\n"),
                               encoding="utf-8")
            (p,) = run_concurrently([sys.executable, script, "--iterations", iterations, "--output", str(root / out)],
                                    timeout=240, env=base_env(), cwd=str(root))
            runs.append(p)
    return runs[0], runs[1], suggested


PREFETCH.append(timing_out_runs)


def test_openevolve_timing_out_says_to_raise_config_timeout_and_the_suggested_value_gets_the_replies():
    """讲师在家对着 CPU 上的模型报过：每个请求都等满了 config.yaml 的 timeout，make openevolve 接连 4 个“LLM 超时”就停下，
    那句话只叫人检查 LLM 服务器和 api_base、name、密钥——开跑前的检查已经问到了服务器、认得模型名，没用的是等得不够久。
    现在那句话说超时是等满了 llm 下的 timeout、这次几秒、调大到多少；照它改了 config.yaml，提议都成了子程序。"""
    first, second, suggested = timing_out_runs()
    said = [line for line in first.stderr.splitlines() if "停下了" in line]
    assert first.returncode == 1 and "Traceback" not in first.stderr and said, first.stderr[-2000:]
    assert f"（LLM 超时 ×{oe_failures.GIVE_UP_AFTER}）" in said[0] and "检查 LLM 服务器" not in said[0], said
    assert "“LLM 超时”是请求等满了 config.yaml 里 llm 下的 timeout（这次 1 秒）还没收完回复" in said[0], said
    assert suggested == "4", said
    assert second.returncode == 0, second.stderr[-2000:]
    assert "LLM 调用失败" not in second.stdout + second.stderr, second.stdout[-1500:]
    assert "，0个读不懂或启动不了（0分），0个没变成子程序" in "".join(second.stdout.split()), second.stdout[-1500:]


def test_a_streak_with_timeouts_names_the_timeout_config_yaml_has():
    # 夹着别的失败：两样都说（仓库里的 config.yaml）。数从 config.yaml 读（助教报过：把 llm 下的 timeout 改成 120，
    # 这里写死的"（这次 300 秒）""timeout: 1200"失败成一个裸的 assert，那句话其实是对的）
    from evolve.openai_llm import MAX_TIMEOUT
    configured = oe_settings.read_config().llm.timeout
    _, check = oe_failures.streak_said(["LLM 回 HTTP 500", "LLM 超时"] * 2)
    assert check.startswith("检查 LLM 服务器和 config.yaml 的 api_base、name、密钥；“LLM 超时”是请求等满了"), check
    assert f"（这次 {configured:g} 秒）" in check, check
    assert f"比如 timeout: {min(MAX_TIMEOUT, 4 * configured):g}；" in check, check


# 服务器说不收 OpenEvolve 发的参数（HTTP 400）：OpenEvolve 0.4.0 只按模型名的开头选参数（OE_REASONING_PREFIXES）。
# 每种：(config.yaml 的 name, 服务器也认的另一个名字, 服务器不收的参数, 换了名字以后 OpenEvolve 发的参数)
REFUSED_CASES = {
    "renamed": ("openai/gpt-5-mini", "gpt-5-mini", "max_tokens", {"max_completion_tokens"}),   # 代理改了名字的推理模型
    "prefixed": ("gpt-oss-20b", "local-oss-20b", "max_completion_tokens", {"max_tokens", "temperature"}),   # 不认新参数的服务器
}


# 桩每回一个 400 先等这么久，像真的服务器一个来回那样。make openevolve 每 LOG_READ_SECONDS 读一次 OpenEvolve 的日志；
# 立刻回 400、OpenEvolve 又不重试时，12 个提议 0.3 秒就全失败了，有时在它读到之前 OpenEvolve 就跑完了——那时说的是
# "跑完了……全都是"（办法一样、退出码也是 1），不是这里要看的"接连 4 个就停下"（helper 136 在空闲的机器上碰到过一次）
REFUSE_SECONDS = 0.2


def _refuses(param):
    """像服务器那样拒绝带着 param 的请求（OpenAI 的写法，REFUSED_CASES 的第三项；max_tokens 就是 OpenAI 的推理模型），
    每次拒绝先等 REFUSE_SECONDS。"""
    from stub_llm_server import openai_error, reasoning_model
    check = reasoning_model if param == "max_tokens" else (
        lambda body: (openai_error(f"Unsupported parameter: '{param}' is not supported with this model.", param,
                                   "unsupported_parameter") if param in body else None))

    def slowly(body):
        said = check(body)
        if said is not None:
            time.sleep(REFUSE_SECONDS)
        return said
    return slowly


@ahead(waits=True)
def refused_parameter_runs():
    """make openevolve 对着一个不收某个参数的桩（REFUSED_CASES）：在仓库的一份拷贝里照 README 改 config.yaml 的 api_base 和
    name，跑 40 个提议（接连 4 个失败就停下：40 个要 REFUSE_SECONDS × 40 / 同时在路上的几个，停得下来）；再照停下时那句话说的改 name（"比如 …"给了名字就用它，不然用桩也认的
    另一个名字：那句话让人让服务器也以那样的名字提供这个模型），跑 3 个。返回 {种类: (第一次, 它的日志, 第二次,
    第二次服务器收到的正文, 第二次用的名字)}。"""
    import shutil

    from stub_llm_server import StubServer
    root = pathlib.Path(session_dir("oe_refused"))
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), root / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    cfg = root / "lecture14" / "openevolve" / "config.yaml"
    shipped = cfg.read_text(encoding="utf-8")
    script = str(root / "lecture14" / "openevolve" / "run_openevolve.py")
    out = {}
    for case, (name, alias, param, _) in REFUSED_CASES.items():
        with StubServer(lambda n, text: "edit", models=(name, alias), reject=_refuses(param), max_requests=200) as s:
            cfg.write_text(shipped.replace("  api_base: http://127.0.0.1:8765/v1\n", f"  api_base: {s.url}\n")
                           .replace("    - name: mock\n", f"    - name: {name}\n"), encoding="utf-8")
            runs, bodies, used = [], [], name
            for iterations, sub in (("40", "a"), ("3", "b")):
                if sub == "b":
                    example = re.search(r"（比如 ([^）]+)）", runs[0].stderr)
                    used = example[1] if example else alias
                    cfg.write_text(cfg.read_text(encoding="utf-8").replace(f"    - name: {name}\n", f"    - name: {used}\n"),
                                   encoding="utf-8")
                seen = len(s.requests)
                (p,) = run_concurrently([sys.executable, script, "--iterations", iterations, "--output",
                                         str(root / f"{case}_{sub}")], timeout=240, env=base_env(), cwd=str(root))
                runs.append(p)
                bodies.append([r[3] for r in s.requests[seen:] if r[3] is not None])
        log = (root / f"{case}_a" / "openevolve.log").read_text(encoding="utf-8", errors="replace")
        out[case] = (runs[0], log, runs[1], bodies[1], used)
    cfg.write_text(shipped, encoding="utf-8")
    return out


PREFETCH.append(refused_parameter_runs)


@pytest.mark.parametrize("case", list(REFUSED_CASES))
def test_a_server_refusing_a_parameter_is_named_and_the_suggested_name_makes_openevolve_send_what_it_takes(case):
    """讲师报过：代理把推理模型改了名字（openai/gpt-5-mini），OpenEvolve 0.4.0 照名字的开头选参数、发 max_tokens 和
    temperature，OpenAI 回 400 "Unsupported parameter: 'max_tokens' …"；make openevolve 接连 4 个 400 就停下，只叫人检查
    地址、模型名和密钥，OpenEvolve 还把每个 400 重试一遍。现在那句话说服务器不收哪个参数、OpenEvolve 只看名字的开头、
    该怎样起名字；照它改了 config.yaml 的 name，服务器收到的是它收的参数，提议都成了子程序。反过来（名字是推理模型的
    开头、服务器不收 max_completion_tokens）也一样。400 不重试：再问一次服务器还是不收。"""
    name, alias, param, sends = REFUSED_CASES[case]
    first, log, second, bodies, used = refused_parameter_runs()[case]
    said = [line for line in first.stderr.splitlines() if "停下了" in line]
    assert first.returncode == 1 and "Traceback" not in first.stderr and said, first.stderr[-2000:]
    assert f"（LLM 回 HTTP 400，不收参数 {param} ×{oe_failures.GIVE_UP_AFTER}）" in said[0], said
    assert f"服务器不收 OpenEvolve 发的 {param}" in said[0] and f"config.yaml 的 name {name} " in said[0], said
    assert "、".join(oe_failures.OE_REASONING_PREFIXES) in said[0] and "检查 LLM 服务器" not in said[0], said
    assert "Retrying" not in log and "attempts failed" not in log, log[-3000:]           # OpenEvolve 没有重试这些 400
    assert used == alias and (case != "renamed" or "（比如 gpt-5-mini）" in said[0]), said
    assert second.returncode == 0, second.stderr[-2000:]
    assert bodies and all(set(b) & {"max_tokens", "max_completion_tokens", "temperature"} == sends for b in bodies), bodies[:2]
    assert "LLM 调用失败" not in second.stdout + second.stderr, second.stdout[-1500:]


def test_a_refused_parameter_from_a_hostile_server_is_escaped_redacted_cut_and_asked_once(monkeypatch):
    """服务器写的参数名不可信：控制字符转义、回显的密钥抹掉、截短；这样的 400 只问一次（不按 retries 重试）。"""
    import asyncio

    import openai
    from openevolve.config import LLMModelConfig
    from openevolve.llm import openai as oe_openai

    from stub_llm_server import StubServer, openai_error
    monkeypatch.setattr(openai.OpenAI, "__init__", openai.OpenAI.__init__)          # 测试完还原
    monkeypatch.setattr(oe_openai.OpenAILLM, "_call_api", oe_openai.OpenAILLM._call_api)
    monkeypatch.setattr(oe_openai.OpenAILLM, "generate_with_context", oe_openai.OpenAILLM.generate_with_context)
    key = "sk-test-0123456789-never-print"
    oe_careful_http.careful_http()
    oe_careful_http.tame_replies([key])
    hostile = openai_error("x", f"\x1b]0;evil\x07{key}\n" + "p" * 5000, "unsupported_parameter")
    with StubServer(lambda n, text: "edit", reject=lambda body: hostile, max_requests=10) as s:
        llm = oe_openai.OpenAILLM(LLMModelConfig(api_base=s.url, api_key=key, name="x", timeout=10, retries=2,
                                                 retry_delay=0, max_tokens=100, temperature=0.7))
        with pytest.raises(Exception) as e:
            asyncio.run(llm.generate_with_context("system", [{"role": "user", "content": "当前的程序"}]))
    kind = oe_failures.failure_kind(f"LLM generation failed: {e.value}")
    assert kind.startswith(oe_careful_http.REFUSED + "\\x1b]0;evil\\x07***\\np") and kind.endswith("个字符）"), kind
    assert key not in kind and "\x1b" not in kind and "\n" not in kind and len(kind) < 100, kind
    assert len([r for r in s.requests if r[3] is not None]) == 1                      # retries=2，只问了一次
    assert oe_failures.refused_advice(kind[len(oe_careful_http.REFUSED):]).startswith("服务器不收 OpenEvolve 发的参数 \\x1b]0;")


def test_the_shipped_config_leaves_a_reasoning_model_room_to_write():
    # OpenAI 的 reasoning 指南：开始时至少留 25,000 个（和 --llm 换成推理模型的参数以后的上限一样）
    from evolve.openai_llm import MAX_COMPLETION_TOKENS, TIMEOUT
    assert oe_settings.read_config().llm.max_tokens >= MAX_COMPLETION_TOKENS
    # 讲师报过：timeout 60 秒，推理模型写几千个 token 就超时，按 retries 重发，两次都白等（也许都收钱）：和 --llm 的默认一样
    configured = oe_settings.read_config().llm.timeout
    same = (f"lecture14/openevolve/config.yaml 的 llm.timeout 是 {configured:g}，--llm-timeout 的默认"
            f"（lecture14/evolve/openai_llm/settings.py 的 TIMEOUT）是 {TIMEOUT:g}：README 说两个一样（\"更进一步\"：config.yaml 的 "
            "timeout 和 --llm-timeout 的默认一样），改了一个，另一个、config.yaml 那行上面的注释和 README 的两句跟着改")
    assert configured == TIMEOUT, same
    assert all(name.lower().startswith(oe_failures.OE_REASONING_PREFIXES) for name in ("gpt-5-mini", "o3", "o4-mini"))


def test_the_reasoning_model_names_the_bridge_states_are_the_pinned_openevolves_own():
    # raise_max_tokens 的那句（和 README）说 OpenEvolve 对哪些模型名发 max_completion_tokens：照 OE_REASONING_PREFIXES 列，
    # 它要和装着的 OpenEvolve 里那张表一样（那是 generate_with_context 里的局部变量，import 不到：从源码读；
    # "o1-" 这种被更短的 "o1" 包含的不算）
    import importlib.util
    path = importlib.util.find_spec("openevolve.llm.openai").origin
    with open(path, encoding="utf-8") as f:
        table = re.search(r"OPENAI_REASONING_MODEL_PREFIXES = \((.*?)\)", f.read(), re.S)
    assert table, f"OpenEvolve 的 {path} 里找不到 OPENAI_REASONING_MODEL_PREFIXES：换了版本，对照它现在怎样选参数"
    theirs = set(re.findall(r'"([^"]+)"', table[1]))
    theirs = {p for p in theirs if not any(q != p and p.startswith(q) for q in theirs)}
    assert theirs == set(oe_failures.OE_REASONING_PREFIXES), theirs
    assert "、".join(oe_failures.OE_REASONING_PREFIXES) in oe_failures.raise_max_tokens()


def test_a_budget_of_exactly_give_up_after_failing_proposals_ends_the_same_way_every_time():
    # 讲师报过：--iterations 正好 GIVE_UP_AFTER、每个提议都失败时，同一条命令有时"接连失败，停下了"（退出码 1）、
    # 有时跑完（退出码 0）：看读到最后一行日志时 OpenEvolve 退出了没有。现在只看数出来的：还有没做的提议才停下
    n = oe_failures.GIVE_UP_AFTER
    failing = ["LLM 回 HTTP 500"] * n
    assert oe_failures.gives_up(failing, n, 50) and oe_failures.gives_up(failing + ["连不上"], n + 1, 50)
    assert not oe_failures.gives_up(failing, n, n)                      # 最后一个提议也失败：跑完了，不是"停下了"
    assert not oe_failures.gives_up(failing[1:], n - 1, 50)


def test_lines_read_after_four_failures_in_one_go_are_still_counted():
    # 审读报过：数到第 4 个失败就不往下读（为了说"接连 4 个"），同一次读到的后面两个成功的提议没看见，跑完了的运行被说成
    # "接连失败，停下了"、退出码 1。现在每一行都数，成功的让接连失败重新数起
    from collections import Counter
    err = "2026-12-03 14:35:18,159 - ERROR - Iteration {} error: LLM generation failed: Error code: 500 - boom"
    ok = "2026-12-03 14:35:18,200 - INFO - Iteration {}: Program c (parent: a) completed in 0.07s"
    lines = [err.format(k).encode() for k in range(1, 5)] + [ok.format(k).encode() for k in (5, 6)]
    seen, failed, streak = set(), Counter(), []
    assert oe_failures.count_done(lines, seen, failed, streak)
    assert len(seen) == 6 and failed == {"LLM 回 HTTP 500": 4} and streak == []
    assert not oe_failures.gives_up(streak, len(seen), 6)
    assert not oe_failures.count_done(lines, seen, failed, streak)                     # 读过的行不再数


def test_both_loops_say_the_same_about_the_same_failures():
    # 审读报过：--llm 最后一次是 429 就只说限流，make openevolve 要四次都是 429；种类的说法两边各写一份
    from evolve.openai_llm import RATE_LIMITED_ADVICE, Call, lost_llm
    for streak, limited in ((["LLM 回 HTTP 429"] * 4, True), (["LLM 回 HTTP 500"] * 3 + ["LLM 回 HTTP 429"], False)):
        kinds, check = oe_failures.streak_said(streak)
        said = lost_llm([Call(i, "p", None, k, 0.1, None, None, None) for i, k in enumerate(streak)])
        assert (check == RATE_LIMITED_ADVICE) == limited == (RATE_LIMITED_ADVICE in said) and kinds in said, (said, kinds)


def test_openevolve_waiting_on_a_silent_server_says_so_on_stderr(tmp_path, monkeypatch):
    """讲师报过：服务器不回答时 make openevolve 6 分钟一声不吭。现在每 QUIET_NOTE_SECONDS 秒没有提议做完，就说一声。"""
    from hostile_server import HostileServer
    monkeypatch.setattr(oe_processes, "QUIET_NOTE_SECONDS", 1.0)
    notes = []

    def note(text):
        notes.append(text)
        raise _Noted                                                      # 说了就够了：停下（finally 里结束 OpenEvolve）
    with HostileServer(chat="trickle", drip=5.0, max_seconds=15) as s:
        with pytest.raises(_Noted):
            _run_against(s.url, 3, tmp_path, note=note)
    assert len(notes) == 1 and "第 1 个提议等了 1 秒" in notes[0] and "Ctrl-C" in notes[0], notes
    assert display_width(notes[0].replace("第 1 个", "第 1000 个").replace("1 秒", "3600 秒")) <= 80, notes[0]


def test_counts_come_from_the_log_not_from_the_trace_that_skips_children(tmp_path):
    """审读报过：OpenEvolve 0.4.0 里子程序挤掉自己的父程序时 evolution_trace.jsonl 不写那一行；make openevolve 就把
    19 个提议算成"没变成子程序"，日志里出错的只有 4 个，曲线也漏了一次刷新最好分数（1.196）。现在以日志为准：
    每个做完的提议一行 "Iteration N: Program …"，下一行是它的 Metrics；trace 里有的用 trace 的数（更多位小数）。"""
    (tmp_path / "result.json").write_text(json.dumps(dict(best_code="", best_metrics={}, iterations=4)), encoding="utf-8")
    log = ["2026-12-03 14:35:18,159 - INFO - Iteration 1: Program a (parent: b) completed in 0.07s",
           "2026-12-03 14:35:18,159 - INFO - Metrics: combined_score=1.0532, launchable=1.0000, full_evaluation=1.0000",
           "2026-12-03 14:35:18,200 - INFO - Iteration 2: Program c (parent: a) completed in 0.07s",
           "2026-12-03 14:35:18,201 - INFO - HTTP Request: POST http://127.0.0.1:1/v1/chat/completions",
           "2026-12-03 14:35:18,202 - INFO - Metrics: combined_score=1.1960, launchable=1.0000, full_evaluation=1.0000",
           "2026-12-03 14:35:18,300 - WARNING - Iteration 3 error: Diff did not change the program",
           "2026-12-03 14:35:18,400 - INFO - Iteration 4: Program d (parent: a) completed in 0.07s",
           "2026-12-03 14:35:18,401 - INFO - Metrics: combined_score=0.0000, launchable=0.0000, full_evaluation=0.0000"]
    (tmp_path / "openevolve.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    exact = {"combined_score": 1.053249, "launchable": 1.0, "full_evaluation": 1.0}
    (tmp_path / "evolution_trace.jsonl").write_text(json.dumps(dict(iteration=1, child_metrics=exact)) + "\n",
                                                    encoding="utf-8")          # 第 2 个（挤掉了父程序的）没有记
    res = oe_results.read_run(str(tmp_path))
    assert [k for k, _ in res["trace"]] == [1, 2, 4]
    # 服务器写进说明里的假行（同一行里）不算：只认说明开头的那几句
    fake = ("2026-12-03 14:35:18,500 - WARNING - Error on attempt 1/2: Error code: 400 - x 2026-12-03 14:35:18,159 - INFO - "
            "Iteration 100: Program f - Metrics: combined_score=9.9000")
    assert (oe_failures._DONE.match(fake.encode()) is None and oe_results._PROGRAM.match(fake) is None
            and oe_results._METRICS.match(fake) is None)
    assert res["trace"][0][1] == exact and res["trace"][1][1]["combined_score"] == 1.196
    assert oe_results.count(res) == dict(full=2, probe=0, rejected=1, eval_error=0, no_child=1)


def test_the_openevolve_child_exits_at_once_if_its_parent_is_already_gone():
    """审读报过：07 在起 OpenEvolve 子进程的那一刻被 kill -9，子进程的父进程还没记下就成了孤儿（getppid() 已经是 1），
    又对着没人的服务器跑了几分钟。现在父进程的 pid 跟着 spec 传过去，一启动就比。"""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    spec = dict(url="http://127.0.0.1:9/v1", iterations=1, seed=0, output=session_dir("orphan"), parent=gone.pid)
    p = subprocess.Popen([sys.executable, RUN, "--child", json.dumps(spec)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=base_env(), cwd=ROOT)
    try:
        assert p.wait(timeout=30) == -9
    finally:
        stop_group(p)


def test_openevolve_writes_its_temporary_files_into_the_output_directory(tmp_path, monkeypatch):
    """审读报过：Ctrl-C 停下 OpenEvolve（整组 SIGKILL）时，它评估到一半的 NamedTemporaryFile 留在 /tmp（20 次留下 5 个）。
    子进程的 TMPDIR 现在是输出目录里的 tmp/：跟着输出目录一起删（07 的临时目录、make openevolve 每次清空的 output）。"""
    seen = {}

    class Stop(Exception):
        pass

    def popen(args, **kw):
        seen.update(kw)
        raise Stop
    only_in(monkeypatch, oe_processes, "subprocess", Popen=popen)   # 不是整个进程的：后台线程也在起进程
    with pytest.raises(Stop):
        oe_processes.run_openevolve(oe_processes.Processes(), "http://127.0.0.1:9/v1", 1, 0, str(tmp_path / "out"))
    assert seen["env"]["TMPDIR"] == str(tmp_path / "out" / "tmp") and os.path.isdir(tmp_path / "out" / "tmp")


@pytest.mark.parametrize("configured", ["not-needed-for-the-mock", None])
def test_a_refusing_server_names_the_key_openevolve_would_send(monkeypatch, configured):
    # 讲师报过：config.yaml 里写着 api_key 时，服务器回 401 照样说"检查环境变量 OPENAI_API_KEY"——发出去的是
    # config.yaml 里的那个
    from hostile_server import HostileServer
    monkeypatch.setattr(oe_settings, "configured_key", lambda: configured)
    monkeypatch.setenv("OPENAI_API_KEY", "" if configured else "sk-from-the-environment-0123")   # 哪儿都没有密钥另有测试
    with HostileServer(models="status403") as s:
        said = oe_settings.check_configured(s.url, "x")
    assert said is not None and "拒绝了请求（HTTP 403）" in said
    if configured is None:
        assert "检查环境变量 OPENAI_API_KEY" in said
    else:
        assert "检查 config.yaml 的 api_key（发出去的是它" in said


@ahead(waits=True)                # 等 OpenEvolve 和它对 400 的重试：会话一开始就在"等着的"后台线程跑
def echoing_server_run():
    """OpenEvolve 对着一个回 400、说明里回显密钥、控制序列和假日志行的服务器跑 8 个提议：(抛的 RuntimeError 或 None, 日志全文, 密钥)。"""
    from hostile_server import HostileServer
    out = pathlib.Path(session_dir("oe_echo400"))
    with HostileServer(chat="echo_400", max_seconds=10) as s:
        try:
            _run_against(s.url, 8, out)
            stopped = None
        except RuntimeError as e:
            stopped = e
    with open(out / "out" / "openevolve.log", encoding="utf-8", errors="replace") as f:
        return stopped, f.read(), oe_settings.MOCK_KEY


PREFETCH.append(echoing_server_run)


def test_server_text_in_openevolves_log_cannot_fake_results_or_leak_the_key():
    """讲师报过：服务器在 400 的说明里放换行和假的 "Iteration 1: Program …" / "Metrics: combined_score=9.9" 行，
    make openevolve 就印"4 个提议：39 个做了完整评估……-35 个没变成子程序"，接连失败也不停；回显的密钥和 ESC 控制序列
    原样进了 openevolve.log。现在每条日志记录是一行：控制字符转义、密钥换成 ***。"""
    stopped, log, key = echoing_server_run()
    n = oe_failures.GIVE_UP_AFTER
    assert stopped is not None and f"接连 {n} 个提议都是 LLM 调用失败（LLM 回 HTTP 400 ×{n}）" in str(stopped), stopped
    assert "fake1" in log and not any(line.startswith("2026-01-01") for line in log.splitlines())   # 假行还在，但不成行
    assert "\x1b" not in log and "\\x1b]0;pwned" in log
    assert key not in log and "bad key Bearer ***" in log


@ahead(waits=True)
def endless_reply_run():
    """OpenEvolve 对着一个回复永远不完的服务器（分块一直来）跑 3 个提议，一个提议最多等 3 秒：(RuntimeError 或 None, 用了几秒)。"""
    from hostile_server import HostileServer
    out = pathlib.Path(session_dir("oe_endless"))
    with HostileServer(chat="chunked_forever", max_seconds=60) as s:
        t = time.monotonic()
        try:
            _run_against(s.url, 3, out, stall_limit=3.0)
            stopped = None
        except RuntimeError as e:
            stopped = e
        return stopped, time.monotonic() - t


PREFETCH.append(endless_reply_run)


def test_a_reply_that_never_ends_stops_openevolve_after_the_stall_limit():
    """讲师报过：回复的分块永远不完，OpenEvolve 的 wait_for 到时放弃了，读它的线程还在，make openevolve 就一直等
    （"第 1 个提议等了 150 秒"）。现在一个提议等了 stall_seconds() 秒还没做完就停下它，一句话说清楚。"""
    stopped, seconds = endless_reply_run()
    msg = str(stopped)
    # 句子里的秒数是真的等了多久（四舍五入）：到了 3 秒的上限才停，机器忙时读日志的那一圈慢，印出来可能是 4 秒
    # （助教报过：两套测试同时跑、负载 7 时这里要的"等了 3 秒"是"等了 4 秒"，测试失败）
    waited = re.search(r"第 1 个提议等了 (\d+) 秒还没做完", msg)
    assert stopped is not None and waited and 3 <= int(waited[1]) <= seconds + 1, msg
    assert "\n" not in msg and "openevolve.log" in msg, msg
    assert seconds < 30


def test_the_stall_limit_follows_config_yaml(tmp_path):
    # 一个提议最多等：LLM 的 timeout × (retries + 1) + retry_delay × retries，加两级评估的 evaluator.timeout，再加余量
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  timeout: 10\n  retries: 2\n  retry_delay: 3\nevaluator:\n  timeout: 5\n", encoding="utf-8")
    assert oe_processes.stall_seconds(str(cfg)) == 10 * 3 + 3 * 2 + 2 * 5 + oe_processes.STALL_SLACK
    cfg.write_text("llm:\n  api_base: x\n", encoding="utf-8")                  # 没写的用 OpenEvolve 的默认
    assert oe_processes.stall_seconds(str(cfg)) == 60 * 4 + 5 * 3 + 2 * 300 + oe_processes.STALL_SLACK
    assert oe_processes.stall_seconds() < 15 * 60              # 讲义的 config.yaml：十来分钟（推理模型一次要几分钟），不是永远


def test_make_openevolve_does_not_print_a_password_or_query_in_api_base(monkeypatch, capsys, tmp_path):
    """讲师报过：api_base 写成 http://alice:密码@主机/v1?api-key=…，make openevolve 在标准错误和标准输出上都原样印着。
    这里只换掉开跑前的检查和 OpenEvolve 本身（给一个只有专家的结果），印的是 main 自己的那两句。"""
    from evolve import EXPERT as expert, render
    base = "http://alice:hunter2-secret@127.0.0.1:9/v1?api-key=sk-query-secret"
    monkeypatch.setattr(runmod, "configured_llm", lambda: (base, "m\x1b[2J"))
    monkeypatch.setattr(runmod, "check_endpoints", lambda: None)
    monkeypatch.setattr(runmod, "run_openevolve", lambda procs, url, n, seed, out, **kw: dict(
        best_code=render(expert), trace=[], iterations=n, llm_failed={}, seconds=1.0))
    assert runmod.main(["--iterations", "1", "--output", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    for text in (out, err):
        assert "127.0.0.1:9/v1" in text and "hunter2" not in text and "sk-query" not in text and "\x1b" not in text, text


def test_openevolves_process_has_a_memory_ceiling():
    """讲师报过：OpenEvolve 把一个解压成 1 GB 的 gzip 回复整个读进内存（它读回复、解压都不设上限）。它的进程（和它
    fork 的 worker）的地址空间限在 MEMORY_LIMIT：超了是那次调用的 MemoryError（记作一次失败的调用），不是整台机器
    的内存被吃光。"""
    code = ("import resource, sys; sys.path.insert(0, sys.argv[1]); import oe_child as r; r._limit_memory(); "
            "print(resource.getrlimit(resource.RLIMIT_AS)[0]); bytearray(r.MEMORY_LIMIT)")
    p = subprocess.run([sys.executable, "-c", code, HERE], capture_output=True, text=True, timeout=60)
    assert p.stdout.split()[0] == str(oe_child.MEMORY_LIMIT) and "MemoryError" in p.stderr, (p.stdout, p.stderr[-300:])
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:                # README 说的是同一个数
        assert f"限 {oe_child.MEMORY_LIMIT >> 30} GB 地址空间" in f.read()


@pytest.mark.parametrize("says", ["Traceback (most recent call last):\nZeroDivisionError: 故意的错\n\x1b[2J", ""])
def test_openevolve_stops_when_the_mock_server_exits_and_its_words_are_shown(tmp_path, monkeypatch, capsys, says):
    """审读报过：MockLLM 服务器（make openevolve 开的那个进程）出了程序错、退出了，OpenEvolve 照样一个个提议地问，
    最后只说"连不上 LLM 服务器"。现在服务器一退出就停下 OpenEvolve，一句话说它退出了，它在标准错误上说的（traceback，
    控制字符转义）转印在上面；什么也没说时不说"在上面"。这里的 OpenEvolve 换成一个只会睡的进程。"""
    real = subprocess.Popen
    started = []

    def popen(args, **kw):
        started.append(real([sys.executable, "-c", "import time; time.sleep(30)"], stdout=kw["stdout"],
                            stderr=kw["stderr"], stdin=subprocess.DEVNULL, start_new_session=True, env=base_env()))
        return started[-1]
    server = subprocess.Popen([sys.executable, "-c", f"import sys, time; time.sleep(0.3); sys.stderr.write({says!r}); "
                               "sys.exit(1)"], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=base_env())
    only_in(monkeypatch, oe_processes, "subprocess", Popen=popen)   # 不是整个进程的：后台线程也在起进程
    procs = oe_processes.Processes()
    t = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as e:
            oe_processes.run_openevolve(procs, "http://127.0.0.1:9/v1", 3, 0, str(tmp_path / "out"), stall_limit=60,
                                  watch=oe_processes.server_gone(server))
    finally:
        procs.close()
        stop_group(server)
    assert time.monotonic() - t < 10 and started and started[0].poll() is not None     # OpenEvolve 停下了
    said, err = str(e.value), capsys.readouterr().err
    assert said.startswith("MockLLM 服务器在 OpenEvolve 跑的时候退出了（退出码 1），停下了 OpenEvolve：") and "\n" not in said
    if says:
        assert said.endswith("它说的在上面。") and "ZeroDivisionError: 故意的错" in err and "\x1b" not in err, err
    else:
        assert said.endswith("多半是被别的程序结束了。") and err == "", err


def _config_with(tmp_path, monkeypatch, edit) -> str:
    """config.yaml 的一份副本，edit(原文) 改过；run_openevolve 读它。"""
    with open(os.path.join(HERE, "config.yaml"), encoding="utf-8") as f:
        text = edit(f.read())
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(oe_settings, "CONFIG", str(path))
    return text


def test_config_yaml_is_read_the_way_openevolve_reads_it_quotes_included(tmp_path, monkeypatch):
    """讲师报过：api_base: "http://…"（YAML 里带引号，合法）被当成带引号的地址，说"用不了"。"""
    from stub_llm_server import StubServer
    with StubServer(lambda n, t: "edit", models=("qwen",)) as s:
        _config_with(tmp_path, monkeypatch, lambda t: t.replace("api_base: http://127.0.0.1:8765/v1", f'api_base: "{s.url}"')
                     .replace("- name: mock", "- name: 'qwen'"))
        assert oe_settings.configured_llm() == (s.url, "qwen")
        assert oe_settings.check_configured(*oe_settings.configured_llm()) is None


def test_a_config_yaml_openevolve_cannot_read_is_one_sentence(tmp_path, monkeypatch):
    _config_with(tmp_path, monkeypatch, lambda t: t.replace("  api_key: not-needed-for-the-mock", "  api_key: [unclosed"))
    with pytest.raises(ValueError, match="OpenEvolve 读不了 lecture14/openevolve/config.yaml") as e:
        oe_settings.configured_llm()
    assert "\n" not in str(e.value) and "\\n" not in str(e.value) and "Traceback" not in str(e.value)   # 学生报过：
    #                                                               PyYAML 的换行印成了字面的 \n


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("  api_base: http", "  api_bse: http"), "config.yaml 的 llm.api_bse：OpenEvolve 不认识这个设置，"
     "读的时候会悄悄不管它——是不是 api_base？"),
    (lambda t: t.replace("    - name: mock", "    - nme: mock"), "config.yaml 的 llm.models 的第 1 个模型里的 nme：OpenEvolve"
     " 不认识这个设置，读的时候会悄悄不管它——是不是 name？"),
    (lambda t: t.replace("  population_size:", "  populaton_size:"), "config.yaml 的 database.populaton_size：")])
def test_a_misspelled_setting_in_config_yaml_is_named_before_anything_runs(tmp_path, monkeypatch, capsys, edit, says):
    """学生报过：api_base 拼成 api_bse，OpenEvolve 悄悄不管它、问自己默认的 https://api.openai.com/v1，make openevolve
    说"连不上 https://api.openai.com/v1"——一个学生没写过的地址；name 拼成 nme，模型名悄悄不管用。现在开跑之前一句话，
    说是哪个设置、像哪个（07 也经过 config_refusal）。"""
    _config_with(tmp_path, monkeypatch, edit)
    assert runmod.main(["--iterations", "2", "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(says) and err.count("\n") == 1 and not err.rstrip().endswith("？。"), err
    assert (oe_settings.config_refusal() or "").startswith(says.split("：")[0])


@pytest.mark.parametrize("base, mock", [("http://127.0.0.1:8765/v1", True), ("http://localhost:8765/v1/", True),
                                        ("http://[::1]:8765/v1", True), ("http://127.0.0.1:8766/v1", False),
                                        ("https://127.0.0.1:8765/v1", False), ("http://127.0.0.1:8765/v1?k=1", False),
                                        ("http://10.0.0.1:8765/v1", False), ("not a url", False)])
def test_the_mock_servers_address_is_recognised_however_it_is_written(base, mock):
    """学生报过：写成 http://localhost:8765/v1，make openevolve 当它是真的服务器，说"连不上，先启动它（例如 ollama serve）"。"""
    assert oe_settings.is_mock_base(base) == mock


def test_a_model_name_that_the_mock_does_not_use_is_said(tmp_path, monkeypatch, capsys):
    """学生报过：只把 name 改成 qwen2.5-coder:7b、api_base 还是 MockLLM 的，make openevolve 悄悄还是问 MockLLM。"""
    from evolve import EXPERT as expert, render
    _config_with(tmp_path, monkeypatch, lambda t: t.replace("    - name: mock", "    - name: qwen2.5-coder:7b"))
    monkeypatch.setattr(runmod, "start_server", lambda procs, seed: (None, "http://127.0.0.1:9/v1"))
    monkeypatch.setattr(runmod, "server_gone", lambda server: (lambda: None))
    monkeypatch.setattr(runmod, "run_openevolve", lambda procs, url, n, seed, out, **kw: dict(
        best_code=render(expert), trace=[], iterations=n, llm_failed={}, seconds=1.0))
    assert runmod.main(["--iterations", "1", "--output", str(tmp_path / "out")]) == 0
    err = "".join(capsys.readouterr().err.split())
    assert "models下的name（qwen2.5-coder:7b）这次不管用：问的还是MockLLM" in err, err


@pytest.mark.parametrize("env", ["", None])
def test_no_key_anywhere_is_one_sentence_before_openevolve_says_missing_credentials(tmp_path, monkeypatch, env):
    """讲师报过：删掉 config.yaml 的 api_key 那行、环境变量里也没有密钥（或者照另一句话把它设成空），OpenEvolve
    开跑就报 Missing credentials 的 traceback。开跑之前说一句：要么环境变量，要么 config.yaml 里写个占位符。"""
    from stub_llm_server import StubServer
    if env is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", env)
    _config_with(tmp_path, monkeypatch, lambda t: t.replace("  api_key: not-needed-for-the-mock\n", ""))
    assert oe_settings.configured_key() is None
    with StubServer(lambda n, t: "edit") as s:
        said = oe_settings.check_configured(s.url, "stub")
    assert said and "api_key: not-needed" in said and ("是空的" if env == "" else "没设") in said, said


def test_a_plain_http_server_elsewhere_gets_config_yaml_advice_not_an_empty_environment_variable(tmp_path, monkeypatch):
    """讲师报过：明文 http 的别的机器 + 环境变量里的密钥，建议是"OPENAI_API_KEY= 把密钥设成空"——照做 OpenEvolve 就
    报 Missing credentials。make openevolve 的建议是 config.yaml 里写一个占位符 api_key。"""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-paid-key-0123456789")
    _config_with(tmp_path, monkeypatch, lambda t: t.replace("  api_key: not-needed-for-the-mock\n", ""))
    said = oe_settings.check_configured("http://192.0.2.7:11434/v1", "qwen")       # 文档用的地址：不会真有人在听
    assert said and "api_key: not-needed" in said and "OPENAI_API_KEY=" not in said, said


def _project_copy(tag: str) -> pathlib.Path:
    """课程的四个目录复制到这个会话的一个临时目录里（改它的 config.yaml、evolve 的代码，不碰仓库）；返回那个目录。"""
    import shutil
    tmp = pathlib.Path(session_dir(tag))
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    return tmp


def _point_config_at(tmp: pathlib.Path, url: str, model: str = "mock", key_line: str | None = "keep") -> None:
    """拷贝里的 config.yaml 指向 url、模型名换成 model；key_line=None 删掉 api_key 那行（用环境变量里的密钥）。"""
    cfg = tmp / "lecture14" / "openevolve" / "config.yaml"
    text = cfg.read_text(encoding="utf-8").replace("api_base: http://127.0.0.1:8765/v1", f"api_base: {url}")
    text = text.replace("- name: mock", f"- name: {model}")
    if key_line is None:
        text = text.replace("  api_key: not-needed-for-the-mock\n", "")
    cfg.write_text(text, encoding="utf-8")


@ahead(waits=True)                # 大半时间在等 OpenEvolve 对 HTTP 500 的重试：会话一开始就在"等着的"后台线程跑
def server_dies_midway_run():
    """make openevolve 对着 config.yaml 里的一个服务器跑，它答了 5 个提议以后只回 HTTP 500（中途没了）：
    (CompletedProcess, 输出目录)。项目复制到一个临时目录里改 config.yaml。"""
    from stub_llm_server import StubServer
    tmp = _project_copy("oe_dies")
    with StubServer(lambda n, t: "edit" if n < 5 else "http500", models=("stub",), retry_after_500="0") as s:
        _point_config_at(tmp, s.url, "stub")
        p = subprocess.run([sys.executable, str(tmp / "lecture14" / "openevolve" / "run_openevolve.py"), "--iterations", "40",
                            "--output", str(tmp / "out")], capture_output=True, text=True, timeout=240, env=base_env(),
                           cwd=tmp)
    return p, tmp / "out"


PREFETCH.append(server_dies_midway_run)


def timeout_2_run(mode: str, drip: float, iterations: int):
    """make openevolve（iterations 个提议）对着 config.yaml 里一个 HostileServer（chat=mode，drip 秒一个字节或一个 1xx），
    config.yaml 的 timeout 改成 2、retries 1：(CompletedProcess, 用了几秒, 服务器收到的 POST 数)。"""
    from hostile_server import HostileServer
    tmp = _project_copy("oe_" + mode)
    with HostileServer(chat=mode, drip=drip, max_seconds=60) as s:
        _point_config_at(tmp, s.url, "x")
        cfg = tmp / "lecture14" / "openevolve" / "config.yaml"
        text = cfg.read_text(encoding="utf-8")
        assert re.search(r"(?m)^  timeout: \d+\n  retries: 1\n", text)
        cfg.write_text(re.sub(r"(?m)^  timeout: \d+\n", "  timeout: 2\n", text, count=1), encoding="utf-8")
        t = time.monotonic()
        p = subprocess.run([sys.executable, str(tmp / "lecture14" / "openevolve" / "run_openevolve.py"), "--iterations",
                            str(iterations), "--output", str(tmp / "out")], capture_output=True, text=True, timeout=240,
                           env=base_env(), cwd=tmp)
        return p, time.monotonic() - t, s.posts()


@ahead(waits=True)                # 大半时间在等挤牙膏的回复到期：会话一开始就在"等着的"后台线程跑
def dripping_server_run():
    """3 个提议，正文一秒一个字节（timeout_2_run）。"""
    return timeout_2_run("trickle", 1.0, 3)


PREFETCH.append(dripping_server_run)


def test_a_dripping_reply_is_one_timeout_under_openevolve_not_the_end_of_the_run():
    """讲师报过：正文一秒一个字节的回复让读它的线程一直读下去，第 1 个提议永远做不完，make openevolve 等了 101 秒以后
    停下整个运行（本讲的 --llm 客户端把它当一次"LLM 超时"、接着跑）。现在正文从发请求算起最多读 config.yaml 的
    timeout 秒：每个提议是一次"LLM 超时"，运行跑完。openai 库自己不重试：每个提议最多 retries + 1 个请求。"""
    p, seconds, posts = dripping_server_run()
    # 运行跑完了（3 个提议都做了、结果印出来）；3 个全是 LLM 调用失败，所以最后一句话、退出码 1（讲师报过：以前是 0）
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "跑完了3个提议，可3个全都是LLM调用失败（LLM超时×3）" in "".join(p.stderr.split()), p.stderr[-2000:]
    said = "".join(p.stdout.split())
    assert "LLM超时×3" in said, p.stdout[-3000:]
    assert posts == 3 * 2 and seconds < 90, (posts, seconds)


@ahead(waits=True)                # 大半时间在等请求到期：会话一开始就在"等着的"后台线程跑
def trickle_head_run():
    """2 个提议，状态行和响应头 0.5 秒一个字节（timeout_2_run）。"""
    return timeout_2_run("trickle_head", 0.5, 2)


@ahead(waits=True)
def processing_forever_run():
    """2 个提议，102 Processing 0.5 秒一个，永远不给最终的回答（timeout_2_run）。"""
    return timeout_2_run("processing_forever", 0.5, 2)


SLOW_HEADS = {"trickle_head": trickle_head_run, "processing_forever": processing_forever_run}
PREFETCH.extend(SLOW_HEADS.values())


@pytest.mark.parametrize("mode", list(SLOW_HEADS))
def test_a_status_line_that_never_finishes_is_one_timeout_under_openevolve_not_the_end_of_the_run(mode):
    """审读报过：状态行和响应头一字节一字节地挤（或者 1xx 一个接一个来）时，httpx 的 timeout 只管每一次读，读它们的线程
    一直读下去；OpenEvolve 的 wait_for 到时放弃了，收尾时却等着那个线程，STALL 的看门过了 stall_seconds（这里约 40 秒）
    停下整个运行、退出码 1、"没有跑完"。现在响应头也从发请求算起最多读 config.yaml 的 timeout 秒：每个提议一次"LLM 超时"，
    运行跑完（和正文挤牙膏、和本讲的 --llm 一样）。"""
    p, seconds, posts = SLOW_HEADS[mode]()
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    flat = "".join(p.stderr.split())
    assert "跑完了2个提议，可2个全都是LLM调用失败（LLM超时×2）" in flat and "没完没了" not in flat, p.stderr[-2000:]
    assert posts == 2 * 2, (posts, seconds)                  # 每个提议 retries + 1 个请求


def test_make_openevolve_keeps_the_best_program_when_the_server_dies_midway(table):
    """讲师报过：LLM 服务器中途没了，make openevolve 接连失败、停下，只说了一句出错：没有 best/、没有 result.json，
    之前找到的最好程序丢了。evaluator 随时记下完整评估过的最好程序；停下时印出它（退出码照样是 1：没跑完）。"""
    p, out = server_dies_midway_run()
    assert p.returncode == 1 and "Traceback" not in p.stderr and "接连" in p.stderr, p.stderr[-2000:]
    with open(out / oe_start.BEST_FILE, encoding="utf-8") as f:
        kept = json.load(f)
    with open(out / "openevolve.log", encoding="utf-8", errors="replace") as f:
        logged = [float(m.group(1)) for m in re.finditer(r"Metrics: combined_score=([\d.]+),.*full_evaluation=1\.0000", f.read())]
    assert not logged or kept["score"] >= max(logged) - 5e-5             # 日志印 4 位小数：记下的不比哪个完整评估差
    best = parse(kept["code"])
    train, test = split_shapes()
    assert geomean_speedup(best, train, table) == pytest.approx(kept["score"], rel=1e-12)
    flat = "".join(p.stdout.split())
    assert "没有跑完40个提议" in flat and f"训练形状上比专家快{geomean_speedup(best, train, table):.3f}×" in flat
    assert render(best) in p.stdout
    if not logged:                # 上面记下、印出的是起点（A100 上桩服务器的 5 个修改没有一个过了探针）
        import gpus
        pytest.skip(f"{gpus.selected_key()} 上服务器没了之前的 5 个修改没有一个做完整评估：记下的是起点，"
                    "\"记下的不比哪个完整评估差\"无从比较（上面别的检查都做了）")


def _stderr_until(p: subprocess.Popen, text: str, seconds: float = 30.0) -> str:
    """p 的标准错误读到出现 text 为止（它退出了、过了 seconds 秒也停）：读到的全文。不等 p 退出。"""
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(p.stderr, selectors.EVENT_READ)
    got, deadline = b"", time.monotonic() + seconds
    try:
        while text.encode() not in got and sel.select(max(0.0, deadline - time.monotonic())):
            chunk = os.read(p.stderr.fileno(), 65536)
            if not chunk:
                break
            got += chunk
    finally:
        sel.close()
    return got.decode("utf-8", "replace")


@ahead(waits=True)                # 大半时间在等 OpenEvolve 启动：会话一开始就在"等着的"后台线程跑
def buggy_mock_server_run():
    """讲师的做法：手动开一个 MockLLM 服务器（它的 evolve/mock_llm.py 里放进一个错），config.yaml 指向它，
    make openevolve。项目复制到一个临时目录里改。返回 (CompletedProcess, 用了几秒, 服务器的 stderr)。"""
    from conftest import start_broken_mock_server
    tmp = _project_copy("oe_mock_bug")
    server, url = start_broken_mock_server(tmp)
    try:
        _point_config_at(tmp, url)
        t = time.monotonic()
        p = subprocess.run([sys.executable, str(tmp / "lecture14" / "openevolve" / "run_openevolve.py"),
                            "--iterations", "40", "--output", str(tmp / "out")], capture_output=True, text=True,
                           timeout=240, env=base_env(), cwd=tmp)
        # 服务器印出 traceback 以后还回 BUG_LINGER（5）秒的 500 才退出：不等它退出，读到 traceback 的最后一行就够了
        return p, time.monotonic() - t, _stderr_until(server, "ZeroDivisionError: 故意的错")
    finally:
        stop_group(server)


PREFETCH.append(buggy_mock_server_run)


def test_make_openevolve_stops_at_once_when_a_hand_started_mock_server_has_a_bug():
    """讲师报过：手动开的 MockLLM 服务器出了程序错，make openevolve 只数"LLM 回 HTTP 500 ×1、连不上 LLM 服务器 ×3"、
    接连 4 个提议失败才停（服务器出错以后就退出了），看不出错在服务器那边。现在 OpenEvolve 的日志里一出现 MockLLM
    那句"出了程序错误"就停下，说去开服务器的终端里看 traceback（和 --llm 的 MOCK_BUG 一样）。"""
    p, seconds, server_err = buggy_mock_server_run()
    assert "ZeroDivisionError: 故意的错" in server_err, server_err[-2000:]   # 服务器真的出了错、印在它自己那边
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    flat = "".join(p.stderr.split())
    assert "LLM服务器是本讲的MockLLM，它出了程序错误，不再回答：停下了" in flat and "traceback在开那个服务器的终端里" in flat, \
        p.stderr[-2000:]
    assert "接连" not in flat and seconds < 60, (seconds, p.stderr[-2000:])


@pytest.mark.parametrize("written, sent", [("${OPENAI_API_KEY}", True), ("sk-pasted-into-the-file-0123456789", True),
                                           ("not-needed", False), ("EMPTY", False)])
def test_a_key_in_config_yaml_is_not_sent_over_plain_http_to_another_machine(tmp_path, monkeypatch, written, sent):
    """讲师报过：config.yaml 里 api_key: ${OPENAI_API_KEY}（OpenEvolve 展开成环境里付钱的密钥）或者贴进去的密钥，
    经明文 http:// 发给别的机器也不拦（只拦了环境变量里的）。开跑之前一句话；占位符照发。文档用的地址没人听：
    占位符照发的那一步（GET /models）换成只记下要发的密钥——真的去连，等的是这台机器的网络说"连不上"（这里 3 秒，
    没有网的机器上等满 10 秒），查的却只是"发不发"。"""
    from evolve.openai_llm import OpenAILLM
    monkeypatch.setenv("OPENAI_API_KEY", "sk-paid-environment-key-0123456789")
    _config_with(tmp_path, monkeypatch, lambda t: t.replace("api_key: not-needed-for-the-mock", f'api_key: "{written}"'))
    asked = []
    monkeypatch.setattr(OpenAILLM, "check", lambda self, *a, **kw: asked.append((self.base_url, self._key)))
    said = oe_settings.check_configured("http://192.0.2.7:11434/v1", "qwen")
    refused = said is not None and "经明文 http:// 发给" in said
    assert refused == sent, said
    if sent:
        assert "sk-" not in said and "not-needed" in said and asked == [], (said, asked)   # 一个请求也不发
    else:
        assert said is None and asked == [("http://192.0.2.7:11434/v1", written)], (said, asked)   # 占位符照发


@ahead(waits=True)                # 大半时间在等 OpenEvolve：会话一开始就在"等着的"后台线程跑
def redirecting_server_run():
    """OpenEvolve 对着一个把每个 POST 转到另一个服务器（307）的服务器跑 20 个提议：(抛的 RuntimeError 或 None,
    另一个服务器收到的请求)。"""
    from hostile_server import HostileServer
    out = pathlib.Path(session_dir("oe_redirect"))
    with HostileServer(max_seconds=60) as other, HostileServer(chat="307", location=other.url, max_seconds=60) as s:
        try:
            _run_against(s.url, 20, out)
            stopped = None
        except RuntimeError as e:
            stopped = e
        return stopped, list(other.received)


PREFETCH.append(redirecting_server_run)


def test_openevolve_does_not_follow_a_redirect_to_a_server_nobody_configured():
    """讲师报过：config.yaml 的服务器把每个 POST 转到另一个端口，OpenEvolve（openai 库）跟过去，20 个提议都是那个
    没配置过的服务器答的，结果却说是 config.yaml 的服务器。现在不跟：转向是一次有名字的失败，接连 4 次就停下。"""
    stopped, received = redirecting_server_run()
    assert received == [], received
    assert stopped is not None and REDIRECT in str(stopped), stopped


@ahead(waits=True)                # 大半时间在等 OpenEvolve 对 429 的重试：会话一开始就在"等着的"后台线程跑
def rate_limited_run():
    """OpenEvolve 对着一个每次都回 HTTP 429 的服务器跑：抛的 RuntimeError（或 None）。"""
    from stub_llm_server import StubServer
    out = pathlib.Path(session_dir("oe_429"))
    with StubServer(lambda n, t: "http429", retry_after="0", max_requests=200) as s:
        try:
            _run_against(s.url, 20, out)
        except RuntimeError as e:
            return e
    return None


PREFETCH.append(rate_limited_run)


def test_rate_limited_runs_are_told_to_wait_not_to_check_the_key():
    """讲师报过：接连 4 个 HTTP 429 以后，make openevolve 让人检查 api_base、name、密钥——429 是限流或额度用完了。"""
    stopped = rate_limited_run()
    assert stopped is not None and "LLM 回 HTTP 429 ×4" in str(stopped), stopped
    assert "限流" in str(stopped) and "密钥" not in str(stopped), stopped


def test_run_openevolve_and_the_evaluator_name_the_same_best_so_far_variable():
    """run_openevolve 把 best_so_far.json 的路径放进环境变量，evaluator.py 读同一个名字（两个进程，各写一遍）。"""
    import importlib.util
    spec = importlib.util.spec_from_file_location("oe_evaluator_env", os.path.join(HERE, "evaluator.py"))
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    assert ev.BEST_ENV == oe_start.BEST_ENV


def _key_echo_run(config_line: str = ""):
    """make openevolve 对着 config.yaml 里的一个服务器跑（api_key 那行删掉，用环境变量里的密钥；config_line 加在
    config.yaml 的最前面），服务器把收到的密钥和终端控制序列写进修改的一行注释里：
    (CompletedProcess, 输出目录, 服务器收到的 POST 的 Accept-Encoding)。"""
    from hostile_server import HostileServer
    tmp = _project_copy("oe_key_echo")
    with HostileServer(chat="echo_key_edit", model_ids=("mock",), max_seconds=120) as s:
        _point_config_at(tmp, s.url, key_line=None)
        cfg = tmp / "lecture14" / "openevolve" / "config.yaml"
        cfg.write_text(config_line + cfg.read_text(encoding="utf-8"), encoding="utf-8")
        # 两个提议：每个都是一次回显密钥的修改，第一个就打上了；输出目录里的文件（10 个）和带着"# got ***"的三个
        # （best/best_program.py、evolution_trace.jsonl、result.json）和 6 个提议时一样。spawn 的时候每个提议一个新的
        # worker 解释器（约 1.3 CPU 秒），6 个提议多花约 4 秒，查的还是这些文件
        p = subprocess.run([sys.executable, str(tmp / "lecture14" / "openevolve" / "run_openevolve.py"), "--iterations", "2",
                            "--output", str(tmp / "out")], capture_output=True, text=True, timeout=240,
                           env={**base_env(), "OPENAI_API_KEY": ECHOED_KEY}, cwd=tmp)
        asked = {headers.get("accept-encoding") for method, _, headers in s.received if method == "POST"}
    return p, tmp / "out", asked


ECHOED_KEY = "sk-test-echoed-0123456789abcdef"
# 大半时间在等 OpenEvolve 启动和它的 worker：会话一开始就在"等着的"后台线程跑。讲师报过：max_tasks_per_child 让
# OpenEvolve 的 worker 是 spawn 出来的新解释器（macOS 上默认就是），只装在主进程里的保护在 worker 里都没有
KEY_ECHO_RUNS = {how: ahead(functools.partial(_key_echo_run, line), waits=True)
                 for how, line in (("fork", ""), ("spawn", "max_tasks_per_child: 1\n"))}
PREFETCH.extend(KEY_ECHO_RUNS.values())


@pytest.mark.parametrize("how", KEY_ECHO_RUNS)
def test_a_key_the_server_writes_into_its_edit_is_in_no_file_openevolve_writes(how):
    """讲师报过：服务器把收到的密钥写进修改的注释里，它就原样进了 evolution_trace.jsonl、best/best_program.py、
    result.json（openevolve.log 是抹过的），还带着 ESC 和 OSC 8 的终端序列。回复进 OpenEvolve 之前就抹掉、转义——
    worker 是 fork 还是 spawn 出来的都一样，它们也只要不压缩的回复。"""
    p, out, asked = KEY_ECHO_RUNS[how]()
    assert asked == {"identity"}, asked
    assert p.returncode == 0, p.stderr[-2000:]
    files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs]
    raw = {f: open(f, "rb").read() for f in files}
    assert len(files) > 5 and any(b"# got ***" in data for data in raw.values()), sorted(raw)   # 修改打上了、注释在
    for f, data in raw.items():
        assert ECHOED_KEY.encode() not in data and b"\x1b" not in data, f
    assert ECHOED_KEY not in p.stdout + p.stderr


@ahead(waits=True)
def gzip_bomb_run():
    """OpenEvolve 对着一个回 gzip 炸弹（约 60 KB，解压出来是 64 MB 的合法回复）的服务器跑 3 个提议：
    (结果, 服务器收到的 POST 的 Accept-Encoding)。"""
    from hostile_server import HostileServer
    with HostileServer(chat="gzip_bomb", max_seconds=60) as s:
        res, _ = _run_against(s.url, 3, pathlib.Path(session_dir("oe_bomb")))
        return res, {headers.get("accept-encoding") for method, _, headers in s.received if method == "POST"}


PREFETCH.append(gzip_bomb_run)


def test_openevolve_asks_for_uncompressed_replies_and_does_not_unpack_a_gzip_bomb():
    """讲师报过：2 MB 的 gzip 解压成 2 GB，OpenEvolve 每次调用 16 秒 CPU、2 GB 内存，最后说成"连不上 LLM 服务器"。
    现在它要不压缩的回复；服务器照样压缩，就不解压（和 --llm 一样记作"LLM 回复是压缩过的"），回复最多读 1 MB。"""
    res, asked = gzip_bomb_run()
    assert asked == {"identity"}
    assert res["llm_failed"] == {COMPRESSED: 3}, res["llm_failed"]


SECOND_MODEL = "    - name: m2\n      weight: 1.0\n      api_base: http://192.0.2.7:8000/v1\n"   # 文档用的地址：没人听


@pytest.mark.parametrize("where", ["models", "evaluator_models"])
def test_every_model_in_config_yaml_is_checked_before_the_key_goes_anywhere(tmp_path, monkeypatch, capsys, where):
    """讲师报过：config.yaml 里第二个模型写着另一台机器的 http:// 地址（api_key 那行删了），make openevolve 只检查
    第一个，付钱的密钥经代理（或者直接）明文发了过去、退出码 0。现在每个模型（models 和 evaluator_models）都照第一个
    那样检查：一句话、退出码 2，说是哪个模型，一个请求也不发（代理也没收到）。"""
    from hostile_server import HostileServer
    from stub_llm_server import StubServer
    key = "sk-paid-environment-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with StubServer(lambda n, t: "edit", models=("mock",)) as s, HostileServer(max_seconds=20) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        monkeypatch.setenv("http_proxy", proxy.url.removesuffix("/v1"))

        def edit(text):
            text = text.replace("  api_key: not-needed-for-the-mock\n", "").replace(
                "api_base: http://127.0.0.1:8765/v1", f"api_base: {s.url}")
            more = SECOND_MODEL if where == "models" else "  evaluator_models:\n" + SECOND_MODEL
            return text.replace("      weight: 1.0\n", "      weight: 1.0\n" + more, 1)
        _config_with(tmp_path, monkeypatch, edit)
        assert [(b, m) for b, m, _ in oe_settings.configured_endpoints()] == [(s.url, "mock"), ("http://192.0.2.7:8000/v1", "m2")]
        assert runmod.main(["--iterations", "2", "--output", str(tmp_path / "out")]) == 2
        assert proxy.received == [] and not os.path.exists(tmp_path / "out" / "openevolve.log")
    err = capsys.readouterr().err
    assert err.startswith("config.yaml 的 LLM 用不了（模型 m2，api_base http://192.0.2.7:8000/v1）：") and "明文 http://" in err \
        and "所以不发" in err, err
    assert key not in err


def test_openevolve_takes_the_same_proxy_as_the_check_before_it(monkeypatch):
    """讲师报过：config.yaml 的 api_base 是别的机器上的 http://，开跑前的 GET /models 经 HTTP_PROXY 通过了，OpenEvolve
    的环境却把那台机器放进 no_proxy、直接去连：4 个提议都"连不上"。现在只有本机的地址不走代理，别的和检查一样。"""
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    env = oe_env.child_env()
    assert env["no_proxy"].split(",") == env["NO_PROXY"].split(",") == ["127.0.0.1", "localhost", "::1"]
    from evolve.openai_llm import OpenAILLM
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("no_proxy", env["no_proxy"])
    assert OpenAILLM("http://gpu-box:11434/v1", "m", api_key="not-needed").proxy_env      # 检查也经代理
    assert OpenAILLM("http://127.0.0.1:11434/v1", "m", api_key="not-needed").proxy_env is None


def test_llm_takes_an_http_all_proxy_when_no_scheme_proxy_is_set(monkeypatch):
    """讲师报过：只设了 ALL_PROXY=http://… 的网里，--llm（和开跑前的检查）直接去连、说"域名解析失败"，OpenEvolve 的
    httpx 却走 ALL_PROXY。现在 --llm 也走它；socks 的 ALL_PROXY 这个客户端走不了，照旧不用。"""
    from evolve.openai_llm import OpenAILLM
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert OpenAILLM("https://api.example.com/v1", "m", api_key="k").proxy_env == "all_proxy（或 ALL_PROXY）"
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:8")
    assert OpenAILLM("https://api.example.com/v1", "m", api_key="k").proxy_env.startswith("https_proxy")
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("ALL_PROXY", "127.0.0.1:9")                      # 不写协议：和 http_proxy 一样照 http
    assert OpenAILLM("https://api.example.com/v1", "m", api_key="k").proxy_env == "all_proxy（或 ALL_PROXY）"
    said = []                                                           # 讲师的复查报过：socks 的一声不响地不用
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    assert OpenAILLM("https://api.example.com/v1", "m", api_key="k", notify=said.append).proxy_env is None
    assert said and "ALL_PROXY 是 socks5:// 的代理" in said[0] and "直接连" in said[0], said


@pytest.mark.parametrize("line, says", [
    ("  embedding_model: text-embedding-3-small\n", "database.embedding_model"),
    ("  provider: claude_code\n", "provider: claude_code"),
    ("  manual_mode: true\n", "llm.manual_mode")])       # 讲师报过：把提示写进文件等人回答，等了 3.5 分钟才停
def test_config_yaml_settings_that_would_take_the_key_somewhere_unchecked_are_refused(tmp_path, monkeypatch, capsys,
                                                                                         line, says):
    """OpenEvolve 拿 OPENAI_API_KEY 去问 embedding 的地址、provider 走别的客户端：make openevolve 检查不了它们，
    开跑之前一句话（退出码 2）；07 走 run_openevolve，那里也拦（RuntimeError，一句话）。"""
    section = "database:\n" if "embedding" in line else "llm:\n"
    _config_with(tmp_path, monkeypatch, lambda t: t.replace(section, section + line, 1))
    said = oe_settings.config_refusal()
    assert said and says in said and "\n" not in said, said
    assert runmod.main(["--iterations", "2", "--output", str(tmp_path / "out")]) == 2
    assert says in capsys.readouterr().err
    with pytest.raises(RuntimeError, match=re.escape(says)):
        oe_processes.run_openevolve(oe_processes.Processes(), "http://127.0.0.1:9/v1", 2, 0, str(tmp_path / "out07"))


STUDENT_BLOCK = "    if M <= 128:\n        return Config(BM=64, BN=64, BK=256, warps=4, stages=3, group=8)\n"


def _expert_run(tag: str, src: str):
    """src 当这次运行的专家（MINI_ALPHAEVOLVE_EXPERT），make openevolve 在仓库的一份拷贝里跑 3 个提议：(src, 输出目录)；
    那份拷贝的 initial_program.py 里，学生把自己的一条规则写进了 EVOLVE 块（STUDENT_BLOCK）。标准输出存在
    输出目录旁边的 stdout.txt。"""
    import shutil
    tmp = pathlib.Path(session_dir(tag))
    (tmp / "mine.py").write_text(src, encoding="utf-8")
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp / "repo" / d, ignore=shutil.ignore_patterns("output", "__pycache__"))
    initial = tmp / "repo" / "lecture14" / "openevolve" / "initial_program.py"
    text = initial.read_text(encoding="utf-8")
    head = "def choose_config(M, N, K):\n"
    assert head in text
    initial.write_text(text.replace(head, head + STUDENT_BLOCK, 1), encoding="utf-8")
    p = subprocess.run([sys.executable, str(initial.parent / "run_openevolve.py"), "--iterations", "3", "--output",
                        str(tmp / "out")], capture_output=True, text=True, timeout=240, cwd=str(tmp / "repo"),
                       env={**base_env(), "MINI_ALPHAEVOLVE_EXPERT": str(tmp / "mine.py")})
    assert p.returncode == 0, p.stderr[-2000:]
    (tmp / "stdout.txt").write_text(p.stdout, encoding="utf-8")
    return src, tmp / "out"


def _lecture_expert_source() -> str:
    with open(os.path.join(ROOT, "lecture14", "evolve", "lecture_expert.py"), encoding="utf-8") as f:
        return f.read()


def _long_expert_source(n: int = 300) -> str:
    """讲义的专家前面加 n 条走不到形状的规则（K <= 1、2……）：四万来个字符，比 OpenEvolve 默认的 max_code_length 长。"""
    src = _lecture_expert_source()
    rules = "".join(f"    if K <= {i + 1}:\n        return Config(BM=16, BN=64, BK=128, warps=4, stages=4, group=1)\n"
                    for i in range(n))
    head = "def choose_config(M, N, K):\n"
    return src.replace(head, head + rules, 1)


# 学生照练习改过（if M <= 16 → if M <= 64）、又贴进几百条规则的专家：一次运行查两件事。大半时间在等 OpenEvolve 启动：
# 会话一开始就在"等着的"后台线程跑
edited_expert_run = long_expert_run = ahead(functools.partial(
    _expert_run, "oe_edited_expert", _long_expert_source().replace("if M <= 16:", "if M <= 64:")), waits=True)
PREFETCH.append(edited_expert_run)


def test_openevolve_takes_children_of_an_expert_longer_than_its_default_code_length():
    """讲师的复查报过：README 请学生贴进几百条规则的表，专家有四万多个字符，OpenEvolve 的 max_code_length（10,000）
    把每个提议都拒了（"Generated code exceeds maximum length"），make openevolve 说"没变成子程序（回复打不上……）"，
    07 把本讲的循环和一个停在 1.000× 的 OpenEvolve 并排。现在它按起点的长度放宽。"""
    src, out = long_expert_run()
    assert len(src) > 20_000
    with open(out / "openevolve.log", encoding="utf-8") as f:
        log = f.read()
    assert "exceeds maximum length" not in log
    assert re.findall(r"Iteration \d+: Program", log), log[-2000:]          # 至少一个提议变成了子程序


@ahead(waits=True)
def usage_str_run():
    from hostile_server import HostileServer
    with HostileServer(chat="usage_str", max_seconds=60) as s:
        res, _ = _run_against(s.url, 3, pathlib.Path(session_dir("oe_usage_str")))
    return res


PREFETCH.append(usage_str_run)


def test_a_reply_whose_token_counts_are_not_numbers_still_becomes_a_child():
    """讲师的复查报过：usage 里的 token 数是字符串，OpenEvolve 每个提议都在加总时出错（unsupported operand），说成
    "回复打不上、没改动"，也从不放弃。现在不是整数的用量当作服务器没报。"""
    res = usage_str_run()
    assert oe_results.count(res)["no_child"] == 0 and res["llm_failed"] == {}, (oe_results.count(res), res["llm_failed"])


def test_openevolve_starts_from_the_runs_expert_like_the_lectures_loop():
    """学生报过：照练习改了 expert_heuristic.py，07 里本讲的循环从改过的专家出发，OpenEvolve 还从 initial_program.py
    （讲义的专家）出发：训练形状上起点是 0.992×，07 却说"两边都从专家出发"。现在 OpenEvolve 从一份拷贝出发，EVOLVE
    块是这次运行的专家：第一个评估的程序就是它，分数正好 1。"""
    src, out = edited_expert_run()
    with open(out / "initial_program.py", encoding="utf-8") as f:
        assert parse(f.read()) == parse(src) != EXPERT
    with open(out / "openevolve.log", encoding="utf-8") as f:
        first = re.search(r"Evaluated program \S+ in [\d.]+s: combined_score=([\d.]+)", f.read())
    assert first and first[1] == "1.0000", first


def test_make_openevolve_says_the_expert_and_initial_program_py_were_edited_and_starts_from_the_expert():
    """学生报过：把自己的启发式写进 expert_heuristic.py 再 make openevolve，"比专家快 1.037×"的分母是他改过的那份，
    04、06 开头都说一句，make openevolve 一个字没说；写进 initial_program.py 的 EVOLVE 块，make openevolve 悄悄不读它，
    从专家出发。现在两件事都在标准输出的开头说，起点仍是这次运行的专家（和本讲的循环一样）。"""
    src, out = edited_expert_run()
    said = "".join((out.parent / "stdout.txt").read_text(encoding="utf-8").split())
    assert said.index("注意：专家启发式") < said.index("最好的程序"), said[:600]
    assert "比专家快几倍\"都以它为分母" in said and "MINI_ALPHAEVOLVE_EXPERT" in said
    assert ("注意：lecture14/openevolve/initial_program.py的EVOLVE块不是讲义的专家（改过？）：makeopenevolve和07不读它"
            in said), said[:1200]
    assert "gitcheckoutlecture14/openevolve/initial_program.py" in said
    with open(out / "initial_program.py", encoding="utf-8") as f:
        start = f.read()
    assert parse(start) == parse(src) and STUDENT_BLOCK not in start


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("def choose_config(M, N, K):\n", "def choose_config(M, N, K):\n" + STUDENT_BLOCK, 1),
    lambda t: t.replace("    if M <= 16:", "    if M <= 16", 1),                               # 语法错误
    lambda t: t.replace("# EVOLVE-BLOCK-START", "# EVOLVE-BLOCK-STRAT"),                      # 标记拼错了
    lambda t: t.replace("# EVOLVE-BLOCK-END", ""),
    None])                                                                                   # 文件删了
def test_an_edited_or_broken_initial_program_is_said_and_the_run_still_starts_from_the_expert(tmp_path, monkeypatch, edit):
    """学生报过：initial_program.py 的标记改坏了，make openevolve 印了一段 traceback（ValueError: not enough values to
    unpack）；改了 EVOLVE 块，什么也不说。现在起点总是这次运行的专家（拷贝里留着原来的说明，能留的时候），
    initial_program_note 说一句。"""
    with open(os.path.join(HERE, "initial_program.py"), encoding="utf-8") as f:
        text = f.read()
    path = tmp_path / "initial_program.py"
    if edit is not None:
        assert edit(text) != text
        path.write_text(edit(text), encoding="utf-8")
    monkeypatch.setattr(oe_start, "INITIAL", str(path))
    start = oe_start.starting_program(str(tmp_path), "start.py")
    with open(start, encoding="utf-8") as f:
        assert parse(f.read()) == EXPERT
    note = oe_start.initial_program_note()
    assert note.startswith("注意：") and "不读它" in note and "openevolve-run" in note, note
    monkeypatch.undo()
    assert oe_start.initial_program_note() == ""                            # 仓库里的那份：讲义的专家，不说


def test_a_broken_evaluator_is_one_sentence_with_its_line_before_anything_starts(tmp_path, monkeypatch, capsys):
    """学生报过：evaluator.py 少了一个冒号，make openevolve 只说"OpenEvolve 出错退出：看日志的最后几行"；evaluate_stage2
    里拼错一个变量名，每个完整评估都出错，make openevolve 却说那些程序"在探针级就停了"。现在开服务器、起 OpenEvolve
    之前就一句话：文件:行、错在哪、怎么恢复（07 也经过 evaluator_problem）。"""
    with open(os.path.join(HERE, "evaluator.py"), encoding="utf-8") as f:
        text = f.read()
    assert oe_start.evaluator_problem() is None                             # 仓库里的那份没问题
    cases = [("def evaluate_stage2(program_path: str):", "def evaluate_stage2(program_path: str)", "语法错误"),
             ('    train = _speedup(s["ev"], program)', '    train = _speedup(s["ev"], progam)', "NameError"),
             ("def evaluate(program_path: str):", "def evaluat(program_path: str):", "没有 evaluate 函数"),
             ("_STATE: dict = {}", "_STATE: dict = {}\nx = 1 / 0", "ZeroDivisionError")]
    for old, new, says in cases:
        assert text.count(old) == 1, old
        edited = text.replace(old, new)
        path = tmp_path / "evaluator.py"
        path.write_text(edited, encoding="utf-8")
        monkeypatch.setattr(oe_start, "EVALUATOR", str(path))
        said = oe_start.evaluator_problem()
        assert said and says in said and "git checkout lecture14/openevolve/evaluator.py" in said, said
        if "函数" not in says:                                             # 说的是改坏了的那一行
            line = next(i for i, s in enumerate(edited.splitlines(), 1) if new.splitlines()[-1] in s)
            assert f"evaluator.py:{line}:" in said, (line, said)
        assert runmod.main(["--iterations", "2", "--output", str(tmp_path / "out")]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.strip() == said and "Traceback" not in err, err
        assert not (tmp_path / "out").exists()                            # 服务器、OpenEvolve 都没起
    assert sys.modules.get("openevolve.evaluation_result", "absent") is not None   # 载入时挡 OpenEvolve 的那一项拿掉了


def test_proposals_whose_evaluation_raised_are_counted_as_evaluation_errors_not_as_stopped_at_the_probe():
    """OpenEvolve 0.4.0 在 evaluator 的某一级抛了异常或超时时，记下的不是分数：stage1_passed = 0（连同 error）、
    stage2_passed = 0（连同第一级的分数）、timeout。以前它们被数成"在探针级就停了""读不懂或启动不了"。"""
    trace = [(1, dict(combined_score=1.1, launchable=1.0, full_evaluation=1.0)),
             (2, dict(combined_score=1.05, probe_speedup=1.05, launchable=1.0, full_evaluation=0.0)),
             (3, dict(combined_score=0.0, launchable=0.0, full_evaluation=0.0)),
             (4, dict(combined_score=1.05, probe_speedup=1.05, launchable=1.0, full_evaluation=0.0, stage2_passed=0.0)),
             (5, dict(stage1_passed=0.0, error=0.0)), (6, dict(error=0.0, timeout=True))]
    c = oe_results.count(dict(trace=trace, iterations=8))
    assert c == dict(full=1, probe=1, rejected=1, eval_error=3, no_child=2) and sum(c.values()) == 8
    assert "3 个评估出错（evaluator.py 抛了异常或超时" in oe_results.eval_error_said(3) and oe_results.eval_error_said(0) == ""


def test_openai_environment_variables_other_than_the_key_do_not_reach_openevolve(monkeypatch):
    """讲师报过：OPENAI_CUSTOM_HEADERS="Authorization: Bearer 付钱的密钥" 换掉了 config.yaml 的占位符，开跑前的检查
    发的是占位符、放行了，OpenEvolve 的每个请求却带着密钥经明文 http 发给了别的机器。OpenEvolve 的进程只拿到
    OPENAI_API_KEY；别的 OPENAI_ 变量（地址、请求头……）不传，make openevolve 在标准错误上说一声。"""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-key-0123456789")
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "Authorization: Bearer sk-the-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.9.9.9/v1")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "http://10.9.9.9/")
    env = oe_env.child_env()
    assert env["OPENAI_API_KEY"] == "sk-the-key-0123456789"
    assert not [k for k in env if "OPENAI_" in k and k != "OPENAI_API_KEY"]
    assert oe_env.dropped_openai_vars() == ["AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL", "OPENAI_CUSTOM_HEADERS"]


@ahead(waits=True)
def runs_with_a_socks_proxy():
    """make openevolve（两个提议）和 07（两个提议、一个种子），环境里有 ALL_PROXY=socks5://…（那里没有代理）。"""
    env = {**base_env(), "ALL_PROXY": "socks5://127.0.0.1:9", "all_proxy": "socks5h://127.0.0.1:9"}
    oe = subprocess.run([sys.executable, RUN, "--iterations", "2", "--output", os.path.join(session_dir("socks"), "out")],
                        capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    o7 = subprocess.run([sys.executable, os.path.join(ROOT, "lecture14", "07_openevolve.py"), "--budget", "2",
                         "--seeds", "1"], capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    return oe, o7


PREFETCH.append(runs_with_a_socks_proxy)


def test_a_socks_proxy_in_the_environment_does_not_stop_openevolve():
    """讲师报过：ALL_PROXY=socks5://… 让 make openevolve 和 07 一个提议也没跑就出错退出（日志里是 httpx 要 socksio）：
    httpx 建客户端时就要为它建 SOCKS 的连接，no_proxy 管不到。没装 socksio 时这些变量不传给 OpenEvolve，说一句。"""
    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("装了 socksio：httpx 走得了 SOCKS 代理，这些变量照传")
    assert oe_env.dropped_proxy_vars({"ALL_PROXY": "socks5://h:1", "https_proxy": "SOCKS4://h:1",
                                      "HTTP_PROXY": "http://h:3128", "NO_PROXY": "socks"}) == ["ALL_PROXY", "https_proxy"]
    # 讲师的复查报过：ALL_PROXY=ftp://… 也让 httpx 出错（Unknown scheme for proxy URL）；不写协议的 httpx 当 http
    env = {"ALL_PROXY": "ftp://h:1", "HTTPS_PROXY": "h:3128", "http_proxy": " https://h:1", "all_proxy": ""}
    assert oe_env.dropped_proxy_vars(env) == ["ALL_PROXY"]
    assert "httpx 走不了的代理" in "".join(oe_env.env_notes(env)) and "socksio 这个包" not in "".join(oe_env.env_notes(env))
    for p in runs_with_a_socks_proxy():
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
        said = "".join(p.stderr.split())
        assert "环境变量ALL_PROXY、all_proxy是SOCKS代理" in said and "socksio" in said, p.stderr[:2000]


def test_07_refuses_such_a_config_before_running_either_side():
    """讲师报过：config.yaml 里有 embedding_model 时，07 先把本讲的那一边跑完才说，句子里说的是 make openevolve，
    最后还说"这个目录留着"——一个空目录。现在开跑之前一句话、退出码 2，什么都不留。"""
    tmp = _project_copy("o7_refused")
    cfg = tmp / "lecture14" / "openevolve" / "config.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("database:\n", "database:\n  embedding_model: x\n", 1),
                   encoding="utf-8")
    scratch = tmp / "scratch"
    scratch.mkdir()
    p = subprocess.run([sys.executable, str(tmp / "lecture14" / "07_openevolve.py"), "--budget", "2", "--seeds", "1"],
                       capture_output=True, text=True, timeout=120, cwd=tmp, env={**base_env(), "TMPDIR": str(scratch)})
    assert p.returncode == 2 and "database.embedding_model" in p.stderr and "make openevolve" not in p.stderr, p.stderr
    assert "目录留着" not in p.stderr and "本讲的循环" not in p.stderr and os.listdir(scratch) == [], p.stderr


# 和 --llm 客户端（test_hostile_server.py 的 CHAT_CASES）同一张表（hostile_server.SAME_KIND）。讲师的复查报过：
# 响应头太长（h11 的 "Receive buffer too long"）、HTTP 101 被说成"连不上 LLM 服务器"；分块的长度行太长也是那句
# h11 的话，要说成"没传完整"，不能和响应头太长混在一起；只有 tool_calls 的回复是 OpenEvolve 的 "None response"
CAREFUL_CASES = {mode: same_kind(mode) for mode in SAME_KIND}


@pytest.mark.parametrize("mode, kind", CAREFUL_CASES.items())
def test_openevolve_names_each_bad_reply_as_the_llm_client_does(mode, kind, monkeypatch):
    """讲师报过：OpenEvolve 里一个回了 10 MB 的服务器被记作"读不懂"（截在 1 MB），分块长度溢出、长度头离谱的被记作
    "连不上 LLM 服务器"——服务器明明答了；讲师的复查又报过响应头太长、HTTP 101（"连不上"）和只有 tool_calls 的
    回复（OpenEvolve 的 "None response"）。现在和 --llm 一样是"太长""没传完整""响应头不合规矩""LLM 回 HTTP 101"
    "LLM 回的是工具调用"（hostile_server.SAME_KIND：--llm 那边对着同一张表查）。OpenEvolve 的
    OpenAILLM 在这个进程里装上 make openevolve 的保护（oe_careful_http 的 careful_http、tame_replies；测试完还原），对着 HostileServer
    调一次，失败的说明交给读日志的 failure_kind。"""
    import asyncio

    import openai
    from openevolve.config import LLMModelConfig
    from openevolve.llm import openai as oe_openai

    from hostile_server import HostileServer
    monkeypatch.setattr(openai.OpenAI, "__init__", openai.OpenAI.__init__)          # 测试完还原
    monkeypatch.setattr(oe_openai.OpenAILLM, "_call_api", oe_openai.OpenAILLM._call_api)
    oe_careful_http.careful_http()
    oe_careful_http.tame_replies(["sk-test"])
    prompt = "当前的程序：\n" + render(EXPERT)
    with HostileServer(chat=mode, max_seconds=20) as s:
        llm = oe_openai.OpenAILLM(LLMModelConfig(api_base=s.url, api_key="sk-test", name="x", timeout=10, retries=0,
                                                 retry_delay=0, max_tokens=100, temperature=0.7))
        try:
            reply = asyncio.run(llm.generate_with_context("system", [{"role": "user", "content": prompt}]))
            got = None
        except Exception as e:                                  # OpenEvolve 在日志里写的就是这一句
            reply, got = None, oe_failures.failure_kind(f"LLM generation failed: {e}")
    assert got == kind, got
    assert (reply is not None) == (kind is None) and s.posts() == 1


def test_a_wide_response_head_is_refused_by_its_total_size_however_it_arrives(monkeypatch):
    """helper 报过：wide_head（50 个 3 KB 的响应头，共 150 KB）有时被放行——h11 只在响应头还没到齐、缓冲里已经超过
    100 KB 时才抛，几次读碰巧在 99 KB 之后一次读齐，它就照收。careful_http 自己按总长拒掉（和 --llm 的
    MAX_HEAD_BYTES 一样）。这里把 httpcore 的上限调到 10 MB，造出"一次到齐"的那条路。"""
    import asyncio
    import importlib

    import openai
    from openevolve.config import LLMModelConfig
    from openevolve.llm import openai as oe_openai

    from hostile_server import HostileServer
    core = openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0].replace("httpx", "httpcore")
    for side, name in (("_sync", "HTTP11Connection"), ("_async", "AsyncHTTP11Connection")):
        monkeypatch.setattr(getattr(importlib.import_module(f"{core}.{side}.http11"), name), "MAX_INCOMPLETE_EVENT_SIZE",
                            10_000_000)
    monkeypatch.setattr(openai.OpenAI, "__init__", openai.OpenAI.__init__)          # 测试完还原
    monkeypatch.setattr(oe_openai.OpenAILLM, "_call_api", oe_openai.OpenAILLM._call_api)
    oe_careful_http.careful_http()
    oe_careful_http.tame_replies(["sk-test"])
    with HostileServer(chat="wide_head", max_seconds=20) as s:
        llm = oe_openai.OpenAILLM(LLMModelConfig(api_base=s.url, api_key="sk-test", name="x", timeout=10, retries=0,
                                                 retry_delay=0, max_tokens=100, temperature=0.7))
        with pytest.raises(Exception) as e:
            asyncio.run(llm.generate_with_context("system", [{"role": "user", "content": "当前的程序"}]))
    assert oe_failures.failure_kind(f"LLM generation failed: {e.value}") == same_kind("wide_head")


@pytest.mark.parametrize("mode", ["gzip_bomb_500", "flood_500", "broken_400", "trickle_500"])
def test_an_error_status_is_named_by_its_code_on_both_sides_whatever_its_body(mode, monkeypatch):
    """审读报过：--llm 对不是 2xx 的回答只看状态码（"LLM 回 HTTP 500"，5xx 照样重试），make openevolve 却读它的正文：
    压缩过的说成"回复是压缩过的"、10 MB 的说成"回复太长"、分块坏了的说成"响应头不合规矩"。现在两边都按状态码说；
    压缩过的正文一个字也不读（不解压）。helper 查到：正文挤牙膏的 500（trickle_500），make openevolve 读它读到整个
    请求的期限，OpenEvolve 的 wait_for 先到期，说成"LLM 超时"（停下时还劝人调大 timeout），--llm 读 2 秒
    （ERROR_READ_SECONDS）就说"LLM 回 HTTP 500"。现在两边都只读那么久。"""
    timeout = 5 if mode == "trickle_500" else 10                # 挤牙膏的：两边各等 ERROR_READ_SECONDS（2 秒）
    import asyncio

    import openai
    from openevolve.config import LLMModelConfig
    from openevolve.llm import openai as oe_openai

    from evolve.mock_llm import Prompt
    from evolve.openai_llm import LLMError, OpenAILLM
    from hostile_server import HostileServer
    monkeypatch.setattr(openai.OpenAI, "__init__", openai.OpenAI.__init__)          # 测试完还原
    monkeypatch.setattr(oe_openai.OpenAILLM, "_call_api", oe_openai.OpenAILLM._call_api)
    oe_careful_http.careful_http()
    oe_careful_http.tame_replies(["sk-test"])
    code = "400" if mode == "broken_400" else "500"
    with HostileServer(chat=mode, max_seconds=20) as s:
        llm = oe_openai.OpenAILLM(LLMModelConfig(api_base=s.url, api_key="sk-test", name="x", timeout=timeout, retries=0,
                                                 retry_delay=0, max_tokens=100, temperature=0.7))
        with pytest.raises(Exception) as e:
            asyncio.run(llm.generate_with_context("system", [{"role": "user", "content": "当前的程序"}]))
        ours = OpenAILLM(s.url, "x", api_key="sk-test-0123456789", timeout=timeout, retries=0, seed=0)
        with pytest.raises(LLMError) as mine:
            ours.propose(Prompt(render(EXPERT), EXPERT, 1.0, (), ()))
    assert oe_failures.failure_kind(f"LLM generation failed: {e.value}") == mine.value.kind == f"LLM 回 HTTP {code}"


def _careful_http_here(monkeypatch):
    """在这个进程里装上 oe_careful_http.careful_http 之前，记下它改的东西（openai.OpenAI.__init__、httpcore 的两个
    read），测试完还原：(openai, httpx 模块)。"""
    import importlib

    import openai
    monkeypatch.setattr(openai.OpenAI, "__init__", openai.OpenAI.__init__)
    http = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])
    sync = importlib.import_module(http.__name__.replace("httpx", "httpcore") + "._backends.sync")
    for cls in (sync.SyncStream, sync.TLSinTLSStream):
        monkeypatch.setattr(cls, "read", cls.read)
    return openai, http


def test_a_second_careful_http_still_bounds_the_response_head(monkeypatch):
    """helper 查到：同一个进程里第二次 careful_http（这个文件的测试就这样），_whole_request_reads 见 read 已经改过，
    另建一个期限交给 started，改过的 read 却还看第一次的那个：响应头挤牙膏又没有了期限（这里要等到服务器 8 秒后
    断开，说成"连不上"）。现在第二次用的是同一个期限：config.yaml 的 timeout（1 秒）一到就是超时。"""
    openai, _ = _careful_http_here(monkeypatch)
    oe_careful_http.careful_http()
    oe_careful_http.careful_http()
    from hostile_server import HostileServer
    with HostileServer(chat="trickle_head", drip=0.05, max_seconds=8) as s:
        client = openai.OpenAI(base_url=s.url, api_key="x", timeout=1)
        t = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
        took = time.monotonic() - t
    assert took < 5, took


def test_a_request_deadline_ends_with_its_request(monkeypatch):
    """helper 查到：started 写下的期限在请求结束以后还留在那个线程上，这个线程之后在别的 httpx 客户端里的读（没有
    started 写新的期限）一开始就是"整个请求超过 0.5 秒"。现在请求读完就撤掉它。"""
    openai, http = _careful_http_here(monkeypatch)
    oe_careful_http.careful_http()
    from hostile_server import chat_body
    from stub_llm_server import CannedServer
    with CannedServer(200, chat_body("hi")) as s:
        client = openai.OpenAI(base_url=s.url, api_key="x", timeout=0.5)
        reply = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "hi"
        time.sleep(0.6)                                        # 那个请求的期限过了
        with http.Client(timeout=5, trust_env=False) as other:
            assert other.get(s.url + "/models").status_code == 200


@pytest.mark.parametrize("key, says", [
    ("", "config.yaml 的 api_key 是空的"),            # 讲师的复查报过：检查放行，OpenEvolve 一开跑就 Missing credentials
    ("sk-FILE KEY-0123456789", "config.yaml 的 api_key 里有空格、换行或者 ASCII 以外的字符"),
    (None, "环境变量 OPENAI_API_KEY 里有空格、换行或者 ASCII 以外的字符")])
def test_a_key_with_a_space_is_blamed_on_where_it_was_written(key, says, monkeypatch):
    """讲师报过：config.yaml 的 api_key 里有空格（OPENAI_API_KEY 没设），make openevolve 说"环境变量 OPENAI_API_KEY 里有
    空格……"。现在说密钥是从哪里来的：config.yaml 的 api_key，或者环境变量。请求一个也不发。"""
    from hostile_server import HostileServer
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ENV KEY-0123456789")
    with HostileServer(models="list", model_ids=("m",)) as s:
        said = oe_settings.check_configured(s.url, "m", key)
        assert s.received == []
    assert said and says in said and "KEY-0123456789" not in said, said


def test_a_failure_streak_through_a_proxy_names_the_proxy(monkeypatch):
    # 讲师报过：http_proxy 指着一个回 502 的代理，make openevolve 说"LLM 回 HTTP 502 ×4……检查 LLM 服务器和 config.yaml 的
    # api_base、name、密钥"，一个字没提代理
    monkeypatch.setattr(oe_failures, "VIA_PROXY", ["环境变量 http_proxy（或 HTTP_PROXY）的代理 http://127.0.0.1:18998"])
    kinds, check = oe_failures.streak_said(["LLM 回 HTTP 502"] * 4)
    assert "LLM 回 HTTP 502" in kinds and "请求经环境变量 http_proxy（或 HTTP_PROXY）的代理 http://127.0.0.1:18998" in check
    monkeypatch.setattr(oe_failures, "VIA_PROXY", [])
    assert "代理" not in oe_failures.streak_said(["LLM 回 HTTP 502"] * 4)[1]


def test_openevolve_reads_the_expert_as_it_was_when_the_run_started(tmp_path):
    """学生报过：07 跑着的时候把 500 条规则的表贴进 expert_heuristic.py，之后起的 OpenEvolve 种子和它的评估进程读到
    那张表（提示 36 万个字符），本讲的循环还是开跑时的专家。OpenEvolve 的子进程的环境里，专家是这个进程的 EXPERT
    在输出目录里的一份拷贝：原来的文件之后怎么改，它都不变。"""
    from evolve.problem import EXPERT_ENV, EXPERT_FILE
    out, scratch = tmp_path / "out", tmp_path / "out" / "tmp"
    scratch.mkdir(parents=True)
    env = oe_env.run_env(str(out), str(scratch))
    snapshot = env[EXPERT_ENV]
    assert os.path.dirname(snapshot) == str(out) and os.path.realpath(snapshot) != os.path.realpath(EXPERT_FILE)
    assert load_heuristic(snapshot) == EXPERT
