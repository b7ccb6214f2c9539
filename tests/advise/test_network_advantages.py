"""The three advantages claimed for a software-scheduled network, each quantified on its own
(issue 27): the split adds up to the dynamic-minus-scheduled time, each part moves only with its
own cause, and the rack's load balance is measured on real schedules and simulations."""

from __future__ import annotations

import pytest

from accelkb.advise.advice import TrafficRow
from accelkb.advise.network.advantages import (
    advantages,
    asked_counts,
    best_protocol,
    dynamic_seconds,
    protocols,
    token_latency,
)


def _row(**kw: float) -> TrafficRow:
    base: dict = dict(role="tensor-parallel all-reduce", topology="full:8", per_token=10,
                      scheduled_steps=2, lower_bound_steps=2, ecmp_steps=2.0,
                      adaptive_steps=2.0, scheduled_s=0.0, dynamic_s=0.0, chunk_bytes=2048.0,
                      link_bytes_per_s=1e10, hop_latency_s=6e-7, hops_per_transfer=1.0,
                      load_imbalance_scheduled=1.0, load_imbalance_ecmp=1.0,
                      load_imbalance_adaptive=1.0)
    base.update(kw)
    ser = base["chunk_bytes"] / base["link_bytes_per_s"]
    base["scheduled_s"] = base["scheduled_steps"] * (ser + base["hop_latency_s"])
    base["dynamic_s"] = min(base["ecmp_steps"], base["adaptive_steps"]) * (
        ser + base["hop_latency_s"])
    return TrafficRow(**base)


def test_protocols_are_sourced_and_the_best_one_depends_on_the_message() -> None:
    names = {p.name: p for p in protocols()}
    assert names["LL"].payload_share == 0.5 and names["Simple"].control_messages == 1
    assert all(p.source.startswith("https://github.com/NVIDIA/nccl/") for p in protocols())
    # tiny messages: latency dominates, a flag in the data wins; huge ones: full bandwidth wins
    assert best_protocol(_row(chunk_bytes=64.0)).control_messages == 0
    assert best_protocol(_row(chunk_bytes=1e6, hop_latency_s=1e-4)).name == "LL128"
    assert best_protocol(_row(chunk_bytes=1e9, hop_latency_s=1e-9)).name == "Simple"


def test_the_three_parts_add_up_to_the_dynamic_minus_scheduled_time() -> None:
    rows = [_row(ecmp_steps=5.0, adaptive_steps=3.0), _row(chunk_bytes=16384.0, per_token=7,
                                                           scheduled_steps=1, ecmp_steps=1.0,
                                                           adaptive_steps=1.0)]
    adv = advantages(rows, token_s=1e-3, software_step_s=1e-5)
    assert [a.claim.split(" (")[0] for a in adv] == [
        "global load balancing", "bandwidth efficiency", "low chip-to-chip latency"]
    total = sum(a.seconds_per_token for a in adv)
    gap = sum(r.per_token * (dynamic_seconds(r) - r.scheduled_s) for r in rows)
    assert total == pytest.approx(gap, rel=1e-12)
    # contention: only the first row contends, 3 steps (adaptive) against 2
    ser = 2048 / 1e10
    assert adv[0].seconds_per_token == pytest.approx(10 * (3 - 2) * (ser + 6e-7))
    # the software upper figure charges every dynamic step of every collective
    assert adv[2].upper_seconds_per_token == pytest.approx(
        adv[2].seconds_per_token + (10 * 3 + 7 * 1) * 1e-5)
    assert adv[0].share_of_token == pytest.approx(adv[0].seconds_per_token / 1e-3)


def test_no_contention_means_no_load_balancing_gain() -> None:
    adv = advantages([_row()], token_s=1e-3)
    assert adv[0].seconds_per_token == 0.0 and adv[2].upper_seconds_per_token is None


def test_token_latency_and_the_counts_a_scaling_question_asks() -> None:
    assert asked_counts(72, 576) == [72, 144, 288, 576]
    assert asked_counts(8, 8) == [8]
    t = token_latency(576, 4e-3, 250.0, [_row(ecmp_steps=3.0, adaptive_steps=3.0)])
    assert t.scheduled_p50_s == t.scheduled_p99_s == 4e-3
    assert t.dynamic_p50_s is not None and t.dynamic_p50_s > 4e-3
    missing = token_latency(72, None, None, [], note="weights exceed the SRAM")
    assert missing.scheduled_p50_s is None and missing.note == "weights exceed the SRAM"


def test_the_rack_schedule_balances_load_that_dynamic_routing_does_not() -> None:
    """Advantage 1 on the GroqRack's dragonfly: the synthesized allgather loads its links
    evenly; ECMP and adaptive routing of the same traffic do not."""
    from accelkb.perf.netsim.dynamic import scheduled_stats, simulate_collective
    from accelkb.solver import schedule
    from accelkb.solver.schedule.topology import parse_topology

    topo = parse_topology("dragonfly:nodes=9,chips=8,ports=4")
    res = schedule(topo, "allgather", chunks=1)
    sched = scheduled_stats(res.transfers, res.makespan_steps or 0, topo.unit_links,
                            topo.links)["load_imbalance"]
    ecmp = simulate_collective(topo, "allgather", 1, policy="ecmp").load_imbalance
    adaptive = simulate_collective(topo, "allgather", 1, policy="adaptive").load_imbalance
    assert 1.0 <= sched < adaptive < ecmp


def test_the_gpu_stack_upper_figure_is_nccls_own_latency_for_the_protocol_used() -> None:
    from accelkb.advise.network.advantages import nccl_software_s

    rows = [_row(chunk_bytes=16384.0, per_token=7, scheduled_steps=1, ecmp_steps=1.0,
                 adaptive_steps=1.0)]
    adv = advantages(rows, token_s=1e-3, gpu_stack=True)
    assert adv[2].upper_seconds_per_token == pytest.approx(
        adv[2].seconds_per_token + 7 * nccl_software_s("LL", 1.0))  # LL: the least latency
    assert "tuning.cc" in " ".join(adv[2].basis)
    # NCCL's LL: 6.6 us per collective and 0.6 us per NVLink step
    assert nccl_software_s("LL", 1.0) == pytest.approx(7.2e-6)
