"""An inference baseline on a system larger than one replica can use (issue 28: the new
4,096-9,216-chip TPU systems and the 2,048-system Cerebras cluster answered 'no inference
layout fits' with 0 layouts tried)."""

from __future__ import annotations

from accelkb.advise.baseline import best_inference_config
from accelkb.knowledge import KnowledgeBase
from accelkb.perf.from_kb import model_spec, system_spec, using


def test_a_small_model_on_a_huge_system_gets_a_replica_not_an_error(kb: KnowledgeBase) -> None:
    with using(kb):
        model = model_spec("llama3.1-8b")
        system = system_spec("tpu-v5e-multislice-4096")
        base = best_inference_config(model, system, 1000, 500)
    cfg = base.config
    assert cfg.pp <= model.layers and cfg.tp * cfg.pp < system.chips
    assert base.fitted > 0 and base.estimate.chips == cfg.tp * cfg.pp
