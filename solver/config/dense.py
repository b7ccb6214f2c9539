"""Configure a convolutional network (ResNet-50): data parallel over every chip, so the layout
is the micro-batch and whether the backward pass recomputes the forward one.

The performance module's dense model (:mod:`accelkb.perf.dense`) has no tensor or pipeline
parallelism, so there is nothing for Z3 to search: every micro-batch that divides a chip's share
of the global batch is tried with and without recomputation (the whole domain, hence OPTIMAL,
the same answer Z3 would give), the ones whose working set does not fit are dropped (declared
constraint ``memory-capacity``), and the rest are ranked by step time. Nothing fitting is
UNSATISFIABLE, explained by the smallest working set against the memory it must fit; a global
batch that does not split over the chips by ``batch-divisible``.

Examples
--------
>>> from accelkb.solver.config.model import ConfigRequest
>>> r = configure_dense(ConfigRequest(model="resnet50", system="ipu-pod16", global_batch=1920))
>>> r.status.value, r.best.layout.dp
('OPTIMAL', 16)
"""

from __future__ import annotations

import time
from typing import Any

from accelkb.errors import InputError
from accelkb.perf.api import resolve_system
from accelkb.perf.calibration import load_calibration
from accelkb.perf.dense import estimate_dense_training
from accelkb.perf.energy import run_power
from accelkb.solver.config.instance import DEFAULT_GLOBAL_BATCH, declared_constraints
from accelkb.solver.config.model import ConfigRequest, ConfigResult, Layout, Reason, Scored, Status
from accelkb.solver.config.rank import pareto

METHOD = ("exhaustive over micro-batch x recomputation (a convolutional network runs data "
          "parallel over every chip: no tensor or pipeline layout to search), perf ranks it")


def configure_dense(req: ConfigRequest) -> ConfigResult:
    """The fastest fitting (micro-batch, recomputation) of a convolutional network.

    Raises
    ------
    InputError
        For an unknown name, an inference request or an objective other than time.
    """
    from accelkb.perf.from_kb import default_kb, dense_spec

    t0 = time.monotonic()
    if req.phase != "training" or req.objective not in ("time", "throughput"):
        raise InputError(f"expected a training request with objective time or throughput for "
                         f"the convolutional network {req.model}, got {req.phase}, "
                         f"{req.objective}")
    kb = default_kb()
    work, system = dense_spec(req.model, kb=kb), resolve_system(req.system, req.chips)
    chips = system.chips  # default batch: the solver's 512, rounded up to split over the chips
    gbs = req.global_batch or chips * -(-DEFAULT_GLOBAL_BATCH // chips)
    prec = (req.constraints.precisions or ("fp16",))[0]
    info = declared_constraints(kb)
    head: dict[str, Any] = {"model": req.model, "system": system.name, "phase": "training",
            "chips_available": chips, "objective": req.objective, "method": METHOD}
    if gbs % chips:
        return ConfigResult(status=Status.UNSATISFIABLE, explanation=[Reason(
            constraint=info["batch-divisible"], message=f"global batch {gbs} does not split "
            f"over {chips} chips (data parallel over every chip)",
            numbers={"global_batch": gbs, "chips": chips})],
            message=f"global batch {gbs} does not split over {chips} chips",
            solve_time_s=time.monotonic() - t0, **head)
    per_chip, cal = gbs // chips, load_calibration()
    scored: list[Scored] = []
    first_error = ""
    for rc in (True, False):
        for mb in (m for m in range(1, per_chip + 1) if per_chip % m == 0):
            try:
                est = estimate_dense_training(work, system, chips, gbs, cal, prec, rc, mb)
            except InputError as exc:
                first_error = first_error or str(exc)
                continue
            power, _ = run_power(system, chips, est.activity, cal)
            held = est.working_set_bytes or 0.0
            scored.append(Scored(
                layout=Layout(tp=1, pp=1, dp=chips, micro_batch=mb,
                              recompute="full" if rc else "none", precision=prec),
                chips=chips, time_s=est.step_time_s, tokens_per_s=est.samples_per_s,
                joules_per_token=power / est.samples_per_s if power else None,
                memory_per_chip_bytes=held, memory_by_tier_bytes={"working set": held},
                objective_value=est.step_time_s))
    used = [info["memory-capacity"].iri, info["batch-divisible"].iri]
    if not scored:
        return ConfigResult(status=Status.UNSATISFIABLE, explanation=[Reason(
            constraint=info["memory-capacity"], message=first_error.splitlines()[0],
            numbers={})], message=first_error.splitlines()[0], constraints_used=used,
            solve_time_s=time.monotonic() - t0, **head)
    ranked = sorted(scored, key=lambda s: (s.time_s, s.layout.text()))
    return ConfigResult(status=Status.OPTIMAL, best=ranked[0], pareto=pareto(ranked),
                        feasible_count=len(scored), constraints_used=used,
                        message=f"{len(scored)} feasible layouts; best "
                        f"{ranked[0].layout.text()} (its rate in images per second)",
                        solve_time_s=time.monotonic() - t0, **head)
