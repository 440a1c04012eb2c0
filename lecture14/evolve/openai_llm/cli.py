"""
脚本的命令行（04、05、02 共用）：add_arguments 加上 --llm、--model、--llm-concurrency、--llm-timeout、
--llm-max-tokens、--record、--replay；from_arguments 照它们建后端（查过能连上的 OpenAILLM、或者 ReplayLLM；参数不对、
连不上时抛 SetupError，脚本印一行、退出码 2）。开跑以后只有决定不再调用时，from_arguments 建的后端往标准错误说一句
为什么；脚本最后调 finish：录制写不进去、或者没用上 LLM（lost_llm）时再说一句、退出码 1；有回复被截断时
（cut_off_sentence）说一共几次、怎样调高上限。describe、limit_said 是脚本第二行印的 LLM 设置。
"""

import errno
import os
import sys

from ..problem import os_words
from ..program import COMMAND_INDENT
from .calls import RATE_LIMITED_ADVICE, cut_off_advice, cut_offs, failure_summary, raise_command, unfinished
from .client import OpenAILLM
from .errors import CUT_OFF, GAVE_UP, MOCK_BUG, TIMEOUT_KIND, ReplayMismatch, ServerUnreachable
from .replay import ReplayLLM, replay_command
from .settings import (CONCURRENCY, GIVE_UP_AFTER, MAX_COMPLETION_TOKENS, MAX_CONCURRENCY, MAX_LLM_TOKENS, MAX_TIMEOUT,
                       MAX_TOKENS, MIN_TIMEOUT, TIMEOUT)
from .text import shown

GAVE_UP_SAID = "没用上 LLM："                  # finish 最后那句的开头（tests/printed.gave_up_at_the_end 认它）


class SetupError(ValueError):
    """命令行的 LLM 参数不对、服务器连不上、回放文件读不了：一句话，脚本印到标准错误，退出码 2。"""


def _whole(text: str) -> int:
    """命令行上的一个整数；读不成整数的是 0（下面的检查把它当成不在范围里，照常说要什么）。"""
    try:
        return int(text)
    except ValueError:
        return 0


def _concurrency_arg(text: str) -> int:
    import argparse
    n = _whole(text)
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
    n = _whole(text)
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


def raised_timeout(timeout: float | None, maximum: float = MAX_TIMEOUT) -> float | None:
    """建议的等待时间：这次的 4 倍（最多 maximum）；不知道这次是几秒、或者已经是最大的了：None。"""
    if timeout is None or min(maximum, 4 * timeout) <= timeout:
        return None
    return min(maximum, 4 * timeout)


def timeout_advice(setting: str, timeout: float | None, example: str = "--llm-timeout {}",
                   maximum: float = MAX_TIMEOUT, command: bool = False) -> str:
    """接连失败里有“LLM 超时”时的办法（--llm 的 lost_llm 和 make openevolve 的 streak_said 共用）：超时是请求等满了
    setting（"--llm-timeout"、"config.yaml 的 timeout"）还没收完回复——开跑前的检查已经问到了服务器、认得模型名和密钥，
    所以该调的是等多久（讲师在家对着 CPU 上的模型报过：4 次超时以后那句话只叫人检查服务器、地址、模型名和密钥）。
    timeout：这次是几秒（None：不知道，比如回放）；建议的值是它的 4 倍（raised_timeout），照 example 的写法说。
    command：这句后面另起一行跟着照抄就能跑的命令（finish）：调大的办法放在最后，以"照抄下面这条命令"结尾。"""
    if timeout is None:
        return f"超时的：模型慢（CPU 上跑的模型、想得多的模型、服务器排着队）就调大 {setting}，服务器不再回答才要检查它"
    more = raised_timeout(timeout, maximum)
    how = f"调大它，比如 {example.format(f'{more:g}')}" if more else "它已经是最大的了，换一个快一些的模型"
    slow = "模型慢（CPU 上跑的模型、想得多的模型、服务器排着队）就"
    if command and more:
        return (f"“{TIMEOUT_KIND}”是请求等满了 {setting}（这次 {timeout:g} 秒）还没收完回复：服务器不再回答才要检查它；"
                f"{slow}{how}，照抄下面这条命令")
    return f"“{TIMEOUT_KIND}”是请求等满了 {setting}（这次 {timeout:g} 秒）还没收完回复：{slow}{how}；服务器不再回答才要检查它"


