"""The configuration a report starts from: the best layout a competent user would pick by hand.

Training: enumerate tensor-parallel degrees inside the fastest network level, pipeline degrees
that divide the layers, recompute modes, ZeRO-1 or not and micro-batch sizes, with the fused
attention kernel today's software runs on the chip (FlashAttention on GPUs), estimate each with
the performance model and keep the fastest one that fits (rules and the Z3 solver then look for
better). Inference: tensor parallelism inside the fastest level and pipeline stages across the
rest, at the workload's precision (or the cheapest the chip supports when the weights do not fit).

Examples
--------
>>> from accelkb.perf.from_kb import model_spec, system_spec
>>> cfg = best_training_config(model_spec("gpt3-13b"), system_spec("dgx-a100", chips=8), 256)
>>> cfg.estimate.chips
8
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from accelkb.errors import InfeasibleError, InputError
from accelkb.perf import (
    InferenceConfig,
    InferenceEstimate,
    ModelSpec,
    SystemSpec,
    TrainingConfig,
    TrainingEstimate,
    estimate_inference,
    estimate_training,
)
from accelkb.perf.training import stack_fuses_attention

#: Precisions tried for weights, cheapest last, per phase.
_TRAIN_PRECISIONS = ("bf16", "fp16")
INFER_PRECISIONS = ("bf16", "fp16", "int8")


@dataclass(frozen=True)
class TrainingBaseline:
    """The chosen layout and its estimate, plus how many layouts were tried and fitted."""

    config: TrainingConfig
    estimate: TrainingEstimate
    tried: int
    fitted: int


@dataclass(frozen=True)
class InferenceBaseline:
    config: InferenceConfig
    estimate: InferenceEstimate
    tried: int
    fitted: int


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def training_precision(system: SystemSpec, wanted: str | None) -> str:
    """The workload's precision if the chip has a peak for it, else its best 16-bit format."""
    peaks = system.chip.peak_flops
    if wanted in peaks and wanted in ("bf16", "fp16", "fp8", "fp32", "tf32"):
        return wanted
    for p in _TRAIN_PRECISIONS:
        if p in peaks:
            return p
    raise InputError(f"chip {system.chip.name}: expected a 16-bit peak (bf16 or fp16) for training, "
                     f"got {sorted(peaks)}")


def micro_batches(seq_len: int) -> tuple[int, ...]:
    """Micro-batches tried: 1, 2 and 4 sequences, and for short sequences (ViT's 197 tokens,
    BERT's 512) also those that hold as many tokens as 1 to 16 sequences of 2,048: an eager
    framework's launches stay hidden only behind large enough kernels (DeiT trains ViT-B at
    128 images per GPU: Touvron et al. 2021, batch 1,024 on 8 GPUs).

    >>> micro_batches(2048), micro_batches(197)
    ((1, 2, 4), (1, 2, 4, 8, 16, 32, 64, 128))
    """
    scale = 1
    while scale * 2 * seq_len <= 2048:
        scale *= 2
    wide = (1, 2, 4, 8, 16) if scale > 1 else (1, 2, 4)
    return tuple(sorted({1, 2, 4} | {m * scale for m in wide}))


