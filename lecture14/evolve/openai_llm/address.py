"""
地址：--llm 给的那一个（clean_url：录进文件、印出来的只有协议、主机、端口和路径）、本机的回环地址（is_loopback：
明文 http 只把密钥发给本机；连上以后还看对方真的地址，peer_is_loopback）、环境变量里的代理（proxy_url）。
读不成的地址印出来的样子是 said_url（用户名、密码、查询串换成"…"）。
"""

import re
import socket
import urllib.parse

from .text import shown

ENDPOINTS = ("/chat/completions", "/completions", "/models")   # 接在 --llm 后面的接口：--llm 本身不该以它们结尾


def clean_url(url: str) -> str:
    """去掉地址里的用户名、密码、路径里的“;参数”、查询串和“#…”（录进文件、印出来的只有这个）。"""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    path = u.path.split(";")[0].rstrip("/")
    return urllib.parse.urlunsplit((u.scheme, host + (f":{u.port}" if u.port else ""), path, "", ""))


def said_url(url: str) -> str:
    """读不成（或不合规矩）的地址印出来的样子：用户名、密码、查询串换成"…"（讲师报过：--llm "http://h:99999/v1?key=sk-…"
    的报错里原样印着密钥），控制字符转义、太长截断。"""
    url = re.sub(r"(?<=//)[^/?#]*@", "…@", url)
    return shown(re.sub(r"[?#].*", "?…", url, flags=re.S), 100)


def proxy_url(proxy: str, env: str):
    """环境变量里的代理地址 -> urlsplit 的结果；读不懂（端口不对、方括号没配对、不是 http://）就抛 ValueError，
    一句话说是哪个环境变量（讲师报过：https_proxy=http://127.0.0.1:99999 得到的是一串 traceback）。"""
    text = proxy if "://" in proxy else "http://" + proxy
    try:
        p = urllib.parse.urlsplit(text)
        ok = p.scheme == "http" and bool(p.hostname) and p.port != 0
    except ValueError:
        ok = False
    if not ok:
        shown_proxy = re.sub(r"(://)?[^/@]*@", lambda m: (m.group(1) or "") + "***@", proxy, count=1)  # 不印代理的密码
        scheme = text.split("://", 1)[0].lower()
        if scheme != "http" and re.fullmatch(r"[a-z][a-z0-9+.-]{0,15}", scheme):   # 读得懂，只是这种代理走不了
            raise ValueError(f"环境变量 {env} 里的代理 {shown(shown_proxy, 100)} 是 {scheme}:// 的：本讲的 HTTP 客户端"
                             "（--llm、make openevolve 开跑前的检查）只会经 http:// 的代理连；换成 http:// 的代理地址，"
                             "或者这次运行不设它")                  # 讲师报过：说成"读不懂"
        raise ValueError(f"环境变量 {env} 里的代理地址 {shown(shown_proxy, 100)} 读不懂：要像 http://主机:端口 这样，"
                         "端口是 1 到 65535 的整数；改对它，或者这次运行不设它")
    return p


def is_loopback(host: str) -> bool:
    """本机的地址：localhost、::1（和 ::ffff:127.x 的写法）、127.0.0.0/8 的任何写法（127.1、127.0.0.2、0x7f.1……）。
    只认字面的写法：localhost. 、foo.localhost 这样的名字这台机器会去问 DNS，答案由别人定（讲师报过：假的 DNS 把
    它们指到别的机器，密钥就明文发过去了）。真连上以后还要看对方的地址（peer_is_loopback）。"""
    host = host.lower()
    if host == "localhost":
        return True
    try:
        return _loopback_ip(host)
    except ValueError:
        pass
    try:
        return socket.inet_aton(host)[0] == 127
    except OSError:
        return False


def peer_is_loopback(sock) -> bool:
    """连上的对方是不是本机（看真的地址，不看名字）。"""
    try:
        return _loopback_ip(sock.getpeername()[0])
    except (OSError, ValueError, IndexError):
        return False


def _loopback_ip(text: str) -> bool:
    """一个 IP 地址（字符串）是不是本机：127.0.0.0/8、::1、::ffff:127.x。不是 IP 地址抛 ValueError。"""
    import ipaddress
    ip = ipaddress.ip_address(text.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)
