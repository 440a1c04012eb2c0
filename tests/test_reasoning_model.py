"""
OpenAI 的推理模型（o 系列、gpt-5 一族）：它们不收 max_tokens（要 max_completion_tokens）、只收默认的 temperature（1），
对本机服务器那组参数的每个请求都回 HTTP 400。helper 的复查照 OpenAI 的回答写了假服务器：付费的讲师选了这样的模型，
整个运行一个提议也用不上。现在客户端认出这样的 400（evolve.openai_llm.rejected_parameter），换成推理模型的参数
（max_completion_tokens，不发 temperature）、这次调用重发一次，以后的调用都用新参数；几个调用同时被拒只换一次；
换了以后再被拒是一次普通的失败（不来回换）。本机的服务器照旧收到 max_tokens 和 temperature。录制文件的调用行
写明发的是哪组参数、重发过没有，回放逐字节相同；早先（第 2 版）录的文件照样回放。
假服务器是 tests/stub_llm_server.py 的桩（reject=reasoning_model：照 OpenAI 的原话回 400），只听 127.0.0.1，
每个测试最多回答有数的几个请求。
"""

import json
import os
import threading

import pytest
from conftest import ahead, base_env, run_script_fresh, session_dir
from stub_llm_server import MAX_TOKENS_REFUSED, STUB_MODEL, StubServer, openai_error, reasoning_model

from evolve import EXPERT, render
from evolve import openai_llm
from evolve.mock_llm import Prompt
from evolve.openai_llm import GAVE_UP, KIND, REASONING_PARAMS, OpenAILLM, rejected_parameter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
KEY = "sk-test-0123456789-never-print-me"
FAST = dict(timeout=10, retries=2, backoff=0.01, seed=0)
SWITCHED = "当它是推理模型：以后的请求改发 max_completion_tokens=25,000"
TEMPERATURE_REFUSED = ("Unsupported value: 'temperature' does not support 0.7 with this model. "
                       "Only the default (1) value is supported.")


def prompt_for(note=""):
    return Prompt(render(EXPERT) + note, EXPERT, 1.0, (), ())


def llm(url, said, **kw):
    return OpenAILLM(url, "gpt-5-mini", notify=said.append, **{**FAST, **kw})


def sent(body):
    """一个请求发的采样参数（没有 messages、model、seed）。"""
    return {k: v for k, v in body.items() if k not in ("messages", "model", "seed")}


def posts(server):
    return [r[3] for r in server.requests if r[3] is not None]


LOCAL = dict(temperature=openai_llm.TEMPERATURE, max_tokens=openai_llm.MAX_TOKENS)


# ---------------------------------------------------------------- 认得出的 400

@pytest.mark.parametrize("status, body, param", [
    (400, openai_error(MAX_TOKENS_REFUSED, "max_tokens", "unsupported_parameter"), "max_tokens"),   # OpenAI 的原话
    (400, openai_error(TEMPERATURE_REFUSED, "temperature", "unsupported_value"), "temperature"),
    (400, {"error": {"message": MAX_TOKENS_REFUSED, "code": "invalid_request_body"}}, "max_tokens"),  # 转手的代理丢了 param
    (400, openai_error("Unsupported parameter: 'temperature' is not supported with this model.", None, None), "temperature"),
    (400, openai_error("whatever", "max_tokens", "unsupported_parameter"), "max_tokens"),
    (400, openai_error("Unsupported parameter: 'seed' is not supported with this model.", "seed",   # 别的参数：不换
                       "unsupported_parameter"), None),
    (400, openai_error("max_tokens is too large: 999999", "max_tokens", "invalid_value"), None),      # 太大不是"不支持"
    (400, openai_error("bad request", None, None), None),
    (400, {"error": "Unsupported parameter: 'max_tokens'"}, None),                                   # 不是 OpenAI 的写法
    (422, openai_error(MAX_TOKENS_REFUSED, "max_tokens", "unsupported_parameter"), None),            # 只认 400
    (500, openai_error(MAX_TOKENS_REFUSED, "max_tokens", "unsupported_parameter"), None),
])
def test_only_the_reasoning_models_400_about_max_tokens_or_temperature_switches(status, body, param):
    assert rejected_parameter(status, json.dumps(body).encode()) == param


