"""
OpenAILLM：真的语言模型，换下 MockLLM。说 OpenAI 兼容的 chat-completions 协议（本机的 ollama、llama.cpp 的 server、
vLLM，或者托管的 API 都说这个），只用标准库的 urllib，不加任何依赖。和 MockLLM 一样只有一个接口：

    propose(prompt) -> (修改的种类, 回复文本)        种类总是 KIND（"llm"）：真模型不告诉我们它做的是哪种修改
    propose_many(prompts) -> [(种类, 回复) 或 异常]   concurrency 个请求同时发出，结果按提议的顺序排好

回复只当 SEARCH/REPLACE 文本交给进化循环去解析成 DSL，从不执行。调用失败抛 LLMError，它的 .kind 是一个短名字
（"LLM 超时"、"LLM 回 HTTP 500"……），进化循环按它计数，不崩。

    POST {base_url}/chat/completions   model、messages（系统提示 SYSTEM_PROMPT + 用户消息 Prompt.text()）、
                                       temperature、max_tokens、seed（服务器支持的话同样的请求给同样的回复）
    读 choices[0].message.content 和 usage（prompt_tokens、completion_tokens，服务器给了才有）

- 密钥：环境变量 OPENAI_API_KEY 有就放进 Authorization 头（本机的服务器不需要）；不打印、不记日志、不写进文件，
  服务器回的错误信息里要是出现了它，也先抹掉。
- 每个请求有超时；429 和 5xx 按 Retry-After（没有就指数退避）重试几次；连续 GIVE_UP_AFTER 次连不上或超时，
  就认定服务器断了，以后的提议立刻失败（种类 GAVE_UP），进化用已有的东西跑完，最好的程序不会丢。
- check()：开跑之前看看服务器在不在（GET {base_url}/models），不在就抛 ServerUnreachable，脚本印一行、退出码 2。
- 录制和回放：record=文件名 时每次调用写一行 JSON（提示、回复、用时、token 数、模型名；没有密钥）。
  ReplayLLM(文件名) 从文件里按顺序回答，不联网；提示和录的不一样（代码或参数改了）就抛 ReplayMismatch，
  它故意不是 Exception 的子类，进化循环不会把它当成一次失败的提议吞掉，而是整个运行停下来。
- 成本账：ledger() 给出调用次数、失败次数（按种类）、token 数、总用时和用时的中位数。
本模块不打印任何东西。
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import re
import socket
import statistics
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass

from kernel_lab import (BYTES, GRID, MAX_REGS_PER_THREAD, MAX_SMEM_PER_BLOCK, MAX_THREADS_PER_BLOCK,
                        MIN_ACC_PER_WARP, REG_OVERHEAD, REGS_PER_SM, WARP, Config, regs_per_thread)
from sched_lab import GPU, SMS

from .diff import NO_BLOCK, DiffError, format_diff, make_diff, parse_diff
from .program import Program, Rule, render

KIND = "llm"                       # propose 返回的"修改的种类"：真模型不说它做的是哪种修改
TIMEOUT = 300.0                    # 每个请求最多等几秒（--llm-timeout；CPU 上的模型读一段两千 token 的提示就要好一阵，并发时还要排队）
RETRIES = 3                        # 429 / 5xx / 连不上时最多重试几次
BACKOFF = 1.0                      # 没有 Retry-After 时第 i 次重试前等 BACKOFF × 2^i 秒
MAX_WAIT = 60.0                    # Retry-After 要等得比这还久，就不等了，算一次失败
GIVE_UP_AFTER = 4                  # 连续这么多次调用连不上或超时，就认定服务器断了
TEMPERATURE = 0.7
MAX_TOKENS = 1024                  # 回复的 token 上限（要的是短回复；想得多的模型会用掉更多）
CONCURRENCY = 2                    # 默认同时发几个请求（--llm-concurrency）
FORMAT = "mini-alphaevolve-llm-transcript"

# 失败的种类（LLMError.kind）；HTTP 错误是 f"LLM 回 HTTP {状态码}"
TIMEOUT_KIND = "LLM 超时"
UNREACHABLE = "连不上 LLM 服务器"
GAVE_UP = "LLM 服务器断了，没再调用"
BAD_JSON = "LLM 回复不是 JSON"
NO_CONTENT = "LLM 回复里没有 choices[0].message.content"


class LLMError(Exception):
    """一次调用失败。kind 是短名字（进化循环按它计数），str 是一句说明（不含密钥）。"""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}：{detail}" if detail else kind)
        self.kind, self.detail = kind, detail

    def __reduce__(self):
        return LLMError, (self.kind, self.detail)


class ServerUnreachable(LLMError):
    """开跑之前服务器就连不上（或拒绝了我们）：脚本印出这一句，退出码 2。"""


class ReplayMismatch(BaseException):
    """回放文件和这次运行对不上。故意不继承 Exception：进化循环的 except Exception 不会把它当成一次失败的提议，
    运行就此停下；脚本接住它，印出这一句，退出码 2。"""


# ---------------------------------------------------------------- 系统提示

def _example() -> tuple[str, str]:
    """系统提示里的例子：一个程序和一段把它改好的 SEARCH/REPLACE（由 render 和 make_diff 生成，保证打得上）。"""
    small = Rule((("M", 32),), Config(32, 64, 128, 4, 3, 4))
    mid = Rule((("M", 512), ("N", 4096)), Config(64, 128, 64, 4, 3, 8))
    before = Program((small,), Config(64, 64, 64, 4, 2, 8))
    after = Program((small, mid), Config(128, 128, 64, 8, 3, 8))
    return render(before), format_diff(make_diff(render(before), render(after)))


def system_prompt() -> str:
    """教模型 DSL、SEARCH/REPLACE 格式、配置网格和启动限制，要它回得短。用英文写：代码模型的指令数据大多是英文（经验之谈）。"""
    program, diff = _example()
    grid = "\n".join(f"  {f:<6} one of {', '.join(map(str, v))}" for f, v in GRID.items())
    big = Config(256, 128, 64, 4, 3, 8)
    return f"""You improve a small Python function that picks the tiling configuration of a Triton-style bf16
