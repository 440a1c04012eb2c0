"""
旋钮和上限：超时、重试和退避、等多久说一声、连续失败几次就不再调用、回复最多读多少字节、采样参数和 token 上限、
并发数、录制文件的格式和版本（VERSION）。别的文件都从这里拿；脚本的命令行能改的几个（--llm-timeout、--llm-concurrency、
--llm-max-tokens）的范围在 cli.py 里查。
"""

KIND = "llm"                       # propose 返回的"修改的种类"：真模型不说它做的是哪种修改
TIMEOUT = 300.0                    # 一个请求从连接到最后一个字节最多几秒（--llm-timeout；CPU 上的模型读一段两千 token 的
                                   # 提示就要好一阵，并发时还要排队）。openevolve/config.yaml 的 llm.timeout 和它一样，
                                   # README 说这个数的两句也是：改它时一起改（tests/test_argument_edges.py、
                                   # test_openevolve_example.py 对照）
MIN_TIMEOUT = 0.1                  # --llm-timeout 至少这么多秒
MAX_TIMEOUT = 86_400.0             # 至多一天（再大，看门的计时器在这个平台上就设不了：threading.TIMEOUT_MAX）
CHECK_TIMEOUT = 10.0               # 开跑之前的 GET /models 最多几秒（--llm-timeout 更短就用它）
RETRIES = 3                        # 429 / 5xx / 连不上时最多重试几次（上一次调用已经失败了就不重试）
BACKOFF = 1.0                      # 没有 Retry-After 时第 i 次重试前等 BACKOFF × 2^i 秒
MAX_WAIT = 60.0                    # 一次调用里按 Retry-After 等的时间加起来要超过它，就不等了，算一次失败
WAIT_SAID = 5.0                    # 重试前要等这么久以上时，往标准错误说一句（不然看着像卡住了）
WAITING_SAID = 10.0                # 一个调用等了这么多秒还没回来，就往标准错误说一句在等谁、等了多久（以后每这么多秒一句）
READ_GRACE = 0.2                   # Ctrl-C 时正在读回复正文的调用最多再等这么多秒读完、录下（之后一秒之内还要停下）
GIVE_UP_AFTER = 4                  # 连续这么多次调用失败（不管哪一种），就不再调用
MAX_REPLY_BYTES = 1_000_000        # 一个回复最多读这么多字节：max_tokens（推理模型：max_completion_tokens）个 token 的回复
                                   # 连 JSON 的转义一起也远远用不了
ERROR_BODY_BYTES = 16_384          # 不是 2xx 的回答，正文最多读这么多字节：只要里面服务器说的原因（server_words）
ERROR_READ_SECONDS = 2.0           # 读它最多等这么多秒（挤牙膏的错误页不能把一次 429 拖成一次超时）
MAX_MODELS_BYTES = 8_000_000       # GET /models 的回复最多读这么多字节（托管的服务商列几百个模型，每个带说明）
WIRE_SLACK = 1_000_000             # 一个回复从状态行起一共最多读 2 × 正文上限 + 这么多字节（响应头、分块的长度行等的余量）
TEMPERATURE = 0.7
MAX_TOKENS = 1024                  # 回复的 token 上限（要的是短回复；想得多的模型会用掉更多）
# OpenAI 的推理模型（o 系列、gpt-5 一族）不收 max_tokens、只收默认的 temperature（1），每个请求都回 HTTP 400（见
# rejected_parameter）。认出这样的回答以后换成它们的参数（switch_sentence）：max_completion_tokens 代替 max_tokens，不发
# temperature。max_completion_tokens 把看不见的推理 token 也算在里面（OpenAI 的 reasoning 指南：用完了，回复是空的、
# finish_reason 是 "length"；它建议开始时留至少 25,000 个），1024 个常常全用在推理上，所以给得多：只是上限，按用掉的收钱
MAX_COMPLETION_TOKENS = 25_000
REASONING_PARAMS = {"max_completion_tokens": MAX_COMPLETION_TOKENS}   # 换了以后代替 temperature、max_tokens 发的
MAX_LLM_TOKENS = 100_000           # --llm-max-tokens 最多这么多（OpenAI 的 o3、o4-mini 一次最多输出 100,000 个：它的模型页；
#                                    回复照样最多读 MAX_REPLY_BYTES：本机的服务器把草稿也放在回复里，10 万个 token 的英文
#                                    草稿约 40 万字节）
# 回复到了 token 上限、被截断：choices[0].finish_reason 是这几个之一（不分大小写）。OpenAI、ollama（openai/openai.go：
# finish_reason 就是 done_reason，num_predict 用完是 "length"）、llama.cpp 的 server（to_json_oaicompat_chat：不是停在
# EOS 或停止词上就是 "length"）、vLLM（reasoning parser 没等到 </think> 时整段都是 reasoning_content、content 是 null）
# 都说 "length"；想得多的模型（qwen3、deepseek-r1、OpenAI 的推理模型）常把上限全用在草稿上：content 是空的（草稿在
# reasoning_content / reasoning 里，或者根本看不见），或者是没写完的 <think>…，或者修改写到一半。"max_tokens" 是
# Anthropic、Gemini 原生的说法（有的代理原样转过来），"model_length" 是 Mistral 的（提示加回复超了模型的上下文窗口）。
# 以前这样的回复记作"没有 SEARCH/REPLACE 块"（或块不完整）：两百个失败的提议，看不出是上限的事、也没有参数能调
CUT_REASONS = ("length", "max_tokens", "model_length")
SWITCHABLE = ("max_tokens", "temperature")   # 服务器说这两个不支持时换（别的参数、别的 400 是一次普通的失败）
CONCURRENCY = 2                    # 默认同时发几个请求（--llm-concurrency）
MAX_CONCURRENCY = 64               # 最多同时发几个（和 --jobs 的上限一样；回放文件头里的也按它查）
MAX_NAME = 200                     # 模型名最多几个字符（回放文件里的也是：印出来的一行话不能被它撑成几百行）
FORMAT = "mini-alphaevolve-llm-transcript"
VERSION = 5                        # 录制文件的版本。5：行的写法和 4 一样；回复到了 token 上限、修改没写完的调用（CUT_OFF）
                                   # 算进"接连失败"（录的时候照它放弃，lost_llm 照它定退出码）。1–4 版录下的运行不这样数
                                   # （录的时候也没这样放弃），回放照旧不数（cut_counts）：退出码和标准错误和以前一样。
                                   # 4：调用那一行可以多一项 "cut_off"（回复到了 token 上限、被截断时
                                   # 服务器的 finish_reason，例如 "length"；没写的是没被截断，也是 1–3 版的每一行），
                                   # 文件头多一项 max_completion_tokens（换成推理模型的参数以后发的上限；文件头的
                                   # max_tokens 是 --llm-max-tokens 给的或默认的 1024）。
                                   # 3：调用那一行可以多两项——"params"（这次调用最后一个请求发的采样参数不是
                                   # 文件头里的 temperature、max_tokens 时，是它发的那组，例如 {"max_completion_tokens": 25000}）
                                   # 和 "resent"（服务器说不支持哪个参数、换了参数重发了一次：max_tokens 或 temperature）；
                                   # 没有这两项的行（也是 2、1 版的每一行）发的是文件头里的那组。
                                   # 2：录完时最后一行是结束行 {"type": "end", "calls": N}（讲师报过：录的时候
                                   # 按了 Ctrl-C 的文件，回放开跑时什么也不说，演示 2 放到一半才停，还说是 --budget 比录制时大）；
                                   # 1：没有结束行，看不出录没录完
