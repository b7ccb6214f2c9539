"""Fast constructive schedules: step-synchronous, collision-free by construction.

- :func:`spread` (allgather, broadcast, and reduce_scatter through time reversal): every step,
  every chip *pulls* over each in-link a chunk it lacks and the sender holds, giving priority to
  chunks that only this in-link can deliver, then to the rarest chunks network-wide, then to
  the oldest chunk index (which pipelines many chunks per rank). Chunk sets are Python integer
  bitsets, so 576 chips x 5760 chunks stay fast.
- :func:`route` (alltoall, traffic matrices): store-and-forward along shortest paths; each step
  every out-link takes the queued chunk farthest from its destination, spreading chunks with
  several shortest next hops over the least-used link.
- :func:`reverse` turns an allgather-style schedule on the reversed topology into a
  reduce-scatter schedule (a broadcast tree run backwards is a reduction tree).

The results are heuristic; :mod:`accelkb.solver.schedule.api` compares them with the lower
bounds and asks Z3 for the rest.
"""

from __future__ import annotations

import heapq
import random
import time
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial

from accelkb.solver.schedule.model import ChunkId, TransferT
from accelkb.solver.schedule.topology import Topology


class Budget(Exception):
    """The time limit ran out before the construction finished."""


def spread(topo: Topology, chunks: list[ChunkId], origins: list[list[int]],
           need: list[int] | None = None, deadline: float | None = None,
           order: list[int] | None = None, far_first: bool = False,
           dist: list[list[int]] | None = None, eager: bool = False
           ) -> tuple[int, list[TransferT]]:
    """Spread chunks from their origins until chip ``v`` holds every chunk in bitset need[v].

    ``order`` gives each chunk's priority rank (lower = earlier; default: list order). With
    ``far_first`` (needs ``dist``) a chip first takes the chunks whose origin is farthest from
    it (they have the least slack before the diameter deadline). With ``eager`` a chunk counts
    as held by its receiver as soon as a transfer of this step is planned, and the rarest of
    the 64 oldest chunks is taken: chips pulling from the same source in one step take
    different chunks (a broadcast root then sends a distinct chunk on every out-link, which
    the step-end count does not achieve). Returns ``(makespan_steps, transfers)``.

    Raises
    ------
    Budget
        when ``deadline`` (a ``time.monotonic()`` value) passes.
    """
    n, k = topo.n, len(chunks)
    order = order if order is not None else list(range(k))
    bit_of = order  # chunk i lives at bit order[i]
    chunk_at = [0] * k
    for i, b in enumerate(bit_of):
        chunk_at[b] = i
    held = [0] * n
    holders = [0] * k
    for i, srcs in enumerate(origins):
        for s in srcs:
            held[s] |= 1 << bit_of[i]
            holders[bit_of[i]] += 1
    full = (1 << k) - 1
    need = need if need is not None else [full] * n
    inn = [[(u, topo.links[(u, v)]) for u in nbrs] for v, nbrs in enumerate(topo.in_neighbors())]
    far = None
    if far_first and dist is not None:
        far = [[0] * k for _ in range(n)]
        for i, srcs in enumerate(origins):
            for v in range(n):
                far[v][bit_of[i]] = min(dist[s][v] for s in srcs)
    transfers: list[TransferT] = []
    step = 0
    while any(need[v] & ~held[v] for v in range(n)):
        if deadline is not None and time.monotonic() > deadline:
            raise Budget()
        new = list(held)
        gained: list[int] = []
        for v in range(n):
            lack = need[v] & ~held[v]
            if not lack:
                continue
            cands = [(held[u] & lack, u, m) for u, m in inn[v]]
            cands = [c for c in cands if c[0]]
            if not cands:
                continue
            choose = (partial(_farthest, holders=holders, far_v=far[v]) if far is not None
                      else partial(rarest, holders=holders, scan=64 if eager else 6))
            picked = 0
            for u, b in assign_chunks(cands, choose):
                picked |= 1 << b
                transfers.append((step, u, v, chunks[chunk_at[b]]))
                gained.append(b)
                if eager:
                    holders[b] += 1
            new[v] |= picked
        if not gained:
            raise ValueError("no progress: some chip cannot be reached")  # pragma: no cover
        if not eager:
            for b in gained:
                holders[b] += 1
        held = new
        step += 1
    return step, transfers