matrix-multiply kernel on an NVIDIA {GPU.short} ({SMS} SMs) for a GEMM of shape (M, N, K): C[M, N] = A[M, K] @ B[K, N].
M is the number of tokens (1 for decode up to 8192 for prefill); (N, K) are the projections of Llama-3 layers.
The score is the geometric-mean speedup over an expert heuristic on the training shapes; higher is better.
One function must serve every shape.

THE PROGRAM LANGUAGE (a tiny subset of Python; the program is parsed, never executed; anything else is rejected)
{program}- a sequence of rules `if CONDITION: return Config(...)`, then one final unconditional `return Config(...)`
  (the default). The first rule whose condition holds decides.
- CONDITION is one or more comparisons `M <= integer`, `N <= integer`, `K <= integer` joined by `and`.
  Upper bounds only: no `>`, `>=`, `or`, `not`, `==`, arithmetic, variables or calls. To handle large M
  differently, put the rule for small M first.
- Config takes exactly the six keyword arguments BM, BN, BK, warps, stages, group, each an integer literal.

THE CONFIG GRID (each field must be one of these values)
{grid}
  BM x BN is the output tile of one CTA, BK the K-step, stages the number of pipelined K-steps kept in shared
  memory, group the number of tile rows walked together for L2 reuse.

LAUNCH LIMITS (every branch is checked before anything runs; one unlaunchable branch rejects the program)
  registers/thread = BM*BN/({WARP}*warps) + {REG_OVERHEAD} <= {MAX_REGS_PER_THREAD}
  registers/CTA    = registers/thread * {WARP}*warps <= {REGS_PER_SM}
  shared memory    = stages * (BM + BN) * BK * {BYTES} bytes <= {MAX_SMEM_PER_BLOCK}
  threads/CTA      = {WARP}*warps <= {MAX_THREADS_PER_BLOCK}
  accumulators per warp = BM*BN/warps >= {MIN_ACC_PER_WARP}
  Example: BM=256, BN=128 with 4 warps needs {regs_per_thread(big)} registers/thread (too many);
  with 8 warps it needs {regs_per_thread(big.replace(warps=8))} (fine).

