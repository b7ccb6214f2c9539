"""Small self-contained SVG figures for reports (no plotting library, stable output)."""

from __future__ import annotations

from html import escape

from accelkb.advise.advice import Advice

_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'
            f'<title>{escape(title)}</title>' + "".join(body) + "</svg>")


def bar_chart(values: dict[str, float], title: str, unit: str, scale: float = 1.0) -> str:
    """Horizontal bars, one per key, labelled with the value in ``unit`` (value / scale)."""
    items = [(k, v) for k, v in values.items() if v > 0]
    if not items:
        return ""
    width, row = 560, 22
    height = 30 + row * len(items)
    top = max(v for _, v in items)
    body = [f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>']
    for i, (k, v) in enumerate(items):
        y = 26 + i * row
        w = 300 * v / top
        body.append(f'<text x="4" y="{y + 14}">{escape(k)}</text>')
        body.append(f'<rect x="170" y="{y + 3}" width="{w:.1f}" height="{row - 6}" '
                    f'fill="{_COLORS[i % len(_COLORS)]}"/>')
        body.append(f'<text x="{174 + w:.1f}" y="{y + 14}">{v / scale:.3g} {escape(unit)}</text>')
    return _svg(width, height, body, title)


def line_chart(points: list[tuple[float, float]], title: str, xlabel: str, ylabel: str) -> str:
    """A log2-x line chart of (x, y) points."""
    import math

    pts = [(x, y) for x, y in points if y is not None and y > 0 and x > 0]
    if len(pts) < 2:
        return ""
    width, height, left, bottom = 560, 260, 70, 40
    xs = [math.log2(x) for x, _ in pts]
    ymax = max(y for _, y in pts) * 1.1
    x0, x1 = min(xs), max(xs)

    def px(x: float) -> float:
        return left + (width - left - 20) * (math.log2(x) - x0) / max(x1 - x0, 1e-9)

    def py(y: float) -> float:
        return height - bottom - (height - bottom - 30) * y / ymax

    body = [f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
            f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" '
            'stroke="#333"/>',
            f'<line x1="{left}" y1="30" x2="{left}" y2="{height - bottom}" stroke="#333"/>',
            f'<text x="{width // 2}" y="{height - 6}" text-anchor="middle">{escape(xlabel)}</text>',
            f'<text x="12" y="{height // 2}" transform="rotate(-90 12 {height // 2})" '
            f'text-anchor="middle">{escape(ylabel)}</text>']
    path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(pts))
    body.append(f'<path d="{path}" fill="none" stroke="{_COLORS[0]}" stroke-width="2"/>')
    for x, y in pts:
        body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{_COLORS[0]}"/>')
        body.append(f'<text x="{px(x):.1f}" y="{height - bottom + 14}" text-anchor="middle">{int(x)}</text>')
        body.append(f'<text x="{px(x):.1f}" y="{py(y) - 6:.1f}" text-anchor="middle">{y:.3g}</text>')
    return _svg(width, height, body, title)


def figures(advice: Advice) -> dict[str, str]:
    """The report's figures as SVG text, by name (missing data gives no figure)."""
    b = advice.baseline
    unit_time = "s" if advice.phase == "training" else "ms"
    scale = 1.0 if advice.phase == "training" else 1e-3
    out = {
        "breakdown": bar_chart({k: v for k, v in b.breakdown_s.items() if k != "prefill_s"},
                               "Time breakdown of the baseline " + (
                                   "step" if advice.phase == "training" else "decode token"),
                               unit_time, scale),
        "memory": bar_chart(b.memory_per_chip_bytes, "Memory per chip by tier", "GB", 1e9),
    }
    key = "tokens_per_s_per_user" if advice.phase != "training" else "tokens_per_s"
    pts = [(float(p.chips), getattr(p, key)) for p in advice.scaling]
    out["scaling"] = line_chart(pts, "Scaling over chip count", "chips",
                                "tokens/s per user" if advice.phase != "training" else "tokens/s")
    for i, s in enumerate(advice.schedules):
        if s.heatmap_svg:
            out[f"schedule-{i}"] = s.heatmap_svg
    return {k: v for k, v in out.items() if v}