def assign_chunks(cands: list[tuple[int, int, int]], choose: Callable[[int], int]
                  ) -> Iterator[tuple[int, int]]:
    """Assign chunks to the unit links of one step between a chip and its neighbours.

    ``cands`` holds ``(offered chunk bits, neighbour, unit links)``; links offering fewer chunks
    go first (sorted in place), and each link prefers chunks no other link offers, so that
    scarce chunks are not wasted. ``choose(pool)`` picks a bit index from a non-empty ``pool``.
    Yields ``(neighbour, bit index)``; no bit is assigned twice and no link beyond its count.

    >>> list(assign_chunks([(0b11, 7, 1), (0b01, 8, 1)], lambda pool: pool.bit_length() - 1))
    [(8, 0), (7, 1)]
    """
    cands.sort(key=lambda c: c[0].bit_count())
    # what the other links offer, from prefix and suffix unions: O(degree) operations on the
    # chunk bitsets per chip and step, not O(degree^2)
    after = [0] * (len(cands) + 1)
    for j in range(len(cands) - 1, -1, -1):
        after[j] = after[j + 1] | cands[j][0]
    before = 0
    picked = 0
    for idx, (offered, nbr, m) in enumerate(cands):
        others = before | after[idx + 1]
        before |= offered
        cand = offered & ~picked
        if not cand:
            continue
        for _ in range(m):
            if not cand:
                break
            excl = cand & ~others
            b = choose(excl if excl else cand)
            bit = 1 << b
            picked |= bit
            cand ^= bit  # b was taken from cand
            yield nbr, b


def rarest(pool: int, holders: list[int], scan: int = 6) -> int:
    """Among the lowest ``scan`` bits of ``pool`` (highest priority), the chunk with the fewest
    holders."""
    best_b, best_h = -1, 1 << 60
    for _ in range(scan):
        if not pool:
            break
        low = pool & -pool
        b = low.bit_length() - 1
        if holders[b] < best_h:
            best_b, best_h = b, holders[b]
        pool ^= low
    return best_b


def _farthest(pool: int, holders: list[int], far_v: list[int], scan: int = 64) -> int:
    """Among the lowest ``scan`` bits of ``pool``: farthest origin first, then rarest."""
    best_b, best_key = -1, (1 << 60, 0)
    for _ in range(scan):
        if not pool:
            break
        low = pool & -pool
        b = low.bit_length() - 1
        key = (-far_v[b], holders[b])
        if key < best_key:
            best_b, best_key = b, key
        pool ^= low
    return best_b


def reverse(makespan: int, transfers: list[TransferT]) -> list[TransferT]:
    """Time-reverse and flip every transfer: a broadcast on G^T becomes a reduction on G."""
    return [(makespan - 1 - t, v, u, c) for t, u, v, c in transfers]


