"""A what-if that cannot move the model is said to be not estimated, not printed as 1.000x:
NVLink, xGMI and the Gaudi links have no hardware latency in the knowledge base, so halving it
read 1.000x in every GPU report, as if link latency did not matter."""

from __future__ import annotations

from accelkb.advise.parts import what_ifs
from accelkb.knowledge import KnowledgeBase
from accelkb.perf import InferenceConfig, estimate_inference
from accelkb.perf.from_kb import model_spec, system_spec, using


def _latency_row(system: str, cfg: InferenceConfig) -> tuple[float | None, str]:
    model, spec = model_spec("llama2-70b"), system_spec(system)
    base = estimate_inference(model, spec, cfg)
    row = next(w for w in what_ifs(model, spec, cfg, base) if w.lever == "lower link latency")
    return row.speedup, row.note


def test_no_link_latency_is_not_a_measured_one(kb: KnowledgeBase) -> None:
    with using(kb):
        speedup, note = _latency_row("dgx-h100", InferenceConfig(tp=8, batch=1))
        assert speedup is None and "no hardware latency" in note
        groq, _ = _latency_row("groq-576", InferenceConfig(tp=8, pp=72, precision="int8"))
    assert groq is not None and groq > 1.0  # Groq's C2C hop latency is in the knowledge base
