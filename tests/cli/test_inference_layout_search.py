"""`estimate inference` with neither tp nor pp searches the layout over the system's chips, as
advise's baseline does, and says so: the default of one chip decoded Llama 3.1 70B on a
four-wafer CS-3 cluster at 1.25 tokens/s (1,163 on its four wafers) and refused a DGX H100.
A request longer than the model's context is bad input (from an audit)."""

from __future__ import annotations

import json

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf import estimate_inference


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["estimate", "inference", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_no_tp_or_pp_searches_the_chips_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, "--model", "llama3.1-70b", "--system", "cs-3-cluster-4")
    assert out["chips"] == 4 and out["config"]["pp"] == 4
    assert "no tp or pp given" in out["layout_note"]
    one = estimate_inference("llama3.1-70b", "cs-3-cluster-4", "tp=1,pp=1")  # the old default
    assert out["tokens_per_s_per_user"] > 100 * one.tokens_per_s_per_user
    # the searched layout is the lowest per-token latency of those given by hand
    for tp, pp in ((1, 2), (2, 2), (4, 1)):
        try:
            other = estimate_inference("llama3.1-70b", "cs-3-cluster-4", f"tp={tp},pp={pp}")
        except InputError:  # a layout the model's heads or the memory refuse
            continue
        assert other.decode_s_per_token >= out["decode_s_per_token"] - 1e-12


def test_the_users_batch_and_lengths_are_kept(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, "--model", "llama2-70b", "--system", "dgx-h100", "--parallel",
                "batch=16,in=512,out=256")
    cfg = out["config"]
    assert (cfg["batch"], cfg["prompt_len"], cfg["output_len"]) == (16, 512, 256)
    assert cfg["tp"] * cfg["pp"] > 1 and out["layout_note"]
    given = _json(capsys, "--model", "llama2-70b", "--system", "dgx-h100", "--parallel", "tp=8")
    assert given["layout_note"] is None and given["config"]["tp"] == 8


def test_a_request_beyond_the_models_context_is_bad_input(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                 "--parallel", "tp=8,in=100000,out=100000"]) == 2
    assert "within the 4,096-token context of 'llama2-70b'" in capsys.readouterr().err
