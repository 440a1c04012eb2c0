"""
测试用的"不怀好意"的 OpenAI 兼容服务器（不是语言模型）：标准库的 socketserver，只听 127.0.0.1 上一个空闲端口，
测试开、测试关。它按"模式"用各种坏法回答 GET /models 和 POST /chat/completions：转向到别的地址、嵌套十万层的 JSON、
长得离谱的 Content-Length、溢出的分块长度、150 个响应头、一个 70 KB 的响应头、HTTP 999、一字节一字节地挤牙膏、
10 MB 的回复、带终端控制字符的模型名和回复……（MODES 里每种一个名字）。它把收到的每个请求（方法、路径、请求头）
记在 received 里：另开一个当作"别的地址"，测试就能查密钥有没有被带过去。

有界：每个连接最多活 max_seconds 秒（挤牙膏的也是），一共最多回答 max_requests 个请求（再来的直接关掉），
服务器关掉时（stop 或 with 结束）正在挤牙膏的也马上停；线程都是 daemon 的，pytest 被杀掉时一起没了。
"""

from __future__ import annotations

import functools
import json
import socket
import socketserver
import threading
import time

from stub_llm_server import ESCAPES, STALL, ServedInAThread, stub_edit
NESTED = b"[" * 100_000 + b"]" * 100_000
FLOOD_BYTES = 10_000_000
BOMB_BYTES = 64_000_000