THE USER MESSAGE (in Chinese) gives the current program and its score, the training shapes where it is
furthest from the best time seen and from the roofline (with the config it picks for them now), and one or two
other good programs for inspiration.

YOUR REPLY: at most one sentence saying what you change, then one or more SEARCH/REPLACE blocks that edit the
current program, exactly in this format:
{diff}The SEARCH part must copy whole lines of the current program exactly (same spaces) and occur exactly once;
several blocks are applied in order. Change only what you need to. No code fences, no other text."""


SYSTEM_PROMPT = system_prompt()


# ---------------------------------------------------------------- 一次调用的记录和成本账

@dataclass
class Call:
    """一次调用：第几次（从 0 数）、提示、回复（失败是 None）、失败的种类、用时（秒）、token 数、服务器报的模型名。"""
    n: int
    prompt: str
    reply: str | None
    error: str | None
    latency: float
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str | None


def ledger(calls) -> dict:
    """一串调用的成本账：calls、failed={种类: 次数}、prompt_tokens、completion_tokens（服务器没报就是 None）、
    latency_total、latency_median（秒）。"""
    calls = list(calls)
    failed: dict[str, int] = {}
    for c in calls:
        if c.error is not None:
            failed[c.error] = failed.get(c.error, 0) + 1
    tokens = lambda key: (sum(getattr(c, key) for c in calls if getattr(c, key) is not None)  # noqa: E731
                          if any(getattr(c, key) is not None for c in calls) else None)
    lat = [c.latency for c in calls]
    return dict(calls=len(calls), failed=failed, prompt_tokens=tokens("prompt_tokens"),
                completion_tokens=tokens("completion_tokens"), latency_total=sum(lat),
                latency_median=statistics.median(lat) if lat else 0.0)


def _strip_thinking(text: str) -> str:
    """想得多的模型（qwen3、deepseek-r1……）先在 <think>…</think> 里打草稿，草稿里的 SEARCH 块不算数。"""
    return re.sub(r"<think>.*?</think>", "", text, flags=re.S)


class _Backend:
    """OpenAILLM 和 ReplayLLM 共用的部分：按顺序编号的调用、成本账、并发。"""
    concurrency = 1
    model = ""

    def __init__(self):
        self.calls: list[Call] = []          # 按提议的顺序
        self._lock = threading.Lock()

    def ledger(self, start: int = 0, stop: int | None = None) -> dict:
        """第 start 到 stop 次调用（不含 stop）的成本账，见模块的 ledger()。"""
        return ledger(self.calls[start:stop])

    def propose(self, prompt) -> tuple[str, str]:
        """问一次，返回 (KIND, 回复文本)；失败抛 LLMError（.kind 是失败的种类）。"""
        return self._answer(self._call(len(self.calls), prompt.text()))

    def propose_many(self, prompts) -> list:
        """几个提示一起问（最多 concurrency 个同时在路上）；返回的列表和 prompts 一一对应：(种类, 回复) 或 LLMError。"""
        base = len(self.calls)
        texts = [p.text() for p in prompts]
        calls: list = [None] * len(texts)
        errors: list = [None] * len(texts)

        def work(i):
            try:
                calls[i] = self._fetch(base + i, texts[i])
            except BaseException as e:      # noqa: BLE001  回放对不上（ReplayMismatch）也要带回主线程
                errors[i] = e

        _run_threads(work, range(len(texts)), self.concurrency)
        for e in errors:
            if isinstance(e, (ReplayMismatch, KeyboardInterrupt)):
                raise e
        out = []
        for i in range(len(texts)):                 # 按提议的顺序记账、写录制文件
            if errors[i] is not None:
                raise errors[i]
            self._log(calls[i])
            out.append(self._result(calls[i]))
        return out

    def _call(self, n: int, text: str) -> Call:
        call = self._fetch(n, text)
        self._log(call)
        return call

    def _answer(self, call: Call) -> tuple[str, str]:
        r = self._result(call)
        if isinstance(r, Exception):
            raise r
        return r

    @staticmethod
    def _result(call: Call):
        """一次调用的结果：(KIND, 回复) 或 LLMError。回复里一个 SEARCH/REPLACE 块都没有（空的、只有闲聊）也是失败，
        种类是 diff.NO_BLOCK——MockLLM 不回块表示"子程序就是父程序"，真模型不回块只是没按要求回答。"""
        if call.error is not None:
            return LLMError(call.error)
        reply = _strip_thinking(call.reply)
        try:
            parse_diff(reply, empty_ok=False)
        except DiffError as e:
            if e.kind == NO_BLOCK:
                return LLMError(NO_BLOCK)
        return KIND, reply

    def _log(self, call: Call) -> None:
        self.calls.append(call)

    def _fetch(self, n: int, text: str) -> Call:
        raise NotImplementedError


def _run_threads(work, items, workers: int) -> None:
    """用 workers 个后台线程对每个 item 调 work(item)，等它们做完。线程是 daemon 的：Ctrl-C 时不用等在路上的请求。"""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        for i in items:
            work(i)
        return
    todo = iter(items)
    lock = threading.Lock()

    def loop():
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            work(i)

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(min(workers, len(items)))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.1)                     # 短短地等，主线程随时能收到 Ctrl-C


# ---------------------------------------------------------------- 真的服务器

def clean_url(url: str) -> str:
    """去掉地址里的用户名、密码、查询串（录进文件、印出来的只有这个）。"""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return urllib.parse.urlunsplit((u.scheme, host + (f":{u.port}" if u.port else ""), u.path.rstrip("/"), "", ""))


class OpenAILLM(_Backend):
    """OpenAI 兼容的 chat-completions 服务器。base_url 例如 http://127.0.0.1:11434/v1（ollama）。"""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = TIMEOUT,
                 retries: int = RETRIES, backoff: float = BACKOFF, max_wait: float = MAX_WAIT,
                 temperature: float = TEMPERATURE, max_tokens: int = MAX_TOKENS, seed: int | None = 0,
                 concurrency: int = CONCURRENCY, record: str | None = None, give_up_after: int = GIVE_UP_AFTER):
        """api_key 不给就读环境变量 OPENAI_API_KEY。seed=None 时不发 seed；否则第 n 次调用发 seed + n。
        record：录制文件的路径（JSON Lines），None 不录。"""
        super().__init__()
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"--llm 要的是 http:// 或 https:// 开头的地址（例如 http://127.0.0.1:11434/v1），不是 {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = os.environ.get("OPENAI_API_KEY") if api_key is None else api_key
        self.timeout, self.retries, self.backoff, self.max_wait = timeout, retries, backoff, max_wait
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.concurrency = max(1, int(concurrency))
        self.give_up_after = give_up_after
        self._dead_in_a_row = 0                    # 连续几次连不上或超时
        self._record = None
        if record is not None:
            self.record_to(record)
        # 本机的地址不走代理（环境里的 http_proxy 是给外网用的）
        local = u.hostname in ("127.0.0.1", "localhost", "::1")
        self._opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if local else []))

    def __repr__(self) -> str:                    # 不带密钥
        return f"OpenAILLM({clean_url(self.base_url)!r}, model={self.model!r}, concurrency={self.concurrency})"

    def close(self) -> None:
        if self._record is not None:
            self._record.close()
            self._record = None

    # ---- 录制 ----
    def record_to(self, path: str, settings: str = "") -> None:
        """从现在起把每次调用录进 path（JSON Lines；第一行是文件头：脚本和参数 settings、模型、地址、并发数、
        采样参数、系统提示）。"""
        self._record = open(path, "w", encoding="utf-8")
        self._write(dict(type="header", format=FORMAT, version=1, settings=settings, model=self.model,
                         base_url=clean_url(self.base_url), concurrency=self.concurrency, temperature=self.temperature,
                         max_tokens=self.max_tokens, seed=self.seed, system_prompt=SYSTEM_PROMPT))

    def _write(self, obj: dict) -> None:
        self._record.write(self._redact(json.dumps(obj, ensure_ascii=False)) + "\n")
        self._record.flush()

    def _log(self, call: Call) -> None:
        super()._log(call)
        if self._record is not None:
            self._write(dict(type="call", **asdict(call)))

    def _redact(self, text: str) -> str:
        """抹掉文本里的密钥。很短的"密钥"（本机服务器常用的占位符，如 EMPTY）不算秘密，也不能抹：会把回复抹坏。"""
        return text.replace(self._key, "***") if self._key and len(self._key) >= 8 else text

    # ---- HTTP ----
    def _headers(self) -> dict:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            h["Authorization"] = f"Bearer {self._key}"
        return h

    def _open(self, path: str, body: dict | None, timeout: float):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, headers=self._headers(),
                                     method="GET" if body is None else "POST")
        return self._opener.open(req, timeout=timeout)

    def check(self, timeout: float = 10.0) -> None:
        """开跑之前：服务器在不在、认不认我们的密钥、有没有这个模型。有问题抛 ServerUnreachable（一句话）。"""
        where = clean_url(self.base_url)
        try:
            with self._open("/models", None, timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                raise ServerUnreachable(f"LLM 服务器 {where} 拒绝了请求（HTTP {e.code}）",
                                        "检查环境变量 OPENAI_API_KEY") from None
            return                                  # 别的状态（比如没有 /models）：至少服务器在，开跑
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            raise ServerUnreachable(f"连不上 LLM 服务器 {where}（{self._redact(str(reason))}）",
                                    "先启动它（例如 ollama serve），或者检查 --llm 的地址") from None
        try:
            names = [m["id"] for m in json.loads(raw)["data"]]
        except (ValueError, KeyError, TypeError):
            return
        if names and self.model not in names:
            shown = ", ".join(names[:8]) + ("……" if len(names) > 8 else "")
            raise ServerUnreachable(f"LLM 服务器 {where} 上没有模型 {self.model}",
                                    f"它有：{shown}；用 --model 选一个（ollama 要先 ollama pull）")

    def _fetch(self, n: int, text: str) -> Call:
        """第 n 次调用：发请求（该重试就重试），返回 Call；失败的 Call 的 error 是种类。"""
        t0 = time.perf_counter()
        reply, usage, model, error = None, {}, None, None
        try:
            reply, usage, model = self._request(n, text)
        except LLMError as e:
            error = e.kind
        latency = round(time.perf_counter() - t0, 4)
        num = lambda v: v if isinstance(v, int) and not isinstance(v, bool) else None  # noqa: E731
        return Call(n, text, None if reply is None else self._redact(reply), error, latency,
                    num(usage.get("prompt_tokens")), num(usage.get("completion_tokens")),
                    model if isinstance(model, str) else None)

    def _request(self, n: int, text: str):
        with self._lock:
            if self.give_up_after and self._dead_in_a_row >= self.give_up_after:
                raise LLMError(GAVE_UP)
        body = dict(model=self.model, temperature=self.temperature, max_tokens=self.max_tokens,
                    messages=[dict(role="system", content=SYSTEM_PROMPT), dict(role="user", content=text)])
        if self.seed is not None:
            body["seed"] = self.seed + n
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                with self._open("/chat/completions", body, self.timeout) as r:
                    raw = r.read()
            except urllib.error.HTTPError as e:
                e.close()
                if e.code == 429 or e.code >= 500:
                    wait = _retry_after(e.headers.get("Retry-After"))
                    wait = self.backoff * 2 ** attempt if wait is None else wait
                    if not last and wait <= self.max_wait:
                        time.sleep(wait)
                        continue
                self._alive()
                raise LLMError(f"LLM 回 HTTP {e.code}") from None
            except (TimeoutError, socket.timeout):
                self._dead()
                raise LLMError(TIMEOUT_KIND) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                if isinstance(getattr(e, "reason", None), (TimeoutError, socket.timeout)):
                    self._dead()
                    raise LLMError(TIMEOUT_KIND) from None
                if not last:
                    time.sleep(self.backoff * 2 ** attempt)
                    continue
                self._dead()
                raise LLMError(UNREACHABLE) from None
            self._alive()
            try:
                data = json.loads(raw)
            except ValueError:
                raise LLMError(BAD_JSON) from None
            try:
                content = data["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise LLMError(NO_CONTENT) from None
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            return ("" if content is None else str(content)), usage, data.get("model")
        raise AssertionError("unreachable")

    def _dead(self) -> None:
        with self._lock:
            self._dead_in_a_row += 1

    def _alive(self) -> None:
        with self._lock:
            self._dead_in_a_row = 0


def _retry_after(value: str | None) -> float | None:
    """Retry-After 头：秒数或者 HTTP 日期；读不懂就当没有。"""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# ---------------------------------------------------------------- 回放

class ReplayLLM(_Backend):
    """从 --record 录下的文件里按顺序回答，不联网。同样的参数回放，标准输出和录制时逐字节相同。
    录制时的并发数（它决定提议怎样分批）、模型名从文件头里读。"""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self.records: list[tuple[int, Call]] = []          # (文件里的行号, 调用)
        header = None
        try:
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    obj = json.loads(line)
                    if lineno == 1:
                        header = obj
                    elif obj.get("type") == "call":
                        self.records.append((lineno, Call(**{k: obj[k] for k in Call.__dataclass_fields__})))
        except OSError as e:
            raise ValueError(f"{path}：读不了回放文件（{e.strerror}）") from None
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}:{lineno}: 这一行不是 --record 写的格式（{type(e).__name__}）；"
                             f"回放只认 --record 录下的 JSON Lines 文件") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"{path}:1: 第一行不是 --record 写的文件头；回放只认 --record 录下的 JSON Lines 文件")
        self.header = header
        self.model = header["model"]
        self.concurrency = int(header.get("concurrency", 1))
        if header.get("system_prompt") != SYSTEM_PROMPT:
            raise ReplayMismatch(f"回放文件 {path} 录制时用的系统提示和现在的不一样（evolve/openai_llm.py 改过）："
                                 "录下的回复是对另一段提示说的，不能回放；用现在的代码重新 --record。")

    def check(self) -> None:
        """回放不联网，没什么要查的。"""

    def unused(self) -> int:
        """文件里还有几次调用没用上（这次的预算比录制时小）。"""
        return len(self.records) - len(self.calls)

    def _fetch(self, n: int, text: str) -> Call:
        if n >= len(self.records):
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 只录了 {len(self.records)} 次"
                                 "（这次的 --budget、--seeds 比录制时大，或者代码改了），用录制时的参数回放，或者重新 --record。")
        lineno, call = self.records[n]
        if call.n != n or call.prompt != text:
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：这次的提示和 {self.path} 第 {lineno} 行录下的不一样"
                                 f"（{_first_difference(call.prompt, text)}），说明录制之后代码或参数变了；"
                                 "用录制时的代码和参数回放，或者重新 --record。")
        return call


def _first_difference(a: str, b: str) -> str:
    """两段提示从第几行起不同，各是什么（截短）。"""
    la, lb = a.split("\n"), b.split("\n")
    i = next((k for k in range(min(len(la), len(lb))) if la[k] != lb[k]), min(len(la), len(lb)))
    cut = lambda s: s if len(s) <= 60 else s[:57] + "…"  # noqa: E731
    got = lambda ls: repr(cut(ls[i])) if i < len(ls) else "（没有这一行）"  # noqa: E731
    return f"从第 {i + 1} 行起：录的是 {got(la)}，现在是 {got(lb)}"



# ---------------------------------------------------------------- 脚本的命令行（04、05、02 共用）

class SetupError(ValueError):
    """命令行的 LLM 参数不对、服务器连不上、回放文件读不了：一句话，脚本印到标准错误，退出码 2。"""


def _concurrency_arg(text: str) -> int:
    import argparse
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"要是正整数（1、2、3……），收到的是 {text}")
    return n


def _seconds_arg(text: str) -> float:
    import argparse
    import math
    try:
        x = float(text)
    except ValueError:
        x = 0.0
    if not (x > 0 and math.isfinite(x)):
        raise argparse.ArgumentTypeError(f"要是正的秒数（例如 60），收到的是 {text}")
    return x


def add_arguments(ap) -> None:
    """给脚本的 ArgumentParser 加上 --llm、--model、--llm-concurrency、--record、--replay。"""
    g = ap.add_argument_group("换成真的语言模型（不加这些参数就用 MockLLM，不联网，输出逐字节不变）")
    g.add_argument("--llm", metavar="BASE_URL",
                   help="OpenAI 兼容接口的地址，例如 http://127.0.0.1:11434/v1（ollama）；密钥从环境变量 OPENAI_API_KEY 读")
    g.add_argument("--model", metavar="NAME", help="模型名，例如 qwen2.5-coder:7b")
    g.add_argument("--llm-concurrency", type=_concurrency_arg, metavar="N", default=None,
                   help=f"同时发几个请求（默认 {CONCURRENCY}；结果按提议的顺序处理）")
    g.add_argument("--llm-timeout", type=_seconds_arg, metavar="SECONDS", default=None,
                   help=f"每个请求最多等几秒（默认 {TIMEOUT:g}）")
    g.add_argument("--record", metavar="FILE.jsonl", help="把每次调用（提示、回复、用时、token 数）录进这个文件，不含密钥")
    g.add_argument("--replay", metavar="FILE.jsonl", help="不联网，按 --record 录下的文件回答；标准输出和录制时逐字节相同")


def from_arguments(a, settings: str = ""):
    """按 add_arguments 的参数建后端：没有 --llm、--replay 返回 None（用 MockLLM）；有就返回一个查过能连上的
    OpenAILLM（要录制的话已经开始录）或一个 ReplayLLM。参数不对、连不上、文件读不了：抛 SetupError（一句话）。
    settings 是脚本名和决定结果的参数（例如 "04 --seed 0 --budget 50 --seeds 1"）：录进文件头，回放时必须一样。"""
    given = [f"--{n.replace('_', '-')}" for n in ("model", "llm_concurrency", "llm_timeout", "record")
             if getattr(a, n, None) is not None]
    if a.replay is not None:
        if a.llm is not None or given:
            raise SetupError(f"--replay 从文件回答、不联网，不能再加 --llm 或 {'、'.join(given) or '--model'}"
                             "（模型和并发数都从录制文件里读）。")
        try:
            replay = ReplayLLM(a.replay)
        except (ReplayMismatch, ValueError) as e:
            raise SetupError(str(e)) from None
        recorded = replay.header.get("settings", "")
        if recorded != settings:
            raise SetupError(f"回放文件 {a.replay} 是用“{recorded}”录的，这次是“{settings}”："
                             "回放要用录制时的脚本和参数。")
        return replay
    if a.llm is None:
        if given:
            raise SetupError(f"{'、'.join(given)} 要和 --llm BASE_URL 一起用（例如 --llm http://127.0.0.1:11434/v1 "
                             "--model qwen2.5-coder:7b）。")
        return None
    if a.model is None:
        raise SetupError("--llm 要和 --model NAME 一起用（例如 --model qwen2.5-coder:7b）。")
    try:
        backend = OpenAILLM(a.llm, a.model, concurrency=a.llm_concurrency or CONCURRENCY,
                            timeout=a.llm_timeout or TIMEOUT)
    except ValueError as e:
        raise SetupError(f"{e}。") from None
    try:
        backend.check()
    except ServerUnreachable as e:
        raise SetupError(f"{e}。") from None
    if a.record is not None:
        try:
            backend.record_to(a.record, settings)
        except OSError as e:
            raise SetupError(f"写不了录制文件 {a.record}（{e.strerror}）。") from None
    return backend


def describe(backend) -> str:
    """脚本第二行印的 LLM 设置：录制和回放印出来一样（模型名、并发数；不印地址和文件名）。"""
    return (f"LLM：{backend.model}（OpenAI 兼容接口，同时最多 {backend.concurrency} 个请求）——"
            "每个提议问它一次，回复只当 SEARCH/REPLACE 解析成 DSL，从不执行。")
