"""
OpenEvolve 的进程里（oe_child.py 装上）：它用的 openai 库的每个 HTTP 请求都有界——不跟转向、不解压、回复最多
MAX_REPLY_BYTES 字节、从发出请求算起最多读 config.yaml 的 timeout 秒（状态行、响应头、正文都算），openai 库自己不重试；
模型的回复进 OpenEvolve 之前抹掉密钥、转义控制字符（tame_replies）；失败起和 --llm 客户端同样的名字（careful_kind），
再问一次也一样的失败不按 retries 重试（NotRetried）。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库；装的时候 import openai、httpx、OpenEvolve。
"""

from __future__ import annotations

import time


class CarefulFailure(Exception):
    """OpenEvolve 的进程里，一次 LLM 调用以 --llm 客户端的某个种类失败（str 就是种类的名字：日志里的整句，
    failure_kind 原样认出来）。"""


class NotRetried(BaseException):
    """OpenEvolve 的进程里，一次 LLM 调用的失败再问一次也一样、还要再付一次钱：回复到了 token 上限、修改没写完
    （CUT_OFF），服务器说不收请求里的某个参数（REFUSED）。OpenEvolve 0.4.0 的 generate_with_context 对每个 Exception
    都按 config.yaml 的 retries 重试（讲师报过：每个被截断的回复按上限收两次钱）；它不是 Exception，穿过那个重试的
    循环，在 tame_replies 包的 generate_with_context 外面变回 CarefulFailure（日志里的种类和以前一样）。
    str 是种类的名字。"""


# 服务器说不收 OpenEvolve 发的某个参数（HTTP 400，evolve.openai_llm.refused_parameter）：失败的种类是这一句接上参数名
REFUSED = "LLM 回 HTTP 400，不收参数 "


def careful_kind(error: BaseException) -> str | None:
    """openai 库抛的异常（和它的 __cause__、__context__ 链）是不是 --llm 客户端起了名字的一种：回复超过 MAX_REPLY_BYTES、
    正文没传完、是工具调用……（careful_http 抛的 CarefulFailure，正文读到一半出的错也在那里变成"没传完整"）；状态行、
    响应头不合规矩（h11 在读到正文之前抛的 RemoteProtocolError：响应头太长、太多、写得离谱、状态行不是 HTTP 的）；
    HTTP 101（换协议：我们没要，h11 不认它）。不然 openai 库把它们都说成 "Connection error."——讲师报过：一个回了
    10 MB 的服务器被记作"连不上"，响应头 200 KB 的、回 101 的也是：服务器明明答了。只看异常的类型和 h11、httpcore 的
    固定说法，不看服务器写的字。"""
    from evolve.openai_llm import BAD_HEADERS, BAD_JSON, NO_CONTENT
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, CarefulFailure):
            return str(error)
        if type(error).__name__ == "RemoteProtocolError":          # 正文的错在 Capped 里就起了名字：这里是正文之前的
            said = str(error)
            if said.startswith("Server disconnected without sending a response"):
                return None                                        # 一个字没回就关了连接：和 --llm 一样是"连不上"
            if "_SWITCH_UPGRADE" in said:                          # h11："Received server _SWITCH_UPGRADE event without
                return "LLM 回 HTTP 101"                           # a pending proposal"，和 --llm 一样按状态码说
            return BAD_HEADERS                                     # "Receive buffer too long"、"illegal status line"……
        if isinstance(error, (ValueError, RecursionError)) and (   # 回复不是 JSON：openai 库的 JSONDecodeError、嵌得太深，
                type(error).__name__ == "JSONDecodeError" or isinstance(error, RecursionError)   # 或者 OpenEvolve 说
                or str(error).startswith("LLM endpoint returned a raw string")):               # "raw string"（一页 HTML）
            return BAD_JSON
        if isinstance(error, (IndexError, TypeError, AttributeError)) and _in_openevolve_call_api(error):
            return NO_CONTENT                                      # response.choices[0].message.content 取不到
        error = error.__cause__ or error.__context__
    return None


