"""形状是数据（lecture13/llama_shapes.py 的 PROJECTIONS）：随机划分按写明的规则给投影配对（evolve.problem.pair_projections），
配不上就拒绝、一句话点名；按模型划分看形状的 model，不看名字的前缀；印出来的形状数从数据数。
加第五个模型（Qwen2.5-7B 的四个投影）：划分仍然对半、仍然配对。"""

import os
import shutil

import pytest

from conftest import ROOT, run_script
from evolve.problem import (PROJECTIONS, TOKENS, Shape, ShapeSetError, all_shapes, pair_projections, split_names,
                            split_shapes)
from llama_shapes import Projection

# Qwen2.5-7B：hidden 3584、intermediate 18944、Hq 28、Hkv 4、head_dim 128（不切张量并行）
QWEN = (Projection("Qwen2.5-7B", "qkv", (28 + 2 * 4) * 128, 3584), Projection("Qwen2.5-7B", "o", 3584, 28 * 128),
        Projection("Qwen2.5-7B", "gate_up", 2 * 18944, 3584), Projection("Qwen2.5-7B", "down", 3584, 18944))
QWEN_SOURCE = "".join(f"    Projection({p.model!r}, {p.kind!r}, {p.N}, {p.K}),\n" for p in QWEN)


def assert_balanced_and_paired(shapes):
    """对半；每对投影在训练和测试里各占一半；每个测试形状在训练里有它那一对的同一个 M。"""
    train, test = split_shapes(shapes)
    assert len(train) + len(test) == len(shapes) and abs(len(train) - len(test)) <= 1
    assert not set(train) & set(test)
    pairs = pair_projections(shapes)
    names = [n for pair in pairs for n in pair]
    assert sorted(names) == sorted({s.name for s in shapes})                 # 每个投影恰好在一对里
    twin = {a: b for a, b in pairs} | {b: a for a, b in pairs}
    seen = {(s.name, s.M) for s in train}
    for a, b in pairs:
        assert sum(s.name in (a, b) for s in train) == sum(s.name in (a, b) for s in test)
    assert all((twin[s.name], s.M) in seen for s in test)


def test_the_lecture_pairs_follow_the_stated_rule():
    """讲义的 8 个投影按"N 最接近的先配"配出来的，就是讲义说的四对（N 相同、N 相近、剩下最小和最大）。"""
    assert pair_projections(all_shapes()) == (("8B o", "8B down"), ("70B/8 o", "70B/8 down"),
                                              ("8B qkv", "70B/8 gate_up"), ("70B/8 qkv", "8B gate_up"))
    assert_balanced_and_paired(all_shapes())


def test_a_fifth_model_keeps_the_split_balanced_and_paired():
    shapes = all_shapes(PROJECTIONS + QWEN)
    assert len(shapes) == (len(PROJECTIONS) + 4) * len(TOKENS)
    assert_balanced_and_paired(shapes)
    by_train, by_test = split_shapes(shapes, "by_model")
    assert {s.model for s in by_train} == {"8B"} and {s.model for s in by_test} == {"70B/8", "Qwen2.5-7B"}
    assert split_names(shapes)["by_model"] == "8B 训练、70B/8、Qwen2.5-7B 测试"


def test_an_unpaired_projection_is_refused_in_one_sentence_naming_it():
    shapes = all_shapes(PROJECTIONS + QWEN[:1])
    with pytest.raises(ShapeSetError) as e:
        split_shapes(shapes)
    msg = str(e.value)
    assert "\n" not in msg and "llama_shapes.py" in msg
    unpaired = [n for n in {s.name for s in shapes} if f"投影 {n} 配不上对" in msg]
    assert len(unpaired) == 1


def test_the_model_is_a_property_of_the_shape_not_of_its_name():
    s = Shape("我的投影", 16, 4096, 4096, model="8B")
    assert s.model == "8B" and s == Shape("我的投影", 16, 4096, 4096)        # model 不参与比较
    train, test = split_shapes((s, *all_shapes()[len(TOKENS):]), "by_model")
    assert s in train
    assert Shape("8B gate_up", 3000, 28672, 4096).model == "8B"               # 不给就查数据


def copy_project(tmp_path, extra):
    for d in ("lecture01", "lecture10", "lecture13", "lecture14"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    data = tmp_path / "lecture13" / "llama_shapes.py"
    text = data.read_text(encoding="utf-8")
    anchor = "    Projection(\"70B/8\", \"down\", 8192, 28672 // 8),\n"
    assert anchor in text
    data.write_text(text.replace(anchor, anchor + extra), encoding="utf-8")


def test_a_fifth_model_added_in_the_data_file_is_counted_by_the_scripts(tmp_path):
    """拷贝里的 llama_shapes.py 加 Qwen2.5-7B 的四行：06 印的形状数、按模型划分的名字都跟着数据变。"""
    copy_project(tmp_path, QWEN_SOURCE)
    r = run_script("lecture14/06_your_heuristic.py", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    n = (len(PROJECTIONS) + 4) * len(TOKENS)
    assert f"全部 {n} 个形状" in r.stdout and "8B 训练、70B/8、Qwen2.5-7B 测试" in r.stdout
    assert f"全部 {len(all_shapes())} 个形状" not in r.stdout


def test_an_unpaired_projection_in_the_data_file_stops_a_script_with_one_sentence(tmp_path):
    copy_project(tmp_path, QWEN_SOURCE.splitlines(keepends=True)[0])
    r = run_script("lecture14/04_alphaevolve_tiling.py", "--quick", cwd=tmp_path, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    # 9 个投影按"N 最接近的先配"配完四对，剩下的是 N 离别人最远的 8B gate_up（N = 28672）：点名的是它
    assert "投影 8B gate_up 配不上对" in r.stderr and "9 个投影" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
