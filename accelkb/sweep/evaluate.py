"""Solve one group of sweep points: one Z3 enumeration, then each point's best layout.

The group's instance is built as ``accelkb configure`` builds it (the precisions the points ask
for added to its domain), with the what-if applied to the system; Z3 enumerates its feasible
set once (:func:`accelkb.solver.config.search.feasible_set`) and the performance module scores
every layout once. Each point then keeps the layouts of its precision that meet its latency
target and takes the best by its goal (time and latency: time per step or token; throughput:
tokens/s; energy: J/token; cost: chip-seconds per token, which a per-chip-hour price turns
into dollars). The best layout is estimated again with its interval and priced.

Outcomes: OPTIMAL when the enumeration completed, FEASIBLE when the deadline cut it short and
a layout was found, UNSATISFIABLE with the reason (the solver's minimal set of constraints in
domain words, or the precision or target that no feasible layout meets), UNKNOWN when the
deadline passed first, ERROR when the instance cannot be built. A timeout is never
"infeasible".
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
from typing import Any

from accelkb.errors import InputError
from accelkb.perf import InferenceConfig
from accelkb.perf import inference as perf_inference
from accelkb.perf import training as perf_training
from accelkb.perf.uncertainty import INFERENCE_FIGURES, interval
from accelkb.solver.config.explain import render, shrink
from accelkb.solver.config.instance import Instance, build_instance
from accelkb.solver.config.model import ConfigRequest, Scored, UserConstraints
from accelkb.solver.config.rank import rank
from accelkb.solver.config.search import feasible_set
from accelkb.solver.config.theory import training_config
from accelkb.sweep import whatif
from accelkb.sweep.grid import Point
from accelkb.sweep.spec import SweepSpec

#: Every column of a result row, in order. Only ``*_seconds`` and ``worker`` vary between runs.
COLUMNS = (
    "spec_hash", "point_id", "model", "system", "chips", "phase", "precision", "goal",
    "latency_target", "whatif", "whatif_value", "status", "reason", "feasible_layouts",
    "layout", "chips_used", "tp", "pp", "dp", "batch", "layout_precision",
    "time_s", "time_s_low", "time_s_high", "tokens_per_s", "tokens_per_s_low",
    "tokens_per_s_high", "tokens_per_s_per_user", "tokens_per_s_per_user_low",
    "tokens_per_s_per_user_high", "ttft_s", "ttft_s_low", "ttft_s_high", "joules_per_token",
    "tokens_per_joule", "power_w", "usd_per_million_tokens", "usd_per_million_tokens_low",
    "usd_per_million_tokens_high", "interval_basis", "solve_seconds", "estimate_seconds",
    "worker")


def _row(spec_hash: str, p: Point, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(spec_hash=spec_hash, point_id=p.ident(), **p.model_dump(), **values)
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return {k: None if v == "" else v for k, v in row.items()}  # one "empty" in CSV and Parquet


def _goal_key(goal: str, s: Scored) -> tuple[float, float, str]:
    text = s.layout.text()
    if goal == "throughput":
        return (-s.tokens_per_s, s.time_s, text)
    if goal == "energy":
        return (s.joules_per_token if s.joules_per_token is not None else float("inf"),
                s.time_s, text)
    if goal == "cost":
        return (s.chips / s.tokens_per_s if s.tokens_per_s > 0 else float("inf"), s.time_s,
                text)
    return (s.time_s, s.joules_per_token or 0.0, text)


def _instance(p: Point, spec: SweepSpec, precisions: tuple[str, ...], kb: Any) -> Instance:
    req = ConfigRequest(
        model=p.model, system=p.system, phase=p.phase,  # type: ignore[arg-type]
        chips=p.chips, global_batch=spec.global_batch, prompt_len=spec.prompt_len,
        output_len=spec.output_len, objective="time", timeout_s=spec.timeout_s,
        constraints=UserConstraints(precisions=precisions or None))  # type: ignore[arg-type]
    inst = build_instance(req, kb)
    if p.whatif:
        inst = dataclasses.replace(inst, system=whatif.apply(inst.system, p.whatif,
                                                            p.whatif_value))
    return inst


def solve_group(pts: list[Point], spec: SweepSpec, kb: Any) -> list[dict[str, Any]]:
    """One row per point of ``pts`` (points of one :meth:`Point.group`), in their order."""
    digest = spec.digest()
    p0 = pts[0]
    t0 = time.perf_counter()
    wanted = tuple(sorted({p.precision for p in pts if p.precision != "best"}))
    try:
        inst = _instance(p0, spec, wanted, kb)
    except InputError as exc:
        return [_row(digest, p, status="ERROR", reason=str(exc).splitlines()[0],
                     solve_seconds=time.perf_counter() - t0, estimate_seconds=0.0) for p in pts]
    out, _ = feasible_set(inst, spec.timeout_s)
    if out.state == "unknown":
        return [_row(digest, p, status="UNKNOWN", reason=f"no answer within {spec.timeout_s} s",
                     solve_seconds=time.perf_counter() - t0, estimate_seconds=0.0) for p in pts]
    if out.state == "unsat":
        mus, _ = shrink(inst, out, time.monotonic() + spec.timeout_s)
        why = "; ".join(r.message for r in render(inst, mus))
        return [_row(digest, p, status="UNSATISFIABLE", reason=why, feasible_layouts=0,
                     solve_seconds=time.perf_counter() - t0, estimate_seconds=0.0) for p in pts]
    scored = rank(inst, out.layouts)
    solve_s = time.perf_counter() - t0
    complete = out.state == "sat"
    rows = []
    for p in pts:
        t1 = time.perf_counter()
        rows.append(_point(digest, p, inst, scored, complete, kb,
                           feasible_layouts=len(out.layouts), solve_seconds=solve_s / len(pts))
                    | {"estimate_seconds": time.perf_counter() - t1})
    return rows


def _point(digest: str, p: Point, inst: Instance, scored: list[Scored], complete: bool, kb: Any,
           **common: Any) -> dict[str, Any]:
    peaks = inst.system.chip.peak_flops
    if p.precision != "best" and p.precision not in peaks:
        return _row(digest, p, status="UNSATISFIABLE", reason=f"{inst.system.chip.name} has no "
                    f"{p.precision} peak in the knowledge base", **common)
    cands = [s for s in scored if (p.precision == "best" and s.layout.precision in peaks)
             or s.layout.precision == p.precision]
    if p.latency_target is not None and p.phase == "inference":
        fast = [s for s in cands if s.time_s > 0 and 1.0 / s.time_s >= p.latency_target]
        if not fast and cands:
            best_user = max(1.0 / s.time_s for s in cands if s.time_s > 0)
            return _row(digest, p, status="UNSATISFIABLE" if complete else "UNKNOWN",
                        reason=f"no feasible layout keeps {p.latency_target:g} tokens/s per "
                        f"user (the fastest keeps {best_user:.3g})", **common)
        cands = fast
    if not cands:
        return _row(digest, p, status="UNSATISFIABLE" if complete else "UNKNOWN",
                    reason=f"no feasible layout at {p.precision}", **common)
    best = min(cands, key=lambda s: _goal_key(p.goal, s))
    return _row(digest, p, status="OPTIMAL" if complete else "FEASIBLE", reason="",
                **common, **_figures(p, inst, best, kb))


def _figures(p: Point, inst: Instance, best: Scored, kb: Any) -> dict[str, Any]:
    """The best layout's headline figures with their intervals, and its price."""
    lay = best.layout
    vendor = inst.system.chip.vendor
    out: dict[str, Any] = {"layout": lay.text(), "chips_used": best.chips, "tp": lay.tp,
                           "pp": lay.pp, "dp": lay.dp, "batch": lay.batch,
                           "layout_precision": lay.precision}
    figures: dict[str, tuple[float | None, str, str]]
    if inst.training:
        est: Any = perf_training.estimate(inst.model, inst.system,
                                          training_config(lay, inst.global_batch,
                                                          fused_attention=inst.fused_attention),
                                          inst.calibration)
        figures = {"time_s": (est.step_time_s, "training", "time"),
                   "tokens_per_s": (est.tokens_per_s, "training", "rate")}
        rate = est.tokens_per_s
    else:
        cfg = InferenceConfig.model_validate(dict(
            tp=lay.tp, pp=lay.pp, batch=lay.batch, prompt_len=inst.request.prompt_len,
            output_len=inst.request.output_len, precision=lay.precision,
            pipelined=lay.pipelined))
        est = perf_inference.estimate(inst.model, inst.system, cfg, inst.calibration)
        figures = {"time_s": (est.decode_s_per_token, *INFERENCE_FIGURES["decode_s_per_token"]),
                   "tokens_per_s": (est.tokens_per_s * lay.dp,
                                    *INFERENCE_FIGURES["tokens_per_s"]),
                   "tokens_per_s_per_user": (est.tokens_per_s_per_user,
                                             *INFERENCE_FIGURES["tokens_per_s_per_user"]),
                   "ttft_s": (est.ttft_s, *INFERENCE_FIGURES["ttft_s"])}
        rate = est.end_to_end_tokens_per_s
    bases = []
    for key, (value, regime, sense) in figures.items():
        out[key] = value
        if value:
            iv = interval(float(value), sense, vendor, regime)
            out[f"{key}_low"], out[f"{key}_high"] = iv.low, iv.high
            bases.append(iv.basis)
    out["interval_basis"] = "; ".join(dict.fromkeys(bases))
    jpt = est.joules_per_token
    out.update(joules_per_token=jpt, tokens_per_joule=1.0 / jpt if jpt else None,
               power_w=est.power_w)
    out.update(_price(p, est, rate, kb))
    return out


def _price(p: Point, est: Any, rate: float, kb: Any) -> dict[str, Any]:
    """$ per million tokens at the system's price (None where it has none); a what-if is
    priced like the unchanged system."""
    from accelkb.perf.cost.estimate import cost_of

    data = est.model_dump()
    data["end_to_end_tokens_per_s"] = rate
    try:
        rep = cost_of(data, p.phase, p.system, est.chips, kb=kb)
    except InputError:
        return {}
    fig = rep.usd_per_million_tokens
    return {"usd_per_million_tokens": fig.usd, "usd_per_million_tokens_low": fig.low,
            "usd_per_million_tokens_high": fig.high}
