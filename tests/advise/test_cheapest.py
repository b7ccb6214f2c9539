"""The cost and energy searches (advise --goal cost / energy) find what they say they find.
From an audit: they stepped through power-of-two batches and stopped at the first batch the
best layout did not hold at once, so on a DGX H100 they missed tp=1, pp=8 at batch 248
(30 % more tokens per chip, 28 % fewer joules per token than what they chose), and a per-user
target switched the H100 to INT8 where FP16 meets it."""

from __future__ import annotations

import pytest

from accelkb.advise.cheapest import MAX_BATCH, cheapest_inference_config
from accelkb.errors import InfeasibleError
from accelkb.perf import InferenceConfig, estimate_inference
from accelkb.perf.from_kb import model_spec, system_spec

MODEL, SYSTEM = model_spec("llama2-70b"), system_spec("dgx-h100")
AUDIT = InferenceConfig(tp=1, pp=8, batch=248, pipelined=True, prompt_len=550, output_len=150,
                        precision="fp16")  # the audit's counterexample


@pytest.fixture(scope="module")
def cost() -> object:
    return cheapest_inference_config(MODEL, SYSTEM, 550, 150, "fp16", "cost")


def test_cost_beats_the_audits_counterexample_per_chip(cost: object) -> None:
    best = cost.estimate  # type: ignore[attr-defined]
    theirs = estimate_inference(MODEL, SYSTEM, AUDIT)
    assert best.end_to_end_tokens_per_s / best.chips >= \
        theirs.end_to_end_tokens_per_s / theirs.chips


def test_the_chosen_batch_is_the_largest_its_layout_holds_at_once(cost: object) -> None:
    cfg = cost.config  # type: ignore[attr-defined]
    assert cfg.batch == MAX_BATCH or pytest.raises(
        InfeasibleError, estimate_inference, MODEL, SYSTEM,
        cfg.model_copy(update={"batch": cfg.batch + 1}))


def test_energy_beats_the_audits_counterexample() -> None:
    best = cheapest_inference_config(MODEL, SYSTEM, 550, 150, "fp16", "energy").estimate
    theirs = estimate_inference(MODEL, SYSTEM, AUDIT)
    assert (best.end_to_end_joules_per_token or 0) <= (theirs.end_to_end_joules_per_token or 0)


def test_a_per_user_target_keeps_the_workloads_precision_where_it_can() -> None:
    found = cheapest_inference_config(MODEL, SYSTEM, 550, 150, "fp16", "cost", slo=50.0)
    assert found.config.precision == "fp16"  # tp=8 at batch 64 keeps 54.6 tokens/s per user
    assert found.estimate.tokens_per_s_per_user >= 50.0
    # and the batch is the largest that keeps it, for that layout
    over = estimate_inference(MODEL, SYSTEM, found.config.model_copy(
        update={"batch": found.config.batch + 1, "queue_when_full": True}))
    assert found.config.batch == MAX_BATCH or over.tokens_per_s_per_user < 50.0 or \
        over.waves > 1


def test_a_target_no_layout_keeps_is_a_no_with_the_fastest_there_is() -> None:
    with pytest.raises(InfeasibleError, match=r"keeps 10000 tokens/s per user at any batch .*"
                       r"the fastest per user gives"):
        cheapest_inference_config(MODEL, SYSTEM, 550, 150, "fp16", "cost", slo=1e4)
