"""
服务器回 HTTP 错误时说的原因（evolve.openai_llm）。helper 的复查报过（照 OpenAI 的回答写的假服务器）：付费 API
上的推理模型对每个请求都回 HTTP 400，正文里说 "Unsupported parameter: 'max_tokens' is not supported with this
model"（现在客户端认得这句话、换成推理模型的参数：tests/test_reasoning_model.py），04 只说"接连 4 次调用失败
（最后一次是“LLM 回 HTTP 400”）……检查 LLM 服务器、地址、模型名和密钥以后再跑"：不是 2xx 的回答，正文一个字节也没读。现在读它的开头（最多 ERROR_BODY_BYTES 字节、ERROR_READ_SECONDS 秒），放弃的那句、最后退出码 1 的那句、开跑前检查的那句都带上
服务器说的原因——抹掉密钥、控制字符转义、截短；失败的种类（计数、录制文件、回放）不变。
服务器只听 127.0.0.1，每个测试最多回答几个请求，with 块结束就关。
"""

import json
import socket
import threading
import time

import pytest

from evolve import EXPERT, render
from evolve import openai_llm
from evolve.mock_llm import Prompt
from evolve.openai_llm import OpenAILLM, ServerUnreachable, server_words
from stub_llm_server import CannedServer, within
from stub_llm_server import openai_error as stub_error

KEY = "sk-test-0123456789-never-print-me"
MAX_TOKENS_400 = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                  "Use 'max_completion_tokens' instead.")


def prompt_for(program=EXPERT):
    return Prompt(render(program), program, 1.0, (), ())


def openai_error(message):
    """OpenAI 的错误正文（stub_llm_server.openai_error），发出去的字节。"""
    return json.dumps(stub_error(message)).encode()


@pytest.mark.parametrize("body, content_type, words", [
    (openai_error(MAX_TOKENS_400), "application/json", MAX_TOKENS_400),                     # OpenAI、vLLM
    (b'{"error": "model \\"qwen3\\" not found, try pulling it first"}', "application/json",   # ollama 的原生写法
     'model "qwen3" not found, try pulling it first'),
    (b'{"detail": [{"loc": ["body", "seed"], "msg": "Input should be a valid integer"}]}', "application/json",
     "Input should be a valid integer"),                                                      # FastAPI
    (b'{"detail": "Not Found"}', "application/json", "Not Found"),
    (b"<html><head><title>503 Service\n  Temporarily Unavailable</title></head><body>nginx</body></html>", "text/html",
     "503 Service Temporarily Unavailable"),                                                  # 代理的错误页
    (b"<html><body><h1>Bad &amp; Gateway</h1></body></html>", "text/html; charset=utf-8", "Bad & Gateway"),
    (b"\n\nupstream connect error or disconnect/reset before headers\nmore", "text/plain", "upstream connect error or "
     "disconnect/reset before headers"),
    (b'{"error": {"message": "context length exceeded \\u4e2d', "application/json", None),    # 读到一半、消息也没完
    (b'{"error": {"message": "context length exceeded", "type": "x", "pad": "' + b"x" * 100, "application/json",
     "context length exceeded"),                                                              # 读到一半、消息完整
    (b"\xff\xfe bad \xc3 bytes", "text/plain", "\ufffd\ufffd bad \ufffd bytes"),              # 不是 UTF-8
    (b'{"error": {"code": 500}}', "application/json", None),
    (b"   ", "text/plain", None),
    (b"<html><body>no title</body></html>", "text/html", None),
    (b"<title>never closed <h1 class='e'>Bad <b>Gateway</b></h1>", "text/html", "Bad Gateway"),   # 没关上的 <title>：用 <h1>
    (b"<titles>not a title</titles><TITLE lang=en>Too Many Requests</Title >", "text/html", "Too Many Requests"),
    (b"<html>" + b"<title" * 2700, "text/html", None),     # 几千个没关上的标签（找原因的时间要线性：make bench 量）
    (b"<title>" + b"<" * 16000 + b"</title>", "text/html", "<" * 16000),
])
def test_the_servers_words_are_found_in_the_usual_error_bodies(body, content_type, words):
    assert server_words(body, content_type) == words


