"""
一个 HTTP 请求（Exchange._exchange）。服务器说的一切都先当作不可信的输入：不跟转向（3xx：OpenAI 兼容接口不转向，
跟过去会把密钥带给别人）；一个请求从查地址、连接到最后一个字节最多 timeout 秒（查地址和连主机的每个地址都只用剩下的
时间，看门的计时器到点就关掉连接，一字节一字节地挤牙膏也拖不过去；连上时已经过了期限就一个字节也不发）；回复最多读
MAX_REPLY_BYTES 字节，再长就不读了（连同状态行、响应头、分块的长度行和扩展、trailer 一共最多读 2 × 上限 + WIRE_SLACK
字节：正文以外的字节也是读进来的；状态行连响应头最多 MAX_HEAD_BYTES）；JSON 嵌得太深、长度头写得离谱、响应头不合规矩，
都只是一次有名字的失败，和 make openevolve（OpenEvolve 用的 h11）叫法一样。不是 2xx 的回答只读正文的开头
（ERROR_BODY_BYTES 字节、ERROR_READ_SECONDS 秒）。密钥只经 https:// 或明文发给本机：名字是本机、连上的却不是时
一个字节也不发。
"""

import base64
import functools
import http.client
import re
import socket
import ssl
import threading
import time
import urllib.parse

from .address import peer_is_loopback
from .errors import BAD_HEADERS, TIMEOUT_KIND, TOO_LONG, TRUNCATED, UNREACHABLE, LLMError
from .network import CERT_WRONG, SILENT_CLOSE, net_words
from .settings import ERROR_BODY_BYTES, ERROR_READ_SECONDS, WIRE_SLACK
from .text import shown

_STATUS_LINE = re.compile(rb"HTTP/[0-9]\.[0-9] [0-9]{3}(?: [^\r\n]*)?\r?\n")   # 状态行：协议版本、三位数的状态码、说明
MAX_HEAD_BYTES = 100 * 1024       # 状态行连响应头最多这么多字节（和 make openevolve 用的 httpcore、h11 一样：再多是
#                                   "响应头不合规矩"；审读报过：150 KB 的响应头这里照读，OpenEvolve 那边拒掉）


class _CappedReader:
    """HTTPResponse 读连接用的文件对象，套一层：读走的字节（readline、read、read1、readinto）一共超过 cap 就抛
    LLMError(TOO_LONG)。peek 不拿走字节，不算。head 不是 None 时正在读状态行和响应头：它们最多 head 字节（超了抛
    LLMError(BAD_HEADERS)），读到一半连接关了抛 RemoteDisconnected（不当作响应头读完了：http.client 会那样，再把空的
    正文说成"不是 JSON"）。"""

    def __init__(self, fp, cap: int):
        self._fp, self._left, self.head = fp, cap, None
        self.status_line = None                   # 状态行原样的字节（正在读响应头时读到的第一行）

    def _took(self, data):
        n = len(data) if isinstance(data, (bytes, bytearray)) else (data or 0)
        self._left -= n
        if self._left < 0:
            raise LLMError(TOO_LONG, "连同响应头、分块的长度行和 trailer 读了太多字节，没读完")
        if self.head is not None:
            self.head -= n
            if self.head < 0:
                raise LLMError(BAD_HEADERS, f"状态行连响应头超过 {MAX_HEAD_BYTES // 1024} KB")
            if not n:
                raise http.client.RemoteDisconnected("响应头没读完，连接就关了")
        return data

    def readline(self, *args):
        line = self._took(self._fp.readline(*args))
        if self.head is not None and self.status_line is None:
            self.status_line = line
        return line

    def read(self, *args):
        return self._took(self._fp.read(*args))

    def read1(self, *args):
        return self._took(self._fp.read1(*args))

    def readinto(self, b):
        return self._took(self._fp.readinto(b))

    def __getattr__(self, name):                      # peek、close、flush、fileno……照原样
        return getattr(self._fp, name)


