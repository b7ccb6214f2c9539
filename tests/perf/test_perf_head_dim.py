"""Explicit attention head size (ModelSpec.head_dim): shapes, layout checks, JSON and KB input."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest
from perf_fixtures import A100, dgx

from accelkb.errors import InputError
from accelkb.perf import estimate_inference, estimate_training
from accelkb.perf.shapes import kv_dim, matmul_params_per_layer, q_dim
from accelkb.perf.specs import ModelSpec

XL = dict(name="gpt3-xl", layers=24, hidden=2048, heads=24, kv_heads=24, ffn_hidden=8192,
          vocab=50257, seq_len=2048, gated_mlp=False)


def test_hidden_not_divisible_by_heads_needs_an_explicit_head_dim() -> None:
    with pytest.raises(pydantic.ValidationError, match="or an explicit head_dim"):
        ModelSpec(**XL)
    m = ModelSpec(**XL, head_dim=128)  # Brown et al. 2020 Table 2.1: d_head = 128
    assert (m.head_size, q_dim(m), kv_dim(m)) == (128, 3072, 3072)
    # q, k, v: 2048 -> 3072 each; o: 3072 -> 2048; MLP 2 x 2048 x 8192
    assert matmul_params_per_layer(m) == 4 * 2048 * 3072 + 2 * 2048 * 8192


def test_default_head_size_is_unchanged() -> None:
    m = ModelSpec(**{**XL, "heads": 16, "kv_heads": 16})
    assert m.head_dim is None and m.head_size == 128 and q_dim(m) == 2048
    same = ModelSpec(**{**XL, "heads": 16, "kv_heads": 16}, head_dim=128)
    assert matmul_params_per_layer(same) == matmul_params_per_layer(m)


def test_head_dim_scales_attention_work_and_kv_cache() -> None:
    narrow = ModelSpec(**{**XL, "heads": 16, "kv_heads": 16})
    wide = narrow.model_copy(update={"head_dim": 256})
    a = estimate_inference(narrow, dgx(A100, 8), "tp=8,batch=8,in=1024,out=128")
    b = estimate_inference(wide, dgx(A100, 8), "tp=8,batch=8,in=1024,out=128")
    assert b.memory_breakdown_bytes["kv_cache"] == pytest.approx(
        2 * a.memory_breakdown_bytes["kv_cache"])
    assert b.decode_s_per_token > a.decode_s_per_token


def test_tp_must_divide_heads_and_kv_heads() -> None:
    m = ModelSpec(**XL, head_dim=128)
    est = estimate_training(m, dgx(A100, 8), "tp=8,mb=1,gbs=8")
    assert est.chips == 8
    with pytest.raises(InputError, match="divide the 24 attention heads"):
        estimate_training(m, dgx(A100, 16), "tp=16,mb=1,gbs=1")
    gqa = ModelSpec(**{**XL, "heads": 24, "kv_heads": 8}, head_dim=128)
    with pytest.raises(InputError, match="divide the 8 key/value heads"):
        estimate_inference(gqa, dgx(A100, 8), "tp=6")
    assert estimate_inference(gqa, dgx(A100, 8), "tp=8").chips == 8


def test_model_json_with_head_dim_and_cli_errors(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.cli import main

    spec = {k: v for k, v in XL.items() if k != "name"}
    bad = tmp_path / "xl-no-head.json"
    bad.write_text(json.dumps(spec))
    good = tmp_path / "xl.json"
    good.write_text(json.dumps({**spec, "head_dim": 128}))
    sys_file = tmp_path / "dgx.json"
    sys_file.write_text(dgx(A100, 8).model_dump_json())
    assert main(["estimate", "training", "--model", str(bad), "--system", str(sys_file),
                 "--parallel", "tp=8,mb=1,gbs=8"]) == 2
    assert "explicit head_dim" in capsys.readouterr().err
    assert main(["estimate", "training", "--model", str(good), "--system", str(sys_file),
                 "--parallel", "tp=8,mb=1,gbs=8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chips"] == 8
    assert main(["estimate", "training", "--model", str(good), "--system", str(sys_file),
                 "--parallel", "tp=16,mb=1,gbs=8"]) == 2
    assert "attention heads" in capsys.readouterr().err


def test_gpt3_xl_from_the_knowledge_base_has_its_published_head_size() -> None:
    from accelkb.perf.from_kb import model_spec

    m = model_spec("gpt3-1.3b")
    assert (m.hidden, m.heads, m.head_size) == (2048, 24, 128)
    assert model_spec("gpt3-175b").head_dim is None
