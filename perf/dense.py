"""Training time of a non-transformer network (e.g. ResNet-50) from its published totals.

The transformer shapes cannot describe a convolutional network, so this path takes the network's
parameter count, forward FLOPs per sample and weighted-layer count and applies the same roofline
and collective model: ``3 x F x samples / (peak x matmul_efficiency)`` per chip, three kernels
(convolution, normalisation, activation) per layer per pass at the execution's per-operation
cost (on a GPU the host's launch time, which shows only where it exceeds the device's work),
a data-parallel all-reduce of 16-bit gradients and an optimizer step over the weights.
Batch normalisation and activation stream each convolution's output through the memory that
holds activations (:data:`NORM_ACT_FORWARD` + :data:`NORM_ACT_BACKWARD` accesses per element):
on a GPU's HBM that is a large share of a ResNet-50 step, in an IPU's SRAM a small one, and
where the compiler fuses them into the convolutions (XLA on TPU: ``ChipSpec.fuses_elementwise``)
none.
With the network's convolutions as implicit matrix products (``gemms``) each one is timed on the
roofline, and on a bulk-synchronous chip (IPU) with its exchange phase
(:func:`accelkb.perf.compute.exchange_time`). ``recompute`` re-runs the forward pass in the
backward pass (Graphcore's ResNet-50 MLPerf configuration recomputes; NVIDIA's does not).

Examples
--------
>>> w = DenseWorkload(name="toy", params=1000, flops_per_sample_forward=1e6, layers=2)
>>> w.layers
2
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InfeasibleError, InputError

from .calibration import Calibration, at_precision
from .collectives import collective_time
from .compute import _gemm, ops_exchange_time, ops_time, peak_for
from .memory import sram_only_capacity
from .shapes import BYTES_PER
from .specs import SystemSpec

#: Memory accesses per convolution output element of a fused batch-norm + ReLU kernel in one
#: training step: forward 3 (read for the batch statistics; read, normalise, activate, write),
#: backward 5 (read dy and x for the dgamma/dbeta reductions; read dy and x, write dx). A count
#: of the kernel's passes, not a fitted number.
NORM_ACT_FORWARD = 3
NORM_ACT_BACKWARD = 5


class DenseWorkload(BaseModel):
    """A network known by its totals (parameters, forward FLOPs per sample, weighted layers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="short name, e.g. 'resnet50'")
    params: int = Field(ge=1, description="parameter count")
    flops_per_sample_forward: float = Field(gt=0, description="forward FLOPs per sample")
    layers: int = Field(ge=1, description="weighted layers (convolutions + fully connected)")
    gemms: tuple[tuple[int, int, int], ...] = Field(
        default=(), description="the weighted layers as implicit matrix products (m per sample, "
        "k, n): output pixels x (input channels x kernel area) x output channels; empty: time "
        "the FLOP total at the matmul efficiency")
    checkpoint_elements: int = Field(
        default=0, ge=0, description="elements per sample kept between passes when the "
        "backward pass recomputes the forward (the residual blocks' outputs); 0: unknown")


def bottleneck_resnet_gemms(blocks: tuple[int, ...] = (3, 4, 6, 3), image: int = 224,
                            classes: int = 1000) -> tuple[tuple[int, int, int], ...]:
    """Implicit-GEMM shapes (m per sample, k, n) of a bottleneck ResNet (He et al. 2016, Table 1:
    7x7/2 stem, max-pool, stages of 1x1-3x3-1x1 blocks of widths 64..512 with 4x expansion and a
    projection shortcut in each stage's first block, stride 2 in stages 2-4, fully connected).

    >>> g = bottleneck_resnet_gemms()
    >>> len(g), round(sum(2 * m * k * n for m, k, n in g) / 1e9, 2)
    (54, 8.18)
    """
    side = image // 2
    out = [(side * side, 3 * 49, 64)]
    side //= 2
    cin = 64
    for stage, count in enumerate(blocks):
        width = 64 * 2 ** stage
        for j in range(count):
            stride = 2 if (j == 0 and stage > 0) else 1
            o = side // stride
            out += [(side * side, cin, width), (o * o, 9 * width, width), (o * o, width, 4 * width)]
            if j == 0:
                out.append((o * o, cin, 4 * width))
            side, cin = o, 4 * width
    out.append((1, cin, classes))
    return tuple(out)


