"""Issue 25: the fused streaming-dataflow decode step (SambaNova RDU, accelkb.perf.execution.dataflow)."""

from __future__ import annotations

import pytest

from accelkb.perf.calibration import load_calibration
from accelkb.perf.execution import dataflow
from accelkb.perf.inference import InferenceConfig, estimate
from accelkb.perf.validation.training import known_models

from_kb = pytest.importorskip("accelkb.perf.from_kb")
CAL = load_calibration()


def test_only_spatial_dataflow_chips_with_off_chip_weights() -> None:
    assert dataflow.applies(from_kb.system_spec("sn40l-node", 8).chip)
    assert not dataflow.applies(from_kb.system_spec("dgx-h100", 8).chip)
    assert not dataflow.applies(from_kb.system_spec("groq-576", 576).chip)


def test_sn40l_decode_is_hbm_bound_with_the_all_reduce_fused() -> None:
    sn = from_kb.system_spec("sn40l-node", 8)
    e = estimate(known_models()["llama3-70b"], sn, InferenceConfig(tp=8, batch=1), CAL)
    assert e.bound == "bandwidth" and e.breakdown["tensor_parallel_comm"] == 0.0
    ar = e.collectives["decode_tp_all_reduce"]
    assert ar.source == "fused" and "peer-to-peer" in (ar.fallback or "")
    # Weights (141 GB / 8 sockets) at 85 % of the paper's 1.8 TB/s, plus 80 layer sections.
    hbm = next(t for t in sn.chip.memory_tiers if t.kind == "hbm").bandwidth_bytes_per_s
    weights = e.memory_breakdown_bytes["weights"]
    assert e.breakdown["memory"] == pytest.approx(weights / (hbm * 0.85), rel=0.05)
    assert e.breakdown["overhead"] == pytest.approx(
        80 * (CAL.dataflow_layer_s + CAL.dataflow_section_s), rel=0.05)


def test_batch_adds_a_section_per_sequence_not_a_weight_read() -> None:
    sn = from_kb.system_spec("sn40l-node", 8)
    m = known_models()["llama3-8b"]
    one = estimate(m, sn, InferenceConfig(tp=8, batch=1), CAL)
    sixteen = estimate(m, sn, InferenceConfig(tp=8, batch=16), CAL)
    extra = sixteen.breakdown["overhead"] - one.breakdown["overhead"]
    assert extra == pytest.approx(15 * m.layers * CAL.dataflow_section_s, rel=0.05)
    assert sixteen.tokens_per_s > 5 * one.tokens_per_s  # weights read once for the batch
