"""Matmul efficiency carried from the A100 it was fitted on to another chip in the ratio of the
two chips' measured maximum achievable matmul FLOP/s (MAMF) over their peaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.perf.calibration import at_precision, load_calibration
from accelkb.perf.from_kb import system_spec

CAL = load_calibration()


def test_the_reference_fraction_is_the_knowledge_bases_a100_measurement() -> None:
    a100 = system_spec("dgx-a100").chip
    assert a100.achievable_fraction("bf16") == pytest.approx(CAL.matmul_reference_fraction,
                                                             abs=5e-4)
    # so the chips the efficiency was fitted on keep it unchanged
    eff = at_precision(CAL, "bf16", a100.vendor, a100.achievable_fraction("bf16"))
    assert eff.matmul_efficiency == pytest.approx(CAL.matmul_efficiency, rel=1e-3)


def test_a_chip_that_reaches_less_of_its_peak_runs_its_matmuls_slower() -> None:
    h100 = system_spec("dgx-h100").chip
    mi300x = system_spec("mi300x-platform").chip
    for chip, precision, fraction in ((h100, "bf16", 794.5 / 989.4),
                                      (h100, "fp8", 1402.6 / 1978.9),
                                      (mi300x, "bf16", 668.4 / 1307.4)):
        assert chip.achievable_fraction(precision) == pytest.approx(fraction, rel=1e-3)
        got = at_precision(CAL, precision, chip.vendor, chip.achievable_fraction(precision))
        base = CAL.low_precision_matmul_efficiency if precision == "fp8" else CAL.matmul_efficiency
        assert got.matmul_efficiency == pytest.approx(
            base * fraction / CAL.matmul_reference_fraction, rel=1e-3)
    # FP4 reads the FP8 measurement
    assert h100.achievable_fraction("fp4") == h100.achievable_fraction("fp8")


def test_a_vendor_with_its_own_fit_and_a_chip_without_a_measurement_are_unchanged() -> None:
    ipu = system_spec("ipu-pod16").chip
    assert ipu.achievable_fraction("fp16") is None
    gc = at_precision(CAL, "fp16", "graphcore", 0.5)  # a fitted vendor ignores a measurement
    assert gc.matmul_efficiency == CAL.vendor_matmul_efficiency["graphcore"]
    tpu = system_spec("tpu-v4-pod").chip
    assert tpu.achievable_fraction("bf16") is None


def test_the_measured_throughput_is_in_the_sensitivity_list() -> None:
    from accelkb.perf.uncertainty import _perturbations

    system = system_spec("dgx-h100")
    names = [n for n, _ in _perturbations(system, CAL)]
    assert "h100-sxm measured max achievable matmul fraction" in names


def test_a_what_if_on_the_peak_moves_what_a_measured_chip_reaches() -> None:
    """The measurement is kept as a fraction of the peak, so doubling the peak speeds the
    matmuls up (a hypothetical chip with the same share of its peak); as absolute FLOP/s it
    left the step unchanged."""
    from accelkb.perf.from_kb import model_spec
    from accelkb.perf.training import TrainingConfig, estimate

    system = system_spec("dgx-h100")
    chip = system.chip
    double = system.model_copy(update={"chip": chip.model_copy(update={
        "peak_flops": {k: 2 * v for k, v in chip.peak_flops.items()}})})
    cfg = TrainingConfig(dp=8, micro_batch=2, global_batch=512)
    model = model_spec("gpt3-1.3b")
    one, two = estimate(model, system, cfg, CAL), estimate(model, double, cfg, CAL)
    assert two.breakdown["compute"] < 0.9 * one.breakdown["compute"]


def test_a_system_file_with_a_fraction_above_one_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from accelkb.cli import main

    spec = json.loads(system_spec("dgx-h100").model_dump_json())
    spec["chip"]["achievable_matmul_fraction"] = {"bf16": 1.5}
    path = tmp_path / "system.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert main(["estimate", "training", "--model", "gpt3-1.3b", "--system", str(path),
                 "--parallel", "dp=8,mb=2,gbs=512"]) == 2
    assert "expected achievable_matmul_fraction values in (0, 1], got {'bf16': 1.5}" in \
        capsys.readouterr().err
