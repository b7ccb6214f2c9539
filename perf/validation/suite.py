"""Every validation check in one run: the shipped CSV files, then the knowledge base's results.

``python bench/perf_validation.py`` prints what :func:`run_all` returns; the residuals behind
every interval (:mod:`.residuals`) are computed from it.
"""

from __future__ import annotations

from accelkb.perf.calibration import Calibration
from accelkb.perf.validation.google import check_tpu_mlperf
from accelkb.perf.validation.graphcore import check_graphcore_throughput
from accelkb.perf.validation.others import (
    check_gpu_inference,
    check_groq_llmperf,
    check_mlperf_bert,
    check_mlperf_resnet,
    check_nccl,
    check_power,
    check_sn40l_inference,
    check_vendor_claims,
)
from accelkb.perf.validation.published import check_stored_results
from accelkb.perf.validation.training import (
    FileResult,
    SystemResolver,
    cached,
    check_korthikanti_layer,
    check_korthikanti_memory,
    check_korthikanti_time,
    check_megatron,
    check_mosaic,
    check_vtrain,
)


def run_all(systems: SystemResolver, cal: Calibration, quick: bool = False) -> list[FileResult]:
    """Every check, in file order, then the knowledge base's stored results
    (:mod:`.published`). ``quick`` samples the big files (vTrain single, NCCL)."""
    systems = cached(systems)
    out = [check_megatron(systems, cal), *check_korthikanti_time(systems, cal),
           check_korthikanti_layer(systems, cal), *check_korthikanti_memory(),
           check_vtrain(systems, cal, multi=True),
           check_vtrain(systems, cal, multi=False, limit=144 if quick else None),
           check_mosaic(systems, cal), check_nccl(systems, cal, step=64 if quick else 4),
           check_mlperf_bert(systems, cal), check_mlperf_resnet(systems, cal),
           check_graphcore_throughput(systems, cal), check_tpu_mlperf(systems, cal),
           check_gpu_inference(systems, cal), check_gpu_inference(systems, cal, "amd"),
           check_sn40l_inference(systems, cal),
           check_groq_llmperf(systems, cal),
           check_power(systems, cal), check_vendor_claims(systems, cal),
           *check_stored_results(systems, cal)]
    return out
