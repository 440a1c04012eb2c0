"""
服务器的回答里说了什么（都当作不可信的输入）：chat-completions 的回复正文（read_reply：回复文本、usage、模型名、
被截断时的 finish_reason；流式的、压缩过的、工具调用、JSON 嵌得太深，都只是一次有名字的失败）、不是 2xx 的回答里服务器
说的原因（server_words：只读正文的开头 ERROR_BODY_BYTES 字节、ERROR_READ_SECONDS 秒，放进放弃的那句、finish 的那句、
开跑前检查的那句；失败的种类不变，录制文件里没有它）、推理模型不收的参数（rejected_parameter、refused_parameter）、
Retry-After（retry_after）。
"""

import email.utils
import html
import json
import re
import time

from .errors import BAD_JSON, NO_CONTENT, STREAMED, TOOL_CALLS, LLMError
from .settings import CUT_REASONS, ERROR_BODY_BYTES, SWITCHABLE
from .text import loads

_SSE = re.compile(rb"\s*(?::|(?:data|event|id|retry)\s*:)")   # SSE 的一行：字段名加冒号，或者以冒号开头的注释行


def looks_streamed(body: bytes, content_type: str = "") -> bool:
    """回复是不是 SSE（流式）：正文不以 { 开头（不是一个 JSON 对象），而且响应头说 text/event-stream、或者正文以
    SSE 的一行开头（"data: …"、": 注释"）。--llm（正文读不懂时）和 make openevolve（正文的第一段）都用它，同一个
    服务器两边叫法一样（讲师报过：一边看响应头、一边看正文，叫法各不相同）。"""
    if body.lstrip().startswith(b"{"):
        return False
    return content_type.strip().lower().startswith("text/event-stream") or bool(_SSE.match(body))


def compressed(headers) -> str | None:
    """响应头说正文压缩过（Content-Encoding 不是 identity）时是那个值，不然 None。请求里说了 Accept-Encoding: identity，
    这个客户端不解压（gzip 炸弹：70 KB 解压成 64 MB）。"""
    value = (headers.get("Content-Encoding") or "").strip()
    return value if value.lower() not in ("", "identity") else None


def read_reply(raw: bytes, content_type: str = ""):
    """chat-completions 的回复正文 -> (回复文本, usage, 模型名, 被截断时的 finish_reason)。读不懂抛 LLMError（BAD_JSON、
    NO_CONTENT、TOOL_CALLS；正文是 "data: …" 这样的 SSE 事件时是 STREAMED：请求里没要流式，服务器或代理照样流式地回）。"""
    try:
        data = loads(raw)
    except (ValueError, RecursionError):                 # UnicodeDecodeError 也是 ValueError；嵌得太深是 RecursionError
        raise LLMError(STREAMED if looks_streamed(raw, content_type) else BAD_JSON) from None
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(NO_CONTENT) from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return message_text(message), usage, data.get("model"), cut_reason(choice.get("finish_reason"))


def cut_reason(finish_reason) -> str | None:
    """choices[0].finish_reason 说回复到了 token 上限、被截断（CUT_REASONS，不分大小写）时是它（原样），不然 None。"""
    return finish_reason if isinstance(finish_reason, str) and finish_reason.lower() in CUT_REASONS else None


