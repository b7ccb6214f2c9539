"""How sure an estimate is: a range on each headline figure, and what it depends on most.

The **interval** comes from the validation residuals of the chip's vendor in the figure's
regime (``perf/data/residuals.json``, see :mod:`accelkb.perf.validation.residuals`; its
measured rows alone where it has three or more, else its vendor claims too): with 10 or more
rows, the 5th to 95th percentile of ``ln(measured / predicted)``; with 3 to 9, their extremes
widened by 20 %; with fewer, no rows of that vendor speak for the figure, and the
range is twice the 95th percentile of |residual| over every measured row of every vendor. The
range always holds the estimate itself, and its ``basis`` says which rule and rows it used.

The **sensitivity** re-runs the estimate with each calibration constant and each hardware fact
the estimate reads (peak FLOP/s, the measured maximum achievable matmul fraction of it where the
chip has one, each memory tier's bandwidth, each network level's bandwidth and latency) at 50 % and
150 %, and lists the three that move the figure most.

Examples
--------
>>> iv = interval(10.0, "time", "nobody", "training", {"pooled_abs_q95": 0.5, "groups": {}})
>>> round(iv.low, 3), round(iv.high, 3)
(3.679, 27.183)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError

from .calibration import Calibration
from .specs import SystemSpec

#: Headline figures: name -> (regime, "time" or "rate"). Training figures are all "training".
TRAINING_FIGURES = {"step_time_s": "time", "tokens_per_s": "rate", "time_to_train_s": "time"}
INFERENCE_FIGURES = {"ttft_s": ("prefill", "time"),
                     "decode_s_per_token": ("decode", "time"),
                     "tokens_per_s_per_user": ("decode", "rate"),
                     "tokens_per_s": ("decode", "rate"),
                     "request_latency_s": ("inference", "time")}
FEW_ROWS_MARGIN = math.log(1.2)


class Interval(BaseModel):
    """Where the measured value is expected, with the rule and rows that say so."""

    model_config = ConfigDict(frozen=True)
    low: float = Field(description="lower end, in the figure's unit")
    high: float = Field(description="upper end, in the figure's unit")
    basis: str = Field(description="which validation rows and rule give the range")


def bounded(iv: Interval, least: float | None, most: float | None) -> Interval:
    """``iv`` kept within a physical bound (``least``, ``most``; None: no bound), saying so.

    >>> bounded(Interval(low=1.0, high=9.0, basis="rows"), 2.0, None).low
    2.0
    """
    low = iv.low if least is None else max(iv.low, least)
    high = iv.high if most is None else min(iv.high, most)
    if (low, high) == (iv.low, iv.high):
        return iv
    return Interval(low=low, high=max(low, high), basis=iv.basis + "; cut at the weight-read "
                    "floor (every weight read once per token at peak bandwidth)")


class Sensitivity(BaseModel):
    """The figure with one constant or fact at half and at one and a half times its value."""

    model_config = ConfigDict(frozen=True)
    name: str = Field(description="the constant or fact varied")
    at_minus_50: float | None = Field(description="the figure with it at 50 % (None: refused)")
    at_plus_50: float | None = Field(description="the figure with it at 150 % (efficiencies "
                                     "capped at 1; None: refused)")


class Uncertainty(BaseModel):
    """A headline figure's interval and its three strongest dependencies."""

    model_config = ConfigDict(frozen=True)
    interval: Interval
    sensitivity: list[Sensitivity]


class WithUncertainty(BaseModel):
    """The fields an estimate gets when its uncertainty is asked for (training and inference
    estimates both derive from this)."""

    uncertainty: dict[str, Uncertainty] | None = Field(
        default=None, description="per headline figure: its interval (from the validation "
        "residuals of the chip's vendor and regime) and the three constants or facts it "
        "depends on most; None unless asked for (accelkb.perf.uncertainty)")
    foreign_constants: dict[str, list[str]] | None = Field(
        default=None, description="calibration constants the estimate uses that were fitted "
        "only on other vendors' measurements: name -> those vendors (with the uncertainty)")


@lru_cache(maxsize=1)
def residual_table() -> dict[str, Any]:
    """The stored validation residuals (``perf/data/residuals.json``)."""
    text = resources.files("accelkb.perf").joinpath("data/residuals.json").read_text("utf-8")
    table: dict[str, Any] = json.loads(text)
    return table


def _group(table: dict[str, Any], vendor: str | None, regime: str) -> tuple[str, Any]:
    groups = table.get("groups", {}).get(vendor or "", {})
    if regime in groups:
        return regime, groups[regime]
    if regime in ("prefill", "decode") and "inference" in groups:
        return "inference", groups["inference"]
    return regime, None


