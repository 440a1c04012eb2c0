"""lecture13/01_timing_model.py 当脚本跑：能跑完、三个演示都在、没有一句观察"本次不成立"、两次运行逐字节相同。"""

import os

import pytest

from console import FAILED

import gpus
import kernel_lab
from conftest import ahead, base_env, run_script as cached_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU_SHORT = "".join(kernel_lab.GPU.short.split())   # 提示里说旋钮是哪块 GPU 的取值（TESTS_GPU 换了 GPU 时跟着换；
#                                                   和去掉空白的输出比："RTX 4090" 这样带空格的名字也去掉，助教报过）
# 不是讲义的 GPU（TESTS_GPU）时，设置行的末尾、"可以试试"的命令里都带着 --gpu（助教报过：这两个测试没想到它，
# TESTS_GPU_CLAIMS=1 时被说成讲义论断不成立）
GPU_FLAG = "" if kernel_lab.GPU.key == gpus.DEFAULT else f" --gpu {kernel_lab.GPU.key}"
HEADERS = ("演示 1：屋顶线与时间拆解", "演示 2：每种效应一个实验", "演示 3：代价模型引导的调优")


def run_script(*args):
    """在仓库根目录运行脚本（conftest.run_script：同样的命令整个测试会话只跑一次，别的测试文件也共用）。"""
    return cached_run("lecture13/01_timing_model.py", *args, timeout=60)


@pytest.fixture(scope="module")
def first():
    return run_script()


def test_runs_and_has_three_demos(first):
    # 退出码 0；三个演示的标题都印出来了；结尾有"可以试试"
    assert first.returncode == 0, first.stderr
    for h in HEADERS:
        assert h in first.stdout, h
    assert "可以试试：" in first.stdout


@pytest.mark.h100_claim
def test_every_observation_holds(first):
    # 每句观察都在代码里检验过；在现在的模型上，没有一句印成"本次不成立"
    assert "本次不成立" not in first.stdout, [line for line in first.stdout.splitlines() if "本次不成立" in line]


def test_same_output_twice(first):
    # 同样的命令印出同样的字节；用时只印到 stderr，不进 stdout
    # （确定性测试：代码和它自己比。保留它，但它不是数字算得对的证据——那个见 test_printed_numbers_*.py。）
    second = cached_run("lecture13/01_timing_model.py", instance=2, timeout=60)   # 另一次独立的运行（和 test_console_tables 共用）
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert "用时" not in first.stdout and "用时" in first.stderr


# ---------------------------------------------------------------- "可以试试"：每一条照做，说好的变化真的发生

import re  # noqa: E402
import shlex  # noqa: E402

import printed  # noqa: E402


def flat(text):
    """去掉所有空白（终端折行会把数字和词拆到两行）。"""
    return re.sub(r"\s+", "", text)


# 四条"可以试试"各自的标志（按内容找，不按第几条：换了 GPU，某一条可能不印，后面的就往前挪——助教报过 L40S 上
# 没有延迟那条，第 3、4 条的测试读到的是别的建议）
L2, PER_SM, LATENCY, TOLERANCE = "加上--knobL2_BW=", "加上--knobL2_BW_PER_SM=", "加上--knobLOAD_LATENCY_BUSY=", "停止条件"


def _items(stdout):
    tail = printed.unfold(stdout).split("可以试试：", 1)[1]
    return re.split(r"\n\s*\d+\. ", "\n" + tail)[1:]


def which(stdout, key):
    """带 key 那条"可以试试"是第几条（从 1 数）。H100 上四条都在；换了 GPU 没印这一条时，这个测试跳过并说明。"""
    found = [i for i, item in enumerate(_items(stdout), 1) if key in flat(item)]
    if not found and kernel_lab.GPU.key != "h100":
        pytest.skip(f"{GPU_SHORT} 上没印这条\"可以试试\"（{key}）：这块 GPU 上它不适用")
    assert len(found) == 1, f"\"可以试试\"里带 {key} 的有 {len(found)} 条：{[flat(x)[:60] for x in _items(stdout)]}"
    return found[0]


def suggestion(stdout, i):
    """第 i 条"可以试试"（从 1 数；i 也可以是 which 的标志），去掉空白。"""
    i = which(stdout, i) if isinstance(i, str) else i
    parts = _items(stdout)
    assert i <= len(parts), f"只印了 {len(parts)} 条\"可以试试\"，没有第 {i} 条"   # 别的 GPU 上可能少一条：断言，不是 IndexError
    return flat(parts[i - 1])


def table_row(stdout, section, who):
    """演示 1 里 section 那张表上 who（"最优"）那一行的各格（表太宽时分段印：printed.tables 拼回一张再读）。"""
    block = stdout.split(section + "（", 1)[1]
    return next(r for r in printed.tables(block)[0].rows if r[0].startswith(who + " "))


def printed_failures(stdout):
    """这次输出里标成【本次不成立】的观察：[(演示号, 第几句)]（从三个演示各自的"观察："块里数）。"""
    out = []
    for d in (1, 2, 3):
        text = printed.section(stdout, f"演示 {d}：")
        out += [(d, i) for i, o in enumerate(printed.observations(text), 1) if "本次不成立" in o]
    return out


def _listed(text):
    return [(int(d), int(i)) for d, ix in re.findall(r"演示(\d)第([\d、]+)句", text) for i in ix.split("、")]