def bottleneck_block_outputs(blocks: tuple[int, ...] = (3, 4, 6, 3), image: int = 224) -> int:
    """Elements per sample of every residual block's output (what recomputation keeps).

    >>> bottleneck_block_outputs()
    5519360
    """
    side = image // 4
    total = 0
    for stage, count in enumerate(blocks):
        if stage:
            side //= 2
        total += count * side * side * 4 * 64 * 2 ** stage
    return total


def working_set(work: DenseWorkload, micro_batch: int, recompute: bool,
                precision: str = "fp16") -> dict[str, float]:
    """Bytes a data-parallel replica holds at once in its backward pass: 16-bit weights and
    gradients of the whole network, and the activations kept for backward. Without
    recomputation that is two tensors per weighted layer (its output, which normalisation's
    backward needs, and the activated output the next layer's weight gradient needs); with it,
    the residual blocks' outputs plus one layer's two tensors. Momentum, code and exchange
    buffers come on top, so a check against it is necessary, not sufficient. Empty without
    ``gemms`` (the shapes are unknown).

    >>> w = DenseWorkload(name="t", params=10, flops_per_sample_forward=1.0, layers=1,
    ...                   gemms=((4, 3, 2),))
    >>> working_set(w, 1, False)
    {'weights': 20.0, 'gradients': 20.0, 'activations': 32.0}
    """
    if not work.gemms:
        return {}
    e = float(BYTES_PER[precision])
    outputs = [m * n for m, _, n in work.gemms]
    kept = (work.checkpoint_elements + 2 * max(outputs)) if recompute else 2 * sum(outputs)
    return {"weights": 2.0 * work.params, "gradients": 2.0 * work.params,
            "activations": float(kept * micro_batch) * e}


