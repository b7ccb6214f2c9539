"""``accelkb serve``: real clients (SPARQLWrapper, rdflib's SPARQLStore, raw HTTP) over a socket.

Every endpoint here listens on 127.0.0.1 on a free port and is stopped by its fixture.
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

import pytest
from conftest import REPO
from rdflib import Graph, Literal, URIRef
from rdflib.compare import isomorphic
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from server_common import await_url, ensure_stopped, require_oxigraph, rows, same_answer

from accelkb.cli import main
from accelkb.ontology.kb import DERIVATIONS, INFERRED, KnowledgeBase
from accelkb.serve.policy import (
    LOAD_REFUSED,
    SERVICE_REFUSED,
    UPDATE_REFUSED,
    Refusal,
    check_query,
    update_refusal,
)
from accelkb.serve.server import ServeLimits, SparqlEndpoint, is_loopback
from accelkb.serve.store import kb_nquads

EXAMPLES = REPO / "examples" / "queries"
AK = "https://w3id.org/accelkb/schema#"
CHIPS = f"SELECT ?c WHERE {{ ?c a <{AK}Chip> }} ORDER BY ?c"
# One inferred fact and its derivation, as the rules engine would write them.
EXTRA = (f'<https://w3id.org/accelkb/data/gc200> <{AK}testOnlyInferred> "yes" <{INFERRED}> .\n'
         f'<https://w3id.org/accelkb/data/derivation-test> <http://www.w3.org/ns/prov#used> '
         f'<https://w3id.org/accelkb/data/gc200> <{DERIVATIONS}> .\n').encode()


@pytest.fixture(scope="module")
def endpoint(kb: KnowledgeBase) -> Iterator[SparqlEndpoint]:
    require_oxigraph()
    with SparqlEndpoint(kb_nquads(kb) + EXTRA, port=0) as ep:
        yield ep


@pytest.fixture(scope="module")
def tight(kb: KnowledgeBase) -> Iterator[SparqlEndpoint]:
    """A 1 s time limit, a 4 KB result limit, CORS on and a read-only on-disk engine."""
    require_oxigraph()
    limits = ServeLimits(timeout_s=1, max_result_bytes=4096, cors=True)
    with SparqlEndpoint(kb_nquads(kb), port=0, limits=limits) as ep:
        yield ep


def _http(ep: SparqlEndpoint, method: str, path: str, body: bytes | str | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


# -- real clients --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["chips_with_200mb_sram", "conflicting_claims",
                                  "systems_memory_per_tier"])
def test_sparqlwrapper_select_matches_embedded(endpoint: SparqlEndpoint, kb: KnowledgeBase,
                                               name: str) -> None:
    sparqlwrapper = pytest.importorskip("SPARQLWrapper", reason="SPARQLWrapper is in the test "
                                        "extra (pip install SPARQLWrapper)")
    text = (EXAMPLES / f"{name}.rq").read_text(encoding="utf-8")
    client = sparqlwrapper.SPARQLWrapper(endpoint.url)
    client.setQuery(_with_prefixes(text))
    client.setReturnFormat(sparqlwrapper.JSON)
    data = client.query().convert()
    from rdflib.query import Result

    served = Result.parse(io.StringIO(json.dumps(data)), format="json")
    embedded = kb.query(text)
    assert len(embedded) > 0
    assert same_answer(embedded, served)


def test_sparqlwrapper_construct_and_post(endpoint: SparqlEndpoint, kb: KnowledgeBase) -> None:
    sparqlwrapper = pytest.importorskip("SPARQLWrapper", reason="SPARQLWrapper is in the test "
                                        "extra (pip install SPARQLWrapper)")
    text = (EXAMPLES / "describe_gc200.rq").read_text(encoding="utf-8")
    client = sparqlwrapper.SPARQLWrapper(endpoint.url)
    client.setMethod(sparqlwrapper.POST)
    client.setQuery(_with_prefixes(text))
    client.setReturnFormat(sparqlwrapper.TURTLE)
    graph = Graph().parse(data=client.query().convert(), format="turtle")
    assert isomorphic(graph, _embedded_plus_extra(kb, text))


def test_rdflib_sparqlstore_matches_embedded(endpoint: SparqlEndpoint, kb: KnowledgeBase) -> None:
    remote = Graph(store=SPARQLStore(endpoint.url, returnFormat="json"))
    served = remote.query(CHIPS)
    assert same_answer(kb.query(CHIPS), served)
    assert len(rows(served)) >= 6
    assert bool(remote.query(f"ASK {{ <https://w3id.org/accelkb/data/gc200> a <{AK}Chip> }}"))


def test_inferred_and_derivation_graphs_are_served(endpoint: SparqlEndpoint) -> None:
    remote = Graph(store=SPARQLStore(endpoint.url, returnFormat="json"))
    found = list(remote.query(f"SELECT ?g ?o WHERE {{ GRAPH ?g {{ ?s <{AK}testOnlyInferred> ?o "
                              "} }"))
    assert [(str(g), str(o)) for g, o in found] == [(str(INFERRED), "yes")]  # type: ignore[misc]
    used = list(remote.query("SELECT ?d WHERE { ?d <http://www.w3.org/ns/prov#used> "
                             "<https://w3id.org/accelkb/data/gc200> }"))
    derivation = "https://w3id.org/accelkb/data/derivation-test"
    assert [str(r[0]) for r in used] == [derivation]  # type: ignore[index]
    names = remote.query("SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }")
    graphs = {str(r[0]) for r in names}  # type: ignore[index]
    assert {str(INFERRED), str(DERIVATIONS)} <= graphs


# -- raw HTTP: protocol and content negotiation ----------------------------------------------
@pytest.mark.parametrize(("accept", "expected"), [
    ("application/sparql-results+json", "application/sparql-results+json"),
    ("application/sparql-results+xml", "application/sparql-results+xml"),
    ("text/csv", "text/csv"),
    ("text/tab-separated-values", "text/tab-separated-values"),
])
def test_select_content_negotiation(endpoint: SparqlEndpoint, kb: KnowledgeBase, accept: str,
                                    expected: str) -> None:
    status, ctype, body = _http(endpoint, "GET", "/query?query=" + quote(CHIPS), None,
                                {"Accept": accept})
    assert status == 200 and ctype.split(";")[0] == expected
    want = [str(r[0]) for r in kb.query(CHIPS)]
    text = body.decode("utf-8")
    if expected.endswith("json"):
        got = [b["c"]["value"] for b in json.loads(text)["results"]["bindings"]]
    elif expected.endswith("xml"):
        ns = "{http://www.w3.org/2005/sparql-results#}"
        got = [e.text or "" for e in ET.fromstring(text).iter(f"{ns}uri")]
    elif expected == "text/csv":
        table = list(csv.reader(io.StringIO(text)))
        assert table[0] == ["c"]
        got = [r[0] for r in table[1:]]
    else:
        lines = text.splitlines()
        assert lines[0] == "?c"
        got = [line.strip("<>") for line in lines[1:]]
    assert got == want


@pytest.mark.parametrize(("accept", "fmt"), [("text/turtle", "turtle"),
                                             ("application/n-triples", "nt")])
def test_construct_content_negotiation(endpoint: SparqlEndpoint, kb: KnowledgeBase, accept: str,
                                       fmt: str) -> None:
    text = (EXAMPLES / "describe_gc200.rq").read_text(encoding="utf-8")
    status, ctype, body = _http(endpoint, "POST", "/query", _with_prefixes(text).encode(),
                                {"Content-Type": "application/sparql-query", "Accept": accept})
    assert status == 200 and ctype.split(";")[0] == accept
    graph = Graph().parse(data=body.decode("utf-8"), format=fmt)
    assert isomorphic(graph, _embedded_plus_extra(kb, text))


def test_get_form_post_and_direct_post_agree(endpoint: SparqlEndpoint) -> None:
    accept = {"Accept": "application/sparql-results+json"}
    got = [
        _http(endpoint, "GET", "/query?" + urlencode({"query": CHIPS}), None, accept),
        _http(endpoint, "POST", "/sparql", urlencode({"query": CHIPS}),
              {**accept, "Content-Type": "application/x-www-form-urlencoded"}),
        _http(endpoint, "POST", "/query", CHIPS,
              {**accept, "Content-Type": "application/sparql-query"}),
    ]
    assert all(status == 200 for status, _, _ in got)
    assert got[0][2] == got[1][2] == got[2][2]


def test_named_graph_parameters_pass_through(endpoint: SparqlEndpoint) -> None:
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s <{AK}testOnlyInferred> ?o }}"
    counts = []
    for graph in (INFERRED, DERIVATIONS):
        path = "/query?" + urlencode({"query": query, "default-graph-uri": str(graph)})
        status, _, body = _http(endpoint, "GET", path, None,
                                {"Accept": "application/sparql-results+json"})
        assert status == 200
        counts.append(json.loads(body)["results"]["bindings"][0]["n"]["value"])
    assert counts == ["1", "0"]


# -- refusals --------------------------------------------------------------------------------
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
DIRECT = {"Content-Type": "application/sparql-query"}
INSERT = "INSERT DATA { <urn:a> <urn:b> <urn:c> }"


@pytest.mark.parametrize(("method", "path", "body", "headers", "status", "message"), [
    ("POST", "/query", INSERT, {"Content-Type": "application/sparql-update"}, 403,
     UPDATE_REFUSED),
    ("POST", "/query", urlencode({"update": INSERT}), FORM, 403, UPDATE_REFUSED),
    ("POST", "/update", urlencode({"update": INSERT}), FORM, 403, UPDATE_REFUSED),
    ("GET", "/query?" + urlencode({"query": INSERT}), None, {}, 403, UPDATE_REFUSED),
    ("POST", "/query", "LOAD <http://127.0.0.1:1/data.ttl>", DIRECT, 403, LOAD_REFUSED),
    ("POST", "/query", urlencode({"query": "CLEAR ALL"}), FORM, 403, UPDATE_REFUSED),
    ("POST", "/query", "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
     DIRECT, 403, SERVICE_REFUSED),
    ("GET", "/query?" + urlencode({"query": "SELECT * { SERVICE SILENT <http://127.0.0.1:1/> "
                                            "{ ?s ?p ?o } }"}), None, {}, 403, SERVICE_REFUSED),
    ("PUT", "/query", "<urn:a> <urn:b> <urn:c> .", {"Content-Type": "application/n-triples"},
     405, UPDATE_REFUSED),
    ("GET", "/store", None, {}, 404, "the SPARQL endpoint is /query"),
    ("POST", "/query", "query", {"Content-Type": "text/plain"}, 415,
     "expected Content-Type application/sparql-query"),
    ("GET", "/query", None, {}, 400, "expected exactly one 'query' parameter, got 0"),
])
def test_refusals(endpoint: SparqlEndpoint, method: str, path: str, body: str | None,
                  headers: dict[str, str], status: int, message: str) -> None:
    got_status, ctype, got_body = _http(endpoint, method, path, body, headers)
    assert (got_status, ctype.split(";")[0]) == (status, "text/plain")
    assert message in got_body.decode("utf-8")


def test_refused_update_changed_nothing(endpoint: SparqlEndpoint) -> None:
    _http(endpoint, "POST", "/query", INSERT, {"Content-Type": "application/sparql-update"})
    ask = "/query?" + urlencode({"query": "ASK { <urn:a> ?p ?o }"})
    status, _, body = _http(endpoint, "GET", ask, None,
                            {"Accept": "application/sparql-results+json"})
    assert status == 200 and json.loads(body)["boolean"] is False


def test_syntax_error_is_400_with_the_engine_message(endpoint: SparqlEndpoint) -> None:
    status, _, body = _http(endpoint, "POST", "/query", "SELEC * { ?s ?p ?o }", DIRECT)
    assert status == 400 and b"error" in body.lower()


def test_time_limit_replaces_the_runaway_engine(tight: SparqlEndpoint) -> None:
    # Oxigraph's own time limit does not stop this one: the endpoint must replace the engine.
    runaway = "SELECT ?o WHERE { ?a ?b ?c . ?s ?p ?o } ORDER BY ?o LIMIT 1"
    before, restarts = tight.engine.pid, tight.engine.restarts
    assert before is not None
    status, _, body = _http(tight, "POST", "/query", runaway, DIRECT)
    assert status == 503
    assert "time limit of 1 s" in body.decode("utf-8")
    deadline = time.monotonic() + 90
    while tight.engine.restarts == restarts and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tight.engine.restarts == restarts + 1 and tight.engine.pid != before
    while Path(f"/proc/{before}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{before}").exists()  # the runaway query's process is gone
    ok, _, _ = _http(tight, "POST", "/query", "ASK { ?s ?p ?o }", DIRECT)
    assert ok == 200  # and the endpoint answers from the fresh engine


def test_result_size_limit(tight: SparqlEndpoint) -> None:
    status, _, body = _http(tight, "POST", "/query", "SELECT * { ?s ?p ?o }", DIRECT)
    assert status == 413
    assert "larger than the limit of 4096 bytes" in body.decode("utf-8")
    small, _, _ = _http(tight, "POST", "/query", CHIPS + " LIMIT 2", DIRECT)
    assert small == 200


def test_cors_only_when_asked(endpoint: SparqlEndpoint, tight: SparqlEndpoint) -> None:
    def allow_origin(ep: SparqlEndpoint, method: str) -> str | None:
        conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=30)
        conn.request(method, "/query?" + urlencode({"query": "ASK {}"}))
        response = conn.getresponse()
        response.read()
        conn.close()
        return response.getheader("Access-Control-Allow-Origin")

    assert allow_origin(tight, "GET") == allow_origin(tight, "OPTIONS") == "*"
    assert allow_origin(endpoint, "GET") is None


def test_engine_read_only_refuses_writes_on_its_own_port(tight: SparqlEndpoint) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", tight.backend_port, timeout=30)
    conn.request("POST", "/update", body=urlencode({"update": INSERT}), headers=FORM)
    status = conn.getresponse().status
    conn.close()
    assert status == 403


def test_request_size_limit(tight: SparqlEndpoint) -> None:
    huge = "SELECT * { ?s ?p ?o } # " + "x" * (1024 * 1024 + 1)
    status, _, body = _http(tight, "POST", "/query", huge, DIRECT)
    assert status == 413 and b"over the limit" in body


# -- policy (no server) -----------------------------------------------------------------------
def test_policy_allows_the_word_service_outside_a_service_pattern() -> None:
    check_query("SELECT * { ?s <http://example.org/service> 'SERVICE' }  # service")
    with pytest.raises(Refusal) as info:
        check_query("PREFIX e: <http://e/> SELECT * { ?s ?p ?o . sErViCe e:x { ?a ?b ?c } }")
    assert info.value.status == 403
    with pytest.raises(Refusal, match="federated queries are refused"):  # no parse needed
        check_query("SELECT * { SERVICE <http://e/> { ?s ?p ")
    assert update_refusal("DELETE WHERE { ?s ?p ?o }") == UPDATE_REFUSED
    assert update_refusal("SELECT * { ?s ?p ?o }") is None


# -- loopback by default and the command line ---------------------------------------------------
def test_loopback_by_default(endpoint: SparqlEndpoint) -> None:
    assert urlsplit(endpoint.url).hostname == "127.0.0.1"
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and not is_loopback("0.0.0.0")
    from accelkb.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 7878)


@pytest.mark.parametrize("argv", [["serve", "--timeout", "0"],
                                  ["serve", "--estimate", "llama2-70b-decode"],
                                  ["serve", "--max-result-bytes", "-1"],
                                  ["serve", "--port", "70000"],
                                  ["serve", "--timeout", "nan"], ["serve", "--timeout", "inf"],
                                  ["serve", "--max-engine-memory", "1000"],
                                  ["serve", "--max-request-seconds", "0"]])
def test_cli_bad_limits_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "expected --" in capsys.readouterr().err


def test_cli_serve_end_to_end(kb: KnowledgeBase, tmp_path: Path) -> None:
    require_oxigraph()
    command = [sys.executable, "-m", "accelkb.cli", "serve", "--port", "0", "--timeout", "20",
               "--estimate", "llama2-70b-decode@groq-576"]
    # Run outside the repository, so `-m accelkb.cli` imports the installed package (the source
    # tree alone lacks the accelkb.perf/... mapping of a non-editable install).
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=dict(os.environ), text=True, cwd=tmp_path)
    try:
        url = await_url(proc, deadline=time.monotonic() + 120)
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1"
        def csv_rows(query: str) -> list[str]:
            conn = http.client.HTTPConnection("127.0.0.1", parts.port or 0, timeout=30)
            conn.request("GET", "/query?" + urlencode({"query": query}),
                         headers={"Accept": "text/csv"})
            body = conn.getresponse().read().decode("utf-8")
            conn.close()
            return body.splitlines()[1:]

        assert csv_rows(CHIPS) == [str(r[0]) for r in kb.query(CHIPS)]
        # The rules ran on the pair: findings in the inferred graph, each with a derivation.
        findings = csv_rows(f"SELECT DISTINCT ?f {{ GRAPH <{INFERRED}> {{ ?f a <{AK}"
                            "BottleneckFinding> } }")
        assert len(findings) >= 1
        derivations = csv_rows(f"SELECT (COUNT(*) AS ?n) {{ GRAPH <{DERIVATIONS}> {{ ?d a <{AK}"
                               "Derivation> } }")
        assert int(derivations[0]) >= len(findings)
    finally:
        proc.terminate()
        try:
            assert proc.wait(timeout=20) == 0  # SIGTERM stops it cleanly, engine included
        finally:
            ensure_stopped(proc)


def _embedded_plus_extra(kb: KnowledgeBase, construct: str) -> Graph:
    """The embedded CONSTRUCT answer plus the extra inferred fact about gc200 (in EXTRA)."""
    embedded = kb.query(construct).graph
    assert embedded is not None and len(embedded) > 0
    graph = Graph()
    for triple in embedded:
        graph.add(triple)
    graph.add((URIRef("https://w3id.org/accelkb/data/gc200"), URIRef(AK + "testOnlyInferred"),
               Literal("yes")))
    return graph


def _with_prefixes(text: str) -> str:
    """The example queries use the prefixes kb.query predeclares; a plain client must declare."""
    from accelkb.ontology.kb import _PREFIXES

    return "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in _PREFIXES.items()) + text

