"""Calibration constants: data with a documented fit, loaded from ``perf/data/calibration.json``.

Examples
--------
>>> cal = load_calibration()
>>> 0 < cal.matmul_efficiency <= 1
True
>>> cal.model_copy(update={"matmul_efficiency": 0.5}).matmul_efficiency
0.5
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field


class Calibration(BaseModel):
    """The few global constants of the model (see calibration.json for each fit and error)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    matmul_efficiency: float = Field(gt=0, le=1, description="achieved fraction of dense peak "
                                     "for large matrix multiplies")
    vendor_matmul_efficiency: dict[str, float] = Field(
        default_factory=dict, description="16-bit matmul efficiency fitted on one vendor's own "
        "rows, used for that vendor's chips instead of matmul_efficiency (vendor short name -> "
        "fraction of dense peak)")
    vendor_compiled_op_overhead_s: dict[str, float] = Field(
        default_factory=dict, description="per-operation cost of a compiled program fitted on "
        "one vendor's own rows, used for that vendor's compiled chips instead of "
        "compiled_op_overhead_s (vendor short name -> s)")
    matmul_reference_fraction: float = Field(
        gt=0, le=1, description="measured maximum achievable matmul FLOP/s over "
        "the dense peak of the chip matmul_efficiency was fitted on (A100 SXM, BF16): a chip "
        "with its own measurement gets matmul_efficiency x its fraction / this one")
    low_precision_matmul_efficiency: float = Field(
        default=0.78, gt=0, le=1, description="achieved fraction of the 8-bit (and 4-bit) dense "
        "peak for large matrix multiplies (FP8, INT8, FP4)")
    memory_efficiency: float = Field(gt=0, le=1, description="achieved fraction of memory-tier "
                                     "bandwidth for streaming operations")
    kernel_overhead_s: float = Field(ge=0, description="fixed time per kernel when a framework "
                                     "launches kernels one by one (GPU training), s")
    compiled_op_overhead_s: float = Field(ge=0, description="fixed time per operation of an "
                                          "ahead-of-time compiled program (IPU, RDU, LPU), s")
    graph_op_overhead_s: float = Field(ge=0, description="fixed time per operation of a GPU "
                                       "inference server (captured graphs), s")
    serving_memory_fraction: float = Field(
        default=0.9, gt=0, le=1, description="fraction of a GPU's memory a serving engine "
        "takes for weights, KV cache and its own buffers (vLLM gpu_memory_utilization, "
        "TensorRT-LLM free_gpu_memory_fraction: both 0.9 by default)")
    serving_reserve_bytes: float = Field(
        default=0.0, ge=0, description="memory per GPU a serving engine keeps besides weights "
        "and KV cache (activations of its largest profiled batch, CUDA graphs, CUDA context, "
        "communication buffers), bytes")
    link_efficiency: float = Field(gt=0, le=1, description="achieved fraction of network "
                                   "injection bandwidth in collectives")
    collective_step_latency_s: float = Field(ge=0, description="software time per collective "
                                             "algorithm step, s")
    nccl_latency_scale: float = Field(default=1.0, gt=0, description="factor on NCCL's own "
                                      "latencies (1: as NCCL's cost model states them)")
    idle_power_fraction: float = Field(ge=0, le=1, description="idle power as a fraction of "
                                       "full chip power")
    deterministic_feed_efficiency: float = Field(gt=0, le=1, description="fraction of on-chip "
                                                 "SRAM bandwidth at which a statically "
                                                 "scheduled chip feeds weights and KV cache "
                                                 "to its matrix units in decode (Groq LPU)")
    deterministic_op_latency_s: float = Field(
        default=0.0, ge=0, description="functional latency per modelled operation of a "
        "statically scheduled chip's decode step at batch 1 (the dependent instruction chain's "
        "fill and drain; nothing is launched at run time), s")
    dataflow_memory_efficiency: float = Field(gt=0, le=1, description="achieved fraction of "
                                              "HBM bandwidth when a fused dataflow decoder "
                                              "overlaps weight loads with compute (SN40L)")
    dataflow_layer_s: float = Field(ge=0, description="fixed time per decoder layer of a fused "
                                    "dataflow decode step (layer-boundary synchronisation, "
                                    "fused tensor-parallel all-reduce latency), s")
    dataflow_section_s: float = Field(ge=0, description="fixed time per decoder layer per "
                                      "sequence of a fused dataflow decode step, s")


