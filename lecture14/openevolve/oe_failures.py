"""
make openevolve 和 07 的一部分：OpenEvolve 的日志里一个提议做完了没有、LLM 调用是哪种失败（和本讲的 --llm 客户端同样的
叫法），接连 GIVE_UP_AFTER 个失败就停下（gives_up），停下时那句话说查什么、怎么改（streak_said：代理、超时、被截断时
调大 max_tokens、服务器不收某个参数时怎样给模型起名字）。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库。
"""

from __future__ import annotations

import re
import urllib.parse

from oe_careful_http import REFUSED
from oe_settings import VERSION, VIA_PROXY, configured_endpoints, configured_timeout, read_config, shown_name


GIVE_UP_AFTER = 4             # 接连这么多个提议都是 LLM 调用失败，就停下 OpenEvolve（和本讲的 --llm 客户端一样，evolve.openai_llm）
# OpenEvolve 的日志一条记录一行（oe_child 的 _log_records_one_line），格式是 "时间 - 级别 - 说明"。只认说明开头的那几句：服务器写的
# 文字只会出现在说明的后面（"Iteration 3 error: … 400 - {服务器的说明}"），伪造不了开头（审读报过：只在行里找
# "Iteration N: Program" 时，一行 400 的说明就凑出"8 个提议：9 个做了完整评估……-8 个没变成子程序"，接连失败也不停）
LOG_HEAD = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [A-Z]+ - "
_DONE = re.compile(LOG_HEAD + rb"(?:\xe2\x8f\xb0 )?Iteration (\d+)[: ]")        # 做完一个提议（"⏰ Iteration N timed out" 也算）
_ERROR = re.compile(LOG_HEAD + rb"Iteration (\d+) error: (.*)")


def failure_kind(error: str, local: bool = True) -> str | None:
    """OpenEvolve 日志里一个提议的 "Iteration N error: ……" 是哪种失败：LLM 调用失败时是种类的名字（和本讲的 --llm
    客户端同样的叫法：LLM 回 HTTP 500、LLM 超时、连不上 LLM 服务器……），别的（回复打不上、没改动）是 None。
    只从 OpenEvolve 的固定说法里认种类，服务器写的文字（可能带密钥、控制字符）从不印出来。local：OpenEvolve 问的
    服务器都在本机（only_local）——只有那时一个 500 才可能是本讲的 MockLLM 服务器出了程序错。"""
    if not error.startswith("LLM generation failed:"):
        return None
    why = error[len("LLM generation failed:"):].strip()
    if (m := re.match(r"Error code: (3\d\d)\b", why)):     # 转向：careful_http 让它不跟过去（和 --llm 一样的叫法：
        from evolve.openai_llm import REDIRECT, REDIRECT_CODES   # 304 之类不是转向，是 "LLM 回 HTTP 304"，见 REDIRECT_CODES）
        if int(m.group(1)) in REDIRECT_CODES:
            return REDIRECT
    if why.startswith(REFUSED):                                 # tame_replies 起的名字：400，不收哪个参数（已经转义、截短）
        return why
    if local and why.startswith("Error code: 500"):          # 本讲的 MockLLM 服务器出了程序错（讲师手动开的那个）
        from evolve.openai_llm import MOCK_BUG, MOCK_BUG_REPLY
        if why.partition(" - ")[2].strip() == MOCK_BUG_REPLY:
            return MOCK_BUG
    if m := re.match(r"Error code: (\d{3})\b", why):
        return f"LLM 回 HTTP {m.group(1)}"
    if why in ("", "Request timed out.", "Request timed out") or "timed out" in why.lower():
        return "LLM 超时"                                       # asyncio 的 TimeoutError 没有说明文字
    if why.startswith("Connection error"):
        return "连不上 LLM 服务器"
    from evolve.openai_llm import (BAD_HEADERS, BAD_JSON, COMPRESSED, CUT_OFF, NO_CONTENT, STREAMED, TOO_LONG, TOOL_CALLS,
                                   TRUNCATED)
    if (why in (TOO_LONG, TRUNCATED, BAD_HEADERS, COMPRESSED, BAD_JSON, NO_CONTENT, STREAMED, TOOL_CALLS, CUT_OFF)   # careful_kind
            or re.fullmatch(r"LLM 回 HTTP 1\d\d", why)):        # 起了名字的（回复来了，却太长、不完整、不合规矩、是 101……）
        return why
    if (why.startswith("LLM endpoint returned a raw string") or "JSON" in why or "Expecting value" in why
            or "codec can't decode" in why):                  # careful_kind 没认出来的（旧的日志）：和 --llm 一样的叫法
        return BAD_JSON
    return "LLM 调用出错（别的原因，见 openevolve.log）"