class _CappedResponse(http.client.HTTPResponse):
    """从状态行起一共最多读 cap 字节的 HTTPResponse（见 _exchange）。"""

    def __init__(self, sock, *args, cap: int, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp = _CappedReader(self.fp, cap)

    def begin(self):
        try:
            super().begin()
        finally:
            self.fp.head = None                       # 响应头读完了：以后是正文

    def _read_status(self):
        """状态行；最终回答之前的 1xx（102 Processing、103 Early Hints……）连同它们的头读掉、跳过，和 100 Continue
        一样（HTTP 的客户端要认得它们；http.client 只跳过 100：讲师报过，服务器或 CDN 先送一个 103，每次调用都记成
        "LLM 回 HTTP 103"，开跑前的检查却放行）。101 换协议不跳：那是最终的回答。读掉的字节照样算进上限。"""
        while True:
            self.fp.head = MAX_HEAD_BYTES             # 每个回答（1xx 也是）的状态行连响应头各算各的，和 h11 一样
            self.fp.status_line = None
            version, status, reason = super()._read_status()
            if not _STATUS_LINE.fullmatch(self.fp.status_line):   # http.client 放行 "+200"、"0200"、"2_00"（int() 读得懂）：
                raise http.client.BadStatusLine(repr(self.fp.status_line[:40]))   # h11（make openevolve）不放行
            if not 101 < status < 200:
                return version, status, reason
            http.client.parse_headers(self.fp)


def _connect_by(address, deadline: float, state: dict, lock) -> socket.socket:
    """连 address=(主机, 端口)，查地址和连每个地址都只用到 deadline 为止剩下的时间；过了期限抛 socket.timeout。
    连接中的套接字放进 state["sock"]：看门的计时器到点时关掉它（它连上以后的 TLS 握手、CONNECT 也就醒了）。"""
    host, port = address
    found: list = []

    def resolve():
        try:
            found.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except OSError as e:
            found.append(e)
    t = threading.Thread(target=resolve, daemon=True)   # getaddrinfo 没有超时：在后台查，等到期限为止
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    if not found:
        raise socket.timeout()
    if isinstance(found[0], OSError):
        raise found[0]
    error: OSError | None = None
    for family, kind, proto, _, addr in found[0]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        sock = socket.socket(family, kind, proto)
        with lock:
            state["sock"] = sock
        try:
            sock.settimeout(left)
            sock.connect(addr)
            with lock:
                state["dup"] = sock.dup()          # 看门的计时器关它（同一个连接；TLS 握手时也关得到），见 _exchange
            return sock
        except OSError as e:
            error = e
            sock.close()
    raise error if error is not None else OSError("getaddrinfo 没有给出地址")


def _error_body(r, sock, until: float) -> bytes:
    """不是 2xx 的回答的正文开头：最多 ERROR_BODY_BYTES 字节，读到 until（time.monotonic）为止。读到一半断了、超时、
    读不懂：有多少算多少——这次回答照样按状态码算，正文只用来说服务器给的原因（server_words）。"""
    chunks, total = [], 0
    try:
        while total < ERROR_BODY_BYTES:
            left = until - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            data = r.read1(ERROR_BODY_BYTES - total)
            if not data:
                break
            chunks.append(data)
            total += len(data)
    except Exception:                                   # noqa: BLE001  OSError、超时、分块读不懂、读得太多（LLMError）
        pass
    return b"".join(chunks)


def _failure(e: Exception, phase: str, fired: bool, timeout: float) -> LLMError:
    """_exchange 里的异常 -> 有名字的失败。phase：connect（连接）、head（发请求、读状态行和响应头）、body（读正文）。"""
    if fired or isinstance(e, (TimeoutError, socket.timeout)):
        return LLMError(TIMEOUT_KIND, f"{timeout:g} 秒内没有回完")
    name = type(e).__name__
    if isinstance(e, http.client.RemoteDisconnected):
        return LLMError(UNREACHABLE, SILENT_CLOSE)
    if isinstance(e, ssl.SSLCertVerificationError):
        return LLMError(UNREACHABLE, f"{CERT_WRONG}{shown(e.verify_message or str(e), 120)}")
    if isinstance(e, OSError) and str(e).startswith("Tunnel connection failed"):     # http.client：代理不肯 CONNECT
        return LLMError(UNREACHABLE, f"代理不肯接通，它对 CONNECT 回的是 {shown(str(e).split(':', 1)[-1].strip(), 60)}")
    if phase != "body" and isinstance(e, OSError):     # 连不上、连上了又被断开、TLS 握手失败……
        return LLMError(UNREACHABLE, net_words(e))
    if phase == "head":                                 # 状态行或响应头坏了：太长、太多、不是 HTTP、数字离谱
        what = {"LineTooLong": "有一行太长", "BadStatusLine": "状态行不是 HTTP 的", "UnknownProtocol": "协议版本不认识",
                "OverflowError": "数字太大"}.get(name)
        if what is None:                               # 只用名字：我们自己的请求出的错（比如头里的值不合法）会带上密钥
            what = "响应头超过 100 个" if "more than" in str(e) else name
        return LLMError(BAD_HEADERS, what)
    if phase == "body" and isinstance(e, OSError):      # 读到一半连接断了：服务器已经答了（2xx），不算"连不上"、不重试
        return LLMError(TRUNCATED, f"读到一半连接断了（{net_words(e)}）")
    return LLMError(TRUNCATED, {"IncompleteRead": "连接在回复读完之前关了", "ValueError": "分块的长度读不懂",
                                "LineTooLong": "分块的长度行太长", "OverflowError": "长度数字太大"}.get(name, name))


class Exchange:
    """OpenAILLM 的 HTTP 部分（OpenAILLM 继承它）：连哪里（_connection，有代理时经代理）、发什么头、一个请求的来回
    （_exchange）。用的是 OpenAILLM.__init__ 定下的 _scheme、_host、_port、_prefix、_query、_proxy、_key，录制的 _rec、
    _reading，和它的 _redact、_shown_redacted。"""

    def _headers(self) -> dict:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            h["Authorization"] = f"Bearer {self._key}"
        return h

    def _connection(self, timeout: float):
        """(连接, 请求行里的目标, 代理要的头)。连接还没连上；有代理时连的是代理（https 经 CONNECT 隧道，密钥在 TLS 里面）。"""
        host = f"[{self._host}]" if ":" in self._host else self._host
        path = lambda endpoint: self._prefix + endpoint + (f"?{self._query}" if self._query else "")  # noqa: E731
        extra = {}
        p = self._proxy
        if p is not None and p.username is not None:
            cred = f"{urllib.parse.unquote(p.username)}:{urllib.parse.unquote(p.password or '')}"
            extra = {"Proxy-Authorization": "Basic " + base64.b64encode(cred.encode()).decode()}
        if self._scheme == "https":
            ctx = ssl.create_default_context()
            if p is None:
                return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=ctx), path, {}
            conn = http.client.HTTPSConnection(p.hostname, p.port or 80, timeout=timeout, context=ctx)
            conn.set_tunnel(self._host, self._port, headers=extra)
            return conn, path, {}
        if p is None:
            return http.client.HTTPConnection(self._host, self._port, timeout=timeout), path, {}
        conn = http.client.HTTPConnection(p.hostname, p.port or 80, timeout=timeout)
        netloc = host if self._port == 80 else f"{host}:{self._port}"
        return conn, lambda endpoint: f"http://{netloc}{path(endpoint)}", extra

    def _exchange(self, method: str, endpoint: str, payload: bytes | None, timeout: float, limit: int,
                  call: int | None = None):
        """一个 HTTP 请求，从连接到最后一个字节最多 timeout 秒，回复最多读 limit 字节，不跟转向。call：这是第几次调用
        （读 2xx 的正文时记进 _reading：Ctrl-C 时等它读完、录下）。
        返回 (状态码, 响应头, 正文)；状态码不是 2xx 时正文只读开头（_error_body：最多 ERROR_BODY_BYTES 字节、
        ERROR_READ_SECONDS 秒，里面是服务器说的原因）。出错抛 LLMError（kind 是失败的种类，
        detail 是给人看的一句，引用的服务器文字先抹密钥、再 shown()：反过来的话，shown 把夹在密钥中间的 ESC 写成
        \\x1b，多出来的字母、数字把密钥拆散，抹不掉了，屏幕上却照样读得出它（审读量过：响应头里的密钥每 4 个字夹一个
        ESC，开跑前的检查原样印出 sk-h\\x1bosti\\x1ble-t……）。"""
        deadline = time.monotonic() + timeout
        conn, target, extra = self._connection(timeout)
        # 正文的上限只数正文：分块的长度行可以带 6 万字节的"扩展"、正文后面可以有成千上万行 trailer、状态行前面可以有
        # 成千上万个 100 Continue，http.client 读了就扔，一个 45 字节的回复能让我们在期限内读上百 MB（审读量过）。
        # 所以从状态行起读的每个字节都算（代理对 CONNECT 的回答也是）：一共最多 2 × limit + WIRE_SLACK
        conn.response_class = functools.partial(_CappedResponse, cap=2 * limit + WIRE_SLACK)
        lock, state = threading.Lock(), {"done": False, "fired": False, "sock": None}
        # http.client 的 connect 给主机的每个地址各等整个 timeout（socket.create_connection），查地址（DNS）也不设期限：
        # 讲师报过，一个主机名有两个地址、第一个连不上时，3 秒的 --llm-timeout 过了 100 秒还没完。换成到期限为止的
        conn._create_connection = lambda address, _timeout=None, source=None: _connect_by(address, deadline, state, lock)

        def stop():                                # 看门的计时器：到点就把连接从底下关掉，卡在哪一步读都会醒
            with lock:
                if state["done"]:
                    return
                state["fired"] = True
                for s in (state["sock"], conn.sock):
                    if s is not None:
                        try:
                            socket.socket.shutdown(s, socket.SHUT_RDWR)
                        except (OSError, TypeError):
                            pass
                # TLS 握手时原来的套接字对象已经交给了 SSLSocket（自己的 fd 变成 -1，上面关不到它）：关连上时复制的那个
                # （同一个连接），握手也就醒了（讲师报过：握手卡住时 --llm-timeout 5 用了 10 秒）。以前按连上时记下的 fd
                # 号 fromfd：上面一关，读的线程醒来关掉连接，那个号就空了，这个进程里下一个连接拿到它，就被这里从底下
                # 关掉（helper 查到：测试进程里 make openevolve 的服务器的连接这样断过，记成"回复没传完整"）。复制的那个
                # 到 finally 里 done 以后才关，它一直是这个连接
                if state.get("dup") is not None:
                    try:
                        state["dup"].shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
        timer = threading.Timer(timeout, stop)
        timer.daemon = True
        timer.start()
        phase, r = "connect", None
        try:
            conn.connect()
            with lock:
                state["sock"] = conn.sock
                late = state["fired"] or time.monotonic() >= deadline
            if late:                               # 连上时已经过了期限：请求一个字节也不发（托管的 API 按请求收钱）
                raise socket.timeout()
            if self._key and self._scheme == "http" and not peer_is_loopback(conn.sock):   # 名字是本机，连上的却不是
                raise LLMError(UNREACHABLE, f"{self._host} 连到的不是本机的回环地址（{shown(conn.sock.getpeername()[0], 60)}），"
                                            "明文 http 不把密钥发过去")
            phase = "head"
            conn.request(method, target(endpoint), body=payload, headers={**self._headers(), **extra})
            r = conn.getresponse()
            status, headers = r.status, r.headers
            # 响应头不合规矩：不管状态码，和 make openevolve 用的 h11 一样拒掉（审读报过：同一个服务器两边叫法不同）
            if headers.defects:                    # 有一行不是"名字: 值"：http.client 把它和后面的头都当成了正文
                raise LLMError(BAD_HEADERS, "有一行不是“名字: 值”的样子")
            codings = [v.strip().lower() for v in headers.get_all("Transfer-Encoding") or []]
            if codings and codings != ["chunked"]:  # gzip, chunked 之类：http.client 照读成一段没解码的正文
                raise LLMError(BAD_HEADERS, f"Transfer-Encoding 写的是 {self._shown_redacted(', '.join(codings), 60)}（只认 chunked）")
            lengths = [v.strip() for v in headers.get_all("Content-Length") or []]
            if lengths and (len(set(lengths)) > 1 or not all(v.isascii() and v.isdigit() and len(v) <= 20 for v in lengths)):
                # 讲师报过：12abc、-1、1e3、+94、两个不一样的长度，这里照读（http.client 当它没写），OpenEvolve 那边是
                # "响应头不合规矩"：同一个服务器两处叫法不同。和 h11 一样，长度头只能是一个（或几个一样的）十进制数，
                # 最多 20 位
                raise LLMError(BAD_HEADERS, f"长度头 Content-Length 写的是 {self._shown_redacted(', '.join(lengths), 60)}")
            if not 200 <= status < 300:            # 正文只读开头一点、最多等 ERROR_READ_SECONDS 秒：里面是服务器说的原因
                return status, headers, _error_body(r, state["sock"], min(deadline, time.monotonic() + ERROR_READ_SECONDS))
            if r.length is not None and r.length > limit:
                raise LLMError(TOO_LONG, f"长度头说有 {shown(f'{r.length:,}', 40)} 字节，上限是 {limit:,}，没读")
            phase = "body"
            if call is not None:
                with self._rec:
                    self._reading.add(call)
            chunks, total = [], 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                state["sock"].settimeout(left)
                data = r.read1(65536)
                if not data:
                    break
                chunks.append(data)
                total += len(data)
                if total > limit:
                    raise LLMError(TOO_LONG, f"超过上限 {limit:,} 字节，没读完")
            if state["fired"]:
                raise socket.timeout()
            if r.length:                           # 长度头说还有，连接却关了
                raise http.client.IncompleteRead(b"", r.length)
            return status, headers, b"".join(chunks)
        except LLMError:
            raise
        except Exception as e:                     # Ctrl-C（KeyboardInterrupt）不在这里：照样往外抛
            with lock:
                fired = state["fired"]
            failure = _failure(e, phase, fired, timeout)
            raise LLMError(failure.kind, self._redact(failure.detail)) from None
        finally:
            with lock:
                state["done"] = True
                if state.get("dup") is not None:
                    state["dup"].close()
            timer.cancel()
            try:
                conn.close()
                if r is not None:                  # Connection: close 的回复把连接交给了 r（conn.close() 关不到它）：
                    r.close()                      # 出错时不关，连接要等异常和它的 traceback 都没了才关（审读报过）
            except Exception:                      # noqa: BLE001
                pass
