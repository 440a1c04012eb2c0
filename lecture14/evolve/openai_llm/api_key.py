"""
密钥：不打印、不记日志、不写进文件，服务器回的回复里要是出现了它，也先抹掉（redact）——原样的、URL 编码过的、
写进 JSON 时转义过的，和屏幕上还认得出是它的改写（大写、夹着看不见的字符、拆成两行、长得像的字母……）。
normalized 是"归一以后的字母、数字"（tests 用它查抹干净了没有）。
"""

import functools
import itertools
import json
import re
import unicodedata
import urllib.parse


def redact(text: str, key: str | None) -> str:
    """抹掉文本里的密钥（原样的和 URL 编码过的：服务器能把收到的密钥放进模型名、转向地址、回复里回给我们），也抹掉
    屏幕上还认得出是它（或它的一大段）的改写：见 _fragment_spans。很短的"密钥"（本机服务器常用的占位符，如 EMPTY）
    不算秘密，也不能抹：会把回复抹坏。花的时间和文本的长度成正比，每个字只在 C 里过几遍（str.replace、translate、
    encode、count），找到的每处密钥再花一微秒上下（最多 MAX_PIECES 处）：讲师的复查报过，以前逐字在 Python 里归一、
    逐个记下找到的每处，一个特意凑的 1 MB 回复要 2.7 秒 CPU（--llm-timeout 管不到）；现在寻常的回复一两百分之一秒，
    特意凑的（1 MB、上万段密钥碎片夹着 é）也不到半秒，随长度线性增长。"""
    if not key or len(key) < 8:
        return text
    forms = {key, urllib.parse.quote(key, safe=""), urllib.parse.quote_plus(key),
             json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1]}  # 写进 JSON 时转义过的
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    grams = _key_grams(key)
    if not grams:
        return text
    spans = _fragment_spans(text, grams)                    # 原文里的（非 ASCII 的字当作夹在中间的东西）
    if not text.isascii():                                  # 全角、数学粗体、西里尔字母……：归一以后才看得出是它
        spans += _fragment_spans(text, grams, _units(text))
    if not spans:
        return text
    # 两种读法找到的都抹掉，抹的是原文：别的字一个不改（讲师的复查报过：以前找到一段就整段换成归一过的文字，
    # "（改了）café" 变成 "(改了)cafe"；归一以后找到了一段，原文里才认得出的另一段反而漏了）
    out, last = [], 0
    for a, b in _merged(spans):
        out.append(text[last:a] + "***")
        last = b
    return "".join(out) + text[last:]


# 长得和拉丁字母、数字一样、NFKC 也不换的字母：西里尔、希腊、小型大写字母、切罗基、傈僳字母和几个拉丁扩展字母里
# 最常见的那些（讲师的复查报过傈僳大写字母和 Ƽ、ϲ）。这是一张有限的表：Unicode 里长得像的字还有更多
_HOMOGLYPHS = str.maketrans(dict(zip(
    "аеорсхуѕіјкԁһӏԛԝАВЕКМНОРСТХЅІЈΑΒΕΖΗΙΚΜΝΟΡΤΥΧοντϲϹϳ" "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ" "ᎪᏴᏟᎠᎬᏀᎻᏆᎫᏦᏞᎷᏢᎡᏚᎢᏙᏔᏃ"
    "ꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ" "ƼƽƷʒɑɡıȷ",
    "aeopcxysijkdhlqwABEKMHOPCTXSIJABEZHIKMNOPTYXovtcCj" "abcdefghijklmnoprstuvwyz" "ABCDEGHIJKLMPRSTVWZ"
    "BPDTGKJCZFMNLSRVHWXYAEIOU" "5533agij")))
_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_FRAGMENT = 8              # 密钥里连着的这么多个字母、数字在文本里出现（不分大小写，中间夹什么都行）就抹掉。讲师的复查
#                            报过 12 时拆成每段 10 个就漏了；随便一段正文碰巧是随机密钥的连着 8 个，机会不到万亿分之一


# 一个字节一个字节地换（在 C 里）：大写换成小写，小写以后 l、i 看着像 1、o 像 0，也换掉；不是字母、数字的删掉
_CANON_BYTES = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz").translate(
    bytes.maketrans(b"lio", b"110"))
_NOT_ALNUM_BYTES = bytes(c for c in range(128) if chr(c) not in _ALNUM)


def _canon(text: str, keep: bytes = b"") -> str:
    """text 里的 ASCII 字母、数字，小写、l、i 换成 1、o 换成 0，别的字都删掉（keep 里的 ASCII 字符留着）。"""
    return text.encode("ascii", "ignore").translate(_CANON_BYTES, _NOT_ALNUM_BYTES.translate(None, keep)).decode()


def _letters_of(chars) -> list[str]:
    """每个字归一以后是哪几个字母、数字（_canon 过的；大多是一个或没有）：长得像的字换成它们（表换一次；希腊的月形
    sigma ϲ 经 NFKD 会变成 ς，就不像 c 了），NFKD（全角、数学粗体变成拉丁字母，带附加符号的字母拆开）再去掉附加符号
    （ś 就是 s：学生看得出），表再换一次，最后 _canon。所有的字拼成一段一起换（在 C 里；\x00 隔开，NFKD 不跨过它：
    chars 里不能有 \x00）。"""
    joined = unicodedata.normalize("NFKD", "\x00".join(chars).translate(_HOMOGLYPHS))
    marks = dict.fromkeys(ord(x) for x in set(joined) if unicodedata.combining(x))    # 附加符号：删掉
    return _canon(joined.translate(marks).translate(_HOMOGLYPHS), keep=b"\x00").split("\x00")


