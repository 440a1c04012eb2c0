"""
make openevolve 和 07 的一部分：config.yaml——照 OpenEvolve 自己的读法读它（openevolve.config），它会问哪些服务器、
用哪个密钥，OpenEvolve 读的时候悄悄不管的设置（拼错的名字），开跑之前就拒绝的设置（embedding、manual_mode、别的
provider），换成别的服务器时开跑之前用本讲的客户端问它一次（check_configured、check_endpoints）。

run_openevolve.py 开头说这个目录里每个文件放的是哪一部分。只用标准库；读 config.yaml 要 OpenEvolve 装着（PyYAML、dacite）。
"""

from __future__ import annotations

import importlib.util
import os
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "config.yaml")
VERSION = "0.4.0"


MOCK_BASE = "http://127.0.0.1:8765/v1"        # config.yaml 里指着 MockLLM 服务器的地址（它的默认端口）
# 不是秘密的 api_key（本机服务器常用的占位符，不分大小写）：明文 http:// 发给别的机器也没关系；别的 api_key 都当密钥
PLACEHOLDER_KEYS = ("not-needed", "not-needed-for-the-mock", "empty", "none", "ollama", "dummy", "no-key")
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


def read_config():
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
    llm = read_config().llm
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
    llm = read_config().llm
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
        return None                                         # 读不了的，read_config 说（一句话）

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
    cfg = read_config()
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
    llm = read_config().llm
    first = llm.models[0] if llm.models else None
    return first.api_key if first else llm.api_key


def configured_timeout() -> float | None:
    """config.yaml 里一个请求最多等几秒（llm.timeout；几个模型各写了自己的时取最长的）；读不出来是 None。"""
    try:
        llm = read_config().llm
        found = [t for t in [llm.timeout, *(m.timeout for m in llm.models)] if isinstance(t, (int, float)) and t > 0]
    except (ValueError, AttributeError):
        return None
    return max(found, default=None)


VIA_PROXY: list[str] = []      # 开跑前的检查经过的代理（"环境变量 http_proxy 的代理 http://…"）：失败时一并说出来


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
