"""Allreduce strategies of :func:`accelkb.solver.schedule.api.schedule`.

Constructions first (ring, switch, recursive doubling, ring halves; reduce-scatter + allgather
composed; the pipelined reduce-scatter; tori as products of rings; on Cayley topologies a Z3
template chunk copied by a regular automorphism group, and on lane dragonflies with uneven
global ports the same on a Cayley spanning subgraph; on small instances Z3 per-chunk trees
reduced into a root or an exchanging root pair, :mod:`trees`), then, below
the best of them, Z3: the one-way gossip relaxation, whose UNSAT proves optimality, and the
exact encoding (:mod:`encoding`), whose UNSAT is also a proof.

:func:`allreduce` and :func:`allreduce_proof` get the search itself (``search``) for the
sub-instances they build (reduce-scatter, allgather, ``ring:k``), as
:func:`accelkb.solver.schedule.constructions.routed.routed` does.
"""

from __future__ import annotations

import time

from accelkb.solver.schedule.best import Best
from accelkb.solver.schedule.bounds import all_distances, lower_bounds
from accelkb.solver.schedule.cayley import CayleyGroup, cayley_group, lane_rotation
from accelkb.solver.schedule.constructions.allreduce import encoding as arz3
from accelkb.solver.schedule.constructions.allreduce.trees import tree_allreduce
from accelkb.solver.schedule.constructions.cayley_subgraph import SEARCH_SECONDS, cayley_subgraph
from accelkb.solver.schedule.constructions.cayley_template import cayley_allreduce
from accelkb.solver.schedule.constructions.closed_form import (
    doubling_allreduce,
    ring_allreduce,
    switch_allreduce,
)
from accelkb.solver.schedule.constructions.decompose import compose_allreduce, prune_relays
from accelkb.solver.schedule.constructions.greedy import Budget, reverse, spread
from accelkb.solver.schedule.constructions.groups import groups_allreduce
from accelkb.solver.schedule.constructions.pipeline import chunk_orders, pipelined_allreduce
from accelkb.solver.schedule.constructions.product import (
    Factor,
    RingSchedule,
    factorizations,
    rotated_allreduce,
    sequential_allreduce,
    torus_dims,
)
from accelkb.solver.schedule.constructions.ring import halves_allreduce
from accelkb.solver.schedule.constructions.routed import Search
from accelkb.solver.schedule.model import ChunkId, Instance
from accelkb.solver.schedule.topology import Topology, ring
from accelkb.solver.schedule.verify import verify

MAX_PER_ROOT = 4  # template chunks per chip worth a Z3 template search (k*n chunks)
# share of the time after the quick constructions that the template search gets: with 10 s,
# torus:4x4x4 (64 chunks) needs a first 3 s attempt on one completion step, two builds and 1.75 s
# on the next one, which 3/4 left only on an idle machine
TEMPLATE_SHARE = 0.9


