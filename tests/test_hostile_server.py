"""
LLM 服务器是不可信的输入（issue 19）：tests/hostile_server.py 的服务器按各种坏法回答，客户端（evolve.openai_llm）
和脚本都不崩、不卡、不把密钥带到别处、不把控制字符印到终端。每一节对着 issue 的一条：
1. 转向从来不跟：另开一个"别的地址"，301/302/303/307/308 × 两个接口，它一个请求都收不到（更收不到密钥）；
2. GET /models 回什么都只是"开跑"或"一句话、退出码 2"；同样的坏回复换到 chat 上是一次有名字的失败；
3. 大回复读到上限就停；解析回复的花费和长度成正比（1 倍和 4 倍长的比），块数有上限；
4. 连续几次失败（不管哪一种）就不再调用，说一句为什么；状态码不在 100–599 里不重试；坏响应头叫它的名字；
4b. --llm-timeout 管整个请求（挤牙膏的服务器）；
5. 服务器的文字印出来之前先转义、截断；录制文件里是原样的。
客户端的测试在进程里跑（快）；脚本只跑几次小预算的（放在后台先跑：PREFETCH）。
"""

import contextlib
import json
import math
import os
import re
import time

import pytest

from printed import gave_up_at_the_end
from conftest import ahead, base_env, only_in, run_script_fresh
from hostile_server import ESCAPES, FLOOD_BYTES, SAME_KIND, HostileServer, same_kind
from stub_llm_server import SLACK, STALL, within

from evolve import EXPERT, Evaluator, evolve, render
from evolve.diff import MAX_BLOCKS, NO_BLOCK, TOO_MANY, DiffError, parse_diff
from evolve.mock_llm import Prompt
from evolve.openai_llm import (BAD_HEADERS, BAD_JSON, GAVE_UP, GIVE_UP_AFTER, REDIRECT, TIMEOUT_KIND, TOO_LONG,
                               TRUNCATED, UNREACHABLE, Call, LLMError, OpenAILLM, ReplayLLM, ReplayMismatch, ServerUnreachable,
                               shown, MAX_REPLY_BYTES)
from evolve.openai_llm.calls import _strip_thinking, outcome

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT_04 = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
KEY = "sk-hostile-test-0123456789-never-send-me"
REDIRECTS = ("301", "302", "303", "307", "308")


def prompt():
    return Prompt(render(EXPERT), EXPERT, 1.0, (), ())


def client(url, **kw):
    """这个文件的客户端。timeout 默认 STALL：量"不等"的测试（took < within()）里，跟着转向、卡住、等到超时这类错
    要等 STALL 秒，远在界外；机器再忙，读一个几 MB 的坏回复也不会先超时。要测超时的测试自己传一个小的 timeout。"""
    return OpenAILLM(url, "x", **{**dict(api_key=KEY, timeout=STALL, retries=2, backoff=0.01, seed=0), **kw})


def ask(backend):
    """问一次：(种类或 None, 回复或 None, 用了几秒)。"""
    t = time.monotonic()
    try:
        kind, reply = backend.propose(prompt())
        return None, reply, time.monotonic() - t
    except LLMError as e:
        return e.kind, None, time.monotonic() - t


def one_safe_line(text: str) -> bool:
    """一行、没有控制字符（shown 不用改它）、不长、没有密钥。"""
    return "\n" not in text and shown(text, len(text)) == text and len(text) < 1200 and KEY not in text


# ---------------------------------------------------------------- 1. 转向：不跟，密钥不出门

@pytest.mark.parametrize("status", REDIRECTS)
def test_models_redirect_is_one_sentence_and_the_other_origin_gets_nothing(status):
    with HostileServer() as other, HostileServer(models=status, location=other.url) as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    assert one_safe_line(msg) and f"HTTP {status}" in msg
    assert f"{other.url}/models" in msg and f"--llm {other.url}" in msg          # 说它指向哪里、信得过就用它
    assert other.received == [] and len(s.received) == 1 and s.keys_seen() == [f"Bearer {KEY}"]


@pytest.mark.parametrize("location", ["http://127.0.0.1:9/v1;touch${IFS}/tmp/pwned", "http://127.0.0.1:9/v1 && rm -rf ~",
                                      "http://127.0.0.1:9/$(id)/v1", "http://127.0.0.1:9/v1`id`"])
def test_a_redirect_target_with_shell_characters_is_not_printed_as_a_command(location):
    """讲师报过：转向的 Location 是 http://…/v1;touch${IFS}…，那句话说"就用 --llm http://…/v1;touch${IFS}…"——照抄就在
    shell 里跑了服务器写的命令。地址里有不该有的字符时不给命令，只说不照抄。"""
    with HostileServer(models="302", location=location) as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    assert one_safe_line(msg) and "--llm http" not in msg.split("不跟过去")[1] and "不照抄它" in msg


@pytest.mark.parametrize("status", REDIRECTS)
def test_chat_redirect_is_a_counted_failure_and_the_other_origin_gets_nothing(status):
    with HostileServer() as other, HostileServer(chat=status, location=other.url) as s:
        backend = client(s.url)
        backend.check()
        kind, _, took = ask(backend)
    assert kind == REDIRECT and s.posts() == 1 and took < within(), took            # 不重试、不等
    assert other.received == [] and backend.ledger()["failed"] == {REDIRECT: 1}


def test_only_a_server_on_this_machine_can_say_it_is_a_broken_mock_llm(monkeypatch):
    # 讲师的复查报过：任何服务器带上 X-MockLLM-Bug: 1，一次 500 就不再问它，还让人去看 MockLLM 的终端。本讲的 MockLLM
    # 服务器只在本机：别的地址带这个头，当普通的 500（重试）
    import evolve.openai_llm as ol
    with HostileServer(chat="mock_bug") as s:
        backend = client(s.url, api_key=None)
        backend.check()
        kind, _, _ = ask(backend)
        assert kind == ol.MOCK_BUG and s.posts() == 1                 # 本机：认得出，不重试
        monkeypatch.setattr(ol.client, "is_loopback", lambda host: False)   # 假装服务器在别的机器上（client.py 看的）
        backend = client(s.url, api_key=None)
        kind, _, _ = ask(backend)
    assert kind == "LLM 回 HTTP 500" and s.posts() == 1 + 3, (kind, s.posts())   # 普通的 500：重试 2 次


def test_a_304_is_an_odd_status_not_a_redirect_and_the_location_gets_nothing():
    # 讲师的复查报过：304 Not Modified 被记成"LLM 服务器要转到别的地址（没跟过去）"——304 不是转向
    with HostileServer() as other, HostileServer(chat="304", location=other.url) as s:
        backend = client(s.url)
        backend.check()
        kind, _, _ = ask(backend)
    assert kind == "LLM 回 HTTP 304" and other.received == [], kind
    with HostileServer() as other, HostileServer(models="304", location=other.url) as s:
        client(s.url).check()                      # GET /models 回别的状态：服务器在，开跑（和别的没列出的状态一样）
    assert other.received == []


def test_http_to_an_https_port_is_one_sentence_before_the_run():
    """讲师报过：http:// 对着 https 的端口（它对每个请求回 400 "Client sent an HTTP request to an HTTPS server"），
    开跑前的检查照样通过，之后每个提议都是 HTTP 400。现在 GET /models 回 400 就停在开跑之前，说换成 https:// 试试。"""
    with HostileServer(models="https_port") as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    assert one_safe_line(msg) and "HTTP 400" in msg and "换成 https://" in msg


@contextlib.contextmanager
def closes_without_a_word():
    """127.0.0.1 上的一个端口：每个连接读到客户端的第一段（TLS 的 ClientHello 或 HTTP 请求）就关，一个字节也不回。
    with 块里给出端口号；结束时关掉（服务线程最多跑 10 秒）。"""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        for _ in range(50):                          # 有界：最多 10 秒
            if stop.is_set():
                return
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            with c:
                c.settimeout(2)
                try:
                    c.recv(4096)
                except OSError:
                    pass
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        t.join(2)
        srv.close()


def test_https_to_a_server_that_closes_at_the_tls_hello_suggests_http():
    """讲师报过：https:// 对着一个收到 TLS 的开头就一声不响关掉连接的 http 服务器（UNEXPECTED_EOF），建议是"先启动它"；
    只有回了 http 文字的（WRONG_VERSION_NUMBER）才建议换成 http://。"""
    with closes_without_a_word() as port, pytest.raises(ServerUnreachable) as e:
        OpenAILLM(f"https://127.0.0.1:{port}/v1", "x", api_key="", timeout=5, retries=0).check()
    msg = str(e.value)
    assert one_safe_line(msg) and "一声不响地关了连接" in msg and "换成 http://" in msg and "先启动它" not in msg, msg


def test_http_to_a_port_that_closes_without_a_word_mentions_https():
    """讲师报过：http:// 对着只说 TLS 的端口（uvicorn --ssl-*、openssl s_server：读到的不是 TLS 的开头就关连接），
    说的是"它没回答就关了连接：先启动它"——它开着。现在说那个端口可能只说 https。"""
    with closes_without_a_word() as port, pytest.raises(ServerUnreachable) as e:
        OpenAILLM(f"http://127.0.0.1:{port}/v1", "x", api_key="", timeout=5, retries=0).check()
    msg = str(e.value)
    assert one_safe_line(msg) and "换成 https://" in msg and "先启动它" not in msg, msg


def test_redirect_to_ftp_is_not_followed_either():
    # 转到 ftp://：以前跟过去、一直等到超时；现在马上一句话（开跑前）或一次失败（跑的时候）
    with HostileServer(models="ftp") as s:
        t = time.monotonic()
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    took = time.monotonic() - t
    assert took < within() and one_safe_line(str(e.value)) and "ftp://127.0.0.1:21/v1/models" in str(e.value), took
    with HostileServer(chat="ftp") as s:
        kind, _, took = ask(client(s.url))
    assert kind == REDIRECT and took < within() and s.posts() == 1, took


# ---------------------------------------------------------------- 2. GET /models 和 chat 的坏回复

