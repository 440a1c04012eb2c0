"""
回复到了 token 上限、被截断。想得多的模型（ollama、llama.cpp、vLLM 上的 qwen3、deepseek-r1，OpenAI 的推理模型）常把上限
全用在草稿上：服务器说 choices[0].finish_reason 是 "length"（ollama 照 done_reason、llama.cpp 的 n_predict 用完、vLLM、
OpenAI 都这样说），回复是空的（草稿在 reasoning_content 里）、是没写完的 <think>…，或者修改写到一半。以前这样的提议记作
"没有 SEARCH/REPLACE 块"（或"块不完整"），讲师看见两百个失败的提议，不知道原因是上限、也没有办法调。现在它们是自己的一种
失败（evolve.openai_llm.CUT_OFF），修改写完了的照样用；第一次遇到时标准错误上说一声，04 的成本表、观察和运行最后的那句话
说几次、上限是多少、怎样调高（--llm-max-tokens N，录进文件头，回放从那里读）；录制文件第 4 版的调用行写着 cut_off，
早先的文件照旧回放。修改没写完的回复和调用失败一样算进"接连失败"（第 5 版起）：总是写不完的模型问 GIVE_UP_AFTER 次
就不再问（不然一千个提议每个都按上限收钱），放弃的那句和最后那句说怎样调高上限、退出码 1；1–4 版的录制照旧回放。
假服务器是 tests/stub_llm_server.py 的桩（cut_* 和 thinker 几种回答），只听 127.0.0.1，每个测试最多回答有数的几个请求。
"""

import json
import os
import re

import pytest
from conftest import ROOT, ahead, as_printed, base_env, run_script, run_script_fresh, session_dir
from printed import find_table, gave_up_at_the_end, observations, section
from stub_llm_server import THINKER_EDIT_TOKENS, StubServer, reasoning_model

from evolve import EXPERT, Evaluator, evolve, render
from evolve import openai_llm
from evolve.diff import MALFORMED, NO_BLOCK, DiffError, parse_diff
from evolve.mock_llm import Prompt
from evolve.openai_llm import (CUT_OFF, GAVE_UP, GAVE_UP_SAID, GIVE_UP_AFTER, KIND, Call, OpenAILLM, ReplyUnusable,
                               cut_off_sentence, lost_llm)
from evolve.program import apply_diff
from evolve.source import parse

SCRIPT = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
FAST = dict(timeout=10, retries=0, seed=0)
LIMIT = f"max_tokens={openai_llm.MAX_TOKENS:,}"          # 默认的上限，句子里的写法
RAISE = f"--llm-max-tokens {4 * openai_llm.MAX_TOKENS}"  # 建议的调高（这次的 4 倍）


def prompt_for(note=""):
    return Prompt(render(EXPERT) + note, EXPERT, 1.0, (), ())


def cycle(*modes):
    return lambda n, text: modes[n % len(modes)]


def unusable(reply: str) -> bool:
    """被截断的回复里修改没写完（对照：去掉 <think> 草稿以后没有块、或者最后一块没写完）。"""
    try:
        return not parse_diff(re.sub(r"<think>.*?</think>|<think>.*", "", reply, flags=re.S))
    except DiffError as e:
        return e.kind == MALFORMED


def squeezed(text: str) -> str:
    return "".join(text.split())


# ---------------------------------------------------------------- 哪些 finish_reason 算被截断

@pytest.mark.parametrize("reason, cut", [
    ("length", "length"), ("LENGTH", "LENGTH"),            # OpenAI、ollama、llama.cpp、vLLM
    ("max_tokens", "max_tokens"), ("MAX_TOKENS", "MAX_TOKENS"),   # Anthropic、Gemini 原生的说法，代理原样转来
    ("model_length", "model_length"),                      # Mistral：上下文窗口满了
    ("stop", None), ("tool_calls", None), ("content_filter", None), ("", None), (None, None), (7, None),
])
def test_which_finish_reasons_mean_the_reply_was_cut_off(reason, cut):
    assert openai_llm.cut_reason(reason) == cut


# ---------------------------------------------------------------- 一个后端

@pytest.mark.parametrize("reason", ["length", "model_length"])
def test_a_cut_off_reply_is_its_own_kind_and_a_complete_edit_in_it_is_still_used(reason):
    # 空的（草稿在 reasoning_content 里）、没写完的 <think>、写到一半的块：CUT_OFF；块写完了、截掉的是后面的一句话：照样用，
    # 打得上；没被截断的空回复照旧是"没有 SEARCH/REPLACE 块"。都不是调用失败。标准错误上只在第一次说一声
    said = []
    modes = ("cut_empty", "cut_thinking", "cut_edit", "cut_tail", "empty", "edit")
    with StubServer(cycle(*modes), cut_reason=reason, max_requests=len(modes)) as s:
        backend = OpenAILLM(s.url, "stub", notify=said.append, concurrency=1, **FAST)
        out = backend.propose_many([prompt_for(str(i)) for i in range(len(modes))])
        backend.close()
    assert [r.kind if isinstance(r, Exception) else r[0] for r in out] == [CUT_OFF] * 3 + [KIND, NO_BLOCK, KIND]
    assert all(isinstance(r, ReplyUnusable) and r.op == KIND for r in out[:3])
    assert parse(apply_diff(render(EXPERT), parse_diff(out[3][1]))) != EXPERT      # 被截断、写完了的修改打得上
    assert [c.cut_off for c in backend.calls] == [reason] * 4 + [None, None]
    assert backend.calls[0].reply == "" and backend.calls[0].completion_tokens == openai_llm.MAX_TOKENS
    book = backend.ledger()
    assert book["failed"] == {} and book["answered"] == 6
    assert (book["cut_off"], book["cut_unusable"], book["cut_limits"], book["cut_reasons"]) == (4, 3, [LIMIT], [reason])
    assert said == [f"（LLM：第 1 次调用的回复到了 token 上限（{LIMIT}，finish_reason 是 “{reason}”）、被截断；"
                    f"修改没写完的记作“{CUT_OFF}”，运行的最后说一共几次、怎样调高上限。）"]


