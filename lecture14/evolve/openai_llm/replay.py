"""
回放：ReplayLLM(文件名) 从 --record 录下的文件里按顺序回答（用到哪一行读到哪一行），不联网（from_arguments 开跑前
在标准错误上说一句这是回放：哪个文件、文件头记下的录制时间、模型、地址：announced）；提示和录的不一样（代码或参数改了）
就抛 ReplayMismatch，它故意不是 Exception 的子类，进化循环不会把它当成一次失败的提议吞掉，而是整个运行停下来。
没有结束行的文件是录到一半被打断的：开跑前说一声，放到录下的最后一次调用为止。replay_command 是回放一个文件要用的
那条命令（照抄就能跑）。
"""

import codecs
import os
import re
import stat

from sched_lab import GPU

from ..problem import gbk_to_utf8_command, os_words
from ..program import COMMAND_INDENT
from .api_key import redact
from .backend import Backend
from .calls import CUTS_COUNTED, Call, params_said
from .errors import ReplayMismatch
from .prompt import SYSTEM_PROMPT
from .reply import cut_reason
from .settings import (FORMAT, MAX_CONCURRENCY, MAX_LLM_TOKENS, MAX_NAME, MAX_REPLY_BYTES, MAX_TOKENS, SWITCHABLE,
                       VERSION)
from .text import loads, shown

MAX_RECORD_LINE = 2 * MAX_REPLY_BYTES + 4_000_000   # 录制文件的一行（一次调用：提示、回复连 JSON 转义）最多这么多字节
MAX_RECORD_BYTES = 4_000_000_000                    # 整个录制文件最多这么多字节


class ReplayHeaderError(ValueError):
    """回放文件的第一行不是 --record 写的文件头。"""


