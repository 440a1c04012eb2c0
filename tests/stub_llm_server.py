"""
测试用的 OpenAI 兼容服务器（不是语言模型）：标准库 http.server，127.0.0.1 上一个空闲端口，测试开、测试关。
每个 POST /chat/completions 按"剧本"回答：script(第几个请求, 用户消息) -> 一种回答方式（MODES 里的一个）。
"edit" 一类的回复是真能打上的 SEARCH/REPLACE：从用户消息里读出当前程序，按提示文本的哈希挑一个形状，
给它加一条规则（配置来自 MockLLM 的 common_sense_config），所以同一段提示总是同一个回复。
它录下的文件里模型名是 STUB_MODEL，写明了这是测试桩，不是真模型。
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STUB_MODEL = "test-stub (scripted replies, not a language model)"
MODES = ("edit", "chatter", "fenced", "two_blocks", "thinking", "painted", "commented", "empty", "garbage", "bad_json",
         "no_content", "http500", "http429", "http400", "slow", "drop", "cut_empty", "cut_thinking", "cut_edit", "cut_tail",
         "thinker", "reasoner")
# 回复到了 token 上限、被截断（finish_reason 是 cut_reason，默认 "length"；usage 的 completion_tokens 是请求给的上限），
# 照本机和托管的服务器对想得多的模型的样子：
#   cut_empty     content 是 null，草稿在 reasoning_content 里（vLLM 的 reasoning parser、llama.cpp 的
#                 --reasoning-format；ollama 的 content 是 ""、草稿在 reasoning 里；OpenAI 的推理模型 content 是 ""）
#   cut_thinking  content 是没写完的 <think> 草稿（草稿里还有一个块；服务器不分开草稿时）
#   cut_edit      修改写到一半：SEARCH/REPLACE 块没有结束
#   cut_tail      修改是完整的，截断的是后面的一句说明（这样的回复照样能用）
#   thinker       想得多的模型：先在 <think> 里写 think_tokens 个 token 的草稿再写修改；请求给的上限（max_tokens 或
#                 max_completion_tokens）不够草稿加修改时，回复是没写完的草稿（cut_reason），够了就是完整的回复（"stop"）
#   reasoner      OpenAI 的推理模型（o 系列、gpt-5）：推理用 think_tokens 个看不见的 token；上限不够推理加修改时 content 是 ""、
#                 finish_reason 是 cut_reason、usage 说上限全用在了推理上（completion_tokens_details.reasoning_tokens），
#                 够了就是修改（和 reject=reasoning_model 一起用：它不收 max_tokens、temperature）
CUT_DRAFT = "Okay, so I need to find a tiling for the slow shapes. Let me think about BM first. " * 40
DRAFT_WORDS = "Let me check the registers of this tile first. "      # thinker 的草稿：一句算 10 个 token
THINKER_EDIT_TOKENS = 200                                          # thinker 写修改要的 token（草稿之外）
# "painted" 的回复开头：清屏、变红、C1 的 CSI、DEL、回车、倒着写的双向控制符、落单的代理项（JSON 里写成 \ud800）
ESCAPES = "\x1b[2J\x1b[31m红了\x9b31m\x7f\r\u202eevil\u202c\ud800"
# "commented" 的修改在 REPLACE 里多一行注释：控制字符加上 LONG_COMMENT 个字符。回车、落单的代理项除外：回车在
# Python 里也是换行，后面的字就不在注释里了；源代码里有代理项就解析不了。程序和不带注释的一样，打出来的文字不一样
PAINT, LONG_COMMENT = ESCAPES.replace("\r", "").replace("\ud800", ""), 20_000
THINKING = "<think>\n草稿：\n<<<<<<< SEARCH\n    if M <= 99999:\n=======\n    if M <= 1:\n>>>>>>> REPLACE\n</think>\n"

# ---------------------------------------------------------------- 量墙钟的界（对着这些服务器的测试共用）

SLACK = 5.0
"""量墙钟的界比它检查的期限（客户端的 timeout、服务器故意的延迟；"不等"的就是 0）多给的秒数：within(期限)。
机器忙时，测试进程里客户端、服务器的线程和后台预跑的线程要排队等 CPU 和 GIL。这台 2 核 VM 上量过（22 个死循环加两份
测试同时跑，负载约 27）：一次请求比期限多出 0.1–1.3 秒，对着一个回坏答案的服务器进化 30 步多出 0.5–3.7 秒；以前的界
（took < 1.5、< 2、< 3、0.3 × 2 + 0.5）在负载 20–30 时因此失败，代码没错。"""

STALL = 40.0
"""每个界防的那种错要花的秒数：服务器挤牙膏、不回答、让等都至少挤这么久，"不该等"的测试给客户端的 timeout、退避也
这么长。按每次读算的超时、跟着等到超时、该放弃时还重试……都要 STALL 秒以上，远在 within(期限) 之外；又小于每个测试
60 秒的上限（pytest.ini），这样的错是时间的那条断言失败、印出用了几秒，而不是测试超时。"""


def within(limit: float = 0.0) -> float:
    """量墙钟的界：检查的期限 limit 秒加上 SLACK（见上）。"""
    return limit + SLACK


def stub_edit(user_text: str, blocks: int = 1) -> str:
    """从提示里的当前程序（第一个 EVOLVE 块）出发，改出一段 SEARCH/REPLACE；blocks=2 时两处各改一块。"""
    from evolve import LAYERS, TOKENS, parse
    from evolve.mock_llm import Dice, common_sense_config
    from evolve.program import Program, Rule, branch_index, format_diff, make_diff, render
    start = user_text.index("# EVOLVE-BLOCK-START")
    end = user_text.index("# EVOLVE-BLOCK-END", start) + len("# EVOLVE-BLOCK-END\n")
    src = user_text[start:end]
    parent = parse(src)
    h = int(hashlib.sha256(user_text.encode()).hexdigest()[:12], 16)
    rng = Dice(h % 2**32)
    name = sorted(LAYERS)[h % len(LAYERS)]
    M = TOKENS[(h // 7) % len(TOKENS)]
    N, K = LAYERS[name]
    cfg = common_sense_config(M, N, K, rng)
    i = branch_index(parent, M, N, K)
    # 规则多了就改那条规则的配置——它本来就是这个配置时改了等于没改（一个 SEARCH/REPLACE 块也写不出：助教改了一个
    # 时间模型的常数，父程序正好进化到了这个配置，读回复的测试就读到"没有 SEARCH/REPLACE 块"），那时也插一条新规则
    if parent.n_rules() >= 6 and i < parent.n_rules() and parent.rules[i].config != cfg:
        rules = list(parent.rules)
        rules[i] = Rule(rules[i].conds, cfg)
        child = Program(tuple(rules), parent.default)
    else:
        child = Program(parent.rules[:i] + (Rule((("M", M),), cfg),) + parent.rules[i:], parent.default)
    diff = make_diff(src, render(child))
    if blocks == 2:                     # 再改默认配置的 group：第二块接着第一块改过的文本
        mid = render(child)
        last = [line for line in mid.splitlines(True) if line.startswith("    return Config(")][-1]
        g = 4 if "group=8)" in last else 8
        new_last = last[:last.index("group=")] + f"group={g})\n"
        diff = make_diff(src, mid) + ((last, new_last),)
    return format_diff(diff)


MAX_TOKENS_REFUSED = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                      "Use 'max_completion_tokens' instead.")


def openai_error(message: str, param: str | None = None, code: str | None = None) -> dict:
    """OpenAI 的 HTTP 错误的正文（json.dumps 以后发出去）。"""
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def reasoning_model(body: dict):
    """像 OpenAI 的推理模型（o 系列、gpt-5 一族）那样看请求的参数：收下是 None，不收是 HTTP 400 的正文（OpenAI 的原话：
    先说 max_tokens，它改好了再说 temperature）。StubServer(reject=reasoning_model)。"""
    if "max_tokens" in body:
        return openai_error(MAX_TOKENS_REFUSED, "max_tokens", "unsupported_parameter")
    if body.get("temperature", 1) != 1:
        return openai_error(f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                            "Only the default (1) value is supported.", "temperature", "unsupported_value")
    return None


class ServedInAThread:
    """测试服务器共用的开、关：self.server（127.0.0.1 上的 socketserver）由一个守护线程服务；stop() 关掉它（哪个线程
    调用、调用几次都行）；with 块结束时也关掉。子类在 __init__ 里设 self.lock、self.server = None，__enter__ 里建好
    服务器以后调用 self._serve(server)。"""

    def _serve(self, server) -> None:
        self.server = server
        self.thread = threading.Thread(target=server.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """关掉服务器（之后的请求连不上）。"""
        with self.lock:
            server, self.server = self.server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __exit__(self, *exc):
        self.stop()


class CannedServer(ServedInAThread):
    """with CannedServer(status, body) as s: ... 127.0.0.1 上每个请求（GET 和 POST）都回同一个回答（status、body 字节、
    content_type），最多回答 max_requests 个（再来的关掉连接）；s.url 是 base_url，s.seen 是收到了几个请求。"""

    def __init__(self, status: int, body: bytes, content_type: str = "application/json", max_requests: int = 10):
        self.status, self.body, self.content_type, self.max_requests = status, body, content_type, max_requests
        self.seen, self.lock, self.server = 0, threading.Lock(), None

    def __enter__(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.seen += 1
                    over = outer.seen > outer.max_requests
                if over:
                    self.close_connection = True
                    return
                self.send_response(outer.status)
                self.send_header("Content-Type", outer.content_type)
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

            do_GET = do_POST = _answer

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._serve(server)
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return self


class StubServer(ServedInAThread):
    """with StubServer(script) as s: ... s.url 是 base_url，s.requests 是收到的请求 [(时刻, 路径, Authorization, 正文)]。"""

    def __init__(self, script, slow_seconds: float = 1.0, retry_after: str = "1", models=("stub",),
                 stop_after: int | None = None, retry_after_500: str | None = None, max_requests: int = 5000,
                 hold=None, watch_close: bool = False, reject=None, cut_reason: str = "length",
                 think_tokens: int = 2000):
        """retry_after：429 回复里的 Retry-After；retry_after_500：500 回复里也带上它（None 不带）。
        stop_after=k：第 k 个请求（从 0 数）来时不回答就断开，并且关掉服务器（模拟跑到一半服务器没了）。
        max_requests：一共最多回答这么多个请求，再来的不回答就断开（测试里的请求有数，出了错也不会没完没了）。
        hold(请求的 JSON 正文) -> 真：这个请求一直不回答，等到服务器关掉（最多 slow_seconds 秒）再不回答就断开——
        请求里的 seed 是客户端的第几次调用（OpenAILLM 发 seed + n），按它挑，和请求到达的先后无关。
        watch_close：回答了一个 POST 以后等客户端关掉连接（最多 slow_seconds 秒），关了就把它记进 delivered：
        客户端读完了整个回复（OpenAILLM 读完最后一个字节才关连接）。
        reject(请求的 JSON 正文) -> HTTP 400 的正文（一个字典）或 None：先看它，是字典就回 400（比如 reasoning_model：
        不收 max_tokens 的推理模型），None 才按剧本回答。
        cut_reason：cut_* 的回复里的 finish_reason（"length"；Mistral 的上下文满了是 "model_length"）。
        think_tokens：thinker 打草稿要用的 token 数。"""
        self.think_tokens = think_tokens
        self.max_requests, self.reject, self.cut_reason = max_requests, reject, cut_reason
        self.hold, self.watch_close = hold, watch_close
        self.delivered: list[int] = []          # watch_close 时：客户端读完了回复的 POST（第几个，从 0 数）
        self.released = threading.Event()       # 服务器关了：hold 住的请求不再等
        self._delivery = threading.Condition()
        self.retry_after_500 = retry_after_500
        self.script, self.slow_seconds, self.retry_after, self.models = script, slow_seconds, retry_after, models
        self.stop_after = stop_after
        self.requests: list[tuple] = []
        self.lock = threading.Lock()
        self.server = None

    def __enter__(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):             # 安静
                pass

            def do_GET(self):
                stub._note(self, None)
                if len(stub.requests) > stub.max_requests:
                    self.close_connection = True
                    return
                if self.path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in stub.models]})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                n = stub._note(self, body)
                if len(stub.requests) > stub.max_requests:
                    self.close_connection = True
                    return
                if stub.reject is not None and (refusal := stub.reject(body)) is not None:
                    return self._json(400, refusal)
                user = body["messages"][-1]["content"]
                mode = stub.script(n, user)
                if stub.hold is not None and stub.hold(body):   # 一直不回答，服务器关掉时断开
                    stub.released.wait(stub.slow_seconds)
                    self.close_connection = True
                    return
                if stub.stop_after is not None and n >= stub.stop_after:
                    mode = "drop"
                    if n == stub.stop_after:
                        threading.Thread(target=stub.stop, daemon=True).start()
                if mode == "drop":                    # 不回答就断开
                    self.close_connection = True
                    return
                if mode == "http500":
                    extra = {} if stub.retry_after_500 is None else {"Retry-After": stub.retry_after_500}
                    return self._json(500, {"error": {"message": "internal error"}}, extra)
                if mode == "http400":                 # 不重试的错误（讲师的服务器中途开始这样回）
                    return self._json(400, {"error": {"message": "bad request"}})
                if mode == "http429":
                    return self._json(429, {"error": {"message": "rate limited"}}, {"Retry-After": stub.retry_after})
                if mode == "bad_json":
                    return self._raw(200, b'{"choices": [{"message": {"content": "half')
                if mode == "no_content":
                    return self._json(200, {"choices": [], "model": STUB_MODEL})
                if mode == "slow":
                    time.sleep(stub.slow_seconds)
                content = {"edit": lambda: "给一个慢的形状加一条规则。\n" + stub_edit(user),
                           "slow": lambda: stub_edit(user),
                           "chatter": lambda: "Sure! Here is my idea:\n\n" + stub_edit(user) + "\nHope this helps.",
                           "fenced": lambda: "```python\n" + stub_edit(user) + "```\n",
                           "two_blocks": lambda: "Two changes.\n" + stub_edit(user, blocks=2),
                           "thinking": lambda: THINKING + stub_edit(user),
                           "painted": lambda: ESCAPES + "\n" + stub_edit(user),
                           "commented": lambda: stub_edit(user).replace(
                               "=======\n", "=======\n    # " + PAINT + "x" * LONG_COMMENT + "\n", 1),
                           "not_dsl": lambda: stub_edit(user).replace(   # 打得上，改出来的不是 DSL（讲师试过 import os）
                               "=======\n", "=======\n    import os\n", 1),
                           "too_big": lambda: ("<<<<<<< SEARCH\ndef choose_config(M, N, K):\n=======\n"  # 打得上、是 DSL，
                                               "def choose_config(M, N, K):\n" + "    if M <= 0:\n        return "  # 多出 70 条规则
                                               "Config(BM=64, BN=64, BK=64, warps=4, stages=3, group=8)\n" * 70  # （讲师的复查
                                               + ">>>>>>> REPLACE\n"),                                          # 试过一万条）
                           "empty": lambda: "",
                           "garbage": lambda: "I think bigger tiles would be faster, maybe?",
                           "cut_empty": lambda: None,
                           "cut_thinking": lambda: "<think>\n" + THINKING[len("<think>\n"):-len("</think>\n")] + CUT_DRAFT,
                           "cut_edit": lambda: "给一个慢的形状加一条规则。\n" + stub_edit(user).split("=======\n")[0]
                           + "=======\n    if M <= ",
                           "cut_tail": lambda: "给一个慢的形状加一条规则。\n" + stub_edit(user) + "\nThis should help the",
                           "thinker": lambda: None, "reasoner": lambda: None}[mode]()   # 下面按请求给的上限写
                limit = body.get("max_completion_tokens", body.get("max_tokens", 0))
                cut = mode.startswith("cut_")
                if mode == "thinker":
                    draft = DRAFT_WORDS * (stub.think_tokens // 10)
                    cut = limit < stub.think_tokens + THINKER_EDIT_TOKENS
                    content = ("<think>\n" + draft[:limit * len(DRAFT_WORDS) // 10] if cut else
                               "<think>\n" + draft + "\n</think>\n" + stub_edit(user))
                if mode == "reasoner":
                    cut = limit < stub.think_tokens + THINKER_EDIT_TOKENS
                    content = "" if cut else stub_edit(user)
                message = {"role": "assistant", "content": content}
                if mode == "cut_empty":
                    message["reasoning_content"] = CUT_DRAFT
                written = limit if cut else (stub.think_tokens + THINKER_EDIT_TOKENS if mode in ("thinker", "reasoner")
                                             else len(content) // 4)
                usage = {"prompt_tokens": len(user) // 4, "completion_tokens": written,
                         "total_tokens": len(user) // 4 + written}
                if mode == "reasoner":
                    usage["completion_tokens_details"] = {"reasoning_tokens": min(written, stub.think_tokens)}
                self._json(200, {"id": f"stub-{n}", "object": "chat.completion", "model": STUB_MODEL,
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": stub.cut_reason if cut else "stop"}],
                                 "usage": usage})
                if stub.watch_close:
                    stub._until_closed(self.connection, n)

            def _json(self, status, obj, headers=None):
                self._raw(status, json.dumps(obj).encode(), headers)

            def _raw(self, status, data, headers=None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:                       # 客户端已经超时走了
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass

        self._serve(Server(("127.0.0.1", 0), Handler))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        return self

    def _note(self, handler, body) -> int:
        with self.lock:
            self.requests.append((time.monotonic(), handler.path, handler.headers.get("Authorization"), body))
            return sum(1 for r in self.requests if r[3] is not None) - 1

    def posts(self) -> int:
        return sum(1 for r in self.requests if r[3] is not None)

    def stop(self) -> None:
        self.released.set()
        super().stop()

    def _until_closed(self, sock, n: int) -> None:
        """等客户端关掉这个连接（最多 slow_seconds 秒）；关了就把第 n 个 POST 记进 delivered。"""
        sock.settimeout(self.slow_seconds)
        try:
            while sock.recv(65536):
                pass
        except OSError:
            return
        with self._delivery:
            self.delivered.append(n)
            self._delivery.notify_all()

    def wait_delivered(self, count: int, timeout: float) -> bool:
        """等到客户端读完了至少 count 个回复（watch_close）为止，最多 timeout 秒；返回等到了没有。"""
        with self._delivery:
            return self._delivery.wait_for(lambda: len(self.delivered) >= count, timeout)


def free_port() -> int:
    """一个现在没人听的端口（开了马上关）。"""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    """python3 tests/stub_llm_server.py [模式 ...]：在前台开一个桩服务器（手动试 --llm 用），按顺序循环这些模式。"""
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    for d in ("lecture14", "lecture10", "lecture13"):
        sys.path.insert(0, os.path.join(here, "..", d))
    modes = sys.argv[1:] or ["edit"]
    unknown = [m for m in modes if m not in MODES]
    if unknown:                                   # --help、拼错的模式：说可以用哪些，不开服务器
        wanted = any(m in ("-h", "--help") for m in unknown)
        print(("" if wanted else f"不认识的模式：{' '.join(unknown)}。") +
              f"用法：python3 tests/stub_llm_server.py [模式 ...]，模式是 {', '.join(MODES)} 里的几个（默认 edit）；"
              "Ctrl-C 停下。", file=sys.stdout if wanted else sys.stderr)
        raise SystemExit(0 if wanted else 2)
    with StubServer(lambda n, text: modes[n % len(modes)]) as s:
        print(f"桩服务器（不是语言模型）：--llm {s.url} --model stub", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
