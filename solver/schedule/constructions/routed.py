"""Alltoall and traffic schedules: routed paths, the switch construction, the LP bound where the
combinatorial ones are loose, and ``c`` chunks per pair as ``c`` one-chunk alltoalls in sequence.

:func:`routed` is one strategy of :func:`accelkb.solver.schedule.api.schedule`; it gets the
search itself (``search``) for the one-chunk schedule it tiles.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable

from accelkb.solver.schedule.best import Best
from accelkb.solver.schedule.bounds import (
    LP_EAGER_CHIPS,
    LP_MAX_CHIPS,
    all_distances,
    alltoall_lp_bound,
    crossing_weights,
    lower_bounds,
    weighted_distances,
)
from accelkb.solver.schedule.constructions.closed_form import switch_alltoall
from accelkb.solver.schedule.constructions.greedy import Budget, choose_paths, route_paths
from accelkb.solver.schedule.model import Instance, TransferT
from accelkb.solver.schedule.topology import Topology

Search = Callable[[Instance, int, float, bool], tuple[Best, str]]
"""``search(instance, lower bound, deadline, use_z3) -> (best, proof)``."""

LP_LAZY_SECONDS = 1.5  # the alltoall LP after the search: 0.5-1.1 s on 15-16-chip tori
LP_BUILD_SECONDS = 0.2  # building its constraints (not covered by Z3's timeout) on 16 chips
LP_MIN_SECONDS = 0.7  # less is wasted: torus:3x5 needs 0.5-0.7 s in all
_LP_CACHE: dict[tuple, float | None] = {}  # one LP per topology per process (None: gave up)


def _hot_spots(topo: Topology, paths: list[list[int]]) -> bool:
    """Whether the busiest unit link carries more than twice the mean load of all unit links:
    shortest paths pile traffic onto a few links, so detours are worth trying."""
    load: Counter[tuple[int, int]] = Counter()
    for path in paths:
        load.update(zip(path, path[1:], strict=False))
    if not load:
        return False
    busiest = max(k / topo.links[e] for e, k in load.items())
    return busiest > 2 * load.total() / topo.unit_links


def routed(inst: Instance, lb: int, deadline: float, best: Best, search: Search) -> None:
    """Alltoall / traffic: load-balanced paths, then farthest-first per link.

    Farthest pairs first on shortest paths; where that leaves hot spots (:func:`_hot_spots`),
    farthest first again with detours one hop longer where they are cheaper; then restarts
    with other orders (as listed, seeded shuffles) while half the remaining time is left and
    the bound is not met. On a topology with groups (dragonfly nodes and racks) an all-to-all
    first takes the paths that cross the fewest group boundaries, outermost level first:
    GroqDF8r9n8c all-to-all 436 -> 363 steps (hop-shortest paths between two racks may
    pass through a third one; 60 s limit), and 310-355 with more rip-up passes as time
    allows (:func:`_on_paths`; a pass takes 11-15 s, so this depends on the machine's speed),
    GroqDF32x8 79 -> 65 (with the shuffled ties of
    :func:`route_paths`; the bound is 64).
    """
    topo = inst.topology
    if inst.collective == "alltoall":
        got = switch_alltoall(topo, inst.chunks)
        if got is not None:
            best.offer(got[0], got[1], "switch: every chip sends its chunks by destination shift, "
                       "one permutation of the chips per up-link slot")
            if best.done:
                return
    dist = all_distances(topo)
    weight = crossing_weights(topo)
    crossing: list[list[int]] | None = None  # their distances, once needed (576 chips: 1 s)
    base = [(cid, cid[0], cid[1]) for cid in inst.chunk_ids()]
    stop = time.monotonic() + (deadline - time.monotonic()) / 2
    # (order, paths): hop-shortest, hop-shortest with detours, or fewest group crossings; the
    # last first for all-to-all, after the hop-shortest paths (and their detours) for traffic
    # such as pipeline stages, which crossing-weighted paths pile onto the few direct links
    variants = [(order, "shortest") for order in range(64)]
    if weight is not None:
        variants.insert(0 if inst.collective == "alltoall" else 1, (0, "crossings"))
    attempt = 0
    while attempt < len(variants):
        if time.monotonic() > deadline or attempt and (time.monotonic() > stop or
                                                       best.steps == lb):
            break
        order, kind = variants[attempt]
        demand = list(base)
        if order == 0:
            demand.sort(key=lambda x: -dist[x[1]][x[2]])
        elif order > 1:
            random.Random(order).shuffle(demand)
        label = "path-based: balanced " + {
            "shortest": "shortest paths", "detour": "paths with one-hop detours",
            "crossings": "paths crossing the fewest group boundaries (outermost first)"}[kind] \
            + ", farthest-first links"
        try:
            if kind == "crossings" and weight is not None:
                crossing = crossing or weighted_distances(topo, weight, deadline)
                paths = _on_paths(topo, demand, crossing, deadline, best, label, weight=weight)
            else:
                paths = _on_paths(topo, demand, dist, deadline, best, label,
                                  squared=order % 3 != 2, detour=kind == "detour")
        except (Budget, TimeoutError):
            return
        if kind == "shortest" and order == 0 and _hot_spots(topo, paths):
            variants.insert(attempt + 1, (0, "detour"))
        if attempt == 0 and inst.collective == "alltoall" and not best.done:
            # the LP bound (shared with the one-chunk search of the tiling) before more search
            lb = _lp_tighten(inst, lb, deadline, best)
            if inst.chunks > 1 and not best.done:
                _tiled(inst, deadline, best, search)
        attempt += 1


BIG_DEMAND = 50_000  # chunks above which a rip-up pass of choose_paths costs seconds
MIN_PASS = 0.25  # a rip-up pass stopped part way keeps what it re-routed: worth a quarter pass


def _on_paths(topo: Topology, demand: list, dist: list[list[int]], deadline: float, best: Best,
            label: str, **how) -> list[list[int]]:
    """Load-balanced paths (:func:`choose_paths`), scheduled (:func:`route_paths`) and offered;
    returns the paths. Three passes; for a big demand one pass, scheduled and offered first,
    then up to two more rip-up passes (the last possibly stopped part way) where they leave
    time to schedule the paths again (as long as the first time, with a tenth more), offered
    if better. GroqDF8r9n8c all-to-all (331,200 chunks on crossing-weighted paths): busiest
    link 354 chunks after one pass (11 s), 316 after two, 308 after three.

    Raises
    ------
    Budget
        when not even the first schedule is done before ``deadline``.
    """
    if len(demand) < BIG_DEMAND:
        paths = choose_paths(topo, demand, dist, passes=3, deadline=deadline, **how)
        best.offer(*route_paths(topo, demand, paths, deadline=deadline), label)
        return paths
    started = time.monotonic()
    paths = choose_paths(topo, demand, dist, passes=1, deadline=deadline, **how)
    one = time.monotonic() - started
    best.offer(*route_paths(topo, demand, paths, deadline=deadline), label)
    routing = time.monotonic() - started - one
    if best.done or deadline - time.monotonic() < 1.1 * routing + MIN_PASS * one:
        return paths
    better = choose_paths(topo, demand, dist, passes=2, start=paths,
                          deadline=deadline - 1.1 * routing, **how)
    try:
        steps, trs = route_paths(topo, demand, better, deadline=deadline)
    except Budget:
        return paths
    best.offer(steps, trs, label + ", with more rip-up passes")
    return better


def _tiled(inst: Instance, deadline: float, best: Best, search: Search) -> None:
    """Alltoall of ``c`` chunks per pair as ``c`` one-chunk alltoalls one after the other: the
    one-chunk schedule (searched in a third of the time left) is often at a bound that the
    ``c``-chunk greedy misses (dragonfly:nodes=2, 3 chunks: 3 x 2 = 6 against 7)."""
    topo, c = inst.topology, inst.chunks
    one = Instance(topo, "alltoall", 1)
    lb1 = lower_bounds(topo, "alltoall", 1, use_lp=topo.n <= LP_EAGER_CHIPS).best
    if best.steps is not None and c * lb1 >= best.steps:
        return
    now = time.monotonic()
    got = search(one, lb1, now + (deadline - now) / 3, True)[0]
    if got.steps is None:
        return
    trs: list[TransferT] = [(i * got.steps + t, u, v, (ch[0], ch[1], i))
           for i in range(c) for t, u, v, ch in got.transfers]
    best.offer(c * got.steps, trs, f"{c} one-chunk alltoalls in sequence [{got.method}]")


def _lp_tighten(inst: Instance, lb: int, deadline: float, best: Best) -> int:
    """Where the alltoall schedule is above the combinatorial bounds and the LP bound was not
    computed up front (more than ``LP_EAGER_CHIPS`` chips or more than one chunk), the LP bound
    (scaled by the chunks: a fractional flow scales) with at most half the time left and
    ``LP_LAZY_SECONDS`` (torus:3x5 needs 0.5 s; dragonfly:nodes=2 8-15 s, so it is given up there
    and costs 1.5 s of the 10), once per topology: the one-chunk search of :func:`_tiled` and
    its caller share it;
    ``best.lp`` keeps its value for the report. Returns the (possibly) raised bound."""
    topo = inst.topology
    if topo.n > LP_MAX_CHIPS or (topo.n <= LP_EAGER_CHIPS and inst.chunks == 1):
        return lb
    key = (topo.name, tuple(sorted(topo.links.items())), topo.ranks)
    if key in _LP_CACHE:
        lp = _LP_CACHE[key]
    else:
        left = min(LP_LAZY_SECONDS, (deadline - time.monotonic()) / 2)
        if left < LP_MIN_SECONDS:
            return lb
        lp = alltoall_lp_bound(topo, time_limit_s=left - LP_BUILD_SECONDS)
        if len(_LP_CACHE) > 64:
            _LP_CACHE.clear()
        if lp is not None or left >= LP_LAZY_SECONDS:  # given up with the full time: for good
            _LP_CACHE[key] = lp
    if lp is None:
        return lb
    best.lp = lp * inst.chunks
    raised = max(lb, math.ceil(best.lp - 1e-9))
    best.target = raised
    return raised
