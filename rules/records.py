"""Derivation records (PROV-O), written in each store's own terms.

One record per rule solution that adds a triple. In the knowledge base (rdflib) it reads::

    kb:derivation-<rule>-<hash>  a ak:Derivation, prov:Activity ;
        ak:rule kb:rule-<id> ;                      # rdfs:subPropertyOf prov:hadPlan
        ak:binding kb:binding-<hash> ... ;          # one per recorded variable
        prov:used kb:stmt-<hash> ... .              # premise statements (rdf:Statement)
    kb:binding-<hash> ak:bindingVariable "x" ; ak:bindingValue v .
    kb:stmt-<hash> a rdf:Statement ; rdf:subject s ; rdf:predicate p ; rdf:object o .
    kb:stmt-<hash> prov:wasGeneratedBy kb:derivation-...   # each new triple

Every IRI is a hash of what it stands for: a derivation of its rule and all bindings of the
solution, a binding of (variable, value), a statement of its triple (the N-Triples form of its
terms). So records are idempotent, and a binding or a statement that many derivations share is
written once per run (while cached).

Two writers. :class:`RdflibRecorder` adds exactly that to an rdflib ``Dataset`` (rdflib has no
RDF 1.2 triple terms). :class:`OxigraphRecorder` writes the same record in RDF 1.2, where a
triple can be the object of another: ``prov:used <<( s p o )>>`` for each premise and
``prov:generated <<( s p o )>>`` (the inverse of ``prov:wasGeneratedBy``) for each new triple,
one triple each instead of a four-triple ``rdf:Statement`` plus a link, without the types the
schema implies (``ak:Derivation rdfs:subClassOf prov:Activity``), and without the bindings a
premise already holds (:func:`anchored_vars`: 58 % of the bundled rules' recorded variables).
In that store a SPARQL 1.2 query reads them as they are
(``?d prov:generated <<( ?f rdf:type ak:BottleneckFinding )>>``); :meth:`OxigraphStore.triples`
hands the derivations graph back in the knowledge base's shape above (same statement IRIs,
types and bindings spelt out), so the knowledge base is the same whichever store ran the
rules. The Oxigraph writer never builds a Python RDF term: it writes N-Triples text from the
terms' own N-Triples forms (which the hashes need anyway) and hands it to Oxigraph's parser in
chunks of a few thousand triples, loaded while the engine goes on
(:meth:`OxigraphStore.load_records`).

Cost: Oxigraph inserts a few µs per quad (a quad with a triple term ~1.7× a plain one), so the
record's size is its cost. The rdflib shape is about ten record triples per inferred triple
(half of them the four triples of each rdf:Statement); the RDF 1.2 shape four (95,175 against
242,776 for the 23,800 inferred triples of the 2×10^4-triple benchmark).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from rdflib import RDF, RDFS, Literal, Namespace, URIRef, Variable
from rdflib.namespace import DCTERMS
from rdflib.term import Node

from accelkb.ontology import loader
from accelkb.ontology.kb import DERIVATIONS
from accelkb.ontology.namespace import AK

from .parse import Rule


class TripleSink(Protocol):
    """Where :class:`RdflibRecorder` writes: a store that adds rdflib triples to a named graph
    (:class:`accelkb.rules.stores.RdflibStore`)."""

    def add(self, graph: URIRef, triples: Iterable[tuple[Node, Node, Node]]) -> None: ...


class RecordLoader(Protocol):
    """Where :class:`OxigraphRecorder` writes: a store that loads N-Triples text in the
    background and remembers each rule's anchored variables
    (:class:`accelkb.rules.stores.OxigraphStore`)."""

    anchors: dict[URIRef, dict[str, tuple[URIRef, int]]]

    def load_records(self, text: str) -> None: ...

    def sync(self) -> None: ...

PROV = Namespace("http://www.w3.org/ns/prov#")
STMT_NS = loader.DATA_NS + "stmt-"
DERIVATION_NS = loader.DATA_NS + "derivation-"
BINDING_NS = loader.DATA_NS + "binding-"
Triple = tuple[Any, Any, Any]
#: a compiled pattern: picks (s, p, o) out of ``solution + constants`` (operator.itemgetter)
Getter = Callable[[Sequence[Any]], Triple]
# Terms used per derivation, looked up once (DefinedNamespace attribute access is slow).
_A, _STATEMENT, _SUBJ, _PRED, _OBJ = RDF.type, RDF.Statement, RDF.subject, RDF.predicate, RDF.object
_DERIVATION, _ACTIVITY, _RULE = AK.Derivation, PROV.Activity, AK.rule
_BINDING, _VAR, _VALUE = AK.binding, AK.bindingVariable, AK.bindingValue
_USED, _GENERATED_BY = PROV.used, PROV.wasGeneratedBy
#: bound on the statement and binding caches; past it the older half is dropped (writing a
#: statement or binding again later is harmless: the store keeps one copy)
CACHE_LIMIT = 200_000


def _trim(cache: dict[Any, Any]) -> None:
    """Drop the older half of a cache (dicts keep insertion order)."""
    for k in list(itertools.islice(cache, len(cache) // 2)):
        del cache[k]


_US = "\x1f"  # separates the parts of a hashed key
_blake2b = hashlib.blake2b


def _h(*parts: str) -> str:
    """The 20-hex-digit hash in record IRIs (blake2b of the parts joined by U+001F)."""
    return _blake2b(_US.join(parts).encode(), digest_size=10).hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def _n3(term: Node) -> str:
    return term.n3()


def statement_iri(triple: tuple[Node, Node, Node]) -> URIRef:
    """The IRI of the rdf:Statement that stands for an rdflib ``triple`` in derivation records.

    Oxigraph writes a literal in its own N-Triples form (``"1"^^xsd:double`` where rdflib
    normalises to ``"1.0"``), so for a triple with a literal the statement may have another
    IRI there; :func:`accelkb.rules.explain.explain` then finds it by its
    ``rdf:subject`` / ``rdf:predicate`` / ``rdf:object``.
    """
    return URIRef(STMT_NS + _h(*(_n3(t) for t in triple)))


def rule_record(rule: Rule) -> list[tuple[Node, Node, Node]]:
    """Triples describing a rule (its IRI, id, title, template, file, source)."""
    return [(rule.iri, RDF.type, AK.Rule), (rule.iri, RDF.type, PROV.Plan),
            (rule.iri, AK.ruleId, Literal(rule.id)), (rule.iri, RDFS.label, Literal(rule.title)),
            (rule.iri, AK.explanationTemplate, Literal(rule.explanation)),
            (rule.iri, AK.ruleFile, Literal(rule.path)),
            (rule.iri, DCTERMS.source, rule.source)]


def anchored_vars(rule: Rule, names: Iterable[str] | None = None
                  ) -> dict[str, tuple[URIRef, int]]:
    """Recorded variables a premise fixes: name -> (predicate, 0 for subject or 2 for object).

    A variable is anchored when it is the subject or object of a non-optional premise pattern
    whose predicate is an IRI no other premise pattern of the rule uses, and no premise has a
    variable or path predicate: the derivation's premises then hold exactly one triple with
    that predicate, and its subject or object is the variable's value. With ``names`` (the
    variables of the rule's solutions), a pattern with a variable outside them (one inside a
    sub-select) anchors nothing: the engine cannot record that premise.

    Examples
    --------
    >>> from accelkb.rules.parse import load_rules
    >>> sorted(anchored_vars(load_rules()["host-io-bound"]))
    ['e', 'host', 'rate', 'system', 'workload']
    """
    if not all(isinstance(p.p, URIRef) for p in rule.premises):
        return {}
    uses = Counter(p.p for p in rule.premises)
    known = None if names is None else set(names)
    out: dict[str, tuple[URIRef, int]] = {}
    for p in rule.premises:
        if p.optional or uses[p.p] != 1 or (known is not None and any(
                isinstance(t, Variable) and str(t) not in known for t in (p.s, p.o))):
            continue
        for pos, term in ((0, p.s), (2, p.o)):
            if isinstance(term, Variable) and str(term) in rule.recorded_vars:
                out.setdefault(str(term), (URIRef(p.p), pos))
    return out


class RecordPlan:
    """What a recorder needs of one rule and its solution layout (built once per rule run).

    ``key_parts`` are ``("name=", index)`` for every variable, sorted by name (the derivation
    hash); ``recorded`` are ``(name, index)`` of the variables whose bindings are kept;
    ``unanchored`` those of them no premise fixes (:func:`anchored_vars`).
    """

    __slots__ = ("anchors", "const_text", "key_parts", "recorded", "rule", "unanchored",
                 "width")

    def __init__(self, rule: Rule, names: Sequence[str]) -> None:
        self.rule = rule
        self.width = len(names)
        #: N-Triples forms of the constants after the solution values (set by a recorder)
        self.const_text: list[str] | None = None
        self.key_parts = [(n + "=", i) for n, i in sorted((n, i) for i, n in enumerate(names))]
        self.recorded = [(n, i) for n, i in sorted((n, i) for i, n in enumerate(names))
                         if n in rule.recorded_vars]
        self.anchors = anchored_vars(rule, names)
        self.unanchored = [(n, i) for n, i in self.recorded if n not in self.anchors]


class RdflibRecorder:
    """Derivation records as rdflib triples, added to the store's derivations graph."""

    def __init__(self, store: TripleSink) -> None:
        self.store = store
        self.out: list[tuple[Node, Node, Node]] = []
        self.statements: dict[Triple, URIRef] = {}
        self.bindings: dict[tuple[str, Node], URIRef] = {}

    def rules(self, rules: Iterable[Rule]) -> None:
        """Describe the rules (each derivation's ``ak:rule`` points to one)."""
        self.out += [t for r in rules for t in rule_record(r)]
        self.flush()

    def statement(self, triple: Triple) -> URIRef:
        st = self.statements.get(triple)
        if st is None:
            if len(self.statements) > CACHE_LIMIT:
                _trim(self.statements)
            st = self.statements[triple] = statement_iri(triple)
            self.out += [(st, _A, _STATEMENT), (st, _SUBJ, triple[0]),
                         (st, _PRED, triple[1]), (st, _OBJ, triple[2])]
        return st

    def binding(self, name: str, value: Node) -> URIRef:
        b = self.bindings.get((name, value))
        if b is None:
            if len(self.bindings) > CACHE_LIMIT:
                _trim(self.bindings)
            b = self.bindings[(name, value)] = URIRef(BINDING_NS + _h(name, _n3(value)))
            self.out += [(b, _VAR, Literal(name)), (b, _VALUE, value)]
        return b

    def derivation(self, plan: RecordPlan, row: Sequence[Any], ext: Sequence[Any],
                   used: list[Getter], made: list[Getter]) -> None:
        """Record one solution ``row`` of ``plan.rule``; ``ext`` is ``row`` followed by the
        rule's constants, ``used`` and ``made`` pick the premises it used and the triples it
        added out of ``ext``."""
        key = "\x1f".join([pre + _n3(row[i]) for pre, i in plan.key_parts if row[i] is not None])
        d = URIRef(DERIVATION_NS + plan.rule.id + "-" + _h(key))
        out = self.out
        out += [(d, _A, _DERIVATION), (d, _A, _ACTIVITY), (d, _RULE, plan.rule.iri)]
        for name, i in plan.recorded:
            if row[i] is not None:
                out.append((d, _BINDING, self.binding(name, row[i])))
        for get in used:
            out.append((d, _USED, self.statement(get(ext))))
        for get in made:
            out.append((self.statement(get(ext)), _GENERATED_BY, d))

    def flush(self) -> None:
        """Add what was recorded to the derivations graph."""
        if self.out:
            self.store.add(DERIVATIONS, self.out)
            self.out = []

    def close(self) -> None:
        """Flush; the records are in the store afterwards."""
        self.flush()


