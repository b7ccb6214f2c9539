"""Scheduled vs self-timed vs dynamic routing, side by side, for growing topologies.

:func:`sweep` synthesizes a schedule (:func:`accelkb.solver.schedule`), replays its own
transfers self-timed (:mod:`selftimed`) and runs the collective's
point-to-point form under ECMP and minimal-adaptive routing (:mod:`dynamic`).
It is the only simulator module that calls the schedule solver.
"""

from __future__ import annotations

from accelkb.perf.netsim.dynamic import POLICIES, simulate_collective
from accelkb.perf.netsim.selftimed import self_timed
from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.topology import parse_topology


def sweep(specs: list[str], collective: str, chunks: int = 1, time_limit_s: float = 20.0
          ) -> list[dict[str, object]]:
    """Scheduled vs self-timed vs dynamic (ECMP, adaptive) makespan for growing topologies.

    Each row: topology, chips, scheduled steps, lower bound, the schedule's transfers run
    self-timed (:mod:`selftimed`), ECMP and adaptive steps and their ratio
    to the schedule.
    """
    rows: list[dict[str, object]] = []
    for spec in specs:
        topo = parse_topology(spec)
        res = schedule(topo, collective, chunks, time_limit_s=time_limit_s)
        timed = self_timed(topo, collective, res.transfers, chunks).makespan_steps \
            if res.makespan_steps else None
        row: dict[str, object] = {"topology": spec, "chips": topo.n,
                                  "scheduled": res.makespan_steps,
                                  "lower_bound": res.lower_bound_steps, "self_timed": timed}
        for pol in POLICIES:
            sim = simulate_collective(topo, collective, chunks, pol)
            row[pol] = sim.makespan_steps
            row[f"{pol}_p99"] = sim.p99_steps
            row[f"{pol}_ratio"] = round(sim.makespan_steps / res.makespan_steps, 3) \
                if res.makespan_steps else None
        rows.append(row)
    return rows
