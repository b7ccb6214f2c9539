"""What a sweep found: the Pareto frontier (time vs cost vs energy), the best point per system,
and a Pareto figure drawn with matplotlib.

Examples
--------
>>> rows = [{"status": "OPTIMAL", "phase": "inference", "time_s": 1.0,
...          "usd_per_million_tokens": 2.0, "joules_per_token": 3.0},
...         {"status": "OPTIMAL", "phase": "inference", "time_s": 2.0,
...          "usd_per_million_tokens": 3.0, "joules_per_token": 4.0}]
>>> [r["time_s"] for r in frontier(rows)]
[1.0]
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from accelkb.errors import InputError
from accelkb.files import publish

SOLVED = ("OPTIMAL", "FEASIBLE")
AXES = ("time_s", "usd_per_million_tokens", "joules_per_token")


def _value(r: dict[str, Any], key: str) -> float:
    v = r.get(key)
    return float(v) if isinstance(v, int | float) and not math.isnan(float(v)) else math.inf


def frontier(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The solved rows no other solved row of the same phase beats on time, $ per million
    tokens and J/token at once (a missing figure counts as worst), fastest first."""
    solved = [r for r in rows if r.get("status") in SOLVED and r.get("time_s")]
    out = []
    for r in solved:
        a = [_value(r, k) for k in AXES]
        beaten = any(o is not r and o.get("phase") == r.get("phase")
                     and all(x <= y for x, y in zip([_value(o, k) for k in AXES], a,
                                                     strict=True))
                     and [_value(o, k) for k in AXES] != a for o in solved)
        if not beaten:
            out.append(r)
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in out:  # points that reach the same layout (several goals) are one frontier point
        unique.setdefault((r.get("phase"), r.get("model"), r.get("system"), r.get("chips_used"),
                           r.get("whatif"), r.get("whatif_value"), r.get("layout")), r)
    return sorted(unique.values(), key=lambda r: (str(r.get("phase")), _value(r, "time_s")))


def best_per_system(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (system, phase, model): the fastest solved point of the unchanged system."""
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        if r.get("status") not in SOLVED or not r.get("time_s") or r.get("whatif"):
            continue
        key = (r.get("system"), r.get("phase"), r.get("model"))
        if key not in best or _value(r, "time_s") < _value(best[key], "time_s"):
            best[key] = r
    return [best[k] for k in sorted(best, key=lambda k: tuple(str(x) for x in k))]


def _fmt(v: Any, unit: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{float(v):.3g}{unit}"


def text(rows: list[dict[str, Any]]) -> str:
    """The summary as printed by ``accelkb sweep --summary``."""
    if not rows:
        raise InputError("expected a results file with rows, got an empty one")
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r.get("status"))] = counts.get(str(r.get("status")), 0) + 1
    lines = [f"{len(rows)} points (spec {rows[0].get('spec_hash')}): "
             + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), "",
             "Pareto frontier (time, $ per million tokens, J/token; per phase):",
             f"  {'phase':<9} {'model':<14} {'system':<20} {'chips':>5} {'time':>10} "
             f"{'$/M tok':>9} {'J/token':>9}  layout / what-if"]
    for r in frontier(rows):
        extra = f" [{r['whatif']}={r['whatif_value']}]" if r.get("whatif") else ""
        lines.append(f"  {str(r['phase']):<9} {str(r['model']):<14} {str(r['system']):<20} "
                     f"{r.get('chips_used') or r['chips']:>5} {_fmt(r['time_s'], ' s'):>10} "
                     f"{_fmt(r.get('usd_per_million_tokens')):>9} "
                     f"{_fmt(r.get('joules_per_token')):>9}  {r.get('layout')}{extra}")
    lines += ["", "Best point per system (fastest; time range from the validation residuals):"]
    for r in best_per_system(rows):
        lines.append(f"  {str(r['system']):<20} {str(r['phase']):<9} {str(r['model']):<14} "
                     f"{_fmt(r['time_s'], ' s')} ({_fmt(r.get('time_s_low'))}-"
                     f"{_fmt(r.get('time_s_high'))}) at {r.get('layout_precision')}, "
                     f"{r.get('goal')} goal: {r.get('layout')}")
    unsolved = [r for r in rows if r.get("status") not in SOLVED]
    if unsolved:
        lines += ["", f"{len(unsolved)} point(s) without a layout; first reasons:"]
        for reason in list(dict.fromkeys(str(r.get("reason")) for r in unsolved))[:5]:
            lines.append(f"  - {reason}")
    return "\n".join(lines) + "\n"


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    """Time against $ per million tokens for every solved point, coloured by J/token, the
    frontier ringed; one panel per phase. Written as SVG or PNG by its extension.

    Raises
    ------
    InputError
        For an extension other than .svg or .png, or no solved point with a price.
    """
    if path.suffix not in (".svg", ".png"):
        raise InputError(f"expected --figure ending in .svg or .png, got '{path.name}'")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [r for r in rows if r.get("status") in SOLVED and r.get("time_s")
           and r.get("usd_per_million_tokens")]
    if not pts:
        raise InputError("no solved point has a price: nothing to plot on time vs cost")
    phases = sorted({str(r["phase"]) for r in pts})
    fig, axes = plt.subplots(1, len(phases), figsize=(6.5 * len(phases), 4.8), squeeze=False)
    front = {id(r) for r in frontier(rows)}
    for ax, phase in zip(axes[0], phases, strict=True):
        mine = [r for r in pts if r["phase"] == phase]
        energy = [_value(r, "joules_per_token") for r in mine]
        sc = ax.scatter([r["time_s"] for r in mine], [r["usd_per_million_tokens"] for r in mine],
                        c=[e if math.isfinite(e) else float("nan") for e in energy],
                        cmap="viridis", s=18)
        ring = [r for r in mine if id(r) in front]
        ax.scatter([r["time_s"] for r in ring], [r["usd_per_million_tokens"] for r in ring],
                   facecolors="none", edgecolors="crimson", s=70, label="Pareto frontier")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step time (s)" if phase == "training" else "time per output token (s)")
        ax.set_ylabel("dollars per million tokens")
        ax.set_title(f"{phase}: {len(mine)} priced points")
        ax.legend(loc="best", fontsize=8)
        fig.colorbar(sc, ax=ax, label="joules per token")
    fig.tight_layout()
    try:
        publish(path, lambda tmp: fig.savefig(tmp, format=path.suffix[1:]), "--figure",
                suffix=path.suffix)
    finally:
        plt.close(fig)
