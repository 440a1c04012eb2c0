"""
OpenAILLM 和 ReplayLLM 共用的 Backend：按顺序编号的调用、成本账、并发。和 MockLLM 一样只有一个接口：

    propose(prompt) -> (修改的种类, 回复文本)        种类总是 KIND（"llm"）：真模型不告诉我们它做的是哪种修改
    propose_many(prompts) -> [(种类, 回复) 或 异常]   concurrency 个请求同时发出，结果按提议的顺序排好
"""

import threading

from .calls import Call, ledger, outcome, sent_limit
from .errors import CUT_OFF, ReplayMismatch
from .settings import MAX_TOKENS
from .text import shown


class Backend:
    """OpenAILLM 和 ReplayLLM 共用的部分：按顺序编号的调用、成本账、并发。"""
    concurrency = 1
    parallel = True                          # propose_many 开 concurrency 个线程同时问（False：按顺序一个一个地问）
    model = ""
    max_tokens = MAX_TOKENS                  # 没换成推理模型的参数时，请求里的 max_tokens（--llm-max-tokens）
    notify = None                            # 第一次有回复被截断时说一声的函数（None 不说）
    cut_counts = True                        # 被截断、修改没写完的回复算进"接连失败"（ReplayLLM 照录制文件的版本）

    def __init__(self):
        self.calls: list[Call] = []          # 按提议的顺序
        self._lock = threading.Lock()
        self._cut_said = False               # 第一次被截断的那句说过了

    def ledger(self, start: int = 0, stop: int | None = None) -> dict:
        """第 start 到 stop 次调用（不含 stop）的成本账，见 calls.py 的 ledger()。"""
        return ledger(self.calls[start:stop], self.max_tokens)

    def propose(self, prompt) -> tuple[str, str]:
        """问一次，返回 (KIND, 回复文本)；失败抛 LLMError（.kind 是失败的种类）。"""
        r = self.propose_many([prompt])[0]
        if isinstance(r, Exception):
            raise r
        return r

    def propose_many(self, prompts) -> list:
        """几个提示一起问（最多 concurrency 个同时在路上）；返回的列表和 prompts 一一对应：(种类, 回复) 或 LLMError。
        请求在后台线程里发（parallel）：主线程只等着，Ctrl-C 时由 _interrupted 收拾还在路上的这一批。"""
        base = len(self.calls)
        texts = [p.text() for p in prompts]
        calls: list = [None] * len(texts)
        errors: list = [None] * len(texts)

        def work(i):
            try:
                calls[i] = self._fetch(base + i, texts[i])
            except BaseException as e:      # noqa: BLE001  回放对不上（ReplayMismatch）也要带回主线程
                errors[i] = e

        self._batch()
        try:
            _run_threads(work, range(len(texts)), self.concurrency if self.parallel else 1, threads=self.parallel)
            for e in errors:
                if isinstance(e, (ReplayMismatch, KeyboardInterrupt)):
                    raise e
            out = []
            for i in range(len(texts)):             # 按提议的顺序记账
                if errors[i] is not None:
                    raise errors[i]
                self._log(calls[i])
                out.append(outcome(calls[i]))
        except KeyboardInterrupt:
            self._interrupted()
            raise
        return out

    def _batch(self) -> None:
        """一批调用要开始了（OpenAILLM：录制的准备）。"""

    def _interrupted(self) -> None:
        """Ctrl-C 落在一批调用中间（主线程）：OpenAILLM 把已经回来的调用录下。"""

    def _log(self, call: Call) -> None:
        """按提议的顺序记下一次调用（录制和回放记得一样）。第一次有回复到了 token 上限、被截断时，用 notify 说一声：
        不用等到运行的最后（finish）才知道——每个这样的回复都按上限收了钱、等了时间，看到了可以先 Ctrl-C 调高再跑。"""
        self.calls.append(call)
        if call.cut_off is not None and call.reply is not None and not self._cut_said:
            self._cut_said = True
            if self.notify is not None:
                self.notify(f"（LLM：第 {call.n + 1} 次调用的回复到了 token 上限（{sent_limit(call, self.max_tokens)}，"
                            f"finish_reason 是 “{shown(call.cut_off, 20)}”）、被截断；修改没写完的记作“{CUT_OFF}”，"
                            "运行的最后说一共几次、怎样调高上限。）")

    def _fetch(self, n: int, text: str) -> Call:
        raise NotImplementedError


def _run_threads(work, items, workers: int, threads: bool = True) -> None:
    """用 workers 个后台线程对每个 item 调 work(item)，等它们做完（threads=False：在这个线程里一个一个地做）。
    线程是 daemon 的：Ctrl-C 时不用等在路上的请求；主线程只等着（每 0.1 秒醒一次），Ctrl-C 落在等的地方，
    不会落在某个请求读回复、记账的半路上。"""
    items = list(items)
    if not threads:
        for i in items:
            work(i)
        return
    todo = iter(items)
    lock = threading.Lock()
    stopped: list = []                      # 主线程不等了（Ctrl-C）：没开始的不再开始

    def loop():
        while True:
            with lock:
                i = None if stopped else next(todo, None)
            if i is None:
                return
            work(i)

    pool = [threading.Thread(target=loop, daemon=True) for _ in range(min(workers, len(items)))]
    try:
        for t in pool:                      # 开线程也在 try 里：start() 等新线程开起来，Ctrl-C 也会落在这里（已经开起来的
            t.start()                       # 线程以前接着把这一批问完）
        for t in pool:
            while t.is_alive():
                t.join(0.1)                 # 短短地等，主线程随时能收到 Ctrl-C
    except BaseException:
        with lock:                          # Ctrl-C 以后空出来的线程不再接着发这一批里还没发的请求（托管的 API 按请求收钱）
            stopped.append(True)
        raise
