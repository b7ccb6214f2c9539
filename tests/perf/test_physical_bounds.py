"""A range never passes what physics allows: a decode step reads every weight once. Gaudi 3's
Llama 3.1 8B decode range reached 0.26 ms per token where that read takes 0.55 ms (16 GB of
16-bit weights over 8 x 3.67 TB/s)."""

from __future__ import annotations

import pytest

from accelkb.perf import InferenceConfig, estimate_inference
from accelkb.perf.from_kb import model_spec, system_spec
from accelkb.perf.shapes import total_params


def test_decode_ranges_stop_at_the_weight_read_floor() -> None:
    model, system = model_spec("llama3.1-8b"), system_spec("gaudi3-node")
    est = estimate_inference(model, system, InferenceConfig(tp=8, batch=1),
                             with_uncertainty=True)
    hbm = system.chip.tier("hbm")
    assert hbm is not None
    floor = total_params(model) * 2 / 8 / hbm.bandwidth_bytes_per_s  # weights sit in HBM
    assert est.decode_floor_s == pytest.approx(floor, rel=1e-6)
    assert est.uncertainty is not None
    decode = est.uncertainty["decode_s_per_token"].interval
    per_user = est.uncertainty["tokens_per_s_per_user"].interval
    assert decode.low >= floor and per_user.high <= 1 / floor
    assert decode.low < est.decode_s_per_token < decode.high
    assert "weight-read floor" in decode.basis
