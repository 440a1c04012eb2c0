"""
第 14 讲的问题交给真的开源 AlphaEvolve——OpenEvolve（PyPI 上的 openevolve 0.4.0，可选的依赖）——离线跑一次：

    make openevolve                      （在仓库根目录：先装 requirements-openevolve.txt，再运行这个文件）
    python3 lecture14/openevolve/run_openevolve.py [--iterations 300] [--seed 0] [--output DIR]

它做三件事：开一个 MockLLM 服务器（lecture14/mock_llm_server.py，127.0.0.1 上一个空闲端口）；让 OpenEvolve 用本目录的
initial_program.py、evaluator.py、config.yaml 跑 --iterations 个提议（api_base 换成这个服务器的地址）；关掉服务器，
印出最好的程序和它在训练 / 测试形状上相对专家的加速比（用本讲的 evolve 重新算，和 evaluator 给 OpenEvolve 的分数
核对过）。"LLM"是 MockLLM，没有真的语言模型；"硬件"是第 13 讲的解析模型。换成真的模型见 config.yaml 开头。
用时见 README 的"更进一步"一节（几乎全是 OpenEvolve 自己的开销：空闲的机器上每个提议几十毫秒，忙的时候零点几秒，另有启动几秒）；进度印到标准错误。Ctrl-C 一秒内停下：OpenEvolve 和它的 worker 进程、服务器都结束。
OpenEvolve 的全部输出（日志、best/、evolution_trace.jsonl）在 --output 目录里；每个评估过的子程序在日志里都有一行
"Iteration N: Program …"，evolution_trace.jsonl 少记一些（见 read_run）。

07_openevolve.py 也用这里的 start_server、run_openevolve。本文件只用标准库；OpenEvolve 在一个单独的进程组里跑。
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE14 = os.path.dirname(HERE)
ROOT = os.path.dirname(LECTURE14)
SERVER = os.path.join(LECTURE14, "mock_llm_server.py")
INITIAL = os.path.join(HERE, "initial_program.py")
EVALUATOR = os.path.join(HERE, "evaluator.py")
CONFIG = os.path.join(HERE, "config.yaml")
OUTPUT = os.path.join(HERE, "output")
ITERATIONS = 300
MAX_ITERATIONS = 5000         # 和 07 的 --budget 一样：OpenEvolve 每个提议几十毫秒到零点几秒，再大要等很久（学生报过：多敲了几个 0 也照跑）
MAX_SEED = 2 ** 32 - 1        # OpenEvolve 的种子上限（更大的它在日志里报 ValueError，这里只说"出错退出"）
VERSION = "0.4.0"
MISSING = "没装 OpenEvolve（可选的依赖，别的脚本都不需要它）：在仓库根目录运行 make openevolve（它先装好再跑）"
SERVER_START_SECONDS = 60.0


MOCK_BASE = "http://127.0.0.1:8765/v1"        # config.yaml 里指着 MockLLM 服务器的地址（它的默认端口）
# 不是秘密的 api_key（本机服务器常用的占位符，不分大小写）：明文 http:// 发给别的机器也没关系；别的 api_key 都当密钥
PLACEHOLDER_KEYS = ("not-needed", "not-needed-for-the-mock", "empty", "none", "ollama", "dummy", "no-key")
BEST_ENV, BEST_FILE = "MINI_ALPHAEVOLVE_OE_BEST", "best_so_far.json"   # evaluator.py 随时记下最好的程序（evaluator.BEST_ENV）
MOCK_MODEL = "mock"                            # config.yaml 里 MockLLM 的模型名（服务器不看它）
MOCK_KEY = "not-needed-for-the-mock"           # 对着 MockLLM 服务器时给 OpenEvolve 的 api_key（服务器不看它）


_OE_CONFIG = "_mini_alphaevolve_openevolve_config"      # 单独载入的 openevolve/config.py 在 sys.modules 里的名字


def oe_config():
    """OpenEvolve 读 config.yaml 的那个模块（openevolve.config：load_config、Config、LLMModelConfig），不 import 整个
    OpenEvolve：它的 __init__ 把 controller、openai 客户端都 import 进来，要 0.5 秒以上的 CPU，而开跑之前的检查只读配置
    （make openevolve、07 的主进程都只做这个；OpenEvolve 的进程照常 import 它自己）。config.py 只用 yaml 和 dacite：
    照它原样单独载入（同一个文件、同样的代码，读出来的一样），放在一个自己的名字下，不冒充 openevolve.config。
    这个进程已经 import 过 openevolve（测试里），或者找不到那个文件：照常 from openevolve import config。"""
    if "openevolve" in sys.modules or _OE_CONFIG in sys.modules:
        return sys.modules.get(_OE_CONFIG) or importlib.import_module("openevolve.config")
    try:
        spec = importlib.util.find_spec("openevolve")
    except (ImportError, ValueError):
        spec = None
    where = list(spec.submodule_search_locations or []) if spec is not None and spec.origin is not None else []
    path = os.path.join(where[0], "config.py") if where else ""
    if not os.path.isfile(path):
        return importlib.import_module("openevolve.config")
    own = importlib.util.spec_from_file_location(_OE_CONFIG, path)
    module = importlib.util.module_from_spec(own)
    sys.modules[_OE_CONFIG] = module                    # dataclass 的字符串注解按 __module__ 在 sys.modules 里找
    try:
        own.loader.exec_module(module)
    except BaseException:
        del sys.modules[_OE_CONFIG]
        raise
    return module


def _config():
    """OpenEvolve 自己读出来的 config.yaml（openevolve.config.load_config：引号、${VAR}、每个模型自己的 api_base 都照它
    的规矩；讲师报过：api_base: "http://…" 带引号时，这里按行读到的是带引号的文字，把能用的地址说成了不能用）。
    读不了（YAML 写错、${VAR} 引用的环境变量没设……）抛 ValueError（一句话）。"""
    load_config = oe_config().load_config
    from evolve.openai_llm import shown
    try:
        return load_config(CONFIG)
    except Exception as e:                                  # noqa: BLE001  PyYAML、OpenEvolve 的各种错
        unknown = unknown_setting()                         # 模型里写错的设置名：OpenEvolve 在这里就出错了
        if unknown:
            raise ValueError(unknown) from None
        raise ValueError(f"OpenEvolve 读不了 lecture14/openevolve/config.yaml（{shown(' '.join(str(e).split()), 200)}）："
                         "照文件开头的写法改好它，"
                         "或者 git checkout lecture14/openevolve/config.yaml 恢复原样") from None


def configured_llm() -> tuple[str, str]:
    """OpenEvolve 会问的 (api_base, 第一个模型名)。config.yaml 读不了抛 ValueError（一句话）。"""
    llm = _config().llm
    first = llm.models[0] if llm.models else None
    return (first.api_base if first and first.api_base else llm.api_base) or "", (first.name if first else "") or ""


def is_mock_base(base: str) -> bool:
    """api_base 是 MockLLM 服务器的默认地址（MOCK_BASE）吗：写成 localhost、[::1]、末尾带 / 也算。
    学生报过：写成 http://localhost:8765/v1，make openevolve 当它是真的服务器，说"连不上，先启动它（例如 ollama serve）"）。"""
    try:
        u = urllib.parse.urlsplit(base.strip())
        port = u.port
    except (ValueError, AttributeError):
        return False
    mock = urllib.parse.urlsplit(MOCK_BASE)
    return (u.scheme == mock.scheme and u.hostname in ("127.0.0.1", "localhost", "::1") and port == mock.port
            and u.path.rstrip("/") == mock.path and not (u.query or u.fragment or u.username))


def configured_endpoints() -> list[tuple[str, str, str | None]]:
    """OpenEvolve 会问的每个 (api_base, 模型名, api_key)：llm.models 和 llm.evaluator_models 里的每一个（没写 api_base、
    api_key 的模型用 llm 下面的，OpenEvolve 就这样填），去掉重复，按出现的顺序。api_key 是 None：用环境变量 OPENAI_API_KEY。
    讲师报过：只检查了第一个模型，第二个模型写着另一台机器的 http:// 地址，付钱的密钥就明文发了过去（经代理也一样）。"""
    llm = _config().llm
    out = []
    for m in llm.models + llm.evaluator_models:
        e = (m.api_base or llm.api_base or "", m.name or "", m.api_key)
        if e not in out:
            out.append(e)
    return out or [(llm.api_base or "", "", llm.api_key)]


