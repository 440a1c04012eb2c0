"""
讲师在家对着真模型录、课上回放时碰到的事（evolve.openai_llm，桩服务器 tests/stub_llm_server.py，127.0.0.1）：
慢的服务器时标准错误上说在等什么；录到一半被打断的文件回放时怎么说；限流时该查什么；想得多的模型的草稿。
每个测试几秒以内（等慢回复的那次运行在后台先跑），服务器在 with 块结束时关掉。
"""

import argparse
import contextlib
import os
import signal
import threading
import time

import pytest

from conftest import ROOT, ahead, as_printed, base_env, run_script_fresh
from stub_llm_server import STALL, StubServer

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
    monkeypatch.setattr(openai_llm.client, "WAITING_SAID", 0.3, raising=False)   # client.py 看的；以前没有这个常数：照样跑到下面的检查
    said, twice = [], threading.Event()

    def note(line):
        said.append(line)
        if sum(x.startswith("LLM：在等") for x in said) >= 2:
            twice.set()

    def slow(n, text):                   # 服务器等到"在等"说了两句才回答（一直不说的话 STALL 秒）：机器忙不忙都一样
        twice.wait(STALL)
        return "edit"
    with StubServer(slow) as s:
        backend = openai_llm.from_arguments(command_line(s.url), "04 test", notify=note)
        t = time.monotonic()
        out = backend.propose_many([prompt_for(), prompt_for()])
        took = time.monotonic() - t
        backend.close()
    assert all(kind == openai_llm.KIND for kind, _ in out)
    waiting = [x for x in said if x.startswith("LLM：在等")]
    assert 2 <= len(waiting) <= took / 0.3, (took, said)            # 每 0.3 秒最多一句
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
    said = [x for x in rep.stderr.splitlines() if not x.startswith(("演示", f"（回放 {f}："))]   # 开跑前说是回放的那句另测
    assert rep.returncode == 2 and "Traceback" not in rep.stderr, rep.stderr
    assert said[0] == (f"（回放文件 {f} 没录完：最后没有录完时才写的结束行（录的时候按了 Ctrl-C、进程被杀掉了，或者磁盘满了）；"
                       "录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）"), said
    assert said[1].startswith(f"回放停在第 {calls + 1} 次 LLM 调用：{f} 只录了 {calls} 次调用、没录完（"), said
    assert "--budget" not in said[1] and said[1].endswith("要放全程就重新 --record。") and len(said) == 2, said


def record_04(f, budget):
    """04 --budget budget --seeds 1 对着桩服务器跑一次、录进文件 f：(脚本, 参数, 录制的运行, 文件的各行（带换行）)。"""
    import os
    from conftest import ROOT, base_env, run_script_fresh
    script = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
    args = ["--budget", str(budget), "--seeds", "1"]
    with StubServer(lambda n, text: "edit") as s:
        rec = run_script_fresh(script, *args, "--llm", s.url, "--model", "stub", "--record", str(f),
                               env=base_env(), timeout=120)
    assert rec.returncode == 0, rec.stderr
    return script, args, rec, f.read_bytes().splitlines(keepends=True)


def test_an_unfinished_recording_that_holds_every_call_says_at_the_end_it_played_the_whole_run(tmp_path):
    """helper 的压力测试报过：Ctrl-C 落在最后一次调用回来之后（02 在印结果的时候），文件有全部调用、只是没有结束行；
    回放开跑前说"没录完……用完了回放就停在那里"，然后放完全程、退出码 0，一句也不说。现在最后说一句放完了全程；
    标准输出和录制时逐字节相同。"""
    from conftest import base_env, run_script_fresh
    f = tmp_path / "run.jsonl"
    script, args, rec, lines = record_04(f, 12)
    assert b'"type": "end"' in lines[-1]
    f.write_bytes(b"".join(lines[:-1]))                          # 没有结束行，调用都在
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    said = [x for x in rep.stderr.splitlines() if x.startswith("（") and "没录完" in x]
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr
    assert said[0].startswith(f"（回放文件 {f} 没录完：") and len(said) == 2, rep.stderr
    assert said[1] == f"（{f} 没录完，不过这次要的 {len(lines) - 2} 次调用都录下了：回放放完了全程。）", said