def predicted_failures(s):
    """提示里预言的：[(演示号, 第几句)]；"观察都还成立"就是 []。s 是去掉空白的提示。这次已经有不成立的观察时，
    提示说"这次不成立的是……；改了以后会新标成不成立……；……会变成成立"（或"改了以后还是这几句"；这次不成立的全都会
    成立时是"这次不成立的……改了以后会变成成立，观察就都成立了"或"……；另外会新标成不成立……"）。"""
    if "观察都还成立" in s:
        return []
    m = re.search(r"有(\d+)句观察会标成不成立（(.*?)）", s)
    if m:
        out = _listed(m.group(2))
        assert len(out) == int(m.group(1)), s
        return out
    m = re.search(r"这次不成立的(\d+)句（(.*?)）改了以后都?会变成成立", s)      # 这次不成立的全都会成立
    if m:
        assert len(_listed(m.group(2))) == int(m.group(1)), s
        new = re.search(r"另外会新标成不成立(\d+)句（(.*?)）", s)
        assert bool(new) != ("观察就都成立了" in s), s
        return _listed(new.group(2)) if new else []
    m = re.search(r"这次不成立的是(\d+)句（(.*?)）", s)
    assert m, s
    now = _listed(m.group(2))
    assert len(now) == int(m.group(1)), s
    if "改了以后还是这几句" in s:
        return now
    new = re.search(r"改了以后会新标成不成立(\d+)句（(.*?)）", s)
    fixed = re.search(r"；(\d+)句会变成成立（(.*?)）", s)
    assert new or fixed, s
    new, fixed = (_listed(x.group(2)) if x else [] for x in (new, fixed))
    return sorted(set(now) - set(fixed) | set(new))


# 1. L2_BW 翻倍：prefill 的最优 TFLOPS 和瓶颈变成提示里预先算好的那样；提示预言的那几句观察（不多不少）印成
#    【本次不成立】；第二条命令让第 14 讲用同一个改过的模型
@pytest.mark.h100_claim
def test_suggestion_double_L2_does_what_it_says(first):
    s = suggestion(first.stdout, L2)
    # 助教报过：L40S 上瓶颈不变；B200 上 TFLOPS 也不变（"的最优还是 1067 TFLOPS"：句子是对的，下面"变快"的论断不成立）
    m = re.search(r"的最优(?:从(\d+)变成(\d+)|还是(\d+))TFLOPS，瓶颈(?:从(.)变成(.)|还是(.))；", s)
    assert m, s
    tf0, tf1 = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)),) * 2
    b0, b1 = m.group(4) or m.group(6), m.group(5) or m.group(6)
    knob = re.search(rf"加上--knob(L2_BW=[\d.e+]+)（L2_BW现在是([\d.e+]+)B/s，是lecture10/gpus.py里{re.escape(GPU_SHORT)}的取值；", s)
    assert knob and float(knob.group(1).split("=")[1]) == 2 * float(knob.group(2)), s
    # 照印出来的命令跑（两条，&& 连着）：不改任何文件
    runs = run_command(command_of(first.stdout, L2))
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    p, q = runs
    assert p.stdout.startswith(f"设置：--tolerance 0.01 --knob {knob.group(1)}{GPU_FLAG}\n模型改过"), p.stdout[:200]
    before, after = table_row(first.stdout, "8B gate_up M=8192", "最优"), table_row(p.stdout, "8B gate_up M=8192", "最优")
    assert (int(before[2]), before[-1]) == (tf0, b0) and (int(after[2]), after[-1]) == (tf1, b1), (before, after)
    assert tf1 > tf0
    assert printed_failures(p.stdout) == predicted_failures(s) != []
    # 每一句标成不成立的观察都说出讲义的判据（不藏门槛）
    obs = re.split(r"\n\s*\d+\. ", p.stdout)
    failed = [o for o in obs if "本次不成立" in o]
    assert failed and all("讲义说" in flat(o) for o in failed), [o[:80] for o in failed if "讲义说" not in flat(o)]
    # 改过旋钮的那次运行说的是这次的值，不说"L2_BW 现在是 7.7e+12"
    s2 = suggestion(p.stdout, L2)
    assert (f"这次运行的L2_BW是{knob.group(1).split('=')[1]}B/s，是--knob给的；lecture10/gpus.py里{GPU_SHORT}的取值是"
            f"{knob.group(2)}" in s2), s2
    # 第二条命令：第 14 讲用的是同一个改过的模型——演示 1 里 prefill 那一行的 TFLOPS 就是提示里说的"变成"的数
    assert f"--knob {knob.group(1)}" in q.stdout.splitlines()[0] and "模型改过" in q.stdout
    row = next(line for line in q.stdout.splitlines() if line.strip().startswith("8B gate_up M=8192"))
    assert int(re.split(r"\s{2,}", row.strip())[3]) == tf1, row


def command_of(stdout, i):
    """第 i 条（或带标志 i 的那条）"可以试试"印出来的命令（说明下面单独一行，原样；依次跑的几条命令各占一行，这里用
    && 连起来）。"""
    i = which(stdout, i) if isinstance(i, str) else i
    blocks = _items(stdout)
    assert i <= len(blocks), f"只印了 {len(blocks)} 条\"可以试试\"，没有第 {i} 条"
    block = blocks[i - 1]
    return " && ".join(line.strip() for line in block.splitlines() if line.strip().startswith("python3 "))


def run_command(cmd, env=None):
    """照印出来的样子跑（在仓库根目录）：几条用 && 连着的 python3 命令，python3 换成跑测试的解释器。04 那条在末尾补上
    小预算（argparse 取最后一个；这里只看它的演示 1，和预算无关）：印出来的整条命令原样由 test_suggestions 跑。"""
    out = []
    for part in cmd.split(" && "):
        argv = shlex.split(part)
        assert argv[0] == "python3", cmd
        if argv[1].endswith("04_alphaevolve_tiling.py"):
            argv += ["--budget", "40", "--seeds", "1"]
        out.append(cached_run(*argv[1:], env=env, timeout=120))
        if out[-1].returncode:
            break
    return out


@ahead
def printed_runs():
    """这个文件要的运行（默认运行两次、它印的四条命令、两次改了旋钮的运行和其中一次印的第 3 条命令），在后台先跑进
    run_script 的缓存（PREFETCH）。命令从这一次的输出里读，不抄在这里；测试照常自己调用 run_script，拿到的是同一个结果。"""
    env = base_env()
    first = cached_run("lecture13/01_timing_model.py", env=env, timeout=60)
    cached_run("lecture13/01_timing_model.py", env=env, instance=2, timeout=60)
    for i in range(1, len(_items(first.stdout)) + 1):
        run_command(command_of(first.stdout, i), env)
    cached_run("lecture13/01_timing_model.py", "--knob", "L2_BW=1.54e13", "--tolerance", "0.05", env=env, timeout=60)
    short = cached_run("lecture13/01_timing_model.py", "--knob", "LOAD_LATENCY_BUSY=9e-07", env=env, timeout=60)
    if any(LATENCY in flat(item) for item in _items(short.stdout)):
        run_command(command_of(short.stdout, LATENCY), env)