def test_a_reasoning_models_cut_off_names_max_completion_tokens_and_the_option_raises_both():
    # OpenAI 的推理模型：换成 max_completion_tokens=25,000 以后草稿还是写不完：上限说的是它（不是 max_tokens）；
    # 给了更大的上限（--llm-max-tokens 就这样建后端）：max_tokens 被拒、换参数以后发的也是它，写完了
    with StubServer(cycle("thinker"), reject=reasoning_model, think_tokens=30_000, max_requests=4) as s:
        backend = OpenAILLM(s.url, "gpt-5-mini", concurrency=1, **FAST)
        out = backend.propose_many([prompt_for()])
        backend.close()
    assert isinstance(out[0], ReplyUnusable) and out[0].kind == CUT_OFF
    assert backend.ledger()["cut_limits"] == ["max_completion_tokens=25,000"]
    said = []
    with StubServer(cycle("thinker"), reject=reasoning_model, think_tokens=30_000, max_requests=4) as s:
        backend = OpenAILLM(s.url, "gpt-5-mini", concurrency=1, max_tokens=40_000, max_completion_tokens=40_000,
                            notify=said.append, **FAST)
        out = backend.propose_many([prompt_for()])
        backend.close()
    bodies = [r[3] for r in s.requests if r[3] is not None]
    assert [b.get("max_tokens") for b in bodies] == [40_000, None]
    assert [b.get("max_completion_tokens") for b in bodies] == [None, 40_000]
    assert out[0][0] == KIND and backend.calls[0].cut_off is None and backend.calls[0].params == {"max_completion_tokens": 40_000}
    assert len(said) == 1 and "改发 max_completion_tokens=40,000" in said[0]


# ---------------------------------------------------------------- 进化循环

@pytest.mark.parametrize("reason", ["length", "stop"])
def test_the_loop_counts_cut_off_proposals_in_the_llm_row(table, train, reason):
    # finish_reason 是 length：修改没写完的记作 CUT_OFF，在 llm 那一行（不是"（LLM 出错）"）；同样的文字、服务器说
    # stop 时照旧是"没有块"和"块不完整"——分法看的是服务器说的 finish_reason。每个提议恰好落进一类
    modes = ("cut_empty", "edit", "cut_edit", "cut_tail", "cut_thinking", "edit")
    ev = Evaluator(train, table)
    with StubServer(cycle(*modes), cut_reason=reason, max_requests=24) as s:
        backend = OpenAILLM(s.url, "stub", concurrency=2, **FAST)
        out = evolve(ev, 24, seed=0, llm=backend)
        backend.close()
    count = lambda *ms: sum(cycle(*modes)(n, "") in ms for n in range(24))     # noqa: E731
    assert out["tried"] == {KIND: 24} and s.posts() == 24
    assert sum(out["failed"].values()) + ev.n_cached + ev.n_static_reject + ev.n_eval_probe + ev.n_eval_full == 24
    book = backend.ledger()
    if reason == "length":
        assert out["failed"].get(CUT_OFF) == count("cut_empty", "cut_thinking", "cut_edit") == 12
        assert NO_BLOCK not in out["failed"] and MALFORMED not in out["failed"]
        assert (book["cut_off"], book["cut_unusable"]) == (count("cut_empty", "cut_thinking", "cut_edit", "cut_tail"), 12)
    else:
        assert CUT_OFF not in out["failed"] and book["cut_off"] == 0
        assert out["failed"][NO_BLOCK] == count("cut_empty", "cut_thinking") and out["failed"][MALFORMED] == count("cut_edit")


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_model_that_is_always_cut_off_is_asked_at_most_give_up_after_times(table, train, concurrency):
    # 修改总是写不完（草稿用完了上限）：和调用失败一样算进"接连失败"，问 GIVE_UP_AFTER 次（加上同时在路上的）就不再问，
    # 其余的提议记作 GAVE_UP；放弃的那句说原因是上限（以前 40 个提议问了 40 次，每次都按上限收钱），怎样调高只在运行
    # 最后那句（lost_llm）里说一次
    said = []
    with StubServer(cycle("cut_empty", "cut_thinking", "cut_edit"), max_requests=40) as s:
        backend = OpenAILLM(s.url, "stub", concurrency=concurrency, notify=said.append, **FAST)
        out = evolve(Evaluator(train, table), 40, seed=0, llm=backend)
        backend.close()
    asked = s.posts()
    assert GIVE_UP_AFTER <= asked <= GIVE_UP_AFTER + concurrency - 1, asked
    assert out["failed"] == {CUT_OFF: asked, GAVE_UP: 40 - asked}
    assert backend.ledger()["not_sent"] == 40 - asked
    gave_up = [x for x in said if GAVE_UP in x]
    assert gave_up == [f"LLM：接连 {GIVE_UP_AFTER} 次调用的回复都到了 token 上限、被截断，修改没写完，之后的提议不再问它，"
                       f"记作“{GAVE_UP}”。"], said
    assert not any("--llm-max-tokens" in x for x in said), said
    lost = lost_llm(backend.calls, max_tokens=backend.max_tokens)
    assert lost is not None and lost.startswith(GAVE_UP_SAID) and f"之后 {40 - asked} 个提议没再问它" in lost
    assert f"{CUT_OFF} ×{asked}" in lost and f"跑的时候加上 {RAISE}（" in lost
    assert "检查 LLM 服务器" not in lost                     # 服务器好好的：是上限不够


