"""Explanations: walk derivation records from a derived fact down to asserted facts and sources.

``explain(kb, fact)`` follows ``prov:wasGeneratedBy`` from the fact's statement to the derivation,
fills the rule's explanation template with the derivation's bindings, and recurses into the
premise statements (``prov:used``). Leaves are asserted facts (with their ``dcterms:source``,
confidence and locator) or estimates (with formula, perf function and inputs).

Examples
--------
>>> format_value(2.8e12, "B"), format_value(5.76e10, "B"), format_value(0.0123, "s")
('2.8 TB', '57.6 GB', '12.3 ms')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from typing import Literal as Lit

from pydantic import BaseModel, ConfigDict, Field
from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.namespace import DCTERMS
from rdflib.term import Node

from accelkb.errors import InputError
from accelkb.ontology.kb import ASSERTED, DERIVATIONS, ESTIMATES, INFERRED, KnowledgeBase
from accelkb.ontology.namespace import AK

from .engine import PROV, statement_iri

_UNITS = {"BYTE": "B", "BYTE-PER-SEC": "B/s", "SEC": "s", "FLOP-PER-BYTE": "FLOP/B",
          "FLOP-PER-SEC": "FLOP/s", "W": "W", "J": "J", "HZ": "Hz"}
_PREFIXED = {"B", "B/s", "s", "FLOP/s", "W", "J", "Hz"}
_SI = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"),
       (1e-6, "µ"), (1e-9, "n")]
_VAR = re.compile(r"\?(\w+)(?: ((?:FLOP/B|FLOP/s|B/s|B|s|W|J|Hz))\b)?")


class SourceRef(BaseModel):
    """A source a fact rests on."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    iri: str = Field(description="IRI of the source")
    title: str = Field(description="its dcterms:title (or the IRI if none)")
    url: str | None = Field(default=None, description="its ak:url, if any")
    locator: str | None = Field(default=None, description="where in the source (table, page)")
    confidence: str | None = Field(default=None, description="ak:High / ak:Medium / ak:Low")


