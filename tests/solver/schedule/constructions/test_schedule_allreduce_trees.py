"""Allreduce as per-chunk trees into a root or an exchanging root pair (Z3, small instances)."""

from __future__ import annotations

import time
from collections import Counter

from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.best import Best
from accelkb.solver.schedule.constructions.allreduce.trees import MAX_ARCS, arc_count, solve, tree_allreduce
from accelkb.solver.schedule.model import Instance, Status
from accelkb.solver.schedule.topology import parse_topology
from accelkb.solver.schedule.verify import verify


def test_a_root_pair_meets_the_bound_where_single_roots_cannot() -> None:
    """hypercube:3, 8 chunks: a single root needs 3 steps to reduce and 3 to broadcast (its
    farthest chip is 3 hops away), so 5 steps need chunks reduced into a pair of neighbours
    that exchange their halves."""
    inst = Instance(parse_topology("hypercube:3"), "allreduce", 8)
    verdict, trs = solve(inst, 5, time.monotonic() + 60)
    assert verdict == "sat" and verify(inst, trs, 5).ok
    per_chunk = Counter(ch for *_, ch in trs)
    assert set(per_chunk.values()) == {14}  # 2(n-1): the fewest an allreduce chunk can use
    exchanges = {(t, ch) for t, u, v, ch in trs if (t, v, u, ch) in set(trs)}
    assert exchanges  # some chunk's two roots send to each other in the same step


def test_the_search_reaches_the_bound_end_to_end() -> None:
    r = schedule("torus:2x4", "allreduce", 8, time_limit_s=30)  # returns at the bound
    assert (r.makespan_steps, r.lower_bound_steps, r.status) == (5, 5, Status.OPTIMAL)
    assert r.verified and "per-chunk trees" in r.method


def test_no_trees_is_not_a_proof() -> None:
    """dragonfly:nodes=2,chips=4 with 16 chunks: trees give 5 steps and none fit in 4 (the
    bound), which says nothing about other allreduce schedules: the result stays FEASIBLE
    unless Z3's own encoding proves 4 impossible."""
    inst = Instance(parse_topology("dragonfly:nodes=2,chips=4"), "allreduce", 16)
    assert solve(inst, 4, time.monotonic() + 60)[0] == "unsat"
    best = Best()
    best.target = 4
    best.offer(6, [], "a 6-step construction")
    tree_allreduce(inst, time.monotonic() + 60, best)
    assert best.steps == 5 and verify(inst, best.transfers, 5).ok
    r = schedule("dragonfly:nodes=2,chips=4", "allreduce", 16, time_limit_s=6)
    assert r.verified and r.makespan_steps in (5, 6)  # 5 where the trees got their time
    assert r.status == Status.FEASIBLE or r.proof.startswith("Z3: UNSAT")


def test_topologies_with_switches_and_big_instances_are_left_alone() -> None:
    big = Instance(parse_topology("torus:8x8"), "allreduce", 64)
    assert arc_count(big, 31) > MAX_ARCS
    for inst in (big, Instance(parse_topology("switch:4"), "allreduce", 4)):
        best = Best()
        best.offer(99, [], "placeholder")
        tree_allreduce(inst, time.monotonic() + 60, best)
        assert best.steps == 99 and best.method == "placeholder"
