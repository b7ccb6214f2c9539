"""The serving layout and batch with the least $ or joules per generated token (``advise --goal
cost`` or ``energy``), under an optional per-user speed target.

Every layout is tried (tensor parallel inside the fastest network level, every pipeline depth
up to the layers, pipelined or not), each at the largest batch it holds at once whose
sequences keep the target: a larger batch only spreads the weights' reads over more tokens,
so $ and joules per token fall with it until the batch no longer fits. That batch is found by
bisection (fitting and the per-user speed both fall as the batch grows), so a layout that
holds 248 sequences is priced at 248, not at the 128 a power-of-two grid stops at.

Ranked by generated tokens per second per chip used, prefill counted (chips are priced by the
hour, so this is the least $ per token) or by joules per generated token, prefill counted:
what the cost table then prints. Tried at the workload's precision first; a narrower one only
where no layout at the workload's meets the goal (16-bit weights that no Groq chip holds).
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

from accelkb.advise.baseline import INFER_PRECISIONS, InferenceBaseline, divisors, none_fits
from accelkb.errors import InfeasibleError, InputError
from accelkb.perf import InferenceConfig, InferenceEstimate, ModelSpec, SystemSpec, estimate_inference

#: The largest batch tried: a layout that holds more is priced at this one.
MAX_BATCH = 1024

Goal = Literal["cost", "energy"]


def _key(est: InferenceEstimate, goal: Goal) -> float:
    if goal == "cost":
        return -est.end_to_end_tokens_per_s / est.chips
    return est.end_to_end_joules_per_token or float("inf")


def cheapest_inference_config(model: ModelSpec, system: SystemSpec, prompt_len: int,
                              output_len: int, precision: str | None, goal: Goal,
                              slo: float | None = None) -> InferenceBaseline:
    """The layout and batch with the least $ (``goal`` cost) or joules (energy) per token.

    Raises
    ------
    InfeasibleError
        No layout holds one sequence, or none keeps ``slo`` tokens/s per user (a negative
        answer; the message gives the fastest per user there is).
    InputError
        No layout is valid at all.
    """
    chips, peaks = system.chips, system.chip.peak_flops
    order = [precision] if precision else []
    order += [p for p in INFER_PRECISIONS if p not in order]
    fast = system.levels[0].group_chips
    count = {"tried": 0, "fitted": 0}
    last = {"error": "", "memory": False}
    fastest: list[InferenceEstimate] = []  # the fastest per user, where a target left all out

    def run(cfg: InferenceConfig) -> InferenceEstimate | None:
        count["tried"] += 1
        try:
            est = estimate_inference(model, system, cfg)
        except InputError as exc:
            last["error"] = str(exc)
            last["memory"] = bool(last["memory"]) or isinstance(exc, InfeasibleError)
            return None
        count["fitted"] += 1
        return est

    def keeps(est: InferenceEstimate | None) -> bool:
        return est is not None and (slo is None or est.tokens_per_s_per_user >= slo)

    for prec in order:
        if prec not in peaks:
            continue
        best: tuple[InferenceConfig, InferenceEstimate] | None = None
        for tp in divisors(min(fast, chips)):
            if (model.kv_heads % tp and tp % model.kv_heads) or model.heads % tp or chips % tp:
                continue
            depths = range(1, min(chips // tp, model.layers) + 1)
            for pp, pipelined in itertools.product(depths, (True, False)):
                if pipelined and pp == 1:
                    continue
                layout = dict(tp=tp, pp=pp, pipelined=pipelined, prompt_len=prompt_len,
                              output_len=output_len, precision=prec)
                one = run(_config(layout, 1))
                if one is None or not keeps(one):
                    if one is not None:  # it fits, and is too slow per user even alone
                        fastest[:] = [max([*fastest, one], key=lambda e: e.tokens_per_s_per_user)]
                    continue
                batch, est = _largest(one, lambda b, lay=layout: run(_config(lay, b)), keeps)
                if best is None or _key(est, goal) < _key(best[1], goal):
                    best = (_config(layout, batch), est)
        if best is not None:
            return InferenceBaseline(best[0], best[1], count["tried"], count["fitted"])
    if fastest:  # well-formed, and the answer is no (exit 1)
        raise InfeasibleError(
            f"no inference layout of {model.name} on {system.name} keeps {slo:g} tokens/s per "
            f"user at any batch ({count['fitted']} of {count['tried']} tried fit; the fastest "
            f"per user gives {fastest[0].tokens_per_s_per_user:.3g})")
    raise none_fits("inference", model, system, count["tried"], str(last["error"]),
                    bool(last["memory"]))


def _config(layout: dict[str, Any], batch: int) -> InferenceConfig:
    """The layout at ``batch``, served at once (no queue: a batch that does not fit fails)."""
    return InferenceConfig.model_validate({**layout, "batch": batch})


def _largest(one: InferenceEstimate, estimate: Any, keeps: Any) -> tuple[int, InferenceEstimate]:
    """(batch, estimate) of the largest batch up to :data:`MAX_BATCH` that ``keeps`` (fits at
    once and keeps the target: both fail from some batch on), by bisection from batch 1, which
    keeps (``one``)."""
    top = estimate(MAX_BATCH)
    if keeps(top):
        return MAX_BATCH, top
    good, good_est, bad = 1, one, MAX_BATCH
    while bad - good > 1:
        mid = (good + bad) // 2
        est = estimate(mid)
        if keeps(est):
            good, good_est = mid, est
        else:
            bad = mid
    return good, good_est
