"""A schedule's own transfers run self-timed: causal, collision-free, data-driven."""

from __future__ import annotations

import doctest
import json
import random

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf.netsim import selftimed as netsim_selftimed
from accelkb.perf.netsim.selftimed import self_timed, self_timed_transfers
from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.model import Instance
from accelkb.solver.schedule.topology import parse_topology
from accelkb.solver.schedule.verify import verify


def test_docstring_examples() -> None:
    assert doctest.testmod(netsim_selftimed).failed == 0


@pytest.mark.parametrize("spec, collective, chunks", [
    ("ring:8", "allgather", 2), ("torus:4x4", "allgather", 1), ("hypercube:4", "broadcast", 3),
    ("torus:3x3", "alltoall", 1), ("dragonfly:nodes=2", "allgather", 1),
])
def test_self_timed_copy_collectives_are_schedules(spec: str, collective: str,
                                                   chunks: int) -> None:
    """For copy collectives the self-timed transfers are a schedule the checker accepts, so
    the run is causal and collision-free, and its makespan respects the lower bound."""
    topo = parse_topology(spec)
    res = schedule(topo, collective, chunks, time_limit_s=20)
    for seed in range(3):
        timed, _ = self_timed_transfers(topo, collective, res.transfers, chunks, seed)
        steps = max(t for t, *_ in timed) + 1
        assert verify(Instance(topo, collective, chunks), timed, steps).ok
        assert steps >= res.lower_bound_steps
        assert self_timed(topo, collective, res.transfers, chunks, seed).makespan_steps == steps


@pytest.mark.parametrize("spec, collective, chunks", [
    ("torus:4x4", "allreduce", 16), ("ring:6", "reduce_scatter", 1), ("hypercube:3", "allreduce", 8),
])
def test_self_timed_reductions_keep_causality(spec: str, collective: str, chunks: int) -> None:
    """A partial sum leaves only after every arrival the plan adds into it before its planned
    step; each unit link carries one chunk per step."""
    topo = parse_topology(spec)
    res = schedule(topo, collective, chunks, time_limit_s=20)
    timed, _ = self_timed_transfers(topo, collective, res.transfers, chunks, seed=1)
    load: dict[tuple[int, int, int], int] = {}
    for t, u, v, _c in timed:
        load[(t, u, v)] = load.get((t, u, v), 0) + 1
    assert all(k <= topo.links[(u, v)] for (_t, u, v), k in load.items())
    for (pt, u, _v, c), (t, *_rest) in zip(res.transfers, timed, strict=True):
        for (qt, _w, x, d), (s, *_r) in zip(res.transfers, timed, strict=True):
            if x == u and d == c and qt < pt:
                assert s < t
    assert self_timed(topo, collective, res.transfers, chunks).makespan_steps \
        >= res.lower_bound_steps


def test_self_timed_starts_what_a_lazy_plan_delays() -> None:
    """Data-driven: a plan that idles three steps runs in one step self-timed."""
    topo = parse_topology("ring:3")
    lazy = [(3, s, (s + k) % 3, (s, 0)) for s in range(3) for k in (1, 2)]
    assert verify(Instance(topo, "allgather"), lazy, 4).ok
    assert self_timed(topo, "allgather", lazy).makespan_steps == 1


def test_bad_link_is_input_error() -> None:
    with pytest.raises(InputError, match="expected transfers on links"):
        self_timed(parse_topology("ring:4"), "allgather", [(0, 0, 2, (0, 0))])


def test_cli_dynamic_reports_self_timed(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["schedule", "--topology", "torus:4x4", "--collective", "allreduce",
                 "--chunks", "16", "--time-limit", "20", "--dynamic", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    timed = out["dynamic"]["self-timed"]
    assert timed["policy"] == "self-timed"
    assert timed["makespan_steps"] >= out["lower_bound_steps"]
    assert timed["ratio_to_schedule"] == round(timed["makespan_steps"] / out["makespan_steps"], 3)


def test_random_schedules_replay_under_self_timing() -> None:
    """Property: on random small topologies every verified allgather schedule stays a valid
    schedule when run self-timed."""
    rng = random.Random(7)
    for _ in range(6):
        n = rng.randint(3, 6)
        spec = rng.choice([f"ring:{n}", f"full:{n}", "torus:2x3", "hypercube:2"])
        topo = parse_topology(spec)
        res = schedule(topo, "allgather", rng.randint(1, 2), time_limit_s=10)
        c = res.chunks_per_rank
        timed, _ = self_timed_transfers(topo, "allgather", res.transfers, c, seed=rng.randint(0, 99))
        assert verify(Instance(topo, "allgather", c), timed, max(t for t, *_ in timed) + 1).ok


def test_sweep_rows_carry_self_timed() -> None:
    from accelkb.perf.netsim import sweep

    rows = sweep(["ring:4", "torus:3x3"], "allgather", time_limit_s=10)
    for r in rows:
        assert isinstance(r["self_timed"], int) and isinstance(r["scheduled"], int)
        assert r["self_timed"] >= r["lower_bound"]
        assert r["adaptive"] >= r["lower_bound"] and r["ecmp"] >= r["lower_bound"]


def test_zero_capacity_link_is_input_error() -> None:
    """A hand-built topology with a 0-multiplicity link: refused, not an endless run."""
    from accelkb.solver.schedule.topology import Topology

    topo = Topology("x", 2, {(0, 1): 0, (1, 0): 1})
    with pytest.raises(InputError, match="expected transfers on links"):
        self_timed(topo, "allgather", [(0, 0, 1, (0, 0)), (0, 1, 0, (1, 0))])


def test_alltoall_statistics_count_destinations() -> None:
    """p50/p99 over (destination, chunk) as the dynamic runs count them, not relay arrivals."""
    topo = parse_topology("ring:8")
    res = schedule(topo, "alltoall", 1, time_limit_s=10)
    timed, _ = self_timed_transfers(topo, "alltoall", res.transfers)
    at_dst = sorted(t + 1 for t, _u, v, c in timed if v == c[1])
    r = self_timed(topo, "alltoall", res.transfers)
    assert len(at_dst) == 56 and r.makespan_steps == at_dst[-1]
    assert r.p50_steps == (at_dst[27] + at_dst[28]) / 2
