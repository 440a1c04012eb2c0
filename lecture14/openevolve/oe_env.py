"""
make openevolve 和 07 的一部分：OpenEvolve 的进程拿到的环境——装了 OpenEvolve 没有（仓库的 .venv 里装了就换成它），
环境里不传给它的变量（OPENAI_ 开头的、它用的 httpx 走不了的代理）和说出来的那几句，本机的地址不走代理，临时文件、
最好的程序、开跑时的专家放在输出目录里。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库。
"""

from __future__ import annotations

import importlib.util
import os
import sys

from oe_start import BEST_ENV, BEST_FILE, EXPERT_SNAPSHOT, starting_program


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