def test_cut_offs_between_usable_replies_never_give_up(table, train):
    # 接连 GIVE_UP_AFTER - 1 次修改没写完，然后一个能用的（写完了的修改，被截断了的也算）：从头数起，每个提议都问了。
    # 一次一个：桩按请求到的先后给回答，并发时同一批里谁先到不一定（并发时按提议的顺序数，见下一个测试）
    concurrency = 1
    run = ["cut_empty", "cut_edit", "cut_thinking"][:GIVE_UP_AFTER - 1]
    modes = (*run, "cut_tail", *run, "edit")
    said = []
    with StubServer(cycle(*modes), max_requests=32) as s:
        backend = OpenAILLM(s.url, "stub", concurrency=concurrency, notify=said.append, **FAST)
        out = evolve(Evaluator(train, table), 32, seed=0, llm=backend)
        backend.close()
    assert s.posts() == 32 and GAVE_UP not in out["failed"] and out["failed"][CUT_OFF] == 24
    assert not any(GAVE_UP in x for x in said) and lost_llm(backend.calls) is None
    assert sum(map(openai_llm.unfinished, backend.calls)) == 24


def test_failures_in_a_row_are_counted_in_proposal_order_while_calls_are_in_flight():
    # 五个同时在路上：第 3 个能用、回来得最晚，其余四个修改没写完、先回来。按回来的先后是接连 4 次，按提议的顺序只有
    # 2 次（第 3 个把前面的断开）：不放弃——和 lost_llm、回放数的一样。下一批又是两个没写完的：按提议的顺序接上后面
    # 那 2 次，凑够 4 次才放弃，再下一批没再问
    said = []
    marked = lambda mode: prompt_for(f" #{mode}#")                                        # noqa: E731
    script = lambda n, text: re.search(r"#(\w+)#", text).group(1)                        # noqa: E731
    with StubServer(script, slow_seconds=0.5, max_requests=10) as s:
        backend = OpenAILLM(s.url, "stub", concurrency=5, notify=said.append, **FAST)
        first = backend.propose_many([marked(m) for m in ("cut_empty", "cut_edit", "slow", "cut_thinking", "cut_empty")])
        assert not any(GAVE_UP in x for x in said), said
        second = backend.propose_many([marked("cut_edit"), marked("cut_empty")])
        third = backend.propose_many([marked("edit")])
        backend.close()
    assert [r.kind if isinstance(r, Exception) else r[0] for r in first + second] == [CUT_OFF] * 2 + [KIND] + [CUT_OFF] * 4
    assert isinstance(third[0], Exception) and third[0].kind == GAVE_UP and s.posts() == 7
    assert [x for x in said if GAVE_UP in x][0].startswith(f"LLM：接连 {GIVE_UP_AFTER} 次调用的回复都到了 token 上限、被截断")
    assert lost_llm(backend.calls) is not None and lost_llm(backend.calls[:-1]) is not None


def test_the_closing_sentence_counts_unfinished_cut_offs_only_from_version_5():
    # 最后接连 GIVE_UP_AFTER 次修改没写完（或者调用全都是这样）：没用上 LLM，说怎样调高上限；cut_counts=False（回放
    # 1–4 版的录制）照旧不数；中间夹着别的失败时两样都说
    edit = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    ok = Call(0, "p", edit, None, 1.0, 1, 1, "m")
    cuts = [ok] + [cut_call(i + 1) for i in range(GIVE_UP_AFTER)]
    said = lost_llm(cuts)
    assert said == (f"{GAVE_UP_SAID}最后接连 {GIVE_UP_AFTER} 次调用都失败了（{CUT_OFF} ×{GIVE_UP_AFTER}）；"
                    f"这次的上限是 {LIMIT}（想得多的模型把草稿也算在里面）；要让它写完，跑的时候加上 {RAISE}（这次的 4 倍；"
                    "本机的模型只是更慢，托管的 API 按用掉的 token 收钱）")
    assert lost_llm(cuts, cut_counts=False) is None
    assert lost_llm(cuts[:-1]) is None                                            # 差一次：不算
    assert lost_llm(cuts + [cut_call(9, edit)]) is None                            # 被截断、修改写完了：能用，从头数
    assert f"重新 --record 时加上 {RAISE}" in lost_llm(cuts, replay=True)
    both = lost_llm([cut_call(0), cut_call(1)])                                    # --budget 1：两次都没写完
    assert both.startswith(f"{GAVE_UP_SAID}这次的 2 次调用全都失败了（{CUT_OFF} ×2）") and RAISE in both
    mixed = lost_llm([ok, cut_call(1), Call(2, "p", None, "LLM 超时", 1.0, None, None, None), cut_call(3), cut_call(4)])
    assert mixed.startswith(f"{GAVE_UP_SAID}最后接连") and "检查 LLM 服务器、地址、模型名和密钥以后再跑；" in mixed, mixed
    assert "就调大 --llm-timeout" in mixed and f"；这次的上限是 {LIMIT}" in mixed, mixed        # 超时、上限各说各的办法


# ---------------------------------------------------------------- 最后那句话：几次、上限、怎样调高