@pytest.mark.parametrize("cut_at", ["mid_json", "mid_character"])
def test_a_recording_killed_in_the_middle_of_a_line_replays_every_whole_line_before_it(tmp_path, cut_at):
    """helper 的审读报过：录的时候进程被 kill -9（正好在写一行），文件停在半行上，回放一行都不肯放（"最后一行没写完；
    重新 --record"）——前面付过钱的调用都是完整的行。现在那半行不算：开跑前说没录完、说是第几行只写了一半，
    录下的整行照样回放，放完停在半行那一次调用（退出码 2），标准输出和录制时那几次调用印的一样。"""
    from conftest import base_env, run_script_fresh
    script, args, _, lines = record_04(tmp_path / "full.jsonl", 20)   # 文件头、调用、结束行
    whole = 5                                                      # 前 5 次调用是整行，第 6 次写到一半
    half = lines[whole + 1]
    cut = len(half) // 2 if cut_at == "mid_json" else half.index("。".encode()) + 1   # 半个汉字
    f = tmp_path / "killed.jsonl"
    f.write_bytes(b"".join(lines[:whole + 1]) + half[:cut])
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    said = [x for x in rep.stderr.splitlines() if not x.startswith(("演示", f"（回放 {f}："))]   # 开跑前说是回放的那句另测
    assert rep.returncode == 2 and "Traceback" not in rep.stderr, rep.stderr
    assert said[0].startswith(f"（回放文件 {f} 没录完：最后一行（第 {whole + 2} 行）只写了一半"), said
    assert said[1].startswith(f"回放停在第 {whole + 1} 次 LLM 调用：{f} 只录了 {whole} 次调用、没录完（"), said
    assert len(said) == 2, said


