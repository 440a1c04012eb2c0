"""
OpenAILLM：真的语言模型，换下 MockLLM。说 OpenAI 兼容的 chat-completions 协议（本机的 ollama、llama.cpp 的 server、
vLLM，或者托管的 API 都说这个），只用标准库（http.client），不加任何依赖。和 MockLLM 一样只有一个接口：

    propose(prompt) -> (修改的种类, 回复文本)        种类总是 KIND（"llm"）：真模型不告诉我们它做的是哪种修改
    propose_many(prompts) -> [(种类, 回复) 或 异常]   concurrency 个请求同时发出，结果按提议的顺序排好

回复只当 SEARCH/REPLACE 文本交给进化循环去解析成 DSL，从不执行。调用失败抛 LLMError，它的 .kind 是一个短名字
（"LLM 超时"、"LLM 回 HTTP 500"……），进化循环按它计数，不崩。拿到了回复、里面却一个 SEARCH/REPLACE 块也没有时抛
它的子类 ReplyUnusable（种类"没有 SEARCH/REPLACE 块"）：进化循环把这个提议记在 llm 那一行，不记成调用失败。

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
- 回复到了 token 上限、被截断（choices[0].finish_reason 是 CUT_REASONS 里的一个，"length" 最常见）：想得多的模型常把
  上限全用在草稿上。修改写完了的照样用；没写完的（空的、没写完的 <think>、写到一半的块）记作 CUT_OFF，不是"没有
  SEARCH/REPLACE 块"。第一次遇到时 notify 说一声；成本账（ledger 的 cut_*）、finish 最后的那句（cut_off_sentence）说
  几次、上限是多少（sent_limit）、怎样调高：--llm-max-tokens N（max_tokens 和换了以后的 max_completion_tokens 都是 N；
  录进文件头，回放从那里读）。

- 密钥：环境变量 OPENAI_API_KEY 有就放进 Authorization 头（本机的服务器不需要）；只发给 --llm 那个地址（协议、主机、
  端口都一样），而且只经 https:// 或明文发给本机（别的机器的 http:// 地址带着它时一句话、一个字节都不发）；不打印、
  不记日志、不写进文件，服务器回的回复里要是出现了它，也先抹掉。
- 服务器说的一切都先当作不可信的输入：不跟转向（3xx：OpenAI 兼容接口不转向，跟过去会把密钥带给别人）；一个请求
  从查地址、连接到最后一个字节最多 timeout 秒（查地址和连主机的每个地址都只用剩下的时间，看门的计时器到点就关掉
  连接，一字节一字节地挤牙膏也拖不过去；连上时已经过了期限就一个字节也不发）；回复最多读
  MAX_REPLY_BYTES 字节，再长就不读了（连同状态行、响应头、分块的长度行和扩展、trailer 一共最多读 2 × 上限 + WIRE_SLACK
  字节：正文以外的字节也是读进来的；状态行连响应头最多 MAX_HEAD_BYTES）；JSON 嵌得太深、长度头写得离谱、响应头不合规矩，
  都只是一次有名字的失败，和 make openevolve（OpenEvolve 用的 h11）叫法一样。
  要印给人看的服务器文字先经过 shown()：控制字符写成 \\x1b 这样，太长的截断。录制文件里存的是原样的文字。
- 429 和 5xx 按 Retry-After（没有就指数退避）重试几次（上一次调用已经失败了就不重试；一次调用里加起来要等
  MAX_WAIT 秒以上就不等，种类里说出来；等 WAIT_SAID 秒以上时往标准错误说一句）；回复已经开始传回来（2xx）以后断了
  不重试（种类是"回复没传完整"：服务器已经答了）；成本账里有真的发出去几个请求（重试也算）；状态码不在 100–599 里
  是协议错误，不重试。不是 2xx 的回答只读正文的开头（ERROR_BODY_BYTES 字节、ERROR_READ_SECONDS 秒）：服务器说的
  原因（server_words）放进放弃的那句、finish 的那句、开跑前检查的那句（失败的种类不变，录制文件里没有它）。
  连续 GIVE_UP_AFTER 次调用失败（不管哪一种：连不上、超时、HTTP 错误、读不懂……，回复到了 token 上限、修改没写完的
  CUT_OFF 也算：每个都按上限收了钱，总是写不完的模型不该被问上一千次），就不再调用：以后的提议立刻
  失败（种类 GAVE_UP），进化用已有的东西跑完（04、05 在这句后面说最好的程序不会丢）。能用的回复（写完了的修改，
  被截断的也算）让这一串从头数起。接连的是被截断时，放弃的那句只说原因，finish 的那句说一次上限和怎样调高
  （cut_off_advice），下一行是照抄就能跑的命令（raise_command）；04、05 的观察说为什么不再问（gave_up_why）。
- 调用等了 WAITING_SAID 秒还没回来（CPU 上的模型、排着队的服务器、不再回答的服务器）：每 WAITING_SAID 秒用 waiting
  说一句在等哪个模型的第几次调用、等了多久、一个请求最多等多久。
- check()：开跑之前看看服务器在不在（GET {base_url}/models），连不上、拒绝了我们、转向、回的东西读不懂、没有这个
  模型，都抛 ServerUnreachable（一句话），脚本印一行、退出码 2。
- 录制和回放：record=文件名 时每次调用写一行 JSON（提示、回复、用时、token 数、模型名、发了几个请求；换成推理模型的
  参数的调用另有 params（发的是哪组）、被拒过重发了的另有 resent、被截断的另有 cut_off（见 VERSION）；没有密钥），一回来就写，按提议的
  顺序（同时在路上的几个里，前面的还没回来时后面的先留着）；Ctrl-C 时已经回来的都写上（_interrupted），一行不会只写一半、
  也不会写两遍。脚本正常跑完时（finish）最后写一行结束行：没有它的文件是录到一半被打断的，回放开跑前说一声，放到录下的
  最后一次调用（或者 Ctrl-C 时还没回来的那一次）为止。
  ReplayLLM(文件名) 从文件里按顺序回答（用到哪一行读到哪一行），不联网（from_arguments 开跑前在标准错误上说一句这是回放：
  哪个文件、文件头记下的录制时间、模型、地址：announced）；提示和录的不一样（代码或参数改了）就抛 ReplayMismatch，
  它故意不是 Exception 的子类，进化循环不会把它当成一次失败的提议吞掉，而是整个运行停下来。
- 成本账：ledger() 给出调用次数、失败次数（按种类）、token 数、总用时和用时的中位数。
- 系统提示 SYSTEM_PROMPT：由 system_prompt() 从 kernel_lab 的网格和启动上限生成（教模型 DSL、配置网格、启动限制和
  SEARCH/REPLACE 格式，要它回得短），约 3,100 个字符。用英文写：代码模型的指令数据大多是英文，跟英文指令更稳——这是
  经验之谈，不是本仓库量出来的。用户消息就是 Prompt.text()，中文。录制文件的文件头里也存着它。看全文（在仓库根目录）：
      python3 lecture14/02_llm_proposal.py --system-prompt
（经编号脚本的 runner：没有 numpy 的 python3 也行，课程代码查出的问题只说一句。）被 import 时不打印任何东西；
PYTHONPATH=lecture14 python -m evolve.openai_llm 也只印系统提示。开跑以后只有决定不再调用时，from_arguments 建的后端往标准错误说一句为什么；
脚本最后调 finish：录制写不进去、或者没用上 LLM（lost_llm）时再说一句、退出码 1。
"""

from __future__ import annotations

import base64
import codecs
import email.utils
import errno
import functools
import html
import http.client
import itertools
import json
import os
import re
import socket
import ssl
import stat
import statistics
import sys
import threading
import time
import unicodedata
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass

from kernel_lab import (BYTES, GRID, MAX_REGS_PER_THREAD, MAX_SMEM_PER_BLOCK, MAX_THREADS_PER_BLOCK,
                        MIN_ACC_PER_WARP, REG_OVERHEAD, REGS_PER_SM, WARP, Config, regs_per_thread)
from sched_lab import GPU, SMS

from .diff import MALFORMED, NO_BLOCK, DiffError, format_diff, make_diff, parse_diff
from .problem import gbk_to_utf8_command, os_words
from .program import COMMAND_INDENT, Program, Rule, render

KIND = "llm"                       # propose 返回的"修改的种类"：真模型不说它做的是哪种修改
TIMEOUT = 300.0                    # 一个请求从连接到最后一个字节最多几秒（--llm-timeout；CPU 上的模型读一段两千 token 的
                                   # 提示就要好一阵，并发时还要排队）
MIN_TIMEOUT = 0.1                  # --llm-timeout 至少这么多秒
MAX_TIMEOUT = 86_400.0             # 至多一天（再大，看门的计时器在这个平台上就设不了：threading.TIMEOUT_MAX）
CHECK_TIMEOUT = 10.0               # 开跑之前的 GET /models 最多几秒（--llm-timeout 更短就用它）
RETRIES = 3                        # 429 / 5xx / 连不上时最多重试几次（上一次调用已经失败了就不重试）
BACKOFF = 1.0                      # 没有 Retry-After 时第 i 次重试前等 BACKOFF × 2^i 秒
MAX_WAIT = 60.0                    # 一次调用里按 Retry-After 等的时间加起来要超过它，就不等了，算一次失败
WAIT_SAID = 5.0                    # 重试前要等这么久以上时，往标准错误说一句（不然看着像卡住了）
WAITING_SAID = 10.0                # 一个调用等了这么多秒还没回来，就往标准错误说一句在等谁、等了多久（以后每这么多秒一句）
READ_GRACE = 0.2                   # Ctrl-C 时正在读回复正文的调用最多再等这么多秒读完、录下（之后一秒之内还要停下）
GIVE_UP_AFTER = 4                  # 连续这么多次调用失败（不管哪一种），就不再调用
MAX_REPLY_BYTES = 1_000_000        # 一个回复最多读这么多字节：max_tokens（推理模型：max_completion_tokens）个 token 的回复
                                   # 连 JSON 的转义一起也远远用不了
ERROR_BODY_BYTES = 16_384          # 不是 2xx 的回答，正文最多读这么多字节：只要里面服务器说的原因（server_words）
ERROR_READ_SECONDS = 2.0           # 读它最多等这么多秒（挤牙膏的错误页不能把一次 429 拖成一次超时）
MAX_MODELS_BYTES = 8_000_000       # GET /models 的回复最多读这么多字节（托管的服务商列几百个模型，每个带说明）
WIRE_SLACK = 1_000_000             # 一个回复从状态行起一共最多读 2 × 正文上限 + 这么多字节（响应头、分块的长度行等的余量）
TEMPERATURE = 0.7
MAX_TOKENS = 1024                  # 回复的 token 上限（要的是短回复；想得多的模型会用掉更多）
# OpenAI 的推理模型（o 系列、gpt-5 一族）不收 max_tokens、只收默认的 temperature（1），每个请求都回 HTTP 400（见
# rejected_parameter）。认出这样的回答以后换成它们的参数（switch_sentence）：max_completion_tokens 代替 max_tokens，不发
# temperature。max_completion_tokens 把看不见的推理 token 也算在里面（OpenAI 的 reasoning 指南：用完了，回复是空的、
# finish_reason 是 "length"；它建议开始时留至少 25,000 个），1024 个常常全用在推理上，所以给得多：只是上限，按用掉的收钱
MAX_COMPLETION_TOKENS = 25_000
REASONING_PARAMS = {"max_completion_tokens": MAX_COMPLETION_TOKENS}   # 换了以后代替 temperature、max_tokens 发的
MAX_LLM_TOKENS = 100_000           # --llm-max-tokens 最多这么多（OpenAI 的 o3、o4-mini 一次最多输出 100,000 个：它的模型页；
#                                    回复照样最多读 MAX_REPLY_BYTES：本机的服务器把草稿也放在回复里，10 万个 token 的英文
#                                    草稿约 40 万字节）
# 回复到了 token 上限、被截断：choices[0].finish_reason 是这几个之一（不分大小写）。OpenAI、ollama（openai/openai.go：
# finish_reason 就是 done_reason，num_predict 用完是 "length"）、llama.cpp 的 server（to_json_oaicompat_chat：不是停在
# EOS 或停止词上就是 "length"）、vLLM（reasoning parser 没等到 </think> 时整段都是 reasoning_content、content 是 null）
# 都说 "length"；想得多的模型（qwen3、deepseek-r1、OpenAI 的推理模型）常把上限全用在草稿上：content 是空的（草稿在
# reasoning_content / reasoning 里，或者根本看不见），或者是没写完的 <think>…，或者修改写到一半。"max_tokens" 是
# Anthropic、Gemini 原生的说法（有的代理原样转过来），"model_length" 是 Mistral 的（提示加回复超了模型的上下文窗口）。
# 以前这样的回复记作"没有 SEARCH/REPLACE 块"（或块不完整）：两百个失败的提议，看不出是上限的事、也没有参数能调
CUT_REASONS = ("length", "max_tokens", "model_length")
CUT_OFF = "回复到了 token 上限、被截断"   # 截断了、修改没写完的回复记进失败的种类（写完了的照样用）
SWITCHABLE = ("max_tokens", "temperature")   # 服务器说这两个不支持时换（别的参数、别的 400 是一次普通的失败）
CONCURRENCY = 2                    # 默认同时发几个请求（--llm-concurrency）
MAX_CONCURRENCY = 64               # 最多同时发几个（和 --jobs 的上限一样；回放文件头里的也按它查）
MAX_NAME = 200                     # 模型名最多几个字符（回放文件里的也是：印出来的一行话不能被它撑成几百行）
FORMAT = "mini-alphaevolve-llm-transcript"
VERSION = 5                        # 录制文件的版本。5：行的写法和 4 一样；回复到了 token 上限、修改没写完的调用（CUT_OFF）
                                   # 算进"接连失败"（录的时候照它放弃，lost_llm 照它定退出码）。1–4 版录下的运行不这样数
                                   # （录的时候也没这样放弃），回放照旧不数（cut_counts）：退出码和标准错误和以前一样。
                                   # 4：调用那一行可以多一项 "cut_off"（回复到了 token 上限、被截断时
                                   # 服务器的 finish_reason，例如 "length"；没写的是没被截断，也是 1–3 版的每一行），
                                   # 文件头多一项 max_completion_tokens（换成推理模型的参数以后发的上限；文件头的
                                   # max_tokens 是 --llm-max-tokens 给的或默认的 1024）。
                                   # 3：调用那一行可以多两项——"params"（这次调用最后一个请求发的采样参数不是
                                   # 文件头里的 temperature、max_tokens 时，是它发的那组，例如 {"max_completion_tokens": 25000}）
                                   # 和 "resent"（服务器说不支持哪个参数、换了参数重发了一次：max_tokens 或 temperature）；
                                   # 没有这两项的行（也是 2、1 版的每一行）发的是文件头里的那组。
                                   # 2：录完时最后一行是结束行 {"type": "end", "calls": N}（讲师报过：录的时候
                                   # 按了 Ctrl-C 的文件，回放开跑时什么也不说，演示 2 放到一半才停，还说是 --budget 比录制时大）；
                                   # 1：没有结束行，看不出录没录完

