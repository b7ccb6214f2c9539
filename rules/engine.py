"""The generic forward-chaining engine: rules in dependency order, to a fixpoint, with provenance.

The engine knows no rule by name. Each rule's WHERE part runs as ``SELECT *`` (values go in
through bindings, never into the text); each solution instantiates the CONSTRUCT template, and
triples not yet in any graph go to the inferred graph. For every solution that adds a triple a
PROV-O derivation record goes to the derivations graph::

    kb:derivation-<rule>-<hash>  a ak:Derivation, prov:Activity ;
        ak:rule kb:rule-<id> ;                      # rdfs:subPropertyOf prov:hadPlan
        ak:binding [ak:bindingVariable "x" ; ak:bindingValue v]  (an IRI, not a blank node)
        prov:used kb:stmt-<hash> ...                # premise statements (rdf:Statement)
    kb:stmt-<hash> prov:wasGeneratedBy kb:derivation-... # each new triple, as rdf:Statement

Statement IRIs are a hash of the triple, so ``explain`` finds a fact's derivation by lookup.
Rules run in the order of their dependency graph (rule A before B when A writes a term B reads;
cycles run together); a rule reruns only when a term it reads gained triples, until nothing
changes or ``max_rounds`` passes are spent (:attr:`FixpointReport.converged` says which).

Two stores are supported: :class:`RdflibStore` (the knowledge base's own rdflib ``Dataset``; no
copy) and :class:`OxigraphStore` (pyoxigraph, optional; ``bench/rules_bench.py`` compares them).
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field
from rdflib import RDF, RDFS, Dataset, Literal, Namespace, URIRef, Variable
from rdflib.namespace import DCTERMS
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.sparql import Query
from rdflib.term import Node

from accelkb.ontology import loader
from accelkb.ontology.kb import DERIVATIONS, INFERRED
from accelkb.ontology.namespace import AK

from .parse import Pattern, Rule

PROV = Namespace("http://www.w3.org/ns/prov#")
STMT_NS = loader.DATA_NS + "stmt-"
DERIVATION_NS = loader.DATA_NS + "derivation-"
Triple = tuple[Node, Node, Node]
# Terms used per derivation, looked up once (DefinedNamespace attribute access is slow).
_A, _STATEMENT, _SUBJ, _PRED, _OBJ = RDF.type, RDF.Statement, RDF.subject, RDF.predicate, RDF.object
_DERIVATION, _ACTIVITY, _RULE = AK.Derivation, PROV.Activity, AK.rule
_BINDING, _VAR, _VALUE = AK.binding, AK.bindingVariable, AK.bindingValue
_USED, _GENERATED_BY = PROV.used, PROV.wasGeneratedBy


class Store(Protocol):
    """What the engine needs from a quad store."""

    def select(self, rule: Rule, bindings: Mapping[str, Node]) -> list[dict[Variable, Node]]:
        """Solutions of the rule's WHERE part over the union of all graphs."""

    def contains(self, triple: Triple) -> bool:
        """Whether the triple is in any graph."""

    def add(self, graph: URIRef, triples: Iterable[Triple]) -> None:
        """Add triples to a named graph."""


