"""A layout the hardware cannot hold is a negative answer (exit 1), as `configure` says of an
unsatisfiable request, and not bad input (exit 2): issue 25's done-when calls it infeasible in
estimate, configure and advise, and the README's exit codes make "infeasible" a 1. Until this
change `estimate` and `advise` exited 2 for it, so a script could not tell "this layout cannot
run" from "you mistyped the layout"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import InfeasibleError, InputError


def test_a_layer_that_does_not_fit_the_sram_is_infeasible(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    # the issue's own example: GPT-3 2.7B, dp=64, micro-batch 8 on an IPU-POD64
    assert main(["estimate", "training", "--model", "gpt3-2.7b", "--system", "ipu-pod64",
                 "--parallel", "tp=1,pp=1,dp=64,mb=8,gbs=512,zero=3"]) == 1
    err = capsys.readouterr().err
    assert "infeasible" in err and "one layer of 'gpt3-2.7b'" in err and "0.90 GB" in err
    assert "Traceback" not in err


def test_json_says_infeasible_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                 "--chips", "1", "--parallel", "tp=1", "--json"]) == 1
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["status"] == "INFEASIBLE" and "weights 137.95 GB" in data["reason"]
    assert data["system"] == "dgx-h100" and data["chips"] == 1
    assert "infeasible" in out.err


def test_a_mistyped_layout_is_still_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "gpt3-2.7b", "--system", "ipu-pod64",
                 "--parallel", "tp=3", "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "attention heads" in out.err


def test_dense_checks_the_input_before_the_memory(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["estimate", "training", "--model", "resnet50", "--system", "bow-pod16"]
    # a micro-batch larger than a chip's 120 images is a mistake, whatever it would need
    assert main([*base, "--parallel", "gbs=1920,mb=1920,recompute=none"]) == 2
    assert "divide the 120 samples per chip" in capsys.readouterr().err
    # all 120 at once without recomputation is well formed and does not fit 900 MB of SRAM
    assert main([*base, "--parallel", "gbs=1920,mb=120,recompute=none"]) == 1
    assert "infeasible" in capsys.readouterr().err


def test_advise_with_no_layout_that_fits_answers_no_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.md"
    assert main(["advise", "--system", "ipu-pod16", "--workload", "gpt3-175b-training",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no training layout of gpt3-175b fits ipu-pod16" in err and "SRAM" in err
    assert not out.exists()


def test_infeasible_is_an_input_error_for_the_searches_that_skip_it() -> None:
    # every layout search catches InputError to pass over a layout: it must go on doing so
    assert issubclass(InfeasibleError, InputError)
