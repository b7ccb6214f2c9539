"""Link x step heat map of a schedule, as SVG text drawn with matplotlib.

Each row is a directed link (``u->v``), each column a step; the shade is the fraction of the
link's unit links busy in that step (white idle, dark fully used). Large schedules are binned
(at most ``max_rows`` link rows and ``max_cols`` step columns; a binned cell shows the mean).

Examples
--------
>>> from accelkb.solver.schedule.api import schedule
>>> svg = heatmap_svg(schedule("ring:4", "allgather"))
>>> svg.startswith("<svg") and "0-&gt;1" in svg
True
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from accelkb.solver.schedule.model import ScheduleResult


def _grid(result: ScheduleResult, max_rows: int, max_cols: int,
          links: dict[tuple[int, int], int] | None,
          ) -> tuple[list[list[float]], list[str], int, int]:
    """Busy fraction per (link row, step column), the row labels and the binning factors."""
    steps = result.makespan_steps or 0
    load = Counter((u, v, t) for t, u, v, _ in result.transfers)
    edge_list = sorted({(u, v) for u, v, _ in load})
    cap = dict(links) if links else {}
    for (u, v, _), k in load.items():
        cap[(u, v)] = max(cap.get((u, v), 1), k)
    per_row = max(1, -(-len(edge_list) // max(1, max_rows)))
    per_col = max(1, -(-steps // max(1, max_cols)))
    rows = -(-len(edge_list) // per_row) if edge_list else 1
    cols = -(-steps // per_col) if steps else 1
    grid: list[list[float]] = []
    labels: list[str] = []
    for r in range(rows):
        group = edge_list[r * per_row:(r + 1) * per_row]
        labels.append(f"{group[0][0]}->{group[0][1]}" + (f" (+{len(group) - 1})"
                                                         if len(group) > 1 else "")
                      if group else "")
        row = []
        for c in range(cols):
            busy = total = 0.0
            for (u, v) in group:
                for t in range(c * per_col, min(steps, (c + 1) * per_col)):
                    busy += load.get((u, v, t), 0)
                    total += cap[(u, v)]
            row.append(busy / total if total else 0.0)
        grid.append(row)
    return grid, labels, per_row, per_col


def heatmap_svg(result: ScheduleResult, max_rows: int = 256, max_cols: int = 240,
                links: dict[tuple[int, int], int] | None = None) -> str:
    """SVG text of the link x step utilisation of ``result``'s schedule (matplotlib).

    ``links`` (unit links per link) defaults to the busiest load seen on each link.
    """
    from accelkb.plotting import svg_figure

    steps = result.makespan_steps or 0
    grid, labels, per_row, per_col = _grid(result, max_rows, max_cols, links)
    rows, cols = len(grid), len(grid[0]) if grid else 1
    title = (f"{result.collective} on {result.topology}: {steps} steps "
             f"(lower bound {result.lower_bound_steps}, {result.status.value})")

    def draw(fig: Any, ax: Any) -> None:
        img = ax.imshow(grid, aspect="auto", cmap="Blues", vmin=0.0, vmax=1.0,
                        interpolation="nearest", extent=(0, cols * per_col, rows, 0))
        every = max(1, -(-rows // 32))
        ax.set_yticks([r + 0.5 for r in range(0, rows, every)],
                      [labels[r] for r in range(0, rows, every)], fontsize=7)
        ax.set_xlabel("step" + (f" ({per_col} steps per column)" if per_col > 1 else ""))
        ax.set_ylabel("directed link" + (f" ({per_row} per row)" if per_row > 1 else ""))
        ax.set_title(title, loc="left", fontweight="bold")
        fig.colorbar(img, ax=ax, label="busy fraction of the link")

    return svg_figure(draw, 7.5, min(9.0, 1.6 + 0.14 * rows))
