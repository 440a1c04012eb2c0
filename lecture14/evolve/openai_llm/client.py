"""
OpenAILLM：真的语言模型，换下 MockLLM。说 OpenAI 兼容的 chat-completions 协议（本机的 ollama、llama.cpp 的
server、vLLM，或者托管的 API 都说这个），只用标准库（http.client），不加任何依赖。接口见 backend.py；一个请求的来回在
wire.py（Exchange），录制在 recording.py（Recording）。

    POST {base_url}/chat/completions   model、messages（系统提示 SYSTEM_PROMPT + 用户消息 Prompt.text()）、
                                       temperature、max_tokens、seed（服务器支持的话同样的请求给同样的回复）
    读 choices[0].message.content 和 usage（prompt_tokens、completion_tokens，服务器给了才有）

- 推理模型（OpenAI 的 o 系列、gpt-5 一族）：不收 max_tokens、只收默认的 temperature，对上面那样的请求回 HTTP 400
  （{"error": {"param": "max_tokens", "code": "unsupported_parameter", …}}，temperature 是 "unsupported_value"；
  rejected_parameter 认它们）。认出来以后这次运行以后的请求都发 REASONING_PARAMS（max_completion_tokens，推理 token
  也算在里面，所以给得多；不发 temperature，用模型默认的），被拒的调用换了参数重发一次（算进请求数，不算失败），
  标准错误上说一句（switch_sentence，只说一次）；几个调用同时被拒只换一次；换了以后还被拒是一次普通的失败，不来回换。
  别的 400、别的服务器（ollama、llama.cpp、vLLM）照旧收到 temperature、max_tokens。helper 的复查照 OpenAI 的回答写了
  假服务器：以前这样的模型每个请求都被拒，一个提议也用不上。
- 密钥：环境变量 OPENAI_API_KEY 有就放进 Authorization 头（本机的服务器不需要）；只发给 --llm 那个地址（协议、主机、
  端口都一样），而且只经 https:// 或明文发给本机（别的机器的 http:// 地址带着它时一句话、一个字节都不发）；不打印、
  不记日志、不写进文件，服务器回的回复里要是出现了它，也先抹掉（api_key.py）。
- 429 和 5xx 按 Retry-After（没有就指数退避）重试几次（上一次调用已经失败了就不重试；一次调用里加起来要等
  MAX_WAIT 秒以上就不等，种类里说出来；等 WAIT_SAID 秒以上时往标准错误说一句）；回复已经开始传回来（2xx）以后断了
  不重试（种类是"回复没传完整"：服务器已经答了）；成本账里有真的发出去几个请求（重试也算）；状态码不在 100–599 里
  是协议错误，不重试。
  连续 GIVE_UP_AFTER 次调用失败（不管哪一种：连不上、超时、HTTP 错误、读不懂……，回复到了 token 上限、修改没写完的
  CUT_OFF 也算：每个都按上限收了钱，总是写不完的模型不该被问上一千次），就不再调用：以后的提议立刻
  失败（种类 GAVE_UP），进化用已有的东西跑完（04、05 在这句后面说最好的程序不会丢）。能用的回复（写完了的修改，
  被截断的也算）让这一串从头数起。接连的是被截断时，放弃的那句（gave_up_sentence）只说原因。
- 调用等了 WAITING_SAID 秒还没回来（CPU 上的模型、排着队的服务器、不再回答的服务器）：每 WAITING_SAID 秒用 waiting
  说一句在等哪个模型的第几次调用、等了多久、一个请求最多等多久。
- check()：开跑之前看看服务器在不在（GET {base_url}/models），连不上、拒绝了我们、转向、回的东西读不懂、没有这个
  模型，都抛 ServerUnreachable（一句话），脚本印一行、退出码 2。
"""

import json
import os
import threading
import time
import urllib.parse
import urllib.request

from .address import ENDPOINTS, clean_url, is_loopback, proxy_url, said_url
from .api_key import redact
from .backend import Backend
from .calls import Call, params_said, unfinished
from .errors import (BAD_HEADERS, COMMAND_LINE, COMPRESSED, CUT_OFF, GAVE_UP, MOCK_BUG, MOCK_BUG_HEADER, REDIRECT,
                     REDIRECT_CODES, TIMEOUT_KIND, TOO_LONG, TRUNCATED, UNREACHABLE, LLMError, Names, ServerUnreachable)
from .network import redirect_sentence, unreachable_advice
from .prompt import SYSTEM_PROMPT
from .recording import Recording
from .reply import compressed, read_reply, refused_parameter, rejected_parameter, retry_after, server_words
from .settings import (BACKOFF, CHECK_TIMEOUT, CONCURRENCY, GIVE_UP_AFTER, MAX_COMPLETION_TOKENS, MAX_MODELS_BYTES,
                       MAX_NAME, MAX_REPLY_BYTES, MAX_TOKENS, MAX_WAIT, REASONING_PARAMS, RETRIES, TEMPERATURE, TIMEOUT,
                       WAIT_SAID, WAITING_SAID)
from .text import loads, shown
from .wire import Exchange