MODELS_CASES = ["ids_int", "ids_null", "nested", "not_json", "huge_length", "chunk_overflow", "many_headers",
                "long_header", "status999", "escape_ids", "hang_up"]


@pytest.mark.parametrize("mode", MODELS_CASES)
def test_any_models_reply_is_one_sentence(mode):
    # 以前这几种都是 traceback、退出码 1（TypeError、RecursionError、OverflowError……）
    with HostileServer(models=mode) as s:
        t = time.monotonic()
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
        took = time.monotonic() - t
    assert one_safe_line(str(e.value)) and took < within(), (str(e.value), took)


def test_models_reply_that_is_not_a_model_list_lets_the_run_start():
    for mode in ("status404",):
        with HostileServer(models=mode) as s:                  # …/v1 下面没有 /models 的服务器：照样开跑
            client(s.url).check()
    with HostileServer(model_ids=("x", "y")) as s:
        client(s.url).check()


def test_a_404_without_v1_in_the_address_is_one_sentence_saying_v1():
    """讲师报过：--llm http://127.0.0.1:11434（忘了 /v1）开跑前的 GET /models 是 404，照样开跑，每个提议都是 HTTP 404，
    跑完退出码 0，没说一句 /v1。"""
    with HostileServer(models="status404", chat="status404") as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.origin).check()
    msg = str(e.value)
    assert one_safe_line(msg) and "HTTP 404" in msg and "/v1 结尾" in msg and s.posts() == 0


def test_model_names_from_the_server_are_escaped_and_cut():
    with HostileServer(models="escape_ids") as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    assert "\x1b" not in msg and "\\x1b[2J\\x1b[31m" in msg and "\\x9b" in msg and "\\u202e" in msg
    assert "…（共 2,000,009 个字符）" in msg and len(msg) < 600


@pytest.mark.parametrize("mode", ["key_in_transfer_encoding", "key_in_content_length", "key_in_content_encoding"])
def test_a_key_echoed_in_a_response_header_is_not_printed_even_between_escapes(mode):
    # 审读报过：服务器把收到的密钥写进 Transfer-Encoding（或长度头、Content-Encoding），每 4 个字夹一个 ESC，开跑前的
    # 检查印出"Transfer-Encoding 写的是 sk-h\\x1bosti\\x1ble-t\\x1best-……"：先 shown() 再抹密钥，\\x1b 的 x、1、b 把
    # 密钥拆散了，抹不掉；读的人跳过 \\x1b 照样读得出它。现在先抹再 shown
    from evolve.openai_llm import normalized
    from evolve.openai_llm.api_key import _key_grams
    with HostileServer(models=mode) as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    read = normalized(msg.replace("\\x1b", ""))                  # 读的人看到的：跳过转义的 ESC
    assert one_safe_line(msg) and not any(g in read for g in _key_grams(KEY)), msg


# 和 make openevolve 同样的叫法（hostile_server.SAME_KIND，test_openevolve_example.py 对着 OpenEvolve 查同一张表）。
# 讲师报过：压缩过的回复、只会流式回答的服务器被说成"不是 JSON"，两个不一样的长度头这里照读；审读报过：一行没有
# 冒号的响应头、Transfer-Encoding: gzip, chunked、150 KB 的响应头、23 位的长度头，两边说法不同
CHAT_CASES = {mode: same_kind(mode) for mode in SAME_KIND}


@pytest.mark.parametrize("mode,kind", CHAT_CASES.items())
def test_bad_chat_replies_are_named_failures_and_not_retried(mode, kind):
    # 不重试看的是服务器收到几个 POST。这些回复都不是超时（SAME_KIND 里没有），期限给得很宽：以前是 3 秒、还要求
    # 2.5 秒以内，负载 25 的机器上 gzip_bomb 用了 2.66 秒、3.05 秒（超时），测试说这个种类的失败坏了，其实什么都没坏
    with HostileServer(chat=mode) as s:
        got, _, took = ask(client(s.url, timeout=30))
    assert got == kind and s.posts() == 1, (got, s.posts(), f"{took:.2f} 秒")


def test_a_head_cut_short_is_a_closed_connection_not_an_empty_reply():
    # 审读报过：响应头写到一半就关了连接，http.client 当响应头读完了，空的正文被说成"LLM 回复不是 JSON"；
    # make openevolve（httpcore）说"连不上"。现在两边都是"它没回答就关了连接"（连不上，会重试）
    from evolve.openai_llm import SILENT_CLOSE
    with HostileServer(chat="head_cut") as s:
        backend = client(s.url, retries=0)
        got, _, _ = ask(backend)
        with HostileServer(models="head_cut") as m, pytest.raises(ServerUnreachable) as e:
            client(m.url).check()
    assert got == UNREACHABLE and SILENT_CLOSE in str(e.value), str(e.value)


def test_a_compressed_model_list_names_the_compression_not_the_address():
    """讲师报过：服务器（或中间的代理）不管 Accept-Encoding: identity 照样 gzip，开跑前说"回答读不懂（不是 JSON）：
    --llm 的地址要指向 OpenAI 兼容的接口"——地址是对的，响应头说得明白。"""
    with HostileServer(models="gzip_list") as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
        asked = s.received[0][2].get("accept-encoding")
    msg = str(e.value)
    assert asked == "identity" and "压缩过的（Content-Encoding: gzip）" in msg and "不是 JSON" not in msg, msg
    assert "关掉它们对这个地址的压缩" in msg, msg


def test_a_reply_with_a_5000_digit_number_is_json_and_the_number_is_not_reported():
    """审读报过：usage 里一个 5000 位的整数（合法的 JSON，Python 默认不肯转这么长的整数），回复就被记作"LLM 回复不是
    JSON"、修改丢了。现在修改照常打上，那个数当作服务器没报（不印成几千位的 token 数）。"""
    with HostileServer(chat="huge_int") as s:
        backend = client(s.url)
        kind, reply, _ = ask(backend)
        calls = backend.calls
    assert kind is None and reply and calls[-1].prompt_tokens is None and calls[-1].completion_tokens == 7


def test_json_with_long_integers_is_read_in_time_proportional_to_its_length():
    from evolve.openai_llm import MAX_INT_DIGITS, loads
    assert loads(b'{"a": ' + b"1" * MAX_INT_DIGITS + b"}")["a"] == int("1" * MAX_INT_DIGITS)
    assert loads(b'[' + b"9" * 100_000 + b', -' + b"9" * 5000 + b', 3]') == [math.inf, -math.inf, 3]


# ---------------------------------------------------------------- 3. 大回复、解析的花费

@pytest.mark.quiet
def test_a_10_mb_reply_is_cut_at_the_bound_not_read_to_the_end():
    with HostileServer(chat="flood") as s:
        kind, _, took = ask(client(s.url))
    assert kind == TOO_LONG and took < within(), took
    sent = s.answers_written(1)
    assert sent and sent[-1] < FLOOD_BYTES                           # 客户端读到上限就挂了，服务器没写完


@pytest.mark.parametrize("mode", ["thinks", "blocks"])
def test_long_replies_under_the_bound_cost_well_under_a_second(table, train, mode):
    # 十万个不配对的 <think> 后面跟一个能打上的修改：没写完的草稿（后面整段都是草稿），记作"没有 SEARCH/REPLACE 块"；
    # 一万多个 SEARCH/REPLACE 块：读到第 MAX_BLOCKS + 1 块就停，记作"块太多"。两种都在一秒内（以前一个要几十秒；
    # 界是一秒加上忙的机器的余量 within）
    with HostileServer(chat=mode) as s:
        backend = client(s.url)
        t = time.monotonic()
        out = evolve(Evaluator(train, table), 2, seed=0, llm=backend)
        took = time.monotonic() - t
    assert took < within(1.0) and sum(backend.ledger()["failed"].values()) == 0, took
    if mode == "blocks":
        assert out["failed"] == {TOO_MANY: 2}
    else:
        assert out["failed"] == {NO_BLOCK: 2} and max(out["history"]) >= 1.0


def _cpu_times(fn, args, repeat=5):
    """fn(arg) 用的 CPU 时间（这个线程的，后台的测试线程和别的进程抢走的时间不算），每个 arg 取 repeat 次里最少的；
    几个 arg 轮流量，机器忙的那一阵落在哪个上面都一样。"""
    best = [float("inf")] * len(args)
    for _ in range(repeat):
        for i, arg in enumerate(args):
            t = time.thread_time()
            fn(arg)
            best[i] = min(best[i], time.thread_time() - t)
    return best


def _reply_path(text):
    """回复从后端到进化循环走的路：去掉 <think> 草稿，读 SEARCH/REPLACE（块太多、没有块都只是一次失败）。"""
    try:
        return outcome(Call(0, "", text, None, 0.0, None, None, None))
    except DiffError:
        return None


@pytest.mark.quiet
@pytest.mark.parametrize("unit", ["<think>", "<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n",
                                  "<think>\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n</think>\n"])
def test_parsing_a_reply_is_linear_in_its_length(unit):
    # 同一种回复，4 倍长，花的时间不到 1 倍长的 10 倍（线性是 4 倍，平方是 16 倍）。两个长度都比 CPU 的缓存大
    # （一个放得进缓存、一个放不进时，线性的也会差出好几倍）
    edit = "\n<<<<<<< SEARCH\n    if M <= 16:\n=======\n    if M <= 32:\n>>>>>>> REPLACE\n"
    n = 512_000 // len(unit)
    small, big = unit * n + edit, unit * (4 * n) + edit
    t1, t4 = _cpu_times(_reply_path, [small, big])
    assert t4 < 10 * t1 + 0.02, (t1, t4)


def test_many_blocks_stop_at_the_bound():
    block = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    assert len(parse_diff(block * MAX_BLOCKS)) == MAX_BLOCKS
    with pytest.raises(DiffError) as e:
        parse_diff(block * (MAX_BLOCKS + 1))
    assert e.value.kind == TOO_MANY and f"第 {5 * MAX_BLOCKS + 1} 行" in str(e.value)


