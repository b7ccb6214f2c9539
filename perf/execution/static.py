"""Statically scheduled chips (Groq LPU, ak:DeterministicExecution): the decode step's terms.

The compiler fixes every instruction's cycle and every chip-to-chip transfer ahead of time, so:

- nothing is launched or synchronised at run time, so the GPU-fitted graph_op_overhead_s is not
  applied; what each operation costs instead is its functional latency: at batch 1 a layer is a
  chain of dependent instructions, each of which streams through the chip's functional units
  before the next can start (the ISA exposes that latency, ISCA'20). The per-operation figure,
  ``deterministic_op_latency_s``, is fitted on Groq's own measured rows with the feed
  efficiency below: one model size alone cannot tell a cost per operation from a rate per
  byte, two (Llama-2 70B and Llama-3.1 8B) can;
- collectives come from synthesized collision-free schedules by default (``collectives='auto'``,
  :mod:`accelkb.perf.scheduled`): steps x (chunk / unit-link bandwidth + the hop latency of the
  knowledge base), with no NCCL-fitted step latency;
- weights and the KV cache reach the matrix units at ``deterministic_feed_efficiency`` of the
  SRAM tier's bandwidth. At batch 1 each 320 x 320 weight tile is used for a single vector, so
  the rate at which tiles are installed into the four MXM planes, not the SRAM's aggregate
  stream bandwidth ("80 TB/s", which Groq does not define), bounds every layer. Groq publishes
  no install rate, so the fraction is fitted, with the per-operation latency, on the two
  independent measurements of GroqCloud decode with different model sizes (LLMPerf, Llama-2
  70B, 3.91 ms per token; Artificial Analysis, Llama-3.1 8B, 751 tokens/s) and reported in
  every estimate's sensitivity; Artificial Analysis' Llama-3.1 70B rate and the vendor's
  claims (240-300 tokens/s) are the held-out check.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> base = load_calibration()
>>> cal = static_calibration(base)
>>> cal.kernel_overhead_s == base.deterministic_op_latency_s
True
>>> cal.memory_efficiency == base.deterministic_feed_efficiency
True
"""

from __future__ import annotations

from ..calibration import Calibration
from ..specs import ChipSpec

COLLECTIVES = "auto"


def applies(chip: ChipSpec) -> bool:
    """Whether ``chip`` is statically scheduled (ak:DeterministicExecution)."""
    return chip.deterministic


def static_calibration(cal: Calibration) -> Calibration:
    """The constants of a decode step on a statically scheduled chip: the fitted feed
    efficiency instead of memory_efficiency, and each operation's functional latency instead of
    a launch cost."""
    return cal.model_copy(update={"memory_efficiency": cal.deterministic_feed_efficiency,
                                  "kernel_overhead_s": cal.deterministic_op_latency_s})
