"""
一次调用的记录和成本账。Call 是一次调用（录制文件里的一行，call_line）；outcome 说它的结果是一个修改还是一次失败。
成本账：ledger() 给出调用次数、失败次数（按种类）、token 数、总用时和用时的中位数。
回复到了 token 上限、被截断（choices[0].finish_reason 是 CUT_REASONS 里的一个，"length" 最常见）：想得多的模型常把
上限全用在草稿上。修改写完了的照样用；没写完的（空的、没写完的 <think>、写到一半的块）记作 CUT_OFF，不是"没有
SEARCH/REPLACE 块"。第一次遇到时 notify 说一声；成本账（ledger 的 cut_*）、finish 最后的那句（cut_off_sentence）说
几次、上限是多少（sent_limit）、怎样调高：--llm-max-tokens N（max_tokens 和换了以后的 max_completion_tokens 都是 N；
录进文件头，回放从那里读）。接连的是被截断时，finish 的那句说一次上限和怎样调高（cut_off_advice），下一行是照抄
就能跑的命令（raise_command）；04、05 的观察说为什么不再问（gave_up_why）、每个提议都问到了模型没有（coverage）。
"""

import statistics
from dataclasses import asdict, dataclass

from ..diff import MALFORMED, NO_BLOCK, DiffError, parse_diff
from .errors import CUT_OFF, GAVE_UP, MOCK_BUG, LLMError, ReplyUnusable
from .settings import GIVE_UP_AFTER, KIND, MAX_LLM_TOKENS, MAX_TOKENS


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


def params_said(params: dict) -> str:
    return "、".join(f"{k}={v:,}" for k, v in params.items())


def sent_limit(call: Call, max_tokens: int = MAX_TOKENS) -> str:
    """这次调用的回复上限，照发出去的参数写："max_completion_tokens=25,000" 或 "max_tokens=1,024"（见 _limit）。"""
    return params_said(dict([_limit(call, max_tokens)]))


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
    """这次调用的回复到了 token 上限、修改没写完（outcome 记作 CUT_OFF 的）：和调用失败一样算进"接连失败"（第 5 版起）。"""
    if call.cut_off is None or call.reply is None:
        return False
    r = outcome(call)
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
    上限：空的、没写完的 <think>），或者最后一块没写完。--llm（outcome 记作 CUT_OFF）和 make openevolve（oe_careful_http
    的 careful_http：OpenEvolve 自己不看 finish_reason）用同一个判断。"""
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


def outcome(call: Call):
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


RATE_LIMITED = "LLM 回 HTTP 429"                 # 限流的失败种类（让等太久时后面接"，要等 … 秒以上（不等）"）
RATE_LIMITED_ADVICE = "多半是限流了，或者账户的额度用完了，等一会儿再跑，或者看看账户的额度"


def failure_summary(kinds) -> tuple[str, bool]:
    """接连失败的那几次：("LLM 回 HTTP 500 ×3、LLM 超时 ×1" 这样按次数排的一串, 是不是全是 429)。--llm 的 lost_llm 和
    make openevolve（oe_failures.streak_said）共用：同样的失败两边说法一样。"""
    from collections import Counter
    kinds = list(kinds)
    # 429 让等 MAX_WAIT 秒以上、没等的（"LLM 回 HTTP 429，要等 60 秒以上（不等）"）也是限流：讲师报过，Retry-After: 120
    # 的服务器被说成"检查 LLM 服务器、地址、模型名和密钥"
    limited = lambda k: k == RATE_LIMITED or k.startswith(RATE_LIMITED + "，")      # noqa: E731
    return ("、".join(f"{k} ×{n}" for k, n in Counter(kinds).most_common()),
            bool(kinds) and all(limited(k) for k in kinds))
