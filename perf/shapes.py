"""Model shapes: parameter counts, FLOPs per token and bytes per layer of a transformer.

Counts follow Narayanan et al. (SC'21) and Korthikanti et al. (2022): a layer holds attention
(query, grouped key/value, output projections), an MLP (plain: two matrices; gated: three) and
two norms; GPT-style models (plain MLP) carry biases and learned positions, Llama-style models
(gated MLP) carry neither.

Examples
--------
>>> from accelkb.perf.specs import ModelSpec
>>> gpt3 = ModelSpec(name="gpt3", layers=96, hidden=12288, heads=96, kv_heads=96,
...                  ffn_hidden=49152, vocab=51200, seq_len=2048, gated_mlp=False,
...                  tied_embeddings=True)
>>> round(total_params(gpt3) / 1e9, 1)
174.6
"""

from __future__ import annotations

from .specs import ModelSpec

BYTES_PER = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "fp4": 0.5}
#: The precision the KV cache is kept in where it differs from the weights': FP4 deployments
#: keep keys and values in FP8 (AMD's MLPerf Inference v5.1 MI355X submission, ROCm blog
#: "mlperf-inference-v5.1": "KV caches were quantized to OCP FP8-e4m3"; NVIDIA's FP4 engines
#: likewise quantise only the matrix multiplies to FP4).
KV_PRECISION = {"fp4": "fp8"}


def kv_precision(precision: str) -> str:
    """The KV cache's precision for weights in ``precision``.

    >>> kv_precision("fp4"), kv_precision("bf16")
    ('fp8', 'bf16')
    """
    return KV_PRECISION.get(precision, precision)


def kv_dim(m: ModelSpec) -> int:
    """Width of the key (or value) projection: kv_heads * head size."""
    return m.kv_heads * m.head_size


def q_dim(m: ModelSpec) -> int:
    """Width of the query projection (and the attention output's input): heads * head size;
    equal to the hidden size unless the model gives its own ``head_dim``."""
    return m.heads * m.head_size


def mlp_matrices(m: ModelSpec) -> int:
    """Number of h x ffn matrices in the MLP: 3 when gated (SwiGLU), else 2."""
    return 3 if m.gated_mlp else 2


def matmul_params_per_layer(m: ModelSpec) -> int:
    """Weights of one layer that take part in matrix multiplies (no biases, no norms)."""
    h, q = m.hidden, q_dim(m)
    attn = h * (q + 2 * kv_dim(m)) + q * h
    mlp = mlp_matrices(m) * h * m.ffn_hidden
    return attn + mlp


def params_per_layer(m: ModelSpec) -> int:
    """All parameters of one layer: matmul weights, biases (plain-MLP models) and two norms."""
    h = m.hidden
    extra = 2 * h if not m.gated_mlp else 0  # layernorm scale+bias vs RMSNorm scale
    norms = 2 * h + extra
    biases = 0 if m.gated_mlp else (q_dim(m) + 2 * kv_dim(m)) + h + m.ffn_hidden + h
    return matmul_params_per_layer(m) + norms + biases


def embedding_params(m: ModelSpec) -> int:
    """Input embedding (+ learned positions for plain-MLP/GPT models) and the final norm."""
    pos = 0 if m.gated_mlp else m.seq_len * m.hidden
    return m.vocab * m.hidden + pos + (2 if not m.gated_mlp else 1) * m.hidden


def output_params(m: ModelSpec) -> int:
    """Output (logit) layer parameters not shared with the input embedding."""
    return 0 if m.tied_embeddings else m.vocab * m.hidden


def total_params(m: ModelSpec) -> int:
    """Total parameter count of the model."""
    return m.layers * params_per_layer(m) + embedding_params(m) + output_params(m)


def attention_flops_per_token(m: ModelSpec, context: int) -> float:
    """Score and value matmul FLOPs of one layer for one token attending to ``context`` keys
    (``2 x 2 x context x heads x head size``)."""
    return 4.0 * context * q_dim(m)


def layer_forward_flops_per_token(m: ModelSpec, context: int | None = None) -> float:
    """Forward FLOPs of one layer per token (2 per multiply-add), context defaults to seq_len.

    The attention term counts the full (non-causal) score matrix, as Megatron's formulas do.
    """
    ctx = m.seq_len if context is None else context
    return 2.0 * matmul_params_per_layer(m) + attention_flops_per_token(m, ctx)


def logits_flops_per_token(m: ModelSpec) -> float:
    """Forward FLOPs of the output layer per token."""
    return 2.0 * m.vocab * m.hidden


def forward_flops_per_token(m: ModelSpec, context: int | None = None) -> float:
    """Forward FLOPs per token of the whole model."""
    return m.layers * layer_forward_flops_per_token(m, context) + logits_flops_per_token(m)


def training_flops_per_token(m: ModelSpec, recompute: str = "none") -> float:
    """Hardware FLOPs per trained token: forward + backward (2x) + recomputation.

    ``recompute`` is ``none`` (model FLOPs, Megatron's 72 coefficient), ``selective`` (the
    attention score/value part is recomputed) or ``full`` (one more forward of every layer,
    Megatron's 96 coefficient).

    Examples
    --------
    >>> from accelkb.perf.specs import ModelSpec
    >>> m = ModelSpec(name="x", layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=256,
    ...               vocab=100, seq_len=32, gated_mlp=False)
    >>> training_flops_per_token(m, "full") > training_flops_per_token(m)
    True
    """
    base = 3.0 * forward_flops_per_token(m)
    if recompute == "full":
        return base + m.layers * layer_forward_flops_per_token(m)
    if recompute == "selective":
        return base + m.layers * attention_flops_per_token(m, m.seq_len)
    return base


def model_flops_per_token(m: ModelSpec) -> float:
    """Model FLOPs per trained token (no recomputation), the numerator of MFU."""
    return training_flops_per_token(m, "none")


def weight_bytes_per_layer(m: ModelSpec, precision: str = "bf16") -> float:
    """Bytes of one layer's weights at ``precision``."""
    return params_per_layer(m) * BYTES_PER[precision]


def kv_bytes_per_token_per_layer(m: ModelSpec, precision: str = "bf16") -> float:
    """KV-cache bytes one token adds to one layer (keys and values)."""
    return 2.0 * kv_dim(m) * BYTES_PER[kv_precision(precision)]
