"""Fitting the calibration constants on the validation files (grid search, reproducible).

Each fit minimises the median absolute relative error over the files named in its docstring;
the result and the errors go into ``data/calibration.json`` by hand, with the command that
produced them (``python bench/perf_validation.py --fit``). Grids are coarse on purpose: the
constants are physical fractions and latencies, not knobs to chase the last percent.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

from accelkb.perf.calibration import Calibration
from accelkb.perf.collectives import collective_time
from accelkb.perf.specs import NetworkLevelSpec
from accelkb.perf.validation.others import (
    ENGINE_MEMORY,
    SN40L_FIT_MODELS,
    check_gpu_inference,
    check_groq_llmperf,
    check_power,
    check_sn40l_inference,
    check_vendor_claims,
    nccl_points,
)
from accelkb.perf.validation.residuals import THIRD_PARTY
from accelkb.perf.validation.training import (
    SystemResolver,
    check_korthikanti_time,
    check_megatron,
    check_vtrain,
)


@dataclass
class Fit:
    """Fitted values, the objective reached and per-file (median, max) errors."""

    values: dict[str, object]
    objective: float
    errors: dict[str, tuple[float, float]]


def fit_collectives(systems: SystemResolver, cal: Calibration) -> Fit:
    """On nccl_allreduce_single_node_a100_v100.csv (A100 rows, 2-8 GPUs, every 4th size),
    against the knowledge base's DGX A100 node: first link_efficiency under NCCL's own cost model
    (:mod:`accelkb.perf.execution.nccl`, its latencies as NCCL states them), then, at that efficiency,
    collective_step_latency_s of the generic alpha-beta model that chips without a run-time
    collective library use (the same node with its levels' library removed), fitted jointly with
    an efficiency of its own grid."""
    pts = nccl_points(4)
    levels = systems("dgx-a100", 8).levels
    generic = [lv.model_copy(update={"library": None}) for lv in levels]

    def errors(c: Calibration, lv: list[NetworkLevelSpec]) -> list[float]:
        return [abs(collective_time("all_reduce", float(s), n, lv, c) / t - 1) for n, s, t in pts]

    effs = (0.6, 0.65, 0.7, 0.72, 0.74, 0.76, 0.78, 0.8, 0.85)
    eff = min(effs, key=lambda e: statistics.median(
        errors(cal.model_copy(update={"link_efficiency": e}), levels)))
    c = cal.model_copy(update={"link_efficiency": eff})
    nccl_errs = errors(c, levels)
    lats = (0.0, 1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 7e-6, 8e-6, 10e-6, 12e-6, 14e-6, 16e-6, 20e-6)
    # the generic latency is fitted jointly with an efficiency of its own, as before NCCL's
    # model existed (the NCCL file starts at 1 MB and cannot separate the two alone), and then
    # applied with the link_efficiency fitted above
    _, lat = min(itertools.product(effs, lats), key=lambda el: statistics.median(errors(
        c.model_copy(update={"link_efficiency": el[0], "collective_step_latency_s": el[1]}),
        generic)))
    generic_errs = errors(c.model_copy(update={"collective_step_latency_s": lat}), generic)
    return Fit({"link_efficiency": eff, "collective_step_latency_s": lat},
               statistics.median(nccl_errs),
               {"nccl cost model": (statistics.median(nccl_errs), max(nccl_errs)),
                "generic alpha-beta": (statistics.median(generic_errs), max(generic_errs))})


def fit_graphcore(systems: SystemResolver, cal: Calibration) -> Fit:
    """Graphcore's own 16-bit matmul efficiency (``vendor_matmul_efficiency['graphcore']``) and
    per-operation cost (``vendor_compiled_op_overhead_s['graphcore']``), jointly, on the
    BERT-Large and BERT-Base pre-training rows of graphcore_bow_training_throughput.csv
    (Graphcore's Bow Pod tables: two layer sizes, so the fixed cost is told apart from the
    efficiency), among the pairs that reproduce every published IPU-POD / DGX A100 ordering
    (which thereby constrain the fit); its SQuAD fine-tuning, ViT and ResNet-50 rows and the
    magnitudes of the MLPerf IPU/DGX ratios are held out. Unconstrained, the fit would take
    6 us (fitted median 7.0 %), losing the MLPerf v1.1 ResNet-50 IPU-POD16 / DGX A100 ordering
    (measured 0.972) and doing worse on the held-out Bow rows (median 18 % against 9 %). The
    ratios use each submission's samples to train from its logs (:mod:`.mlperf_samples`)."""
    from accelkb.perf.validation.graphcore import check_graphcore_throughput
    from accelkb.perf.validation.others import check_mlperf_bert, check_mlperf_resnet

    def fitted(label: str) -> bool:
        return "bert" in label and "pretraining" in label

    best: Fit | None = None
    for eff, op in itertools.product((0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.78),
                                     (1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 8e-6, 12e-6)):
        c = cal.model_copy(update={
            "vendor_matmul_efficiency": {**cal.vendor_matmul_efficiency, "graphcore": eff},
            "vendor_compiled_op_overhead_s": {**cal.vendor_compiled_op_overhead_s,
                                              "graphcore": op}})
        rows = check_graphcore_throughput(systems, c).rows
        fit = [abs(r.error) for r in rows if fitted(r.label)]
        med = statistics.median(fit)
        pairs = [r for f in (check_mlperf_bert(systems, c), check_mlperf_resnet(systems, c))
                 for r in f.rows]
        if any((r.measured > 1) != (r.predicted > 1) for r in pairs):
            continue  # a published ordering lost
        if best is None or med < best.objective:
            held = [abs(r.error) for r in rows if not fitted(r.label)]
            ratios = [abs(r.error) for r in pairs]
            best = Fit({"vendor_matmul_efficiency": {**cal.vendor_matmul_efficiency,
                                                     "graphcore": eff},
                        "vendor_compiled_op_overhead_s": {
                            **cal.vendor_compiled_op_overhead_s, "graphcore": op}}, med,
                       {"Bow BERT-Large and BERT-Base pre-training (fitted)": (med, max(fit)),
                        "Bow SQuAD, ViT, ResNet-50 (held out)": (
                            statistics.median(held), max(held)),
                        "MLPerf IPU/DGX ratios (orderings constrain, magnitudes held out)": (
                            statistics.median(ratios), max(ratios))})
    assert best is not None
    return best


def fit_compute(systems: SystemResolver, cal: Calibration, single_rows: int = 120) -> Fit:
    """matmul_efficiency, memory_efficiency and kernel_overhead_s on the training files:
    megatron_sc21 Table 1, korthikanti Table 5, vTrain multi-node and (a spread sample of)
    vTrain single-node; objective = sum of the four medians."""
    best: Fit | None = None
    for me, mem, ko in itertools.product((0.66, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82),
                                         (0.7, 0.8, 0.9),
                                         (10e-6, 20e-6, 30e-6, 40e-6, 50e-6, 55e-6, 60e-6,
                                          65e-6, 70e-6, 80e-6)):
        c = cal.model_copy(update={"matmul_efficiency": me, "memory_efficiency": mem,
                                   "kernel_overhead_s": ko})
        files = [check_megatron(systems, c), check_korthikanti_time(systems, c)[0],
                 check_vtrain(systems, c, True), check_vtrain(systems, c, False, single_rows)]
        obj = sum(f.median_error for f in files)
        if best is None or obj < best.objective:
            best = Fit({"matmul_efficiency": me, "memory_efficiency": mem,
                        "kernel_overhead_s": ko}, obj,
                       {f.file: (f.median_error, f.max_error) for f in files})
    assert best is not None
    return best


SERVING_FIT_MODEL = "Llama-2-70b-hf"


def fit_serving_reserve(systems: SystemResolver, cal: Calibration) -> Fit:
    """serving_reserve_bytes on the vLLM and TensorRT-LLM Llama-2-70B rows of
    llm_inference_bench_argonne_70b.csv (NVIDIA): the only rows whose KV cache the budget
    limits are on 4 A100 40 GB, where a 70B model leaves a few GB. The objective is the mean
    |ln(measured / predicted)|, not the median: the median row is not memory-bound and would
    not see the constant. Held out: the Llama-3-70B and Qwen2-72B rows (other weights, so
    another budget). Not used: the DeepSpeed-MII rows, whose engine documents its own budget
    (:data:`accelkb.perf.validation.others.ENGINE_MEMORY`). serving_memory_fraction is not
    fitted (the engines' default, 0.9)."""
    best: Fit | None = None
    for gb in [0.25 * i for i in range(17)]:
        c = cal.model_copy(update={"serving_reserve_bytes": gb * 1e9})
        f = check_gpu_inference(systems, c)
        rows = [r for r in f.rows if not any(e in r.label for e in ENGINE_MEMORY)]
        fit = [r for r in rows if SERVING_FIT_MODEL in r.label]
        test = [r for r in rows if SERVING_FIT_MODEL not in r.label]
        obj = statistics.mean(abs(math.log(r.measured / r.predicted)) for r in fit)
        if best is None or obj < best.objective - 1e-12:
            best = Fit({"serving_reserve_bytes": gb * 1e9}, obj, {
                "fit rows": (statistics.median(abs(r.error) for r in fit),
                             max(abs(r.error) for r in fit)),
                "held-out rows": (statistics.median(abs(r.error) for r in test),
                                  max(abs(r.error) for r in test))})
    assert best is not None
    return best


def fit_inference(systems: SystemResolver, cal: Calibration) -> Fit:
    """graph_op_overhead_s on llm_inference_bench_argonne_70b.csv (NVIDIA rows), with the
    other constants as fitted before."""
    best: Fit | None = None
    for ov in (0.0, 1e-6, 2e-6, 4e-6, 6e-6, 8e-6, 10e-6, 12e-6, 15e-6, 20e-6):
        c = cal.model_copy(update={"graph_op_overhead_s": ov})
        f = check_gpu_inference(systems, c)
        if best is None or f.median_error < best.objective:
            best = Fit({"graph_op_overhead_s": ov}, f.median_error,
                       {f.file: (f.median_error, f.max_error)})
    assert best is not None
    return best


def fit_power(systems: SystemResolver, cal: Calibration) -> Fit:
    """idle_power_fraction on llm_inference_bench_argonne_power.csv (NVIDIA rows)."""
    best: Fit | None = None
    for idle in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
        c = cal.model_copy(update={"idle_power_fraction": idle})
        f = check_power(systems, c)
        if best is None or f.median_error < best.objective:
            best = Fit({"idle_power_fraction": idle}, f.median_error,
                       {f.file: (f.median_error, f.max_error)})
    assert best is not None
    return best


def fit_dataflow(systems: SystemResolver, cal: Calibration) -> Fit:
    """dataflow_layer_s and dataflow_section_s on the Mistral-7B and Llama-3-8B rows of
    llm_inference_bench_argonne_sn40l.csv (8 SN40L sockets); the Llama-3-70B and Llama-2-7B
    rows are held out and reported as the fit's test error. dataflow_memory_efficiency is not
    fitted: it is SambaNova's published figure."""
    held_out = tuple(m for m in ("meta-llama/Meta-Llama-3-70B", "meta-llama/Llama-2-7b-hf")
                     if m not in SN40L_FIT_MODELS)
    best: Fit | None = None
    for lay, sec in itertools.product((0.0, 2e-6, 4e-6, 6e-6, 8e-6, 10e-6, 12e-6),
                                      (0.0, 1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 8e-6)):
        c = cal.model_copy(update={"dataflow_layer_s": lay, "dataflow_section_s": sec})
        f = check_sn40l_inference(systems, c, SN40L_FIT_MODELS)
        if best is None or f.median_error < best.objective:
            test = check_sn40l_inference(systems, c, held_out)
            best = Fit({"dataflow_layer_s": lay, "dataflow_section_s": sec}, f.median_error,
                       {"fit rows": (f.median_error, f.max_error),
                        "held-out rows": (test.median_error, test.max_error)})
    assert best is not None
    return best


def fit_deterministic(systems: SystemResolver, cal: Calibration) -> Fit:
    """deterministic_feed_efficiency and deterministic_op_latency_s, jointly, on the two
    independent measurements of GroqCloud decode at two model sizes: LLMPerf's median Llama-2
    70B decode time (llmperf_groq_llama2_70b.csv) and Artificial Analysis' Llama-3.1 8B rate
    (llm_inference_vendor_claims.csv, quoted by SambaNova's blog). The objective is the larger
    of the two |errors|. Held out: Artificial Analysis' 70B rates (Llama-2, 3.1 and 3.3) and the Groq
    claims."""
    best: Fit | None = None
    for eff, op in itertools.product(
            (0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3, 0.5),
            tuple(k * 0.5e-6 for k in range(0, 13))):
        c = cal.model_copy(update={"deterministic_feed_efficiency": eff,
                                   "deterministic_op_latency_s": op})
        llmperf = check_groq_llmperf(systems, c)
        claims = check_vendor_claims(systems, c)
        small = [r for r in claims.rows if r.label.startswith("Groq") and "8B" in r.label]
        fitted = [abs(r.error) for r in (*llmperf.rows, *small)]
        obj = max(fitted)
        if best is None or obj < best.objective:
            held = [r for r in claims.rows if r.label.startswith("Groq") and r not in small]
            measured = [abs(r.error) for r in held if THIRD_PARTY in r.label]
            claimed = [abs(r.error) for r in held if THIRD_PARTY not in r.label]
            best = Fit({"deterministic_feed_efficiency": eff, "deterministic_op_latency_s": op},
                       obj, {"LLMPerf Llama-2 70B and Artificial Analysis Llama-3.1 8B (fitted)":
                             (statistics.median(fitted), max(fitted)),
                             "Artificial Analysis 70B rows (held out)":
                             (statistics.median(measured), max(measured)),
                             "Groq claims (held out)": (statistics.median(claimed), max(claimed))})
    assert best is not None
    return best
