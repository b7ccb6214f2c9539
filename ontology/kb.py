"""The knowledge base: bundled knowledge plus the user's files, validated, queryable with SPARQL.

Named graphs (DESIGN.md §1): ``asserted`` holds the schema and the sourced facts; ``inferred``,
``derivations``, ``estimates`` and ``results`` are filled by later stages. SPARQL runs over their
union, so a query needs no GRAPH clause unless it asks where a fact came from.
"""

from __future__ import annotations

import importlib.resources
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.query import Result

from accelkb.errors import InputError, UnknownNameError
from accelkb.ontology import loader, validation_cache

GRAPH_NS = "https://w3id.org/accelkb/graph/"
ASSERTED = URIRef(GRAPH_NS + "asserted")
INFERRED = URIRef(GRAPH_NS + "inferred")
DERIVATIONS = URIRef(GRAPH_NS + "derivations")
ESTIMATES = URIRef(GRAPH_NS + "estimates")
RESULTS = URIRef(GRAPH_NS + "results")
GRAPHS = (ASSERTED, INFERRED, DERIVATIONS, ESTIMATES, RESULTS)

#: The kinds of things users name, and the class that defines each kind.
NAME_KINDS = {
    "chip": "Chip",
    "system": "System",
    "model": "ModelArchitecture",
    "workload": "Workload",
    "vendor": "Vendor",
    "optimization": "Optimization",
    "bottleneck": "Bottleneck",
}


def stored_query(name: str) -> str:
    """Text of a SPARQL query shipped in ``ontology/queries/<name>.rq`` (Python holds no query text)."""
    res = importlib.resources.files("accelkb.ontology").joinpath("queries", f"{name}.rq")
    return res.read_text(encoding="utf-8")


