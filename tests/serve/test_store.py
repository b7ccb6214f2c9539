"""External store: a real Oxigraph server loaded over SPARQL 1.1 Update, answers compared.

The server is started read-write on 127.0.0.1 by a fixture and stopped by it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from rdflib import Graph, Literal, URIRef
from server_common import require_oxigraph, rows, same_answer

from accelkb.errors import InputError
from accelkb.ontology.kb import ASSERTED, GRAPHS, INFERRED, KnowledgeBase, stored_query
from accelkb.serve.backend import OxigraphProcess, free_loopback_port
from accelkb.serve.store import RemoteStore, parse_store_url, query_store

EXAMPLES = sorted((REPO / "examples" / "queries").glob("*.rq"))
AK = "https://w3id.org/accelkb/schema#"
FOREIGN = URIRef("urn:x-test:someone-elses-graph")


@pytest.fixture(scope="module")
def server() -> Iterator[OxigraphProcess]:
    require_oxigraph()
    # No union default graph: the store must scope queries to accelkb's graphs by itself.
    with OxigraphProcess(None, read_only=False, union_default_graph=False) as ox:
        yield ox


@pytest.fixture(scope="module")
def store(server: OxigraphProcess, kb: KnowledgeBase) -> RemoteStore:
    remote = RemoteStore(f"sparql+http://127.0.0.1:{server.port}/query")
    # Someone else's data in the same server must not leak into accelkb's answers.
    foreign = Graph()
    foreign.add((URIRef("urn:x-test:fake-chip"), URIRef("http://www.w3.org/1999/02/22-rdf-syntax-"
                 "ns#type"), URIRef(AK + "Chip")))
    remote.write_graphs({FOREIGN: foreign})
    written = remote.write(kb)
    assert written == sum(len(kb.dataset.graph(g)) for g in GRAPHS)
    return remote


def test_store_holds_every_triple(store: RemoteStore, kb: KnowledgeBase) -> None:
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert same_answer(kb.query(count), store.query(count))
    assert store.triple_count() >= len(kb.asserted) > 1000


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_queries_answer_as_embedded(store: RemoteStore, kb: KnowledgeBase,
                                            path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    embedded = kb.query(text)
    remote = store.query(text)
    assert same_answer(embedded, remote)


def test_example_queries_discovered() -> None:
    assert len(EXAMPLES) >= 6


def test_stored_queries_with_bindings(store: RemoteStore, kb: KnowledgeBase) -> None:
    for kind in ("chip", "system", "model", "workload"):
        cls = URIRef(AK + {"chip": "Chip", "system": "System", "model": "ModelArchitecture",
                           "workload": "Workload"}[kind])
        embedded = kb.query(stored_query("names_of_class"), {"cls": cls})
        remote = store.query(stored_query("names_of_class"), {"cls": cls})
        assert len(rows(remote)) == len(kb.names(kind)) > 0
        assert same_answer(embedded, remote)


def test_counts_query_is_the_same_on_both_engines(store: RemoteStore, kb: KnowledgeBase) -> None:
    """counts.rq is standard SPARQL 1.1 (it once used STR of a blank node, which rdflib allows and
    Oxigraph, rightly, does not): every count, numeric facts on blank nodes included, agrees."""
    embedded: Any = next(iter(kb.query(stored_query("counts"))))
    remote: Any = next(iter(store.query(stored_query("counts"))))
    for name in ("sources", "numeric_facts", "conflicts", "benchmark_results"):
        assert int(embedded[name]) == int(remote[name]) > 0, name


def test_graph_clause_sees_accelkb_graphs_only(store: RemoteStore) -> None:
    names = store.query("SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }")
    graphs = {str(r[0]) for r in names}  # type: ignore[index]
    # Other tests share the session knowledge base and may have filled the inferred and results
    # graphs; what matters is that no graph outside accelkb's own is visible.
    assert str(ASSERTED) in graphs and graphs <= {str(g) for g in GRAPHS}
    assert not store.query("ASK { <urn:x-test:fake-chip> ?p ?o }").askAnswer


def test_rewrite_replaces_graphs(server: OxigraphProcess, kb: KnowledgeBase) -> None:
    # A second, separate store URL on the same server: writing twice leaves one copy.
    remote = RemoteStore(f"sparql+http://127.0.0.1:{server.port}/query")
    extra = Graph()
    extra.add((URIRef("https://w3id.org/accelkb/data/gc200"), URIRef(AK + "testOnlyInferred"),
               Literal("yes")))
    remote.write_graphs({INFERRED: extra})
    remote.write_graphs({INFERRED: extra})
    found = remote.query(f"SELECT ?o {{ GRAPH <{INFERRED}> {{ ?s <{AK}testOnlyInferred> ?o }} }}")
    assert [str(r[0]) for r in found] == ["yes"]  # type: ignore[index]
    remote.write_graphs({INFERRED: Graph()})
    assert not remote.query(f"ASK {{ ?s <{AK}testOnlyInferred> ?o }}").askAnswer


def test_query_store_function_for_the_cli(store: RemoteStore, kb: KnowledgeBase) -> None:
    text = "SELECT ?c WHERE { ?c a ak:Chip } ORDER BY ?c"
    result = query_store(store.url, text, write=False)
    assert same_answer(kb.query(text), result)


def test_remote_syntax_error_is_input_error(store: RemoteStore) -> None:
    with pytest.raises(InputError, match="answered 400"):
        store.query("SELEC * { ?s ?p ?o }")


def test_unreachable_store_is_input_error() -> None:
    port = free_loopback_port()  # nothing listens there
    with pytest.raises(InputError, match="cannot reach the SPARQL store"):
        RemoteStore(f"sparql+http://127.0.0.1:{port}/query", timeout_s=5).query("ASK {}")


@pytest.mark.parametrize("url", ["http://127.0.0.1:7878/query", "sparql+ftp://h/q",
                                 "sparql+http://", "127.0.0.1:7878"])
def test_bad_store_url(url: str) -> None:
    with pytest.raises(InputError, match="expected a store URL like sparql"):
        parse_store_url(url)


def test_store_url_layouts() -> None:
    assert parse_store_url("sparql+http://127.0.0.1:3030/ds/query") == (
        "http://127.0.0.1:3030/ds/query", "http://127.0.0.1:3030/ds/update")
    assert parse_store_url("sparql+http://127.0.0.1:8890/sparql") == (
        "http://127.0.0.1:8890/sparql", "http://127.0.0.1:8890/sparql")
