"""
讲师在家对着真模型录、课上回放时碰到的事（evolve.openai_llm，桩服务器 tests/stub_llm_server.py，127.0.0.1）：
慢的服务器时标准错误上说在等什么；录到一半被打断的文件回放时怎么说；限流时该查什么；想得多的模型的草稿。
每个测试几秒以内，服务器在 with 块结束时关掉。
"""

import argparse
import time

from stub_llm_server import StubServer

from evolve import EXPERT, render
from evolve import openai_llm
from evolve.mock_llm import Prompt


def prompt_for(program=EXPERT):
    return Prompt(render(program), program, 1.0, (), ())


def command_line(url, **kw):
    """脚本的命令行参数（openai_llm.add_arguments 的那几个）。"""
    return argparse.Namespace(**{**dict(llm=url, model="stub", llm_concurrency=2, llm_timeout=10.0, record=None,
                                        replay=None), **kw})


# ---------------------------------------------------------------- 慢的服务器

def test_a_slow_server_gets_a_line_saying_what_the_run_is_waiting_for(monkeypatch):
    """讲师报过：CPU 上的模型一个回复要几十秒，04、05、02 的标准错误上一声不吭（第一行进度要等第一批回复回来），
    看着像卡住了。现在脚本建的后端（from_arguments）在调用等了 WAITING_SAID 秒以后，每 WAITING_SAID 秒说一句：
    等的是哪个模型的第几次调用、等了多久、一个请求最多等多久。回得快的服务器不多说一句。"""
    monkeypatch.setattr(openai_llm, "WAITING_SAID", 0.3, raising=False)   # 以前没有这个常数：照样跑到下面的检查
    said = []
    with StubServer(lambda n, text: "slow", slow_seconds=1.5) as s:
        backend = openai_llm.from_arguments(command_line(s.url), "04 test", notify=said.append)
        out = backend.propose_many([prompt_for(), prompt_for()])
        backend.close()
    assert all(kind == openai_llm.KIND for kind, _ in out)
    waiting = [x for x in said if x.startswith("LLM：在等")]
    assert 2 <= len(waiting) <= 6, said                             # 1.5 秒里每 0.3 秒最多一句
    assert waiting[0].startswith("LLM：在等 stub 回答第 1、2 次调用，已经等了 "), waiting[0]
    assert "一个请求最多等 10 秒，--llm-timeout 改" in waiting[0] and "Ctrl-C" in waiting[0]
    backend._watcher.join(1)
    assert not backend._watcher.is_alive()                          # close 以后那个线程停了
    said.clear()
    with StubServer(lambda n, text: "edit") as s:                   # 回得快：什么也不说
        backend = openai_llm.from_arguments(command_line(s.url), "04 test", notify=said.append)
        backend.propose_many([prompt_for(), prompt_for()])
        time.sleep(0.5)
        backend.close()
    assert said == []


# ---------------------------------------------------------------- 录到一半被打断的文件

