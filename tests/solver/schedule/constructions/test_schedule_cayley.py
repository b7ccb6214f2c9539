"""Cayley-template allreduce: translation groups and the paired (time-reversed) template."""

from __future__ import annotations

import time

import pytest
from conftest import SHARED

from accelkb.solver import schedule
from accelkb.solver.schedule.bounds import all_distances, lower_bounds
from accelkb.solver.schedule.cayley import cayley_group
from accelkb.solver.schedule.constructions.cayley_template import cayley_allreduce, fits, reduction_steps
from accelkb.solver.schedule.model import Instance
from accelkb.solver.schedule.topology import Topology, load_topology_file, parse_topology
from accelkb.solver.schedule.verify import verify


@pytest.mark.parametrize("spec", ["torus:2x4x4", "hypercube:5", "torus:3x3", "ring:6", "full:6",
                                  "dragonfly:nodes=9", "dragonfly:nodes=3"])
def test_translation_group_is_regular_and_parity_is_a_homomorphism(spec: str) -> None:
    topo = parse_topology(spec)
    group = cayley_group(topo)
    assert group is not None
    assert [g[0] for g in group.elements] == list(range(topo.n))
    for g in group.elements:
        assert sorted(g) == list(range(topo.n))
        assert all(topo.links.get((g[u], g[v])) == m for (u, v), m in topo.links.items())
    if group.parity is not None:
        par = group.parity
        assert 0 < sum(par) < topo.n
        for u in range(topo.n):
            for v in range(topo.n):
                assert par[group.elements[u][v]] == par[u] ^ par[v]
    # a link and its translate have the same type
    g = group.elements[topo.n - 1]
    for u, v in topo.links:
        assert group.link_type(g[u], g[v]) == group.link_type(u, v)


def test_no_group_for_irregular_dragonflies_or_a_name_the_links_contradict() -> None:
    assert cayley_group(parse_topology("dragonfly:nodes=4")) is None  # pairs of 2 and 3 links
    assert cayley_group(parse_topology("dragonfly:nodes=8")) is None  # chips with 3 and 4 ports
    two_level = parse_topology("dragonfly:racks=2,nodes=9")  # node and rack groups
    assert cayley_group(two_level) is None
    ring = parse_topology("ring:8")
    links = dict(ring.links)
    links[(0, 4)] = links[(4, 0)] = 1  # a chord: no longer vertex-transitive under rotation
    assert cayley_group(Topology("ring:8", 8, links)) is None


@pytest.mark.parametrize(("spec", "lb"), [
    ("hypercube:5", 13),  # 2*31*32 transfers over 160 links: 12.4 steps
    ("torus:2x4x4", 13),
    ("torus:4x4x4", 21),  # TPU v4 cube: 2*63*64 over 384 links: 21 steps, every link busy
    ("dragonfly:nodes=9", 13),  # GroqRack: 2*71*72 = 10,224 transfers over 792 links: 12.9 steps
])
def test_paired_template_meets_the_transfers_bound(spec: str, lb: int) -> None:
    topo = parse_topology(spec)
    assert lower_bounds(topo, "allreduce", topo.n).best == lb
    group = cayley_group(topo)
    assert group is not None
    trs = cayley_allreduce(topo, group, all_distances(topo), lb, time.monotonic() + 120)
    assert trs is not None
    assert len(trs) == 2 * (topo.n - 1) * topo.n
    rep = verify(Instance(topo, "allreduce", topo.n), trs, lb)
    assert rep.ok, rep.errors
    assert rep.max_link_load == 1.0


def test_unpaired_template_below_reduce_plus_broadcast_is_refused_without_z3() -> None:
    topo = parse_topology("torus:3x3x3")  # no even dimension: no index-2 subgroup
    group = cayley_group(topo)
    assert group is not None and group.parity is None
    # 26 chips to reduce and to reach, 6 links a step: 5 + 5 steps at least
    assert cayley_allreduce(topo, group, all_distances(topo), 9, time.monotonic() + 60) is None