def cut_call(n, reply="", params=None, reason="length"):
    return Call(n, "p", reply, None, 1.0, 10, 1024, "m", params=params, cut_off=reason)


def test_the_closing_sentence_says_how_many_the_limit_and_a_raise_of_four_times_it():
    edit = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nand then"
    calls = [cut_call(0), Call(1, "p", edit, None, 1.0, 1, 1, "m"), cut_call(2, edit), cut_call(3, "<think>\n草稿")]
    said = cut_off_sentence(calls)
    assert said == (f"（LLM：4 次调用里 3 次的回复到了 token 上限、被截断（finish_reason 是 “length”），其中 2 个修改没写完、"
                    f"没用上（记作“{CUT_OFF}”），1 个的修改是完整的、照样用了。这次的上限是 {LIMIT}（想得多的模型把草稿也算在"
                    f"里面）；要让它写完，跑的时候加上 {RAISE}（这次的 4 倍；本机的模型只是更慢，托管的 API 按用掉的 token "
                    "收钱）。）")
    assert cut_off_sentence(calls[1:2]) is None                                   # 没有被截断的：不说
    assert f"重新 --record 时加上 {RAISE}" in cut_off_sentence(calls, replay=True)
    assert "录的时候的上限是" in cut_off_sentence(calls, replay=True)
    assert "加上 --llm-max-tokens 8000" in cut_off_sentence(calls, max_tokens=2000)   # --llm-max-tokens 2000 的运行
    reasoning = [cut_call(0, params={"max_completion_tokens": 25_000})]
    assert "上限是 max_completion_tokens=25,000（" in cut_off_sentence(reasoning)
    assert "加上 --llm-max-tokens 100000（" in cut_off_sentence(reasoning)         # 4 倍超了上限：给上限
    top = cut_off_sentence([cut_call(0, params={"max_completion_tokens": openai_llm.MAX_LLM_TOKENS})])
    assert "已经是 --llm-max-tokens 最大的 100,000：换一个想得少一些的模型" in top and "加上" not in top
    window = cut_off_sentence([cut_call(0, reason="model_length")])
    assert "finish_reason 是 “model_length”" in window and "超了模型的上下文窗口：调高上限也没用" in window


# ---------------------------------------------------------------- 04：录下、回放、表里的数

def run_04(*args, env=None):
    return run_script_fresh(SCRIPT, "--budget", "30", "--seeds", "1", "--jobs", "1", *args, timeout=120,
                            env={**base_env(), **(env or {})})


def recorded_calls(f):
    with open(f, encoding="utf-8") as fh:
        lines = [json.loads(x) for x in fh.read().splitlines()]
    return lines[0], [x for x in lines if x["type"] == "call"]


@ahead
def cut_04():
    """04 对着一个有时被截断的桩（两个请求并发）跑、录下；服务器关掉以后回放：(录制的运行, 回放的运行, 录制文件)。"""
    f = os.path.join(session_dir("cut04"), "run.jsonl")
    with StubServer(cycle("cut_empty", "edit", "cut_edit", "cut_tail", "cut_thinking", "edit"), max_requests=200) as s:
        rec = run_04("--llm", s.url, "--model", "stub", "--llm-concurrency", "2", "--record", f)
    return rec, run_04("--replay", f), f


FOLLOW = "照抄下面这条命令。）\n"            # 最后那句的结尾：命令另起一行跟在后面（openai_llm.finish）


def printed_command(stderr: str) -> str:
    """运行最后那句话后面跟着的命令（照印出来的样子，可能按 shell 的续行折成几行）；没有是 ""。"""
    return stderr.rsplit(FOLLOW, 1)[1].rstrip("\n") if FOLLOW in stderr else ""


@ahead
def short_04():
    """04 对着一个每次都要 2,000 个 token 打草稿的桩跑（默认的上限 1,024 不够，修改从来写不完）、录下；再对着同一个桩，
    把最后那句话印的命令照印出来的样子交给 shell、在仓库根目录跑（PATH 上的 python3 没有 numpy）；服务器关掉以后
    回放两个录制文件：dict(short=不够的运行, asked=它发了几个请求, file=它的录制文件, command=印出来的命令,
    raised=照抄的运行, bodies=照抄时服务器收到的正文, raised_file=照抄的那次录下的文件, replay=回放不够的那次,
    raised_replay=回放照抄的那次)。"""
    f = os.path.join(session_dir("short04"), "run.jsonl")
    with StubServer(cycle("thinker"), max_requests=200) as s:
        short = run_04("--llm", s.url, "--model", "stub", "--record", f)
        asked = s.posts()
        command = printed_command(short.stderr)
        raised = as_printed(command)
        bodies = [r[3] for r in s.requests if r[3] is not None][asked:]
    raised_file = f.replace("run.jsonl", "run-2.jsonl")
    return dict(short=short, asked=asked, file=f, command=command, raised=raised, bodies=bodies, raised_file=raised_file,
                replay=run_04("--replay", f), raised_replay=run_04("--replay", raised_file))


PREFETCH = [cut_04, short_04]


