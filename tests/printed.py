"""读脚本印出来的东西：按标题切成演示、按 ---- 行找表格（按显示宽度切列）、把观察拼回整句、把印出来的数和独立算的值比。
只靠表头里的词和行首的标签找东西，不靠第几行：脚本多印几行（进度、图）不影响。测试里从不抄印出来的数。"""

from __future__ import annotations

import re
import unicodedata

FAILED = "【本次不成立】"                    # console.FAILED（这个文件不 import 课程模块）

NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?")
RULE = re.compile(r"^-+(?:  -+)*$")
CONTINUED = "（续上表）"          # console.format_table 分段印的表：第二段起每段上面的一行


def unfold(text: str) -> str:
    """"可以试试"里一行放不下、按 shell 续行折开的命令（行尾 " \\"，下一行多缩进：console.command_lines）拼回一行：
    折开的地方原来就是一个空格。读命令的测试先 unfold；照印出来的样子（带续行）交给 bash 跑的是 continued_commands。"""
    return re.sub(r" \\\n *", " ", text)


def continued_commands(text: str) -> list[str]:
    """印出来的、折成了几行的命令，原样（几行，带行尾的 " \\" 和续行的缩进）。"""
    return [m.group(0) for m in re.finditer(r"^ *\S.* \\\n(?: +.* \\\n)* +\S.*$", text, re.M)]


def width(ch: str) -> int:
    """测试自己量的列宽（不用被测的 layout.display_width）：组合字符（Mn、Me，泰文的 ั、U+FE0F 也是）0 列，宽字符 2 列。"""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def sections(text: str) -> dict[str, str]:
    """标题（==== 夹着的那行；终端比标题窄时折成的几行按 join_header 拼回去）→ 它下面直到下一个标题的文字；
    第一个标题之前的记在 "" 下。"""
    lines = text.split("\n")
    out, title, body = {}, "", []
    i = 0
    while i < len(lines):
        k = next((k for k in (2, 3, 4) if i + k < len(lines) and set(lines[i]) == {"="} and set(lines[i + k]) == {"="}
                  and all(line and set(line) != {"="} for line in lines[i + 1:i + k])), None)
        if k is not None:
            out[title] = "\n".join(body)
            title, body = join_header(lines[i + 1:i + k]), []
            i += k + 1
            continue
        body.append(lines[i])
        i += 1
    out[title] = "\n".join(body)
    return out


class SectionMissing(LookupError):
    """要读的那一节没印（或印了不止一次）：测试读不到它要核对的东西——conftest 报成"没跑完"，不是"讲义论断不成立"
    （助教报过：A100 上 02 照实没印演示 2，读它的测试被报成论断不成立）。"""


def section(text: str, prefix: str) -> str:
    """标题以 prefix 开头的那一节（恰好一节）。"""
    found = [body for title, body in sections(text).items() if title.startswith(prefix)]
    if len(found) != 1:
        raise SectionMissing(f"标题以 {prefix!r} 开头的节有 {len(found)} 个（要恰好一个）；印出来的节：{list(sections(text))}")
    return found[0]


class Table:
    def __init__(self, headers: list[str], rows: list[list[str]], lines: list[str] | None = None,
                 span: tuple[int, int] = (0, 0)):
        self.headers, self.rows = headers, rows
        self.lines = lines or []                       # 印出来的样子：表头的几行、---- 行、数据行
        self.span = span                               # 在文字里的行号：[第一行表头, 最后一行数据 + 1)

    def col(self, *words: str) -> int:
        """表头里含有全部 words 的那一列（恰好一列；只给一个词、有几列都含它时，取正好叫这个名字的那列）。"""
        found = [j for j, h in enumerate(self.headers) if all(w in h for w in words)]
        if len(found) > 1 and len(words) == 1:                # 有一列正好叫这个名字，就是它
            found = [j for j in found if self.headers[j] == words[0]] or found
        assert len(found) == 1, (words, self.headers)
        return found[0]

    def row(self, prefix: str) -> list[str]:
        """第一格以 prefix 开头的那一行（恰好一行）。"""
        found = [r for r in self.rows if r[0].startswith(prefix)]
        assert len(found) == 1, (prefix, [r[0] for r in self.rows])
        return found[0]

    def groups(self) -> dict[str, dict[str, list[str]]]:
        """第一格是分组名、后面几行第一格空着的表（04 演示 3）：分组名 → {第二格 → 行}。"""
        out: dict[str, dict[str, list[str]]] = {}
        name = None
        for r in self.rows:
            name = r[0] or name
            out.setdefault(name, {})[r[1]] = r
        return out


