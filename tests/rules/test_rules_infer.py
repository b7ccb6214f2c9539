"""infer() and explain() on the bundled knowledge: findings, ranked candidates, explanation trees
down to sources, and the CLI commands."""

from __future__ import annotations

import json

import pytest

from accelkb.cli import main
from accelkb.errors import UnknownNameError
from accelkb.ontology.kb import DERIVATIONS, INFERRED, KnowledgeBase
from accelkb.rules import FindingResult, InferenceReport, explain, infer


@pytest.fixture(scope="module")
def rkb(kb: KnowledgeBase) -> KnowledgeBase:
    """A private knowledge base (inference adds to its graphs); validation is cached by ``kb``."""
    return KnowledgeBase()


@pytest.fixture(scope="module")
def pod64(rkb: KnowledgeBase) -> InferenceReport:
    return infer(rkb, "gpt3-175b-training", "ipu-pod64")


@pytest.fixture(scope="module")
def groq(rkb: KnowledgeBase) -> InferenceReport:
    return infer(rkb, "llama2-70b-decode", "groq-576")


def _finding(report: InferenceReport, rule: str) -> FindingResult:
    return next(f for f in report.findings if f.rule == rule)


def test_ipu_pod64_gpt3_is_memory_capacity_bound(pod64: InferenceReport) -> None:
    f = _finding(pod64, "memory-capacity-bound")
    assert f.bottleneck.endswith("bottleneck-memory-capacity")
    assert "IPU-POD64 is memory-capacity bound for GPT-3 175B training" in f.explanation
    assert "3.15 TB > 57.6 GB" in f.explanation  # 18 B per parameter, as the memory check
    ranks = [c.rank for c in f.candidates]
    assert ranks == list(range(1, len(ranks) + 1))
    labels = {c.optimization.rsplit("/", 1)[-1]: c for c in f.candidates}
    assert labels["opt-offload-streaming-memory"].status == "met"
    assert labels["opt-phased-execution"].status == "unmet"  # 2048 < 3750 FLOP/B
    assert labels["opt-replicated-tensor-sharding"].status == "unmet"  # dp = 1 by default
    assert f.candidates[0].optimization.endswith("opt-offload-streaming-memory")


def test_groq_decode_int8_fits_sram(groq: InferenceReport) -> None:
    f = _finding(groq, "memory-capacity-bound")
    int8 = next(c for c in f.candidates if c.optimization.endswith("weight-quantization-int8"))
    assert int8.status == "met" and int8.rank == 1
    assert any(n.startswith("no time estimate") for n in groq.estimate_notes)
    assert {x.rule for x in groq.findings} >= {"memory-capacity-bound",
                                               "load-imbalance-uneven-stages"}


def test_explanation_tree_reaches_sources(rkb: KnowledgeBase, pod64: InferenceReport) -> None:
    f = _finding(pod64, "memory-capacity-bound")
    tree = explain(rkb, f.candidates[0].iri)
    assert tree.kind == "derived" and tree.rule_id == "candidate-offload-streaming-memory"
    kinds = {leaf.kind for leaf in tree.leaves()}
    assert kinds <= {"asserted", "estimate"}
    assert all(leaf.sources for leaf in tree.leaves() if leaf.kind == "estimate"
               and not leaf.object.startswith("http"))
    phased = next(c for c in f.candidates if c.optimization.endswith("opt-phased-execution"))
    numbers = [leaf for leaf in explain(rkb, phased.iri).leaves() if leaf.kind == "asserted"
               and leaf.predicate.endswith("minArithmeticIntensity")]
    assert numbers and all(s.title for leaf in numbers for s in leaf.sources)
    assert numbers[0].sources[0].locator
    estimates = [leaf for leaf in tree.leaves() if leaf.formula]
    assert estimates and all(leaf.formula_ref for leaf in estimates)
    text = tree.render()
    assert "because model state 3.15 TB > 57.6 GB" in text and "Brown et al." in text
    data = json.loads(tree.model_dump_json())
    assert data["premises"] and data["rule"].endswith("rule-candidate-offload-streaming-memory")