class DenseTrainingEstimate(BaseModel):
    """Step time and throughput of data-parallel training of a :class:`DenseWorkload`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step_time_s: float = Field(description="time of one optimizer step, s")
    samples_per_s: float = Field(description="trained samples per second, whole system")
    breakdown: dict[str, float] = Field(description="step time by component, s")
    activity: float = Field(default=1.0, description="compute share of the step, drives power")
    working_set_bytes: float | None = Field(default=None, description="bytes held at once "
                                            "(:func:`working_set`); None when shapes unknown")


def estimate_dense_training(work: DenseWorkload, system: SystemSpec, chips: int,
                            global_batch: int, cal: Calibration,
                            precision: str = "fp16", recompute: bool = False,
                            micro_batch: int | None = None) -> DenseTrainingEstimate:
    """Data-parallel training step of ``work`` on ``chips`` chips of ``system``.

    Raises
    ------
    InputError
        If the batch does not split evenly over the chips or the system is too small.
    InfeasibleError
        If the working set of a micro-batch does not fit the memory it must live in.
    """
    if chips > system.chips:
        raise InputError(f"expected at most {system.chips} chips of '{system.name}', got {chips}")
    if global_batch % chips:
        raise InputError(f"expected global_batch divisible by {chips} chips, got {global_batch}")
    chip = system.chip
    cal = at_precision(cal, precision, chip.vendor, chip.achievable_fraction(precision))
    samples_per_chip = global_batch // chips
    if micro_batch is not None and (micro_batch < 1 or samples_per_chip % micro_batch):
        raise InputError(f"expected micro_batch to divide the {samples_per_chip} samples per "
                         f"chip, got {micro_batch}")
    held = working_set(work, micro_batch or samples_per_chip, recompute, precision)
    sram = sram_only_capacity(chip)
    room = sram if sram is not None else sum(
        t.capacity_bytes for t in chip.memory_tiers if t.kind in ("sram", "hbm"))
    if held and room and sum(held.values()) > room:
        detail = ", ".join(f"{n} {b / 1e9:.2f} GB" for n, b in held.items())
        raise InfeasibleError(
            f"configuration does not fit: {work.name} (micro-batch {micro_batch or samples_per_chip}"
            f", recompute {'on' if recompute else 'off'}) holds {sum(held.values()) / 1e9:.2f} GB "
            f"at once ({detail}), more than the {room / 1e9:.2f} GB of "
            f"{'on-chip SRAM' if sram is not None else 'SRAM and HBM' if chip.tier('sram') else 'HBM'}"
            f" of {chip.name}; use a smaller "
            "micro-batch or recomputation")
    per_op = cal.compiled_op_overhead_s if chip.compiled else cal.kernel_overhead_s
    peak = peak_for(chip, precision)
    samples = global_batch // chips
    passes = 4.0 if recompute else 3.0
    mb = micro_batch or samples
    exchange = norm = 0.0
    if work.gemms:
        e = float(BYTES_PER[precision])
        # batch normalisation and activation stream every convolution's output through memory:
        # a fused BN + ReLU kernel reads it twice and writes once forward (statistics, then
        # normalise and activate; again when the forward pass is recomputed) and, backward,
        # reads dy and x for the dgamma/dbeta reductions, then reads both again and writes dx
        accesses = NORM_ACT_FORWARD * (2 if recompute else 1) + NORM_ACT_BACKWARD
        elements = sum(m * n for m, _, n in work.gemms if m > 1)
        if not chip.fuses_elementwise:  # XLA fuses them into the convolutions' reads and writes
            norm = accesses * e * elements * samples / (
                chip.memory_tiers[0].bandwidth_bytes_per_s * cal.memory_efficiency)
        ops = [_gemm("conv", m * mb, k, n, e) for m, k, n in work.gemms]
        bw = chip.memory_tiers[0].bandwidth_bytes_per_s
        no_fixed = cal.model_copy(update={"kernel_overhead_s": 0.0})  # counted in `overhead`
        compute = passes / 3.0 * ops_time(ops, peak, bw, no_fixed, scale=3.0, bsp=chip.bsp) \
            * samples / mb
        exchange = passes / 3.0 * ops_exchange_time(ops, chip.bsp, 3.0) * samples / mb
        compute -= exchange
    else:
        compute = passes * work.flops_per_sample_forward * samples / (peak * cal.matmul_efficiency)
    overhead = passes * 3 * work.layers * per_op * samples / mb
    if not chip.compiled:  # a host launches the kernels asynchronously: only what the device's
        overhead = max(0.0, overhead - compute - exchange - norm)  # work does not hide shows
    dp = collective_time("all_reduce", work.params * 2.0, chips, system.levels, cal)
    bw = chip.memory_tiers[0].bandwidth_bytes_per_s * cal.memory_efficiency
    optimizer = work.params * 26.0 / bw
    breakdown = {"compute": compute, "overhead": overhead, "data_parallel_comm": dp,
                 "optimizer": optimizer}
    if norm:
        breakdown["normalisation"] = norm
    if chip.bsp is not None:
        breakdown["exchange"] = exchange
    step = sum(breakdown.values())
    return DenseTrainingEstimate(step_time_s=step, samples_per_s=global_batch / step,
                                 breakdown=breakdown, activity=compute / step,
                                 working_set_bytes=sum(held.values()) if held else None)


def best_dense_layout(work: DenseWorkload, system: SystemSpec, chips: int, global_batch: int,
                      cal: Calibration, precision: str = "fp16",
                      max_micro_batch: int | None = None
                      ) -> tuple[DenseTrainingEstimate, int, bool]:
    """The fastest (estimate, micro-batch, recompute) over the micro-batches that divide each
    chip's samples (up to ``max_micro_batch``; default all of them, the whole share in one pass
    included, as GPU submissions run it), with and without recomputation, among those whose
    working set fits. On a GPU a small micro-batch leaves the host's launches exposed.

    Raises
    ------
    InputError
        If none fits; the message is that of the smallest micro-batch with recomputation.
    """
    if chips < 1 or global_batch % chips:
        raise InputError(f"expected a global batch divisible by {chips} chips, got "
                         f"{global_batch}")
    per_chip = global_batch // chips
    cap = per_chip if max_micro_batch is None else min(per_chip, max_micro_batch)
    options = [m for m in range(1, cap + 1) if per_chip % m == 0]
    best: tuple[DenseTrainingEstimate, int, bool] | None = None
    first_error: InputError | None = None
    for recompute in (True, False):
        for mb in options:
            try:
                est = estimate_dense_training(work, system, chips, global_batch, cal, precision,
                                              recompute, mb)
            except InputError as exc:
                first_error = first_error or exc
                continue
            if best is None or est.step_time_s < best[0].step_time_s:
                best = (est, mb, recompute)
    if best is None:
        raise first_error or InputError(f"expected a micro-batch for {per_chip} samples per chip")
    return best