def route(topo: Topology, demand: list[tuple[ChunkId, int, int]], dist: list[list[int]],
          deadline: float | None = None) -> tuple[int, list[TransferT]]:
    """Route unit chunks ``(id, src, dst)`` along shortest paths, farthest-first per link.

    Raises
    ------
    Budget
        when ``deadline`` passes.
    """
    n = topo.n
    out = topo.out_neighbors()
    cap = {e: m for e, m in topo.links.items()}
    # next hops of u towards d
    nxt: list[dict[int, list[int]]] = [dict() for _ in range(n)]
    queues: list[dict[int, deque[ChunkId]]] = [dict() for _ in range(n)]
    remaining = 0
    for cid, s, d in demand:
        queues[s].setdefault(d, deque()).append(cid)
        remaining += 1
    transfers: list[TransferT] = []
    used: dict[tuple[int, int], int] = {}
    step = 0
    while remaining:
        if deadline is not None and time.monotonic() > deadline:
            raise Budget()
        moves: list[tuple[int, int, ChunkId]] = []
        for u in range(n):
            q = queues[u]
            if not q:
                continue
            free = {v: cap[(u, v)] for v in out[u]}
            total_free = sum(free.values())
            for d in sorted(q, key=lambda d: (-dist[u][d], d)):
                hops = nxt[u].get(d)
                if hops is None:
                    hops = [v for v in out[u] if dist[v][d] == dist[u][d] - 1]
                    nxt[u][d] = hops
                dq = q[d]
                while dq:
                    open_hops = [v for v in hops if free[v] > 0]
                    if not open_hops:
                        break
                    v = min(open_hops, key=lambda w: (used.get((u, w), 0) - free[w], w))
                    free[v] -= 1
                    total_free -= 1
                    used[(u, v)] = used.get((u, v), 0) + 1
                    moves.append((v, d, dq.popleft()))
                    transfers.append((step, u, v, moves[-1][2]))
                if not dq:
                    del q[d]
                if total_free == 0:
                    break
        for v, d, cid in moves:
            if v == d:
                remaining -= 1
            else:
                queues[v].setdefault(d, deque()).append(cid)
        step += 1
    return step, transfers


def choose_paths(topo: Topology, demand: list[tuple[ChunkId, int, int]], dist: list[list[int]],
                 passes: int = 3, deadline: float | None = None,
                 squared: bool = True, detour: bool = False,
                 weight: dict[tuple[int, int], int] | None = None,
                 start: list[list[int]] | None = None) -> list[list[int]]:
    """Shortest paths for every chunk, balancing the load per unit link.

    Shortest by hops, or with ``weight`` (and ``dist`` the matching
    :func:`~accelkb.solver.schedule.bounds.weighted_distances`) by total link weight, e.g. fewest group
    boundaries crossed first (:func:`~accelkb.solver.schedule.bounds.crossing_weights`).

    Each chunk walks from its source choosing, among next hops on a shortest path, the link
    with the least load per unit link so far; later passes rip up each path and re-route it
    against everyone else's load. The path cost is the added sum of squared loads per unit
    link (``squared``) or the bottleneck load first. With ``detour`` (hop-shortest paths
    only), a chunk whose shortest paths all cross a link loaded above twice the mean (plus one)
    may also take a first hop that gets no closer (one hop longer than shortest), when that is
    cheaper: it spreads traffic that shortest paths pile onto a few links, such as pipeline
    stages on neighbouring dragonfly nodes joined by two links. With ``start`` (the paths of an
    earlier call), every pass is a rip-up pass over those paths.

    Raises
    ------
    Budget
        when ``deadline`` passes before every chunk has a path (a later pass stops early and
        keeps the paths it has).
    """
    out = topo.out_neighbors()
    cap = topo.links
    load: dict[tuple[int, int], int] = {e: 0 for e in cap}
    nxt: dict[tuple[int, int], list[int]] = {}
    paths: list[list[int]] = [[] for _ in demand] if start is None else [list(p) for p in start]
    total, units = 0, topo.unit_links  # hops placed; mean load per unit link = total / units
    for path in paths if start is not None else ():
        for a, b in zip(path, path[1:], strict=False):
            load[(a, b)] += 1
        total += len(path) - 1

    def hop(u: int, v: int, below: tuple[float, float, int]) -> tuple[float, float, int]:
        """Cost of taking u -> v, then ``below``: (added sum of squared loads, bottleneck, v),
        or with ``squared`` off (bottleneck, below's first entry plus the added square, v)."""
        m = cap[(u, v)]
        here = (load[(u, v)] + 1) / m
        sq = below[0] + (2 * load[(u, v)] + 1) / (m * m)
        return (sq, max(here, below[1]), v) if squared else (max(here, below[0]), sq, v)

    p0 = 0 if start is None else 1  # pass 0 places every chunk; later passes re-route
    for p in range(p0, p0 + passes):
        if p and deadline is not None and time.monotonic() > deadline:
            break
        for i, (_, s, d) in enumerate(demand):
            if i % 4096 == 0 and deadline is not None and time.monotonic() > deadline:
                if p == 0:
                    raise Budget()  # not every chunk has a path yet
                return paths  # a later pass: every path is complete, keep them
            old = paths[i]
            for a, b in zip(old, old[1:], strict=False):
                load[(a, b)] -= 1
            total -= max(len(old) - 1, 0)
            best: dict[int, tuple[float, float, int]] = {d: (0.0, 0.0, -1)}

            def cost(u: int, d: int = d, best: dict = best) -> tuple[float, float, int]:
                # cheapest continuation over shortest paths
                got = best.get(u)
                if got is not None:
                    return got
                hops = nxt.get((u, d))
                if hops is None:
                    hops = [v for v in out[u] if dist[v][d] == dist[u][d] - (
                        1 if weight is None else weight[(u, v)])]
                    nxt[(u, d)] = hops
                res = min((hop(u, v, cost(v)) for v in hops),
                          default=(float("inf"), float("inf"), -1))
                best[u] = res
                return res

            shortest = cost(s)
            first = shortest[2]
            if detour and weight is None and shortest[1 if squared else 0] > 2 * total / units + 1:
                side = min((hop(s, x, cost(x)) for x in out[s] if dist[x][d] == dist[s][d]),
                           default=None)
                if side is not None and side < shortest:
                    first = side[2]
            path, u = [s, first], first
            load[(s, first)] += 1
            while u != d:
                v = cost(u)[2]
                load[(u, v)] += 1
                path.append(v)
                u = v
            paths[i] = path
            total += len(path) - 1
    return paths