def test_strip_thinking_is_the_same_as_the_regular_expressions():
    # 对照正则写的参考（平方级，只用在短的上）：开头的草稿——第一个 </think> 前面没有 <think>——到它为止删掉；之后每个
    # <think> 到它后面第一个 </think>，没有 </think> 的 <think> 到末尾
    import random
    rng = random.Random(5)
    for _ in range(5000):
        t = "".join(rng.choice(["<think>", "</think>", "a", "\n", "<think", "think>"]) for _ in range(rng.randint(0, 10)))
        ref = re.sub(r"\A(?:(?!<think>).)*?</think>", "", t, flags=re.S)
        assert _strip_thinking(t) == re.sub(r"<think>.*?</think>|<think>.*", "", ref, flags=re.S), t


_FULLWIDTH = str.maketrans({c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7f))})
_KEY_LETTERS = re.sub(r"[^0-9A-Za-z]", "", KEY)


def _megabyte(unit: str) -> str:
    """unit 重复到 1 MB 的 UTF-8（一个回复最多读 MAX_REPLY_BYTES 字节）。"""
    return unit * (MAX_REPLY_BYTES // len(unit.encode()))


@pytest.mark.quiet
@pytest.mark.parametrize("unit", [KEY.translate(_FULLWIDTH) + " ",       # 全角的密钥，一遍又一遍
                                  "ａｂｃ ",                              # 全角字，没有密钥
                                  "a中",                                 # ASCII 和汉字一个隔一个
                                  _KEY_LETTERS[4:12] + "Z",              # 密钥的一段（8 个字），十一万处
                                  " ".join(KEY) + "\n"],                 # 空格隔开的密钥
                         ids=["fullwidth_key", "fullwidth_text", "mixed", "key_pieces", "spaced_key"])
def test_redacting_a_crafted_megabyte_reply_takes_a_small_fraction_of_a_second(unit):
    """讲师的复查报过：抹一个特意凑的 1 MB 回复里的密钥要 2.7 秒 CPU（不归 --llm-timeout 管；录制时每个回复还要抹
    两遍）：非 ASCII 的字逐个在 Python 里归一，找到的每一处逐个在 Python 里记。以前这几种各要 0.3–0.7 秒（这台机器、
    1 MB），现在一两百分之一秒。"""
    from evolve.openai_llm import redact
    text = _megabyte(unit)
    (took,) = _cpu_times(lambda t: redact(t, KEY), [text], repeat=1)
    assert took < 0.2, took


def test_a_text_made_of_key_pieces_is_all_key():
    # 超过 MAX_PIECES 处密钥的碎片：整段都抹掉（逐处抹每处要一微秒上下）；不到时只抹那几处
    from evolve.openai_llm import MAX_PIECES, redact
    piece = _KEY_LETTERS[4:12] + "Z"
    assert redact("前面 " + piece * MAX_PIECES, KEY) == "前面 " + "***Z" * MAX_PIECES
    assert redact("前面 " + piece * (MAX_PIECES + 1), KEY) == "***"


def test_a_recorded_line_stays_json_whatever_the_key_pieces_in_it(tmp_path):
    # 录制文件每段文字各抹各的：整段是密钥碎片的回复抹成 ***，这一行还是 JSON（不是整行变成 ***）；拆成两行的密钥
    # 写进 JSON 是 "…\n…"，抹一整行时认不出，一段一段地抹认得出
    from evolve.openai_llm import MAX_PIECES
    f = tmp_path / "run.jsonl"
    backend = client("http://127.0.0.1:9/v1", record=str(f))
    pieces = (_KEY_LETTERS[4:12] + "Z") * (MAX_PIECES + 1)
    split = KEY[:14] + "\n# part 2\n" + KEY[14:]
    for n, reply in enumerate([pieces, split]):
        backend._log(Call(n, "p", reply, None, 0.1, None, None, None))
    backend.close()
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
    assert lines[1]["reply"] == "***" and lines[2]["reply"] == "***\n# part 2\n***", lines[2]


def test_characters_skipped_when_normalizing_have_no_letters_or_digits():
    """_NO_LETTERS 里的字（汉字、谚文音节、第 2 到 16 平面）归一以后一个字母、数字也没有：抹密钥时不用一个个地算
    （一个 1 MB 的回复里能有二十几万个不同的这种字）。一个个地查。"""
    from evolve.openai_llm.api_key import _NO_LETTERS, _letters_of
    ranges = [r.split("-") for r in re.findall(r".-.", _NO_LETTERS.pattern[1:-2])]
    chars = [chr(c) for a, b in ranges for c in range(ord(a), ord(b) + 1)]
    assert len(chars) > 1_000_000 and all(_NO_LETTERS.fullmatch(c) for c in chars[::997])
    assert not any(_letters_of(chars))


# ---------------------------------------------------------------- 4. 放弃的规则、不重试的状态码、坏响应头

def run_against(table, train, chat, budget=30, **kw):
    """对着 chat 模式的服务器进化 budget 步（两个请求并发）：(结果, 后端, 服务器, 用了几秒, notify 收到的话)。"""
    said = []
    with HostileServer(chat=chat) as s:
        backend = client(s.url, concurrency=2, notify=said.append, **kw)
        t = time.monotonic()
        out = evolve(Evaluator(train, table), budget, seed=0, llm=backend)
        took = time.monotonic() - t
    return out, backend, s, took, said


def test_status_999_is_not_retried_and_the_run_gives_up(table, train):
    # 退避给成 STALL 秒：重试了的话光等就要 STALL 秒，远在界外（服务器收到几个 POST 另外数）
    out, backend, s, took, said = run_against(table, train, "status999", backoff=STALL)
    assert s.posts() == GIVE_UP_AFTER and took < within(), took
    assert out["failed"] == {"LLM 回 HTTP 999": GIVE_UP_AFTER, GAVE_UP: 30 - GIVE_UP_AFTER}
    book = backend.ledger()                      # 成本账只算发出去的请求；没问的另记
    assert book["calls"] == s.posts() and book["not_sent"] == 30 - GIVE_UP_AFTER
    assert len(said) == 1 and one_safe_line(said[0]) and "LLM 回 HTTP 999" in said[0] and GAVE_UP in said[0]


def test_a_server_failing_everything_is_given_up_after_a_few_calls(table, train):
    # 500 不带 Retry-After：第一批（两个并发）各重试到底；之后上一次调用已经失败，不再重试；连续 4 次就放弃
    out, backend, s, took, said = run_against(table, train, "http500", retries=3)
    assert out["failed"] == {"LLM 回 HTTP 500": GIVE_UP_AFTER, GAVE_UP: 30 - GIVE_UP_AFTER}
    assert s.posts() == 2 * 4 + 2 and len(said) == 1
    assert out["best"][0] == EXPERT and max(out["history"]) == out["history"][0]      # 最好的程序还是起点


def test_failures_of_different_kinds_in_a_row_also_give_up(table, train):
    kinds = ["nested", "status999", "many_headers", "flood"]
    out, backend, s, took, said = run_against(table, train, lambda n: kinds[n % 4], backoff=STALL)
    assert out["failed"] == {BAD_JSON: 1, "LLM 回 HTTP 999": 1, BAD_HEADERS: 1, TOO_LONG: 1, GAVE_UP: 26}
    assert s.posts() == 4 and took < within(), took


def test_a_server_that_recovers_is_not_given_up_on(table, train):
    # 每三个请求坏一个（种类轮换）：从来不连续失败 GIVE_UP_AFTER 次，每个提议都问了服务器
    bad = ["nested", "status999", "many_headers", "http500"]
    out, backend, s, took, said = run_against(table, train, lambda n: bad[(n // 3) % 4] if n % 3 == 1 else "edit",
                                              retries=0)
    assert GAVE_UP not in out["failed"] and said == [] and s.posts() == 30
    assert sum(out["failed"].values()) == 10 and out["history"][-1] >= out["history"][0]   # 其余 20 个照常进了循环


@pytest.mark.parametrize("mode", ["many_headers", "long_header"])
def test_malformed_headers_are_named_as_such(mode):
    # 以前记作"连不上"，还重试了三次（退避 1 秒时 14 秒；这里退避 STALL 秒，重试一次就远在界外）
    with HostileServer(chat=mode) as s:
        kind, _, took = ask(client(s.url, retries=3, backoff=STALL))
    assert kind == BAD_HEADERS and s.posts() == 1 and took < within(), took


# ---------------------------------------------------------------- 4b. 整个请求的超时

@pytest.mark.quiet
@pytest.mark.parametrize("mode", ["trickle", "trickle_head", "processing_forever"])
def test_timeout_bounds_the_whole_request_not_each_read(mode):
    # 十分之一秒一个字节：每一次读都很快有东西，按"每次读"算的超时永远不到（要等服务器挤满 STALL 秒把连接关掉）；
    # 按整个请求算，半秒就停
    with HostileServer(chat=mode, drip=0.1, max_seconds=STALL) as s:
        kind, _, took = ask(client(s.url, timeout=0.5))
    assert kind == TIMEOUT_KIND and 0.45 < took < within(0.5) and s.posts() == 1, (kind, took)


def test_the_timeout_never_shuts_down_another_connection_that_got_the_same_fd(monkeypatch):
    """helper 查到：看门的计时器到点时先关套接字对象（读的线程醒了、http.client 关掉连接，fd 号空了出来），再按连上时
    记下的 fd 号 fromfd 一个出来 shutdown——这时那个号可能已经是这个进程里另一个连接的了，它就被从底下关掉。测试进程里
    八个线程一起超时，一分钟约有一个请求这样断掉；make test 偶尔报的 make openevolve"LLM 超时 ×2、LLM 回复没传完整 ×1"
    （挤牙膏的服务器就在 pytest 进程里）很可能就是它。这里让"读的线程先关掉、另一个连接拿到同一个号"在计时器的两步
    之间发生：那个连接要完好无损。"""
    import socket
    from evolve.openai_llm import wire
    other = socket.create_server(("127.0.0.1", 0), backlog=256)
    got = {}
    real = socket.fromfd

    def after_the_reader_closed(fd, *args):                  # 计时器的第二步之前：等读的线程关掉连接、号被别人拿走
        end = time.monotonic() + STALL
        while time.monotonic() < end:
            try:
                os.fstat(fd)
            except OSError:
                break
            time.sleep(0.01)
        for _ in range(200):                                  # 新的 fd 是最小的空号：填满比它小的，就轮到刚空出来的那个
            c = socket.create_connection(other.getsockname())
            got.setdefault("fillers", []).append(c)
            if c.fileno() == fd:
                got["victim"] = got["fillers"].pop()
                break
        return real(fd, *args)
    only_in(monkeypatch, wire, "socket", fromfd=after_the_reader_closed)   # 只换 wire.py（看门的计时器）看到的
    try:
        with HostileServer(chat="processing_forever", drip=0.1, max_seconds=STALL) as s:
            kind, _, took = ask(client(s.url, timeout=0.5, retries=0))
        assert kind == TIMEOUT_KIND, kind
        if "fillers" in got:                                  # 改好以后计时器不再按号找套接字：走不到这里
            assert "victim" in got, "测试的前提：另一个连接拿到了同一个 fd 号"
            got["victim"].settimeout(0.2)
            with pytest.raises(socket.timeout):                # 完好的连接：没人写，读就等着（被 shutdown 的读到 b""）
                got["victim"].recv(1)
    finally:
        for c in got.get("fillers", []) + [got.get("victim")]:
            if c is not None:
                c.close()
        other.close()


@pytest.mark.quiet
def test_start_up_check_has_the_same_whole_request_bound():
    with HostileServer(models="trickle", drip=0.1, max_seconds=STALL) as s:
        t = time.monotonic()
        with pytest.raises(ServerUnreachable) as e:
            client(s.url, timeout=0.5).check()
        took = time.monotonic() - t
    assert took < within(0.5) and one_safe_line(str(e.value)) and "0.5 秒内没有回完" in str(e.value), took


# ---------------------------------------------------------------- 5. 给人看的文字：转义、截断；录制文件是原样的

def test_shown_escapes_control_characters_and_cuts():
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("\x00\x07\x7f\x85\x9b\u2028\u202e\u2066\ud800") == "\\x00\\x07\\x7f\\x85\\x9b\\u2028\\u202e\\u2066\\ud800"
    assert shown("a\u200bb\u2060c\ufeff") == "a\\u200bb\\u2060c\\ufeff"        # 看不见的零宽字符（讲师报过零宽空格原样印出）
    # Unicode 的标签字符：看不见，能把一段 ASCII（这里是 "rm"）藏在模型名里（讲师报过）
    assert shown("gpt\U000e0072\U000e006d") == "gpt\\U000e0072\\U000e006d"
    assert shown("one\ntwo\tthree\r") == "one\\ntwo\\tthree\\r"
    assert shown("one\ntwo\tthree\r", lines=True) == "one\ntwo\tthree\\r"
    assert shown("中文 ok é", 100) == "中文 ok é"
    assert shown("x" * 250) == "x" * 200 + "…（共 250 个字符）"
    big = "\x1b" * 5_000_000
    assert shown(big, 10) == "\\x1b" * 2 + "…（共 5,000,000 个字符）"        # 转义以后最多 10 个字符，转义不拆开
    (took,) = _cpu_times(lambda text: shown(text, 10), [big], repeat=1)   # 只看开头：CPU 时间，机器忙不忙都一样
    assert took < 0.05, took
    assert shown(12) == "12"


def test_recording_keeps_the_exact_reply_and_replays_it(tmp_path):
    # 回复里的控制字符、落单的代理项原样录进文件（文件是合法的 UTF-8），回放出来一字不差
    f = tmp_path / "run.jsonl"
    with HostileServer(chat="painted") as s:
        rec = client(s.url, record=str(f))
        kind, reply = rec.propose(prompt())
        rec.close()
    assert ESCAPES in reply
    raw = f.read_bytes()
    raw.decode("utf-8")                                              # 严格的 UTF-8：代理项写成了 \ud800
    assert KEY.encode() not in raw
    rep = ReplayLLM(str(f))
    assert rep.propose(prompt()) == (kind, reply)


def recorded_lines(tmp_path) -> list[str]:
    """对着一个正常回答的服务器录一次调用，返回录制文件的行（文件头、一次调用）：改坏它们的测试从这里开始。"""
    f = tmp_path / "run.jsonl"
    with HostileServer() as s:
        rec = client(s.url, record=str(f))
        rec.propose(prompt())
        rec.close()
    return f.read_text(encoding="utf-8").splitlines()


def test_replay_file_with_control_characters_in_names_is_refused(tmp_path):
    lines = recorded_lines(tmp_path)
    head = json.loads(lines[0])
    head["model"] = "x\x1b[2J"
    (tmp_path / "bad.jsonl").write_text("\n".join([json.dumps(head)] + lines[1:]), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:1: "):
        ReplayLLM(str(tmp_path / "bad.jsonl"))
    call = json.loads(lines[1])
    call.update(reply=None, error="\x1b[31m假的失败")
    (tmp_path / "bad2.jsonl").write_text("\n".join([lines[0], json.dumps(call)]), encoding="utf-8")
    with pytest.raises(ReplayMismatch, match="bad2.jsonl:2: "):         # 调用的行：回放读到它时停下
        ReplayLLM(str(tmp_path / "bad2.jsonl")).propose(prompt())


@pytest.mark.parametrize("field, value", [("latency", -4.9), ("latency", float("nan")), ("latency", 1e300),
                                          ("latency", 9999999.0), ("prompt_tokens", -7), ("completion_tokens", -1),
                                          ("prompt_tokens", 10**40), ("model", "m" * 10_000)])
def test_replay_file_with_impossible_numbers_is_refused(tmp_path, field, value):
    """讲师报过：手改过的录制文件里的负数、nan、300 位的数照印（"一共等了 -4.9 秒""-7 个 token"）。"""
    lines = recorded_lines(tmp_path)
    call = json.loads(lines[1])
    call[field] = value
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], json.dumps(call)]), encoding="utf-8")
    with pytest.raises(ReplayMismatch, match="bad.jsonl:2: "):          # 回放读到那一行时停下，一句话
        ReplayLLM(str(tmp_path / "bad.jsonl")).propose(prompt())


