"""``accelkb schedule``: synthesize a collision-free collective schedule and prove its quality.

Exit codes: 0 OPTIMAL or FEASIBLE, 1 UNSATISFIABLE, 2 bad input, 3 no schedule within the time
limit (UNKNOWN), 70 a schedule that failed the independent check (ERROR: a bug).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelkb.commands._knowledge import add_data_option, knowledge
from accelkb.commands._limit import seconds_option
from accelkb.commands._output import check_target, write_atomically
from accelkb.errors import (
    EXIT_INTERNAL,
    EXIT_NEGATIVE,
    EXIT_NO_ANSWER,
    EXIT_OK,
    InputError,
)
from accelkb.jsonio import dumps_strict, strict_json
from accelkb.solver.schedule.traffic import KINDS, layout_traffic, read_traffic

if TYPE_CHECKING:
    from accelkb.solver.status import Status

NAME = "schedule"
HELP = "synthesize a collision-free collective schedule (Z3 + decomposition) with lower bounds"

COLLECTIVES = ("allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "traffic")


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
    parser.add_argument("--chunks", type=int, default=None, metavar="K",
                        help="chunks per rank (allreduce: vector length in chunks; --traffic-of: "
                             "per chip pair); default 1")
    parser.add_argument("--root", type=int, default=None, metavar="R",
                        help="with --collective broadcast: the chip that holds the data; "
                             "default 0")
    traffic = parser.add_mutually_exclusive_group()
    traffic.add_argument("--traffic", metavar="FILE",
                         help="with --collective traffic: JSON {\"traffic\": [[src, dst, chunks], "
                              "...]} or {\"matrix\": [[...]]}")
    traffic.add_argument("--traffic-of", metavar="LAYOUT",
                         help="with --collective traffic: the traffic of a layout such as "
                              "'tp=8,pp=4,dp=2' or of the best layout in the JSON result of "
                              "'accelkb configure --json' (tensor rank innermost on consecutive "
                              "chips)")
    parser.add_argument("--traffic-kind", choices=KINDS, default=None,
                        help="with --traffic-of: tensor, pipeline, data parallel traffic or all "
                             "of it at once; default all")
    parser.add_argument("--dynamic", action="store_true",
                        help="also run the schedule's own transfers self-timed (no planned "
                             "steps) and the collective's point-to-point form under dynamic "
                             "routing (ECMP, minimal-adaptive), and compare")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                        help="seconds; on expiry the best schedule so far is FEASIBLE")
    parser.add_argument("--out", metavar="FILE", help="write the full schedule (JSON)")
    parser.add_argument("--figure", metavar="FILE.svg", help="write a link x step heat map")
    parser.add_argument("--message-bytes", type=float, metavar="B",
                        help="with --system: bytes per rank (--traffic-of: per chip pair; "
                             "--traffic FILE: per chunk), to report seconds")
    parser.add_argument("--json", action="store_true", help="machine-readable summary")
    add_data_option(parser)


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


def _system_scope(name: str) -> dict | None:
    """Where the system's chip-level topology is one of its subsystems (a DGX of a SuperPOD, a
    Pod64 of a Pod256): what the schedule covers, for the summary."""
    from accelkb.perf import from_kb

    fn = getattr(from_kb, "topology_scope", None)
    try:
        found = fn(name) if fn is not None else None
    except InputError:  # a name only a test's stand-in knowledge base knows
        return None
    if found is None:
        return None
    level, chips, system_chips = found
    return {"level": level, "chips": chips, "system_chips": system_chips,
            "note": f"one {level} ({chips} of the {system_chips} chips of {name}); the level "
                    f"joining the {level}s has no chip-level topology to schedule"}


def _configured_layout(path: str) -> dict:
    """The best layout of an ``accelkb configure --json`` result file."""
    try:
        data = strict_json(Path(path).read_text("utf-8"), path,
                           "a readable JSON result of 'accelkb configure --json' for --traffic-of")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"expected a readable JSON result of 'accelkb configure --json' for "
                         f"--traffic-of, got {path!r}: {exc}") from None
    best = data.get("best") if isinstance(data, dict) else None
    layout = best.get("layout") if isinstance(best, dict) else None
    if not isinstance(layout, dict):
        status = data.get("status", "no status") if isinstance(data, dict) else "not an object"
        raise InputError(f"expected a configuration with a best layout in {path!r} (from "
                         f"'accelkb configure --json'), got none ({status})")
    return layout


def _layout_degrees(text: str) -> tuple[int, int, int]:
    """``tp, pp, dp`` of a ``--traffic-of`` layout: ``key=value,...`` text (other layout keys
    are accepted, unused) or the JSON result of ``accelkb configure --json``."""
    from accelkb.perf.api import parse_parallel

    fields = _configured_layout(text) if text.endswith(".json") else parse_parallel(text)
    degrees = []
    for key in ("tp", "pp", "dp"):
        value = fields.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"expected {key} to be an integer >= 1 in --traffic-of, got "
                             f"{value!r}")
        degrees.append(value)
    return degrees[0], degrees[1], degrees[2]


def _demand(args: argparse.Namespace, chips: int) -> tuple[list[tuple[int, int, int]], dict]:
    """The traffic matrix of ``--collective traffic`` and a description for the summary."""
    if args.traffic:
        if args.chunks is not None:
            raise InputError(f"expected no --chunks with --traffic FILE (the file gives the chunk "
                             f"counts), got --chunks {args.chunks}")
        demand = read_traffic(args.traffic)  # chips out of range: refused by the Instance
        info: dict = {"source": args.traffic}
    elif args.traffic_of:
        tp, pp, dp = _layout_degrees(args.traffic_of)
        if tp * pp * dp > chips:
            raise InputError(f"expected a layout of at most {chips} chips (the topology's) in "
                             f"--traffic-of, got tp*pp*dp = {tp}*{pp}*{dp} = {tp * pp * dp}")
        kind = args.traffic_kind or "all"
        demand = layout_traffic(tp, pp, dp, kind, args.chunks or 1)
        info = {"source": f"tp={tp},pp={pp},dp={dp}", "kind": kind}
    else:
        raise InputError("expected --traffic FILE or --traffic-of LAYOUT with --collective "
                         "traffic, got neither")
    info.update(pairs=len(demand), chunks=sum(k for _, _, k in demand))
    return demand, info


def _dynamic(topo, result, demand, chunks: int, root: int = 0) -> dict:
    """Beside the schedule: its own transfers self-timed, and ECMP and minimal-adaptive
    simulations of the collective's point-to-point form."""
    from accelkb.perf.netsim.dynamic import (
        MAX_MESSAGES,
        POLICIES,
        collective_messages,
        scheduled_stats,
        simulate_collective,
    )
    from accelkb.perf.netsim.selftimed import self_timed

    out: dict = {"scheduled": scheduled_stats(result.transfers, result.makespan_steps or 0,
                                              topo.unit_links, topo.links)}
    timed = self_timed(topo, result.collective, result.transfers, chunks, demand=demand or (),
                       root=root).model_dump()
    if result.makespan_steps:
        timed["ratio_to_schedule"] = round(timed["makespan_steps"] / result.makespan_steps, 3)
    out["self-timed"] = timed
    initial, released = collective_messages(topo, result.collective, chunks, demand or (), root)
    messages = len(initial) + sum(len(m) for m in released.values())
    if messages > MAX_MESSAGES:
        out["skipped"] = (f"{messages} point-to-point messages exceed the simulator's limit of "
                          f"{MAX_MESSAGES} (pure Python, minutes)")
        return out
    for policy in POLICIES:
        sim = simulate_collective(topo, result.collective, chunks, policy, demand=demand or (),
                                  root=root)
        row = sim.model_dump()
        if result.makespan_steps:
            row["ratio_to_schedule"] = round(sim.makespan_steps / result.makespan_steps, 3)
        out[policy] = row
    return out