def test_a_body_that_is_not_json_does_not_switch():
    assert rejected_parameter(400, b"<html><title>Unsupported parameter: 'max_tokens'</title></html>") is None
    assert rejected_parameter(400, b"[" * 100_000) is None


# ---------------------------------------------------------------- 一个后端

@pytest.mark.parametrize("refuses, param", [
    (reasoning_model, "max_tokens"),                                                   # OpenAI：先说 max_tokens
    (lambda body: reasoning_model({k: v for k, v in body.items() if k != "max_tokens"}), "temperature"),   # 只挑 temperature
])
def test_a_reasoning_model_is_switched_to_once_and_every_later_call_uses_it(refuses, param):
    # 第一次调用被拒一次、换参数重发，拿到了修改；以后的调用直接发新参数；成本账里多一个请求，没有失败；
    # 标准错误上恰好一句，说模型名、换了什么、服务器的原话（回显的密钥抹掉、ESC 转义）
    said = []

    def refuse_with_key(body):
        refusal = refuses(body)
        if refusal is not None:
            refusal["error"]["message"] += f" (key {KEY})\x1b[2J"
        return refusal

    with StubServer(lambda n, text: "edit", reject=refuse_with_key, max_requests=10) as s:
        backend = llm(s.url, said, api_key=KEY, concurrency=1)
        out = backend.propose_many([prompt_for(str(i)) for i in range(3)])
        backend.close()
    assert [r[0] for r in out] == [KIND] * 3, out
    bodies = posts(s)
    assert [sent(b) for b in bodies] == [LOCAL] + [REASONING_PARAMS] * 3      # 被拒的那个发的是本机服务器那组
    assert [c.requests for c in backend.calls] == [2, 1, 1]
    assert [c.resent for c in backend.calls] == [param, None, None]
    assert [c.params for c in backend.calls] == [REASONING_PARAMS] * 3
    book = backend.ledger()
    assert book["calls"] == 3 and book["requests"] == 4 and book["failed"] == {} and book["answered"] == 3
    switched = [x for x in said if SWITCHED in x]
    assert len(switched) == 1 == len(said), said
    assert switched[0].startswith(f"（LLM：gpt-5-mini 不收 {param}（HTTP 400，服务器说：“Unsupported "), switched[0]
    assert "(key ***)\\x1b[2J" in switched[0] and KEY not in switched[0] and "\x1b" not in switched[0]
    assert "不发 max_tokens 和 temperature" in switched[0]


def test_calls_refused_at_the_same_time_switch_once():
    # 两个调用同时在路上、都带着 max_tokens：服务器等两个都到了才一起拒（栅栏），两个都换参数重发、都拿到修改；
    # 只换一次、只说一次
    gate = threading.Barrier(2, timeout=10)

    def refuse_together(body):
        refusal = reasoning_model(body)
        if refusal is not None:
            gate.wait()
        return refusal

    said = []
    with StubServer(lambda n, text: "edit", reject=refuse_together, max_requests=8) as s:
        backend = llm(s.url, said, concurrency=2)
        out = backend.propose_many([prompt_for("a"), prompt_for("b")])
        backend.close()
    assert [r[0] for r in out] == [KIND, KIND], out
    assert [c.requests for c in backend.calls] == [2, 2] and [c.resent for c in backend.calls] == ["max_tokens"] * 2
    assert sorted(map(json.dumps, map(sent, posts(s)))) == sorted(map(json.dumps, [LOCAL] * 2 + [REASONING_PARAMS] * 2))
    assert sum(SWITCHED in x for x in said) == 1 == len(said), said
    assert backend.ledger()["requests"] == 4 and backend.ledger()["failed"] == {}