class RdflibStore:
    """The engine over an rdflib ``Dataset`` with ``default_union=True`` (the knowledge base's)."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._prepared: dict[str, Query] = {}

    def select(self, rule: Rule, bindings: Mapping[str, Node]) -> list[dict[Variable, Node]]:
        query = rule.select_query or self._prepared.get(rule.path)
        if query is None:
            query = self._prepared[rule.path] = prepareQuery(rule.select_text)
        result = self.dataset.query(query, initBindings=dict(bindings))  # type: ignore[arg-type]
        return list(result.bindings)  # type: ignore[arg-type]

    def contains(self, triple: Triple) -> bool:
        return triple in self.dataset

    def add(self, graph: URIRef, triples: Iterable[Triple]) -> None:
        g = self.dataset.graph(graph)
        for t in triples:
            g.add(t)


class OxigraphStore:
    """The engine over a pyoxigraph ``Store`` (optional dependency ``pyoxigraph``).

    Build it from a dataset with :meth:`from_dataset`; :meth:`triples` reads a graph back.
    """

    def __init__(self) -> None:
        import pyoxigraph as ox

        self.ox = ox
        self.store = ox.Store()
        self._cache: dict[Node, Any] = {}
        self._nt: dict[Node, str] = {}

    @classmethod
    def from_dataset(cls, dataset: Dataset) -> OxigraphStore:
        """Copy every named graph of an rdflib dataset into a new in-memory Oxigraph store."""
        out = cls()
        out.store.bulk_extend(
            out.ox.Quad(out._to_ox(s), out._to_ox(p), out._to_ox(o), out._to_ox(_name(g)))
            for s, p, o, g in dataset.quads((None, None, None, None))
            if isinstance(_name(g), URIRef))
        return out

    def _to_ox(self, t: Node) -> Any:
        hit = self._cache.get(t)
        if hit is not None:
            return hit
        out = self._convert(t)
        if len(self._cache) < 2_000_000:
            self._cache[t] = out
        return out

    def _convert(self, t: Node) -> Any:
        ox = self.ox
        if isinstance(t, URIRef):
            return ox.NamedNode(str(t))
        if isinstance(t, Literal):
            if t.language:
                return ox.Literal(str(t), language=t.language)
            if t.datatype:
                return ox.Literal(str(t), datatype=ox.NamedNode(str(t.datatype)))
            return ox.Literal(str(t))
        return ox.BlankNode(str(t))

    def _from_ox(self, t: Any) -> Node:
        ox = self.ox
        if isinstance(t, ox.NamedNode):
            return URIRef(t.value)
        if isinstance(t, ox.Literal):
            if t.language:
                return Literal(t.value, lang=t.language)
            dt = t.datatype.value
            return Literal(t.value, datatype=None if dt.endswith("#string") else URIRef(dt))
        from rdflib import BNode
        return BNode(t.value)

    def select(self, rule: Rule, bindings: Mapping[str, Node]) -> list[dict[Variable, Node]]:
        subs = {self.ox.Variable(k): self._to_ox(v) for k, v in bindings.items()}
        res: Any = self.store.query(rule.select_text, use_default_graph_as_union=True,
                                    substitutions=subs or None)
        names = [v.value for v in res.variables]
        rows = []
        for sol in res:
            row = {}
            for n in names:
                v = sol[n]
                if v is not None:
                    row[Variable(n)] = self._from_ox(v)
            rows.append(row)
        return rows

    def contains(self, triple: Triple) -> bool:
        s, p, o = (self._to_ox(t) for t in triple)
        return any(True for _ in self.store.quads_for_pattern(s, p, o, None))

    def add(self, graph: URIRef, triples: Iterable[Triple]) -> None:
        triples = list(triples)
        if not triples:
            return
        if len(self._nt) > 500_000:  # bound memory; the cache only saves n3() calls
            self._nt.clear()
        nt = self._nt
        lines = []
        for tr in triples:
            parts = []
            for t in tr:
                text = nt.get(t)
                if text is None:
                    text = nt[t] = _n3(t)
                parts.append(text)
            lines.append(" ".join(parts))
        data = (" .\n".join(lines) + " .\n").encode("utf-8")
        self.store.load(data, format=self.ox.RdfFormat.N_TRIPLES,
                        to_graph=self.ox.NamedNode(str(graph)))

    def triples(self, graph: URIRef) -> list[Triple]:
        """Every triple of one named graph, as rdflib terms."""
        return [(self._from_ox(q.subject), self._from_ox(q.predicate), self._from_ox(q.object))
                for q in self.store.quads_for_pattern(None, None, None,
                                                      self.ox.NamedNode(str(graph)))]

    def __len__(self) -> int:
        return len(self.store)


def _name(g: Any) -> Any:
    return getattr(g, "identifier", g)


class RuleRun(BaseModel):
    """What one rule did during a fixpoint run."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rule: str = Field(description="rule id")
    runs: int = Field(description="times the rule's query ran")
    solutions: int = Field(description="solutions of its WHERE part, summed over runs")
    new_triples: int = Field(description="triples it added to the inferred graph")
    derivations: int = Field(description="derivation records it added")
    seconds: float = Field(description="time spent in the rule, s")


