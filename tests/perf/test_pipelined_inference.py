"""Pipelined decode keeps pp batches in flight: every stage holds the KV cache of all of them,
and the stage with the most layers sets the pace. A GB200 NVL72 cost baseline ran 72 batches
of 1,024 with the KV cache of one batch counted (about 270 TB needed against 13.4 TB of HBM)
and its throughput as if 80 layers split evenly over 72 stages."""

from __future__ import annotations

import pytest

from accelkb.errors import InputError
from accelkb.perf import InferenceConfig, InferenceEstimate, estimate_inference
from accelkb.perf.from_kb import model_spec, system_spec


def _est(pp: int, batch: int, pipelined: bool) -> InferenceEstimate:
    return estimate_inference(model_spec("llama2-70b"), system_spec("gb200-nvl72"),
                              InferenceConfig(tp=1, pp=pp, batch=batch, prompt_len=512,
                                              output_len=512, pipelined=pipelined))


def test_every_batch_in_flight_has_its_kv_cache() -> None:
    one = _est(8, 16, False)
    many = _est(8, 16, True)
    kv = many.memory_breakdown_bytes["kv_cache"]
    assert kv == pytest.approx(8 * one.memory_breakdown_bytes["kv_cache"])
    with pytest.raises(InputError):  # 72 batches of 1,024 long sequences do not fit
        estimate_inference(model_spec("llama2-70b"), system_spec("gb200-nvl72"),
                           InferenceConfig(tp=1, pp=72, batch=1024, prompt_len=10000,
                                           output_len=1500, pipelined=True))


def test_the_fullest_stage_sets_the_pace() -> None:
    even, uneven = _est(8, 4, True), _est(72, 4, True)  # 80 layers: 10 per stage / 1 or 2
    assert even.decode_s_per_token == pytest.approx(_est(8, 4, False).decode_s_per_token,
                                                    rel=0.05)
    one_pass = _est(72, 4, False).decode_s_per_token
    assert uneven.decode_s_per_token > 1.5 * one_pass  # a token every 72 turns of a 2-layer stage
    for e in (even, uneven):  # every user's speed, the total and the cost's rate agree
        assert e.tokens_per_s == pytest.approx(4 * e.config.pp * e.tokens_per_s_per_user)
        assert e.end_to_end_tokens_per_s == pytest.approx(e.tokens_per_s, rel=0.2)
