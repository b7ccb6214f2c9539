"""Convolutional networks in estimate, configure and advise (issue 25, deliverable 5): ResNet-50
was refused by all three ("expected a transformer")."""

from __future__ import annotations

import doctest
import json

import pytest

from accelkb.cli import main


def test_estimate_gives_images_per_second_with_a_range(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert main(["estimate", "training", "--model", "resnet50", "--system", "bow-pod16",
                 "--parallel", "gbs=1920,mb=20,recompute=full", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rate = data["samples_per_s"]
    assert data["config"]["micro_batch"] == 20 and data["chips"] == 16
    assert rate == pytest.approx(42030, rel=0.1)  # Graphcore's Bow Pod16 table, Pre-SDK 2.5
    iv = data["uncertainty"]["samples_per_s"]["interval"]
    assert iv["low"] < rate < iv["high"] and "graphcore training" in iv["basis"]
    assert data["uncertainty"]["step_time_s"]["sensitivity"]


def test_estimate_searches_the_micro_batch_and_refuses_what_does_not_apply(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "resnet50", "--system", "ipu-pod16",
                 "--parallel", "gbs=1920"]) == 0
    assert "the fastest fitting micro-batch and recomputation" in capsys.readouterr().out
    for argv, says in ((["--parallel", "gbs=1920,tp=2"], "got tp"),
                       (["--parallel", "mb=4"], "expected gbs=N"),
                       (["--parallel", "gbs=1920,recompute=selective"], "recompute=full or none")):
        assert main(["estimate", "training", "--model", "resnet50", "--system", "ipu-pod16",
                     *argv]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
    assert main(["estimate", "inference", "--model", "resnet50", "--system", "ipu-pod16"]) == 2


def test_configure_picks_the_micro_batch_or_says_why_not(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["configure", "--model", "resnet50", "--system", "ipu-pod16", "--gbs", "1920",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["best"]["layout"]["dp"] == 16
    assert out["feasible_count"] > 1 and out["pareto"][0] == out["best"]
    assert main(["configure", "--model", "resnet50", "--system", "ipu-pod16", "--gbs",
                 "1930"]) == 1
    assert "constraint-batch-divisible" in capsys.readouterr().out


def test_advise_points_to_what_answers_a_convolutional_workload(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--system", "ipu-pod16", "--workload", "resnet50-training"]) == 2
    err = capsys.readouterr().err
    assert "accelkb configure --model resnet50" in err and "Traceback" not in err


def test_dense_configure_docstring() -> None:
    from accelkb.solver.config import dense

    result = doctest.testmod(dense)
    assert result.attempted > 0 and result.failed == 0


def test_configure_defaults_to_a_batch_that_splits_over_the_chips(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["configure", "--model", "resnet50", "--system", "gb200-nvl72", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["best"]["layout"]["dp"] == 72