def test_04_counts_cut_off_replies_and_the_replay_is_byte_identical():
    rec, rep, f = cut_04()
    assert rec.returncode == 0 and rep.returncode == 0, rec.stderr[-2000:] + rep.stderr[-2000:]
    assert rep.stdout == rec.stdout
    header, calls = recorded_calls(f)
    assert header["version"] == openai_llm.VERSION == 5
    assert (header["max_tokens"], header["max_completion_tokens"]) == (openai_llm.MAX_TOKENS, openai_llm.MAX_COMPLETION_TOKENS)
    assert all(c.get("cut_off") in (None, "length") for c in calls)         # 只有被截断的那几行写着它
    demo2 = calls[:30]                                       # 演示 2 的那次进化（演示 4 的成本账）
    cut = [c for c in demo2 if c.get("cut_off")]
    lost = [c for c in cut if unusable(c["reply"])]
    assert 0 < len(lost) < len(cut), "测试的前提变了：要有写完了的、也有没写完的"
    cost = find_table(section(rec.stdout, "演示 4"), "项目")
    cells = {r[0].strip(): r[-1] for r in cost.rows}
    assert cells[f"其中 {CUT_OFF}"] == f"{len(lost)} 个程序"
    assert cells[f"LLM：回复到了 token 上限、被截断（{LIMIT}）"] == f"{len(cut)} 次（修改没写完的 {len(lost)} 次）"
    kinds = find_table(section(rec.stdout, "演示 2"), "修改的种类", "提出")
    assert [r[0] for r in kinds.rows] == [KIND]                # 都拿到了回复：没有"（LLM 出错）"那一行
    said = squeezed(observations(section(rec.stdout, "演示 4"))[0])
    assert squeezed(f"30 次调用里 {len(cut)} 次的回复到了 token 上限、被截断（{len(lost)} 个的修改没写完、没用上，"
                    f"{len(cut) - len(lost)} 个的修改是完整的、照样用了）：这次的上限是 {LIMIT}") in said
    assert squeezed(f"跑的时候加上 {RAISE}（") in said
    # 标准错误：第一次被截断时一句；最后一句数的是整次运行（演示 2、3 的 60 次调用）
    every = [c for c in calls if c.get("cut_off")]
    gone = sum(unusable(c["reply"]) for c in every)
    for p, when in ((rec, f"这次的上限是 {LIMIT}"), (rep, f"录的时候的上限是 {LIMIT}")):
        assert p.stderr.count("被截断；修改没写完的记作") == 1, p.stderr
        assert (f"（LLM：{len(calls)} 次调用里 {len(every)} 次的回复到了 token 上限、被截断（finish_reason 是 “length”），"
                f"其中 {gone} 个修改没写完、没用上（记作“{CUT_OFF}”），{len(every) - gone} 个的修改是完整的、照样用了。{when}"
                ) in p.stderr, p.stderr[-3000:]
    # 没有放弃（被截断的夹在能用的中间）：办法在被截断的那句里说一次，后面跟着照抄就能跑的命令；回放时说重新录
    assert squeezed(f"要让它写完，加上 {RAISE} 再跑（") in squeezed(rec.stderr) and printed_command(rec.stderr).endswith(RAISE)
    assert f"重新 --record 时加上 {RAISE}" in rep.stderr and not printed_command(rep.stderr)


def test_the_raise_the_run_suggests_works_as_printed():
    # 每次都要 2,000 个 token 打草稿的模型：1,024 个全用在草稿上，30 个提议都没用上；最后那句话后面跟着一条命令：
    # 这次的命令加上 --llm-max-tokens 4096、--record 换成旁边的新文件名。照印出来的样子交给 shell（没有 numpy 的
    # python3）：每个请求发的都是那个上限，回复都写完了，什么也不说；录下的文件头记着它，回放逐字节相同，第二行说上限
    run = short_04()
    short, raised, command = run["short"], run["raised"], run["command"]
    assert short.returncode == 1, short.stderr[-2000:]          # 没写完的接连 GIVE_UP_AFTER 次：不再问（见下一个测试）
    cells = {r[0].strip(): r[-1] for r in find_table(section(short.stdout, "演示 4"), "项目").rows}
    assert cells[f"其中 {CUT_OFF}"] == f"{run['asked']} 个程序"
    assert command.startswith("    python3 lecture14/04_alphaevolve_tiling.py --budget 30 --seeds 1 --jobs 1 --llm "), command
    assert command.endswith(f" --model stub --record {run['raised_file']} {RAISE}"), command
    assert 4 * openai_llm.MAX_TOKENS >= 2000 + THINKER_EDIT_TOKENS
    rep = run["raised_replay"]
    assert raised.returncode == 0 and rep.returncode == 0, raised.stderr[-2000:] + rep.stderr[-2000:]
    assert run["bodies"] and all(b["max_tokens"] == 4096 for b in run["bodies"])
    for text in (raised.stdout, raised.stderr, rep.stderr):
        assert "token 上限" not in text and CUT_OFF not in text
    assert rep.stdout == raised.stdout
    assert "同时最多 2 个请求，回复最多 4,096 个 token）" in raised.stdout.splitlines()[1]
    assert "回复最多" not in short.stdout.splitlines()[1]                  # 没给这个参数：第二行和以前一样
    header, calls = recorded_calls(run["raised_file"])
    assert (header["max_tokens"], header["max_completion_tokens"]) == (4096, 4096) and len(calls) == 60
    assert not any("cut_off" in c for c in calls)
    again = run_04("--replay", run["raised_file"], "--llm-max-tokens", "8192")   # 上限从录制文件里读
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert "不能再加 --llm 或 --llm-max-tokens（模型、并发数和 token 上限都从录制文件里读）" in again.stderr


