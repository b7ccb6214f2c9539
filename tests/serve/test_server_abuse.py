"""``accelkb serve`` against a careless or hostile client: the three holes of the probe, closed.

1. SERVICE smuggled past the guard by a parser differential (a comment ended by ``\\r``) and the
   engine's private address leaked through ``BASE``;
2. a query that kills the engine, after which every query got 502 for good;
3. a replacement engine that outlived ``kill -9`` of the server, writable on its port.

Everything listens on 127.0.0.1 only; every loop is bounded in time.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from conftest import REPO
from server_common import await_url, ensure_stopped, require_oxigraph

from accelkb.ontology.kb import KnowledgeBase
from accelkb.serve import policy
from accelkb.serve.backend import sweep_stale_directories
from accelkb.serve.lexer import scan
from accelkb.serve.policy import MAX_NESTING, SERVICE_REFUSED, Refusal, check_query
from accelkb.serve.server import ServeLimits, SparqlEndpoint
from accelkb.serve.store import kb_nquads

DIRECT = {"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"}
CHEAP = "ASK { ?s a ?type }"
DATA = b"".join(f"<urn:s{i}> <urn:p> <urn:o{i}> .\n".encode() for i in range(50))


# -- 1. one reading of the query: the lexical scan decides and its text is forwarded ----------
@pytest.mark.parametrize(("query", "status"), [
    # comments: rdflib ends them at \n only, Oxigraph at \r too
    ("SELECT * WHERE { #\rSERVICE <http://127.0.0.1:1/x> { ?s ?p ?o } \n}", 403),
    ("SELECT * WHERE { # \r\n SERVICE <http://127.0.0.1:1/x> { ?s ?p ?o } }", 403),
    # codepoint escapes: decoded before parsing by some engines (SPARQL 1.1 §19.2)
    ("SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:1/x> { ?s ?p ?o } }", 400),
    ('SELECT * WHERE { BIND("\\u0022 AS ?x) SERVICE <http://127.0.0.1:1/x> {?s ?p ?o} } #")}', 400),
    ("SELECT * WHERE { ?s <http://e/\\u003E> ?o }", 400),
    # a '#' inside a string is no comment, so what follows is code
    ('SELECT * WHERE { BIND("# no comment" AS ?x) SERVICE <http://e/> { ?s ?p ?o } }', 403),
    ("SELECT * WHERE { BIND('''it's # still a string''' AS ?x) SERVICE <http://e/> {} }", 403),
    # words split at dots and colons, any case
    ("PREFIX e: <http://e/> SELECT * WHERE { e:a.SERVICE <http://e/> { ?s ?p ?o } }", 403),
    ("SELECT * WHERE { sErViCe SILENT <http://e/> { ?s ?p ?o } }", 403),
    # a relative "IRI" that an engine could read as two comparisons
    ("SELECT * WHERE { ?s ?p ?o FILTER(?s<?p&&SERVICE>?o) }", 403),
    # unclosed strings and raw line breaks in short strings
    ('SELECT * WHERE { ?s ?p "open }', 400),
    ('SELECT * WHERE { ?s ?p "two\nlines" }', 400),
    # updates, whatever the prologue
    ("PREFIX e: <http://e/> BASE <http://b/> INSERT DATA { <a> <b> <c> }", 403),
    ("# comment\nLOAD <http://127.0.0.1:1/data.ttl>", 403),
])
def test_parser_differentials_are_refused(query: str, status: int) -> None:
    with pytest.raises(Refusal) as info:
        check_query(query)
    assert info.value.status == status, info.value.message


@pytest.mark.parametrize(("query", "forwarded"), [
    ("SELECT * { ?s <http://example.org/service> 'SERVICE' }  # service\nLIMIT 1",
     "SELECT * { ?s <http://example.org/service> 'SERVICE' }  \nLIMIT 1"),
    ('SELECT ?service WHERE { ?service ?p "a \\"SERVICE\\" in quotes" }', None),
    ("SELECT * WHERE { ?s ?p ?o FILTER(?o != <urn:x> && !(?s = ?p)) } LIMIT 3", None),
    ("SELECT * WHERE { ?s ?p '''a\nlong 'string' with ''quotes'' and # no comment''' }", None),
    ('SELECT * WHERE { ?s ?p "caf\\u00E9" }', None),
])
def test_ordinary_queries_pass_and_only_comments_are_removed(query: str,
                                                             forwarded: str | None) -> None:
    assert check_query(query) == (forwarded or query)


def test_the_example_queries_pass_unchanged_but_for_comments() -> None:
    for path in sorted((REPO / "examples" / "queries").glob("*.rq")):
        text = path.read_text(encoding="utf-8")
        forwarded = check_query(text)
        assert "#" not in "".join(line.split("<")[0] for line in forwarded.splitlines()
                                  if '"' not in line), path.name
        assert scan(forwarded).keywords == scan(text).keywords, path.name


def test_docstring_examples_run() -> None:
    import doctest

    from accelkb.serve import lexer

    for module in (lexer, policy):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


@pytest.mark.parametrize(("make", "deepest_ok"), [
    (lambda n: "ASK { FILTER(" + "!" * n + "true) }", MAX_NESTING - 2),
    (lambda n: "ASK " + "{ " * n + "?s ?p ?o " + "} " * n, MAX_NESTING),
    (lambda n: "ASK { FILTER(" + "(" * n + "true" + ")" * n + ") }", MAX_NESTING - 2),
])
def test_nesting_limit(make, deepest_ok: int) -> None:  # type: ignore[no-untyped-def]
    check_query(make(deepest_ok))
    with pytest.raises(Refusal) as info:
        check_query(make(deepest_ok + 1))
    assert info.value.status == 400 and f"at most {MAX_NESTING}" in info.value.message


class _Target(BaseHTTPRequestHandler):
    """A fake SPARQL endpoint that counts the requests it gets."""

    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self._answer()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        _Target.hits.append(self.path)
        body = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [
            {"s": {"type": "literal", "value": "from the target"}}]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def endpoint() -> Iterator[SparqlEndpoint]:
    require_oxigraph()
    with SparqlEndpoint(DATA, port=0, limits=ServeLimits(timeout_s=5)) as ep:
        yield ep


def _post(ep: SparqlEndpoint, query: str, headers: dict[str, str] | None = None
          ) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=60)
    try:
        conn.request("POST", "/query", body=query.encode("utf-8"), headers=headers or DIRECT)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_service_behind_a_carriage_return_never_reaches_its_target(
        endpoint: SparqlEndpoint) -> None:
    target = HTTPServer(("127.0.0.1", 0), _Target)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{target.server_address[1]}/sparql"
        for query in (f"SELECT * WHERE {{ #\rSERVICE <{url}> {{ ?s ?p ?o }} \n}}",
                      f"SELECT * WHERE {{ #\r\nSERVICE SILENT <{url}> {{ ?s ?p ?o }} }}"):
            status, body = _post(endpoint, query)
            assert (status, body.decode()) == (403, SERVICE_REFUSED + "\n")
        assert _Target.hits == []
    finally:
        target.shutdown()
        target.server_close()


def test_no_answer_reveals_the_engine_address(endpoint: SparqlEndpoint) -> None:
    status, body = _post(endpoint, "SELECT (STR(<>) AS ?base) (STR(<x>) AS ?x) WHERE {}")
    assert status == 200
    row = json.loads(body)["results"]["bindings"][0]
    assert row["base"]["value"] == endpoint.url
    assert row["x"]["value"] == endpoint.url.rsplit("/", 1)[0] + "/x"
    bad = "SELEC * WHERE { ?s ?p ?o }"
    status, body = _post(endpoint, bad)
    assert status == 400 and str(endpoint.backend_port).encode() not in body
    conn = http.client.HTTPConnection("127.0.0.1", endpoint.backend_port, timeout=30)
    conn.request("POST", "/query", body=bad.encode(), headers=DIRECT)
    assert body == conn.getresponse().read()  # the engine's message, columns as the user typed
    conn.close()


def test_headers_are_read_strictly(endpoint: SparqlEndpoint) -> None:
    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=30) as sock:
        query = b"ASK { ?s ?p ?o }"
        sock.sendall(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query"
                     b"\r\nContent-Length: \xc2\xb2\r\n\r\n" + query)  # a superscript two
        head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 413"), head[:80]
    status, body = _post(endpoint, "ASK { ?s ?p ?o }", {
        "Content-Type": "application/sparql-query",
        "Accept": "application/sparql-results+json,\r\n text/csv"})  # folded
    assert status == 200 and json.loads(body)["boolean"] is True


def test_a_client_that_trickles_its_request_is_dropped() -> None:
    require_oxigraph()
    with SparqlEndpoint(DATA, port=0, limits=ServeLimits(max_request_seconds=1.5)) as ep, \
            socket.create_connection(("127.0.0.1", ep.port), timeout=30) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /query?query=ASK%7B%7D HTTP/1.1\r\n")
        closed = False
        for i in range(20):  # one header line every 0.5 s, never the blank line that ends them
            time.sleep(0.5)
            try:
                sock.sendall(f"X-Slow-{i}: 1\r\n".encode())
            except OSError:
                closed = True
                break
            ready, _, _ = select.select([sock], [], [], 0)
            if ready and not sock.recv(4096):
                closed = True
                break
        assert closed and time.monotonic() - started < 5  # 1.5 s limit, checked every 0.5 s
        # an ordinary client on another connection is served meanwhile
        assert _post(ep, "ASK { ?s ?p ?o }")[0] == 200


def test_a_query_past_the_engine_memory_cap_gets_503_and_the_engine_is_replaced(
        kb: KnowledgeBase) -> None:
    require_oxigraph()
    limits = ServeLimits(timeout_s=30, max_engine_memory_bytes=512 * 1024**2)
    with SparqlEndpoint(kb_nquads(kb), port=0, limits=limits) as ep:
        first = ep.engine.pid
        # ORDER BY over a cross product: about 150 MB/s of growth, past the cap in seconds
        status, body = _post(ep, "SELECT ?o WHERE { ?a ?b ?c . ?s ?p ?o } ORDER BY ?o LIMIT 1")
        assert status == 503 and b"--max-engine-memory" in body, (status, body[:200])
        assert _post(ep, "ASK { ?s ?p ?o }")[0] == 200 and ep.engine.pid != first


# -- 2. the engine's death is survived ------------------------------------------------------------
def test_a_query_that_kills_the_engine_gets_502_and_the_next_one_an_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    require_oxigraph()
    with SparqlEndpoint(DATA, port=0, limits=ServeLimits(timeout_s=20)) as ep:
        first = ep.engine.pid
        assert first is not None
        # the limit is there to stop this query; lifted, it kills Oxigraph 0.5 (stack overflow)
        monkeypatch.setattr(policy, "MAX_NESTING", 10**6)
        killer = "ASK { " + "FILTER EXISTS { " * 4000 + "?s ?p ?o" + " }" * 4000 + " }"
        status, body = _post(ep, killer)
        assert status == 502 and b"restarted" in body, (status, body[:200])
        status, body = _post(ep, "ASK { <urn:s1> ?p ?o }")
        assert status == 200 and json.loads(body)["boolean"] is True
        assert ep.engine.pid not in (None, first)
        _assert_gone(first)  # reaped, not a zombie


def test_an_engine_killed_from_outside_is_replaced(endpoint: SparqlEndpoint) -> None:
    first = endpoint.engine.pid
    assert first is not None
    port = endpoint.backend_port
    os.kill(first, signal.SIGKILL)
    assert _closed(port)  # dead: its threads gone, its port closed
    status, body = _post(endpoint, "ASK { <urn:s2> ?p ?o }")
    assert status == 200 and json.loads(body)["boolean"] is True
    assert endpoint.engine.pid not in (None, first)
    _assert_gone(first)


def test_deep_queries_are_refused_before_the_engine(endpoint: SparqlEndpoint) -> None:
    pid = endpoint.engine.pid
    status, body = _post(endpoint, "ASK { FILTER(" + "!" * 4000 + "true) }")
    assert status == 400 and b"levels deep" in body
    assert _post(endpoint, "ASK { ?s ?p ?o }")[0] == 200 and endpoint.engine.pid == pid


def _closed(port: int, within_s: float = 10.0) -> bool:
    """Whether connections to the loopback port are refused within ``within_s`` (a killed
    process's leader can show as a zombie while its other threads still hold the socket)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return True
        time.sleep(0.02)
    return False


def _assert_gone(pid: int, within_s: float = 10.0, orphan: bool = False) -> None:
    """The process has exited and was reaped. An ``orphan`` (its parent was killed) is reaped by
    whatever init the machine runs, which may never do it: there a zombie (Z) counts as gone."""
    deadline = time.monotonic() + within_s
    state = "?"
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return
        if orphan and state in ("Z", "X"):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still there (state {state})")


# -- 3. no engine outlives the server ------------------------------------------------------------
def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return out


def _engines(server: int) -> dict[int, int]:
    """The server's engine processes (``oxigraph serve...``; not ``oxigraph load``): pid -> port."""
    out = {}
    for pid in _children(server):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except FileNotFoundError:
            continue
        if b"--bind" in args:
            out[pid] = int(args[args.index(b"--bind") + 1].rsplit(b":", 1)[1])
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_engine_outlives_kill_9_of_the_server(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require_oxigraph()
    command = [sys.executable, "-m", "accelkb.cli", "serve", "--port", "0", "--timeout", "1"]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(scratch)}, text=True, cwd=tmp_path)
    try:
        url = urlsplit(await_url(proc, deadline=time.monotonic() + 120))
        first = _engines(proc.pid)
        assert len(first) == 1
        # a runaway query: the engine is replaced from the keeper thread, not the main one
        runaway = "SELECT ?o WHERE { ?a ?b ?c . ?s ?p ?o } ORDER BY ?o LIMIT 1"
        conn = http.client.HTTPConnection("127.0.0.1", url.port or 0, timeout=60)
        conn.request("GET", "/query?" + urlencode({"query": runaway}))
        assert conn.getresponse().status == 503
        conn.close()
        deadline = time.monotonic() + 60
        engines = dict(first)
        while time.monotonic() < deadline and len(engines) < 2:
            engines.update(_engines(proc.pid))
            time.sleep(0.1)
        assert len(engines) >= 2, "no replacement engine was started"
        ports = list(engines.values())
        proc.kill()  # SIGKILL: no cleanup code runs in the server
        proc.wait(timeout=10)
        for pid in engines:
            _assert_gone(pid, orphan=True)  # the replacement too
        for port in ports:
            assert _closed(port), f"an engine still listens on 127.0.0.1:{port}"
        # kill -9 left the engines' databases behind; the next server start removes them
        left = sorted(p.name for p in scratch.glob("accelkb-oxigraph-*"))
        assert left
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))
        # the replaced engine's own removal may still be under way when the server is killed
        # (one clean-clone run saw 2 left and 1 to sweep): what counts is that none remains
        assert 1 <= sweep_stale_directories() <= len(left)
        assert not list(scratch.glob("accelkb-oxigraph-*"))
    finally:
        ensure_stopped(proc)


def test_64_clients_are_all_answered_while_a_runaway_runs(kb: KnowledgeBase) -> None:
    """Bounded load test: 64 clients for about 3 s, each request on a new connection, beside
    one runaway query. No reset (the listen backlog used to be 5), every cheap query answered."""
    require_oxigraph()
    with SparqlEndpoint(kb_nquads(kb), port=0, limits=ServeLimits(timeout_s=2)) as ep:
        stop = time.monotonic() + 3
        outcomes: list[str] = []
        lock = threading.Lock()

        def client(query: str) -> None:
            while time.monotonic() < stop:
                try:
                    status = str(_post(ep, query)[0])
                except (ConnectionResetError, http.client.RemoteDisconnected):
                    status = "reset"
                if query == CHEAP:
                    with lock:
                        outcomes.append(status)

        runaway = "SELECT ?o WHERE { ?a ?b ?c . ?s ?p ?o } ORDER BY ?o LIMIT 1"
        threads = [threading.Thread(target=client, args=(CHEAP,)) for _ in range(64)]
        threads.append(threading.Thread(target=client, args=(runaway,)))
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(outcomes) > 64 and set(outcomes) == {"200"}, (
            {o: outcomes.count(o) for o in set(outcomes)})

