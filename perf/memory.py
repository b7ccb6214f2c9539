"""Memory per chip: model states (ZeRO), activations (Korthikanti), KV cache, tier placement.

Model states with mixed-precision Adam: 16-bit weights, gradients (``grad_bytes``: 4 with fp32
accumulation as in Megatron, 2 in the ZeRO paper) and 12 bytes of fp32 master weights, momentum
and variance per parameter. ZeRO stage 1 (or replicated tensor sharding, RTS) shards the
optimizer state over data-parallel replicas, stage 2 also the gradients, stage 3 also the
weights.

Activations per layer follow Korthikanti et al. (2022), Table 2, generalised to grouped-query
attention and gated MLPs: per token and hidden unit, ``10`` bytes outside tensor-parallel regions
(split ``t`` ways only with sequence parallelism), ``4 + 4 r + 2 m f/h`` inside them (``r`` =
kv_heads/heads, ``m`` = 2 plain or 3 gated MLP tensors) and ``5 a s / h`` for the score matrix
(dropped by selective recompute or fused attention). Full recompute stores only the layer input.
The first pipeline stage keeps ``min(p, microbatches)`` microbatches of its ``L/p`` layers under
1F1B, times ``1 + (p - 1)/(p v)`` with ``v``-way interleaving.

Examples
--------
>>> from accelkb.perf.specs import ModelSpec
>>> m = ModelSpec(name="22b", layers=48, hidden=6144, heads=64, kv_heads=64, ffn_hidden=24576,
...               vocab=51200, seq_len=2048, gated_mlp=False)
>>> round(activation_bytes_per_layer(m, micro_batch=4, tp=8, sp=True, recompute="selective")
...       * 48 / 2**30, 2)
9.56
"""

from __future__ import annotations

import math

from accelkb.errors import InfeasibleError, InputError

from .calibration import Calibration
from .shapes import BYTES_PER, embedding_params, kv_precision, output_params, params_per_layer
from .specs import ChipSpec, ModelSpec

OPTIMIZER_BYTES_PER_PARAM = 12.0  # fp32 master weights, Adam momentum and variance
RECOMPUTE_MODES = ("none", "selective", "full")


def stage_params(model: ModelSpec, tp: int, pp: int) -> float:
    """Parameters held by one chip of the most loaded pipeline stage.

    Layers are spread as evenly as possible; the embedding goes to the first stage and the
    output layer (or, with tied embeddings and ``pp > 1``, its copy) to the last, each placed on
    a stage with the smaller layer count when the split is uneven.
    """
    per_layer = params_per_layer(model)
    emb = embedding_params(model)
    out = output_params(model) or (model.vocab * model.hidden if pp > 1 else 0)
    if pp == 1:
        return (model.layers * per_layer + emb + output_params(model)) / tp
    light, extra = divmod(model.layers, pp)
    heavy = light + (1 if extra else 0)
    first = light * per_layer + emb
    last = light * per_layer + out
    return max(heavy * per_layer, first, last) / tp


def model_state_bytes(
    params: float, dp: int, zero: int = 0, weight_bytes: float = 2.0, grad_bytes: float = 4.0,
    optimizer_bytes: float = OPTIMIZER_BYTES_PER_PARAM,
) -> dict[str, float]:
    """Weights, gradients and optimizer state per chip for ``params`` held before ZeRO sharding.

    Raises
    ------
    InputError
        If ``zero`` is not 0..3.
    """
    if zero not in (0, 1, 2, 3):
        raise InputError(f"expected a ZeRO stage 0, 1, 2 or 3, got {zero!r}")
    return {
        "weights": params * weight_bytes / (dp if zero >= 3 else 1),
        "gradients": params * grad_bytes / (dp if zero >= 2 else 1),
        "optimizer": params * optimizer_bytes / (dp if zero >= 1 else 1),
    }


def activation_bytes_per_layer(
    model: ModelSpec, micro_batch: int, tp: int = 1, sp: bool = False, recompute: str = "none",
    fused_attention: bool = False, seq_len: int | None = None,
) -> float:
    """Activation bytes one layer stores for one micro-batch on one chip (16-bit activations)."""
    if recompute not in RECOMPUTE_MODES:
        raise InputError(f"expected recompute among {RECOMPUTE_MODES}, got {recompute!r}")
    s = model.seq_len if seq_len is None else seq_len
    sbh = float(s * micro_batch * model.hidden)
    if recompute == "full":
        return 2.0 * sbh / (tp if sp else 1)
    r = model.kv_heads / model.heads
    m = 3.0 if model.gated_mlp else 2.0
    outside = 10.0 / (tp if sp else 1)
    qh = model.q_dim / model.hidden  # 1 unless the model sets its own head_dim
    inside = ((4.0 + 4.0 * r) * qh + 2.0 * m * model.ffn_hidden / model.hidden) / tp
    scores = 0.0 if (recompute == "selective" or fused_attention) else \
        5.0 * model.heads * s / model.hidden / tp
    return sbh * (outside + inside + scores)