def test_model_argument_with_control_characters_is_refused():
    with pytest.raises(ValueError, match="--model"):
        OpenAILLM("http://127.0.0.1:9/v1", "x\x1b[2J")


# ---------------------------------------------------------------- 脚本：几次小预算的运行（后台先跑）

def run_04(url, *args):
    return run_script_fresh(SCRIPT_04, "--budget", "30", "--seeds", "1", "--jobs", "1", "--llm", url, "--model", "x",
                            *args, env={**base_env(), "OPENAI_API_KEY": KEY}, timeout=120)


def failed_rows(stdout):
    """演示 4 的表里"没变成可评估的程序"那一行的数，和它下面"其中 …"各行的 {种类: 数}。"""
    lines = stdout.splitlines()
    total = next(int(re.findall(r"([\d,]+) 个程序", line)[-1].replace(",", "")) for line in lines
                 if "没变成可评估的程序" in line)
    rows = {}
    for line in lines:
        m = re.match(r"\s*│?\s*其中 (.+?)\s+│?\s*([\d,]+) 个程序", line)
        if m:
            rows[m.group(1).strip(" │")] = int(m.group(2).replace(",", ""))
    return total, rows


@ahead(waits=True)
def fails_everything_04():
    """04 --budget 30 --seeds 1 对着每个 chat 请求都回 500（不带 Retry-After）的服务器：(结果, 用了几秒, 别处收到的)。"""
    with HostileServer() as other, HostileServer(chat="http500", location=other.url) as s:
        t = time.monotonic()
        p = run_04(s.url)
        return p, time.monotonic() - t, list(other.received), s.posts()


def test_04_against_a_server_that_fails_everything_ends_in_seconds():
    p, took, elsewhere, posts = fails_everything_04()
    assert gave_up_at_the_end(p), p.stderr[-2000:]
    assert took < 30                                                 # 以前 150 秒还没跑完
    total, rows = failed_rows(p.stdout)
    assert total == 30 and sum(rows.values()) == 30 and rows == {"LLM 回 HTTP 500": GIVE_UP_AFTER, GAVE_UP: 26}
    said = [line for line in p.stderr.splitlines() if GAVE_UP in line]
    assert len(said) == 1 and "接连 4 次调用失败" in said[0]
    assert posts == 2 * 4 + 2 and elsewhere == [] and KEY not in p.stdout + p.stderr
    # 讲师报过：服务器收到 10 个 POST，成本表只说"调用次数 4 次"：重试也是请求（托管的 API 按请求收钱）
    flat = "".join(p.stdout.split())
    assert f"LLM：调用次数（每个提议最多一次）{GIVE_UP_AFTER}次" in flat
    assert f"LLM：发出去的HTTP请求（含重试）{posts}个" in flat


@ahead(waits=True)
def redirects_04():
    """04 --budget 30 --seeds 1 对着每个 chat 请求都转向（308）到另一个地址的服务器：(结果, 用了几秒, 别处收到的)。"""
    with HostileServer() as other, HostileServer(chat="308", location=other.url) as s:
        t = time.monotonic()
        p = run_04(s.url)
        return p, time.monotonic() - t, list(other.received), s.keys_seen()


def test_04_chat_redirects_are_counted_and_the_key_stays_home():
    # 以前 POST 被跟到另一个地址（变成 GET，带着密钥）；现在每次都是一次"要转到别的地址"，4 次以后不再调用
    p, took, elsewhere, keys = redirects_04()
    assert gave_up_at_the_end(p), p.stderr[-2000:]
    total, rows = failed_rows(p.stdout)
    assert total == 30 and rows == {REDIRECT: GIVE_UP_AFTER, GAVE_UP: 30 - GIVE_UP_AFTER} and took < 30
    assert elsewhere == [] and keys == [f"Bearer {KEY}"] * (1 + GIVE_UP_AFTER)       # GET /models 和 4 个 POST
    assert KEY not in p.stdout + p.stderr
    # 演示 4 的成本只算真的发出去的请求（讲师报过：服务器只收到 4 个 POST，表和观察却说问了 LLM 30 次、30 个回复）
    flat = "".join(p.stdout.split())
    assert f"LLM：调用次数（每个提议最多一次）{GIVE_UP_AFTER}次（另{30 - GIVE_UP_AFTER}个提议没问" in flat
    assert f"问了LLM{GIVE_UP_AFTER}次" in flat and f"其中{30 - GIVE_UP_AFTER}个根本没问LLM" in flat