def only_local(url: str | None) -> bool:
    """OpenEvolve 要问的服务器（url，None 时是 config.yaml 里的每个 api_base）都在本机吗。本讲的 MockLLM 服务器只在
    本机：别的机器上的服务器回的那句"MockLLM 出了程序错误"不算数（审读报过：任何服务器这样回一次，运行就停下，
    还让人去看 MockLLM 的终端；--llm 的客户端也这样，见 openai_llm 的 MOCK_BUG_HEADER）。"""
    from evolve.openai_llm import is_loopback
    try:
        bases = [url] if url is not None else [base for base, _, _ in configured_endpoints()]
        return all(is_loopback(urllib.parse.urlsplit(b.strip()).hostname or "") for b in bases)
    except (ValueError, AttributeError):
        return False


def count_done(lines, seen: set, failed, streak: list, local: bool = True) -> bool:
    """新读到的几行日志里做完的提议：记进 seen（提议号），LLM 调用失败的按种类记进 failed、接到 streak 后面，成功的
    清空 streak。同一次读到的每一行都数（审读报过：数到第 GIVE_UP_AFTER 个失败就不往下读，后面成功的几行没看见，
    跑完了的运行被说成"接连失败，停下了"）。返回有没有新做完的提议。"""
    new = False
    for line in lines:
        m = _DONE.match(line)
        if not m or m.group(1) in seen:
            continue
        seen.add(m.group(1))
        new = True
        e = _ERROR.match(line)
        kind = failure_kind(e.group(2).decode("utf-8", "replace"), local) if e else None
        if kind:
            failed[kind] += 1
            streak.append(kind)
        else:
            streak.clear()
    return new


def gives_up(streak: list, done: int, iterations: int) -> bool:
    """接连 GIVE_UP_AFTER 个提议都是 LLM 调用失败、而且还有没做的提议时停下 OpenEvolve。只看日志里数出来的，不看
    OpenEvolve 这时退出了没有：讲师报过，预算正好 GIVE_UP_AFTER 个、每个都失败时，同一条命令有时停下（退出码 1）、
    有时跑完（退出码 0）——看最后一行日志读到时它退出了没有。现在最后一个提议也失败时，就是跑完了（失败按种类数出来）。"""
    return len(streak) >= GIVE_UP_AFTER and done < iterations


def streak_said(streak: list) -> tuple[str, str]:
    """接连失败的那几个提议：(按种类数的"LLM 回 HTTP 500 ×4"，该查什么)。和 --llm 同一个说法（openai_llm.failure_summary）。
    请求经环境里的代理时也说（讲师报过：代理回 502，句子只让人查 LLM 服务器）。全是回复到了 token 上限、被截断的：
    服务器好好的，说调大 config.yaml 的 max_tokens（raise_max_tokens）；夹着别的失败时两样都说。"""
    from evolve.openai_llm import CUT_OFF, RATE_LIMITED_ADVICE, TIMEOUT_KIND, failure_summary, timeout_advice
    kinds, rate_limited = failure_summary(streak)
    via = f"（请求经{'、'.join(dict.fromkeys(VIA_PROXY))}，也查查它）" if VIA_PROXY else ""
    if streak and all(k == CUT_OFF for k in streak):
        return kinds, raise_max_tokens()
    refused = [k[len(REFUSED):] for k in streak if k.startswith(REFUSED)]
    if refused and len(refused) == len(streak):               # 全是服务器不收某个参数：它在，说是哪个、怎样换
        return kinds, refused_advice(refused[-1])
    # 讲师报过：429 也让人查地址、密钥；又报过：三个冒号、"改小 --iterations"没用；又报过：接连 4 个"LLM 超时"（CPU 上的
    # 模型）也只叫人查地址、模型名和密钥——开跑前的检查已经问到了它，该调的是 config.yaml 的 timeout
    timed_out = timeout_advice("config.yaml 里 llm 下的 timeout", configured_timeout(), "timeout: {}") if TIMEOUT_KIND in streak else ""
    if timed_out and all(k == TIMEOUT_KIND for k in streak):
        return kinds, timed_out + via
    check = (RATE_LIMITED_ADVICE if rate_limited else "检查 LLM 服务器和 config.yaml 的 api_base、name、密钥") + via
    return kinds, check + (f"；{timed_out}" if timed_out else "") + (f"；{raise_max_tokens()}" if CUT_OFF in streak else "")