def test_explain_a_triple_and_an_unknown_fact(rkb: KnowledgeBase,
                                              pod64: InferenceReport) -> None:
    from rdflib import URIRef

    from accelkb.errors import InputError
    from accelkb.ontology.namespace import AK
    t = (URIRef(pod64.estimate), AK.boundBy,
         URIRef("https://w3id.org/accelkb/data/bottleneck-memory-capacity"))
    tree = explain(rkb, t)
    assert tree.kind == "derived" and tree.premises
    with pytest.raises(InputError, match="not in the knowledge base"):
        explain(rkb, "https://example.org/nothing")


def test_inference_is_recorded_in_the_graphs(rkb: KnowledgeBase, pod64: InferenceReport,
                                             groq: InferenceReport) -> None:
    assert len(rkb.graph(INFERRED)) > 0 and len(rkb.graph(DERIVATIONS)) > 0
    rows = list(rkb.query("SELECT (COUNT(?d) AS ?n) WHERE { ?d a prov:Activity ; ak:rule ?r }"))
    assert int(rows[0][0]) >= pod64.fixpoint.derivations + groq.fixpoint.derivations


def test_unknown_names(rkb: KnowledgeBase) -> None:
    with pytest.raises(UnknownNameError, match="ipu-pod64"):
        infer(rkb, "gpt3-175b-training", "ipu-pod65")


def test_cli_explain_json_and_text(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--workload", "gpt3-175b-training", "--system", "ipu-pod64",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, list) and {d["rule_id"] for d in data} >= {"memory-capacity-bound"}
    iri = next(d["subject"] for d in data if d["rule_id"] == "memory-capacity-bound")
    assert main(["explain", iri, "--workload", "gpt3-175b-training", "--system",
                 "ipu-pod64"]) == 0
    assert "is memory-capacity bound" in capsys.readouterr().out
    assert main(["explain", "--workload", "gpt3-175b-training"]) == 2
    assert "expected both --workload and --system" in capsys.readouterr().err


def test_pipeline_bubble_depends_on_the_micro_batch_count(kb: KnowledgeBase) -> None:
    """GPT-3 175B on a DGX A100 SuperPOD over 16 pipeline stages: a global batch of 256 gives 32
    micro-batches (<= 2 per stage: bubble-bound, with its candidates); 1,536 gives 192."""
    small = infer(KnowledgeBase(), "gpt3-175b-training", "dgx-a100-superpod",
                  parallel="tp=8,pp=16,dp=8,mb=1,gbs=256")
    bubble = _finding(small, "pipeline-bubble-bound")
    assert {c.optimization.rsplit("/", 1)[-1] for c in bubble.candidates} >= \
        {"opt-pipeline-parallelism-interleaved", "opt-gradient-accumulation"}
    large = infer(KnowledgeBase(), "gpt3-175b-training", "dgx-a100-superpod",
                  parallel="tp=8,pp=16,dp=8,mb=1,gbs=1536")
    assert "pipeline-bubble-bound" not in {f.rule for f in large.findings}


def test_a_source_of_several_facts_is_cited_once_with_every_locator() -> None:
    """Regression: the locator of a source cited by several facts of one estimate depended on
    rdflib's order (the hash seed), so the example reports changed from run to run."""
    from accelkb.rules.explain import SourceRef, _merged

    refs = [SourceRef(iri="s", title="T", locator=loc, confidence=conf)
            for loc, conf in (("Table 2.1", "high"), ("Sec. 2.1", "medium"), (None, "high"))]
    merged = {_merged(order) for order in (refs, refs[::-1], refs[1:] + refs[:1])}
    assert merged == {SourceRef(iri="s", title="T", locator="Sec. 2.1; Table 2.1",
                                confidence="medium")}


def test_model_state_counts_the_bytes_the_memory_check_counts() -> None:
    """The finding said 2.8 TB for GPT-3 175B (ZeRO's 16 B per parameter) beside a memory
    check that counts fp32 gradients, 18 B (from an audit)."""
    from accelkb.perf.memory import model_state_bytes
    from accelkb.rules.estimates import STATE_BYTES_PER_PARAM

    assert sum(model_state_bytes(1.0, 1).values()) == STATE_BYTES_PER_PARAM
