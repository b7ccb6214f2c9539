"""Statically scheduled chips (Groq LPU, ak:DeterministicExecution): the decode step's terms.

The compiler fixes every instruction's cycle and every chip-to-chip transfer ahead of time, so:

- no per-operation launch or synchronisation cost is added (the GPU-fitted graph_op_overhead_s
  is not applied);
- collectives come from synthesized collision-free schedules by default (``collectives='auto'``,
  :mod:`accelkb.perf.scheduled`): steps x (chunk / unit-link bandwidth + the hop latency of the
  knowledge base), with no NCCL-fitted step latency;
- weights and the KV cache reach the matrix units at ``deterministic_feed_efficiency`` of the
  SRAM tier's bandwidth. At batch 1 each 320 x 320 weight tile is used for a single vector, so
  the rate at which tiles are installed into the four MXM planes, not the SRAM's aggregate
  stream bandwidth ("80 TB/s", which Groq does not define), bounds every layer. Groq publishes
  no install rate, so the fraction is solved on the one independent measurement (LLMPerf,
  Llama-2 70B on GroqCloud, 3.91 ms per token decoding) and reported in every estimate's
  sensitivity; the vendor's claims (240-300 tokens/s) are the held-out check.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> cal = static_calibration(load_calibration())
>>> cal.kernel_overhead_s, cal.memory_efficiency == load_calibration().deterministic_feed_efficiency
(0.0, True)
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
    efficiency instead of memory_efficiency, and no per-operation overhead."""
    return cal.model_copy(update={"memory_efficiency": cal.deterministic_feed_efficiency,
                                  "kernel_overhead_s": 0.0})
