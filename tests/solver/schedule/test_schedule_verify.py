"""The independent checker, and property tests that use it as the oracle."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.model import Instance, Status
from accelkb.solver.schedule.topology import Topology, parse_topology
from accelkb.solver.schedule.verify import ScheduleError, verify


def ring2_allgather() -> Instance:
    return Instance(parse_topology("ring:2"), "allgather")


def test_a_correct_schedule_passes() -> None:
    report = verify(ring2_allgather(), [(0, 0, 1, (0, 0)), (0, 1, 0, (1, 0))], 1)
    assert report.ok and report.max_link_load == 1.0


def test_collision_names_step_link_and_capacity() -> None:
    inst = Instance(parse_topology("ring:3"), "allgather")
    trs = [(0, 0, 1, (0, 0)), (1, 0, 1, (2, 0)), (1, 0, 1, (1, 0))]
    with pytest.raises(ScheduleError, match=r"step 1: link 0->1 carries 2 chunks but has 1"):
        verify(inst, trs, 3, raise_on_error=True)


def test_send_before_holding_is_refused() -> None:
    with pytest.raises(ScheduleError, match="chip 0 sends chunk \\[1, 0\\] to 1 before holding"):
        verify(ring2_allgather(), [(0, 0, 1, (1, 0))], 1, raise_on_error=True)


def test_incomplete_destination_is_reported() -> None:
    report = verify(ring2_allgather(), [(0, 0, 1, (0, 0))], 1)
    assert not report.ok
    assert "chip 0 lacks complete chunk [1, 0]" in report.errors[0]


def test_missing_link_and_late_step_are_reported() -> None:
    inst = Instance(parse_topology("ring:4"), "allgather")
    report = verify(inst, [(0, 0, 2, (0, 0)), (5, 0, 1, (0, 0))], 2)
    text = " ".join(report.errors)
    assert "link 0->2 does not exist" in text and "after the stated makespan" in text


def test_reduction_double_count_is_caught() -> None:
    # ring:3 reduce_scatter: 1 sends its partial of chunk 0 to 0 twice via 2
    inst = Instance(parse_topology("ring:3"), "reduce_scatter")
    trs = [(0, 1, 0, (0, 0)), (0, 1, 2, (0, 0)), (1, 2, 0, (0, 0))]
    with pytest.raises(ScheduleError, match="double-count chunk \\[0, 0\\]"):
        verify(inst, trs, 2, raise_on_error=True)


def test_a_transfer_over_a_missing_link_delivers_nothing() -> None:
    inst = Instance(parse_topology("ring:4"), "allgather")
    report = verify(inst, [(0, 0, 2, (0, 0)), (1, 2, 3, (0, 0))], 2)
    assert report.errors[0] == "step 0: link 0->2 does not exist in ring:4"
    assert "step 1: chip 2 sends chunk [0, 0] to 3 before holding it" in report.errors


def test_reduction_errors_are_listed_in_step_order_across_chunks() -> None:
    # replayed chunk by chunk, reported step by step: chunk [1, 0] double-counts at step 1,
    # chunk [0, 0] at step 2; raise_on_error raises the earliest
    inst = Instance(parse_topology("ring:3"), "reduce_scatter")
    trs = [(0, 1, 0, (0, 0)), (1, 1, 2, (0, 0)), (2, 2, 0, (0, 0)),
           (0, 0, 1, (1, 0)), (0, 0, 2, (1, 0)), (1, 2, 1, (1, 0))]
    report = verify(inst, trs, 3)
    assert report.errors[0].startswith("step 1: chip 1 would double-count chunk [1, 0]")
    assert report.errors[1].startswith("step 2: chip 0 would double-count chunk [0, 0]")
    assert all(e.startswith("end: ") for e in report.errors[2:])
    with pytest.raises(ScheduleError, match=r"step 1: chip 1 would double-count chunk \[1, 0\]"):
        verify(inst, trs, 3, raise_on_error=True)


def test_errors_keep_the_order_of_the_transfer_list() -> None:
    inst = Instance(parse_topology("ring:4"), "allgather")
    # a step below -1 still comes after the stated-makespan checks
    with pytest.raises(ScheduleError, match="step -2: negative step"):
        verify(inst, [(-2, 1, 2, (0, 0))], 1, raise_on_error=True)
    # the same tuple object twice: each error at its own place in the list
    t = (0, 1, 2, (0, 0))
    errors = verify(inst, [t, (0, 2, 3, (1, 0)), t], 1).errors
    assert errors[0] == "step 0: link 1->2 carries 2 chunks but has 1 unit links"
    assert [e.split(" to ")[0] for e in errors[1:4]] == [
        "step 0: chip 1 sends chunk [0, 0]", "step 0: chip 2 sends chunk [1, 0]",
        "step 0: chip 1 sends chunk [0, 0]"]
    # transfers as lists (JSON-shaped) are reported, not a crash
    report = verify(inst, [[0, 1, 2, (0, 0)]], 1)  # type: ignore[list-item]
    assert report.errors[0] == "step 0: chip 1 sends chunk [0, 0] to 2 before holding it"


def test_allreduce_broadcast_of_the_full_sum_replaces_partials() -> None:
    inst = Instance(parse_topology("ring:2"), "allreduce", 1)
    trs = [(0, 1, 0, (0, 0)), (1, 0, 1, (0, 0))]
    assert verify(inst, trs, 2).ok


@st.composite
def small_topologies(draw: st.DrawFn) -> Topology:
    n = draw(st.integers(2, 7))
    links: dict[tuple[int, int], int] = {}
    for i in range(n):  # a ring keeps it strongly connected
        links[(i, (i + 1) % n)] = draw(st.integers(1, 2))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(1, 3)), max_size=8))
    for u, v, m in extra:
        if u != v:
            links[(u, v)] = m
    if n == 2:
        links = {(0, 1): links.get((0, 1), 1), (1, 0): links.get((1, 0), 1)}
    return Topology(f"random{n}", n, links)


COLLECTIVES = ["allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topo=small_topologies(), collective=st.sampled_from(COLLECTIVES),
       chunks=st.integers(1, 3))
def test_every_synthesized_schedule_passes_the_checker(topo: Topology, collective: str,
                                                       chunks: int) -> None:
    res = schedule(topo, collective, chunks, time_limit_s=0.5)
    assert res.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert res.verified
    assert res.makespan_steps is not None and res.makespan_steps >= res.lower_bound_steps
    inst = Instance(topo, collective, chunks)
    assert verify(inst, list(res.transfers), res.makespan_steps).ok


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topo=small_topologies(), chunks=st.integers(1, 6), data=st.data())
def test_broadcast_bounds_hold_from_any_root(topo: Topology, chunks: int,
                                            data: st.DataObject) -> None:
    """The broadcast bounds (entry, ingress, diameter) are taken from the given root: no
    verified schedule from that root is shorter."""
    root = data.draw(st.integers(0, topo.endpoints - 1))
    res = schedule(topo, "broadcast", chunks, time_limit_s=1.0, root=root)
    assert res.verified and res.makespan_steps is not None
    assert res.makespan_steps >= res.lower_bound_steps
    assert verify(Instance(topo, "broadcast", chunks, root=root), list(res.transfers),
                  res.makespan_steps).ok


@settings(max_examples=12, deadline=None)
@given(topo=small_topologies(), collective=st.sampled_from(["allgather", "alltoall"]),
       data=st.data())
def test_dropping_a_transfer_breaks_the_schedule(topo: Topology, collective: str,
                                                 data: st.DataObject) -> None:
    res = schedule(topo, collective, 1, time_limit_s=3.0, use_z3=False)
    trs = list(res.transfers)
    drop = data.draw(st.integers(0, len(trs) - 1))
    # only transfers that deliver to a destination for the first time matter
    t, u, v, c = trs[drop]
    if sum(1 for x in trs if x[2] == v and x[3] == c) > 1:
        return
    inst = Instance(topo, collective, 1)
    assert not verify(inst, trs[:drop] + trs[drop + 1:], res.makespan_steps).ok