class ReplayLLM(Backend):
    """从 --record 录下的文件里按顺序回答，不联网。同样的参数回放，标准输出和录制时逐字节相同。
    录制时的并发数（它决定提议怎样分批）、模型名从文件头里读。文件一行一行地读，用到哪一行读到哪一行：开跑前只读
    文件头（普通文件再看一眼最后一行：录到一半被打断的文件开跑前就说），内存里只有正在读的那一行（讲师的复查报过：
    以前开跑前先把整个文件读进内存，320 MB 的录制文件要 21 秒、700 MB 内存）。后面哪一行不是 --record 写的，回放
    读到那一行时停下（ReplayMismatch，一句话说是哪个文件的第几行）；这次用不到的行不读。"""
    parallel = False                                     # 提议按顺序一个一个地读（不开线程；录制时怎样分批照旧）
    notify = None                                        # 说"录制时换过参数"的那句（from_arguments 给；None 不说）

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        # --record 写文件时抹掉了密钥；手改过的文件里要是有环境里的密钥，回放照样不印它（讲师报过）
        self._key = os.environ.get("OPENAI_API_KEY")
        self._lineno = self._bytes = self._read = 0       # 读到第几行、一共读了多少字节、读了几次调用
        self._unused = (-1, 0)                            # unused() 数过的：(从第几个字节数起, 几行)
        self._end_at: int | None = None                   # 最后一行只写了一半时：它从第几个字节起（读到那里就当文件完了）
        self.half_line: int | None = None                 # 那一行是第几行（incomplete_said 说）
        self.served: str | None = None                    # 第一次调用时服务器报的模型名（_check_encoding 读；announced 说）
        self._switch_said = False                         # 录制时换过参数的那句说过了
        try:
            self._file = open(path, "rb")
        except OSError as e:
            raise ValueError(f"{path}：读不了回放文件（{os_words(e)}）；检查路径，要的是 --record 录下的那个文件") from None
        try:
            self.header = self._header()
        except BaseException:
            self.close()
            raise
        header = self.header
        # 录完了吗：第 2 版的文件看最后一行——结束行 True，一次调用（或者只有文件头）False，读不懂的 None（回放读到
        # 那一行时说它哪里不对，开跑前不多说一句）；第 1 版的看不出来（None）
        self.complete = (False if self.half_line is not None else
                         self._ends_with_end_line() if _version(header) >= 2 else None)
        self.model = header["model"]
        self.concurrency = header.get("concurrency", 1)
        self.max_tokens = header.get("max_tokens", MAX_TOKENS)   # 被截断的回复，句子里说上限是多少（_check_header 查过）
        # 被截断、修改没写完的回复算不算"接连失败"：照录的时候那一版的代码（1–4 版录的时候不算，也没为它们放弃）
        self.cut_counts = _version(header) >= CUTS_COUNTED
        recorded_gpu = header.get("gpu")
        if isinstance(recorded_gpu, str) and recorded_gpu != GPU.key:   # 系统提示里有 GPU：先说真正的原因
            self.close()
            command = replay_command(path, header.get("settings"), recorded_gpu)   # 参数也要和录制时一样：整条命令
            raise ReplayMismatch(f"回放文件 {path} 是在 --gpu {shown(recorded_gpu, 20)} 下录的，这次是 --gpu {GPU.key}："
                                 f"加上 --gpu {shown(recorded_gpu, 20)} 再回放（提示里有 GPU 的数，换了 GPU 回复就对不上）"
                                 + (f"，照抄下面这条命令：\n{COMMAND_INDENT}{command}" if command else "。"))
        if header.get("system_prompt") != SYSTEM_PROMPT:
            self.close()
            raise ReplayMismatch(f"回放文件 {path} 录制时用的系统提示和现在的不一样（evolve/openai_llm/prompt.py 改过）："
                                 "录下的回复是对另一段提示说的，不能回放；用现在的代码重新 --record。")

    def close(self) -> None:
        self._file.close()

    # ---- 一行一行地读（每行、整个文件都有上限：讲师报过，--replay /dev/zero 一直读到被系统杀掉，拿错成几 GB 的
    #      模型文件也一样） ----
    def _line(self) -> bytes:
        """下一行（原样的字节，带着换行）；读完了是 b""（只写了一半的最后一行不算）。太长、文件太大、读不了：抛 ValueError（一句话）。"""
        if self._end_at is not None and self._bytes >= self._end_at:
            return b""
        try:
            raw = self._file.readline(MAX_RECORD_LINE + 1)
        except (OSError, ValueError) as e:                # ValueError：文件已经关了
            why = os_words(e) if isinstance(e, OSError) else "文件已经关了"
            raise ValueError(f"{self.path}：读不了回放文件（{why}）；要的是 --record 录下的那个文件") from None
        if raw:
            self._lineno += 1
            self._bytes += len(raw)
            if len(raw) > MAX_RECORD_LINE or self._bytes > MAX_RECORD_BYTES:
                raise self._bad(f"一行超过 {MAX_RECORD_LINE / 1e6:g} MB" if len(raw) > MAX_RECORD_LINE else
                                f"文件超过 {MAX_RECORD_BYTES / 1e9:g} GB")
        return raw

    def _bad(self, why: str, lineno: int | None = None) -> ValueError:
        return ValueError(f"{self.path}:{lineno or self._lineno}: 这一行不是 --record 写的格式（{why}）；回放只认 --record 录下的 "
                          "JSON Lines 文件")

    def _object(self, raw: bytes) -> dict | None:
        """一行 -> JSON 对象；空行是 None。读不懂抛 ValueError（一句话：第几行、为什么）。"""
        try:
            line = raw.decode("utf-8-sig" if self._lineno == 1 else "utf-8")   # 记事本另存时加的 BOM（讲师报过：
        except UnicodeDecodeError:                                            # 说成"不是 JSON"）
            raise self._not_utf8(raw, self._lineno) from None
        if not line.strip():
            return None
        try:
            obj = loads(line)
        except (ValueError, RecursionError) as e:
            if not raw.endswith(b"\n") and isinstance(e, ValueError):       # 最后一行后面没有换行：录的时候被打断了
                raise ValueError(f"{self.path}:{self._lineno}: 最后一行没写完（录的时候被打断了？）；重新 --record") from None
            raise self._bad("嵌得太深" if isinstance(e, RecursionError) else "不是 JSON") from None
        if not isinstance(obj, dict):
            raise self._bad("不是 --record 写的那种 JSON 对象")
        return obj

    def _not_utf8(self, raw: bytes, lineno: int) -> ValueError:
        """第 lineno 行（raw）不是 UTF-8 时的那句话：读得成 GBK 的（讲师报过：在 Windows 上用记事本打开、改了一个字、
        存成了 ANSI，课上回放放完演示 1 才说"不是 --record 写的格式"）说多半是另存成了 GBK，下一行是转回 UTF-8 的命令。"""
        try:
            raw.decode("gbk")
        except UnicodeDecodeError:
            return self._bad("不是 UTF-8 的文字", lineno)
        return ValueError(f"{self.path}:{lineno}: 这一行不是 UTF-8，看起来是 GBK（用记事本之类的编辑器另存过？）；--record 写的"
                          f"是 UTF-8：用原来的文件，或者照抄下面这条命令转回 UTF-8：\n{COMMAND_INDENT}{gbk_to_utf8_command(self.path)}")

    def _check_encoding(self) -> None:
        """开跑前看一眼文件头后面的 64 KB 是不是 UTF-8：不是就现在说（_not_utf8），不等回放到那一行——那时演示已经印了
        一半。文件头是 ASCII，另存成 GBK 的文件第一行照样读得懂，坏的是第一次调用的提示（中文）。"""
        try:
            chunk = os.pread(self._file.fileno(), 1 << 16, self._bytes)
        except OSError:
            return                                        # 读不了的，回放读到那里时说
        chunk = chunk[:chunk.rfind(b"\n") + 1] or chunk   # 整行（64 KB 里没有换行：看这一段的开头）
        try:
            codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
        except UnicodeDecodeError as e:
            line = chunk[:chunk.find(b"\n", e.start) + 1 or len(chunk)]
            line = line[line.rfind(b"\n", 0, e.start) + 1:]
            raise self._not_utf8(line, self._lineno + chunk.count(b"\n", 0, e.start) + 1) from None
        first = chunk.split(b"\n", 1)[0] if b"\n" in chunk else b""      # 第一次调用：服务器报的模型名（announced 说）
        try:
            obj = loads(first.decode("utf-8")) if first.strip() else None
        except (ValueError, RecursionError):
            obj = None                                    # 读不懂的，回放读到那里时说
        model = obj.get("model") if isinstance(obj, dict) and obj.get("type") == "call" else None
        if _plain(model) and len(model) <= MAX_NAME:
            self.served = redact(model, self._key)

    def _header(self) -> dict:
        """第一行：--record 写的文件头（文件头里的每段文字都可能被印出来：settings、gpu……先抹密钥）。"""
        raw = self._line()
        obj = self._object(raw) if raw else None
        if obj is None:                                   # 第一行是空行：整个文件都是空行，就是空的
            while raw and not raw.strip():
                raw = self._line()
            if not raw:
                raise ValueError(f"{self.path} 是空的：回放要 --record 录下的文件（录的时候被打断了？重新 --record）")
        header = None if obj is None else {k: redact(v, self._key) if isinstance(v, str) else v for k, v in obj.items()}
        self._check_header(self.path, header)            # 第一行就不对（拿错了文件）：不往下读
        self._check_last_line()
        self._check_encoding()
        return header

    def _check_last_line(self) -> None:
        """普通文件：整个文件太大开跑前就说，不等回放到那里；最后一行只写了一半（录的时候进程被杀掉了，正在写那一行）
        记下它在哪里（_end_at、half_line）：回放放到它前面那一行为止，开跑前说没录完（讲师的复查报过：以前整个文件
        一行都不肯放，要再花钱录一遍）。只读文件末尾的一行（最后一个字节是换行时只读它）。"""
        try:
            st = os.fstat(self._file.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size <= self._bytes:
                return
            if st.st_size > MAX_RECORD_BYTES:
                raise ValueError(f"{self.path} 超过 {MAX_RECORD_BYTES / 1e9:g} GB，不是 --record 录下的文件（回放只认 "
                                 f"--record 录下的 JSON Lines 文件，整个文件最多 {MAX_RECORD_BYTES / 1e9:g} GB）")
            if os.pread(self._file.fileno(), 1, st.st_size - 1) == b"\n":   # 常见的情形：最后一行完整（坏不坏，
                return                                                      # 回放读到时再说）
            start = max(self._bytes, st.st_size - MAX_RECORD_LINE - 1)
            tail = os.pread(self._file.fileno(), st.st_size - start, start)
        except OSError:
            return                                        # 读不了的，回放读到那里时说
        if b"\n" not in tail and len(tail) > MAX_RECORD_LINE:
            return                                        # 最后一行太长：回放读到时说
        last = tail.rsplit(b"\n", 1)[-1]
        try:
            if last.strip():
                loads(last.decode("utf-8"))
            return
        except (ValueError, RecursionError):
            pass
        with open(self.path, "rb") as f:                  # 说是第几行：数一遍换行（在 C 里；只在有半行时）
            self.half_line = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) + 1
        self._end_at = st.st_size - len(last)

    def _ends_with_end_line(self) -> bool | None:
        """最后一行（去掉末尾的空行）是 --record 录完时写的结束行：True；是一次调用、或者文件头后面什么也没有：False；
        别的（读不懂、读不了、不是普通文件）：None。只读文件末尾的几 KB。"""
        try:
            st = os.fstat(self._file.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            start = max(self._bytes, st.st_size - 4096)
            tail = os.pread(self._file.fileno(), st.st_size - start, start)
        except OSError:
            return None
        if not tail.strip():                             # 只有文件头：一次调用也没录下
            return False
        last = tail.rstrip().rsplit(b"\n", 1)[-1]
        if b"\n" not in tail.rstrip() and start > self._bytes:   # 末尾 4 KB 里没有换行：最后一行很长，只能是一次调用
            return False if last.endswith(b"}") else None
        try:
            obj = loads(last.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        return True if obj.get("type") == "end" else False if obj.get("type") == "call" else None

    def announced(self) -> str:
        """开跑前在标准错误上说的那句：这是回放、录的是哪个模型（哪个地址；服务器报的模型名和 --model 不一样时也说，
        比如桩服务器的 "test-stub (scripted replies, not a language model)"）、什么时候录的（文件头里的 recorded；早先录的
        文件没记）。标准输出和录制时逐字节相同，说"问它"的那几行在回放时也一样：讲师报过，课上学生看到的只有
        "LLM：qwen2.5-coder:7b……每个提议问它一次"，看不出这是几天前录下的一次运行的回放。"""
        h = self.header
        url = h.get("base_url")
        parts = ([f"服务器报的模型名是 {shown(self.served, 100)}"] if self.served and self.served != self.model else []) + \
                ([shown(url, 100)] if isinstance(url, str) and url else [])
        where = f"（{'，'.join(parts)}）" if parts else ""
        when = h.get("recorded")
        dated = isinstance(when, str) and when
        return (f"（回放 {self.path}：{shown(when, 40) + ' ' if dated else ''}对着 {shown(self.model)}{where}录下的运行"
                f"{'' if dated else '（文件里没记什么时候录的）'}，照录下的回答重放，不联网、不问模型。）")

    def incomplete_said(self) -> str:
        """文件没录完（第 2 版、没有结束行）时开跑前说的那句话（from_arguments 用 notify 说；回放照样开跑）。"""
        if self.half_line is not None:
            return (f"（回放文件 {self.path} 没录完：最后一行（第 {self.half_line} 行）只写了一半（录的时候进程被杀掉了？），"
                    "不算；它前面录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）")
        return (f"（回放文件 {self.path} 没录完：最后没有录完时才写的结束行（录的时候按了 Ctrl-C、进程被杀掉了，或者磁盘满了）；"
                "录下的调用照样回放，用完了回放就停在那里，要放全程就重新 --record。）")

    def _next_call(self) -> tuple[int, Call] | None:
        """文件里的下一次调用：(行号, Call)；读完了是 None。不是 --record 写的行抛 ValueError（一句话）。"""
        while raw := self._line():
            obj = self._object(raw)
            if obj is None or obj.get("type") != "call":
                continue
            try:
                return self._lineno, _recorded_call(obj, self._key)
            except (KeyError, TypeError) as e:
                raise self._bad("缺了该有的字段" if isinstance(e, KeyError) else "不是 --record 写的那种 JSON 对象") from None
        return None

    @staticmethod
    def _check_header(path: str, header) -> None:
        """第一行是 --record 写的文件头吗（格式、模型名、并发数、token 上限）；不是抛 ReplayHeaderError（一句话）。"""
        model, concurrency = (header.get("model"), header.get("concurrency", 1)) if isinstance(header, dict) else (0, 0)
        limits = [header.get(k, MAX_TOKENS) for k in ("max_tokens", "max_completion_tokens")] if isinstance(header, dict) else [0]
        if (not isinstance(header, dict) or header.get("format") != FORMAT or not _plain(model)
                or len(model) > MAX_NAME or type(concurrency) is not int or not 1 <= concurrency <= MAX_CONCURRENCY
                or not all(type(n) is int and 1 <= n <= MAX_LLM_TOKENS for n in limits)):   # 句子里会印出来
            raise ReplayHeaderError(f"{path}:1: 第一行不是 --record 写的文件头；回放只认 --record 录下的 JSON Lines 文件")
        version = header.get("version", 1)
        if type(version) is int and version > VERSION:    # 更新的代码录的（或者手改过）：行的写法这份代码不一定认得
            raise ReplayHeaderError(f"{path}:1: 文件头说这是第 {version} 版的录制文件，这份代码只认到第 {VERSION} 版：用录它的"
                                    "那份代码回放（先 git pull 到同一个版本），或者用这份代码重新 --record")

    def check(self) -> None:
        """回放不联网，没什么要查的。"""

    def unused(self) -> int:
        """文件里还有几次调用没用上（录制时问得比这次多）：数读到的地方后面还有几行（不是空行的；只数换行，不解析；
        录完了的文件不数最后的结束行）。数过一次就记下（04、05 问两次）。"""
        if self._unused[0] == self._bytes:
            return self._unused[1]
        left, content = 0, False
        try:
            with open(self.path, "rb") as f:
                f.seek(self._bytes)
                while (chunk := f.readline(1 << 16)) and (self._end_at is None or f.tell() <= self._end_at):
                    content = content or bool(chunk.strip())
                    if chunk.endswith(b"\n"):
                        left, content = left + content, False
        except OSError:
            return 0
        left = max(0, left + content - (self.complete is True))
        self._unused = (self._bytes, left)
        return left

    def _fetch(self, n: int, text: str) -> Call:
        with self._lock:
            got = None
            try:
                while self._read <= n and (got := self._next_call()) is not None:   # 按顺序：第 n 次调用是第 n 个
                    self._read += 1
            except ValueError as e:                   # 后面的一行坏了：读到它时停下，和开跑前说的是同一句
                raise ReplayMismatch(str(e)) from None
        if got is None:
            where = f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 只录了 {self._read} 次调用"
            if self.complete is False:                # 讲师报过：录的时候按了 Ctrl-C 的文件，说的是"--budget 比录制时大"
                raise ReplayMismatch(f"{where}、没录完（文件最后没有录完时才写的结束行：录的时候按了 Ctrl-C、进程被杀掉了，"
                                     "或者磁盘满了）；录下的只能回放到这里，要放全程就重新 --record。")
            if self.complete:
                raise ReplayMismatch(f"{where}，是录完了的：这次问得比录制时多（代码或参数和录制时不同）；用录制时的代码和参数"
                                     "回放，或者重新 --record。")
            raise ReplayMismatch(f"{where}（这次的 --budget、--seeds 比录制时大，或者代码改了，或者文件没录完整），"
                                 "用录制时的参数回放，或者重新 --record。")
        lineno, call = got
        if call.n > n and self.complete is False:     # 被 Ctrl-C 截住的录制：第 n 次那时还在路上，后面回来了的录在它后面
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 里没有这一次、没录完（录的时候按 Ctrl-C 时它"
                                 f"还没回来；第 {lineno} 行起录的是那时已经回来、排在它后面的调用）；录下的只能回放到这里，"
                                 "要放全程就重新 --record。")
        if call.n != n:                               # 讲师报过：只有序号不对时说"录的是（没有这一行），现在是（没有这一行）"
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：{self.path} 第 {lineno} 行录的是第 {call.n + 1} 次调用，"
                                 "文件里的调用缺了、多了或者顺序乱了（改过这个文件？）；用 --record 重新录。")
        if call.prompt != text:
            raise ReplayMismatch(f"回放停在第 {n + 1} 次 LLM 调用：这次的提示和 {self.path} 第 {lineno} 行录下的不一样"
                                 f"（{_first_difference(call.prompt, text)}）：录制之后代码或参数变了，或者这个文件前面录的回复被改过"
                                 "（提示里的程序是由前面的回复改出来的）；用录制时的代码、参数和原来的文件回放，或者重新 --record。")
        if call.params and not self._switch_said:      # 录制时换过参数（推理模型）：和录制时一样，说一次
            self._switch_said = True
            if self.notify is not None:
                self.notify(f"（回放：录制时 {self.model} 被当作推理模型，从第 {n + 1} 次调用起发的是 "
                            f"{params_said(call.params)}、不发 max_tokens 和 temperature，被拒的请求换了参数重发过"
                            "（算在发出去的请求里）；回放照录下的回答，不联网。）")
        return call