def activation_bytes(
    model: ModelSpec, micro_batch: int, tp: int, pp: int, microbatches: int, interleave: int = 1,
    sp: bool = False, recompute: str = "none", fused_attention: bool = False,
) -> float:
    """Activation bytes on the first pipeline stage's chips under 1F1B (the peak)."""
    per_layer = activation_bytes_per_layer(model, micro_batch, tp, sp, recompute, fused_attention)
    layers = math.ceil(model.layers / pp)
    in_flight = min(pp, microbatches)
    factor = 1.0 + (pp - 1) / (pp * interleave) if interleave > 1 else 1.0
    return per_layer * layers * in_flight * factor


def kv_cache_bytes(model: ModelSpec, batch: int, context: int, tp: int = 1, pp: int = 1,
                   precision: str = "bf16") -> float:
    """KV-cache bytes per chip: ``2 L n_kv d_head s b bytes / (tp pp)`` (kv heads split by tp)."""
    kv = model.kv_heads * model.head_size
    layers = math.ceil(model.layers / pp)
    kv_tp = max(1, min(tp, model.kv_heads))  # kv heads are replicated beyond their count
    return 2.0 * layers * kv * context * batch * BYTES_PER[kv_precision(precision)] / kv_tp


def layer_working_set(model: ModelSpec, micro_batch: int, tp: int = 1,
                      sp: bool = False, weight_bytes: float = 2.0,
                      grad_bytes: float = 4.0) -> dict[str, float]:
    """Bytes one chip holds at once while it runs the backward pass of one layer for one
    micro-batch: the layer's weights and their gradients (its tensor-parallel share) and the
    layer's activations (Korthikanti et al. 2022, eq. 2, ``34 s b h`` split by ``tp``), which
    are live again while their layer runs backwards even when they were recomputed.

    The attention scores (``5 a s^2 b``) are left out: an implementation can compute them a
    head or a block at a time (Graphcore serialises attention heads; flash attention tiles
    them). Code and exchange buffers come on top, and no published figure gives their size. So
    a check against this working set is a necessary condition, never a sufficient one.
    """
    per_layer = params_per_layer(model) / tp
    return {"weights": per_layer * weight_bytes, "gradients": per_layer * grad_bytes,
            "activations": activation_bytes_per_layer(model, micro_batch, tp, sp, "none",
                                                      fused_attention=True)}


def sram_only_capacity(chip: ChipSpec) -> float | None:
    """Bytes of on-chip SRAM of a chip that computes only from SRAM (no HBM: IPU, LPU,
    wafer-scale), None for any other chip."""
    if not chip.memory_tiers or chip.memory_tiers[0].kind != "sram" or chip.tier("hbm"):
        return None
    return sum(t.capacity_bytes for t in chip.memory_tiers if t.kind == "sram")


def check_layer_fits(working: dict[str, float], chip: ChipSpec, what: str) -> None:
    """Refuse a layout whose per-layer working set exceeds on-chip SRAM on a chip that computes
    only from SRAM (no HBM: IPU, LPU, wafer-scale), whatever streaming memory it has: streaming
    memory is reached by explicit copies between supersteps, so one layer's tensors must be in
    SRAM together while it runs.

    Raises
    ------
    InfeasibleError
        Naming the layer, the bytes and the limit.
    """
    sram = sram_only_capacity(chip)
    if sram is None:
        return
    need = sum(working.values())
    if need > sram:
        detail = ", ".join(f"{n} {b / 1e9:.2f} GB" for n, b in working.items())
        raise InfeasibleError(
            f"configuration does not fit: one layer of {what} needs {need / 1e9:.2f} GB in "
            f"on-chip SRAM at once ({detail}), more than the {sram / 1e9:.2f} GB of "
            f"{chip.name}, which computes only from SRAM (streaming memory is reached by copies "
            "between steps; attention scores, code and exchange buffers not even counted); use a "
            "smaller micro-batch or more tensor parallelism")


#: Vendors whose chips the serving-engine budget describes: vLLM and TensorRT-LLM on CUDA,
#: vLLM on ROCm. Other chips (Gaudi, Trainium, and every compiled chip) get all their memory:
#: no measurement here says what their serving stacks keep back.
SERVING_ENGINE_VENDORS = frozenset({"nvidia", "amd"})


