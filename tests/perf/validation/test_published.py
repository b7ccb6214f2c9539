"""The benchmark results stored in the knowledge base are validated too (issue 28: each new
system's measured rows appear in the perf bench; issue 25: rows for every vendor)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from accelkb.errors import InputError
from accelkb.knowledge import KnowledgeBase
from accelkb.perf.calibration import load_calibration
from accelkb.perf.from_kb import model_spec, system_spec, using
from accelkb.perf.inference import InferenceConfig, estimate
from accelkb.perf.validation import residuals
from accelkb.perf.validation.published import (
    FILE,
    Skip,
    check_stored_results,
    predict,
    stored_results,
)

CAL = load_calibration()


@pytest.fixture(scope="module")
def checked(kb: KnowledgeBase) -> list:  # type: ignore[type-arg]
    with using(kb):
        return check_stored_results(system_spec, CAL, kb)


def _rows(checked: list) -> dict[str, tuple[str, float, float]]:  # type: ignore[type-arg]
    return {r.label.split(" ")[0]: (fr.tag, r.measured, r.predicted)
            for fr in checked for r in fr.rows}


def test_every_vendor_of_the_new_systems_has_validated_rows(checked: list) -> None:  # type: ignore[type-arg]
    """AMD, Google, AWS, Intel and Cerebras have no CSV file: their rows come from the
    knowledge base, grouped by vendor, regime and kind, and the residuals take the tag."""
    vendors = {fr.tag[0] for fr in checked if fr.rows}
    assert {"amd", "google", "aws", "intel", "cerebras", "nvidia"} <= vendors
    rows = _rows(checked)
    for name in ("amd-mlperf-inf-v4-1-mi300x-llama2-70b-offline",
                 "nv-mlperf-inf-v41-b200x1-llama2-70b-offline",
                 "nv-mlperf-inf-v41-gh200-llama2-70b-offline",
                 "nv-mlperf-inf-v40-azure-h100-nvl-llama2-70b-offline",
                 "aws-trn2-llama3-3-70b-bs1-ttft", "cerebras-aa-llama3-1-8b-2024-08",
                 "maxtext-tiering-v6e-256-llama2-70b", "intel-gaudi3-llama2-70b-fp8-2hpu-128x128"):
        assert name in rows, name
        assert rows[name][2] > 0
    tagged = residuals.residuals(checked)
    assert {(r.vendor, r.kind) for r in tagged} >= {("amd", "measured"), ("aws", "claims"),
                                                    ("cerebras", "measured")}
    # a rate that the model under-predicts means a longer modelled time: positive ln(meas/pred)
    amd = next(r for r in tagged if r.vendor == "amd")
    assert amd.regime == "inference"


def test_no_measurement_is_counted_twice_and_every_skip_says_why(checked: list) -> None:  # type: ignore[type-arg]
    """Rows whose source ships as a CSV file (Megatron, Korthikanti, the MLPerf ratios, the
    Groq and SambaNova claims) are validated there, not again here; Server rows and LoRA runs
    are skipped with the mechanism the model lacks."""
    skipped = {line.split(": ", 1)[0]: line.split(": ", 1)[1]
               for fr in checked for line in fr.skipped}
    rows = _rows(checked)
    assert not {n for n in rows if n.startswith(("megatron-", "korthikanti", "groq-"))}
    assert "shipped CSV" in skipped["megatron-sc21-table1-gpt-1t"]
    assert "latency bound" in skipped["amd-mlperf-inf-v4-1-mi300x-llama2-70b-server"]
    assert "LoRA" in skipped["nv-mlperf-train-v50-gb200-nvl72-llama2-lora"]
    assert all(reason.strip() for reason in skipped.values())
    assert checked[-1].file == FILE and not checked[-1].rows


def test_a_result_in_a_users_turtle_is_validated_like_the_bundled_ones(tmp_path: Path) -> None:
    """Users extend the knowledge with their own results: the check reads them unchanged."""
    ttl = tmp_path / "mine.ttl"
    ttl.write_text("""
@prefix ak: <https://w3id.org/accelkb/schema#> .
@prefix kb: <https://w3id.org/accelkb/data/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix src: <https://w3id.org/accelkb/source/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
kb:my-h100-nvl-run a ak:BenchmarkResult ;
    rdfs:label "my own Offline run" ;
    ak:measuredOn kb:nv-h100-nvl-pair ; ak:workload kb:llama2-70b-inference ;
    ak:metric ak:AggregateTokensPerSecond ; ak:isVendorClaim false ; ak:chipsUsed 2 ;
    ak:measuredTokensPerSecond 3000.0 ;
    dcterms:source src:nv-mlperf-inf-v40-results ; ak:confidence ak:Medium ;
    ak:locator "my notebook" .
