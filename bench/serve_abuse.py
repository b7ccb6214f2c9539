"""Benchmark: ``accelkb serve`` under load and abuse, on 127.0.0.1 only, bounded in time.

For each client count (16 and 64 by default), one ``accelkb serve`` process (``--timeout``
as given) gets, for ``--duration`` seconds:

- ``load``: every client sends a cheap query in a loop, each on a new connection (the case
  that overflowed the old listen backlog of 5);
- ``runaways``: the same, while ``--runaways`` more clients each send a query that only the
  time limit stops (ORDER BY over a cross product), one after the other.

It prints the success rate, connection resets and other failures, the cheap queries' p50/p99
latency, and the resident memory (RSS) of the guard and of the engine before, at the end of
each phase, and after two seconds of quiet. Run with ``python bench/serve_bench.py --abuse``
or directly::

    python bench/serve_abuse.py --clients 16,64 --duration 5
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from serve_bench import _spawn, _stop

CHEAP = "ASK { ?s a ?type }"
RUNAWAY = "SELECT ?o WHERE { ?a ?b ?c . ?s ?p ?o } ORDER BY ?o LIMIT 1"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _engine_pids(server: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{server}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except FileNotFoundError:
            continue
        for child in map(int, children):
            try:
                if b"--bind" in Path(f"/proc/{child}/cmdline").read_bytes():
                    out.append(child)
            except FileNotFoundError:
                continue
    return out


def _memory(server: int) -> str:
    engines = sum(_rss_mb(p) for p in _engine_pids(server))
    return f"guard {_rss_mb(server):.0f} MB, engine {engines:.0f} MB"


def _one(port: int, query: str, timeout_s: float) -> tuple[str, float]:
    """(outcome, seconds): outcome is the HTTP status, 'reset' or the exception's name."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("GET", "/query?" + urlencode({"query": query}),
                     headers={"Accept": "application/sparql-results+json"})
        response = conn.getresponse()
        response.read()
        outcome = str(response.status)
    except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
        outcome = "reset"
    except (OSError, http.client.HTTPException) as exc:
        outcome = type(exc).__name__
    finally:
        conn.close()
    return outcome, time.monotonic() - started


def _phase(port: int, clients: int, runaways: int, duration_s: float, timeout_s: float
           ) -> dict[str, object]:
    stop = time.monotonic() + duration_s
    cheap: list[tuple[str, float]] = []
    slow: list[tuple[str, float]] = []
    lock = threading.Lock()

    def loop(query: str, out: list[tuple[str, float]]) -> None:
        while time.monotonic() < stop:
            got = _one(port, query, timeout_s + 30)
            with lock:
                out.append(got)

    threads = [threading.Thread(target=loop, args=(CHEAP, cheap)) for _ in range(clients)]
    threads += [threading.Thread(target=loop, args=(RUNAWAY, slow)) for _ in range(runaways)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=duration_s + timeout_s + 60)
    times = sorted(s for outcome, s in cheap if outcome == "200")
    outcomes: dict[str, int] = {}
    for outcome, _ in cheap:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {
        "requests": len(cheap), "ok": outcomes.get("200", 0), "resets": outcomes.get("reset", 0),
        "other": {k: v for k, v in outcomes.items() if k not in ("200", "reset")},
        "p50_ms": statistics.median(times) * 1000 if times else float("nan"),
        "p99_ms": times[min(len(times) - 1, int(0.99 * len(times)))] * 1000 if times
        else float("nan"),
        "runaway_answers": sorted({o for o, _ in slow}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", default="16,64", help="comma-separated client counts")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--runaways", type=int, default=2, help="clients sending runaways")
    parser.add_argument("--timeout", type=float, default=2.0, help="the server's --timeout")
    args = parser.parse_args(argv)
    print("| clients | phase | requests | success | resets | other | p50 ms | p99 ms | "
          "runaway answers | memory at the end | memory after 2 s |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---|---|---|", flush=True)
    for clients in (int(c) for c in args.clients.split(",")):
        proc, url = _spawn([sys.executable, "-m", "accelkb.cli", "serve", "--port", "0",
                            "--timeout", str(args.timeout)])
        port = urlsplit(url).port or 0
        try:
            print(f"| {clients} | before | | | | | | | | {_memory(proc.pid)} | |", flush=True)
            for phase, runaways in (("load", 0), ("runaways", args.runaways)):
                row = _phase(port, clients, runaways, args.duration, args.timeout)
                end = _memory(proc.pid)
                time.sleep(2)
                share = row["ok"] / row["requests"] if row["requests"] else 0.0  # type: ignore[operator]
                print(f"| {clients} | {phase} | {row['requests']} | {share:.1%} | "
                      f"{row['resets']} | {row['other'] or ''} | {row['p50_ms']:.1f} | "
                      f"{row['p99_ms']:.1f} | {', '.join(row['runaway_answers']) or '-'} | "  # type: ignore[arg-type]
                      f"{end} | {_memory(proc.pid)} |", flush=True)
        finally:
            _stop(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
