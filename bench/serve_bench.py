"""Benchmark: SPARQL queries per second and p50/p99 latency, embedded vs served.

Targets (each one a separate process except ``embedded``, so clients and server do not share a
GIL):

- ``embedded``: ``KnowledgeBase.query`` (rdflib) called from N threads in this process;
- ``served``: ``accelkb serve`` (the guard in front of Oxigraph), what users get;
- ``oxigraph``: the same (in-memory) Oxigraph server without the guard, to show what the
  guard costs;
- ``rdflib-endpoint``: the other candidate library for the protocol (FastAPI + uvicorn over the
  rdflib dataset), measured only when ``rdflib-endpoint`` and ``uvicorn`` are installed.

Queries are the shipped examples (``examples/queries/*.rq``): a filter, an aggregate over
property paths, a CONSTRUCT and a join with sources. Clients are threads, each with one HTTP/1.1
keep-alive connection, sending form-encoded POSTs (SELECT as results JSON, CONSTRUCT as
N-Triples) in a loop for ``--duration`` seconds after one warm-up request.

Run::

    python bench/serve_bench.py                       # every target, 1/4/16 clients
    python bench/serve_bench.py --duration 1 --targets served,embedded --json out.json
    python bench/serve_bench.py --abuse               # load and abuse (bench/serve_abuse.py)
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from accelkb.ontology.kb import _PREFIXES, KnowledgeBase
from accelkb.serve.backend import OxigraphProcess, free_loopback_port
from accelkb.serve.store import kb_nquads

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "queries"
QUERIES = ("chips_with_200mb_sram", "systems_memory_per_tier", "describe_gc200",
           "conflicting_claims")
PROLOGUE = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in _PREFIXES.items())

# The rdflib-endpoint candidate, run in its own process (the script is data for `python -c`).
RDFLIB_ENDPOINT_SCRIPT = """
import sys, uvicorn
from rdflib_endpoint import SparqlEndpoint
from accelkb.ontology.kb import KnowledgeBase
kb = KnowledgeBase()
app = SparqlEndpoint(graph=kb.dataset)
sys.stderr.write("SPARQL endpoint at http://127.0.0.1:%s/\\n" % sys.argv[1]); sys.stderr.flush()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

Request = Callable[[str], None]


def _spawn(command: list[str], timeout_s: float = 180) -> tuple[subprocess.Popen[str], str]:
    """Start a server process and return it with the URL it prints on stderr."""
    # cwd outside the repository: `-m accelkb.cli` must import the installed package.
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, env=dict(os.environ), cwd=tempfile.gettempdir())
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stderr.readline()
        if not line:
            break
        if "SPARQL endpoint at " in line:
            url = line.split("SPARQL endpoint at ")[1].split()[0]
            _await_http(url, deadline)
            return proc, url
    proc.kill()
    raise RuntimeError(f"{command[:4]} did not start")


def _await_http(url: str, deadline: float) -> None:
    parts = urlsplit(url)
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                              timeout=5)
            conn.request("POST", parts.path or "/", body=urlencode({"query": "ASK {}"}),
                         headers={"Content-Type": "application/x-www-form-urlencoded",
                                  "Accept": "application/sparql-results+json"})
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} does not answer")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    if proc.stderr:
        proc.stderr.close()


class _HttpClient:
    """One keep-alive connection; ``__call__`` sends one query and reads the whole answer."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        self.conn: http.client.HTTPConnection | None = None

    def __call__(self, query: str) -> None:
        accept = ("application/n-triples" if "CONSTRUCT" in query
                  else "application/sparql-results+json")
        body = urlencode({"query": PROLOGUE + query})
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
            try:
                self.conn.request("POST", self.path, body=body, headers={
                    "Content-Type": "application/x-www-form-urlencoded", "Accept": accept})
                response = self.conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status} from {self.path}")
                return
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise


def _measure(make_client: Callable[[], Request], query: str, clients: int,
             duration: float) -> dict[str, float]:
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            client = make_client()
            client(query)  # warm-up, not counted
            start.wait()
            mine = []
            stop_at = time.perf_counter() + duration
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                client(query)
                mine.append(time.perf_counter() - t0)
            with lock:
                latencies.extend(mine)
        except BaseException as exc:  # report after the run; never hang the barrier
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):
        start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"client failed: {errors[0]}")
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else latencies * 99
    return {"qps": len(latencies) / wall, "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * cuts[98], "requests": float(len(latencies))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per cell")
    parser.add_argument("--clients", default="1,4,16", help="comma-separated client counts")
    parser.add_argument("--targets", default="embedded,served,oxigraph,rdflib-endpoint")
    parser.add_argument("--queries", default=",".join(QUERIES))
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--abuse", action="store_true",
                        help="run the load and abuse benchmark instead (bench/serve_abuse.py; "
                             "--clients defaults to 16,64 there)")
    args, rest = parser.parse_known_args(argv)
    if args.abuse:
        import serve_abuse

        extra = ["--clients", args.clients] if "--clients" in (argv or sys.argv) else []
        return serve_abuse.main(rest + extra)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    clients = [int(c) for c in args.clients.split(",")]
    queries = {q: (EXAMPLES / f"{q}.rq").read_text(encoding="utf-8")
               for q in args.queries.split(",")}
    targets = args.targets.split(",")

    kb = KnowledgeBase()
    results: list[dict[str, object]] = []
    print(f"{len(kb.dataset)} triples; {args.duration:g} s per cell; {os.cpu_count()} CPUs",
          flush=True)
    print("| target | query | clients | q/s | p50 ms | p99 ms | requests |")
    print("|---|---|---:|---:|---:|---:|---:|", flush=True)

    def run_target(name: str, make_client: Callable[[], Request]) -> None:
        for qname, text in queries.items():
            for n in clients:
                row = _measure(make_client, text, n, args.duration)
                results.append({"target": name, "query": qname, "clients": n, **row})
                print(f"| {name} | {qname} | {n} | {row['qps']:.1f} | {row['p50_ms']:.1f} | "
                      f"{row['p99_ms']:.1f} | {row['requests']:.0f} |", flush=True)

    for target in targets:
        if target == "embedded":
            def embedded(query: str) -> None:
                list(kb.query(query))

            run_target(target, lambda: embedded)
        elif target == "served":
            proc, url = _spawn([sys.executable, "-m", "accelkb.cli", "serve", "--port", "0",
                                "--timeout", "300", "--max-result-bytes", str(1 << 30)])
            try:
                run_target(target, lambda url=url: _HttpClient(url))  # type: ignore[misc]
            finally:
                _stop(proc)
        elif target == "oxigraph":
            with OxigraphProcess(kb_nquads(kb), read_only=False) as ox:
                run_target(target, lambda: _HttpClient(ox.url + "/query"))
        elif target == "rdflib-endpoint":
            try:
                import rdflib_endpoint  # noqa: F401
                import uvicorn  # noqa: F401
            except ImportError:
                print("| rdflib-endpoint | (not installed: pip install 'rdflib-endpoint[web]') "
                      "| | | | | |")
                continue
            port = free_loopback_port()
            proc, url = _spawn([sys.executable, "-c", RDFLIB_ENDPOINT_SCRIPT, str(port)])
            try:
                run_target(target, lambda url=url: _HttpClient(url))  # type: ignore[misc]
            finally:
                _stop(proc)
        else:
            parser.error(f"unknown target {target}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
