"""
连接出的错怎么对人说：net_words（连不上的原因，常见的几种用中文说）、unreachable_advice（该怎么办：主机名错了、
https 对着 http 的端口、证书不对、经代理连的，都不是"先启动它"）、redirect_sentence（GET /models 被转向时的一句话：
不跟过去，地址是服务器给的，先 shown() 过）。
"""

import errno
import re
import socket
import ssl
import urllib.parse

from .address import clean_url
from .errors import COMMAND_LINE, Names
from .text import shown

NO_HOST = "找不到这个主机名，域名解析失败"            # net_words 的两种说法，unreachable_advice 按它们给建议
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


def unreachable_advice(detail: str, names: Names = COMMAND_LINE, proxy: str | None = None, scheme: str = "") -> str:
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


def redirect_sentence(where: str, status: int, location: str | None, names: Names = COMMAND_LINE) -> tuple[str, str]:
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
