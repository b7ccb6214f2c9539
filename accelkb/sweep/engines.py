"""Where a sweep's groups are solved: in this process, in a local process pool, or on a Ray
cluster. Every engine loads the knowledge base (with the spec's data files) once per worker and
solves whole groups, so the rows are the same whichever engine ran them; only the
``*_seconds`` and ``worker`` columns differ.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

from accelkb.errors import InputError
from accelkb.sweep.grid import Point
from accelkb.sweep.spec import SweepSpec

ENGINES = ("local", "ray")
_STACK = contextlib.ExitStack()
_KB: list[Any] = []


def _init(data: tuple[str, ...]) -> None:
    """Load the knowledge base once in this worker and make it the active one."""
    from accelkb.knowledge import KnowledgeBase
    from accelkb.perf.from_kb import default_kb, using

    kb = KnowledgeBase(list(data)) if data else default_kb()
    if data:
        _STACK.enter_context(using(kb))
    _KB[:] = [kb]


def _solve(pts: list[Point], spec: SweepSpec) -> list[dict[str, Any]]:
    from accelkb.sweep.evaluate import solve_group

    if not _KB:
        _init(tuple(spec.data))
    return solve_group(pts, spec, _KB[0])


def run_local(groups: list[list[Point]], spec: SweepSpec, workers: int
              ) -> Iterator[list[dict[str, Any]]]:
    """Each group's rows as it is solved: in this process (one worker) or a spawned pool."""
    if workers <= 1:
        for g in groups:
            yield _solve(g, spec)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                             initializer=_init, initargs=(tuple(spec.data),)) as pool:
        futures = [pool.submit(_solve, g, spec) for g in groups]
        for f in as_completed(futures):
            yield f.result()


def run_ray(groups: list[list[Point]], spec: SweepSpec, workers: int,
            address: str | None = None) -> Iterator[list[dict[str, Any]]]:
    """Each group's rows as it is solved on a Ray cluster (a local instance when ``address``
    is None, with ``workers`` CPUs).

    Raises
    ------
    InputError
        When Ray is not installed.
    """
    try:
        import ray
    except ImportError:
        raise InputError("--engine ray needs Ray: pip install 'accelkb[ray]'") from None
    started = not ray.is_initialized()
    if started:
        kwargs: dict[str, Any] = {"address": address} if address else {
            "num_cpus": max(1, workers), "include_dashboard": False}
        ray.init(log_to_driver=False, **kwargs)
    try:
        remote: Any = ray.remote(_solve)
        spec_ref = ray.put(spec)
        pending = [remote.remote(g, spec_ref) for g in groups]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if started:
            ray.shutdown()
