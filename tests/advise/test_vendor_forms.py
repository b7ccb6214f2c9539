"""A layout change is named as the vendor's software names it, where the knowledge base relates
the two (from an audit): q1's solver layout on an IPU-POD said `zero=3`, which on IPUs is
Graphcore's Replicated Tensor Sharding of the weights over the replicas, gathered over
IPU-Links, and a Graphcore user looks for that name."""

from __future__ import annotations

from rdflib import URIRef

from accelkb.advise.kbfacts import vendor_forms
from accelkb.ontology.kb import KnowledgeBase

GRAPHCORE = URIRef("https://w3id.org/accelkb/data/graphcore")
NVIDIA = URIRef("https://w3id.org/accelkb/data/nvidia")


def test_zero_3_on_an_ipu_is_replicated_tensor_sharding(kb: KnowledgeBase) -> None:
    forms = vendor_forms(kb, {"tp": 2, "zero": 3}, GRAPHCORE)
    assert [name for name, _ in forms] == ["Replicated Tensor Sharding (RTS)"]
    text = forms[0][1]
    assert text.startswith("`zero=3` is Replicated Tensor Sharding (RTS), "
                           "`replicated-tensor-sharding`: Shard tensors")
    assert not text.endswith(".")


def test_no_vendor_form_where_the_knowledge_base_has_none(kb: KnowledgeBase) -> None:
    assert vendor_forms(kb, {"zero": 3}, NVIDIA) == []
    assert vendor_forms(kb, {"zero": 2}, GRAPHCORE) == []  # RTS relates to ZeRO-1 and 3
    assert vendor_forms(kb, {}, GRAPHCORE) == []


def test_the_solver_note_of_an_inference_report_says_what_the_solver_did() -> None:
    """The report said 'configuration solver used for training layouts only' below an
    inference baseline the solver had searched (from an audit)."""
    from accelkb.advise.solver import solver_recommendation
    from accelkb.perf.from_kb import model_spec, system_spec
    from accelkb.perf.inference import InferenceConfig

    model, spec = model_spec("llama2-7b"), system_spec("dgx-h100")
    rec, note = solver_recommendation(model, spec, "dgx-h100", InferenceConfig(), None,  # type: ignore[arg-type]
                                      "latency")
    assert rec is None and "searched the inference baseline's layout itself" in note
    _, note = solver_recommendation(model, spec, "dgx-h100", InferenceConfig(), None,  # type: ignore[arg-type]
                                    "cost")
    assert "not used for a cost or energy goal" in note


def test_rts_is_already_applied_where_zero_1_shards_the_same_state(kb: KnowledgeBase) -> None:
    """q1b listed RTS as 'no-gain 1.000x' beside ZeRO-3, named RTS on IPUs, at 1.2x: in the
    model rts=true shards the optimizer state, as the baseline's ZeRO-1 already does."""
    from rdflib import URIRef

    from accelkb.advise.parts import check_candidate
    from accelkb.perf import TrainingConfig, estimate_training
    from accelkb.perf.from_kb import model_spec, system_spec

    model, spec = model_spec("gpt3-13b"), system_spec("ipu-pod64")
    cfg = TrainingConfig(tp=4, dp=16, micro_batch=4, global_batch=1024, recompute="full",
                         sequence_parallel=True, zero=1, precision="fp16")
    base = estimate_training(model, spec, cfg)
    rts = URIRef("https://w3id.org/accelkb/data/opt-replicated-tensor-sharding")
    rec = check_candidate(kb, rts, [], model, spec, cfg, base, None, [])
    assert rec.status == "already-applied" and "zero=3" in rec.solver_check
    plain = check_candidate(kb, rts, [], model, spec, cfg.model_copy(update={"zero": 0}),
                            estimate_training(model, spec, cfg.model_copy(update={"zero": 0})),
                            None, [])
    assert plain.status in ("recommended", "no-gain")  # without ZeRO-1 it is a real change
