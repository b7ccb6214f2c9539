"""Rank feasible layouts with the performance module: objective and Pareto front.

Objectives (smaller is better after sign): ``time`` = step time (training) or decode time per
token (inference); ``throughput`` = -tokens/s; ``energy`` = J/token; ``chips`` = (chips used,
then time). Ties break on the layout text so the answer is stable.

Examples
--------
>>> pareto_indices([(1.0, 5.0, 8), (2.0, 4.0, 8), (3.0, 6.0, 8)])
[0, 1]
"""

from __future__ import annotations

from accelkb.errors import InputError
from accelkb.solver.config.instance import Instance
from accelkb.solver.config.model import Layout, Scored
from accelkb.solver.config.theory import estimate


def score(inst: Instance, lay: Layout) -> Scored | None:
    """The perf estimate of ``lay`` as a :class:`Scored`, None if perf refuses it."""
    try:
        t, tok, jpt, tiers = estimate(inst, lay)
    except InputError:
        return None
    obj = inst.request.objective
    value = {"time": t, "throughput": tok, "energy": jpt if jpt is not None else float("inf"),
             "chips": float(lay.chips)}[obj]
    return Scored(layout=lay, chips=lay.chips, time_s=t, tokens_per_s=tok, joules_per_token=jpt,
                  memory_per_chip_bytes=float(sum(tiers.values())),
                  memory_by_tier_bytes=dict(sorted(tiers.items())), objective_value=value)


def key(inst: Instance, s: Scored) -> tuple[float, float, str]:
    """Sort key: objective (minimised), then time, then the layout text."""
    obj = inst.request.objective
    primary = -s.objective_value if obj == "throughput" else s.objective_value
    return (primary, s.time_s, s.layout.text())


def rank(inst: Instance, layouts: list[Layout]) -> list[Scored]:
    """Scored layouts, best first (perf-refused layouts dropped)."""
    scored = [s for lay in layouts if (s := score(inst, lay)) is not None]
    return sorted(scored, key=lambda s: key(inst, s))


def pareto_indices(points: list[tuple[float, float, int]]) -> list[int]:
    """Indices of points not dominated in every coordinate (all minimised)."""
    keep = []
    for i, p in enumerate(points):
        dominated = any(all(q[k] <= p[k] for k in range(3)) and q != p
                        for q in points)
        if not dominated:
            keep.append(i)
    return keep


def pareto(scored: list[Scored]) -> list[Scored]:
    """Layouts not dominated in (time, memory per chip, chips), sorted by time; one per point."""
    seen: dict[tuple[float, float, int], Scored] = {}
    for s in scored:
        seen.setdefault((s.time_s, s.memory_per_chip_bytes, s.chips), s)
    pts = list(seen)
    return sorted((seen[pts[i]] for i in pareto_indices(pts)), key=lambda s: s.time_s)
