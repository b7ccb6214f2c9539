"""Schedule benchmark over ../shared/bench/schedule_instances.json.

Per instance: makespan, our lower bound and the reference bound, ratio, status, synthesis time,
verification, and the dynamic-routing (minimal-adaptive and ECMP) makespan of the same traffic.
Then a sweep over size showing how the gap to dynamic routing grows.

Usage::

    python bench/schedule_bench.py [--max-chips N] [--only SUBSTRING] [--time-limit S]
                                   [--no-sim] [--sweep] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from accelkb.perf.netsim import simulate_collective, sweep
from accelkb.solver.schedule_api import schedule
from accelkb.solver.topology import load_topology_file

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
SIM_MAX_MESSAGES = 400_000  # larger point-to-point simulations are left out (pure Python)


def _time_limit(chips: int, collective: str, default: float | None) -> float:
    if default is not None:
        return default
    if chips <= 72:
        return 10.0
    return 300.0 if collective == "alltoall" and chips > 256 else 50.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-chips", type=int, default=10_000)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--time-limit", type=float)
    ap.add_argument("--no-sim", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    path = SHARED / "schedule_instances.json"
    if not path.exists():
        print(f"missing {path}: the benchmark needs ../shared/bench", file=sys.stderr)
        return 2
    rows = []
    head = (f"{'topology':<13}{'collective':<15}{'c':>4}{'chips':>6}{'steps':>7}{'LB':>6}"
            f"{'refLB':>6}{'ratio':>7}  {'status':<9}{'time s':>8}{'verif':>6}{'adapt':>7}"
            f"{'ecmp':>6}")
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
        adapt = ecmp = None
        messages = topo.n * (topo.n - 1) * (c if inst["collective"] != "allreduce"
                                            else 2 * c / topo.n)
        if not args.no_sim and messages <= SIM_MAX_MESSAGES:
            adapt = simulate_collective(topo, inst["collective"], c, "adaptive").makespan_steps
            ecmp = simulate_collective(topo, inst["collective"], c, "ecmp").makespan_steps
        ratio = res.makespan_steps / res.lower_bound_steps if res.makespan_steps else None
        row = {"topology": name, "collective": inst["collective"], "chunks_per_rank": c,
               "chips": topo.n, "makespan_steps": res.makespan_steps,
               "lower_bound_steps": res.lower_bound_steps,
               "reference_bound": inst["lower_bound_steps"], "ratio": ratio,
               "status": res.status.value, "seconds": round(wall, 2),
               "verified": res.verified, "adaptive_steps": adapt, "ecmp_steps": ecmp,
               "method": res.method}
        rows.append(row)
        steps = "-" if res.makespan_steps is None else res.makespan_steps
        print(f"{name:<13}{inst['collective']:<15}{c:>4}{topo.n:>6}{steps:>7}"
              f"{res.lower_bound_steps:>6}{inst['lower_bound_steps']:>6}"
              f"{'-' if ratio is None else format(ratio, '.3f'):>7}  {res.status.value:<9}"
              f"{wall:>8.2f}{'yes' if res.verified else 'NO':>6}"
              f"{'-' if adapt is None else adapt:>7}{'-' if ecmp is None else ecmp:>6}",
              flush=True)
    if args.sweep:
        print("\nsize sweep, alltoall: scheduled vs dynamic routing (steps)")
        for r in sweep(["ring:8", "torus:4x4", "torus:6x6", "torus:8x8", "dragonfly:nodes=2",
                        "dragonfly:nodes=4", "dragonfly:nodes=9"], "alltoall",
                       time_limit_s=10):
            print(f"  {r['topology']:<20}{r['chips']:>5} chips  scheduled {r['scheduled']:>4}"
                  f"  adaptive {r['adaptive']:>4} (x{r['adaptive_ratio']})"
                  f"  ecmp {r['ecmp']:>4} (x{r['ecmp_ratio']})")
        print("size sweep, allgather: scheduled (with forwarding copies) vs dynamic unicast")
        for r in sweep(["ring:8", "torus:4x4", "torus:8x8", "dragonfly:nodes=4",
                        "dragonfly:nodes=9"], "allgather", time_limit_s=10):
            print(f"  {r['topology']:<20}{r['chips']:>5} chips  scheduled {r['scheduled']:>4}"
                  f"  adaptive {r['adaptive']:>4} (x{r['adaptive_ratio']})"
                  f"  ecmp {r['ecmp']:>4} (x{r['ecmp_ratio']})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