def test_a_server_refusing_the_new_parameter_too_is_an_ordinary_failure_with_its_words():
    # 换了以后还被拒（这里：它也不收 max_completion_tokens）：不再换回去、不再重发，是一次普通的"LLM 回 HTTP 400"；
    # 接连 4 次就不再调用，放弃的那句和最后退出码 1 的那句带着服务器的原话。一共 5 个请求（第一次调用 2 个）
    said = []
    other = ("Unsupported parameter: 'max_completion_tokens' is not supported with this model. "
             "Use 'max_tokens' instead.")

    def refuse_both(body):
        if "max_completion_tokens" in body:
            return openai_error(other, "max_completion_tokens", "unsupported_parameter")
        return reasoning_model(body)

    with StubServer(lambda n, text: "edit", reject=refuse_both, max_requests=8) as s:
        backend = llm(s.url, said, concurrency=1)
        out = backend.propose_many([prompt_for(str(i)) for i in range(5)])
        backend.close()
    assert [e.kind for e in out] == ["LLM 回 HTTP 400"] * 4 + [GAVE_UP]
    assert [c.requests for c in backend.calls] == [2, 1, 1, 1, 0] and len(posts(s)) == 5
    assert [sent(b) for b in posts(s)] == [LOCAL] + [REASONING_PARAMS] * 4
    assert sum(SWITCHED in x for x in said) == 1
    gave_up = [x for x in said if "接连 4 次调用失败" in x]
    assert len(gave_up) == 1 and f"服务器说：“{other}”" in gave_up[0], said
    with pytest.raises(SystemExit) as e:
        openai_llm.finish(backend, tell=said.append)
    assert e.value.code == 1 and f"服务器说：“{other}”" in said[-1], said[-1]


@pytest.mark.parametrize("refusal, names", [
    ({"error": {"param": "max_completion_tokens", "code": "unsupported_parameter", "message": ""}},   # 代理只转来 param、code
     "服务器说不收参数 max_completion_tokens"),
    ({"error": {"param": "max_completion_tokens", "code": "unsupported_parameter", "message": "bad request"}},
     "服务器说：“bad request”，不收参数 max_completion_tokens"),
    ({"error": {"param": f"\x1b[2J{KEY}" + "p" * 300, "code": "unsupported_parameter"}},   # 参数名是服务器写的：抹、转义、截
     "服务器说不收参数 \\x1b[2J***pppp")])
def test_a_refusal_that_names_the_parameter_only_in_its_fields_still_names_it(refusal, names):
    # helper 报过：换了参数以后服务器还不收（max_completion_tokens），转手的代理只留下 param、code（message 是空的）：
    # 放弃的那句和最后退出码 1 的那句只说"LLM 回 HTTP 400"，不说是哪个参数。现在说
    said = []

    def refuse_both(body):
        return json.loads(json.dumps(refusal)) if "max_completion_tokens" in body else reasoning_model(body)

    with StubServer(lambda n, text: "edit", reject=refuse_both, max_requests=8) as s:
        backend = llm(s.url, said, concurrency=1, api_key=KEY)
        out = backend.propose_many([prompt_for(str(i)) for i in range(5)])
        backend.close()
    assert [e.kind for e in out] == ["LLM 回 HTTP 400"] * 4 + [GAVE_UP]
    gave_up = [x for x in said if "接连 4 次调用失败" in x]
    assert len(gave_up) == 1 and names in gave_up[0], said
    with pytest.raises(SystemExit) as e:
        openai_llm.finish(backend, tell=said.append)
    assert e.value.code == 1 and names in said[-1], said[-1]
    assert KEY not in "".join(said) and "\x1b" not in "".join(said)
    assert ("…（共 " in said[-1]) == ("ppp" in names)                        # 截短了：一句话，不是几百个字符


