"""FP8 mixed-precision training: which work runs at 8 bits and what the casts cost.

In the FP8 recipe of Transformer Engine (Micikevicius et al. 2022, arXiv:2209.05433; the recipe
of MLPerf Training's FP8 submissions and of MosaicML's ``amp_fp8``) only the four linear layers of
a transformer layer run their products on FP8 operands, in all three GEMMs (forward, data
gradient, weight gradient). Everything else stays 16-bit: attention (the fused kernel runs at
16 bits in training), norms, activations, dropout and residuals, the output layer, the
activations kept for the backward pass, the model's weights (an FP8 copy is made each
micro-batch) and the tensor-parallel messages.

The FP8 operands are made by extra passes over memory: each GEMM input is read in 16 bits and
written in FP8 twice, as is and transposed (Hopper's FP8 GEMMs take both operands K-major, so
the weight-gradient GEMM needs the transposes): 2 + 1 + 1 = 4 bytes per element. The forward
pass casts its input and the weight of each linear layer, the backward pass the output
gradient its two GEMMs read: 4 x (input + weight + output) bytes per layer and micro-batch.
No constant is fitted: the passes run at the memory roofline like any stream.

Examples
--------
>>> from accelkb.perf.compute import Op
>>> gemm = Op("mlp_in", "matmul", 2 * 8 * 4 * 16, 2 * (8 * 4 + 4 * 16 + 8 * 16), dims=(1, 8, 4, 16))
>>> att = Op("attention", "matmul", 1e6, 1e3, dims=(2, 8, 4, 8), efficiency=0.5)
>>> out = fp8_training_ops([gemm, att], efficiency16=0.7, peak16=1e15, peak8=2e15)
>>> out[0].elem_bytes, out[0].bytes, out[1].efficiency, round(out[2].bytes, 1)
(1.0, 352.0, 0.25, 298.7)
"""

from __future__ import annotations

from dataclasses import replace

from accelkb.perf.compute import Op

#: The linear layers of a transformer layer (accelkb.perf.compute.layer_forward_ops) that run
#: on FP8 operands; every other operation stays 16-bit.
FP8_GEMMS = ("qkv", "attn_out", "mlp_in", "mlp_out")
#: Bytes per element of a cast pass: read 16 bits, write the FP8 copy and its transpose.
CAST_BYTES = 4.0


def fp8_training_ops(ops: list[Op], efficiency16: float, peak16: float,
                     peak8: float) -> list[Op]:
    """A layer's forward operations (built at 16 bits) as FP8 mixed-precision training runs
    them, timed against the 8-bit peak ``peak8``: the linear layers read FP8 operands and write
    16-bit outputs; every other product (attention, the output layer) keeps its 16-bit rate,
    its own efficiency (a fused attention kernel's) or ``efficiency16`` of ``peak16``; one
    ``fp8_cast`` stream op carries the casts of the linear layers' inputs and weights (the
    backward pass, modelled as twice the forward, then casts as many output-gradient bytes).
    """
    out, cast = [], 0.0
    for op in ops:
        if op.name in FP8_GEMMS and op.dims is not None:
            batch, m, k, n = op.dims
            out.append(replace(op, bytes=batch * (m * k + k * n) + 2.0 * batch * m * n,
                               elem_bytes=1.0))
            # forward: the input and the weight; backward: the output gradient. The op runs
            # in the forward (x1) and the backward (x2, as every op): a third of the total each
            cast += CAST_BYTES * batch * (m * k + k * n + m * n) / 3.0
        elif op.kind == "matmul":  # 16-bit work under the 8-bit peak
            out.append(replace(op, efficiency=(op.efficiency or efficiency16) * peak16 / peak8))
        else:
            out.append(op)
    return [*out, Op("fp8_cast", "stream", 0.0, cast, kernels=len(FP8_GEMMS))] if cast else out
