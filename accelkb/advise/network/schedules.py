"""Collision-free schedules for a report: synthesize on the system's network and compare with
dynamic routing in the simulator (both from :mod:`accelkb.solver` and :mod:`accelkb.perf.netsim`).
"""

from __future__ import annotations

from accelkb.advise.advice import ScheduleSummary
from accelkb.errors import InputError
from accelkb.perf import SystemSpec

#: Largest topology synthesized inside an advise run (keeps one report under ~30 s on 2 cores);
#: bench/schedule_bench.py covers the 256- and 576-chip instances.
MAX_CHIPS_IN_REPORT = 72


def schedules(spec: SystemSpec, collective: str = "allgather", time_limit_s: float = 8.0
              ) -> list[ScheduleSummary]:
    """Schedules on the largest network level of the system that a report can afford."""
    try:
        from accelkb.perf.netsim.dynamic import scheduled_stats, simulate_collective
        from accelkb.solver import schedule
        from accelkb.solver.schedule.figure import heatmap_svg
        from accelkb.solver.schedule.topology import parse_topology
    except ImportError:
        return []
    levels = [lv for lv in spec.levels if lv.group_chips <= MAX_CHIPS_IN_REPORT]
    out = []
    for lv in sorted(levels, key=lambda lv: -lv.group_chips)[:1]:
        try:
            topo = parse_topology(lv.name)
        except InputError:
            continue
        if topo.n != lv.group_chips:
            continue
        res = schedule(topo, collective, chunks=1, time_limit_s=time_limit_s)
        sim = simulate_collective(topo, collective, 1)
        step_s = None
        if res.makespan_steps is not None:
            # One step moves one chunk per unit link: chunk = 1 MB here, per-hop latency added.
            per_link = lv.bandwidth_bytes_per_s_per_chip / max(1, _unit_links_per_chip(topo))
            step_s = res.makespan_steps * (1e6 / per_link + lv.latency_s)
        out.append(ScheduleSummary(
            topology=lv.name, collective=collective, status=res.status.value,
            makespan_steps=res.makespan_steps, lower_bound_steps=res.lower_bound_steps,
            dynamic_makespan_steps=float(sim.makespan_steps), seconds=step_s,
            load_imbalance=scheduled_stats(res.transfers, res.makespan_steps or 0,
                                           topo.unit_links, topo.links)["load_imbalance"]
            if res.transfers else None, dynamic_load_imbalance=sim.load_imbalance,
            heatmap_svg=heatmap_svg(res) if res.transfers else ""))
    return out


def _unit_links_per_chip(topo: object) -> int:
    """Out-links of chip 0 (with multiplicity): how the injection bandwidth splits per link."""
    links = getattr(topo, "links", {})
    return sum(m for (u, _v), m in links.items() if u == 0) or 1
