"""README 说有哪几块 GPU 的两处（"改编这门课"的"现在是 h100、a100"、目录里 gpus.py 那行）跟着 lecture10/gpus.py 的 GPUS。
助教报过：照 README 加了一块 L40S，整套测试都过了，README 还说"现在是 h100、a100"——没有一个测试提醒他改。"""

import os
import re

import gpus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_readme_names_every_gpu_key_that_gpus_py_has():
    said = re.search(r"现在是 ([a-z0-9、]+)；", readme())
    assert said, "README 的\"改编这门课\"里找不到\"现在是 …；\"（说有哪几块 GPU 的那句）"
    keys = said.group(1).split("、")
    assert keys == list(gpus.GPUS), (f"README 说 --gpu 现在是 {'、'.join(keys)}，lecture10/gpus.py 的 GPUS 是 "
                                     f"{'、'.join(gpus.GPUS)}：加了或去掉一块 GPU，README 这句要跟着改")


def test_readme_directory_line_names_every_gpu():
    line = next((x for x in readme().splitlines() if x.startswith("lecture10/gpus.py")), None)
    assert line, "README 的目录里没有 lecture10/gpus.py 那一行"
    names = re.search(r"GPU 记录（([^）]*)）", line).group(1).split("、")
    assert names == [g.name for g in gpus.GPUS.values()], (
        f"README 目录里 gpus.py 那行写的是 {'、'.join(names)}，GPUS 里是 "
        f"{'、'.join(g.name for g in gpus.GPUS.values())}：跟着改")