@ahead(waits=True)
def trickle_04():
    """04 --budget 4 --llm-timeout 1 对着正文十分之一秒一个字节、挤 STALL 秒的服务器：(结果, 用了几秒)。期限不比 1 秒
    更短：开跑前的 GET /models 也要在这个期限里回完（机器忙的时候 0.3 秒不够，见 test_openai_llm.py 的 never_in_time）。"""
    with HostileServer(chat="trickle", drip=0.1, max_seconds=STALL) as s:
        t = time.monotonic()
        p = run_script_fresh(SCRIPT_04, "--budget", "4", "--seeds", "1", "--jobs", "1", "--llm", s.url, "--model", "x",
                             "--llm-timeout", "1", env=base_env(), timeout=120)
        return p, time.monotonic() - t


def test_04_llm_timeout_bounds_a_trickling_server():
    # 以前 --llm-timeout 5 的运行 60 秒还在等第一批；现在每个请求 1 秒，两个一批，4 个超时以后不再调用（按每次读算的话
    # 每批要等服务器挤满 STALL 秒）
    p, took = trickle_04()
    assert gave_up_at_the_end(p), p.stderr[-2000:]
    assert took < 20, took
    total, rows = failed_rows(p.stdout)
    assert total == 4 and rows == {TIMEOUT_KIND: 4}


STARTUP_CASES = ["302", "nested", "ids_int", "huge_length", "escape_ids"]     # 其余的在进程里查过（上面）


@ahead(waits=True)
def startup_04():
    """04 对着 GET /models 的各种坏回复（转向的指向另一个地址）：{模式: (结果, 别处收到的)}。"""
    out = {}
    for mode in STARTUP_CASES:
        with HostileServer() as other, HostileServer(models=mode, location=other.url) as s:
            out[mode] = run_04(s.url), list(other.received)
    return out


@pytest.mark.parametrize("mode", STARTUP_CASES)
def test_04_start_up_check_exits_2_with_one_line(mode):
    p, elsewhere = startup_04()[mode]
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and one_safe_line(p.stderr.strip()) and elsewhere == []


@ahead(waits=True)
def fails_everything_04_in_a_terminal():
    """04 --budget 10 --seeds 1 在 80 列的伪终端里对着每个 chat 请求都回 500 的服务器（不带 Retry-After：第一个请求
    按退避重试，要等 1 + 2 + 4 秒，所以后台先跑：PREFETCH）。"""
    from conftest import run_in_pty
    env = {k: v for k, v in base_env().items() if k != "MINI_ALPHAEVOLVE_GPU"}     # 讲义的 H100：命令里不多 --gpu
    with HostileServer(chat="http500") as s:
        return run_in_pty([SCRIPT_04, "--budget", "10", "--seeds", "1", "--llm", s.url, "--model", "x"], 80,
                          {"NO_COLOR": "1"}, env=env, timeout=120, stderr_too=True)


PREFETCH = [fails_everything_04, redirects_04, trickle_04, startup_04, fails_everything_04_in_a_terminal]


def test_readme_says_what_the_client_refuses_with_the_numbers_the_code_uses():
    # README 的"用真的语言模型"：不跟转向、回复的上限、块数的上限、连续几次失败就不再调用、转义——每个种类的名字和
    # 数都是代码里的
    from evolve.openai_llm import MAX_REPLY_BYTES, TRUNCATED
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## 用真的语言模型", 1)[1].split("\n## ", 1)[0]
    for kind in (REDIRECT, TOO_LONG, GAVE_UP, BAD_HEADERS, TRUNCATED, TOO_MANY):
        assert f"`{kind}`" in section, kind
    assert f"回复最多读 {MAX_REPLY_BYTES / 1e6:g} MB" in section and f"最多 {MAX_BLOCKS} 个" in section
    assert f"连续 {GIVE_UP_AFTER} 次调用失败" in section and shown("\x1b") in section and "…（共 N 个字符）" in section
    from evolve.openai_llm import MAX_WAIT, RETRIES, WAIT_SAID
    flat = "".join(section.split())
    assert (f"一次调用里按`Retry-After`要等的加起来超过{MAX_WAIT:g}秒就不等，种类写成`LLM回HTTP429，要等{MAX_WAIT:g}秒以上"
            "（不等）`") in flat
    assert f"加起来最多{MAX_WAIT:g}秒，要等{WAIT_SAID:g}秒以上时标准错误上说一句" in flat
    assert f"最多 {RETRIES} 次" in section
    from evolve.openai_llm import MAX_RECORD_BYTES, MAX_RECORD_LINE
    assert f"一行最多 {MAX_RECORD_LINE / 1e6:g} MB、整个文件最多 {MAX_RECORD_BYTES / 1e9:g} GB" in section


def test_http_proxy_from_the_environment_still_works(monkeypatch):
    # 不是本机的地址照旧按 http_proxy 走代理（请求行里是完整的地址）——只要明文请求里没有密钥；本机的地址不走代理
    with HostileServer() as proxy, HostileServer() as local:
        monkeypatch.setenv("http_proxy", proxy.origin)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        client("http://llm.example.invalid/v1?api-version=1", api_key="").check()
        client(local.url).check()
        client(local.url.replace("127.0.0.1", "127.1")).check()             # 127.x 的别的写法也是本机
    assert [r[:2] for r in proxy.received] == [("GET", "http://llm.example.invalid/v1/models?api-version=1")]
    assert proxy.received[0][2]["host"] == "llm.example.invalid"
    assert [r[:2] for r in local.received] == [("GET", "/v1/models")] * 2


@pytest.mark.parametrize("host", ["llm.example.invalid", "0.0.0.0", "192.168.1.20"])
def test_a_key_never_goes_out_over_plain_http(monkeypatch, host):
    """讲师报过：--llm http://别的主机/v1 加上环境里的 http_proxy，代理的日志里是 Authorization: Bearer 密钥；后来又报：
    不经代理也一样，明文 http 一路上的每一跳都看得到密钥。现在带着密钥的明文 http 只发给本机：别的主机一句话
    （说怎么办：https，或者把密钥设成空），一个字节都不发；密钥设成空就照常走（代理也照常用）。"""
    with HostileServer() as proxy:
        monkeypatch.setenv("http_proxy", proxy.origin)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        with pytest.raises(ValueError) as e:
            OpenAILLM(f"http://{host}:9/v1", "x")
        OpenAILLM(f"http://{host}:9/v1", "x", api_key="not-needed-for-the-mock")   # config.yaml 里写着的占位符：不是秘密
        monkeypatch.setenv("OPENAI_API_KEY", "")
        OpenAILLM(f"http://{host}:9/v1", "x")                             # 空的密钥：不算有密钥
    msg = str(e.value)
    assert proxy.received == [] and one_safe_line(msg)
    assert "https://" in msg and "OPENAI_API_KEY=" in msg and KEY not in msg
    assert "不是本机的回环地址（127.x、::1、localhost）" in msg      # 0.0.0.0 连的其实是本机：说的是"不是回环地址"


@pytest.mark.parametrize("value, says", [("http://127.0.0.1:99999", "http://主机:端口"), ("http://[::1", "http://主机:端口"),
                                         ("http://h:0", "http://主机:端口"),
                                         ("ftp://proxy.example:21", "是 ftp:// 的：本讲的 HTTP 客户端"),
                                         ("https://127.0.0.1:3128", "是 https:// 的：本讲的 HTTP 客户端"),
                                         ("socks5://127.0.0.1:1080", "是 socks5:// 的：本讲的 HTTP 客户端")])
def test_a_bad_proxy_variable_is_one_sentence_naming_it(monkeypatch, value, says):
    """讲师报过：https_proxy=http://127.0.0.1:99999 是一串 ValueError: Port out of range 的 traceback；后来又报：
    https://、socks5:// 的代理被说成"读不懂"——读得懂，只是 --llm 不走这种代理。"""
    monkeypatch.setenv("https_proxy", value)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(ValueError) as e:
        client("https://api.example.invalid/v1")
    msg = str(e.value)
    assert one_safe_line(msg) and "https_proxy" in msg and says in msg, msg


def test_an_unreachable_proxy_is_named_as_the_proxy_not_the_server(monkeypatch):
    """讲师报过：HTTPS_PROXY 指向没人听的端口、代理回 CONNECT 403，都说"连不上 LLM 服务器……先启动它（例如 ollama serve）"。"""
    import socket
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = free.getsockname()[1]
    monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{dead}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(ServerUnreachable) as e:
        client("https://api.example.invalid/v1").check()
    msg = str(e.value)
    assert one_safe_line(msg) and "https_proxy" in msg and f"127.0.0.1:{dead}" in msg and "ollama serve" not in msg
    with HostileServer(chat="status403") as proxy:                           # 对 CONNECT 回 403 的"代理"
        monkeypatch.setenv("https_proxy", proxy.origin)
        with pytest.raises(ServerUnreachable) as e:
            client("https://api.example.invalid/v1").check()
    msg = str(e.value)
    assert one_safe_line(msg) and "代理不肯接通" in msg and "ollama serve" not in msg and KEY not in msg