def _nt(term: Node) -> str:
    return str(term.n3())


_T = _nt(_A)
_NT_HEAD = f" {_T} {_nt(_DERIVATION)} .\n"
_NT_RULE, _NT_BINDING = f" {_nt(_RULE)} ", f" {_nt(_BINDING)} "
_NT_VAR, _NT_VALUE = f" {_nt(_VAR)} ", f" {_nt(_VALUE)} "
_NT_USED, _NT_GENERATED = f" {_nt(_USED)} ", f" {_nt(PROV.generated)} "


class OxigraphRecorder:
    """Derivation records as N-Triples text, loaded into Oxigraph in chunks.

    Terms of solutions are pyoxigraph terms; ``str(term)`` is their N-Triples form, used both
    for the hashes and in the text, so no term object is built for a record.
    """

    def __init__(self, store: RecordLoader, chunk_lines: int = 2_500) -> None:
        self.store = store
        self.chunk_lines = chunk_lines
        self.lines: list[str] = []
        self.count = 0
        self.bindings: dict[tuple[str, str], str] = {}

    def rules(self, rules: Iterable[Rule]) -> None:
        """Describe the rules (each derivation's ``ak:rule`` points to one)."""
        self.lines += [f"{_nt(s)} {_nt(p)} {_nt(o)} .\n" for r in rules
                       for s, p, o in rule_record(r)]
        self.flush()

    def derivation(self, plan: RecordPlan, row: Sequence[Any], ext: Sequence[Any],
                   used: list[Getter], made: list[Getter]) -> None:
        """Record one solution ``row`` of ``plan.rule``; ``ext`` is ``row`` followed by the
        rule's constants, ``used`` and ``made`` pick the premises it used and the triples it
        added out of ``ext``.

        Each term's N-Triples form is computed once per solution (once per run for a
        constant), and the same getters pick the triples' N-Triples forms out of those.
        """
        consts = plan.const_text
        if consts is None:
            consts = plan.const_text = [str(x) for x in ext[plan.width:]]
        text: list[Any] = [None if x is None else str(x) for x in row]
        key = "\x1f".join([pre + text[i] for pre, i in plan.key_parts if text[i] is not None])
        text += consts
        d = f"<{DERIVATION_NS}{plan.rule.id}-{_blake2b(key.encode(), digest_size=10).hexdigest()}>"
        lines = [f"{d}{_NT_HEAD}{d}{_NT_RULE}<{plan.rule.iri}> .\n"]
        n = 2 + len(used) + len(made)
        bindings = self.bindings
        if plan.anchors and plan.rule.iri not in self.store.anchors:
            self.store.anchors[plan.rule.iri] = plan.anchors
        for name, i in plan.unanchored:
            value = text[i]
            if value is None:
                continue
            b = bindings.get((name, value))
            if b is None:
                if len(bindings) > CACHE_LIMIT // 2:
                    _trim(bindings)
                b = bindings[(name, value)] = f"<{BINDING_NS}{_h(name, value)}>"
                lines.append(f'{b}{_NT_VAR}"{name}" .\n{b}{_NT_VALUE}{value} .\n')
                n += 2
            lines.append(f"{d}{_NT_BINDING}{b} .\n")
            n += 1
        used_line, made_line = f"{d}{_NT_USED}", f"{d}{_NT_GENERATED}"
        for get in used:
            s, p, o = get(text)
            lines.append(f"{used_line}<<( {s} {p} {o} )>> .\n")
        for get in made:
            s, p, o = get(text)
            lines.append(f"{made_line}<<( {s} {p} {o} )>> .\n")
        self.lines.append("".join(lines))
        self.count += n
        if self.count >= self.chunk_lines:
            self.flush()

    def flush(self) -> None:
        """Hand what was recorded to the store (loaded in the background)."""
        if self.lines:
            self.store.load_records("".join(self.lines))
            self.lines = []
            self.count = 0

    def close(self) -> None:
        """Flush and wait: the records are in the store afterwards."""
        self.flush()
        self.store.sync()