def _cut(line: str, spans: list[tuple[int, int]]) -> list[str] | None:
    """按列切一行；列间的两格不是空白的（不是表格的行，比如紧跟在表格下面的说明文字）返回 None。"""
    cells, col = [""] * len(spans), 0
    for ch in line:
        w = width(ch)
        j = next((j for j, (a, b) in enumerate(spans) if a <= col and col + w <= b), None)
        if j is None:
            if not ch.isspace():
                return None
        else:
            cells[j] += ch
        col += w
    return [c.strip() for c in cells]


def join_header(chunks: list[str]) -> str:
    """一列表头折成的几段拼回原文：console 只在空格处（两边至少一边是西文）或两个宽字符之间折，
    所以接缝两边有西文就补回一个空格，否则直接连上。"""
    out = ""
    for chunk in filter(None, chunks):
        if out and (width(out[-1]) < 2 or width(chunk[0]) < 2):
            out += " "
        out += chunk
    return out


def header_block(lines: list[str], i: int) -> list[str]:
    """---- 行（第 i 行）上面的表头：紧挨着它的连续几行非空行（表格太宽时表头折成了几行）。"""
    j = i
    while j > 0 and lines[j - 1].strip():
        j -= 1
    return lines[j:i]


def tables(text: str) -> list[Table]:
    """文字里所有 console.format_table 排的表：表头（一行或几行）、---- 行（给出每列的显示宽度）、数据行直到空行。
    折成几行的表头，每列的几段按 join_header 拼回原文。太宽、分成几段（列块）印的表拼回一张：第二段起上面有一行
    "（续上表）"，开头几列（行的名字）和上一段相同，后面的列接到上一段的右边。"""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if i == 0 or not RULE.match(line) or not lines[i - 1].strip():
            continue
        spans, col = [], 0
        for dashes in line.split("  "):
            spans.append((col, col + len(dashes)))
            col += len(dashes) + 2
        above = header_block(lines, i)
        continued = bool(above) and above[0] == CONTINUED and bool(out)
        parts = [_cut(h, spans) for h in above[continued:]]
        while parts and parts[0] is None:              # 表头上面紧挨着的说明文字不是表头
            parts.pop(0)
        if not parts or None in parts:
            continue
        head = [join_header(list(chunks)) for chunks in zip(*parts)]
        top = lines[i - len(parts):i]
        rows = []
        for body in lines[i + 1:]:
            cells = _cut(body, spans) if body.strip() else None
            if cells is None:                              # 空行或不是表格的行：表格到此为止
                break
            rows.append(cells)
        block = top + [line] + lines[i + 1:i + 1 + len(rows)]
        if continued:
            prev = out[-1]
            keys = next(k for k in range(len(head) + 1) if k == len(head) or k == len(prev.headers)
                        or head[k] != prev.headers[k])
            assert 1 <= keys < len(head) and len(rows) == len(prev.rows), (prev.headers, head)
            assert all(r[:keys] == p[:keys] for r, p in zip(rows, prev.rows)), (prev.headers, head)
            out[-1] = Table(prev.headers + head[keys:], [p + r[keys:] for p, r in zip(prev.rows, rows)],
                            prev.lines + ["", CONTINUED] + block, (prev.span[0], i + 1 + len(rows)))
            continue
        out.append(Table(head, rows, block, (i - len(parts), i + 1 + len(rows))))
    return out


def find_table(text: str, *words: str) -> Table:
    """表头（所有列连起来）含有全部 words 的那张表（恰好一张）。"""
    found = [t for t in tables(text) if all(any(w in h for h in t.headers) for w in words)]
    assert len(found) == 1, (words, [t.headers for t in tables(text)])
    return found[0]


def _same_key(a: Table, b: Table, text_lines: list[str]) -> bool:
    """b 是不是 a 的下一块：中间只隔着空行，第一列表头一样，每行的第一格一样。"""
    gap = text_lines[a.span[1]:b.span[0]]
    return (not any(line.strip() for line in gap) and a.headers[0] == b.headers[0]
            and [r[0] for r in a.rows] == [r[0] for r in b.rows])