def test_through_an_https_proxy_the_key_stays_inside_the_tunnel(monkeypatch):
    """README："https:// 经代理走 CONNECT 隧道，代理看不到密钥"。代理收到的是 CONNECT 主机:443 和它自己的
    Proxy-Authorization（环境变量里代理的用户名、密码），没有 Authorization、没有密钥：密钥只在接通以后的 TLS 里面，
    而这个"代理"接通以后就关了连接（TLS 握手没做完），密钥一个字节也没发。"""
    import base64
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(5)
    got = []

    def serve():                                      # 只接一个连接：读 CONNECT、说接通、再读一点（TLS 的开头）、关掉
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(3)
            data = b""
            try:
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                data += conn.recv(65536)
            except OSError:
                pass
            got.append(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    monkeypatch.setenv("https_proxy", f"http://me:pw@127.0.0.1:{srv.getsockname()[1]}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    try:
        with pytest.raises(ServerUnreachable) as e:
            client("https://api.example.invalid/v1").check()
        t.join(5)
    finally:
        srv.close()
    assert got, "代理没收到连接"
    head, _, after = got[0].partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("CONNECT api.example.invalid:443 HTTP/1."), lines
    assert f"Proxy-Authorization: Basic {base64.b64encode(b'me:pw').decode()}" in lines, lines
    assert not any(line.lower().startswith("authorization:") for line in lines), lines
    assert KEY.encode() not in got[0] and b"Bearer" not in got[0]
    assert one_safe_line(str(e.value)) and "https_proxy" in str(e.value)


@pytest.mark.parametrize("url", ["http://[zz]:1/v1", "http://127.0.0.1:0/v1", "http://127.0.0.1:8765/my v1",
                                 "https://bücher.invalid/v1"])
def test_an_odd_address_is_one_sentence_in_the_students_words(url):
    """讲师报过："--llm http://[zz]:1/v1" 只印了一句英文（'zz' does not appear to be an IPv4 or IPv6 address），
    端口 0 悄悄连到了 80。"""
    with pytest.raises(ValueError) as e:
        client(url)
    assert one_safe_line(str(e.value)) and "--llm" in str(e.value) and "does not appear" not in str(e.value)


@pytest.mark.quiet
def test_the_timeout_bounds_a_host_with_several_addresses(monkeypatch):
    """讲师报过：一个主机名有两个地址，第一个不接电话（握手排不上队）、第二个一秒一个字节地回，3 秒的超时过了 100 秒
    还没完——http.client 给每个地址各等整个 timeout，连上以后读响应头也只有"每次读"的期限。现在查地址、连每个地址
    都只用剩下的时间；连上时已经过了期限，请求一个字节也不发。"""
    import socket

    from evolve.openai_llm import wire
    jammed = socket.socket()                     # listen(0) 再占住那一个排队的位置：之后的连接握手不上，一直等
    jammed.bind(("127.0.0.1", 0))
    jammed.listen(0)
    fillers = []
    try:
        for _ in range(3):
            f = socket.socket()
            f.setblocking(False)
            f.connect_ex(jammed.getsockname())
            fillers.append(f)
        time.sleep(0.1)
        with HostileServer(chat="trickle_head", models="trickle_head", drip=0.1, max_seconds=STALL) as s:
            real = socket.getaddrinfo

            def two(host, port, *a, **k):
                if host == "two.example.invalid":
                    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", jammed.getsockname()[1])),
                            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", s.port))]
                return real(host, port, *a, **k)
            only_in(monkeypatch, wire, "socket", getaddrinfo=two)      # 只换 wire.py（连接的那一步）看到的
            backend = OpenAILLM("https://two.example.invalid/v1", "x", api_key="", timeout=1.0, retries=0)
            backend._scheme = "http"                                          # 测试用明文说话（没有 TLS 的服务器）
            t = time.monotonic()
            kind, _, _ = ask(backend)
            took = time.monotonic() - t
        assert kind == TIMEOUT_KIND and took < within(1.0), (kind, took)
    finally:
        for f in fillers:
            f.close()
        jammed.close()


def test_a_huge_llm_timeout_is_refused_in_one_sentence():
    """讲师报过：--llm-timeout 1e10 让每个请求印一串 OverflowError（timestamp out of range），请求也就没人看着了。"""
    import argparse
    from evolve.openai_llm import MAX_TIMEOUT
    from evolve.openai_llm.cli import _seconds_arg
    assert _seconds_arg(str(MAX_TIMEOUT)) == MAX_TIMEOUT
    with pytest.raises(argparse.ArgumentTypeError) as e:
        _seconds_arg("1e10")
    assert "最多" in str(e.value) and "1e10" in str(e.value)


@pytest.mark.parametrize("where", ["model", "location"])
def test_a_key_the_server_sends_back_is_never_printed(where):
    """讲师报过：服务器把收到的 Authorization 头放进模型名、转向地址里回来，开跑前的那句话就把密钥印在屏幕上。"""
    if where == "model":
        server = HostileServer(model_ids=(f"leak-Bearer {KEY}",))
    else:
        server = HostileServer(models="302", location=f"http://127.0.0.1:9/v1?stolen=Bearer_{KEY}")
    with server as s, pytest.raises(ServerUnreachable) as e:
        client(s.url).check()
    assert KEY not in str(e.value) and "***" in str(e.value), str(e.value)


def test_a_key_that_cannot_go_into_a_header_is_one_sentence_without_the_key(monkeypatch):
    # 复制密钥时多带了换行：以前 http.client 的错误信息里会带着它；现在开跑前一句话，不印密钥
    from evolve.openai_llm import SetupError, add_arguments, from_arguments
    import argparse
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "\n")
    ap = argparse.ArgumentParser()
    add_arguments(ap)
    with pytest.raises(SetupError) as e:
        from_arguments(ap.parse_args(["--llm", "http://127.0.0.1:9/v1", "--model", "x"]), "04")
    assert one_safe_line(str(e.value)) and "OPENAI_API_KEY" in str(e.value)


def test_04_with_a_failing_server_fits_an_80_column_terminal():
    """用真 LLM 的那几行（LLM 的设置、"接连 4 次调用失败……"那句）也按终端宽度折行：以前各有 130–150 列。"""
    from console import display_width
    p = fails_everything_04_in_a_terminal()
    assert p.returncode == 1 and "接连 4 次调用失败" in p.stdout and "（退出码 1：没用上 LLM：" in p.stdout
    assert [line for line in p.stdout.split("\n") if display_width(line) > 80] == []


@pytest.mark.parametrize("concurrency", [0, 10**30, 65])
def test_replay_header_with_an_impossible_concurrency_is_refused(tmp_path, concurrency):
    """讲师报过：文件头里 concurrency 改成 10**30，回放印"同时最多 1000000000000000000000000000000 个请求"。"""
    lines = recorded_lines(tmp_path)
    head = json.loads(lines[0])
    head["concurrency"] = concurrency
    (tmp_path / "bad.jsonl").write_text("\n".join([json.dumps(head)] + lines[1:]), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:1: "):
        ReplayLLM(str(tmp_path / "bad.jsonl"))


def test_llm_concurrency_has_an_upper_bound():
    import argparse
    from evolve.openai_llm import MAX_CONCURRENCY
    from evolve.openai_llm.cli import _concurrency_arg
    assert _concurrency_arg(str(MAX_CONCURRENCY)) == MAX_CONCURRENCY
    with pytest.raises(argparse.ArgumentTypeError):
        _concurrency_arg(str(MAX_CONCURRENCY + 1))


def test_a_key_echoed_in_a_long_model_id_is_masked_before_it_is_cut():
    """讲师报过：服务器把密钥放在一个前面垫了 60 个 m 的模型名里，截短以后印出了半截密钥。"""
    server = HostileServer(model_ids=("m" * 60 + KEY + "z" * 40,))
    with server as s, pytest.raises(ServerUnreachable) as e:
        client(s.url).check()
    msg = str(e.value)
    assert KEY[:8] not in msg and "m" * 60 + "***" in msg, msg


def test_a_key_with_quotes_never_reaches_the_record_file(tmp_path):
    """讲师报过：密钥里有 " 或 \\ 时，服务器回的模型名（就是密钥）原样写进了 --record 的文件（JSON 转义过，没抹到）。"""
    key = 'sk-q"uote\\back-0123456789'
    f = tmp_path / "run.jsonl"
    with HostileServer(chat="key_as_model") as s:
        rec = OpenAILLM(s.url, "x", api_key=key, timeout=3, retries=0, seed=0, record=str(f))
        rec.propose(prompt())
        rec.close()
    text = f.read_text(encoding="utf-8")
    assert json.dumps(key)[1:-1] not in text and key not in text and '"model": "***"' in text


def test_a_plain_http_key_is_not_sent_when_the_peer_is_not_this_machine(monkeypatch):
    """讲师报过：localhost. 、foo.localhost 这台机器会去问 DNS，假的答案把它们指到别的机器，密钥明文发了过去。
    现在名字之外还看连上的对方：不是本机就一个字节也不发（这里让"对方是不是本机"回答否，看连线那一步）。"""
    from evolve import openai_llm
    assert not openai_llm.is_loopback("localhost.") and not openai_llm.is_loopback("foo.localhost")
    assert openai_llm.is_loopback("localhost") and openai_llm.is_loopback("127.1") and openai_llm.is_loopback("::1")
    with HostileServer() as s:
        backend = client(s.url)
        monkeypatch.setattr(openai_llm.wire, "peer_is_loopback", lambda sock: False)   # wire.py 连上时看的
        with pytest.raises(ServerUnreachable) as e:
            backend.check()
    assert s.received == [] and "不是本机" in str(e.value) and KEY not in str(e.value)


# 握手卡住时，错的做法（计时器关不到握手用的那个套接字）等到代理说接通那一刻，再按连上时的期限等一整遍：比期限多出
# 代理拖的那段。代理拖 2 × SLACK 秒，错的做法就多出 2 × SLACK，在 within(期限) 之外；期限只比代理拖的多 2 秒
# （机器再忙，说了接通以后也来得及开始握手）。
TLS_PROXY_DELAY = 2 * SLACK
TLS_TIMEOUT = TLS_PROXY_DELAY + 2


@ahead(waits=True)
def stalled_tls_handshake():
    """经一个代理连 https://127.0.0.1:9/v1，期限 TLS_TIMEOUT 秒：代理读到 CONNECT，等 TLS_PROXY_DELAY 秒才说接通，
    之后读 TLS 的开头、一个字节也不回。要等十来秒：后台先跑（PREFETCH）。返回 (种类, 用了几秒, 代理收到的 TLS 开头)。
    代理直接交给后端（不设环境变量 https_proxy：后台线程里不碰 os.environ；地址是本机的，构造时也不读它）。"""
    import socket
    import threading
    from evolve.openai_llm.address import proxy_url
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held, hello, stop = [], [], threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            held.append(c)
            c.settimeout(TLS_TIMEOUT)
            try:
                c.recv(4096)
                if stop.wait(TLS_PROXY_DELAY):
                    return
                c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                hello.append(c.recv(4096))          # 客户端的 ClientHello：握手开始了；之后一个字节也不回
            except OSError:
                pass
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        backend = OpenAILLM("https://127.0.0.1:9/v1", "x", api_key="", timeout=TLS_TIMEOUT, retries=0)
        env = "https_proxy（或 HTTPS_PROXY）"
        backend._proxy, backend.proxy_env = proxy_url(f"http://127.0.0.1:{srv.getsockname()[1]}", env), env
        start = time.monotonic()
        kind, _, _ = ask(backend)
        took = time.monotonic() - start
    finally:
        stop.set()
        t.join(2)
        for c in held:
            c.close()
        srv.close()
    return kind, took, b"".join(hello)


PREFETCH.append(stalled_tls_handshake)


def test_the_timeout_also_bounds_a_stalled_tls_handshake():
    """讲师报过：代理在快到期限时才接通 CONNECT，然后一声不吭，--llm-timeout 5 用了 10.4 秒：TLS 握手时看门的计时器
    关的那个套接字对象已经交给了 SSLSocket，握手又按连上时剩下的时间等了一整遍。现在关连上时复制的那个（同一个连接），握手也醒。"""
    kind, took, hello = stalled_tls_handshake()
    assert hello[:1] == b"\x16", f"测试的前提：代理说了接通以后客户端开始了 TLS 握手（收到的是 {hello[:20]!r}）"
    assert kind == TIMEOUT_KIND and took < within(TLS_TIMEOUT), (kind, took)


def test_a_proxy_asking_for_a_password_stops_the_run_naming_the_proxy(monkeypatch):
    """讲师报过：明文 http 经 http_proxy，代理回 407，开跑前的检查照样放行，四次调用都是 HTTP 407，一句没提代理。"""
    with HostileServer(models="status407", chat="status407") as proxy:
        monkeypatch.setenv("http_proxy", proxy.origin)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        with pytest.raises(ServerUnreachable) as e:
            client("http://llm.example.invalid/v1", api_key="").check()
    msg = str(e.value)
    assert one_safe_line(msg) and "HTTP 407" in msg and "http_proxy" in msg and "用户名" in msg


@pytest.mark.quiet
def test_a_silent_proxy_is_named_when_the_start_up_check_times_out(monkeypatch):
    """讲师报过：代理接了连接就不说话，开跑前那句话说"LLM 服务器……在 2 秒内没有回完"，没提代理。"""
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)                                     # 连接进得来（排在队里），没人读、没人回
    monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{srv.getsockname()[1]}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    try:
        with pytest.raises(ServerUnreachable) as e:
            client("https://api.example.invalid/v1", timeout=0.5).check()
    finally:
        srv.close()
    msg = str(e.value)
    assert one_safe_line(msg) and "没有回完" in msg and "https_proxy" in msg and "检查代理" in msg


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1?key=" + KEY, "http://me:" + KEY + "@[zz]:1/v1",
                                 "http://127.0.0.1:0/v1#" + KEY, "ftp://u:" + KEY + "@h/v1"])
