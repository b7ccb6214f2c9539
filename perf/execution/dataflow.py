"""Streaming dataflow with off-chip weights (SambaNova RDU): what a fused decoder changes.

On an SN40L the compiler fuses a whole decoder layer into one kernel across the PCUs and PMUs
(SN40L paper, arXiv 2405.07518 §VI-C: "fused into a single kernel call ... saturating close to
85 % of HBM bandwidth"); weights stream from HBM (then DDR) through the on-chip PMU SRAM, which
holds the pipeline's buffers rather than weights, and the tensor-parallel all-reduce is fused
into the same kernel over the sockets' peer-to-peer protocol (§IV-D, §VII). So a decode step on
such a chip is, per layer:

- the layer's weight and KV-cache bytes at ``dataflow_memory_efficiency`` of the tiers'
  bandwidth (SambaNova's own ">85 % of HBM bandwidth", §VI-B; not fitted), or its FLOPs at the
  compute roofline if that is longer;
- plus ``dataflow_layer_s`` per layer: the layer-boundary synchronisation and the fused
  all-reduce's latency, which kernel looping reduces (hardware-orchestrated launch alone gives
  1.4-8x in decode and at most 1.1x in prefill, §VI-A: a first-order cost in decode only);
- plus ``dataflow_section_s`` per sequence of the batch: the fused section's fixed cost of
  running once more for each sequence (its attention over that sequence's own KV cache).

These two are the constants fitted on SambaNova hardware: Argonne's LLM-Inference-Bench on 8
SN40L sockets, fitted on its Mistral-7B and Llama-3-8B rows and checked on its Llama-3-70B and
Llama-2-7B rows (:func:`accelkb.perf.validation.fit.fit_dataflow`). Then:
- no per-operation launch cost (compiled_op_overhead_s) and no separate all-reduce time.

Prefill keeps the generic compiled-graph roofline: no SN40L prefill time is published.

Examples
--------
>>> from accelkb.perf.specs import ChipSpec, MemoryTierSpec
>>> rdu = ChipSpec(name="r", peak_flops={"bf16": 6e14}, spatial_dataflow=True, memory_tiers=[
...     MemoryTierSpec(kind="hbm", capacity_bytes=6e10, bandwidth_bytes_per_s=1.8e12)])
>>> applies(rdu)
True
>>> applies(rdu.model_copy(update={"spatial_dataflow": False}))
False
"""

from __future__ import annotations

from ..calibration import Calibration
from ..specs import ChipSpec

OFF_CHIP = ("hbm", "ddr", "streaming", "host")
NOTE = ("fused into the decoder kernel (SN40L peer-to-peer streaming between sockets); its "
        "latency is inside dataflow_section_s per layer and sequence")


def applies(chip: ChipSpec) -> bool:
    """Whether ``chip`` runs a fused streaming-dataflow decoder with weights off chip: spatial
    dataflow (ak:SpatialDataflow) and weights in HBM or DDR, not in SRAM."""
    return chip.spatial_dataflow and any(t.kind in ("hbm", "ddr") for t in chip.memory_tiers)


def weight_tiers(chip: ChipSpec) -> ChipSpec:
    """The chip with its on-chip SRAM left out of placement: in a fused dataflow pipeline the
    SRAM holds stage buffers and weights stream from the off-chip tiers."""
    off = [t for t in chip.memory_tiers if t.kind in OFF_CHIP]
    return chip.model_copy(update={"memory_tiers": off or chip.memory_tiers})


def decode_calibration(cal: Calibration) -> Calibration:
    """The constants a fused dataflow decode step runs with: the dataflow memory efficiency and
    no per-operation overhead (whole layers are one section)."""
    return cal.model_copy(update={"memory_efficiency": cal.dataflow_memory_efficiency,
                                  "kernel_overhead_s": 0.0})


def section_s(batch: int, cal: Calibration) -> float:
    """Fixed time of one fused layer section for ``batch`` sequences, s."""
    return cal.dataflow_layer_s + batch * cal.dataflow_section_s