def test_a_server_that_keeps_naming_max_tokens_after_the_switch_is_not_asked_again_and_again():
    # 不管发什么都说 max_tokens 不支持的服务器：第一次调用换参数重发一次，之后是普通的失败，不来回换
    said = []
    with StubServer(lambda n, text: "edit", max_requests=8,
                    reject=lambda body: openai_error(MAX_TOKENS_REFUSED, "max_tokens", "unsupported_parameter")) as s:
        backend = llm(s.url, said, concurrency=1, retries=3)
        out = backend.propose_many([prompt_for(str(i)) for i in range(2)])
        backend.close()
    assert [e.kind for e in out] == ["LLM 回 HTTP 400"] * 2
    assert [c.requests for c in backend.calls] == [2, 1] and len(posts(s)) == 3


def test_local_servers_still_get_max_tokens_and_temperature_and_other_400s_do_not_switch():
    # 本机的服务器（ollama、llama.cpp、vLLM）：每个请求都是 temperature、max_tokens；普通的 400（"bad request"、
    # 说别的参数不支持）是一次失败，不换参数、不重发
    def refuse_seed_once(body):
        if body["seed"] == 1:
            return openai_error("Unsupported parameter: 'seed' is not supported with this model.", "seed",
                                "unsupported_parameter")
        return None

    said = []
    with StubServer(lambda n, text: ["edit", "edit", "http400", "edit"][min(n, 3)], reject=refuse_seed_once,
                    max_requests=8) as s:
        backend = llm(s.url, said, concurrency=1)
        out = backend.propose_many([prompt_for(str(i)) for i in range(4)])
        backend.close()
    assert [r[0] if isinstance(r, tuple) else r.kind for r in out] == [KIND, "LLM 回 HTTP 400", "LLM 回 HTTP 400", KIND]
    assert [sent(b) for b in posts(s)] == [LOCAL] * 4
    assert [c.requests for c in backend.calls] == [1] * 4 and all(c.params is None for c in backend.calls)
    assert backend.switched is None and not any(SWITCHED in x for x in said)


# ---------------------------------------------------------------- 04 脚本：录下、回放

def run_04(*args, env=None):
    return run_script_fresh(SCRIPT, "--budget", "30", "--seeds", "1", "--jobs", "1", *args, timeout=120,
                            env={**base_env(), **(env or {})})


@ahead
def recorded_reasoning_04():
    """04 对着推理模型的桩（两个请求并发）跑、录下；服务器关掉以后回放：(录制的运行, 回放的运行, 服务器收到的正文,
    录制文件的路径)。"""
    f = os.path.join(session_dir("reasoning04"), "run.jsonl")
    with StubServer(lambda n, text: "edit", reject=reasoning_model, max_requests=200, models=("gpt-5-mini",)) as s:
        rec = run_04("--llm", s.url, "--model", "gpt-5-mini", "--llm-concurrency", "2", "--record", f,
                     env={"OPENAI_API_KEY": KEY})
    assert rec.returncode == 0, rec.stderr[-2000:]
    rep = run_04("--replay", f)
    return rec, rep, posts(s), f


PREFETCH = [recorded_reasoning_04]


def cost_row(stdout, head):
    line = next(x for x in stdout.splitlines() if x.startswith(head))
    return int(line.split()[-2].replace(",", ""))


