"""Lower bounds on the makespan (in steps) of a collective on a topology.

Every bound is valid for the step model of ``../shared/bench/README.md`` (one chunk per unit link
per step, copies free, combining free). :func:`lower_bounds` returns all of them with the best
(largest, rounded up) so every schedule can report its gap.

- ``diameter``: the farthest source-destination pair needs that many hops.
- ``ingress`` (allgather, alltoall): chip ``v`` must receive ``c*(n-1)`` chunks over its
  in-links. ``egress`` (reduce_scatter): every non-owner must send each chunk's contribution.
- ``cut``: chunks that must enter a chip group ``S`` over its in-links (groups of the topology,
  BFS balls, slabs of generated grids); for alltoall ``|S|*|V-S|`` chunks cross.
- ``entry`` (broadcast from ``root``): every chunk must cross into a chip set ``S`` without the
  root that holds a rank, at most ``in(S)`` first crossings fit in a step and none before step
  ``dist(root, S) - 1``, so some chunk first crosses at step
  ``f >= dist(root, S) - 2 + ceil(c/in(S))`` through an entry chip of ``S`` and must still reach
  every rank ``w`` of ``S``: ``T >= f + 1 + max_w min_entry dist(entry, w)``. For ``S`` = all
  chips but the root this is ``ceil(c/out(root)) + ecc(root) - 1``.
- ``ball`` (allgather): by step ``s`` chip ``v`` can hold only chunks of chips within distance
  ``s``, and gains at most its in-units per step.
- ``total_hops`` (alltoall): the sum of shortest distances over the total link capacity.
- ``relay`` (alltoall, traffic): a chunk from ``s`` to a rank at distance ``>= h`` must leave
  ``s`` by step ``T-h`` (it still needs ``h-1`` hops), and distinct chunks leave in distinct
  (step, unit link) slots, so ``T >= ceil(k_h(s)/out(s)) + h - 1`` with ``k_h(s)`` the chunks
  of ``s`` going that far; symmetrically for what a rank receives from ``h`` or more hops
  away. Through a switch (``h = 2``) this is the egress bound plus the hop out of the switch.
- ``transfers`` (allreduce): each chunk needs ``2(n-1)`` transfers in total. A schedule replayed
  one transfer at a time (in any order within a step) is a one-way gossip scheme: a received
  partial sum tells the receiver at most the contributions it contains, and a receiver that ends
  complete knows every contribution. One-way gossip among ``n`` persons needs ``2n-2`` calls:
  up to the first call that makes someone (``w``) know everything, each of the other ``n-1``
  ranks must have sent once (their contributions reach ``w``); after it, each of the other
  ``n-1`` ranks must still receive once. Switch vertices only add calls.
- ``send_latency`` / ``receive_latency`` (allreduce), for a set ``S`` of chips holding at least
  one rank with a rank outside: every chunk must cross out of ``S`` at least once (the
  contributions of ``S`` must leave), and at most ``out(S)`` first crossings fit in a step, so
  some chunk first crosses at step ``f >= ceil(c/out(S)) - 1``; every crossing of that chunk is at
  step ``>= f``, so rank ``w`` outside ``S`` completes it no earlier than ``f + dist(S, w)``.
  Symmetrically every chunk must cross into ``S``; the last crossings of the ``c`` chunks sit in
  distinct (step, unit link) slots, so some last crossing is at step
  ``l <= T - ceil(c/in(S))``; it is last, so every rank ``w`` outside has already been carried
  in: ``l >= dist(w, S) - 1``. Hence ``T >= ceil(c/in(S)) + dist(w, S) - 1``. On a switch with
  one link per chip this is ``c + 1``.
- ``completion`` (allreduce): chip ``v`` receives at most ``in(v)`` chunks per step, and a chunk
  that is not complete at ``v`` at the start of step ``tau`` must still be received there in some
  step ``>= tau``. So if at most ``K(v, tau)`` chunks can be complete at ``v`` by ``tau``, then
  ``T >= tau + ceil((c - K(v, tau)) / in(v))``. ``K`` comes from a cut in the time-expanded
  network (node ``(u, t)``: chip ``u`` at the start of step ``t``; a wait edge
  ``(u, t) -> (u, t+1)``; a transfer ``(u, t) -> (y, t+1)`` per unit link). Take the ranks
  ``W`` at distance ``>= r`` from ``v``. In the one-way gossip relaxation a partial sum held at
  ``(u, t)`` contains only contributions of ranks within distance ``t`` of ``u``: at most
  ``P(u, t)`` of ``W``. Let ``X`` be the nodes with ``P(u, t) >= 2`` that can still reach ``v`` by
  ``tau``, plus ``(v, tau)`` (``tau >= 1``). A chunk complete at ``v`` by ``tau`` holds every
  ``w`` in ``W``, so a time-respecting chain runs from ``(w, 0)`` (outside ``X``:
  ``P(w, 0) = 1``) to ``(v, tau)``; the edge by which it first enters ``X`` starts outside
  ``X`` at a node that can reach ``v`` by ``tau``. Waits into ``X`` bring at most ``free`` =
  the sum of their ``P(u, t-1)`` items, so the entering transfers of the chunk bring the other
  ``need = |W| - free``, each at most ``P(u, t)`` of them (counted as ``min(P(u, t), need)``);
  one unit link carries one chunk per step, so ``need * K <= sum over entering transfers of
  units * min(P, need)``. Example:
  GroqDF2x8 (two 8-cliques, twin links ``i <-> i+8`` of multiplicity 4), ``v = 0``,
  ``tau = 2``, ``W`` = the 7 chips of the other clique except the twin 8: ``X = {(8, 1),
  (0, 2)}``; the entering transfers are the 7 clique links into 8 in step 0 and the 7 clique
  links into 0 in step 1, each carrying one item of ``W`` (the twin link from 0 carries none),
  so ``K = 14 // 7 = 2`` and ``T >= 2 + ceil((16 - 2) / 11) = 4``. Also evaluated on ``G^T``
  (the time-reversed schedule on the reversed links is a gossip scheme of the same length).
  Computed only where it could beat the other bounds; it is above the benchmark's reference
  bound on GroqDF2x8 (4 against 3).
- ``lp`` (alltoall, small n): minimum time of a fractional multicommodity flow (Z3 Optimize over
  reals), aggregated per source; ``c`` chunks per pair scale it by ``c``. Computed here for one
  chunk on up to ``LP_EAGER_CHIPS`` vertices; ``schedule`` computes it up to ``LP_MAX_CHIPS``
  only when its schedule is above the other bounds. On ``torus:3x5`` it is 9 where
  ``total_hops`` is 7: the 5-rings carry 18 of each chip's 28 hops.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque

import z3
from pydantic import BaseModel, ConfigDict, Field

from accelkb.solver.schedule.cayley import grid_coordinates
from accelkb.solver.schedule.topology import Topology

COLLECTIVES = ("allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "traffic")
LP_MAX_CHIPS = 16  # the alltoall LP: up to this many chips (0.5-15 s at 16, Z3 Optimize)
LP_EAGER_CHIPS = 12  # computed with the other bounds up to this; above, only where needed


class Bounds(BaseModel):
    """Lower bounds on the makespan, in steps."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    values: dict[str, float] = Field(description="bound name -> value in steps (may be fractional)")
    best: int = Field(description="the largest bound, rounded up: the makespan is at least this")
    best_name: str = Field(description="which bound gives best")
    skipped: tuple[str, ...] = Field(default=(), description="bounds not computed: the time "
                                     "limit ran out first (the best may then be lower)")


