"""KnowledgeBase.infer / .explain: the knowledge base's own entry points to the rule engine."""

from __future__ import annotations

from accelkb.ontology.kb import KnowledgeBase


def test_infer_then_explain_down_to_sources(kb: KnowledgeBase) -> None:
    report = kb.infer("gpt3-175b-training", "ipu-pod64")
    capacity = [f for f in report.findings if f.bottleneck.endswith("bottleneck-memory-capacity")]
    assert capacity, "175B of model state cannot fit a Pod's SRAM"
    text = kb.explain(capacity[0].iri).render()
    assert "IPU-POD64" in text and "memory-capacity" in text
    assert "ZeRO" in text or "Rajbhandari" in text  # the rule's source is cited