class FixpointReport(BaseModel):
    """Outcome of one fixpoint run."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    converged: bool = Field(description="True when a pass changed nothing before the limit")
    passes: int = Field(description="passes over the rule order that ran")
    max_rounds: int = Field(description="the limit on passes")
    order: list[str] = Field(description="rule ids in dependency order")
    rules: list[RuleRun] = Field(description="per-rule statistics, in order")
    new_triples: int = Field(description="triples added to the inferred graph")
    derivations: int = Field(description="derivation records added")
    seconds: float = Field(description="wall time of the run, s")


def _overlap(writes: frozenset[tuple[Any, Any]], reads: frozenset[tuple[Any, Any]]) -> bool:
    for wc, wt in writes:
        for rc, rt in reads:
            if (rt is None or wt == rt) and (wc is None or rc is None or wc == rc):
                return True
    return False


def dependency_graph(rules: Iterable[Rule]) -> nx.DiGraph:
    """Edge A -> B when rule A writes a (class, term) that rule B reads (self-loops kept)."""
    rules = list(rules)
    g = nx.DiGraph()
    g.add_nodes_from(r.id for r in rules)
    for a in rules:
        for b in rules:
            if _overlap(a.typed_writes, b.typed_reads):
                g.add_edge(a.id, b.id)
    return g


def dependency_order(rules: Iterable[Rule]) -> list[Rule]:
    """Rules in dependency order (writers before readers; ties and cycles by id).

    Examples
    --------
    >>> from accelkb.rules.parse import load_rules
    >>> order = [r.id for r in dependency_order(load_rules().values())]
    >>> order.index("memory-capacity-bound") < order.index("rank-candidates")
    True
    """
    by_id = {r.id: r for r in rules}
    g = dependency_graph(by_id.values())
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    cond = nx.condensation(g)
    first = {n: min(cond.nodes[n]["members"]) for n in cond.nodes}
    out: list[Rule] = []
    for n in nx.lexicographical_topological_sort(cond, key=lambda n: first[n]):
        out += [by_id[i] for i in sorted(cond.nodes[n]["members"])]
    return out


def _h(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=10).hexdigest()


@functools.lru_cache(maxsize=1 << 18)
def _n3(term: Node) -> str:
    return term.n3()


@functools.lru_cache(maxsize=1024)
def _var_literal(name: str) -> Literal:
    return Literal(name)


def statement_iri(triple: Triple) -> URIRef:
    """The IRI of the rdf:Statement that stands for ``triple`` in derivation records."""
    return URIRef(STMT_NS + _h(*(_n3(t) for t in triple)))


class _Recorder:
    """Builds derivation records; writes each rdf:Statement's four triples once per run."""

    def __init__(self) -> None:
        self.iris: dict[Triple, URIRef] = {}

    def statement(self, triple: Triple, out: list[Triple]) -> URIRef:
        st = self.iris.get(triple)
        if st is None:
            if len(self.iris) > 1_000_000:  # bound memory; re-adding a statement is harmless
                self.iris.clear()
            st = self.iris[triple] = statement_iri(triple)
            out += [(st, _A, _STATEMENT), (st, _SUBJ, triple[0]), (st, _PRED, triple[1]),
                    (st, _OBJ, triple[2])]
        return st


def _instantiate(p: Pattern, row: Mapping[Variable, Node]) -> Triple | None:
    out = []
    for t in (p.s, p.p, p.o):
        v = row.get(t) if isinstance(t, Variable) else t
        if v is None:
            return None
        out.append(v)
    s, pred, o = out
    if isinstance(s, Literal) or not isinstance(pred, URIRef):
        return None
    return (s, pred, o)


def rule_record(rule: Rule) -> list[Triple]:
    """Triples describing a rule (its IRI, id, title, template, file, source)."""
    return [(rule.iri, RDF.type, AK.Rule), (rule.iri, RDF.type, PROV.Plan),
            (rule.iri, AK.ruleId, Literal(rule.id)), (rule.iri, RDFS.label, Literal(rule.title)),
            (rule.iri, AK.explanationTemplate, Literal(rule.explanation)),
            (rule.iri, AK.ruleFile, Literal(rule.path)),
            (rule.iri, DCTERMS.source, rule.source)]