def distances(topo: Topology, source: int, reverse: bool = False,
              adj: list[list[int]] | None = None) -> list[int]:
    """BFS hop distances from ``source`` (to it, with ``reverse``)."""
    if adj is None:
        adj = topo.in_neighbors() if reverse else topo.out_neighbors()
    dist = [-1] * topo.n
    dist[source] = 0
    q = deque([source])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


_LAST_DISTANCES: list[tuple[Topology, list[list[int]]]] = []


def all_distances(topo: Topology) -> list[list[int]]:
    """``d[u][v]`` hop distance from u to v; read-only, since the last topology's table is
    kept and shared (the bounds and the constructions of one synthesis all ask for it:
    0.33 s each at 576 chips)."""
    if _LAST_DISTANCES and _LAST_DISTANCES[0][0] is topo:
        return _LAST_DISTANCES[0][1]
    adj = topo.out_neighbors()
    table = [distances(topo, s, adj=adj) for s in range(topo.n)]
    _LAST_DISTANCES[:] = [(topo, table)]
    return table


def crossing_weights(topo: Topology) -> dict[tuple[int, int], int] | None:
    """Link weights that rank paths by group boundaries crossed, outermost level first, then
    by hops: a link costs 1 plus ``M**(k+1)`` for each level ``k`` of ``topo.groups`` (nodes,
    racks, ...) whose groups it joins (a chip outside every group of a level counts as its
    own group there), with ``M = n + 1`` above any hop count. None without groups. On a
    two-level dragonfly a path then crosses between racks only once (shortest hop paths may
    pass through a third rack: 576 chips, all-to-all, 1.2 times the inter-rack transfers).

    >>> from accelkb.solver.schedule.topology import parse_topology
    >>> w = crossing_weights(parse_topology("dragonfly:nodes=2,chips=2,ports=1"))
    >>> w[(0, 1)], w[(0, 2)]
    (1, 6)
    """
    if not topo.groups:
        return None
    m = topo.n + 1
    member: list[dict[int, int]] = [{v: g for g, group in enumerate(level) for v in group}
                                    for level in topo.groups]
    return {(u, v): 1 + sum(m ** (k + 1) for k, of in enumerate(member)
                            if of.get(u, -1 - u) != of.get(v, -1 - v))
            for (u, v) in topo.links}


