"""Collective times from synthesized schedules (accelkb.perf.scheduled) and their fallbacks."""

from __future__ import annotations

import pytest
from perf_fixtures import GROQ, llama70

from accelkb.errors import InputError
from accelkb.perf import InferenceConfig, estimate_inference, estimate_training
from accelkb.perf.calibration import load_calibration
from accelkb.perf.collectives import collective_time
from accelkb.perf.scheduled import _synthesize, timed_collective
from accelkb.perf.specs import ModelSpec, NetworkLevelSpec, SystemSpec

CAL = load_calibration()
C2C = 14e9  # one Groq C2C link per direction (Linley 2020, as in ontology/data/groq.ttl)


def _node(scheduled: bool = True, generator: str | None = "full:8") -> NetworkLevelSpec:
    return NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=7 * C2C,
                            latency_s=6e-7, topology="full", generator=generator,
                            scheduled=scheduled, link_bandwidth_bytes_per_s=C2C)


def _rack() -> NetworkLevelSpec:
    return NetworkLevelSpec(name="rack", group_chips=72, bandwidth_bytes_per_s_per_chip=4 * C2C,
                            latency_s=6e-7, topology="dragonfly", max_hops=3,
                            generator="dragonfly:nodes=9,chips=8,ports=4", scheduled=True,
                            link_bandwidth_bytes_per_s=C2C)


def _groq72() -> SystemSpec:
    return SystemSpec(name="groq-72", chip=GROQ, chips=72, levels=[_node(), _rack()])


def test_scheduled_level_takes_the_schedule_time() -> None:
    secs, info = timed_collective("all_reduce", 16384.0, 8, [_node()], CAL, mode="auto")
    assert info.source == "schedule" and info.fallback is None
    assert info.status in ("OPTIMAL", "FEASIBLE") and info.topology == "full:8"
    assert info.makespan_steps is not None and info.lower_bound_steps is not None
    assert info.makespan_steps >= info.lower_bound_steps
    # steps x (chunk / unit-link bandwidth + per-hop latency), no software step latency
    assert info.chunks is not None
    assert secs == pytest.approx(info.makespan_steps * (16384.0 / info.chunks / C2C + 6e-7))
    assert secs < collective_time("all_reduce", 16384.0, 8, [_node()], CAL)


def test_alpha_beta_mode_and_dynamic_networks_fall_back_with_a_reason() -> None:
    secs, info = timed_collective("all_reduce", 16384.0, 8, [_node()], CAL, mode="alpha-beta")
    assert info.source == "alpha-beta" and info.fallback == "alpha-beta requested"
    assert secs == collective_time("all_reduce", 16384.0, 8, [_node()], CAL)
    _, gpu = timed_collective("all_reduce", 1e6, 8, [_node(scheduled=False)], CAL, mode="auto")
    assert gpu.source == "alpha-beta" and "dynamically routed" in (gpu.fallback or "")


def test_forced_schedule_on_a_dynamic_network_keeps_the_software_step_latency() -> None:
    lvl = _node(scheduled=False)
    secs, info = timed_collective("all_reduce", 16384.0, 8, [lvl], CAL, mode="schedule")
    assert info.source == "schedule" and info.makespan_steps is not None
    assert secs >= info.makespan_steps * (CAL.collective_step_latency_s + 6e-7)


@pytest.mark.parametrize(("levels", "n", "stride", "reason"), [
    ([_node(generator=None)], 8, 1, "no generator topology"),
    ([_node(generator="nonsense:3")], 8, 1, "cannot build topology"),
    ([_node(), _rack()], 16, 1, "spans 2 network levels"),
    ([_rack()], 9, 8, "not the whole of"),
])
def test_groups_the_solver_cannot_take_fall_back(levels: list[NetworkLevelSpec], n: int,
                                                 stride: int, reason: str) -> None:
    secs, info = timed_collective("all_reduce", 1e6, n, levels, CAL, stride=stride,
                                  mode="schedule")
    assert info.source == "alpha-beta" and reason in (info.fallback or "")
    assert secs == collective_time("all_reduce", 1e6, n, levels, CAL, stride=stride)


def test_subset_of_a_fully_connected_level_is_scheduled_on_a_smaller_full_graph() -> None:
    _, info = timed_collective("all_gather", 4096.0, 4, [_node()], CAL, mode="auto")
    assert info.source == "schedule" and info.topology == "full:4"


def test_pipeline_hop_is_a_scheduled_point_to_point_transfer() -> None:
    secs, info = timed_collective("p2p", 16384.0, 2, [_node(), _rack()], CAL, stride=8,
                                  mode="auto")
    assert info.source == "schedule" and info.op == "p2p" and info.ranks == 2
    assert info.level == "rack" and info.makespan_steps is not None
    assert secs >= 6e-7  # at least one hop


