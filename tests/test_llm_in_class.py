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