def unknown_setting() -> str | None:
    """config.yaml 里 OpenEvolve 不认识的设置（它读的时候悄悄不管）：一句话，没有是 None。学生报过：api_base 拼成
    api_bse，OpenEvolve 就问它自己默认的 https://api.openai.com/v1，那句"连不上"说的是一个学生没写过的地址；name 拼成
    nme，模型名悄悄不管用。按 OpenEvolve 自己的 Config 各节（dataclass）的字段查，llm.models 里每个模型也查。"""
    import dataclasses
    import difflib

    import yaml
    Config, LLMModelConfig = oe_config().Config, oe_config().LLMModelConfig
    try:
        with open(CONFIG, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return None                                         # 读不了的，_config 说（一句话）

    def check(d, cls, where: str):
        if not isinstance(d, dict):
            return None
        example = cls()
        names = [f.name for f in dataclasses.fields(cls)]
        for key, value in d.items():
            if key not in names:
                close = difflib.get_close_matches(str(key), names, 1)
                return (f"config.yaml 的 {where}{shown_name(key)}：OpenEvolve 不认识这个设置，读的时候会悄悄不管它"
                        + (f"——是不是 {close[0]}？" if close else "；删掉它，或者照文件开头的写法改。"))
            if key in ("models", "evaluator_models") and isinstance(value, list):
                for i, m in enumerate(value):
                    said = check(m, LLMModelConfig, f"{where}{key} 的第 {i + 1} 个模型里的 ")
                    if said:
                        return said
            elif dataclasses.is_dataclass(getattr(example, key, None)):
                said = check(value, type(getattr(example, key)), f"{where}{key}.")
                if said:
                    return said
        return None
    return check(raw, Config, "")


def config_refusal() -> str | None:
    """config.yaml 里 make openevolve 检查不了、OpenEvolve 却会拿着密钥去连的东西：一句话（没有是 None）。
    - database.embedding_model：OpenEvolve 拿 OPENAI_API_KEY 去问另一个地址（embedding_api_base 或环境变量
      OPENAI_EMBEDDING_BASE_URL，都没有就是 OpenAI）做 embedding；本讲的例子不用它。
    - 不是 openai 的 provider（claude_code 之类）：走别的客户端，不是这里检查的 OpenAI 兼容服务器。"""
    unknown = unknown_setting()
    if unknown:
        return unknown
    cfg = _config()
    if getattr(cfg.database, "embedding_model", None):
        return ("config.yaml 的 database.embedding_model：本讲的例子不用 embedding，OpenEvolve 会拿着密钥去问另一个地址"
                "（本讲的 OpenEvolve 例子不检查那个地址）；删掉这一行再跑。")
    if getattr(cfg.llm, "manual_mode", False) or any(getattr(m, "manual_mode", False) for m in cfg.llm.models):
        return ("config.yaml 的 llm.manual_mode：OpenEvolve 会把每个提示写进文件、等人来回答，不问 LLM 服务器，"
                "这里会一直等下去；删掉这一行再跑。")
    for m in cfg.llm.models + cfg.llm.evaluator_models:
        provider = getattr(m, "provider", None)
        if provider not in (None, "", "openai"):
            return (f"config.yaml 的 provider: {shown_name(provider)}：本讲的 OpenEvolve 例子只检查 OpenAI 兼容的服务器"
                    "（api_base 加模型名），别的 provider 走它自己的客户端；删掉 provider 那一行再跑。")
    return None


def shown_name(text) -> str:
    from evolve.openai_llm import shown
    return shown(str(text), 60)


def configured_key() -> str | None:
    """OpenEvolve 会发的 api_key（config.yaml 里没有时是 None：OpenEvolve 用的 openai 库去读环境变量 OPENAI_API_KEY）。"""
    llm = _config().llm
    first = llm.models[0] if llm.models else None
    return first.api_key if first else llm.api_key


def dropped_openai_vars(environ=None) -> list[str]:
    """环境里不传给 OpenEvolve 的变量：OPENAI_ 开头的，除了 OPENAI_API_KEY。OpenEvolve 用的 openai 库会读它们改请求
    （讲师报过：OPENAI_CUSTOM_HEADERS 里的 Authorization 换掉了 config.yaml 的占位符，密钥经明文 http 发给了别的机器；
    OPENAI_BASE_URL 换地址），make openevolve 检查的只是 config.yaml 的 api_base 和那一个密钥。"""
    environ = os.environ if environ is None else environ
    return sorted(k for k in environ if k.upper().startswith(("OPENAI_", "AZURE_OPENAI_")) and k != "OPENAI_API_KEY")


PROXY_VARS = ("ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY")


def dropped_proxy_vars(environ=None) -> list[str]:
    """环境里不传给 OpenEvolve 的代理变量：OpenEvolve 用的 httpx 用不了的代理——SOCKS 代理（socks5://……）而没装
    socksio 时，或者别的协议（ftp://……）。httpx 建客户端时就为环境里的每个代理建好连接方式，用不了的就出错——连
    本机的 MockLLM 都不问（no_proxy 管不到这一步；讲师报过：ALL_PROXY=socks5://… 让 make openevolve 和 07 一个提议
    也没跑就出错退出，ALL_PROXY=ftp://… 也一样）。"""
    environ = os.environ if environ is None else environ
    socks_ok = importlib.util.find_spec("socksio") is not None

    def usable(value: str) -> bool:
        scheme = value.strip().lower().partition("://")[0] if "://" in value else "http"   # 不写协议时 httpx 当 http
        return scheme in ("http", "https") or (scheme.startswith("socks") and socks_ok)
    return sorted(k for k in environ if k.upper() in PROXY_VARS and environ[k].strip() and not usable(environ[k]))


def env_notes(environ=None) -> list[str]:
    """不传给 OpenEvolve 的环境变量，各一句（make openevolve 和 07 开跑前都说：不悄悄扔掉）。"""
    notes = []
    dropped = dropped_openai_vars(environ)
    if dropped:
        notes.append(f"（环境变量 {'、'.join(dropped)} 不传给 OpenEvolve：它会改请求的地址或请求头，这里只检查 "
                     "config.yaml 的 api_base 和密钥）")
    proxies = dropped_proxy_vars(environ)
    if proxies:
        env = os.environ if environ is None else environ
        socks = all(env[k].strip().lower().startswith("socks") for k in proxies)
        why = ("是 SOCKS 代理，OpenEvolve 用的 httpx 要 socksio 这个包才走得了它，这里没装" if socks else
               "是 OpenEvolve 用的 httpx 走不了的代理（它只认 http://、https://，装了 socksio 时还有 socks5:// 之类）")
        notes.append(f"（环境变量 {'、'.join(proxies)} {why}：不传给 OpenEvolve。本机的 MockLLM 不用代理；真的模型要经"
                     "代理才连得上的话，换成 http:// 的代理" + ("，或者在 .venv 里装 socksio）" if socks else "）"))
    return notes


def child_env() -> dict:
    """跑 OpenEvolve 的子进程的环境：本机的地址不走环境里的代理（不然连 MockLLM 服务器的请求也交给了代理，
    并排比较就不成立）；别的地址和开跑前的检查（check_configured，本讲的客户端）一样按环境里的代理走——明文 http 的
    别的机器只收得到占位符密钥（真的密钥开跑前就拦了），经代理也不泄露什么。讲师报过：检查经代理通过了，OpenEvolve
    却被放进 no_proxy、直接去连，4 个提议都"连不上"。不传的：dropped_openai_vars、dropped_proxy_vars（env_notes 说出来）。"""
    dropped = set(dropped_openai_vars()) | set(dropped_proxy_vars())
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONHASHSEED"] = "0"
    hosts = ["127.0.0.1", "localhost", "::1"]
    for var in ("no_proxy", "NO_PROXY"):
        env[var] = ",".join([h for h in env.get(var, "").split(",") if h.strip()] + hosts)
    return env


def run_env(output: str, scratch: str) -> dict:
    """一次 OpenEvolve 运行的子进程的环境：child_env，临时文件放在 scratch，最好的程序写到 output 里；读的专家是这个
    进程的 evolve.EXPERT 在 output 里的一份拷贝（EXPERT_SNAPSHOT），不是学生正在改的文件。学生报过：07 跑着的时候把
    500 条规则的表贴进 expert_heuristic.py，之后起的 OpenEvolve 种子和它的评估进程读到那张表（提示 36 万个字符），
    本讲的循环那边还是开跑时的专家——两边就不再是同一个起点、同一个打分的基准。"""
    from evolve.problem import EXPERT_ENV
    return dict(child_env(), TMPDIR=scratch,
                **{BEST_ENV: os.path.join(output, BEST_FILE), EXPERT_ENV: starting_program(output, EXPERT_SNAPSHOT)})


def need_openevolve(missing: str, then: str) -> None:
    """没装 OpenEvolve 时：仓库的 .venv 里装了就换成它重新运行（和 runner.ensure_numpy 一样），否则说一句话、退出码 1。
    missing 是那句话的开头；有 .venv 时再说一种装法（.venv/bin/pip），没有时只说 make openevolve（审读报过：新克隆的
    仓库里照着 .venv/bin/pip 敲，没有这个文件）。then：装好以后运行什么。runner 要已经在 sys.path 上。"""
    from runner import REEXEC_FLAG, VENV_PYTHON, reexec, say
    if have_openevolve():
        return
    venv = os.path.exists(VENV_PYTHON)
    here = os.path.realpath(sys.prefix) == os.path.realpath(os.path.dirname(os.path.dirname(VENV_PYTHON)))
    if venv and not here and not os.environ.get(REEXEC_FLAG):
        reexec()                                     # 回来了就是 .venv 坏了：落到下面那句话
    say(missing + ("，或者 .venv/bin/pip install -r requirements-openevolve.txt" if venv else "（它还会先建好 .venv）")
        + f"；装好以后运行 {then}。")
    raise SystemExit(1)


def have_openevolve() -> bool:
    """装了 OpenEvolve 吗（只找，不 import：import 它要一两秒）。lecture14/openevolve 这个目录本身不算——
    没装时 import openevolve 会把它当成一个空的"命名空间包"。"""
    try:
        spec = importlib.util.find_spec("openevolve")
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None


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


GIVE_UP_AFTER = 4             # 接连这么多个提议都是 LLM 调用失败，就停下 OpenEvolve（和本讲的 --llm 客户端一样，evolve.openai_llm）
QUIET_NOTE_SECONDS = 30.0     # 这么久没有一个提议做完，就在进度里说一声（在等 LLM），之后每隔这么久再说一次
# 多久读一次 OpenEvolve 新写的日志（进度最多每秒说一次）。以前每秒读一次：服务器立刻回 400（不收某个参数）、
# OpenEvolve 又不重试它时，一秒里就有三四十个提议失败，"接连 GIVE_UP_AFTER 个就停下"停在第四十个
LOG_READ_SECONDS = 0.05
# OpenEvolve 的日志一条记录一行（_log_records_one_line），格式是 "时间 - 级别 - 说明"。只认说明开头的那几句：服务器写的
# 文字只会出现在说明的后面（"Iteration 3 error: … 400 - {服务器的说明}"），伪造不了开头（审读报过：只在行里找
# "Iteration N: Program" 时，一行 400 的说明就凑出"8 个提议：9 个做了完整评估……-8 个没变成子程序"，接连失败也不停）
_HEAD = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [A-Z]+ - "
_DONE = re.compile(_HEAD + rb"(?:\xe2\x8f\xb0 )?Iteration (\d+)[: ]")        # 做完一个提议（"⏰ Iteration N timed out" 也算）
_ERROR = re.compile(_HEAD + rb"Iteration (\d+) error: (.*)")


def failure_kind(error: str, local: bool = True) -> str | None:
    """OpenEvolve 日志里一个提议的 "Iteration N error: ……" 是哪种失败：LLM 调用失败时是种类的名字（和本讲的 --llm
    客户端同样的叫法：LLM 回 HTTP 500、LLM 超时、连不上 LLM 服务器……），别的（回复打不上、没改动）是 None。
    只从 OpenEvolve 的固定说法里认种类，服务器写的文字（可能带密钥、控制字符）从不印出来。local：OpenEvolve 问的
    服务器都在本机（only_local）——只有那时一个 500 才可能是本讲的 MockLLM 服务器出了程序错。"""
    if not error.startswith("LLM generation failed:"):
        return None
    why = error[len("LLM generation failed:"):].strip()
    if (m := re.match(r"Error code: (3\d\d)\b", why)):     # 转向：_careful_http 让它不跟过去（和 --llm 一样的叫法：
        from evolve.openai_llm import REDIRECT, REDIRECT_CODES   # 304 之类不是转向，是 "LLM 回 HTTP 304"，见 REDIRECT_CODES）
        if int(m.group(1)) in REDIRECT_CODES:
            return REDIRECT
    if why.startswith(REFUSED):                                 # _tame_replies 起的名字：400，不收哪个参数（已经转义、截短）
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


class CarefulFailure(Exception):
    """OpenEvolve 的进程里，一次 LLM 调用以 --llm 客户端的某个种类失败（str 就是种类的名字：日志里的整句，
    failure_kind 原样认出来）。"""


class NotRetried(BaseException):
    """OpenEvolve 的进程里，一次 LLM 调用的失败再问一次也一样、还要再付一次钱：回复到了 token 上限、修改没写完
    （CUT_OFF），服务器说不收请求里的某个参数（REFUSED）。OpenEvolve 0.4.0 的 generate_with_context 对每个 Exception
    都按 config.yaml 的 retries 重试（讲师报过：每个被截断的回复按上限收两次钱）；它不是 Exception，穿过那个重试的
    循环，在 _tame_replies 包的 generate_with_context 外面变回 CarefulFailure（日志里的种类和以前一样）。
    str 是种类的名字。"""


# 服务器说不收 OpenEvolve 发的某个参数（HTTP 400，evolve.openai_llm.refused_parameter）：失败的种类是这一句接上参数名
REFUSED = "LLM 回 HTTP 400，不收参数 "


def careful_kind(error: BaseException) -> str | None:
    """openai 库抛的异常（和它的 __cause__、__context__ 链）是不是 --llm 客户端起了名字的一种：回复超过 MAX_REPLY_BYTES、
    正文没传完、是工具调用……（_careful_http 抛的 CarefulFailure，正文读到一半出的错也在那里变成"没传完整"）；状态行、
    响应头不合规矩（h11 在读到正文之前抛的 RemoteProtocolError：响应头太长、太多、写得离谱、状态行不是 HTTP 的）；
    HTTP 101（换协议：我们没要，h11 不认它）。不然 openai 库把它们都说成 "Connection error."——讲师报过：一个回了
    10 MB 的服务器被记作"连不上"，响应头 200 KB 的、回 101 的也是：服务器明明答了。只看异常的类型和 h11、httpcore 的
    固定说法，不看服务器写的字。"""
    from evolve.openai_llm import BAD_HEADERS, BAD_JSON, NO_CONTENT
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, CarefulFailure):
            return str(error)
        if type(error).__name__ == "RemoteProtocolError":          # 正文的错在 Capped 里就起了名字：这里是正文之前的
            said = str(error)
            if said.startswith("Server disconnected without sending a response"):
                return None                                        # 一个字没回就关了连接：和 --llm 一样是"连不上"
            if "_SWITCH_UPGRADE" in said:                          # h11："Received server _SWITCH_UPGRADE event without
                return "LLM 回 HTTP 101"                           # a pending proposal"，和 --llm 一样按状态码说
            return BAD_HEADERS                                     # "Receive buffer too long"、"illegal status line"……
        if isinstance(error, (ValueError, RecursionError)) and (   # 回复不是 JSON：openai 库的 JSONDecodeError、嵌得太深，
                type(error).__name__ == "JSONDecodeError" or isinstance(error, RecursionError)   # 或者 OpenEvolve 说
                or str(error).startswith("LLM endpoint returned a raw string")):               # "raw string"（一页 HTML）
            return BAD_JSON
        if isinstance(error, (IndexError, TypeError, AttributeError)) and _in_openevolve_call_api(error):
            return NO_CONTENT                                      # response.choices[0].message.content 取不到
        error = error.__cause__ or error.__context__
    return None


