"""One combined plan: the compatible recommendations applied together as one layout (issue 27).

Recommendations are checked one at a time against the baseline, so their speed-ups do not
multiply: the solver's layout may already hold ZeRO, and two rows may set the same field to
different values. The plan takes the recommended rows in order of checked gain and adds each
one's change to the layout when

- it sets no field that an earlier, kept row set to another value (else: a conflict, named);
- the layout still meets every declared constraint (the configuration solver's checker);
- the performance model can estimate it, and it is faster than the plan without it.

The plan's gain is that of the final layout, re-estimated as a whole, and it says what it
includes and what it leaves out, and why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelkb.advise.advice import Recommendation
from accelkb.errors import InputError
from accelkb.perf.inference import InferenceConfig, InferenceEstimate
from accelkb.perf.specs import ModelSpec, SystemSpec
from accelkb.perf.training import TrainingConfig, TrainingEstimate

Config = TrainingConfig | InferenceConfig
Est = TrainingEstimate | InferenceEstimate
#: Gains below this are noise of the model, not a reason to keep a change.
MIN_GAIN = 1.005


def combined_plan(model: ModelSpec, system: SystemSpec, cfg: Config, base: Est,
                  recs: list[Recommendation],
                  estimate: Callable[[ModelSpec, SystemSpec, Config], Est],
                  key_time: Callable[[Est], float],
                  as_estimate: Callable[[Est], Any],
                  check: Callable[[Config], list[str]] | None = None) -> Recommendation | None:
    """The recommended rows' changes applied together, or None with fewer than two of them
    (one row is its own plan)."""
    rows = sorted((r for r in recs if r.status == "recommended" and r.configuration_change),
                  key=lambda r: -(r.speedup or 0.0))
    if len(rows) < 2:
        return None
    current, current_est = cfg, base
    set_by: dict[str, tuple[Any, str]] = {}
    includes: list[str] = []
    excludes: list[str] = []
    for r in rows:
        change = r.configuration_change
        clash = [f"{k}={v} against {set_by[k][1]}'s {k}={set_by[k][0]}"
                 for k, v in change.items() if k in set_by and set_by[k][0] != v]
        if clash:
            excludes.append(f"{r.label}: conflicts ({'; '.join(clash)})")
            continue
        try:
            trial = type(cfg).model_validate({**current.model_dump(), **change})
        except ValueError as exc:
            excludes.append(f"{r.label}: not a valid layout with the others "
                            f"({str(exc).splitlines()[0]})")
            continue
        broken = check(trial) if check is not None else []
        if broken:
            excludes.append(f"{r.label}: breaks {', '.join(broken[:2])} with the others")
            continue
        try:
            trial_est = estimate(model, system, trial)
        except InputError as exc:
            excludes.append(f"{r.label}: does not fit with the others "
                            f"({str(exc).splitlines()[0]})")
            continue
        gain = key_time(current_est) / key_time(trial_est)
        if gain <= MIN_GAIN:
            excludes.append(f"{r.label}: adds {gain:.3f}x on top of the rows before it")
            continue
        current, current_est = trial, trial_est
        for k, v in change.items():
            set_by[k] = (v, r.label)
        includes.append(f"{r.label} ({gain:.3f}x on top of the rows before it)")
    if not includes:
        return None
    speedup = key_time(base) / key_time(current_est)
    changed = {k: v for k, v in current.model_dump().items() if cfg.model_dump().get(k) != v}
    summary = (f"{len(includes)} of {len(rows)} recommended rows applied together: "
               f"{speedup:.3f}x the baseline, re-estimated as one layout")
    return Recommendation(
        optimization="combined-plan", label="combined plan (the compatible recommendations "
        "together)", mitigates=sorted({m for r in rows for m in r.mitigates}),
        status="recommended", speedup=speedup, before=as_estimate(base),
        after=as_estimate(current_est), configuration_change=changed,
        solver_check=summary + ("; every declared constraint met (configuration solver's "
                                "checker)" if check is not None else ""),
        includes=includes, excludes=excludes, derivation=[summary])
