"""Training time of a non-transformer network (e.g. ResNet-50) from its published totals.

The transformer shapes cannot describe a convolutional network, so this path takes the network's
parameter count, forward FLOPs per sample and weighted-layer count and applies the same roofline
and collective model: ``3 x F x samples / (peak x matmul_efficiency)`` per chip, three kernels
(convolution, normalisation, activation) per layer per pass at the execution's per-operation
cost, a data-parallel all-reduce of 16-bit gradients and an optimizer step over the weights.

Examples
--------
>>> w = DenseWorkload(name="toy", params=1000, flops_per_sample_forward=1e6, layers=2)
>>> w.layers
2
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError

from .calibration import Calibration
from .collectives import collective_time
from .compute import peak_for
from .specs import SystemSpec


class DenseWorkload(BaseModel):
    """A network known by its totals (parameters, forward FLOPs per sample, weighted layers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="short name, e.g. 'resnet50'")
    params: int = Field(ge=1, description="parameter count")
    flops_per_sample_forward: float = Field(gt=0, description="forward FLOPs per sample")
    layers: int = Field(ge=1, description="weighted layers (convolutions + fully connected)")


class DenseTrainingEstimate(BaseModel):
    """Step time and throughput of data-parallel training of a :class:`DenseWorkload`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step_time_s: float = Field(description="time of one optimizer step, s")
    samples_per_s: float = Field(description="trained samples per second, whole system")
    breakdown: dict[str, float] = Field(description="step time by component, s")


def estimate_dense_training(work: DenseWorkload, system: SystemSpec, chips: int,
                            global_batch: int, cal: Calibration,
                            precision: str = "fp16") -> DenseTrainingEstimate:
    """Data-parallel training step of ``work`` on ``chips`` chips of ``system``.

    Raises
    ------
    InputError
        If the batch does not split evenly over the chips or the system is too small.
    """
    if chips > system.chips:
        raise InputError(f"expected at most {system.chips} chips of '{system.name}', got {chips}")
    if global_batch % chips:
        raise InputError(f"expected global_batch divisible by {chips} chips, got {global_batch}")
    chip = system.chip
    per_op = cal.graph_op_overhead_s if chip.compiled else cal.kernel_overhead_s
    peak = peak_for(chip, precision)
    samples = global_batch // chips
    compute = 3.0 * work.flops_per_sample_forward * samples / (peak * cal.matmul_efficiency)
    overhead = 3 * 3 * work.layers * per_op
    dp = collective_time("all_reduce", work.params * 2.0, chips, system.levels, cal)
    bw = chip.memory_tiers[0].bandwidth_bytes_per_s * cal.memory_efficiency
    optimizer = work.params * 26.0 / bw
    breakdown = {"compute": compute, "overhead": overhead, "data_parallel_comm": dp,
                 "optimizer": optimizer}
    step = sum(breakdown.values())
    return DenseTrainingEstimate(step_time_s=step, samples_per_s=global_batch / step,
                                 breakdown=breakdown)
