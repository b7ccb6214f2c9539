"""Numbers of one layout from the performance module: memory per chip, streaming, estimates.

These are the "theory" side of the encoding: Z3 proposes a layout, these functions (which only
call :mod:`accelkb.perf`) say whether its memory fits, whether streamed weights hide behind
compute, and how fast it runs. Nothing here re-implements a perf formula.

Examples
--------
>>> from accelkb.solver.config.model import Layout
>>> training_config(Layout(tp=8, pp=2, dp=4, micro_batch=2), 64).global_batch
64
"""

from __future__ import annotations

from dataclasses import dataclass

from accelkb.errors import InputError
from accelkb.perf import inference as perf_inference
from accelkb.perf import training as perf_training
from accelkb.perf.compute import peak_for
from accelkb.perf.inference import InferenceConfig
from accelkb.perf.memory import (
    activation_bytes,
    kv_cache_bytes,
    model_state_bytes,
    serving_capacity,
    stage_params,
)
from accelkb.perf.shapes import BYTES_PER, total_params
from accelkb.perf.training import TrainingConfig, weight_bytes
from accelkb.solver.config.instance import Instance
from accelkb.solver.config.model import Layout


@dataclass(frozen=True)
class Memory:
    """Bytes per chip of the most loaded chip, by category, and what the tiers offer."""

    items: dict[str, float]
    fast_capacity: float
    slow_capacity: float
    sram_capacity: float

    @property
    def total(self) -> float:
        """All bytes per chip."""
        return sum(self.items.values())

    @property
    def in_fast(self) -> float:
        """Bytes that must sit in the fast tiers (everything but offloaded optimizer state)."""
        return self.total - self.items.get("optimizer_offloaded", 0.0)


def training_config(lay: Layout, global_batch: int, seq_len: int | None = None,
                    fused_attention: bool = False) -> TrainingConfig:
    """The perf :class:`TrainingConfig` of a layout (``fused_attention``: the instance's,
    what today's software runs on the chip). Data-parallel communication overlaps the backward
    pass, as Megatron, DeepSpeed and FSDP run it and as advise's baseline search estimates it:
    without it the solver ranked ZeRO-3 on an IPU-POD64 (GPT-3 13B) below ZeRO-2, 'OPTIMAL' at
    49.2 s beside the 41.3 s that advise then checked for ZeRO-3 (from an audit)."""
    return TrainingConfig.model_validate(dict(
        tp=lay.tp, pp=lay.pp, dp=lay.dp, micro_batch=lay.micro_batch, global_batch=global_batch,
        interleave=lay.interleave, recompute=lay.recompute,
        sequence_parallel=lay.sequence_parallel, zero=lay.zero,
        precision=lay.precision, offload_optimizer=lay.offload_optimizer,
        seq_len=seq_len, fused_attention=fused_attention, dp_overlap=True))


