"""``accelkb serve``: a read-only SPARQL 1.1 Protocol endpoint over the knowledge base.

Serves every named graph of the knowledge base (asserted, inferred, derivations, estimates,
results; the default graph is their union) at ``http://HOST:PORT/query`` until interrupted.
SPARQL Update, LOAD and SERVICE are refused; each query has a time limit and a result-size
limit. It listens on loopback unless ``--host`` says otherwise.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from accelkb.commands._knowledge import add_data_option, add_results_option, load_results
from accelkb.commands._limit import seconds_option
from accelkb.errors import InputError
from accelkb.ontology.kb import DERIVATIONS, INFERRED, KnowledgeBase
from accelkb.serve.server import ServeLimits, SparqlEndpoint, is_loopback

NAME = "serve"
HELP = "serve the knowledge base as a read-only SPARQL 1.1 endpoint (loopback by default)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=7878, help="port (default 7878; 0 = any)")
    add_data_option(parser)
    add_results_option(parser)
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="time limit of one query (default 10 s; 503 when hit)")
    parser.add_argument("--max-result-bytes", type=int, default=16 * 1024 * 1024,
                        metavar="BYTES", help="largest result sent (default 16 MiB; 413 when hit)")
    parser.add_argument("--max-engine-memory", type=int, default=2 * 1024**3, metavar="BYTES",
                        help="resident memory the Oxigraph engine may use (default 2 GiB; past "
                             "it the engine is replaced and its queries get 503; 0: no cap)")
    parser.add_argument("--max-request-seconds", type=float, default=10.0, metavar="SECONDS",
                        help="longest a client may take to send one request (default 10 s)")
    parser.add_argument("--cors", action="store_true",
                        help="allow browser tools on other origins (e.g. YASGUI) to query")
    parser.add_argument("--engine-read-only", action="store_true",
                        help="accepted for old scripts: the engine is always read-only now")
    parser.add_argument("--infer", action="store_true",
                        help="run every rule to a fixpoint first, so inferred facts and their "
                             "derivations are served too")
    parser.add_argument("--estimate", action="append", default=[], metavar="WORKLOAD@SYSTEM",
                        help="estimate this pair and run the rules on it before serving "
                             "(repeatable; implies --infer for the pair), e.g. "
                             "llama2-70b-decode@groq-576")


def infer(kb: KnowledgeBase, pairs: list[str]) -> int:
    """Fill the estimates, inferred and derivations graphs with the rules engine.

    With no ``pairs``, every rule runs to a fixpoint over the knowledge base
    (``accelkb.rules.run_rules``). Each ``WORKLOAD@SYSTEM`` pair is estimated by the performance
    model and the rules run on it (``accelkb.rules.infer``), so its bottleneck findings and
    candidate optimizations are served with their derivations.

    Returns
    -------
    int
        Triples in the inferred and derivations graphs afterwards.

    Raises
    ------
    InputError
        For a malformed pair, an unknown name, or no fixpoint.
    """
    from accelkb.rules import infer, run_rules

    if not pairs:
        run_rules(kb)
    for pair in pairs:
        workload, sep, system = pair.partition("@")
        if not sep or not workload or not system:
            raise InputError(f"expected --estimate WORKLOAD@SYSTEM (e.g. "
                             f"llama2-70b-decode@groq-576), got '{pair}'")
        infer(kb, workload, system)
    return len(kb.graph(INFERRED)) + len(kb.graph(DERIVATIONS))


def _limits(args: argparse.Namespace) -> ServeLimits:
    seconds_option(args.timeout, "--timeout")
    if args.max_result_bytes <= 0:
        raise InputError(f"expected --max-result-bytes > 0, got {args.max_result_bytes}")
    if not 0 <= args.port <= 65535:
        raise InputError(f"expected --port between 0 and 65535, got {args.port}")
    if args.max_engine_memory < 0 or 0 < args.max_engine_memory < 64 * 1024**2:
        raise InputError("expected --max-engine-memory of at least 67108864 bytes (64 MiB; the "
                         "engine holds about 20 MB idle and 170 MB under load) or 0, got "
                         f"{args.max_engine_memory}")
    if not 0 < args.max_request_seconds < float("inf"):
        raise InputError(f"expected --max-request-seconds > 0, got {args.max_request_seconds:g}")
    return ServeLimits(timeout_s=args.timeout, max_result_bytes=args.max_result_bytes,
                       max_request_seconds=args.max_request_seconds,
                       max_engine_memory_bytes=args.max_engine_memory or None, cors=args.cors)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the server as Ctrl-C does (engine included)


def run(args: argparse.Namespace) -> int:
    limits = _limits(args)
    for pair in args.estimate:
        if pair.count("@") != 1 or pair.startswith("@") or pair.endswith("@"):
            raise InputError(f"expected --estimate WORKLOAD@SYSTEM (e.g. "
                             f"llama2-70b-decode@groq-576), got '{pair}'")
    kb = KnowledgeBase(args.data)
    load_results(kb, args.results)
    if args.infer or args.estimate:
        infer(kb, args.estimate)
    endpoint = SparqlEndpoint.from_kb(kb, host=args.host, port=args.port, limits=limits)
    signal.signal(signal.SIGTERM, _interrupt)
    endpoint.start()
    if not is_loopback(args.host):  # once listening: a host that cannot be bound warns nobody
        sys.stderr.write(f"accelkb serve: warning: listening on {args.host}, reachable from "
                         "other machines (read-only, but anyone who can connect can query)\n")
    sys.stderr.write(f"accelkb serve: SPARQL endpoint at {endpoint.url} "
                     f"({len(kb.dataset)} triples; Ctrl-C to stop)\n")
    sys.stderr.flush()
    try:
        endpoint.wait()
    except KeyboardInterrupt:
        pass
    finally:
        endpoint.stop()
    return 0