def _derivation(rule: Rule, row: Mapping[Variable, Node], new: list[Triple],
                store: Store, rec: _Recorder) -> list[Triple]:
    items = sorted((str(k), v) for k, v in row.items())
    d = URIRef(DERIVATION_NS + rule.id + "-" + _h(*(f"{k}={_n3(v)}" for k, v in items)))
    items = [(k, v) for k, v in items if k in rule.recorded_vars]
    out: list[Triple] = [(d, _A, _DERIVATION), (d, _A, _ACTIVITY), (d, _RULE, rule.iri)]
    for k, v in items:
        b = URIRef(f"{d}-{k}")
        out += [(d, _BINDING, b), (b, _VAR, _var_literal(k)), (b, _VALUE, v)]
    seen: set[Triple] = set()
    for p in rule.premises:
        t = _instantiate(p, row)
        if t is None or t in seen or (p.optional and not store.contains(t)):
            continue
        seen.add(t)
        out.append((d, _USED, rec.statement(t, out)))
    for t in new:
        out.append((rec.statement(t, out), _GENERATED_BY, d))
    return out


def run_rule(rule: Rule, store: Store, bindings: Mapping[str, Node] | None = None,
             record: bool = True, recorder: _Recorder | None = None
             ) -> tuple[int, list[Triple], int]:
    """Run one rule once: (solutions, new triples, derivation records added)."""
    rec = recorder or _Recorder()
    rows = store.select(rule, bindings or {})
    new_all: list[Triple] = []
    seen: set[Triple] = set()
    records: list[Triple] = []
    derivations = 0
    for row in rows:
        new = []
        for p in rule.template:
            t = _instantiate(p, row)
            if t is not None and t not in seen and not store.contains(t):
                seen.add(t)
                new.append(t)
        if new:
            new_all += new
            if record:
                records += _derivation(rule, row, new, store, rec)
                derivations += 1
    store.add(INFERRED, new_all)
    if records:
        store.add(DERIVATIONS, records)
    return len(rows), new_all, derivations


def run_fixpoint(rules: Iterable[Rule], store: Store, *, max_rounds: int = 10,
                 bindings: Mapping[str, Node] | None = None,
                 record: bool = True) -> FixpointReport:
    """Run ``rules`` on ``store`` until nothing changes or ``max_rounds`` passes are spent.

    Parameters
    ----------
    rules
        Parsed rules (:func:`accelkb.rules.parse.load_rules`); file order does not matter.
    store
        :class:`RdflibStore` or :class:`OxigraphStore`.
    max_rounds
        Limit on passes over the rule order; the report says whether the fixpoint was reached.
    bindings
        Values for variables, passed to every rule's query (never formatted into text).
    record
        Write derivation records (False only to measure their cost).

    Examples
    --------
    >>> from rdflib import Dataset
    >>> from accelkb.rules.parse import load_rules
    >>> report = run_fixpoint(load_rules().values(), RdflibStore(Dataset(default_union=True)))
    >>> report.converged, report.new_triples
    (True, 0)
    """
    started = time.perf_counter()
    rules = list(rules)
    order = dependency_order(rules)
    graph = dependency_graph(rules)
    if record:
        store.add(DERIVATIONS, [t for r in order for t in rule_record(r)])
    stats = {r.id: [0, 0, 0, 0, 0.0] for r in order}
    dirty = {r.id for r in order}
    passes = 0
    recorder = _Recorder()
    while dirty and passes < max_rounds:
        passes += 1
        for rule in order:
            if rule.id not in dirty:
                continue
            dirty.discard(rule.id)
            t0 = time.perf_counter()
            sols, new, ders = run_rule(rule, store, bindings, record, recorder)
            st = stats[rule.id]
            st[0] += 1
            st[1] += sols
            st[2] += len(new)
            st[3] += ders
            st[4] += time.perf_counter() - t0
            if new:
                dirty |= set(graph.successors(rule.id))
    runs = [RuleRun(rule=i, runs=int(s[0]), solutions=int(s[1]), new_triples=int(s[2]),
                    derivations=int(s[3]), seconds=float(s[4])) for i, s in stats.items()]
    return FixpointReport(converged=not dirty, passes=passes, max_rounds=max_rounds,
                          order=[r.id for r in order], rules=runs,
                          new_triples=sum(r.new_triples for r in runs),
                          derivations=sum(r.derivations for r in runs),
                          seconds=time.perf_counter() - started)
