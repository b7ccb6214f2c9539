"""Run a sweep: validate it whole, skip what the journal holds, solve the rest, write the file.

Examples
--------
>>> import tempfile, pathlib
>>> from accelkb.sweep.spec import SweepSpec
>>> out = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
>>> spec = SweepSpec(models=["llama2-7b"], systems=["dgx-h100"], chips=[2],
...                  precisions=["fp16"], timeout_s=30)
>>> run_sweep(spec, out).points
1
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelkb.errors import InputError
from accelkb.sweep import engines
from accelkb.sweep.evaluate import COLUMNS
from accelkb.sweep.grid import Point, groups, points
from accelkb.sweep.spec import SweepSpec, problems
from accelkb.sweep.store import Journal, check_target


@dataclass(frozen=True)
class SweepRun:
    """What one run did."""

    points: int
    solved: int
    reused: int
    seconds: float
    statuses: dict[str, int]
    io_seconds: float = 0.0


def _kb_and_systems(spec: SweepSpec) -> tuple[Any, dict[str, Any]]:
    from accelkb.knowledge import KnowledgeBase
    from accelkb.perf.from_kb import default_kb, system_spec

    kb = KnowledgeBase(spec.data) if spec.data else default_kb()
    out = {}
    for s in spec.systems:
        with contextlib.suppress(InputError):  # reported by problems()
            out[s] = system_spec(s, kb=kb)
    return kb, out


def plan(spec: SweepSpec) -> list[Point]:
    """Every point of the spec, after checking the spec against the knowledge base.

    Raises
    ------
    InputError
        Listing every problem of the spec (unknown names, what-ifs on facts that do not
        exist, impossible values, an empty grid) before any work starts.
    """
    kb, systems = _kb_and_systems(spec)
    found = problems(spec, kb)
    pts = points(spec, systems) if not found else []
    if not found and not pts:
        found.append("the grid is empty: no (phase, precision, goal, target) combination "
                     "applies")
    if found:
        raise InputError(f"{len(found)} problem(s) in the sweep spec:\n"
                         + "\n".join(f"  - {p}" for p in found))
    return pts


def run_sweep(spec: SweepSpec, out: Path, engine: str = "local", workers: int = 1,
              address: str | None = None, progress: bool | None = None,
              on_group: Callable[[int], None] | None = None) -> SweepRun:
    """Solve every point of ``spec`` not yet in ``out`` (or its journal) and write ``out``.

    Raises
    ------
    InputError
        A bad spec (every problem listed), an output name of an unknown format, a journal
        of another spec, or Ray missing for ``engine='ray'``.
    """
    t0 = time.perf_counter()
    check_target(out)
    if engine not in engines.ENGINES:
        raise InputError(f"expected --engine among {', '.join(engines.ENGINES)}, got '{engine}'")
    pts = plan(spec)
    journal = Journal(out, spec.digest())
    done = journal.done()
    todo = [g for g in groups(pts) if any(p.ident() not in done for p in g)]
    run = (engines.run_local(todo, spec, workers) if engine == "local"
           else engines.run_ray(todo, spec, workers, address))
    bar = _bar(sum(len(g) for g in todo), progress)
    solved = 0
    io = 0.0
    for rows in run:
        t1 = time.perf_counter()
        journal.add(rows[0]["point_id"], rows)
        io += time.perf_counter() - t1
        solved += len(rows)
        if bar is not None:
            bar.update(len(rows))
        if on_group is not None:
            on_group(solved)
    if bar is not None:
        bar.close()
    t1 = time.perf_counter()
    journal.finish([p.ident() for p in pts], COLUMNS)
    io += time.perf_counter() - t1
    statuses: dict[str, int] = {}
    for r in journal.rows.values():
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return SweepRun(points=len(pts), solved=solved, reused=len(pts) - solved,
                    seconds=time.perf_counter() - t0, statuses=statuses, io_seconds=io)


def _bar(total: int, progress: bool | None) -> Any:
    """A tqdm bar on stderr when it is a terminal (or when asked)."""
    if progress is False or (progress is None and not sys.stderr.isatty()) or not total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="point", file=sys.stderr, desc="sweep")