@ahead
def suggested_runs():
    """照别的运行印的"可以试试"跑的命令（--gpu a100 印的前三条、--tolerance 0 印的带三个标志的那几条）在后台先跑进
    缓存（PREFETCH）：以前测试要时才在前台跑，约 3 CPU 秒。命令照样从那次运行的输出里读；没印的那条不跑（用它的测试
    自己说为什么）。不用 which：它在别的 GPU 上 pytest.skip，后台线程里不能那样。"""
    env = base_env()
    a100 = cached_run("lecture13/01_timing_model.py", "--gpu", "a100", env=env, timeout=60)
    for i in range(1, min(3, len(_items(a100.stdout))) + 1):
        run_command(command_of(a100.stdout, i), env)
    zero = cached_run("lecture13/01_timing_model.py", "--tolerance", "0", env=env, timeout=60)
    for key in (PER_SM, LATENCY, TOLERANCE):
        found = [i for i, item in enumerate(_items(zero.stdout), 1) if key in flat(item)]
        if len(found) == 1:
            run_command(command_of(zero.stdout, found[0]), env)


PREFETCH = [printed_runs, suggested_runs]              # conftest：收集完测试后在后台先跑；下面各测试的固定命令也加进来


# 2. 只把 L2_BW_PER_SM 翻倍：prefill 最优时间的变化和提示算的一样（从演示 1 的表算）；预言的观察正好是印出来不成立的
def test_suggestion_per_sm_l2_does_what_it_says(first):
    s = suggestion(first.stdout, PER_SM)
    m = re.search(rf"加上--knob(L2_BW_PER_SM=[\d.e+]+)（L2_BW_PER_SM现在是([\d.e+]+)B/s，是lecture10/gpus.py里{re.escape(GPU_SHORT)}的取值）", s)
    c = re.search(r"prefill的最优时间(?:(变短|变长)([\d.]+)%|不变)", s)   # 以前印"变 -3.42%"
    assert m and c, s
    assert float(m.group(1).split("=")[1]) == 2 * float(m.group(2))
    (p,) = run_command(command_of(first.stdout, PER_SM))
    assert p.returncode == 0, p.stderr
    t0 = float(table_row(first.stdout, "8B gate_up M=8192", "最优")[1].replace(",", ""))
    t1 = float(table_row(p.stdout, "8B gate_up M=8192", "最优")[1].replace(",", ""))
    said = (-1 if c.group(1) == "变短" else 1) * float(c.group(2) or 0)
    assert f"{t1 / t0 - 1:+.2%}" == f"{said / 100:+.2%}", (t0, t1, c.groups())   # 学生照两张表算出的一样（以前差 0.01）
    assert printed_failures(p.stdout) == predicted_failures(s)


# 3. LOAD_LATENCY_BUSY 改短：流水线实验和坏例的倍数变成提示里算好的数；预言的观察正好是印出来不成立的
@pytest.mark.h100_only                  # 命令照 H100 的运行印（别的 GPU 上带 --gpu）：具体的输出，不是讲义的论断
def test_suggestion_shorter_latency_does_what_it_says(first):
    s = suggestion(first.stdout, LATENCY)
    m = re.search(rf"加上--knob(LOAD_LATENCY_BUSY=[\d.e+-]+)（LOAD_LATENCY_BUSY现在是([\d.e+-]+)秒，是lecture10/gpus.py里{re.escape(GPU_SHORT)}的取值；", s)
    g = re.search(r"stages1比4慢的倍数从([\d.]+)×变成([\d.]+)×，演示1的坏例从慢([\d.]+)–([\d.]+)×变成([\d.]+)–([\d.]+)×", s)
    assert m and g, s
    assert float(m.group(1).split("=")[1]) < float(m.group(2))
    cmd = command_of(first.stdout, LATENCY)
    assert cmd == f"python3 lecture13/01_timing_model.py --knob {m.group(1)}", cmd
    (p,) = run_command(cmd)
    assert p.returncode == 0, p.stderr
    # 流水线实验：成立时观察里印"快 X 倍"，不成立时表里印 stages 1–4 的时间；两种情况都从表那一行算
    row = next(line for line in p.stdout.splitlines() if line.startswith("流水线级数"))
    ts = [float(x) for x in re.search(r"stages 1 / 2 / 3 / 4\s+([\d./ ]+?)\s{2,}", row).group(1).split(" / ")]
    assert ts[0] / ts[3] == pytest.approx(float(g.group(2)), abs=0.06)
    assert float(g.group(2)) < float(g.group(1))
    # 坏例：演示 1 的四张表里"坏例"和"专家"两行的时间之比
    ratios = []
    for sec in ("8B gate_up M=1", "8B gate_up M=128", "8B gate_up M=8192", "70B/8 qkv M=128"):
        b, e = table_row(p.stdout, sec, "坏例"), table_row(p.stdout, sec, "专家")
        ratios.append(float(b[1].replace(",", "")) / float(e[1].replace(",", "")))
    assert min(ratios) == pytest.approx(float(g.group(5)), abs=0.01)
    assert max(ratios) == pytest.approx(float(g.group(6)), abs=0.01)
    assert printed_failures(p.stdout) == predicted_failures(s)


