"""``accelkb schedule``: synthesize a collision-free collective schedule and prove its quality.

Exit codes: 0 OPTIMAL or FEASIBLE, 1 UNSATISFIABLE (or no schedule within the time limit),
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from accelkb.errors import InputError

NAME = "schedule"
HELP = "synthesize a collision-free collective schedule (Z3 + decomposition) with lower bounds"

COLLECTIVES = ("allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``accelkb schedule``."""
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--topology", metavar="SPEC",
                     help="generator spec: ring:8, torus:4x4, torus:4x4x4, full:8, hypercube:5, "
                          "dragonfly:nodes=9 (GroqRack), dragonfly:racks=8,nodes=9")
    src.add_argument("--topology-file", metavar="FILE",
                     help="networkx node-link JSON with a 'links' multiplicity per edge")
    src.add_argument("--system", metavar="NAME", help="a system of the knowledge base")
    parser.add_argument("--collective", required=True, choices=COLLECTIVES,
                        help="collective to schedule")
    parser.add_argument("--chunks", type=int, default=1, metavar="K",
                        help="chunks per rank (allreduce: vector length in chunks); default 1")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                        help="seconds; on expiry the best schedule so far is FEASIBLE")
    parser.add_argument("--out", metavar="FILE", help="write the full schedule (JSON)")
    parser.add_argument("--figure", metavar="FILE.svg", help="write a link x step heat map")
    parser.add_argument("--message-bytes", type=float, metavar="B",
                        help="with --system: bytes per rank, to report seconds")
    parser.add_argument("--json", action="store_true", help="machine-readable summary")


def _system_topology(name: str) -> tuple[str, float, float]:
    try:
        from accelkb.perf import from_kb
    except ImportError:
        raise InputError(f"expected a knowledge base with topologies for --system, got "
                         f"{name!r} but accelkb.perf.from_kb is not available yet; use "
                         f"--topology SPEC or --topology-file FILE") from None
    fn = getattr(from_kb, "topology_spec", None)
    if fn is None:
        raise InputError(f"expected the knowledge base to give a topology for system {name!r}, "
                         f"got none (accelkb.perf.from_kb.topology_spec is not there yet); use "
                         f"--topology SPEC or --topology-file FILE")
    spec, bandwidth, latency = fn(name)
    if not spec:
        raise InputError(f"expected a topology (ak:generatorSpec) for system {name!r}, got "
                         f"none in the knowledge base; use --topology SPEC")
    return str(spec), float(bandwidth), float(latency)


def _write_atomic(path: str, text: str) -> None:
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"expected an existing directory for --out, got {str(directory)!r}")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    from accelkb.solver.schedule_api import schedule
    from accelkb.solver.schedule_model import Status

    if args.chunks < 1:
        raise InputError(f"expected --chunks >= 1, got {args.chunks}")
    if args.time_limit <= 0:
        raise InputError(f"expected --time-limit > 0 seconds, got {args.time_limit}")
    bandwidth = latency = None
    if args.system:
        spec, bandwidth, latency = _system_topology(args.system)
        topology: str = spec
    elif args.topology_file:
        topology = args.topology_file
        if not topology.endswith(".json"):
            raise InputError(f"expected a .json node-link file for --topology-file, got "
                             f"{topology!r}")
    else:
        topology = args.topology
    result = schedule(topology, args.collective, args.chunks, time_limit_s=args.time_limit)
    summary = result.summary()
    if bandwidth and args.message_bytes:
        chunk_bytes = args.message_bytes / args.chunks
        summary["seconds"] = result.seconds(chunk_bytes, bandwidth, latency or 0.0)
    if args.out and result.makespan_steps is not None:
        _write_atomic(args.out, json.dumps(result.schedule_file()) + "\n")
    if args.figure and result.makespan_steps is not None:
        from accelkb.solver.schedule_figure import heatmap_svg
        _write_atomic(args.figure, heatmap_svg(result))
    if args.json:
        sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    else:
        gap = "" if result.gap is None else f" (gap {result.gap:.1%})"
        sys.stdout.write(
            f"{result.status.value}: {result.collective} on {result.topology} "
            f"({result.chips} chips, {result.chunks_per_rank} chunks): "
            f"{result.makespan_steps} steps, lower bound {result.lower_bound_steps}{gap}\n"
            f"  method: {result.method}\n  proof: {result.proof}\n"
            f"  verified without Z3: {result.verified}; {len(result.transfers)} transfers; "
            f"{result.synthesis_seconds:.2f} s\n")
        if "seconds" in summary:
            sys.stdout.write(f"  time: {summary['seconds']:.6g} s\n")
    if result.status in (Status.OPTIMAL, Status.FEASIBLE):
        return 0
    if result.status == Status.ERROR:
        sys.stderr.write(f"accelkb schedule: error: {result.proof}\n")
        return 1
    return 1