# 失败的种类（LLMError.kind）；HTTP 错误是 f"LLM 回 HTTP {状态码}"（转向另有名字：REDIRECT）
TIMEOUT_KIND = "LLM 超时"
UNREACHABLE = "连不上 LLM 服务器"
GAVE_UP = "接连失败后没再调用 LLM"
BAD_JSON = "LLM 回复不是 JSON"
NO_CONTENT = "LLM 回复里没有 choices[0].message.content"
REDIRECT = "LLM 服务器要转到别的地址（没跟过去）"
REDIRECT_CODES = (300, 301, 302, 303, 307, 308)   # 转向；304 Not Modified 不是（讲师的复查报过：它被记成"要转到别的地址"，
#                                                   我们从不发带条件的请求，304 只是一个不该有的状态码，记作 HTTP 304）
BAD_HEADERS = "LLM 服务器回的响应头不合规矩"
TRUNCATED = "LLM 回复没传完整"
COMPRESSED = "LLM 回复是压缩过的（请求的是不压缩的，没解压）"
TOOL_CALLS = "LLM 回的是工具调用（tool_calls），不是文字"   # content 是 null：服务器或模型模板把回答当成了调函数
STREAMED = "LLM 回复是流式的（SSE），要的是一次给完的 JSON"   # 讲师报过：只会流式回答的服务器被说成"不是 JSON"
_SSE = re.compile(rb"\s*(?::|(?:data|event|id|retry)\s*:)")   # SSE 的一行：字段名加冒号，或者以冒号开头的注释行


def looks_streamed(body: bytes, content_type: str = "") -> bool:
    """回复是不是 SSE（流式）：正文不以 { 开头（不是一个 JSON 对象），而且响应头说 text/event-stream、或者正文以
    SSE 的一行开头（"data: …"、": 注释"）。--llm（正文读不懂时）和 make openevolve（正文的第一段）都用它，同一个
    服务器两边叫法一样（讲师报过：一边看响应头、一边看正文，叫法各不相同）。"""
    if body.lstrip().startswith(b"{"):
        return False
    return content_type.strip().lower().startswith("text/event-stream") or bool(_SSE.match(body))
TOO_LONG = f"LLM 回复太长（超过 {MAX_REPLY_BYTES / 1e6:g} MB，没读完）"
# 本讲的 MockLLM 服务器（lecture14/mock_llm_server.py）出了程序错：它回 500 时带 MOCK_BUG_HEADER。讲师报过：手动开的
# 服务器出了错，04 只说"接连失败（最后一次是'连不上'）"——错在它自己的终端里。认出来以后马上不再调用，说清去哪看
MOCK_BUG_HEADER = "X-MockLLM-Bug"
MOCK_BUG = "MockLLM 服务器出了程序错误（traceback 在它自己的终端里）"
# 它那个 500 的 error.message（OpenEvolve 不给看响应头，只把这句话写进它的日志：make openevolve 从这句话认出来）
MOCK_BUG_REPLY = "MockLLM 出了程序错误（本讲代码的错，不是提示的问题），不再回答"


class LLMError(Exception):
    """一次调用失败。kind 是短名字（进化循环按它计数），str 是一句说明（不含密钥）。"""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}：{detail}" if detail else kind)
        self.kind, self.detail = kind, detail
        self.requests = 0                   # 这次调用一共发出去几个 HTTP 请求（_attempts 填；成本账用）

    def __reduce__(self):
        return LLMError, (self.kind, self.detail)


class ReplyUnusable(LLMError):
    """调用成功、拿到了回复，但回复里一个 SEARCH/REPLACE 块也没有（空的、只有闲聊、整个函数照抄一遍；种类是
    diff.NO_BLOCK），或者回复到了 token 上限、被截断，修改没写完（CUT_OFF）。进化循环把这个提议记在 op（KIND）那一行、
    失败的种类是 kind，不记成"（LLM 出错）"：讲师报过，模型回了整段 Python，04 的表却说调用本身失败、观察说
    "拿到回复的提议 0 个"。"""
    op = KIND

    def __reduce__(self):
        return ReplyUnusable, (self.kind, self.detail)


@dataclass(frozen=True)
class Names:
    """一句话里怎么称呼服务器的地址和模型名：命令行上是 --llm、--model；OpenEvolve 的例子里是 config.yaml 的
    api_base、name（讲师报过：make openevolve 没有 --llm，却叫他"就用 --llm ……"）。"""
    address: str                    # "检查 {address}"、"{address}要指向……"（以"地址"结尾）
    model: str                      # "用 {model} 选一个"
    use: str                        # 换成另一个地址：use.format(地址)
    key: str = "环境变量 OPENAI_API_KEY"   # 服务器拒绝了（401、403）时让人检查的密钥在哪（OpenEvolve 的例子可能是 config.yaml 的）
    # 不发密钥怎么做（明文 http 的别的机器）：命令行上把环境变量设成空；OpenEvolve 用的 openai 库没有密钥就不肯发请求，
    # 要在 config.yaml 里写一个占位符（讲师报过：照"OPENAI_API_KEY= 设成空"做，OpenEvolve 报 Missing credentials）
    no_key: str = "这次运行前面加 OPENAI_API_KEY= 把密钥设成空"

    def use_url(self, url: str) -> str:
        return self.use.format(url)


COMMAND_LINE = Names(address="--llm 的地址", model="--model", use="就用 --llm {}")


class ServerUnreachable(LLMError):
    """开跑之前服务器就连不上（或拒绝了我们）：脚本印出这一句，退出码 2。"""


class ReplayMismatch(BaseException):
    """回放文件和这次运行对不上。故意不继承 Exception：进化循环的 except Exception 不会把它当成一次失败的提议，
    运行就此停下；脚本接住它，印出这一句，退出码 2。"""


# ---------------------------------------------------------------- 给人看的服务器文字

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(ch: str) -> str:
    c = ord(ch)
    return _NAMED.get(ch) or (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}")


# 要换成转义的字符：C0（换行、制表符另说）、DEL、C1（含 ESC 开头的终端控制序列的 ESC 本身）、行和段落分隔符、
# 双向文字的控制符（能让终端上的字倒着显示）、看不见的零宽字符（零宽空格、词连接符、BOM：藏在模型名或回复里，
# 屏幕上看着一样的两段文字其实不同）、落单的代理项（UTF-8 写不出来，print 会抛 UnicodeEncodeError）、Unicode 的
# 标签字符 U+E0000–U+E007F（看不见，却能把一整段 ASCII 藏在一个模型名或回复里：讲师报过它们原样到了终端）
_UNSAFE = [*range(0x00, 0x20), *range(0x7f, 0xa0), 0x2028, 0x2029, 0x061c, 0x200b, 0x200e, 0x200f, 0x2060, 0xfeff,
           *range(0x202a, 0x202f), *range(0x2066, 0x206a), *range(0xd800, 0xe000), *range(0xe0000, 0xe0080)]
_INLINE = {c: _escape(chr(c)) for c in _UNSAFE}          # 一行里：换行、制表符也转义
_LINES = {c: e for c, e in _INLINE.items() if chr(c) not in "\n\t"}   # 多行的文字（模型的回复）：保留换行和制表符


def _int(digits: str):
    """JSON 里的整数：太长的（几千位）Python 默认不肯转、抛 ValueError，json.loads 就把一段合法的 JSON 说成读不懂
    （审读报过：usage 里一个 5000 位的数，回复被记作"不是 JSON"）。超过 MAX_INT_DIGITS 位的读成 ±inf：它不是
    哪个字段该有的值（token 数、模型名），用到它的地方照"没给"处理。花的时间和位数成正比。"""
    if len(digits) > MAX_INT_DIGITS:
        return float("-inf") if digits.startswith("-") else float("inf")
    return int(digits)


MAX_INT_DIGITS = 100


def loads(raw):
    """服务器、录制文件给的 JSON：整数最多 MAX_INT_DIGITS 位（再长的读成 ±inf，见 _int）。"""
    return json.loads(raw, parse_int=_int)


def shown(text, limit: int | None = 200, lines: bool = False, whole: str = "共", total: int | None = None) -> str:
    """服务器给的文字（模型名、转向的地址、模型的回复……）印到终端之前：把控制字符换成看得见的转义（ESC 写成 \\x1b；
    lines=True 时保留换行和制表符），转义以后最多 limit 个字符（截掉的写成"…（共 N 个字符）"，N 是原文的字符数；
    whole 换掉"共"；limit=None 时只转义、不截）。total：text 只是一段 total 个字符的原文的开头时给（N 写它，总写截断）。
    只管显示：录制文件里存的还是原样的文字。不是字符串的先 str()。花的时间和 limit 成正比，和原文多长无关。"""
    text = text if isinstance(text, str) else str(text)
    table = _LINES if lines else _INLINE
    if limit is None:
        return text.translate(table)
    head = text[:limit].translate(table)
    if total is None and len(text) <= limit and len(head) <= limit:
        return head                                 # 常见的情形：整段放得下（转义以后也是）
    # 转义以后最多 limit 个字符（讲师的复查报过：160 个 \x00、\ud800 这样的字符转义以后有 894 列），转义的写法不拆开
    out, n = [], 0
    for c in text[:limit]:
        piece = c.translate(table)
        if n + len(piece) > limit:
            break
        out.append(piece)
        n += len(piece)
    cut = f"…（{whole} {len(text) if total is None else total:,} 个字符）" if len(out) < len(text) or total is not None else ""
    return "".join(out) + cut


def shown_lines(text, line_chars: int = 160, max_lines: int = 60) -> str:
    """多行的服务器文字（模型的回复、它写的修改）印到终端之前：每行截到 line_chars 个字符（截掉的写成
    "…（这一行共 N 个字符）"）、控制字符转义，最多 max_lines 行（多的说一共几行）。讲师报过：一行 4,030 个字符的
    "思考"在 80 列的终端里占了五十几行，几十万个字符的注释整段印出来。花的时间和印出来的字数成正比。"""
    text = text if isinstance(text, str) else str(text)
    lines, out = text.split("\n", max_lines), []
    for line in lines[:max_lines]:
        out.append(shown(line, line_chars, lines=True, whole="这一行共"))
    if len(lines) > max_lines:
        out.append(f"…（一共 {text.count(chr(10)) + 1:,} 行，只印了前 {max_lines} 行）")
    return "\n".join(out)


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
_SURROGATE = re.compile("[\ud800-\udfff]")       # 落单的代理项（见 OpenAILLM._write）


# ---------------------------------------------------------------- 一次调用的记录和成本账

@dataclass
class Call:
    """一次调用：第几次（从 0 数）、提示、回复（失败是 None）、失败的种类、用时（秒）、token 数、服务器报的模型名、
    真的发出去几个 HTTP 请求（重试、换参数后的重发也算；接连失败以后没再问的是 0；早先录的文件里没有这一项，当作 1）、
    最后一个请求发的采样参数不是 temperature、max_tokens 时发的那组（params，例如 REASONING_PARAMS；None 是
    temperature、max_tokens）、服务器说不支持哪个参数、换了参数重发过（resent，SWITCHABLE 里的一个；None 是没有）、
    回复到了 token 上限、被截断时服务器的 finish_reason（cut_off，CUT_REASONS 里的一个，原样；None 是没被截断）。"""
    n: int
    prompt: str
    reply: str | None
    error: str | None
    latency: float
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str | None
    requests: int = 1
    params: dict | None = None
    resent: str | None = None
    cut_off: str | None = None


def call_line(call: Call) -> dict:
    """录制文件里一次调用的那一行（抹密钥之前）：Call 的每一项；params、resent、cut_off 只在有的时候写（没换过参数、
    没被截断的运行，每一行和第 2 版的一样）。"""
    line = dict(type="call", **asdict(call))
    for optional in ("params", "resent", "cut_off"):
        if line[optional] is None:
            del line[optional]
    return line


def ledger(calls, max_tokens: int = MAX_TOKENS) -> dict:
    """一串调用的成本账：calls（真的发出去的请求）、not_sent（接连失败以后没再问、直接记成 GAVE_UP 的提议）、
    answered（拿到回复的调用）、requests（真的发出去的 HTTP 请求，重试也算：托管的 API 按请求收钱）、
    failed={种类: 次数}（没发出去的也在里面，记作 GAVE_UP）、prompt_tokens、completion_tokens（服务器没报就是 None；
    只有几次报了时是那几次的和）、prompt_reported、completion_reported（几次调用报了这个数）、latency_total、
    latency_median（秒；只算发出去的），和被截断的回复（cut_offs：几次、其中几次没用上、上限、服务器说的 finish_reason；
    max_tokens 是没换成推理模型的参数时发的上限）。"""
    calls = list(calls)
    failed: dict[str, int] = {}
    for c in calls:
        if c.error is not None:
            failed[c.error] = failed.get(c.error, 0) + 1
    not_sent = failed.get(GAVE_UP, 0)
    calls = [c for c in calls if c.error != GAVE_UP]       # 没发出去的不算"问了 LLM"，也不进用时和 token
    tokens = lambda key: (sum(getattr(c, key) for c in calls if getattr(c, key) is not None)  # noqa: E731
                          if any(getattr(c, key) is not None for c in calls) else None)
    reported = lambda key: sum(getattr(c, key) is not None for c in calls)                 # noqa: E731
    lat = [c.latency for c in calls]
    return dict(calls=len(calls), answered=sum(c.reply is not None for c in calls), not_sent=not_sent, failed=failed,
                requests=sum(c.requests for c in calls),
                prompt_tokens=tokens("prompt_tokens"),
                completion_tokens=tokens("completion_tokens"), prompt_reported=reported("prompt_tokens"),
                completion_reported=reported("completion_tokens"), latency_total=sum(lat),
                latency_median=statistics.median(lat) if lat else 0.0, **cut_offs(calls, max_tokens))


def _limit(call: Call, max_tokens: int = MAX_TOKENS) -> tuple[str, int]:
    """这次调用的回复上限：("max_completion_tokens", 25000)（换成了推理模型的参数）或 ("max_tokens", 1024)（max_tokens：
    没换时发的那个数，--llm-max-tokens 或默认的）。"""
    params = call.params or {}
    if "max_completion_tokens" in params:
        return "max_completion_tokens", params["max_completion_tokens"]
    return "max_tokens", max_tokens


def sent_limit(call: Call, max_tokens: int = MAX_TOKENS) -> str:
    """这次调用的回复上限，照发出去的参数写："max_completion_tokens=25,000" 或 "max_tokens=1,024"（见 _limit）。"""
    return _params_said(dict([_limit(call, max_tokens)]))


def cut_offs(calls, max_tokens: int = MAX_TOKENS) -> dict:
    """被截断的回复（Call.cut_off）：cut_off（几次）、cut_unusable（其中修改没写完、记作 CUT_OFF 的几次：别的修改是
    完整的，照样用）、cut_limits（那几次的上限，sent_limit 的写法，不重复、按出现的先后）、cut_top（其中最大的那个数；
    没有被截断的是 0）、cut_reasons（服务器说的 finish_reason，不重复、按出现的先后）。"""
    cut = [c for c in calls if c.cut_off is not None and c.reply is not None]
    unusable = sum(map(unfinished, cut))
    return dict(cut_off=len(cut), cut_unusable=unusable,
                cut_limits=list(dict.fromkeys(sent_limit(c, max_tokens) for c in cut)),
                cut_top=max((_limit(c, max_tokens)[1] for c in cut), default=0),
                cut_reasons=list(dict.fromkeys(c.cut_off for c in cut)))


def unfinished(call: Call) -> bool:
    """这次调用的回复到了 token 上限、修改没写完（_result 记作 CUT_OFF 的）：和调用失败一样算进"接连失败"（第 5 版起）。"""
    if call.cut_off is None or call.reply is None:
        return False
    r = _Backend._result(call)
    return isinstance(r, ReplyUnusable) and r.kind == CUT_OFF


CUTS_COUNTED = 5                   # 从第几版录制文件起，被截断、修改没写完的回复算进"接连失败"（见 VERSION）


def raised_limit(book: dict) -> int | None:
    """建议的 --llm-max-tokens：被截断时最大的那个上限的 4 倍（最多 MAX_LLM_TOKENS）；已经是最大的了是 None。"""
    top = book["cut_top"]
    return None if top >= MAX_LLM_TOKENS else min(MAX_LLM_TOKENS, 4 * top)


