"""A training workload runs its model at the workload's sequence length, not the model's
context window: Llama 3.1 70B's ak:sequenceLength is 131,072, the Ironwood recipe trains at
8,192. Reports computed every figure at 131,072 tokens per sequence (B200: 26,300 s per step
against about 260 s), and their Reproduce commands reproduced the wrong figure."""

from __future__ import annotations

from accelkb.advise.pipeline import _workload, _workload_seq
from accelkb.knowledge import KnowledgeBase
from accelkb.perf.from_kb import model_spec, using, workload_model_spec
from accelkb.rules.estimates import estimate_pair


def test_the_workload_sequence_reaches_the_estimate(kb: KnowledgeBase) -> None:
    with using(kb):
        assert model_spec("llama3.1-70b").seq_len == 131072
        model = workload_model_spec("llama3.1-70b-training")
        assert model.seq_len == 8192
        wl = _workload(kb, "llama3.1-70b-training")
        assert _workload_seq(kb, wl, model, "training") == {"seq_len": 8192}
        assert _workload_seq(kb, _workload(kb, "gpt3-13b-training"),
                             workload_model_spec("gpt3-13b-training"), "training") == {}
    pair = estimate_pair(kb, kb.resolve("workload", "llama3.1-70b-training"),
                         kb.resolve("system", "dgx-b200"))
    intensity = pair.quantities["arithmeticIntensity"]  # one micro-batch of tokens per weight
    assert intensity.inputs["tokens"] == 8192
