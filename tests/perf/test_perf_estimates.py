"""Training and inference estimates, the before/after check and the CLI, on explicit specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perf_fixtures import A100, dgx, gpt3, groq, ipu_pod, llama70, small, sn40l

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf import (
    Candidate,
    InferenceConfig,
    TrainingConfig,
    compare_before_after,
    estimate_inference,
    estimate_training,
)

GPT3_LAYOUT = "tp=8,pp=16,dp=8,mb=1,gbs=1536,recompute=full"


def test_gpt3_on_1024_a100_near_published_140_tflops() -> None:
    est = estimate_training(gpt3(), dgx(A100, 1024), GPT3_LAYOUT + ",v=2")
    # Narayanan et al. SC'21: 140 TFLOP/s per GPU (96-coefficient FLOPs) for this layout.
    assert est.hardware_flops_per_s_per_chip / 1e12 == pytest.approx(140, rel=0.15)
    assert sum(est.breakdown.values()) == pytest.approx(est.step_time_s)
    assert est.mfu < est.hfu < 1
    assert est.memory_per_chip_bytes["hbm"] < 80e9


def test_breakdown_reacts_to_each_mechanism() -> None:
    system = dgx(A100, 1024)
    base = estimate_training(gpt3(), system, GPT3_LAYOUT)
    inter = estimate_training(gpt3(), system, GPT3_LAYOUT + ",v=2")
    assert inter.breakdown["pipeline_bubble"] == pytest.approx(
        base.breakdown["pipeline_bubble"] / 2, rel=0.05)
    assert inter.breakdown["pipeline_p2p"] == pytest.approx(2 * base.breakdown["pipeline_p2p"])
    sel = estimate_training(gpt3(), system, GPT3_LAYOUT.replace("full", "selective") + ",sp=1")
    assert sel.step_time_s < base.step_time_s
    assert sel.memory_breakdown_bytes["activations"] > base.memory_breakdown_bytes["activations"]
    overlap = estimate_training(gpt3(), system, GPT3_LAYOUT + ",overlap=1")
    assert overlap.breakdown["data_parallel_comm"] <= base.breakdown["data_parallel_comm"]
    bubble_fraction = base.breakdown["pipeline_bubble"] / (base.step_time_s)
    assert bubble_fraction == pytest.approx(15 / (192 + 15), rel=0.15)


def test_zero_stages_trade_memory_for_communication() -> None:
    system = dgx(A100, 64)
    layout = "tp=1,pp=1,dp=64,mb=4,gbs=256,recompute=full"
    mem = []
    for z in range(4):
        est = estimate_training(small(), system, f"{layout},zero={z}")
        mem.append(est.memory_per_chip_bytes["hbm"])
    assert mem == sorted(mem, reverse=True)
    z0 = estimate_training(small(), system, layout + ",zero=0")
    z3 = estimate_training(small(), system, layout + ",zero=3")
    assert z3.breakdown["data_parallel_comm"] > z0.breakdown["data_parallel_comm"]


def test_optimizer_offload_uses_slower_tier_or_host() -> None:
    ipu = estimate_training(small(), ipu_pod(16), "tp=1,pp=4,dp=4,mb=1,gbs=64,recompute=full,"
                            "rts=1,precision=fp16")
    assert ipu.placement.get("streaming", {}).get("optimizer", 0) > 0
    assert ipu.breakdown["offload"] > 0
    gpu = estimate_training(small(), dgx(A100, 8), "dp=8,mb=2,gbs=16,offload=1")
    assert gpu.memory_breakdown_bytes["optimizer"] == 0 and gpu.breakdown["offload"] > 0


def test_energy_and_time_to_train() -> None:
    est = estimate_training(small(), dgx(A100, 8), "dp=8,mb=2,gbs=64", train_tokens=1e9)
    assert est.time_to_train_s == pytest.approx(1e9 / est.tokens_per_s)
    assert est.power_w is not None and est.joules_per_token is not None
    assert 8 * 0.2 * 6500 / 8 < est.power_w <= 6500
    assert est.energy_to_train_j == pytest.approx(est.power_w * est.time_to_train_s)


@pytest.mark.parametrize(("layout", "message"), [
    ("tp=5,mb=1,gbs=8", "tp to divide the 16 attention heads"),
    ("mb=-1,gbs=8", "micro_batch"),
    ("dp=8,mb=3,gbs=8", r"gbs \(global_batch\) divisible"),
    ("tp=8,pp=2,dp=8,gbs=128", "tp x pp x dp <= 8"),
    ("frobnicate=1", "--parallel key"),
    ("tp", "key=value"),
])
def test_invalid_training_input(layout: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        estimate_training(small(), dgx(A100, 8), layout)


def test_configuration_that_does_not_fit() -> None:
    with pytest.raises(InputError, match="does not fit"):
        estimate_training(gpt3(), dgx(A100, 8), "tp=8,mb=1,gbs=1")


def test_a_layer_that_does_not_fit_sram_is_refused_on_a_chip_without_hbm() -> None:
    """Issue 25: GPT-3 2.7B at tp=1 with micro-batch 8 on GC200s was recommended, though one
    layer's activations (34 s b h = 1.43 GB, attention scores not even counted) exceed the
    900 MB of In-Processor memory; streaming memory does not help (it is reached by copies)."""
    from accelkb.perf.specs import ModelSpec

    gpt27 = ModelSpec(name="gpt3-2.7b", layers=32, hidden=2560, heads=32, kv_heads=32,
                      ffn_hidden=10240, vocab=50257, seq_len=2048, gated_mlp=False)
    with pytest.raises(InputError) as got:
        estimate_training(gpt27, ipu_pod(64), "tp=1,pp=1,dp=64,mb=8,zero=3,gbs=512")
    msg = str(got.value)
    assert "one layer of 'gpt3-2.7b' (micro-batch 8, tp=1) needs 1.90 GB" in msg
    assert "activations 1.43 GB" in msg and "0.90 GB of gc200" in msg
    # a micro-batch of 1 fits (0.65 GB), and so does tp=2 with mb=4 (0.59 GB)
    estimate_training(gpt27, ipu_pod(64), "tp=1,pp=1,dp=64,mb=1,zero=3,gbs=512,recompute=full")
    estimate_training(gpt27, ipu_pod(64), "tp=2,sp=1,pp=1,dp=32,mb=4,zero=3,gbs=512,recompute=full")
    # a chip with HBM runs the same layer from HBM: no such check
    estimate_training(gpt27, dgx(A100, 8), "tp=1,dp=8,mb=8,gbs=512,recompute=full")


def test_groq_576_llama70b_is_latency_bound() -> None:
    cfg = InferenceConfig(tp=8, pp=72, batch=1, prompt_len=512, output_len=512,
                          precision="int8")
    est = estimate_inference(llama70(), groq(576), cfg)
    assert set(est.memory_per_chip_bytes) == {"sram"}
    assert est.bound == "latency"
    lat = est.breakdown["tensor_parallel_comm"] + est.breakdown["pipeline_hops"]
    assert lat > 3 * est.breakdown["memory"]
    assert 50 < est.tokens_per_s_per_user < 2000  # published: 185-300 tokens/s per user
    with pytest.raises(InputError, match="does not fit"):
        estimate_inference(llama70(), groq(576), cfg.model_copy(update={"pp": 8}))


def test_sn40l_spills_weights_to_hbm_and_gpu_is_bandwidth_bound() -> None:
    rdu = estimate_inference(llama70(), sn40l(8), "tp=8,batch=1,in=128,out=128")
    assert rdu.memory_per_chip_bytes["hbm"] > 0 and rdu.memory_per_chip_bytes["sram"] > 0
    gpu = estimate_inference(llama70(), dgx(A100, 4), "tp=4,batch=1,in=128,out=128")
    assert gpu.bound == "bandwidth"
    big = estimate_inference(llama70(), dgx(A100, 4), "tp=4,batch=64,in=128,out=128")
    assert big.tokens_per_s > 10 * gpu.tokens_per_s
    assert big.tokens_per_s_per_user < gpu.tokens_per_s_per_user
    assert gpu.ttft_s < gpu.request_latency_s


def test_inference_queues_when_kv_does_not_fit() -> None:
    cfg = InferenceConfig(tp=8, batch=512, prompt_len=2048, output_len=2048)
    with pytest.raises(InputError, match="does not fit"):
        estimate_inference(llama70(), dgx(A100, 8), cfg)
    est = estimate_inference(llama70(), dgx(A100, 8),
                             cfg.model_copy(update={"queue_when_full": True}))
    assert est.waves > 1


def test_a_gpu_serving_engine_does_not_give_the_whole_hbm_to_the_kv_cache() -> None:
    """vLLM and TensorRT-LLM take 90 % of a GPU and keep activations, CUDA graphs and buffers
    besides weights and KV cache: a batch that the raw HBM would hold is refused, naming the
    budget, and with queue_when_full runs in as many waves as the budget needs."""
    import math

    from accelkb.perf.calibration import load_calibration
    from accelkb.perf.memory import kv_cache_bytes, serving_capacity, stage_params

    model, system, cal = llama70(), dgx(A100, 4), load_calibration()
    weights = stage_params(model, 4, 1) * 2
    per_seq = kv_cache_bytes(model, 1, 256, 4)
    hbm = system.chip.memory_tiers[0].capacity_bytes
    assert serving_capacity(system.chip, cal) == pytest.approx(
        cal.serving_memory_fraction * hbm - cal.serving_reserve_bytes)
    raw = int((hbm - weights) // per_seq)
    budget = int((serving_capacity(system.chip, cal) - weights) // per_seq)
    assert 0 < budget < raw
    cfg = InferenceConfig(tp=4, batch=raw, prompt_len=128, output_len=128)
    with pytest.raises(InputError, match="a serving engine takes 90%"):
        estimate_inference(model, system, cfg)
    assert estimate_inference(model, system, cfg.model_copy(update={"batch": budget})).waves == 1
    queued = estimate_inference(model, system, cfg.model_copy(update={"queue_when_full": True}))
    assert queued.waves == math.ceil(raw / budget) > 1


def test_chips_without_a_gpu_serving_engine_keep_all_their_memory() -> None:
    """The serving budget describes vLLM / TensorRT-LLM on NVIDIA and AMD GPUs: a compiled
    chip (SN40L: weights across SRAM, HBM and DDR) and another vendor's kernel-launching chip
    keep every byte, so a layout that fills them past 90 % is still estimated."""
    from accelkb.perf.calibration import load_calibration
    from accelkb.perf.memory import serving_capacity, serving_engine_applies

    cal = load_calibration()
    rdu = sn40l().chip
    assert rdu.compiled and not serving_engine_applies(rdu)
    assert serving_capacity(rdu, cal) == sum(t.capacity_bytes for t in rdu.memory_tiers)
    other = A100.model_copy(update={"vendor": "intel", "name": "kernel-chip"})  # Gaudi-like
    assert not serving_engine_applies(other)
    assert serving_capacity(other, cal) == other.memory_tiers[0].capacity_bytes
    assert serving_engine_applies(A100.model_copy(update={"vendor": "nvidia"}))


def test_before_after_reports_both_and_deltas() -> None:
    r = compare_before_after(Candidate(name="selective recompute + SP",
                                       changes={"recompute": "selective", "sp": True}),
                             gpt3(), dgx(A100, 64), "tp=8,pp=8,mb=1,gbs=64,v=3,recompute=full")
    assert r.improves and r.speedup == pytest.approx(r.before.step_time_s / r.after.step_time_s)
    assert 1.15 < r.speedup < 1.5  # Korthikanti Table 5: 1.32x for GPT-3
    assert r.memory_per_tier_delta_bytes["hbm"] > 0
    assert r.energy_per_token_delta_j is not None and r.energy_per_token_delta_j < 0
    more = compare_before_after({"name": "2x chips", "chips": 128, "changes": {"dp": 2}},
                                gpt3(), dgx(A100, 64), "tp=8,pp=8,dp=1,mb=1,gbs=64,recompute=full")
    assert more.tokens_per_s_delta > 0
    with pytest.raises(InputError, match="candidate 'huge'"):
        compare_before_after({"name": "huge", "changes": {"mb": 64}}, gpt3(), dgx(A100, 64),
                             "tp=8,pp=8,mb=1,gbs=64,recompute=full")


def _files(tmp_path: Path) -> tuple[str, str]:
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"layers": 24, "hidden": 2048, "heads": 16, "kv_heads": 16,
                                 "ffn_hidden": 8192, "vocab": 50257, "seq_len": 2048,
                                 "gated_mlp": False}))
    system = tmp_path / "s.json"
    system.write_text(dgx(A100, 64).model_dump_json())
    return str(model), str(system)


def test_cli_training_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m, s = _files(tmp_path)
    rc = main(["estimate", "training", "--model", m, "--system", s, "--chips", "32",
               "--parallel", "tp=2,pp=2,dp=8,mb=1,gbs=64,recompute=full", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("step_time_s", "tokens_per_s", "model_flops_per_s_per_chip", "mfu",
                "memory_per_chip_bytes", "breakdown"):
        assert key in out
    assert out["chips"] == 32


def test_cli_inference_human(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m, s = _files(tmp_path)
    assert main(["estimate", "inference", "--model", m, "--system", s,
                 "--parallel", "tp=2,batch=4"]) == 0
    out = capsys.readouterr().out
    assert "decode_s_per_token" in out and "ttft_s" in out
    assert main(["estimate", "inference", "--model", m, "--system", s, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"decode_s_per_token", "ttft_s", "tokens_per_s"} <= set(data)


@pytest.mark.parametrize(("args", "message"), [
    (["--parallel", "tp=3"], "expected tp to divide"),
    (["--parallel", "gbs=-4"], "global_batch"),
    (["--chips", "0"], "positive"),
])
def test_cli_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               args: list[str], message: str) -> None:
    m, s = _files(tmp_path)
    rc = main(["estimate", "training", "--model", m, "--system", s, *args])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_cli_layout_that_does_not_fit_exits_1(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # a well-formed layout the memory cannot hold is a negative answer, not bad input
    m, s = _files(tmp_path)
    rc = main(["estimate", "training", "--model", m, "--system", s,
               "--parallel", "tp=1,pp=1,dp=1,mb=64,gbs=64"])
    err = capsys.readouterr().err
    assert rc == 1 and "infeasible: configuration does not fit" in err and "Traceback" not in err


def test_cli_unknown_model_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, s = _files(tmp_path)
    assert main(["estimate", "training", "--model", str(tmp_path / "nope.json"),
                 "--system", s]) == 2
    assert "expected a readable JSON model file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"layers": 2}))
    assert main(["estimate", "training", "--model", str(bad), "--system", s]) == 2
    assert "invalid model file" in capsys.readouterr().err


def test_training_config_is_strict() -> None:
    with pytest.raises(ValueError):
        TrainingConfig.model_validate({"tp": 1, "bogus": 2})


@given(tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       mb=st.sampled_from([1, 2, 4]), rc=st.sampled_from(["none", "selective", "full"]),
       zero=st.sampled_from([0, 1, 2, 3]), sp=st.booleans())
@settings(max_examples=40, deadline=None)
def test_training_estimate_is_consistent(tp: int, pp: int, mb: int, rc: str, zero: int,
                                         sp: bool) -> None:
    dp = 64 // (tp * pp)
    cfg = TrainingConfig(tp=tp, pp=pp, dp=dp, micro_batch=mb, global_batch=dp * mb * 8,
                         recompute=rc, zero=zero, sequence_parallel=sp)
    est = estimate_training(small(), dgx(A100, 64), cfg)
    assert sum(est.breakdown.values()) == pytest.approx(est.step_time_s)
    assert all(v >= 0 for v in est.breakdown.values())
    assert 0 < est.mfu <= est.hfu < 1
    assert est.tokens_per_s == pytest.approx(cfg.global_batch * 2048 / est.step_time_s)
    assert est.memory_per_chip_bytes["hbm"] == pytest.approx(
        sum(est.memory_breakdown_bytes.values()))
