"""Allreduce on a torus as the product of its rings: one dimension's rings after the other.

A ``torus:AxBxC`` is the Cartesian product of the rings ``A``, ``B`` and ``C``. Let every ring
along the first dimension run a 1-D allreduce of a chunk: each chip then holds the sum over its
line. Parallel lines share no chip, so a 1-D allreduce along the second dimension over those line
sums leaves each chip the sum over its plane, and so on: after the last dimension every chip
holds the whole sum. Phase by phase the replay's no-double-counting check holds, because every
contribution mask is a union of disjoint lines (planes), exactly as the ring schedule's masks
are unions of its positions. A ring of 4 is itself a product of two ``ring:2`` (positions 0-1
and 2-3, then 1-2 and 3-0), so a torus of 2s and 4s is a hypercube (:func:`factorizations`).

Two ways to place ``c`` chunks on factors ``1..d``, with ``T_k(m)`` the ring schedule of ``m``
chunks on factor ``k`` (any verified allreduce schedule of the ring, given by the caller):

- **sequential**: all ``c`` chunks through factor 1, then 2, ...: ``sum_k T_k(c)`` steps;
- **rotated**: chunk ``j`` joins group ``j mod d`` and group ``g`` takes the factors in the
  order ``g, g+1, ...``. Every phase lasts ``P = max_k T_k(ceil(c/d))`` steps, so in each
  phase each factor's links carry one group only: ``d * P`` steps. A link belongs to one
  factor, so groups never collide.

On the TPU v4 cube ``torus:4x4x4`` one chunk takes 2 + 2 + 2 = 6 steps, the diameter; six
chunks as six ``ring:2`` factors rotated (recursive doubling) also take 6. This is a
latency-bound construction: every chunk crosses each factor's rings in full, about ``d`` times
the transfers of a bandwidth-optimal allreduce, so for large ``c`` the reduce-scatter +
allgather schedules win.

Examples
--------
>>> from accelkb.solver.schedule.topology import parse_topology
>>> torus_dims(parse_topology("torus:4x4x4")), torus_dims(parse_topology("ring:8"))
((4, 4, 4), None)
>>> swap = (1, [(0, 0, 1, (0, 0)), (0, 1, 0, (0, 0))])  # ring:2, one chunk
>>> steps, trs = sequential_allreduce(factorizations((2, 2))[0], 1, lambda k, m: swap)
>>> steps, len(trs)
(2, 8)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology, torus

RingSchedule = tuple[int, list[TransferT]]
"""``(steps, transfers)`` of an allreduce on ``ring:k`` positions ``0..k-1``, chunks ``(0, j)``."""
RingSource = Callable[[int, int], RingSchedule | None]
"""``ring_source(k, m)``: a schedule of ``m`` chunks on the ring of ``k`` chips, or None."""

_NAME = re.compile(r"torus:?(\d+(?:[x:]\d+){1,2})", re.IGNORECASE)


def torus_dims(topo: Topology) -> tuple[int, ...] | None:
    """The dimensions of a torus named after them (``torus:4x4``, a file ``Torus4x4``) whose
    links are exactly those of the generated torus; None for anything else.

    The name only proposes the dimensions; the links decide, so a file that names a torus but
    lacks a link is refused.
    """
    m = _NAME.fullmatch(topo.name)
    if m is None:
        return None
    dims = tuple(int(x) for x in re.split("[x:]", m.group(1)))
    if any(k < 1 for k in dims) or topo.endpoints != topo.n:
        return None
    n = 1
    for k in dims:
        n *= k
    if n != topo.n or n > 100_000:
        return None
    if dict(torus(dims).links) != dict(topo.links):
        return None
    return dims


Factor = tuple[int, list[list[int]]]
"""``(k, lines)``: every line is a ring of ``k`` chips in ring order; the lines of one factor
share no chip and cover the torus."""


def _lines(dims: Sequence[int], axis: int) -> list[list[int]]:
    """Chip indices of every line along ``axis``, each ordered by its coordinate on ``axis``
    (row-major numbering, as :func:`accelkb.solver.schedule.topology.torus`)."""
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    others = [range(k) if i != axis else range(1) for i, k in enumerate(dims)]
    lines = []
    for base in itertools.product(*others):
        start = sum(c * s for c, s in zip(base, strides, strict=True))
        lines.append([start + p * strides[axis] for p in range(dims[axis])])
    return lines


def factorizations(dims: Sequence[int]) -> list[list[Factor]]:
    """The ways to write the torus as a product: one ring factor per dimension, except that a
    dimension of 4 may instead be two ``ring:2`` factors (``C4 = K2 x K2``: positions 0-1 and
    2-3, then 1-2 and 3-0, so a torus of 2s and 4s is a hypercube). At most 8 ways (tori have
    at most 3 dimensions).

    >>> [[k for k, _ in f] for f in factorizations((4, 3))]
    [[4, 3], [2, 2, 3]]
    """
    options: list[list[list[Factor]]] = []
    for axis, k in enumerate(dims):
        if k < 2:
            continue
        lines = _lines(dims, axis)
        whole: list[Factor] = [(k, lines)]
        if k == 4:
            halves: list[Factor] = [(2, [[ln[0], ln[1]] for ln in lines] + [[ln[2], ln[3]] for ln in lines]),
                                    (2, [[ln[1], ln[2]] for ln in lines] + [[ln[3], ln[0]] for ln in lines])]
            options.append([whole, halves])
        else:
            options.append([whole])
    return [[f for part in pick for f in part] for pick in itertools.product(*options)]


def _phase(factor: Factor, ring: RingSchedule, offset: int,
           chunk_of: Callable[[int], int]) -> list[TransferT]:
    """The ring schedule run on every line of ``factor`` from step ``offset``; ring chunk
    ``(0, i)`` becomes ``(0, chunk_of(i))``."""
    out: list[TransferT] = []
    for line in factor[1]:
        for t, a, b, ch in ring[1]:
            out.append((offset + t, line[a], line[b], (0, chunk_of(ch[1]))))
    return out


def sequential_allreduce(factors: Sequence[Factor], chunks: int,
                         ring_source: RingSource) -> RingSchedule | None:
    """All chunks through each factor's rings in turn (module docstring); None when a ring
    schedule is missing."""
    steps, out = 0, []
    for factor in factors:
        ring = ring_source(factor[0], chunks)
        if ring is None:
            return None
        out.extend(_phase(factor, ring, steps, lambda i: i))
        steps += ring[0]
    return steps, out


def rotated_allreduce(factors: Sequence[Factor], chunks: int,
                      ring_source: RingSource) -> RingSchedule | None:
    """Chunk groups taking the factors in rotated orders, phases padded to the longest ring
    schedule (module docstring); None when a ring schedule is missing."""
    d = len(factors)
    if d == 0:
        return None
    size = -(-chunks // d)
    rings = []
    for k, _ in factors:
        ring = ring_source(k, size)
        if ring is None:
            return None
        rings.append(ring)
    phase = max(r[0] for r in rings)
    out: list[TransferT] = []
    for g in range(min(d, chunks)):
        members = len(range(g, chunks, d))

        def chunk_of(i: int, g: int = g) -> int:
            return g + i * d

        for p in range(d):
            f = (g + p) % d
            trs = [tr for tr in rings[f][1] if tr[3][1] < members]
            out.extend(_phase(factors[f], (rings[f][0], trs), p * phase, chunk_of))
    return d * phase, out