@pytest.mark.quiet                                  # 量 Ctrl-C 停得多快：conftest 让它最先跑
@pytest.mark.parametrize("out", [1, 0], ids=["second_call_still_out", "first_call_still_out"])
def test_ctrl_c_keeps_every_reply_of_the_batch_in_flight_that_had_come_back(tmp_path, out):
    """讲师报过：对着付费的 API 录（--llm-concurrency 2），按 Ctrl-C 时同一批里已经回来的回复没进录制文件——钱付了，
    文件里没有。以前一批调用要全回来才按顺序写进文件。现在每次调用一回来就写（前面的都写下了的话；不然先留着），
    按 Ctrl-C 时留着的也写上。这里演示 2 的第一批是第 1、2 次调用，服务器一直不回答第 out + 1 次（按请求里的 seed 认），
    另一次回答了、客户端读完关了连接以后才按 Ctrl-C：那一次在文件里，是完整的一行，只写一次，没有密钥；没有结束行，
    回放开跑前说没录完，停在还没回来的那一次（退出码 2），不说"文件被改过"。Ctrl-C 照样一秒左右停下、退出码 130。"""
    import json
    import os
    import signal
    import subprocess
    import sys
    import threading
    from conftest import ROOT, base_env, run_script_fresh, stop_group
    script = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
    args = ["--budget", "20", "--seeds", "1"]
    f = tmp_path / "cut.jsonl"
    key = "sk-test-0123456789-never-print-me"
    held = threading.Event()                                        # 一直不回答的那个请求到了
    with StubServer(lambda n, text: "edit", hold=lambda body: body.get("seed") == out and not held.set(),
                    watch_close=True, slow_seconds=60) as s:
        p = subprocess.Popen([sys.executable, script, *args, "--llm", s.url, "--model", "stub", "--llm-concurrency", "2",
                              "--record", str(f)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**base_env(), "OPENAI_API_KEY": key}, start_new_session=True)
        try:
            back = held.wait(60) and s.wait_delivered(1, timeout=60)   # 一次在路上，另一次的回复客户端读完了
            t0 = time.monotonic()
            os.killpg(p.pid, signal.SIGINT)                         # 终端的 Ctrl-C 发给整个前台进程组
            _, err = p.communicate(timeout=10)
            took = time.monotonic() - t0
        finally:
            stop_group(p)
    assert back and s.posts() == 2, (back, s.posts())
    assert p.returncode == 130 and took < 2.0, (p.returncode, took, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "已中断。", err
    raw = f.read_bytes()
    assert raw.endswith(b"\n") and key.encode() not in raw
    lines = [json.loads(x) for x in raw.decode("utf-8").splitlines()]
    assert lines[0]["type"] == "header" and all(x["type"] == "call" for x in lines[1:])     # 没有结束行
    assert [(x["n"], x["error"]) for x in lines[1:]] == [(1 - out, None)], lines[1:]        # 回来的那一次，只一次
    assert "<<<<<<< SEARCH" in lines[1]["reply"]
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    said = [x for x in rep.stderr.splitlines() if not x.startswith(("演示", f"（回放 {f}："))]   # 开跑前说是回放的那句另测
    assert rep.returncode == 2 and "Traceback" not in rep.stderr, rep.stderr
    assert said[0].startswith(f"（回放文件 {f} 没录完："), said                              # 开跑前就说
    assert said[1].startswith(f"回放停在第 {out + 1} 次 LLM 调用：") and "没录完" in said[1], said
    assert "改过这个文件" not in said[1] and said[1].endswith("要放全程就重新 --record。") and len(said) == 2, said


@contextlib.contextmanager
def ctrl_c_while_the_first_reply_is_parsed(monkeypatch):
    """openai_llm 解析第一个读完的回复之前，先给主线程发 SIGINT，等测试 set 了 entered（主线程进了 Ctrl-C 的收拾）
    才接着解析。给出 (entered, reader)：reader[0] 是解析它的线程。期间 SIGINT 用 Python 默认的处理（conftest 的
    会记下 Ctrl-C、停下整个会话），出来时换回去。"""
    entered, reader = threading.Event(), []
    main, real_content = threading.main_thread().ident, openai_llm.client.read_reply

    def content_read_as_ctrl_c_lands(raw, content_type=""):
        if not reader:
            reader.append(threading.current_thread())
            signal.pthread_kill(main, signal.SIGINT)
            entered.wait(10)
        return real_content(raw, content_type)

    monkeypatch.setattr(openai_llm.client, "read_reply", content_read_as_ctrl_c_lands)   # client.py 解析回复时用的
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield entered, reader
    finally:
        signal.signal(signal.SIGINT, old)


def test_a_reply_still_being_read_when_ctrl_c_lands_is_recorded_too(tmp_path, monkeypatch):
    """Ctrl-C 落在一个回复读着的时候（状态行是 2xx，正文读完了、还在解析）：主线程最多再等 READ_GRACE 秒，它读完了就录下，
    然后才停。这里解析回复的那一步先给主线程发 SIGINT，等主线程进了 Ctrl-C 的收拾（_interrupted）才接着解析。"""
    import json
    f = tmp_path / "run.jsonl"
    with ctrl_c_while_the_first_reply_is_parsed(monkeypatch) as (entered, _):
        with StubServer(lambda n, text: "edit") as s:
            backend = openai_llm.OpenAILLM(s.url, "stub", timeout=10, record=str(f))
            cleanup = getattr(backend, "_interrupted", lambda: None)
            backend._interrupted = lambda: (entered.set(), cleanup())[1]
            try:
                backend.propose_many([prompt_for()])
                raise AssertionError("Ctrl-C 该从 propose_many 里抛出来")
            except KeyboardInterrupt:
                pass
            backend.close()
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
    assert [(x["type"], x.get("n"), x.get("error")) for x in lines] == [("header", None, None), ("call", 0, None)], lines
    assert "<<<<<<< SEARCH" in lines[1]["reply"]


def test_no_new_request_is_sent_after_ctrl_c(tmp_path, monkeypatch):
    """托管的 API 按请求收钱：Ctrl-C 以后不再发新的请求。一批 4 个提示、2 个同时在路上（02 就这样问），第 1 次一直
    不回答，第 2 次的回复正在读的时候按 Ctrl-C：主线程等它读完、录下的那一会儿，做完第 2 次的线程空了出来——
    它不再去问第 3、4 次（以前会：提议还没分完就接着发）。"""
    import threading
    held = threading.Event()
    with ctrl_c_while_the_first_reply_is_parsed(monkeypatch) as (entered, reader):   # reader：读第 2 次回复的线程
        with StubServer(lambda n, text: "edit", hold=lambda body: body.get("seed") == 0 and not held.set(),
                        slow_seconds=30) as s:
            backend = openai_llm.OpenAILLM(s.url, "stub", timeout=40, concurrency=2, record=str(tmp_path / "r.jsonl"))
            cleanup = backend._interrupted
            backend._interrupted = lambda: (entered.set(), cleanup())[1]
            try:
                backend.propose_many([prompt_for()] * 4)
                raise AssertionError("Ctrl-C 该从 propose_many 里抛出来")
            except KeyboardInterrupt:
                pass
            reader[0].join(10)                           # 空出来的那个线程做完了它还要做的
            assert held.wait(10) and not reader[0].is_alive()
            seeds = sorted(r[3]["seed"] for r in s.requests if r[3] is not None)
            backend.close()
    assert seeds == [0, 1], seeds


def test_no_new_request_is_sent_after_a_ctrl_c_that_lands_while_the_threads_are_starting(monkeypatch):
    """Thread.start() 在主线程里等新线程开起来（一次能被 Ctrl-C 打断的等待）：一批刚开始、线程还在一个个开的时候按
    Ctrl-C，KeyboardInterrupt 从 start() 里抛出来。以前那时还没进"Ctrl-C 以后不再开始新的请求"的 try：已经开起来的
    线程接着把这一批里还没问的提示一个个问完（托管的 API 按请求收钱）。这里第一个线程开起来以后 start() 抛
    KeyboardInterrupt（Ctrl-C 落在开第二个线程时），那个线程正在问的第 1 次由服务器压着，接住 Ctrl-C 以后才放它回来：
    之后它不再问第 2、3、4 次。"""
    import threading
    import types
    arrived, go = threading.Event(), threading.Event()
    started = []

    class CtrlCWhileStarting(threading.Thread):
        def start(self):
            super().start()
            if threading.current_thread() is not threading.main_thread():
                return                                   # 工作线程里开的（连接时查地址的线程）不算
            started.append(self)
            if len(started) == 1:
                arrived.wait(10)                         # 第一个线程的请求到了服务器
                raise KeyboardInterrupt                  # Ctrl-C 落在开第二个线程的时候

    with StubServer(lambda n, text: "edit" if not arrived.set() and go.wait(10) else "drop") as s:
        backend = openai_llm.OpenAILLM(s.url, "stub", timeout=20, concurrency=2)
        monkeypatch.setattr(openai_llm.backend, "threading", types.SimpleNamespace(**{**vars(threading),   # 开线程的是
                                                                                      "Thread": CtrlCWhileStarting}))  # backend.py
        try:
            backend.propose_many([prompt_for()] * 4)
            raise AssertionError("Ctrl-C 该从 propose_many 里抛出来")
        except KeyboardInterrupt:
            pass
        go.set()                                         # 第 1 次回来；以前那个线程接着问第 2、3、4 次
        for t in started:
            t.join(20)
        assert not any(t.is_alive() for t in started)
        seeds = sorted(r[3]["seed"] for r in s.requests if r[3] is not None)
        backend.close()
    assert seeds == [0], seeds


class _InterruptedWrite:
    """录制文件的替身：第 at 次 write 时先写进去 part 个字节（None：整段），再像 Ctrl-C 落在那里一样抛 KeyboardInterrupt。"""

    def __init__(self, f, at: int, part):
        self._f, self._at, self._part, self._writes = f, at, part, 0

    def write(self, data):
        self._writes += 1
        if self._writes != self._at:
            return self._f.write(data)
        self._f.write(data if self._part is None else data[:self._part])
        raise KeyboardInterrupt

    def __getattr__(self, name):
        return getattr(self._f, name)


def test_ctrl_c_in_the_middle_of_writing_a_line_leaves_no_half_line_and_nothing_twice(tmp_path):
    """录制文件的一行写到一半时 Ctrl-C（被打断的 write）：截回上一个整行；一整行都写进去以后才被打断：留着它。
    两种情形下再录同一次调用、再录下一次，文件里都是每次调用恰好一行完整的 JSON。"""
    import json
    from evolve.openai_llm import Call
    for part in (100, None):
        f = tmp_path / f"run{part}.jsonl"
        backend = openai_llm.OpenAILLM("http://127.0.0.1:9/v1", "stub", record=str(f))
        backend._record = _InterruptedWrite(backend._record, 1, part)
        first = Call(0, "提示", "回复" * 100, None, 0.1, None, None, None)
        try:
            backend._log(first)
            raise AssertionError("写的时候该被打断")
        except KeyboardInterrupt:
            pass
        backend._log(first)                            # 库的用法：接住了 Ctrl-C，再录一遍、接着录
        backend._log(Call(1, "提示", "又一个回复", None, 0.1, None, None, None))
        backend.close()
        raw = f.read_bytes()
        lines = [json.loads(x) for x in raw.decode("utf-8").splitlines()]
        assert raw.endswith(b"\n") and [x.get("n") for x in lines] == [None, 0, 1], (part, lines)

@pytest.mark.parametrize("part", [None, 100], ids=["after_a_whole_line", "in_the_middle_of_a_line"])
def test_a_second_ctrl_c_while_the_held_replies_are_written_keeps_writing_them(tmp_path, part):
    """第 1 次调用还在路上，第 2、3、4 次回来了、留着（文件里的调用按提议的顺序）。Ctrl-C 以后 _interrupted 把它们写在
    后面；写第一行时又按了一次 Ctrl-C（一整行写进去以后、或者写到一半）：以前剩下的几行就丢了（钱付了，文件里没有）。
    现在"再按一次"不打断写留着的回复：三次调用都在文件里，各一行、完整，写到一半的那行截回整行以后重写一遍。"""
    import json
    from evolve.openai_llm import Call
    f = tmp_path / "run.jsonl"
    backend = openai_llm.OpenAILLM("http://127.0.0.1:9/v1", "stub", record=str(f))
    for n in (1, 2, 3):
        backend._keep(Call(n, "提示", f"回复 {n}" * 50, None, 0.1, None, None, None))
    assert f.read_bytes().count(b"\n") == 1                        # 只有文件头：都在等第 1 次
    backend._record = _InterruptedWrite(backend._record, 1, part)   # 再按一次 Ctrl-C，落在写第一行的时候
    try:
        backend._interrupted()
    except KeyboardInterrupt:                                      # 调它的地方反正要把第一次 Ctrl-C 抛出去
        pass
    backend.close()
    raw = f.read_bytes()
    lines = [json.loads(x) for x in raw.decode("utf-8").splitlines()]
    assert raw.endswith(b"\n") and [x.get("n") for x in lines] == [None, 1, 2, 3], lines
    assert [x["reply"] for x in lines[1:]] == [f"回复 {n}" * 50 for n in (1, 2, 3)]



def test_replies_still_held_when_the_recording_is_closed_are_written_and_no_end_line(tmp_path):
    """Ctrl-C 连按两下：第二下可以落在 _interrupted 写下留着的回复之前（propose_many 接住第一下、还没调用它的时候，
    或者它在等做别的调用的线程写完一行的时候），脚本的 finally 接着就 close。以前留着的回复（第 1 次还在路上，
    第 2、3 次回来了）就这样丢了。现在 close 把它们写在后面；文件不算录完，之后 finish 也不写结束行。"""
    import json
    from evolve.openai_llm import Call
    f = tmp_path / "run.jsonl"
    backend = openai_llm.OpenAILLM("http://127.0.0.1:9/v1", "stub", record=str(f))
    for n in (1, 2):
        backend._keep(Call(n, "提示", f"回复 {n}", None, 0.1, None, None, None))
    backend.close()
    openai_llm.finish(backend)
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
    assert [(x["type"], x.get("n")) for x in lines] == [("header", None), ("call", 1), ("call", 2)], lines


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
    assert json.loads(lines[0])["version"] >= 2 and json.loads(lines[-1]) == {"type": "end", "calls": 6}
    assert len(lines) == 1 + 6 + 1 and said == []
    replay = openai_llm.from_arguments(command_line(None, model=None, llm_concurrency=None, llm_timeout=None,
                                                    replay=str(f)), "04 test", notify=said.append)
    assert [x.split("：")[0] for x in said] == [f"（回放 {f}"] and replay.complete is True   # 只说这是回放（另测）
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


# ---------------------------------------------------------------- 慢得超时的模型

def test_timeouts_say_to_raise_llm_timeout_and_the_suggested_value_gets_the_replies():
    """讲师在家对着 CPU 上的模型报过：每个请求都等满了 --llm-timeout，4 次“LLM 超时”以后运行最后那句（退出码 1）说
    "检查 LLM 服务器、地址、模型名和密钥以后再跑"——开跑前的检查已经问到了服务器、认得模型名和密钥，没用的是等得不够久。
    现在那句说超时是等满了 --llm-timeout、这次几秒、调大到多少（4 倍）；照它给的值再问同一个服务器，回复都拿到了。
    服务器每个回复要 1.5 秒：第一次的 1 秒一定等不到，建议的 4 秒比它多 2.5 秒（机器忙时一次请求多出的远比这少，
    见 stub_llm_server.SLACK）。"""
    import re
    said = []
    with StubServer(lambda n, text: "slow", slow_seconds=1.5) as s:
        backend = openai_llm.OpenAILLM(s.url, "stub", timeout=1.0)
        out = backend.propose_many([prompt_for()] * 4)
        assert [getattr(e, "kind", None) for e in out] == [openai_llm.TIMEOUT_KIND] * 4, out
        with pytest.raises(SystemExit) as stopped:
            openai_llm.finish(backend, tell=said.append)
        backend.close()
        assert stopped.value.code == 1 and said, said
        last = said[-1]
        assert "检查 LLM 服务器、地址、模型名和密钥" not in last, last
        assert "“LLM 超时”是请求等满了 --llm-timeout（这次 1 秒）还没收完回复" in last, last
        suggested = re.search(r"比如 --llm-timeout (\S+?)；", last)
        assert suggested and suggested[1] == "4", last
        again = openai_llm.OpenAILLM(s.url, "stub", timeout=float(suggested[1]))
        out = again.propose_many([prompt_for()] * 2)
        again.close()
    assert all(not isinstance(r, Exception) and r[0] == openai_llm.KIND for r in out), out
    # 夹着别的失败时也说；回放时不知道录的时候等了几秒，说重新录时调大；已经是最大的就不再说调大
    from evolve.openai_llm import Call, lost_llm
    mixed = [Call(i, "p", None, k, 0.1, None, None, None) for i, k in enumerate(["LLM 回 HTTP 500", "LLM 超时"] * 2)]
    said = lost_llm(mixed, timeout=300)
    assert "检查 LLM 服务器、地址、模型名和密钥以后再跑；“LLM 超时”是请求等满了 --llm-timeout（这次 300 秒）" in said, said
    assert "比如 --llm-timeout 1200；" in said, said
    assert "重新 --record 时调大 --llm-timeout" in lost_llm(mixed, replay=True)
    assert "比如" not in lost_llm(mixed, timeout=openai_llm.MAX_TIMEOUT)


def _timeouts_and_an_unfinished_reply(max_tokens, rerun):
    """接连 4 次失败：3 次超时（--llm-timeout 1）、1 次回复到了上限、最后一块没写完。finish 最后说的那句。"""
    from evolve.openai_llm import TIMEOUT_KIND, Call
    unfinished = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n"
    backend = openai_llm.OpenAILLM("http://127.0.0.1:9/v1", "m", timeout=1.0, max_tokens=max_tokens)
    backend.calls = [Call(0, "p", None, TIMEOUT_KIND, 1.0, None, None, None),
                     Call(1, "p", unfinished, None, 1.0, 10, 10, "m", cut_off="length"),
                     Call(2, "p", None, TIMEOUT_KIND, 1.0, None, None, None),
                     Call(3, "p", None, TIMEOUT_KIND, 1.0, None, None, None)]
    said = []
    with pytest.raises(SystemExit) as stopped:
        openai_llm.finish(backend, tell=said.append, rerun=rerun)
    backend.close()
    assert stopped.value.code == 1 and said, said
    return said[-1]


def test_a_timeout_streak_with_an_unfinished_reply_at_the_largest_limit_is_followed_by_the_command_it_promises():
    """审读报过：接连失败里有超时、也有到了 token 上限没写完的回复，而上限已经是 --llm-max-tokens 最大的（没有调高上限的
    命令）时，最后那句说"比如 --llm-timeout 4，照抄下面这条命令"，下面却没有命令（那句还接着说上限的事）。现在照说的
    跟着调大 --llm-timeout 的那条命令，说它的那一句放在最后。"""
    from evolve.openai_llm import MAX_LLM_TOKENS
    last = _timeouts_and_an_unfinished_reply(MAX_LLM_TOKENS, lambda option, value, also=(): f"    CMD {option} {value}")
    assert last.endswith("比如 --llm-timeout 4，照抄下面这条命令。）\n    CMD --llm-timeout 4"), last
    assert f"最大的 {MAX_LLM_TOKENS:,}：换一个想得少一些的模型；" in last, last      # 上限的事照样说，在命令的那句前面


def test_the_raised_limit_command_after_timeouts_and_an_unfinished_reply_also_raises_llm_timeout(monkeypatch):
    """审读报过：同样的接连失败、上限还能调高时，跟着的是调高上限的命令——里面照旧是 --llm-timeout 1：照抄它，4 次里
    3 次照样超时（那句话另外说了"比如 --llm-timeout 4"，README 说没用上 LLM 时跟着的命令换上了这个值）。现在那条
    命令里两样都换。"""
    import runner
    monkeypatch.setattr(runner, "_stderr_width", lambda: None)
    argv = [os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py"), "--llm", "http://127.0.0.1:9/v1", "--model", "m",
            "--llm-timeout", "1"]
    last = _timeouts_and_an_unfinished_reply(1024, lambda option, value, **kw: runner.rerun_command(option, value, argv, **kw))
    assert "比如 --llm-timeout 4；" in last and "加上 --llm-max-tokens 4096 再跑" in last, last
    assert last.endswith("照抄下面这条命令。）\n    python3 lecture14/04_alphaevolve_tiling.py --llm http://127.0.0.1:9/v1 "
                         "--model m --llm-timeout 4 --llm-max-tokens 4096"), last


@ahead(waits=True)                # 大半时间在等慢的回复：后台先跑
def timed_out_04():
    """04（预算 8、1 个种子）对着每个回复要 1.5 秒的桩、--llm-timeout 1 跑；再把最后那句话后面的命令照印出来的样子
    交给 shell、在仓库根目录跑（PATH 上的 python3 没有 numpy），服务器还是同一个：(不够的运行, 命令, 照抄的运行)。"""
    script = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
    with StubServer(lambda n, text: "slow", slow_seconds=1.5, max_requests=200) as s:
        short = run_script_fresh(script, "--budget", "8", "--seeds", "1", "--llm", s.url, "--model", "stub",
                                 "--llm-timeout", "1", env=base_env(), timeout=120)
        follow = "照抄下面这条命令。）\n"
        command = short.stderr.rsplit(follow, 1)[1].rstrip("\n") if follow in short.stderr else ""
        again = as_printed(command)
    return short, command, again


PREFETCH = [timed_out_04]


def test_a_run_that_timed_out_ends_with_a_command_whose_longer_timeout_gets_the_replies():
    """审读报过：接连超时、没用上 LLM 时，最后那句只说"比如 --llm-timeout 4"，不像调高 token 上限那样跟着一条照抄就能
    跑的命令。现在跟着：这次的命令把 --llm-timeout 换成 4 倍；照抄它，同一个慢服务器的回复都拿到了（退出码 0）。"""
    short, command, again = timed_out_04()
    assert short.returncode == 1 and "比如 --llm-timeout 4，照抄下面这条命令。）" in short.stderr, short.stderr[-2000:]
    assert command.startswith("    python3 lecture14/04_alphaevolve_tiling.py ") and "--llm-timeout 4" in command, command
    assert again.returncode == 0 and "LLM 超时" not in again.stderr, again.stderr[-2000:]


# ---------------------------------------------------------------- 想得多的模型的草稿

DRAFT = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 4:\n>>>>>>> REPLACE\n"      # 草稿里试过又放弃的
ANSWER = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"     # 真正的回答


def child(reply_text):
    """回复走进化循环的那条路（去掉草稿、读 SEARCH/REPLACE、打到专家上）得到的子程序；用不上的回复是失败的种类。"""
    from evolve.openai_llm import Call
    from evolve.openai_llm.calls import outcome
    from evolve.program import apply_diff, parse_diff
    from evolve.source import parse
    r = outcome(Call(0, "p", reply_text, None, 0.0, None, None, None))
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


# ---------------------------------------------------------------- 用别的参数、别的脚本回放

def test_replay_with_other_settings_prints_the_command_that_replays_it(tmp_path):
    """讲师报过：回放时参数和录制时不一样（忘了 --budget，拿 04 放 02 录的文件），那句话只说"是用“02 --seed 0
    --after 100”录的……回放要用录制时的脚本和参数"：02 是哪个脚本、命令怎么写要自己拼；手改文件头时多敲了一个空格，
    两串参数看着一模一样也不让回放。现在那句话后面另起一行是照抄就能跑的命令（脚本、--replay 文件、录制时的参数），
    参数只比一个个词。"""
    import json
    import shlex
    import subprocess
    import sys
    from conftest import ROOT, base_env, run_script_fresh
    f = tmp_path / "录的 run.jsonl"
    script, args, rec, lines = record_04(f, 12)
    gpu = json.loads(lines[0])["gpu"]                              # 整个测试换到别的 GPU 上跑时（TESTS_GPU）命令带 --gpu
    extra = [] if gpu == "h100" else ["--gpu", gpu]
    for other in (script, script.replace("04_alphaevolve_tiling", "05_ablations"),
                  script.replace("04_alphaevolve_tiling", "02_llm_proposal")):
        p = run_script_fresh(other, "--replay", str(f), env=base_env(), timeout=120)
        said = p.stderr.strip().splitlines()
        assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
        assert said[0].startswith(f"回放文件 {f} 是用“04 --seed 0 --budget 12 --seeds 1”录的，这次是“"), said
        assert said[0].endswith("回放要用录制时的脚本和参数，照抄下面这条命令：") and len(said) == 2, said
        assert shlex.split(said[1]) == ["python3", "lecture14/04_alphaevolve_tiling.py", "--replay", str(f),
                                        "--seed", "0", "--budget", "12", "--seeds", "1", *extra], said
    words = shlex.split(said[1])                                   # 照抄：回放和录制时的标准输出逐字节相同
    again = subprocess.run([sys.executable, *words[1:]], cwd=ROOT, env=base_env(), capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and again.stdout == rec.stdout, again.stderr
    import os                                                      # 在别的目录里运行、文件名是相对的：命令照样在
    here = tmp_path / "here"                                       # 仓库根目录照抄就能跑（文件名从根目录写）
    here.mkdir()
    (here / "run.jsonl").write_bytes(b"".join(lines))
    p = subprocess.run([sys.executable, script, "--replay", "run.jsonl"], cwd=here, env=base_env(), capture_output=True,
                       text=True, timeout=120)
    words = shlex.split(p.stderr.strip().splitlines()[-1])
    assert p.returncode == 2 and words[3] == os.path.relpath(here / "run.jsonl", ROOT), p.stderr
    again = subprocess.run([sys.executable, *words[1:]], cwd=ROOT, env=base_env(), capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and again.stdout == rec.stdout, again.stderr
    spaced = tmp_path / "spaced.jsonl"                             # 文件头里多了空格：参数一样，照样回放
    spaced.write_bytes(lines[0].replace(b'"04 --seed 0 --budget 12', b'"04  --seed 0 --budget 12 ') + b"".join(lines[1:]))
    p = run_script_fresh(script, *args, "--replay", str(spaced), env=base_env(), timeout=120)
    assert p.returncode == 0 and p.stdout == rec.stdout, p.stderr


def test_a_replay_says_first_that_it_is_a_replay_of_which_model_recorded_when(tmp_path):
    """讲师报过：课上回放时标准输出和录制时逐字节相同（"LLM：stub……每个提议问它一次"），标准错误上也一声不吭：看不出
    这是回放、录的是哪个模型、什么时候录的；录制文件里也没记时间。现在文件头记下录制的时间（UTC，到分钟），回放开跑前
    在标准错误上说一句：哪个文件、什么时候对着哪个模型（服务器报的模型名和 --model 不一样时也说：桩服务器说自己不是
    语言模型；哪个地址）录的、照录下的回答重放、不联网；早先没记时间的文件说没记。标准输出照旧逐字节相同。"""
    import json
    import re
    from conftest import base_env, run_script_fresh
    f = tmp_path / "run.jsonl"
    t0 = time.gmtime(time.time() - 60)
    script, args, rec, lines = record_04(f, 12)
    header = json.loads(lines[0])
    when = header["recorded"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", when) and time.strftime("%Y-%m-%d %H:%M UTC", t0) <= when, header
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr
    served = "服务器报的模型名是 test-stub (scripted replies, not a language model)"     # 桩服务器报的：不是语言模型
    assert rep.stderr.splitlines()[0] == (f"（回放 {f}：{when} 对着 stub（{served}，{header['base_url']}）录下的运行，"
                                          "照录下的回答重放，不联网、不问模型。）"), rep.stderr
    old = tmp_path / "old.jsonl"                                   # 早先录的（文件头里没有 recorded）
    del header["recorded"]
    old.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    rep = run_script_fresh(script, *args, "--replay", str(old), env=base_env(), timeout=120)
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr
    assert rep.stderr.splitlines()[0] == (f"（回放 {old}：对着 stub（{served}，{header['base_url']}）录下的运行（文件里没记"
                                          "什么时候录的），照录下的回答重放，不联网、不问模型。）"), rep.stderr


def test_a_recording_saved_as_gbk_is_refused_before_the_run_with_the_command_that_converts_it(tmp_path):
    """讲师报过：在 Windows 上用记事本打开录制文件、改了一个字，存成了 ANSI（GBK）。文件头是 ASCII，照样读得懂，回放开跑、
    演示 1 在学生面前印完了，才说"第 2 行不是 --record 写的格式（不是 UTF-8 的文字）"，没说为什么、怎么办。现在开跑前就说：
    哪一行、看起来是 GBK、下一行是转回 UTF-8 的命令（标准输出什么也没有）；照抄那条命令以后回放和录制时逐字节相同。"""
    import shutil
    import subprocess
    from conftest import base_env, run_script_fresh
    script, args, rec, lines = record_04(tmp_path / "run.jsonl", 12)
    f = tmp_path / "课上 用.jsonl"
    f.write_bytes(b"".join(lines).decode("utf-8").replace("\n", "\r\n").encode("gbk"))
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    said = rep.stderr.strip().splitlines()
    assert rep.returncode == 2 and rep.stdout == "" and "Traceback" not in rep.stderr, rep.stderr
    assert said[0].startswith(f"{f}:2: 这一行不是 UTF-8，看起来是 GBK（") and len(said) == 2, said
    assert said[1].startswith("    iconv -f GBK -t UTF-8 "), said
    if shutil.which("iconv") is None:
        pytest.skip("这台机器没有 iconv：照抄那条命令的那一半测不了")
    assert subprocess.run(["bash", "-c", said[1]], timeout=60).returncode == 0
    rep = run_script_fresh(script, *args, "--replay", str(f), env=base_env(), timeout=120)
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr
