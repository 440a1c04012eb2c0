"""
第 14 讲 · mock_llm_server.py —— 把 MockLLM 放到 OpenAI 兼容的接口后面（没有任何真的语言模型，不联网）。

    python3 lecture14/mock_llm_server.py [--port 8765] [--seed 0]

只听 127.0.0.1。它回答 GET /v1/models（只有一个模型 "mock"）和 POST /v1/chat/completions，所以任何说 OpenAI 协议的
客户端都能离线用 MockLLM：本讲的 --llm（04 --llm http://127.0.0.1:8765/v1 --model mock）、OpenEvolve（config.yaml
的 llm.api_base）、openai 的 SDK、curl。启动后第一行印出要用的地址。

它怎样"读"提示（最后一条 user 消息）——三种写法，找到的是"当前程序"，别的程序当灵感：
  本讲的 Prompt.text()   "# 当前程序" 下面的 EVOLVE 块；"# 灵感程序" 下面的块是灵感
  OpenEvolve 的提示      "# Current Program" 下面 ```python 围栏里的程序；前面 "Top Performing Programs"、
                         "Inspiration Programs" 等围栏里的程序是灵感
  只有一个 EVOLVE 块     这个块就是当前程序（curl 手动试的时候）
MockLLM 要的"逐形状反馈"由它自己从讲义的时间表算（训练形状上离屋顶线和离逐形状最优最远的几个），不读提示里的
反馈行——这就是 MockLLM 的"内核常识"。回复是 MockLLM 的那句说明加 SEARCH/REPLACE 块，打在提示里的那份程序上
（程序在 EVOLVE 块外面还有别的代码也行）。提示里找不到程序、程序读不懂：客气地回一句话，不带 SEARCH/REPLACE 块
（客户端把它记作一次失败的提议，就像真模型闲聊了一句）。

确定性：同一个 --seed、同样顺序的提示，回复逐字相同（请求按到达的顺序一个个交给 MockLLM；并发时的顺序由客户端
决定）。回复不带 usage：没有模型，也就没有 token（04 的成本表说"服务器没报"，不印"0 个 token"）。
每个请求的正文最多 MAX_BODY 字节，整个请求（读、算、写）最多 REQUEST_SECONDS 秒；--max-requests 个补全之后
回 HTTP 503。MockLLM 自己出了程序错（本讲代码的错）：那个和以后的补全回 500，MockServer 退出 with 时抛出那个错，
命令行的服务器印出 traceback、退出码 1——不当作 LLM 偶尔失败吞掉。启动它的进程（shell、make、测试；程序启动它时用 --parent 给出自己的进程号）没了，它也退出。
Ctrl-C 停下（退出码 130）。
"""

from __future__ import annotations

import os

STARTED_BY = os.getppid()       # 越早记越好：import 的零点几秒里启动它的进程就没了的话，这里记到的已经是 1

import errno  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from runner import (ensure_numpy, int_between, interrupted_line, nonnegative_int, one_sentence_errors, parser,  # noqa: E402
                    positive_int)

one_sentence_errors()               # 加修改种类时漏了一步：一句话、退出码 1（和编号脚本一样），不是 traceback

ensure_numpy()

import numpy as np  # noqa: E402

from evolve import VALID, Evaluator, TimeTable, parse, split_shapes  # noqa: E402
from evolve.diff import DiffError, format_diff, make_diff, parse_diff  # noqa: E402
from evolve.mock_llm import Dice, MockLLM, Prompt  # noqa: E402
from evolve.openai_llm import MOCK_BUG_REPLY  # noqa: E402
from evolve.program import Program, apply_diff, render  # noqa: E402
from evolve.source import ProgramError  # noqa: E402

MODEL = "mock"
PORT = 8765
HOST = "127.0.0.1"
MAX_BODY = 1_000_000               # 一个请求的正文最多这么多字节（OpenEvolve 的提示约一万字节）
REQUEST_SECONDS = 30.0             # 一个请求从等它的第一行到回完最多这么久（连接上的每个请求各计一次），慢慢发的客户端到点就断开
MAX_REQUESTS = 1_000_000           # 默认最多回答这么多个补全（测试里设得很小）
BUG_LINGER = 5.0                   # MockLLM 出了程序错以后，命令行的服务器再回这么多秒"出了程序错误"的 500 才退出
NO_PROGRAM = "（提示里没有读得懂的程序）"
N_FEEDBACK = 6                     # 和 evolve.loop 给的反馈一样多

_START = "# EVOLVE-BLOCK-START"
_END = "# EVOLVE-BLOCK-END"
_OE_HEADER = "# Current Program"
_OURS_CURRENT = "# 当前程序"


# ---------------------------------------------------------------- 从提示里找程序（逐行扫一遍：代价和提示的长度成正比）

class NoProgram(Exception):
    """提示里找不到当前程序，或者找到了读不懂。str 是回给客户端的那句话。"""


def _lines(text: str) -> list[tuple[int, str]]:
    """[(行首的位置, 这一行（不含换行）)]。"""
    out, at = [], 0
    for line in text.split("\n"):
        out.append((at, line))
        at += len(line) + 1
    return out


def _blocks(text: str, lines) -> list[tuple[int, int, str]]:
    """所有的 EVOLVE 块：[(起点, 终点, 原文，含两行标记和结尾的换行)]。START 之后再遇到 START，从新的那个算起。"""
    out, open_at = [], None
    for at, line in lines:
        t = line.lstrip(" \t")
        if t.startswith(_START):
            open_at = at
        elif t.startswith(_END) and open_at is not None:
            stop = min(at + len(line) + 1, len(text))
            out.append((open_at, stop, text[open_at:stop]))
            open_at = None
    return out


def _fences(text: str, lines) -> list[tuple[int, str]]:
    """所有 ``` 围栏里的代码：[(开头那行 ``` 的行号, 代码)]。行首的 ``` 一开一关。"""
    out, open_i = [], None
    for i, (at, line) in enumerate(lines):
        if line.startswith("```"):
            if open_i is None:
                open_i = i
            else:
                a = lines[open_i + 1][0] if open_i + 1 < i else at
                out.append((open_i, text[a:max(a, at - 1)]))
                open_i = None
    return out


def find_programs(text: str) -> tuple[str, list[str]]:
    """(当前程序的原文, [别的程序的原文, ...])。当前程序是 OpenEvolve 的整个文件，或本讲提示里的那个 EVOLVE 块；
    找不到抛 NoProgram。"""
    lines = _lines(text)
    fences = _fences(text, lines)
    for k, (i, code) in enumerate(fences):                  # OpenEvolve：紧跟在 "# Current Program" 下面的围栏
        if i > 0 and lines[i - 1][1].rstrip() == _OE_HEADER:
            others = [c for j, (_, c) in enumerate(fences) if j != k]
            return code, [o for o in others if _START in o or "def choose_config" in o]
    blocks = _blocks(text, lines)
    at = text.find(_OURS_CURRENT)
    if at >= 0:                                               # 本讲的 Prompt.text()
        after = [b for b in blocks if b[0] >= at]
        if after:
            return after[0][2], [b[2] for b in blocks if b is not after[0]]
    if len(blocks) == 1:
        return blocks[0][2], []
    if not blocks:
        raise NoProgram("我在提示里没找到要改的程序：要有一段 # EVOLVE-BLOCK-START … # EVOLVE-BLOCK-END 包着的 "
                        "def choose_config(M, N, K)（或者 OpenEvolve 提示里 # Current Program 下面的代码）。")
    raise NoProgram(f"提示里有 {len(blocks)} 个 EVOLVE 块，我分不出哪个是要改的当前程序："
                    "把它放在 “# 当前程序” 或 “# Current Program” 下面，或者只给一个块。")


def _block_span(src: str) -> tuple[int, int]:
    """src 里第一个 EVOLVE 块（含两行标记）的 [起点, 终点)；没有标记就是整个 src。"""
    blocks = _blocks(src, _lines(src))
    return (blocks[0][0], blocks[0][1]) if blocks else (0, len(src))


# ---------------------------------------------------------------- 内核常识：从时间表算反馈

class TableSense:
    """MockLLM 的"内核常识"：在讲义的训练形状上，程序离屋顶线、离逐形状最优各差多少（来自时间表，不读提示）。"""

    def __init__(self, table: TimeTable | None = None, train=None):
        self.table = table or TimeTable()
        self.train = tuple(train) if train is not None else split_shapes()[0]
        self.ev = Evaluator(self.train, self.table)
        self.log_best = self.ev.log_t.min(axis=1)                         # 逐形状最优（穷举 3744 个配置）
        self._m = [s.M for s in self.train]

    def score(self, program: Program) -> float:
        """训练形状上相对专家的几何平均加速比；有分支启动不了是 0。"""
        idx = self.ev.chosen(program)
        if (idx < 0).any():
            return 0.0
        return math.exp(float((self.ev.log_expert - self.ev.log_t[self.ev.rows, idx]).mean()))

    def feedback(self, program: Program, k: int = N_FEEDBACK) -> tuple:
        """最值得改的 k 个训练形状（每个 M 最多一个），格式同 evolve.loop 给 Prompt 的反馈：
        ((形状, 离屋顶线慢几倍, 离逐形状最优慢几倍, 现在选的配置), ...)。走到启动不了的分支的形状排在最前。"""
        idx = self.ev.chosen(program)
        configs = [r.config for r in program.rules] + [program.default]
        lt = self.ev.log_t[self.ev.rows, np.maximum(idx, 0)]
        bad = idx < 0
        key = np.where(bad, np.inf, (lt - self.ev.log_floor) + (lt - self.log_best))
        out, seen = [], set()
        for i in np.argsort(-key, kind="stable").tolist():
            if self._m[i] in seen:
                continue
            seen.add(self._m[i])
            s = self.train[i]
            if bad[i]:
                from evolve.program import branch_index
                out.append((s, None, None, configs[branch_index(program, s.M, s.N, s.K)]))
            else:
                out.append((s, float(np.exp(lt[i] - self.ev.log_floor[i])), float(np.exp(lt[i] - self.log_best[i])),
                            VALID[int(idx[i])]))
            if len(out) == k:
                break
        return tuple(out)

    def prompt(self, text: str) -> tuple[Prompt, str]:
        """提示文本 -> (给 MockLLM 的 Prompt, 提示里当前程序的原文)。Prompt.parent_src 是 render(当前程序)。"""
        current, others = find_programs(text)
        try:
            parent = parse(current, filename="提示里的当前程序")
        except ProgramError as e:
            raise NoProgram(f"提示里的当前程序我读不懂（{e}），没法改。") from None
        inspirations = []
        for src in others:
            try:
                q = parse(src)
            except ProgramError:
                continue                                       # 读不懂的别的程序不当灵感
            inspirations.append((render(q), q, self.score(q)))
        return Prompt(render(parent), parent, self.score(parent), self.feedback(parent), tuple(inspirations)), current


def onto(current: str, parent_src: str, reply: str) -> str:
    """MockLLM 的回复是对 parent_src（render 的样子）写的；把它改写成对提示里那份程序 current 的修改。
    两者一样时原样返回（本讲自己的提示总是这样）。回复里没有块、SEARCH 本来就打不上（MockLLM 故意抄错）时也原样返回。"""
    if current == parent_src:
        return reply
    try:
        diff = parse_diff(reply)
        if not diff:
            return reply
        child_block = apply_diff(parent_src, diff)
    except DiffError:
        return reply
    a, b = _block_span(current)
    if not current[a:b].endswith("\n") and child_block.endswith("\n"):
        child_block = child_block[:-1]
    new = current[:a] + child_block + current[b:]
    why = reply[:reply.find("<<<<<<< SEARCH")]
    return why + format_diff(make_diff(current, new))


class MockAnswerer:
    """一个 MockLLM 和它的内核常识；answer(提示文本) -> 回复文本。一次只回答一个（加锁），按到达的顺序。"""

    def __init__(self, seed: int = 0, table: TimeTable | None = None, train=None):
        self.sense = TableSense(table, train)
        self.llm = MockLLM(Dice(seed))
        self.lock = threading.Lock()
        self.n = 0                                 # 回答了几个提示
        self.prompt_chars = 0                      # 提示一共多少个字符（系统提示加用户消息：模型读的全部）
        self.system_chars = 0                      # 其中系统提示的
        self.others = 0                            # 提示里一共有几个别的程序（灵感；和当前程序一模一样的不算）
        self.ops: Counter = Counter()              # MockLLM 做了哪种修改，各几次（读不懂的提示记作 NO_PROGRAM）
        self.seconds = 0.0                         # 读提示、想修改一共用了几秒（不算 HTTP）

    def answer(self, text: str, system_chars: int = 0) -> str:
        """text：用户消息；system_chars：同一个请求里系统提示的字符数（只记账：两边的提示一样算，讲师报过 07 只数了
        用户消息，本讲的循环每次还带着三千来个字符的系统提示）。"""
        with self.lock:
            t0 = time.perf_counter()
            try:
                return self._answer(text, system_chars)
            finally:
                self.seconds += time.perf_counter() - t0

    def _answer(self, text: str, system_chars: int = 0) -> str:
        self.n += 1
        self.prompt_chars += len(text) + system_chars
        self.system_chars += system_chars
        try:
            prompt, current = self.sense.prompt(text)
        except NoProgram as e:
            self.ops[NO_PROGRAM] += 1
            return str(e)
        op, reply = self.llm.propose(prompt)
        self.ops[op] += 1
        self.others += sum(p != prompt.parent for _, p, _ in prompt.inspirations)   # 和当前程序一样的不算"别的程序"
        return onto(current, prompt.parent_src, reply)


# ---------------------------------------------------------------- HTTP

def _system_chars(body) -> int:
    """请求正文里 role 为 system 的消息一共多少个字符（content 是字符串，或分段的 [{"type": "text", ...}]）。"""
    total = 0
    for msg in body.get("messages", []) if isinstance(body, dict) and isinstance(body.get("messages"), list) else []:
        if isinstance(msg, dict) and msg.get("role") == "system":
            c = msg.get("content")
            if isinstance(c, str):
                total += len(c)
            elif isinstance(c, list):
                total += sum(len(p["text"]) for p in c if isinstance(p, dict) and isinstance(p.get("text"), str))
    return total


def _user_text(body) -> str | None:
    """请求正文里最后一条 user 消息的文本（content 是字符串，或 [{"type": "text", "text": ...}, ...]）。"""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    for msg in reversed(body["messages"]):
        if isinstance(msg, dict) and msg.get("role") == "user":
            c = msg.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                return "".join(p.get("text", "") for p in c if isinstance(p, dict) and isinstance(p.get("text"), str))
            return None
    return None