def chat_body(content: str, n: int = 0) -> bytes:
    """一个正常的 chat-completions 回复，内容是 content。"""
    return json.dumps({"id": f"hostile-{n}", "object": "chat.completion", "model": "hostile",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


def head(status: int = 200, reason: str = "OK", headers=(), length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", "Connection: close", *headers]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def whole(body: bytes, status: int = 200, headers=()) -> bytes:
    return head(status, "OK" if status == 200 else "Whatever", headers, len(body)) + body


_SSE_BODY = (b'data: {"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
             b'data: [DONE]\n\n')
SSE_REPLY = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
             + f"Content-Length: {len(_SSE_BODY)}\r\n\r\n".encode() + _SSE_BODY)
_SSE_COMMENTED = b": OPENROUTER PROCESSING\n\n" + _SSE_BODY
SSE_COMMENT_REPLY = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
                     + f"Content-Length: {len(_SSE_COMMENTED)}\r\n\r\n".encode() + _SSE_COMMENTED)


class HostileServer(ServedInAThread):
    """with HostileServer(chat="nested", models="list") as s: ... s.url 是 base_url（…/v1），s.received 是收到的请求
    [(方法, 路径, {请求头（小写）: 值})]。chat、models 是模式名（MODES），或者 n -> 模式名 的函数（n 是第几个
    这种请求，从 0 数）。location：转向模式的 Location（默认指向 ftp://，测试一般给另一个 HostileServer 的地址）。
    drip：挤牙膏的模式每两个字节之间等几秒。"""

    def __init__(self, chat="edit", models="list", *, model_ids=("x",), location=None, think_tags=100_000,
                 drip=1.0, max_requests=200, max_seconds=20.0):
        self.chat, self.models, self.model_ids, self.location, self.drip = chat, models, model_ids, location, drip
        self.think_tags, self.max_requests, self.max_seconds = think_tags, max_requests, max_seconds
        self.received: list[tuple] = []
        self.sent: list[int] = []                 # 每个回答实际写出去了多少字节（对方提前关掉连接时少）
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.server = None

    # ---- 开、关 ----
    def __enter__(self):
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                owner._handle(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            block_on_close = False

            def handle_error(self, request, client_address):
                pass

        self._serve(Server(("127.0.0.1", 0), Handler))
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = self.origin + "/v1"
        return self

    def stop(self) -> None:
        self.stopped.set()                        # 还在写的连接下一次写时停下（_Out.write）
        super().stop()

    def answers_written(self, n: int = 1, timeout: float = 5.0) -> list[int]:
        """等到至少 n 个回答写完（或写不下去）为止，最多等 timeout 秒；返回每个回答写出去的字节数。处理连接的线程在
        客户端挂掉之后才发现写不下去，那时测试可能已经出了 with：直接看 self.sent 会早一步、看到一个空表。"""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if len(self.sent) >= n:
                    break
            time.sleep(0.01)
        with self.lock:
            return list(self.sent)

    def posts(self) -> int:
        return sum(1 for r in self.received if r[0] == "POST")

    def keys_seen(self) -> list:
        return [r[2].get("authorization") for r in self.received if "authorization" in r[2]]

    # ---- 一个连接 ----
    def _handle(self, sock: socket.socket) -> None:
        deadline = time.monotonic() + self.max_seconds
        sock.settimeout(5)
        try:
            request = _read_request(sock)
        except OSError:
            return
        if request is None:
            return
        method, path, headers, body = request
        with self.lock:
            self.received.append((method, path, headers))
            n_all = len(self.received)
            n = sum(1 for r in self.received if r[1] == path) - 1
        if n_all > self.max_requests or self.stopped.is_set():
            return
        mode = self.models if path.split("?")[0].endswith("/models") else self.chat
        mode = mode(n) if callable(mode) else mode
        out = _Out(sock, self, deadline)
        try:
            MODES[mode](self, out, path, body, n)
        except (OSError, _Stop):
            pass
        finally:
            with self.lock:
                self.sent.append(out.sent)


class _Stop(Exception):
    """服务器关了，或者这个连接活得太久了：不再往下写。"""


class _Out:
    """往一个连接写；写之前看看服务器还开着、这个连接还没超时。"""

    def __init__(self, sock, owner, deadline):
        self.sock, self.owner, self.deadline, self.sent = sock, owner, deadline, 0

    def write(self, data: bytes) -> None:
        if self.owner.stopped.is_set() or time.monotonic() > self.deadline:
            raise _Stop
        self.sock.sendall(data)
        self.sent += len(data)

    def drip(self, data: bytes, every: float) -> None:
        """一个字节一个字节地写，每两个之间等 every 秒。"""
        for i in range(len(data)):
            self.write(data[i:i + 1])
            if self.owner.stopped.wait(every):
                raise _Stop


def _read_request(sock):
    """读一个 HTTP 请求：(方法, 路径, {头（小写）: 值}, 正文)；读不到完整的请求头返回 None。正文最多读 1 MB。"""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk or len(data) > 1_000_000:
            return None
        data += chunk
    head_bytes, body = data.split(b"\r\n\r\n", 1)
    lines = head_bytes.decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    want = min(int(headers.get("content-length", "0") or 0), 1_000_000)
    while len(body) < want:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return method, path, headers, body


def _user(body: bytes) -> str:
    return json.loads(body)["messages"][-1]["content"]


# ---------------------------------------------------------------- 各种回答方式：mode(服务器, 输出, 路径, 请求正文, n)

def _list(s, out, path, body, n):
    out.write(whole(json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in s.model_ids]}).encode()))


def _edit(s, out, path, body, n):
    out.write(whole(chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n)))


def _key_as_model(s, out, path, body, n):
    """一个正常的回复，只是 "model" 字段是收到的密钥（Authorization 头去掉 Bearer）。"""
    with s.lock:
        key = s.received[-1][2].get("authorization", "").removeprefix("Bearer ")
    data = json.loads(chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n))
    out.write(whole(json.dumps(dict(data, model=key)).encode()))


def _huge_int(s, out, path, body, n):
    """一个正常的修改，只是 usage 里的 token 数是一个 5000 位的整数（合法的 JSON；Python 默认不肯转这么长的整数）。"""
    data = chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n)
    out.write(whole(data[:-1] + b', "usage": {"prompt_tokens": ' + b"9" * 5000 + b', "completion_tokens": 7}}'))