def test_a_bad_address_is_said_without_its_password_or_query(url):
    # 讲师报过：--llm "http://127.0.0.1:99999/v1?key=sk-…" 的报错里原样印着地址（连同密钥）
    with pytest.raises(ValueError) as e:
        client(url)
    msg = str(e.value)
    assert one_safe_line(msg) and KEY not in msg and ("?…" in msg or "…@" in msg), msg


def _big_recording(f, calls: int, reply_chars: int) -> int:
    """一个 --record 格式的文件：文件头、calls 次调用，每次的回复 reply_chars 个字符。返回文件的字节数。"""
    import dataclasses
    from evolve.openai_llm import FORMAT, SYSTEM_PROMPT, Call
    from sched_lab import GPU
    with open(f, "w", encoding="utf-8") as out:
        out.write(json.dumps(dict(type="header", format=FORMAT, model="x", concurrency=2, gpu=GPU.key,
                                  system_prompt=SYSTEM_PROMPT)) + "\n")
        for n in range(calls):
            call = Call(n=n, prompt=f"p{n}", reply="x" * reply_chars, error=None, latency=0.1, prompt_tokens=1,
                        completion_tokens=1, model="x")
            out.write(json.dumps(dict(type="call", **dataclasses.asdict(call))) + "\n")
    return os.path.getsize(f)


def test_replay_reads_a_big_recording_a_line_at_a_time(tmp_path):
    """讲师的复查报过：--replay 开跑前把整个文件读进内存，320 MB 的录制文件要 21 秒、约 700 MB 内存（上限写的是 4 GB）。
    现在开跑前只读文件头（和最后一个字节），回放时一次一行：内存里最多一行（6 MB 以内）。这里 24 MB 的文件：以前开跑前
    要读进来 24 MB 以上（tracemalloc 量的峰值），现在是文件头那么多（系统提示约 3 KB）；每次调用照样回放出来，用不到的
    行数得出来。"""
    import tracemalloc
    f = tmp_path / "big.jsonl"
    size = _big_recording(f, 240, 100_000)
    assert size > 24_000_000
    tracemalloc.start()
    try:
        t = time.thread_time()                                   # CPU 时间：机器忙不忙都一样
        replay = ReplayLLM(str(f))
        took = time.thread_time() - t
        _, start_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for n in range(100):                                   # 一次一行地读
            assert replay._fetch(n, f"p{n}").reply == "x" * 100_000
        _, replay_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert start_peak < 1_000_000 and took < 1.0, (start_peak, took)          # 以前 > 24 MB、零点几秒到一两秒
    assert replay_peak < 2_000_000, replay_peak                  # 回放时：一行（100 KB）上下
    replay.close()
    assert replay.unused() == 140                                # 文件关了也数得出来（04、05 最后说一句）
    with pytest.raises(ReplayMismatch, match="只录了 240 次"):
        fresh = ReplayLLM(str(f))
        for n in range(241):
            fresh._fetch(n, f"p{n}")
    fresh.close()


def test_a_recording_bigger_than_the_cap_is_refused_before_reading_it(tmp_path):
    # 整个文件最多 MAX_RECORD_BYTES：普通文件开跑前看大小就说（这里是一个稀疏文件，不占磁盘），不读它
    from evolve.openai_llm import MAX_RECORD_BYTES
    f = tmp_path / "huge.jsonl"
    _big_recording(f, 1, 10)
    with open(f, "r+b") as out:
        out.truncate(MAX_RECORD_BYTES + 1)
    t = time.thread_time()                                       # CPU 时间（读 4 GB 的零要好几秒）：机器忙不忙都一样
    with pytest.raises(ValueError, match=f"huge.jsonl 超过 {MAX_RECORD_BYTES / 1e9:g} GB"):
        ReplayLLM(str(f))
    assert time.thread_time() - t < 1.0


def test_replay_of_a_file_with_calls_out_of_order_says_so(tmp_path):
    # 讲师报过：改过序号的录制文件说"录的是 （没有这一行），现在是 （没有这一行）"
    import dataclasses
    from evolve.openai_llm import FORMAT, SYSTEM_PROMPT, Call, ReplayLLM, ReplayMismatch
    from sched_lab import GPU
    call = dataclasses.asdict(Call(n=5, prompt="p", reply="r", latency=0.1, prompt_tokens=None, completion_tokens=None,
                                   model="x", error=None))
    f = tmp_path / "run.jsonl"
    f.write_text(json.dumps(dict(type="header", format=FORMAT, model="x", concurrency=1, gpu=GPU.key,
                                 system_prompt=SYSTEM_PROMPT)) + "\n" + json.dumps(dict(type="call", **call)) + "\n",
                 encoding="utf-8")
    with pytest.raises(ReplayMismatch) as e:
        ReplayLLM(str(f))._fetch(0, "p")
    assert "第 2 行录的是第 6 次调用" in str(e.value) and "没有这一行" not in str(e.value)


@pytest.mark.parametrize("location, suggested", [
    ("http://127.0.0.1:9/v1/models?k=1", "就用 --llm http://127.0.0.1:9/v1"),
    ("http://127.0.0.1:9/v2/models", "就用 --llm http://127.0.0.1:9/v2"),
    ("http://127.0.0.1:9/v1", "就用 --llm http://127.0.0.1:9/v1")])
def test_a_redirect_suggests_the_address_in_front_of_models(location, suggested):
    # 讲师报过：Location 带查询串时建议的地址还留着 /models（照着用，请求就成了 …/models/chat/completions）
    from evolve.openai_llm.network import redirect_sentence
    said, advice = redirect_sentence("http://127.0.0.1:8/v1", 307, location)
    assert advice.endswith(suggested) and "/models" not in advice, advice


def test_replay_of_a_hand_edited_file_does_not_show_the_key(tmp_path, monkeypatch):
    # 讲师报过：手改过的录制文件里的回复、模型名里写着环境里的密钥，02 照印、04 印了 4 次（--record 写文件时是抹掉的）
    import dataclasses
    from evolve.openai_llm import FORMAT, SYSTEM_PROMPT, Call, ReplayLLM
    from sched_lab import GPU
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    call = dataclasses.asdict(Call(n=0, prompt="p", reply=f"my key {KEY}", latency=0.1, prompt_tokens=None,
                                   completion_tokens=None, model=KEY, error=None))
    f = tmp_path / "run.jsonl"
    f.write_text(json.dumps(dict(type="header", format=FORMAT, model=f"m-{KEY}", concurrency=1, gpu=GPU.key,
                                 system_prompt=SYSTEM_PROMPT)) + "\n" + json.dumps(dict(type="call", **call)) + "\n",
                 encoding="utf-8")
    replay = ReplayLLM(str(f))
    got = replay._fetch(0, "p")
    assert KEY not in replay.model + got.reply + got.model and got.reply == "my key ***"