def serving_engine_applies(chip: ChipSpec) -> bool:
    """Whether ``chip`` serves through a GPU engine whose memory budget the model applies."""
    return not chip.compiled and chip.vendor in SERVING_ENGINE_VENDORS


def serving_capacity(chip: ChipSpec, cal: Calibration) -> float:
    """Bytes per chip that inference may fill with weights and KV cache.

    A GPU serving engine (NVIDIA or AMD chips that run kernels: vLLM, TensorRT-LLM) does not
    hand the whole HBM to the KV cache: vLLM takes ``gpu_memory_utilization`` (default 0.9)
    of the device and TensorRT-LLM ``free_gpu_memory_fraction`` (default 0.9) of what the
    weights leave, and both first set aside the activations of their largest profiled batch,
    CUDA graphs, the CUDA context and communication buffers. So the budget is vLLM's form,
    ``serving_memory_fraction x capacity - serving_reserve_bytes``. Any other chip
    (:func:`serving_engine_applies`) gets all of its tiers: a compiled chip (IPU, RDU, LPU,
    TPU) places its program ahead of time.

    >>> from accelkb.perf.specs import ChipSpec, MemoryTierSpec
    >>> gpu = ChipSpec(name="g", vendor="nvidia", peak_flops={"bf16": 1e15}, memory_tiers=[
    ...     MemoryTierSpec(kind="hbm", capacity_bytes=80e9, bandwidth_bytes_per_s=3e12)])
    >>> from accelkb.perf.calibration import load_calibration
    >>> cal = load_calibration().model_copy(update={"serving_memory_fraction": 0.9,
    ...                                             "serving_reserve_bytes": 2e9})
    >>> serving_capacity(gpu, cal) / 1e9  # 0.9 x 80 - 2
    70.0
    >>> lpu = ChipSpec(name="l", peak_flops={"int8": 1e15}, memory_tiers=[
    ...     MemoryTierSpec(kind="sram", capacity_bytes=230e6, bandwidth_bytes_per_s=8e13)])
    >>> serving_capacity(lpu, cal) / 1e6  # a compiled program: all of it
    230.0
    """
    total = float(sum(t.capacity_bytes for t in chip.memory_tiers))
    if not serving_engine_applies(chip):
        return total
    return max(0.0, cal.serving_memory_fraction * total - cal.serving_reserve_bytes)


def place(items: list[tuple[str, float]], chip: ChipSpec) -> dict[str, dict[str, float]]:
    """Place named byte counts on the chip's tiers, fastest first, in the order given.

    An item that does not fit the remaining space of a tier spills the rest to the next tier.
    Returns ``{tier_kind: {item: bytes}}``.

    Raises
    ------
    InputError
        If everything does not fit in all tiers together ("needs X, has Y").

    Examples
    --------
    >>> from accelkb.perf.specs import ChipSpec, MemoryTierSpec
    >>> chip = ChipSpec(name="c", peak_flops={"bf16": 1e14}, memory_tiers=[
    ...     MemoryTierSpec(kind="sram", capacity_bytes=10, bandwidth_bytes_per_s=1e12),
    ...     MemoryTierSpec(kind="ddr", capacity_bytes=100, bandwidth_bytes_per_s=1e11)])
    >>> place([("activations", 4.0), ("weights", 20.0)], chip)
    {'sram': {'activations': 4.0, 'weights': 6.0}, 'ddr': {'weights': 14.0}}
    """
    need = sum(b for _, b in items)
    have = sum(t.capacity_bytes for t in chip.memory_tiers)
    if need > have:
        detail = ", ".join(f"{n} {b / 1e9:.2f} GB" for n, b in items if b)
        raise InfeasibleError(f"configuration does not fit: expected at most {have / 1e9:.2f} GB per "
                         f"chip ({chip.name}), got {need / 1e9:.2f} GB needed ({detail})")
    out: dict[str, dict[str, float]] = {}
    free = [float(t.capacity_bytes) for t in chip.memory_tiers]
    for name, size in items:
        left = size
        for i, tier in enumerate(chip.memory_tiers):
            if left <= 0:
                break
            take = min(left, free[i])
            if take > 0:
                slot = out.setdefault(tier.kind, {})
                slot[name] = slot.get(name, 0.0) + take
                free[i] -= take
                left -= take
    return out


def tier_totals(placement: dict[str, dict[str, float]]) -> dict[str, float]:
    """Bytes per tier kind of a placement."""
    return {k: float(sum(v.values())) for k, v in placement.items()}