def test_04_stops_asking_a_model_that_is_always_cut_off_and_says_how_to_raise_the_limit_once():
    # 每个修改都写不完：问了 GIVE_UP_AFTER 次（加上同时在路上的一个）就不再问，其余 56 个提议记作 GAVE_UP（以前 60 个
    # 都问、每个都按上限收钱）。放弃的那句说原因是上限；上限是多少、怎样调高在运行最后那句（退出码 1）里说一次，
    # 后面跟着照抄就能跑的命令（讲师报过：标准错误上说了三遍，只有半截参数；上一个测试照抄它）。回放逐字节相同、
    # 退出码也是 1，说的是重新 --record 时加上哪个参数。标准输出的观察说为什么不再问（讲师报过：只说"接连失败以后不再调用"）
    run = short_04()
    short, asked, rep = run["short"], run["asked"], run["replay"]
    assert GIVE_UP_AFTER <= asked <= GIVE_UP_AFTER + 1, asked
    header, calls = recorded_calls(run["file"])
    assert header["version"] == openai_llm.VERSION and len(calls) == 60
    assert sum(c["error"] == GAVE_UP for c in calls) == 60 - asked
    assert rep.stdout == short.stdout and rep.returncode == short.returncode == 1, rep.stderr[-2000:]
    for p, when, how in ((short, "这次", "再跑"), (rep, "录的时候", "重新 --record 时加上")):
        assert gave_up_at_the_end(p), p.stderr[-2000:]
        flat = squeezed(p.stderr).rsplit(squeezed("（退出码 1："), 1)[-1]
        assert squeezed(f"之后 {60 - asked} 个提议没再问它") in flat
        assert squeezed(f"（最后几次：{CUT_OFF} ×{GIVE_UP_AFTER}），") in flat and squeezed(f"；{when}的上限是 {LIMIT}") in flat
        assert squeezed(how) in flat and squeezed("检查 LLM 服务器") not in flat
        assert p.stderr.count("--llm-max-tokens 4096") == 1 + (p is short), p.stderr     # 办法一次（录制时另有命令里的那个）
        assert p.stderr.count("上限是") == 1 and p.stderr.count("想得多的模型") == 1, p.stderr
    assert squeezed(f"LLM：接连 {GIVE_UP_AFTER} 次调用的回复都到了 token 上限、被截断，修改没写完，之后的提议不再问它，"
                    f"记作“{GAVE_UP}”。") in squeezed(short.stderr)
    assert printed_command(short.stderr) and not printed_command(rep.stderr)          # 回放：办法是重新录，没有命令
    said = squeezed(observations(section(short.stdout, "演示 2"))[1])
    assert squeezed(f"个提议没问 stub（接连 {GIVE_UP_AFTER} 次调用的回复都到了 token 上限、被截断，修改没写完，之后不再调用）") \
        in said, said
    assert squeezed("接连失败以后不再调用，") in squeezed(observations(section(short.stdout, "演示 3"))[0])   # 原因说过一次了


@pytest.mark.parametrize("value", ["0", "abc", "100001", "4096.5"])
def test_a_bad_llm_max_tokens_is_one_sentence(value):
    p = run_script(SCRIPT, "--llm-max-tokens", value, "--llm", "http://127.0.0.1:9/v1", "--model", "m")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"--llm-max-tokens：要是 1 到 100,000 的整数（例如 4096），收到的是 {value}" in p.stderr, p.stderr
    alone = run_script(SCRIPT, "--llm-max-tokens", "4096")
    assert alone.returncode == 2 and "--llm-max-tokens 要和 --llm BASE_URL 一起用" in alone.stderr, alone.stderr


def edited(f, tmp_path, name, header=None, call=None):
    """录制文件 f 的一份拷贝：文件头（header(obj)）、被截断的第一次调用（call(obj)）改过。"""
    out = tmp_path / name
    with open(f, encoding="utf-8") as src:
        lines = [json.loads(x) for x in src.read().splitlines()]
    first = next(i for i, x in enumerate(lines) if x.get("cut_off"))
    if header:
        header(lines[0])
    if call:
        call(lines[first])
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return out, first + 1


@pytest.mark.parametrize("field, value", [("cut_off", "stop"), ("cut_off", "\x1b[2J"), ("cut_off", 5),
                                          ("max_tokens", 0), ("max_tokens", "1024"), ("max_completion_tokens", 10**9)])
def test_a_recording_with_a_cut_off_or_limit_that_record_never_writes_is_one_sentence(tmp_path, field, value):
    _, _, f = cut_04()
    if field == "cut_off":
        bad, lineno = edited(f, tmp_path, "bad.jsonl", call=lambda c: c.update(cut_off=value))
        said = f"{bad}:{lineno}: 这一行不是 --record 写的格式"
    else:
        bad, _ = edited(f, tmp_path, "bad.jsonl", header=lambda h: h.update({field: value}))
        said = f"{bad}:1: 第一行不是 --record 写的文件头"
    rep = run_04("--replay", str(bad))
    assert rep.returncode == 2 and said in rep.stderr and "Traceback" not in rep.stderr, rep.stderr[-2000:]
    assert "\x1b" not in rep.stderr


def as_version_3(f, out):
    """录制文件 f 写成第 3 版的样子存进 out：调用行没有 cut_off，文件头没有 max_completion_tokens。"""
    with open(f, encoding="utf-8") as src:
        lines = [json.loads(x) for x in src.read().splitlines()]
    lines[0].pop("max_completion_tokens")
    lines[0]["version"] = 3
    out.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "cut_off"}, ensure_ascii=False) + "\n"
                           for x in lines), encoding="utf-8")
    return out