def message_text(message) -> str:
    """回复里的 choices[0].message（一个字典：服务器写了的那几项）-> 模型说的话。--llm 和 make openevolve（oe_careful_http
    的 careful_http）都用它：同一个回复两边说法一样（讲师报过：content 是 null、只有 tool_calls 的回复，--llm 说"回的是
    工具调用"，OpenEvolve 那边是它自己的 "LLM returned None response"、不算 LLM 调用失败）。
    - content 分成几段（[{"type": "text", "text": …}]）：连起来；
    - content 是 null 或空白：OpenAI 拒绝回答时话在 refusal 里（模型的原话：02 印出来，记作"没有 SEARCH/REPLACE 块"）；
      调工具时在 tool_calls（旧的 function_call）里：抛 LLMError(TOOL_CALLS)——有的服务器（ollama）调工具时 content
      是 ""，不是 null，一样；都没有就是它本来的样子（""：没有 SEARCH/REPLACE 块）；
    - 没有 content、content 不是文字：抛 LLMError(NO_CONTENT)。"""
    if not isinstance(message, dict):
        raise LLMError(NO_CONTENT)
    calls_tools = bool(message.get("tool_calls") or message.get("function_call"))
    if "content" not in message and not calls_tools:
        raise LLMError(NO_CONTENT)
    content = message.get("content")
    if isinstance(content, list):                       # 有的服务器把内容分成几段：[{"type": "text", "text": ...}]
        parts = [p.get("text") if isinstance(p, dict) else None for p in content]
        if not all(isinstance(p, str) for p in parts):
            raise LLMError(NO_CONTENT)
        content = "".join(parts)
    if content is not None and not isinstance(content, str):
        raise LLMError(NO_CONTENT)
    if content is None or not content.strip():
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            return refusal
        if calls_tools:
            raise LLMError(TOOL_CALLS)
    return content or ""


_MESSAGE = re.compile(r'"message"\s*:\s*("(?:[^"\\]|\\.)*")')
_TAGS = {tag: (re.compile(rf"<{tag}\b", re.I), re.compile(rf"</{tag}\s*>", re.I)) for tag in ("title", "h1")}


def _html_title(text: str) -> str | None:
    """HTML 错误页的 <title> 里的字（没有就第一个 <h1> 的），没有是 None。每种标签只找第一个开始标签、它后面的第一个
    ">"、再往后的结束标签，每一步都从上一步停下的地方往后找：一个正则 <title[^>]*>(.*?)</title> 在几千个没关上的
    <title 上要回溯一秒（平方的），这样是线性的。"""
    for opening, closing in _TAGS.values():
        if (m := opening.search(text)) and (gt := text.find(">", m.end())) >= 0 and (end := closing.search(text, gt + 1)):
            return html.unescape(re.sub(r"<[^<>]*>", "", text[gt + 1:end.start()]))   # [^<>]：几千个 "<" 也是线性的
    return None


def server_words(raw: bytes, content_type: str = "") -> str | None:
    """不是 2xx 的回答的正文里，服务器说的原因（原样的文字，空白并成一个空格；没抹密钥、没转义：印之前先
    _shown_redacted）。helper 的复查报过：付费 API 对每个请求都回 HTTP 400，说的是 "Unsupported parameter: 'max_tokens' is not
    supported with this model"，04 只说"接连 4 次调用失败（最后一次是 LLM 回 HTTP 400）"、叫人检查服务器、地址、模型名
    和密钥——原因就在正文里，被扔掉了。认得：OpenAI 兼容接口的 {"error": {"message": …}}（OpenAI、vLLM、ollama、
    llama.cpp）、{"error": "…"}、{"message": …}、{"detail": …}（FastAPI 的字符串或 [{"msg": …}]）；JSON 只读到一半时
    的第一个 "message"；代理、CDN 的 HTML 错误页的 <title>（没有就 <h1>）；别的文字的第一个不空的行。都没有是 None。"""
    if not raw.strip():
        return None
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        data = None
    words = None
    if isinstance(data, dict):
        err = data.get("error")
        detail = data.get("detail")
        for v in ((err.get("message") if isinstance(err, dict) else err), data.get("message"), detail,
                  detail[0].get("msg") if isinstance(detail, list) and detail and isinstance(detail[0], dict) else None):
            if isinstance(v, str) and v.strip():
                words = v
                break
    elif data is None:
        text = raw.decode("utf-8", "replace")
        if text.lstrip()[:1] in ("{", "["):             # 读到一半的 JSON（只读了开头 ERROR_BODY_BYTES 字节）：
            m = _MESSAGE.search(text)                   # 第一个写完了的 "message"
            try:
                words = json.loads(m.group(1)) if m else None
            except ValueError:
                words = None
        elif "html" in content_type.lower() or text.lstrip()[:1] == "<":
            words = _html_title(text)
        else:
            words = next((line for line in text.splitlines() if line.strip()), None)
    words = " ".join(words.split()) if isinstance(words, str) else ""
    return words or None