_ASCII_UNITS = {c: _canon(chr(c)) for c in range(128)}     # ASCII 的字不用归一（\x00 也在里面：_letters_of 用它隔开）
_UNITS = dict(_ASCII_UNITS)        # 字（码位）-> _letters_of 给它的字母、数字；非 ASCII 的字用到时才算、记下来
_UNITS_KEPT = 300_000              # 最多记住这么多个字（再多就从头记：不让服务器把它撑大）
# 归一以后一个字母、数字也不是的字，不用一个个地算：汉字、谚文音节、第 2 到 16 平面（又是汉字、标签字符、私用区；
# tests 里一个个地查过）。一个 1 MB 的回复里能有二十几万个不同的这种字（讲师的复查报过：逐个算要零点几秒）
_NO_LETTERS = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\U00020000-\U0010ffff]+")


def _units(text: str) -> dict:
    """text 里每个字归一以后是哪几个字母、数字（str.translate 用的表，_letters_of 算的）。_NO_LETTERS 里的字不在表里
    （translate 留着它们，_normalized 再删掉），别的都在。没见过的字一起算、记下来：花的时间和 text 的长度（在 C 里
    过几遍）加上没见过的字的个数成正比。"""
    global _UNITS
    units = _UNITS
    new = [c for c in set(_NO_LETTERS.sub("", text)) if ord(c) not in units]
    if new:
        if len(units) + len(new) > _UNITS_KEPT:
            units = _UNITS = dict(_ASCII_UNITS)
        units.update(zip(map(ord, new), _letters_of(new)))
    return units


def _normalized(text: str, units: dict) -> str:
    """text 归一以后的字母、数字连起来（units 是 _units(text)）。"""
    return text.translate(units).encode("ascii", "ignore").decode()


def normalized(text: str) -> str:
    """text 归一以后的字母、数字连起来：长得像的、全角、带附加符号的都换成了它们（tests 用它查抹干净了没有）。"""
    return _normalized(text, _units(text))


@functools.lru_cache(maxsize=8)
def _key_grams(key: str) -> frozenset:
    """密钥的字母、数字（_canon 过的）里每一段连着的 _FRAGMENT 个；不到 8 个字母、数字的密钥没有（太短，会误伤正文）。"""
    k = _canon(key)
    if len(k) < 8:
        return frozenset()
    w = min(_FRAGMENT, len(k))
    return frozenset(k[i:i + w] for i in range(len(k) - w + 1))


MAX_PIECES = 10_000        # 一段文字里密钥的碎片（_key_grams 里的一段出现一次算一处）超过这么多处，整段都当密钥抹掉：
#                            正常的文字里一处也没有；逐处抹每处要一微秒上下（讲师的复查报过：一个 1 MB 的回复抹了 2.7 秒）


def _fragment_spans(text: str, grams: frozenset, units: dict | None = None) -> list[tuple[int, int]]:
    """改头换面的密钥：只看文本里的字母和数字（不分大小写，l、i 当 1，o 当 0），它们连起来里出现了密钥的一大段
    （_key_grams 里的一段），那一段——从它的第一个字符到最后一个，夹在中间的空格、换行、看不见的字符、别的话
    都算——要抹掉。讲师报过：服务器把密钥大写、逐字夹上 U+FE0F、空格隔开、拆成两行（中间夹着别的话）、l 写成 1
    再回显，屏幕上照样认得出。base64 之类的编码不管：屏幕上看不出是它。units：None 时只认 ASCII 的字母、数字（别的字
    都当夹在中间的东西）；是 _units(text) 时按归一以后的读。返回这些段在 text 里的 [起, 止)（可能重叠）；超过
    MAX_PIECES 处时是整段。花的时间和文本的长度成正比（在 C 里：找每一段、数每一段），加上每处一次（最多 MAX_PIECES 次）。"""
    if units is None:
        norm, counts = _canon(text), map(_ALNUM.__contains__, text)          # counts：每个字在 norm 里占几个（0 或 1）
    else:
        norm, counts = _normalized(text, units), map(len, map(units.get, map(ord, text), itertools.repeat("")))
    pieces = sum(norm.count(g) for g in grams)
    if not pieces:                                          # 常见的情形：一处也没有
        return []
    if pieces > MAX_PIECES:
        return [(0, len(text))]
    w = len(next(iter(grams)))
    found = []
    for g in grams:
        j = norm.find(g)
        while j >= 0:
            found.append((j, j + w))
            j = norm.find(g, j + 1)
    at = list(itertools.chain.from_iterable(map(itertools.repeat, itertools.count(), counts)))   # at[k]：norm 的第 k 个字
    return [(at[a], at[b - 1] + 1) for a, b in found]                                          # 来自 text 的第几个字


def _merged(spans) -> list[list[int]]:
    """[起, 止) 的几段，重叠或挨着的并成一段，按顺序。"""
    out: list[list[int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