def test_04_uses_a_reasoning_model_and_the_replay_is_byte_identical():
    rec, rep, bodies, f = recorded_reasoning_04()
    assert rec.returncode == 0, rec.stderr[-2000:]
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr[-2000:]
    # 用上了模型：60 次调用（演示 2、演示 3 另一种划分各 30 个提议）都拿到了回复，没有一个失败的提议算在 LLM 头上
    assert cost_row(rec.stdout, "LLM：调用次数") == 30                        # 演示 4 的成本表是演示 2 那次进化的
    assert not any(line.lstrip().startswith("（LLM 出错）") for line in rec.stdout.splitlines())   # 演示 2 的表里没有这一行
    # 被拒的请求（第一批的一两个）算进发出去的请求：演示 4 的那一行是演示 2 的 30 次调用加上被拒的
    refused = sum("max_tokens" in b for b in bodies)
    assert 1 <= refused <= 2 and len(bodies) == 60 + refused
    assert cost_row(rec.stdout, "LLM：发出去的 HTTP 请求（含重试）") == 30 + refused
    assert all(sent(b) == REASONING_PARAMS for b in bodies if "max_tokens" not in b)
    # 标准错误上说一次（录制时）；回放时说一次录制时换过参数
    assert rec.stderr.count(SWITCHED) == 1 and "（LLM：gpt-5-mini 不收 max_tokens（HTTP 400" in rec.stderr
    assert rep.stderr.count("（回放：录制时 gpt-5-mini 被当作推理模型，从第 1 次调用起发的是 max_completion_tokens=25,000") == 1
    # 录制文件：第 3 版；每次调用写明发的参数，被拒过的写明 resent 和两个请求；没有密钥
    with open(f, encoding="utf-8") as fh:
        text = fh.read()
    assert KEY not in text
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[0]["version"] == openai_llm.VERSION and lines[0]["max_tokens"] == openai_llm.MAX_TOKENS
    calls = [x for x in lines if x["type"] == "call"]
    assert len(calls) == 60 and all(c["params"] == REASONING_PARAMS for c in calls)
    assert sum(c.get("resent") == "max_tokens" for c in calls) == refused
    assert all(c["requests"] == (2 if c.get("resent") else 1) for c in calls)
    assert all(c["model"] == STUB_MODEL and c["error"] is None and c["reply"] for c in calls)


def test_a_version_2_recording_without_the_new_fields_still_replays(tmp_path):
    # 早先的文件（第 2 版，调用行没有 params、resent）照样回放，标准输出一样（请求数在 requests 里）
    rec, _, _, f = recorded_reasoning_04()
    old = tmp_path / "v2.jsonl"
    with open(f, encoding="utf-8") as src, open(old, "w", encoding="utf-8") as dst:
        for line in src:
            obj = json.loads(line)
            obj.pop("params", None)
            obj.pop("resent", None)
            if obj["type"] == "header":
                obj["version"] = 2
            dst.write(json.dumps(obj, ensure_ascii=False) + "\n")
    rep = run_04("--replay", str(old))
    assert rep.returncode == 0 and rep.stdout == rec.stdout, rep.stderr[-2000:]
    assert "回放：录制时" not in rep.stderr


def test_a_recording_whose_params_are_not_what_record_writes_is_one_sentence(tmp_path):
    _, _, _, f = recorded_reasoning_04()
    bad = tmp_path / "bad.jsonl"
    with open(f, encoding="utf-8") as src:
        lines = src.read().splitlines()
    call = json.loads(lines[1])
    call["params"] = {"max_completion_tokens": "\x1b[2J"}
    bad.write_text("\n".join([lines[0], json.dumps(call)] + lines[2:]) + "\n", encoding="utf-8")
    rep = run_04("--replay", str(bad))
    assert rep.returncode == 2 and f"{bad}:2: 这一行不是 --record 写的格式" in rep.stderr, rep.stderr[-2000:]
    assert "Traceback" not in rep.stderr and "\x1b" not in rep.stderr


def test_the_readme_says_what_the_code_sends_and_what_it_recognises():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    spaced, joined = " ".join(readme.split()), readme.replace("\n", "")
    assert f"`max_completion_tokens` 给的是 {openai_llm.MAX_COMPLETION_TOKENS:,}" in joined
    assert REASONING_PARAMS == {"max_completion_tokens": openai_llm.MAX_COMPLETION_TOKENS}
    for words in (MAX_TOKENS_REFUSED, TEMPERATURE_REFUSED):          # README 引的原话就是假服务器回的、代码认得的
        assert f"`{words}`" in spaced
        param = "max_tokens" if "max_tokens" in words else "temperature"
        code = "unsupported_parameter" if param == "max_tokens" else "unsupported_value"
        assert rejected_parameter(400, json.dumps(openai_error(words, param, code)).encode()) == param
    assert '`"params": {"max_completion_tokens": 25000}`' in joined and f"第 {openai_llm.VERSION} 版" in joined
