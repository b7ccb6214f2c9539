"""accelkb.perf.execution: how a chip family runs a decode step or its collectives, where it
differs from the generic roofline and alpha-beta model.

- :mod:`.nccl`: collectives that a run-time library launches (GPUs: NCCL and its ports), timed
  by NCCL's own cost model (latency per algorithm, protocol and step; bytes over the protocol's
  bandwidth) instead of a fitted cost per step;
- :mod:`.dataflow`: streaming dataflow with weights off chip (SambaNova RDU): a whole decoder
  layer fused into one kernel, weights streamed from HBM at SambaNova's published efficiency,
  the tensor-parallel all-reduce fused into the kernel, and a fixed cost per layer and sequence;
- :mod:`.static`: statically scheduled chips (Groq LPU): no run-time launch or arbitration, weights
  fed to the matrix units at a fitted fraction of SRAM bandwidth, and collectives taken from
  synthesized collision-free schedules, with no GPU-software constant;
- :mod:`.fp8`: FP8 mixed-precision training (Transformer Engine's recipe): only the linear
  layers' products on FP8 operands, the rest 16-bit, and the casts as passes over memory.

Dataflow and static only change constants and terms of :mod:`accelkb.perf.inference`, fp8 the
operations of :mod:`accelkb.perf.training`; they import the calibration, the specs and the
operation record of :mod:`accelkb.perf.compute`, nothing else of the model.
"""
