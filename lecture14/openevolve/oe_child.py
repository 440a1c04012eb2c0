"""
OpenEvolve 的进程（python run_openevolve.py --child SPEC 起的，在它自己的进程组里）：child(spec) 在这里跑 OpenEvolve——
启动它的进程没了就结束整组，uuid 从种子出发，日志每条记录一行、抹掉密钥，地址空间有上限，HTTP 的保护（oe_careful_http）
装在这个进程和它的每个 worker 里，本机的地址换成标准写法、不走代理，OpenEvolve 从这次运行的专家出发（oe_start）。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库；child 里 import OpenEvolve。
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.parse

from oe_careful_http import careful_http, tame_replies
from oe_settings import CONFIG, MOCK_KEY
from oe_start import EVALUATOR, starting_program


def _die_with_parent(parent: int | None = None) -> None:
    """启动这个子进程的进程没了（被杀了）：结束自己的整个进程组（OpenEvolve 的 worker 都在里面）。parent 是父进程起它时
    的 pid（spec 里带来的）：解释器启动、import 的那一阵里父进程就被杀了的话，getppid() 已经是收养它的进程，只看
    getppid() 就永远发现不了（审读报过：07 被 kill -9 的那一刻起的子进程成了孤儿，又跑了几分钟）。"""
    if parent is None:
        parent = os.getppid()
    if os.getppid() != parent:
        os.killpg(0, signal.SIGKILL)

    def watch():
        while True:
            time.sleep(0.2)
            if os.getppid() != parent:
                os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()


def _seeded_ids(seed: int) -> None:
    """OpenEvolve 给每个程序一个 uuid4 当名字，程序库里有些地方按名字排序、放进集合：名字是真随机的，同样的种子
    两次运行一开始就走不同的路。这里让 uuid4 从种子出发（worker 进程 fork 出来时继承；PYTHONHASHSEED 也固定），同样的
    种子多数时候就是同样的运行——但不保证：量过的运行里也有在几十个提议之后分岔的（原因在 OpenEvolve 内部，没有找到）。"""
    import random
    import uuid
    rng = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)


def _log_records_one_line(keys) -> None:
    """OpenEvolve 的日志里有服务器写的文字（出错时的 "Error code: 400 - {服务器的说明}"）。讲师报过：说明里带换行和
    假的 "Iteration 1: Program …" / "Metrics: combined_score=9.9" 行，就能伪造 read_run 和"接连失败就停下"读到的数；
    服务器把收到的密钥回显在说明里，密钥和 ESC 控制序列就原样进了 openevolve.log（停下时那句话让人去看它）。
    这里把每条日志记录（连同它的 traceback）变成一行：控制字符转义（换行写成 \\n）、密钥换成 ***。
    OpenEvolve 自己加的 handler 也管得到：换的是生成记录的工厂和 Formatter.formatException，不是某个 handler。"""
    import logging
    from evolve.openai_llm import redact, shown

    def clean(text: str) -> str:
        for key in keys:
            text = redact(text, key)
        return shown(text, 20_000)

    make = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
        record = make(*args, **kwargs)
        try:
            record.msg, record.args = clean(record.getMessage()), ()
        except Exception:                                  # noqa: BLE001  格式不对的记录照旧交给 logging 报
            pass
        return record

    logging.setLogRecordFactory(factory)
    trace = logging.Formatter.formatException
    logging.Formatter.formatException = lambda self, ei: clean(trace(self, ei))
    stack = logging.Formatter.formatStack
    logging.Formatter.formatStack = lambda self, info: clean(stack(self, info))


MEMORY_LIMIT = 4 << 30        # OpenEvolve 的进程最多用这么多地址空间：它读回复、解压 gzip 都不设上限（讲师报过：
                              # 解压成 1 GB 的回复整个读进了内存）；超了是那次调用的 MemoryError，不是整台机器内存不够


def _limit_memory() -> None:
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


CODE_ROOM = 10_000             # OpenEvolve 的子程序最多比起点长这么多个字符（本讲的循环最多多 64 条规则，一条不到 150 个字符）
_PROTECTED = []                # 这个进程里 _protect 装好了（fork 出来的 worker 继承它，不再装一遍）


def _protect(keys) -> None:
    """OpenEvolve 的进程（和它的每个 worker）里：不跟转向、不解压、回复最多 1 MB（careful_http），回复进 OpenEvolve
    之前抹掉密钥、转义控制字符（tame_replies），日志每条一行、抹掉密钥（_log_records_one_line），地址空间有上限。"""
    if _PROTECTED:
        return
    careful_http()
    _limit_memory()
    _log_records_one_line(keys)
    tame_replies(keys)
    _PROTECTED.append(True)


def _keys(llm) -> list[str]:
    """OpenEvolve 会发出去的密钥（要在回复、日志里抹掉的）：环境变量里的、config 里每个模型的。llm 是 LLMConfig 或它的字典。"""
    get = (lambda o, k: o.get(k)) if isinstance(llm, dict) else getattr
    models = list(get(llm, "models") or []) + list(get(llm, "evaluator_models") or [])
    return [k for k in {os.environ.get("OPENAI_API_KEY"), get(llm, "api_key"), *(get(m, "api_key") for m in models)}
            if k]


def _worker_init(config_dict: dict, evaluation_file: str, parent_env: dict | None = None) -> None:
    """OpenEvolve 的 worker（提议在这里问 LLM）起来时先 _protect，再做 OpenEvolve 自己的那些。讲师报过：config.yaml 写了
    max_tasks_per_child，worker 就是 spawn 出来的新解释器，_protect 只装在了主进程里——worker 跟转向、解压、把回显的
    密钥原样写进文件。macOS 上默认就是 spawn（Python 3.14 起 Linux 默认 forkserver）。fork 出来的 worker 已经装好。"""
    from openevolve import process_parallel
    if parent_env:
        os.environ.update(parent_env)
    _protect(_keys(config_dict.get("llm") or {}))
    original = getattr(process_parallel, "_mini_original_worker_init", process_parallel._worker_init)
    original(config_dict, evaluation_file, parent_env)


def loopback_literal(host: str) -> str | None:
    """本机地址的标准写法（同一个地址）：127.1、0x7f.1、::ffff:127.0.0.1 → 127.0.0.1，0:0:0:0:0:0:0:1 → ::1，
    localhost 不变；不是本机的地址是 None。"""
    import ipaddress
    import socket

    from evolve.openai_llm import is_loopback
    host = host.strip("[]").lower()
    if not host or not is_loopback(host):
        return None
    if host == "localhost":
        return host
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = ipaddress.ip_address(socket.inet_ntoa(socket.inet_aton(host)))   # 127.1 这样的老写法
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return str(ip)


def direct_to_loopback(cfg) -> None:
    """OpenEvolve 要问的本机地址换成标准写法，并放进 no_proxy：它用的 httpx 只认 no_proxy 里字面相同的主机，
    http://127.1:…/v1 这样的写法它照样交给环境里的代理，密钥就明文到了代理那里（讲师报过；开跑前的检查认得
    任何写法的 127.x，直接去连，所以检查过了）。"""
    hosts = []
    for m in [cfg.llm] + list(cfg.llm.models) + list(cfg.llm.evaluator_models):
        base = getattr(m, "api_base", None)
        if not base:
            continue
        u = urllib.parse.urlsplit(base)
        plain = loopback_literal(u.hostname or "")
        if plain is None:
            continue
        hosts.append(plain)
        if plain != (u.hostname or "").lower():
            user = u.netloc.rpartition("@")[0]
            netloc = (user + "@" if user else "") + (f"[{plain}]" if ":" in plain else plain) + (
                f":{u.port}" if u.port else "")
            m.api_base = urllib.parse.urlunsplit(u._replace(netloc=netloc))
    for var in ("no_proxy", "NO_PROXY"):
        have = [h for h in os.environ.get(var, "").split(",") if h.strip()]
        os.environ[var] = ",".join(have + [h for h in dict.fromkeys(hosts) if h not in have])


def child(spec: dict) -> int:
    _die_with_parent(spec.get("parent"))
    _seeded_ids(spec["seed"])
    from openevolve import process_parallel, run_evolution
    from openevolve.config import load_config
    cfg = load_config(CONFIG)
    _protect(_keys(cfg.llm))
    direct_to_loopback(cfg)
    process_parallel._mini_original_worker_init = process_parallel._worker_init
    process_parallel._worker_init = _worker_init                # ProcessPoolExecutor 的 initializer（按名字传给 worker）
    url = spec["url"]
    if url is not None:                                       # 对着 MockLLM 服务器：换成它这次的端口
        cfg.llm.api_base = url
        for m in cfg.llm.models + cfg.llm.evaluator_models:   # 它不要密钥：不管 config.yaml 里有没有 api_key 那行
            m.api_base, m.api_key = url, MOCK_KEY             # （审读报过：删了那行、又没设环境变量，07 就出错退出）
    cfg.random_seed = spec["seed"]
    cfg.database.random_seed = spec["seed"]
    cfg.max_iterations = spec["iterations"]
    t0 = time.monotonic()
    start = starting_program(spec["output"])
    with open(start, encoding="utf-8") as f:          # 讲师的复查报过：贴进来 500 条规则的专家有 4 万多个字符，OpenEvolve 的
        room = len(f.read()) + CODE_ROOM               # max_code_length（10,000）把每个提议都拒了，07 却没说为什么
    cfg.max_code_length = max(cfg.max_code_length or 0, room)
    r = run_evolution(start, EVALUATOR, config=cfg, iterations=spec["iterations"], output_dir=spec["output"],
                      cleanup=False)
    with open(os.path.join(spec["output"], "result.json"), "w", encoding="utf-8") as f:
        json.dump(dict(best_code=r.best_code, best_metrics=r.metrics, iterations=spec["iterations"],
                       seconds_inside=time.monotonic() - t0), f, ensure_ascii=False)
    return 0