@pytest.mark.h100_only                  # H100 的旋钮取值算出的命令（助教报过：TESTS_GPU_CLAIMS=1 时报成"讲义论断不成立"）
def test_suggested_commands_carry_the_knobs_of_the_run_that_printed_them():
    # 改过旋钮的运行里，建议的命令都带上这次的 --knob（提示里先替学生算的数是在改过的模型上算的）；
    # 再加倍就是在现在的值上再加倍；这次已经不成立的观察，提示里另外说出来
    p = run_script("--knob", "L2_BW=1.54e13", "--tolerance", "0.05")
    assert p.returncode == 0, p.stderr
    cmds = [command_of(p.stdout, key) for key in (L2, PER_SM, LATENCY, TOLERANCE)]
    assert cmds[0].startswith("python3 lecture13/01_timing_model.py --tolerance 0.05 --knob L2_BW=3.08e+13 && "), cmds[0]
    assert cmds[1] == "python3 lecture13/01_timing_model.py --tolerance 0.05 --knob L2_BW=1.54e+13 " \
                      "--knob L2_BW_PER_SM=1.8e+11", cmds[1]
    assert cmds[2] == "python3 lecture13/01_timing_model.py --tolerance 0.05 --knob L2_BW=1.54e+13 " \
                      "--knob LOAD_LATENCY_BUSY=9e-07", cmds[2]
    assert cmds[3] == "python3 lecture13/01_timing_model.py --tolerance 0.1 --knob L2_BW=1.54e+13", cmds[3]
    now = printed_failures(p.stdout)
    assert now and f"这次不成立的是{len(now)}句（" in suggestion(p.stdout, LATENCY), suggestion(p.stdout, LATENCY)


# 旋钮已经很接近下限时，延迟的建议给的值仍然短、好读（两位有效数字），也不低于空闲延迟
@pytest.mark.h100_claim
def test_latency_suggestion_from_an_already_short_latency():
    """第 13 讲 01 的第 3 条建议：延迟已经很短时，它建议的更短的值照印出来的跑，预告的观察正好不成立（H100 的数）。"""
    p = run_script("--knob", "LOAD_LATENCY_BUSY=9e-07")
    assert p.returncode == 0, p.stderr
    s = suggestion(p.stdout, LATENCY)
    m = re.search(r"加上--knob LOAD_LATENCY_BUSY=([\d.e+-]+)（这次运行的LOAD_LATENCY_BUSY是9e-07秒，是--knob给的；".replace(" ", ""), s)
    assert m, s
    assert 7e-7 <= float(m.group(1)) < 9e-7 and len(m.group(1).split("e")[0].replace(".", "")) <= 2, m.group(1)
    (q,) = run_command(command_of(p.stdout, LATENCY))
    assert q.returncode == 0 and printed_failures(q.stdout) == predicted_failures(s), q.stderr


# 4. --tolerance：演示 3 的中位数变成提示里算好的数（就是照印出来的命令跑）
@pytest.mark.h100_claim
def test_suggestion_tolerance_does_what_it_says(first):
    s = suggestion(first.stdout, TOLERANCE)
    # 没变时说"还是 9 次"（助教报过：那时这里读不出来，TESTS_GPU_CLAIMS=1 时说成讲义论断不成立）
    m = re.search(r"中位数(?:从(\d+)次(?:降到|变成)|还是)(\d+)次，随机顺序(?:从(\d+)次(?:降到|变成)|还是)(\d+)次", s)
    cmd = re.search(rf"python3lecture13/01_timing_model\.py{re.escape(GPU_FLAG.replace(' ', ''))}--tolerance([\d.]+)$", s)
    assert m and cmd, s
    p = run_script("--tolerance", cmd.group(1))
    assert p.returncode == 0, p.stderr
    row = lambda out, name: re.split(r"\s{2,}", next(x for x in out.splitlines() if x.startswith(name)).strip())  # noqa: E731
    assert int(row(first.stdout, "代价模型引导（guided_tune）")[1]) == int(m.group(1) or m.group(2))
    assert int(row(p.stdout, "代价模型引导（guided_tune）")[1]) == int(m.group(2))
    assert int(row(first.stdout, "随机顺序（期望）")[1]) == int(m.group(3) or m.group(4))
    assert int(row(p.stdout, "随机顺序（期望）")[1]) == int(m.group(4))


def test_demo1_bottleneck_column_names_the_largest_printed_term(first):
    # 评审看到过：瓶颈写"搬"，可是印出来的四列里最大的是"显存"——那时全芯片的 L2 总量没印出来。
    # 现在每一行的瓶颈都是印出来的几列里最大的那一列（"搬"这一类取 搬 和 L2 总 中大的）。
    from printed import tables                                       # 表头可能折成了几行：按列读，不按空格切
    out = first.stdout if hasattr(first, "stdout") else first
    checked = 0
    for t in tables(out):
        if not (t.headers[0] == "配置" and t.headers[-1] == "瓶颈"):
            continue
        c = {name: t.col(name) for name in ("算 µs", "搬 µs", "L2 总 µs", "等 µs", "显存 µs", "瓶颈")}
        for row in t.rows:
            f = lambda name: float(row[c[name]].replace(",", ""))          # noqa: E731
            terms = {"算": f("算 µs"), "搬": max(f("搬 µs"), f("L2 总 µs")), "等": f("等 µs"), "显存": f("显存 µs")}
            assert row[c["瓶颈"]] == max(terms, key=terms.get), row
            checked += 1
    assert checked == 12


def test_group_sentence_percent_is_the_tables_two_gigabyte_numbers(first):
    """"显存字节降到 15%"：学生拿表里"显存 15.6 → 2.4 GB"算出的就是它（以前按没四舍五入的字节算，印成 16%）。"""
    from printed import find                         # 那句印成了【本次不成立】（别的 GPU 上）：跳过，说是哪一句
    a, b = map(float, find(r"group 1 → 8（显存 ([\d.]+) → ([\d.]+) GB）", first.stdout).groups())
    said = find(r"显存字节降到 (\d+)%", first.stdout).group(1)
    assert f"{b / a:.0%}" == said + "%", (a, b, said)


