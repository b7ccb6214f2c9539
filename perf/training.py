"""Training step time: compute, exposed communication, pipeline bubble, optimizer, offload.

One step of ``microbatches = global_batch / (dp x micro_batch)`` micro-batches on a
``tp x pp x dp`` grid (tensor parallel innermost, then pipeline, then data parallel):

``step = (microbatches + (pp - 1) / v) x t_mb + exposed_dp + optimizer + offload``

where ``t_mb`` is the slowest (last) stage's forward + backward (+ recompute) time for one
micro-batch, including its exposed tensor-parallel collectives and pipeline point-to-point
transfers, and ``(pp - 1) / v x t_mb`` is the 1F1B (interleaved: ``v`` chunks) bubble.

Examples
--------
>>> from accelkb.perf.specs import ModelSpec
>>> cfg = TrainingConfig(tp=8, pp=1, dp=1, micro_batch=4, global_batch=4)
>>> cfg.recompute
'none'
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from accelkb.errors import InputError

from .calibration import Calibration, at_precision
from .compute import (
    fuse_elementwise,
    layer_forward_ops,
    logits_ops,
    ops_exchange_time,
    ops_time,
    peak_for,
    recompute_ops,
    with_attention_efficiency,
)
from .energy import run_power
from .execution.fp8 import fp8_training_ops
from .memory import (
    activation_bytes,
    check_layer_fits,
    layer_working_set,
    model_state_bytes,
    place,
    sram_only_capacity,
    stage_params,
    tier_totals,
)
from .scheduled import CollectiveMode, CollectiveTiming, timed_collective
from .shapes import BYTES_PER, model_flops_per_token, training_flops_per_token
from .specs import ChipSpec, MemoryTierSpec, ModelSpec, SystemSpec, check_tensor_parallel
from .uncertainty import WithUncertainty


class TrainingConfig(BaseModel):
    """Parallel layout and options of one training run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Field(default=1, ge=1, description="tensor-parallel degree")
    pp: int = Field(default=1, ge=1, description="pipeline-parallel degree")
    dp: int | None = Field(default=None, ge=1, description="data-parallel degree; None: the "
                           "system's chips / (tp x pp)")
    micro_batch: int = Field(default=1, ge=1, description="sequences per micro-batch")
    global_batch: int = Field(default=1, ge=1, description="sequences per optimizer step")
    interleave: int = Field(default=1, ge=1, description="model chunks per pipeline stage "
                            "(interleaved 1F1B); 1 = plain 1F1B")
    recompute: Literal["none", "selective", "full"] = Field(
        default="none", description="activation recomputation")
    sequence_parallel: bool = Field(default=False, description="split norm/dropout work and "
                                    "activations over the tensor-parallel group")
    zero: Literal[0, 1, 2, 3] = Field(default=0, description="ZeRO stage (0: plain data parallel)")
    rts: bool = Field(default=False, description="replicated tensor sharding: optimizer state "
                      "sharded over replicas (as ZeRO-1)")
    dp_overlap: bool = Field(default=False, description="overlap data-parallel gradient "
                             "communication with the backward pass")
    fused_attention: bool = Field(default=False, description="FlashAttention-style fused kernel")
    precision: Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"] = Field(
        default="bf16", description="matmul precision (fp8: FP8 mixed precision, the linear "
        "layers' operands at the chip's 8-bit peak, the rest 16-bit, accelkb.perf.execution.fp8; int8: "
        "every product at the 8-bit peak, as INT8 quantized training such as Google's "
        "AQT does)")
    grad_bytes: float = Field(default=4.0, gt=0, description="bytes per gradient (4: fp32 "
                              "accumulation and reduction as in Megatron; 2: 16-bit)")
    offload_optimizer: bool = Field(default=False, description="keep the optimizer state in the "
                                    "slowest memory tier (or on the host)")
    seq_len: int | None = Field(default=None, ge=1, description="sequence length; None: the "
                                "model's")
    collectives: CollectiveMode | None = Field(
        default=None, description="where collective times come from: 'schedule' (synthesized "
        "collision-free schedules where the solver can), 'alpha-beta', or 'auto' (schedules on "
        "compiler-scheduled networks only); None: accelkb.perf.scheduled.DEFAULT_MODE")
    stage_layers: tuple[int, ...] | None = Field(
        default=None, description="transformer layers on each pipeline stage, first to last "
        "(Graphcore's layers_per_ipu); the slowest stage sets the pace: its layers, plus the "
        "output layer on the last stage. None: an even split, ceil(layers / pp) on the slowest "
        "stage, which holds the output layer")


