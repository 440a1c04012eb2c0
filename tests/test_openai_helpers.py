"""openai_llm 的小帮手，在边上测（只用公开的行为，不起服务器）：Retry-After 是秒数、将来的日期、过去的日期（时钟差）、
读不懂的东西；密钥从多长开始抹（正好在那个长度上和短一个字符）；成本账的加法（失败按种类数、token 部分缺失、
中位数）；地址里的用户名、密码和查询串不留下。"""

import email.utils
import time

import pytest

from evolve.openai_llm import Call, OpenAILLM, clean_url, ledger
from evolve.openai_llm.reply import retry_after


# ---------------------------------------------------------------- Retry-After

@pytest.mark.parametrize("value,seconds", [("0", 0.0), ("7", 7.0), (" 12 ", 12.0), ("1.5", 1.5), ("60", 60.0)])
def test_retry_after_seconds(value, seconds):
    assert retry_after(value) == seconds


def test_retry_after_negative_seconds_is_no_wait():
    assert retry_after("-5") == 0.0


def test_retry_after_future_date_is_the_time_until_it():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27.0 <= retry_after(when) <= 31.0


@pytest.mark.parametrize("ago", [1, 3600])
def test_retry_after_past_date_is_zero_not_negative(ago):
    # 服务器的钟比我们慢（RFC 9110 允许给日期）：日期已经过去，等 0 秒；负数交给 time.sleep 会抛 ValueError
    when = email.utils.formatdate(time.time() - ago, usegmt=True)
    wait = retry_after(when)
    assert wait == 0.0
    time.sleep(wait)


@pytest.mark.parametrize("junk", [None, "", "soon", "Mon, 99 Foo 2026", "1,5", "0x10"])
def test_retry_after_junk_is_none(junk):
    assert retry_after(junk) is None


# ---------------------------------------------------------------- 抹密钥

@pytest.mark.parametrize("key,hidden", [("k" * 7, False), ("k" * 8, True), ("sk-" + "x" * 40, True), ("", False)])
def test_key_is_redacted_from_eight_characters_on(key, hidden):
    backend = OpenAILLM("http://127.0.0.1:9/v1", "m", api_key=key)
    text = f"error: bad key {key}!" if key else "error"
    out = backend._redact(text)
    if hidden:
        assert key not in out and out == "error: bad key ***!"
    else:
        assert out == text                         # 短的占位符（EMPTY 之类）不是秘密，抹了会把回复抹坏


def test_repr_never_shows_the_key():
    key = "sk-secret-0123456789"
    backend = OpenAILLM("http://127.0.0.1:9/v1?token=abc&pw=1", "m", api_key=key)
    assert key not in repr(backend) and "pw" not in repr(backend) and "token" not in repr(backend)


@pytest.mark.parametrize("url,clean", [("http://user:pw@127.0.0.1:8080/v1/?k=1#x", "http://127.0.0.1:8080/v1"),
                                       ("https://api.example.com/v1", "https://api.example.com/v1"),
                                       ("http://[::1]:11434/v1/", "http://[::1]:11434/v1"),
                                       # 路径里的“;参数”也可能是密钥（讲师的复查报过：印出来、进了日志）
                                       ("http://127.0.0.1:8080/v1;key=sk-abc/", "http://127.0.0.1:8080/v1")])
def test_clean_url_keeps_only_scheme_host_port_path(url, clean):
    assert clean_url(url) == clean


# ---------------------------------------------------------------- 成本账

def call(n, error=None, latency=1.0, pt=None, ct=None):
    return Call(n, "p", None if error else "r", error, latency, pt, ct, "m")


def test_ledger_sums():
    calls = [call(0, latency=1.0, pt=10, ct=3), call(1, error="LLM 超时", latency=5.0),
             call(2, error="LLM 回 HTTP 500", latency=0.5), call(3, error="LLM 超时", latency=2.0, pt=7),
             call(4, latency=0.25, pt=0, ct=4)]
    book = ledger(calls)
    assert book["calls"] == 5
    assert book["failed"] == {"LLM 超时": 2, "LLM 回 HTTP 500": 1}
    assert book["prompt_tokens"] == 17 and book["completion_tokens"] == 7          # 没报的不算，报 0 的算 0
    assert book["latency_total"] == pytest.approx(8.75)
    assert book["latency_median"] == 1.0


def test_ledger_median_of_an_even_count_and_empty():
    assert ledger([call(0, latency=1.0), call(1, latency=4.0)])["latency_median"] == 2.5
    empty = ledger([])
    assert empty == dict(calls=0, answered=0, not_sent=0, failed={}, requests=0, prompt_tokens=None, completion_tokens=None, prompt_reported=0,
                         completion_reported=0, latency_total=0, latency_median=0.0,
                         cut_off=0, cut_unusable=0, cut_limits=[], cut_top=0, cut_reasons=[])


def test_ledger_does_not_count_proposals_that_were_never_sent():
    from evolve.openai_llm import GAVE_UP
    book = ledger([call(0, latency=1.0, pt=5), call(1, error="LLM 超时", latency=3.0),
                   call(2, error=GAVE_UP, latency=0.0), call(3, error=GAVE_UP, latency=0.0)])
    assert book["calls"] == 2 and book["not_sent"] == 2 and book["failed"] == {"LLM 超时": 1, GAVE_UP: 2}
    assert book["latency_median"] == 2.0 and book["latency_total"] == 4.0 and book["prompt_tokens"] == 5


