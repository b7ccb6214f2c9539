"""Decompositions that reach Groq scale: each piece solved exactly or constructively, then joined.

- **Time reversal / duality**: reduce-scatter on G = allgather on G reversed, run backwards.
- **Composition**: allreduce = reduce-scatter (each chunk reduced at an owner chip) followed by
  allgather from the owners; the allgather part is shifted as early as link capacity and each
  chunk's reduction completion allow.
- **Time windows (rounds)**: ``c`` chunks per rank = ``c`` copies of the one-chunk schedule,
  started every ``delta`` steps where ``delta`` is the smallest period whose overlaid link loads
  never exceed the unit links (fast for 576 chips x 10 chunks).
"""

from __future__ import annotations

from collections import Counter

from accelkb.solver.schedule.model import ChunkId, TransferT
from accelkb.solver.schedule.topology import Topology


def link_loads(transfers: list[TransferT]) -> Counter[tuple[int, int, int]]:
    """``(step, src, dst)`` -> chunks carried."""
    return Counter((t, u, v) for t, u, v, _ in transfers)


def smallest_period(topo: Topology, transfers: list[TransferT], makespan: int) -> int:
    """Smallest ``delta`` such that copies started every ``delta`` steps never collide.

    Copies collide on a link when more of its loaded steps share a residue modulo ``delta``
    than it has unit links; the busiest links are checked first, so a period that fails
    usually fails after a few links (the 576-chip one-chunk allgather, 331,200 transfers,
    whose period is its makespan: 0.4-0.75 s, where folding every step load for each period
    took 0.75-1.07 s).
    """
    per_link: dict[tuple[int, int], Counter[int]] = {}
    for t, u, v, _ in transfers:
        steps = per_link.get((u, v))
        if steps is None:
            steps = per_link[(u, v)] = Counter()
        steps[t] += 1
    totals = sorted(((steps.total(), e, steps) for e, steps in per_link.items()),
                    key=lambda item: -item[0])
    start = max([-(-total // topo.links[e]) for total, e, _ in totals] + [1])
    for delta in range(start, makespan):
        if all(_fits(steps, delta, topo.links[e]) for _, e, steps in totals):
            return delta
    return makespan  # copies one after the other never collide


def _fits(steps: Counter[int], delta: int, cap: int) -> bool:
    """Whether a link with these step loads, folded modulo ``delta``, stays within ``cap``."""
    folded: Counter[int] = Counter()
    for t, k in steps.items():
        slot = t % delta
        folded[slot] += k
        if folded[slot] > cap:
            return False
    return True


def rounds(topo: Topology, one: list[TransferT], makespan: int, copies: int
           ) -> tuple[int, list[TransferT]]:
    """Overlay ``copies`` shifted copies of a one-chunk schedule; chunk ``(r, 0)`` of copy
    ``i`` becomes ``(r, i)``."""
    if copies <= 1:
        return makespan, list(one)
    delta = smallest_period(topo, one, makespan)
    sent = {c for *_, c in one}
    out: list[TransferT] = []
    for i in range(copies):
        ids = {c: (c[0], i) for c in sent}  # one chunk id object per copy, shared by transfers
        shift = i * delta
        out.extend([(t + shift, u, v, ids[c]) for t, u, v, c in one])
    return (copies - 1) * delta + makespan, out


def compose_allreduce(topo: Topology, rs: list[TransferT], rs_steps: int, ag: list[TransferT],
                      ag_steps: int) -> tuple[int, list[TransferT]]:
    """Reduce-scatter then allgather, the allgather shifted as early as it can go.

    A shift ``s`` is valid when every allgather transfer of a chunk starts after the chunk's
    last reduction transfer and the combined link loads stay within the unit links.
    """
    done: dict[ChunkId, int] = {}
    for t, _, _, c in rs:
        done[c] = max(done.get(c, -1), t)
    first: dict[ChunkId, int] = {}
    for t, _, _, c in ag:
        first[c] = min(first.get(c, 1 << 30), t)
    rs_load = link_loads(rs)
    ag_load = link_loads(ag)
    lowest = max([done.get(c, -1) + 1 - first[c] for c in first] + [0])
    for shift in range(lowest, rs_steps + 1):
        if all(rs_load.get((t + shift, u, v), 0) + k <= topo.links[(u, v)]
               for (t, u, v), k in ag_load.items()):
            out = list(rs) + [(t + shift, u, v, c) for t, u, v, c in ag]
            return max(rs_steps, shift + ag_steps), out
    return rs_steps + ag_steps, list(rs) + [(t + rs_steps, u, v, c)  # pragma: no cover
                                            for t, u, v, c in ag]


def prune_relays(transfers: list[TransferT], ranks: int) -> list[TransferT]:
    """Drop deliveries to switch vertices (ids >= ranks) that never forward the chunk.

    A spread reaches switches too; a switch that receives a chunk and passes it nowhere would,
    run backwards as a reduction, send a partial sum it never had.
    """
    out = list(transfers)
    while True:
        forwards = {(u, c) for _, u, _, c in out}
        keep = [x for x in out if x[2] < ranks or (x[2], x[3]) in forwards]
        if len(keep) == len(out):
            return keep
        out = keep
