"""What a collision-free network buys for one inference layout: its per-token traffic, each
collective as the estimate scheduled it and the same collective under dynamic routing.

Every collective of a decode step that the estimate timed from a synthesized schedule
(:mod:`accelkb.perf.scheduled`) is simulated on the same topology, with the same chunks, under
dynamic routing (:func:`accelkb.perf.netsim.simulate_collective`: ECMP and minimal-adaptive,
store and forward with FIFO link queues). A step costs the same in both (one chunk over a unit
link plus the hop latency), so the difference is contention alone: the handshakes and
per-packet control that a dynamically routed network adds are not modelled, and the rows say
so. Counts per token: two tensor-parallel all-reduces per layer, one hop per pipeline boundary.
"""

from __future__ import annotations

from collections.abc import Sequence

from accelkb.advise.advice import ScheduleSummary, TrafficRow
from accelkb.perf import InferenceEstimate, SystemSpec

_ROLES = {"decode_tp_all_reduce": "tensor-parallel all-reduce",
          "decode_pipeline_hop": "pipeline hop"}
_SOLVER_OP = {"all_reduce": "allreduce", "p2p": "traffic"}


def traffic(est: InferenceEstimate, layers: int, system: SystemSpec | None = None
            ) -> list[TrafficRow]:
    """The scheduled collectives of ``est``'s decode step against dynamic routing (empty when
    nothing was scheduled or the simulator is not installed). With ``system`` each row also
    carries its chunk size, link bandwidth and hop latency, the links' max/mean load both ways,
    and the time under dynamic routing with the best NCCL transport protocol
    (:mod:`.advantages`)."""
    try:
        from accelkb.perf.netsim.dynamic import scheduled_stats, simulate_collective
        from accelkb.solver.schedule.bounds import all_distances
        from accelkb.solver.schedule.topology import parse_topology
    except ImportError:
        return []
    counts = {"decode_tp_all_reduce": 2 * layers,
              "decode_pipeline_hop": est.config.pp - 1}
    levels = {lv.name: lv for lv in (system.levels if system is not None else ())}
    rows = []
    for role, timing in est.collectives.items():
        if role not in _ROLES or timing.source != "schedule" or not timing.makespan_steps:
            continue
        if timing.topology is None or counts[role] <= 0:
            continue
        topo = parse_topology(timing.topology)
        chunks = timing.chunks or 1
        demand = [(0, est.config.tp, chunks)] if timing.op == "p2p" else []
        sims = {pol: simulate_collective(topo, _SOLVER_OP[timing.op], chunks, policy=pol,
                                         demand=demand)
                for pol in ("ecmp", "adaptive")}
        dyn = {pol: float(s.makespan_steps) for pol, s in sims.items()}
        per_step = timing.seconds / timing.makespan_steps
        row = TrafficRow(
            role=_ROLES[role], topology=timing.topology, per_token=counts[role],
            scheduled_steps=timing.makespan_steps, lower_bound_steps=timing.lower_bound_steps,
            ecmp_steps=dyn["ecmp"], adaptive_steps=dyn["adaptive"], scheduled_s=timing.seconds,
            dynamic_s=per_step * min(dyn.values()))
        if timing.op != "p2p":  # one point-to-point flow has no load to balance
            row = row.model_copy(update={
                "load_imbalance_ecmp": sims["ecmp"].load_imbalance,
                "load_imbalance_adaptive": sims["adaptive"].load_imbalance})
        lvl = levels.get(timing.level)
        if lvl is not None and lvl.link_bandwidth_bytes_per_s:
            from accelkb.advise.network.advantages import dynamic_seconds
            from accelkb.solver import schedule

            res = schedule(topo, _SOLVER_OP[timing.op], chunks=chunks, demand=demand or None)
            stats = scheduled_stats(res.transfers, res.makespan_steps or 0, topo.unit_links,
                                    topo.links)
            dist = all_distances(topo)
            pairs = ([(0, est.config.tp)] if timing.op == "p2p" else
                     [(a, b) for a in range(topo.endpoints) for b in range(topo.endpoints)
                      if a != b])
            row = row.model_copy(update={
                "chunk_bytes": timing.bytes / chunks,
                "link_bytes_per_s": lvl.link_bandwidth_bytes_per_s,
                "hop_latency_s": lvl.latency_s,
                "hops_per_transfer": sum(dist[a][b] for a, b in pairs) / len(pairs),
                "load_imbalance_scheduled": stats["load_imbalance"] if timing.op != "p2p"
                else None})
            row = row.model_copy(update={"dynamic_transport_s": dynamic_seconds(row)})
        rows.append(row)
    return rows


def _steps(n: float) -> str:
    return f"{n:g} step" + ("" if n == 1 else "s")


def sentence(rows: list[TrafficRow], token_s: float, schedules: Sequence[ScheduleSummary] = ()
             ) -> str:
    """What the schedule buys per token, in one sentence (empty without rows); ``schedules``
    (the report's rack-wide collective) says where contention does arise."""
    if not rows:
        return ""
    sched = sum(r.per_token * r.scheduled_s for r in rows)
    dyn = sum(r.per_token * r.dynamic_s for r in rows)
    parts = ", ".join(f"{r.per_token} {r.role}s on {r.topology} ({_steps(r.scheduled_steps)} "
                      f"scheduled, {_steps(min(r.ecmp_steps, r.adaptive_steps))} dynamic)"
                      for r in rows)
    gain = dyn - sched
    bought = (f"buys {gain * 1e3:.2g} ms ({100 * gain / token_s:.2g} % of a "
              f"{token_s * 1e3:.3g} ms token)" if gain > 1e-3 * token_s else
              f"buys no contention time here ({sched * 1e3:.3g} ms of a {token_s * 1e3:.3g} ms "
              "token either way)")
    where = ""
    wide = [s for s in schedules if s.makespan_steps and s.dynamic_makespan_steps
            and s.dynamic_makespan_steps > s.makespan_steps]
    if wide:
        w = wide[0]
        where = (f"; it pays where traffic contends: an {w.collective} across {w.topology} "
                 f"takes {_steps(w.makespan_steps or 0)} scheduled against "
                 f"{_steps(w.dynamic_makespan_steps or 0)} under dynamic routing")
    return (f"The collision-free network: this layout's per-token traffic ({parts}) takes "
            f"{sched * 1e3:.3g} ms scheduled and {dyn * 1e3:.3g} ms under simulated dynamic "
            f"routing, so scheduling {bought}{where} (handshake and per-packet control savings "
            "are not modelled).")