class Explanation(BaseModel):
    """A node of a derivation tree: one fact, how it is known, and what it rests on."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    subject: str = Field(description="subject IRI of the fact")
    predicate: str = Field(description="predicate IRI of the fact")
    object: str = Field(description="object of the fact (IRI or literal lexical form)")
    kind: Lit["derived", "asserted", "estimate", "unrecorded"] = Field(
        description="derived by a rule, asserted with sources, computed by the performance "
        "model, or present without a record")
    text: str = Field(description="one readable line about the fact")
    rule: str | None = Field(default=None, description="IRI of the rule that derived it")
    rule_id: str | None = Field(default=None, description="id of that rule")
    derivation: str | None = Field(default=None, description="IRI of the derivation record")
    bindings: dict[str, str] = Field(default_factory=dict, description="variable -> value of "
                                     "the derivation (N3 terms)")
    sources: list[SourceRef] = Field(default_factory=list, description="sources of the fact or "
                                     "of the rule")
    formula: str | None = Field(default=None, description="formula of an estimate")
    formula_ref: str | None = Field(default=None, description="function that computed it")
    inputs: list[str] = Field(default_factory=list, description="inputs of the formula")
    premises: list[Explanation] = Field(default_factory=list, description="explanations of "
                                        "the facts the derivation used")
    repeated: bool = Field(default=False, description="already explained higher in the tree; "
                           "premises not repeated")

    def render(self, indent: int = 0, cite: Callable[[SourceRef], str] | None = None) -> str:
        """The tree as indented text, one fact per line, sources in brackets.

        ``cite`` turns a source into its citation text; by default its title, locator and URL,
        at most three per line. With ``cite`` (a report citing sources by number) every source
        is cited."""
        pad = "  " * indent
        tag = {"derived": "", "asserted": "asserted: ", "estimate": "estimated: ",
               "unrecorded": "no record: "}[self.kind]
        line = pad + ("- " if indent else "") + tag + self.text
        if self.rule_id:
            line += f"  [rule {self.rule_id}]"
        if self.formula:
            line += f"  [{self.formula}; {self.formula_ref}; " + ", ".join(self.inputs) + "]"
        if self.sources and cite is not None:
            line += "  [" + "; ".join(dict.fromkeys(cite(s) for s in self.sources)) + "]"
        elif self.sources:
            shown = [_cite(s) for s in self.sources[:3]]
            more = len(self.sources) - 3
            line += "  [" + "; ".join(shown) + (f"; +{more} more" if more > 0 else "") + "]"
        shown_premises = [p for p in self.premises if p.shown()]
        return "\n".join([line] + [p.render(indent + 1, cite) for p in shown_premises])

    def shown(self) -> bool:
        """Whether :meth:`render` prints this premise (structural links and repeats are
        only in the data)."""
        if self.repeated:
            return False
        return self.kind != "estimate" or not self.object.startswith(("http://", "https://"))

    def leaves(self) -> list[Explanation]:
        """The asserted and estimated facts at the bottom of the tree."""
        if self.repeated:
            return []
        if not self.premises:
            return [self]
        return [leaf for p in self.premises for leaf in p.leaves()]


_CONFIDENCE_ORDER = ("low", "medium", "high")


def _merged(refs: list[SourceRef]) -> SourceRef:
    """One citation of a source that several facts rest on: every locator (sorted, each once)
    and the weakest confidence among them, whatever order rdflib returned the facts in."""
    locators = sorted({r.locator for r in refs if r.locator})
    confidences = {r.confidence for r in refs if r.confidence}
    weakest = min(confidences, key=lambda c: (_CONFIDENCE_ORDER.index(c.lower())
                                              if c.lower() in _CONFIDENCE_ORDER else -1, c),
                  default=None)
    return refs[0].model_copy(update={"locator": "; ".join(locators) or None,
                                      "confidence": weakest})


def _cite(s: SourceRef) -> str:
    out = s.title + (f", {s.locator}" if s.locator else "")
    return out + (f" <{s.url}>" if s.url else "")


def format_value(value: float, unit: str = "") -> str:
    """A number with an SI prefix for units that take one, 3 significant digits."""
    if unit in _PREFIXED and value != 0:
        for scale, prefix in _SI:
            if abs(value) >= scale * 0.9995:
                return f"{value / scale:.3g} {prefix}{unit}"
        return f"{value:.3g} {unit}"
    text = f"{value:.3g}" if abs(value) < 1e6 and value != int(value) else f"{value:,.0f}" \
        if abs(value) < 1e6 else f"{value:.3g}"
    return text + (f" {unit}" if unit else "")


class _Walker:
    def __init__(self, kb: KnowledgeBase, max_depth: int) -> None:
        self.kb = kb
        self.a = kb.graph(ASSERTED)
        self.d = kb.graph(DERIVATIONS)
        self.e = kb.graph(ESTIMATES)
        self.i = kb.graph(INFERRED)
        self.max_depth = max_depth
        self.seen: set[Node] = set()

    def label(self, node: Node | None) -> str:
        if node is None:  # a missing value: rdflib would read None as a wildcard
            return "unknown"
        if isinstance(node, Literal):
            v = node.toPython()
            return format_value(float(v)) if isinstance(v, int | float) and \
                not isinstance(v, bool) else str(v)
        for g in (self.a, self.d):
            for p in (RDFS.label, AK.shortName):
                v = g.value(node, p)
                if v is not None:
                    return str(v).split(" (")[0]
        if (node, RDF.type, AK.BottleneckFinding) in self.i:
            return f"the {self.label(self.i.value(node, AK.bottleneck))} finding"
        if (node, RDF.type, AK.Estimate) in self.e:
            return (f"estimate for {self.label(self.e.value(node, AK.system))} / "
                    f"{self.label(self.e.value(node, AK.workload))}")
        text = str(node)
        return text.rsplit("/", 1)[-1].rsplit("#", 1)[-1]

    def unit(self, predicate: Node) -> str:
        u = self.a.value(predicate, URIRef("http://qudt.org/schema/qudt/hasUnit"))
        return _UNITS.get(str(u).rsplit("/", 1)[-1].rsplit("#", 1)[-1], "") if u else ""

    def value_text(self, node: Node, unit: str = "") -> str:
        if isinstance(node, Literal) and isinstance(node.toPython(), int | float) and \
                not isinstance(node.toPython(), bool):
            return format_value(float(node.toPython()), unit)
        return self.label(node)

    def fact_text(self, t: tuple[Node, Node, Node]) -> str:
        s, p, o = t
        return f"{self.label(s)} {self.label(p)} {self.value_text(o, self.unit(p))}"

    def sources(self, s: Node, p: Node) -> list[SourceRef]:
        out = []
        for pv in self.a.objects(s, AK.provenance):
            if (pv, AK.forProperty, p) in self.a:
                out += [self.source(src, pv) for src in self.a.objects(pv, DCTERMS.source)]
        if not out:
            out = [self.source(src, s) for src in self.a.objects(s, DCTERMS.source)]
        return sorted(out, key=lambda r: r.iri)

    def rule_sources(self, src: Node | None, rule: Node) -> list[SourceRef]:
        """The rule's source; a concept (bottleneck, optimization) stands for its own sources."""
        if src is None:
            return []
        if self.a.value(src, DCTERMS.title) is None:
            inner = [self.source(x, src) for x in self.a.objects(src, DCTERMS.source)]
            if inner:
                return sorted(inner, key=lambda r: r.iri)
        return [self.source(src, rule)]

    def derived_from_sources(self, pv: Node) -> list[SourceRef]:
        """Sources of the knowledge an estimate was computed from (system, model)."""
        refs: dict[str, list[SourceRef]] = {}
        for node in self.e.objects(pv, PROV.wasDerivedFrom):
            holders = [node, *self.a.objects(node, AK.provenance)]
            for h in holders:
                for src in self.a.objects(h, DCTERMS.source):
                    refs.setdefault(str(src), []).append(self.source(src, h))
        return [_merged(refs[k]) for k in sorted(refs)]

    def source(self, src: Node, holder: Node) -> SourceRef:
        title = self.a.value(src, DCTERMS.title)
        url = self.a.value(src, AK.url)
        loc = self.a.value(holder, AK.locator)
        conf = self.a.value(holder, AK.confidence)
        return SourceRef(iri=str(src), title=str(title or src), url=str(url) if url else None,
                         locator=str(loc) if loc else None,
                         confidence=self.label(conf) if conf is not None else None)

    def derivation_of(self, t: tuple[Node, Node, Node]) -> Node | None:
        """The derivation that generated ``t``: by the statement's IRI, else (a literal that
        Oxigraph wrote in another lexical form, or another statement IRI for the same triple)
        by the statement's subject, predicate and object."""
        d = self.d.value(statement_iri(t), PROV.wasGeneratedBy)
        if d is not None:
            return d
        s, p, o = t
        for st in self.d.subjects(RDF.subject, s):
            if (st, RDF.predicate, p) in self.d and (st, RDF.object, o) in self.d:
                d = self.d.value(st, PROV.wasGeneratedBy)
                if d is not None:
                    return d
        return None

    def explain(self, t: tuple[Node, Node, Node], depth: int) -> Explanation:
        s, p, o = t
        base: dict[str, Any] = {"subject": str(s), "predicate": str(p), "object": str(o)}
        d = self.derivation_of(t)
        if d is not None:
            rule: Any = self.d.value(d, AK.rule)
            binds = {str(self.d.value(b, AK.bindingVariable)): self.d.value(b, AK.bindingValue)
                     for b in self.d.objects(d, AK.binding)}
            template = str(self.d.value(rule, AK.explanationTemplate) or self.fact_text(t))
            text = _VAR.sub(lambda m: self._fill(m, binds), template)
            repeated = d in self.seen
            self.seen.add(d)
            premises: list[Explanation] = []
            if not repeated and depth < self.max_depth:
                used = _ordered(self.d.objects(d, PROV.used))
                for u in used:
                    pt: Any = (self.d.value(u, RDF.subject), self.d.value(u, RDF.predicate),
                               self.d.value(u, RDF.object))
                    premises.append(self.explain(pt, depth + 1))
            src = self.d.value(rule, DCTERMS.source)
            return Explanation(**base, kind="derived", text=text, rule=str(rule),
                               rule_id=str(self.d.value(rule, AK.ruleId)), derivation=str(d),
                               bindings={k: v.n3() for k, v in sorted(binds.items()) if v is not None},
                               sources=self.rule_sources(src, rule),
                               premises=premises, repeated=repeated)
        if t in self.e:
            pv = next((pv for pv in self.e.objects(s, AK.provenance)
                       if (pv, AK.forProperty, p) in self.e), None)
            if pv is not None:
                return Explanation(
                    **base, kind="estimate", text=self.fact_text(t),
                    formula=str(self.e.value(pv, AK.formula)),
                    formula_ref=str(self.e.value(pv, AK.formulaRef)),
                    inputs=sorted(str(x) for x in self.e.objects(pv, AK.estimateInput)),
                    sources=self.derived_from_sources(pv))
            return Explanation(**base, kind="estimate", text=self.fact_text(t))
        if t in self.a:
            return Explanation(**base, kind="asserted", text=self.fact_text(t),
                               sources=self.sources(s, p))
        return Explanation(**base, kind="unrecorded", text=self.fact_text(t))

    def _fill(self, m: re.Match[str], binds: Mapping[str, Node | None]) -> str:
        value = binds.get(m.group(1))
        unit = m.group(2) or ""
        if value is None:
            return m.group(0)
        if isinstance(value, Literal) and isinstance(value.toPython(), int | float) and \
                not isinstance(value.toPython(), bool):
            return format_value(float(value.toPython()), unit)
        return self.label(value) + (f" {unit}" if unit else "")


