"""The dynamic-routing simulator."""

from __future__ import annotations

import pytest

from accelkb.errors import InputError
from accelkb.perf.netsim import collective_messages, scheduled_stats, simulate, simulate_collective
from accelkb.solver import schedule
from accelkb.solver.schedule.topology import parse_topology


def test_single_message_takes_its_distance() -> None:
    t = parse_topology("ring:8")
    r = simulate(t, [(0, 4, -1)], policy="ecmp")
    assert (r.makespan_steps, r.messages, r.max_queue) == (4, 1, 1)


def test_contention_serializes_on_a_shared_link() -> None:
    t = parse_topology("ring:4")
    r = simulate(t, [(0, 1, -1)] * 3, policy="adaptive")
    assert r.makespan_steps == 3 and r.p50_steps == 2.0 and r.max_queue == 3


@pytest.mark.parametrize("policy", ["ecmp", "adaptive"])
def test_dynamic_routing_never_beats_the_lower_bound(policy: str) -> None:
    t = parse_topology("torus:4x4")
    res = schedule(t, "alltoall", time_limit_s=10)
    sim = simulate_collective(t, "alltoall", 1, policy)
    assert sim.messages == 16 * 15
    assert sim.makespan_steps >= res.lower_bound_steps
    assert 0 < sim.link_utilization <= 1


def test_allreduce_releases_the_allgather_after_the_reduction() -> None:
    t = parse_topology("full:4")
    initial, released = collective_messages(t, "allreduce", 4)
    assert len(initial) == 12 and sum(len(v) for v in released.values()) == 12
    r = simulate(t, initial, released)
    assert r.messages == 24 and r.makespan_steps == 2


def test_scheduled_stats() -> None:
    res = schedule("ring:4", "allgather")
    s = scheduled_stats(res.transfers, res.makespan_steps, 8)
    assert s["makespan_steps"] == 2 and 0 < s["link_utilization"] <= 1


def test_load_imbalance_is_max_over_mean_per_unit_link() -> None:
    """One message over 4 hops of an 8-ring loads 4 of the 16 directed links once each:
    max 1 / mean (4 / 16) = 4. Every chip sending to its right neighbour loads the 8 clockwise
    links evenly: 1 / (8 / 16) = 2."""
    t = parse_topology("ring:8")
    assert simulate(t, [(0, 4, -1)], policy="ecmp").load_imbalance == 4.0
    ring = simulate(t, [(i, (i + 1) % 8, -1) for i in range(8)], policy="ecmp")
    assert ring.load_imbalance == 2.0
    res = schedule("ring:4", "allgather")
    topo = parse_topology("ring:4")
    s = scheduled_stats(res.transfers, res.makespan_steps, topo.unit_links, topo.links)
    # 4 chunks x 3 destinations = 12 transfers on the 8 directed links (mean 1.5); in 2 steps
    # the third copy of each chunk takes a second hop on one side: max 2
    assert len(res.transfers) == 12 and s["load_imbalance"] == round(2 / 1.5, 4)


def test_bad_policy_and_messages_are_input_errors() -> None:
    t = parse_topology("ring:4")
    with pytest.raises(InputError, match="expected a routing policy"):
        simulate(t, [(0, 1, -1)], policy="random")
    with pytest.raises(InputError, match="expected messages between distinct chips"):
        simulate(t, [(0, 0, -1)])
    with pytest.raises(InputError, match="expected a collective"):
        collective_messages(t, "gossip")