class OpenAILLM(Recording, Exchange, Backend):
    """OpenAI 兼容的 chat-completions 服务器。base_url 例如 http://127.0.0.1:11434/v1（ollama）。"""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = TIMEOUT,
                 retries: int = RETRIES, backoff: float = BACKOFF, max_wait: float = MAX_WAIT,
                 temperature: float = TEMPERATURE, max_tokens: int = MAX_TOKENS,
                 max_completion_tokens: int = MAX_COMPLETION_TOKENS, seed: int | None = 0,
                 concurrency: int = CONCURRENCY, record: str | None = None, give_up_after: int = GIVE_UP_AFTER,
                 notify=None, names: Names = COMMAND_LINE, waiting=None):
        """api_key 不给就读环境变量 OPENAI_API_KEY。seed=None 时不发 seed；否则第 n 次调用发 seed + n。
        max_tokens：请求里的 max_tokens；max_completion_tokens：换成推理模型的参数以后发的上限（--llm-max-tokens 两个都给）。
        record：录制文件的路径（JSON Lines），None 不录。notify：决定不再调用时用一句话调它一次（None 不说）。
        names：出错的那句话里怎么称呼地址和模型名（默认是命令行的 --llm、--model）。
        waiting：有调用等了 WAITING_SAID 秒还没回来时，每 WAITING_SAID 秒用一句话调它一次（None 不说；脚本传
        runner.progress）。"""
        super().__init__()
        self.names = names
        try:
            u = urllib.parse.urlsplit(base_url)
            u.hostname                             # noqa: B018  "http://[zz]:1"：方括号里不是 IPv6 地址，这里就抛
        except ValueError:
            raise ValueError(f"{names.address} {said_url(base_url)} 读不成一个地址（方括号里要是 IPv6 地址，"
                             "例如 http://[::1]:11434/v1）") from None
        try:
            port = u.port
        except ValueError:
            port = -1
        if u.scheme in ("http", "https") and u.hostname and port == -1:
            raise ValueError(f"{names.address} {said_url(base_url)} 里的端口不对：端口是 1 到 65535 的整数"
                             "（例如 http://127.0.0.1:11434/v1 的 11434）")
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"{names.address}要是 http:// 或 https:// 开头的地址（例如 http://127.0.0.1:11434/v1），"
                             f"不是 {said_url(base_url)}")
        if any(c.isspace() for c in base_url) or not u.hostname.isascii():   # 讲师报过：空格说成"响应头不合规矩
            raise ValueError(f"{names.address} {said_url(base_url)} 里有空格或主机名里有 ASCII 以外的字符："  # （InvalidURL）"
                             "地址里不能有空格；中文之类的主机名要写成 xn-- 开头的写法（punycode）")
        odd = next((c for c in base_url if not "!" <= c <= "~"), None)   # 路径、查询串里的控制字符、全角字、零宽空格：
        if odd is not None:                        # http.client 发不出去，以前说成服务器"回的响应头不合规矩（UnicodeEncodeError）"，
            raise ValueError(                      # 地址原样印到终端（ESC 序列照样起作用）
                f"{names.address} {said_url(base_url)} 里有控制字符或 ASCII 以外的字符（{shown(odd)}，U+{ord(odd):04X}；"
                "多半是复制时带进来的全角字符或看不见的字符）：地址只能是看得见的 ASCII 字符，"
                "路径和查询串里别的字符要写成 %xx（百分号编码）")
        if u.username is not None or u.password is not None:   # 讲师报过：http://user:pass@… 悄悄不发，服务器回 401
            raise ValueError(f"{names.address} {said_url(base_url)} 里写了用户名或密码（@ 前面那段）：它们不会发给服务器；"
                             f"去掉它；密钥另外给：{names.key}")
        if u.port == 0:                            # http.client 把端口 0 当成"没写"，连的是 80：说一句，别悄悄换
            raise ValueError(f"{names.address} {said_url(base_url)} 的端口是 0：端口要是 1 到 65535 的整数"
                             "（例如 http://127.0.0.1:11434/v1 的 11434）")
        endpoint = next((e for e in ENDPOINTS if u.path.rstrip("/").lower().endswith(e)), None)
        if endpoint is not None:                   # helper 的复查报过：贴了整个接口地址 …/v1/chat/completions，开跑前的
            base = clean_url(base_url)              # 检查没拦住（前缀下 404 照样开跑），四次调用都是 HTTP 404
            raise ValueError(f"{names.address} {shown(base, 100)} 写到了接口 {endpoint}：地址只写到它前面"
                             f"（{shown(base[:len(base) - len(endpoint)] or base, 100)}，通常以 /v1 结尾），{endpoint} 由这里接上")
        if not isinstance(model, str) or not model or shown(model, None) != model or len(model) > MAX_NAME:
            raise ValueError(f"{names.model} 要是一个不带控制字符、不超过 {MAX_NAME} 个字符的名字（例如 qwen2.5-coder:7b），"
                             + (f"不是 {shown(model, 100)}" if model else "不能是空的"))
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = os.environ.get("OPENAI_API_KEY") if api_key is None else api_key
        if self._key and not all(" " < c < "\x7f" for c in self._key):      # 放不进 HTTP 头：说一句，不印它
            raise ValueError(f"{names.key.split('（')[0]} 里有空格、换行或者 ASCII 以外的字符（复制的时候多带了什么？）；"
                             "密钥只能是可见的 ASCII 字符")          # 讲师报过：config.yaml 的 api_key 坏了，却说环境变量
        # 环境变量里的密钥（讲师付钱的那个）经明文 http 发给别的机器，一路上的每一跳（同一个网里的机器、代理、路由器）
        # 都看得到它：不发。本机的服务器（127.x、::1、localhost）不出这台机器；别的机器上的 ollama 之类不要密钥，这次
        # 运行把它设成空就行。直接给的 api_key（OpenEvolve 的 config.yaml 里写着的占位符）不是秘密，不拦
        if api_key is None and self._key and u.scheme == "http" and not is_loopback(u.hostname):
            raise ValueError(f"环境变量 OPENAI_API_KEY 里有密钥，{names.address} {shown(clean_url(base_url), 100)} 却是明文 "
                             "http://、又不是本机的回环地址（127.x、::1、localhost）：一路上谁都看得到密钥，所以不发。托管的 API 用 https:// 的地址；"
                             f"别的机器上不要密钥的服务器（ollama 之类），{names.no_key}")
        self.timeout, self.retries, self.backoff, self.max_wait = timeout, retries, backoff, max_wait
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.max_completion_tokens = max_completion_tokens
        self.reasoning_params = {"max_completion_tokens": max_completion_tokens}   # 换成推理模型的参数以后发的那组
        self.concurrency = max(1, int(concurrency))
        self.give_up_after, self.notify, self.waiting = give_up_after, notify, waiting
        self._in_flight: dict[int, float] = {}       # 正在等回复的调用：第几次 -> 开始的时刻（time.monotonic）
        self._watcher = None                         # 报"还在等"的线程（第一次调用时才开，close 时停）
        self._closed = threading.Event()
        self.record_stopped: str | None = None       # 录制半路写不进去时的那句话（_stop_recording）
        self.give_up_tail = ""                       # 放弃那句后面接的话（进化的 04、05："最好的程序不会丢"）
        # 接连失败按提议的顺序数（和 lost_llm、回放数的一样）：同时在路上的几个，后面的先回来时先留着（_outcomes），
        # 等前面的回来再数（以前按回来的先后数：第 3 个能用的回复比第 4 个没写完的晚回来，就算成了接连 4 次失败）
        self._failed_in_a_row = 0                  # 连续几次调用失败（不管哪一种，被截断、修改没写完的也算）
        self._cut_in_a_row: list[Call] = []        # 其中被截断、修改没写完的那几次（放弃的那句说原因是上限）
        self._settled = 0                          # 按提议的顺序数到了第几次调用
        self._outcomes: dict[int, tuple] = {}      # 回来了、还没数的：第几次 -> (失败的种类或 None, 服务器说的, 被截断的 Call)
        self._last_failed = False                  # 最后回来的那次调用失败了（没拿到回复）：之后的调用不重试
        self.gave_up: str | None = None            # 决定不再调用时的那句话
        self.last_said: tuple[str, str] | None = None   # 最后一次 HTTP 错误时服务器说的原因：(种类, "服务器说：“…”")
        self.switched: str | None = None           # 换成推理模型的参数时说的那句话（_switch；以后的请求都发 REASONING_PARAMS）
        self._record = None
        # 录制文件里的调用按提议的顺序，一次调用一回来就写（讲师报过：以前一批全回来才写，Ctrl-C 时这一批里已经回来、
        # 付了钱的回复都没录下）。这几样都在 self._rec 下面改
        self._rec = threading.Condition()
        self._next_record = 0                        # 文件里下一行该是第几次调用
        self._held: dict[int, bytes] = {}            # 回来了、它前面还有调用在路上的：写好的一行先留着
        self._reading: set[int] = set()              # 正在读回复正文（状态行是 2xx）的调用：Ctrl-C 时等它们读完
        self._cut = False                            # 录制被 Ctrl-C 截住了：不再写，也不写结束行
        if record is not None:
            self.record_to(record)
        # 只和这一个地方说话：协议、主机、端口、路径前缀都定死在这里，之后哪个请求都不换地方（不跟转向）
        self._scheme, self._host, self._port = u.scheme, u.hostname, port or (443 if u.scheme == "https" else 80)
        self._prefix, self._query = u.path.rstrip("/"), u.query
        # 本机的地址（127.x.x.x 的任何写法、::1、localhost）不走代理（环境里的 http_proxy 是给外网用的）；别的地址按
        # 环境变量（http_proxy、https_proxy、no_proxy）走，和 urllib 一样。带着密钥的只有 https（明文 http 带密钥只发给
        # 本机，上面拦过了）：经代理时走 CONNECT 隧道，密钥在 TLS 里面，代理看不到
        # 只设了 all_proxy（ALL_PROXY）时用它——是 http:// 的代理时（OpenEvolve 用的 httpx 也认它；讲师报过：只设了
        # ALL_PROXY 的网里，--llm 直接去连、说"域名解析失败"）；socks 之类的 all_proxy 这个客户端走不了，照旧不用
        proxies = {} if is_loopback(self._host) or urllib.request.proxy_bypass(self._host) else urllib.request.getproxies()
        proxy, self.proxy_env = proxies.get(u.scheme), f"{u.scheme}_proxy（或 {u.scheme.upper()}_PROXY）"
        every = proxies.get("all", "").strip()
        if not proxy and every:
            scheme = every.split("://", 1)[0].lower() if "://" in every else "http"   # 不写协议的照 http（和 http_proxy 一样）
            if scheme == "http":
                proxy, self.proxy_env = every, "all_proxy（或 ALL_PROXY）"
            elif notify is not None:                # 讲师的复查报过：socks5://、https:// 的 ALL_PROXY 一声不响地不用，
                notify(f"（环境变量 ALL_PROXY 是 {shown(scheme, 20)}:// 的代理，这个客户端只会经 http:// 的代理连："   # 连不上时
                       "这次不经代理、直接连 LLM 服务器）")                                                      # 只说域名
        self.proxy_env = self.proxy_env if proxy else None
        self._proxy = proxy_url(proxy, self.proxy_env) if proxy else None

    def proxy_said(self) -> str | None:
        """这次经的代理，一句话里怎么说（不带代理的用户名和密码）；不经代理是 None。"""
        if self._proxy is None:
            return None
        p = self._proxy
        host = f"[{p.hostname}]" if ":" in p.hostname else p.hostname
        return f"环境变量 {self.proxy_env}的代理 http://{host}:{p.port or 80}"       # 后面接字的地方空一格：链接不粘字

    def __repr__(self) -> str:                    # 不带密钥
        return f"OpenAILLM({clean_url(self.base_url)!r}, model={self.model!r}, concurrency={self.concurrency})"

    def close(self) -> None:
        self._closed.set()                           # 报"还在等"的线程停下
        with self._rec:
            if self._held and self._record is not None:   # 还留着回来了的调用：Ctrl-C 连按两下，第二下落在 _interrupted
                self._cut_here()                     # 写下它们之前（脚本的 finally 接着就 close）。照 _interrupted 那样
            else:                                    # 写在还在路上的那次后面，不写结束行
                self._close_file()

    def _log(self, call: Call) -> None:
        super()._log(call)
        self._keep(call)                             # 做它的线程多半已经录下了：不再写

    def _batch(self) -> None:
        with self._rec:                              # 上一批半路出了程序错（不是 Ctrl-C）时留着的，不属于这一批
            self._held.clear()
        with self._lock:                             # 接连失败从这一批的第一次调用接着数（上一批半路出了程序错时
            self._settled = len(self.calls)          # 没记下的那几次不算）
            self._outcomes.clear()

    def _redact(self, text: str) -> str:
        return redact(text, self._key)

    def _shown_redacted(self, text: str, limit: int) -> str:
        """服务器给的一段文字印出来的样子：先抹密钥再截短（截短以后密钥只剩半截，就抹不掉了；讲师报过截出半截密钥），
        花的时间和 limit 成正比、和原文多长无关：只抹开头够长的一段（密钥要有连着的 _FRAGMENT 个字母、数字在印出来的
        limit 个字符里才认得出，它们都在这一段里）。"""
        scan = 4 * limit + 1000
        if len(text) <= scan:
            return shown(self._redact(text), limit)
        return shown(self._redact(text[:scan]), limit, total=len(text))   # 只写一次"…（共 N 个字符）"，N 是整段的

    def _server_said(self, raw: bytes, headers, status: int | None = None) -> str:
        """不是 2xx 的回答里服务器说的原因，印出来的样子："服务器说：“…”"（抹了密钥、控制字符转义、最多 200 个字符）；
        正文里没有就是 ""。status 是 400、正文说不收某个参数（refused_parameter）而说明里没写是哪个时（代理只转来
        param、code，或者 message 是空的），接着说"不收参数 …"（helper 报过：那时放弃的那句只说"LLM 回 HTTP 400"）。"""
        words = server_words(raw, headers.get("Content-Type", ""))
        said = f"服务器说：“{self._shown_redacted(words, 200)}”" if words else ""
        param = refused_parameter(status, raw)
        if param is not None and not (words and param in words):
            said = (said + "，" if said else "服务器说") + f"不收参数 {self._shown_redacted(param, 40)}"
        return said

    def check(self, timeout: float = CHECK_TIMEOUT) -> None:
        """开跑之前：服务器在不在、认不认我们的密钥、有没有这个模型。有问题抛 ServerUnreachable（一句话）。
        转向、回的东西读不懂（不是 JSON、嵌得太深、太长、模型名不是字符串……）也是：它不像 OpenAI 兼容接口。
        那句话里引用的服务器文字（模型名、转向地址……）抹掉了密钥：服务器可以把收到的密钥放进去，讲师的屏幕上不能出现它。"""
        try:
            self._check(timeout)
        except ServerUnreachable as e:
            raise ServerUnreachable(self._redact(e.kind), self._redact(e.detail)) from None

    def _check(self, timeout: float) -> None:
        where = clean_url(self.base_url)
        timeout = min(timeout, self.timeout)
        try:
            status, headers, raw = self._exchange("GET", "/models", None, timeout, MAX_MODELS_BYTES)
        except LLMError as e:
            if e.kind == TIMEOUT_KIND:
                via = self.proxy_said()
                raise ServerUnreachable(f"LLM 服务器 {where} 在 {timeout:g} 秒内没有回完 GET /models"
                                        + (f"（这次是经{via} 连的）" if via else ""),
                                        ("检查代理在不在、让不让连这个地址，用不着代理的话这次运行不设那个环境变量；"
                                         if via else "") + f"检查 {self.names.address}，或者等它不忙了再试") from None
            if e.kind == UNREACHABLE:
                raise ServerUnreachable(f"连不上 LLM 服务器 {where}（{e.detail}）",
                                        unreachable_advice(e.detail, self.names, self.proxy_said(), self._scheme)) from None
            what = {TOO_LONG: "的回复太长", TRUNCATED: "的回复没传完整", BAD_HEADERS: "回的响应头不合规矩"}.get(e.kind, "出错了")
            raise ServerUnreachable(f"LLM 服务器 {where} 对 GET /models {what}（{e.detail}）",
                                    f"{self.names.address}要指向 OpenAI 兼容的接口（地址通常以 /v1 结尾）") from None
        if status in REDIRECT_CODES:
            location = headers.get("Location")           # 先抹掉密钥再截短（截短以后密钥只剩半截，就抹不掉了）
            raise ServerUnreachable(*redirect_sentence(where, status, None if location is None else
                                                       self._redact(location), self.names))
        said = "" if 200 <= status < 300 else self._server_said(raw, headers)   # 服务器说的原因（401 的"密钥不对"、
        said = f"，{said}" if said else ""                                        # 403 的"没有权限用这个模型"……）
        if status in (401, 403):
            raise ServerUnreachable(f"LLM 服务器 {where} 拒绝了请求（HTTP {status}）{said}", "检查" + (" " if self.names.key[:1].isascii() else "") + self.names.key)
        if not 100 <= status <= 599:
            raise ServerUnreachable(f"LLM 服务器 {where} 对 GET /models 回了不合规矩的状态码 {status}（HTTP 只有 100–599）",
                                    f"{self.names.address}要指向 OpenAI 兼容的接口（地址通常以 /v1 结尾）")
        if status == 407 or (self._proxy is not None and status in (502, 503, 504)):   # 代理回的：不是 LLM 服务器
            raise ServerUnreachable(                  # （讲师报过：407 照样开跑，四次调用都是 HTTP 407，一句也没提代理）
                f"经{self.proxy_said() or '代理'} 连 LLM 服务器 {where} 时回了 HTTP {status}"
                + ("（代理要用户名和密码）" if status == 407 else "（代理连不上它，或者它没回答）") + said,
                "代理的用户名、密码写在那个环境变量里（http://用户名:密码@主机:端口）；用不着代理的话这次运行不设它"
                if status == 407 else f"检查 {self.names.address}和代理；用不着代理的话这次运行不设那个环境变量")
        if status == 404 and self._prefix in ("", "/"):   # 忘了 /v1（ollama 的 http://127.0.0.1:11434）：
            raise ServerUnreachable(                  # 每个请求都会是 404，整个运行一个提议也没问到（讲师报过）
                f"LLM 服务器 {where} 在，但没有 GET /models（HTTP 404）{said}",
                f"{self.names.address}通常以 /v1 结尾（例如 http://127.0.0.1:11434/v1）")
        if status == 400:                           # 不带正文的 GET 本来不会"请求不对"：常见的是 http:// 对着 https 的端口
            raise ServerUnreachable(                  # （讲师报过：它照样开跑，每个提议都是 HTTP 400）
                f"LLM 服务器 {where} 对 GET /models 回了 HTTP 400（请求不对）{said}",
                (f"那个端口可能说的是 https（收到明文 http 的请求就回 400）：把 {self.names.address}里的 http:// 换成 "
                 "https:// 试试；不然检查它是不是 OpenAI 兼容的接口（地址通常以 /v1 结尾）") if self._scheme == "http" else
                f"{self.names.address}要指向 OpenAI 兼容的接口（地址通常以 /v1 结尾）")
        if not 200 <= status < 300:
            return                                  # 别的状态（比如 …/v1 下面没有 /models）：至少服务器在，开跑
        if encoding := compressed(headers):         # 讲师报过：说成"不是 JSON……地址要指向 OpenAI 兼容的接口"，地址是对的
            raise ServerUnreachable(f"LLM 服务器 {where} 对 GET /models 的回答是压缩过的（Content-Encoding: "
                                    f"{self._shown_redacted(encoding, 40)}），请求里说的是不压缩（Accept-Encoding: identity），不解压",
                                    "压缩的是服务器或者中间的代理：关掉它们对这个地址的压缩再试")
        try:
            data = loads(raw)
        except (ValueError, RecursionError) as e:
            why = "嵌得太深" if isinstance(e, RecursionError) else "不是 JSON"
            raise ServerUnreachable(f"LLM 服务器 {where} 对 GET /models 的回答读不懂（{why}，{len(raw):,} 字节）",
                                    f"{self.names.address}要指向 OpenAI 兼容的接口（地址通常以 /v1 结尾）") from None
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            return                                  # 不是 OpenAI 的模型列表：查不了有没有这个模型，开跑
        names = [m.get("id") if isinstance(m, dict) else m for m in models]
        odd = next((n for n in names if not isinstance(n, str)), None)
        if any(not isinstance(n, str) for n in names):
            raise ServerUnreachable(f"LLM 服务器 {where} 的 GET /models 里有不是字符串的模型名"
                                    f"（{self._shown_redacted(json.dumps(odd), 60)}）",
                                    f"它不像 OpenAI 兼容的接口；检查 {self.names.address}")
        # 只抹要印出来的那几个（讲师的复查报过：两百万个模型名个个抹一遍密钥，--llm-timeout 1 的开跑前检查用了 31 秒）；
        # 有没有这个模型按原样比
        if names and self.model not in set(names):
            listed = "、".join(self._shown_redacted(n, 80) for n in names[:8]) + (f" 等 {len(names):,} 个" if len(names) > 8 else "")
            raise ServerUnreachable(f"LLM 服务器 {where} 上没有模型 {self.model}",
                                    f"它有：{listed}；用 {self.names.model} 选一个（ollama 要先 ollama pull）")

    def _fetch(self, n: int, text: str) -> Call:
        """第 n 次调用：发请求（该重试就重试），录下（_keep），返回 Call；失败的 Call 的 error 是种类。"""
        try:
            call = self._ask(n, text)
        except BaseException:
            with self._rec:
                self._reading.discard(n)
                self._rec.notify_all()
            raise
        self._keep(call)
        return call

    def _ask(self, n: int, text: str) -> Call:
        t0 = time.perf_counter()
        reply, usage, model, cut, error, requests = None, {}, None, None, None, 0
        how: dict = {"params": None, "resent": None}     # _attempts 填：最后一个请求发的参数、换参数重发过没有
        self._begin(n)
        try:
            reply, usage, model, cut, requests = self._request(n, text, how)
        except LLMError as e:
            error, requests = e.kind, e.requests
        finally:
            with self._lock:
                self._in_flight.pop(n, None)
        latency = round(time.perf_counter() - t0, 4)
        num = lambda v: v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**12 else None  # noqa: E731
        # 服务器报的模型名最多录 MAX_NAME 个字符：回放只认这么长的（以前录下一个 300 个字符的模型名，回放说这一行
        # "不是 --record 写的格式"，花钱录的文件放不了）。先抹密钥再截短（截短以后密钥只剩半截，就抹不掉了）
        model = self._redact(model[:MAX_NAME * 4 + 1000]) if isinstance(model, str) else None
        call = Call(n, text, None if reply is None else self._redact(reply), error, latency,
                    num(usage.get("prompt_tokens")), num(usage.get("completion_tokens")),
                    model if model is None or len(model) <= MAX_NAME else model[:MAX_NAME - 1] + "…", requests,
                    how["params"], how["resent"], cut)
        if error is None:                            # 拿到了回复：修改没写完（被截断）是一次失败，能用的让这一串从头数起
            cut_short = unfinished(call)             # （照录下的那一行判断，和 lost_llm 回放时数的一样）
            self._failed(n, CUT_OFF if cut_short else None, cut=call if cut_short else None)
        return call

    # ---- 等得久时说一声（讲师报过：CPU 上的模型一个回复要几十秒，04、05、02 在标准错误上一声不吭，看着像卡住了）----
    def _begin(self, n: int) -> None:
        """第 n 次调用开始了：记下时刻；要报"还在等"的话，第一次调用时开那个线程（daemon：Ctrl-C 时不用等它）。"""
        with self._lock:
            self._in_flight[n] = time.monotonic()
            if self.waiting is None or self._watcher is not None:
                return
            self._watcher = threading.Thread(target=self._watch, daemon=True, name="llm-waiting")
        self._watcher.start()

    def _watch(self) -> None:
        """每 WAITING_SAID / 10 秒看一眼：等得最久的调用等了 WAITING_SAID 秒以上、离上一句也有 WAITING_SAID 秒了，就说一句。"""
        said = 0.0
        while not self._closed.wait(WAITING_SAID / 10):
            now = time.monotonic()
            with self._lock:
                waiting = sorted(self._in_flight.items())
            if not waiting or now - min(t for _, t in waiting) < WAITING_SAID or now - said < WAITING_SAID:
                continue
            said = now
            try:
                self.waiting(self.waiting_sentence([n for n, _ in waiting], now - min(t for _, t in waiting)))
            except Exception:                        # noqa: BLE001  标准错误关了之类：说不出来也不能让调用出错
                pass

    def waiting_sentence(self, calls: list[int], seconds: float) -> str:
        """"还在等"的那句话：等的是哪个模型的第几次调用（从 1 数）、等得最久的已经多少秒、一个请求最多等多久。"""
        which = "、".join(str(n + 1) for n in calls[:4]) + ("……" if len(calls) > 4 else "")
        return (f"LLM：在等 {self.model} 回答第 {which} 次调用，已经等了 {seconds:.0f} 秒（一个请求最多等 "
                f"{self.timeout:g} 秒，--llm-timeout 改；Ctrl-C 随时停下）")

    def _request(self, n: int, text: str, how: dict | None = None):
        with self._lock:
            if self.gave_up is not None:
                raise LLMError(GAVE_UP)

        def payload(reasoning: bool) -> bytes:
            """请求的正文：本机的服务器都认的 temperature、max_tokens，或者（换过以后）推理模型的参数 reasoning_params。"""
            params = self.reasoning_params if reasoning else dict(temperature=self.temperature, max_tokens=self.max_tokens)
            body = dict(model=self.model, **params,
                        messages=[dict(role="system", content=SYSTEM_PROMPT), dict(role="user", content=text)])
            if self.seed is not None:
                body["seed"] = self.seed + n
            return json.dumps(body).encode()
        try:
            return self._attempts(payload, n, how)   # 拿到了回复：算不算失败，_ask 看过回复再定
        except LLMError as e:
            self._failed(n, e.kind, e.detail if e.kind.startswith("LLM 回 HTTP") else "")
            raise

    def _attempts(self, payload, n: int | None = None, how: dict | None = None):
        """发请求，429、5xx、连不上时重试（只在上一次调用没失败、还没决定放弃时）；返回 (回复, usage, 模型名, 被截断时的
        finish_reason, 发了几个请求)。失败抛的 LLMError 的 requests 是发了几个请求。一次调用里按 Retry-After 等的时间
        加起来不超过 max_wait 秒
        （讲师报过：每次都回 429、Retry-After: 59，一个提议一声不吭地等了 177 秒）；等 WAIT_SAID 秒以上时往标准错误说一句。
        回复开始传回来（状态行是 2xx）以后断了不重试：服务器已经答了、也许已经收了钱（讲师报过：200 传到一半被重置，
        记成"连不上"、又发了三次）。
        payload(reasoning) 是请求的正文：每个请求发的时候按那时的参数（别的调用刚换过的话，重试也用新的）。服务器回的
        HTTP 400 说 max_tokens、temperature 不支持（rejected_parameter），而这个请求发的是它们：换成推理模型的参数
        （_switch，只换一次），这次调用用新参数重发一次——不算重试、不算失败，发出去的请求照样数；发的已经是新参数
        还被拒，就是一次普通的失败（不会来回换）。how：这里填上最后一个请求发的参数（"params"，旧的是 None）
        和重发过没有（"resent"：服务器说不支持的那个参数），录进文件。"""
        how = {} if how is None else how
        sent, waited, attempt, resent = 0, 0.0, 0, False
        try:
            while True:
                with self._lock:
                    last = attempt == self.retries or self._last_failed or self.gave_up is not None
                    reasoning = self.switched is not None
                sent += 1
                how["params"] = dict(self.reasoning_params) if reasoning else None
                try:
                    status, headers, raw = self._exchange("POST", "/chat/completions", payload(reasoning), self.timeout,
                                                          MAX_REPLY_BYTES, call=n)
                except LLMError as e:
                    if e.kind == UNREACHABLE and not last:
                        time.sleep(self.backoff * 2 ** attempt)
                        attempt += 1
                        continue
                    raise
                if status in REDIRECT_CODES:
                    raise LLMError(REDIRECT)
                if not 200 <= status < 300:
                    said = self._server_said(raw, headers, status)
                    if (status == 500 and headers.get(MOCK_BUG_HEADER) == "1"   # 它不再回答：不重试，马上不再调用；
                            and is_loopback(self._host)):     # MockLLM 服务器只在本机（讲师的复查报过：别的服务器带上
                        #                                       这个头，一次 500 就不再问它，还让人去看 MockLLM 的终端）
                        raise LLMError(MOCK_BUG)
                    rejected = rejected_parameter(status, raw) if not (reasoning or resent) else None
                    if rejected is not None and self.gave_up is None:   # 推理模型不收 max_tokens、temperature：
                        self._switch(rejected, said)                   # 换参数（只换一次），这次调用重发一次
                        how["resent"], resent = rejected, True
                        continue
                    if status == 429 or 500 <= status <= 599:       # 100–599 以外的状态码是协议错误：不重试
                        asked = retry_after(headers.get("Retry-After"))
                        wait = self.backoff * 2 ** attempt if asked is None else asked
                        if not last and waited + wait <= self.max_wait:
                            if wait >= WAIT_SAID and self.notify is not None:
                                self.notify(f"（LLM 服务器回 HTTP {status}，让等 {wait:g} 秒再试：第 {attempt + 1} 次重试，"
                                            f"一次调用最多重试 {self.retries} 次、一共最多等 {self.max_wait:g} 秒）")
                            time.sleep(wait)
                            waited += wait
                            attempt += 1
                            continue
                        if asked is not None and waited + asked > self.max_wait:   # 服务器让等太久：说出来
                            raise LLMError(f"LLM 回 HTTP {status}，要等 {self.max_wait:g} 秒以上（不等）", said)
                    raise LLMError(f"LLM 回 HTTP {status}", said)
                if compressed(headers):                  # 讲师报过：被说成"不是 JSON"，其实响应头说得明白
                    raise LLMError(COMPRESSED)
                return (*read_reply(raw, headers.get("Content-Type", "")), sent)
        except LLMError as e:
            e.requests = sent
            raise

    def _switch(self, rejected: str, said: str) -> None:
        """服务器说不支持 rejected（max_tokens 或 temperature）：以后的请求都发推理模型的参数（REASONING_PARAMS，不发
        temperature）。几个调用同时被拒时只换一次、只说一次（用 notify，在标准错误上）。"""
        with self._lock:
            if self.switched is not None:
                return
            self.switched = switch_sentence(self.model, rejected, said, self.reasoning_params)
        if self.notify is not None:
            self.notify(self.switched)

    def _failed(self, n: int, kind: str | None, said: str = "", cut: Call | None = None) -> None:
        """第 n 次调用回来了：kind 是失败的种类（None：拿到了能用的回复）。按提议的顺序数（前面还有调用在路上时先留着），
        连续失败够了 give_up_after 次，就决定以后不再调用（用 notify 说一句为什么）；MockLLM 服务器出了程序错马上不再调用。
        said：服务器回 HTTP 错误时说的原因（_server_said 的那句；没有是 ""），记下最后一句（finish 在最后说）、放进那句话里。
        cut：回复到了 token 上限、修改没写完的那次调用（kind 是 CUT_OFF）：接连的里面有它们时，那句话说怎样调高上限。"""
        note = None
        with self._lock:
            if said:
                self.last_said = (kind, said)
            self._last_failed = kind is not None and cut is None     # 拿到了回复（没写完也是）：服务器在答，照常重试
            self._outcomes[n] = (kind, said, cut)
            while self._settled in self._outcomes:
                kind_n, said_n, cut_n = self._outcomes.pop(self._settled)
                self._settled += 1
                if kind_n is None:
                    self._failed_in_a_row, self._cut_in_a_row = 0, []
                    continue
                self._failed_in_a_row += 1
                if cut_n is not None:
                    self._cut_in_a_row.append(cut_n)
                if self.gave_up is None and self.give_up_after and self._failed_in_a_row >= self.give_up_after:
                    self.gave_up = gave_up_sentence(kind_n, self._failed_in_a_row, said_n, len(self._cut_in_a_row))
                    note = self.gave_up + self.give_up_tail
            if kind == MOCK_BUG and self.gave_up is None:
                self.gave_up = gave_up_sentence(kind, self._failed_in_a_row, said)
                note = self.gave_up + self.give_up_tail
            if note is None:
                return
        if self.notify is not None:
            self.notify(note)


