"""Alltoall: the relay bound, the switch construction, the LP bound where it is needed."""

from __future__ import annotations

import random

import pytest

from accelkb.solver import schedule
from accelkb.solver.schedule.bounds import lower_bounds
from accelkb.solver.schedule.constructions.closed_form import switch_alltoall
from accelkb.solver.schedule.model import Instance, Status
from accelkb.solver.schedule.topology import Topology, parse_topology
from accelkb.solver.schedule.verify import verify


def _switch(n: int, m: int) -> Topology:
    links = {e: m for v in range(n) for e in ((v, n), (n, v))}
    return Topology(f"switch{n}x{m}", n + 1, links, ranks=n)


def test_relay_bound_is_the_egress_plus_the_hop_out_of_the_switch() -> None:
    b = lower_bounds(parse_topology("switch:8"), "alltoall", 2)
    assert b.values["egress"] == 14 and b.values["relay"] == 15 and b.best == 15
    # on a ring the far half of each chip's chunks still need hops: 4 of them 2+ hops away
    assert lower_bounds(parse_topology("ring:8"), "alltoall", 1).values["relay"] == 4


@pytest.mark.parametrize("seed", range(8))
def test_relay_bound_never_exceeds_a_verified_schedule(seed: int) -> None:
    """Soundness on random small graphs (some with a switch vertex): every verified schedule
    is at least the bound."""
    rnd = random.Random(seed)
    n = rnd.randint(3, 7)
    links: dict[tuple[int, int], int] = {}
    for v in range(1, n):  # a random tree keeps it connected
        u = rnd.randrange(v)
        m = rnd.choice([1, 1, 2])
        links[(u, v)] = links[(v, u)] = m
    for _ in range(rnd.randint(0, n)):
        u, v = rnd.sample(range(n), 2)
        links[(u, v)] = links[(v, u)] = 1
    topo = Topology(f"random{seed}", n, links, ranks=n - 1 if seed % 2 else 0)
    chunks = rnd.randint(1, 2)
    r = schedule(topo, "alltoall", chunks, time_limit_s=5)
    assert r.verified and r.makespan_steps is not None
    assert lower_bounds(topo, "alltoall", chunks).values["relay"] <= r.makespan_steps
    if r.status is Status.OPTIMAL:
        assert r.lower_bound_steps <= r.makespan_steps


@pytest.mark.parametrize("n,m,chunks", [(4, 1, 1), (8, 1, 3), (5, 2, 2), (6, 3, 1), (8, 2, 1)])
def test_switch_alltoall_replays_and_meets_the_relay_bound(n: int, m: int, chunks: int) -> None:
    topo = _switch(n, m)
    made = switch_alltoall(topo, chunks)
    assert made is not None
    steps, trs = made
    report = verify(Instance(topo, "alltoall", chunks), trs, steps)
    assert report.ok and report.max_link_load == 1.0
    assert steps == lower_bounds(topo, "alltoall", chunks).best
    assert switch_alltoall(parse_topology("ring:8"), 1) is None


def test_dgx_switch_alltoall_is_optimal_through_the_api() -> None:
    r = schedule("switch:16", "alltoall", 2, time_limit_s=10)
    assert r.status is Status.OPTIMAL and r.verified
    assert r.makespan_steps == r.lower_bound_steps == 31  # was 35 against a bound of 30


def test_lp_bound_proves_torus_3x5_where_total_hops_is_loose() -> None:
    """15 chips: above the eager LP limit, so the LP runs only because the schedule (9) is above
    the combinatorial bounds (7); the 5-rings carry 18 of each chip's 28 hops: 270 / 30 = 9.
    The same links under a name that implies no grid, so no slab cut (below) finds it."""
    torus = parse_topology("torus:3x5")
    r = schedule(Topology("t3x5-links", torus.n, torus.links), "alltoall", 2, time_limit_s=30)
    assert r.verified and r.status is Status.OPTIMAL
    assert r.makespan_steps == r.lower_bound_steps == 18
    assert r.bounds["lp"] == 18.0 and r.bounds["total_hops"] == 14.0


@pytest.mark.parametrize(("spec", "chunks", "cut"), [
    ("torus:3x5", 2, 18),  # 2 columns of 3 chips against 3: 2*6*9 chunks over 6 links
    ("torus:4x16", 1, 128),  # IPU-POD64: 8 of 16 columns, 32*32 chunks over 8 links
])
def test_slab_cut_of_a_generated_torus(spec: str, chunks: int, cut: int) -> None:
    topo = parse_topology(spec)
    b = lower_bounds(topo, "alltoall", chunks, use_lp=False)
    assert b.values["cut"] == cut and b.best == cut
    # a BFS ball is a diamond: the same links without the grid name give a weaker cut
    plain = lower_bounds(Topology("plain", topo.n, topo.links), "alltoall", chunks, use_lp=False)
    assert plain.values["cut"] < cut


