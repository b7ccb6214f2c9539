"""Before/after check: the quantitative effect of one candidate optimization.

The advise step calls :func:`compare_before_after` for every recommendation: the same model is
estimated under the baseline and under the candidate (configuration changes, another system or
chip count), and the result carries both estimates plus the deltas of time, memory per tier,
throughput and energy.

Examples
--------
>>> c = Candidate(name="selective recompute", changes={"recompute": "selective"})
>>> c.changes["recompute"]
'selective'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError

from .api import (
    config,
    estimate_inference,
    estimate_training,
    resize_system,
    resolve_model,
    resolve_system,
)
from .calibration import Calibration
from .inference import InferenceConfig, InferenceEstimate
from .specs import ModelSpec, SystemSpec
from .training import TrainingConfig, TrainingEstimate


class Candidate(BaseModel):
    """A candidate optimization expressed as changes to the configuration or the system."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="short name of the optimization")
    changes: dict[str, Any] = Field(default_factory=dict, description="configuration fields to "
                                    "change (same keys as --parallel, e.g. recompute, sp, zero)")
    system: SystemSpec | str | None = Field(default=None, description="another system to run on "
                                            "(spec or knowledge-base name); None keeps it")
    chips: int | None = Field(default=None, ge=1, description="resize the system to this many "
                              "chips; None keeps it")


class BeforeAfter(BaseModel):
    """Both estimates and their differences (after minus before; ratios after / before)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate: Candidate = Field(description="the optimization checked")
    kind: Literal["training", "inference"] = Field(description="what was estimated")
    before: TrainingEstimate | InferenceEstimate = Field(description="baseline estimate")
    after: TrainingEstimate | InferenceEstimate = Field(description="estimate with the candidate")
    time_s_delta: float = Field(description="step time (training) or decode time per token "
                                "(inference) after minus before, s")
    speedup: float = Field(description="before time / after time (> 1 is faster)")
    tokens_per_s_delta: float = Field(description="throughput after minus before, tokens/s")
    memory_per_tier_delta_bytes: dict[str, float] = Field(description="bytes per chip per tier, "
                                                          "after minus before")
    energy_per_token_delta_j: float | None = Field(description="joules per token after minus "
                                                   "before (None if power unknown)")
    improves: bool = Field(description="True when the candidate is faster and fits")


def _time(e: TrainingEstimate | InferenceEstimate) -> float:
    return e.step_time_s if isinstance(e, TrainingEstimate) else e.decode_s_per_token


def compare_before_after(
    candidate: Candidate | dict[str, Any],
    model: ModelSpec | str | Path,
    system: SystemSpec | str | Path,
    parallel: TrainingConfig | InferenceConfig | dict[str, Any] | str | None = None,
    kind: Literal["training", "inference"] = "training",
    chips: int | None = None,
    calibration: Calibration | None = None,
) -> BeforeAfter:
    """Estimate the baseline and the candidate and return both with the deltas.

    Raises
    ------
    InputError
        If the baseline is invalid or does not fit; a candidate that does not fit is also an
        InputError naming the candidate.

    Examples
    --------
    >>> from accelkb.perf.specs import (ChipSpec, MemoryTierSpec, NetworkLevelSpec, ModelSpec,
    ...                                 SystemSpec)
    >>> chip = ChipSpec(name="g", peak_flops={"bf16": 3e14}, tdp_watts=400.0, memory_tiers=[
    ...     MemoryTierSpec(kind="hbm", capacity_bytes=80e9, bandwidth_bytes_per_s=2e12)])
    >>> sysm = SystemSpec(name="n", chip=chip, chips=8, levels=[NetworkLevelSpec(name="nv",
    ...     group_chips=8, bandwidth_bytes_per_s_per_chip=3e11, latency_s=2e-6, topology="switch")])
    >>> m = ModelSpec(name="m", layers=24, hidden=2048, heads=16, kv_heads=16, ffn_hidden=8192,
    ...               vocab=50000, seq_len=2048, gated_mlp=False)
    >>> r = compare_before_after({"name": "sel", "changes": {"recompute": "selective"}}, m, sysm,
    ...                          "tp=8,mb=1,gbs=8,recompute=full")
    >>> r.speedup > 1
    True
    """
    cand = candidate if isinstance(candidate, Candidate) else Candidate.model_validate(candidate)
    m = resolve_model(model)
    s = resolve_system(system, chips)
    cls = TrainingConfig if kind == "training" else InferenceConfig
    base_cfg = config(cls, parallel)
    new_cfg = config(cls, {**base_cfg.model_dump(), **_config_changes(cand.changes)})
    s2 = s if cand.system is None else resolve_system(cand.system)
    if cand.chips is not None:
        s2 = resize_system(s2, cand.chips)
    before: TrainingEstimate | InferenceEstimate
    after: TrainingEstimate | InferenceEstimate
    if kind == "training":
        before = estimate_training(m, s, base_cfg, calibration=calibration)
        try:
            after = estimate_training(m, s2, new_cfg, calibration=calibration)
        except InputError as exc:
            raise InputError(f"candidate '{cand.name}': {exc}") from None
    else:
        before = estimate_inference(m, s, base_cfg, calibration=calibration)
        try:
            after = estimate_inference(m, s2, new_cfg, calibration=calibration)
        except InputError as exc:
            raise InputError(f"candidate '{cand.name}': {exc}") from None
    tiers = sorted(set(before.memory_per_chip_bytes) | set(after.memory_per_chip_bytes))
    mem = {t: after.memory_per_chip_bytes.get(t, 0.0) - before.memory_per_chip_bytes.get(t, 0.0)
           for t in tiers}
    e0, e1 = before.joules_per_token, after.joules_per_token
    t0, t1 = _time(before), _time(after)
    return BeforeAfter(
        candidate=cand, kind=kind, before=before, after=after, time_s_delta=t1 - t0,
        speedup=t0 / t1, tokens_per_s_delta=after.tokens_per_s - before.tokens_per_s,
        memory_per_tier_delta_bytes=mem,
        energy_per_token_delta_j=None if e0 is None or e1 is None else e1 - e0,
        improves=t1 < t0,
    )


def _config_changes(changes: dict[str, Any]) -> dict[str, Any]:
    from .api import _ALIASES

    out = {}
    for k, v in changes.items():
        if k not in _ALIASES:
            raise InputError(f"expected candidate changes among {sorted(_ALIASES)}, got {k!r}")
        out[_ALIASES[k]] = v
    return out
