"""
录制：record=文件名 时每次调用写一行 JSON（提示、回复、用时、token 数、模型名、发了几个请求；换成推理模型的
参数的调用另有 params（发的是哪组）、被拒过重发了的另有 resent、被截断的另有 cut_off（见 VERSION）；没有密钥），一回来就写，
按提议的顺序（同时在路上的几个里，前面的还没回来时后面的先留着）；Ctrl-C 时已经回来的都写上（_interrupted），一行不会
只写一半、也不会写两遍。脚本正常跑完时（finish）最后写一行结束行：没有它的文件是录到一半被打断的，回放开跑前说一声，
放到录下的最后一次调用（或者 Ctrl-C 时还没回来的那一次）为止。写不进去了（磁盘满了）就停下录制，运行照常跑完。
"""

import json
import os
import re
import time

from sched_lab import GPU

from ..problem import os_words
from .address import clean_url
from .calls import Call, call_line
from .prompt import SYSTEM_PROMPT
from .settings import FORMAT, READ_GRACE, VERSION

_SURROGATE = re.compile("[\ud800-\udfff]")       # 落单的代理项（见 Recording._line）


class Recording:
    """OpenAILLM 的录制部分（OpenAILLM 继承它）。状态（_record、_rec、_held、_next_record、_reading、_cut）由
    OpenAILLM.__init__ 建好；抹密钥用它的 _redact，说话用它的 notify。"""

    def _close_file(self) -> None:
        """（在 self._rec 下面）关上录制文件。"""
        if self._record is not None:
            try:
                self._record.close()
            except OSError:                          # 最后一点写不进去（磁盘满了）：录制文件本来就不完整了
                pass
            self._record = None

    def _cut_here(self) -> None:
        """（在 self._rec 下面）录制停在这里：留着的调用写在还在路上的那次后面，关上文件，以后不再写、也不写结束行。"""
        self._cut = True
        try:
            self._write_all_held()
        finally:
            self._held.clear()
            self._close_file()

    def record_to(self, path: str, settings: str = "") -> None:
        """从现在起把每次调用录进 path（JSON Lines；第一行是文件头：脚本和参数 settings、模型、地址、并发数、
        采样参数（max_tokens、换成推理模型的参数以后的 max_completion_tokens）、GPU、录制的时间、系统提示；录完时 end_recording
        写最后的结束行）。path 已经有内容时抛 FileExistsError：开跑前查过，这里用"x"再挡一次（查和打开
        之间别的程序写了它，也不清空它：那可能是花钱录的）；空文件照写。"""
        empty = os.path.isfile(path) and os.path.getsize(path) == 0
        self._record = open(path, "wb" if empty else "xb", buffering=0)   # 不带缓冲：写了几个字节，文件里就是几个
        self._record_path, self._recorded = path, 0       # 写完整了的行一共多少字节（写到一半失败时截回这里）
        try:
            self._write(dict(type="header", format=FORMAT, version=VERSION, settings=settings, model=self.model,
                             base_url=clean_url(self.base_url), concurrency=self.concurrency, temperature=self.temperature,
                             max_tokens=self.max_tokens, max_completion_tokens=self.max_completion_tokens, seed=self.seed,
                             gpu=GPU.key, recorded=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             system_prompt=SYSTEM_PROMPT))
        except OSError:                                   # 连文件头都写不下（磁盘满了）：不留半截文件（讲师报过：
            self._cut_record()                            # 重跑同一个名字时被当成"已经有了、可能是花钱录的"）
            if not empty:
                os.remove(path)
            raise

    def _write(self, obj: dict) -> None:
        self._append(self._line(obj))

    def _line(self, obj: dict) -> bytes:
        """录制文件的一行。每段文字抹密钥（不是写好的一整行：写成 JSON 的换行 \n 会把拆成两行的密钥接上一个 n，
        认不出；整段都是密钥的碎片时抹成 ***，这一行也还是 JSON）。"""
        obj = {k: self._redact(v) if isinstance(v, str) else v for k, v in obj.items()}
        text = json.dumps(obj, ensure_ascii=False)
        # 服务器的 JSON 里可以有落单的代理项（"\ud800"）：UTF-8 写不出来，写成 JSON 的 \ud800 转义，读回来一字不差
        return (_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n").encode("utf-8")

    def _append(self, line: bytes) -> None:
        """把完整的一行写到录制文件末尾。写到一半失败（磁盘满了）或者被打断（Ctrl-C）时截回上一个整行：不留半行；
        整行都写进去以后才被打断的留着（不会再写一遍）。在 self._rec 下面调用（或者还没有别的线程的时候）。"""
        end = self._recorded + len(line)
        try:
            view = memoryview(line)
            while view:
                view = view[self._record.write(view):]
            self._recorded = end
        except BaseException:
            try:
                if os.fstat(self._record.fileno()).st_size == end:
                    self._recorded = end
                else:
                    self._record.truncate(self._recorded)
                    self._record.seek(self._recorded)
            except (OSError, ValueError):            # 截不了：_cut_record 按路径再截一次
                pass
            raise

    def end_recording(self) -> None:
        """这次运行的调用都做完了（脚本最后的 finish 调它；Ctrl-C、出错时不调）：录制文件末尾写结束行，回放由它知道文件录完了。
        录制已经停了（写不进去）就不写：那个文件本来就没录完。结束行写不进去时和录到一半写不进去一样（_stop_recording）。"""
        path = getattr(self, "_record_path", None)
        if path is None or self.record_stopped is not None or self._cut:
            return
        line = (json.dumps(dict(type="end", calls=len(self.calls))) + "\n").encode("utf-8")
        try:
            if self._record is None:                     # 脚本的 finally 已经 close 了：接着文件末尾写
                with open(path, "ab") as f:
                    f.write(line)
            else:
                with self._rec:
                    self._append(line)
                self.close()
        except OSError as e:
            if self._record is None:                     # _cut_record 要关的文件已经关了：开一个空的给它关
                self._record = open(os.devnull, "wb")
            self._tell(self._stop_recording(len(self.calls), e, end=True))
            return
        self._record_path = None                         # 只写一次

    def _cut_record(self) -> None:
        """录制文件写到一半失败了：关掉它，截回最后一整行（讲师报过：文件停在半行上——有时是半个汉字——回放一行都
        不肯放，说"最后一行没写完""不是 UTF-8"，等于让人再花钱录一遍）。截短不受文件大小上限的限制。"""
        try:
            self._record.close()
        except OSError:                                   # 缓冲里剩下的写不进去：反正要截掉
            pass
        self._record = None
        try:
            os.truncate(self._record_path, self._recorded)
        except OSError:
            pass

    def _keep(self, call: Call) -> None:
        """一次调用做完了（在做它的线程里；_log 再调一次也不会写两遍）：录进文件。文件里的调用按提议的顺序：它前面的
        都录下了就马上写（连同留着、在等它的），不然写好这一行先留着，等前面的回来。"""
        said = None
        try:
            with self._rec:
                wanted = (self._record is not None and not self._cut and call.n >= self._next_record
                          and call.n not in self._held)
            line = self._line(call_line(call)) if wanted else None   # 抹密钥：不占着锁
            with self._rec:
                if line is not None and self._record is not None and not self._cut and call.n >= self._next_record:
                    self._held[call.n] = line
                    said = self._write_held()
        finally:
            with self._rec:
                self._reading.discard(call.n)
                self._rec.notify_all()
        self._tell(said)

    def _write_held(self) -> str | None:
        """（在 self._rec 下面）留着的调用里，接得上文件末尾的按顺序写下；写不进去时停下录制，返回要说的那句话。"""
        while self._next_record in self._held and self._record is not None:
            before = self._recorded
            try:
                self._append(self._held.pop(self._next_record))
            except OSError as e:                     # 讲师报过：磁盘满了（ulimit -f）时整批提议算成"LLM 调用出错"、退出时
                return self._stop_recording(self._next_record, e)   # 两段 traceback。录制只是旁观：停下它，运行照常跑完
            finally:
                if self._recorded != before:         # 这一行整行写下了（写完才被 Ctrl-C 打断的也算）
                    self._next_record += 1
        return None

    def _interrupted(self) -> None:
        """Ctrl-C 落在一批调用中间（主线程）：正在读回复正文的调用最多再等 READ_GRACE 秒读完，然后把已经回来的都录下，
        关上录制文件——以后回来的不再写，也不写结束行：文件看得出是被打断的。前面还有调用在路上时，回来了的写在
        它后面（调用本来按提议的顺序；这样的文件只有被 Ctrl-C 截住的才有，回放放到还在路上的那一次为止）。
        再按一次 Ctrl-C 只是不再等，回来了的照样录下。"""
        with self._rec:
            try:
                deadline = time.monotonic() + READ_GRACE
                while self._record is not None and self._reading and (left := deadline - time.monotonic()) > 0:
                    self._rec.wait(left)
            finally:
                self._cut_here()

    def _write_all_held(self) -> None:
        """（在 self._rec 下面，Ctrl-C 以后）留着的调用按顺序都写下（写在还在路上的那次后面）。写的时候又按了 Ctrl-C
        也写完：_append 留下的总是整行——那一行整行写下了就接着写下一行，截回去了就再写一遍（只再写一次）。写不进去了
        （磁盘满了）就不再写。"""
        for n in sorted(self._held):
            for _ in range(2):
                if self._record is None:
                    return
                before = self._recorded
                try:
                    self._append(self._held[n])
                    break
                except OSError:                      # 写不进去了（磁盘满了）：_append 截回了整行，不再写
                    return
                except KeyboardInterrupt:            # 再按一次 Ctrl-C（第一次的由调用的地方抛出去）
                    if self._recorded != before:     # 整行写下以后才被打断：不再写一遍
                        break
                    try:
                        if os.fstat(self._record.fileno()).st_size != self._recorded:
                            return                   # 半行没截掉（_append 截不了）：不接着它写
                    except (OSError, ValueError):
                        return

    def _tell(self, said: str | None) -> None:
        if said and self.notify is not None:
            self.notify(said)

    def _stop_recording(self, n: int, e: OSError, end: bool = False) -> str:
        """录制文件写不进去了：截回最后一整行、以后不再录，返回要说的那句话（录下的那部分回放得了，只能到那里；
        调用的人用 _tell 说：别在 self._rec 下面说）。end：写不进去的是最后的结束行（调用都录下了，回放会说它没录完）。"""
        path = self._record_path
        self._cut_record()
        self.record_stopped = (f"录制文件 {path} 写不进去了（{os_words(e, writing=True)}）：" +
                               ("调用都录下了，只是最后的结束行没写上，回放时会说它没录完。" if end else
                                f"从第 {n + 1} 次 LLM 调用起不再录，这次运行照常跑完；录下的文件不完整，回放只能回放到那里。"))
        return self.record_stopped