def microbatches(inst: Instance, lay: Layout) -> int:
    """Micro-batches per step per pipeline, global batch / (dp x micro-batch), floored."""
    return max(1, inst.global_batch // (lay.dp * lay.micro_batch))


def memory(inst: Instance, lay: Layout) -> Memory:
    """Memory per chip of ``lay`` with perf's memory model (ZeRO, activations, KV cache)."""
    tiers = inst.system.chip.memory_tiers
    fast = sum(t.capacity_bytes for t in tiers[:-1]) if len(tiers) > 1 else tiers[0].capacity_bytes
    slow = tiers[-1].capacity_bytes if len(tiers) > 1 else 0.0
    sram = sum(t.capacity_bytes for t in tiers if t.kind == "sram")
    e = weight_bytes(lay.precision) if inst.training else float(BYTES_PER[lay.precision])
    params = stage_params(inst.model, lay.tp, lay.pp)
    if not inst.training:
        in_flight = lay.batch * (lay.pp if lay.pipelined else 1)  # pp batches when pipelined
        kv = kv_cache_bytes(inst.model, in_flight, inst.request.prompt_len +
                            inst.request.output_len, lay.tp, lay.pp, lay.precision)
        return Memory({"weights": params * e, "kv_cache": kv}, fast, slow, sram)
    st = model_state_bytes(params, lay.dp, lay.zero, weight_bytes=e)
    acts = activation_bytes(inst.model, lay.micro_batch, lay.tp, lay.pp, microbatches(inst, lay),
                            lay.interleave, lay.sequence_parallel and lay.tp > 1, lay.recompute,
                            fused_attention=inst.fused_attention)
    opt_key = "optimizer_offloaded" if lay.offload_optimizer else "optimizer"
    return Memory({"weights": st["weights"], "gradients": st["gradients"],
                   opt_key: st["optimizer"], "activations": acts}, fast, slow, sram)


def capacity(inst: Instance) -> float:
    """Bytes per chip that a layout may fill: all memory tiers together in training; in
    inference on a GPU, what its serving engine leaves to weights and KV cache
    (:func:`accelkb.perf.memory.serving_capacity`), as the performance module counts it."""
    if inst.training:
        return sum(t.capacity_bytes for t in inst.system.chip.memory_tiers)
    return serving_capacity(inst.system.chip, inst.calibration)


def streaming_need(inst: Instance, lay: Layout) -> tuple[float, float]:
    """(FLOPs per streamed weight byte this micro-batch does, FLOPs per byte needed to hide it).

    A streamed weight is read in the forward and the backward pass of every micro-batch
    (perf's offload term ``2 m weights``); per weight the micro-batch does ``2 x (3 + full) x
    b x s`` FLOPs. The need is the ridge point achievable peak / achievable slow-tier bandwidth.
    """
    tiers = inst.system.chip.memory_tiers
    cal = inst.calibration
    e = weight_bytes(lay.precision)  # streamed weights are the 16-bit copies under FP8
    passes = 4.0 if lay.recompute == "full" else 3.0
    have = 2.0 * passes * lay.micro_batch * inst.model.seq_len / (2.0 * e)
    need = peak_for(inst.system.chip, lay.precision) * cal.matmul_efficiency / (
        tiers[-1].bandwidth_bytes_per_s * cal.memory_efficiency)
    return have, need


def model_state_total(inst: Instance, precision: str) -> float:
    """Bytes of the whole model's state (training: weights, gradients, Adam; inference:
    weights)."""
    p = float(total_params(inst.model))
    if not inst.training:
        return p * BYTES_PER[precision]
    st = model_state_bytes(p, 1, 0, weight_bytes=weight_bytes(precision))
    return sum(st.values())


def estimate(inst: Instance, lay: Layout) -> tuple[float, float, float | None,
                                                   dict[str, float]]:
    """(time, tokens/s over all chips used, J/token, bytes per tier) from the perf estimate.

    Training time is the step time; inference time is the decode time per token.

    Raises
    ------
    InputError
        When perf refuses the layout (it does not fit or is inconsistent).
    """
    if inst.training:
        est = perf_training.estimate(inst.model, inst.system,
                                     training_config(lay, inst.global_batch,
                                                     fused_attention=inst.fused_attention),
                                     inst.calibration)
        return est.step_time_s, est.tokens_per_s, est.joules_per_token, \
            est.memory_per_chip_bytes
    cfg = InferenceConfig.model_validate(dict(
        tp=lay.tp, pp=lay.pp, batch=lay.batch, prompt_len=inst.request.prompt_len,
        output_len=inst.request.output_len, precision=lay.precision, pipelined=lay.pipelined))
    ie = perf_inference.estimate(inst.model, inst.system, cfg, inst.calibration)
    return ie.decode_s_per_token, ie.tokens_per_s * lay.dp, ie.joules_per_token, \
        ie.memory_per_chip_bytes


__all__ = ["InputError", "Memory", "capacity", "estimate", "memory",
           "microbatches", "model_state_total", "streaming_need", "training_config"]
