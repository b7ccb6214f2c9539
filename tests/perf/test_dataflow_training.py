"""Training on a spatial-dataflow chip (SambaNova SN40L) keeps a layer's elementwise work on
chip, as its compiler maps the layer's operators onto PCUs and PMUs at once: the q2 report had
trained it like a GPU, every norm and activation a pass over HBM (14 s of a 40 s step for a
7.5B model), and so ranked faster HBM as its first hardware lever (from an audit)."""

from __future__ import annotations

import pytest

from accelkb.perf.calibration import load_calibration
from accelkb.perf.from_kb import model_spec, system_spec
from accelkb.perf.training import TrainingConfig, estimate


def test_a_dataflow_chip_fuses_the_layers_elementwise_work() -> None:
    model, rack = model_spec("gpt3-13b"), system_spec("sambarack-sn40l-16")
    assert rack.chip.spatial_dataflow and not rack.chip.fuses_elementwise
    cfg = TrainingConfig(tp=8, pp=2, dp=1, micro_batch=1, global_batch=16,
                         recompute="selective", sequence_parallel=True)
    cal = load_calibration()
    fused = estimate(model, rack, cfg, cal)
    gpu_like = estimate(model, rack.model_copy(update={"chip": rack.chip.model_copy(
        update={"spatial_dataflow": False})}), cfg, cal)
    assert gpu_like.elementwise_s > 0.05 * gpu_like.step_time_s  # the passes it used to count
    assert fused.elementwise_s < 0.1 * gpu_like.elementwise_s
    assert fused.step_time_s < gpu_like.step_time_s
    # the matrix products are the same work either way
    assert fused.hardware_flops_per_s_per_chip * fused.step_time_s == pytest.approx(
        gpu_like.hardware_flops_per_s_per_chip * gpu_like.step_time_s)