def _chunk_words(result, traffic_info: dict | None) -> str:
    if traffic_info is not None:
        return f"{traffic_info['chunks']} chunks over {traffic_info['pairs']} chip pairs"
    return f"{result.chunks_per_rank} chunks"


def run(args: argparse.Namespace) -> int:
    """Run the command with the user's ``--data`` files active; returns the exit code."""
    with knowledge(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    from accelkb.solver.schedule.api import schedule
    from accelkb.solver.schedule.topology import resolve_topology

    if args.chunks is not None and args.chunks < 1:
        raise InputError(f"expected --chunks >= 1, got {args.chunks}")
    if args.collective != "traffic" and (args.traffic or args.traffic_of):
        raise InputError(f"expected --traffic/--traffic-of only with --collective traffic, got "
                         f"--collective {args.collective}")
    if args.traffic_kind and not args.traffic_of:
        raise InputError(f"expected --traffic-kind only with --traffic-of LAYOUT, got "
                         f"--traffic-kind {args.traffic_kind} without it")
    if args.root is not None and args.collective != "broadcast":
        raise InputError(f"expected --root only with --collective broadcast, got --collective "
                         f"{args.collective}")
    seconds_option(args.time_limit, "--time-limit")
    if args.message_bytes is not None and not 0 < args.message_bytes < float("inf"):
        raise InputError(f"expected --message-bytes > 0, got {args.message_bytes}")
    if args.message_bytes is not None and not args.system:  # its seconds need the links'
        raise InputError("expected --message-bytes only with --system (the seconds need the "
                         "system's link bandwidth and latency), got it with --topology")
    for path, option in ((args.out, "--out"), (args.figure, "--figure")):
        if path is not None and not path.strip():
            raise InputError(f"expected {option} to name a file, got an empty name")
        if path:
            check_target(path, option)
    if args.figure and not args.figure.endswith(".svg"):  # fig.png had been written as SVG
        raise InputError(f"expected --figure ending in .svg (the heat map is drawn as SVG), "
                         f"got {args.figure!r}")
    bandwidth = latency = None
    scope = None
    if args.system:
        spec, bandwidth, latency = _system_topology(args.system)
        scope = _system_scope(args.system)
        topology: str = spec
    elif args.topology_file:
        topology = args.topology_file
        if not topology.endswith(".json"):
            raise InputError(f"expected a .json node-link file for --topology-file, got "
                             f"{topology!r}")
    else:
        topology = args.topology
    topo = resolve_topology(path=topology) if args.topology_file else \
        resolve_topology(spec=topology)
    if topo.endpoints < 2:  # ring:1 was refused while torus:1x1 gave "OPTIMAL, 0 steps"
        raise InputError(f"expected a network of at least 2 chips to schedule a collective "
                         f"on, got {topo.endpoints}, in {topology!r}")
    demand, traffic_info = None, None
    chunks = args.chunks or 1
    if args.collective == "traffic":
        demand, traffic_info = _demand(args, topo.endpoints)
    root = args.root or 0
    result = schedule(topo, args.collective, chunks, time_limit_s=args.time_limit, demand=demand,
                      root=root)
    summary: dict[str, Any] = result.summary()
    if args.collective == "broadcast":
        summary["root"] = root
    if traffic_info is not None:
        summary["traffic"] = traffic_info
    if scope is not None:
        summary["scope"] = scope
    if bandwidth and args.message_bytes and result.makespan_steps is not None:
        chunk_bytes = args.message_bytes / chunks
        summary["seconds"] = result.seconds(chunk_bytes, bandwidth, latency or 0.0)
    if args.dynamic and result.makespan_steps is not None:
        summary["dynamic"] = _dynamic(topo, result, demand, chunks, root)
    if args.out and result.makespan_steps is not None:
        write_atomically(args.out, dumps_strict(result.schedule_file()) + "\n")
    if args.figure and result.makespan_steps is not None:
        from accelkb.solver.schedule.figure import heatmap_svg
        write_atomically(args.figure, heatmap_svg(result), option="--figure")
    if args.json:
        sys.stdout.write(dumps_strict(summary, sort_keys=True) + "\n")
    else:
        gap = "" if result.gap is None else f" (gap {result.gap:.1%})"
        sys.stdout.write(
            f"{result.status.value}: {result.collective} on {result.topology} "
            f"({result.chips} chips, {_chunk_words(result, traffic_info)}): "
            f"{result.makespan_steps} steps, lower bound {result.lower_bound_steps}{gap}\n"
            f"  method: {result.method}\n  proof: {result.proof}\n"
            f"  verified without Z3: {result.verified}; {len(result.transfers)} transfers; "
            f"{result.synthesis_seconds:.2f} s\n")
        if scope is not None:
            sys.stdout.write(f"  scope: {scope['note']}\n")
        if "seconds" in summary:
            sys.stdout.write(f"  time: {summary['seconds']:.6g} s\n")
        for policy, row in summary.get("dynamic", {}).items():
            if policy == "skipped":
                sys.stdout.write(f"  dynamic routing: skipped, {row}\n")
            elif policy == "scheduled":
                sys.stdout.write(f"  the schedule: link utilization {row['link_utilization']:.0%}"
                                 f", max/mean link load {row['load_imbalance']:.2f}\n")
            elif policy != "scheduled":
                what = ("same transfers, self-timed (no plan)" if policy == "self-timed"
                        else f"dynamic routing ({policy}), point to point")
                sys.stdout.write(
                    f"  {what}: {row['makespan_steps']} steps "
                    f"({row.get('ratio_to_schedule', '?')}x the schedule), p99 "
                    f"{row['p99_steps']:g}, link utilization {row['link_utilization']:.0%}, "
                    f"max/mean link load {row['load_imbalance']:.2f}\n")
    return _exit_code(result.status, result.proof)


def _exit_code(status: Status, proof: str) -> int:
    from accelkb.solver.status import Status

    if status in (Status.OPTIMAL, Status.FEASIBLE):
        return EXIT_OK
    if status == Status.ERROR:  # the checker refused the solver's schedule: a bug, not a "no"
        sys.stderr.write(f"accelkb schedule: internal error: {proof}\n  this is a bug in "
                         "accelkb; please report it with the command line\n")
        return EXIT_INTERNAL
    return EXIT_NO_ANSWER if status == Status.UNKNOWN else EXIT_NEGATIVE