@pytest.mark.parametrize("i", [1, 2, 3])
def test_on_another_gpu_the_knob_suggestions_foretell_only_what_changes(i):
    """助教报过：A100 上这次已经有 7 句观察不成立，第 2 条建议（一个在 A100 上不起作用的旋钮）却说"有 7 句观察会标成
    不成立……那正是模型变了的地方"。现在提示先说这次不成立的是哪几句，再说改了以后新标成不成立的、变成成立的；
    照印出来的命令跑，标成不成立的正好是提示算的那几句。"""
    p = run_script("--gpu", "a100")
    assert p.returncode == 0, p.stderr
    s = suggestion(p.stdout, i)
    now = printed_failures(p.stdout)
    assert now and f"这次不成立的是{len(now)}句（" in s and "lecture10/gpus.py里A100的取值" in s, s
    if "改了以后还是这几句" in s:
        assert "那正是模型变了的地方" not in s, s
    (q, *_) = run_command(command_of(p.stdout, i))
    assert q.returncode == 0 and printed_failures(q.stdout) == predicted_failures(s), (printed_failures(q.stdout), s)


@pytest.mark.parametrize("args", [(), ("--gpu", "a100"), ("--knob", "LOAD_LATENCY_BUSY=9e-07")])
def test_the_few_ctas_sentence_explains_the_bottleneck_it_names(args):
    # 学生报过：--gpu a100 时演示 1 第 4 条整句讲 Little 定律拉不动显存带宽，结尾却是"瓶颈是算"（--knob
    # LOAD_LATENCY_BUSY=9e-07 时是"瓶颈是搬"）。拉不动显存只在瓶颈是等或显存时才是解释；别的瓶颈说活压在几个 SM 上
    import re
    from printed import observations, section
    p = run_script(*args)
    assert p.returncode == 0, p.stderr
    text = "".join(observations(section(p.stdout, "演示 1"))[3].split())
    if FAILED in text:                              # 这块 GPU 上这句观察不成立：印的是判据和量到的值，没有要核对的解释
        ran = " ".join(("lecture13/01_timing_model.py",) + args)      # 助教报过：默认运行印成了"（()）"
        pytest.skip(f"演示 1 第 4 条在 {ran} 里印成【本次不成立】，句子里没有瓶颈的解释可核对")
    bound = re.search(r"瓶颈是(算|搬|等|显存)", text)[1]
    if bound in ("等", "显存"):
        assert re.search(r"显存带宽（可达的\d+%），瓶颈是" + bound, text), text
    else:
        assert "活全压在这" in text and "拉得动" in text.split("瓶颈是")[1], text


def test_the_stages_1_sentence_says_which_bottlenecks_were_already_waiting(first):
    # 学生报过："4 个形状上瓶颈都变成'等'"，可 70B/8 qkv M=128 的专家本来就是等（上面的表里写着）
    from printed import observations, section
    from printed import ObservationFailed
    text = "".join(observations(section(first.stdout, "演示 1"))[4].split())
    if "【本次不成立】" in text:                        # 别的 GPU 上它不成立：要核对的那半句没印，跳过、说是哪一句
        raise ObservationFailed("演示 1 的第 5 条观察这次印的是【本次不成立】：" + text)
    shapes = ("8B gate_up M=1", "8B gate_up M=128", "8B gate_up M=8192", "70B/8 qkv M=128")
    waiting = [s for s in shapes if table_row(first.stdout, s, "专家")[-1] == "等"]
    assert "变成" not in text.split("慢")[0], text
    if waiting and len(waiting) < len(shapes):
        assert "、".join(waiting).replace(" ", "") + "专家本来就是等，其余的是变过来的" in text, (waiting, text)


A100_L2 = ("--gpu", "a100", "--knob", "L2_BW=9.38e+12")           # 助教在 A100 上照"可以试试"跑的那一条


@pytest.mark.parametrize("args", [(), ("--gpu", "a100"), A100_L2])
def test_demo1_prefill_and_demo2_group_sentences_explain_the_bottleneck_they_name(args):
    # 助教报过（A100 + 翻倍的 L2）：prefill 那句说"可模型里……瓶颈都是'算'"、"专家的 128×128 块每搬一个字节算得少"，
    # 可屋顶线也说受算力限制（没有"可"），两者的块一样大；group 那句讲"抢 L2 带宽"，瓶颈却是显存
    import re
    from printed import observations, section
    p = run_script(*args)
    assert p.returncode == 0, p.stderr
    pre = "".join(observations(section(p.stdout, "演示 1"))[2].split())
    if "本次不成立" not in pre:
        bound = re.search(r"瓶颈(?:也)?都是\"(.)", pre)[1]
        assert ("可模型里" in pre) == (bound != "算"), pre
        smaller = re.search(r"专家的(\d+)×(\d+)块比最优的(\d+)×(\d+)小", pre)
        same = re.search(r"两者的块一样大（(\d+)×(\d+)）", pre)
        assert bool(smaller) != bool(same), pre                                  # 两种说法恰好一种
        if smaller:
            assert int(smaller[1]) * int(smaller[2]) < int(smaller[3]) * int(smaller[4]), pre
    group = "".join(observations(section(p.stdout, "演示 2"))[2].split())
    if "本次不成立" not in group:
        bound = re.search(r"瓶颈是\"(.)", group)[1]
        assert ("抢L2带宽" in group) == (bound == "搬"), group


@pytest.mark.parametrize("args", [(), ("--gpu", "a100")])
def test_demo3_mentions_wgmma_only_on_a_gpu_that_has_it(args):
    # 助教报过：A100 上演示 3 说简化模型看"是否走 wgmma"，同一次运行的开头却说 A100 没有 wgmma
    from gpus import GPUS
    from printed import observations, section
    p = run_script(*args)
    text = "".join(observations(section(p.stdout, "演示 3"))[1].split())
    gpu = GPUS[args[1]] if args else kernel_lab.GPU                       # 不给 --gpu：测试会话的 GPU（TESTS_GPU）
    assert ("是否走wgmma" in text) == gpu.wgmma, text