def rejected_parameter(status: int, raw: bytes) -> str | None:
    """服务器的回答是不是 OpenAI 的推理模型（o 系列、gpt-5 一族）对本机服务器那组参数的拒绝：HTTP 400，正文是
    {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use
    'max_completion_tokens' instead.", "param": "max_tokens", "code": "unsupported_parameter", …}}，或者 temperature 的
    {"error": {"message": "Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1)
    value is supported.", "param": "temperature", "code": "unsupported_value", …}}（helper 的复查照 OpenAI 的回答写了
    假服务器：这样的模型以前一个提议也用不上）。param 和 code 都对得上，或者（转手的代理常把它们丢掉）message 以
    "Unsupported parameter: 'max_tokens'"、"Unsupported value: 'temperature'" 这样开头：是哪个参数；别的 400（别的参数、
    请求太长……）、别的状态码是 None。"""
    error = _error_object(status, raw)
    if error is None:
        return None
    param, message = error.get("param"), error.get("message")
    if param in SWITCHABLE and error.get("code") in ("unsupported_parameter", "unsupported_value"):
        return param
    m = _UNSUPPORTED.match(message) if isinstance(message, str) else None
    return m.group(1) if m else None


def _error_object(status: int | None, raw: bytes) -> dict | None:
    """HTTP 400 的正文（当作不可信的 JSON 读：loads，整数有界、嵌得太深是读不懂）里 OpenAI 写法的 "error" 对象；
    别的状态码、读不懂、没有这个对象是 None。rejected_parameter、refused_parameter 共用。"""
    if status != 400:
        return None
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else None


_UNSUPPORTED = re.compile(r"\s*Unsupported (?:parameter|value): '(max_tokens|temperature)'")
_ANY_UNSUPPORTED = re.compile(r"\s*Unsupported (?:parameter|value): '([^'\n]{1,200})'")


def refused_parameter(status: int | None, raw: bytes) -> str | None:
    """服务器的 HTTP 400 是不是说它不收请求里的某个参数（不管是哪个）：OpenAI 的写法是 {"error": {"param": "max_tokens",
    "code": "unsupported_parameter", "message": "Unsupported parameter: 'max_tokens' …"}}（不收的值是 "unsupported_value"），
    转手的代理丢了 param、code 时看 message 的开头。是的话返回参数名（服务器写的原样：印之前先抹密钥、转义、截短），
    不是 None。只读 raw 的开头 ERROR_BODY_BYTES 字节（和 --llm 读错误正文一样多），当作不可信的 JSON 读（loads：
    整数有界、嵌得太深是读不懂）。rejected_parameter 只认能换的那两个（max_tokens、temperature）；这个给说原因的句子用
    （--llm 的 _server_said、make openevolve 的那句话）。"""
    error = _error_object(status, raw[:ERROR_BODY_BYTES])
    if error is None:
        return None
    param, message = error.get("param"), error.get("message")
    if isinstance(param, str) and param.strip() and error.get("code") in ("unsupported_parameter", "unsupported_value"):
        return param[:1000]
    m = _ANY_UNSUPPORTED.match(message) if isinstance(message, str) else None
    return m.group(1) if m else None


def retry_after(value: str | None) -> float | None:
    """Retry-After 头：秒数或者 HTTP 日期；读不懂就当没有。"""
    if not value:
        return None
    try:
        x = float(value)
        return max(0.0, x) if x == x else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    try:
        return max(0.0, when.timestamp() - time.time())
    except (OverflowError, ValueError, OSError):
        return None