def route_paths(topo: Topology, demand: list[tuple[ChunkId, int, int]], paths: list[list[int]],
                deadline: float | None = None) -> tuple[int, list[TransferT]]:
    """Schedule chunks on fixed paths: each step every link sends the chunks with most hops left,
    ties broken in a fixed pseudo-random order.

    Breaking ties by list order (farthest pairs first) let whole groups of chunks wait behind
    each other: GroqDF32x8 all-to-all on crossing-weighted paths took 78 steps where its
    busiest link carries 65 chunks; in the shuffled order it takes 65 (with seeds 0-5 alike, and
    no change on 14 other topologies x 1-2 chunks, where the busiest link already decided it).

    Raises
    ------
    Budget
        when ``deadline`` passes.
    """
    tie = list(range(len(paths)))
    random.Random(0).shuffle(tie)
    # a waiting chunk is one int: most hops left first, then its tie rank (distinct per chunk,
    # so the order is that of (hops left, tie) tuples, at a fraction of the comparison cost)
    m = len(paths)
    longest = max((len(p) for p in paths), default=0)
    chunk_of = [0] * m
    for i, r in enumerate(tie):
        chunk_of[r] = i
    pos = [0] * m  # hop each chunk waits for
    waiting: dict[tuple[int, int], list[int]] = {}
    for i, path in enumerate(paths):
        if len(path) > 1:
            heapq.heappush(waiting.setdefault((path[0], path[1]), []),
                           (longest - len(path)) * m + tie[i])
    transfers: list[TransferT] = []
    cap = topo.links
    step = 0
    while waiting:  # links with chunks waiting (576-chip all-to-all: half of them per step)
        if deadline is not None and time.monotonic() > deadline:
            raise Budget()
        moved: list[int] = []
        for e, heap in waiting.items():
            for _ in range(cap[e] if cap[e] < len(heap) else len(heap)):
                i = chunk_of[heapq.heappop(heap) % m]
                transfers.append((step, e[0], e[1], demand[i][0]))
                moved.append(i)
        waiting = {e: heap for e, heap in waiting.items() if heap}
        for i in moved:
            path = paths[i]
            at = pos[i] = pos[i] + 1
            if at < len(path) - 1:
                heapq.heappush(waiting.setdefault((path[at], path[at + 1]), []),
                               (longest - len(path) + at) * m + tie[i])
        step += 1
    return step, transfers