def wide_tables(text: str) -> list[Table]:
    """和 tables 一样（tables 已经把"（续上表）"分段印的宽表拼回一张），另外把只隔着空行、第一列（键）和每行的
    第一格都一样的相邻几张表也拼成一张。宽度曾经超过 100 列的表都经过这里找。"""
    lines = text.split("\n")
    out: list[Table] = []
    for t in tables(text):
        if out and _same_key(out[-1], t, lines):
            last = out[-1]
            out[-1] = Table(last.headers + t.headers[1:], [a + b[1:] for a, b in zip(last.rows, t.rows)],
                            last.lines + t.lines, (last.span[0], t.span[1]))
        else:
            out.append(t)
    return out


def find_wide_table(text: str, *words: str) -> Table:
    """find_table，但按 wide_tables 把分成几块的宽表拼回来再找。"""
    found = [t for t in wide_tables(text) if all(any(w in h for h in t.headers) for w in words)]
    assert len(found) == 1, (words, [t.headers for t in wide_tables(text)])
    return found[0]


def observations(text: str, title: str = "观察") -> list[str]:
    """"观察："下面编号的每一条，续行拼回去。折行吃掉了折行处的空格：两边都是西文时补回一个（"70B/8 qkv" 不会变成
    "70B/8qkv"），有一边是汉字时不补（那里原来可能有空格，也可能没有，所以正则里的空格要写成 \\s*）。"""
    lines = text.split("\n")
    start = lines.index(f"{title}：")
    items: list[str] = []
    for line in lines[start + 1:]:
        m = re.match(r"  (\d+)\. (.*)$", line)
        if m and int(m[1]) == len(items) + 1:
            items.append(m[2])
        elif items and line.startswith("     ") and line.strip():
            more = line.strip()
            items[-1] += (" " if items[-1][-1:].isascii() and more[:1].isascii() else "") + more
        else:
            break
    return items


class ObservationFailed(AssertionError):
    """find 要找的是一句观察成立时的话，这次它印成了【本次不成立】：测试要核对的数无从核对，是讲义的一句话不成立了
    （换了 GPU、加了形状……），不是引擎把数算错了。conftest 报告失败时第一行这样说。"""


def find(pattern: str, text: str) -> re.Match:
    """在 text 里找 pattern：先把折行接回去（换行和下一行的缩进去掉），pattern 里的空格匹配任意多个空白，包括没有
    （折行会吃掉空格）。"""
    joined = re.sub(r"\n[ ]*", "", text)
    m = re.search(pattern.replace(" ", r"\s*"), joined)
    if not m and FAILED in text:                     # 要找的是成立时的那句话，这次它印成了不成立：直说是哪一句
        numbered = re.search(r"^  \d+\. ", text, flags=re.M)     # 原样的观察（带编号、有续行），或 observations() 拼的一行一条
        items = re.split(r"\n(?=  \d+\. )", text) if numbered else text.split("\n")
        failed = [item for item in items if FAILED in item]
        raise ObservationFailed(f"找不到成立时的那句话（{pattern}）：这次印的是【本次不成立】——这次不成立的是："
                             + " ".join(failed))
    assert m, (pattern, text)
    return m


def numbers(cell: str) -> list[float]:
    return [float(x.replace(",", "")) for x in NUMBER.findall(cell)]


def number(cell: str) -> float:
    """单元格里的第一个数（去掉千分位的逗号）。"""
    found = numbers(cell)
    assert found, cell
    return found[0]


def shows(printed: str, value: float, scale: float = 1.0) -> bool:
    """printed（"1.266×"、"92%"、"164,736"、"2.9%"）里的第一个数是不是 value × scale 按印出来的位数四舍五入的结果。"""
    m = NUMBER.search(printed)
    assert m, printed
    digits = len(m[0].split(".")[1]) if "." in m[0] else 0
    return abs(float(m[0].replace(",", "")) - value * scale) <= 0.5 * 10 ** -digits + 1e-9 * max(1.0, abs(value * scale))


def pct_shows(printed: str, fraction: float) -> bool:
    assert "%" in printed, printed
    return shows(printed, fraction, 100)


def gave_up_at_the_end(p) -> bool:
    """--llm 的运行接连失败、不再调用 LLM 时：照样跑完，最后在标准错误上再说一遍、退出码 1（openai_llm.finish）。"""
    from evolve.openai_llm import GAVE_UP_SAID
    flat = "".join(p.stderr.split())                          # 那句按终端宽度折过行：整段连起来找最后一句
    last = flat.rsplit("（退出码1：", 1)[-1] if "（退出码1：" in flat else ""
    return p.returncode == 1 and last.startswith("".join(GAVE_UP_SAID.split())) and "Traceback" not in p.stderr