def test_a_version_3_recording_still_replays_as_it_did(tmp_path):
    # 第 3 版的文件照样回放：退出码 0；被截断的回复它没记下，照旧记作没有块、块不完整，一句也不提上限；
    # 没被截断过的运行，标准输出和录下时逐字节相同
    _, _, f = cut_04()
    rep = run_04("--replay", str(as_version_3(f, tmp_path / "v3.jsonl")))
    assert rep.returncode == 0, rep.stderr[-2000:]
    assert "token 上限" not in rep.stdout + rep.stderr
    _, calls = recorded_calls(f)
    cut = [c for c in calls[:30] if c.get("cut_off") and unusable(c["reply"])]
    no_block = sum(not re.sub(r"<think>.*", "", c["reply"], flags=re.S).strip() for c in cut)
    cells = {r[0].strip(): r[-1] for r in find_table(section(rep.stdout, "演示 4"), "项目").rows}
    assert 0 < no_block < len(cut)
    assert cells[f"其中 {NO_BLOCK}"] == f"{no_block} 个程序" and cells[f"其中 {MALFORMED}"] == f"{len(cut) - no_block} 个程序"
    plain = tmp_path / "plain.jsonl"
    with StubServer(cycle("edit"), max_requests=200) as s:
        rec = run_04("--llm", s.url, "--model", "stub", "--record", str(plain))
    again = run_04("--replay", str(as_version_3(plain, tmp_path / "plain_v3.jsonl")))
    assert rec.returncode == 0 and again.returncode == 0 and again.stdout == rec.stdout, again.stderr[-2000:]


def as_version(f, out, version):
    """录制文件 f 的文件头改成第 version 版存进 out（第 4、5 版的行写法一样：第 4 版的代码录下的就是这样）。"""
    with open(f, encoding="utf-8") as src:
        lines = src.read().splitlines()
    head = json.loads(lines[0])
    head["version"] = version
    out.write_text("\n".join([json.dumps(head, ensure_ascii=False)] + lines[1:]) + "\n", encoding="utf-8")
    return out


@ahead
def cut_02():
    """02 对着修改总是写不完的桩问 4 次（02 从不放弃：一共只问这几次）、录下：(录制的运行, 录制文件)。"""
    f = os.path.join(session_dir("cut02"), "run.jsonl")
    with StubServer(cycle("cut_empty", "cut_edit"), max_requests=8) as s:
        rec = run_script_fresh(os.path.join(ROOT, "lecture14", "02_llm_proposal.py"), "--llm", s.url, "--model", "stub",
                               "--record", f, env=base_env(), timeout=120)
    return rec, f


PREFETCH.append(cut_02)


def test_a_recording_from_before_version_5_replays_as_it_did(tmp_path):
    # 02 问的 4 次都没写完：第 5 版起算"没用上 LLM"（退出码 1，说怎样调高）；同样的调用录在第 4 版的文件里（第 4 版的代码
    # 录下的就是这些行：02 从不放弃），回放和那时一样——退出码 0，只说被截断的那句。标准输出三次逐字节相同
    rec, f = cut_02()
    script = os.path.join(ROOT, "lecture14", "02_llm_proposal.py")
    assert gave_up_at_the_end(rec), rec.stderr[-2000:]
    assert squeezed(f"这次的 4 次调用全都失败了（{CUT_OFF} ×4）") in squeezed(rec.stderr), rec.stderr[-2000:]
    rep = run_script_fresh(script, "--replay", f, env=base_env(), timeout=120)
    assert rep.returncode == 1 and rep.stdout == rec.stdout and gave_up_at_the_end(rep), rep.stderr[-2000:]
    assert squeezed(f"重新 --record 时加上 {RAISE}（") in squeezed(rep.stderr.rsplit("（退出码 1：", 1)[-1])
    old = run_script_fresh(script, "--replay", str(as_version(f, tmp_path / "v4.jsonl", 4)), env=base_env(), timeout=120)
    assert old.returncode == 0 and old.stdout == rec.stdout, old.stderr[-2000:]
    assert GAVE_UP_SAID not in old.stderr and "退出码" not in old.stderr
    assert "（LLM：4 次调用里 4 次的回复到了 token 上限、被截断" in old.stderr      # 第 4 版时说的那句照旧
    # 04：修改总是写不完的那次录制当作第 4 版回放：录下的 GAVE_UP 照旧是放弃了的提议，退出码照样 1，只是最后那句
    # 不把被截断的算进接连失败（第 4 版的代码不这样录，但回放只看录下的行：标准输出照样逐字节相同）
    run = short_04()
    short = run["short"]
    old4 = run_04("--replay", str(as_version(run["file"], tmp_path / "short_v4.jsonl", 4)))
    assert old4.stdout == short.stdout and old4.returncode == 1 and gave_up_at_the_end(old4), old4.stderr[-2000:]
    assert squeezed("上限是") not in squeezed(old4.stderr.rsplit("（退出码 1：", 1)[-1])    # 第 4 版：原因不是上限


