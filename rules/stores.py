"""The quad stores the rule engine runs on, each in its own terms.

The engine (:mod:`accelkb.rules.engine`) never converts a term: it reads solutions as tuples of
the store's terms, instantiates templates with them, checks and adds triples of them, and hands
them to the store's recorder (:mod:`accelkb.rules.records`). rdflib's terms are rdflib's;
Oxigraph's are pyoxigraph's, converted from rdflib only for the few constants of rule
templates and for caller bindings (:meth:`OxigraphStore.native`), and back only when a caller
reads a graph (:meth:`OxigraphStore.triples`).

Oxigraph loads derivation records on a background thread (pyoxigraph releases the GIL while
it parses and inserts): the engine builds the next records while the last chunk goes in.
:meth:`OxigraphStore.sync` waits for it; the engine calls it at the end of a run, before a rule
that could read records (one with a variable predicate or class), and every read method here
calls it too.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from rdflib import RDF, BNode, Dataset, Literal, URIRef, Variable
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.sparql import Query
from rdflib.term import Node

from accelkb.ontology.kb import DERIVATIONS
from accelkb.ontology.namespace import AK

from .parse import Rule
from .records import BINDING_NS, PROV, STMT_NS, OxigraphRecorder, RdflibRecorder, _h, _n3

Row = tuple[Any, ...]
#: chunks of records waiting for the loader before the engine waits (memory stays bounded)
QUEUE_CHUNKS = 32


class RdflibStore:
    """The engine over an rdflib ``Dataset`` with ``default_union=True`` (the knowledge base's)."""

    literal_type: type = Literal
    iri_type: type = URIRef

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._prepared: dict[str, Query] = {}

    def native(self, node: Node) -> Node:
        """The store's term for an rdflib term (itself)."""
        return node

    def nt(self, term: Node) -> str:
        """N-Triples form of a term."""
        return _n3(term)

    def _query(self, rule: Rule, bindings: Mapping[str, Node]) -> Any:
        query = rule.select_query or self._prepared.get(rule.path)
        if query is None:
            query = self._prepared[rule.path] = prepareQuery(rule.select_text)
        return self.dataset.query(query, initBindings=dict(bindings))  # type: ignore[arg-type]

    def solutions(self, rule: Rule, bindings: Mapping[str, Node]) -> tuple[list[str], list[Row]]:
        """Variable names and solutions (tuples in that order, None if unbound) of the
        rule's WHERE part over the union of all graphs."""
        result = self._query(rule, bindings)
        variables = list(result.vars or [])
        return ([str(v) for v in variables],
                [tuple(b.get(v) for v in variables) for b in result.bindings])

    def select(self, rule: Rule, bindings: Mapping[str, Node]) -> list[dict[Variable, Node]]:
        """Solutions of the rule's WHERE part as dicts (bound variables only)."""
        return list(self._query(rule, bindings).bindings)

    def contains(self, triple: tuple[Node, Node, Node]) -> bool:
        """Whether the triple is in any graph."""
        return triple in self.dataset

    def add(self, graph: URIRef, triples: Iterable[tuple[Node, Node, Node]]) -> None:
        """Add triples to a named graph."""
        g = self.dataset.graph(graph)
        for t in triples:
            g.add(t)

    def recorder(self) -> RdflibRecorder:
        """A writer of derivation records into this store."""
        return RdflibRecorder(self)

    def sync(self) -> None:
        """Nothing is written in the background here."""


class OxigraphStore:
    """The engine over an in-memory pyoxigraph ``Store`` (optional dependency ``pyoxigraph``).

    Build it from a dataset with :meth:`from_dataset` or fill :attr:`store` directly;
    :meth:`triples` reads a graph back as rdflib terms.
    """

    def __init__(self) -> None:
        import pyoxigraph as ox

        self.ox = ox
        self.store = ox.Store()
        self.literal_type: type = ox.Literal
        self.iri_type: type = ox.NamedNode
        self._cache: dict[Node, Any] = {}
        self._loader: threading.Thread | None = None
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._error: BaseException | None = None
        #: per rule IRI, the bindings its records leave to the premises (set by the recorder)
        self.anchors: dict[URIRef, dict[str, tuple[URIRef, int]]] = {}

    @classmethod
    def from_dataset(cls, dataset: Dataset) -> OxigraphStore:
        """Copy every named graph of an rdflib dataset into a new in-memory Oxigraph store."""
        out = cls()
        memo: dict[Node, Any] = {}

        def conv(t: Node) -> Any:
            hit = memo.get(t)
            if hit is None:
                hit = memo[t] = out._convert(t)
            return hit

        out.store.bulk_extend(
            out.ox.Quad(conv(s), conv(p), conv(o), conv(_name(g)))
            for s, p, o, g in dataset.quads((None, None, None, None))
            if isinstance(_name(g), URIRef))
        return out

    # -- terms ------------------------------------------------------------------------------
    def native(self, node: Node) -> Any:
        """The pyoxigraph term for an rdflib term (cached: constants are converted once)."""
        hit = self._cache.get(node)
        if hit is None:
            hit = self._convert(node)
            if len(self._cache) < 100_000:
                self._cache[node] = hit
        return hit

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

    def nt(self, term: Any) -> str:
        """N-Triples form of a pyoxigraph term."""
        return str(term)

    def rdflib_term(self, t: Any) -> Node:
        """The rdflib term for a pyoxigraph term."""
        ox = self.ox
        if isinstance(t, ox.NamedNode):
            return URIRef(t.value)
        if isinstance(t, ox.Literal):
            if t.language:
                return Literal(t.value, lang=t.language)
            dt = t.datatype.value
            return Literal(t.value, datatype=None if dt.endswith("#string") else URIRef(dt))
        return BNode(t.value)

    # -- what the engine calls --------------------------------------------------------------
    def _query(self, rule: Rule, bindings: Mapping[str, Node]) -> Any:
        subs = {self.ox.Variable(k): self.native(v) for k, v in bindings.items()}
        if rule.reads_any:  # a variable predicate or class could match records
            self.sync()
        return self.store.query(rule.select_text, use_default_graph_as_union=True,
                                substitutions=subs or None)

    def solutions(self, rule: Rule, bindings: Mapping[str, Node]
                  ) -> tuple[list[str], Iterator[Row]]:
        """Variable names and solutions (tuples of pyoxigraph terms, None if unbound),
        streamed: the query reads a snapshot, so writes meanwhile do not change them."""
        res = self._query(rule, bindings)
        return [v.value for v in res.variables], map(tuple, res)

    def select(self, rule: Rule, bindings: Mapping[str, Node]) -> list[dict[Variable, Node]]:
        """Solutions as dicts of rdflib terms (bound variables only)."""
        names, rows = self.solutions(rule, bindings)
        conv = self.rdflib_term
        return [{Variable(n): conv(v) for n, v in zip(names, row, strict=True) if v is not None}
                for row in rows]

    def contains(self, triple: Sequence[Any]) -> bool:
        """Whether the triple (pyoxigraph terms) is in any graph."""
        s, p, o = triple
        return next(self.store.quads_for_pattern(s, p, o, None), None) is not None

    def add(self, graph: URIRef, triples: Iterable[Sequence[Any]]) -> None:
        """Add triples of pyoxigraph terms to a named graph."""
        quad, g = self.ox.Quad, self.native(graph)
        self.store.extend([quad(s, p, o, g) for s, p, o in triples])

    def recorder(self) -> OxigraphRecorder:
        """A writer of derivation records into this store."""
        return OxigraphRecorder(self)

    def load_records(self, text: str) -> None:
        """Queue N-Triples for the derivations graph; a background thread loads them in order.

        Each chunk is one short write transaction, so the engine's own writes (inferred
        triples) wait at most one chunk (chunks of 25,000 lines made the 10^5-triple benchmark
        ~15 % slower than 2,500: the engine waited on the loader's transactions); at most
        :data:`QUEUE_CHUNKS` chunks wait, so memory stays bounded
        when records come faster than Oxigraph inserts them.
        """
        if self._loader is None:
            self._queue = queue.Queue(maxsize=QUEUE_CHUNKS)  # the engine waits when the loader lags
            self._loader = threading.Thread(target=self._load_loop, name="accelkb-records",
                                            args=(self.native(DERIVATIONS),), daemon=True)
            self._loader.start()
        self._queue.put(text)

    def _load_loop(self, graph: Any) -> None:
        fmt = self.ox.RdfFormat.N_TRIPLES
        while True:
            text = self._queue.get()
            try:
                if text is None:
                    return
                if self._error is None:
                    self.store.load(text, format=fmt, to_graph=graph, lenient=True)
            except BaseException as exc:  # re-raised by sync() in the caller's thread
                self._error = exc
            finally:
                self._queue.task_done()

    def sync(self) -> None:
        """Wait until records handed to :meth:`load_records` are in the store.

        Raises
        ------
        SyntaxError, OSError
            What the background load raised, if it failed.
        """
        if self._loader is not None:
            self._queue.put(None)
            self._queue.join()
            self._loader.join()
            self._loader = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    # -- reading back -----------------------------------------------------------------------
    def triples(self, graph: URIRef) -> list[tuple[Node, Node, Node]]:
        """Every triple of one named graph, as rdflib terms.

        Derivation records come back in the knowledge base's shape
        (:mod:`accelkb.rules.records`): ``d prov:used <<( s p o )>>`` as ``d prov:used st``
        and ``d prov:generated <<( s p o )>>`` as ``st prov:wasGeneratedBy d``, each ``st`` an
        ``rdf:Statement`` described once, and each ``ak:Derivation`` also a ``prov:Activity``.
        """
        self.sync()
        conv, triple_term = self.rdflib_term, self.ox.Triple
        generated, derivation = self.native(PROV.generated), self.native(AK.Derivation)
        used, rule = self.native(PROV.used), self.native(AK.rule)
        out: list[tuple[Node, Node, Node]] = []
        described: set[URIRef] = set()
        premises: dict[Any, list[Any]] = {}
        rules: dict[Any, Any] = {}
        for q in self.store.quads_for_pattern(None, None, None, self.native(graph)):
            s, o = conv(q.subject), q.object
            if isinstance(o, triple_term):
                st = URIRef(STMT_NS + _h(str(o.subject), str(o.predicate), str(o.object)))
                out.append((st, PROV.wasGeneratedBy, s) if q.predicate == generated
                           else (s, conv(q.predicate), st))
                if q.predicate == used:
                    premises.setdefault(s, []).append(o)
                if st not in described:
                    described.add(st)
                    out += [(st, RDF.type, RDF.Statement), (st, RDF.subject, conv(o.subject)),
                            (st, RDF.predicate, conv(o.predicate)),
                            (st, RDF.object, conv(o.object))]
            else:
                out.append((s, conv(q.predicate), conv(o)))
                if o == derivation:
                    out.append((s, RDF.type, PROV.Activity))
                elif q.predicate == rule:
                    rules[s] = conv(o)
        out += self._anchored_bindings(rules, premises)
        return out

    def _anchored_bindings(self, rules: dict[Any, Any], premises: dict[Any, list[Any]]
                           ) -> list[tuple[Node, Node, Node]]:
        """The bindings the Oxigraph recorder left out because a premise holds them
        (:func:`accelkb.rules.records.anchored_vars`), as the rdflib recorder writes them."""
        out: list[tuple[Node, Node, Node]] = []
        described: set[URIRef] = set()
        conv = self.rdflib_term
        for d, rule in rules.items():
            anchors = self.anchors.get(rule)
            if not anchors:
                continue
            by_predicate = {str(t.predicate): t for t in premises.get(d, ())}
            for name, (predicate, pos) in anchors.items():
                t = by_predicate.get(f"<{predicate}>")
                if t is None:
                    continue
                value = t.subject if pos == 0 else t.object
                b = URIRef(BINDING_NS + _h(name, str(value)))
                out.append((d, AK.binding, b))
                if b not in described:
                    described.add(b)
                    out += [(b, AK.bindingVariable, Literal(name)),
                            (b, AK.bindingValue, conv(value))]
        return out

    def query(self, sparql: str, **options: Any) -> Any:
        """Run a SPARQL query on the store (after pending records are in)."""
        self.sync()
        return self.store.query(sparql, **options)

    def __len__(self) -> int:
        self.sync()
        return len(self.store)


def _name(g: Any) -> Any:
    return getattr(g, "identifier", g)