def at_precision(cal: Calibration, precision: str, vendor: str | None = None,
                 achievable: float | None = None) -> Calibration:
    """``cal`` with the matmul efficiency of ``precision`` on one chip.

    - A vendor with its own fitted 16-bit efficiency (``vendor_matmul_efficiency``) uses it.
    - Otherwise, on a chip whose maximum achievable matmul FLOP/s was measured at that precision
      (``achievable``: that measurement over the dense peak, ``ChipSpec.achievable_fraction``),
      the A100-fitted ``matmul_efficiency`` (or ``low_precision_matmul_efficiency`` at 8 and 4
      bits) is carried over in the ratio of the two chips' measured fractions: ``efficiency x
      achievable / matmul_reference_fraction``. What the fit absorbed besides the GEMM itself
      (shapes, fusion, scheduling) carries over as it is; what the hardware reaches does not.
    - Otherwise 16-bit matmuls run at ``matmul_efficiency`` and 8- and 4-bit ones at that
      figure times ``low_precision_matmul_efficiency / matmul_efficiency`` of their (doubled or
      quadrupled) peak, so a vendor's own calibration carries over to its hypothetical FP8
      datapath.

    A vendor with its own per-operation cost (``vendor_compiled_op_overhead_s``) gets it as
    ``compiled_op_overhead_s``.

    >>> c = load_calibration()
    >>> at_precision(c, "bf16").matmul_efficiency == c.matmul_efficiency
    True
    >>> at_precision(c, "fp8").matmul_efficiency == c.low_precision_matmul_efficiency
    True
    >>> half = at_precision(c, "bf16", achievable=c.matmul_reference_fraction / 2)
    >>> round(half.matmul_efficiency / c.matmul_efficiency, 6)
    0.5
    >>> gc = c.vendor_matmul_efficiency["graphcore"]
    >>> at_precision(c, "fp16", "graphcore").matmul_efficiency == gc
    True
    >>> (at_precision(c, "fp16", "graphcore").compiled_op_overhead_s
    ...  == c.vendor_compiled_op_overhead_s["graphcore"])
    True
    """
    fitted = (vendor or "") in cal.vendor_matmul_efficiency
    own = cal.vendor_matmul_efficiency.get(vendor or "", cal.matmul_efficiency)
    low = precision in ("fp8", "int8", "fp4")
    update: dict[str, float] = {}
    if (vendor or "") in cal.vendor_compiled_op_overhead_s:
        update["compiled_op_overhead_s"] = cal.vendor_compiled_op_overhead_s[vendor or ""]
    if achievable is not None and not fitted:
        base = cal.low_precision_matmul_efficiency if low else cal.matmul_efficiency
        update["matmul_efficiency"] = min(1.0, base * achievable / cal.matmul_reference_fraction)
    elif low:  # the vendor's own 16-bit figure, scaled alike
        update["matmul_efficiency"] = min(
            1.0, own * cal.low_precision_matmul_efficiency / cal.matmul_efficiency)
    elif own != cal.matmul_efficiency:
        update["matmul_efficiency"] = own
    return cal.model_copy(update=update) if update else cal


def calibration_document() -> dict[str, dict[str, object]]:
    """Return the calibration file as a dict: per constant its value, meaning, fit and error."""
    text = resources.files("accelkb.perf").joinpath("data/calibration.json").read_text("utf-8")
    data: dict[str, dict[str, object]] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def load_calibration() -> Calibration:
    """Load the fitted constants (cached; the object is frozen)."""
    doc = calibration_document()
    values = {k: v["value"] for k, v in doc.items() if not k.startswith("_")}
    return Calibration.model_validate(values)