def test_three_chunks_per_pair_as_three_one_chunk_alltoalls() -> None:
    """dragonfly:nodes=2 (16 chips): one chunk per pair takes 2 steps, the cut bound; the
    three-chunk greedy took 7, three one-chunk schedules in a row take 6, the bound."""
    r = schedule("dragonfly:nodes=2", "alltoall", 3, time_limit_s=30)  # about 3 s unloaded
    assert r.verified and r.status is Status.OPTIMAL
    assert r.makespan_steps == r.lower_bound_steps == 6
    assert "in sequence" in r.method


def test_fewest_crossing_paths_cross_between_racks_once() -> None:
    """On a two-level dragonfly a hop-shortest path between two racks may run through a third
    (more inter-rack traffic than the cut needs); the crossing-weighted paths never do, and
    inside a rack they cross between nodes no more often than a hop-shortest path must."""
    from accelkb.solver.schedule.bounds import all_distances, crossing_weights, weighted_distances
    from accelkb.solver.schedule.constructions.greedy import choose_paths

    topo = parse_topology("dragonfly:racks=4,nodes=3,chips=4,ports=2")  # hop paths: 97 via a third
    node_of = {v: k for k, g in enumerate(topo.groups[0]) for v in g}
    rack_of = {v: k for k, g in enumerate(topo.groups[1]) for v in g}
    weight = crossing_weights(topo)
    assert weight is not None
    dist = weighted_distances(topo, weight)
    demand = [((s, d), s, d) for s in range(topo.n) for d in range(topo.n) if s != d]
    paths = choose_paths(topo, demand, dist, weight=weight)
    hops = all_distances(topo)
    for (_, s, d), path in zip(demand, paths, strict=True):
        assert path[0] == s and path[-1] == d
        assert all((u, v) in topo.links for u, v in zip(path, path[1:], strict=False))
        racks = sum(rack_of[u] != rack_of[v] for u, v in zip(path, path[1:], strict=False))
        assert racks == (rack_of[s] != rack_of[d])
        assert len(path) - 1 >= hops[s][d]
    # the weights order paths lexicographically: racks, then nodes, then hops
    assert {weight[e] for e in topo.links} == {
        1 + (topo.n + 1) * (node_of[u] != node_of[v]) + (topo.n + 1) ** 2 * (rack_of[u] != rack_of[v])
        for u, v in topo.links}


def test_two_level_dragonfly_alltoall_is_verified_with_crossing_paths() -> None:
    r = schedule("dragonfly:racks=4,nodes=3,chips=4,ports=2", "alltoall", 1, time_limit_s=10)
    assert r.verified and r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert r.makespan_steps >= r.lower_bound_steps


def test_rip_up_passes_from_earlier_paths_never_raise_the_squared_load() -> None:
    """``choose_paths(start=...)`` continues from earlier paths (big all-to-alls get their
    later passes that way, as time allows): every re-routed chunk takes the cheapest shortest
    path against everyone else's load, its old path being one of them, so the sum of squared
    loads per unit link never rises (here it falls), and every path stays a shortest path."""
    from accelkb.solver.schedule.bounds import crossing_weights, weighted_distances
    from accelkb.solver.schedule.constructions.greedy import choose_paths

    topo = parse_topology("dragonfly:racks=4,nodes=3,chips=4,ports=2")
    weight = crossing_weights(topo)
    assert weight is not None
    dist = weighted_distances(topo, weight)
    demand = [((s, d), s, d) for s in range(topo.n) for d in range(topo.n) if s != d]

    def squares(paths: list[list[int]]) -> float:
        load: dict[tuple[int, int], int] = {}
        for p in paths:
            for e in zip(p, p[1:], strict=False):
                load[e] = load.get(e, 0) + 1
        return sum(k * k / topo.links[e] ** 2 for e, k in load.items())

    one = choose_paths(topo, demand, dist, passes=1, weight=weight)
    more = choose_paths(topo, demand, dist, passes=2, weight=weight, start=one)
    assert squares(more) < squares(one)
    # one pass, then two from its paths: the same as three passes in one call
    assert more == choose_paths(topo, demand, dist, passes=3, weight=weight)
    for (_, s, d), path in zip(demand, more, strict=True):
        assert path[0] == s and path[-1] == d
        assert sum(weight[e] for e in zip(path, path[1:], strict=False)) == dist[s][d]