def test_inference_reports_each_collective_and_its_source() -> None:
    cfg = InferenceConfig(tp=8, pp=9, batch=1, prompt_len=64, output_len=64, precision="int8")
    small = ModelSpec(name="s", layers=9, hidden=1024, heads=8, kv_heads=8, ffn_hidden=4096,
                      vocab=32000, seq_len=512, gated_mlp=True)
    ab = estimate_inference(small, _groq72(), cfg)
    sched = estimate_inference(small, _groq72(), cfg.model_copy(update={"collectives": "auto"}))
    assert {c.source for c in ab.collectives.values()} == {"alpha-beta"}
    assert set(sched.collectives) == {"decode_tp_all_reduce", "decode_pipeline_hop",
                                      "prefill_tp_all_reduce", "prefill_pipeline_hop"}
    assert sched.collectives["decode_tp_all_reduce"].source == "schedule"
    tp = sched.collectives["decode_tp_all_reduce"].seconds
    assert sched.breakdown["tensor_parallel_comm"] == pytest.approx(9 * 2 * tp)
    assert sched.decode_s_per_token < ab.decode_s_per_token


def test_training_reports_collectives_and_parses_the_option() -> None:
    small = ModelSpec(name="s", layers=8, hidden=1024, heads=8, kv_heads=8, ffn_hidden=4096,
                      vocab=32000, seq_len=512, gated_mlp=True)
    est = estimate_training(small, _groq72().model_copy(
        update={"chip": GROQ.model_copy(update={"memory_tiers": [
            GROQ.memory_tiers[0].model_copy(update={"capacity_bytes": 1e12})]})}),
        "tp=8,pp=2,dp=2,mb=1,gbs=4,precision=fp16,collectives=auto")
    assert est.config.collectives == "auto"
    assert est.collectives["tp_all_reduce"].source == "schedule"
    assert est.collectives["pipeline_p2p"].source == "schedule"
    dp = est.collectives["dp_all_reduce"]
    assert dp.source == "alpha-beta" and dp.fallback  # strided group: reason recorded
    with pytest.raises(InputError, match="collectives"):
        estimate_training(small, _groq72(), "tp=8,collectives=magic")


def test_schedules_are_memoised_per_topology_collective_and_chunks() -> None:
    timed_collective("all_reduce", 1000.0, 8, [_node()], CAL, mode="auto")
    before = _synthesize.cache_info()
    timed_collective("all_reduce", 2000.0, 8, [_node()], CAL, mode="auto")
    after = _synthesize.cache_info()
    assert after.misses == before.misses and after.hits > before.hits


def test_fixture_groq_without_generators_stays_alpha_beta() -> None:
    from perf_fixtures import groq

    est = estimate_inference(llama70(), groq(576), "tp=8,pp=72,precision=int8,collectives=auto")
    assert all(c.source == "alpha-beta" and "dynamically routed" in (c.fallback or "")
               for c in est.collectives.values())


def test_groq_576_from_the_knowledge_base_is_scheduled_by_default() -> None:
    """Issue 25: on a statically scheduled chip the collectives come from schedules unless
    another mode is asked for; the NCCL-fitted alpha-beta model stays available."""
    cfg = "tp=8,pp=72,batch=1,in=512,out=512,precision=int8"
    ab = estimate_inference("llama2-70b", "groq-576", cfg + ",collectives=alpha-beta")
    sched = estimate_inference("llama2-70b", "groq-576", cfg)
    assert ab.collectives["decode_tp_all_reduce"].source == "alpha-beta"
    ar = sched.collectives["decode_tp_all_reduce"]
    hop = sched.collectives["decode_pipeline_hop"]
    assert ar.source == hop.source == "schedule"
    assert ar.topology == "full:8" and hop.topology == "dragonfly:nodes=9,chips=8,ports=4"
    # Each operation costs its functional latency and weights reach the matrix units at the
    # fitted feed rate (both Groq's own constants); the network is a small part of the token
    # (no NCCL-fitted software latency per step).
    assert sched.bound in ("latency", "bandwidth")
    assert sched.breakdown["overhead"] > 0 and sched.breakdown["memory"] > 0
    net = sched.breakdown["tensor_parallel_comm"] + sched.breakdown["pipeline_hops"]
    assert net < 0.15 * sched.decode_s_per_token
    assert ab.breakdown["tensor_parallel_comm"] > 5 * sched.breakdown["tensor_parallel_comm"]