def test_tolerance_suggestion_says_which_sentences_change_and_why():
    # 助教报过：第 4 条"可以试试"不像前三条那样说哪些观察会变；"随机顺序受益更多"按比例看其实一样
    from printed import unfold
    p = run_script("--gpu", "a100")
    s = "".join(unfold(p.stdout).split("可以试试：", 1)[1].split("\n  4. ", 1)[1].split())
    assert "受益更多" not in s and ("观察都还成立" in s or "调优的停止条件变了的地方" in s), s


@pytest.mark.parametrize("args", [(), ("--gpu", "a100")])
def test_the_peak_is_printed_the_same_everywhere(args):
    # 助教报过：同一次运行里峰值印成 362.05、362.1、362 TFLOPS 三种（数据手册的数，:g 照原样印）
    p = run_script(*args)
    found = set(re.findall(r"(?:峰值|FLOPs /) ([\d.]+) TFLOPS", p.stdout + p.stderr))
    assert p.returncode == 0 and len(found) == 1, found


SLOWDOWN_ARGS = [(), ("--knob", "HBM_LATENCY=2e-07"), ("--knob", "L2_BW=9e12")]
PREFETCH += [("lecture13/01_timing_model.py", *a) for a in SLOWDOWN_ARGS]


@pytest.mark.h100_golden                  # 读的是这两次运行里成立的那几句的写法（别的 GPU 上有几句印成不成立）
@pytest.mark.parametrize("args", SLOWDOWN_ARGS)
def test_demo1_slowdowns_are_the_ratio_of_the_printed_times(args):
    """助教报过：句子说"专家慢 3.56×"，表里印的是 225.7 和 63.5 µs（3.55）。演示 1 的观察里说到的"慢几倍"，都是那个
    形状的表里印出来的两个时间之比：中间的 M、prefill、几个 CTA 的那个形状（专家对最优），坏例（坏例对专家）。
    HBM_LATENCY 调短时几个 CTA 的那句不成立，印的"专家慢 R×"以前是没舍入的时间之比。"""
    p = run_script(*args)
    assert p.returncode == 0, p.stderr
    text = p.stdout.split("演示 2")[0]
    times = {}                                                  # (形状, 专家/最优/坏例) -> 印出来的时间
    for block in re.split(r"\n(?=\S.* M=\d+（N×K)", text)[1:]:
        shape = block.split("（", 1)[0]
        for who in ("专家", "最优", "坏例"):
            row = re.search(rf"^{who} \S+\s+([\d,.]+)\s", block, flags=re.M)
            times[shape, who] = float(row.group(1).replace(",", ""))
    said = "".join("".join(printed.observations(text)).split())
    slow = lambda shape, a="专家", b="最优": times[shape, a] / times[shape, b]                     # noqa: E731
    shapes = list(dict.fromkeys(k[0] for k in times))
    decode, mid, prefill, few = shapes                          # 表的顺序：decode、中间的 M、prefill、几个 CTA
    # 中间的 M：专家的瓶颈有几种说法（助教报过：L2_BW 调大以后专家的瓶颈也是显存，印的时间和最优一样，句子说"一样快"，
    # 这里只认"慢 R×"，报成金标运行的前提变了）
    assert (f"慢{slow(mid):.2f}×" in said.split("prefill")[0]
            or (slow(mid) == 1 and "专家的瓶颈也是显存，和最优一样快（印出来的时间相同）" in said)
            or f"专家的瓶颈也是显存，只比最优慢{slow(mid) - 1:.2%}" in said), said
    assert f"TFLOPS，慢{slow(prefill):.2f}×" in said, said
    assert f"快{slow(few):.1f}×" in said or f"专家慢{slow(few):.2f}×" in said, said
    bad = [slow(x, "坏例", "专家") for x in shapes]
    assert f"慢{min(bad):.2f}–{max(bad):.2f}×" in said, said


TOLERANCES = [("0.001", "0.1%"), ("0.015", "1.5%"), ("0.999", "99.9%")]
PREFETCH += [("lecture13/01_timing_model.py", "--tolerance", given) for given, _ in TOLERANCES]
PREFETCH += [("lecture13/01_timing_model.py", "--tolerance", "0")]     # 下面两个测试用；它印的建议：suggested_runs


@pytest.mark.parametrize("given, said", TOLERANCES)
def test_the_tolerance_is_said_with_the_digits_it_was_given(given, said):
    """学生报过：--tolerance 一律取整印成百分数：0.001 和 0 都是"进入最优的 0% 以内"（要跑的次数却不一样），0.999 是
    "100% 以内"（--help 说要小于 1），0.015 是"2%"。现在给了几位就印几位：标题和"可以试试"都是。"""
    p = run_script("--tolerance", given)
    assert p.returncode == 0, p.stderr
    flat = "".join(p.stdout.split())
    assert f"进入最优的{said}以内要跑几次" in flat and f"停止条件从最优的{said}以内" in flat, flat[-1500:]


def test_a_zero_tolerance_is_said_as_finding_the_optimum_itself():
    """审读报过：--tolerance 0 时标题说"进入最优的 0% 以内要跑几次"、"可以试试"说"从最优的 0% 以内放宽到 5% 以内"——
    对，可读着像没说。0 就是找到最优本身（和最优一样快的配置不止一个时，碰到哪一个都算）：标题、表下的说明、
    "可以试试"都这样说；guided_tune 找到的配置真的和最优一样快（表里"离最优"那列就是它）。"""
    p = run_script("--tolerance", "0")
    assert p.returncode == 0, p.stderr
    flat = "".join(p.stdout.split())
    assert "0%以内" not in flat, [line for line in p.stdout.splitlines() if "0% 以内" in line]
    assert "找到最优本身要跑几次" in flat
    assert "跑了几次才找到最优本身\"（和最优一样快的配置不止一个时，碰到哪一个都算）" in flat
    assert "停止条件从找到最优本身放宽到进入最优的5%以内" in flat
    import sched_lab as sl
    from evolve import all_shapes
    for s in all_shapes():
        r = sl.guided_tune(s.M, s.N, s.K, 0)
        assert r.time == r.optimum, (s, r)                          # 0 的意思：停在和最优一样快的配置上


