"""The configuration solver's view for a report: the Z3-proven best layout under the same
constraints, re-estimated by the performance model, as a recommendation when it beats the
baseline (:func:`accelkb.solver.configure`)."""

from __future__ import annotations

from collections.abc import Callable

from accelkb.advise.advice import Recommendation
from accelkb.advise.parts import as_estimate, estimate, key_time
from accelkb.errors import InputError
from accelkb.perf import (
    InferenceConfig,
    InferenceEstimate,
    ModelSpec,
    SystemSpec,
    TrainingConfig,
    TrainingEstimate,
)

#: Solver time inside one advise run; a timeout gives FEASIBLE (best so far), never "infeasible".
TIMEOUT_S = 8.0
_OBJECTIVE = {"time": "time", "latency": "time", "throughput": "throughput", "energy": "energy",
              "cost": "time"}


def solver_recommendation(model: ModelSpec, system: SystemSpec, system_name: str,
                          cfg: TrainingConfig | InferenceConfig,
                          base: TrainingEstimate | InferenceEstimate, goal: str
                          ) -> tuple[Recommendation | None, str]:
    """(a recommendation if the solver's layout is faster, a one-line summary of what it said)."""
    try:
        from accelkb.solver import configure
    except ImportError:
        return None, "configuration solver not installed"
    if not isinstance(cfg, TrainingConfig):  # the solver already searched the baseline
        return None, ("Z3 configuration solver: searched the inference baseline's layout itself "
                      "(see the baseline's note), so it makes no recommendation of its own"
                      if goal in ("time", "latency", "throughput") else
                      "Z3 configuration solver: not used for a cost or energy goal, whose "
                      "baseline is the search over batches and layouts (see the baseline's note)")
    try:
        res = configure(model=model.name, system=system_name, phase="training", chips=system.chips,
                        global_batch=cfg.global_batch, seq_len=model.seq_len,
                        objective=_OBJECTIVE.get(goal, "time"), timeout_s=TIMEOUT_S)
    except InputError as exc:
        return None, f"configuration solver: {str(exc).splitlines()[0]}"
    status = res.status.value
    if res.best is None:
        why = "; ".join(r.message for r in res.explanation[:2]) if res.explanation else res.message
        return None, f"Z3 configuration solver: {status}: {why}"[:400]
    lay = res.best.layout
    new = TrainingConfig.model_validate({
        **cfg.model_dump(), "tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "micro_batch": lay.micro_batch,
        "interleave": lay.interleave, "recompute": lay.recompute,
        "sequence_parallel": lay.sequence_parallel, "zero": lay.zero,
        "offload_optimizer": lay.offload_optimizer,
        "precision": lay.precision if lay.precision in ("fp32", "tf32", "fp16", "bf16", "fp8")
        else cfg.precision})
    try:
        after = estimate(model, system, new)
    except InputError as exc:
        return None, f"Z3 configuration solver: {status}, but its layout failed re-estimation: {exc}"
    speedup = key_time(base) / key_time(after)
    summary = (f"Z3 configuration solver: {status} over {res.feasible_count} feasible layouts in "
               f"{res.solve_time_s:.1f} s; best {lay.text()} ({speedup:.3f}x the baseline)")
    if speedup <= 1.005:
        return None, summary
    changed = {k: v for k, v in new.model_dump().items() if cfg.model_dump().get(k) != v}
    rec = Recommendation(
        optimization="solver-optimal-layout", label="layout chosen by the Z3 configuration solver",
        mitigates=[], status="recommended", speedup=speedup, before=as_estimate(base),
        after=as_estimate(after), configuration_change=changed, solver_check=summary,
        derivation=[summary, f"constraints encoded: {len(res.constraints_used)} declared "
                    "constraints of the knowledge base, tracked by IRI"])
    return rec, summary


