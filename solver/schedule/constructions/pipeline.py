"""Pipelined allreduce: the allgather of early-reduced chunks runs inside the reduce-scatter.

Reduce-scatter then allgather, each phase limited by the chips with the fewest links (a
10-link chip sends ``n-1`` partial sums in the reduce-scatter and receives ``n-1`` sums in the
allgather, ``ceil((n-1)/10)`` steps each), costs about twice that. But the reduce-scatter
loads a chip's *out*-links and the allgather its *in*-links, so the two overlap well when they
run at the same time on different chunks:

1. the reduce-scatter is built forwards in time (:func:`forward_reduce`): every link is busy
   from step 0, and chunks finish their reduction at different steps (by priority), not all
   in the last one as in a time-reversed allgather;
2. the allgather is a pull spread on ``G`` whose chunks are released at their owners one step
   after their reduction is complete, on the unit links the reduce-scatter leaves free in each
   step (:func:`timed_spread`).

Collision-free and causal by construction; :mod:`verify` replays the result.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from functools import partial

from accelkb.solver.schedule.constructions.decompose import prune_relays
from accelkb.solver.schedule.constructions.greedy import Budget, assign_chunks, rarest
from accelkb.solver.schedule.model import ChunkId, TransferT
from accelkb.solver.schedule.topology import Topology


def timed_spread(topo: Topology, chunks: list[ChunkId], owner: list[int], release: list[int],
                 busy: Counter[tuple[int, int, int]] | None = None,
                 deadline: float | None = None) -> tuple[int, list[TransferT]]:
    """Pull spread of chunk ``i`` from ``owner[i]`` (held there from step ``release[i]``) to
    every chip, on the unit links left after ``busy[(step, u, v)]``.

    Each step every chip pulls over each in-link with free capacity a chunk it lacks that the
    sender holds: chunks only this in-link can deliver first, then the earliest released, then
    the rarest. Returns ``(makespan_steps, transfers)``.

    Raises
    ------
    Budget
        when ``deadline`` (a ``time.monotonic()`` value) passes.
    """
    n, k = topo.n, len(chunks)
    busy = busy if busy is not None else Counter()
    # bit position = priority: earlier release first, then list order
    bit_of = [0] * k
    for pos, i in enumerate(sorted(range(k), key=lambda i: (release[i], i))):
        bit_of[i] = pos
    chunk_at = [0] * k
    for i, b in enumerate(bit_of):
        chunk_at[b] = i
    last_busy = max((t for t, _, _ in busy), default=-1)
    arrivals: dict[int, list[int]] = {}
    for i in range(k):
        arrivals.setdefault(release[i], []).append(i)
    held = [0] * n
    holders = [0] * k
    full = (1 << k) - 1
    inn = [[(u, topo.links[(u, v)]) for u in nbrs] for v, nbrs in enumerate(topo.in_neighbors())]
    transfers: list[TransferT] = []
    step = 0
    pending = k
    while pending or any(full & ~held[v] for v in range(n)):
        if deadline is not None and time.monotonic() > deadline:
            raise Budget()
        for i in arrivals.pop(step, ()):
            held[owner[i]] |= 1 << bit_of[i]
            holders[bit_of[i]] += 1
            pending -= 1
        new = list(held)
        gained: list[int] = []
        for v in range(n):
            lack = full & ~held[v]
            if not lack:
                continue
            cands = []
            for u, m in inn[v]:
                free = m - busy.get((step, u, v), 0)
                have = held[u] & lack
                if free > 0 and have:
                    cands.append((have, u, free))
            if not cands:
                continue
            picked = 0
            for u, b in assign_chunks(cands, partial(rarest, holders=holders)):
                picked |= 1 << b
                transfers.append((step, u, v, chunks[chunk_at[b]]))
                gained.append(b)
            new[v] |= picked
        for b in gained:
            holders[b] += 1
        held = new
        step += 1
        if not gained and not pending and step > last_busy:
            raise ValueError("no progress: some chip cannot be reached")
    return step, transfers


def _lowest_bit(pool: int) -> int:
    """Index of the lowest set bit (the highest-priority chunk)."""
    return (pool & -pool).bit_length() - 1


def forward_reduce(topo: Topology, dist: list[list[int]], order: list[int] | None = None,
                   deadline: float | None = None) -> tuple[int, list[TransferT]]:
    """Reduce-scatter of ``n`` chunks, chunk ``j`` summed at chip ``j``, built forwards in time
    (as early as it goes, so every link is busy from step 0).

    A chip sends its partial sum of chunk ``j`` once, to a neighbor strictly closer to ``j``,
    and only after every neighbor farther from ``j`` has sent its own: so the receiver is
    still active and every active chip keeps a closer active neighbor (no deadlock). Each step
    each out-link takes a ready chunk only it can take first, then the highest priority
    (``order[j]``, lower first). Returns ``(steps, transfers)``.

    Raises
    ------
    Budget
        when ``deadline`` passes.
    """
    n = topo.endpoints
    order = order if order is not None else list(range(n))
    chunk_at = [0] * n
    for j, b in enumerate(order):
        chunk_at[b] = j
    out = topo.out_neighbors()
    closer: dict[tuple[int, int], int] = {e: 0 for e in topo.links}
    wait = [[0] * n for _ in range(n)]  # senders to v of chunk j that have not sent yet
    parents: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(n)]
    for u in range(n):
        for j in range(n):
            parents[u][j] = [v for v in out[u] if v < n and dist[v][j] < dist[u][j]]
            for v in parents[u][j]:
                closer[(u, v)] |= 1 << order[j]
                wait[v][j] += 1
    ready = [0] * n
    for v in range(n):
        for j in range(n):
            if j != v and wait[v][j] == 0:
                ready[v] |= 1 << order[j]
    remaining = n * (n - 1)
    transfers: list[TransferT] = []
    step = 0
    while remaining:
        if deadline is not None and time.monotonic() > deadline:
            raise Budget()
        sent: list[tuple[int, int]] = []
        for u in range(n):
            r = ready[u]
            if not r:
                continue
            cands = [(r & closer[(u, v)], v, topo.links[(u, v)]) for v in out[u]]
            cands = [c for c in cands if c[0]]
            picked = 0
            for v, b in assign_chunks(cands, _lowest_bit):
                picked |= 1 << b
                j = chunk_at[b]
                transfers.append((step, u, v, (0, j)))
                sent.append((u, j))
            ready[u] &= ~picked
        if not sent:  # pragma: no cover - the waiting rule rules this out
            raise ValueError("reduction stalled")
        for u, j in sent:
            remaining -= 1
            for v in parents[u][j]:
                wait[v][j] -= 1
                if wait[v][j] == 0 and v != j:
                    ready[v] |= 1 << order[j]
        step += 1
    return step, transfers


def _ag_forwards(topo: Topology, ids: list[ChunkId], rs: list[TransferT],
                 deadline: float | None) -> tuple[int, list[TransferT]]:
    """Allgather as early as it goes after the reduce-scatter ``rs``, on the links it leaves
    free; each chunk is released at its owner one step after its reduction completes."""
    n = len(ids)
    done = [-1] * n
    for t, _, _, c in rs:
        done[c[1]] = max(done[c[1]], t)
    busy: Counter[tuple[int, int, int]] = Counter((t, u, v) for t, u, v, _ in rs)
    steps, ag = timed_spread(topo, ids, list(range(n)), [d + 1 for d in done], busy=busy,
                             deadline=deadline)
    return steps, prune_relays(ag, n)


def pipelined_allreduce(topo: Topology, dist: list[list[int]], order: list[int] | None = None,
                        deadline: float | None = None) -> tuple[int, list[TransferT]]:
    """Allreduce of ``n`` chunks (chunk ``j`` owned by chip ``j``, ids ``(0, j)``): the
    front-loaded :func:`forward_reduce`, then the allgather of each chunk as soon as it is
    reduced, on the links the reduction leaves free (module docstring).

    Raises
    ------
    Budget
        when ``deadline`` passes.
    """
    n = topo.endpoints
    ids: list[ChunkId] = [(0, j) for j in range(n)]
    rs_steps, rs = forward_reduce(topo, dist, order, deadline=deadline)
    ag_steps, ag = _ag_forwards(topo, ids, rs, deadline)
    return max(rs_steps, ag_steps), rs + ag


def chunk_orders(n: int, tries: int) -> list[list[int]]:
    """Reduction priorities to try: chunk order, strided across groups of 8, then seeded
    shuffles (the order decides which chunks finish their reduction early)."""
    out = [list(range(n))]
    if n % 8 == 0:
        out.append([(j % 8) * (n // 8) + j // 8 for j in range(n)])
    seed = 2
    while len(out) < tries:
        o = list(range(n))
        random.Random(seed).shuffle(o)
        out.append(o)
        seed += 1
    return out[:tries]