class KnowledgeBase:
    """Bundled accelerator knowledge plus user files, validated with SHACL and queryable with SPARQL.

    Parameters
    ----------
    files
        Extra Turtle/TriG files (a user's chip or model). They are validated together with the
        bundled knowledge; if anything is wrong, one :class:`~accelkb.errors.ValidationError`
        lists every violation and no knowledge base is created.
    bundled_data
        Load the knowledge shipped with accelkb (default True). The schema is always loaded.
    validate
        Run SHACL validation (default True). Turning it off is for benchmarks only.

    Examples
    --------
    >>> kb = KnowledgeBase()
    >>> kb.resolve("chip", "gc200")
    rdflib.term.URIRef('https://w3id.org/accelkb/data/gc200')
    >>> bool(kb.query("ASK { ?c a ak:Chip }"))
    True
    """

    def __init__(
        self, files: Iterable[str | Path] = (), *, bundled_data: bool = True,
        validate: bool = True
    ) -> None:
        started = time.perf_counter()
        self._validate = validate
        self._shapes = loader.build_graph(loader.bundled_shapes())
        self._sources: list[tuple[str, bytes]] = loader.bundled_schema()
        if bundled_data:
            self._sources += loader.bundled_data()
        user = loader.read_user_files(files)
        asserted = self._checked_graph(self._sources + user, [name for name, _ in user],
                                       len(user))
        self._sources += user
        self.dataset = Dataset(default_union=True)
        for prefix, ns in asserted.namespaces():
            self.dataset.bind(prefix, ns, replace=True)
        self._install(asserted)
        self.load_seconds = time.perf_counter() - started

    # -- loading --------------------------------------------------------------------------
    def _checked_graph(self, sources: list[tuple[str, bytes]], user_names: list[str],
                       added: int = 0) -> Graph:
        """The graph of ``sources``, validated; the last ``added`` of them are new. When the
        others are known valid (the validation cache), the core shapes check only the nodes
        the new files touch (:func:`loader.affected_nodes`), and every SHACL-SPARQL
        constraint still runs over the whole graph."""
        graph = loader.build_graph(sources)
        if self._validate:
            shapes = loader.bundled_shapes()
            key = validation_cache.key(sources, shapes)
            if not validation_cache.known_valid(key):
                base = sources[:len(sources) - added]
                focus = None
                if added and base:
                    base_key = validation_cache.key(base, shapes)
                    if not validation_cache.known_valid(base_key):  # once per bundled version
                        loader.validate_or_raise(loader.build_graph(base), self._shapes, [])
                        validation_cache.remember_valid(base_key)
                    focus = loader.affected_nodes(graph, loader.build_graph(sources[len(base):]))
                loader.validate_or_raise(graph, self._shapes, user_names, focus)
                validation_cache.remember_valid(key)
        return graph

    def _install(self, asserted: Graph) -> None:
        target = self.dataset.graph(ASSERTED)
        target.remove((None, None, None))
        for triple in asserted:
            target.add(triple)
        for g in GRAPHS[1:]:
            self.dataset.graph(g)

    def load(self, *files: str | Path) -> None:
        """Add files; validated with everything loaded so far. All or nothing."""
        user = loader.read_user_files(files)
        asserted = self._checked_graph(self._sources + user, [name for name, _ in user],
                                       len(user))
        self._install(asserted)
        self._sources += user

    @property
    def asserted(self) -> Graph:
        """The graph of asserted knowledge (schema and sourced facts)."""
        return self.dataset.graph(ASSERTED)

    def graph(self, name: URIRef) -> Graph:
        """One of the named graphs (:data:`ASSERTED`, :data:`INFERRED`, ...)."""
        if name not in GRAPHS:
            raise InputError(f"expected one of the graphs {', '.join(GRAPHS)}, got {name}")
        return self.dataset.graph(name)

    # -- querying -------------------------------------------------------------------------
    def query(self, sparql: str, bindings: Mapping[str, Any] | None = None) -> Result:
        """Run a SPARQL SELECT, ASK, CONSTRUCT or DESCRIBE over all graphs.

        Prefixes ``ak:``, ``kb:``, ``src:``, ``rdf:``, ``rdfs:``, ``xsd:``, ``skos:``,
        ``dcterms:``, ``prov:`` are predeclared. Values go in through ``bindings`` (never by
        formatting them into the text). A malformed query is an :class:`InputError`.
        """
        init = {k: (v if isinstance(v, URIRef | Literal) else Literal(v)) for k, v in
                (bindings or {}).items()}
        try:
            return self.dataset.query(_prepared(sparql), initBindings=init)
        except Exception as exc:  # pyparsing raises ParseException; rdflib others
            if type(exc).__name__ in ("ParseException", "ParseSyntaxException"):
                raise InputError(f"SPARQL syntax error: {exc}") from None
            if isinstance(exc, InputError):
                raise
            raise InputError(f"SPARQL query failed: {type(exc).__name__}: {exc}") from None

    # -- names ----------------------------------------------------------------------------
    def names(self, kind: str) -> dict[str, URIRef]:
        """Short name -> IRI for one kind of thing ('chip', 'system', 'model', 'workload', ...)."""
        if kind not in NAME_KINDS:
            raise InputError(f"expected a kind among {', '.join(NAME_KINDS)}, got '{kind}'")
        cls = URIRef(loader.SCHEMA_NS + NAME_KINDS[kind])
        rows = self.query(stored_query("names_of_class"), {"cls": cls})
        return {str(r[0]): URIRef(str(r[1])) for r in rows}  # type: ignore[index]

    def resolve(self, kind: str, name: str | URIRef) -> URIRef:
        """The IRI of a short name (or a full IRI), or UnknownNameError with the closest names."""
        known = self.names(kind)
        if isinstance(name, URIRef) or str(name).startswith(("http://", "https://", "urn:")):
            iri = URIRef(str(name))
            if iri in known.values():
                return iri
        elif name in known:
            return known[name]
        raise UnknownNameError(kind, str(name), known)

    def counts(self) -> dict[str, int]:
        """How much is described: chips, systems, models, ..., sources, triples."""
        out = {kind: len(self.names(kind)) for kind in NAME_KINDS}
        row: Any = next(iter(self.query(stored_query("counts"))))
        out.update({k: int(row[k]) for k in ("sources", "numeric_facts", "conflicts",
                                                 "benchmark_results")})
        out["triples"] = len(self.asserted)
        return out


_PREFIXES = {
    "ak": URIRef(loader.SCHEMA_NS),
    "kb": URIRef(loader.DATA_NS),
    "src": URIRef(loader.SOURCE_NS),
    "rdf": URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    "rdfs": URIRef("http://www.w3.org/2000/01/rdf-schema#"),
    "xsd": URIRef("http://www.w3.org/2001/XMLSchema#"),
    "owl": URIRef("http://www.w3.org/2002/07/owl#"),
    "skos": URIRef("http://www.w3.org/2004/02/skos/core#"),
    "dcterms": URIRef("http://purl.org/dc/terms/"),
    "prov": URIRef("http://www.w3.org/ns/prov#"),
    "qudt": URIRef("http://qudt.org/schema/qudt/"),
    "unit": URIRef("http://qudt.org/vocab/unit/"),
}


def _prepared(sparql: str) -> Any:
    """The parsed query, with the template of a ``CONSTRUCT WHERE { P }`` made explicit.

    rdflib finds the short form's template only directly under the projection, so
    ``CONSTRUCT WHERE { ?s ?p ?o } LIMIT 2`` (a slice above it) failed with a TypeError. The
    short form's pattern is a single basic graph pattern (SPARQL 1.1 §16.2.4): it is found
    below the solution modifiers and set as the template.
    """
    from rdflib.plugins.sparql import prepareQuery

    prepared = prepareQuery(sparql, initNs=_PREFIXES)
    algebra = prepared.algebra
    if algebra.name == "ConstructQuery" and not algebra.template:
        part = algebra.p
        while part is not None and getattr(part, "name", None) != "BGP":
            part = part.get("p")
        if part is not None:
            algebra["template"] = part.triples
    return prepared
