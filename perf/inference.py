"""Inference: prefill (time to first token) and per-token decode with tensor/pipeline parallelism.

Weights and the KV cache are placed on the chip's tiers fastest first (SRAM-only machines must
hold everything in SRAM; HBM+DDR machines spill to DDR). Every operation is a roofline against the
bandwidth of the tiers that hold its data. One decode step runs every layer in sequence for the
whole batch: ``L x (layer + 2 tensor-parallel all-reduces) + logits + (pp - 1) hops``; with
``pipelined=True`` the ``pp`` stages work on ``pp`` batches at once, raising aggregate throughput
to one batch per time of the slowest stage; every stage then holds the KV cache of all ``pp``
batches for its layers.

The decode breakdown separates the bandwidth part (weights and KV read at the tier rate), the
compute part, the fixed per-operation part and the communication latency, so the answer says
whether a machine is bandwidth-, compute- or latency-bound.

Examples
--------
>>> cfg = InferenceConfig(tp=8, batch=1, prompt_len=128, output_len=128)
>>> cfg.precision
'bf16'
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from accelkb.errors import InfeasibleError, InputError

from .calibration import Calibration, at_precision
from .compute import (
    Op,
    fuse_elementwise,
    layer_forward_ops,
    logits_ops,
    op_time,
    peak_for,
    with_attention_efficiency,
)
from .energy import run_power
from .execution import dataflow, static
from .memory import (
    kv_cache_bytes,
    place,
    serving_capacity,
    serving_engine_applies,
    stage_params,
    tier_totals,
)
from .scheduled import CollectiveMode, CollectiveTiming, fused_timing, timed_collective
from .shapes import BYTES_PER, forward_flops_per_token
from .specs import ChipSpec, MemoryTierSpec, ModelSpec, SystemSpec, check_tensor_parallel
from .uncertainty import WithUncertainty


class InferenceConfig(BaseModel):
    """Layout and request shape of one inference estimate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Field(default=1, ge=1, description="tensor-parallel degree")
    pp: int = Field(default=1, ge=1, description="pipeline-parallel degree (stages)")
    batch: int = Field(default=1, ge=1, description="concurrent sequences (users)")
    prompt_len: int = Field(default=128, ge=1, description="input tokens per sequence")
    output_len: int = Field(default=128, ge=1, description="generated tokens per sequence")
    precision: Literal["fp32", "fp16", "bf16", "fp8", "int8", "fp4"] = Field(
        default="bf16", description="weight and arithmetic precision (fp4: the KV cache stays "
        "in fp8, accelkb.perf.shapes.KV_PRECISION)")
    pipelined: bool = Field(default=False, description="keep pp batches in flight so every "
                            "stage is busy (aggregate throughput x pp, same per-user latency)")
    queue_when_full: bool = Field(default=False, description="when the batch's KV cache does "
                                  "not fit, run it in waves of the largest batch that fits (as "
                                  "serving engines do) instead of failing")
    collectives: CollectiveMode | None = Field(
        default=None, description="where collective times come from: 'schedule' (synthesized "
        "collision-free schedules where the solver can), 'alpha-beta', or 'auto' (schedules on "
        "compiler-scheduled networks only); None: accelkb.perf.scheduled.DEFAULT_MODE")