def test_token_counts_say_how_many_calls_reported_them():
    """讲师报过：10 次调用里只有 5 次报了 token 数，04 印的"输入 5,000 个 token"看着像全部；服务器只报输入时，
    表里说输出"服务器没报"，句子却说"输出 0 个"。"""
    from conftest import load_script
    m = load_script("lecture14/04_alphaevolve_tiling.py", "tiling_04_tokens")
    half = ledger([call(k, pt=1000 if k % 2 else None) for k in range(10)])
    assert half["prompt_reported"] == 5 and half["completion_reported"] == 0
    assert m.token_text(half, "prompt") == "5,000 个 token（拿到回复的 10 次调用里只有 5 次报了）"
    assert m.token_text(half, "completion") == "服务器没报"
    said = m.llm_cost_observation(half, dict(failed={}), type("E", (), {"bench_runs": 0})(), 0, 10)
    assert "输入 5,000 个 token（拿到回复的 10 次调用里只有 5 次报了）、输出的服务器没报" in said and "输出 0 个" not in said
    failing = ledger([call(k, pt=1000) for k in range(5)] + [call(k, error="LLM 回 HTTP 400") for k in range(5, 9)])
    assert m.token_text(failing, "prompt") == "5,000 个 token"       # 失败的 4 次没有回复，不算"没报"（讲师报过）
    whole = ledger([call(k, pt=10, ct=2) for k in range(3)])
    assert m.token_text(whole, "prompt") == "30 个 token" and m.token_text(whole, "completion") == "6 个 token"


def test_ledger_tokens_none_only_when_no_call_reported_them():
    assert ledger([call(0), call(1)])["prompt_tokens"] is None
    assert ledger([call(0), call(1, pt=0)])["prompt_tokens"] == 0
    assert ledger([call(0, ct=2), call(1)])["completion_tokens"] == 2


def test_backend_ledger_slices_by_call_number():
    backend = OpenAILLM("http://127.0.0.1:9/v1", "m", api_key="")
    backend.calls = [call(k, latency=float(k), pt=k) for k in range(5)]
    assert backend.ledger(1, 3)["calls"] == 2 and backend.ledger(1, 3)["prompt_tokens"] == 3
    assert backend.ledger(3)["latency_total"] == 7.0


def _calls(*kinds):
    """按提议的顺序的调用："ok" 是拿到回复的，别的是失败的种类。"""
    from evolve.openai_llm import Call
    return [Call(i, "p", "r" if k == "ok" else None, None if k == "ok" else k, 0.1, None, None, None)
            for i, k in enumerate(kinds)]


def test_lost_llm_reads_only_the_calls_in_proposal_order():
    """讲师报过：并发时录制按回复到达的顺序数"接连失败"（退出码 0），回放按提议的顺序数（退出码 1）；回放时说
    "检查服务器以后再跑"；--budget 1 两次调用都失败照样退出码 0；最后一次是 429 就只说限流。现在录制和回放都只看
    按提议的顺序记下的调用。"""
    from evolve.openai_llm import GAVE_UP, GAVE_UP_SAID, lost_llm
    e500, e429 = "LLM 回 HTTP 500", "LLM 回 HTTP 429"
    assert lost_llm(_calls("ok", e500, e500, e500, e500, "ok")) is None              # 中间接连失败、后来又好了
    assert lost_llm(_calls("ok", e500, "ok", e500)) is None
    assert lost_llm(_calls()) is None
    tail = lost_llm(_calls("ok", e500, e500, e500, e500))
    assert tail.startswith(GAVE_UP_SAID) and "最后接连 4 次调用都失败了（LLM 回 HTTP 500 ×4）" in tail
    both = lost_llm(_calls(e500, e500))                                              # --budget 1：两次都失败
    assert "这次的 2 次调用全都失败了" in both and "检查 LLM 服务器" in both
    gave = lost_llm(_calls("ok", e500, e500, e500, e429, GAVE_UP, GAVE_UP))
    assert "之后 2 个提议没再问它" in gave and "限流" not in gave                     # 不全是 429：不只说限流
    assert "限流" in lost_llm(_calls("ok", e429, e429, e429, e429, GAVE_UP))
    replayed = lost_llm(_calls(e429, e429, e429, e429), replay=True)
    assert "重新 --record" in replayed and "等一会儿再跑" not in replayed
    # 审读报过：并发时按提议的顺序，放弃之前的最后一次可能是成功的——不说"（最后几次：没有发出去）"
    odd = lost_llm(_calls("ok", "LLM 超时", "ok", GAVE_UP, GAVE_UP))
    assert "之后 2 个提议没再问它" in odd and "最后几次" not in odd and "没有发出去" not in odd
    from evolve.openai_llm import MOCK_BUG
    bug = lost_llm(_calls("ok", MOCK_BUG, GAVE_UP))
    assert "MockLLM 服务器出了程序错" in bug and "接连失败" not in bug