""", encoding="utf-8")
    mine = KnowledgeBase([ttl])
    found = {r.name: r for r in stored_results(mine)}
    assert "my-h100-nvl-run" in found
    with using(mine):
        value = predict(found["my-h100-nvl-run"], system_spec, CAL)
    assert value > 0


def test_the_cerebras_request_shape_assumption_moves_the_rate_under_one_per_cent(
        kb: KnowledgeBase) -> None:
    """The protocol file states 1,000/500 tokens for the Cerebras rows, which record no shape,
    and claims that any prompt up to a few thousand tokens moves the per-user rate by under
    1 %: checked here on the 70B row at a 4,000-token prompt."""
    with using(kb):
        spec = system_spec("cs-3-cluster-4", 4)
        m = model_spec("llama3.1-70b")
        short = estimate(m, spec, InferenceConfig(tp=1, pp=4, prompt_len=1000, output_len=500), CAL)
        long = estimate(m, spec, InferenceConfig(tp=1, pp=4, prompt_len=4000, output_len=500), CAL)
    assert abs(long.tokens_per_s_per_user / short.tokens_per_s_per_user - 1) < 0.01


def test_a_result_without_the_tokens_it_trained_is_skipped_not_guessed(
        kb: KnowledgeBase) -> None:
    res = next(r for r in stored_results(kb)
               if r.name == "mlperf-training-v3-1-google-tpu-v5e-4096-gpt3")
    with using(kb), pytest.raises(Skip, match="tokens"):
        predict(dataclasses.replace(res, tokens=None), system_spec, CAL)


def test_a_stated_precision_or_layout_is_the_protocol_not_a_fit(kb: KnowledgeBase) -> None:
    """Google's v3.1 GPT-3 run trained with INT8 (AQT) matmuls and PaLM ran 12-way model
    parallel: the protocol file says so with its source, and the row follows it."""
    from accelkb.perf.validation.published import protocols

    found = {r.name: r for r in stored_results(kb)}
    v5e = found["mlperf-training-v3-1-google-tpu-v5e-4096-gpt3"]
    assert protocols()["results"][v5e.name]["precision"] == "int8"
    with using(kb):
        as_stated = predict(v5e, system_spec, CAL)
        as_bf16 = predict(dataclasses.replace(v5e, iri=v5e.iri + "-bf16"), system_spec, CAL)
    assert as_stated < as_bf16  # INT8 matmuls run at the chip's 8-bit peak
    palm = found["palm-540b-tpu-v4-one-pod"]
    assert protocols()["results"][palm.name]["layout"] == {"tp": 12}
    assert "source" in protocols()["results"][palm.name]


def test_a_time_to_train_row_is_predicted_at_the_layout_and_precision_its_configuration_states(
        kb: KnowledgeBase) -> None:
    """NVIDIA's MLPerf Training v4.1 GPT-3 run on 64 B200s: FP8, tp 4, pp 8, interleave 6,
    micro-batch 2 (its launch configuration). predict() uses them, where the model's own best
    layout would be faster."""
    from accelkb.perf.validation.published import _best_training, protocols

    note = protocols()["results"]["nv-mlperf-train-v41-b200-n8-gpt3"]
    (res,) = [r for r in stored_results(kb) if r.name == "nv-mlperf-train-v41-b200-n8-gpt3"]
    with using(kb):
        got = predict(res, system_spec, CAL)
        model, system = model_spec("gpt3-175b"), system_spec("dgx-b200-nyx-n8", 64)
        stated = _best_training(model, system, 64, 2048, "fp8", CAL, fsdp_only=False,
                                stated=note["layout"])
        free = _best_training(model, system, 64, 2048, "fp8", CAL, fsdp_only=False)
    assert (stated.config.tp, stated.config.pp, stated.config.interleave) == (4, 8, 6)
    assert got == pytest.approx(float(res.tokens) / stated.tokens_per_s)
    assert got > float(res.tokens) / free.tokens_per_s  # the layout is not the model's choice


def test_an_offline_row_is_predicted_at_its_stated_tensor_parallel_degree_and_batch(
        kb: KnowledgeBase) -> None:
    """NVIDIA's 8 x H100 NVL MLPerf Inference v4.0 Offline run: tensor parallel 2 inside each
    bridged pair, 1,300 sequences in flight per engine (its configuration file)."""
    from accelkb.perf.validation.published import _best_throughput, as_submitted, protocols

    name = "nv-mlperf-inf-v40-h100-nvl-x8-llama2-70b-offline"
    assert protocols()["results"][name]["layout"] == {"tp": 2, "batch": 1300}
    (res,) = [r for r in stored_results(kb) if r.name == name]
    with using(kb):
        got = predict(res, system_spec, CAL)
        model, system = model_spec("llama2-70b"), system_spec("h100-nvl-x8", 8)
        cfg = InferenceConfig(tp=2, batch=1300, prompt_len=222, output_len=294, precision="fp8")
        one = estimate(model, system, cfg, as_submitted(CAL))  # the batch ran, so it fit
        free = _best_throughput(model, system, 8, 222, 294, "fp8", CAL)
    assert got == pytest.approx(4 * one.end_to_end_tokens_per_s)
    # without the stated batch, the model's own search over the same memory finds a faster one
    assert got < free
    # a tuned submission is not held to a serving engine's default budget, which 1,300
    # sequences exceed (0.9 x 100.9 GB - 1.75 GB)
    with using(kb), pytest.raises(InputError, match="serving engine"):
        estimate(model, system, cfg, CAL)
