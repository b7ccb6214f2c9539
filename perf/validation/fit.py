"""Fitting the calibration constants on the validation files (grid search, reproducible).

Each fit minimises the median absolute relative error over the files named in its docstring;
the result and the errors go into ``data/calibration.json`` by hand, with the command that
produced them (``python bench/perf_validation.py --fit``). Grids are coarse on purpose: the
constants are physical fractions and latencies, not knobs to chase the last percent.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from accelkb.perf.calibration import Calibration
from accelkb.perf.collectives import collective_time
from accelkb.perf.validation.others import check_gpu_inference, check_power, nccl_points
from accelkb.perf.validation.training import (
    SystemResolver,
    check_korthikanti_time,
    check_megatron,
    check_vtrain,
)


@dataclass
class Fit:
    """Fitted values, the objective reached and per-file (median, max) errors."""

    values: dict[str, float]
    objective: float
    errors: dict[str, tuple[float, float]]


def fit_collectives(systems: SystemResolver, cal: Calibration) -> Fit:
    """link_efficiency and collective_step_latency_s on nccl_allreduce_single_node_a100_v100.csv
    (A100 rows, 2-8 GPUs, every 4th size), against the knowledge base's DGX A100 node."""
    pts = nccl_points(4)
    levels = systems("dgx-a100", 8).levels
    best: Fit | None = None
    for eff, lat in itertools.product((0.6, 0.65, 0.7, 0.72, 0.74, 0.76, 0.78, 0.8, 0.85),
                                      (0.0, 1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 7e-6, 8e-6,
                                       10e-6, 12e-6, 14e-6, 16e-6, 20e-6)):
        c = cal.model_copy(update={"link_efficiency": eff, "collective_step_latency_s": lat})
        errs = [abs(collective_time("all_reduce", float(s), n, levels, c) / t - 1)
                for n, s, t in pts]
        med = statistics.median(errs)
        if best is None or med < best.objective:
            best = Fit({"link_efficiency": eff, "collective_step_latency_s": lat}, med,
                       {"nccl": (med, max(errs))})
    assert best is not None
    return best


def fit_compute(systems: SystemResolver, cal: Calibration, single_rows: int = 120) -> Fit:
    """matmul_efficiency, memory_efficiency and kernel_overhead_s on the training files:
    megatron_sc21 Table 1, korthikanti Table 5, vTrain multi-node and (a spread sample of)
    vTrain single-node; objective = sum of the four medians."""
    best: Fit | None = None
    for me, mem, ko in itertools.product((0.66, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82),
                                         (0.7, 0.8, 0.9),
                                         (5e-6, 10e-6, 15e-6, 20e-6, 25e-6, 30e-6)):
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


def fit_inference(systems: SystemResolver, cal: Calibration) -> Fit:
    """graph_op_overhead_s on llm_inference_bench_argonne_70b.csv (NVIDIA rows), with the
    other constants as fitted before."""
    best: Fit | None = None
    for ov in (0.0, 1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 8e-6, 10e-6, 15e-6):
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