def test_a_recording_stopped_by_ctrl_c_is_called_unfinished_when_replayed(tmp_path):
    """讲师报过：在家录的时候按了 Ctrl-C（或者进程被杀掉），文件停在一整行上；课上回放时开跑什么也不说，演示 2 放到
    一半才停，说的是"这次的 --budget、--seeds 比录制时大"——参数明明和录制时一样（回放先查过）。现在跑完的录制最后有
    一行结束行：没有它的文件，回放开跑前就说没录完，放到录下的最后一次调用时说停在哪、为什么、怎么办；跑完的照样
    逐字节相同。"""
    import json
    import os
    import signal
    import subprocess
    import sys
    from conftest import ROOT, base_env, run_script_fresh, stop_group
    script = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
    args = ["--budget", "20", "--seeds", "1"]
    f = tmp_path / "cut.jsonl"
    with StubServer(lambda n, text: "slow", slow_seconds=0.2) as s:
        p = subprocess.Popen([sys.executable, script, *args, "--llm", s.url, "--model", "stub", "--llm-concurrency", "1",
                              "--record", str(f)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=base_env(), start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while (not f.exists() or f.read_bytes().count(b"\n") < 4) and time.monotonic() < deadline and p.poll() is None:
                time.sleep(0.05)
            os.killpg(p.pid, signal.SIGINT)                         # 终端的 Ctrl-C 发给整个前台进程组
            _, err = p.communicate(timeout=10)
        finally:
            stop_group(p)
    assert p.returncode == 130 and err.strip().splitlines()[-1] == "已中断。", err
    lines = f.read_text(encoding="utf-8").splitlines()
    calls = len(lines) - 1
    assert calls >= 3 and all(json.loads(x)["type"] == "call" for x in lines[1:])   # 录下的都是完整的行，没有结束行
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    said = [x for x in rep.stderr.splitlines() if not x.startswith("演示")]
    assert rep.returncode == 2 and "Traceback" not in rep.stderr, rep.stderr
    assert said[0] == (f"（回放文件 {f} 没录完：最后没有录完时才写的结束行（录的时候按了 Ctrl-C、进程被杀掉了，或者磁盘满了）；"
                       "录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）"), said
    assert said[1].startswith(f"回放停在第 {calls + 1} 次 LLM 调用：{f} 只录了 {calls} 次调用、没录完（"), said
    assert "--budget" not in said[1] and said[1].endswith("要放全程就重新 --record。") and len(said) == 2, said


def test_a_finished_recording_ends_with_an_end_line_and_replays_without_a_word(tmp_path):
    """跑完的录制（finish 之后）最后一行是 {"type": "end", "calls": N}；回放它什么也不多说，用完了还要就说它是录完了的、
    这次问得比录制时多（不说"没录完"）；多出来的调用不把结束行算进去。"""
    import json
    from evolve import Evaluator, TimeTable, evolve, split_shapes
    table, (train, _) = TimeTable(), split_shapes()
    f = tmp_path / "run.jsonl"
    said = []
    with StubServer(lambda n, text: "edit") as s:
        rec = openai_llm.from_arguments(command_line(s.url, record=str(f)), "04 test", notify=said.append)
        evolve(Evaluator(train, table), 6, seed=0, llm=rec)
        rec.close()                                                 # 脚本的 finally 先 close，最后才 finish
        openai_llm.finish(rec, said.append)
    lines = f.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["version"] == 2 and json.loads(lines[-1]) == {"type": "end", "calls": 6}
    assert len(lines) == 1 + 6 + 1 and said == []
    replay = openai_llm.from_arguments(command_line(None, model=None, llm_concurrency=None, llm_timeout=None,
                                                    replay=str(f)), "04 test", notify=said.append)
    assert said == [] and replay.complete is True
    evolve(Evaluator(train, table), 4, seed=0, llm=replay)
    assert replay.unused() == 2                                     # 还有两次调用没用上；结束行不算
    replay.close()
    replay = openai_llm.ReplayLLM(str(f))
    try:
        evolve(Evaluator(train, table), 8, seed=0, llm=replay)
        raise AssertionError("回放该停在第 7 次调用")
    except openai_llm.ReplayMismatch as e:
        assert "第 7 次 LLM 调用" in str(e) and "只录了 6 次调用，是录完了的" in str(e) and "没录完" not in str(e), e
    replay.close()


# ---------------------------------------------------------------- 限流

def test_a_server_that_asks_to_wait_minutes_is_rate_limiting_not_misconfigured():
    """讲师报过：服务器每次回 429、Retry-After: 120（超过一次调用肯等的 MAX_WAIT 秒），04 最后说"检查 LLM 服务器、地址、
    模型名和密钥以后再跑"——地址、模型名、密钥都没错，是限流。现在这种"要等 … 秒以上（不等）"的 429 也说限流，
    --llm（lost_llm）和 make openevolve（failure_summary）一样。"""
    from evolve.openai_llm import RATE_LIMITED_ADVICE, Call, failure_summary, lost_llm
    long_wait = f"LLM 回 HTTP 429，要等 {openai_llm.MAX_WAIT:g} 秒以上（不等）"
    with StubServer(lambda n, text: "http429", retry_after="120") as s:
        backend = openai_llm.OpenAILLM(s.url, "stub", timeout=10, backoff=0.01)
        out = backend.propose_many([prompt_for()] * 4)
    assert [e.kind for e in out] == [long_wait] * 4                 # 一次也没等：服务器让等的比 MAX_WAIT 长
    said = lost_llm(backend.calls)
    assert RATE_LIMITED_ADVICE in said and "检查 LLM 服务器" not in said, said
    for streak, limited in (([long_wait] * 2 + ["LLM 回 HTTP 429"] * 2, True), ([long_wait] * 3 + ["LLM 回 HTTP 500"], False),
                            (["LLM 回 HTTP 4290"] * 4, False)):
        assert failure_summary(streak)[1] == limited, streak
        said = lost_llm([Call(i, "p", None, k, 0.1, None, None, None) for i, k in enumerate(streak)])
        assert (RATE_LIMITED_ADVICE in said) == limited, said


# ---------------------------------------------------------------- 想得多的模型的草稿

DRAFT = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 4:\n>>>>>>> REPLACE\n"      # 草稿里试过又放弃的
ANSWER = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"     # 真正的回答


def child(reply_text):
    """回复走进化循环的那条路（去掉草稿、读 SEARCH/REPLACE、打到专家上）得到的子程序；用不上的回复是失败的种类。"""
    from evolve.openai_llm import Call, _Backend
    from evolve.program import apply_diff, parse_diff
    from evolve.source import parse
    r = _Backend._result(Call(0, "p", reply_text, None, 0.0, None, None, None))
    if isinstance(r, Exception):
        return r.kind
    try:
        return parse(apply_diff(render(EXPERT), parse_diff(r[1])))
    except Exception as e:                                          # noqa: BLE001  和进化循环一样记成一次失败
        return getattr(e, "kind", type(e).__name__)


def test_drafts_of_a_thinking_model_are_not_taken_for_its_edit():
    """讲师报过：DeepSeek-R1 这类模型的对话模板里已经写了开头的 <think>，回复里只有 </think>：草稿里试过的块被当成
    修改先打上，真正的回答就"SEARCH 找不到"；max_tokens 用完、草稿没写完（只有 <think>）时，草稿里的块被当成了模型的
    修改。现在这两种草稿都不算：前一种打上的是真正的回答，后一种是一个没有 SEARCH/REPLACE 块的回复。"""
    from evolve.diff import NO_BLOCK
    answered = child(ANSWER)
    assert answered != EXPERT and "M <= 32" in render(answered)
    assert child(f"<think>\n试试 M <= 4：\n{DRAFT}算了。\n</think>\n\n{ANSWER}") == answered    # 配对的：本来就不算
    assert child(f"试试 M <= 4：\n{DRAFT}算了。\n</think>\n\n{ANSWER}") == answered            # 开头的 <think> 在模板里
    assert child(f"<think>\n试试 M <= 4：\n{DRAFT}再想想，要是 N") == NO_BLOCK                   # 草稿没写完
    assert child(f"{ANSWER}\n<think>以后再试 M <= 4：\n{DRAFT}") == answered                   # 回答后面又开了个头


# ---------------------------------------------------------------- MockLLM 服务器

def test_a_mock_server_whose_shell_is_already_gone_says_so(monkeypatch, capsys):
    """讲师报过：按 README 开 MockLLM 服务器时用了 (python3 lecture14/mock_llm_server.py &)，子 shell 马上结束，服务器
    一声不响地退出（退出码 0，连地址都没印），04 只说"连不上 LLM 服务器……先启动它"。现在手动开的服务器说一句为什么
    没开、该怎么开，退出码 1；程序用 --parent 启动的照旧安静地退出（那个程序已经不在了，没人看）。"""
    import subprocess
    import sys
    from conftest import load_script
    server = load_script("lecture14/mock_llm_server.py", "mock_llm_server_gone")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(10)                                                   # 一个刚退出、已经收掉的进程号
    monkeypatch.setattr(server, "STARTED_BY", dead.pid)
    assert server.main(["--port", "0"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("MockLLM 服务器没开：启动它的进程") and "另开一个终端" in err, err
    assert server.main(["--port", "0", "--parent", str(dead.pid)]) == 0
    assert capsys.readouterr() == ("", "")
