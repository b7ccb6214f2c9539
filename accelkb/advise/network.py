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
from accelkb.perf import InferenceEstimate

_ROLES = {"decode_tp_all_reduce": "tensor-parallel all-reduce",
          "decode_pipeline_hop": "pipeline hop"}
_SOLVER_OP = {"all_reduce": "allreduce", "p2p": "traffic"}


def traffic(est: InferenceEstimate, layers: int) -> list[TrafficRow]:
    """The scheduled collectives of ``est``'s decode step against dynamic routing (empty when
    nothing was scheduled or the simulator is not installed)."""
    try:
        from accelkb.perf.netsim import simulate_collective
        from accelkb.solver.schedule.topology import parse_topology
    except ImportError:
        return []
    counts = {"decode_tp_all_reduce": 2 * layers,
              "decode_pipeline_hop": est.config.pp - 1}
    rows = []
    for role, timing in est.collectives.items():
        if role not in _ROLES or timing.source != "schedule" or not timing.makespan_steps:
            continue
        if timing.topology is None or counts[role] <= 0:
            continue
        topo = parse_topology(timing.topology)
        demand = [(0, est.config.tp, timing.chunks or 1)] if timing.op == "p2p" else []
        dyn = {pol: float(simulate_collective(topo, _SOLVER_OP[timing.op], timing.chunks or 1,
                                              policy=pol, demand=demand).makespan_steps)
               for pol in ("ecmp", "adaptive")}
        per_step = timing.seconds / timing.makespan_steps
        rows.append(TrafficRow(
            role=_ROLES[role], topology=timing.topology, per_token=counts[role],
            scheduled_steps=timing.makespan_steps, lower_bound_steps=timing.lower_bound_steps,
            ecmp_steps=dyn["ecmp"], adaptive_steps=dyn["adaptive"], scheduled_s=timing.seconds,
            dynamic_s=per_step * min(dyn.values())))
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
