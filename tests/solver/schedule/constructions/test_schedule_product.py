"""Allreduce on tori as products of rings (``solver/schedule/constructions/product.py``)."""

from __future__ import annotations

import random

import pytest

from accelkb.solver import schedule
from accelkb.solver.schedule.constructions.closed_form import ring_allreduce
from accelkb.solver.schedule.constructions.product import (
    RingSchedule,
    factorizations,
    rotated_allreduce,
    sequential_allreduce,
    torus_dims,
)
from accelkb.solver.schedule.model import Instance
from accelkb.solver.schedule.topology import Topology, parse_topology, ring, torus
from accelkb.solver.schedule.verify import verify


def _ring_source(k: int, m: int) -> RingSchedule | None:
    """The closed-form ring allreduce (``ring:2`` has none: a swap per chunk)."""
    if k == 2:
        return m, [tr for j in range(m) for tr in ((j, 0, 1, (0, j)), (j, 1, 0, (0, j)))]
    return ring_allreduce(ring(k), m)


def test_torus_dims_come_from_the_name_and_are_checked_against_the_links() -> None:
    t = parse_topology("torus:4x4x4")
    assert torus_dims(t) == (4, 4, 4)
    assert torus_dims(Topology("Torus4x4", 16, dict(torus((4, 4)).links))) == (4, 4)
    assert torus_dims(parse_topology("ring:8")) is None
    assert torus_dims(parse_topology("hypercube:4")) is None
    links = dict(torus((4, 4)).links)
    del links[(0, 1)]
    assert torus_dims(Topology("torus:4x4", 16, links)) is None
    assert torus_dims(Topology("torus:4x8", 16, dict(torus((4, 4)).links))) is None


@pytest.mark.parametrize("dims", [(4, 4, 4), (2, 4, 3), (5, 3), (1, 6, 2)])
def test_every_factor_is_a_set_of_disjoint_rings_of_the_torus(dims: tuple[int, ...]) -> None:
    topo = torus(dims)
    for factors in factorizations(dims):
        seen: set[tuple[int, int]] = set()
        for k, lines in factors:
            chips = sorted(c for line in lines for c in line)
            assert chips == list(range(topo.n))
            for line in lines:
                assert len(line) == k
                hops = [(line[i], line[(i + 1) % k]) for i in range(k if k > 2 else 1)]
                for u, v in hops:
                    assert topo.links[(u, v)] == 1 and topo.links[(v, u)] == 1
                    assert (u, v) not in seen  # a link belongs to one factor
                    seen.update({(u, v), (v, u)})
        assert len(seen) == len(topo.links)


def test_a_cube_of_fours_is_a_six_dimensional_hypercube() -> None:
    assert sorted(len(f) for f in factorizations((4, 4, 4))) == [3, 4, 4, 4, 5, 5, 5, 6]


@pytest.mark.parametrize("seed", range(6))
def test_product_schedules_replay_on_random_tori(seed: int) -> None:
    rnd = random.Random(seed)
    dims = tuple(rnd.choice([1, 2, 3, 4, 5]) for _ in range(rnd.choice([2, 3])))
    topo = torus(dims)
    chunks = rnd.randint(1, 7)
    for factors in factorizations(dims):
        for build in (sequential_allreduce, rotated_allreduce):
            made = build(factors, chunks, _ring_source)
            if made is None:
                assert all(k < 2 for k in dims)
                continue
            steps, trs = made
            report = verify(Instance(topo, "allreduce", chunks), trs, steps)
            assert report.ok, (dims, chunks, build.__name__, report.errors[:3])
            assert report.max_link_load <= 1.0


def test_a_missing_ring_schedule_gives_none() -> None:
    factors = factorizations((3, 3))[0]
    assert sequential_allreduce(factors, 2, lambda k, m: None) is None
    assert rotated_allreduce(factors, 2, lambda k, m: None) is None


@pytest.mark.parametrize("spec,chunks,steps", [
    ("torus:4x4x4", 1, 6), ("torus:4x4x4", 4, 6), ("torus:4x4x4", 6, 6),  # TPU v4 cube
    ("torus:4x4", 2, 4), ("torus:4x4", 4, 4),  # IPU-POD16
    ("torus:2x4x4", 5, 5),
])
def test_small_allreduce_on_tori_meets_the_diameter(spec: str, chunks: int, steps: int) -> None:
    r = schedule(spec, "allreduce", chunks, time_limit_s=10)
    assert r.verified
    assert r.status.value == "OPTIMAL"
    assert r.makespan_steps == r.lower_bound_steps == steps


def test_torus_8x8_one_chunk_goes_ring_by_ring() -> None:
    # ring:8 takes 5 steps for one chunk, so 5 + 5; before the product construction: 16
    r = schedule("torus:8x8", "allreduce", 1, time_limit_s=10)
    assert r.verified and r.makespan_steps <= 10
    assert r.lower_bound_steps == 8