def _version(header: dict) -> int:
    """文件头里的版本号（没写、写得不对的当作 1）。"""
    v = header.get("version", 1)
    return v if type(v) is int else 1


def _plain(text) -> bool:
    """text 是不是一个不带控制字符的非空字符串（--record 写进文件里、回放时要印出来的模型名和失败的种类都是）。"""
    return isinstance(text, str) and text != "" and shown(text, None) == text


_PARAM_NAME = re.compile(r"[a-z_]{1,40}")          # 录制文件里 params 的键：回放时会印出来


def _recorded_call(obj: dict, key: str | None = None) -> Call:
    """录制文件里的一行 -> Call（提示、回复、模型名、失败的种类里的密钥 key 抹掉：回放时它们都可能被印出来）。
    字段的类型不对、失败的种类超过 MAX_NAME 个字符（不是 --record 写的）抛 TypeError。"""
    optional = {"requests": 1, "params": None, "resent": None, "cut_off": None}   # 早先（第 1–3 版）录的文件里没有它们
    c = Call(**{k: obj[k] for k in Call.__dataclass_fields__ if k not in optional},
             **{k: obj.get(k, default) for k, default in optional.items()})
    count = lambda v: v is None or (type(v) is int and 0 <= v < 10**12)  # noqa: E731  讲师报过："-7 个 token"、几十位的数
    if not (type(c.n) is int and isinstance(c.prompt, str) and (c.reply is None or isinstance(c.reply, str))
            and (c.error is None or (_plain(c.error) and len(c.error) <= MAX_NAME))   # 种类是一句短话：印在表里
            and (c.reply is None) != (c.error is None)
            and type(c.latency) in (int, float) and 0 <= c.latency < 1e6                  # 负的、nan、300 位的秒数
            and (c.model is None or len(c.model) <= MAX_NAME)
            and count(c.prompt_tokens) and count(c.completion_tokens)
            and type(c.requests) is int and 0 <= c.requests <= 1000
            and (c.params is None or (type(c.params) is dict and 0 < len(c.params) <= 4 and all(   # 发出去的采样参数
                _PARAM_NAME.fullmatch(k) and type(v) in (int, float) for k, v in c.params.items())))
            and (c.resent is None or c.resent in SWITCHABLE)
            and (c.cut_off is None or (c.reply is not None and cut_reason(c.cut_off) is not None))
            and (c.model is None or isinstance(c.model, str))):
        raise TypeError
    for field in ("prompt", "reply", "model", "error"):
        if getattr(c, field) is not None:
            setattr(c, field, redact(getattr(c, field), key))
    return c


