"""
content 是 null 的回复（讲师在家对着自己的服务器试过）：模型调了工具（tool_calls）或者拒绝了（refusal 里有话）。
以前两种都被当成空回复：02 印"（空的）"、记作"没有 SEARCH/REPLACE 块"，看不出服务器其实回了什么。现在工具调用是
一次有名字的调用失败（TOOL_CALLS），拒绝的话照原样当回复（印得出来，仍是"没有 SEARCH/REPLACE 块"）。
服务器只听 127.0.0.1，每个测试最多回答几个请求，with 块结束就关。
"""

import json

import pytest

from evolve import EXPERT, render
from evolve.diff import NO_BLOCK
from evolve.mock_llm import Prompt
from evolve.openai_llm import TOOL_CALLS, LLMError, OpenAILLM
from stub_llm_server import CannedServer

MESSAGES = {
    "tool_calls": {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "edit", "arguments": "{}"}}]},
    "function_call": {"role": "assistant", "content": None, "function_call": {"name": "edit", "arguments": "{}"}},
    "refusal": {"role": "assistant", "content": None, "refusal": "I can't help with kernels."},
    "null": {"role": "assistant", "content": None},
}


def one_message(message, max_requests=5):
    """127.0.0.1 上每个请求都回 message 这一条回复的服务器（stub_llm_server.CannedServer）。"""
    body = json.dumps({"object": "chat.completion", "model": "t",
                       "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
    return CannedServer(200, body, max_requests=max_requests)


def ask(url):
    llm = OpenAILLM(url, "t", timeout=10, retries=0, backoff=0.01, seed=0)
    prompt = Prompt(render(EXPERT), EXPERT, 1.0, (), ())
    with pytest.raises(LLMError) as e:
        llm.propose(prompt)
    return e.value, llm.ledger(), llm.calls[-1]


@pytest.mark.parametrize("shape", ["tool_calls", "function_call"])
def test_a_tool_call_is_a_named_call_failure_not_an_empty_reply(shape):
    with one_message(MESSAGES[shape]) as s:
        e, book, call = ask(s.url)
    assert e.kind == TOOL_CALLS and book["failed"] == {TOOL_CALLS: 1} and s.seen == 1 and call.reply is None


def test_a_refusal_keeps_the_models_words():
    with one_message(MESSAGES["refusal"]) as s:
        e, book, call = ask(s.url)
    assert e.kind == NO_BLOCK and book["failed"] == {} and s.seen == 1
    assert call.reply == "I can't help with kernels."      # 录下的、02 印出来的是模型的原话，不是"（空的）"


def test_plain_null_content_is_still_an_empty_reply():
    with one_message(MESSAGES["null"]) as s:
        e, book, call = ask(s.url)
    assert e.kind == NO_BLOCK and book["failed"] == {} and call.reply == ""