def _in_openevolve_call_api(error: BaseException) -> bool:
    """异常是不是在 OpenEvolve 的 OpenAILLM._call_api 里、取回复内容的那几行抛的（不是别处的程序错）。"""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name in ("_call_api", "<lambda>") and \
        tb.tb_frame.f_code.co_filename.replace("\\", "/").endswith("openevolve/llm/openai.py")


def careful_http() -> None:
    """OpenEvolve 用的 openai 库建的每个 HTTP 客户端（在 OpenEvolve 的进程里）：
    - 不跟转向（它默认跟：换了主机时不带密钥，可提示照发、回复照收）。讲师报过：config.yaml 的服务器把每个 POST
      转到另一个端口，20 个提议都是那个没配置过的服务器答的，结果却记在 config.yaml 的服务器名下。转向成了一次
      有名字的失败（和本讲的 --llm 客户端一样）。
    - 要不压缩的回复（Accept-Encoding: identity），服务器照样压缩了也不解压（一次"LLM 回复是压缩过的"），回复最多读
      MAX_REPLY_BYTES 字节：长度头说得更多，或者读到更多，就是一次"LLM 回复太长"（和 --llm 一样；careful_kind 给
      它起名字）。讲师报过：2 MB 的 gzip 解压成 2 GB，每次调用 16 秒 CPU、2 GB 内存，最后说成"连不上 LLM 服务器"。
    - 正文从发出请求算起最多读 config.yaml 的 timeout 秒（httpx 的 timeout 只管每一次读：一秒一个字节永远不超时）。
      讲师报过：一个挤牙膏的回复让读它的线程一直读下去，那个提议永远做不完，整个 make openevolve 被停下；现在它是
      一次"LLM 超时"，接着跑。状态行、响应头挤牙膏（或者 1xx 一个接一个来）也一样：每一次读最多等到期限
      （_whole_request_reads）。
    - openai 库自己不再重试（max_retries=0）：重试只由 OpenEvolve 按 config.yaml 的 retries 做。不然每次 OpenEvolve
      的重试里 openai 库还要再试 retries 次，一个提议最多发 (retries + 1)² 个按次收钱的请求。
    - 同一个回答和 --llm 说成同一种失败（tests/hostile_server.py 的 SAME_KIND 对照）：响应头 h11 放行、http.client
      不放行的（超过 100 个、一行超过 64 KB）也拒掉；正文读到一半出的错是"没传完整"（分块的长度行太长，h11 说的
      "Receive buffer too long" 和响应头太长时一样，careful_kind 按它出在哪儿分开）；不是 2xx 的只按状态码算；
      choices[0].message 按 message_text 变成文字（只有 tool_calls 的是"LLM 回的是工具调用"）。"""
    import importlib

    import openai
    from evolve.openai_llm import (BAD_HEADERS, COMPRESSED, CUT_OFF, ERROR_BODY_BYTES, ERROR_READ_SECONDS, MAX_HEAD_BYTES,
                                   MAX_REPLY_BYTES, STREAMED, TOO_LONG, TRUNCATED, LLMError, compressed, cut_reason, loads,
                                   looks_streamed, message_text, unfinished_edit)
    http = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])   # httpx 或 httpx2

    class Capped(http.SyncByteStream):
        def __init__(self, inner, deadline: float, limit: float, content_type: str = "", status_only: bool = False,
                     skip: bool = False):
            self.inner, self.deadline, self.limit, self.content_type = inner, deadline, limit, content_type
            self.status_only, self.skip = status_only, skip

        def __iter__(self):
            if self.status_only:                                     # 不是 2xx：只按状态码算（和 --llm 一样，见 careful）
                yield from self._error_text()
                return
            left, first = MAX_REPLY_BYTES, True
            try:
                for chunk in self.inner:
                    if time.monotonic() > self.deadline:             # 挤牙膏：整个请求到期了
                        raise http.ReadTimeout(f"整个请求超过 {self.limit:g} 秒")
                    left -= len(chunk)
                    if left < 0:
                        raise CarefulFailure(TOO_LONG)
                    if first and chunk.strip():                      # 没要流式，照样流式地回：和 --llm 同样的判断
                        first = False
                        if looks_streamed(chunk, self.content_type):
                            raise CarefulFailure(STREAMED)
                    yield chunk
            except (http.ReadError, http.RemoteProtocolError) as e:  # 响应头到了、正文传到一半连接被重置，或者分块的
                raise CarefulFailure(TRUNCATED) from e               # 长度行太长、读不懂（h11 说 "Receive buffer too long"，
                #                                                      和响应头太长时一样）：服务器已经答了，和 --llm 一样是
                #                                                      "回复没传完整"，不是"连不上"、也不是"响应头不合规矩"

        def _error_text(self):
            """不是 2xx 的回答的正文（openai 库把它放进 "Error code: 500 - …"）：和 --llm 一样只读开头（ERROR_BODY_BYTES
            字节、ERROR_READ_SECONDS 秒），读到上限、期限或者读坏了就停，不说别的。helper 查到：以前读到整个请求的期限，
            正文挤牙膏的 429、500 总是 OpenEvolve 的 wait_for 先到期：一次"LLM 超时"（停下时还劝人调大 timeout），
            --llm 说的是"LLM 回 HTTP 429"。"""
            left = 0 if self.skip else ERROR_BODY_BYTES
            until = min(self.deadline, time.monotonic() + ERROR_READ_SECONDS)
            if getattr(deadline, "at", None) is not None:
                deadline.at = min(deadline.at, until)                # 一次读也最多等到这时（_whole_request_reads）
            try:
                for chunk in self.inner:
                    if time.monotonic() > until or left <= 0:
                        return
                    left -= len(chunk)
                    yield chunk[:max(0, left + len(chunk))]
            except (http.ReadError, http.RemoteProtocolError, http.TimeoutException):   # 到期了也一样
                return

        def close(self):
            self.inner.close()

    def text_only(create):
        """client.chat.completions.create 拿到回复以后：choices[0].message 按 --llm 的规矩变成文字（message_text）——
        工具调用是一次"LLM 回的是工具调用（tool_calls），不是文字"（讲师报过：OpenEvolve 说 "LLM returned None
        response"、不算 LLM 调用失败），拒绝回答的话照原样当回复，分成几段的连起来。
        回复到了 token 上限、被截断（finish_reason 是 "length" 这类）而修改没写完时，是一次"回复到了 token 上限、被截断"
        （和 --llm 的 CUT_OFF 同一个判断，unfinished_edit）：OpenEvolve 0.4.0 只取 message.content、从不看 finish_reason，
        推理模型把 config.yaml 的 max_tokens 全用在推理上时回的是空的 content，它说成"没有 SEARCH/REPLACE"
        （No valid diffs），make openevolve 说"回复打不上、没改动"，跑完、退出码 0（helper 照 OpenAI 的推理模型写的假服务器
        报过）。现在按种类数、接连 4 个就停下，那句话说调大 config.yaml 的 max_tokens；不重试（NotRetried，见 tame_replies）。修改写完了的照样交给 OpenEvolve。"""
        def wrapped(*args, **kwargs):
            response = create(*args, **kwargs)
            try:
                choice = response.choices[0]
                message = choice.message
                fields = {k: getattr(message, k) for k in message.model_fields_set}   # 服务器写了的那几项
            except (AttributeError, IndexError, TypeError):
                return response                                      # 读不懂的交给 OpenEvolve（careful_kind 起名字）
            try:
                message.content = message_text(fields)
            except LLMError as e:
                raise CarefulFailure(e.kind) from None
            if cut_reason(getattr(choice, "finish_reason", None)) and unfinished_edit(message.content):
                raise CarefulFailure(CUT_OFF)
            return response
        return wrapped

    init = openai.OpenAI.__init__
    deadline = _whole_request_reads(http)

    def within_deadline(send):
        """请求读完（openai 库不要流式时，正文在 send 里就读完了）就撤掉这个线程上的期限：它只管这一个请求。
        不撤的话，这个线程之后在别的 httpx 客户端里的读（没有 started 写新的期限）一开始就是"整个请求超过 N 秒"。"""
        def send_and_clear(request, **kw):
            try:
                return send(request, **kw)
            finally:
                if not kw.get("stream"):
                    deadline.at = None
        return send_and_clear

    def no_follow(self, *args, **kwargs):
        limit = kwargs.get("timeout")
        limit = float(limit) if isinstance(limit, (int, float)) and limit > 0 else 60.0

        def started(request):
            request.extensions["careful_start"] = now = time.monotonic()
            deadline.at, deadline.limit = now + limit, limit        # 这个线程接下来的每一次读（状态行、响应头、正文）

        def careful(response):
            start = response.request.extensions.get("careful_start", time.monotonic())
            # 整数最多 100 位（更长的读成 ±inf，和 --llm 一样，见 openai_llm.loads）：审读报过，usage 里一个 5000 位的数
            # 让 Python 的 json 抛 ValueError，OpenEvolve 丢了能用的回复（"别的原因"），--llm 照收
            response.json = lambda **kwargs: loads(response.content)
            raw = response.headers.raw                        # h11 放行、http.client（--llm）不放行的响应头：一样拒掉
            if (len(raw) > 100 or any(len(k) + len(v) + 4 > 65536 for k, v in raw)   # 超过 100 个、一行超过 64 KB、
                    or sum(len(k) + len(v) + 4 for k, v in raw) > MAX_HEAD_BYTES):  # 加起来超过 100 KB（h11 只在响应头
                response.close()                                   # 分几次到时才查，一次到齐的 150 KB 放行：helper 报过时有时无）
                raise CarefulFailure(BAD_HEADERS)
            if not 200 <= response.status_code < 300:         # 和 --llm 一样只按状态码算（"LLM 回 HTTP 500"）：正文只是
                # openai 库那句话里的说明：太长的截断、读坏了的就到那里（审读量过：一个 400 的分块坏了，被说成"响应头
                # 不合规矩"；10 MB 的 500 被说成"回复太长"），压缩过的一个字也不读（不解压，也就没有 gzip 炸弹）
                skip = compressed(response.headers) is not None
                if skip:
                    response.headers["Content-Encoding"] = "identity"
                response.stream = Capped(response.stream, start + limit, limit, status_only=True, skip=skip)
                return
            if compressed(response.headers):                 # 不解压：和 --llm 一样是一次"回复是压缩过的"
                response.close()
                raise CarefulFailure(COMPRESSED)
            length = response.headers.get("content-length", "").strip()
            if length.isascii() and length.isdigit() and int(length) > MAX_REPLY_BYTES:
                response.close()
                raise CarefulFailure(TOO_LONG)
            response.stream = Capped(response.stream, start + limit, limit, response.headers.get("content-type", ""))
        kwargs["max_retries"] = 0
        if "http_client" not in kwargs:
            client = openai.DefaultHttpxClient(follow_redirects=False, headers={"Accept-Encoding": "identity"},
                                               event_hooks={"request": [started], "response": [careful]})
            client.send = within_deadline(client.send)
            kwargs["http_client"] = client
        init(self, *args, **kwargs)
        self.chat.completions.create = text_only(self.chat.completions.create)
    openai.OpenAI.__init__ = no_follow