def constraint_checker(model: ModelSpec, system: SystemSpec, system_name: str,
                       cfg: TrainingConfig | InferenceConfig
                       ) -> Callable[[TrainingConfig | InferenceConfig], list[str]] | None:
    """A function listing the declared constraints a layout breaks (the solver's own checker,
    without Z3), or None when the solver cannot build an instance for this pair."""
    if not isinstance(cfg, TrainingConfig):
        return None
    try:
        from accelkb.solver.config.check import check_layout
        from accelkb.solver.config.instance import build_instance
        from accelkb.solver.config.model import ConfigRequest, Layout

        inst = build_instance(ConfigRequest(model=model.name, system=system_name, phase="training",
                                            chips=system.chips, global_batch=cfg.global_batch,
                                            seq_len=model.seq_len))
    except (ImportError, InputError, ValueError):
        return None

    def check(c: TrainingConfig | InferenceConfig) -> list[str]:
        if not isinstance(c, TrainingConfig):
            return []
        lay = Layout(tp=c.tp, pp=c.pp, dp=c.dp or system.chips // (c.tp * c.pp),
                     micro_batch=c.micro_batch, interleave=c.interleave, recompute=c.recompute,
                     sequence_parallel=c.sequence_parallel, zero=c.zero, precision=c.precision,
                     offload_optimizer=c.offload_optimizer)
        out = []
        for key, msg in check_layout(inst, lay):
            info = inst.constraints.get(key)
            out.append(f"{info.title if info else key} ({info.iri if info else key}): {msg}")
        return out

    return check


def inference_baseline(model: ModelSpec, system: SystemSpec, system_name: str, prompt: int,
                       output: int, goal: str, grid: tuple[InferenceConfig, InferenceEstimate, str]
                       ) -> tuple[InferenceConfig, InferenceEstimate, str]:
    """The better of the grid's inference layout and the configuration solver's (every
    precision the chip supports, every chip count up to the system's), re-estimated at the
    workload's prompt and output lengths: the same search for every system compared."""
    if goal not in ("time", "latency", "throughput"):
        return grid
    try:
        from accelkb.solver import configure
    except ImportError:
        return grid
    cfg0, est0, note0 = grid
    try:
        res = configure(model=model.name, system=system_name, phase="inference",
                        chips=system.chips, prompt_len=prompt, output_len=output,
                        batches=(1, 8, 32, 64) if goal == "throughput" else (1,),
                        objective=_OBJECTIVE[goal], timeout_s=TIMEOUT_S)
    except InputError as exc:
        return cfg0, est0, f"{note0}; configuration solver: {str(exc).splitlines()[0]}"
    if res.best is None or res.best.layout.dp != 1:
        why = "" if res.best is None else ": its best layout has replicas"
        return cfg0, est0, f"{note0}; Z3 configuration solver: {res.status.value}{why}"
    lay = res.best.layout
    cfg = InferenceConfig.model_validate(dict(
        tp=lay.tp, pp=lay.pp, batch=lay.batch, prompt_len=prompt, output_len=output,
        precision=lay.precision, pipelined=lay.pipelined, queue_when_full=True))
    try:
        est = estimate(model, system, cfg)
    except InputError as exc:
        return cfg0, est0, f"{note0}; the solver's layout failed re-estimation: {exc}"
    if not isinstance(est, InferenceEstimate):  # an inference config gives one
        return grid
    said = (f"Z3 configuration solver ({res.status.value} over {res.feasible_count} feasible "
            f"layouts, every precision the chip supports): tp={lay.tp}, pp={lay.pp}, "
            f"{lay.precision.upper()} on {est.chips} of {system.chips} chips")
    def key(e: InferenceEstimate) -> float:
        return -e.tokens_per_s if goal == "throughput" else e.decode_s_per_token

    if key(est) < key(est0) - 1e-3 * abs(key(est0)):
        return cfg, est, f"{said}, faster than the grid's best ({note0})"
    return cfg0, est0, f"{note0}; the {said} is not faster"