def interval(value: float, sense: str, vendor: str | None, regime: str,
             table: dict[str, Any] | None = None) -> Interval:
    """The range of ``value`` (a time or a rate) from the residuals of ``vendor``/``regime``."""
    table = residual_table() if table is None else table
    used, group = _group(table, vendor, regime)
    who = f"{vendor or 'unknown vendor'} {regime}"
    if group is not None and group["rows"] >= 10:
        lo, hi = group["q05"], group["q95"]
        basis = (f"5th-95th percentile of ln(measured/predicted) over {group['rows']} "
                 f"{group['kind']} rows of {vendor} {used} ({', '.join(group['files'])})")
    elif group is not None and group["rows"] >= 3:
        lo, hi = group["min"] - FEW_ROWS_MARGIN, group["max"] + FEW_ROWS_MARGIN
        basis = (f"only {group['rows']} {group['kind']} rows of {vendor} {used} "
                 f"({', '.join(group['files'])}): their extremes, widened by 20 %")
    else:
        spread = 2.0 * float(table.get("pooled_abs_q95") or 1.0)
        lo, hi = -spread, spread
        basis = (f"no validation rows for {who}: x/÷ {math.exp(spread):.2f}, twice the 95th "
                 "percentile of |ln(measured/predicted)| over the measured rows of all vendors")
    if group is not None and group["kind"] == "claims":
        basis += "; vendor claims, not measurements"
    elif group is not None and group.get("claims_left_out"):
        n = group["claims_left_out"]
        basis += f"; {n} vendor claim{'s' if n != 1 else ''} left out"
    lo, hi = min(lo, 0.0), max(hi, 0.0)  # the range holds the estimate itself
    if sense == "rate":
        lo, hi = -hi, -lo
    return Interval(low=value * math.exp(lo), high=value * math.exp(hi), basis=basis)


Run = Callable[[SystemSpec, Calibration], dict[str, Any]]


#: Calibration tables keyed by vendor (a value fitted on that vendor's own rows), and whether
#: the value is a fraction capped at 1.
_VENDOR_TABLES = {"vendor_matmul_efficiency": True, "vendor_compiled_op_overhead_s": False}


def _vary_vendor(system: SystemSpec, cal: Calibration, vendor: str, key: str
                 ) -> Callable[[float], tuple[SystemSpec, Calibration]]:
    """The vendor's own entry of table ``key`` times a factor (fractions capped at 1)."""
    def vary(f: float) -> tuple[SystemSpec, Calibration]:
        table = dict(getattr(cal, key))
        table[vendor] = min(1.0, table[vendor] * f) if _VENDOR_TABLES[key] else table[vendor] * f
        return system, cal.model_copy(update={key: table})
    return vary


def _perturbations(system: SystemSpec, cal: Calibration
                   ) -> list[tuple[str, Callable[[float], tuple[SystemSpec, Calibration]]]]:
    """(name, f(factor) -> (system, calibration)) for every constant and fact varied."""
    out: list[tuple[str, Callable[[float], tuple[SystemSpec, Calibration]]]] = []
    for key, field in Calibration.model_fields.items():
        if key == "idle_power_fraction":
            continue  # power only
        if key in _VENDOR_TABLES:
            vendor = system.chip.vendor
            if vendor is not None and vendor in getattr(cal, key):
                out.append((f"calibration {key}", _vary_vendor(system, cal, vendor, key)))
            continue
        capped = any(getattr(m, "le", None) == 1 for m in field.metadata)

        def vary(f: float, key: str = key, capped: bool = capped) -> tuple[SystemSpec,
                                                                         Calibration]:
            v = getattr(cal, key) * f
            return system, cal.model_copy(update={key: min(v, 1.0) if capped else v})
        out.append((f"calibration {key}", vary))
    chip = system.chip

    def peaks(f: float) -> tuple[SystemSpec, Calibration]:
        c = chip.model_copy(update={"peak_flops": {k: v * f for k, v in chip.peak_flops.items()}})
        return system.model_copy(update={"chip": c}), cal
    out.append((f"{chip.name} peak FLOP/s", peaks))
    if chip.achievable_matmul_fraction:  # measured: the share of the peak the matmuls reach
        def achieved(f: float) -> tuple[SystemSpec, Calibration]:
            c = chip.model_copy(update={"achievable_matmul_fraction": {
                k: min(1.0, v * f) for k, v in chip.achievable_matmul_fraction.items()}})
            return system.model_copy(update={"chip": c}), cal
        out.append((f"{chip.name} measured max achievable matmul fraction", achieved))
    for i, tier in enumerate(chip.memory_tiers):
        def tier_bw(f: float, i: int = i) -> tuple[SystemSpec, Calibration]:
            tiers = list(chip.memory_tiers)
            tiers[i] = tiers[i].model_copy(
                update={"bandwidth_bytes_per_s": tiers[i].bandwidth_bytes_per_s * f})
            c = chip.model_copy(update={"memory_tiers": tiers})
            return system.model_copy(update={"chip": c}), cal
        out.append((f"{chip.name} {tier.kind} bandwidth", tier_bw))
    for i, level in enumerate(system.levels):
        for attr, what in (("bandwidth_bytes_per_s_per_chip", "bandwidth"),
                           ("latency_s", "latency")):
            def lvl(f: float, i: int = i, attr: str = attr) -> tuple[SystemSpec, Calibration]:
                levels = list(system.levels)
                update: dict[str, Any] = {attr: getattr(levels[i], attr) * f}
                link = levels[i].link_bandwidth_bytes_per_s
                if attr == "bandwidth_bytes_per_s_per_chip" and link:
                    update["link_bandwidth_bytes_per_s"] = link * f
                levels[i] = levels[i].model_copy(update=update)
                return system.model_copy(update={"levels": levels}), cal
            out.append((f"network level {level.name} {what}", lvl))
    return out