def test_unpaired_template_is_a_valid_schedule() -> None:
    topo = parse_topology("torus:3x3")
    group = cayley_group(topo)
    assert group is not None and group.parity is None
    trs = cayley_allreduce(topo, group, all_distances(topo), 4, time.monotonic() + 60)
    assert trs is not None
    assert verify(Instance(topo, "allreduce", 9), trs, 4).ok


def test_schedule_api_reaches_the_bound_on_hypercube_5() -> None:
    r = schedule("hypercube:5", "allreduce", chunks=32, time_limit_s=30)
    assert r.status.value == "OPTIMAL"
    assert r.makespan_steps == r.lower_bound_steps == 13
    assert r.verified
    assert r.method.startswith("cayley")


def test_lane_group_of_groqrack_rotates_lanes_and_is_verified_on_the_links() -> None:
    topo = parse_topology("dragonfly:nodes=9")
    group = cayley_group(topo)
    assert group is not None and group.parity is not None
    # the element that maps chip 0 to chip 1 (lane 1 of node 0) is the lane rotation
    assert group.elements[1][:8] == (1, 2, 3, 0, 5, 6, 7, 4)
    assert group.parity[:8] == (0, 1, 0, 1, 0, 1, 0, 1)
    # the same links without the node groups: no lanes to rotate, no group
    assert cayley_group(Topology("df9-plain", topo.n, topo.links)) is None
    # a group that is not an automorphism is refused: drop one global link pair
    links = dict(topo.links)
    u, v = next((a, b) for (a, b) in links if a // 8 != b // 8)
    del links[(u, v)], links[(v, u)]
    assert cayley_group(Topology(topo.name, topo.n, links, topo.groups)) is None


def test_counting_filter_rules_out_completion_at_the_self_paired_middle_step() -> None:
    # GroqRack at 13 steps: 2*71 = 142 template links against 6 step pairs of 22 slots and a
    # middle step of 11. Completing at 6 or 7 puts chip 0's own links in the middle step, where
    # a lane-1 and a lane-3 link of chip 0 take the same two slots: at most 9, so 141 < 142.
    topo = parse_topology("dragonfly:nodes=9")
    group = cayley_group(topo)
    assert group is not None
    dist = all_distances(topo)
    assert [d for d in range(3, 11) if fits(topo, group, 13, d)] == [4, 5, 8, 9]
    assert reduction_steps(topo, group, dist, 13) == [8, 9]  # 5 and 4 are their mirrors
    assert fits(topo, group, 14, 7)
    assert not any(fits(topo, group, 12, d) for d in range(3, 10))  # 11 links a step: 143 > 132


@pytest.mark.skipif(not (SHARED / "bench" / "topologies" / "GroqDF9x8.json").is_file(),
                    reason="needs ../shared/bench")
def test_groqrack_file_gets_the_lane_group() -> None:
    topo = load_topology_file(SHARED / "bench" / "topologies" / "GroqDF9x8.json")
    group = cayley_group(topo)
    assert group is not None and len(group.elements) == 72


def test_counting_filter_only_drops_completion_steps_z3_finds_empty() -> None:
    import z3

    from accelkb.solver.schedule.constructions.cayley_template import _arcs, _encode

    dropped = []
    for spec in ["hypercube:3", "torus:2x4", "dragonfly:nodes=3"]:
        topo = parse_topology(spec)
        group = cayley_group(topo)
        assert group is not None and group.parity is not None
        dist = all_distances(topo)
        low = max(dist[u][0] for u in range(topo.n))
        for steps in range(2 * low, 2 * low + 4):
            for done in range(low, steps - low + 1):
                if not fits(topo, group, steps, done):
                    dropped.append((spec, steps, done))
                    s, _ = _encode(topo, group, steps, [_arcs(topo, dist, steps, done)])
                    assert s.check() == z3.unsat, (spec, steps, done)
    assert dropped == [("dragonfly:nodes=3", 4, 2)]


def test_schedule_api_keeps_time_for_the_template_on_a_cayley_dragonfly() -> None:
    # the reduce-scatter / allgather sub-searches alone would use the whole limit here
    r = schedule("dragonfly:nodes=5", "allreduce", chunks=40, time_limit_s=12)
    assert r.status.value == "OPTIMAL"
    assert r.makespan_steps == r.lower_bound_steps == 8
    assert r.verified and r.method.startswith("cayley")


@pytest.mark.parametrize(("spec", "per_root", "steps"), [
    ("torus:4x4", 2, 15),  # 2*15*32 transfers over 64 links: 15 steps, every link busy
    ("torus:4x4", 3, 23),  # 2*15*48 / 64 = 22.5
    ("dragonfly:nodes=3", 2, 9),
])
def test_several_template_chunks_per_chip_meet_the_transfers_bound(spec: str, per_root: int,
                                                                   steps: int) -> None:
    topo = parse_topology(spec)
    chunks = per_root * topo.n
    assert lower_bounds(topo, "allreduce", chunks).best == steps
    group = cayley_group(topo)
    assert group is not None
    trs = cayley_allreduce(topo, group, all_distances(topo), steps, time.monotonic() + 120,
                           per_root)
    assert trs is not None
    assert verify(Instance(topo, "allreduce", chunks), trs, steps).ok
    assert len(trs) == chunks * 2 * (topo.n - 1)  # the fewest transfers an allreduce can use
    assert {ch[1] for *_, ch in trs} == set(range(chunks))


def test_completion_step_tuples_skip_mirrors_and_put_self_mirrored_ones_first() -> None:
    from accelkb.solver.schedule.constructions.cayley_template import _done_tuples

    topo = parse_topology("torus:4x4")
    group = cayley_group(topo)
    assert group is not None
    dist = all_distances(topo)
    tuples = _done_tuples(topo, group, dist, 15, 2)
    assert tuples[0] == (7, 8)  # its own mirror (15 - 7 = 8)
    assert (7, 7) in tuples and (8, 8) not in tuples  # (8, 8) is the mirror of (7, 7)
    assert _done_tuples(topo, group, dist, 14, 2) == []  # 960 transfers > 14 steps * 64 links
    assert _done_tuples(topo, group, dist, 8, 1) == [(d,) for d in
                                                     reduction_steps(topo, group, dist, 8)]


def test_schedule_api_uses_two_template_chunks_per_chip() -> None:
    r = schedule("torus:4x4", "allreduce", chunks=32, time_limit_s=10)
    assert r.status.value == "OPTIMAL" and r.makespan_steps == r.lower_bound_steps == 15
    assert r.verified and r.method.startswith("cayley: 2 Z3 template chunks")


def test_grid_names_that_do_not_fit_the_chips_give_no_coordinates() -> None:
    from accelkb.solver.schedule.cayley import grid_coordinates

    ring4 = parse_topology("ring:4").links
    for name in ["torus:4xx4", "torus:x", "hypercube:20", "torus:3x3", "ring:5", "hypercube:2x2"]:
        assert grid_coordinates(Topology(name, 4, ring4)) is None, name
        assert lower_bounds(Topology(name, 4, ring4), "allgather").best == 2  # no crash
    assert grid_coordinates(Topology("torus:2x2", 4, ring4)) is not None


def test_several_chunks_per_root_give_up_where_the_encoding_is_too_big() -> None:
    from accelkb.solver.schedule.constructions.cayley_template import _done_tuples

    topo = parse_topology("torus:8x8")  # 4 chunks per chip at 126 steps: ~119k arcs
    group = cayley_group(topo)
    assert group is not None
    assert _done_tuples(topo, group, all_distances(topo), 126, 4) == []
    assert len(_done_tuples(topo, group, all_distances(topo), 63, 2)) > 0


def test_template_encoding_has_its_own_z3_context() -> None:
    import z3

    from accelkb.solver.schedule.constructions.cayley_template import _arcs, _encode
    from accelkb.solver.z3fast import any_of, at_most

    ctx = z3.Context()  # the helpers keep the context of their terms, also for trivial sizes
    a = z3.Bool("a", ctx)
    s = z3.Solver(ctx=ctx)
    s.add(at_most([a], 1), any_of([a]))
    assert s.check() == z3.sat
    topo = parse_topology("hypercube:3")
    group = cayley_group(topo)
    assert group is not None
    dist = all_distances(topo)
    solver, bools = _encode(topo, group, 5, [_arcs(topo, dist, 5, 3)])
    assert solver.ctx != z3.main_ctx() and bools[0][0].ctx == solver.ctx