# ---------------------------------------------------------------- 重试：不多付钱，不一声不吭地等

def test_a_reply_reset_halfway_is_not_resent():
    """讲师报过：200、长度头对、正文传到一半被重置，记成"连不上"，又发了三次（托管的 API 每次都收钱）。服务器已经
    答了：是"回复没传完整"，一个请求都不重发；成本账里发出去的请求是 1。"""
    with HostileServer(chat="reset_mid_body") as s:
        llm = client(s.url, retries=3)
        kind, _, _ = ask(llm)
        assert kind == TRUNCATED and s.posts() == 1, (kind, s.posts())
    assert llm.ledger()["requests"] == 1 and llm.calls[0].requests == 1


def test_retry_after_waits_are_bounded_per_call_said_on_stderr_and_counted():
    """讲师报过：每次都回 429、Retry-After: 59，一个提议一声不吭地等了 177 秒（三次重试各等 59 秒）。一次调用里按
    Retry-After 等的时间加起来不超过 max_wait；要等 WAIT_SAID 秒以上时说一句；真的发出去几个请求进成本账。"""
    import evolve.openai_llm as ol
    said = []
    with HostileServer(chat=lambda n: "retry_after" if n == 0 else "retry_after_stall") as s:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ol.client, "WAIT_SAID", 0.5)             # client.py 重试前看的
            llm = client(s.url, retries=5, max_wait=1.0, notify=said.append)
            kind, _, took = ask(llm)
        posts = s.posts()
    # 第一次等 0.6 秒（加起来 0.6），第二次要等 STALL 秒，加起来超过 1.0：不等了（照样等了的话要 STALL 秒，远在界外）
    assert kind == "LLM 回 HTTP 429，要等 1 秒以上（不等）" and posts == 2 and 0.6 <= took < within(0.6), (kind, posts, took)
    assert len(said) == 1 and "让等 0.6 秒再试" in said[0] and "HTTP 429" in said[0] and one_safe_line(said[0]), said
    assert llm.ledger()["requests"] == 2 and llm.ledger()["calls"] == 1


def test_the_stub_edit_changes_the_program_even_when_the_rule_already_has_its_config(monkeypatch):
    """助教报过：把 HBM_EFFICIENCY 改小以后，02 的父程序的第一条规则正好是桩要换上的配置，桩的"修改"改了等于没改，
    4 个回复都是"没有 SEARCH/REPLACE 块"，读回复的两个测试没头没脑地失败。桩现在那时插一条新规则。"""
    import evolve.mock_llm as ml
    from evolve import parse
    from evolve.diff import apply_diff
    from evolve.program import Config, Program, Rule
    from stub_llm_server import stub_edit
    cfg = Config(BM=64, BN=64, BK=64, warps=4, stages=3, group=8)
    monkeypatch.setattr(ml, "common_sense_config", lambda M, N, K, rng: cfg)
    parent = Program(tuple(Rule((("M", m),), cfg) for m in (1, 16, 64, 256, 1024, 4096)), cfg)
    src = render(parent)
    reply = stub_edit("当前的程序：\n" + src)
    child = parse(apply_diff(src, parse_diff(reply)))
    assert parse_diff(reply) and child != parent, reply


def _serve_once(payload_parts):
    """127.0.0.1 上一个只回答一次的小服务器：读完请求，依次写出 payload_parts（字节串的可迭代对象），关掉。
    返回 (端口, 线程, 监听的套接字)；调用者关掉套接字、等线程。"""
    import socket
    import threading
    srv = socket.create_server(("127.0.0.1", 0))

    def serve():
        try:
            c, _ = srv.accept()
        except OSError:
            return
        with c:
            c.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                data += c.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
            while len(body) < length:
                body += c.recv(65536)
            try:
                for part in payload_parts:
                    c.sendall(part)
            except OSError:                                   # 客户端不读了、关了连接：正是要测的
                pass
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv.getsockname()[1], t, srv


def test_bytes_around_the_body_count_too():
    # 正文只有 45 字节，可每一块的长度行带 6 万字节的"扩展"、后面跟 200 行 6 万字节的 trailer（一共约 15 MB）：
    # http.client 读了就扔，以前照单全收、回 200（回复的上限只数正文）。现在从状态行起读的每个字节都算，是"回复太长"
    body = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()
    ext = b";x=" + b"a" * 60_000

    def parts():
        yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
               b"Connection: close\r\n\r\n")
        for i in range(len(body)):
            yield b"1" + ext + b"\r\n" + body[i:i + 1] + b"\r\n"
        yield b"0\r\n"
        for _ in range(200):
            yield b"X-Trailer: " + b"b" * 60_000 + b"\r\n"
        yield b"\r\n"
    port, t, srv = _serve_once(parts())
    try:
        llm = OpenAILLM(f"http://127.0.0.1:{port}/v1", "m", api_key="", timeout=30)
        with pytest.raises(LLMError) as e:
            llm._exchange("POST", "/chat/completions", b"{}", 30, MAX_REPLY_BYTES)
        assert e.value.kind == TOO_LONG
    finally:
        srv.close()
        t.join(10)


# ---------------------------------------------------------------- 讲师的第 105 次复查（不可信的服务器：新的角度）

LONG_KEY = "sk-proj-" + "Q7vXk2LmN9pR4sT6wY8zA1bC3dE5fG0hJ" * 5     # 真的密钥有 160 多个字符：抹密钥的花费和它的长度成正比


def test_1xx_before_the_answer_is_skipped_like_100_continue():
    """讲师报过：服务器（或 CDN）在回答前先送 102 Processing、103 Early Hints，每次调用都记成"LLM 回 HTTP 103"、
    接连失败、放弃，开跑前的检查却放行。HTTP 的客户端要跳过最终回答之前的 1xx（http.client 只跳过 100）。"""
    with HostileServer(chat="early_hints", models="early_hints") as s:
        client(s.url).check()
        kind, reply, _ = ask(client(s.url))
    assert kind is None and "<<<<<<< SEARCH" in reply


def test_a_flood_of_1xx_is_still_bounded():
    # 5.6 MB 的 103、永远没有最终的回答：停下它的是读的字节数的上限（TOO_LONG），不是计时器。期限给得很宽：
    # 机器忙的时候（负载 25 上量过）读完 2 MB 的 103 要 10 秒以上，以前的 10 秒期限先到，测试说"LLM 超时"，像是上限没起作用
    with HostileServer(chat="hints_flood") as s:
        kind, _, took = ask(client(s.url, timeout=50))
    assert kind == TOO_LONG, (kind, f"{took:.1f} 秒")


def test_a_long_model_name_from_the_server_is_recorded_so_that_it_replays(tmp_path):
    """讲师报过：服务器在回复的 model 字段里报了一个 400 多个字符的模型名，--record 照录，--replay 却说这一行"不是
    --record 写的格式"（回放只认 MAX_NAME 个字符以内的模型名）：花钱录的文件放不了。"""
    f = tmp_path / "run.jsonl"
    with HostileServer(chat="long_model") as s:
        rec = client(s.url, record=str(f))
        kind, reply = rec.propose(prompt())
        rec.close()
    text = f.read_text(encoding="utf-8")
    assert KEY not in text and KEY[:12] not in text
    assert ReplayLLM(str(f)).propose(prompt()) == (kind, reply)


@pytest.mark.parametrize("tail", ["\u200b", "\uff11", "\x1b[31mred\x07", "?x=\u00e9", "/\x7f"])
def test_an_address_with_invisible_or_non_ascii_characters_is_one_sentence_before_anything_is_sent(tail):
    """讲师报过：--llm 的路径里有零宽空格、全角的"１"（复制来的）或 ESC 序列，开跑前那句话说服务器"回的响应头不合规矩
    （UnicodeEncodeError / InvalidURL）"——服务器一个字节也没收到；地址原样印出来，ESC 序列把终端的字变红。"""
    with HostileServer() as s:
        with pytest.raises(ValueError) as e:
            client(s.url + tail)
        assert not s.received
    msg = str(e.value)
    assert one_safe_line(msg) and "--llm" in msg and "U+" in msg and "响应头" not in msg, msg


def test_a_huge_model_list_is_checked_within_the_start_up_bound():
    """讲师报过：GET /models 回两百万个模型名（不到 8 MB），每个都抹一遍密钥，--llm-timeout 1 的开跑前检查用了
    31 秒（README：最多 10 秒，--llm-timeout 更短就按它）。那 31 秒是读完回答以后在这个线程里算的：量这个线程的
    CPU 时间（机器忙不忙都一样）。传 8 MB 的期限给得长（client 的默认）：机器忙时 1 秒传不完，说的就成了超时。"""
    with HostileServer(models="many_names") as s:
        llm = client(s.url, api_key=LONG_KEY)
        with pytest.raises(ServerUnreachable) as e:
            t = time.thread_time()
            llm.check()
        took = time.thread_time() - t
    msg = str(e.value)
    assert one_safe_line(msg) and "没有模型" in msg and "1,990,000" in msg and took < 4, (took, msg)


def test_a_long_model_name_with_control_characters_is_said_to_be_as_long_as_it_is():
    """复查报过：GET /models 里一个 5,000 个 ESC 的模型名（比 _shown_redacted 抹密钥的那一段长），印成
    "\\x1b…\\x1b…（共 80 个字符）…（共 5,000 个字符）"：两个截断的说明，第一个说它只有 80 个字符。"""
    with HostileServer(model_ids=("\x1b" * 5000, "y")) as s:
        with pytest.raises(ServerUnreachable) as e:
            client(s.url).check()
    msg = str(e.value)
    assert one_safe_line(msg) and msg.count("…（共") == 1 and "…（共 5,000 个字符）" in msg, msg
    assert "共 80 个字符" not in msg, msg