def switch_sentence(model: str, rejected: str, said: str = "", params: dict | None = None) -> str:
    """换成推理模型的参数时在标准错误上说的那一句。said：服务器说的原因（"服务器说：“…”"，_server_said 的）。
    params：换成的参数（默认 REASONING_PARAMS；--llm-max-tokens 给了时是它给的上限）。"""
    new = params_said(REASONING_PARAMS if params is None else params)
    return (f"（LLM：{model} 不收 {rejected}（HTTP 400{'，' + said if said else ''}），当它是推理模型：以后的请求改发 {new}"
            "（推理用的 token 也算在里面）、不发 max_tokens 和 temperature（用模型默认的），被拒的请求换了参数各重发一次"
            "（算进发出去的请求，不算失败的提议）。）")


def gave_up_sentence(kind: str, in_a_row: int, said: str = "", cut: int = 0) -> str:
    """决定不再调用 LLM 时，OpenAILLM 在标准错误上说的那句话（运行的最后 finish 另有一句，见 lost_llm）。said：最后那次
    服务器说的原因（"服务器说：“…”"，_server_said 的；没有是 ""）。cut：接连失败里几次是被截断、修改没写完的回复。
    这句只说原因；怎样调高上限只在运行最后那句里说一次，带一条照抄就能跑的命令（讲师报过：同一个办法在标准错误上
    说了三遍；第一次被截断时那句已经说了"运行的最后说怎样调高上限"）。"""
    if kind == MOCK_BUG:
        what = f"LLM：{kind}"
    elif cut and cut == in_a_row:
        what = f"LLM：接连 {in_a_row} 次调用的回复都到了 token 上限、被截断，修改没写完"
    else:
        what = (f"LLM：接连 {in_a_row} 次调用失败（" + (f"其中 {cut} 次是回复到了 token 上限、被截断；" if cut else "")
                + f"最后一次是“{kind}”{'，' + said if said else ''}）")
    return what + f"，之后的提议不再问它，记作“{GAVE_UP}”。"