def _first_difference(a: str, b: str) -> str:
    """两段提示从第几行起不同，各是什么（截短）。"""
    la, lb = a.split("\n"), b.split("\n")
    i = next((k for k in range(min(len(la), len(lb))) if la[k] != lb[k]), min(len(la), len(lb)))
    cut = lambda s: s if len(s) <= 60 else s[:57] + "…"  # noqa: E731
    got = lambda ls: repr(cut(ls[i])) if i < len(ls) else "（没有这一行）"  # noqa: E731
    return f"从第 {i + 1} 行起：录的是 {got(la)}，现在是 {got(lb)}"


_SAFE_WORD = re.compile(r"[A-Za-z0-9_.,:=+-]{1,100}")   # 录制时的参数里照抄进命令的一个词（手改过的文件头不照抄）


def replay_command(path: str, recorded, gpu=None) -> str | None:
    """回放这个文件要用的那条命令（在仓库根目录照抄就能跑）："python3 lecture14/04_…py --replay 文件 录制时的参数"，
    录制时不是默认的 GPU 再加上 --gpu。录制时的参数（文件头的 settings，"04 --seed 0 --budget 50 --seeds 1"）开头的编号
    找不到脚本、参数里有别的字符（手改过的文件头）时是 None（只说要用录制时的脚本和参数）。讲师报过：那句话只说
    "是用“02 --seed 0 --after 100”录的"，"02" 是哪个脚本、命令怎么写，要自己拼。"""
    import shlex
    import gpus
    words = recorded.split() if isinstance(recorded, str) else []
    if not words or not re.fullmatch(r"\d\d", words[0]) or not all(_SAFE_WORD.fullmatch(w) for w in words[1:]):
        return None
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # lecture14
    try:
        scripts = sorted(n for n in os.listdir(here) if n.startswith(words[0] + "_") and n.endswith(".py"))
    except OSError:
        return None
    if len(scripts) != 1:
        return None
    # 录制时的 GPU 不是默认的，或者这次选的（环境变量）不是它：写上 --gpu
    extra = (["--gpu", gpu] if isinstance(gpu, str) and gpu in gpus.GPUS
             and (gpu != gpus.DEFAULT or gpu != GPU.key) else [])
    root = os.path.dirname(here)                      # 命令在仓库根目录运行（和"可以试试"一样）：文件名从那里写
    if not os.path.isabs(path) and os.path.realpath(os.getcwd()) != os.path.realpath(root):
        path = os.path.relpath(os.path.abspath(path), root)
    return " ".join(shlex.quote(w) for w in ["python3", f"{os.path.basename(here)}/{scripts[0]}", "--replay", path,
                                              *words[1:], *extra])