def _whole_request_reads(http):
    """httpx 的 timeout 只管每一次读：状态行和响应头一秒一个字节地来，读它们的线程永远等不到超时（OpenEvolve 的
    asyncio.wait_for 到时放弃了，可线程还在读，收尾时等着它，STALL 的看门最后停下整个运行）。这里让 httpcore 的每一次读
    最多等到这个线程上的请求的期限（careful_http 的 started 写进返回的 threading.local：at、limit），到了就是 httpcore 的
    ReadTimeout——和正文挤牙膏一样，一个提议一次"LLM 超时"，接着跑。100 Continue 之类的 1xx 一个接一个来时也一样。
    OpenEvolve 在线程里调用 openai 库：一次调用从头到尾在一个线程里，每个请求开始时写期限。httpcore 换了写法、找不到
    那两个类时什么都不改（还有 STALL 的看门）。"""
    import importlib
    import threading
    try:
        sync = importlib.import_module(http.__name__.replace("httpx", "httpcore") + "._backends.sync")
        core = importlib.import_module(http.__name__.replace("httpx", "httpcore"))
    except ImportError:
        return threading.local()
    classes = [c for c in (getattr(sync, "SyncStream", None), getattr(sync, "TLSinTLSStream", None)) if c is not None]
    # 已经改过（这个进程里第二次 careful_http，测试里常见）：用改过的 read 看的那一个期限。以前每次都新建一个，
    # 第二次装上的 started 写进新的、read 却还看第一次的：响应头又没有期限了（挤牙膏的响应头等到服务器断开）
    patched = [getattr(c.read, "whole_request") for c in classes if getattr(c.read, "whole_request", None) is not None]
    deadline = patched[0] if patched else threading.local()
    for cls in classes:
        read = cls.read
        if getattr(read, "whole_request", None) is not None:
            continue

        def capped(self, max_bytes, timeout=None, _read=read):
            at = getattr(deadline, "at", None)
            if at is not None:
                left = at - time.monotonic()
                if left <= 0:
                    raise core.ReadTimeout(f"整个请求超过 {deadline.limit:g} 秒")
                timeout = left if timeout is None else min(timeout, left)
            return _read(self, max_bytes, timeout)
        capped.whole_request = deadline
        cls.read = capped
    return deadline


