"""
make openevolve 和 07 的一部分：这次运行起的进程——MockLLM 服务器和 OpenEvolve 各在一个新的进程组里（Ctrl-C、出错时
整组结束），run_openevolve 起 OpenEvolve、读它新写的日志（进度、接连失败就停下、MockLLM 出了程序错就停下），一个提议
等得比 config.yaml 允许的还久也停下它（stall_seconds：OpenEvolve 自己在那种时候停不下来），跑完读它的结果。

OpenEvolve 的进程是 python run_openevolve.py --child 起的（它在里面跑 oe_child.child）。run_openevolve.py 开头说这个
目录里每个文件放的是哪一部分。只用标准库。
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time

from oe_env import run_env
from oe_failures import GIVE_UP_AFTER, LOG_HEAD, count_done, gives_up, only_local, streak_said
from oe_results import read_run
from oe_settings import CONFIG, config_refusal

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE14 = os.path.dirname(HERE)
ROOT = os.path.dirname(LECTURE14)
SERVER = os.path.join(LECTURE14, "mock_llm_server.py")
RUN = os.path.join(HERE, "run_openevolve.py")  # OpenEvolve 的进程：python run_openevolve.py --child SPEC（oe_child.child）
SERVER_START_SECONDS = 60.0


def _kill_group(p: subprocess.Popen | None) -> None:
    """结束 p 所在的整个进程组（它是用 start_new_session=True 起的）并收掉它。"""
    if p is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        p.wait(5)
    for f in (p.stdout, p.stderr):
        if f is not None:
            with contextlib.suppress(Exception):
                f.close()


class Processes:
    """这次运行起的子进程（服务器、OpenEvolve）。close() 把它们的进程组都结束掉；Ctrl-C 时 runner 调它。"""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []

    def add(self, p: subprocess.Popen) -> subprocess.Popen:
        self.procs.append(p)
        return p

    def close(self) -> None:
        while self.procs:
            _kill_group(self.procs.pop())


def start_server(procs: Processes, seed: int = 0) -> tuple[subprocess.Popen, str]:
    """在一个新的进程组里开 MockLLM 服务器（空闲端口），等它印出地址。返回 (进程, base_url)。"""
    p = procs.add(subprocess.Popen([sys.executable, SERVER, "--port", "0", "--seed", str(seed), "--parent", str(os.getpid())],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=ROOT))
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + SERVER_START_SECONDS
    line, m = b"", None
    while m is None and time.monotonic() < deadline and len(line) < 65536:    # 读到地址为止（它印几行）
        if sel.select(0.1):
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
            m = re.search(rb"--llm (http://127\.0\.0\.1:\d+/v1)", line)
    sel.close()
    if m is None:
        err = p.stderr.read().decode(errors="replace").strip() if p.poll() is not None else ""
        raise RuntimeError(f"MockLLM 服务器没有起来{('：' + err.splitlines()[-1]) if err else ''}。")
    return p, m.group(1).decode()


def server_gone(server: subprocess.Popen):
    """给 run_openevolve 的 watch：MockLLM 服务器进程退出了（它出了程序错会自己退出、印出 traceback），就把它的标准错误
    转印出来，回一句话；还在时回 None。不然 OpenEvolve 对着一个没了的服务器一个个提议地失败，最后只说"连不上"。"""
    def watch() -> str | None:
        if server.poll() is None:
            return None
        from evolve.openai_llm import shown
        err = server.stderr.read(65536).decode("utf-8", "replace").rstrip() if server.stderr else ""
        if err:
            print("\n".join(shown(line, 400) for line in err.splitlines()[-40:]), file=sys.stderr)
        return (f"MockLLM 服务器在 OpenEvolve 跑的时候退出了（退出码 {server.returncode}），停下了 OpenEvolve："
                + ("它说的在上面。" if err else "它什么也没说，多半是被别的程序结束了。"))
    return watch


QUIET_NOTE_SECONDS = 30.0     # 这么久没有一个提议做完，就在进度里说一声（在等 LLM），之后每隔这么久再说一次
# 多久读一次 OpenEvolve 新写的日志（进度最多每秒说一次）。以前每秒读一次：服务器立刻回 400（不收某个参数）、
# OpenEvolve 又不重试它时，一秒里就有三四十个提议失败，"接连 GIVE_UP_AFTER 个就停下"停在第四十个
LOG_READ_SECONDS = 0.05


STALL_SLACK = 30.0            # 一个提议最多等多久：config.yaml 允许的 LLM 调用和评估的时间，再加这么多秒（启动、忙的机器）


def stall_seconds(config: str = CONFIG) -> float:
    """一个提议最多该花多久：LLM 调用 timeout × (retries + 1) + retry_delay × retries（config.yaml 的 llm 一节；没写的
    用 OpenEvolve 0.4.0 的默认 60、3、5），加上评估两级各 evaluator.timeout（默认 300），再加 STALL_SLACK。
    讲师报过：服务器的回复没完没了（分块一直来），OpenEvolve 的 asyncio.wait_for 到时放弃了，可调用它的线程还在读，
    收尾时等着它——那个提议永远做不完，"接连失败就停下"也就永远等不到。"""
    import yaml                                          # OpenEvolve 要 PyYAML：能跑 OpenEvolve 就有它
    with open(config, encoding="utf-8") as f:
        cfg = yaml.safe_load(f) or {}
    llm, ev = cfg.get("llm") or {}, cfg.get("evaluator") or {}
    num = lambda d, k, default: float(d.get(k) if isinstance(d.get(k), (int, float)) else default)  # noqa: E731
    retries = num(llm, "retries", 3)
    return (num(llm, "timeout", 60) * (retries + 1) + num(llm, "retry_delay", 5) * retries
            + 2 * num(ev, "timeout", 300) + STALL_SLACK)


def run_openevolve(procs: Processes, url: str | None, iterations: int, seed: int, output: str, progress=None,
                   label: str = "OpenEvolve", note=None, stall_limit: float | None = None, watch=None) -> dict:
    """在一个新的进程组里让 OpenEvolve 对着 url（None：用 config.yaml 里的 api_base）跑 iterations 个提议，输出放在 output（要是空的或不存在）。
    progress(已经完成几个提议, 一共几个) 大约每秒调用一次；note(一句话)：QUIET_NOTE_SECONDS 秒没有提议做完时说一声
    （None 不说）。返回 read_run(output) 的结果，加上 seconds（墙上时间）和 llm_failed（LLM 调用失败的提议，按种类计数：
    从 OpenEvolve 的日志读的）。OpenEvolve 出错退出，或者接连 GIVE_UP_AFTER 个提议都是 LLM 调用失败（停下它）：
    抛 RuntimeError（一句话，说在它的日志哪里）。一个提议等了 stall_limit 秒（None：stall_seconds()）还没做完，也停下它、
    抛 RuntimeError：OpenEvolve 自己在那种时候停不下来。watch()：跑的时候反复问（None 不问）；回一句话（比如 MockLLM
    服务器出了程序错、退出了）就停下 OpenEvolve、抛 RuntimeError(那句话)。"""
    from collections import Counter

    from evolve.openai_llm import MOCK_BUG_REPLY
    # 本讲的 MockLLM 服务器出了程序错（讲师手动开的那个）：OpenEvolve 的第一次重试就写下它那句话；那个服务器随后退出，
    # 提议最后记下的常是"连不上"。看到一次就停下（和 --llm 的 MOCK_BUG 一样），不等接连 GIVE_UP_AFTER 个
    mock_bug = re.compile(LOG_HEAD + rb"(?:Error on attempt \d+/\d+|All \d+ attempts failed with error|"
                          rb"LLM generation failed|Iteration \d+ error: LLM generation failed): Error code: 500 - "
                          + re.escape(MOCK_BUG_REPLY.encode()))
    if stall_limit is None:
        stall_limit = stall_seconds()
    local = only_local(url)                              # MockLLM 的"出了程序错"只认本机的服务器说的
    refused = config_refusal()                           # 07 也经过这里：OpenEvolve 不拿密钥去连没检查过的地址
    if refused:
        raise RuntimeError(refused)
    os.makedirs(output, exist_ok=True)
    spec = dict(url=url, iterations=iterations, seed=seed, output=output, parent=os.getpid())
    log_path = os.path.join(output, "openevolve.log")
    scratch = os.path.join(output, "tmp")               # OpenEvolve 评估时写的临时文件：Ctrl-C（SIGKILL）时它删不了，
    os.makedirs(scratch, exist_ok=True)                 # 放在输出目录里，不留在 /tmp（审读报过：20 次 Ctrl-C 留下 5 个）
    env = run_env(output, scratch)
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        p = procs.add(subprocess.Popen([sys.executable, RUN, "--child", json.dumps(spec)],
                                       stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True, cwd=ROOT, env=env))
    seen: set[bytes] = set()                             # 做完了的提议（成功的、出错的都算）
    failed: Counter = Counter()                          # LLM 调用失败的提议，按种类
    streak: list[str] = []                               # 最近接连的 LLM 调用失败
    offset, last, shown, said_at = 0, time.monotonic(), 0, 0.0
    quiet_since = next_note = None                       # 上一个提议做完的时刻；下一次说"在等"的时刻
    while True:
        finished = p.poll() is not None
        stop = watch() if watch and not finished else None
        if stop:
            _kill_group(p)
            raise RuntimeError(stop)
        if finished or time.monotonic() - last >= LOG_READ_SECONDS:   # 新写的日志；结束时再读一次
            with open(log_path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
            cut = chunk.rfind(b"\n") + 1
            offset += cut
            last = time.monotonic()
            lines = chunk[:cut].splitlines()
            bug_seen = local and any(mock_bug.match(line) for line in lines)
            if count_done(lines, seen, failed, streak, local):
                quiet_since = None
            if progress and len(seen) != shown and (finished or time.monotonic() - said_at >= 1.0):   # 最多每秒一行
                progress(min(len(seen), iterations), iterations)
                shown, said_at = len(seen), time.monotonic()
            if bug_seen and not finished:
                _kill_group(p)
                raise RuntimeError(f"{label} 的 LLM 服务器是本讲的 MockLLM，它出了程序错误，不再回答：停下了，"
                                   f"没有跑完 {iterations} 个提议；traceback 在开那个服务器的终端里，"
                                   f"详细的在 {log_path}。")
            if gives_up(streak, len(seen), iterations):
                if not finished:
                    _kill_group(p)
                kinds, check = streak_said(streak[:GIVE_UP_AFTER])   # 一秒里读到第 5 个也说"接连 4 个"（机器忙时）
                raise RuntimeError(f"{label} 接连 {GIVE_UP_AFTER} 个提议都是 LLM 调用失败（{kinds}），停下了，"
                                   f"没有跑完 {iterations} 个提议：{check}；详细的在 {log_path}。")
        if finished:
            break
        now = time.monotonic()
        if quiet_since is None:
            quiet_since, next_note = now, now + QUIET_NOTE_SECONDS
        if now - quiet_since >= stall_limit:
            _kill_group(p)
            raise RuntimeError(f"{label} 的第 {len(seen) + 1} 个提议等了 {now - quiet_since:.0f} 秒还没做完，比 config.yaml "
                               "允许的一次 LLM 调用（timeout × (retries + 1)，加上重试之间的 retry_delay）和评估的时间还长："
                               "多半是 LLM 服务器的回复没完没了，OpenEvolve 自己停不下来，停下了它，"
                               f"没有跑完 {iterations} 个提议；检查 LLM 服务器，详细的在 {log_path}。")
        if note and now >= next_note:
            note(f"  {label}：第 {len(seen) + 1} 个提议等了 {now - quiet_since:.0f} 秒（多半在等 LLM 回答），"
                 "Ctrl-C 随时停下。")
            next_note += QUIET_NOTE_SECONDS
        time.sleep(0.05)
    seconds = time.monotonic() - t0
    _kill_group(p)                                       # 它的 worker 进程要是还在，也结束掉
    if p.returncode != 0:
        raise RuntimeError(f"{label} 出错退出（退出码 {p.returncode}）：看 {log_path} 的最后几行。")
    out = read_run(output)
    out["seconds"] = seconds
    out["llm_failed"] = dict(failed)
    if len(streak) >= GIVE_UP_AFTER or (streak and len(streak) == len(seen)):   # 跑完了，可最后几个（或者全部）提议
        kinds, check = streak_said(streak)                                    # 都是 LLM 调用失败（讲师报过：3 个全失败退出码 0）
        which = f" {len(streak)} 个全都" if len(streak) == len(seen) else f"最后接连 {len(streak)} 个都"
        out["gave_up"] = (f"{label} 跑完了 {iterations} 个提议，可{which}是 LLM 调用失败（{kinds}）："
                          f"{check}；详细的在 {log_path}")
    return out
