"""The combined plan (issue 27): compatible recommendations applied together as one layout,
re-estimated as a whole; conflicts, constraint breaks and changes that add nothing are left out
with their reason."""

from __future__ import annotations

import pytest

from accelkb.advise import parts
from accelkb.advise.advice import Recommendation
from accelkb.advise.plan.combined import combined_plan
from accelkb.perf.from_kb import model_spec, system_spec
from accelkb.perf.training import TrainingConfig


def _rec(label: str, speedup: float, **change: object) -> Recommendation:
    return Recommendation(optimization=label, label=label, mitigates=["bottleneck-compute"],
                          status="recommended", speedup=speedup, configuration_change=change)


@pytest.fixture(scope="module")
def setting() -> tuple:  # type: ignore[type-arg]
    model, system = model_spec("gpt3-13b"), system_spec("dgx-a100")
    cfg = TrainingConfig(tp=8, pp=1, dp=1, micro_batch=1, global_batch=64, recompute="full",
                         precision="bf16")
    return model, system, cfg, parts.estimate(model, system, cfg)


def _plan(setting: tuple, recs: list[Recommendation], check=None):  # type: ignore[no-untyped-def,type-arg]
    model, system, cfg, base = setting
    return combined_plan(model, system, cfg, base, recs, parts.estimate, parts.key_time,
                         parts.as_estimate, check)


def test_compatible_rows_are_applied_together_and_re_estimated(setting: tuple) -> None:  # type: ignore[type-arg]
    model, system, cfg, base = setting
    recs = [_rec("selective recompute", 1.2, recompute="selective"),
            _rec("overlap", 1.1, dp_overlap=True),
            _rec("full recompute again", 1.05, recompute="none"),  # conflicts with the first
            _rec("tp 3", 1.3, tp=3)]  # broken by the checker, though the best alone
    plan = _plan(setting, recs, check=lambda c: ["tensor-parallel degree divides the heads"]
                 if c.tp == 3 else [])
    assert plan is not None and plan.after is not None
    kept = {x.split(" (")[0] for x in plan.includes}
    change: dict[str, object] = {"recompute": "selective"}
    if "overlap" in kept:
        change["dp_overlap"] = True
    assert "selective recompute" in kept
    together = parts.estimate(model, system, cfg.model_copy(update=change))
    assert plan.after.time_s == pytest.approx(parts.key_time(together), rel=1e-12)
    assert plan.speedup == pytest.approx(parts.key_time(base) / plan.after.time_s)
    assert plan.configuration_change["recompute"] == "selective"
    assert "tp" not in plan.configuration_change
    reasons = " | ".join(plan.excludes)
    assert "tp 3: breaks tensor-parallel degree divides the heads" in reasons
    assert ("full recompute again: conflicts (recompute=none against selective recompute's "
            "recompute=selective)") in reasons
    assert len(plan.includes) + len(plan.excludes) == len(recs)


def test_one_row_is_its_own_plan(setting: tuple) -> None:  # type: ignore[type-arg]
    assert _plan(setting, [_rec("selective recompute", 1.2, recompute="selective")]) is None