@pytest.mark.h100_golden                  # 要的是一次这样的运行：这次不成立的那几句，照建议改了以后全都成立
@pytest.mark.parametrize("key", [PER_SM, LATENCY, TOLERANCE])
def test_a_suggestion_that_makes_every_failed_sentence_hold_names_them_once(key):
    """审读报过（--tolerance 0）："这次不成立的是 1 句（演示 3 第 3 句）；1 句会变成成立（演示 3 第 3 句）"——同一句
    列了两遍。现在这次不成立的全都会成立时说一遍："这次不成立的 1 句（演示 3 第 3 句）改了以后会变成成立，观察就都
    成立了"（另有新标成不成立的时是"……；另外会新标成不成立……"）；照印出来的命令跑，标成不成立的正好是说的那几句。"""
    p = run_script("--tolerance", "0")
    assert p.returncode == 0, p.stderr
    now, s = printed_failures(p.stdout), suggestion(p.stdout, key)
    assert now, "金标运行的前提变了：--tolerance 0 时没有不成立的观察"
    lists = re.findall(r"（((?:演示\d第[\d、]+句，?)+)）", s)
    assert _listed(lists[0]) == now and len(lists) == 1 + ("另外会新标成不成立" in s), s      # 这次不成立的只列一次
    assert f"这次不成立的{len(now)}句（" in s and ("观察就都成立了" in s) != ("另外会新标成不成立" in s), s
    (q, *_) = run_command(command_of(p.stdout, key))
    assert q.returncode == 0 and printed_failures(q.stdout) == predicted_failures(s), q.stdout[-2000:]
    assert not set(now) & set(printed_failures(q.stdout))


TUNING_KNOBS = [[], ["--knob", "HBM_EFFICIENCY=0.85"]]           # 下面第三个测试的参数；第一个测试的 --tolerance 0.5 也在里面
PREFETCH += [("lecture13/01_timing_model.py", "--tolerance", "0.5", *knob) for knob in TUNING_KNOBS]


@pytest.mark.parametrize("tolerance", ["0.5", "0.01"])
def test_demo3_summary_table_prints_the_medians_the_sentence_compares(tolerance):
    """学生报过：--tolerance 0.5 时表里引导、随机的中位数都印 13，观察 3 却说"引导中位数 13，随机 13.4"、引导更少——照表
    核对不了；"中位数占穷举"还把 1.5/3744 印成 0.0%。现在表里的中位数就是句子里的，不是 0 的比例不印成 0。"""
    from printed import section, tables
    # 默认的停止条件（脚本里的 TOLERANCE）：不给 --tolerance 的运行就是它，标准输出和 --tolerance 0.01 逐字节相同
    # （设置行照样印"--tolerance 0.01"），用那一次（和别的测试共用），不为它另跑一次
    with open(os.path.join(ROOT, "lecture13", "01_timing_model.py"), encoding="utf-8") as f:
        default = float(re.search(r"^TOLERANCE = ([\d.]+)", f.read(), re.M).group(1))
    p = run_script() if float(tolerance) == default else run_script("--tolerance", tolerance)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"设置：--tolerance {float(tolerance)}"), p.stdout[:200]
    demo3 = section(p.stdout, "演示 3")
    t = next(t for t in tables(demo3) if "中位数占穷举" in t.headers)
    rows = {r[0]: r for r in t.rows}
    guided, rnd = rows["代价模型引导（guided_tune）"][1], rows["随机顺序（期望）"][1]
    flat = "".join(demo3.split())
    assert f"引导中位数{guided}，随机{rnd}" in flat or f"中位数{guided}对{rnd}" in flat, (guided, rnd, flat[-800:])  # 不成立 / 成立
    assert not [r for r in t.rows if re.fullmatch(r"0(\.0+)?%", r[-1])], t.rows


@pytest.mark.parametrize("gpu", [(), ("--gpu", "a100")])
def test_the_l2_intensity_pair_has_the_depth_it_says_is_the_same(gpu):
    # 审读报过：--gpu a100 时说"(128,128,64,4,4,8) 对 (128,256,64,8,3,8)（每 warp 的累加器、级数、CTA/SM 都一样）"
    out = "".join(run_script(*gpu).stdout.split())
    m = re.search(r"L2算术强度：\((\d+(?:,\d+){5})\)对\((\d+(?:,\d+){5})\)（每warp的累加器、级数、CTA/SM都一样）", out)
    assert m, out[:2000]
    small, large = ([int(x) for x in g.split(",")] for g in m.groups())
    assert small[4] == large[4] and small[3] * 2 == large[3], (small, large)     # 级数一样；warp 数随块翻倍


@pytest.mark.parametrize("knob", TUNING_KNOBS)
def test_tuning_medians_are_printed_as_computed_in_the_table_and_the_suggestion(knob):
    # 审读报过（--tolerance 0.5）：表里"同分先试 stages 大的"中位数印成 2（其实 1.5，旁边的 0.04% 按 1.5 算）；
    # 建议 4 说"随机顺序从 13 次变成……"，表里随机是 13.4
    out = run_script("--tolerance", "0.5", *knob).stdout
    row = next(line.split() for line in out.splitlines() if line.startswith("引导，同分先试 stages 大的"))
    exhaustive = float(next(line.split() for line in out.splitlines() if line.startswith("穷举"))[1].replace(",", ""))
    median, share = float(row[-4].replace(",", "")), float(row[-1].rstrip("%"))
    # 比例按它印出来的位数比（console.fmt：通常 1 位，会印成 0% 时多一位）：H100 上 1.5 / 3744 是 0.04%，
    # 助教把 HBM_EFFICIENCY 改成 0.85 以后中位数是 2，2 / 3744 印成 0.1%，以前这里按 2 位比（0.05）就失败了
    digits = len(row[-1].rstrip("%").partition(".")[2])
    assert round(median / exhaustive * 100, digits) == share, row
    rnd = next(line.split() for line in out.splitlines() if line.startswith("随机顺序（期望）"))[-4]
    said = "".join(out.split("可以试试：", 1)[1].split())
    assert f"随机顺序从{rnd}次" in said or f"随机顺序还是{rnd}次" in said, (rnd, said[:1500])


