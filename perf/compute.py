"""Compute time: a roofline per operation class with calibrated achievable efficiencies.

A transformer layer is broken into operations of two classes: ``matmul`` (tensor-core work,
bounded by ``peak x matmul_efficiency`` or by the bytes it moves) and ``stream`` (norms, softmax,
dropout, activations, residuals: bounded by ``bandwidth x memory_efficiency``). Each operation
also pays ``kernel_overhead_s``. Per-chip quantities account for tensor parallelism ``tp`` and
sequence parallelism (norm/dropout work split ``tp`` ways instead of replicated).

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> op = Op("gemm", "matmul", flops=2e12, bytes=1e8)
>>> t = op_time(op, peak_flops=1e15, bandwidth=1e12, cal=load_calibration())
>>> t > 2e12 / 1e15
True
"""

from __future__ import annotations

from dataclasses import dataclass

from accelkb.errors import InputError

from .calibration import Calibration
from .shapes import BYTES_PER, kv_dim, mlp_matrices
from .specs import ChipSpec, ModelSpec

# Bytes moved per token x hidden by norm, dropout and residual operations of one layer forward at
# 16-bit (2 norms: read+write 2+2 each; 2 dropout+residual: read 2+2, write 2, mask 1 each).
_REPLICATED_STREAM_BYTES = 22.0
# Bytes moved per score element by scale/mask/softmax (read 2, write 2) and dropout (read 2,
# write 2, mask 1) when attention is not fused.
_SOFTMAX_STREAM_BYTES = 9.0


@dataclass(frozen=True)
class Op:
    """One operation of a layer on one chip: FLOPs and bytes moved to and from memory."""

    name: str
    kind: str  # "matmul" or "stream"
    flops: float
    bytes: float
    kernels: int = 1  # separate kernels (launches) the operation takes in an unfused framework


def peak_for(chip: ChipSpec, precision: str) -> float:
    """Dense peak of ``chip`` at ``precision``; bf16 and fp16 stand in for each other.

    Raises
    ------
    InputError
        If the chip has no peak for the precision.
    """
    peaks = chip.peak_flops
    if precision in peaks:
        return peaks[precision]
    twin = {"bf16": "fp16", "fp16": "bf16"}.get(precision)
    if twin and twin in peaks:
        return peaks[twin]
    raise InputError(f"expected chip '{chip.name}' to have a {precision} peak, got only "
                     f"{sorted(peaks)}")


def op_time(op: Op, peak_flops: float, bandwidth: float, cal: Calibration) -> float:
    """Roofline time of one operation plus the fixed overhead of each of its kernels, seconds."""
    t_mem = op.bytes / (bandwidth * cal.memory_efficiency)
    fixed = op.kernels * cal.kernel_overhead_s
    if op.kind == "matmul":
        return max(op.flops / (peak_flops * cal.matmul_efficiency), t_mem) + fixed
    return t_mem + fixed


def _gemm(name: str, m: float, k: float, n: float, e: float) -> Op:
    return Op(name, "matmul", 2.0 * m * k * n, e * (m * k + k * n + m * n))


def layer_forward_ops(
    model: ModelSpec,
    batch: int,
    query: int,
    context: int,
    tp: int = 1,
    sp: bool = False,
    precision: str = "bf16",
    fused_attention: bool = False,
) -> list[Op]:
    """Operations of one layer's forward pass on one chip.

    Parameters
    ----------
    batch, query, context
        Sequences, new tokens per sequence, and keys attended to (training and prefill:
        query = context = sequence length; decode: query = 1, context = KV length).
    tp, sp
        Tensor-parallel degree and whether sequence parallelism splits the norm/dropout work.
    fused_attention
        FlashAttention-style kernel: the score matrix never goes to memory.
    """
    e = float(BYTES_PER[precision])
    h, f, d = model.hidden, model.ffn_hidden, model.head_dim
    tokens = float(batch * query)
    heads = model.heads / tp
    kvd = kv_dim(model) / tp
    rep = tp if sp else 1
    ops = [
        _gemm("qkv", tokens, h, (h + 2 * kv_dim(model)) / tp, e),
        _gemm("attn_out", tokens, h / tp, h, e),
        _gemm("mlp_in", tokens, h, (mlp_matrices(model) - 1) * f / tp, e),
        _gemm("mlp_out", tokens, f / tp, h, e),
        Op("norm_dropout_residual", "stream", 0.0,
           _REPLICATED_STREAM_BYTES * tokens * h * e / 2.0 / rep, kernels=4),
        Op("activation", "stream", 0.0,
           (6.0 if model.gated_mlp else 4.0) * tokens * f / tp * e / 2.0),
    ]
    att_flops = 2.0 * batch * heads * query * context * d
    kv_bytes = e * batch * context * kvd
    q_bytes = e * batch * heads * query * d
    if fused_attention or query == 1:
        ops.append(Op("attention", "matmul", 2.0 * att_flops, 2.0 * kv_bytes + 2.0 * q_bytes))
    else:
        scores = batch * heads * query * context
        ops += [
            Op("attn_scores", "matmul", att_flops, kv_bytes + q_bytes + e * scores),
            Op("softmax_dropout", "stream", 0.0, _SOFTMAX_STREAM_BYTES * scores * e / 2.0,
               kernels=2),
            Op("attn_values", "matmul", att_flops, kv_bytes + q_bytes + e * scores),
        ]
    return ops


def logits_ops(model: ModelSpec, tokens: float, tp: int = 1, precision: str = "bf16") -> list[Op]:
    """Output-layer multiply (and its softmax/cross-entropy stream) for ``tokens`` on one chip."""
    e = float(BYTES_PER[precision])
    v = model.vocab / tp
    return [_gemm("logits", tokens, model.hidden, v, e),
            Op("cross_entropy", "stream", 0.0, 3.0 * tokens * v * e)]


def ops_time(ops: list[Op], peak_flops: float, bandwidth: float, cal: Calibration,
             scale: float = 1.0) -> float:
    """Sum of roofline times; ``scale`` multiplies work and overheads (2 for a backward pass)."""
    return scale * sum(op_time(o, peak_flops, bandwidth, cal) for o in ops)


def ops_flops(ops: list[Op]) -> float:
    """Total FLOPs of the operations."""
    return sum(o.flops for o in ops)


def recompute_ops(ops: list[Op], recompute: str) -> list[Op]:
    """Operations re-run in the backward pass for the recompute mode (none/selective/full)."""
    if recompute == "full":
        return ops
    if recompute == "selective":
        keep = {"attn_scores", "softmax_dropout", "attn_values", "attention"}
        return [o for o in ops if o.name in keep]
    return []