def best_training_config(model: ModelSpec, system: SystemSpec, global_batch: int,
                         precision: str | None = None,
                         allowed: Callable[[TrainingConfig], bool] | None = None
                         ) -> TrainingBaseline:
    """Fastest fitting training layout on all of ``system``'s chips; with ``allowed`` (the
    declared constraints of the knowledge base, as the solver's checker reads them), the
    fastest that also meets them where one does (an IPU pipeline needs more micro-batches than
    PopART's minimum), else the fastest.

    Raises
    ------
    InfeasibleError
        When no layout fits in memory (InputError when none is valid at all); the message gives
        the last reason found.
    """
    chips = system.chips
    prec = training_precision(system, precision)
    fast = system.levels[0].group_chips
    fused = stack_fuses_attention(system.chip)  # FlashAttention where a framework launches kernels
    tps = [t for t in divisors(min(fast, chips)) if model.heads % t == 0 and chips % t == 0]
    best: TrainingEstimate | None = None
    best_cfg: TrainingConfig | None = None
    ok: tuple[TrainingEstimate, TrainingConfig] | None = None
    tried = fitted = 0
    last_error = ""
    short_of_memory = False  # a layout failed for memory: the answer is "no", not bad input
    for tp in tps:
        for pp in divisors(model.layers):
            if (chips // tp) % pp or pp > chips // tp:
                continue
            dp = chips // (tp * pp)
            if global_batch % dp:
                continue
            per_replica = global_batch // dp
            for recompute, zero, mb in itertools.product(("selective", "full"), (1, 0),
                                                         micro_batches(model.seq_len)):
                if per_replica % mb:
                    continue
                cfg = TrainingConfig.model_validate(dict(
                    tp=tp, pp=pp, dp=dp, micro_batch=mb, global_batch=global_batch,
                    recompute=recompute, sequence_parallel=tp > 1, zero=zero, dp_overlap=True,
                    fused_attention=fused, precision=prec))
                tried += 1
                try:
                    est = estimate_training(model, system, cfg)
                except InputError as exc:
                    last_error = str(exc)
                    short_of_memory |= isinstance(exc, InfeasibleError)
                    continue
                fitted += 1
                if best is None or est.step_time_s < best.step_time_s:
                    best, best_cfg = est, cfg
                if allowed is not None and (ok is None or est.step_time_s < ok[0].step_time_s) \
                        and allowed(cfg):
                    ok = (est, cfg)
    if ok is not None:
        best, best_cfg = ok
    if best is None or best_cfg is None:
        raise none_fits("training", model, system, tried, last_error, short_of_memory)
    return TrainingBaseline(best_cfg, best, tried, fitted)


def _replica_depths(stages: int, layers: int) -> list[int]:
    """Pipeline depths to try: all ``stages`` when they fit the ``layers``, else the powers of
    two below the layer count and the layer count itself.

    >>> _replica_depths(8, 32), _replica_depths(512, 32)
    ([8], [1, 2, 4, 8, 16, 32])
    """
    if stages <= layers:
        return [stages]
    depths = [1 << i for i in range(layers.bit_length()) if 1 << i < layers]
    return depths + [layers]


def best_inference_config(model: ModelSpec, system: SystemSpec, prompt_len: int, output_len: int,
                          batch: int = 1, precision: str | None = None,
                          goal: Literal["latency", "throughput"] = "latency") -> InferenceBaseline:
    """Lowest per-token latency (or highest throughput) layout on all of ``system``'s chips, or,
    where one replica of the model cannot use them all (more pipeline stages than layers: an
    8B model on a 4,096-chip TPU slice), on the replica sizes it can use (pipeline depths of
    powers of two and the layer count), the rest of the chips left to other replicas. (The
    least $ or joules per token: :mod:`accelkb.advise.cheapest`.)

    Tries the workload's precision first, then cheaper ones the chip supports, so an SRAM-only
    machine that cannot hold 16-bit weights ends up at INT8 (as Groq's deployment does).
    """
    chips = system.chips
    peaks = system.chip.peak_flops
    order = [precision] if precision else []
    order += [p for p in INFER_PRECISIONS if p not in order]
    fast = system.levels[0].group_chips
    tried = fitted = 0
    last_error = ""
    short_of_memory = False  # a layout failed for memory: the answer is "no", not bad input
    for prec in order:
        if prec not in peaks:
            continue
        best: InferenceEstimate | None = None
        best_cfg: InferenceConfig | None = None
        for tp in divisors(min(fast, chips)):
            if model.kv_heads % tp and tp % model.kv_heads:
                continue
            if model.heads % tp or chips % tp:
                continue
            # throughput: pp batches in flight where every stage holds their KV cache, else one
            pipelining = (True, False) if goal == "throughput" else (False,)
            for pp, pipelined in itertools.product(_replica_depths(chips // tp, model.layers),
                                                   pipelining):
                cfg = InferenceConfig.model_validate(dict(
                    tp=tp, pp=pp, batch=batch, prompt_len=prompt_len, output_len=output_len,
                    precision=prec, pipelined=pipelined and pp > 1, queue_when_full=True))
                tried += 1
                try:
                    est = estimate_inference(model, system, cfg)
                except InputError as exc:
                    last_error = str(exc)
                    short_of_memory |= isinstance(exc, InfeasibleError)
                    continue
                fitted += 1
                key = est.decode_s_per_token if goal == "latency" else -est.tokens_per_s
                if best is None or key < (best.decode_s_per_token if goal == "latency"
                                          else -best.tokens_per_s):
                    best, best_cfg = est, cfg
        if best is not None and best_cfg is not None:
            return InferenceBaseline(best_cfg, best, tried, fitted)
    raise none_fits("inference", model, system, tried, last_error, short_of_memory)


def none_fits(phase: str, model: ModelSpec, system: SystemSpec, tried: int, last_error: str,
               short_of_memory: bool) -> InputError:
    """The error of a layout search that found nothing: :class:`InfeasibleError` (a negative
    answer, exit 1) where layouts failed for memory, else :class:`InputError`."""
    kind = InfeasibleError if short_of_memory else InputError
    return kind(f"no {phase} layout of {model.name} fits {system.name} ({system.chips} chips, "
                f"{tried} layouts tried); last reason: {last_error or 'no valid layout'}")