PREFETCH += [("lecture13/01_timing_model.py", "--knob", "L2_BW_PER_SM=5.85e10")]


@pytest.mark.h100_only                     # 131.6 是 H100 的 L2_BW 除以这个取值
def test_the_l2_share_per_sm_is_printed_with_the_digits_its_comparison_needs():
    # 审读报过：--knob L2_BW_PER_SM=5.85e10 时"L2_BW / L2_BW_PER_SM ≈ 132 个 < 132 个 SM"（其实 131.6）
    said = "".join(run_script("--knob", "L2_BW_PER_SM=5.85e10").stdout.split())
    assert "L2_BW/L2_BW_PER_SM≈131.6个<132个SM" in said, said[-3000:]


# ---------------------------------------------------------------- 审读（h102）：结论照印出来的数说

LATENCY_ARGS = [("--knob", "HBM_LATENCY=5e-05"), ("--knob", "LOAD_LATENCY_IDLE=7e-09"), ("--knob", "WARP_TILE_HALF=25600"),
                ("--gpu", "a100", "--knob", "L2_BW_PER_SM=9e9")]
PREFETCH += [("lecture13/01_timing_model.py", *a) for a in LATENCY_ARGS]
PREFETCH += [("lecture13/01_timing_model.py", "--knob", "HBM_EFFICIENCY=0.088")]     # 下面第二个测试


@pytest.mark.parametrize("args", LATENCY_ARGS)
def test_latency_suggestion_says_pipelining_got_cheaper_only_when_the_printed_multiples_shrank(args):
    """审读报过：--knob HBM_LATENCY=5e-05 时第 3 条建议说"stages 1 比 4 慢的倍数从 6.0× 变成 6.0×，演示 1 的坏例从慢
    3.52–4.00× 变成 3.52–4.00×：延迟越短，流水线越不值钱"；LOAD_LATENCY_IDLE=7e-09 时坏例的上端从 2.56 变成 2.57，
    照样这么说；--gpu a100 --knob L2_BW_PER_SM=9e9 时坏例从 0.99–1.00× 变成 1.00–1.00×，没有一个变小。现在这句结论只在
    印出来的三个倍数都没变大、至少一个变小时才说；"有的倍数变小"只在真有变小的时候说。"""
    p = run_script(*args)
    assert p.returncode == 0, p.stderr
    s = suggestion(p.stdout, LATENCY)
    # 印出来没变的说"还是"，两头一样的范围只印一个数（"从 1.0× 变成 1.0×""1.00–1.00×"也被审读报过）
    g = re.search(r"stages1比4慢的倍数(?:从([\d.]+)×变成|还是)([\d.]+)×，演示1的坏例(?:从慢([\d.–]+)×变成|还是慢)([\d.–]+)×：", s)
    assert g, s
    ends = lambda r: [float(x) for x in r.split("–")] * (2 if "–" not in r else 1)     # noqa: E731  "1.00" → 两头都是它
    g1, r1 = float(g[2]), ends(g[4])
    g0, r0 = float(g[1] or g[2]), ends(g[3] or g[4])
    assert g[1] != g[2] and g[3] != g[4], s                                            # 不说"从 x 变成 x"
    pairs = [(g0, g1), (r0[0], r1[0]), (r0[1], r1[1])]
    claims = "延迟越短，流水线越不值钱" in s
    assert claims == (all(b <= a for a, b in pairs) and any(b < a for a, b in pairs)), s
    assert ("有的倍数变小" in s) <= any(b < a for a, b in pairs), s


def test_tolerance_suggestion_says_random_saves_more_only_when_its_printed_medians_say_so():
    """审读报过：--knob HBM_EFFICIENCY=0.088 时"guided_tune 的中位数还是 9 次，随机顺序还是 2 次（合格的配置多了，随机
    顺序少跑的次数更多）"——两个中位数印出来都没变（没舍入的随机中位数从 1.96 变成 1.89）。"""
    p = run_script("--knob", "HBM_EFFICIENCY=0.088")
    assert p.returncode == 0, p.stderr
    s = suggestion(p.stdout, TOLERANCE)
    m = re.search(r"中位数(?:从([\d.,]+)次(?:降到|变成)|还是)([\d.,]+)次，随机顺序(?:从([\d.,]+)次(?:降到|变成)|还是)([\d.,]+)次", s)
    assert m, s
    num = lambda x: float(x.replace(",", ""))                                            # noqa: E731
    g_was, g_now = num(m.group(1) or m.group(2)), num(m.group(2))
    r_was, r_now = num(m.group(3) or m.group(4)), num(m.group(4))
    assert ("随机顺序少跑的次数更多" in s) == (r_was - r_now > g_was - g_now), s


def test_prefill_slowdown_is_not_printed_as_one_when_the_printed_times_differ():
    """审读报过：--knob WARP_TILE_HALF=25600 时演示 1 的 prefill 那句说"专家差得最多的一项是等……135 TFLOPS，慢 1.00×"，
    表里专家 14,225.9 µs、最优 14,202.5 µs。慢几倍照表里印的时间算，印到看得出不是 1 的位数。"""
    p = run_script("--knob", "WARP_TILE_HALF=25600")
    assert p.returncode == 0, p.stderr
    e = float(table_row(p.stdout, "8B gate_up M=8192", "专家")[1].replace(",", ""))
    b = float(table_row(p.stdout, "8B gate_up M=8192", "最优")[1].replace(",", ""))
    assert e != b
    said = flat(printed.section(p.stdout, "演示 1："))
    m = re.search(r"prefill（8Bgate_upM=8192）.*?TFLOPS，慢([\d.]+)×", said)
    assert m, said[-3000:]
    x = m.group(1)
    assert float(x) != 1.0 and round(e / b, len(x.split(".")[1])) == float(x), (x, e, b)
