"""The rules' evidence uses the layout's batch: an advise cost baseline at batch 128 cited
'decode does 1 FLOP/B' (the workload's batch 1) in its memory-bandwidth evidence."""

from __future__ import annotations

from accelkb.knowledge import KnowledgeBase
from accelkb.rules.estimates import estimate_pair


def test_intensity_and_kv_cache_follow_the_layouts_batch(kb: KnowledgeBase) -> None:
    workload, system = kb.resolve("workload", "llama2-70b-inference"), kb.resolve("system",
                                                                                  "dgx-h100")
    one = estimate_pair(kb, workload, system)
    many = estimate_pair(kb, workload, system, parallel="tp=8,batch=64")
    assert many.quantities["arithmeticIntensity"].value == \
        64 * one.quantities["arithmeticIntensity"].value
    assert many.quantities["kvCacheBytes"].value == 64 * one.quantities["kvCacheBytes"].value
