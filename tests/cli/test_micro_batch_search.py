"""`estimate training` without a micro-batch searches it, as it does for a convolutional network:
the TrainingConfig default of one sequence left a 197-token ViT-L/16 micro-batch to kernel
launches (DGX A100, gbs 1024: 7.85 s per step at 1.9 % MFU, against 0.32 s at micro-batch 64)."""

from __future__ import annotations

import json

import pytest

from accelkb.cli import main
from accelkb.errors import InfeasibleError
from accelkb.perf import estimate_training
from accelkb.perf.api import fastest_micro_batch
from accelkb.perf.calibration import load_calibration
from accelkb.perf.from_kb import model_spec, system_spec
from accelkb.perf.training import TrainingConfig


def _run(capsys: pytest.CaptureFixture[str], parallel: str) -> dict:
    assert main(["estimate", "training", "--model", "vit-l16", "--system", "dgx-a100",
                 "--parallel", parallel, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_micro_batch_not_given_is_searched_and_said(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    searched = _run(capsys, "gbs=1024")
    one = _run(capsys, "gbs=1024,mb=1")
    assert searched["config"]["micro_batch"] > 1 and one["config"]["micro_batch"] == 1
    assert "micro-batch" in searched["layout_note"] and "micro-batch" not in one["layout_note"]
    assert searched["step_time_s"] < one["step_time_s"] / 5  # launches no longer dominate
    # images per second for a ViT, whose tokens are its 197 patches (from an audit)
    assert searched["samples_per_s"] == pytest.approx(1024 / searched["step_time_s"])
    assert searched["uncertainty"]["step_time_s"]["interval"]["low"] < searched["step_time_s"]


def test_the_search_takes_the_fastest_that_fits() -> None:
    model, system = model_spec("gpt3-2.7b"), system_spec("ipu-pod16")
    cfg = TrainingConfig(dp=16, global_batch=128, zero=3)
    best = fastest_micro_batch(model, system, cfg, load_calibration())
    times = {}
    for mb in (1, 2, 4, 8):
        try:
            times[mb] = estimate_training(model, system, cfg.model_copy(
                update={"micro_batch": mb})).step_time_s
        except InfeasibleError:  # a micro-batch that does not fit the SRAM
            continue
    assert len(times) < 4  # the 900 MB of SRAM refuses the largest
    assert best.step_time_s == min(times.values())
    assert best.config.micro_batch == min(times, key=times.__getitem__)


def test_no_micro_batch_that_fits_is_infeasible(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "gpt3-175b", "--system", "dgx-a100",
                 "--parallel", "tp=8,gbs=64"]) == 1
    assert "infeasible: configuration does not fit" in capsys.readouterr().err


def test_human_output_shows_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "vit-l16", "--system", "dgx-a100",
                 "--parallel", "gbs=1024"]) == 0
    out = capsys.readouterr().out
    assert "dp=8, micro_batch=" in out and "layout: micro-batch" in out


def test_the_attention_kernel_not_given_is_the_stacks(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Llama 2 7B on a DGX H100 was refused for 104 GB of attention scores that the
    FlashAttention kernel every framework launches there never stores (from an audit)."""
    base = ["estimate", "training", "--model", "llama2-7b", "--system", "dgx-h100"]
    assert main([*base, "--parallel", "gbs=256,zero=3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["fused_attention"] is True and "no flash given" in out["layout_note"]
    assert main([*base, "--parallel", "gbs=256,zero=3,flash=0"]) == 1  # said: kept
    assert "activations 104" in capsys.readouterr().err
    # a compiled chip without an attention-fusing compiler keeps it off (Graphcore's PopART)
    assert main(["estimate", "training", "--model", "gpt3-2.7b", "--system", "ipu-pod64",
                 "--parallel", "tp=4,gbs=512", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["fused_attention"] is False


def test_a_refusal_names_the_sequence_no_one_gave(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 8B on a DGX H100 needed 637 GB per chip, at its 131,072-token context, with
    nothing saying that the sequence was the context (from an audit)."""
    base = ["estimate", "training", "--model", "llama3.1-8b", "--system", "dgx-h100"]
    assert main([*base, "--parallel", "gbs=512,zero=3"]) == 1
    assert "the model's 131,072-token context (no seq given): seq=N" in capsys.readouterr().err
    assert main([*base, "--parallel", "gbs=512,zero=3,seq=8192"]) == 0


def test_the_search_passes_over_micro_batches_the_pipeline_refuses(
        capsys: pytest.CaptureFixture[str]) -> None:
    """An interleaved pipeline needs its micro-batches per replica to be a multiple of pp: the
    search had stopped at the first micro-batch that broke that rule (found re-reading it)."""
    assert main(["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-h100",
                 "--chips", "64", "--parallel", "tp=8,pp=4,v=2,gbs=64,zero=1", "--json"]) == 0
    cfg = json.loads(capsys.readouterr().out)["config"]
    dp = 64 // (cfg["tp"] * cfg["pp"])  # dp not given: the chips left
    assert cfg["dp"] is None and (64 // dp // cfg["micro_batch"]) % 4 == 0