def weighted_distances(topo: Topology, weight: dict[tuple[int, int], int],
                       deadline: float | None = None) -> list[list[int]]:
    """``d[u][v]``: the least total ``weight`` of a path from u to v (Dijkstra towards each
    destination; 576 chips: about 1 s). Raises TimeoutError once ``time.monotonic()`` passes
    ``deadline``."""
    into = topo.in_neighbors()
    to: list[list[int]] = []
    for d in range(topo.n):
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("weighted distances: past the deadline")
        dist = [-1] * topo.n
        dist[d] = 0
        heap = [(0, d)]
        while heap:
            c, v = heapq.heappop(heap)
            if c > dist[v]:
                continue
            for u in into[v]:
                nc = c + weight[(u, v)]
                if dist[u] < 0 or nc < dist[u]:
                    dist[u] = nc
                    heapq.heappush(heap, (nc, u))
        to.append(dist)
    return [[to[d][u] for d in range(topo.n)] for u in range(topo.n)]


def _candidate_sets(topo: Topology, dist: list[list[int]]) -> list[frozenset[int]]:
    """Chip sets the cut bounds try: the topology's groups, BFS balls, and on a generated grid
    (torus, hypercube, ring; ``full:n`` as one line) the slabs ``{v : coordinate k of v < w}``.
    Any set gives a valid bound; a ball in a ``4x16`` torus is a diamond, while the slab of 8
    columns is the bisection that all-to-all must cross (1,024 chunks each way over 8 links:
    128 steps)."""
    sets = {frozenset(g) for level in topo.groups for g in level}
    grid = grid_coordinates(topo)
    if grid is not None:
        coords, dims, _law = grid
        for k, size in enumerate(dims):
            for w in range(1, size):
                sets.add(frozenset(v for v in range(topo.n) if coords[v][k] < w))
    for root in {0, topo.n // 2}:
        for r in range(1, max(dist[root]) + 1):
            ball = frozenset(v for v in range(topo.n) if dist[root][v] < r)
            if 0 < len(ball) < topo.n:
                sets.add(ball)
    return sorted(sets, key=lambda s: (len(s), sorted(s)))


def _crossing(demand: dict[tuple[int, int], int], s: frozenset[int], n: int) -> int:
    """Chunks of ``demand`` from inside ``s`` to outside."""
    if len(demand) == n * (n - 1) and len(set(demand.values())) == 1:
        k = sum(1 for v in s if v < n)
        return next(iter(demand.values())) * k * (n - k)
    return sum(k for (a, b), k in demand.items() if a in s and b not in s)


def _cap_into(topo: Topology, s: frozenset[int]) -> int:
    return sum(m for (u, v), m in topo.links.items() if v in s and u not in s)


def _cap_out(topo: Topology, s: frozenset[int]) -> int:
    return sum(m for (u, v), m in topo.links.items() if u in s and v not in s)


def ball_bound(topo: Topology, chunks: int, dist: list[list[int]]) -> int:
    """Combined ball bound for allgather (see module docstring); ranks only."""
    n, worst = topo.endpoints, 0
    for v in range(n):
        d_in = topo.in_units(v)
        by_dist: dict[int, int] = {}
        for u in range(n):
            by_dist[dist[u][v]] = by_dist.get(dist[u][v], 0) + 1
        got, within, s, need = 0, 1, 0, chunks * (n - 1)
        far = max(by_dist)
        while got < need and s < far:  # at most the diameter: every rank is then within reach
            s += 1
            within += by_dist.get(s, 0)
            got = min(got + d_in, chunks * (within - 1))
        if got < need:  # past the diameter only the ingress limits: d_in chunks a step
            s += -(-(need - got) // d_in)
        worst = max(worst, s)
    return worst


def _latency_bounds(topo: Topology, chunks: int, dist: list[list[int]],
                    sets: list[frozenset[int]]) -> tuple[float, float]:
    """Allreduce ``send_latency`` and ``receive_latency`` bounds (module docstring) over the
    single ranks and ``sets`` (each holding a rank and leaving one out)."""
    n = topo.endpoints
    send = recv = 0.0
    for s in [frozenset([v]) for v in range(n)] + list(sets):
        outside = [w for w in range(n) if w not in s]
        if not outside:
            continue
        out_cap, in_cap = _cap_out(topo, s), _cap_into(topo, s)
        if out_cap:
            far = max(min(dist[u][w] for u in s) for w in outside)
            send = max(send, math.ceil(chunks / out_cap) - 1 + far)
        if in_cap:
            far = max(min(dist[w][u] for u in s) for w in outside)
            recv = max(recv, math.ceil(chunks / in_cap) + far - 1)
    return float(send), float(recv)


def _relay_bound(topo: Topology, demand: dict[tuple[int, int], int],
                 dist: list[list[int]]) -> int:
    """The ``relay`` bound (module docstring): per rank and hop count, sending and receiving."""
    far_out: dict[tuple[int, int], int] = {}
    far_in: dict[tuple[int, int], int] = {}
    for (s, d), k in demand.items():
        if k and dist[s][d] > 0:
            far_out[(s, dist[s][d])] = far_out.get((s, dist[s][d]), 0) + k
            far_in[(d, dist[s][d])] = far_in.get((d, dist[s][d]), 0) + k
    best = 0
    for far, units in ((far_out, topo.out_units), (far_in, topo.in_units)):
        for v in {v for v, _ in far}:
            cap = units(v)
            if not cap:
                continue
            hops = sorted((h for w, h in far if w == v), reverse=True)
            count = 0
            for h in hops:
                count += far[(v, h)]
                best = max(best, -(-count // cap) + h - 1)
    return best


def _entry_bound(topo: Topology, chunks: int, dist: list[list[int]],
                 sets: list[frozenset[int]], root: int) -> int:
    """Broadcast ``entry`` bound (module docstring) over the single ranks, all chips but the
    root, and ``sets`` without the root."""
    n, nv = topo.endpoints, topo.n
    inn = topo.in_neighbors()
    everyone_else = frozenset(v for v in range(nv) if v != root)
    best = 0
    for s in [frozenset([v]) for v in range(n) if v != root] + [everyone_else] + list(sets):
        ranks = [w for w in s if w < n]
        if root in s or not ranks:
            continue
        entries = [e for e in s if any(u not in s for u in inn[e])]
        cap = _cap_into(topo, s)
        if not entries or not cap or any(dist[root][e] < 0 for e in entries):
            continue
        first = min(dist[root][e] for e in entries) - 1  # earliest step a chunk can cross in
        spread_in = max(min(dist[e][w] for e in entries) for w in ranks)
        best = max(best, first + math.ceil(chunks / cap) + spread_in)
    return best


COMPLETION_ALL_RANKS = 128  # up to here every rank is a candidate ``v``; beyond, a few


def complete_by(topo: Topology, dist: list[list[int]], v: int, tau: int, r: int,
                inn: list[list[int]] | None = None) -> int | None:
    """Upper bound ``K(v, tau)`` on the chunks complete at rank ``v`` at the start of step
    ``tau`` (``completion`` in the module docstring, ``W`` = ranks at distance ``>= r`` from
    ``v``); None when this cut gives nothing."""
    n, nv = topo.endpoints, topo.n
    far = [w for w in range(n) if dist[w][v] >= r]
    if tau < 1 or not far:
        return None
    inn = inn if inn is not None else topo.in_neighbors()
    # p[t][u] = ranks of W within distance t of u (a histogram of distances, then prefix sums)
    p = [[0] * nv for _ in range(tau + 1)]
    for w in far:
        row = dist[w]
        for u in range(nv):
            if 0 <= row[u] <= tau:
                p[row[u]][u] += 1
    for t in range(1, tau + 1):
        prev, cur = p[t - 1], p[t]
        for u in range(nv):
            cur[u] += prev[u]

    def reach(u: int, t: int) -> bool:
        return 0 <= dist[u][v] <= tau - t

    inside = [[p[t][u] >= 2 and reach(u, t) for u in range(nv)] for t in range(tau + 1)]
    inside[tau][v] = True
    if any(inside[0]):
        return None
    free, carried = 0, 0
    entering: list[tuple[int, int, int]] = []
    for t in range(1, tau + 1):
        for y in range(nv):
            if not inside[t][y]:
                continue
            if not inside[t - 1][y] and reach(y, t - 1):
                free += p[t - 1][y]
            for u in inn[y]:
                if not inside[t - 1][u] and reach(u, t - 1) and p[t - 1][u]:
                    entering.append((topo.links[(u, y)], t - 1, u))
    need = len(far) - free
    if need <= 0:
        return None
    for m, t, u in entering:
        carried += m * min(p[t][u], need)
    return carried // need


def completion_bound(topo: Topology, chunks: int, dist: list[list[int]], above: int = 0
                     ) -> float:
    """``max over v, tau of tau + ceil((c - K(v, tau)) / in(v))`` (module docstring), on the
    topology as given; ``K`` is 0 before every rank can have reached ``v``. Terms that cannot
    exceed ``above`` (the other bounds) are skipped; 0 when none does."""
    n = topo.endpoints
    ranks = list(range(n))
    if n > COMPLETION_ALL_RANKS:
        ranks = sorted(ranks, key=lambda v: (topo.in_units(v), v))[:4] + [0, n // 2]
    inn = topo.in_neighbors()
    best = 0
    for v in sorted(set(ranks)):
        in_v = topo.in_units(v)
        if in_v == 0:
            continue
        ecc = max(dist[w][v] for w in range(n))
        if ecc < 0 or any(dist[w][v] < 0 for w in range(n)):
            continue
        for tau in range(max(ecc - 1, 0), ecc + 2):
            if tau + math.ceil(chunks / in_v) <= above:
                continue
            k = 0 if tau < ecc else chunks
            for r in range(max(2, ecc - 1), ecc + 1) if tau >= ecc else ():
                got = complete_by(topo, dist, v, tau, r, inn)
                if got is not None:
                    k = min(k, got)
            if chunks > k and tau + math.ceil((chunks - k) / in_v) > above:
                best = max(best, tau + math.ceil((chunks - k) / in_v))
    return float(best)


def allreduce_completion_bound(topo: Topology, chunks: int, above: int = 0) -> int:
    """The ``completion`` bound of an allreduce of ``chunks`` chunks, on ``topo`` and on its
    reverse, when it exceeds ``above`` (the other bounds); else 0."""
    comp = completion_bound(topo, chunks, all_distances(topo), above)
    rev = topo.reversed()
    if dict(rev.links) != dict(topo.links):
        comp = max(comp, completion_bound(rev, chunks, all_distances(rev), above))
    return int(comp) if comp > above else 0


def alltoall_lp_bound(topo: Topology, time_limit_s: float = 3.0) -> float | None:
    """Fractional multicommodity-flow time for alltoall; None beyond LP_MAX_CHIPS or on timeout."""
    ranks = topo.endpoints
    if topo.n > LP_MAX_CHIPS or ranks < 2:
        return None
    opt = z3.Optimize()
    opt.set("timeout", int(time_limit_s * 1000))
    t = z3.Real("lp_time")
    edges = sorted(topo.links)
    load: dict[tuple[int, int], list[z3.ArithRef]] = {e: [] for e in edges}
    for s in range(ranks):
        flow = {e: z3.Real(f"flow_from_{s}_on_{e[0]}_to_{e[1]}") for e in edges}
        for e, f in flow.items():
            opt.add(f >= 0)
            load[e].append(f)
        for v in range(topo.n):
            inflow = z3.Sum([flow[e] for e in edges if e[1] == v] or [z3.RealVal(0)])
            outflow = z3.Sum([flow[e] for e in edges if e[0] == v] or [z3.RealVal(0)])
            net = (1 - ranks) if v == s else (1 if v < ranks else 0)
            opt.add(inflow - outflow == net)
    for e in edges:
        opt.add(z3.Sum(load[e]) <= t * topo.links[e])
    opt.minimize(t)
    if opt.check() != z3.sat:
        return None
    val = opt.model()[t]
    return float(val.numerator_as_long()) / float(val.denominator_as_long())


def lower_bounds(topo: Topology, collective: str, chunks: int = 1, use_lp: bool = True,
                 demand: dict[tuple[int, int], int] | None = None, root: int = 0,
                 deadline: float | None = None) -> Bounds:
    """All lower bounds for ``collective`` with ``chunks`` chunks per rank (allreduce: total;
    broadcast: chunks of ``root``). After ``deadline`` (``time.monotonic()``) the costly ones
    (cut sets, ball, relay, latency, completion, LP) are skipped and named in ``skipped``.

    Examples
    --------
    >>> from accelkb.solver.schedule.topology import parse_topology
    >>> lower_bounds(parse_topology("ring:8"), "allgather", 2).best
    7
    """
    n, dist = topo.endpoints, all_distances(topo)  # ranks are 0..n-1; higher ids are switches
    vals: dict[str, float] = {}
    if n == 1:
        return Bounds(values={"trivial": 0.0}, best=0, best_name="trivial")
    diam = max(dist[u][v] for u in range(n) for v in range(n))

    skipped: list[str] = []

    def inside(s: frozenset[int]) -> int:
        return sum(1 for v in s if v < n)

    def worth(name: str) -> bool:
        """Whether there is time for the bound ``name``; if not, it is recorded as skipped."""
        if deadline is not None and time.monotonic() > deadline:
            skipped.append(name)
            return False
        return True

    sets = [s for s in _candidate_sets(topo, dist) if 0 < inside(s) < n] if worth("cut") else []
    if collective in ("allgather", "broadcast"):
        sources = range(n) if collective == "allgather" else [root]
        vals["diameter"] = float(max(dist[s][v] for s in sources for v in range(n)))
        need = chunks * (n - 1) if collective == "allgather" else chunks
        vals["ingress"] = max(need / topo.in_units(v) for v in range(n)
                              if collective == "allgather" or v != root)
        if collective == "broadcast" and worth("entry"):
            vals["entry"] = float(_entry_bound(topo, chunks, dist, sets, root))
        if collective == "allgather":
            if "cut" not in skipped:
                vals["cut"] = max([chunks * (n - inside(s)) / max(_cap_into(topo, s), 1e-9)
                                   for s in sets] + [0.0])
            if worth("ball"):
                vals["ball"] = float(ball_bound(topo, chunks, dist))
    elif collective == "reduce_scatter":
        rev = lower_bounds(topo.reversed(), "allgather", chunks, use_lp, deadline=deadline)
        vals = {k: v for k, v in rev.values.items()}
        vals["egress"] = vals.pop("ingress")
        skipped.extend(rev.skipped)
    elif collective == "allreduce":
        vals["diameter"] = float(diam)
        vals["transfers"] = 2 * chunks * (n - 1) / topo.unit_links
        if "cut" not in skipped:
            vals["cut"] = max([chunks / max(min(_cap_into(topo, s), _cap_out(topo, s)), 1e-9)
                               for s in sets] + [0.0])
        if worth("latency"):
            send, recv = _latency_bounds(topo, chunks, dist, sets)
            vals["send_latency"], vals["receive_latency"] = send, recv
        if worth("completion"):
            comp = allreduce_completion_bound(topo, chunks,
                                              math.ceil(max(vals.values()) - 1e-9))
            if comp:
                vals["completion"] = float(comp)
    elif collective in ("alltoall", "traffic"):
        if demand is None:
            demand = {(s, d): chunks for s in range(n) for d in range(n) if s != d}
        vals["diameter"] = float(max((dist[s][d] for (s, d), k in demand.items() if k), default=0))
        total = sum(k * dist[s][d] for (s, d), k in demand.items())
        vals["total_hops"] = total / topo.unit_links
        into, outof = [0] * topo.n, [0] * topo.n
        for (s_, d_), k in demand.items():
            outof[s_] += k
            into[d_] += k
        vals["ingress"] = max(into[v] / topo.in_units(v) for v in range(n))
        if worth("relay"):
            vals["relay"] = float(_relay_bound(topo, demand, dist))
        vals["egress"] = max(outof[v] / topo.out_units(v) for v in range(n))
        if "cut" not in skipped:
            vals["cut"] = max([_crossing(demand, c, n) / max(_cap_out(topo, c), 1e-9)
                               for c in sets] + [0.0])
        if use_lp and collective == "alltoall" and chunks == 1 and topo.n <= LP_EAGER_CHIPS \
                and worth("lp"):
            lp = alltoall_lp_bound(topo)
            if lp is not None:
                vals["lp"] = lp
    else:
        raise ValueError(f"unknown collective {collective!r}")
    best_name = max(sorted(vals), key=lambda k: (math.ceil(vals[k] - 1e-9), vals[k]))
    return Bounds(values={k: round(v, 4) for k, v in vals.items()},
                  best=math.ceil(vals[best_name] - 1e-9), best_name=best_name,
                  skipped=tuple(skipped))
