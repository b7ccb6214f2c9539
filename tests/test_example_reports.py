"""The three questions accelkb exists for: regenerated, structure and key numbers checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.advice import Advice
from accelkb.advise import advise
from accelkb.ontology.kb import KnowledgeBase

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QUESTIONS = {q["id"]: q for q in json.loads((EXAMPLES / "questions.json").read_text("utf-8"))}


def _run(kb: KnowledgeBase, qid: str) -> Advice:
    q = QUESTIONS[qid]
    return advise(q["system"], q["workload"], goal=q["goal"], compare=q["compare"], kb=kb,
                  question=q["question"])


@pytest.fixture(scope="module")
def q1(kb: KnowledgeBase) -> Advice:
    return _run(kb, "q1-graphcore-ipu-pod-training")


@pytest.fixture(scope="module")
def q2(kb: KnowledgeBase) -> Advice:
    return _run(kb, "q2-sambanova-rda-llm-training")


@pytest.fixture(scope="module")
def q3(kb: KnowledgeBase) -> Advice:
    return _run(kb, "q3-groq-llama2-70b-strong-scaling")


def test_shipped_reports_exist_and_parse() -> None:
    for qid, q in QUESTIONS.items():
        for ext in ("md", "html", "json"):
            assert (EXAMPLES / "reports" / f"{qid}.{ext}").is_file(), f"{qid}.{ext} missing"
        a = Advice.model_validate_json((EXAMPLES / "reports" / f"{qid}.json").read_text("utf-8"))
        assert a.question == q["question"] and a.system == q["system"]


def test_q1_ipu_pod_training(q1: Advice) -> None:
    assert q1.chips == 64 and q1.phase == "training"
    # Model state of a 13B model cannot live in 64 x 900 MB of SRAM: streaming memory is used.
    assert q1.baseline.memory_per_chip_bytes.get("streaming", 0) > 0
    assert any(f.bottleneck == "memory-capacity" for f in q1.findings)
    graphcore = {"replicated-tensor-sharding", "offload-streaming-memory", "phased-execution"}
    assert graphcore & {r.optimization for r in q1.recommendations}
    assert any(r.status == "recommended" and r.speedup and r.speedup > 1 for r in q1.recommendations)
    systems = {c.system for c in q1.comparisons}
    assert {"ipu-pod16", "dgx-a100"} <= systems
    assert [p.chips for p in q1.scaling if p.time_s][:1] <= [16]


def test_q2_sambanova_training(q2: Advice) -> None:
    assert q2.chips == 16
    fp8 = next(w for w in q2.what_ifs if "FP8" in w.change)
    assert fp8.speedup > 1.2  # compute-bound LLM training: an FP8 datapath is the big lever
    assert any(f.property == "bandwidthBytesPerSecondPerDirection" and f.confidence == "low"
               for f in q2.facts), "the assumed socket network is shown with low confidence"
    assert any(s.kind == "ModellingAssumption" for s in q2.sources)
    ddr = [r for r in q2.recommendations if r.optimization == "offload-ddr-tier"]
    assert ddr, "the DDR tier is a SambaNova-specific candidate for memory capacity"


def test_q3_groq_strong_scaling(q3: Advice) -> None:
    assert q3.chips == 576 and q3.baseline.configuration["precision"] == "int8"
    assert q3.baseline.bound == "latency"
    fits = [p.chips for p in q3.scaling if p.time_s is not None]
    misses = [p.chips for p in q3.scaling if p.time_s is None]
    # 70B INT8 weights (~69 GB) do not fit a few racks of 230 MB chips; 576 chips do.
    assert 576 in fits and misses and max(misses) < min(fits)
    (sched,) = q3.schedules
    assert sched.status == "OPTIMAL" and sched.makespan_steps == sched.lower_bound_steps
    assert sched.dynamic_makespan_steps and sched.dynamic_makespan_steps > sched.makespan_steps
    assert "LLMPerf" in " ".join(q3.measured)
