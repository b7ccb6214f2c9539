"""``schedule(...)``: synthesize a collision-free collective schedule and prove its quality.

Pipeline: bounds -> constructive schedules (allgather-like: :mod:`constructions.greedy` and the
decompositions of :mod:`constructions.decompose`; allreduce: :mod:`constructions.allreduce.search`, with
the ring, switch, product-of-rings and Cayley-template constructions, the template also on a
Cayley spanning subgraph (:mod:`constructions.cayley_subgraph`); alltoall and traffic:
:mod:`constructions.routed`) -> if the best one is above the bound and the instance is small enough,
Z3 (:mod:`encoding`; for allreduce :mod:`constructions.allreduce.encoding`, whose gossip
relaxation and exact encoding give the proofs) at ``T-1, T-2, ...`` until UNSAT (then the
schedule is proven OPTIMAL) or the time limit (then it is FEASIBLE, with its gap) -> the
independent checker (:mod:`verify`) replays the result. A timeout never reads as UNSATISFIABLE.

Examples
--------
>>> r = schedule("ring:8", "allgather", chunks=1)
>>> r.status.value, r.makespan_steps, r.lower_bound_steps, r.verified
('OPTIMAL', 4, 4, True)
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from accelkb.errors import InputError
from accelkb.solver.schedule import encoding as enc
from accelkb.solver.schedule.best import Best as _Best
from accelkb.solver.schedule.bounds import (
    Bounds,
    all_distances,
    lower_bounds,
)
from accelkb.solver.schedule.constructions.allreduce.mirror import mirror_allreduce
from accelkb.solver.schedule.constructions.allreduce.search import allreduce, allreduce_proof
from accelkb.solver.schedule.constructions.decompose import prune_relays, rounds
from accelkb.solver.schedule.constructions.greedy import (
    Budget,
    reverse,
    spread,
)
from accelkb.solver.schedule.constructions.routed import routed
from accelkb.solver.schedule.model import (
    REDUCING,
    ChunkId,
    Instance,
    ScheduleResult,
    Status,
    TransferT,
)
from accelkb.solver.schedule.topology import Topology, load_topology_file, parse_topology
from accelkb.solver.schedule.verify import verify

Z3_MAX_VARIABLES = 150_000  # send variables of the monolithic encoding worth trying
BIG_TRANSFERS = 400_000  # above this, build allgathers from one-chunk rounds first
MAX_CHIPS = 1200  # all-pairs distances and per-chunk state are pure Python: Groq scale, not more
# transfers a schedule may have (about 200 bytes each in memory, built and replayed in pure
# Python at 1-5 us each): 576 chips with 8 chunks per rank is 2.7 million
MAX_TRANSFERS = 5_000_000
# the checker's replay per transfer, with a margin: 1.0-1.3 us measured for an allgather, 1.5 us
# for a reduce-scatter (contribution masks, replayed chunk by chunk), 3.3 million transfers at
# 576 chips, CPU time
VERIFY_SECONDS_PER_TRANSFER = 2.5e-6
VERIFY_SECONDS_PER_REDUCTION = 3e-6
# all-to-all and traffic: 3.6-5.7 us per transfer measured (576 chips, 1.15 million transfers:
# a chunk id per chip pair, 331,200 of them, looked up in a table that no cache holds)
VERIFY_SECONDS_PER_ROUTED = 5e-6


def _topology(topology: str | Path | Topology) -> Topology:
    if isinstance(topology, Topology):
        return topology
    text = str(topology)
    if isinstance(topology, Path) or text.endswith(".json"):
        return load_topology_file(text)
    return parse_topology(text)


def _spread_variants(topo: Topology, chunks: list[ChunkId], origins: list[list[int]],
                     dist, deadline: float, best: _Best, label: str, tr=None,
                     rarest_first: bool = False) -> None:
    """Run the pull heuristic in its variants; ``tr`` post-processes (e.g. reversal)."""
    k = len(chunks)
    # pipeline order: chunk index first, then origin
    rank = [0] * k
    for pos, j in enumerate(sorted(range(k), key=lambda j: (chunks[j][-1], chunks[j][0]))):
        rank[j] = pos
    for far in ((False, True) if rarest_first else (True, False)):
        if best.done or (best.steps is not None and time.monotonic() > deadline):
            return
        try:
            steps, trs = spread(topo, chunks, origins, deadline=deadline, order=rank,
                                far_first=far, dist=dist)
        except Budget:
            return
        if topo.endpoints < topo.n:
            trs = prune_relays(trs, topo.endpoints)
        if tr is not None:
            trs = tr(steps, trs)
        best.offer(steps, trs, f"{label} ({'farthest-origin' if far else 'rarest'}-first pull)")


def _allgather_like(inst: Instance, topo: Topology, deadline: float, best: _Best,
                    reverse_out: bool) -> None:
    """Allgather or broadcast on ``topo``; with ``reverse_out`` run backwards (reduce-scatter)."""
    ids = inst.chunk_ids()
    dist = all_distances(topo)
    tr = (lambda steps, trs: reverse(steps, trs)) if reverse_out else None
    label = "time-reversed allgather on G^T" if reverse_out else "constructive"
    c = inst.chunks
    big = len(ids) * inst.n > BIG_TRANSFERS
    if inst.collective in ("allgather", "reduce_scatter") and c > 1 and big:
        one: list[ChunkId] = [(r, 0) for r in range(inst.n)]
        started = time.monotonic()
        try:
            s1, t1 = spread(topo, one, [[r] for r in range(inst.n)], deadline=deadline,
                            far_first=False, dist=dist)
            one_chunk_s = time.monotonic() - started
            t1 = prune_relays(t1, topo.endpoints)
            steps, trs = rounds(topo, t1, s1, c)
            if tr is not None:
                trs = tr(steps, trs)
            best.offer(steps, trs, f"{label}, {c} one-chunk rounds overlaid (time windows)")
        except Budget:
            return
        # the full pull costs about c times the one-chunk pull (plus checking): skip it when
        # it cannot finish before the deadline
        if best.done or one_chunk_s * c * 1.5 > deadline - time.monotonic():
            return
    origins = [inst.sources(ch) if not reverse_out else [ch[0]] for ch in ids]
    if inst.collective == "broadcast":
        try:
            steps, trs = spread(topo, ids, origins, deadline=deadline, eager=True)
            if topo.endpoints < topo.n:
                trs = prune_relays(trs, topo.endpoints)
            best.offer(steps, trs, f"{label} (rarest-first pull, distinct chunks per sender)")
        except Budget:
            return
    _spread_variants(topo, ids, origins, dist, deadline, best, label, tr,
                     rarest_first=len(ids) * inst.n > BIG_TRANSFERS // 4)
    if not big:
        _relabelled(topo, ids, origins, deadline, best, label, tr)


RELABEL_TRIES = 24  # seeded renumberings of the pull heuristic (hypercube:6: 11 in the first)


def _relabelled(topo: Topology, ids: list[ChunkId], origins: list[list[int]], deadline: float,
                best: _Best, label: str, tr=None) -> None:
    """The pull heuristic breaks ties by chip number, so the numbering matters: where it
    misses the bound, rerun it on the same links with the ranks (and the switches) renumbered
    at random (seeded), mapping the schedule back, in at most half the time left. On
    hypercube:6 (one chunk) the bit labelling gives 12 and a renumbering 11, the bound."""
    stop = time.monotonic() + (deadline - time.monotonic()) / 2
    ranks = topo.endpoints
    for seed in range(1, RELABEL_TRIES + 1):
        if best.done or time.monotonic() > stop:
            return
        rnd = random.Random(seed)
        new = list(range(ranks))
        rnd.shuffle(new)
        switches = list(range(ranks, topo.n))
        rnd.shuffle(switches)
        new += switches
        back = [0] * topo.n
        for old, nu in enumerate(new):
            back[nu] = old
        renamed = Topology(topo.name, topo.n, {(new[u], new[v]): m
                                               for (u, v), m in topo.links.items()},
                           ranks=topo.ranks)
        far = seed % 2 == 1
        try:
            steps, trs = spread(renamed, ids, [[new[o] for o in os] for os in origins],
                                deadline=stop, far_first=far, dist=all_distances(renamed))
        except Budget:
            return
        trs = [(t, back[u], back[v], ch) for t, u, v, ch in trs]
        if topo.endpoints < topo.n:
            trs = prune_relays(trs, topo.endpoints)
        if tr is not None:
            trs = tr(steps, trs)
        best.offer(steps, trs, f"{label} ({'farthest-origin' if far else 'rarest'}-first pull, "
                   f"chips renumbered, seed {seed})")


def _z3_improve(inst: Instance, lb: int, deadline: float, best: _Best) -> str:
    """Z3 at best-1, best-2, ... Returns 'optimal' (UNSAT one below), 'bound', 'timeout' or
    'too big'. Routed collectives first try shortest paths only (smaller; SAT is a schedule)."""
    reducing = inst.collective == "reduce_scatter"
    topo = inst.topology.reversed() if reducing else inst.topology
    ids = inst.chunk_ids()
    srcs = tuple(tuple([c[0]] if reducing else inst.sources(c)) for c in ids)
    dsts = tuple(tuple(range(inst.n)) if reducing else tuple(inst.destinations(c)) for c in ids)
    dist = all_distances(topo)
    is_routed = inst.collective in ("alltoall", "traffic")
    assert best.steps is not None
    while best.steps > lb:
        verdict, tried = "unknown", False
        trs: list[TransferT] = []
        for minimal in ((True, False) if is_routed else (False,)):
            p = enc.SpreadProblem(topo, tuple(ids), srcs, dsts, best.steps - 1, minimal)
            if len(ids) * topo.unit_links * p.steps > 10 * Z3_MAX_VARIABLES \
                    or enc.encoding_size(p, dist) > Z3_MAX_VARIABLES:
                continue
            tried = True
            verdict, trs = enc.solve(p, dist, deadline)
            if verdict in ("sat", "unsat"):
                break
        if not tried:
            return "too big"
        if verdict == "unsat":
            return "optimal"
        if verdict != "sat":
            return "timeout"
        trs = prune_relays(trs, inst.n)
        steps = max((t for t, *_ in trs), default=-1) + 1
        if reducing:
            trs = reverse(steps, trs)
        best.offer(steps, trs, "Z3 exact encoding" + (" on G^T, time-reversed" if reducing
                                                      else ""))
    return "bound"


def _search(inst: Instance, lb: int, deadline: float, use_z3: bool) -> tuple[_Best, str]:
    """Constructive schedules, then Z3 below the best; returns the best and the proof text."""
    best = _Best()
    collective, topo = inst.collective, inst.topology
    best.target = lb
    if collective in ("allgather", "broadcast"):
        _allgather_like(inst, topo, deadline, best, reverse_out=False)
    elif collective == "reduce_scatter":
        _allgather_like(inst, topo.reversed(), deadline, best, reverse_out=True)
    elif collective == "allreduce":
        allreduce(inst, deadline, best, use_z3, _search)
    else:
        routed(inst, lb, deadline, best, _search)
    proof = ""
    if use_z3 and collective == "allreduce":
        proof = allreduce_proof(inst, lb, deadline, best)
    if collective == "allreduce" and not proof.startswith("Z3: UNSAT"):
        # after Z3's proof attempt (which returns at once where its encoding is too big), in
        # the time left: mirrored per-chunk trees by local search (GroqDF4x8 7 -> 6 and
        # GroqDF8x8 13 -> 12 steps, the bandwidth bound)
        mirror_allreduce(inst, deadline, best)
    lb = max(lb, best.target)  # the alltoall LP bound, where routed() computed it
    if best.steps is not None and best.steps > lb and use_z3 and collective != "allreduce":
        verdict = _z3_improve(inst, lb, deadline, best)
        if verdict == "optimal":
            below = best.steps - 1
            proof = (f"Z3: UNSAT with {below} step{'s' if below != 1 else ''}" +
                     (" (reduce-scatter on G = allgather on G^T reversed)"
                      if collective == "reduce_scatter" else ""))
        elif verdict == "timeout":
            proof = "Z3 timed out below the best schedule; gap to the lower bound remains"
        elif verdict == "too big":
            proof = "monolithic encoding too large; gap to the lower bound remains"
    return best, proof


def schedule(topology: str | Path | Topology, collective: str, chunks: int = 1,
             time_limit_s: float = 60.0, demand: list[tuple[int, int, int]] | None = None,
             root: int = 0, use_z3: bool = True) -> ScheduleResult:
    """Synthesize a collision-free schedule with its lower bound and proof status.

    Parameters
    ----------
    topology
        a generator spec (``"torus:4x4"``), a node-link JSON path, or a :class:`Topology`.
    collective
        ``allgather``, ``reduce_scatter``, ``allreduce``, ``alltoall``, ``broadcast`` (from
        ``root``) or ``traffic`` (with ``demand`` = ``[(src, dst, chunks), ...]``).
    chunks
        chunks per rank (allreduce: vector length in unit chunks).
    time_limit_s
        wall-clock budget; on expiry the best schedule so far is returned as FEASIBLE.

    Raises
    ------
    InputError
        bad topology, collective or parameters.
    """
    t0 = time.monotonic()
    if time_limit_s <= 0:
        raise InputError(f"expected a time limit > 0 seconds, got {time_limit_s}")
    with _collector_paused():
        return _schedule(topology, collective, chunks, time_limit_s, demand, root, use_z3, t0)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection during a synthesis, restored afterwards.

    A schedule is millions of small tuples without reference cycles, which the collector
    traverses again and again while they are built and replayed: at 576 chips with 10 chunks
    per rank (3.3 million transfers), building the allgather from rounds and replaying it and
    its time-reversed reduce-scatter took 24.3 s of CPU with the collector and 21.5 s without
    (two runs each).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _schedule(topology: str | Path | Topology, collective: str, chunks: int,
              time_limit_s: float, demand: list[tuple[int, int, int]] | None, root: int,
              use_z3: bool, t0: float) -> ScheduleResult:
    topo = _topology(topology)
    if topo.n > MAX_CHIPS:
        what = (f"{topo.n}" if topo.n == topo.endpoints else
                f"{topo.n} ({topo.endpoints} chips and {topo.n - topo.endpoints} switch "
                f"node{'s' if topo.n - topo.endpoints != 1 else ''})")
        raise InputError(f"expected at most {MAX_CHIPS} network nodes for schedule synthesis, "
                         f"got {what} in {topo.name}; schedule one rack or node level instead")
    inst = Instance(topo, collective, chunks, tuple(demand or ()), root)
    expected = _expected_transfers(inst)
    if expected > MAX_TRANSFERS:
        raise InputError(
            f"expected a schedule of at most {MAX_TRANSFERS:,} transfers, got about "
            f"{expected:,} for {collective} on {topo.name} ({topo.endpoints} chips, {chunks} "
            f"chunk{'s' if chunks != 1 else ''}); use fewer chunks: a schedule for c chunks is "
            "c one-chunk rounds overlaid, so its steps scale with c")
    demand_map = inst.demand_map() if collective == "traffic" else None
    replay = _replay_seconds(inst)
    if replay > 0.5 * time_limit_s:  # building takes about as long as checking: both must fit
        b = lower_bounds(topo, collective, chunks, use_lp=False, demand=demand_map, root=root,
                         deadline=t0)
        return _result(inst, b, Status.UNKNOWN, None, [], "none",
                       f"time limit too short: checking a schedule of about {expected:,} "
                       f"transfers takes about {replay:.2g} s and building it as long, so it needs "
                       f"a time limit (--time-limit) of at least {2 * replay:.2g} s", False, t0)
    deadline = t0 + time_limit_s - _reserve(inst, time_limit_s)  # the rest: checking, decoding
    b = lower_bounds(topo, collective, chunks, use_lp=topo.n <= 16, demand=demand_map,
                     root=root, deadline=deadline)
    lb = b.best
    best, proof = _search(inst, lb, deadline, use_z3) if time.monotonic() < deadline \
        else (_Best(), "")
    if best.lp is not None:
        values = {**b.values, "lp": round(best.lp, 4)}
        top = math.ceil(best.lp - 1e-9)
        if top > lb:
            b, lb = Bounds(values=values, best=top, best_name="lp"), top
        else:
            b = Bounds(values=values, best=b.best, best_name=b.best_name)
    if best.steps is None:
        skipped = f" (bounds not computed: {', '.join(b.skipped)})" if b.skipped else ""
        return _result(inst, b, Status.UNKNOWN, None, [], "none", "time limit reached before "
                       "any schedule was built" + skipped + "; a longer time limit may find one",
                       False, t0)
    if best.steps == lb:
        proof = f"makespan equals the lower bound ({b.best_name})"
    status = Status.OPTIMAL if best.steps == lb or proof.startswith("Z3: UNSAT") else \
        Status.FEASIBLE
    if not proof:
        proof = "no proof of optimality; gap to the lower bound remains"
    report = verify(inst, best.transfers, best.steps)
    if not report.ok:
        return _result(inst, b, Status.ERROR, best.steps, best.transfers, best.method,
                       "independent checker rejected the schedule: " + report.errors[0],
                       False, t0)
    if status is Status.OPTIMAL and best.steps > lb:  # Z3: no schedule one step shorter
        b = Bounds(values={**b.values, "z3_unsat": float(best.steps)}, best=best.steps,
                   best_name="z3_unsat")
    return _result(inst, b, status, best.steps, best.transfers, best.method, proof, True, t0)


def _expected_transfers(inst: Instance) -> int:
    """About how many transfers the schedule will have (every chunk reaches every destination
    once; routed chunks travel about three hops on the networks we schedule)."""
    n, c = inst.n, inst.chunks
    if inst.collective in ("allgather", "reduce_scatter"):
        return c * n * (n - 1)
    if inst.collective == "allreduce":
        return 2 * c * (n - 1)
    if inst.collective == "broadcast":
        return c * (n - 1)
    if inst.collective == "alltoall":
        return 3 * c * n * (n - 1)
    return 3 * sum(k for _, _, k in inst.demand)


def _replay_seconds(inst: Instance) -> float:
    """About how long the independent checker takes to replay the schedule (with a margin)."""
    per = (VERIFY_SECONDS_PER_REDUCTION if inst.collective in REDUCING
           else VERIFY_SECONDS_PER_ROUTED if inst.collective in ("alltoall", "traffic")
           else VERIFY_SECONDS_PER_TRANSFER)
    return per * _expected_transfers(inst)


def _reserve(inst: Instance, time_limit_s: float) -> float:
    """Seconds kept back from the search so that checking the result (millions of transfers at
    576 chips) and building the result still end within the time limit: 15 % of it, or the
    expected replay time when larger (at most half: :func:`_schedule` refuses to start a
    search whose replay would not fit)."""
    return min(max(0.15 * time_limit_s, _replay_seconds(inst)), 0.5 * time_limit_s)


def _result(inst: Instance, b, status: Status, steps: int | None, transfers: list[TransferT],
            method: str, proof: str, verified: bool, t0: float) -> ScheduleResult:
    gap = None if steps is None or b.best == 0 else round(steps / b.best - 1, 4)
    return ScheduleResult.model_construct(
        status=status, topology=inst.topology.name, chips=inst.n, collective=inst.collective,
        chunks_per_rank=inst.chunks, makespan_steps=steps, lower_bound_steps=b.best,
        bounds=dict(b.values), gap=gap, method=method, proof=proof, verified=verified,
        synthesis_seconds=time.monotonic() - t0, transfers=tuple(transfers))


def collective_seconds(topology: str | Path | Topology, collective: str, message_bytes: float,
                       link_bandwidth_bytes_per_s: float, hop_latency_s: float,
                       chunks: int = 1, time_limit_s: float = 10.0) -> tuple[float | None,
                                                                               ScheduleResult]:
    """Time of a scheduled collective in seconds, for the performance model.

    ``message_bytes`` is each rank's shard (allgather, reduce_scatter, alltoall per pair) or the
    whole vector (allreduce); it is split into ``chunks`` chunks per rank (allreduce: vector
    chunks). One step moves one chunk over one unit link: ``chunk / bandwidth + latency``.
    Returns ``(seconds or None without a schedule, result)``.

    Examples
    --------
    >>> secs, res = collective_seconds("ring:4", "allgather", 1e6, 1e9, 1e-6)
    >>> res.makespan_steps, round(secs, 6)
    (2, 0.002002)
    """
    if message_bytes < 0:
        raise InputError(f"expected message bytes >= 0, got {message_bytes}")
    res = schedule(topology, collective, chunks, time_limit_s=time_limit_s)
    return res.seconds(message_bytes / chunks, link_bandwidth_bytes_per_s, hop_latency_s), res
