"""Cayley-template allreduce: translation groups and the paired (time-reversed) template."""

from __future__ import annotations

import time

import pytest

from accelkb.solver import schedule
from accelkb.solver.bounds import all_distances, lower_bounds
from accelkb.solver.cayley import cayley_group
from accelkb.solver.schedule_cayley import cayley_allreduce
from accelkb.solver.schedule_model import Instance
from accelkb.solver.topology import Topology, parse_topology
from accelkb.solver.verify_schedule import verify


@pytest.mark.parametrize("spec", ["torus:2x4x4", "hypercube:5", "torus:3x3", "ring:6", "full:6"])
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


def test_no_group_for_dragonflies_or_a_name_the_links_contradict() -> None:
    assert cayley_group(parse_topology("dragonfly:nodes=4")) is None
    ring = parse_topology("ring:8")
    links = dict(ring.links)
    links[(0, 4)] = links[(4, 0)] = 1  # a chord: no longer vertex-transitive under rotation
    assert cayley_group(Topology("ring:8", 8, links)) is None


@pytest.mark.parametrize("spec", ["hypercube:5", "torus:2x4x4"])
def test_paired_template_meets_the_transfers_bound(spec: str) -> None:
    topo = parse_topology(spec)
    lb = lower_bounds(topo, "allreduce", topo.n).best
    assert lb == 13  # 2*31*32 transfers over 160 links: 12.4 steps
    group = cayley_group(topo)
    assert group is not None
    trs = cayley_allreduce(topo, group, all_distances(topo), lb, time.monotonic() + 60)
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