def _ordered(items: Iterable[Any]) -> list[Any]:
    """rdflib terms (or triples of them) in rdflib's own order, which its type stubs do not
    declare (``Node.__lt__``)."""
    return sorted(items)


def explain(kb: KnowledgeBase, fact: URIRef | str | Sequence[Node], *,
            max_depth: int = 12) -> Explanation:
    """Explain a derived fact (or a derived node) down to asserted facts and their sources.

    Parameters
    ----------
    kb
        Knowledge base after :func:`accelkb.rules.infer` (derivations recorded).
    fact
        A triple ``(s, p, o)``, or the IRI of a derived node (a finding, a candidate): its
        ``rdf:type`` statement is explained.
    max_depth
        Depth limit of the tree.

    Raises
    ------
    InputError
        When the fact is not in the knowledge base.

    Examples
    --------
    >>> from accelkb.rules import infer
    >>> kb = KnowledgeBase()
    >>> report = infer(kb, "gpt3-175b-training", "ipu-pod64")
    >>> finding = next(f for f in report.findings if f.rule == "memory-capacity-bound")
    >>> print(explain(kb, finding.iri).text)  # doctest: +NORMALIZE_WHITESPACE
    Graphcore IPU-POD64 is memory-capacity bound for GPT-3 175B training because model state
    3.15 TB > 57.6 GB of aggregate on-chip SRAM over 64 chips
    """
    walker = _Walker(kb, max_depth)
    if isinstance(fact, str | URIRef):
        node = URIRef(str(fact))
        types = _ordered(walker.i.objects(node, RDF.type))
        if types:
            return walker.explain((node, RDF.type, types[0]), 0)
        triples = _ordered(walker.i.triples((node, None, None)))
        if triples:
            return walker.explain(triples[0], 0)
        types = _ordered(kb.dataset.objects(node, RDF.type))
        if types:
            return walker.explain((node, RDF.type, types[0]), 0)
        raise InputError(f"expected a derived fact or node, got {node}: it is not in the "
                         "knowledge base; derive the findings first (`accelkb explain "
                         "--workload W --system S`, or accelkb.rules.infer in Python)")
    s, p, o = fact
    if (s, p, o) not in kb.dataset:
        raise InputError(f"expected a fact of the knowledge base, got ({s}, {p}, {o})")
    return walker.explain((s, p, o), 0)