def _usage_str(s, out, path, body, n):
    """一个正常的修改，只是 usage 里的 token 数是字符串（讲师的复查用的是收到的密钥）。"""
    data = json.loads(chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n))
    data["usage"] = {"prompt_tokens": "many", "completion_tokens": "7", "total_tokens": None}
    out.write(whole(json.dumps(data).encode()))


def _painted(s, out, path, body, n):
    out.write(whole(chat_body(f"{ESCAPES}\n" + stub_edit(_user(body)), n)))


def _thinks(s, out, path, body, n):
    out.write(whole(chat_body("<think>" * s.think_tags + "\n" + stub_edit(_user(body)), n)))


def _blocks(s, out, path, body, n):
    block = "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"
    out.write(whole(chat_body(block * (900_000 // len(block)), n)))


def _flood(s, out, path, body, n):
    """10 MB 的回复（一个合法的 JSON，内容是 10 MB 的 x）：一块一块地写，对方不读了就停。"""
    prefix, suffix = b'{"choices": [{"message": {"content": "', b'"}}]}'
    out.write(head(length=len(prefix) + FLOOD_BYTES + len(suffix)) + prefix)
    piece = b"x" * 65536
    left = FLOOD_BYTES
    while left > 0:
        out.write(piece[:left])
        left -= min(left, len(piece))
    out.write(suffix)


def _redirect(status):
    def mode(s, out, path, body, n):
        where = s.location if s.location is not None else "ftp://127.0.0.1:21/v1"
        where = where + path[path.rindex("/"):] if where.endswith("/v1") else where
        out.write(whole(b"", status, [f"Location: {where}"]))
    return mode


def _ftp(s, out, path, body, n):
    out.write(whole(b"", 302, ["Location: ftp://127.0.0.1:21/v1" + path[path.rindex("/"):]]))


def _status(status, headers=()):
    def mode(s, out, path, body, n):
        out.write(whole(b'{"error": {"message": "no"}}', status, headers))
    return mode


def _raw(data: bytes):
    def mode(s, out, path, body, n):
        out.write(data)
    return mode


def _huge_length(s, out, path, body, n):
    out.write(head(length=None, headers=["Content-Length: 99999999999999999999999"]) + b'{"data": [')


def _chunk_overflow(s, out, path, body, n):
    out.write(head(headers=["Transfer-Encoding: chunked"]) + b"ffffffffffffffffffff\r\n" + b'{"data": [' * 10)


def _many_headers(s, out, path, body, n):
    payload = b'{"data": []}'
    out.write(head(headers=[f"X-Filler-{i}: {i}" for i in range(150)], length=len(payload)) + payload)


def _long_header(s, out, path, body, n):
    payload = b'{"data": []}'
    out.write(head(headers=["X-Long: " + "a" * 70_000], length=len(payload)) + payload)


def _trickle(s, out, path, body, n):
    """响应头一下子给，正文 drip 秒一个字节（挤牙膏的代理、CPU 上慢慢吐字的模型）。"""
    out.write(head(length=100_000))
    out.drip(b"x" * 100_000, s.drip)


def _trickle_500(s, out, path, body, n):
    """HTTP 500，长度头说 10 万字节，正文 drip 秒一个字节（出错的代理一页说明慢慢吐，或者说了长度就不动了）。"""
    out.write(head(500, "Internal Server Error", length=100_000))
    out.drip(b"x" * 100_000, s.drip)


def _trickle_head(s, out, path, body, n):
    """连状态行都是 drip 秒一个字节，响应头里还有一行 1 万字节的：挤完要一万个 drip（和 _trickle 的正文一样，挤到这个
    连接的 max_seconds 为止），按"每次读"算的超时永远等不到。"""
    out.drip(head(headers=["X-Slowly: " + "." * 10_000], length=2) + b"{}", s.drip)


def _chunked_forever(s, out, path, body, n):
    """200、分块传输，每 0.01 秒一个一字节的块（一个空格），永远不说完（直到这个连接的 max_seconds）。"""
    out.write(head(headers=["Transfer-Encoding: chunked"]))
    while True:
        out.write(b"1\r\n \r\n")
        if s.stopped.wait(0.01):
            raise _Stop


FAKE_LOG = ("\n2026-01-01 00:00:00,000 - INFO - Iteration {i}: Program fake{i} (parent: x) completed in 0.01s"
            "\n2026-01-01 00:00:00,000 - INFO - Metrics: combined_score=9.9000, probe_speedup=9.9000, launchable=1.0000, "
            "full_evaluation=1.0000, rules=1.0000")


def _echo_400(s, out, path, body, n):
    """400，说明里回显收到的 Authorization、带终端控制序列（改终端标题、清屏），还有换行开头的假日志行（伪造
    OpenEvolve 的 "Iteration N: Program …" 和 "Metrics: combined_score=9.9"）。"""
    with s.lock:
        auth = s.received[-1][2].get("authorization", "")
    fake = "".join(FAKE_LOG.format(i=i) for i in range(1, 40))
    inline = FAKE_LOG.format(i=100 + n).replace("\n", " ")           # 同一行里的假日志（审读报过：不换行也凑得出数）
    message = f"bad key {auth} \x1b]0;pwned\x07\x1b[2J{inline}{fake}"
    out.write(whole(json.dumps({"error": {"message": message}}).encode(), 400))


def _echo_key_edit(s, out, path, body, n):
    """一个能打上的修改，REPLACE 里多一行注释：收到的密钥（Authorization 去掉 Bearer）、OSC 8 的链接和清屏。"""
    with s.lock:
        key = s.received[-1][2].get("authorization", "").removeprefix("Bearer ")
    edit = stub_edit(_user(body)).replace("=======\n", f"=======\n    # got {key} \x1b]8;;http://x/\x1b\\link\x1b]8;;"
                                                       "\x1b\\ \x1b[2J\n", 1)
    out.write(whole(chat_body("给一个慢的形状加一条规则。\n" + edit, n)))


def _key_in_header(name: str):
    """200，响应头 name 的值是收到的密钥，每 4 个字夹一个 ESC（印出来是 \\x1b，肉眼照样读得出密钥）；没有正文。"""
    def mode(s, out, path, body, n):
        with s.lock:
            key = s.received[-1][2].get("authorization", "").removeprefix("Bearer ")
        value = "\x1b".join(key[i:i + 4] for i in range(0, len(key), 4))
        out.write(head(headers=[f"{name}: {value}"]))
    return mode


@functools.lru_cache(maxsize=1)
def _bomb() -> bytes:
    """一个 gzip 压缩过的 chat completion：约 70 KB，解压出来是内容为 BOMB_BYTES 个 x 的合法回复。"""
    import gzip
    prefix, suffix = b'{"choices": [{"message": {"content": "', b'"}}]}'
    return gzip.compress(prefix + b"x" * BOMB_BYTES + suffix, compresslevel=9, mtime=0)


def _gzip_list(s, out, path, body, n):
    import gzip
    data = json.dumps({"object": "list", "data": [{"id": m} for m in s.model_ids]}).encode()
    out.write(whole(gzip.compress(data, mtime=0), headers=["Content-Encoding: gzip"]))


def _gzip_bomb(s, out, path, body, n):
    out.write(whole(_bomb(), headers=["Content-Encoding: gzip"]))


def _escape_ids(s, out, path, body, n):
    ids = ["\x1b[2J\x1b[31m" + "A" * 2_000_000, "ok\x9b\u202e"]
    out.write(whole(json.dumps({"data": [{"id": i} for i in ids]}).encode()))


def _reset_mid_body(s, out, path, body, n):
    """200、长度头对，正文只写一半，然后用 RST 断开（SO_LINGER 0）：服务器已经答了，回复没传完。"""
    data = whole(chat_body(stub_edit(_user(body)), n))
    out.write(data[:len(data) - 40])
    time.sleep(0.05)
    import struct
    out.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    out.sock.close()


def _early_hints(s, out, path, body, n):
    """一个能打上的修改（GET /models 时是模型列表），前面先送两个 102 Processing、一个 103 Early Hints（带头）。"""
    info = b"HTTP/1.1 102 Processing\r\n\r\n" * 2 + b"HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n"
    if path.split("?")[0].endswith("/models"):
        return out.write(info + whole(json.dumps({"data": [{"id": m} for m in s.model_ids]}).encode()))
    out.write(info + whole(chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n)))


def _processing_forever(s, out, path, body, n):
    """一个接一个的 102 Processing（每 drip 秒一个），永远不给最终的回答（直到这个连接的 max_seconds）。"""
    while True:
        out.write(b"HTTP/1.1 102 Processing\r\n\r\n")
        if s.stopped.wait(s.drip):
            raise _Stop


def _long_model(s, out, path, body, n):
    """一个能打上的修改，只是 "model" 字段是 180 个 m、收到的密钥、再 200 个 x（OpenAI 的模型名不到 50 个字符）。"""
    with s.lock:
        key = s.received[-1][2].get("authorization", "").removeprefix("Bearer ")
    data = json.loads(chat_body("给一个慢的形状加一条规则。\n" + stub_edit(_user(body)), n))
    out.write(whole(json.dumps(dict(data, model="m" * 180 + key + "x" * 200)).encode()))


_TOOL_CALL = {"role": "assistant", "content": None,
              "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "edit", "arguments": "{}"}}]}


def _message(message: dict):
    """200，一个 chat completion，choices[0].message 是 message（不是 {"content": 文字} 的那些）。"""
    return _raw(whole(json.dumps({"object": "chat.completion", "model": "hostile",
                                  "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}).encode()))


def _gzip_bomb_500(s, out, path, body, n):
    out.write(whole(_bomb(), 500, headers=["Content-Encoding: gzip"]))


def _flood_500(s, out, path, body, n):
    """500，正文是 10 MB（一块一块地写，对方不读了就停）。"""
    out.write(head(500, "Whatever", length=FLOOD_BYTES))
    piece = b"x" * 65536
    for _ in range(FLOOD_BYTES // len(piece)):
        out.write(piece)


def _many_names(s, out, path, body, n):
    """GET /models：将近 8 MB 的模型列表，两百万个一个字母的模型名（没有要的那个）。"""
    out.write(whole(b'{"data": [' + b",".join([b'"a"'] * 1_990_000) + b"]}"))


MODES = {
    "list": _list,                            # GET /models：model_ids 里的模型
    "edit": _edit,                            # 一个能打上的修改
    "painted": _painted,                      # 带终端控制字符（ESCAPES）的回复，后面跟一个能打上的修改
    "thinks": _thinks,                        # think_tags 个不配对的 <think>，后面跟一个能打上的修改
    "blocks": _blocks,                        # 约 0.9 MB 的 SEARCH/REPLACE 块（一万多块）
    "flood": _flood,                          # 10 MB 的回复
    **{str(c): _redirect(c) for c in (301, 302, 303, 307, 308)},   # 转到 location
    "304": _redirect(304),                    # 304 Not Modified 带一个 Location（不是转向：我们从不发带条件的请求）
    "ftp": _ftp,                              # 转到 ftp://
    "http500": _status(500),                  # 500，不带 Retry-After
    "mock_bug": _status(500, ["X-MockLLM-Bug: 1"]),   # 500 带本讲 MockLLM 服务器出程序错时的那个头
    "retry_after": _status(429, ["Retry-After: 0.6"]),   # 429，让等 0.6 秒再试
    "retry_after_stall": _status(429, [f"Retry-After: {STALL:g}"]),   # 429，让等 STALL 秒再试
    "reset_mid_body": _reset_mid_body,        # 200，正文传到一半被重置
    "status999": _status(999),                # HTTP 里没有的状态码
    "status404": _status(404),
    # http:// 对着 https 的端口：Go 的服务器这样回（nginx 回 "The plain HTTP request was sent to HTTPS port"）
    "https_port": lambda s, out, path, body, n: out.write(whole(b"Client sent an HTTP request to an HTTPS server.\n", 400)),
    "status403": _status(403),                # 拒绝（当代理用：对 CONNECT 回 403）
    "status407": _status(407),                # 当代理用：要用户名和密码
    "usage_str": _usage_str,                  # 一个能打上的修改，usage 里的 token 数是字符串
    "huge_int": _huge_int,                    # 一个能打上的修改，usage 里有一个 5000 位的整数
    "key_as_model": _key_as_model,            # 回复的 model 字段是收到的密钥
    "ids_int": _raw(whole(b'{"data": [{"id": 1}, {"id": 2}]}')),
    "ids_null": _raw(whole(b'{"data": [{"id": null}]}')),
    "nested": _raw(whole(NESTED)),            # 十万层的 [ ]
    "not_json": _raw(whole(b"<html>hello</html>")),
    "huge_length": _huge_length,              # Content-Length: 99999999999999999999999
    "chunk_overflow": _chunk_overflow,        # 分块长度 ffffffffffffffffffff
    "many_headers": _many_headers,            # 150 个响应头
    "long_header": _long_header,              # 一个 70 KB 的响应头
    "trickle": _trickle,
    "trickle_head": _trickle_head,
    "trickle_500": _trickle_500,                 # 500，正文挤牙膏：两边都只按状态码算
    "escape_ids": _escape_ids,                # 模型名里有清屏、变红的控制序列，一个 2 MB 长
    "hang_up": _raw(b""),                     # 读了请求，什么都不回就关掉
    "chunked_forever": _chunked_forever,      # 分块的正文永远不完
    "processing_forever": _processing_forever,   # 102 Processing 一个接一个，永远不给最终的回答
    "echo_400": _echo_400,                    # 400，说明里是收到的密钥、控制序列和假的 OpenEvolve 日志行
    "echo_key_edit": _echo_key_edit,          # 能打上的修改，里面一行注释是收到的密钥和终端控制序列
    "gzip_bomb": _gzip_bomb,                  # Content-Encoding: gzip，解压出来是 BOMB_BYTES 字节的合法回复
    "half_json": _raw(whole(b'{"choices": [{"message": {"content": "half')),   # 200，JSON 断在半截
    "empty_choices": _raw(whole(b'{"choices": []}')),                           # 200，没有 choices[0]
    "two_lengths": _raw(head(headers=["Content-Length: 2", "Content-Length: 15"]) + b'{"choices": []}'),
    "sse": _raw(SSE_REPLY),                   # 没要流式，照样流式地回（text/event-stream，"data: …" 事件）
    "sse_comment": _raw(SSE_COMMENT_REPLY),   # 同上，正文以 SSE 的注释行开头（": OPENROUTER PROCESSING"）
    "sse_as_json": _raw(whole(_SSE_BODY)),    # "data: …" 事件，响应头却说 application/json
    "early_hints": _early_hints,              # 102、102、103（带一个 Link 头），然后才是真的回答
    "hints_flood": _raw(b"HTTP/1.1 103 Early Hints\r\n\r\n" * 200_000),   # 5.6 MB 的 103，永远没有最终的回答
    "long_model": _long_model,                # 回复的 model 字段有 400 多个字符（中间是收到的密钥）
    # 响应头里回显收到的密钥、每 4 个字夹一个 ESC（审读报过：开跑前的检查把它印了出来）
    "key_in_transfer_encoding": _key_in_header("Transfer-Encoding"),
    "key_in_content_length": _key_in_header("Content-Length"),
    "key_in_content_encoding": _key_in_header("Content-Encoding"),
    "many_names": _many_names,                # GET /models：两百万个模型名
    "gzip_list": _gzip_list,                  # GET /models：gzip 压缩过的模型列表（请求说了 Accept-Encoding: identity）
    # 讲师的复查报过：下面这些在 make openevolve 里被说成"连不上 LLM 服务器"或 OpenEvolve 自己的话，--llm 说的不一样
    "switch_101": _raw(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhi"),
    "huge_head": _raw(head(headers=["X-Long: " + "a" * 200_000], length=2) + b"{}"),       # 200 KB 的响应头
    "wide_head": _raw(head(headers=[f"X-H{i}: " + "a" * 3000 for i in range(50)], length=2) + b"{}"),   # 50 个 3 KB 的
    "long_chunk_line": _raw(head(headers=["Transfer-Encoding: chunked"]) + b"2;" + b"x" * 200_000 + b"\r\n{}\r\n0\r\n\r\n"),
    "garbage_status": _raw(b"hello world\r\n\r\n"),                   # 状态行不是 HTTP 的
    "plus_status": _raw(b"HTTP/1.1 +200 OK\r\nContent-Length: 2\r\n\r\n{}"),   # 状态码写成 +200（int() 读得懂）
    "header_without_colon": _raw(b"HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 2\r\n\r\n{}"),
    "gzip_transfer": _raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
    "broken_400": _raw(head(400, "Bad", headers=["Transfer-Encoding: chunked"]) + b"zz\r\n"),   # 400，分块读不懂
    "head_cut": _raw(b"HTTP/1.1 200 OK\r\nContent-Type: app"),        # 响应头没写完就关了连接
    "tool_calls": _message(_TOOL_CALL),                                # content 是 null，调了工具
    "tool_calls_empty": _message(dict(_TOOL_CALL, content="")),        # content 是 ""，调了工具（ollama 这样回）
    "tool_calls_only": _message({k: v for k, v in _TOOL_CALL.items() if k != "content"}),   # 没有 content 这一项
    "gzip_bomb_500": _gzip_bomb_500,          # 500，正文是 gzip 炸弹
    "flood_500": _flood_500,                  # 500，正文 10 MB
}

# 同一个回答，--llm（evolve.openai_llm，test_hostile_server.py）和 make openevolve（OpenEvolve 用的 openai 库加上
# oe_careful_http 的保护，test_openevolve_example.py）说的是同一种失败：chat 模式 -> 种类（None：回复照常拿到）
SAME_KIND = {"flood": "TOO_LONG", "gzip_bomb": "COMPRESSED", "half_json": "BAD_JSON", "not_json": "BAD_JSON",
             "nested": "BAD_JSON", "empty_choices": "NO_CONTENT", "two_lengths": "BAD_HEADERS", "huge_length": "BAD_HEADERS",
             "chunk_overflow": "TRUNCATED", "sse": "STREAMED", "sse_comment": "STREAMED", "sse_as_json": "STREAMED",
             "many_headers": "BAD_HEADERS", "long_header": "BAD_HEADERS", "status999": "LLM 回 HTTP 999",
             "switch_101": "LLM 回 HTTP 101", "huge_head": "BAD_HEADERS", "wide_head": "BAD_HEADERS",
             "long_chunk_line": "TRUNCATED", "garbage_status": "BAD_HEADERS", "plus_status": "BAD_HEADERS", "header_without_colon": "BAD_HEADERS",
             "gzip_transfer": "BAD_HEADERS", "broken_400": "LLM 回 HTTP 400", "tool_calls": "TOOL_CALLS",
             "tool_calls_empty": "TOOL_CALLS", "tool_calls_only": "TOOL_CALLS", "reset_mid_body": "TRUNCATED", "edit": None,
             "huge_int": None, "usage_str": None}                     # 回复照收，那个数当作没报


def same_kind(mode: str):
    """SAME_KIND 里 mode 的种类，名字换成 evolve.openai_llm 里那句话（"LLM 回 HTTP …" 原样）。"""
    from evolve import openai_llm
    kind = SAME_KIND[mode]
    return kind if kind is None or kind.startswith("LLM 回 HTTP") else getattr(openai_llm, kind)