def cut_off_advice(book: dict, replay: bool = False, command: bool = False) -> str:
    """被截断了该怎么办（一句话的后半，04 的成本账和 finish 的那句共用）：上限是多少、怎样调高——建议的 --llm-max-tokens
    是 raised_limit。book：cut_offs 的（或者带着它的成本账）。command：这句话后面另起一行跟着一条照抄就能跑的命令
    （raise_command；讲师报过：运行最后只有半截参数"加上 --llm-max-tokens 4096"，照抄不成一条命令）。"""
    limits, reasons = book["cut_limits"], book["cut_reasons"]
    more = raised_limit(book)
    window = ("（finish_reason 是 model_length 的，是提示加回复超了模型的上下文窗口：调高上限也没用）"
              if any(r.lower() == "model_length" for r in reasons) else "")
    why = "（这次的 4 倍；本机的模型只是更慢，托管的 API 按用掉的 token 收钱）"
    if more is None:
        how = f"上限已经是 --llm-max-tokens 最大的 {MAX_LLM_TOKENS:,}：换一个想得少一些的模型"
    elif command and not replay:
        how = f"加上 --llm-max-tokens {more} 再跑{why}，照抄下面这条命令"
    else:
        how = ("重新 --record 时" if replay else "跑的时候") + f"加上 --llm-max-tokens {more}{why}"
    return (f"{'录的时候' if replay else '这次'}的上限是 {'、'.join(limits)}（想得多的模型把草稿也算在里面）{window}；"
            f"要让它写完，{how}")


def raise_command(book: dict, replay: bool = False, rerun=None) -> str | None:
    """调高上限的那条命令：rerun("--llm-max-tokens", 建议的值)（脚本传 runner.rerun_command：这次运行的命令换上这个值，
    已经按标准错误的宽度排好）；回放（办法是重新录）、已经是最大的上限、没给 rerun、排不出（比如地址带着查询串）时是 None。"""
    more = raised_limit(book)
    if replay or more is None or rerun is None:
        return None
    return rerun("--llm-max-tokens", str(more))


def gave_up_why(calls, cut_counts: bool = True, give_up_after: int = GIVE_UP_AFTER) -> str | None:
    """接连失败、不再调用 LLM 的原因（照按提议的顺序记下的调用数，和 _failed 决定放弃时数的一样；录制和回放一样）：
    "接连 4 次调用的回复都到了 token 上限、被截断，修改没写完" 或 "接连 4 次调用失败（LLM 回 HTTP 500 ×4）"；
    没有放弃过（没有 GAVE_UP 的提议）是 None。04、05 的观察在"没问它"后面说它（讲师报过：标准输出只说"接连失败以后
    不再调用"，看不出是服务器坏了还是上限不够）。cut_counts：修改没写完的算失败（回放 1–4 版的录制是 False）。"""
    calls = list(calls)
    if not any(c.error == GAVE_UP for c in calls):
        return None
    for counts in dict.fromkeys((cut_counts, True)):    # 1–4 版的文件数不出来（测试拿新录的改成旧版本）时按第 5 版数
        streak: list[str] = []
        for c in calls:
            if c.error == GAVE_UP:
                break
            if c.error is None and not (counts and unfinished(c)):
                streak = []
                continue
            streak.append(c.error or CUT_OFF)
            if c.error == MOCK_BUG or (give_up_after and len(streak) >= give_up_after):
                break
        if streak and (streak[-1] == MOCK_BUG or len(streak) >= give_up_after):
            break
    else:
        return None
    if all(k == CUT_OFF for k in streak):
        return f"接连 {len(streak):,} 次调用的回复都到了 token 上限、被截断，修改没写完"
    return f"接连 {len(streak):,} 次调用失败（{failure_summary(streak)[0]}）"


def coverage(not_sent: int, proposals: int, model: str, what: str, why: str | None = None) -> tuple[bool, str, str, str]:
    """"每个提议都问到了模型"这句观察的四样东西（console.check 的参数：成立吗、成立时的话、判据、量到的）。
    not_sent：接连失败以后没再问、记作 GAVE_UP 的提议数；proposals：一共几个提议；what：比的是什么（"两种划分"）；
    why：为什么不再问（gave_up_why 的；前面的观察已经说过时是 None）。
    讲师报过：服务器中途开始回 400，之后的提议都没问，05 照样把几个变体的分数差说成拿掉部件的后果。"""
    return (not_sent == 0,
            f"这次的 {proposals:,} 个提议都问了 {model}（没有接连失败以后不再问的），{what}比的是它的修改。",
            f"比{what}，要每个提议都问到 LLM（没有接连失败以后不再调用的）",
            f"{proposals:,} 个提议里 {not_sent:,} 个（{not_sent / max(1, proposals):.0%}）没问 {model}（"
            + (f"{why}，之后不再调用" if why else "接连失败以后不再调用")
            + f"，记作“{GAVE_UP}”）：那些提议没有 LLM 的修改，{what}的差别说明不了什么")


def unfinished_edit(reply: str) -> bool:
    """一个被截断的回复（finish_reason 是 CUT_REASONS 之一）里修改没写完吗：去掉 <think> 草稿以后一个块也没有（草稿用完了
    上限：空的、没写完的 <think>），或者最后一块没写完。--llm（_result 记作 CUT_OFF）和 make openevolve（run_openevolve
    的 _careful_http：OpenEvolve 自己不看 finish_reason）用同一个判断。"""
    try:
        parse_diff(_strip_thinking(reply), empty_ok=False)
    except DiffError as e:
        return e.kind in (NO_BLOCK, MALFORMED)
    return False


def _strip_thinking(text: str) -> str:
    """想得多的模型（qwen3、deepseek-r1……）先在 <think>…</think> 里打草稿，草稿里的 SEARCH 块不算数。
    每个 <think> 到它后面第一个 </think> 为止删掉。还有两种草稿（讲师报过：草稿里的块被当成了修改，打上以后真正的
    回答"SEARCH 找不到"）：
      - 开头的 <think> 写在模型的对话模板里（DeepSeek-R1 这类）：回复里只有 </think>，它前面整段都是草稿；
      - 草稿没写完（max_tokens 用完了）：最后一个 <think> 后面没有 </think>，后面整段都是草稿。
    用 str.find 一遍走完：花的时间和回复的长度成正比（正则 <think>.*?</think> 在几十万个不配对的 <think> 上是平方级的）。"""
    first_open, first_close = text.find("<think>"), text.find("</think>")
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        text = text[first_close + 8:]
    out, i = [], 0
    while True:
        start = text.find("<think>", i)
        if start < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:start])
        end = text.find("</think>", start + 7)
        if end < 0:                                   # 没写完的草稿：后面都是
            return "".join(out)
        i = end + 8


class _Backend:
    """OpenAILLM 和 ReplayLLM 共用的部分：按顺序编号的调用、成本账、并发。"""
    concurrency = 1
    parallel = True                          # propose_many 开 concurrency 个线程同时问（False：按顺序一个一个地问）
    model = ""
    max_tokens = MAX_TOKENS                  # 没换成推理模型的参数时，请求里的 max_tokens（--llm-max-tokens）
    notify = None                            # 第一次有回复被截断时说一声的函数（None 不说）
    cut_counts = True                        # 被截断、修改没写完的回复算进"接连失败"（ReplayLLM 照录制文件的版本）

    def __init__(self):
        self.calls: list[Call] = []          # 按提议的顺序
        self._lock = threading.Lock()
        self._cut_said = False               # 第一次被截断的那句说过了

    def ledger(self, start: int = 0, stop: int | None = None) -> dict:
        """第 start 到 stop 次调用（不含 stop）的成本账，见模块的 ledger()。"""
        return ledger(self.calls[start:stop], self.max_tokens)

    def propose(self, prompt) -> tuple[str, str]:
        """问一次，返回 (KIND, 回复文本)；失败抛 LLMError（.kind 是失败的种类）。"""
        r = self.propose_many([prompt])[0]
        if isinstance(r, Exception):
            raise r
        return r

    def propose_many(self, prompts) -> list:
        """几个提示一起问（最多 concurrency 个同时在路上）；返回的列表和 prompts 一一对应：(种类, 回复) 或 LLMError。
        请求在后台线程里发（parallel）：主线程只等着，Ctrl-C 时由 _interrupted 收拾还在路上的这一批。"""
        base = len(self.calls)
        texts = [p.text() for p in prompts]
        calls: list = [None] * len(texts)
        errors: list = [None] * len(texts)

        def work(i):
            try:
                calls[i] = self._fetch(base + i, texts[i])
            except BaseException as e:      # noqa: BLE001  回放对不上（ReplayMismatch）也要带回主线程
                errors[i] = e

        self._batch()
        try:
            _run_threads(work, range(len(texts)), self.concurrency if self.parallel else 1, threads=self.parallel)
            for e in errors:
                if isinstance(e, (ReplayMismatch, KeyboardInterrupt)):
                    raise e
            out = []
            for i in range(len(texts)):             # 按提议的顺序记账
                if errors[i] is not None:
                    raise errors[i]
                self._log(calls[i])
                out.append(self._result(calls[i]))
        except KeyboardInterrupt:
            self._interrupted()
            raise
        return out

    def _batch(self) -> None:
        """一批调用要开始了（OpenAILLM：录制的准备）。"""

    def _interrupted(self) -> None:
        """Ctrl-C 落在一批调用中间（主线程）：OpenAILLM 把已经回来的调用录下。"""

    @staticmethod
    def _result(call: Call):
        """一次调用的结果：(KIND, 回复) 或 LLMError。回复里一个 SEARCH/REPLACE 块都没有（空的、只有闲聊）也是失败，
        种类是 diff.NO_BLOCK——MockLLM 不回块表示"子程序就是父程序"，真模型不回块只是没按要求回答。
        回复到了 token 上限、被截断（call.cut_off）：块都写完了的照样用（截掉的是后面的说明；打不打得上、是不是 DSL
        由进化循环照常查），没有块（草稿用完了上限：空的、没写完的 <think>）或者最后一块没写完的，种类是 CUT_OFF——
        原因是上限（以前两百个这样的提议都记作"没有 SEARCH/REPLACE 块"）。"""
        if call.error is not None:
            return LLMError(call.error)
        reply = _strip_thinking(call.reply)
        if call.cut_off is not None and unfinished_edit(call.reply):
            return ReplyUnusable(CUT_OFF)
        try:
            parse_diff(reply, empty_ok=False)
        except DiffError as e:
            if e.kind == NO_BLOCK:
                return ReplyUnusable(NO_BLOCK)
        return KIND, reply

    def _log(self, call: Call) -> None:
        """按提议的顺序记下一次调用（录制和回放记得一样）。第一次有回复到了 token 上限、被截断时，用 notify 说一声：
        不用等到运行的最后（finish）才知道——每个这样的回复都按上限收了钱、等了时间，看到了可以先 Ctrl-C 调高再跑。"""
        self.calls.append(call)
        if call.cut_off is not None and call.reply is not None and not self._cut_said:
            self._cut_said = True
            if self.notify is not None:
                self.notify(f"（LLM：第 {call.n + 1} 次调用的回复到了 token 上限（{sent_limit(call, self.max_tokens)}，"
                            f"finish_reason 是 “{shown(call.cut_off, 20)}”）、被截断；修改没写完的记作“{CUT_OFF}”，"
                            "运行的最后说一共几次、怎样调高上限。）")

    def _fetch(self, n: int, text: str) -> Call:
        raise NotImplementedError


def _run_threads(work, items, workers: int, threads: bool = True) -> None:
    """用 workers 个后台线程对每个 item 调 work(item)，等它们做完（threads=False：在这个线程里一个一个地做）。
    线程是 daemon 的：Ctrl-C 时不用等在路上的请求；主线程只等着（每 0.1 秒醒一次），Ctrl-C 落在等的地方，
    不会落在某个请求读回复、记账的半路上。"""
    items = list(items)
    if not threads:
        for i in items:
            work(i)
        return
    todo = iter(items)
    lock = threading.Lock()
    stopped: list = []                      # 主线程不等了（Ctrl-C）：没开始的不再开始

    def loop():
        while True:
            with lock:
                i = None if stopped else next(todo, None)
            if i is None:
                return
            work(i)

    pool = [threading.Thread(target=loop, daemon=True) for _ in range(min(workers, len(items)))]
    try:
        for t in pool:                      # 开线程也在 try 里：start() 等新线程开起来，Ctrl-C 也会落在这里（已经开起来的
            t.start()                       # 线程以前接着把这一批问完）
        for t in pool:
            while t.is_alive():
                t.join(0.1)                 # 短短地等，主线程随时能收到 Ctrl-C
    except BaseException:
        with lock:                          # Ctrl-C 以后空出来的线程不再接着发这一批里还没发的请求（托管的 API 按请求收钱）
            stopped.append(True)
        raise


# ---------------------------------------------------------------- 真的服务器

def _said_url(url: str) -> str:
    """读不成（或不合规矩）的地址印出来的样子：用户名、密码、查询串换成"…"（讲师报过：--llm "http://h:99999/v1?key=sk-…"
    的报错里原样印着密钥），控制字符转义、太长截断。"""
    url = re.sub(r"(?<=//)[^/?#]*@", "…@", url)
    return shown(re.sub(r"[?#].*", "?…", url, flags=re.S), 100)


def redact(text: str, key: str | None) -> str:
    """抹掉文本里的密钥（原样的和 URL 编码过的：服务器能把收到的密钥放进模型名、转向地址、回复里回给我们），也抹掉
    屏幕上还认得出是它（或它的一大段）的改写：见 _fragment_spans。很短的"密钥"（本机服务器常用的占位符，如 EMPTY）
    不算秘密，也不能抹：会把回复抹坏。花的时间和文本的长度成正比，每个字只在 C 里过几遍（str.replace、translate、
    encode、count），找到的每处密钥再花一微秒上下（最多 MAX_PIECES 处）：讲师的复查报过，以前逐字在 Python 里归一、
    逐个记下找到的每处，一个特意凑的 1 MB 回复要 2.7 秒 CPU（--llm-timeout 管不到）；现在寻常的回复一两百分之一秒，
    特意凑的（1 MB、上万段密钥碎片夹着 é）也不到半秒，随长度线性增长。"""
    if not key or len(key) < 8:
        return text
    forms = {key, urllib.parse.quote(key, safe=""), urllib.parse.quote_plus(key),
             json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1]}  # 写进 JSON 时转义过的
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    grams = _key_grams(key)
    if not grams:
        return text
    spans = _fragment_spans(text, grams)                    # 原文里的（非 ASCII 的字当作夹在中间的东西）
    if not text.isascii():                                  # 全角、数学粗体、西里尔字母……：归一以后才看得出是它
        spans += _fragment_spans(text, grams, _units(text))
    if not spans:
        return text
    # 两种读法找到的都抹掉，抹的是原文：别的字一个不改（讲师的复查报过：以前找到一段就整段换成归一过的文字，
    # "（改了）café" 变成 "(改了)cafe"；归一以后找到了一段，原文里才认得出的另一段反而漏了）
    out, last = [], 0
    for a, b in _merged(spans):
        out.append(text[last:a] + "***")
        last = b
    return "".join(out) + text[last:]