def test_a_server_refusing_every_call_says_why_when_the_run_gives_up_and_at_the_end(capsys):
    # 放弃的那句（标准错误）和最后退出码 1 的那句都带着服务器的原话；服务器回显的密钥抹掉、ESC 转义；失败的种类照旧。
    # 这句话是推理模型的：第一次被拒时换成推理模型的参数、重发一次（tests/test_reasoning_model.py），这个服务器换了
    # 以后还这样说，就是普通的失败
    said = []
    message = MAX_TOKENS_400 + f" (key {KEY})\x1b[2J"
    with CannedServer(400, openai_error(message)) as s:
        backend = OpenAILLM(s.url, "stub", api_key=KEY, timeout=10, backoff=0.01, concurrency=1,
                             notify=said.append)
        out = backend.propose_many([prompt_for()] * 5)
        backend.close()
    assert [e.kind for e in out] == ["LLM 回 HTTP 400"] * 4 + [openai_llm.GAVE_UP]
    assert [c.error for c in backend.calls] == [e.kind for e in out]           # 录进文件的种类不变
    assert [c.requests for c in backend.calls] == [2, 1, 1, 1, 0] and s.seen == 5   # 换参数只重发一次，不来回换
    gave_up = [x for x in said if "接连 4 次调用失败" in x]
    assert len(gave_up) == 1 and f"服务器说：“{MAX_TOKENS_400} (key ***)\\x1b[2J”" in gave_up[0], said
    with pytest.raises(SystemExit) as e:
        openai_llm.finish(backend, tell=said.append)
    assert e.value.code == 1
    assert "最后一次“LLM 回 HTTP 400”时服务器说：“Unsupported parameter: 'max_tokens'" in said[-1], said[-1]
    assert all(KEY not in x and "\x1b" not in x for x in said)


def test_a_refusal_at_the_start_up_check_says_why():
    # 开跑前的检查：401、403 的那句话带上服务器的原话（密钥抹掉）
    message = f"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account."
    with CannedServer(401, openai_error(message)) as s:
        backend = OpenAILLM(s.url, "stub", api_key=KEY, timeout=10)
        with pytest.raises(ServerUnreachable) as e:
            backend.check()
    assert str(e.value).startswith(f"LLM 服务器 {s.url} 拒绝了请求（HTTP 401），服务器说：“Incorrect API key provided: ***."), e.value
    assert KEY not in str(e.value)


def test_an_error_body_that_never_ends_is_still_the_status_in_bounded_time(monkeypatch):
    """服务器送来状态行和响应头（HTTP 503）以后，正文一秒一个字节地挤、永远不完：这次调用照样是"LLM 回 HTTP 503"，
    不是超时，读正文最多花 ERROR_READ_SECONDS 秒（--llm-timeout 更短时按它）。这里把它设成半秒（讲的是"有上限"，
    不是 2 秒这个数：测试不用干等 2 秒）；按 --llm-timeout 的 30 秒读的话，远在界外。"""
    monkeypatch.setattr(openai_llm.wire, "ERROR_READ_SECONDS", 0.5)       # wire.py 读错误正文时看的
    stop = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)

    def serve():
        served = 0
        while not stop.is_set() and served < 4:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            served += 1
            with conn:
                conn.settimeout(0.5)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    while not stop.wait(0.3):
                        conn.sendall(b"1\r\nx\r\n")
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        backend = OpenAILLM(url, "stub", timeout=30, retries=0)
        t0 = time.monotonic()
        with pytest.raises(openai_llm.LLMError) as e:
            backend.propose(prompt_for())
        took = time.monotonic() - t0
    finally:
        stop.set()
        t.join(5)
        listener.close()
    assert e.value.kind == "LLM 回 HTTP 503", e.value
    assert took < within(openai_llm.wire.ERROR_READ_SECONDS), took  # 上面设的半秒；远小于 --llm-timeout 的 30 秒


def test_the_readme_says_the_bounds_the_code_uses():
    import os
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert (f"正文只读开头（最多 {openai_llm.ERROR_BODY_BYTES // 1024} KB、{openai_llm.ERROR_READ_SECONDS:g} 秒）"
            in readme.replace("\n", ""))