def lost_llm(calls, replay: bool = False, said: tuple[str, str] | None = None, cut_counts: bool = True,
             max_tokens: int = MAX_TOKENS, command: bool = False, timeout: float | None = None,
             timeout_command: bool = False) -> str | None:
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
    不再说一遍。timeout：这次的 --llm-timeout（回放时 None）：接连失败里有超时时说调大它（timeout_advice；
    timeout_command：这句后面跟着调大它的命令）。"""
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
        check = timeout_advice("--llm-timeout", timeout, command=timeout_command)
    else:
        check = "检查 LLM 服务器、地址、模型名和密钥以后再跑"
    more = []                                       # 夹着别的失败时另外说的：超时的、被截断的
    if TIMEOUT_KIND in streak and not check.startswith(f"“{TIMEOUT_KIND}”"):
        more.append("超时的：重新 --record 时调大 --llm-timeout" if replay else
                    timeout_advice("--llm-timeout", timeout, command=timeout_command))
    if cut and len(cut) < len(streak):
        more.insert(0 if timeout_command else len(more), advice)   # 以"照抄下面这条命令"结尾的那句放在最后
    return f"{GAVE_UP_SAID}{what}；" + "；".join([check, *more])


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
    就是它），不然在被截断的那句里说；照抄就能跑的命令另起一行、放在那句后面。接连超时、没用上 LLM 时（没有调高上限的
    命令的话）同样跟着一条命令：--llm-timeout 换成建议的值（raised_timeout）；有调高上限的命令时，那条命令里的
    --llm-timeout 也换成它。rerun(参数, 值, also=[(参数, 值)])：这次运行的命令把那个参数（和 also 里的）换成这个值
    （脚本传 runner.rerun_command；None 时只说加上哪个参数）。"""
    tell = tell or _tell_stderr
    if isinstance(llm, OpenAILLM):                      # 调用都做完了：录制文件写上结束行（Ctrl-C、出错时不到这里）
        llm.end_recording()
    calls, replay = getattr(llm, "calls", ()), isinstance(llm, ReplayLLM)
    limit, counts, last = getattr(llm, "max_tokens", MAX_TOKENS), getattr(llm, "cut_counts", True), getattr(llm, "last_said", None)
    wait = None if replay else getattr(llm, "timeout", None)
    said = getattr(llm, "record_stopped", None)
    lost = None if said else lost_llm(calls, replay=replay, said=last, cut_counts=counts, max_tokens=limit, timeout=wait)
    streak, streak_cut = _last_streak([c for c in calls if c.error != GAVE_UP], counts) if lost else ([], [])
    book = cut_offs(streak_cut or calls, limit)
    longer = raised_timeout(wait) if TIMEOUT_KIND in streak else None   # 接连失败里也有超时的：调高上限的命令
    both = rerun if rerun is None or longer is None else (              # 同时把 --llm-timeout 换成建议的值
        lambda option, value: rerun(option, value, also=[("--llm-timeout", f"{longer:g}")]))
    command = raise_command(book, replay, both) if book["cut_off"] else None
    # 接连超时的：调大 --llm-timeout 的命令（没有调高上限的命令时）
    waited = rerun("--llm-timeout", f"{longer:g}") if lost and not command and rerun and longer else None
    if (streak_cut and command) or waited:              # 最后那句带着办法、以"照抄下面这条命令"结尾
        lost = lost_llm(calls, replay=replay, said=last, cut_counts=counts, max_tokens=limit, command=bool(command),
                        timeout=wait, timeout_command=bool(waited))
    cut = cut_off_sentence(calls, limit, replay, advice=not streak_cut, command=bool(command))
    then = f"\n{command}" if command else ""
    if cut:
        tell(cut + ("" if streak_cut else then))
    if said:
        tell(f"（退出码 1：{said}）")
        sys.exit(1)
    if lost:
        tell(f"（退出码 1：{lost}。）" + (then if streak_cut else "") + (f"\n{waited}" if waited else ""))
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
