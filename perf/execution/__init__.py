"""accelkb.perf.execution: how a chip family runs a decode step, where it differs from GPUs.

- :mod:`.dataflow`: streaming dataflow with weights off chip (SambaNova RDU): a whole decoder
  layer fused into one kernel, weights streamed from HBM at SambaNova's published efficiency,
  the tensor-parallel all-reduce fused into the kernel, and a fixed cost per layer and sequence;
- :mod:`.static`: statically scheduled chips (Groq LPU): no run-time launch or arbitration, weights
  fed to the matrix units at a fitted fraction of SRAM bandwidth, and collectives taken from
  synthesized collision-free schedules, with no GPU-software constant.

Both only change constants and terms of :mod:`accelkb.perf.inference`; they import the
calibration and the specs, nothing else of the model.
"""
