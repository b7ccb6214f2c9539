"""Schedule benchmark over ../shared/bench/schedule_instances.json.

Per instance: makespan, our lower bound and the reference bound, ratio, status, synthesis time,
verification, the makespan of the schedule's own transfers run self-timed (``self``: no planned
steps, :mod:`accelkb.perf.netsim.selftimed`) and the dynamic-routing (minimal-adaptive and ECMP)
makespan of the collective's point-to-point form.
Then a sweep over size showing how the gap to dynamic routing grows, and (``--layouts``) the
point-to-point traffic of Llama-2 70B style layouts on Groq systems (tensor rank innermost,
:mod:`accelkb.solver.schedule.traffic`) scheduled vs dynamically routed, over message size in
chunks.

Usage::

    python bench/schedule_bench.py [--max-chips N] [--only SUBSTRING] [--time-limit S]
                                   [--no-sim] [--sweep] [--layouts] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from accelkb.perf.netsim import MAX_MESSAGES, simulate_collective, sweep
from accelkb.perf.netsim.selftimed import self_timed
from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.topology import load_topology_file, parse_topology
from accelkb.solver.schedule.traffic import layout_traffic

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "bench"


def _time_limit(chips: int, collective: str, default: float | None) -> float:
    if default is not None:
        return default
    if chips <= 72:
        return 10.0
    return 300.0 if collective == "alltoall" and chips > 256 else 50.0


LAYOUTS = [("groqrack", 8, 9, 1), ("groq-576", 8, 72, 1)]  # (system, tp, pp, dp)


def layout_rows(time_limit: float) -> None:
    """Scheduled vs dynamic routing on the traffic of the :data:`LAYOUTS`."""
    from accelkb.perf.from_kb import topology_spec

    print("\nlayout traffic (tensor rank innermost): scheduled vs dynamic routing (steps)")
    print(f"  {'system':<10}{'layout':<12}{'kind':<9}{'c':>3}{'steps':>6}{'LB':>5}{'self':>6}"
          f"{'adapt':>7}{'p99':>6}{'ecmp':>6}{'p99':>6}{'time s':>8}")
    for system, tp, pp, dp in LAYOUTS:
        topo = parse_topology(topology_spec(system)[0])
        for kind in ("tensor", "pipeline", "all"):
            for c in (1, 4):
                demand = layout_traffic(tp, pp, dp, kind, c)
                t0 = time.monotonic()
                res = schedule(topo, "traffic", demand=demand, time_limit_s=time_limit)
                wall = time.monotonic() - t0
                st = self_timed(topo, "traffic", res.transfers, demand=demand).makespan_steps
                ad = simulate_collective(topo, "traffic", policy="adaptive", demand=demand)
                ec = simulate_collective(topo, "traffic", policy="ecmp", demand=demand)
                print(f"  {system:<10}{f'tp={tp},pp={pp}':<12}{kind:<9}{c:>3}"
                      f"{res.makespan_steps:>6}{res.lower_bound_steps:>5}{st:>6}"
                      f"{ad.makespan_steps:>7}{ad.p99_steps:>6g}{ec.makespan_steps:>6}"
                      f"{ec.p99_steps:>6g}{wall:>8.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-chips", type=int, default=10_000)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--time-limit", type=float)
    ap.add_argument("--no-sim", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--layouts", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    path = SHARED / "schedule_instances.json"
    if not path.exists():
        print(f"missing {path}: the benchmark needs ../shared/bench", file=sys.stderr)
        return 2
    rows = []
    head = (f"{'topology':<13}{'collective':<15}{'c':>4}{'chips':>6}{'steps':>7}{'LB':>6}"
            f"{'refLB':>6}{'ratio':>7}  {'status':<9}{'time s':>8}{'verif':>6}{'self':>6}"
            f"{'adapt':>7}{'ecmp':>6}")
    print(head)
    print("-" * len(head))
    for inst in json.loads(path.read_text()):
        name = Path(inst["topology"]).stem
        key = f"{name} {inst['collective']}"
        if args.only and not any(s in key for s in args.only):
            continue
        topo = load_topology_file(SHARED / inst["topology"])
        if topo.n > args.max_chips:
            continue
        c = inst["chunks_per_rank"]
        t0 = time.monotonic()
        res = schedule(topo, inst["collective"], c,
                       time_limit_s=_time_limit(topo.n, inst["collective"], args.time_limit))
        wall = time.monotonic() - t0
        adapt = ecmp = timed = None
        if not args.no_sim and res.makespan_steps is not None \
                and len(res.transfers) <= MAX_MESSAGES:
            timed = self_timed(topo, inst["collective"], res.transfers, c).makespan_steps
        messages = topo.n * (topo.n - 1) * (c if inst["collective"] != "allreduce"
                                            else 2 * c / topo.n)
        if not args.no_sim and messages <= MAX_MESSAGES:
            adapt = simulate_collective(topo, inst["collective"], c, "adaptive").makespan_steps
            ecmp = simulate_collective(topo, inst["collective"], c, "ecmp").makespan_steps
        ratio = res.makespan_steps / res.lower_bound_steps if res.makespan_steps else None
        row = {"topology": name, "collective": inst["collective"], "chunks_per_rank": c,
               "chips": topo.n, "makespan_steps": res.makespan_steps,
               "lower_bound_steps": res.lower_bound_steps,
               "reference_bound": inst["lower_bound_steps"], "ratio": ratio,
               "status": res.status.value, "seconds": round(wall, 2),
               "verified": res.verified, "self_timed_steps": timed, "adaptive_steps": adapt,
               "ecmp_steps": ecmp,
               "method": res.method}
        rows.append(row)
        steps = "-" if res.makespan_steps is None else res.makespan_steps
        print(f"{name:<13}{inst['collective']:<15}{c:>4}{topo.n:>6}{steps:>7}"
              f"{res.lower_bound_steps:>6}{inst['lower_bound_steps']:>6}"
              f"{'-' if ratio is None else format(ratio, '.3f'):>7}  {res.status.value:<9}"
              f"{wall:>8.2f}{'yes' if res.verified else 'NO':>6}"
              f"{'-' if timed is None else timed:>6}{'-' if adapt is None else adapt:>7}"
              f"{'-' if ecmp is None else ecmp:>6}",
              flush=True)
    if args.sweep:
        print("\nsize sweep, alltoall: scheduled vs dynamic routing (steps)")
        for r in sweep(["ring:8", "torus:4x4", "torus:6x6", "torus:8x8", "dragonfly:nodes=2",
                        "dragonfly:nodes=4", "dragonfly:nodes=9"], "alltoall",
                       time_limit_s=10):
            print(f"  {r['topology']:<20}{r['chips']:>5} chips  scheduled {r['scheduled']:>4}"
                  f"  self-timed {r['self_timed']:>4}  adaptive {r['adaptive']:>4} "
                  f"(x{r['adaptive_ratio']})"
                  f"  ecmp {r['ecmp']:>4} (x{r['ecmp_ratio']})")
        print("size sweep, allgather: scheduled (with forwarding copies) vs dynamic unicast")
        for r in sweep(["ring:8", "torus:4x4", "torus:8x8", "dragonfly:nodes=4",
                        "dragonfly:nodes=9"], "allgather", time_limit_s=10):
            print(f"  {r['topology']:<20}{r['chips']:>5} chips  scheduled {r['scheduled']:>4}"
                  f"  self-timed {r['self_timed']:>4}  adaptive {r['adaptive']:>4} "
                  f"(x{r['adaptive_ratio']})"
                  f"  ecmp {r['ecmp']:>4} (x{r['ecmp_ratio']})")
    if args.layouts:
        layout_rows(args.time_limit or 30.0)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
