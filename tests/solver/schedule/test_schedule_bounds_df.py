"""The allreduce ``completion`` bound: its cut on a Groq dragonfly, and that it never claims more
than the gossip relaxation (Z3 UNSAT one step below wherever it raises the bound)."""

from __future__ import annotations

import math
import time

import pytest

from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.bounds import (
    all_distances,
    allreduce_completion_bound,
    complete_by,
    completion_bound,
    lower_bounds,
)
from accelkb.solver.schedule.constructions.allreduce.encoding import AllreduceProblem, solve
from accelkb.solver.schedule.model import Status
from accelkb.solver.schedule.topology import Topology, parse_topology


def _others(topo: Topology, chunks: int) -> int:
    """The allreduce lower bound without the completion bound."""
    b = lower_bounds(topo, "allreduce", chunks)
    return math.ceil(max(v for k, v in b.values.items() if k != "completion") - 1e-9)


def two_cliques(k: int, twin: int) -> Topology:
    """Two ``k``-cliques, chip ``i`` joined to ``i+k`` by ``twin`` unit links each way (the
    shape of ``dragonfly:nodes=2`` at ``k = 8``, ``twin = 4``)."""
    links = {(s + i, s + j): 1 for s in (0, k) for i in range(k) for j in range(k) if i != j}
    links.update({(i, i + k): twin for i in range(k)} | {(i + k, i): twin for i in range(k)})
    return Topology(f"cliques:2x{k},twin={twin}", 2 * k, links)


def test_dragonfly_2x8_cut_lets_two_chunks_complete_after_two_steps() -> None:
    topo = parse_topology("dragonfly:nodes=2")
    assert dict(topo.links) == dict(two_cliques(8, 4).links)
    dist = all_distances(topo)
    # W = the other clique without the twin: 7 clique links into chip 8 in step 0 and 7 into
    # chip 0 in step 1, one item of W each
    assert complete_by(topo, dist, 0, 2, 2) == 2
    assert completion_bound(topo, 16, dist) == 2 + -(-(16 - 2) // 11) == 4


def test_dragonfly_2x8_allreduce_of_16_chunks_is_proven_optimal_at_4_steps() -> None:
    topo = parse_topology("dragonfly:nodes=2")
    assert _others(topo, 16) == 3  # 480 transfers on 176 unit links; the reference bound
    b = lower_bounds(topo, "allreduce", 16)
    assert (b.best, b.best_name) == (4, "completion")
    r = schedule(topo, "allreduce", 16, time_limit_s=10)
    assert (r.makespan_steps, r.lower_bound_steps, r.status, r.verified) == \
        (4, 4, Status.OPTIMAL, True)
    assert r.proof == "makespan equals the lower bound (completion)"


@pytest.mark.parametrize(("k", "twin", "chunks"), [
    (3, 4, 10), (3, 3, 5), (4, 1, 3), (4, 3, 6), (3, 2, 7),
])
def test_completion_bound_is_unsat_one_step_below_in_the_gossip_relaxation(
        k: int, twin: int, chunks: int) -> None:
    topo = two_cliques(k, twin)
    lb = _others(topo, chunks)
    comp = allreduce_completion_bound(topo, chunks, lb)
    assert comp > lb and lower_bounds(topo, "allreduce", chunks).best == comp
    p = AllreduceProblem(topo, chunks, comp - 1, exact=False)
    assert solve(p, all_distances(topo), deadline=time.monotonic() + 60)[0] == "unsat"


def test_completion_bound_adds_nothing_where_the_others_are_met() -> None:
    for spec, chunks in (("ring:8", 8), ("torus:4x4", 16), ("switch:8", 8),
                         ("dragonfly:nodes=4", 32)):
        topo = parse_topology(spec)
        assert allreduce_completion_bound(topo, chunks, _others(topo, chunks)) == 0
        assert "completion" not in lower_bounds(topo, "allreduce", chunks).values