def _in_openevolve_call_api(error: BaseException) -> bool:
    """异常是不是在 OpenEvolve 的 OpenAILLM._call_api 里、取回复内容的那几行抛的（不是别处的程序错）。"""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name in ("_call_api", "<lambda>") and \
        tb.tb_frame.f_code.co_filename.replace("\\", "/").endswith("openevolve/llm/openai.py")


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
    mock_bug = re.compile(_HEAD + rb"(?:Error on attempt \d+/\d+|All \d+ attempts failed with error|"
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
        p = procs.add(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
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


VIA_PROXY: list[str] = []      # 开跑前的检查经过的代理（"环境变量 http_proxy 的代理 http://…"）：失败时一并说出来


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


def configured_timeout() -> float | None:
    """config.yaml 里一个请求最多等几秒（llm.timeout；几个模型各写了自己的时取最长的）；读不出来是 None。"""
    try:
        llm = _config().llm
        found = [t for t in [llm.timeout, *(m.timeout for m in llm.models)] if isinstance(t, (int, float)) and t > 0]
    except (ValueError, AttributeError):
        return None
    return max(found, default=None)


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
        llm = _config().llm
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


_PROGRAM = re.compile(_HEAD.decode() + r"Iteration (\d+): Program \S+")
_METRICS = re.compile(_HEAD.decode() + r"Metrics: (.*)$")


def read_run(output: str) -> dict:
    """一次运行的结果：best_code、best_metrics（OpenEvolve 记下的）、iterations、
    trace=[(第几个提议, 子程序的 metrics)]（评估过的子程序，按提议排好；没变成子程序的提议不在里面）。
    哪些提议变成了评估过的子程序，从 OpenEvolve 的日志读（每个做完的提议一行 "Iteration N: Program …"，下一行是它的
    Metrics）：evolution_trace.jsonl 少记一些——子程序在 MAP-Elites 的格子里挤掉了自己的父程序时，父程序被删掉，那一行
    就不写了（OpenEvolve 0.4.0；一位同学在 make openevolve 里数到 19 个"没变成子程序"，日志里只有 4 个出错的提议，
    少掉的常是刷新了最好分数的子程序）。metrics 的数用 trace 里的（日志只印 4 位小数），trace 里没有的才用日志的。"""
    with open(os.path.join(output, "result.json"), encoding="utf-8") as f:
        res = json.load(f)
    exact = {}
    path = os.path.join(output, "evolution_trace.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    t = json.loads(line)
                    exact[int(t["iteration"])] = t.get("child_metrics", {})
    logged = {}
    with open(os.path.join(output, "openevolve.log"), encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = _PROGRAM.match(line)
        if not m:
            continue
        for nxt in lines[i + 1:i + 4]:                  # 它的 Metrics 紧跟在后面（中间可能夹着别的线程的一两行）
            got = _METRICS.match(nxt)
            if got:
                logged[int(m.group(1))] = _metrics(got.group(1))
                break
    res["trace"] = sorted((k, exact.get(k, v)) for k, v in logged.items())
    return res


def _metrics(text: str) -> dict:
    """日志里的 "combined_score=1.0532, probe_speedup=1.0400, …" -> {名字: 数}（读不懂的项跳过）。"""
    out = {}
    for part in text.split(", "):
        k, _, v = part.partition("=")
        try:
            out[k.strip()] = float(v)
        except ValueError:
            pass
    return out


# ---------------------------------------------------------------- 子进程：真正跑 OpenEvolve 的地方

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


def _careful_http() -> None:
    """OpenEvolve 用的 openai 库建的每个 HTTP 客户端（在 OpenEvolve 的进程里）：
    - 不跟转向（它默认跟：换了主机时不带密钥，可提示照发、回复照收）。讲师报过：config.yaml 的服务器把每个 POST
      转到另一个端口，20 个提议都是那个没配置过的服务器答的，结果却记在 config.yaml 的服务器名下。转向成了一次
      有名字的失败（和本讲的 --llm 客户端一样）。
    - 要不压缩的回复（Accept-Encoding: identity），服务器照样压缩了也不解压（一次"LLM 回复是压缩过的"），回复最多读
      MAX_REPLY_BYTES 字节：长度头说得更多，或者读到更多，就是一次"LLM 回复太长"（和 --llm 一样；careful_kind 给
      它起名字）。讲师报过：2 MB 的 gzip 解压成 2 GB，每次调用 16 秒 CPU、2 GB 内存，最后说成"连不上 LLM 服务器"。
    - 正文从发出请求算起最多读 config.yaml 的 timeout 秒（httpx 的 timeout 只管每一次读：一秒一个字节永远不超时）。
      讲师报过：一个挤牙膏的回复让读它的线程一直读下去，那个提议永远做不完，整个 make openevolve 被停下；现在它是
      一次"LLM 超时"，接着跑。状态行、响应头挤牙膏（或者 1xx 一个接一个来）也一样：每一次读最多等到期限
      （_whole_request_reads）。
    - openai 库自己不再重试（max_retries=0）：重试只由 OpenEvolve 按 config.yaml 的 retries 做。不然每次 OpenEvolve
      的重试里 openai 库还要再试 retries 次，一个提议最多发 (retries + 1)² 个按次收钱的请求。
    - 同一个回答和 --llm 说成同一种失败（tests/hostile_server.py 的 SAME_KIND 对照）：响应头 h11 放行、http.client
      不放行的（超过 100 个、一行超过 64 KB）也拒掉；正文读到一半出的错是"没传完整"（分块的长度行太长，h11 说的
      "Receive buffer too long" 和响应头太长时一样，careful_kind 按它出在哪儿分开）；不是 2xx 的只按状态码算；
      choices[0].message 按 message_text 变成文字（只有 tool_calls 的是"LLM 回的是工具调用"）。"""
    import importlib

    import openai
    from evolve.openai_llm import (BAD_HEADERS, COMPRESSED, CUT_OFF, ERROR_BODY_BYTES, ERROR_READ_SECONDS, MAX_HEAD_BYTES,
                                   MAX_REPLY_BYTES, STREAMED, TOO_LONG, TRUNCATED, LLMError, compressed, cut_reason, loads,
                                   looks_streamed, message_text, unfinished_edit)
    http = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])   # httpx 或 httpx2

    class Capped(http.SyncByteStream):
        def __init__(self, inner, deadline: float, limit: float, content_type: str = "", status_only: bool = False,
                     skip: bool = False):
            self.inner, self.deadline, self.limit, self.content_type = inner, deadline, limit, content_type
            self.status_only, self.skip = status_only, skip

        def __iter__(self):
            if self.status_only:                                     # 不是 2xx：只按状态码算（和 --llm 一样，见 careful）
                yield from self._error_text()
                return
            left, first = MAX_REPLY_BYTES, True
            try:
                for chunk in self.inner:
                    if time.monotonic() > self.deadline:             # 挤牙膏：整个请求到期了
                        raise http.ReadTimeout(f"整个请求超过 {self.limit:g} 秒")
                    left -= len(chunk)
                    if left < 0:
                        raise CarefulFailure(TOO_LONG)
                    if first and chunk.strip():                      # 没要流式，照样流式地回：和 --llm 同样的判断
                        first = False
                        if looks_streamed(chunk, self.content_type):
                            raise CarefulFailure(STREAMED)
                    yield chunk
            except (http.ReadError, http.RemoteProtocolError) as e:  # 响应头到了、正文传到一半连接被重置，或者分块的
                raise CarefulFailure(TRUNCATED) from e               # 长度行太长、读不懂（h11 说 "Receive buffer too long"，
                #                                                      和响应头太长时一样）：服务器已经答了，和 --llm 一样是
                #                                                      "回复没传完整"，不是"连不上"、也不是"响应头不合规矩"

        def _error_text(self):
            """不是 2xx 的回答的正文（openai 库把它放进 "Error code: 500 - …"）：和 --llm 一样只读开头（ERROR_BODY_BYTES
            字节、ERROR_READ_SECONDS 秒），读到上限、期限或者读坏了就停，不说别的。helper 查到：以前读到整个请求的期限，
            正文挤牙膏的 429、500 总是 OpenEvolve 的 wait_for 先到期：一次"LLM 超时"（停下时还劝人调大 timeout），
            --llm 说的是"LLM 回 HTTP 429"。"""
            left = 0 if self.skip else ERROR_BODY_BYTES
            until = min(self.deadline, time.monotonic() + ERROR_READ_SECONDS)
            if getattr(deadline, "at", None) is not None:
                deadline.at = min(deadline.at, until)                # 一次读也最多等到这时（_whole_request_reads）
            try:
                for chunk in self.inner:
                    if time.monotonic() > until or left <= 0:
                        return
                    left -= len(chunk)
                    yield chunk[:max(0, left + len(chunk))]
            except (http.ReadError, http.RemoteProtocolError, http.TimeoutException):   # 到期了也一样
                return

        def close(self):
            self.inner.close()

    def text_only(create):
        """client.chat.completions.create 拿到回复以后：choices[0].message 按 --llm 的规矩变成文字（message_text）——
        工具调用是一次"LLM 回的是工具调用（tool_calls），不是文字"（讲师报过：OpenEvolve 说 "LLM returned None
        response"、不算 LLM 调用失败），拒绝回答的话照原样当回复，分成几段的连起来。
        回复到了 token 上限、被截断（finish_reason 是 "length" 这类）而修改没写完时，是一次"回复到了 token 上限、被截断"
        （和 --llm 的 CUT_OFF 同一个判断，unfinished_edit）：OpenEvolve 0.4.0 只取 message.content、从不看 finish_reason，
        推理模型把 config.yaml 的 max_tokens 全用在推理上时回的是空的 content，它说成"没有 SEARCH/REPLACE"
        （No valid diffs），make openevolve 说"回复打不上、没改动"，跑完、退出码 0（helper 照 OpenAI 的推理模型写的假服务器
        报过）。现在按种类数、接连 4 个就停下，那句话说调大 config.yaml 的 max_tokens；不重试（NotRetried，见 _tame_replies）。修改写完了的照样交给 OpenEvolve。"""
        def wrapped(*args, **kwargs):
            response = create(*args, **kwargs)
            try:
                choice = response.choices[0]
                message = choice.message
                fields = {k: getattr(message, k) for k in message.model_fields_set}   # 服务器写了的那几项
            except (AttributeError, IndexError, TypeError):
                return response                                      # 读不懂的交给 OpenEvolve（careful_kind 起名字）
            try:
                message.content = message_text(fields)
            except LLMError as e:
                raise CarefulFailure(e.kind) from None
            if cut_reason(getattr(choice, "finish_reason", None)) and unfinished_edit(message.content):
                raise CarefulFailure(CUT_OFF)
            return response
        return wrapped

    init = openai.OpenAI.__init__
    deadline = _whole_request_reads(http)

    def within_deadline(send):
        """请求读完（openai 库不要流式时，正文在 send 里就读完了）就撤掉这个线程上的期限：它只管这一个请求。
        不撤的话，这个线程之后在别的 httpx 客户端里的读（没有 started 写新的期限）一开始就是"整个请求超过 N 秒"。"""
        def send_and_clear(request, **kw):
            try:
                return send(request, **kw)
            finally:
                if not kw.get("stream"):
                    deadline.at = None
        return send_and_clear

    def no_follow(self, *args, **kwargs):
        limit = kwargs.get("timeout")
        limit = float(limit) if isinstance(limit, (int, float)) and limit > 0 else 60.0

        def started(request):
            request.extensions["careful_start"] = now = time.monotonic()
            deadline.at, deadline.limit = now + limit, limit        # 这个线程接下来的每一次读（状态行、响应头、正文）

        def careful(response):
            start = response.request.extensions.get("careful_start", time.monotonic())
            # 整数最多 100 位（更长的读成 ±inf，和 --llm 一样，见 openai_llm.loads）：审读报过，usage 里一个 5000 位的数
            # 让 Python 的 json 抛 ValueError，OpenEvolve 丢了能用的回复（"别的原因"），--llm 照收
            response.json = lambda **kwargs: loads(response.content)
            raw = response.headers.raw                        # h11 放行、http.client（--llm）不放行的响应头：一样拒掉
            if (len(raw) > 100 or any(len(k) + len(v) + 4 > 65536 for k, v in raw)   # 超过 100 个、一行超过 64 KB、
                    or sum(len(k) + len(v) + 4 for k, v in raw) > MAX_HEAD_BYTES):  # 加起来超过 100 KB（h11 只在响应头
                response.close()                                   # 分几次到时才查，一次到齐的 150 KB 放行：helper 报过时有时无）
                raise CarefulFailure(BAD_HEADERS)
            if not 200 <= response.status_code < 300:         # 和 --llm 一样只按状态码算（"LLM 回 HTTP 500"）：正文只是
                # openai 库那句话里的说明：太长的截断、读坏了的就到那里（审读量过：一个 400 的分块坏了，被说成"响应头
                # 不合规矩"；10 MB 的 500 被说成"回复太长"），压缩过的一个字也不读（不解压，也就没有 gzip 炸弹）
                skip = compressed(response.headers) is not None
                if skip:
                    response.headers["Content-Encoding"] = "identity"
                response.stream = Capped(response.stream, start + limit, limit, status_only=True, skip=skip)
                return
            if compressed(response.headers):                 # 不解压：和 --llm 一样是一次"回复是压缩过的"
                response.close()
                raise CarefulFailure(COMPRESSED)
            length = response.headers.get("content-length", "").strip()
            if length.isascii() and length.isdigit() and int(length) > MAX_REPLY_BYTES:
                response.close()
                raise CarefulFailure(TOO_LONG)
            response.stream = Capped(response.stream, start + limit, limit, response.headers.get("content-type", ""))
        kwargs["max_retries"] = 0
        if "http_client" not in kwargs:
            client = openai.DefaultHttpxClient(follow_redirects=False, headers={"Accept-Encoding": "identity"},
                                               event_hooks={"request": [started], "response": [careful]})
            client.send = within_deadline(client.send)
            kwargs["http_client"] = client
        init(self, *args, **kwargs)
        self.chat.completions.create = text_only(self.chat.completions.create)
    openai.OpenAI.__init__ = no_follow


def _whole_request_reads(http):
    """httpx 的 timeout 只管每一次读：状态行和响应头一秒一个字节地来，读它们的线程永远等不到超时（OpenEvolve 的
    asyncio.wait_for 到时放弃了，可线程还在读，收尾时等着它，STALL 的看门最后停下整个运行）。这里让 httpcore 的每一次读
    最多等到这个线程上的请求的期限（_careful_http 的 started 写进返回的 threading.local：at、limit），到了就是 httpcore 的
    ReadTimeout——和正文挤牙膏一样，一个提议一次"LLM 超时"，接着跑。100 Continue 之类的 1xx 一个接一个来时也一样。
    OpenEvolve 在线程里调用 openai 库：一次调用从头到尾在一个线程里，每个请求开始时写期限。httpcore 换了写法、找不到
    那两个类时什么都不改（还有 STALL 的看门）。"""
    import importlib
    import threading
    try:
        sync = importlib.import_module(http.__name__.replace("httpx", "httpcore") + "._backends.sync")
        core = importlib.import_module(http.__name__.replace("httpx", "httpcore"))
    except ImportError:
        return threading.local()
    classes = [c for c in (getattr(sync, "SyncStream", None), getattr(sync, "TLSinTLSStream", None)) if c is not None]
    # 已经改过（这个进程里第二次 _careful_http，测试里常见）：用改过的 read 看的那一个期限。以前每次都新建一个，
    # 第二次装上的 started 写进新的、read 却还看第一次的：响应头又没有期限了（挤牙膏的响应头等到服务器断开）
    patched = [getattr(c.read, "whole_request") for c in classes if getattr(c.read, "whole_request", None) is not None]
    deadline = patched[0] if patched else threading.local()
    for cls in classes:
        read = cls.read
        if getattr(read, "whole_request", None) is not None:
            continue

        def capped(self, max_bytes, timeout=None, _read=read):
            at = getattr(deadline, "at", None)
            if at is not None:
                left = at - time.monotonic()
                if left <= 0:
                    raise core.ReadTimeout(f"整个请求超过 {deadline.limit:g} 秒")
                timeout = left if timeout is None else min(timeout, left)
            return _read(self, max_bytes, timeout)
        capped.whole_request = deadline
        cls.read = capped
    return deadline


def _tame_replies(keys) -> None:
    """模型的回复进 OpenEvolve 之前：抹掉密钥、控制字符换成看得见的转义（换行、制表符照旧）。讲师报过：服务器把收到的
    密钥写进回复的注释里，它就原样进了 evolution_trace.jsonl、best/best_program.py、result.json（日志是干净的），
    还带着 ESC 和 OSC 8 的终端序列——停下时那句话正让人去看这些文件。回复是 DSL 的代码，控制字符在里面本来就不合法。
    调用失败时，careful_kind 认得出的换成 CarefulFailure（日志里是和 --llm 一样的种类名字）。"""
    import openai
    from openevolve.llm import openai as oe_openai
    from evolve.openai_llm import CUT_OFF, redact, refused_parameter, shown
    call = oe_openai.OpenAILLM._call_api
    generate = oe_openai.OpenAILLM.generate_with_context

    def refused(e: BaseException) -> str | None:
        """e 是服务器说不收某个参数的 HTTP 400 时的种类（REFUSED 接上抹了密钥、转义、截短的参数名），不是 None。"""
        if not (isinstance(e, openai.APIStatusError) and e.status_code == 400):
            return None
        try:
            raw = e.response.content                     # _careful_http 的 Capped 读的：有上限、有期限
        except Exception:                                # noqa: BLE001  读不了就不认
            return None
        param = refused_parameter(400, raw if isinstance(raw, bytes) else b"")
        if param is None:
            return None
        for key in keys:
            param = redact(param, key)
        return REFUSED + shown(param, 40)

    async def tamed(self, params):
        try:
            text = await call(self, params)
        except Exception as e:
            if said := refused(e):
                raise NotRetried(said) from None         # 再问一次服务器还是不收
            if kind := careful_kind(e):
                raise (NotRetried if kind == CUT_OFF else CarefulFailure)(kind) from None   # 被截断的：再问一次也按上限收钱
            raise
        usage = getattr(self, "last_usage", None)          # 讲师的复查报过："prompt_tokens": "…"（不是整数）让 OpenEvolve
        if isinstance(usage, dict) and not all(           # 每个提议都在加总时出错、说成"回复打不上"，从不放弃
                type(usage.get(k)) is int and 0 <= usage[k] < 10 ** 12
                for k in ("prompt_tokens", "completion_tokens", "total_tokens")):
            self.last_usage = None                         # 当作服务器没报用量
        if not isinstance(text, str):
            return text
        for key in keys:
            text = redact(text, key)
        text = text.replace("\r\n", "\n")
        return shown(text, None, lines=True)

    async def once(self, *args, **kwargs):
        try:
            return await generate(self, *args, **kwargs)
        except NotRetried as e:                          # 穿过了 OpenEvolve 的重试：变回一次普通的失败（日志里的种类）
            raise CarefulFailure(str(e)) from None
    oe_openai.OpenAILLM._call_api = tamed
    oe_openai.OpenAILLM.generate_with_context = once


EXPERT_SNAPSHOT = "expert_at_start.py"     # output 里：开跑时的专家（run_openevolve 让 OpenEvolve 的进程读它）


def starting_program(output: str, name: str = "initial_program.py") -> str:
    """OpenEvolve 从哪个程序出发：initial_program.py 的一份拷贝（在 output 里），EVOLVE 块换成这次运行的专家
    （evolve.EXPERT：lecture14/expert_heuristic.py，或者环境变量 MINI_ALPHAEVOLVE_EXPERT 指的文件）——和本讲的循环
    同一个起点、同一个打分的基准。学生报过：照练习改了 expert_heuristic.py，本讲的循环从改过的专家出发，OpenEvolve
    还从讲义的专家出发（训练形状上 0.992×），07 却说"两边都从专家出发"。返回那份拷贝（output 里的 name）的路径；
    同样的一份也是 OpenEvolve 的进程读的专家（EXPERT_SNAPSHOT）。"""
    from evolve import EXPERT, render
    head, tail = _around_block()
    path = os.path.join(output, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + render(EXPERT) + tail)                # render 自己带着 EVOLVE 块的两行标记
    return path


def _initial_text() -> str | None:
    """initial_program.py 的原文；读不了（删了、不是 UTF-8）时是 None。"""
    try:
        with open(INITIAL, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _around_block() -> tuple[str, str]:
    """initial_program.py 里 EVOLVE 块前后的文字（说明问题的注释），拷贝里原样留着。两行标记不全、文件读不了时是
    ("", "")：起点只有 EVOLVE 块（学生报过：initial_program.py 的标记被改坏了，make openevolve 印了一段 traceback）。"""
    from evolve.program import BLOCK_END, BLOCK_START
    text = _initial_text()
    if text is None or BLOCK_START not in text:
        return "", ""
    head, rest = text.split(BLOCK_START, 1)
    if BLOCK_END not in rest:
        return "", ""
    return head, rest.split(BLOCK_END, 1)[1].removeprefix("\n")


def initial_program_note() -> str:
    """initial_program.py 的 EVOLVE 块不再是讲义的专家（学生改过、写坏了、标记没了）时的一句提醒；还是时空串。
    make openevolve 和 07 从这次运行的专家出发（starting_program），不读那个块：学生报过，把自己的启发式写进
    initial_program.py 再 make openevolve，OpenEvolve 悄悄从专家出发，最好的程序看着像是从他的程序进化来的。"""
    from evolve import ProgramError, parse
    from evolve.problem import EXPERT_FILE, LECTURE_EXPERT_FILE, display_path, load_heuristic
    from evolve.program import BLOCK_END, BLOCK_START, equivalent
    text = _initial_text()
    try:
        same = (text is not None and BLOCK_START in text and BLOCK_END in text.split(BLOCK_START, 1)[1]
                and equivalent(parse(text), load_heuristic(LECTURE_EXPERT_FILE)))
    except (OSError, ProgramError):
        same = False
    if same:
        return ""
    return (f"注意：{display_path(INITIAL)} 的 EVOLVE 块不是讲义的专家（改过？）：make openevolve 和 07 不读它，"
            f"OpenEvolve 从这次运行的专家 {display_path(EXPERT_FILE)} 出发（和本讲的循环同一个起点、同一个分母）。"
            "要让 OpenEvolve 从你写的程序出发，照 config.yaml 开头的写法直接运行 openevolve-run，把你的文件放在第一个参数；"
            f"恢复原样：git checkout lecture14/openevolve/initial_program.py。")


def start_notes() -> list[str]:
    """开跑前在标准输出上说的话（make openevolve 和 07 都说）：专家改过（04、06 也说的那一句），initial_program.py
    改过（make openevolve 和 07 不读它）。学生报过：改了 expert_heuristic.py 再 make openevolve，"比专家快 1.037×"
    的分母是他改过的那份，04、06 都说了，这里一个字没说。"""
    from evolve.problem import expert_changed_note
    return [note for note in (expert_changed_note(), initial_program_note()) if note]


CODE_ROOM = 10_000             # OpenEvolve 的子程序最多比起点长这么多个字符（本讲的循环最多多 64 条规则，一条不到 150 个字符）
_PROTECTED = []                # 这个进程里 _protect 装好了（fork 出来的 worker 继承它，不再装一遍）


def _protect(keys) -> None:
    """OpenEvolve 的进程（和它的每个 worker）里：不跟转向、不解压、回复最多 1 MB（_careful_http），回复进 OpenEvolve
    之前抹掉密钥、转义控制字符（_tame_replies），日志每条一行、抹掉密钥（_log_records_one_line），地址空间有上限。"""
    if _PROTECTED:
        return
    _careful_http()
    _limit_memory()
    _log_records_one_line(keys)
    _tame_replies(keys)
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


# ---------------------------------------------------------------- 一条命令

def eval_failed(m: dict) -> bool:
    """OpenEvolve 记下的 metrics 是不是"评估出错"：evaluator.py 的某一级抛了异常、超时，或者回的不是 metrics。
    OpenEvolve 0.4.0 那时写 error、stage1_passed = 0、stage2_passed = 0 或 timeout（evaluator.py 的 _cascade_evaluate），
    不是我们的 evaluator 给的分数。"""
    return ("error" in m or m.get("timeout") in (True, 1.0)
            or any(m.get(f"stage{i}_passed") == 0.0 for i in (1, 2, 3)))


def count(res: dict) -> dict:
    """一次运行的提议分成五类：full（完整评估）、probe（只过了探针级）、rejected（evaluator 给 0 分：读不懂、启动不了）、
    eval_error（evaluator.py 出错或超时：OpenEvolve 记下的是它的错误，不是分数，eval_failed）、no_child（没变成子程序：
    OpenEvolve 在评估之前就丢掉了）。五个数加起来是 iterations。学生报过：evaluator.py 里拼错一个变量名，每个完整评估
    都出错，make openevolve 说它们"在探针级就停了"。"""
    ms = [m for _, m in res["trace"]]
    broken = sum(map(eval_failed, ms))
    ms = [m for m in ms if not eval_failed(m)]
    full = sum(m.get("full_evaluation") == 1.0 for m in ms)
    rejected = sum(m.get("launchable") != 1.0 for m in ms)
    return dict(full=full, probe=len(ms) - full - rejected, rejected=rejected, eval_error=broken,
                no_child=res["iterations"] - len(ms) - broken)


def eval_error_said(n: int) -> str:
    """count 的 eval_error 不是 0 时接在提议数那句话里的一段（是 0 时空串）。"""
    return (f"，{n} 个评估出错（evaluator.py 抛了异常或超时，不是程序的分数：日志里 \"Error in stage\"、"
            "\"timed out\" 那几行说了是哪里）" if n else "")


def no_child_said(c: dict, res: dict) -> str:
    """没变成子程序的提议怎么说：LLM 调用失败的按种类数出来（OpenEvolve 日志里的），其余是回复打不上、没改动。"""
    failed = res.get("llm_failed") or {}
    n_failed = sum(failed.values())
    rest = c["no_child"] - n_failed
    if not n_failed:
        return f"{c['no_child']} 个没变成子程序（回复打不上、没改动……）"
    kinds = "、".join(f"{k} ×{n}" for k, n in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0])))
    from evolve.openai_llm import CUT_OFF
    advice = raise_max_tokens() if failed.get(CUT_OFF) else ""      # 怎样调高只说一次：最后那句说了就不在这里说
    return (f"{c['no_child']} 个没变成子程序：{n_failed} 个是 LLM 调用失败（{kinds}；详细的在 OpenEvolve 的日志里）"
            + (f"，{rest} 个是回复打不上、没改动……" if rest else "")
            + (f"；被截断的那些：{advice}" if advice and advice not in res.get("gave_up", "") else ""))