def test_why_the_run_stopped_asking_is_counted_in_proposal_order():
    # 观察里说的原因：放弃之前接连失败的那几次（按提议的顺序，和放弃时数的一样）；同时在路上、放弃以后才回来的能用的
    # 回复不打断它；没放弃过是 None；第 4 版的录制（cut_counts=False）被截断的不算失败
    edit = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    ok = lambda n: Call(n, "p", edit, None, 1.0, 1, 1, "m")                          # noqa: E731
    bad = lambda n, kind="LLM 回 HTTP 500": Call(n, "p", None, kind, 1.0, None, None, None)   # noqa: E731
    why = openai_llm.gave_up_why
    cuts = [ok(0)] + [cut_call(i + 1) for i in range(GIVE_UP_AFTER)] + [ok(5), bad(6, GAVE_UP)]
    assert why(cuts) == f"接连 {GIVE_UP_AFTER} 次调用的回复都到了 token 上限、被截断，修改没写完"
    mixed = [bad(0), cut_call(1), bad(2, "LLM 超时"), bad(3), bad(4, GAVE_UP)]
    assert why(mixed) == f"接连 {GIVE_UP_AFTER} 次调用失败（LLM 回 HTTP 500 ×2、{CUT_OFF} ×1、LLM 超时 ×1）"
    assert why(mixed[:4]) is None and why([ok(0)]) is None
    v4 = [cut_call(0), bad(1), bad(2), bad(3), bad(4), bad(5, GAVE_UP)]
    assert why(v4, cut_counts=False) == f"接连 {GIVE_UP_AFTER} 次调用失败（LLM 回 HTTP 500 ×{GIVE_UP_AFTER}）"


def test_the_rerun_command_changes_one_option_and_never_overwrites_the_recording(tmp_path, monkeypatch):
    import runner
    monkeypatch.setattr(runner, "_stderr_width", lambda: None)
    script = os.path.join(ROOT, "lecture14", "04_alphaevolve_tiling.py")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.jsonl").write_text("x")
    (tmp_path / "run-2.jsonl").write_text("x")
    argv = [script, "--llm", "http://127.0.0.1:9/v1", "--model", "qwen3:8b it", "--record", "run.jsonl", "--llm-max-tokens=2000"]
    assert runner.rerun_command("--llm-max-tokens", "8000", argv) == (
        "    python3 lecture14/04_alphaevolve_tiling.py --llm http://127.0.0.1:9/v1 --model 'qwen3:8b it' "
        f"--record {tmp_path / 'run-3.jsonl'} --llm-max-tokens 8000")          # 仓库外面：绝对路径
    monkeypatch.chdir(os.path.join(ROOT, "lecture14"))          # 在 lecture14 里跑的：在根目录照抄也录在 lecture14 里
    inside = [script, "--record", "no-such-run.jsonl", "--svg=figs", "--llm-max-tokens", "2000"]
    assert runner.rerun_command("--llm-max-tokens", "8000", inside) == (
        "    python3 lecture14/04_alphaevolve_tiling.py --record lecture14/no-such-run-2.jsonl --svg lecture14/figs "
        "--llm-max-tokens 8000")
    assert runner.rerun_command("--llm-max-tokens", "4096", [script, "--budget", "5"]).endswith(
        "04_alphaevolve_tiling.py --budget 5 --llm-max-tokens 4096")
    assert runner.rerun_command("--llm-max-tokens", "4096", [script, "--llm", "https://h/v1?key=sk-1"]) is None
    assert runner.rerun_command("--llm-max-tokens", "8000", inside + ["--llm-timeout=1"], also=[("--llm-timeout", "4")]) == (
        "    python3 lecture14/04_alphaevolve_tiling.py --record lecture14/no-such-run-2.jsonl --svg lecture14/figs "
        "--llm-max-tokens 8000 --llm-timeout 4")                              # 另外要换的也换（没写的加在最后）
    assert runner.rerun_command("--llm-max-tokens", "8000", inside, also=[("--llm-timeout", "4")]).endswith(
        "--llm-max-tokens 8000 --llm-timeout 4")
    monkeypatch.setattr(runner, "_stderr_width", lambda: 60)                       # 终端：按 shell 的续行折开
    folded = runner.rerun_command("--llm-max-tokens", "8000", argv[:5] + inside[1:]).split("\n")
    assert len(folded) > 1 and all(len(line) <= 60 for line in folded)
    assert all(line.endswith(" \\") for line in folded[:-1]) and folded[-1].endswith("--llm-max-tokens 8000")


# ---------------------------------------------------------------- 02、05

def test_02_says_which_replies_were_cut_off_and_stops_them_at_the_cut_off():
    script = os.path.join(ROOT, "lecture14", "02_llm_proposal.py")
    with StubServer(cycle("cut_empty", "cut_edit", "cut_tail", "edit"), max_requests=8) as s:
        p = run_script_fresh(script, "--llm", s.url, "--model", "stub", "--llm-concurrency", "1", env=base_env(),
                             timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    demo = section(p.stdout, "演示 1（续）")
    heads = re.findall(r"第 (\d) 次回复（[\d.]+ 秒(.*?)）：", demo)
    assert heads == [(str(i), f"，到了 token 上限（{LIMIT}）、被截断" if i < 4 else "") for i in range(1, 5)], heads
    rows = find_table(demo, "第几次", "结果").rows
    assert [r[1] == CUT_OFF for r in rows] == [True, True, False, False], rows
    assert "（LLM：4 次调用里 3 次的回复到了 token 上限" in p.stderr and "其中 2 个修改没写完" in p.stderr


def test_05_lists_cut_off_proposals_among_the_unused_ones():
    script = os.path.join(ROOT, "lecture14", "05_ablations.py")
    with StubServer(cycle("cut_empty", "edit"), max_requests=40) as s:
        p = run_script_fresh(script, "--budget", "4", "--seeds", "1", "--llm", s.url, "--model", "stub",
                             "--llm-concurrency", "1", env=base_env(), timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert squeezed(f"{CUT_OFF}（2 个）") in squeezed(p.stdout)                  # 每个变体 4 个提议里 2 个
    assert "（LLM：16 次调用里 8 次的回复到了 token 上限、被截断" in p.stderr, p.stderr[-2000:]