class InferenceEstimate(WithUncertainty):
    """Estimated inference latency, throughput, memory and energy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="model name")
    system: str = Field(description="system name")
    chips: int = Field(description="chips used (tp x pp)")
    config: InferenceConfig = Field(description="the configuration estimated")
    ttft_s: float = Field(description="time to first token (prefill of the batch), s")
    decode_s_per_token: float = Field(description="time of one decode step, s")
    tokens_per_s_per_user: float = Field(description="output tokens per second for one user")
    decode_floor_s: float = Field(default=0.0, description="least time a decode step can take: "
                                  "every weight read once from the tier that holds it at that "
                                  "tier's peak bandwidth, no efficiency, compute or "
                                  "communication (a physical bound that ranges respect)")
    tokens_per_s: float = Field(description="aggregate output tokens per second in decode")
    request_latency_s: float = Field(description="prefill + all decode steps of the batch "
                                     "(times the waves), s")
    waves: int = Field(default=1, description="batches run one after another because the KV "
                       "cache of the whole batch does not fit (queue_when_full)")
    end_to_end_tokens_per_s: float = Field(description="output tokens per second including "
                                           "prefill: batch x output_len (x pp batches in flight "
                                           "when pipelined) / request latency")
    model_flops_per_s_per_chip: float = Field(description="useful FLOPs per second per chip in "
                                              "decode")
    mfu: float = Field(description="decode model FLOPs utilisation of dense peak")
    activity: float = Field(description="decode FLOP/s over achievable FLOP/s, drives power")
    bound: str = Field(description="what limits decode: bandwidth, compute or latency")
    breakdown: dict[str, float] = Field(description="decode step split by cause, s; prefill_s "
                                        "for the prefill")
    memory_per_chip_bytes: dict[str, float] = Field(description="bytes per chip by memory tier")
    memory_breakdown_bytes: dict[str, float] = Field(description="bytes per chip by category")
    placement: dict[str, dict[str, float]] = Field(description="bytes per tier per category")
    power_w: float | None = Field(description="average power of the chips used, W")
    power_basis: str | None = Field(default=None, description="the full-power figure power_w "
                                    "scales by activity (which knowledge-base property)")
    joules_per_token: float | None = Field(description="energy per generated token, J "
                                           "(decode)")
    layout_note: str | None = Field(default=None, description="how the parts of the layout the "
                                    "user did not give were chosen (None: as given)")
    end_to_end_joules_per_token: float | None = Field(
        default=None, description="energy per generated token with the prefill's, J: prefill "
        "at its own activity plus every decode step, over batch x output_len tokens (the basis "
        "of end_to_end_tokens_per_s, which cost is priced on)")
    collectives: SkipValidation[dict[str, CollectiveTiming]] = Field(
        default_factory=dict, description="each collective of the estimate by role (decode_tp_"
        "all_reduce, decode_pipeline_hop, prefill_...): its time and source (schedule or "
        "alpha-beta, with the schedule's steps, bound and status or the fallback reason)")


def _effective_bw(placement: dict[str, dict[str, float]], tiers: dict[str, MemoryTierSpec],
                  item: str) -> float:
    """Bandwidth at which ``item`` streams when split over tiers (bytes / sum of times)."""
    total, secs = 0.0, 0.0
    for kind, content in placement.items():
        b = content.get(item, 0.0)
        total += b
        secs += b / tiers[kind].bandwidth_bytes_per_s
    return total / secs if secs > 0 else next(iter(tiers.values())).bandwidth_bytes_per_s


def estimate(model: ModelSpec, system: SystemSpec, cfg: InferenceConfig,
             cal: Calibration) -> InferenceEstimate:
    """Estimate prefill and decode of ``model`` on ``system`` with ``cfg``.

    Raises
    ------
    InputError
        If the layout does not divide the model, or a request is longer than the model's
        context (``ModelSpec.seq_len``: Llama 2 was trained on 4,096 tokens, and a 100,000-token
        prompt was estimated as if it ran).
    InfeasibleError
        If it does not fit the chips' memory (with ``queue_when_full``: if not even one
        sequence fits).
    """
    if cfg.prompt_len + cfg.output_len > model.seq_len:
        raise InputError(f"expected prompt + output within the {model.seq_len:,}-token context "
                         f"of '{model.name}', got {cfg.prompt_len:,} + {cfg.output_len:,} = "
                         f"{cfg.prompt_len + cfg.output_len:,}")
    if not cfg.queue_when_full:
        return _estimate(model, system, cfg, cal)
    e = float(BYTES_PER[cfg.precision])
    have = serving_capacity(system.chip, cal)
    weights = stage_params(model, cfg.tp, cfg.pp) * e
    per_seq = kv_cache_bytes(model, 1, cfg.prompt_len + cfg.output_len, cfg.tp, cfg.pp,
                             cfg.precision) * (cfg.pp if cfg.pipelined else 1)  # per batch slot
    fit = int((have - weights) // per_seq) if have > weights else 0
    if fit < 1:
        return _estimate(model, system, cfg.model_copy(update={"batch": 1}), cal)  # raises
    run = min(cfg.batch, fit)
    waves = math.ceil(cfg.batch / run)
    est = _estimate(model, system, cfg.model_copy(update={"batch": run}), cal)
    latency = waves * est.request_latency_s
    return est.model_copy(update={
        "config": cfg, "waves": waves, "request_latency_s": latency,
        "end_to_end_tokens_per_s": cfg.batch * cfg.output_len * (
            cfg.pp if cfg.pipelined else 1) / latency})


def _estimate(model: ModelSpec, system: SystemSpec, cfg: InferenceConfig,
              cal: Calibration) -> InferenceEstimate:
    tp, pp, b = cfg.tp, cfg.pp, cfg.batch
    check_tensor_parallel(model, tp)
    if pp > model.layers:
        raise InputError(f"expected pp <= {model.layers} layers, got pp={pp}")
    chips = tp * pp
    if chips > system.chips:
        raise InputError(f"expected tp x pp <= {system.chips} chips of '{system.name}', got "
                         f"{tp} x {pp} = {chips}")
    chip, levels = system.chip, system.levels
    cal = at_precision(cal, cfg.precision, chip.vendor,
                       chip.achievable_fraction(cfg.precision)).model_copy(update={
        "kernel_overhead_s": cal.compiled_op_overhead_s if chip.compiled
        else cal.graph_op_overhead_s})
    e = float(BYTES_PER[cfg.precision])
    peak = peak_for(chip, cfg.precision)
    ctx_max = cfg.prompt_len + cfg.output_len
    weights = stage_params(model, tp, pp) * e
    concurrent = pp if cfg.pipelined else 1  # batches in flight: each stage holds the KV
    kv = kv_cache_bytes(model, b * concurrent, ctx_max, tp, pp, cfg.precision)  # of them all
    flow = dataflow.applies(chip)  # fused streaming-dataflow decoder (SambaNova RDU)
    _check_serving_budget(chip, weights, kv, cal)
    placement = place([("kv_cache", kv), ("weights", weights)],
                      dataflow.weight_tiers(chip) if flow else chip)
    tiers: dict[str, MemoryTierSpec] = {t.kind: t for t in chip.memory_tiers}
    bw_w = _effective_bw(placement, tiers, "weights")
    bw_kv = _effective_bw(placement, tiers, "kv_cache")

    # --- decode: one token for each of b sequences, at the average context -------------------
    ctx = cfg.prompt_len + cfg.output_len // 2
    ops = layer_forward_ops(model, b, 1, ctx, tp, False, cfg.precision, fused_attention=True)
    lg = logits_ops(model, b, tp, cfg.precision)
    dcal = dataflow.decode_calibration(cal) if flow else static.static_calibration(cal) \
        if static.applies(chip) else cal
    t_layer, parts = _decode_ops_time(ops, peak, bw_w, bw_kv, dcal)
    t_logits, lparts = _decode_ops_time(lg, peak, bw_w, bw_kv, dcal)
    if flow:
        section = dataflow.section_s(b, cal)
        t_layer, parts["overhead"] = t_layer + section, parts["overhead"] + section
    L = model.layers
    msg = b * model.hidden * 2.0
    coll: dict[str, CollectiveTiming] = {}
    mode = cfg.collectives or (static.COLLECTIVES if static.applies(chip) else None)
    ar = hop = 0.0
    if tp > 1 and flow:
        coll["decode_tp_all_reduce"] = fused_timing("all_reduce", msg, tp, levels[0].name,
                                                    dataflow.NOTE)
    elif tp > 1:
        ar, coll["decode_tp_all_reduce"] = timed_collective("all_reduce", msg, tp, levels, cal,
                                                            mode=mode)
    if pp > 1:
        hop, coll["decode_pipeline_hop"] = timed_collective("p2p", msg, 2, levels, cal,
                                                            stride=tp, mode=mode)
    decode = L * (t_layer + 2 * ar) + t_logits + (pp - 1) * hop
    breakdown = {k: L * parts[k] + lparts[k] for k in parts}
    breakdown["tensor_parallel_comm"] = L * 2 * ar
    breakdown["pipeline_hops"] = (pp - 1) * hop

    # --- prefill: the whole prompt of every sequence ----------------------------------------
    pops = with_attention_efficiency(
        layer_forward_ops(model, b, cfg.prompt_len, cfg.prompt_len, tp, False, cfg.precision,
                          fused_attention=True), chip.fused_attention_efficiency)
    if chip.fuses_elementwise:  # XLA: norms and activations ride on the matrix products
        pops = fuse_elementwise(pops)
    t_pl = sum(op_time(o, peak, bw_w, cal) for o in pops)
    pmsg = b * cfg.prompt_len * model.hidden * 2.0
    par = phop = 0.0
    if tp > 1:
        par, coll["prefill_tp_all_reduce"] = timed_collective("all_reduce", pmsg, tp, levels,
                                                              cal, mode=mode)
    if pp > 1:
        phop, coll["prefill_pipeline_hop"] = timed_collective("p2p", pmsg, 2, levels, cal,
                                                              stride=tp, mode=mode)
    prefill = L * (t_pl + 2 * par) + t_logits + (pp - 1) * phop
    breakdown["prefill_s"] = prefill

    if concurrent > 1:  # the stage with the most layers (or the output layer) sets the pace:
        per_layer = t_layer + 2 * ar  # each batch gets a token every pp turns of that stage
        stage = max(math.ceil(L / pp) * per_layer, L // pp * per_layer + t_logits) + hop
        decode = max(decode, pp * stage)
    tokens_per_s = b * concurrent / decode
    latency = prefill + (cfg.output_len - 1) * decode
    useful = forward_flops_per_token(model, ctx) * tokens_per_s
    lat_part = breakdown["overhead"] + breakdown["tensor_parallel_comm"] + \
        breakdown["pipeline_hops"]
    shares = {"bandwidth": breakdown["memory"], "compute": breakdown["compute"],
              "latency": lat_part}
    activity = useful / chips / (peak * cal.matmul_efficiency)
    power, power_basis = run_power(system, chips, activity, cal)
    prefill_flops = forward_flops_per_token(model, cfg.prompt_len // 2) * b * cfg.prompt_len
    p_power, _ = run_power(system, chips, prefill_flops / max(prefill, 1e-12) / chips
                           / (peak * cal.matmul_efficiency), cal)
    # one request's window: its prefill at the prefill's power (pipelined, the pp batches'
    # prefills each hold a stage for prefill / pp), then decode at the decode's power
    request_j = None if power is None or p_power is None else \
        p_power * prefill + power * (latency - prefill)
    return InferenceEstimate(
        model=model.name, system=system.name, chips=chips, config=cfg, ttft_s=prefill,
        decode_s_per_token=decode, tokens_per_s_per_user=1.0 / decode, tokens_per_s=tokens_per_s,
        decode_floor_s=pp * sum(c.get("weights", 0.0) / tiers[k].bandwidth_bytes_per_s
                                for k, c in placement.items()),
        request_latency_s=latency,
        end_to_end_tokens_per_s=b * concurrent * cfg.output_len / latency,
        model_flops_per_s_per_chip=useful / chips, mfu=useful / chips / peak,
        activity=min(1.0, activity),
        bound=max(shares, key=lambda k: shares[k]), breakdown=breakdown,
        memory_per_chip_bytes=tier_totals(placement),
        memory_breakdown_bytes={"weights": weights, "kv_cache": kv}, placement=placement,
        power_w=power, power_basis=power_basis,
        joules_per_token=None if power is None else power / tokens_per_s,
        end_to_end_joules_per_token=None if request_j is None
        else request_j / (b * concurrent * cfg.output_len),
        collectives=coll,
    )


def _check_serving_budget(chip: ChipSpec, weights: float, kv: float, cal: Calibration) -> None:
    """Refuse a GPU layout whose weights and KV cache exceed what a serving engine gives them
    (:func:`accelkb.perf.memory.serving_capacity`), naming each part of the budget."""
    if not serving_engine_applies(chip):
        return
    budget = serving_capacity(chip, cal)
    if weights + kv <= budget:
        return
    total = sum(t.capacity_bytes for t in chip.memory_tiers)
    raise InfeasibleError(
        f"configuration does not fit: expected weights + KV cache within {budget / 1e9:.2f} GB "
        f"per chip ({chip.name}: a serving engine takes {cal.serving_memory_fraction:.0%} of "
        f"{total / 1e9:.2f} GB and keeps {cal.serving_reserve_bytes / 1e9:.2f} GB of that for "
        "activations, CUDA graphs and communication buffers; calibration.json "
        "serving_memory_fraction, serving_reserve_bytes), got weights "
        f"{weights / 1e9:.2f} GB + KV cache {kv / 1e9:.2f} GB = {(weights + kv) / 1e9:.2f} GB; "
        "use a smaller batch or context, more tensor- or pipeline-parallel chips, or a lower "
        "precision")


def _decode_ops_time(ops: list[Op], peak: float, bw_w: float, bw_kv: float,
                     cal: Calibration) -> tuple[float, dict[str, float]]:
    """Roofline time of decode operations and its split into memory/compute/overhead."""
    total = 0.0
    parts = {"memory": 0.0, "compute": 0.0, "overhead": 0.0}
    for o in ops:
        bw = bw_kv if o.name == "attention" else bw_w
        t_mem = o.bytes / (bw * cal.memory_efficiency)
        t_cmp = o.flops / (peak * cal.matmul_efficiency) if o.kind == "matmul" else 0.0
        if t_mem >= t_cmp:
            parts["memory"] += t_mem
        else:
            parts["compute"] += t_cmp
        parts["overhead"] += o.kernels * cal.kernel_overhead_s
        total += max(t_mem, t_cmp) + o.kernels * cal.kernel_overhead_s
    return total, parts


def physical_bounds(est: InferenceEstimate) -> dict[str, tuple[float | None, float | None]]:
    """(least, most) each headline figure of ``est`` can physically be, from its weight-read
    floor (:attr:`InferenceEstimate.decode_floor_s`): ranges taken from residuals must not pass
    them (a Gaudi 3 decode range reached 0.26 ms per token where reading the weights takes
    0.55 ms)."""
    floor = est.decode_floor_s
    if floor <= 0:
        return {}
    in_flight = est.config.batch * (est.config.pp if est.config.pipelined else 1)
    return {"decode_s_per_token": (floor, None), "ttft_s": (floor, None),
            "tokens_per_s_per_user": (None, 1.0 / floor),
            "tokens_per_s": (None, in_flight / floor)}