# 长得和拉丁字母、数字一样、NFKC 也不换的字母：西里尔、希腊、小型大写字母、切罗基、傈僳字母和几个拉丁扩展字母里
# 最常见的那些（讲师的复查报过傈僳大写字母和 Ƽ、ϲ）。这是一张有限的表：Unicode 里长得像的字还有更多
_HOMOGLYPHS = str.maketrans(dict(zip(
    "аеорсхуѕіјкԁһӏԛԝАВЕКМНОРСТХЅІЈΑΒΕΖΗΙΚΜΝΟΡΤΥΧοντϲϹϳ" "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ" "ᎪᏴᏟᎠᎬᏀᎻᏆᎫᏦᏞᎷᏢᎡᏚᎢᏙᏔᏃ"
    "ꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ" "ƼƽƷʒɑɡıȷ",
    "aeopcxysijkdhlqwABEKMHOPCTXSIJABEZHIKMNOPTYXovtcCj" "abcdefghijklmnoprstuvwyz" "ABCDEGHIJKLMPRSTVWZ"
    "BPDTGKJCZFMNLSRVHWXYAEIOU" "5533agij")))
_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_FRAGMENT = 8              # 密钥里连着的这么多个字母、数字在文本里出现（不分大小写，中间夹什么都行）就抹掉。讲师的复查
#                            报过 12 时拆成每段 10 个就漏了；随便一段正文碰巧是随机密钥的连着 8 个，机会不到万亿分之一


# 一个字节一个字节地换（在 C 里）：大写换成小写，小写以后 l、i 看着像 1、o 像 0，也换掉；不是字母、数字的删掉
_CANON_BYTES = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz").translate(
    bytes.maketrans(b"lio", b"110"))
_NOT_ALNUM_BYTES = bytes(c for c in range(128) if chr(c) not in _ALNUM)


def _canon(text: str, keep: bytes = b"") -> str:
    """text 里的 ASCII 字母、数字，小写、l、i 换成 1、o 换成 0，别的字都删掉（keep 里的 ASCII 字符留着）。"""
    return text.encode("ascii", "ignore").translate(_CANON_BYTES, _NOT_ALNUM_BYTES.translate(None, keep)).decode()


def _letters_of(chars) -> list[str]:
    """每个字归一以后是哪几个字母、数字（_canon 过的；大多是一个或没有）：长得像的字换成它们（表换一次；希腊的月形
    sigma ϲ 经 NFKD 会变成 ς，就不像 c 了），NFKD（全角、数学粗体变成拉丁字母，带附加符号的字母拆开）再去掉附加符号
    （ś 就是 s：学生看得出），表再换一次，最后 _canon。所有的字拼成一段一起换（在 C 里；\x00 隔开，NFKD 不跨过它：
    chars 里不能有 \x00）。"""
    joined = unicodedata.normalize("NFKD", "\x00".join(chars).translate(_HOMOGLYPHS))
    marks = dict.fromkeys(ord(x) for x in set(joined) if unicodedata.combining(x))    # 附加符号：删掉
    return _canon(joined.translate(marks).translate(_HOMOGLYPHS), keep=b"\x00").split("\x00")


_ASCII_UNITS = {c: _canon(chr(c)) for c in range(128)}     # ASCII 的字不用归一（\x00 也在里面：_letters_of 用它隔开）
_UNITS = dict(_ASCII_UNITS)        # 字（码位）-> _letters_of 给它的字母、数字；非 ASCII 的字用到时才算、记下来
_UNITS_KEPT = 300_000              # 最多记住这么多个字（再多就从头记：不让服务器把它撑大）
# 归一以后一个字母、数字也不是的字，不用一个个地算：汉字、谚文音节、第 2 到 16 平面（又是汉字、标签字符、私用区；
# tests 里一个个地查过）。一个 1 MB 的回复里能有二十几万个不同的这种字（讲师的复查报过：逐个算要零点几秒）
_NO_LETTERS = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\U00020000-\U0010ffff]+")


def _units(text: str) -> dict:
    """text 里每个字归一以后是哪几个字母、数字（str.translate 用的表，_letters_of 算的）。_NO_LETTERS 里的字不在表里
    （translate 留着它们，_normalized 再删掉），别的都在。没见过的字一起算、记下来：花的时间和 text 的长度（在 C 里
    过几遍）加上没见过的字的个数成正比。"""
    global _UNITS
    units = _UNITS
    new = [c for c in set(_NO_LETTERS.sub("", text)) if ord(c) not in units]
    if new:
        if len(units) + len(new) > _UNITS_KEPT:
            units = _UNITS = dict(_ASCII_UNITS)
        units.update(zip(map(ord, new), _letters_of(new)))
    return units


def _normalized(text: str, units: dict) -> str:
    """text 归一以后的字母、数字连起来（units 是 _units(text)）。"""
    return text.translate(units).encode("ascii", "ignore").decode()


def normalized(text: str) -> str:
    """text 归一以后的字母、数字连起来：长得像的、全角、带附加符号的都换成了它们（tests 用它查抹干净了没有）。"""
    return _normalized(text, _units(text))


@functools.lru_cache(maxsize=8)
def _key_grams(key: str) -> frozenset:
    """密钥的字母、数字（_canon 过的）里每一段连着的 _FRAGMENT 个；不到 8 个字母、数字的密钥没有（太短，会误伤正文）。"""
    k = _canon(key)
    if len(k) < 8:
        return frozenset()
    w = min(_FRAGMENT, len(k))
    return frozenset(k[i:i + w] for i in range(len(k) - w + 1))


MAX_PIECES = 10_000        # 一段文字里密钥的碎片（_key_grams 里的一段出现一次算一处）超过这么多处，整段都当密钥抹掉：
#                            正常的文字里一处也没有；逐处抹每处要一微秒上下（讲师的复查报过：一个 1 MB 的回复抹了 2.7 秒）


def _fragment_spans(text: str, grams: frozenset, units: dict | None = None) -> list[tuple[int, int]]:
    """改头换面的密钥：只看文本里的字母和数字（不分大小写，l、i 当 1，o 当 0），它们连起来里出现了密钥的一大段
    （_key_grams 里的一段），那一段——从它的第一个字符到最后一个，夹在中间的空格、换行、看不见的字符、别的话
    都算——要抹掉。讲师报过：服务器把密钥大写、逐字夹上 U+FE0F、空格隔开、拆成两行（中间夹着别的话）、l 写成 1
    再回显，屏幕上照样认得出。base64 之类的编码不管：屏幕上看不出是它。units：None 时只认 ASCII 的字母、数字（别的字
    都当夹在中间的东西）；是 _units(text) 时按归一以后的读。返回这些段在 text 里的 [起, 止)（可能重叠）；超过
    MAX_PIECES 处时是整段。花的时间和文本的长度成正比（在 C 里：找每一段、数每一段），加上每处一次（最多 MAX_PIECES 次）。"""
    if units is None:
        norm, counts = _canon(text), map(_ALNUM.__contains__, text)          # counts：每个字在 norm 里占几个（0 或 1）
    else:
        norm, counts = _normalized(text, units), map(len, map(units.get, map(ord, text), itertools.repeat("")))
    pieces = sum(norm.count(g) for g in grams)
    if not pieces:                                          # 常见的情形：一处也没有
        return []
    if pieces > MAX_PIECES:
        return [(0, len(text))]
    w = len(next(iter(grams)))
    found = []
    for g in grams:
        j = norm.find(g)
        while j >= 0:
            found.append((j, j + w))
            j = norm.find(g, j + 1)
    at = list(itertools.chain.from_iterable(map(itertools.repeat, itertools.count(), counts)))   # at[k]：norm 的第 k 个字
    return [(at[a], at[b - 1] + 1) for a, b in found]                                          # 来自 text 的第几个字