def _kept(output: str) -> dict | None:
    """evaluator 在 output 里记下的 {"score": 训练形状上的分数, "code": 程序}；没有（还没完整评估过一个程序）或者
    读不懂时是 None。"""
    try:
        with open(os.path.join(output, BEST_FILE), encoding="utf-8") as f:
            kept = json.load(f)
        return dict(score=float(kept["score"]), code=str(kept["code"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def kept_best(output: str):
    """跑到一半停下的运行里，evaluator 记下的最好的程序（完整评估过的里面训练形状上最好的），用 evolve.parse 读；
    没有或者读不了时是 None。"""
    from evolve import ProgramError, parse
    kept = _kept(output)
    try:
        return None if kept is None else parse(kept["code"], filename="OpenEvolve 停下之前最好的程序")
    except ProgramError:
        return None


def kept_said(output: str, say) -> None:
    """Ctrl-C 时（"已中断。"之前）：evaluator 记下过最好的程序，就用一句话说它在哪、训练形状上多少（文件里记的分数，
    不重算：要在一秒内停下），下次默认的 make openevolve 会清空输出目录。没有就不说。"""
    kept = _kept(output)
    if kept is None:
        return
    score = kept["score"]
    from evolve.problem import display_path
    say(f"停下之前完整评估过的最好程序（训练形状上比专家快 {score:.3f}×）存在 {display_path(os.path.join(output, BEST_FILE))}"
        + ("；下次 make openevolve 会清空这个目录，要留着就先复制走。" if os.path.abspath(output) == os.path.abspath(OUTPUT) else "。"))


def evaluator_problem() -> str | None:
    """evaluator.py 写坏了（学生改它）：一句话（文件:行: 哪里错、怎么办）；没问题时是 None。先编译（语法错误），再在
    这个进程里载入它，对起点程序（starting_program）依次调用 OpenEvolve 会调用的 evaluate_stage1、evaluate_stage2、
    evaluate。学生报过：evaluator.py 少了一个冒号，make openevolve 只说"OpenEvolve 出错退出：看日志的最后几行"；
    evaluate_stage2 里拼错一个变量名，每个完整评估都出错，make openevolve 却说那些程序"在探针级就停了"。
    载入时不 import OpenEvolve（要一秒多）：evaluator 的 _result 没有它就回同样内容的字典。"""
    import tempfile
    import traceback
    import types

    from evolve.openai_llm import shown
    from evolve.problem import display_path
    where = display_path(EVALUATOR)
    fix = "改好它，或者 git checkout lecture14/openevolve/evaluator.py 恢复原样"
    try:
        with open(EVALUATOR, "rb") as f:
            code = compile(f.read(), EVALUATOR, "exec")
    except SyntaxError as e:
        return f"{where}:{e.lineno or 1}: 语法错误（{shown(str(e.msg), 200)}），OpenEvolve 载入不了它：{fix}。"
    except (OSError, ValueError) as e:
        return f"{where}: 读不了这个文件（{shown(str(getattr(e, 'strerror', None) or e), 200)}）：{fix}。"
    module = types.ModuleType("_mini_alphaevolve_oe_evaluator")
    module.__file__ = EVALUATOR
    step = "载入它的时候"
    blocked = "openevolve" not in sys.modules and "openevolve.evaluation_result" not in sys.modules
    if blocked:
        sys.modules["openevolve.evaluation_result"] = None       # import 它就是 ImportError：走字典那条路
    try:
        with tempfile.TemporaryDirectory(prefix="mini_oe_check_") as tmp:
            start = starting_program(tmp)
            exec(code, module.__dict__)
            if not callable(getattr(module, "evaluate", None)):
                return f"{where}: 没有 evaluate 函数（OpenEvolve 载入 evaluator 时要它）：{fix}。"
            for name in ("evaluate_stage1", "evaluate_stage2", "evaluate"):
                fn = getattr(module, name, None)
                if callable(fn):
                    step = f"{name} 给起点程序打分时"
                    fn(start)
    except Exception as e:                                        # noqa: BLE001  学生改出来的任何错
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == EVALUATOR]
        line = f":{lines[-1]}" if lines else ""
        return (f"{where}{line}: {step}出错（{type(e).__name__}: {shown(str(e), 200)}），OpenEvolve 评估时也会这样："
                f"{fix}。")
    finally:
        if blocked:
            sys.modules.pop("openevolve.evaluation_result", None)
    return None


def best_program(res: dict):
    """OpenEvolve 最好的程序（用本讲的 evolve.parse 读，从不执行）。"""
    from evolve import parse
    return parse(res["best_code"], filename="OpenEvolve 最好的程序")


def evaluated_best(res: dict, output: str, train, table):
    """(程序, 训练形状上的分数, 返回的分数)：OpenEvolve 返回的最好程序，和 evaluator 在 output 里记下的、它完整评估过的
    最好的程序（best_so_far.json）比，训练形状上高的那个（分数用本讲的 evolve 重算）。返回的分数：OpenEvolve 返回的
    那个比它评估过的最好的低时是它的分数（要说一声），否则 None。学生报过：07 的曲线（完整评估过的最好分数）高过
    表里 OpenEvolve 最后的最好程序——它返回的不是它评估过的最好的那个。本讲的循环比的是它评估过的最好程序，
    OpenEvolve 也一样比。"""
    from evolve import geomean_speedup
    best = best_program(res)
    score = geomean_speedup(best, train, table)
    kept = kept_best(output)
    if kept is not None:
        kept_score = geomean_speedup(kept, train, table)
        if kept_score > score * (1 + 1e-9):
            return kept, kept_score, score
    return best, score, None


def returned_said(label: str, returned: float, score: float) -> str:
    """OpenEvolve 返回的最好程序比它评估过的最好的低时，说一声（evaluated_best）。"""
    return (f"{label} 最后返回的最好程序训练形状上是 {returned:.3f}×，比它完整评估过的最好的（{score:.3f}×）低："
            "这里用的是后者（evaluator 记在输出目录的 best_so_far.json 里），本讲的循环也是拿它评估过的最好的程序来比。")


def rules_said(program) -> str:
    """"8 条规则，其中 1 条是死规则"（走不到，或者去掉也一样：simplify 删得掉）：OpenEvolve 的最好程序常带着。"""
    from evolve import simplify
    dead = program.n_rules() - simplify(program).n_rules()
    return f"{program.n_rules()} 条规则" + (f"，其中 {dead} 条是死规则" if dead else "")


_FROM_CONFIG = object()


def check_configured(base: str, model: str, key=_FROM_CONFIG) -> str | None:
    """config.yaml 换成了别的服务器：开跑之前用本讲的客户端 GET {api_base}/models 看一眼（和 --llm 一样：连不上、
    拒绝、转向、没有这个模型都是一句话）。不然 OpenEvolve 会对着一个没开的服务器跑完全部提议、退出码 0，只说
    "没变成子程序"。没问题时是 None。"""
    from evolve.openai_llm import Names, OpenAILLM, ServerUnreachable, is_loopback, clean_url
    try:
        u = urllib.parse.urlsplit(base)
    except ValueError:
        u = None
    # 讲师的复查报过：api_base 带着查询串（Azure 式的 ?api-version=…、?key=…）时，OpenEvolve（OpenAI 的 SDK）把路径
    # 接在查询串的后面，发到 /v1?key=…/chat/completions，地址连同查询串进了它的日志。本讲的客户端（--llm）认查询串。
    if u is not None and (u.query or u.fragment or ";" in u.path):
        part = "查询串（?…）" if u.query else "“#…”" if u.fragment else "“;…”参数"
        return (f"config.yaml 的 LLM 用不了：api_base 带着{part}，OpenEvolve 会把 chat/completions 接在它后面、"
                f"请求发错地方，它还会进日志；把 api_base 改成 {clean_url(base)} 这样的地址，密钥写在 api_key "
                f"或者环境变量 OPENAI_API_KEY 里。")
    key = configured_key() if key is _FROM_CONFIG else key
    placeholder = "在 config.yaml 的 llm 下写一行 api_key: not-needed（占位符，不是秘密：OpenEvolve 用的 openai 库没有密钥就不肯发请求）"
    if isinstance(key, str) and not key.strip():               # 讲师的复查报过：api_key: "" 时检查放行（不带密钥问
        return ("config.yaml 的 LLM 用不了：config.yaml 的 api_key 是空的，OpenEvolve 用的 openai 库不肯发请求"   # /models），
                "（Missing credentials），也不会改用环境变量 OPENAI_API_KEY：要用环境变量里的密钥就删掉 api_key 那一行；"  # OpenEvolve
                "不要密钥的服务器写 api_key: not-needed 这样的占位符。")                               # 一开跑就出错
    if key is None and not os.environ.get("OPENAI_API_KEY"):  # 讲师报过：删了 api_key 那行、又没设环境变量，OpenEvolve
        return (f"config.yaml 的 LLM 用不了：config.yaml 里没有 api_key，环境变量 OPENAI_API_KEY 也{'是空的' if 'OPENAI_API_KEY' in os.environ else '没设'}，"
                "OpenEvolve 用的 openai 库没有密钥就不肯发请求（Missing credentials）：托管的 API 把密钥放进环境变量 "
                f"OPENAI_API_KEY；不要密钥的服务器（ollama 之类）{placeholder}。")   # 开跑就报 Missing credentials
    # 讲师报过：config.yaml 里写着 api_key: ${OPENAI_API_KEY}（展开就是付钱的密钥）或者直接贴了密钥，明文 http:// 的
    # 别的机器照样发过去——只拦了环境变量里的。OpenEvolve 自己不拦：这里拦。占位符（PLACEHOLDER_KEYS）不是秘密，照发
    host = u.hostname if u is not None else None
    if (key and key.lower() not in PLACEHOLDER_KEYS and u is not None and u.scheme == "http" and host
            and not is_loopback(host)):
        return (f"config.yaml 的 LLM 用不了：api_key 会经明文 http:// 发给 {clean_url(base)}（不是本机的回环地址），一路上谁都"
                "看得到它，所以不发。托管的 API 用 https:// 的地址；不要密钥的服务器（别的机器上的 ollama 之类）把 api_key "
                "换成占位符 not-needed。")
    names = Names(address="config.yaml 的 api_base 地址", model="config.yaml 的 name", no_key=placeholder,
                  use="就把 config.yaml 的 api_base 改成 {}",       # 这里没有 --llm、--model
                  # 讲师报过：config.yaml 里写着 api_key 时，401 照样让人检查环境变量（发出去的是 config.yaml 的那个）
                  key=("环境变量 OPENAI_API_KEY" if key is None else
                       "config.yaml 的 api_key（发出去的是它；删掉那一行才用环境变量 OPENAI_API_KEY）"))
    try:
        llm = OpenAILLM(base, model, api_key=key, timeout=10, names=names)
        if llm.proxy_said():                                  # OpenEvolve 也经它（和这次检查一样，见 child_env）
            VIA_PROXY.append(llm.proxy_said())
        llm.check()
    except ServerUnreachable as e:
        return f"config.yaml 的 LLM 用不了：{e}。"
    except ValueError as e:                                   # 地址写错了（不是 http/https 之类）
        return f"config.yaml 的 LLM 用不了：{e}。"
    return None


def check_endpoints() -> str | None:
    """check_configured 查 config.yaml 里 OpenEvolve 会问的每个模型（configured_endpoints）；第一句问题（没有是 None）。
    不止一个时，那句话说是哪一个。"""
    endpoints = configured_endpoints()
    VIA_PROXY.clear()                                         # 这一次检查经过的代理（streak_said 说出来）
    for base, model, key in endpoints:
        problem = check_configured(base, model, key)
        if problem and len(endpoints) > 1:
            from evolve.openai_llm import clean_url
            head = "config.yaml 的 LLM 用不了："
            problem = (f"config.yaml 的 LLM 用不了（模型 {shown_name(model)}，api_base {clean_url(base)}）："
                       + problem.removeprefix(head))
        if problem:
            return problem
    return None


def main(argv=None) -> int:
    sys.path[:0] = [LECTURE14, os.path.join(ROOT, "lecture01")]
    from runner import ensure_numpy, int_between, on_interrupt, parser, progress, say
    from console import print_note, print_try    # 解析参数之前 import：--gpu 不是默认的 GPU 时"可以试试"的命令带上它
    ap = parser("第 14 讲的问题交给 OpenEvolve，离线对着 MockLLM 服务器（或 config.yaml 里的模型）跑一次。")
    ap.add_argument("--iterations", type=int_between(1, MAX_ITERATIONS), default=ITERATIONS,
                    help=f"提议的个数，1 到 {MAX_ITERATIONS:,}（默认 {ITERATIONS}；1000 和 04 的默认预算一样）")
    ap.add_argument("--seed", type=int_between(0, MAX_SEED), default=0,
                    help=f"OpenEvolve 和 MockLLM 的随机种子，0 到 {MAX_SEED:,}（默认 0）")
    ap.add_argument("--output", default=None, help="OpenEvolve 的输出目录（默认 lecture14/openevolve/output，每次清空重来）")
    a = ap.parse_args(argv)
    need_openevolve(MISSING, "python3 lecture14/openevolve/run_openevolve.py")   # 在 .venv 里装了就换成它（审读报过）
    ensure_numpy()
    from evolve import TimeTable, geomean_speedup, oracle_speedup, render, split_shapes
    from evolve.openai_llm import clean_url, shown
    from evolve.problem import display_path
    output = a.output or OUTPUT
    if a.output is None and os.path.isdir(output):
        shutil.rmtree(output)
    elif os.path.isdir(output) and os.listdir(output):
        say(f"输出目录 {output} 不是空的：换一个 --output，或者先把它删掉。")
        return 2
    procs = Processes()
    on_interrupt(procs.close)
    on_interrupt(lambda: kept_said(output, say))     # 讲师报过：Ctrl-C 停下长的运行，不知道最好的程序存下了、下次会被清空
    try:
        base, model = configured_llm()
    except ValueError as e:
        say(str(e) if str(e).endswith(("。", "？")) else str(e) + "。")
        return 2
    mock = is_mock_base(base)
    refused = config_refusal()
    if refused:
        say(refused)
        return 2
    for note in env_notes():                           # 不悄悄扔掉：说一声
        progress(note)
    problem = evaluator_problem()                      # 学生改坏了 evaluator.py：开服务器、起 OpenEvolve 之前一句话
    if problem:
        say(problem)
        return 2
    for note in start_notes():                         # 专家改过、initial_program.py 改过（不读它）：和 04、06 一样先说
        print_note(note)
    try:
        if mock:
            progress(f"开 MockLLM 服务器，再让 OpenEvolve {VERSION} 跑 {a.iterations} 个提议（进度在这里；Ctrl-C 随时停下）……")
            if model != MOCK_MODEL:                     # 学生报过：只改了 name，悄悄还是 MockLLM
                progress(f"（config.yaml 的 api_base 还是 MockLLM 服务器的地址，models 下的 name（{shown_name(model)}）这次"
                         "不管用：问的还是 MockLLM。换成真的模型要把 api_base 也改掉，写法在 config.yaml 开头）")
            server, url = start_server(procs, a.seed)
            watch = server_gone(server)
        else:
            problem = check_endpoints()
            if problem:
                say(problem)
                return 2
            progress(f"OpenEvolve {VERSION} 问 config.yaml 里的 {clean_url(base)}（模型 {shown(model, 100)}），"
                     f"跑 {a.iterations} 个提议……")
            url, watch = None, None
        res = run_openevolve(procs, url, a.iterations, a.seed, output, watch=watch,
                             progress=lambda k, n: progress(f"  OpenEvolve：{k}/{n} 个提议"), note=progress)
    except RuntimeError as e:
        say(str(e))
        kept = kept_best(output)
        if kept is not None:                                  # 停下之前找到的最好的程序不丢：印出来（也在输出目录里）
            table, (train, test) = TimeTable(), split_shapes()
            print_note(f"OpenEvolve {VERSION} 没有跑完 {a.iterations} 个提议（原因见标准错误）。停下之前完整评估过的程序里，"
                       f"训练形状上最好的是这个（用本讲的 evolve 重新算：训练形状上比专家快 "
                       f"{geomean_speedup(kept, train, table):.3f}×，测试形状上 {geomean_speedup(kept, test, table):.3f}×；"
                       f"{rules_said(kept)}；也存在 {display_path(os.path.join(output, BEST_FILE))}）：")
            print(render(kept), end="")
        return 1
    finally:
        procs.close()
    table = TimeTable()
    train, test = split_shapes()
    best, tr, returned = evaluated_best(res, output, train, table)
    te = geomean_speedup(best, test, table)
    who = ("LLM 是 MockLLM 服务器（没有真的语言模型）" if mock else      # 地址里的用户名、密码、查询串不印（讲师报过）
           f"LLM 是 {shown(model, 100)}（config.yaml 的 {clean_url(base)}）")
    from kernel_lab import GPU
    print_note(f"OpenEvolve {VERSION} 跑第 14 讲的问题：{a.iterations} 个提议，种子 {a.seed}；{who}，时间来自第 13 讲的解析模型"
               f"（{GPU.short} 的参数，不是实测）。")
    print_note(f"最好的程序（用本讲的 evolve 重新算：训练形状上比专家快 {tr:.3f}×，测试形状上 {te:.3f}×，"
               f"训练形状上是逐形状最优的 {tr / oracle_speedup(train, table):.0%}；{rules_said(best)}）：")
    print(render(best), end="")
    if returned is not None:
        print_note(returned_said(f"OpenEvolve {VERSION}", returned, tr))
    c = count(res)
    print_note(f"{a.iterations} 个提议：{c['full']} 个做了完整评估，{c['probe']} 个在探针级就停了，"
               f"{c['rejected']} 个读不懂或启动不了（0 分）{eval_error_said(c['eval_error'])}，{no_child_said(c, res)}。")
    print_note(f"OpenEvolve 的输出（日志、best/、evolution_trace.jsonl）在 {display_path(output)}。")
    print_try([("和本讲的迷你循环并排比：同一个问题、同一个 MockLLM、每边同样的预算，各跑两个种子：",
                "python3 lecture14/07_openevolve.py")]
              + ([("换一个种子再跑一次，看 OpenEvolve 一次和一次差多少（同一个种子它也不保证每次走同一条路：原因在它内部）：",
                   next_seed_command(a))] if mock else []))
    inside = res.get("seconds_inside", res["seconds"])
    progress(f"（用时 {res['seconds']:.1f} 秒：OpenEvolve 启动和收尾 {res['seconds'] - inside:.1f} 秒，"
             f"{a.iterations} 个提议 {inside:.1f} 秒，每个 {inside / a.iterations:.2f} 秒）")
    if res.get("gave_up"):                           # 和停下时一样是退出码 1（本讲的 --llm 接连失败时也是）
        say(f"（退出码 1：{res['gave_up']}。）")
        return 1
    return 0


def next_seed_command(a) -> str:
    """"换一个种子"的命令：下一个种子（不是这次的：讲师报过 --seed 1 跑完又建议 --seed 1），这次改过的提议数照写。"""
    extra = [f"--iterations {a.iterations}"] if a.iterations != ITERATIONS else []
    return f'make openevolve ARGS="{" ".join([f"--seed {a.seed + 1}", *extra])}"'


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, LECTURE14)
        sys.exit(child(json.loads(sys.argv[2])))
    sys.path[:0] = [LECTURE14, os.path.join(ROOT, "lecture01")]
    from runner import install_ctrl_c, run
    install_ctrl_c()                                         # 和编号脚本一样的 Ctrl-C（一秒内停下、一行话）
    sys.exit(run(main))
