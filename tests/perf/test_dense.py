"""The convolutional-network path: working set, SRAM check, layout search, the KB's shapes."""

from __future__ import annotations

import pytest

from accelkb.errors import InputError
from accelkb.perf.calibration import load_calibration
from accelkb.perf.dense import (
    DenseWorkload,
    best_dense_layout,
    bottleneck_block_outputs,
    bottleneck_resnet_gemms,
    estimate_dense_training,
    working_set,
)
from accelkb.perf.from_kb import dense_spec, system_spec


def test_resnet50_from_the_knowledge_base_has_its_convolutions() -> None:
    w = dense_spec("resnet50")
    assert w.params == 25557032 and w.layers == 50
    assert w.gemms == bottleneck_resnet_gemms((3, 4, 6, 3))
    assert w.checkpoint_elements == bottleneck_block_outputs((3, 4, 6, 3))
    # the implicit GEMMs reproduce the forward FLOPs the knowledge base gives (8.18 GFLOP)
    assert sum(2 * m * k * n for m, k, n in w.gemms) == pytest.approx(
        w.flops_per_sample_forward, rel=0.01)


def test_dense_spec_refuses_a_transformer() -> None:
    with pytest.raises(InputError, match="expected a convolutional network"):
        dense_spec("gpt3-2.7b")


def test_recomputation_keeps_less_than_storing_every_layer() -> None:
    w = dense_spec("resnet50")
    stored, recomputed = working_set(w, 16, False), working_set(w, 16, True)
    assert stored["weights"] == recomputed["weights"] == 2 * w.params
    assert recomputed["activations"] < stored["activations"] / 3
    # activations grow with the micro-batch, weights do not
    assert working_set(w, 32, False)["activations"] == 2 * stored["activations"]


def test_a_micro_batch_that_overflows_ipu_sram_is_refused_with_its_bytes() -> None:
    w, cal = dense_spec("resnet50"), load_calibration()
    pod = system_spec("ipu-pod16")
    with pytest.raises(InputError, match=r"more than the 0.90 GB of on-chip SRAM of gc200"):
        estimate_dense_training(w, pod, 16, 1920, cal, recompute=False, micro_batch=30)
    # the same micro-batch with recomputation fits
    estimate_dense_training(w, pod, 16, 1920, cal, recompute=True, micro_batch=30)


def test_best_layout_is_the_fastest_that_fits() -> None:
    w, cal = dense_spec("resnet50"), load_calibration()
    pod = system_spec("ipu-pod16")
    est, mb, rc = best_dense_layout(w, pod, 16, 1920, cal)
    assert 120 % mb == 0 and (est.working_set_bytes or 0) <= 0.9e9
    for m in (1, 2, 4, 8, 20, 24, 30):
        for r in (True, False):
            try:
                other = estimate_dense_training(w, pod, 16, 1920, cal, recompute=r, micro_batch=m)
            except InputError:
                continue
            assert other.step_time_s >= est.step_time_s


def test_no_fitting_layout_says_why() -> None:
    w = DenseWorkload(name="huge", params=10**9, flops_per_sample_forward=1e9, layers=2,
                      gemms=((1000, 10, 10),))
    with pytest.raises(InputError, match="holds 4.00 GB"):
        best_dense_layout(w, system_spec("ipu-pod16"), 16, 16, load_calibration())
    with pytest.raises(InputError, match="divisible by 16 chips"):
        best_dense_layout(w, system_spec("ipu-pod16"), 16, 17, load_calibration())
