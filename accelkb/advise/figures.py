"""The report's figures, drawn with matplotlib (:mod:`accelkb.plotting`) as inline SVG.

Axes carry words and units, not identifiers: ``tensor_parallel_comm`` is drawn as
"tensor-parallel communication". The scaling chart has a base-2 chip axis with a tick at every
chip count measured and a linear rate axis from zero, so equal gaps mean equal ratios of chips
and the height is the rate itself.

Examples
--------
>>> label("tensor_parallel_comm")
'tensor-parallel communication'
>>> label("some_new_part")
'some new part'
"""

from __future__ import annotations

from typing import Any

from accelkb.advise.advice import Advice
from accelkb.plotting import svg_figure

_LABELS = {
    "compute": "compute", "memory": "memory reads (weights, KV cache)",
    "overhead": "per-operation overhead", "tensor_parallel_comm": "tensor-parallel communication",
    "pipeline_hops": "pipeline hops", "pipeline_p2p": "pipeline transfers",
    "pipeline_bubble": "pipeline bubble", "data_parallel_comm": "data-parallel communication",
    "optimizer": "optimizer step", "recompute": "activation recomputation",
    "offload": "offloaded-memory traffic", "exchange": "on-chip exchange and sync",
    "sram": "on-chip SRAM", "hbm": "HBM", "ddr": "DDR", "streaming": "streaming memory",
    "host": "host memory",
}
_COLOR = "#4e79a7"


def label(key: str) -> str:
    """The words for a breakdown or memory-tier key."""
    return _LABELS.get(key, key.replace("_", " "))


def bar_chart(values: dict[str, float], title: str, unit: str, scale: float = 1.0) -> str:
    """Horizontal bars, one per positive value, in ``unit`` (value / ``scale``), largest first."""
    items = sorted(((label(k), v / scale) for k, v in values.items() if v > 0),
                   key=lambda kv: kv[1])
    if not items:
        return ""

    def draw(fig: Any, ax: Any) -> None:
        names = [k for k, _ in items]
        vals = [v for _, v in items]
        bars = ax.barh(names, vals, color=_COLOR)
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], padding=3)
        ax.set_xlabel(unit)
        ax.set_xlim(0, max(vals) * 1.18)
        ax.set_title(title, loc="left", fontweight="bold")

    return svg_figure(draw, 7.0, 0.9 + 0.32 * len(items))


def line_chart(points: list[tuple[float, float]], title: str, xlabel: str, ylabel: str) -> str:
    """Rate against chip count: base-2 x axis ticked at each count, linear y axis from 0."""
    pts = sorted((x, y) for x, y in points if y is not None and y > 0 and x > 0)
    if len(pts) < 2:
        return ""

    def draw(fig: Any, ax: Any) -> None:
        xs = [x for x, _ in pts]
        ys = [y for _, y in pts]
        ax.plot(xs, ys, marker="o", color=_COLOR)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x:g}" for x in xs], rotation=45 if len(xs) > 8 else 0)
        ax.minorticks_off()
        ax.set_ylim(0, max(ys) * 1.12)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(title, loc="left", fontweight="bold")

    return svg_figure(draw, 7.0, 3.2)


def figures(advice: Advice) -> dict[str, str]:
    """The report's figures as SVG text, by name (missing data gives no figure)."""
    b = advice.baseline
    training = advice.phase == "training"
    out = {
        "breakdown": bar_chart({k: v for k, v in b.breakdown_s.items() if k != "prefill_s"},
                               "Where the time of one " + (
                                   "training step" if training else "generated token") + " goes",
                               "seconds" if training else "milliseconds",
                               1.0 if training else 1e-3),
        "memory": bar_chart(b.memory_per_chip_bytes, "Memory per chip by tier",
                            "GB (10^9 bytes)", 1e9),
    }
    key = "tokens_per_s" if training else "tokens_per_s_per_user"
    pts = [(float(p.chips), getattr(p, key)) for p in advice.scaling]
    out["scaling"] = line_chart(pts, "Scaling over chip count", "chips (log scale)",
                                "tokens/s" if training else "tokens/s per user")
    for i, s in enumerate(advice.schedules):
        if s.heatmap_svg:
            out[f"schedule-{i}"] = s.heatmap_svg
    return {k: v for k, v in out.items() if v}