class TrainingEstimate(WithUncertainty):
    """Estimated training step: times, throughput, utilisation, memory and energy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="model name")
    system: str = Field(description="system name")
    chips: int = Field(description="chips used (tp x pp x dp)")
    config: TrainingConfig = Field(description="the configuration estimated")
    layout_note: str | None = Field(default=None, description="how the parts of the layout the "
                                    "user did not give were chosen (None: as given)")
    step_time_s: float = Field(description="time of one optimizer step, s")
    elementwise_s: float = Field(default=0.0, description="of compute and recompute, the "
                                 "device time of the elementwise passes (norms, activations, "
                                 "softmax, dropout, casts, the loss), bound by memory bandwidth, "
                                 "s: what faster memory would shorten inside 'compute'")
    breakdown: dict[str, float] = Field(description="step time by component, s (sums to the "
                                        "step time)")
    tokens_per_s: float = Field(description="trained tokens per second, whole system")
    samples_per_s: float | None = Field(default=None, description="trained sequences per "
                                        "second (images for a ViT, whose tokens are patches)")
    model_flops_per_s_per_chip: float = Field(description="model FLOPs (no recompute) per "
                                              "second per chip")
    hardware_flops_per_s_per_chip: float = Field(description="executed FLOPs per second per "
                                                 "chip (with recompute)")
    mfu: float = Field(description="model FLOPs utilisation of dense peak")
    activity: float = Field(description="executed FLOP/s over achievable FLOP/s, drives power")
    hfu: float = Field(description="hardware FLOPs utilisation of dense peak")
    memory_per_chip_bytes: dict[str, float] = Field(description="bytes per chip by memory tier")
    memory_breakdown_bytes: dict[str, float] = Field(description="bytes per chip by category")
    placement: dict[str, dict[str, float]] = Field(description="bytes per tier per category")
    layer_working_set_bytes: float | None = Field(
        default=None, description="bytes one layer's backward pass holds at once (weights, "
        "gradients, activations of one micro-batch; a necessary bound, see "
        "memory.layer_working_set)")
    sram_only_bytes: float | None = Field(
        default=None, description="on-chip SRAM that working set must fit, on a chip that "
        "computes only from SRAM; None on chips with HBM")
    power_w: float | None = Field(description="average system power, W (None if unknown)")
    power_basis: str | None = Field(default=None, description="the full-power figure power_w "
                                    "scales by activity (which knowledge-base property)")
    energy_per_step_j: float | None = Field(description="energy of one step, J")
    joules_per_token: float | None = Field(description="energy per trained token, J")
    time_to_train_s: float | None = Field(default=None, description="time to train the "
                                          "requested number of tokens, s")
    energy_to_train_j: float | None = Field(default=None, description="energy to train the "
                                            "requested number of tokens, J")
    collectives: SkipValidation[dict[str, CollectiveTiming]] = Field(
        default_factory=dict, description="each collective of the step by role (tp_all_reduce, "
        "sp_all_gather, pipeline_p2p, dp_all_reduce, zero3_all_gather, zero3_reduce_scatter): "
        "its time and source (schedule or alpha-beta, with the schedule's steps, bound and "
        "status or the fallback reason)")


def stack_fuses_attention(chip: ChipSpec) -> bool:
    """Whether the software a user trains with today runs a fused attention kernel on ``chip``:
    chips that launch kernels do (FlashAttention in Megatron-core, Transformer Engine and
    PyTorch's scaled_dot_product_attention on NVIDIA and AMD GPUs; Gaudi's FusedSDPA); a
    compiled chip follows its compiler (``ChipSpec.fuses_elementwise``: XLA on TPUs). The
    defaults of a report's baseline and of the configuration solver, not of :class:`TrainingConfig`
    (published runs state what they used: Megatron's of 2021-2022 did not fuse).

    >>> from accelkb.perf.specs import ChipSpec, MemoryTierSpec
    >>> hbm = [MemoryTierSpec(kind="hbm", capacity_bytes=8e10, bandwidth_bytes_per_s=3e12)]
    >>> stack_fuses_attention(ChipSpec(name="gpu", peak_flops={"bf16": 1e15}, memory_tiers=hbm))
    True
    """
    return not chip.compiled or chip.fuses_elementwise


def weight_bytes(precision: str) -> float:
    """Bytes per stored weight in training: 16 bits under FP8 mixed precision (the FP8 copies
    are made per micro-batch, :mod:`accelkb.perf.execution.fp8`), else the precision's.

    >>> weight_bytes("fp8"), weight_bytes("fp32")
    (2.0, 4.0)
    """
    return float(BYTES_PER["bf16" if precision == "fp8" else precision])


def check_layout(model: ModelSpec, system: SystemSpec, cfg: TrainingConfig) -> tuple[int, int]:
    """Validate the layout; return (dp, microbatches per step).

    Raises
    ------
    InputError
        With "expected X, got Y" for every inconsistent choice.
    """
    check_tensor_parallel(model, cfg.tp)
    if cfg.pp * cfg.interleave > model.layers:
        raise InputError(f"expected pp x interleave <= {model.layers} layers, got "
                         f"{cfg.pp} x {cfg.interleave}")
    if cfg.stage_layers is not None and (len(cfg.stage_layers) != cfg.pp
                                         or sum(cfg.stage_layers) != model.layers
                                         or min(cfg.stage_layers) < 0):
        raise InputError(f"expected stage_layers to list pp={cfg.pp} non-negative layer counts "
                         f"summing to the {model.layers} layers of '{model.name}', got "
                         f"{list(cfg.stage_layers)}")
    dp = cfg.dp if cfg.dp is not None else system.chips // (cfg.tp * cfg.pp)
    if dp < 1:
        raise InputError(f"expected tp x pp <= {system.chips} chips of '{system.name}', got "
                         f"{cfg.tp} x {cfg.pp}")
    chips = cfg.tp * cfg.pp * dp
    if chips > system.chips:
        raise InputError(f"expected tp x pp x dp <= {system.chips} chips of '{system.name}', got "
                         f"{cfg.tp} x {cfg.pp} x {dp} = {chips}")
    if cfg.global_batch % (dp * cfg.micro_batch):
        given = cfg.model_fields_set
        how_dp = "" if cfg.dp is not None else f" (dp = {system.chips} chips / (tp x pp))"
        how_mb = "" if "micro_batch" in given else ", the default"
        got = (f"gbs={cfg.global_batch}" if "global_batch" in given else
               f"gbs={cfg.global_batch}, the default: give gbs=N in the parallel settings")
        raise InputError(f"expected gbs (global_batch) divisible by dp x mb = {dp} x "
                         f"{cfg.micro_batch}{how_mb} = {dp * cfg.micro_batch}{how_dp}, got {got}")
    m = cfg.global_batch // (dp * cfg.micro_batch)
    if cfg.interleave > 1 and m % cfg.pp:
        raise InputError(f"expected the {m} micro-batches per pipeline to be a multiple of "
                         f"pp={cfg.pp} for the interleaved schedule, got {m}")
    return dp, m


def _pace_stage(cfg: TrainingConfig, total_layers: int, t_layer: float,
                t_logits: float) -> tuple[int, bool]:
    """(layers, holds the output layer) of the pipeline stage that sets the pace: the slowest
    of ``layers x t_layer``, plus ``t_logits`` on the last stage, which computes the output
    layer. (Before 2026-12-05 the output layer was added to the fullest stage wherever it was.)

    >>> c = TrainingConfig(pp=4, stage_layers=(4, 3, 3, 0))
    >>> _pace_stage(c, 10, 1.0, 2.5), _pace_stage(c, 10, 1.0, 5.0)
    ((4, False), (0, True))
    >>> _pace_stage(TrainingConfig(pp=4), 10, 1.0, 2.5)  # even split: 3 layers and the head
    (3, True)
    """
    if not cfg.stage_layers:
        return math.ceil(total_layers / cfg.pp), True
    counts = cfg.stage_layers
    at = len(counts) - 1
    times = [n * t_layer + (t_logits if i == at else 0.0) for i, n in enumerate(counts)]
    k = max(range(len(counts)), key=lambda i: (times[i], i == at))
    return counts[k], k == at


def estimate(model: ModelSpec, system: SystemSpec, cfg: TrainingConfig, cal: Calibration,
             train_tokens: float | None = None) -> TrainingEstimate:
    """Estimate one training step of ``model`` on ``system`` with layout ``cfg``."""
    dp, m = check_layout(model, system, cfg)
    if cfg.seq_len is not None:
        model = model.model_copy(update={"seq_len": cfg.seq_len})
    chip, levels = system.chip, system.levels
    cal16 = at_precision(cal, "bf16", chip.vendor, chip.achievable_fraction("bf16"))
    cal = at_precision(cal, cfg.precision, chip.vendor, chip.achievable_fraction(cfg.precision))
    if chip.compiled:  # no kernel launches: the per-operation cost of a compiled graph
        cal = cal.model_copy(update={"kernel_overhead_s": cal.compiled_op_overhead_s})
    tp, pp, v, mb, s = cfg.tp, cfg.pp, cfg.interleave, cfg.micro_batch, model.seq_len
    sp = cfg.sequence_parallel and tp > 1
    peak = peak_for(chip, cfg.precision)
    # FP8 mixed precision: only the linear layers' operands are 8-bit (accelkb.perf.execution.fp8); the
    # weights, activations, other operations and messages stay 16-bit
    fp8 = cfg.precision == "fp8"
    op_precision = "bf16" if fp8 else cfg.precision
    e = weight_bytes(cfg.precision)

    # --- memory and placement -----------------------------------------------------------------
    params = stage_params(model, tp, pp)
    states = model_state_bytes(params, dp, 3 if cfg.zero == 3 else max(cfg.zero, int(cfg.rts)),
                               weight_bytes=e, grad_bytes=cfg.grad_bytes)
    # a compiler that fuses elementwise work into the matrix products (XLA on TPU) also keeps
    # the attention scores out of memory and gives norms, dropout and softmax no pass of their own
    fused = cfg.fused_attention or chip.fuses_elementwise
    acts = activation_bytes(model, mb, tp, pp, m, v, sp, cfg.recompute, fused)
    host_opt = cfg.offload_optimizer and len(chip.memory_tiers) == 1
    items = [("activations", acts), ("weights", states["weights"]),
             ("gradients", states["gradients"])]
    if not host_opt:
        items.append(("optimizer", states["optimizer"]))
    if cfg.offload_optimizer and not host_opt:
        fast = sum(t.capacity_bytes for t in chip.memory_tiers[:-1])
        used = sum(b for _, b in items[:3])
        items.insert(3, ("_reserved", max(0.0, fast - used)))
    working = layer_working_set(model, mb, tp, sp, e, cfg.grad_bytes)
    check_layer_fits(working, chip, f"'{model.name}' (micro-batch {mb}, tp={tp})")
    placement = place(items, chip)
    placement = {k: {n: b for n, b in d.items() if n != "_reserved"} for k, d in placement.items()}
    placement = {k: d for k, d in placement.items() if d}
    tiers: dict[str, MemoryTierSpec] = {t.kind: t for t in chip.memory_tiers}
    work_tier = next(iter(placement)) if placement else chip.memory_tiers[0].kind
    bw = tiers[work_tier].bandwidth_bytes_per_s

    # --- per micro-batch stage time -------------------------------------------------------------
    bsp = chip.bsp  # bulk-synchronous chip: exchange phases add to compute phases
    fwd = layer_forward_ops(model, mb, s, s, tp, sp, op_precision, fused)
    if fused:
        fwd = with_attention_efficiency(fwd, chip.fused_attention_efficiency)
    lg = logits_ops(model, mb * s, tp, op_precision)
    if fp8:
        peak16 = peak_for(chip, "bf16")
        fwd = fp8_training_ops(fwd, cal16.matmul_efficiency, peak16, peak)
        lg = fp8_training_ops(lg, cal16.matmul_efficiency, peak16, peak)
    if chip.fuses_elementwise or chip.spatial_dataflow:
        # XLA rides norms and activations on the matrix products; a spatial-dataflow compiler
        # (SambaNova's PCUs/PMUs, ak:SpatialDataflow) maps the layer's operators onto the chip
        # at once and keeps their intermediates in on-chip memory (kb:pre-dataflow-compiler,
        # Prabhakar et al. 2024): either way they add no pass over HBM
        fwd = fuse_elementwise(fwd)
    rc_ops = recompute_ops(fwd, cfg.recompute)
    host = not chip.compiled  # an eager framework launches kernels asynchronously from a host
    t_f_layer = ops_time(fwd, peak, bw, cal, bsp=bsp, overlap_host=host)
    t_b_layer = ops_time(fwd, peak, bw, cal, scale=2.0, bsp=bsp, overlap_host=host)
    t_rc_layer = ops_time(rc_ops, peak, bw, cal, bsp=bsp, overlap_host=host)
    t_logits = ops_time(lg, peak, bw, cal, scale=3.0, bsp=bsp, overlap_host=host)
    layers, head = _pace_stage(cfg, model.layers, t_f_layer + t_b_layer + t_rc_layer, t_logits)
    x_rc_layer = ops_exchange_time(rc_ops, bsp)
    exchange_mb = layers * (ops_exchange_time(fwd, bsp, 3.0) + x_rc_layer) \
        + (ops_exchange_time(lg, bsp, 3.0) if head else 0.0)
    compute_mb = layers * (t_f_layer + t_b_layer + t_rc_layer) + (t_logits if head else 0.0)
    device = cal.model_copy(update={"kernel_overhead_s": 0.0})  # their memory time, no launches
    elementwise_mb = layers * (
        ops_time([o for o in fwd if o.kind == "stream"], peak, bw, device, scale=3.0)
        + ops_time([o for o in rc_ops if o.kind == "stream"], peak, bw, device)) + (
        ops_time([o for o in lg if o.kind == "stream"], peak, bw, device, scale=3.0)
        if head else 0.0)
    recompute_mb = layers * (t_rc_layer - x_rc_layer)
    act_msg = mb * s * model.hidden * e
    tp_mb = 0.0
    coll: dict[str, CollectiveTiming] = {}
    mode = cfg.collectives
    if tp > 1:
        ar, coll["tp_all_reduce"] = timed_collective("all_reduce", act_msg, tp, levels, cal,
                                                     mode=mode)
        n_ar = 4 + (2 if cfg.recompute == "full" else 0)
        tp_mb = layers * n_ar * ar
        if sp:  # Megatron re-gathers the two sequence-parallel GEMM inputs in the backward pass
            ag, coll["sp_all_gather"] = timed_collective("all_gather", act_msg, tp, levels, cal,
                                                         mode=mode)
            tp_mb += layers * 2 * ag
    pp_mb = 0.0
    if pp > 1:
        p2p, coll["pipeline_p2p"] = timed_collective("p2p", act_msg / tp, 2, levels, cal,
                                                     stride=tp, mode=mode)
        pp_mb = 2.0 * v * p2p
    t_mb = compute_mb + tp_mb + pp_mb
    bubble = (pp - 1) / v * t_mb

    # --- data parallel / ZeRO ------------------------------------------------------------------
    stride = tp * pp
    dp_t = 0.0
    if dp > 1:
        if cfg.zero == 3:
            ag, coll["zero3_all_gather"] = timed_collective(
                "all_gather", params * e, dp, levels, cal, stride=stride, mode=mode)
            rs, coll["zero3_reduce_scatter"] = timed_collective(
                "reduce_scatter", params * cfg.grad_bytes, dp, levels, cal, stride=stride,
                mode=mode)
            dp_t = m * (2.0 * ag + rs)
            window = m * compute_mb
        else:
            dp_t, coll["dp_all_reduce"] = timed_collective(
                "all_reduce", params * cfg.grad_bytes, dp, levels, cal, stride=stride, mode=mode)
            window = layers * t_b_layer
        dp_exposed = max(0.0, dp_t - window) if cfg.dp_overlap else dp_t
    else:
        dp_exposed = 0.0

    # --- optimizer step and offload -------------------------------------------------------------
    shard = dp if (cfg.zero >= 1 or cfg.rts) else 1
    opt_params = params / shard
    opt_bytes = opt_params * (2 * 12.0 + cfg.grad_bytes + e)
    offload = 0.0
    if host_opt:
        if system.host_bandwidth_bytes_per_s_per_chip is None:
            raise InputError(f"expected a host bandwidth for optimizer offload on "
                             f"'{system.name}', got none in the system spec")
        offload = opt_params * (cfg.grad_bytes + e) / system.host_bandwidth_bytes_per_s_per_chip
        opt_t = 0.0
    else:
        opt_tier = _tier_of(placement, "optimizer", work_tier)
        opt_t = opt_bytes / (tiers[opt_tier].bandwidth_bytes_per_s * cal.memory_efficiency)
    for tier_kind, content in placement.items():
        if tier_kind == work_tier:
            continue
        tb = tiers[tier_kind].bandwidth_bytes_per_s * cal.memory_efficiency
        offload += (2.0 * m * content.get("weights", 0.0) + 2.0 * content.get("gradients", 0.0)
                    + 2.0 * content.get("activations", 0.0) * m) / tb

    steady = m * t_mb
    breakdown = {
        "compute": m * (compute_mb - recompute_mb - exchange_mb),
        "recompute": m * recompute_mb,
        "tensor_parallel_comm": m * tp_mb,
        "pipeline_p2p": m * pp_mb,
        "pipeline_bubble": bubble,
        "data_parallel_comm": dp_exposed,
        "optimizer": opt_t,
        "offload": offload,
    }
    if bsp is not None:  # only bulk-synchronous chips have an exchange phase
        breakdown["exchange"] = m * exchange_mb
    step = steady + bubble + dp_exposed + opt_t + offload
    tokens = cfg.global_batch * s
    chips = tp * pp * dp
    mflops = model_flops_per_token(model) * tokens
    hflops = training_flops_per_token(model, cfg.recompute) * tokens
    activity = hflops / step / chips / (peak * cal.matmul_efficiency)
    power, power_basis = run_power(system, chips, activity, cal)
    mem_cat = {"weights": states["weights"], "gradients": states["gradients"],
               "optimizer": 0.0 if host_opt else states["optimizer"], "activations": acts}
    return TrainingEstimate(
        model=model.name, system=system.name, chips=chips, config=cfg, step_time_s=step,
        breakdown=breakdown, tokens_per_s=tokens / step, samples_per_s=cfg.global_batch / step,
        elementwise_s=min(m * elementwise_mb, breakdown["compute"] + breakdown["recompute"]),
        model_flops_per_s_per_chip=mflops / step / chips,
        hardware_flops_per_s_per_chip=hflops / step / chips,
        mfu=mflops / step / chips / peak, hfu=hflops / step / chips / peak,
        activity=min(1.0, activity),
        memory_per_chip_bytes=tier_totals(placement), memory_breakdown_bytes=mem_cat,
        placement=placement, power_w=power,
        layer_working_set_bytes=sum(working.values()), sram_only_bytes=sram_only_capacity(chip),
        power_basis=power_basis,
        energy_per_step_j=None if power is None else power * step,
        joules_per_token=None if power is None else power * step / tokens,
        time_to_train_s=None if train_tokens is None else train_tokens / (tokens / step),
        energy_to_train_j=None if (train_tokens is None or power is None)
        else power * train_tokens / (tokens / step),
        collectives=coll,
    )


def _tier_of(placement: dict[str, dict[str, float]], item: str, default: str) -> str:
    best = default
    for kind, content in placement.items():
        if content.get(item, 0.0) > 0:
            best = kind
    return best