def tame_replies(keys) -> None:
    """模型的回复进 OpenEvolve 之前：抹掉密钥、控制字符换成看得见的转义（换行、制表符照旧）。讲师报过：服务器把收到的
    密钥写进回复的注释里，它就原样进了 evolution_trace.jsonl、best/best_program.py、result.json（日志是干净的），
    还带着 ESC 和 OSC 8 的终端序列——停下时那句话正让人去看这些文件。回复是 DSL 的代码，控制字符在里面本来就不合法。
    调用失败时，careful_kind 认得出的换成 CarefulFailure（日志里是和 --llm 一样的种类名字）。"""
    import openai
    from openevolve.llm import openai as oe_openai
    from evolve.openai_llm import CUT_OFF, redact, refused_parameter, shown
    call = oe_openai.OpenAILLM._call_api
    generate = oe_openai.OpenAILLM.generate_with_context

    def refused(e: BaseException) -> str | None:
        """e 是服务器说不收某个参数的 HTTP 400 时的种类（REFUSED 接上抹了密钥、转义、截短的参数名），不是 None。"""
        if not (isinstance(e, openai.APIStatusError) and e.status_code == 400):
            return None
        try:
            raw = e.response.content                     # careful_http 的 Capped 读的：有上限、有期限
        except Exception:                                # noqa: BLE001  读不了就不认
            return None
        param = refused_parameter(400, raw if isinstance(raw, bytes) else b"")
        if param is None:
            return None
        for key in keys:
            param = redact(param, key)
        return REFUSED + shown(param, 40)

    async def tamed(self, params):
        try:
            text = await call(self, params)
        except Exception as e:
            if said := refused(e):
                raise NotRetried(said) from None         # 再问一次服务器还是不收
            if kind := careful_kind(e):
                raise (NotRetried if kind == CUT_OFF else CarefulFailure)(kind) from None   # 被截断的：再问一次也按上限收钱
            raise
        usage = getattr(self, "last_usage", None)          # 讲师的复查报过："prompt_tokens": "…"（不是整数）让 OpenEvolve
        if isinstance(usage, dict) and not all(           # 每个提议都在加总时出错、说成"回复打不上"，从不放弃
                type(usage.get(k)) is int and 0 <= usage[k] < 10 ** 12
                for k in ("prompt_tokens", "completion_tokens", "total_tokens")):
            self.last_usage = None                         # 当作服务器没报用量
        if not isinstance(text, str):
            return text
        for key in keys:
            text = redact(text, key)
        text = text.replace("\r\n", "\n")
        return shown(text, None, lines=True)

    async def once(self, *args, **kwargs):
        try:
            return await generate(self, *args, **kwargs)
        except NotRetried as e:                          # 穿过了 OpenEvolve 的重试：变回一次普通的失败（日志里的种类）
            raise CarefulFailure(str(e)) from None
    oe_openai.OpenAILLM._call_api = tamed
    oe_openai.OpenAILLM.generate_with_context = once