# OpenEvolve 0.4.0（openevolve/llm/openai.py 的 OPENAI_REASONING_MODEL_PREFIXES）：模型名（不分大小写）以这些开头时
# 发 max_completion_tokens = config.yaml 的 max_tokens、不发 temperature；别的模型名发 max_tokens 和 temperature。
# raise_max_tokens 的那句照这里列（test_openevolve_example 拿装着的 OpenEvolve 源码里那张表对照）
OE_REASONING_PREFIXES = ("o1", "o3", "o4-", "gpt-5", "gpt-oss-120b", "gpt-oss-20b")


def refused_advice(param: str) -> str:
    """服务器说不收 OpenEvolve 发的参数 param（已经转义、截短）时的办法。OpenEvolve 0.4.0 只按模型名的开头
    （OE_REASONING_PREFIXES，不分大小写）选参数，config.yaml 里没有别的设置：以它们开头的名字发 max_completion_tokens、
    不发 temperature，别的名字发 max_tokens 和 temperature。讲师报过：代理把 gpt-5-mini 改叫 openai/gpt-5-mini，
    OpenEvolve 发 max_tokens，OpenAI 回 400（"Unsupported parameter: 'max_tokens' …"），make openevolve 只叫人检查地址、
    模型名和密钥。办法只能是换一个开头对的名字（服务器那边也要认它：开跑之前的检查会说）。"""
    try:
        names = list(dict.fromkeys(model for _, model, _ in configured_endpoints()))
    except (ValueError, AttributeError):
        names = []
    prefixes = "、".join(OE_REASONING_PREFIXES)
    reasoning = [n for n in names if str(n).lower().startswith(OE_REASONING_PREFIXES)]
    others = [n for n in names if n not in reasoning]
    how = (f"OpenEvolve {VERSION} 只按模型名的开头选参数（config.yaml 里没有别的设置能换）：以 {prefixes} 开头的名字发 "
           "max_completion_tokens、不发 temperature，别的名字发 max_tokens 和 temperature")
    if param in ("max_tokens", "temperature") and others:
        name = others[0]
        tail = str(name).rsplit("/", 1)[-1]
        example = f"（比如 {shown_name(tail)}）" if tail != name and tail.lower().startswith(OE_REASONING_PREFIXES) else ""
        return (f"服务器不收 OpenEvolve 发的 {param}（OpenAI 的推理模型要 max_completion_tokens、只收默认的 temperature），"
                f"{how}；config.yaml 的 name {shown_name(name)} 不是这样开头的：让服务器（代理）也以这样开头的名字提供"
                f"这个模型{example}，再把 config.yaml 的 name 改成那个名字")
    if param == "max_completion_tokens" and reasoning:
        return (f"服务器不收 OpenEvolve 发的 max_completion_tokens，{how}；config.yaml 的 name {shown_name(reasoning[0])} "
                "是这样开头的：让服务器也以不这样开头的名字提供这个模型，再把 config.yaml 的 name 改成那个名字"
                "（OpenEvolve 就改发 max_tokens 和 temperature）")
    return f"服务器不收 OpenEvolve 发的参数 {param}：检查 LLM 服务器和 config.yaml 的 api_base、name"


def raise_max_tokens() -> str:
    """回复到了 token 上限、被截断时的办法：config.yaml 的 max_tokens 现在是多少、调到多少（4 倍，最多 --llm-max-tokens
    的上限）。OpenEvolve 对推理模型把它当作 max_completion_tokens 发，推理用的 token 也算在里面。"""
    from evolve.openai_llm import MAX_LLM_TOKENS
    try:
        llm = read_config().llm
        limits = sorted({m.max_tokens or llm.max_tokens for m in llm.models} - {None}) or [llm.max_tokens]
    except (ValueError, AttributeError):
        limits = []
    top = max([n for n in limits if isinstance(n, int)], default=0)
    if not top:
        return "调大 config.yaml 的 max_tokens（推理模型把推理用的 token 也算在里面）"
    more = min(MAX_LLM_TOKENS, 4 * top)
    how = (f"把 config.yaml 的 max_tokens 从 {top:,} 调到 {more}（4 倍；只是上限，托管的 API 按用掉的 token 收钱）"
           if more > top else f"config.yaml 的 max_tokens 已经是 {top:,}：换一个想得少一些的模型")
    return (f"想得多的模型把草稿也算在上限里（OpenEvolve 对以 {'、'.join(OE_REASONING_PREFIXES)} 开头的模型名把 max_tokens 当作 "
            f"max_completion_tokens 发，推理用的 token 也算在里面）：{how}")