def allreduce(inst: Instance, deadline: float, best: Best, use_z3: bool, search: Search) -> None:
    """Offer every allreduce construction that fits before ``deadline`` to ``best``.

    On a Cayley topology with ``k*n`` chunks (``k`` up to :data:`MAX_PER_ROOT` template chunks
    reduced into each chip) the template search runs right after the quick constructions
    (closed forms, reduce-scatter + allgather, at most half the time), since it is the one that
    reaches the bound there (GroqRack: 13 steps; ``torus:4x4`` with 32 chunks: 15). It gets
    :data:`TEMPLATE_SHARE` of what is left (of which it keeps half for itself where the gossip
    relaxation may still prove optimality, see :func:`_cayley`); the slower constructions
    (pipelined, product of rings) run until ``deadline``. Between the quick constructions and
    the rest (after the rest where the quick ones found nothing), with Z3, the per-chunk trees
    of :mod:`trees` on small instances (half the time left at most):
    ``hypercube:3`` and ``torus:2x4`` with 8 chunks 6 -> 5 steps (the bound),
    ``dragonfly:nodes=2,chips=4`` with 16 chunks 6 -> 5 (bound 4).

    A one-level lane dragonfly without such a group (GroqDF8x8: chips with 3 and 4 global
    links) takes the same path: after the quick constructions, :mod:`cayley_subgraph` looks for
    a spanning subgraph that has one (in at most a quarter of the time left), and the template
    search runs on it where it keeps enough links to beat the best schedule by a step.
    """
    topo = inst.topology
    per_root, rest = divmod(inst.chunks, topo.n)
    templated = use_z3 and inst.n == topo.n and rest == 0 and 1 <= per_root <= MAX_PER_ROOT
    group = (cayley_group(topo, time.monotonic() + (deadline - time.monotonic()) / 4)
             if templated else None)
    if group is None and (not templated or lane_rotation(topo) is None):
        _constructions(inst, deadline, best, use_z3, search, "quick")
        quick = best.steps is not None  # the trees search below a schedule: after the rest if none
        if quick:
            _trees(inst, deadline, best, use_z3)
        _constructions(inst, deadline, best, use_z3, search, "slow")
        if not quick:
            _trees(inst, deadline, best, use_z3)
        return
    now = time.monotonic()
    _constructions(inst, now + (deadline - now) / 2, best, use_z3, search, "quick")
    _trees(inst, deadline, best, use_z3)
    on = topo
    if group is None and best.steps is not None and best.steps > 1:
        # a lane dragonfly with uneven global ports: a spanning subgraph with a lane group,
        # if it keeps enough links for a template one step below the best
        needed = -(-2 * inst.chunks * (topo.n - 1) // (best.steps - 1))
        seconds = min(SEARCH_SECONDS, (deadline - time.monotonic()) / 4)
        found = cayley_subgraph(topo, min_unit_links=needed, seconds=seconds)
        if found is not None:
            on, group = found
    if group is not None:
        now = time.monotonic()
        _cayley(inst, on, group, now + TEMPLATE_SHARE * (deadline - now), best)
    _constructions(inst, deadline, best, use_z3, search, "slow")


def _trees(inst: Instance, deadline: float, best: Best, use_z3: bool) -> None:
    """Z3 per-chunk trees below the best schedule, in at most half the time left."""
    if use_z3 and best.steps is not None:
        now = time.monotonic()
        tree_allreduce(inst, now + (deadline - now) / 2, best)


def allreduce_proof(inst: Instance, lb: int, deadline: float, best: Best) -> str:
    """Z3 below ``best`` (which it may improve); returns the proof text for the result, ``""``
    where the best schedule meets ``lb``."""
    if best.steps is None or best.steps <= lb:
        return ""
    verdict = _z3_allreduce(inst, lb, deadline, best)
    below = (best.steps or 0) - 1
    steps = f"{below} step{'s' if below != 1 else ''}"
    return {
        "optimal": f"Z3: UNSAT with {steps} (one-way gossip relaxation: "
                   "no allreduce of any kind fits)",
        "timeout": "Z3 timed out below the best schedule; gap to the lower bound remains",
        "unchecked": "Z3's exact-encoding schedule failed the independent check and was not "
                     "used; gap to the lower bound remains",
        "exact": f"Z3: UNSAT with {steps} (exact encoding; the one-way "
                 "gossip relaxation fits, but no schedule adds without double-counting)",
        "too big": "allreduce encoding too large for Z3 within the time limit; gap to the "
                   "lower bound remains",
    }.get(verdict, "")


def _constructions(inst: Instance, deadline: float, best: Best, use_z3: bool,
                   search: Search, part: str) -> None:
    """Allreduce: the ring / switch constructions where the topology has that shape, else
    reduce-scatter to owner ``j mod n`` + allgather from it, composed (see decompose).
    ``part``: ``"quick"`` (those), ``"slow"`` (pipelined, spread, product of rings) or ``"all"``.

    With a vector of ``k*n`` chunks the two phases are the best reduce-scatter and allgather
    schedules with ``k`` chunks per rank (heuristic or Z3), chunk ``(r, i)`` being vector
    element ``i*n + r``.
    """
    if part != "slow":
        _quick(inst, deadline, best, use_z3, search)
    if part != "quick" and not best.done:
        _slow(inst, deadline, best, use_z3, search)


def _quick(inst: Instance, deadline: float, best: Best, use_z3: bool, search: Search) -> None:
    """Closed-form constructions, then reduce-scatter + allgather from the search, composed."""
    topo, n, c = inst.topology, inst.n, inst.chunks
    for build, label in ((ring_allreduce, "ring: every chunk reduced to a root edge/vertex and "
                          "broadcast back, rotations pipelined"),
                         (switch_allreduce, "switch: add at the switch, return the sums"),
                         (doubling_allreduce, "recursive doubling, dimension order rotated per "
                          "chunk"),
                         (halves_allreduce, "ring halves: each half reduced and copied to its "
                          "ends, the halves swapped at both seams, copied inwards; chunks "
                          "rotated"),
                         (groups_allreduce, "groups: each chunk added inside every fully "
                          "connected node, the other nodes' sums received after that step or "
                          "every chip's own value sent to one chip of each other node before "
                          "it; chunks one step apart")):
        got = build(topo, c)
        if got is not None:
            best.offer(got[0], got[1], label)
    if best.done:
        return
    if c % n == 0:
        half = time.monotonic() + (deadline - time.monotonic()) / 2
        rs_i = Instance(topo, "reduce_scatter", c // n)
        ag_i = Instance(topo, "allgather", c // n)
        rs = search(rs_i, lower_bounds(topo, "reduce_scatter", c // n).best, half, use_z3)[0]
        ag = search(ag_i, lower_bounds(topo, "allgather", c // n).best, deadline, use_z3)[0]
        if rs.steps is not None and ag.steps is not None:
            def element(ch: ChunkId) -> ChunkId:
                return (0, ch[1] * n + ch[0])
            steps, trs = compose_allreduce(
                topo, [(t, u, v, element(ch)) for t, u, v, ch in rs.transfers], rs.steps,
                [(t, u, v, element(ch)) for t, u, v, ch in ag.transfers], ag.steps)
            best.offer(steps, trs, f"reduce-scatter [{rs.method}] + allgather [{ag.method}], "
                       "composed and overlapped")


def _slow(inst: Instance, deadline: float, best: Best, use_z3: bool, search: Search) -> None:
    """Pipelined reduce-scatter, pull-spread compositions, tori as products of rings."""
    topo, n, c = inst.topology, inst.n, inst.chunks
    ids = inst.chunk_ids()
    if c == n and topo.n == n:
        _pipelined(topo, deadline, best)
    owner = [j % n for j in range(len(ids))]
    for far in (False, True):
        if best.done:
            break
        try:
            rs_steps, rs_t = spread(topo.reversed(), ids, [[o] for o in owner],
                                    deadline=deadline, far_first=far,
                                    dist=all_distances(topo.reversed()))
            ag_steps, ag_t = spread(topo, ids, [[o] for o in owner], deadline=deadline,
                                    far_first=far, dist=all_distances(topo))
        except Budget:
            break
        rs_t, ag_t = prune_relays(rs_t, n), prune_relays(ag_t, n)
        steps, trs = compose_allreduce(topo, reverse(rs_steps, rs_t), rs_steps, ag_t, ag_steps)
        best.offer(steps, trs, "reduce-scatter + allgather composed, overlapped")
    _product(inst, deadline, best, use_z3, search)


def _product(inst: Instance, deadline: float, best: Best, use_z3: bool, search: Search) -> None:
    """Allreduce on a torus ring by ring (:mod:`product`), each ring schedule the
    best this module finds for ``ring:k`` in a slice of the time left; skipped where the rings'
    own lower bounds show it cannot beat the best so far."""
    dims = torus_dims(inst.topology)
    if dims is None or best.done:
        return
    c = inst.chunks
    ways = [f for f in factorizations(dims) if len(f) >= 2]

    def ring_lb(k: int, m: int) -> int:
        return lower_bounds(ring(k), "allreduce", m, use_lp=False).best

    def estimate(factors: list[Factor]) -> int:
        group = -(-c // len(factors))
        return min(sum(ring_lb(k, c) for k, _ in factors),
                   len(factors) * max(ring_lb(k, group) for k, _ in factors))

    ways = [f for f in ways if best.steps is None or estimate(f) < best.steps]
    wanted = sorted({(k, m) for f in ways for k, _ in f for m in (c, -(-c // len(f)))})
    found: dict[tuple[int, int], RingSchedule | None] = {}
    stop = time.monotonic() + (deadline - time.monotonic()) / 2  # the rest: Z3 below the best
    for i, (k, m) in enumerate(wanted):
        now = time.monotonic()
        if now >= stop:
            return
        slice_end = now + (stop - now) / (len(wanted) - i)
        sub = Instance(ring(k), "allreduce", m)
        got = search(sub, ring_lb(k, m), slice_end, use_z3)[0]
        found[(k, m)] = (got.steps, got.transfers) if got.steps is not None else None
    for factors in ways:
        for build, label in ((sequential_allreduce, "rings of each factor in turn"),
                             (rotated_allreduce, "chunk groups taking the factors in rotated "
                              "orders")):
            made = build(factors, c, lambda k, m: found.get((k, m)))
            if made is None or (best.steps is not None and made[0] >= best.steps):
                continue
            if not verify(inst, made[1], made[0]).ok:  # a faulty ring schedule: skip, not ERROR
                continue
            shape = "x".join(str(k) for k, _ in factors)
            best.offer(made[0], made[1], f"torus as a product of rings ({shape}): {label}, "
                       "every ring an allreduce of the line (plane) sums")


def _cayley(inst: Instance, topo: Topology, group: CayleyGroup, deadline: float, best: Best
            ) -> None:
    """Allreduce of ``k*n`` chunks on a Cayley topology (torus, hypercube, GroqRack-like
    dragonfly): ``k`` Z3 template chunks copied by a regular automorphism group
    (:mod:`cayley_template`), one step below the best so far at a time. ``topo`` is the
    instance's topology or a spanning subgraph of it (:mod:`cayley_subgraph`)."""
    if best.steps is None:
        return
    on_subgraph = topo is not inst.topology
    per_root = inst.chunks // topo.n
    # half the time left when the gossip relaxation after it may still prove optimality
    left = deadline - time.monotonic()
    if _relaxation_fits(inst, best.steps - 1, left):
        deadline = time.monotonic() + left / 2
    dist = all_distances(topo)
    while not best.done and time.monotonic() < deadline:
        steps = best.steps - 1
        trs = cayley_allreduce(topo, group, dist, steps, deadline, per_root)
        if trs is None:
            return
        what = "one Z3 template chunk" if per_root == 1 else f"{per_root} Z3 template chunks"
        best.offer(steps, trs, f"cayley: {what} (reduce into chip 0, broadcast "
                   "back), copied by a regular automorphism group"
                   + (", odd chips running it time-reversed" if group.parity else "")
                   + (f", on a spanning subgraph ({topo.unit_links} of "
                      f"{inst.topology.unit_links} unit links: every chip keeps as many global "
                      "links as the chip with the fewest)" if on_subgraph else ""))


def _pipelined(topo: Topology, deadline: float, best: Best, tries: int = 8) -> None:
    """Allreduce of ``n`` chunks with the allgather run inside a front-loaded reduce-scatter
    (:mod:`pipeline`), over several reduction priorities while time is left."""
    dist = all_distances(topo)
    last = 0.0
    for i, order in enumerate(chunk_orders(topo.n, tries)):
        started = time.monotonic()
        if best.done or (i and deadline - started < 2 * last):
            return
        try:
            steps, trs = pipelined_allreduce(topo, dist, order, deadline=deadline)
        except Budget:
            return
        last = time.monotonic() - started
        best.offer(steps, trs, "pipelined: forward reduce-scatter, each chunk's allgather as "
                   f"soon as it is reduced, on the free links (priority order {i})")


def _relaxation_fits(inst: Instance, steps: int, seconds: float) -> bool:
    """Whether the gossip relaxation at ``steps`` is small enough to build in ``seconds``."""
    relaxed = arz3.AllreduceProblem(inst.topology, inst.chunks, steps, exact=False)
    dist = all_distances(inst.topology)
    return (arz3.state_size(relaxed, dist) <= arz3.MAX_STATE_VARIABLES
            and arz3.encode_seconds(relaxed, dist) <= seconds)


def _z3_allreduce(inst: Instance, lb: int, deadline: float, best: Best) -> str:
    """Allreduce below the best schedule: the gossip relaxation at ``best-1`` (UNSAT proves
    optimality; a SAT answer the checker accepts is a schedule), else the exact encoding.
    Returns 'optimal' (the relaxation is UNSAT), 'exact' (the relaxation fits, the exact
    encoding, also a proof, is UNSAT), 'bound', 'timeout', 'too big' or 'unchecked' (an exact
    schedule the checker refused: a bug, never offered)."""
    topo = inst.topology
    dist = all_distances(topo)
    assert best.steps is not None
    while best.steps > lb:
        relaxed = arz3.AllreduceProblem(topo, inst.chunks, best.steps - 1, exact=False)
        if not _relaxation_fits(inst, best.steps - 1, deadline - time.monotonic()):
            return "too big"
        verdict, trs = arz3.solve(relaxed, dist, deadline)
        if verdict == "unsat":
            return "optimal"
        if verdict == "sat" and not verify(inst, trs, relaxed.steps).ok:
            exact = arz3.AllreduceProblem(topo, inst.chunks, relaxed.steps, exact=True)
            verdict, trs = arz3.solve(exact, dist, deadline)
            if verdict == "unsat":
                return "exact"
            if verdict == "sat" and not verify(inst, trs, exact.steps).ok:
                return "unchecked"
        if verdict != "sat":
            return "timeout"
        best.offer(max((t for t, *_ in trs), default=-1) + 1, trs, "Z3 allreduce encoding")
    return "bound"
