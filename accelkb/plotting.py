"""Figures drawn with matplotlib and returned as SVG text, the same bytes from run to run.

Reports embed these SVGs inline, so a figure must not depend on the clock or on random ids:
the SVG backend's ids are salted with a fixed string and no date is written. Text stays text
(``svg.fonttype = none``), so a browser draws it with its own fonts and it can be searched.
matplotlib is imported on first use only: it costs about half a second, and most commands draw
nothing.

Examples
--------
>>> svg = svg_figure(lambda fig, ax: ax.plot([1, 2], [3, 4]), 4, 2)
>>> svg.startswith("<svg") and "</svg>" in svg
True
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

_STYLE = {"svg.hashsalt": "accelkb", "svg.fonttype": "none", "font.size": 9,
          "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def svg_figure(draw: Callable[[Any, Any], None], width_in: float, height_in: float) -> str:
    """Call ``draw(fig, ax)`` on a new ``width_in`` x ``height_in`` inch figure in the reports'
    style and return it as SVG text without the XML prolog (ready to inline in HTML)."""
    plt = _pyplot()
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(width_in, height_in), layout="constrained")
        try:
            draw(fig, ax)
            buf = io.StringIO()
            fig.savefig(buf, format="svg",
                        metadata={"Date": None, "Creator": "accelkb (matplotlib)"})
        finally:
            plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
