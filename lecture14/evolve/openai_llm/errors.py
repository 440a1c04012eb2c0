"""
失败的种类和异常。调用失败抛 LLMError，它的 .kind 是一个短名字（"LLM 超时"、"LLM 回 HTTP 500"……），进化循环
按它计数，不崩。拿到了回复、里面却一个 SEARCH/REPLACE 块也没有时抛它的子类 ReplyUnusable（种类"没有 SEARCH/REPLACE 块"）：
进化循环把这个提议记在 llm 那一行，不记成调用失败。开跑前服务器就连不上是 ServerUnreachable（脚本印一行、退出码 2）；
回放对不上是 ReplayMismatch（故意不是 Exception 的子类，见 replay.py）。Names：一句话里怎么称呼地址和模型名。
"""

from dataclasses import dataclass

from .settings import KIND, MAX_REPLY_BYTES

CUT_OFF = "回复到了 token 上限、被截断"   # 截断了、修改没写完的回复记进失败的种类（写完了的照样用）

# 失败的种类（LLMError.kind）；HTTP 错误是 f"LLM 回 HTTP {状态码}"（转向另有名字：REDIRECT）
TIMEOUT_KIND = "LLM 超时"
UNREACHABLE = "连不上 LLM 服务器"
GAVE_UP = "接连失败后没再调用 LLM"
BAD_JSON = "LLM 回复不是 JSON"
NO_CONTENT = "LLM 回复里没有 choices[0].message.content"
REDIRECT = "LLM 服务器要转到别的地址（没跟过去）"
REDIRECT_CODES = (300, 301, 302, 303, 307, 308)   # 转向；304 Not Modified 不是（讲师的复查报过：它被记成"要转到别的地址"，
#                                                   我们从不发带条件的请求，304 只是一个不该有的状态码，记作 HTTP 304）
BAD_HEADERS = "LLM 服务器回的响应头不合规矩"
TRUNCATED = "LLM 回复没传完整"
COMPRESSED = "LLM 回复是压缩过的（请求的是不压缩的，没解压）"
TOOL_CALLS = "LLM 回的是工具调用（tool_calls），不是文字"   # content 是 null：服务器或模型模板把回答当成了调函数
STREAMED = "LLM 回复是流式的（SSE），要的是一次给完的 JSON"   # 讲师报过：只会流式回答的服务器被说成"不是 JSON"
TOO_LONG = f"LLM 回复太长（超过 {MAX_REPLY_BYTES / 1e6:g} MB，没读完）"
# 本讲的 MockLLM 服务器（lecture14/mock_llm_server.py）出了程序错：它回 500 时带 MOCK_BUG_HEADER。讲师报过：手动开的
# 服务器出了错，04 只说"接连失败（最后一次是'连不上'）"——错在它自己的终端里。认出来以后马上不再调用，说清去哪看
MOCK_BUG_HEADER = "X-MockLLM-Bug"
MOCK_BUG = "MockLLM 服务器出了程序错误（traceback 在它自己的终端里）"
# 它那个 500 的 error.message（OpenEvolve 不给看响应头，只把这句话写进它的日志：make openevolve 从这句话认出来）
MOCK_BUG_REPLY = "MockLLM 出了程序错误（本讲代码的错，不是提示的问题），不再回答"


class LLMError(Exception):
    """一次调用失败。kind 是短名字（进化循环按它计数），str 是一句说明（不含密钥）。"""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}：{detail}" if detail else kind)
        self.kind, self.detail = kind, detail
        self.requests = 0                   # 这次调用一共发出去几个 HTTP 请求（_attempts 填；成本账用）

    def __reduce__(self):
        return LLMError, (self.kind, self.detail)


class ReplyUnusable(LLMError):
    """调用成功、拿到了回复，但回复里一个 SEARCH/REPLACE 块也没有（空的、只有闲聊、整个函数照抄一遍；种类是
    diff.NO_BLOCK），或者回复到了 token 上限、被截断，修改没写完（CUT_OFF）。进化循环把这个提议记在 op（KIND）那一行、
    失败的种类是 kind，不记成"（LLM 出错）"：讲师报过，模型回了整段 Python，04 的表却说调用本身失败、观察说
    "拿到回复的提议 0 个"。"""
    op = KIND

    def __reduce__(self):
        return ReplyUnusable, (self.kind, self.detail)


@dataclass(frozen=True)
class Names:
    """一句话里怎么称呼服务器的地址和模型名：命令行上是 --llm、--model；OpenEvolve 的例子里是 config.yaml 的
    api_base、name（讲师报过：make openevolve 没有 --llm，却叫他"就用 --llm ……"）。"""
    address: str                    # "检查 {address}"、"{address}要指向……"（以"地址"结尾）
    model: str                      # "用 {model} 选一个"
    use: str                        # 换成另一个地址：use.format(地址)
    key: str = "环境变量 OPENAI_API_KEY"   # 服务器拒绝了（401、403）时让人检查的密钥在哪（OpenEvolve 的例子可能是 config.yaml 的）
    # 不发密钥怎么做（明文 http 的别的机器）：命令行上把环境变量设成空；OpenEvolve 用的 openai 库没有密钥就不肯发请求，
    # 要在 config.yaml 里写一个占位符（讲师报过：照"OPENAI_API_KEY= 设成空"做，OpenEvolve 报 Missing credentials）
    no_key: str = "这次运行前面加 OPENAI_API_KEY= 把密钥设成空"

    def use_url(self, url: str) -> str:
        return self.use.format(url)


COMMAND_LINE = Names(address="--llm 的地址", model="--model", use="就用 --llm {}")


class ServerUnreachable(LLMError):
    """开跑之前服务器就连不上（或拒绝了我们）：脚本印出这一句，退出码 2。"""


class ReplayMismatch(BaseException):
    """回放文件和这次运行对不上。故意不继承 Exception：进化循环的 except Exception 不会把它当成一次失败的提议，
    运行就此停下；脚本接住它，印出这一句，退出码 2。"""
