"""Link x step heat map of a schedule, as plain SVG text (no plotting library).

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
from xml.sax.saxutils import escape

from accelkb.solver.schedule.model import ScheduleResult


def _shade(frac: float) -> str:
    level = max(0, min(255, int(round(255 * (1 - frac)))))
    return f"rgb({level},{level},255)" if frac < 1 else "rgb(20,20,140)"


def heatmap_svg(result: ScheduleResult, max_rows: int = 256, max_cols: int = 240,
                links: dict[tuple[int, int], int] | None = None) -> str:
    """SVG text of the link x step utilisation of ``result``'s schedule.

    ``links`` (unit links per link) defaults to the busiest load seen on each link.
    """
    steps = result.makespan_steps or 0
    load = Counter((u, v, t) for t, u, v, _ in result.transfers)
    edge_list = sorted({(u, v) for u, v, _ in load})
    cap = dict(links) if links else {}
    for (u, v, _), k in load.items():
        cap[(u, v)] = max(cap.get((u, v), 1), k)
    rows = max(1, min(max_rows, len(edge_list)))
    cols = max(1, min(max_cols, steps))
    per_row = max(1, -(-len(edge_list) // rows))
    per_col = max(1, -(-steps // cols))
    rows = -(-len(edge_list) // per_row) if edge_list else 1
    cols = -(-steps // per_col) if steps else 1
    cell_w, cell_h, left, top = max(2, 720 // cols), max(2, 480 // rows), 90, 40
    width, height = left + cols * cell_w + 20, top + rows * cell_h + 40
    title = (f"{result.collective} on {result.topology}: {steps} steps "
             f"(lower bound {result.lower_bound_steps}, {result.status.value})")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="10">',
           f'<text x="{left}" y="20" font-size="13">{escape(title)}</text>']
    for r in range(rows):
        group = edge_list[r * per_row:(r + 1) * per_row]
        if not group:
            continue
        label = f"{group[0][0]}->{group[0][1]}" + (f" (+{len(group) - 1})" if len(group) > 1
                                                   else "")
        y = top + r * cell_h
        if per_row > 1 or rows <= 64 or r % max(1, rows // 32) == 0:
            out.append(f'<text x="{left - 4}" y="{y + cell_h - 1}" text-anchor="end" '
                       f'font-size="{min(10, max(6, cell_h))}">{escape(label)}</text>')
        for c in range(cols):
            busy = total = 0.0
            for (u, v) in group:
                for t in range(c * per_col, min(steps, (c + 1) * per_col)):
                    busy += load.get((u, v, t), 0)
                    total += cap[(u, v)]
            frac = busy / total if total else 0.0
            if frac > 0:
                out.append(f'<rect x="{left + c * cell_w}" y="{y}" width="{cell_w}" '
                           f'height="{cell_h}" fill="{_shade(frac)}"/>')
    out.append(f'<rect x="{left}" y="{top}" width="{cols * cell_w}" height="{rows * cell_h}" '
               f'fill="none" stroke="black"/>')
    out.append(f'<text x="{left}" y="{top + rows * cell_h + 16}">step 0 .. {steps - 1}'
               f'{f" ({per_col} steps per column)" if per_col > 1 else ""}; rows: links'
               f'{f" ({per_row} per row)" if per_row > 1 else ""}; shade: busy fraction</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
