"""Latency-bound allreduce on a ring: each half reduced, the halves swapped at both seams.

A transfer carries the sender's whole partial sum, so two streams running through the same
chips in opposite directions would double-count, and reduce-to-a-root plus broadcast takes
about ``n`` steps for one chunk. This construction takes about ``3n/4``:

1. each half of the ring (a path of ``L = n/2`` chips) is reduced into its middle link (both
   ends of it swap their sides' sums) and the half's sum is copied back out to the half's two
   ends; every chip on the way holds part of that sum, so the copy replaces it;
2. at both seams between the halves the end chips swap their halves' sums: disjoint, so the
   four seam chips hold the whole sum;
3. the whole sum is copied inwards from both seams (again replacing partial sums).

``2*ceil((L-1)/2)+1 + 1 + floor((L-1)/2)`` steps for even ``n``: 5 on ``ring:8``, 8 on ``ring:12``,
11 on ``ring:16`` (all three proven optimal by the exact Z3 encoding) and 23 on ``ring:32``,
where reduce-and-broadcast takes 31. Several chunks are the same schedule rotated round the
ring and delayed where links would collide (:func:`halves_allreduce`).

Examples
--------
>>> from accelkb.solver.schedule.topology import parse_topology
>>> steps, trs = halves_allreduce(parse_topology("ring:12"), 1)
>>> steps, len(trs)
(8, 32)
"""

from __future__ import annotations

from collections import Counter

from accelkb.solver.schedule.constructions.closed_form import ring_order
from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology

Hop = tuple[int, int, int]  # (step, from position, to position)


def _gather_to_ends(path: list[int]) -> tuple[int, list[Hop]]:
    """Reduce ``path`` into its middle link, then copy the sum out to both ends; returns the
    step count after which both ends hold the path's sum."""
    size = len(path)
    if size == 1:
        return 0, []
    m = size // 2 - 1  # the middle link is path[m] - path[m+1]
    left, right = m, size - 2 - m  # chain lengths into path[m] and path[m+1]
    hops: list[Hop] = [(s, path[s], path[s + 1]) for s in range(left)]
    hops += [(s, path[size - 1 - s], path[size - 2 - s]) for s in range(right)]
    swap = max(left, right)
    hops += [(swap, path[m], path[m + 1]), (swap, path[m + 1], path[m])]
    hops += [(swap + 1 + s, path[m - s], path[m - s - 1]) for s in range(left)]
    hops += [(swap + 1 + s, path[m + 1 + s], path[m + 2 + s]) for s in range(right)]
    return 2 * swap + 1, hops


def _spread_from_ends(path: list[int], start: int) -> tuple[int, list[Hop]]:
    """Copy what both ends hold into the rest of ``path`` from step ``start``; returns the
    first step after it."""
    size = len(path)
    inner = size - 2
    if inner <= 0:
        return start, []
    a = (size - 1) // 2  # path[1..a] from the first end, the rest from the last end
    b = inner - a
    hops = [(start + s, path[s], path[s + 1]) for s in range(a)]
    hops += [(start + s, path[size - 1 - s], path[size - 2 - s]) for s in range(b)]
    return start + max(a, b), hops


def one_chunk(n: int) -> tuple[int, list[Hop]]:
    """The schedule of one chunk on ring positions ``0..n-1`` (module docstring), ``n >= 4``.

    >>> one_chunk(8)[0], one_chunk(32)[0]
    (5, 23)
    """
    first, second = list(range(n // 2)), list(range(n // 2, n))
    t1, hops = _gather_to_ends(first)
    t2, more = _gather_to_ends(second)
    hops += more
    seam = max(t1, t2)
    for a, b in ((first[-1], second[0]), (second[-1], first[0])):
        hops += [(seam, a, b), (seam, b, a)]
    end = seam + 1
    for half in (first, second):
        done, more = _spread_from_ends(half, seam + 1)
        hops += more
        end = max(end, done)
    return end, hops


def halves_allreduce(topo: Topology, chunks: int, tries: int = 8
                     ) -> tuple[int, list[TransferT]] | None:
    """``chunks`` copies of :func:`one_chunk` on a ring of at least 4 chips, copy ``j``
    rotated by about ``j*n/chunks`` positions (the best of ``tries`` rotations near that) and
    started at the first step where none of its links is already full; None when ``topo`` is
    no ring.
    """
    found = ring_order(topo)
    if found is None or len(found[0]) < 4:
        return None
    order, mult = found
    n = len(order)
    steps1, hops = one_chunk(n)
    load: Counter[tuple[int, int, int]] = Counter()
    trs: list[TransferT] = []
    makespan = 0
    for j in range(chunks):
        ideal = (j * n) // max(chunks, 1)
        best: tuple[int, int, int] | None = None  # (finish, delay, rotation)
        for k in range(min(tries, n)):
            rot = (ideal + (k + 1) // 2 * (1 if k % 2 else -1)) % n
            delay = 0
            while any(load[(t + delay, (a + rot) % n, (b + rot) % n)] >= mult
                      for t, a, b in hops):
                delay += 1
            if best is None or (delay + steps1, delay) < best[:2]:
                best = (delay + steps1, delay, rot)
        assert best is not None
        finish, delay, rot = best
        for t, a, b in hops:
            key = (t + delay, (a + rot) % n, (b + rot) % n)
            load[key] += 1
            trs.append((key[0], order[key[1]], order[key[2]], (0, j)))
        makespan = max(makespan, finish)
    return makespan, trs
