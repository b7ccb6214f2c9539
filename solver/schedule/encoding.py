"""Exact Z3 encoding of a non-combining collective within a fixed number of steps.

Instance (frozen, :class:`~accelkb.solver.schedule.model.Instance`) -> encoding (one function
per constraint group below, every Z3 name readable: ``send[c=2.0][3->4]@t1``) -> decoding into
plain transfers. The encoder prints nothing.

Variables exist only where a send can matter: a chunk can leave chip ``u`` at step ``t`` only if
``t >= distance(sources, u)``, and a single-destination chunk only towards chips from which its
destination is still reachable in time. Reductions are handled by the caller through time
reversal (a reduce-scatter on G is an allgather on G reversed, run backwards).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from accelkb.solver.schedule.model import ChunkId, TransferT
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.z3fast import any_of, at_most, check_until


class _Overrun(Exception):
    """The deadline passed while the encoding was being built."""


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise _Overrun


@dataclass(frozen=True)
class SpreadProblem:
    """Chunks with start chips and destination chips on a topology, within ``steps`` steps."""

    topology: Topology
    chunks: tuple[ChunkId, ...]
    sources: tuple[tuple[int, ...], ...]
    destinations: tuple[tuple[int, ...], ...]
    steps: int
    minimal_paths: bool = False
    """Only shortest-path hops for single-destination chunks: SAT is still a schedule, but
    UNSAT proves nothing (the caller then treats it as unknown)."""


def _name(c: ChunkId) -> str:
    return ".".join(map(str, c))


def _send_keys(p: SpreadProblem, dist: Sequence[Sequence[int]]):
    """(chunk index, u, v, t) of every send that can matter (pruned by distance)."""
    for ci in range(len(p.chunks)):
        srcs, dsts = p.sources[ci], p.destinations[ci]
        early = [min(dist[s][v] for s in srcs) for v in range(p.topology.n)]
        for (u, v) in sorted(p.topology.links):
            if v in srcs:
                continue
            if len(dsts) == 1:
                d = dsts[0]
                if p.minimal_paths and dist[u][d] != dist[v][d] + 1:
                    continue
                last = p.steps - 1 - dist[v][d]
            else:
                last = p.steps - 1
            for t in range(early[u], last + 1):
                yield (ci, u, v, t)


def _create_send_variables(p: SpreadProblem, dist: Sequence[Sequence[int]],
                           deadline: float | None = None
                           ) -> dict[tuple[int, int, int, int], z3.BoolRef]:
    """send[(chunk index, u, v, t)]: chunk goes over link u->v in step t (the deadline is
    checked every 4096 variables: 100,000 of them take seconds)."""
    var: dict[tuple[int, int, int, int], z3.BoolRef] = {}
    for k, (ci, u, v, t) in enumerate(_send_keys(p, dist)):
        if k % 4096 == 0:
            _check(deadline)
        var[(ci, u, v, t)] = z3.Bool(f"send[c={_name(p.chunks[ci])}][{u}->{v}]@t{t}")
    return var


def _add_causality(s: z3.Solver, p: SpreadProblem, var: dict,
                   deadline: float | None = None) -> None:
    """A chip forwards a chunk only after receiving it in an earlier step (or starting with it).
    ``held`` (received before step t) is built once per (chunk, chip, step), not per out-link."""
    into: dict[tuple[int, int], list[tuple[int, z3.BoolRef]]] = {}
    for (ci, _u, v, t), b in var.items():
        into.setdefault((ci, v), []).append((t, b))
    held: dict[tuple[int, int, int], z3.BoolRef] = {}
    for k, ((ci, u, _v, t), b) in enumerate(var.items()):
        if u in p.sources[ci]:
            continue
        if k % 4096 == 0:
            _check(deadline)
        h = held.get((ci, u, t))
        if h is None:
            h = held[(ci, u, t)] = any_of([x for (t2, x) in into.get((ci, u), []) if t2 < t])
        s.add(z3.Implies(b, h))


def _add_single_receipt(s: z3.Solver, p: SpreadProblem, var: dict) -> None:
    """Each chip receives each chunk at most once (so schedules reverse into reductions)."""
    into: dict[tuple[int, int], list[z3.BoolRef]] = {}
    for (ci, _u, v, _t), b in var.items():
        into.setdefault((ci, v), []).append(b)
    for bs in into.values():
        if len(bs) > 1:
            s.add(at_most(bs, 1))


def _add_link_capacity(s: z3.Solver, p: SpreadProblem, var: dict) -> None:
    """No unit link carries more than one chunk per step: collision-free by construction."""
    per_link: dict[tuple[int, int, int], list[z3.BoolRef]] = {}
    for (_ci, u, v, t), b in var.items():
        per_link.setdefault((u, v, t), []).append(b)
    for (u, v, _t), bs in per_link.items():
        cap = p.topology.links[(u, v)]
        if len(bs) > cap:
            s.add(at_most(bs, cap))


def _add_delivery(s: z3.Solver, p: SpreadProblem, var: dict) -> None:
    """Every destination receives every chunk it does not start with."""
    into: dict[tuple[int, int], list[z3.BoolRef]] = {}
    for (ci, _u, v, _t), b in var.items():
        into.setdefault((ci, v), []).append(b)
    for ci in range(len(p.chunks)):
        for d in p.destinations[ci]:
            if d in p.sources[ci]:
                continue
            s.add(any_of(into.get((ci, d), [])))


def encode(p: SpreadProblem, dist: Sequence[Sequence[int]], deadline: float | None = None
           ) -> tuple[z3.Solver, dict] | None:
    """Build the solver for ``p`` (no solving); None when ``deadline`` (monotonic seconds)
    passes while building, so a time limit holds for large encodings too."""
    s = z3.Solver()
    try:
        var = _create_send_variables(p, dist, deadline)
        _check(deadline)
        _add_causality(s, p, var, deadline)
        _check(deadline)
        _add_single_receipt(s, p, var)
        _check(deadline)
        _add_link_capacity(s, p, var)
        _check(deadline)
        _add_delivery(s, p, var)
        _check(deadline)
    except _Overrun:
        return None
    return s, var


def decode(p: SpreadProblem, var: dict, model: z3.ModelRef) -> list[TransferT]:
    """The transfers that the model sets, as ``(step, src, dst, chunk)``."""
    return sorted((t, u, v, p.chunks[ci]) for (ci, u, v, t), b in var.items()
                  if z3.is_true(model.eval(b, model_completion=True)))


def solve(p: SpreadProblem, dist: Sequence[Sequence[int]], deadline: float
          ) -> tuple[str, list[TransferT]]:
    """``("sat", transfers)``, ``("unsat", [])`` or ``("unknown", [])`` before ``deadline``."""
    left = deadline - time.monotonic()
    if left <= 0.05:
        return "unknown", []
    built = encode(p, dist, deadline)
    if built is None:
        return "unknown", []
    s, var = built
    res = check_until(s, deadline)
    if res == z3.sat:
        return "sat", decode(p, var, s.model())
    if res == z3.unsat:
        return ("unknown" if p.minimal_paths else "unsat"), []
    return "unknown", []


def encoding_size(p: SpreadProblem, dist: Sequence[Sequence[int]]) -> int:
    """Number of send variables (to decide whether a monolithic encoding is worth it)."""
    return sum(1 for _ in _send_keys(p, dist))