class MockServer:
    """with MockServer(seed=0) as s: s.url 是 base_url（http://127.0.0.1:端口/v1）。port=0 挑一个空闲端口。"""

    def __init__(self, seed: int = 0, port: int = 0, max_requests: int = MAX_REQUESTS, table=None, train=None,
                 request_seconds: float = REQUEST_SECONDS):
        self.answerer = MockAnswerer(seed, table, train)
        self.port, self.max_requests, self.request_seconds = port, max_requests, request_seconds
        self.served = 0
        self.server = None
        self.bug: Exception | None = None          # MockLLM 自己出的第一个错（程序错，不是提示的问题）
        self._lock = threading.Lock()

    def __enter__(self):
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "MockLLM"
            sys_version = ""

            def log_message(self, *args):
                pass

            def handle_one_request(self):
                # 整个请求的时限：从等它的第一行起到回完，到点就关掉连接（读一半、写一半都停），不是每次读各等一遍。
                # 每个请求各计一次：HTTP/1.1 的连接不关，同一个连接上的下一个请求重新计时（以前整个连接只计一次，
                # 客户端复用连接时——OpenEvolve 用的 httpx 就这样——连上 REQUEST_SECONDS 秒以后的请求被当场断开）
                self._timer = threading.Timer(mock.request_seconds, self._expire)
                self._timer.daemon = True
                self._timer.start()
                try:
                    super().handle_one_request()
                finally:
                    self._timer.cancel()

            def _expire(self):
                try:
                    import socket
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def finish(self):
                try:
                    super().finish()
                except OSError:
                    pass

            def _route(self) -> str:
                """请求的路径，不带查询串（--llm 的地址里写了 ?… 时，客户端每个请求都带着它）。"""
                return self.path.split("?", 1)[0].split("#", 1)[0].rstrip("/")

            def do_GET(self):
                if self._route() in ("/v1/models", "/models"):
                    return self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model",
                                                                        "owned_by": "mini-alphaevolve"}]})
                return self._json(404, {"error": {"message": f"没有 {self.path[:80]!r}：只有 GET /v1/models 和 "
                                                              "POST /v1/chat/completions"}})

            def do_POST(self):
                if self._route() not in ("/v1/chat/completions", "/chat/completions"):
                    return self._json(404, {"error": {"message": "只有 POST /v1/chat/completions"}}, close=True)
                length = self.headers.get("Content-Length")
                if length is None or not length.isdigit():
                    return self._json(411, {"error": {"message": "要有 Content-Length"}}, close=True)
                if int(length) > MAX_BODY:
                    return self._json(413, {"error": {"message": f"请求正文最多 {MAX_BODY:,} 字节"}}, close=True)
                raw = self.rfile.read(int(length))
                try:
                    body = json.loads(raw)
                except (ValueError, RecursionError):       # 嵌了十万层的 JSON 是 RecursionError（以前连接断开、一句不回）
                    return self._json(400, {"error": {"message": "请求正文不是 JSON（或者嵌得太深）"}})
                text = _user_text(body)
                if text is None:
                    return self._json(400, {"error": {"message": "messages 里要有一条 role 为 user 的消息"}})
                with mock._lock:
                    if mock.served >= mock.max_requests:
                        full = True
                    else:
                        full = False
                        mock.served += 1
                if mock.bug is not None:
                    return self._bug()
                if full:
                    return self._json(503, {"error": {"message": f"这个 MockLLM 服务器已经回答了 {mock.max_requests:,} "
                                                                 "个请求（--max-requests），不再回答"}})
                try:
                    content = mock.answerer.answer(text, _system_chars(body))
                except Exception as e:                              # noqa: BLE001  本讲代码的错：记下，不当作一次失败的提议吞掉
                    with mock._lock:
                        mock.bug = mock.bug or e
                    return self._bug()
                self._json(200, {"id": f"mock-{mock.answerer.n}", "object": "chat.completion", "created": 0,
                                 "model": MODEL,
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                              "finish_reason": "stop"}]})

            def _bug(self):
                """MockLLM 出过程序错以后，每个补全都回 500（Retry-After: 0：客户端不用干等）；用它的程序会停下来、
                把错误印出来（MockServer 退出时抛出、服务器进程退出码 1），不会把它当成 LLM 偶尔失败记下就算了。"""
                return self._json(500, {"error": {"message": MOCK_BUG_REPLY}}, close=True, retry_after=True)

            def _json(self, status, obj, close=False, retry_after=False):
                data = json.dumps(obj, ensure_ascii=False).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    if retry_after:                 # 只有程序错那个 500 带它：客户端认得出是 MockLLM 出了错（MOCK_BUG）
                        self.send_header("Retry-After", "0")
                        self.send_header("X-MockLLM-Bug", "1")
                    if close:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass

        self.server = Server((HOST, self.port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://{HOST}:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            server, self.server = self.server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __exit__(self, typ, value, tb):
        """MockLLM 出过程序错：在这里抛出那个错（和本讲的循环里 MockLLM 的错一样致命）。用它的程序因此停下的
        （接连失败、RuntimeError 之类）不再另说；Ctrl-C 照旧是 Ctrl-C。"""
        self.stop()
        if self.bug is not None and (typ is None or issubclass(typ, Exception)):
            raise self.bug from None


# ---------------------------------------------------------------- 命令行

def _alive(pid: int) -> bool:
    """pid 这个进程还在吗（1 是 init：启动它的进程早就没了、它被过继了，算不在）。"""
    if pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                                   # 在，只是不归我们管
        return True
    return True


def main(argv=None) -> int:
    ap = parser("把 MockLLM 放到 OpenAI 兼容的接口后面（只听 127.0.0.1，没有真的语言模型）。")
    ap.add_argument("--port", type=int_between(0, 65535), default=PORT, help=f"端口（默认 {PORT}；0 = 挑一个空闲的）")
    ap.add_argument("--seed", type=nonnegative_int, default=0, help="MockLLM 的随机种子（默认 0）")
    ap.add_argument("--max-requests", type=positive_int, default=MAX_REQUESTS, metavar="N",
                    help=f"最多回答几个补全（默认 {MAX_REQUESTS:,}），之后回 HTTP 503")
    ap.add_argument("--parent", type=positive_int, default=None, metavar="PID",
                    help="这个进程没了就退出（程序启动它时给自己的进程号；不给就看启动它的那个进程）")
    a = ap.parse_args(argv)
    parent = STARTED_BY if a.parent is None else a.parent
    if not _alive(parent):                                    # 还没开起来，启动它的进程就没了：不留下来
        if a.parent is not None:                              # 程序启动的（make openevolve、07）：那个程序已经不在了
            return 0
        # 手动开的：讲师报过，用 (python3 lecture14/mock_llm_server.py &) 开，它一声不响地退出了，04 只说"连不上"
        print("MockLLM 服务器没开：启动它的进程（比如 ( … & ) 里的那个子 shell、开完就结束的脚本）已经没了，它不留在后台。"
              "在一个开着的终端里运行它（用的时候另开一个终端），或者在用它的那个脚本里用 & 开、用完再停。", file=sys.stderr)
        return 1
    bug = None
    try:
        with MockServer(seed=a.seed, port=a.port, max_requests=a.max_requests) as s:
            print(f"MockLLM 服务器（没有真的语言模型）在 {s.url}，Ctrl-C 停下。\n"      # 每行都放得进 80 列
                  f"  04 加上：--llm {s.url} --model {MODEL}\n"
                  f"  OpenEvolve 的 config.yaml 写：api_base: {s.url}", flush=True)
            def wanted():                                     # 启动它的进程没了就退出
                return _alive(parent) and (a.parent is not None or os.getppid() == parent)
            while s.bug is None and wanted():
                time.sleep(0.2)                               # MockLLM 出了程序错也退出，不过先……
            bug, s.bug = s.bug, None                          # 下面自己说（不让退出 with 时抛）
            if bug is not None:                               # ……马上印出 traceback，再回 BUG_LINGER 秒"出了程序错误"的 500：
                import traceback                              # 客户端的重试也看得到它，认得出是服务器的错（讲师报过：
                traceback.print_exception(bug)                # make openevolve 只数到"连不上 ×4"——OpenEvolve 的 openai
                sys.stderr.flush()                            # 库重试的时候服务器已经退出了）
                started = time.monotonic()
                while time.monotonic() - started < BUG_LINGER and wanted():
                    time.sleep(0.1)
                lingered = time.monotonic() - started            # 启动它的进程先没了时不到 BUG_LINGER 秒
    except OSError as e:
        why = {errno.EADDRINUSE: "这个端口已经有程序在用", errno.EACCES: "没有权限用这个端口（1024 以下的端口要管理员权限）",
               errno.EADDRNOTAVAIL: "这台机器上没有这个地址"}.get(e.errno) or e.strerror or str(e)
        print(f"在 {HOST}:{a.port} 上开不了服务器（{why}）：换一个 --port，或者 --port 0 让它自己挑。", file=sys.stderr)
        return 1
    if bug is not None:
        print(f"MockLLM 服务器停下了：MockLLM 出了程序错误（上面是它的 traceback；这是本讲代码的错，不是客户端的；"
              f"之后的 {lingered:.1f} 秒里每个补全都回了 HTTP 500，说是服务器出了错），退出码 1。", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print(interrupted_line(), end="", file=sys.stderr)
        os._exit(130)