def _merged(spans) -> list[list[int]]:
    """[起, 止) 的几段，重叠或挨着的并成一段，按顺序。"""
    out: list[list[int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


ENDPOINTS = ("/chat/completions", "/completions", "/models")   # 接在 --llm 后面的接口：--llm 本身不该以它们结尾


def clean_url(url: str) -> str:
    """去掉地址里的用户名、密码、路径里的“;参数”、查询串和“#…”（录进文件、印出来的只有这个）。"""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    path = u.path.split(";")[0].rstrip("/")
    return urllib.parse.urlunsplit((u.scheme, host + (f":{u.port}" if u.port else ""), path, "", ""))


class OpenAILLM(_Backend):
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
            raise ValueError(f"{names.address} {_said_url(base_url)} 读不成一个地址（方括号里要是 IPv6 地址，"
                             "例如 http://[::1]:11434/v1）") from None
        try:
            port = u.port
        except ValueError:
            port = -1
        if u.scheme in ("http", "https") and u.hostname and port == -1:
            raise ValueError(f"{names.address} {_said_url(base_url)} 里的端口不对：端口是 1 到 65535 的整数"
                             "（例如 http://127.0.0.1:11434/v1 的 11434）")
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"{names.address}要是 http:// 或 https:// 开头的地址（例如 http://127.0.0.1:11434/v1），"
                             f"不是 {_said_url(base_url)}")
        if any(c.isspace() for c in base_url) or not u.hostname.isascii():   # 讲师报过：空格说成"响应头不合规矩
            raise ValueError(f"{names.address} {_said_url(base_url)} 里有空格或主机名里有 ASCII 以外的字符："  # （InvalidURL）"
                             "地址里不能有空格；中文之类的主机名要写成 xn-- 开头的写法（punycode）")
        odd = next((c for c in base_url if not "!" <= c <= "~"), None)   # 路径、查询串里的控制字符、全角字、零宽空格：
        if odd is not None:                        # http.client 发不出去，以前说成服务器"回的响应头不合规矩（UnicodeEncodeError）"，
            raise ValueError(                      # 地址原样印到终端（ESC 序列照样起作用）
                f"{names.address} {_said_url(base_url)} 里有控制字符或 ASCII 以外的字符（{shown(odd)}，U+{ord(odd):04X}；"
                "多半是复制时带进来的全角字符或看不见的字符）：地址只能是看得见的 ASCII 字符，"
                "路径和查询串里别的字符要写成 %xx（百分号编码）")
        if u.username is not None or u.password is not None:   # 讲师报过：http://user:pass@… 悄悄不发，服务器回 401
            raise ValueError(f"{names.address} {_said_url(base_url)} 里写了用户名或密码（@ 前面那段）：它们不会发给服务器；"
                             f"去掉它；密钥另外给：{names.key}")
        if u.port == 0:                            # http.client 把端口 0 当成"没写"，连的是 80：说一句，别悄悄换
            raise ValueError(f"{names.address} {_said_url(base_url)} 的端口是 0：端口要是 1 到 65535 的整数"
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
        self._proxy = _proxy_url(proxy, self.proxy_env) if proxy else None

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

    def _close_file(self) -> None:
        """（在 self._rec 下面）关上录制文件。"""
        if self._record is not None:
            try:
                self._record.close()
            except OSError:                          # 最后一点写不进去（磁盘满了）：录制文件本来就不完整了
                pass
            self._record = None

    def _cut_here(self) -> None:
        """（在 self._rec 下面）录制停在这里：留着的调用写在还在路上的那次后面，关上文件，以后不再写、也不写结束行。"""
        self._cut = True
        try:
            self._write_all_held()
        finally:
            self._held.clear()
            self._close_file()

    # ---- 录制 ----
    def record_to(self, path: str, settings: str = "") -> None:
        """从现在起把每次调用录进 path（JSON Lines；第一行是文件头：脚本和参数 settings、模型、地址、并发数、
        采样参数（max_tokens、换成推理模型的参数以后的 max_completion_tokens）、GPU、录制的时间、系统提示；录完时 end_recording
        写最后的结束行）。path 已经有内容时抛 FileExistsError：开跑前查过，这里用"x"再挡一次（查和打开
        之间别的程序写了它，也不清空它：那可能是花钱录的）；空文件照写。"""
        empty = os.path.isfile(path) and os.path.getsize(path) == 0
        self._record = open(path, "wb" if empty else "xb", buffering=0)   # 不带缓冲：写了几个字节，文件里就是几个
        self._record_path, self._recorded = path, 0       # 写完整了的行一共多少字节（写到一半失败时截回这里）
        try:
            self._write(dict(type="header", format=FORMAT, version=VERSION, settings=settings, model=self.model,
                             base_url=clean_url(self.base_url), concurrency=self.concurrency, temperature=self.temperature,
                             max_tokens=self.max_tokens, max_completion_tokens=self.max_completion_tokens, seed=self.seed,
                             gpu=GPU.key, recorded=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             system_prompt=SYSTEM_PROMPT))
        except OSError:                                   # 连文件头都写不下（磁盘满了）：不留半截文件（讲师报过：
            self._cut_record()                            # 重跑同一个名字时被当成"已经有了、可能是花钱录的"）
            if not empty:
                os.remove(path)
            raise

    def _write(self, obj: dict) -> None:
        self._append(self._line(obj))

    def _line(self, obj: dict) -> bytes:
        """录制文件的一行。每段文字抹密钥（不是写好的一整行：写成 JSON 的换行 \n 会把拆成两行的密钥接上一个 n，
        认不出；整段都是密钥的碎片时抹成 ***，这一行也还是 JSON）。"""
        obj = {k: self._redact(v) if isinstance(v, str) else v for k, v in obj.items()}
        text = json.dumps(obj, ensure_ascii=False)
        # 服务器的 JSON 里可以有落单的代理项（"\ud800"）：UTF-8 写不出来，写成 JSON 的 \ud800 转义，读回来一字不差
        return (_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n").encode("utf-8")

    def _append(self, line: bytes) -> None:
        """把完整的一行写到录制文件末尾。写到一半失败（磁盘满了）或者被打断（Ctrl-C）时截回上一个整行：不留半行；
        整行都写进去以后才被打断的留着（不会再写一遍）。在 self._rec 下面调用（或者还没有别的线程的时候）。"""
        end = self._recorded + len(line)
        try:
            view = memoryview(line)
            while view:
                view = view[self._record.write(view):]
            self._recorded = end
        except BaseException:
            try:
                if os.fstat(self._record.fileno()).st_size == end:
                    self._recorded = end
                else:
                    self._record.truncate(self._recorded)
                    self._record.seek(self._recorded)
            except (OSError, ValueError):            # 截不了：_cut_record 按路径再截一次
                pass
            raise

    def end_recording(self) -> None:
        """这次运行的调用都做完了（脚本最后的 finish 调它；Ctrl-C、出错时不调）：录制文件末尾写结束行，回放由它知道文件录完了。
        录制已经停了（写不进去）就不写：那个文件本来就没录完。结束行写不进去时和录到一半写不进去一样（_stop_recording）。"""
        path = getattr(self, "_record_path", None)
        if path is None or self.record_stopped is not None or self._cut:
            return
        line = (json.dumps(dict(type="end", calls=len(self.calls))) + "\n").encode("utf-8")
        try:
            if self._record is None:                     # 脚本的 finally 已经 close 了：接着文件末尾写
                with open(path, "ab") as f:
                    f.write(line)
            else:
                with self._rec:
                    self._append(line)
                self.close()
        except OSError as e:
            if self._record is None:                     # _cut_record 要关的文件已经关了：开一个空的给它关
                self._record = open(os.devnull, "wb")
            self._tell(self._stop_recording(len(self.calls), e, end=True))
            return
        self._record_path = None                         # 只写一次

    def _cut_record(self) -> None:
        """录制文件写到一半失败了：关掉它，截回最后一整行（讲师报过：文件停在半行上——有时是半个汉字——回放一行都
        不肯放，说"最后一行没写完""不是 UTF-8"，等于让人再花钱录一遍）。截短不受文件大小上限的限制。"""
        try:
            self._record.close()
        except OSError:                                   # 缓冲里剩下的写不进去：反正要截掉
            pass
        self._record = None
        try:
            os.truncate(self._record_path, self._recorded)
        except OSError:
            pass

    def _log(self, call: Call) -> None:
        super()._log(call)
        self._keep(call)                             # 做它的线程多半已经录下了：不再写

    def _batch(self) -> None:
        with self._rec:                              # 上一批半路出了程序错（不是 Ctrl-C）时留着的，不属于这一批
            self._held.clear()
        with self._lock:                             # 接连失败从这一批的第一次调用接着数（上一批半路出了程序错时
            self._settled = len(self.calls)          # 没记下的那几次不算）
            self._outcomes.clear()

    def _keep(self, call: Call) -> None:
        """一次调用做完了（在做它的线程里；_log 再调一次也不会写两遍）：录进文件。文件里的调用按提议的顺序：它前面的
        都录下了就马上写（连同留着、在等它的），不然写好这一行先留着，等前面的回来。"""
        said = None
        try:
            with self._rec:
                wanted = (self._record is not None and not self._cut and call.n >= self._next_record
                          and call.n not in self._held)
            line = self._line(call_line(call)) if wanted else None   # 抹密钥：不占着锁
            with self._rec:
                if line is not None and self._record is not None and not self._cut and call.n >= self._next_record:
                    self._held[call.n] = line
                    said = self._write_held()
        finally:
            with self._rec:
                self._reading.discard(call.n)
                self._rec.notify_all()
        self._tell(said)

    def _write_held(self) -> str | None:
        """（在 self._rec 下面）留着的调用里，接得上文件末尾的按顺序写下；写不进去时停下录制，返回要说的那句话。"""
        while self._next_record in self._held and self._record is not None:
            before = self._recorded
            try:
                self._append(self._held.pop(self._next_record))
            except OSError as e:                     # 讲师报过：磁盘满了（ulimit -f）时整批提议算成"LLM 调用出错"、退出时
                return self._stop_recording(self._next_record, e)   # 两段 traceback。录制只是旁观：停下它，运行照常跑完
            finally:
                if self._recorded != before:         # 这一行整行写下了（写完才被 Ctrl-C 打断的也算）
                    self._next_record += 1
        return None

    def _interrupted(self) -> None:
        """Ctrl-C 落在一批调用中间（主线程）：正在读回复正文的调用最多再等 READ_GRACE 秒读完，然后把已经回来的都录下，
        关上录制文件——以后回来的不再写，也不写结束行：文件看得出是被打断的。前面还有调用在路上时，回来了的写在
        它后面（调用本来按提议的顺序；这样的文件只有被 Ctrl-C 截住的才有，回放放到还在路上的那一次为止）。
        再按一次 Ctrl-C 只是不再等，回来了的照样录下。"""
        with self._rec:
            try:
                deadline = time.monotonic() + READ_GRACE
                while self._record is not None and self._reading and (left := deadline - time.monotonic()) > 0:
                    self._rec.wait(left)
            finally:
                self._cut_here()

    def _write_all_held(self) -> None:
        """（在 self._rec 下面，Ctrl-C 以后）留着的调用按顺序都写下（写在还在路上的那次后面）。写的时候又按了 Ctrl-C
        也写完：_append 留下的总是整行——那一行整行写下了就接着写下一行，截回去了就再写一遍（只再写一次）。写不进去了
        （磁盘满了）就不再写。"""
        for n in sorted(self._held):
            for _ in range(2):
                if self._record is None:
                    return
                before = self._recorded
                try:
                    self._append(self._held[n])
                    break
                except OSError:                      # 写不进去了（磁盘满了）：_append 截回了整行，不再写
                    return
                except KeyboardInterrupt:            # 再按一次 Ctrl-C（第一次的由调用的地方抛出去）
                    if self._recorded != before:     # 整行写下以后才被打断：不再写一遍
                        break
                    try:
                        if os.fstat(self._record.fileno()).st_size != self._recorded:
                            return                   # 半行没截掉（_append 截不了）：不接着它写
                    except (OSError, ValueError):
                        return

    def _tell(self, said: str | None) -> None:
        if said and self.notify is not None:
            self.notify(said)

    def _stop_recording(self, n: int, e: OSError, end: bool = False) -> str:
        """录制文件写不进去了：截回最后一整行、以后不再录，返回要说的那句话（录下的那部分回放得了，只能到那里；
        调用的人用 _tell 说：别在 self._rec 下面说）。end：写不进去的是最后的结束行（调用都录下了，回放会说它没录完）。"""
        path = self._record_path
        self._cut_record()
        self.record_stopped = (f"录制文件 {path} 写不进去了（{os_words(e, writing=True)}）：" +
                               ("调用都录下了，只是最后的结束行没写上，回放时会说它没录完。" if end else
                                f"从第 {n + 1} 次 LLM 调用起不再录，这次运行照常跑完；录下的文件不完整，回放只能回放到那里。"))
        return self.record_stopped

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

    # ---- HTTP ----
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
            if self._key and self._scheme == "http" and not _peer_is_loopback(conn.sock):   # 名字是本机，连上的却不是
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
                                        _unreachable_advice(e.detail, self.names, self.proxy_said(), self._scheme)) from None
            what = {TOO_LONG: "的回复太长", TRUNCATED: "的回复没传完整", BAD_HEADERS: "回的响应头不合规矩"}.get(e.kind, "出错了")
            raise ServerUnreachable(f"LLM 服务器 {where} 对 GET /models {what}（{e.detail}）",
                                    f"{self.names.address}要指向 OpenAI 兼容的接口（地址通常以 /v1 结尾）") from None
        if status in REDIRECT_CODES:
            location = headers.get("Location")           # 先抹掉密钥再截短（截短以后密钥只剩半截，就抹不掉了）
            raise ServerUnreachable(*_redirect_sentence(where, status, None if location is None else
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
                        asked = _retry_after(headers.get("Retry-After"))
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
                return (*_content(raw, headers.get("Content-Type", "")), sent)
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


GAVE_UP_SAID = "没用上 LLM："                  # finish 最后那句的开头（tests/printed.gave_up_at_the_end 认它）


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


def _params_said(params: dict) -> str:
    return "、".join(f"{k}={v:,}" for k, v in params.items())


def switch_sentence(model: str, rejected: str, said: str = "", params: dict | None = None) -> str:
    """换成推理模型的参数时在标准错误上说的那一句。said：服务器说的原因（"服务器说：“…”"，_server_said 的）。
    params：换成的参数（默认 REASONING_PARAMS；--llm-max-tokens 给了时是它给的上限）。"""
    new = _params_said(REASONING_PARAMS if params is None else params)
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


def _proxy_url(proxy: str, env: str):
    """环境变量里的代理地址 -> urlsplit 的结果；读不懂（端口不对、方括号没配对、不是 http://）就抛 ValueError，
    一句话说是哪个环境变量（讲师报过：https_proxy=http://127.0.0.1:99999 得到的是一串 traceback）。"""
    text = proxy if "://" in proxy else "http://" + proxy
    try:
        p = urllib.parse.urlsplit(text)
        ok = p.scheme == "http" and bool(p.hostname) and p.port != 0
    except ValueError:
        ok = False
    if not ok:
        shown_proxy = re.sub(r"(://)?[^/@]*@", lambda m: (m.group(1) or "") + "***@", proxy, count=1)  # 不印代理的密码
        scheme = text.split("://", 1)[0].lower()
        if scheme != "http" and re.fullmatch(r"[a-z][a-z0-9+.-]{0,15}", scheme):   # 读得懂，只是这种代理走不了
            raise ValueError(f"环境变量 {env} 里的代理 {shown(shown_proxy, 100)} 是 {scheme}:// 的：本讲的 HTTP 客户端"
                             "（--llm、make openevolve 开跑前的检查）只会经 http:// 的代理连；换成 http:// 的代理地址，"
                             "或者这次运行不设它")                  # 讲师报过：说成"读不懂"
        raise ValueError(f"环境变量 {env} 里的代理地址 {shown(shown_proxy, 100)} 读不懂：要像 http://主机:端口 这样，"
                         "端口是 1 到 65535 的整数；改对它，或者这次运行不设它")
    return p


def is_loopback(host: str) -> bool:
    """本机的地址：localhost、::1（和 ::ffff:127.x 的写法）、127.0.0.0/8 的任何写法（127.1、127.0.0.2、0x7f.1……）。
    只认字面的写法：localhost. 、foo.localhost 这样的名字这台机器会去问 DNS，答案由别人定（讲师报过：假的 DNS 把
    它们指到别的机器，密钥就明文发过去了）。真连上以后还要看对方的地址（_peer_is_loopback）。"""
    host = host.lower()
    if host == "localhost":
        return True
    try:
        return _loopback_ip(host)
    except ValueError:
        pass
    try:
        return socket.inet_aton(host)[0] == 127
    except OSError:
        return False


def _peer_is_loopback(sock) -> bool:
    """连上的对方是不是本机（看真的地址，不看名字）。"""
    try:
        return _loopback_ip(sock.getpeername()[0])
    except (OSError, ValueError, IndexError):
        return False


def _loopback_ip(text: str) -> bool:
    """一个 IP 地址（字符串）是不是本机：127.0.0.0/8、::1、::ffff:127.x。不是 IP 地址抛 ValueError。"""
    import ipaddress
    ip = ipaddress.ip_address(text.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def compressed(headers) -> str | None:
    """响应头说正文压缩过（Content-Encoding 不是 identity）时是那个值，不然 None。请求里说了 Accept-Encoding: identity，
    这个客户端不解压（gzip 炸弹：70 KB 解压成 64 MB）。"""
    value = (headers.get("Content-Encoding") or "").strip()
    return value if value.lower() not in ("", "identity") else None


def _content(raw: bytes, content_type: str = ""):
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
    """回复里的 choices[0].message（一个字典：服务器写了的那几项）-> 模型说的话。--llm 和 make openevolve（run_openevolve
    的 _careful_http）都用它：同一个回复两边说法一样（讲师报过：content 是 null、只有 tool_calls 的回复，--llm 说"回的是
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


NO_HOST = "找不到这个主机名，域名解析失败"            # net_words 的两种说法，_unreachable_advice 按它们给建议
NOT_HTTPS = "TLS 握手失败：那个端口说的不是 https"
SILENT_TLS = "TLS 握手时对方一声不响地关了连接"
RESET = "连接被对方重置"
_NET_WORDS = {errno.ECONNREFUSED: "连接被拒绝：那个地址和端口上没有程序在听", errno.ECONNRESET: RESET,
              errno.ECONNABORTED: "连接被中止", errno.EPIPE: "连接断了", errno.ETIMEDOUT: "连接超时",
              errno.EHOSTUNREACH: "到不了那台主机", errno.ENETUNREACH: "网络不通", errno.EADDRNOTAVAIL: "这个地址用不了"}


CERT_WRONG = "证书不对："


def net_words(e: OSError) -> str:
    """连接出错的原因：常见的几种用中文说（不带系统的英文原话）；别的照系统的原话（控制字符转义、截短）。"""
    if isinstance(e, socket.gaierror):
        return NO_HOST
    if isinstance(e, ssl.SSLError):                     # 常见的是 https:// 指向了只说 http 的端口
        if getattr(e, "reason", None) == "WRONG_VERSION_NUMBER":
            return NOT_HTTPS
        if (isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError))     # 哪一种看 Python 和 OpenSSL 的版本（系统的
                or getattr(e, "reason", None) == "UNEXPECTED_EOF_WHILE_READING"):   # python3 建的 .venv 报后一种）
            return SILENT_TLS                           # 讲师报过：收到 TLS 的开头就关连接的 http 服务器，被说成"先启动它"
        return f"TLS 握手失败（{shown(getattr(e, 'reason', None) or str(e), 80)}）"
    return _NET_WORDS.get(e.errno) or shown(e.strerror or str(e) or type(e).__name__, 120)


SILENT_CLOSE = "它没回答就关了连接"


def _unreachable_advice(detail: str, names: Names = COMMAND_LINE, proxy: str | None = None, scheme: str = "") -> str:
    """连不上时该怎么办，按原因说（net_words 的说法）：主机名错了、https 对着 http 的端口、证书不对、经代理连的，
    都不是"先启动它"（讲师报过：代理拒绝了、公司网络换了证书，都被说成"先启动它（例如 ollama serve）"）。
    proxy：这次经的代理（"环境变量 https_proxy（或 HTTPS_PROXY）的代理 http://主机:端口"），没经代理是 None。"""
    if detail.startswith(CERT_WRONG):
        return ("服务器在，是它的证书通不过检查：确认地址就是这台服务器（主机名和证书上的一样）；公司网络里的代理或防火墙"
                "常把证书换成自己的，那样要让 Python 信任它的根证书（环境变量 SSL_CERT_FILE 指向那个证书文件）")
    if proxy is not None and detail.startswith("代理不肯接通") and " 407" in detail:   # 讲师报过：CONNECT 回 407 时
        return (f"这次是经{proxy} 连的，它要用户名和密码：写在那个环境变量里（http://用户名:密码@主机:端口）；"   # 没说要密码
                "用不着代理的话，这次运行不设那个环境变量")
    if proxy is not None:
        return (f"这次是经{proxy} 连的：检查代理在不在、让不让连这个地址；用不着代理的话，这次运行不设那个环境变量"
                f"（或者把主机加进 no_proxy）")
    if detail == NO_HOST:
        return f"检查 {names.address}里的主机名（拼写、有没有联网）"
    if detail == NOT_HTTPS:
        return f"把 {names.address}里的 https:// 换成 http:// 试试（本机的 ollama、mock_llm_server.py 都只说 http）"
    if detail == SILENT_TLS:
        return (f"那个端口上有程序，可它不说 TLS：多半是只说 http 的服务器，把 {names.address}里的 https:// 换成 http:// "
                "试试；不然检查它是不是 LLM 服务器的端口")
    # 明文 http 对着只说 TLS 的端口（uvicorn --ssl-*、openssl s_server）：对方读到的不是 TLS 的开头，就关掉或重置连接
    # （讲师报过：这时说"先启动它"，或者根本没提 https）
    https_hint = (f"那个端口可能只说 https：把 {names.address}里的 http:// 换成 https:// 试试；" if scheme == "http" else "")
    if detail == RESET:                               # 讲师报过：接受了连接再重置的服务器被说成"先启动它"——它开着
        return (f"那个端口上有程序，可它接了连接就断开：{https_hint}检查 {names.address}是不是 LLM 服务器的端口"
                "（地址通常以 /v1 结尾），服务器的日志里看它为什么断开")
    if detail == SILENT_CLOSE:
        return (f"那个端口上有程序，可它一句话没回就关了连接：{https_hint}检查 {names.address}是不是 LLM 服务器的端口"
                "（地址通常以 /v1 结尾）")
    return f"先启动它（例如 ollama serve），或者检查 {names.address}"


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


def _redirect_sentence(where: str, status: int, location: str | None, names: Names = COMMAND_LINE) -> tuple[str, str]:
    """GET /models 被转向时的一句话：(说了什么, 怎么办)。地址是服务器给的：shown() 过，不跟过去。"""
    if not location:
        return (f"LLM 服务器 {where} 对 GET /models 回了 HTTP {status}（转向）却没说转到哪里",
                f"检查 {names.address}")
    target = urllib.parse.urljoin(where + "/models", location.strip())
    u = urllib.parse.urlsplit(target)
    said = f"LLM 服务器 {where} 把 GET /models 转到了 {shown(target, 200)}（HTTP {status}），这里不跟过去（密钥只发给 {names.address}）"
    if u.scheme not in ("http", "https"):
        return said, f"那不是 http:// 或 https:// 的地址；检查 {names.address}"
    # 转到的是 …/models 就建议它前面那段（讲师报过：带查询串的 Location 建议的地址还留着 /models）
    base = urllib.parse.urlunsplit(u._replace(path=u.path[:-len("/models")])) if u.path.endswith("/models") else target
    try:
        suggested = clean_url(base)
    except ValueError:                             # 端口写得离谱之类：读不成地址
        suggested = ""
    # clean_url 去掉了路径里的“;…”：有它的地址不是能照抄的那个（不建议一个服务器没说过的地址）
    if len(suggested) > 200 or not _SAFE_URL.fullmatch(suggested) or ";" in urllib.parse.urlsplit(base).path:
        # 讲师报过：Location 里的 ;touch${IFS}… 原样进了"就用 --llm …"；20 KB 的地址原样印成一行
        return said, f"那个地址太长，或者有地址里不该有的字符，不照抄它；检查 {names.address}"   # 照抄就在 shell 里跑它
    return said, f"信得过那个地址的话，{names.use_url(suggested)}"


# 能原样印进一条命令的地址：协议、主机（字母数字、点、横线，或方括号里的 IPv6）、端口、路径里的普通字符
_SAFE_URL = re.compile(r"https?://(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:/[A-Za-z0-9._~%/-]*)?")


def _retry_after(value: str | None) -> float | None:
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


# ---------------------------------------------------------------- 回放

MAX_RECORD_LINE = 2 * MAX_REPLY_BYTES + 4_000_000   # 录制文件的一行（一次调用：提示、回复连 JSON 转义）最多这么多字节
MAX_RECORD_BYTES = 4_000_000_000                    # 整个录制文件最多这么多字节


class ReplayHeaderError(ValueError):
    """回放文件的第一行不是 --record 写的文件头。"""


class ReplayLLM(_Backend):
    """从 --record 录下的文件里按顺序回答，不联网。同样的参数回放，标准输出和录制时逐字节相同。
    录制时的并发数（它决定提议怎样分批）、模型名从文件头里读。文件一行一行地读，用到哪一行读到哪一行：开跑前只读
    文件头（普通文件再看一眼最后一行：录到一半被打断的文件开跑前就说），内存里只有正在读的那一行（讲师的复查报过：
    以前开跑前先把整个文件读进内存，320 MB 的录制文件要 21 秒、700 MB 内存）。后面哪一行不是 --record 写的，回放
    读到那一行时停下（ReplayMismatch，一句话说是哪个文件的第几行）；这次用不到的行不读。"""
    parallel = False                                     # 提议按顺序一个一个地读（不开线程；录制时怎样分批照旧）
    notify = None                                        # 说"录制时换过参数"的那句（from_arguments 给；None 不说）

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        # --record 写文件时抹掉了密钥；手改过的文件里要是有环境里的密钥，回放照样不印它（讲师报过）
        self._key = os.environ.get("OPENAI_API_KEY")
        self._lineno = self._bytes = self._read = 0       # 读到第几行、一共读了多少字节、读了几次调用
        self._unused = (-1, 0)                            # unused() 数过的：(从第几个字节数起, 几行)
        self._end_at: int | None = None                   # 最后一行只写了一半时：它从第几个字节起（读到那里就当文件完了）
        self.half_line: int | None = None                 # 那一行是第几行（incomplete_said 说）
        self.served: str | None = None                    # 第一次调用时服务器报的模型名（_check_encoding 读；announced 说）
        self._switch_said = False                         # 录制时换过参数的那句说过了
        try:
            self._file = open(path, "rb")
        except OSError as e:
            raise ValueError(f"{path}：读不了回放文件（{os_words(e)}）；检查路径，要的是 --record 录下的那个文件") from None
        try:
            self.header = self._header()
        except BaseException:
            self.close()
            raise
        header = self.header
        # 录完了吗：第 2 版的文件看最后一行——结束行 True，一次调用（或者只有文件头）False，读不懂的 None（回放读到
        # 那一行时说它哪里不对，开跑前不多说一句）；第 1 版的看不出来（None）
        self.complete = (False if self.half_line is not None else
                         self._ends_with_end_line() if _version(header) >= 2 else None)
        self.model = header["model"]
        self.concurrency = header.get("concurrency", 1)
        self.max_tokens = header.get("max_tokens", MAX_TOKENS)   # 被截断的回复，句子里说上限是多少（_check_header 查过）
        # 被截断、修改没写完的回复算不算"接连失败"：照录的时候那一版的代码（1–4 版录的时候不算，也没为它们放弃）
        self.cut_counts = _version(header) >= CUTS_COUNTED
        recorded_gpu = header.get("gpu")
        if isinstance(recorded_gpu, str) and recorded_gpu != GPU.key:   # 系统提示里有 GPU：先说真正的原因
            self.close()
            command = replay_command(path, header.get("settings"), recorded_gpu)   # 参数也要和录制时一样：整条命令
            raise ReplayMismatch(f"回放文件 {path} 是在 --gpu {shown(recorded_gpu, 20)} 下录的，这次是 --gpu {GPU.key}："
                                 f"加上 --gpu {shown(recorded_gpu, 20)} 再回放（提示里有 GPU 的数，换了 GPU 回复就对不上）"
                                 + (f"，照抄下面这条命令：\n{COMMAND_INDENT}{command}" if command else "。"))
        if header.get("system_prompt") != SYSTEM_PROMPT:
            self.close()
            raise ReplayMismatch(f"回放文件 {path} 录制时用的系统提示和现在的不一样（evolve/openai_llm.py 改过）："
                                 "录下的回复是对另一段提示说的，不能回放；用现在的代码重新 --record。")

    def close(self) -> None:
        self._file.close()

    # ---- 一行一行地读（每行、整个文件都有上限：讲师报过，--replay /dev/zero 一直读到被系统杀掉，拿错成几 GB 的
    #      模型文件也一样） ----
    def _line(self) -> bytes:
        """下一行（原样的字节，带着换行）；读完了是 b""（只写了一半的最后一行不算）。太长、文件太大、读不了：抛 ValueError（一句话）。"""
        if self._end_at is not None and self._bytes >= self._end_at:
            return b""
        try:
            raw = self._file.readline(MAX_RECORD_LINE + 1)
        except (OSError, ValueError) as e:                # ValueError：文件已经关了
            why = os_words(e) if isinstance(e, OSError) else "文件已经关了"
            raise ValueError(f"{self.path}：读不了回放文件（{why}）；要的是 --record 录下的那个文件") from None
        if raw:
            self._lineno += 1
            self._bytes += len(raw)
            if len(raw) > MAX_RECORD_LINE or self._bytes > MAX_RECORD_BYTES:
                raise self._bad(f"一行超过 {MAX_RECORD_LINE / 1e6:g} MB" if len(raw) > MAX_RECORD_LINE else
                                f"文件超过 {MAX_RECORD_BYTES / 1e9:g} GB")
        return raw

    def _bad(self, why: str, lineno: int | None = None) -> ValueError:
        return ValueError(f"{self.path}:{lineno or self._lineno}: 这一行不是 --record 写的格式（{why}）；回放只认 --record 录下的 "
                          "JSON Lines 文件")

    def _object(self, raw: bytes) -> dict | None:
        """一行 -> JSON 对象；空行是 None。读不懂抛 ValueError（一句话：第几行、为什么）。"""
        try:
            line = raw.decode("utf-8-sig" if self._lineno == 1 else "utf-8")   # 记事本另存时加的 BOM（讲师报过：
        except UnicodeDecodeError:                                            # 说成"不是 JSON"）
            raise self._not_utf8(raw, self._lineno) from None
        if not line.strip():
            return None
        try:
            obj = loads(line)
        except (ValueError, RecursionError) as e:
            if not raw.endswith(b"\n") and isinstance(e, ValueError):       # 最后一行后面没有换行：录的时候被打断了
                raise ValueError(f"{self.path}:{self._lineno}: 最后一行没写完（录的时候被打断了？）；重新 --record") from None
            raise self._bad("嵌得太深" if isinstance(e, RecursionError) else "不是 JSON") from None
        if not isinstance(obj, dict):
            raise self._bad("不是 --record 写的那种 JSON 对象")
        return obj

    def _not_utf8(self, raw: bytes, lineno: int) -> ValueError:
        """第 lineno 行（raw）不是 UTF-8 时的那句话：读得成 GBK 的（讲师报过：在 Windows 上用记事本打开、改了一个字、
        存成了 ANSI，课上回放放完演示 1 才说"不是 --record 写的格式"）说多半是另存成了 GBK，下一行是转回 UTF-8 的命令。"""
        try:
            raw.decode("gbk")
        except UnicodeDecodeError:
            return self._bad("不是 UTF-8 的文字", lineno)
        return ValueError(f"{self.path}:{lineno}: 这一行不是 UTF-8，看起来是 GBK（用记事本之类的编辑器另存过？）；--record 写的"
                          f"是 UTF-8：用原来的文件，或者照抄下面这条命令转回 UTF-8：\n{COMMAND_INDENT}{gbk_to_utf8_command(self.path)}")

    def _check_encoding(self) -> None:
        """开跑前看一眼文件头后面的 64 KB 是不是 UTF-8：不是就现在说（_not_utf8），不等回放到那一行——那时演示已经印了
        一半。文件头是 ASCII，另存成 GBK 的文件第一行照样读得懂，坏的是第一次调用的提示（中文）。"""
        try:
            chunk = os.pread(self._file.fileno(), 1 << 16, self._bytes)
        except OSError:
            return                                        # 读不了的，回放读到那里时说
        chunk = chunk[:chunk.rfind(b"\n") + 1] or chunk   # 整行（64 KB 里没有换行：看这一段的开头）
        try:
            codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
        except UnicodeDecodeError as e:
            line = chunk[:chunk.find(b"\n", e.start) + 1 or len(chunk)]
            line = line[line.rfind(b"\n", 0, e.start) + 1:]
            raise self._not_utf8(line, self._lineno + chunk.count(b"\n", 0, e.start) + 1) from None
        first = chunk.split(b"\n", 1)[0] if b"\n" in chunk else b""      # 第一次调用：服务器报的模型名（announced 说）
        try:
            obj = loads(first.decode("utf-8")) if first.strip() else None
        except (ValueError, RecursionError):
            obj = None                                    # 读不懂的，回放读到那里时说
        model = obj.get("model") if isinstance(obj, dict) and obj.get("type") == "call" else None
        if _plain(model) and len(model) <= MAX_NAME:
            self.served = redact(model, self._key)

    def _header(self) -> dict:
        """第一行：--record 写的文件头（文件头里的每段文字都可能被印出来：settings、gpu……先抹密钥）。"""
        raw = self._line()
        obj = self._object(raw) if raw else None
        if obj is None:                                   # 第一行是空行：整个文件都是空行，就是空的
            while raw and not raw.strip():
                raw = self._line()
            if not raw:
                raise ValueError(f"{self.path} 是空的：回放要 --record 录下的文件（录的时候被打断了？重新 --record）")
        header = None if obj is None else {k: redact(v, self._key) if isinstance(v, str) else v for k, v in obj.items()}
        self._check_header(self.path, header)            # 第一行就不对（拿错了文件）：不往下读
        self._check_last_line()
        self._check_encoding()
        return header

    def _check_last_line(self) -> None:
        """普通文件：整个文件太大开跑前就说，不等回放到那里；最后一行只写了一半（录的时候进程被杀掉了，正在写那一行）
        记下它在哪里（_end_at、half_line）：回放放到它前面那一行为止，开跑前说没录完（讲师的复查报过：以前整个文件
        一行都不肯放，要再花钱录一遍）。只读文件末尾的一行（最后一个字节是换行时只读它）。"""
        try:
            st = os.fstat(self._file.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size <= self._bytes:
                return
            if st.st_size > MAX_RECORD_BYTES:
                raise ValueError(f"{self.path} 超过 {MAX_RECORD_BYTES / 1e9:g} GB，不是 --record 录下的文件（回放只认 "
                                 f"--record 录下的 JSON Lines 文件，整个文件最多 {MAX_RECORD_BYTES / 1e9:g} GB）")
            if os.pread(self._file.fileno(), 1, st.st_size - 1) == b"\n":   # 常见的情形：最后一行完整（坏不坏，
                return                                                      # 回放读到时再说）
            start = max(self._bytes, st.st_size - MAX_RECORD_LINE - 1)
            tail = os.pread(self._file.fileno(), st.st_size - start, start)
        except OSError:
            return                                        # 读不了的，回放读到那里时说
        if b"\n" not in tail and len(tail) > MAX_RECORD_LINE:
            return                                        # 最后一行太长：回放读到时说
        last = tail.rsplit(b"\n", 1)[-1]
        try:
            if last.strip():
                loads(last.decode("utf-8"))
            return
        except (ValueError, RecursionError):
            pass
        with open(self.path, "rb") as f:                  # 说是第几行：数一遍换行（在 C 里；只在有半行时）
            self.half_line = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) + 1
        self._end_at = st.st_size - len(last)

    def _ends_with_end_line(self) -> bool | None:
        """最后一行（去掉末尾的空行）是 --record 录完时写的结束行：True；是一次调用、或者文件头后面什么也没有：False；
        别的（读不懂、读不了、不是普通文件）：None。只读文件末尾的几 KB。"""
        try:
            st = os.fstat(self._file.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            start = max(self._bytes, st.st_size - 4096)
            tail = os.pread(self._file.fileno(), st.st_size - start, start)
        except OSError:
            return None
        if not tail.strip():                             # 只有文件头：一次调用也没录下
            return False
        last = tail.rstrip().rsplit(b"\n", 1)[-1]
        if b"\n" not in tail.rstrip() and start > self._bytes:   # 末尾 4 KB 里没有换行：最后一行很长，只能是一次调用
            return False if last.endswith(b"}") else None
        try:
            obj = loads(last.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        return True if obj.get("type") == "end" else False if obj.get("type") == "call" else None

    def announced(self) -> str:
        """开跑前在标准错误上说的那句：这是回放、录的是哪个模型（哪个地址；服务器报的模型名和 --model 不一样时也说，
        比如桩服务器的 "test-stub (scripted replies, not a language model)"）、什么时候录的（文件头里的 recorded；早先录的
        文件没记）。标准输出和录制时逐字节相同，说"问它"的那几行在回放时也一样：讲师报过，课上学生看到的只有
        "LLM：qwen2.5-coder:7b……每个提议问它一次"，看不出这是几天前录下的一次运行的回放。"""
        h = self.header
        url = h.get("base_url")
        parts = ([f"服务器报的模型名是 {shown(self.served, 100)}"] if self.served and self.served != self.model else []) + \
                ([shown(url, 100)] if isinstance(url, str) and url else [])
        where = f"（{'，'.join(parts)}）" if parts else ""
        when = h.get("recorded")
        dated = isinstance(when, str) and when
        return (f"（回放 {self.path}：{shown(when, 40) + ' ' if dated else ''}对着 {shown(self.model)}{where}录下的运行"
                f"{'' if dated else '（文件里没记什么时候录的）'}，照录下的回答重放，不联网、不问模型。）")

    def incomplete_said(self) -> str:
        """文件没录完（第 2 版、没有结束行）时开跑前说的那句话（from_arguments 用 notify 说；回放照样开跑）。"""
        if self.half_line is not None:
            return (f"（回放文件 {self.path} 没录完：最后一行（第 {self.half_line} 行）只写了一半（录的时候进程被杀掉了？），"
                    "不算；它前面录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）")
        return (f"（回放文件 {self.path} 没录完：最后没有录完时才写的结束行（录的时候按了 Ctrl-C、进程被杀掉了，或者磁盘满了）；"
                "录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）")

    def _next_call(self) -> tuple[int, Call] | None:
        """文件里的下一次调用：(行号, Call)；读完了是 None。不是 --record 写的行抛 ValueError（一句话）。"""
        while raw := self._line():
            obj = self._object(raw)
            if obj is None or obj.get("type") != "call":
                continue
            try:
                return self._lineno, _recorded_call(obj, self._key)
            except (KeyError, TypeError) as e:
                raise self._bad("缺了该有的字段" if isinstance(e, KeyError) else "不是 --record 写的那种 JSON 对象") from None
        return None

    @staticmethod
    def _check_header(path: str, header) -> None:
        """第一行是 --record 写的文件头吗（格式、模型名、并发数、token 上限）；不是抛 ReplayHeaderError（一句话）。"""
        model, concurrency = (header.get("model"), header.get("concurrency", 1)) if isinstance(header, dict) else (0, 0)
        limits = [header.get(k, MAX_TOKENS) for k in ("max_tokens", "max_completion_tokens")] if isinstance(header, dict) else [0]
        if (not isinstance(header, dict) or header.get("format") != FORMAT or not _plain(model)
                or len(model) > MAX_NAME or type(concurrency) is not int or not 1 <= concurrency <= MAX_CONCURRENCY
                or not all(type(n) is int and 1 <= n <= MAX_LLM_TOKENS for n in limits)):   # 句子里会印出来
            raise ReplayHeaderError(f"{path}:1: 第一行不是 --record 写的文件头；回放只认 --record 录下的 JSON Lines 文件")
        version = header.get("version", 1)
        if type(version) is int and version > VERSION:    # 更新的代码录的（或者手改过）：行的写法这份代码不一定认得
            raise ReplayHeaderError(f"{path}:1: 文件头说这是第 {version} 版的录制文件，这份代码只认到第 {VERSION} 版：用录它的"
                                    "那份代码回放（先 git pull 到同一个版本），或者用这份代码重新 --record")

    def check(self) -> None:
        """回放不联网，没什么要查的。"""

    def unused(self) -> int:
        """文件里还有几次调用没用上（录制时问得比这次多）：数读到的地方后面还有几行（不是空行的；只数换行，不解析；
        录完了的文件不数最后的结束行）。数过一次就记下（04、05 问两次）。"""
        if self._unused[0] == self._bytes:
            return self._unused[1]
        left, content = 0, False
        try:
            with open(self.path, "rb") as f:
                f.seek(self._bytes)
                while (chunk := f.readline(1 << 16)) and (self._end_at is None or f.tell() <= self._end_at):
                    content = content or bool(chunk.strip())
                    if chunk.endswith(b"\n"):
                        left, content = left + content, False
        except OSError:
            return 0
        left = max(0, left + content - (self.complete is True))
        self._unused = (self._bytes, left)
        return left

    def _fetch(self, n: int, text: str) -> Call:
        with self._lock:
            got = None
            try:
                while self._read <= n and (got := self._next_call()) is not None:   # 按顺序：第 n 次调用是第 n 个
                    self._read += 1
            except ValueError as e:                   # 后面的一行坏了：读到它时停下，和开跑前说的是同一句
                raise ReplayMismatch(str(e)) from None
        if got is None:
            where = f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 只录了 {self._read} 次调用"
            if self.complete is False:                # 讲师报过：录的时候按了 Ctrl-C 的文件，说的是"--budget 比录制时大"
                raise ReplayMismatch(f"{where}、没录完（文件最后没有录完时才写的结束行：录的时候按了 Ctrl-C、进程被杀掉了，"
                                     "或者磁盘满了）；录下的只能回放到这里，要放全程就重新 --record。")
            if self.complete:
                raise ReplayMismatch(f"{where}，是录完了的：这次问得比录制时多（代码或参数和录制时不同）；用录制时的代码和参数"
                                     "回放，或者重新 --record。")
            raise ReplayMismatch(f"{where}（这次的 --budget、--seeds 比录制时大，或者代码改了，或者文件没录完整），"
                                 "用录制时的参数回放，或者重新 --record。")
        lineno, call = got
        if call.n > n and self.complete is False:     # 被 Ctrl-C 截住的录制：第 n 次那时还在路上，后面回来了的录在它后面
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 里没有这一次、没录完（录的时候按 Ctrl-C 时它"
                                 f"还没回来；第 {lineno} 行起录的是那时已经回来、排在它后面的调用）；录下的只能回放到这里，"
                                 "要放全程就重新 --record。")
        if call.n != n:                               # 讲师报过：只有序号不对时说"录的是（没有这一行），现在是（没有这一行）"
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 第 {lineno} 行录的是第 {call.n + 1} 次调用，"
                                 "文件里的调用缺了、多了或者顺序乱了（改过这个文件？）；用 --record 重新录。")
        if call.prompt != text:
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：这次的提示和 {self.path} 第 {lineno} 行录下的不一样"
                                 f"（{_first_difference(call.prompt, text)}）：录制之后代码或参数变了，或者这个文件前面录的回复被改过"
                                 "（提示里的程序是由前面的回复改出来的）；用录制时的代码、参数和原来的文件回放，或者重新 --record。")
        if call.params and not self._switch_said:      # 录制时换过参数（推理模型）：和录制时一样，说一次
            self._switch_said = True
            if self.notify is not None:
                self.notify(f"（回放：录制时 {self.model} 被当作推理模型，从第 {n + 1} 次调用起发的是 "
                            f"{_params_said(call.params)}、不发 max_tokens 和 temperature，被拒的请求换了参数重发过"
                            "（算在发出去的请求里）；回放照录下的回答，不联网。）")
        return call


def _version(header: dict) -> int:
    """文件头里的版本号（没写、写得不对的当作 1）。"""
    v = header.get("version", 1)
    return v if type(v) is int else 1


def _plain(text) -> bool:
    """text 是不是一个不带控制字符的非空字符串（--record 写进文件里、回放时要印出来的模型名和失败的种类都是）。"""
    return isinstance(text, str) and text != "" and shown(text, None) == text


_PARAM_NAME = re.compile(r"[a-z_]{1,40}")          # 录制文件里 params 的键：回放时会印出来


def _recorded_call(obj: dict, key: str | None = None) -> Call:
    """录制文件里的一行 -> Call（提示、回复、模型名、失败的种类里的密钥 key 抹掉：回放时它们都可能被印出来）。
    字段的类型不对、失败的种类超过 MAX_NAME 个字符（不是 --record 写的）抛 TypeError。"""
    optional = {"requests": 1, "params": None, "resent": None, "cut_off": None}   # 早先（第 1–3 版）录的文件里没有它们
    c = Call(**{k: obj[k] for k in Call.__dataclass_fields__ if k not in optional},
             **{k: obj.get(k, default) for k, default in optional.items()})
    count = lambda v: v is None or (type(v) is int and 0 <= v < 10**12)  # noqa: E731  讲师报过："-7 个 token"、几十位的数
    if not (type(c.n) is int and isinstance(c.prompt, str) and (c.reply is None or isinstance(c.reply, str))
            and (c.error is None or (_plain(c.error) and len(c.error) <= MAX_NAME))   # 种类是一句短话：印在表里
            and (c.reply is None) != (c.error is None)
            and type(c.latency) in (int, float) and 0 <= c.latency < 1e6                  # 负的、nan、300 位的秒数
            and (c.model is None or len(c.model) <= MAX_NAME)
            and count(c.prompt_tokens) and count(c.completion_tokens)
            and type(c.requests) is int and 0 <= c.requests <= 1000
            and (c.params is None or (type(c.params) is dict and 0 < len(c.params) <= 4 and all(   # 发出去的采样参数
                _PARAM_NAME.fullmatch(k) and type(v) in (int, float) for k, v in c.params.items())))
            and (c.resent is None or c.resent in SWITCHABLE)
            and (c.cut_off is None or (c.reply is not None and cut_reason(c.cut_off) is not None))
            and (c.model is None or isinstance(c.model, str))):
        raise TypeError
    for field in ("prompt", "reply", "model", "error"):
        if getattr(c, field) is not None:
            setattr(c, field, redact(getattr(c, field), key))
    return c


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
    if n > MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(f"最多 {MAX_CONCURRENCY}，收到的是 {text}")
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
    if x < MIN_TIMEOUT:                                  # 0.000001 秒：连本机的服务器也来不及回，错怪到服务器头上
        raise argparse.ArgumentTypeError(f"至少 {MIN_TIMEOUT:g} 秒（连本机的服务器回一次也要几毫秒），收到的是 {text}")
    if x > MAX_TIMEOUT:                                  # 1e10 秒：看门的计时器设不了，请求就没人看着了
        raise argparse.ArgumentTypeError(f"最多 {MAX_TIMEOUT:,.0f} 秒（一天），收到的是 {text}")
    return x


def _tokens_arg(text: str) -> int:
    import argparse
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_LLM_TOKENS:
        raise argparse.ArgumentTypeError(f"要是 1 到 {MAX_LLM_TOKENS:,} 的整数（例如 4096），收到的是 {text}")
    return n


def add_arguments(ap) -> None:
    """给脚本的 ArgumentParser 加上 --llm、--model、--llm-concurrency、--llm-timeout、--llm-max-tokens、--record、--replay。"""
    g = ap.add_argument_group("换成真的语言模型（不加这些参数就用 MockLLM，不联网，输出逐字节不变）")
    g.add_argument("--llm", metavar="BASE_URL",
                   help="OpenAI 兼容接口的地址，例如 http://127.0.0.1:11434/v1（ollama）；密钥从环境变量 OPENAI_API_KEY 读")
    g.add_argument("--model", metavar="NAME", help="模型名，例如 qwen2.5-coder:7b")
    g.add_argument("--llm-concurrency", type=_concurrency_arg, metavar="N", default=None,
                   help=f"同时发几个请求（默认 {CONCURRENCY}；结果按提议的顺序处理）")
    g.add_argument("--llm-timeout", type=_seconds_arg, metavar="SECONDS", default=None,
                   help=f"一个请求从查地址、连接到收完最后一个字节最多几秒，超过就算一次超时（至少 {MIN_TIMEOUT:g}，"
                        f"最多 {MAX_TIMEOUT:g}，默认 {TIMEOUT:g}；429、5xx 时的重试各算一个请求）")
    g.add_argument("--llm-max-tokens", type=_tokens_arg, metavar="N", default=None,
                   help=f"一个回复最多几个 token（请求里的 max_tokens，默认 {MAX_TOKENS:,}；认出是 OpenAI 的推理模型、换成 "
                        f"max_completion_tokens 以后默认 {MAX_COMPLETION_TOKENS:,}，给了就两个都是 N）。想得多的模型把草稿也算在"
                        f"里面：回复常被截断时调高；1 到 {MAX_LLM_TOKENS:,}")
    g.add_argument("--record", metavar="FILE.jsonl", help="把每次调用（提示、回复、用时、token 数）录进这个文件，不含密钥")
    g.add_argument("--replay", metavar="FILE.jsonl", help="不联网，按 --record 录下的文件回答；标准输出和录制时逐字节相同")


def from_arguments(a, settings: str = "", notify=None, give_up_tail: str = "", give_up_after: int = GIVE_UP_AFTER):
    """按 add_arguments 的参数建后端：没有 --llm、--replay 返回 None（用 MockLLM）；有就返回一个查过能连上的
    OpenAILLM（要录制的话已经开始录）或一个 ReplayLLM。参数不对、连不上、文件读不了：抛 SetupError（一句话）。
    settings 是脚本名和决定结果的参数（例如 "04 --seed 0 --budget 50 --seeds 1"）：录进文件头，回放时必须一样。
    notify：决定不再调用、录制写不进去时说那一句话的函数（脚本给 runner.say：按终端宽度折行；evolve 不 import 第 1 讲）；
    调用等了 WAITING_SAID 秒还没回来时"还在等"的那句也用它说。
    give_up_tail：决定不再调用的那句后面接的话（进化的 04、05 说最好的程序不会丢；02 不进化，不说）。
    give_up_after：接连几次失败就不再调用（0：从不；02 一共只问 LLM_TRIES 次，没有"之后的提议"可说）。"""
    given = [f"--{n.replace('_', '-')}" for n in ("model", "llm_concurrency", "llm_timeout", "llm_max_tokens", "record")
             if getattr(a, n, None) is not None]
    if a.replay is not None:
        if a.llm is not None or given:
            raise SetupError(f"--replay 从文件回答、不联网，不能再加 --llm 或 {'、'.join(given) or '--model'}"
                             "（模型、并发数和 token 上限都从录制文件里读）。")
        try:
            replay = ReplayLLM(a.replay)
        except (ReplayMismatch, ValueError) as e:
            raise SetupError(str(e)) from None
        recorded = replay.header.get("settings", "")
        # 只比一个个参数：讲师报过，手改文件头时多敲了一个空格，回放说"是用 …录的，这次是 …"，两串参数看着一样、改不对
        if not isinstance(recorded, str) or recorded.split() != settings.split():
            replay.close()
            command = replay_command(a.replay, recorded, replay.header.get("gpu"))
            raise SetupError(f"回放文件 {a.replay} 是用“{shown(recorded)}”录的，这次是“{settings}”："
                             "回放要用录制时的脚本和参数" + (f"，照抄下面这条命令：\n{COMMAND_INDENT}{command}" if command
                                                             else "。"))
        (notify or _tell_stderr)(replay.announced())
        if replay.complete is False:
            (notify or _tell_stderr)(replay.incomplete_said())
        replay.notify = notify or _tell_stderr
        return replay
    if a.llm is None:
        if given:
            raise SetupError(f"{'、'.join(given)} 要和 --llm BASE_URL 一起用（例如 --llm http://127.0.0.1:11434/v1 "
                             "--model qwen2.5-coder:7b）。")
        return None
    if a.model is None:
        raise SetupError("--llm 要和 --model NAME 一起用（例如 --model qwen2.5-coder:7b）。")
    if a.record is not None and os.path.isfile(a.record) and os.path.getsize(a.record) > 0:
        # 讲师报过：--record 给了一个已有的文件（上一次花钱录的 run.jsonl，甚至 04 脚本本身），开跑的那一刻就被清空了
        raise SetupError(f"录制文件 {shown(a.record, 100)} 已经有了（{os.path.getsize(a.record):,} 字节）：--record 不覆盖"
                         "已有的文件（上一次录下的可能是花钱录的）；换一个文件名，或者先把它改名、删掉。")
    if a.record is not None and os.path.exists(a.record) and not os.path.isfile(a.record):
        # 讲师报过：--record /dev/null、一个目录，说的是"刚刚被别的程序建好了"——它们早就在那里
        what = "是一个目录" if os.path.isdir(a.record) else "不是普通的文件（设备、管道之类）"
        raise SetupError(f"录制文件 {shown(a.record, 100)} {what}：--record 要一个新的文件名（例如 run.jsonl）。")
    try:
        limit = getattr(a, "llm_max_tokens", None)
        backend = OpenAILLM(a.llm, a.model, concurrency=a.llm_concurrency or CONCURRENCY,
                            timeout=a.llm_timeout or TIMEOUT, notify=notify or _tell_stderr, give_up_after=give_up_after,
                            waiting=notify or _tell_stderr, max_tokens=limit or MAX_TOKENS,
                            max_completion_tokens=limit or MAX_COMPLETION_TOKENS)
    except ValueError as e:
        raise SetupError(f"{e}。") from None
    backend.give_up_tail = give_up_tail
    try:
        backend.check()
    except ServerUnreachable as e:
        raise SetupError(f"{e}。") from None
    if a.record is not None:
        try:
            backend.record_to(a.record, settings)
        except FileExistsError:
            raise SetupError(f"录制文件 {shown(a.record, 100)} 刚刚被别的程序建好了：--record 不覆盖已有的文件；"
                             "换一个文件名。") from None
        except OSError as e:
            full = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)   # 讲师报过：磁盘满了也让人"先建好目录"
            raise SetupError(f"写不了录制文件 {a.record}（{os_words(e, writing=True)}）："
                             + ("腾出磁盘空间，或者录到别的地方；一个 LLM 调用都还没发。" if full else
                                "先建好它所在的目录、确认能写，或者换一个路径。")) from None
    return backend


_SAFE_WORD = re.compile(r"[A-Za-z0-9_.,:=+-]{1,100}")   # 录制时的参数里照抄进命令的一个词（手改过的文件头不照抄）


def replay_command(path: str, recorded, gpu=None) -> str | None:
    """回放这个文件要用的那条命令（在仓库根目录照抄就能跑）："python3 lecture14/04_…py --replay 文件 录制时的参数"，
    录制时不是默认的 GPU 再加上 --gpu。录制时的参数（文件头的 settings，"04 --seed 0 --budget 50 --seeds 1"）开头的编号
    找不到脚本、参数里有别的字符（手改过的文件头）时是 None（只说要用录制时的脚本和参数）。讲师报过：那句话只说
    "是用“02 --seed 0 --after 100”录的"，"02" 是哪个脚本、命令怎么写，要自己拼。"""
    import shlex
    import gpus
    words = recorded.split() if isinstance(recorded, str) else []
    if not words or not re.fullmatch(r"\d\d", words[0]) or not all(_SAFE_WORD.fullmatch(w) for w in words[1:]):
        return None
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))          # lecture14
    try:
        scripts = sorted(n for n in os.listdir(here) if n.startswith(words[0] + "_") and n.endswith(".py"))
    except OSError:
        return None
    if len(scripts) != 1:
        return None
    # 录制时的 GPU 不是默认的，或者这次选的（环境变量）不是它：写上 --gpu
    extra = (["--gpu", gpu] if isinstance(gpu, str) and gpu in gpus.GPUS
             and (gpu != gpus.DEFAULT or gpu != GPU.key) else [])
    root = os.path.dirname(here)                      # 命令在仓库根目录运行（和"可以试试"一样）：文件名从那里写
    if not os.path.isabs(path) and os.path.realpath(os.getcwd()) != os.path.realpath(root):
        path = os.path.relpath(os.path.abspath(path), root)
    return " ".join(shlex.quote(w) for w in ["python3", f"{os.path.basename(here)}/{scripts[0]}", "--replay", path,
                                              *words[1:], *extra])


RATE_LIMITED = "LLM 回 HTTP 429"                 # 限流的失败种类（让等太久时后面接"，要等 … 秒以上（不等）"）
RATE_LIMITED_ADVICE = "多半是限流了，或者账户的额度用完了，等一会儿再跑，或者看看账户的额度"


def failure_summary(kinds) -> tuple[str, bool]:
    """接连失败的那几次：("LLM 回 HTTP 500 ×3、LLM 超时 ×1" 这样按次数排的一串, 是不是全是 429)。--llm 的 lost_llm 和
    make openevolve（run_openevolve.streak_said）共用：同样的失败两边说法一样。"""
    from collections import Counter
    kinds = list(kinds)
    # 429 让等 MAX_WAIT 秒以上、没等的（"LLM 回 HTTP 429，要等 60 秒以上（不等）"）也是限流：讲师报过，Retry-After: 120
    # 的服务器被说成"检查 LLM 服务器、地址、模型名和密钥"
    limited = lambda k: k == RATE_LIMITED or k.startswith(RATE_LIMITED + "，")      # noqa: E731
    return ("、".join(f"{k} ×{n}" for k, n in Counter(kinds).most_common()),
            bool(kinds) and all(limited(k) for k in kinds))


def timeout_advice(setting: str, timeout: float | None, example: str = "--llm-timeout {}",
                   maximum: float = MAX_TIMEOUT) -> str:
    """接连失败里有“LLM 超时”时的办法（--llm 的 lost_llm 和 make openevolve 的 streak_said 共用）：超时是请求等满了
    setting（"--llm-timeout"、"config.yaml 的 timeout"）还没收完回复——开跑前的检查已经问到了服务器、认得模型名和密钥，
    所以该调的是等多久（讲师在家对着 CPU 上的模型报过：4 次超时以后那句话只叫人检查服务器、地址、模型名和密钥）。
    timeout：这次是几秒（None：不知道，比如回放）；建议的值是它的 4 倍（最多 maximum），照 example 的写法说。"""
    if timeout is None:
        return f"超时的：模型慢（CPU 上跑的模型、想得多的模型、服务器排着队）就调大 {setting}，服务器不再回答才要检查它"
    more = min(maximum, 4 * timeout)
    how = f"调大它，比如 {example.format(f'{more:g}')}" if more > timeout else "它已经是最大的了，换一个快一些的模型"
    return (f"“{TIMEOUT_KIND}”是请求等满了 {setting}（这次 {timeout:g} 秒）还没收完回复：模型慢（CPU 上跑的模型、"
            f"想得多的模型、服务器排着队）就{how}；服务器不再回答才要检查它")


def lost_llm(calls, replay: bool = False, said: tuple[str, str] | None = None, cut_counts: bool = True,
             max_tokens: int = MAX_TOKENS, command: bool = False, timeout: float | None = None) -> str | None:
    """这次运行没用上 LLM 时的那句话（finish 在最后说，退出码 1），用上了是 None。只看按提议的顺序记下的调用（录制和
    回放记下的一模一样，所以两边的退出码一样；讲师报过：并发时按回复到达的顺序数"接连失败"，回放却按提议的顺序数，
    录制退出码 0、回放 1）。没用上：有提议因为接连失败没再问它（GAVE_UP），或者最后接连 GIVE_UP_AFTER 次调用都失败，
    或者这次的调用全都失败了（只有一两次也算：讲师报过，--budget 1 时两次都失败照样退出码 0），或者是本讲的 MockLLM
    服务器出了程序错。replay：回放时的建议是重新录（回放改变不了录下的那次）。said：(种类, "服务器说：“…”")，服务器
    回 HTTP 错误时说的原因（OpenAILLM.last_said；录制文件里没有它，回放时是 None）：种类在最后接连失败的那几次里时，
    那句话里带上它（helper 的复查报过：原因就在服务器的回答里，这句话却只叫人检查服务器、地址、模型名和密钥）。
    cut_counts：回复到了 token 上限、修改没写完的调用（unfinished）也算失败（第 5 版起的录制和 --llm 的运行；回放 1–4 版
    的文件是 False，和录的时候一样）：接连失败里有它们时，那句话说上限是多少、怎样调高（max_tokens：没换成推理模型的参数时
    发的上限；command：这句后面另起一行跟着照抄就能跑的命令，见 cut_off_advice）——种类的清单里已经数了几次被截断，
    不再说一遍。timeout：这次的 --llm-timeout（回放时 None）：接连失败里有超时时说调大它（timeout_advice）。"""
    calls = list(calls)
    not_sent = sum(c.error == GAVE_UP for c in calls)
    sent = [c for c in calls if c.error != GAVE_UP]
    streak, cut = _last_streak(sent, cut_counts)
    bug = any(c.error == MOCK_BUG for c in sent)
    if not (not_sent or bug or len(streak) >= GIVE_UP_AFTER or (sent and len(streak) == len(sent))):
        return None
    kinds, rate_limited = failure_summary(streak)
    if bug:
        what = "本讲的 MockLLM 服务器出了程序错，不再回答" + (f"，之后 {not_sent:,} 个提议没再问它" if not_sent else "")
    elif not_sent:                                     # 并发时按提议的顺序，放弃之前的最后一次不一定是失败（审读报过）
        what = (f"接连失败{f'（最后几次：{kinds}）' if kinds else ''}，之后 {not_sent:,} 个提议没再问它，"
                "那些提议里没有它的修改")
    elif len(streak) == len(sent):
        what = f"这次的 {len(sent):,} 次调用全都失败了（{kinds}），一个回复也没拿到"
    else:
        what = f"最后接连 {len(streak):,} 次调用都失败了（{kinds}）"
    if said is not None and said[0] in streak:
        what += f"；最后一次“{said[0]}”时{said[1]}"
    advice = cut_off_advice(cut_offs(cut, max_tokens), replay, command) if cut else ""
    if cut and len(cut) == len(streak):             # 全是被截断的：服务器好好的，是上限不够
        check = advice
    elif replay:
        check = "这是录下的那一次：要一次用上模型的运行，等服务器好了重新 --record"
    elif bug:
        check = "本讲的 MockLLM 服务器出了程序错，traceback 在开它的终端里"
    elif rate_limited:
        check = RATE_LIMITED_ADVICE
    elif streak and all(k == TIMEOUT_KIND for k in streak):
        check = timeout_advice("--llm-timeout", timeout)
    else:
        check = "检查 LLM 服务器、地址、模型名和密钥以后再跑"
    if TIMEOUT_KIND in streak and not check.startswith(f"“{TIMEOUT_KIND}”"):
        check += "；" + ("超时的：重新 --record 时调大 --llm-timeout" if replay else timeout_advice("--llm-timeout", timeout))
    if cut and len(cut) < len(streak):
        check += "；" + advice
    return f"{GAVE_UP_SAID}{what}；{check}"


def _last_streak(sent, cut_counts: bool = True) -> tuple[list[str], list]:
    """发出去的调用里最后接连失败的那几次：(它们的种类，按先后, 其中被截断、修改没写完的那几次调用)。"""
    streak, cut = [], []
    for c in reversed(sent):
        if c.error is None and not (cut_counts and unfinished(c)):
            break
        streak.append(c.error or CUT_OFF)
        if c.error is None:
            cut.append(c)
    return streak[::-1], cut[::-1]


def finish(llm, tell=None, rerun=None) -> None:
    """运行的最后（02、04、05 印完一切以后）：录制文件写上结束行（end_recording），再看这次运行做成了没有——
    演示照常跑完了，但这次运行没做成它要做的事时，在标准错误上用 tell
    （脚本传 runner.say：按终端宽度折行；None 时原样印）再说一句、退出码 1（讲师报过：这两种时候退出码都是 0，
    写脚本在家录付费运行的人发现不了，上课时回放才知道）：
      - 录制半路写不进去了（_stop_recording）：--record 要的那个文件回放不了全程；
      - 没用上 LLM（lost_llm：接连失败、不再调用，或者调用全都失败）：结果里没有它的修改——和 make openevolve 接连
        失败时一样是退出码 1。回放这样一次录制时也一样（看的是录下的调用）。
    回放一个没录完的文件（开跑前说过"用完了回放就停在那里"）却放完了全程时，说一句放完了（退出码 0；helper 的压力
    测试报过：Ctrl-C 落在最后一次调用回来之后，文件有全部调用、没有结束行）。
    有回复到了 token 上限、被截断时（cut_off_sentence），先说一共几次、几个因此没用上、上限是多少、怎样调高（修改没写完的
    算进"接连失败"：最后接连 GIVE_UP_AFTER 次、或者全都是这样，就是没用上 LLM，退出码 1；回放 1–4 版的录制照旧不算）。
    上限是多少、怎样调高只说一次：没用上 LLM 的原因里有被截断的时候在退出码 1 的那句里说（运行的最后一句，讲师读的
    就是它），不然在被截断的那句里说；照抄就能跑的命令另起一行、放在那句后面。rerun(参数, 值)：这次运行的命令把那个
    参数换成这个值（脚本传 runner.rerun_command；None 时只说加上哪个参数）。"""
    tell = tell or _tell_stderr
    if isinstance(llm, OpenAILLM):                      # 调用都做完了：录制文件写上结束行（Ctrl-C、出错时不到这里）
        llm.end_recording()
    calls, replay = getattr(llm, "calls", ()), isinstance(llm, ReplayLLM)
    limit, counts, last = getattr(llm, "max_tokens", MAX_TOKENS), getattr(llm, "cut_counts", True), getattr(llm, "last_said", None)
    wait = None if replay else getattr(llm, "timeout", None)
    said = getattr(llm, "record_stopped", None)
    lost = None if said else lost_llm(calls, replay=replay, said=last, cut_counts=counts, max_tokens=limit, timeout=wait)
    streak_cut = _last_streak([c for c in calls if c.error != GAVE_UP], counts)[1] if lost else []
    book = cut_offs(streak_cut or calls, limit)
    command = raise_command(book, replay, rerun) if book["cut_off"] else None
    if streak_cut:                                      # 上限和办法在最后那句里说（带着命令）
        lost = lost_llm(calls, replay=replay, said=last, cut_counts=counts, max_tokens=limit, command=bool(command),
                        timeout=wait)
    cut = cut_off_sentence(calls, limit, replay, advice=not streak_cut, command=bool(command))
    then = f"\n{command}" if command else ""
    if cut:
        tell(cut + ("" if streak_cut else then))
    if said:
        tell(f"（退出码 1：{said}）")
        sys.exit(1)
    if lost:
        tell(f"（退出码 1：{lost}。）" + (then if streak_cut else ""))
        sys.exit(1)
    if isinstance(llm, ReplayLLM) and llm.complete is False:   # 开跑前说过没录完、用完了会停：没停就说一声
        tell(f"（{llm.path} 没录完，不过这次要的 {len(llm.calls)} 次调用都录下了：回放放完了全程。）")


def cut_off_sentence(calls, max_tokens: int = MAX_TOKENS, replay: bool = False, advice: bool = True,
                     command: bool = False) -> str | None:
    """运行的最后（finish）说被截断的回复的那一句；没有被截断的是 None：想得多的模型把上限全用在草稿上时，只看失败的
    种类看不出原因是上限、也不知道怎么调。advice=False：上限和怎样调高留给后面退出码 1 的那句（lost_llm）说。
    command：见 cut_off_advice。"""
    calls = list(calls)
    book = cut_offs(calls, max_tokens)
    if not book["cut_off"]:
        return None
    n, unusable = book["cut_off"], book["cut_unusable"]
    sent = sum(c.error != GAVE_UP for c in calls)
    used = (f"其中 {unusable:,} 个修改没写完、没用上（记作“{CUT_OFF}”）" if unusable else
            "修改都是完整的、照样用了（截掉的是后面的话）")
    used += f"，{n - unusable:,} 个的修改是完整的、照样用了" if unusable and n > unusable else ""
    reasons = "、".join(f"“{shown(r, 20)}”" for r in book["cut_reasons"])
    return (f"（LLM：{sent:,} 次调用里 {n:,} 次的回复到了 token 上限、被截断（finish_reason 是 {reasons}），{used}。"
            + (cut_off_advice(book, replay, command) + "。）" if advice else "）"))


def _tell_stderr(sentence: str) -> None:
    """决定不再调用 LLM 时说的那一句：印到标准错误（标准输出要和回放时逐字节相同）。"""
    print(sentence, file=sys.stderr, flush=True)


def describe(backend) -> str:
    """脚本第二行印的 LLM 设置：录制和回放印出来一样（模型名、并发数、给了 --llm-max-tokens 时的上限；不印地址和文件名）。"""
    return (f"LLM：{backend.model}（OpenAI 兼容接口，同时最多 {backend.concurrency} 个请求{limit_said(backend)}）——"
            "每个提议问它一次，回复只当 SEARCH/REPLACE 解析成 DSL，从不执行。")


def limit_said(backend) -> str:
    """回复的 token 上限不是默认的 MAX_TOKENS 时（--llm-max-tokens）："，回复最多 4,096 个 token"；默认的是 ""
    （没给这个参数的运行印出来和以前一样）。"""
    n = getattr(backend, "max_tokens", MAX_TOKENS)
    return "" if n == MAX_TOKENS else f"，回复最多 {n:,} 个 token"


if __name__ == "__main__":                              # 印出系统提示（README 的"用真的语言模型"说怎么运行）
    try:
        print(SYSTEM_PROMPT, flush=True)
    except BrokenPipeError:                             # ... | head -3：读的那头先关了，不印 traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
