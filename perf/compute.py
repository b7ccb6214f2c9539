"""Compute time: a roofline per operation class with calibrated achievable efficiencies.

A transformer layer is broken into operations of two classes: ``matmul`` (tensor-core work,
bounded by ``peak x matmul_efficiency`` or by the bytes it moves) and ``stream`` (norms, softmax,
dropout, activations, residuals: bounded by ``bandwidth x memory_efficiency``). Each operation
also pays ``kernel_overhead_s``: added to it on a compiled chip, overlapped with the device's
work where a host launches kernels asynchronously (:func:`ops_time` ``overlap_host``). Per-chip
quantities account for tensor parallelism ``tp`` and sequence parallelism (norm/dropout work
split ``tp`` ways instead of replicated).

On a bulk-synchronous chip (Graphcore IPU: ``ChipSpec.bsp``) each multiply also runs an
exchange phase that is not overlapped with its compute phase: the operands a tile does not own
cross the on-chip exchange. Its volume is taken at the memory-independent lower bound for a
matrix multiply spread over ``P`` processors (Ballard et al., SPAA 2012; Irony, Toledo, Tiskin
2004): each processor moves at least ``3 (mkn/P)^(2/3) - (mk + kn + mn)/P`` words, so the
exchange time is ``P x words x bytes / exchange_bandwidth``. No constant is fitted: the bound is
what a perfect planner would need, real plans move more.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> op = Op("gemm", "matmul", flops=2e12, bytes=1e8)
>>> t = op_time(op, peak_flops=1e15, bandwidth=1e12, cal=load_calibration())
>>> t > 2e12 / 1e15
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from accelkb.errors import InputError

from .calibration import Calibration
from .shapes import BYTES_PER, kv_dim, kv_precision, mlp_matrices, q_dim
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
    dims: tuple[float, float, float, float] | None = None  # (batch, m, k, n) of a matmul
    elem_bytes: float = 2.0  # bytes per operand element
    efficiency: float | None = None  # achieved fraction of peak where the chip states its own


def exchange_time(op: Op, bsp: tuple[int, float] | None) -> float:
    """Exchange-phase time of a matmul on a bulk-synchronous chip, s (0 elsewhere).

    ``batch`` independent ``m x k x n`` products share ``tiles`` tiles (``tiles / batch`` each,
    at least one); the words per tile are the memory-independent lower bound.
    """
    if bsp is None or op.dims is None:
        return 0.0
    tiles, bandwidth = bsp
    batch, m, k, n = op.dims
    p = max(1.0, tiles / batch)
    words = 3.0 * (m * k * n / p) ** (2.0 / 3.0) - (m * k + k * n + m * n) / p
    return tiles * max(0.0, words) * op.elem_bytes / bandwidth


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


def op_time(op: Op, peak_flops: float, bandwidth: float, cal: Calibration,
            bsp: tuple[int, float] | None = None) -> float:
    """Roofline time of one operation plus the fixed overhead of each of its kernels, seconds;
    on a bulk-synchronous chip (``bsp`` = tiles, exchange bytes/s) plus the exchange phase."""
    t_mem = op.bytes / (bandwidth * cal.memory_efficiency)
    fixed = op.kernels * cal.kernel_overhead_s
    if op.kind == "matmul":
        eff = op.efficiency or cal.matmul_efficiency
        return max(op.flops / (peak_flops * eff), t_mem) + fixed + exchange_time(op, bsp)
    return t_mem + fixed


def _gemm(name: str, m: float, k: float, n: float, e: float, batch: float = 1.0) -> Op:
    return Op(name, "matmul", 2.0 * batch * m * k * n, e * batch * (m * k + k * n + m * n),
              dims=(batch, m, k, n), elem_bytes=e)


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
    h, f, d, q = model.hidden, model.ffn_hidden, model.head_size, q_dim(model)
    tokens = float(batch * query)
    heads = model.heads / tp
    kvd = kv_dim(model) / tp
    rep = tp if sp else 1
    ops = [
        _gemm("qkv", tokens, h, (q + 2 * kv_dim(model)) / tp, e),
        _gemm("attn_out", tokens, q / tp, h, e),
        _gemm("mlp_in", tokens, h, (mlp_matrices(model) - 1) * f / tp, e),
        _gemm("mlp_out", tokens, f / tp, h, e),
        Op("norm_dropout_residual", "stream", 0.0,
           _REPLICATED_STREAM_BYTES * tokens * h * e / 2.0 / rep, kernels=4),
        Op("activation", "stream", 0.0,
           (6.0 if model.gated_mlp else 4.0) * tokens * f / tp * e / 2.0),
    ]
    att_flops = 2.0 * batch * heads * query * context * d
    e = float(BYTES_PER[kv_precision(precision)])  # attention reads the KV cache's precision
    kv_bytes = e * batch * context * kvd
    q_bytes = e * batch * heads * query * d
    bh = float(batch * heads)
    if fused_attention or query == 1:
        ops.append(Op("attention", "matmul", 2.0 * att_flops, 2.0 * kv_bytes + 2.0 * q_bytes,
                      dims=(2.0 * bh, query, d, context), elem_bytes=e))
    else:
        scores = batch * heads * query * context
        ops += [
            Op("attn_scores", "matmul", att_flops, kv_bytes + q_bytes + e * scores,
               dims=(bh, query, d, context), elem_bytes=e),
            Op("softmax_dropout", "stream", 0.0, _SOFTMAX_STREAM_BYTES * scores * e / 2.0,
               kernels=2),
            Op("attn_values", "matmul", att_flops, kv_bytes + q_bytes + e * scores,
               dims=(bh, query, context, d), elem_bytes=e),
        ]
    return ops


def with_attention_efficiency(ops: list[Op], efficiency: float | None) -> list[Op]:
    """``ops`` with the fused attention of a prefill or training pass (the ``attention`` op with
    more than one query) at ``efficiency`` of the peak: what the chip's FlashAttention-style
    kernel is measured to reach (``ChipSpec.fused_attention_efficiency``), where the GEMMs'
    ``matmul_efficiency`` would overstate it. Unchanged when ``efficiency`` is None.

    >>> a = Op("attention", "matmul", 1e12, 1e6, dims=(8.0, 512.0, 64.0, 512.0))
    >>> with_attention_efficiency([a], 0.35)[0].efficiency
    0.35
    """
    if efficiency is None:
        return ops
    return [replace(o, efficiency=efficiency)
            if o.name == "attention" and o.dims is not None and o.dims[1] > 1 else o
            for o in ops]


def fuse_elementwise(ops: list[Op]) -> list[Op]:
    """``ops`` as a compiler that fuses elementwise work into the matrix products runs them
    (XLA on TPU: ``ChipSpec.fuses_elementwise``): norms, dropout, softmax and activations ride
    on the products' reads and writes, so the stream operations move no bytes of their own.

    >>> fuse_elementwise([Op("norm", "stream", 0.0, 4e6)])[0].bytes
    0.0
    """
    return [replace(o, bytes=0.0) if o.kind == "stream" else o for o in ops]


def logits_ops(model: ModelSpec, tokens: float, tp: int = 1, precision: str = "bf16") -> list[Op]:
    """Output-layer multiply (and its softmax/cross-entropy stream) for ``tokens`` on one chip."""
    e = float(BYTES_PER[precision])
    v = model.vocab / tp
    return [_gemm("logits", tokens, model.hidden, v, e),
            Op("cross_entropy", "stream", 0.0, 3.0 * tokens * v * e)]


def ops_time(ops: list[Op], peak_flops: float, bandwidth: float, cal: Calibration,
             scale: float = 1.0, bsp: tuple[int, float] | None = None,
             overlap_host: bool = False) -> float:
    """Sum of roofline times; ``scale`` multiplies work and overheads (2 for a backward pass:
    its two products per forward product have the same exchange bound, which is symmetric in
    m, k, n).

    ``overlap_host``: the operations are launched asynchronously by a host (an eager framework
    on a GPU), so the host's per-kernel time (``kernel_overhead_s`` for each kernel) overlaps
    the device's work and the pass takes the longer of the two: device-bound for large
    operations, launch-bound for small ones (small hidden sizes, high tensor parallelism).
    Without it each kernel's fixed cost adds to its roofline time (a compiled program's
    per-operation cost, which the chip itself pays).

    >>> from accelkb.perf.calibration import load_calibration
    >>> cal = load_calibration()
    >>> tiny = [Op("add", "stream", 0.0, 1e3, kernels=10)]
    >>> ops_time(tiny, 1e15, 1e12, cal, overlap_host=True) == 10 * cal.kernel_overhead_s
    True
    """
    if not overlap_host:
        return scale * sum(op_time(o, peak_flops, bandwidth, cal, bsp) for o in ops)
    device = cal.model_copy(update={"kernel_overhead_s": 0.0})
    busy = sum(op_time(o, peak_flops, bandwidth, device, bsp) for o in ops)
    host = sum(o.kernels for o in ops) * cal.kernel_overhead_s
    return scale * max(busy, host)


def ops_exchange_time(ops: list[Op], bsp: tuple[int, float] | None, scale: float = 1.0) -> float:
    """Exchange-phase part of :func:`ops_time` on a bulk-synchronous chip, s."""
    return 0.0 if bsp is None else scale * sum(exchange_time(o, bsp) for o in ops)


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
