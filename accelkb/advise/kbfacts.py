"""Sourced facts and citations for a report, read from the knowledge base (never computed here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rdflib import Literal, URIRef

from accelkb.advise.advice import Fact, SourceRef
from accelkb.ontology.kb import KnowledgeBase, stored_query
from accelkb.ontology.namespace import AK

DCT = "http://purl.org/dc/terms/"


def local(iri: Any) -> str:
    """Short form of an IRI: its ak:shortName-like local part."""
    text = str(iri)
    for sep in ("#", "/"):
        if sep in text:
            text = text.rsplit(sep, 1)[-1]
    return text


def subjects_of_system(kb: KnowledgeBase, system: URIRef) -> list[URIRef]:
    """The system, its nested subsystems, their chip, tiers, topologies and links."""
    g = kb.asserted
    out: list[URIRef] = []
    node: Any = system
    while node is not None and node not in out:
        out.append(node)
        for p in (AK.hasTopology, AK.hasMemoryTier, AK.hostLink):
            for o in g.objects(node, p):
                if isinstance(o, URIRef):
                    out.append(o)
                    out += [x for x in g.objects(o, AK.usesLink) if isinstance(x, URIRef)]
        node = g.value(node, AK.subsystem)
    chip = g.value(system, AK.chip)
    if isinstance(chip, URIRef):
        out.append(chip)
        out += [t for t in g.objects(chip, AK.hasMemoryTier) if isinstance(t, URIRef)]
        out += [t for t in g.objects(chip, AK.chipLink) if isinstance(t, URIRef)]
    seen: list[URIRef] = []
    for s in out:
        if s not in seen:
            seen.append(s)
    return seen


def facts_about(kb: KnowledgeBase, subjects: Iterable[URIRef]) -> list[Fact]:
    """Every numeric fact of the subjects with its source IRI and confidence."""
    facts = []
    query = stored_query("facts_of")
    for s in subjects:
        for row in kb.query(query, {"s": s}):
            r: Any = row
            value = r.value.toPython() if isinstance(r.value, Literal) else str(r.value)
            facts.append(Fact(subject=local(s), property=local(r.p),
                              value=float(value) if isinstance(value, int | float) else str(value),
                              confidence=str(r.conf or ""), source=str(r.src or "")))
    unique = {(f.subject, f.property, str(f.value), f.source): f for f in facts}
    return sorted(unique.values(), key=lambda f: (f.subject, f.property, f.source))


def source_refs(kb: KnowledgeBase, iris: Iterable[str]) -> list[SourceRef]:
    """Citations for source IRIs, sorted by title."""
    g = kb.asserted
    refs = {}
    for iri in {i for i in iris if i}:
        s = URIRef(iri)
        title = g.value(s, URIRef(DCT + "title"))
        if title is None:
            continue
        refs[iri] = SourceRef(
            iri=iri, title=str(title), publisher=str(g.value(s, URIRef(DCT + "publisher")) or ""),
            url=str(g.value(s, AK.url) or ""), kind=local(g.value(s, AK.sourceKind) or ""))
    return sorted(refs.values(), key=lambda r: r.title.lower())


def fact_value(facts: list[Fact], subject: str, prop: str) -> Fact | None:
    """The first fact with this subject and property."""
    return next((f for f in facts if f.subject == subject and f.property == prop), None)


def vendor_forms(kb: KnowledgeBase, change: dict[str, Any], vendor: Any
                 ) -> list[tuple[str, str]]:
    """What a layout change is called on ``vendor``'s chips, where the knowledge base has a
    vendor's own form of the optimization that the change applies (``ak:perfConfigChange``)
    related to it (``skos:related``, ``ak:appliesToVendor``): on an IPU, ``zero=3`` is
    Graphcore's Replicated Tensor Sharding. (the vendor's name, a sentence saying what it is)
    per form; empty where there is none."""
    from rdflib.namespace import RDFS, SKOS

    from accelkb.errors import InputError
    from accelkb.perf.api import parse_parallel

    g = kb.asserted
    out: dict[str, str] = {}
    for opt, text in g.subject_objects(AK.perfConfigChange):
        try:
            applied = parse_parallel(str(text))
        except InputError:
            continue
        if not applied or any(change.get(k) != v for k, v in applied.items()):
            continue
        for own in sorted({*g.subjects(SKOS.related, opt), *g.objects(opt, SKOS.related)}, key=str):
            if (own, AK.appliesToVendor, vendor) not in g:
                continue
            name = str(g.value(own, AK.vendorName) or g.value(own, RDFS.label))
            what = g.value(own, SKOS.definition)
            out.setdefault(name, f"`{text}` is {name}, `{g.value(own, AK.shortName) or local(own)}`"
                           + (f": {str(what).rstrip('.')}" if what else ""))
    return list(out.items())
