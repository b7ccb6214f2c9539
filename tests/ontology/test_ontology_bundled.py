"""The bundled knowledge: complete, sourced, named, and matching the generated namespace."""

from __future__ import annotations

from rdflib import Literal, URIRef
from rdflib.namespace import RDF

from accelkb.ontology import gen_namespace
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK

REQUIRED_NAMES = {
    "chip": ["gc200", "bow-ipu", "sn10", "sn30", "sn40l", "groqchip", "a100-sxm4-80gb", "h100-sxm",
             "h200", "tpu-v4", "tpu-v5p"],
    "system": ["ipu-m2000", "bow-2000", "ipu-pod16", "ipu-pod64", "ipu-pod128", "ipu-pod256",
               "sn40l-node", "sambarack-sn40l-16", "groqcard", "groqnode", "groqrack", "groq-576",
               "dgx-a100", "dgx-h100", "dgx-a100-superpod", "tpu-v4-pod"],
    "model": ["gpt3-175b", "gpt3-13b", "llama2-7b", "llama2-13b", "llama2-70b", "bert-large",
              "resnet50"],
    "workload": ["gpt3-175b-training", "llama2-70b-inference", "bert-large-training",
                 "resnet50-training"],
}


def test_required_names_exist(kb: KnowledgeBase) -> None:
    for kind, names in REQUIRED_NAMES.items():
        known = kb.names(kind)
        missing = [n for n in names if n not in known]
        assert not missing, f"{kind}s missing from the bundled knowledge: {missing}"


def test_at_least_25_chips_and_systems(kb: KnowledgeBase) -> None:
    counts = kb.counts()
    assert counts["chip"] + counts["system"] >= 25
    assert counts["bottleneck"] >= 10
    assert counts["optimization"] >= 20


def test_every_numeric_literal_uses_a_quantity_property(kb: KnowledgeBase) -> None:
    g = kb.asserted
    quantity = set(g.subjects(RDF.type, AK.QuantityProperty))
    numeric = {URIRef("http://www.w3.org/2001/XMLSchema#" + t)
               for t in ("integer", "decimal", "double", "float", "int", "long")}
    stray = {(s, p) for s, p, o in g
             if isinstance(o, Literal) and o.datatype in numeric and p not in quantity}
    assert not stray, f"numbers outside quantity properties (no unit, no source check): {sorted(stray)[:5]}"


def test_every_numeric_fact_has_a_source_and_confidence(kb: KnowledgeBase) -> None:
    """Checked in Python, independently of the SHACL shape that enforces the same rule."""
    g = kb.asserted
    quantity = set(g.subjects(RDF.type, AK.QuantityProperty))
    unsourced = []
    for s, p, _ in g:
        if p not in quantity:
            continue
        node_level = g.value(s, URIRef("http://purl.org/dc/terms/source")) is not None and \
            g.value(s, AK.confidence) is not None
        per_property = any(
            g.value(prov, URIRef("http://purl.org/dc/terms/source")) is not None
            and g.value(prov, AK.confidence) is not None
            for prov in g.objects(s, AK.provenance) if (prov, AK.forProperty, p) in g
        )
        if not (node_level or per_property):
            unsourced.append((s, p))
    assert not unsourced, f"{len(unsourced)} numeric facts without a source, e.g. {unsourced[:3]}"


def test_short_names_are_unique(kb: KnowledgeBase) -> None:
    rows = kb.query("SELECT ?n (COUNT(DISTINCT ?x) AS ?k) WHERE { ?x ak:shortName ?n } "
                    "GROUP BY ?n HAVING (COUNT(DISTINCT ?x) > 1)")
    assert list(rows) == []


def test_generated_namespace_matches_schema() -> None:
    from pathlib import Path

    import accelkb.ontology.namespace as ns

    assert Path(ns.__file__).read_text(encoding="utf-8") == gen_namespace.render(), (
        "ontology/namespace.py is stale: run python -m accelkb.ontology.gen_namespace")


def test_closed_namespace_rejects_typos() -> None:
    import pytest

    assert str(AK.Chip).endswith("#Chip")
    with pytest.raises(AttributeError):
        _ = AK.Chipp  # noqa: B018


_PREFIX_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def _published_bytes(published: str, binary: bool) -> float:
    import re

    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?) ?([KMGTP]?)i?B", published)
    assert m, f"not a capacity as printed: {published!r}"
    return float(m.group(1)) * (1024.0 if binary else 1000.0) ** _PREFIX_POWER[m.group(2)]


def test_every_capacity_states_its_published_figure_and_convention(kb: KnowledgeBase) -> None:
    """Checked in Python, independently of the SHACL shapes: every bundled capacity is the figure
    the source printed, read in the prefixes the source meant (issue 28: GB and GiB were mixed)."""
    g = kb.asserted
    tiers = set(g.subjects(RDF.type, AK.MemoryTier))
    assert len(tiers) >= 25
    wrong = []
    for tier in tiers:
        published = g.value(tier, AK.capacityAsPublished)
        convention = g.value(tier, AK.capacityConvention)
        if published is None or convention is None:
            wrong.append(f"{tier}: no ak:capacityAsPublished / ak:capacityConvention")
            continue
        expected = _published_bytes(str(published), convention == AK.BinaryPrefix)
        stored = float(g.value(tier, AK.capacityBytes))  # type: ignore[arg-type]
        if abs(stored - expected) > 0.02 * expected:
            wrong.append(f"{tier}: {stored:.0f} B but {published} ({convention}) = {expected:.0f} B")
    assert not wrong, wrong


def test_no_capacity_conflict_is_the_same_figure_in_the_other_unit(kb: KnowledgeBase) -> None:
    """A decimal reading of a binary figure (or the reverse) is a unit, not a second claim."""
    g = kb.asserted
    same = []
    for tier in g.subjects(RDF.type, AK.MemoryTier):
        published = g.value(tier, AK.capacityAsPublished)
        convention = g.value(tier, AK.capacityConvention)
        if published is None or convention is None:
            continue
        other = _published_bytes(str(published), convention != AK.BinaryPrefix)
        for claim in g.objects(tier, AK.conflictingClaim):
            if g.value(claim, AK.forProperty) == AK.capacityBytes:
                value = float(g.value(claim, AK.claimedValue))  # type: ignore[arg-type]
                if abs(value - other) <= 0.02 * other:
                    same.append(f"{tier}: claim {value:.0f} B is '{published}' in the other unit")
    assert not same, same


def test_nvidia_and_google_hbm_are_binary(kb: KnowledgeBase) -> None:
    """NVML reports 80 GiB for an A100 80GB; Google's revised table says 'HBM capacity (GiB) 95'."""
    g = kb.asserted
    kb_ns = "https://w3id.org/accelkb/data/"
    expected = {"a100-80gb-hbm": 80, "a100-40gb-hbm": 40, "h100-hbm3": 80, "h200-hbm3e": 141,
                "tpu-v5p-hbm": 95, "tpu-v4-hbm": 32, "sn40l-hbm": 64}
    got = {name: int(g.value(URIRef(kb_ns + name), AK.capacityBytes)) / 2**30  # type: ignore[arg-type]
           for name in expected}
    assert got == expected