def sensitivities(run: Run, system: SystemSpec, cal: Calibration, figures: dict[str, float],
                  top: int = 3) -> dict[str, list[Sensitivity]]:
    """Per figure, the ``top`` constants or facts whose ±50 % moves it most (under the key
    ``""``, every constant or fact that moves any figure at all)."""
    moved: dict[str, list[tuple[float, Sensitivity]]] = {f: [] for f in figures}
    for name, vary in _perturbations(system, cal):
        at: dict[float, dict[str, Any] | None] = {}
        for factor in (0.5, 1.5):
            try:
                at[factor] = run(*vary(factor))
            except InputError:  # e.g. the layout no longer fits at half the capacity
                at[factor] = None
        for fig, base in figures.items():
            low = _get(at[0.5], fig)
            high = _get(at[1.5], fig)
            spread = max(abs((v or base) - base) for v in (low, high)) / base if base else 0.0
            if spread > 1e-9:
                moved[fig].append((spread, Sensitivity(name=name, at_minus_50=low,
                                                       at_plus_50=high)))
    out = {fig: [s for _, s in sorted(rows, key=lambda x: -x[0])[:top]]
           for fig, rows in moved.items()}
    out[""] = [s for rows in moved.values() for _, s in rows]
    return out


def foreign_constants(used: list[str], vendor: str | None) -> dict[str, list[str]]:
    """The calibration constants among ``used`` that were fitted only on other vendors'
    measurements than ``vendor``'s: name -> the vendors they were fitted on."""
    from .calibration import calibration_document

    doc = calibration_document()
    out = {}
    for name in used:
        key = name.removeprefix("calibration ")
        fitted = list(doc.get(key, {}).get("fitted_on_vendors", []))  # type: ignore[call-overload]
        if name.startswith("calibration ") and vendor not in fitted:
            out[key] = fitted
    return dict(sorted(out.items()))


def foreign_by_vendors(foreign: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """:func:`foreign_constants`' result grouped for a sentence: 'vendor, vendor' -> names.

    >>> foreign_by_vendors({"link_efficiency": ["nvidia"], "memory_efficiency": ["nvidia"]})
    {'nvidia': ['link_efficiency', 'memory_efficiency']}
    """
    out: dict[str, list[str]] = {}
    for name, vendors in (foreign or {}).items():
        out.setdefault(", ".join(vendors) or "no", []).append(name)
    return out


def _get(estimate: dict[str, Any] | None, figure: str) -> float | None:
    if estimate is None:
        return None
    value = estimate.get(figure)
    return float(value) if isinstance(value, int | float) else None


def uncertainty(estimate: dict[str, Any], phase: str, run: Run, system: SystemSpec,
                cal: Calibration) -> tuple[dict[str, Uncertainty], dict[str, list[str]]]:
    """Interval and sensitivity of each headline figure of ``estimate`` (a model_dump), and the
    calibration constants it uses that were fitted on other vendors (:func:`foreign_constants`).
    """
    figures: dict[str, tuple[str, str]] = (
        {k: ("training", v) for k, v in TRAINING_FIGURES.items()} if phase == "training"
        else dict(INFERENCE_FIGURES))
    values = {k: float(estimate[k]) for k in figures
              if isinstance(estimate.get(k), int | float) and estimate[k] > 0}
    sens = sensitivities(run, system, cal, values)
    vendor = system.chip.vendor
    used = sorted({s.name for s in sens.pop("")})
    return ({k: Uncertainty(interval=interval(v, figures[k][1], vendor, figures[k][0]),
                            sensitivity=sens[k]) for k, v in values.items()},
            foreign_constants(used, vendor))
