"""
OpenAILLM：真的语言模型，换下 MockLLM。说 OpenAI 兼容的 chat-completions 协议（本机的 ollama、llama.cpp 的 server、
vLLM，或者托管的 API 都说这个），只用标准库（http.client），不加任何依赖。和 MockLLM 一样只有一个接口 propose(prompt)
-> (修改的种类, 回复文本)；回复只当 SEARCH/REPLACE 文本交给进化循环去解析成 DSL，从不执行。被 import 时不打印任何东西；
PYTHONPATH=lecture14 python -m evolve.openai_llm 也只印系统提示（__main__.py）。

一部分一个文件，按依赖的顺序：每个文件只 import 列在它前面的（依赖只往一个方向走；tests/test_import_graph.py 查）：
  settings.py   旋钮和上限：超时、重试、token 上限、并发数、录制文件的格式和版本（VERSION）
  errors.py     失败的种类（LLMError.kind 的短名字）、LLMError、ReplyUnusable、ServerUnreachable、ReplayMismatch、Names
  text.py       给人看的服务器文字：shown、shown_lines（控制字符转义、截短）；loads（整数有界的 JSON）
  prompt.py     系统提示 SYSTEM_PROMPT（system_prompt() 从 kernel_lab 的网格和启动上限生成）
  api_key.py    密钥：redact 抹掉文本里的密钥（原样的、编码过的、改头换面的）
  address.py    地址：clean_url、本机的回环地址（is_loopback）、环境变量里的代理
  reply.py      服务器的回答里说了什么：回复正文、finish_reason、错误正文里的原因、不收的参数、Retry-After
  calls.py      一次调用的记录（Call）和成本账（ledger）、被截断的回复和怎样调高上限、为什么不再调用
  backend.py    OpenAILLM 和 ReplayLLM 共用的 Backend：按顺序编号的调用、并发、propose / propose_many
  network.py    连接出的错怎么对人说：net_words、连不上时该怎么办、被转向时的那句话
  wire.py       一个 HTTP 请求（Exchange）：整个请求一个期限、读多少字节有上限、响应头不合规矩就拒
  recording.py  录制（Recording）：每次调用一回来就按提议的顺序写一行，Ctrl-C、磁盘满了也不留半行
  client.py     OpenAILLM：重试、换成推理模型的参数、接连失败就不再调用、等得久时说一声、开跑前的 check()
  replay.py     ReplayLLM：照录下的文件按顺序回答，不联网；replay_command
  cli.py        脚本的命令行（02、04、05）：add_arguments、from_arguments、finish 和运行最后的那几句话
这里导出课程的其余部分（编号脚本、mock_llm_server.py、openevolve/、tests/）用到的名字；更细的从各自的文件里导入。
测试要换某个文件看到的名字（时钟、常数）时，换那个文件里的（monkeypatch.setattr(client, "WAIT_SAID", …)）：换这里的没用。
"""

from .address import clean_url, is_loopback
from .api_key import MAX_PIECES, normalized, redact
from .calls import (RATE_LIMITED_ADVICE, Call, coverage, cut_off_advice, failure_summary, gave_up_why, ledger, sent_limit,
                    unfinished, unfinished_edit)
from .cli import (GAVE_UP_SAID, SetupError, add_arguments, cut_off_sentence, describe, finish, from_arguments, limit_said,
                  lost_llm, timeout_advice)
from .client import OpenAILLM
from .errors import (BAD_HEADERS, BAD_JSON, COMPRESSED, CUT_OFF, GAVE_UP, MOCK_BUG, MOCK_BUG_HEADER, MOCK_BUG_REPLY,
                     NO_CONTENT, REDIRECT, REDIRECT_CODES, STREAMED, TIMEOUT_KIND, TOO_LONG, TOOL_CALLS, TRUNCATED,
                     UNREACHABLE, LLMError, Names, ReplayMismatch, ReplyUnusable, ServerUnreachable)
from .network import SILENT_CLOSE, SILENT_TLS, net_words
from .prompt import SYSTEM_PROMPT
from .replay import MAX_RECORD_BYTES, MAX_RECORD_LINE, ReplayLLM
from .reply import (compressed, cut_reason, looks_streamed, message_text, refused_parameter, rejected_parameter,
                    server_words)
from .settings import (ERROR_BODY_BYTES, ERROR_READ_SECONDS, FORMAT, GIVE_UP_AFTER, KIND, MAX_COMPLETION_TOKENS,
                       MAX_CONCURRENCY, MAX_LLM_TOKENS, MAX_REPLY_BYTES, MAX_TIMEOUT, MAX_TOKENS, MAX_WAIT, MIN_TIMEOUT,
                       REASONING_PARAMS, RETRIES, TEMPERATURE, TIMEOUT, VERSION, WAIT_SAID)
from .text import MAX_INT_DIGITS, loads, shown, shown_lines
from .wire import MAX_HEAD_BYTES

__all__ = [
    "BAD_HEADERS", "BAD_JSON", "COMPRESSED", "CUT_OFF", "ERROR_BODY_BYTES", "ERROR_READ_SECONDS", "FORMAT", "GAVE_UP",
    "GAVE_UP_SAID", "GIVE_UP_AFTER", "KIND", "MAX_COMPLETION_TOKENS", "MAX_CONCURRENCY", "MAX_HEAD_BYTES", "MAX_INT_DIGITS",
    "MAX_LLM_TOKENS", "MAX_PIECES", "MAX_RECORD_BYTES", "MAX_RECORD_LINE", "MAX_REPLY_BYTES", "MAX_TIMEOUT", "MAX_TOKENS",
    "MAX_WAIT", "MIN_TIMEOUT", "MOCK_BUG", "MOCK_BUG_HEADER", "MOCK_BUG_REPLY", "NO_CONTENT", "RATE_LIMITED_ADVICE",
    "REASONING_PARAMS", "REDIRECT", "REDIRECT_CODES", "RETRIES", "SILENT_CLOSE", "SILENT_TLS", "STREAMED", "SYSTEM_PROMPT",
    "TEMPERATURE", "TIMEOUT", "TIMEOUT_KIND", "TOOL_CALLS", "TOO_LONG", "TRUNCATED", "UNREACHABLE", "VERSION", "WAIT_SAID",
    "Call", "LLMError", "Names", "OpenAILLM", "ReplayLLM", "ReplayMismatch", "ReplyUnusable", "ServerUnreachable",
    "SetupError", "add_arguments", "clean_url", "compressed", "coverage", "cut_off_advice", "cut_off_sentence", "cut_reason",
    "describe", "failure_summary", "finish", "from_arguments", "gave_up_why", "is_loopback", "ledger", "limit_said", "loads",
    "looks_streamed", "lost_llm", "message_text", "net_words", "normalized", "redact", "refused_parameter",
    "rejected_parameter", "sent_limit", "server_words", "shown", "shown_lines", "timeout_advice", "unfinished",
    "unfinished_edit"]
