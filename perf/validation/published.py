"""Validation against the benchmark results stored in the knowledge base.

The CSV files of :mod:`.training` and :mod:`.others` hold the published measurements the
calibration was fitted on. Every other system's measurements (MLPerf Inference and Training rows,
vendor tables, independent API benchmarks) are stored as ``ak:BenchmarkResult`` nodes with their
sources; this module reads them with the stored query ``validation_results`` and predicts each
with one stated protocol per metric:

- ``OutputTokensPerSecondPerUser`` / ``InterTokenLatency``: one user (batch 1), decode, at the
  workload's precision and request shape, at the best layout over tensor parallel inside the
  system's first network level x pipeline across the rest on the chips used (the vendor tunes
  its deployment for the figure it publishes: four CS-3s pipeline a 70B model, 16 Trainium2
  chips split it tensor-parallel).
- ``TimeToFirstToken``: the same, prefill of the workload's prompt.
- ``AggregateTokensPerSecond`` (MLPerf Offline, vendor throughput tables): the submitter tunes
  the layout and batch, so the model takes its best throughput over tensor-parallel degrees that
  divide the chips used (replicas on the rest) and batches that fit memory, prefill included;
  where the submission's configuration states its tensor-parallel degree and in-flight batch
  per engine (the protocol file's ``layout``), those.
  MLPerf *Server* rows are latency-constrained (a queueing result the model does not estimate)
  and are skipped with that reason.
- ``ModelFlopsPerSecondPerChip`` (MaxText tables, PaLM): fully sharded data parallel (ZeRO-3)
  over the chips used, as the MaxText recipes run, with the tensor-parallel degree a source
  states (PaLM: 12), at the stated global batch, best micro-batch.
- ``TimeToTrain``: the result's own trained tokens (``ak:tokensToTrain``) over the modelled
  throughput at the best tensor x pipeline x data layout that fits, or at the submission's own
  tensor, pipeline, interleave and micro-batch where its configuration states them (the protocol
  file's ``layout``); results without their tokens are skipped, and LoRA fine-tuning (which the
  full-training model does not describe).

A benchmark protocol file (``perf/data/benchmark_protocols.json``) gives, per benchmark, the
request shape and the precision each submission states where they differ from the workload's
own (MLPerf's OpenOrca requests are not the LLMPerf shape of ``llama2-70b-inference``).

Results whose source ships as a CSV file here (Megatron, Korthikanti, the MLPerf IPU/DGX
ratios, LLMPerf, the vendor-claims table) are validated there and skipped here, so no row is
counted twice. Rows are grouped by (vendor, regime, kind) and tagged for the residuals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from accelkb.errors import InputError
from accelkb.perf.calibration import Calibration
from accelkb.perf.inference import InferenceConfig, InferenceEstimate
from accelkb.perf.inference import estimate as infer_estimate
from accelkb.perf.specs import ModelSpec, SystemSpec
from accelkb.perf.training import TrainingConfig, TrainingEstimate
from accelkb.perf.training import estimate as train_estimate
from accelkb.perf.validation.training import FileResult, Row, SystemResolver, cached

FILE = "knowledge base (ak:BenchmarkResult)"
#: metric -> (regime, "time" | "rate")
METRICS = {"OutputTokensPerSecondPerUser": ("decode", "rate"),
           "InterTokenLatency": ("decode", "time"),
           "TimeToFirstToken": ("prefill", "time"),
           "AggregateTokensPerSecond": ("inference", "rate"),
           "ModelFlopsPerSecondPerChip": ("training", "rate"),
           "TimeToTrain": ("training", "time")}
_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


class Skip(Exception):
    """A result the protocol cannot predict, with the reason."""


@dataclass(frozen=True)
class Result:
    """One stored benchmark result, as the query gives it."""

    iri: str
    label: str
    system: str
    vendor: str
    chips: int
    workload: str
    model: str
    phase: str
    precision: str
    input_tokens: int | None
    output_tokens: int | None
    metric: str
    value: float
    claim: bool
    batch: int | None
    tokens: float | None
    round: str
    sources: tuple[str, ...]

    @property
    def name(self) -> str:
        """The result's IRI local name."""
        return self.iri.rsplit("/", 1)[-1]


@lru_cache(maxsize=1)
def protocols() -> dict[str, Any]:
    """``perf/data/benchmark_protocols.json``: request shapes, stated precisions, and the
    sources validated from shipped CSV files."""
    text = resources.files("accelkb.perf").joinpath("data/benchmark_protocols.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def stored_results(kb: Any) -> list[Result]:
    """Every ``ak:BenchmarkResult`` with a metric, a workload and a value, from the knowledge
    base ``kb`` (an :class:`accelkb.ontology.kb.KnowledgeBase`)."""
    from accelkb.ontology.kb import stored_query

    sources: dict[str, list[str]] = {}
    for row in kb.query(stored_query("validation_result_sources")):
        sources.setdefault(str(row.result), []).append(str(row.source).rsplit("/", 1)[-1])
    out = []
    for row in kb.query(stored_query("validation_results")):
        d = {k: (v.toPython() if v is not None else None) for k, v in row.asdict().items()}
        value = d.get("seconds") or d.get("tps") or d.get("flops")
        if value is None:
            continue
        out.append(Result(
            iri=str(d["result"]), label=str(d.get("label") or d["result"]),
            system=str(d["system"]), vendor=str(d.get("vendor") or "unknown"),
            chips=int(d.get("chips") or d.get("systemChips") or 1),
            workload=str(d["workload"]), model=str(d["model"]), phase=str(d["phase"]),
            precision=str(d.get("precision") or "bf16"),
            input_tokens=d.get("input"), output_tokens=d.get("output"),
            metric=str(d["metric"]), value=float(value), claim=bool(d.get("claim")),
            batch=d.get("batch"), tokens=d.get("tokens"), round=str(d.get("round") or ""),
            sources=tuple(sorted(sources.get(str(d["result"]), [])))))
    return out


def _precision(res: Result) -> str:
    """The submission's stated precision where the protocol file has it, else the workload's
    (fp16 and bf16 stand in for each other in the model)."""
    stated = protocols()["results"].get(res.name, {}).get("precision")
    p = str(stated or res.precision)
    return "bf16" if p == "fp16" else p


def _shape(res: Result) -> tuple[int, int]:
    """(prompt, output) tokens: the benchmark's request shape where the protocol file has one,
    else the workload's."""
    for bench in protocols()["shapes"].values():
        by_round = res.workload == bench.get("workload") \
            and res.round.startswith(bench.get("round_prefix", "\0"))
        by_system = res.workload.startswith(bench.get("workload_prefix", "\0")) \
            and res.system.startswith(bench.get("system_prefix", "\0"))
        if by_round or by_system:
            return int(bench["input_tokens"]), int(bench["output_tokens"])
    if res.input_tokens is None or res.output_tokens is None:
        raise Skip("the workload has no request shape (ak:inputTokens, ak:outputTokens)")
    return int(res.input_tokens), int(res.output_tokens)


def _best_latency(model: ModelSpec, system: SystemSpec, chips: int, prompt: int, output: int,
                  precision: str, cal: Calibration, metric: str) -> float:
    """The best figure of ``metric`` at batch 1 over the layouts tp x pp = ``chips`` (tensor
    parallel inside the first network level, pipeline across the rest): the vendor tunes its
    deployment for the figure it publishes."""
    best: float | None = None
    why = "no layout fits"
    for tp in (d for d in range(1, min(chips, system.levels[0].group_chips) + 1)
               if chips % d == 0):
        cfg = InferenceConfig(tp=tp, pp=chips // tp, batch=1, prompt_len=prompt,
                              output_len=output, precision=precision)  # type: ignore[arg-type]
        try:
            est = infer_estimate(model, system, cfg, cal)
        except InputError as exc:
            why = str(exc)
            continue
        value = {"OutputTokensPerSecondPerUser": est.tokens_per_s_per_user,
                 "InterTokenLatency": est.decode_s_per_token,
                 "TimeToFirstToken": est.ttft_s}[metric]
        higher_is_better = metric == "OutputTokensPerSecondPerUser"
        if best is None or (value > best if higher_is_better else value < best):
            best = value
    if best is None:
        raise Skip(why)
    return best


def _infer(model: ModelSpec, system: SystemSpec, cfg: InferenceConfig,
           cal: Calibration) -> InferenceEstimate:
    try:
        return infer_estimate(model, system, cfg, cal)
    except InputError as exc:
        raise Skip(str(exc)) from None


def as_submitted(cal: Calibration) -> Calibration:
    """``cal`` without the serving engine's default memory budget: a published inference
    result (MLPerf, a vendor's own run) comes from an engine its submitter tuned, whose memory
    fraction and buffers no default describes (NVIDIA's MLPerf configurations state their
    batch, which a stated layout then holds in memory), so the whole memory bounds it."""
    return cal.model_copy(update={"serving_memory_fraction": 1.0, "serving_reserve_bytes": 0.0})


def _best_throughput(model: ModelSpec, system: SystemSpec, chips: int, prompt: int, output: int,
                     precision: str, cal: Calibration,
                     stated: dict[str, int] | None = None) -> float:
    """Largest output tokens/s over tensor-parallel degrees dividing ``chips`` (replicas on the
    rest) and batches that fit, prefill and decode both counted. ``stated``: the submission's
    own tensor-parallel degree (``tp``) and in-flight batch per engine (``batch``) where its
    configuration gives them; a stated batch that does not fit the model's memory is refused
    (a Skip with the reason), not replaced. Memory is the whole HBM (:func:`as_submitted`), not
    a serving engine's default budget: a submission tunes its engine."""
    stated = stated or {}
    cal = as_submitted(cal)
    best, why = 0.0, "no layout fits"
    tps = (stated["tp"],) if "tp" in stated else (1, 2, 4, 8, 16, 32, 64)
    for tp in (d for d in tps if chips % d == 0):
        if tp > system.levels[0].group_chips and tp > 1:
            continue
        for b in ((stated["batch"],) if "batch" in stated else _BATCHES):
            cfg = InferenceConfig(tp=tp, batch=b, prompt_len=prompt, output_len=output,
                                  precision=precision)  # type: ignore[arg-type]
            try:
                est = infer_estimate(model, system, cfg, cal)
            except InputError as exc:
                why = str(exc)
                break  # a larger batch does not fit either
            best = max(best, (chips // tp) * est.end_to_end_tokens_per_s)
    if best <= 0:
        raise Skip(why)
    return best


def _best_training(model: ModelSpec, system: SystemSpec, chips: int, batch: int, precision: str,
                   cal: Calibration, fsdp_only: bool, tp: int | None = None,
                   stated: dict[str, int] | None = None) -> TrainingEstimate:
    """Fastest layout that fits: ZeRO-3 over all chips (``fsdp_only``; with a tensor-parallel
    degree ``tp`` where the source states one) or tensor x pipeline x data over the first
    network level's divisors, full or selective recompute, micro-batch. ``stated``: the
    submission's own tp, pp, micro_batch and interleave where its configuration gives them (the
    rest is still searched)."""
    stated = stated or {}
    layouts: list[dict[str, object]] = []
    tps = (tp or 1,) if fsdp_only else tuple(t for t in (1, 2, 4, 8) if chips % t == 0
                                             and t <= system.levels[0].group_chips)
    if "tp" in stated:
        tps = (stated["tp"],)
    for tp in tps:
        pps = (1,) if fsdp_only else tuple(p for p in (1, 2, 4, 8, 16)
                                           if (chips // tp) % p == 0 and model.layers % p == 0)
        if "pp" in stated:
            pps = (stated["pp"],)
        for pp in pps:
            dp = chips // (tp * pp)
            if batch % dp:
                continue
            for zero in ((3,) if fsdp_only else (1, 3)):
                layouts.append({"tp": tp, "pp": pp, "dp": dp, "zero": zero,
                                "global_batch": batch, "sequence_parallel": tp > 1,
                                "fused_attention": True, "precision": precision,
                                "interleave": stated.get("interleave", 1)})
    best: TrainingEstimate | None = None
    for base in layouts:
        per_replica = batch // int(str(base["dp"]))
        mbs = (stated["micro_batch"],) if "micro_batch" in stated else (1, 2, 4, 8)
        for mb in (m for m in mbs if per_replica % m == 0):
            for rec in ("selective", "full"):
                try:
                    est = train_estimate(model, system, TrainingConfig.model_validate(
                        {**base, "micro_batch": mb, "recompute": rec}), cal)
                except InputError:
                    continue
                if best is None or est.step_time_s < best.step_time_s:
                    best = est
    if best is None:
        raise Skip(f"no layout of {model.name} on {chips} chips of {system.name} fits")
    return best


def predict(res: Result, systems: SystemResolver, cal: Calibration) -> float:
    """The model's figure for one stored result, in the result's own unit (Skip: why not)."""
    from accelkb.perf.from_kb import model_spec

    proto = protocols()
    if set(res.sources) & set(proto["validated_from_csv"]["sources"]):
        raise Skip("validated from its shipped CSV file")
    if res.metric not in METRICS:
        raise Skip(f"metric {res.metric} has no protocol")
    note = proto["results"].get(res.name, {})
    if note.get("skip"):
        raise Skip(str(note["skip"]))
    try:
        model = model_spec(res.model)
        system = systems(res.system, res.chips)
    except InputError as exc:
        raise Skip(str(exc)) from None
    precision = _precision(res)
    if res.metric in ("OutputTokensPerSecondPerUser", "InterTokenLatency", "TimeToFirstToken"):
        prompt, output = _shape(res)
        return _best_latency(model, system, res.chips, prompt, output, precision, cal,
                             res.metric)
    if res.metric == "AggregateTokensPerSecond":
        if "server" in res.name.lower() or "Server" in res.label:
            raise Skip("MLPerf Server scenario: throughput under a latency bound (queueing), "
                       "which the model does not estimate; its Offline row is validated")
        prompt, output = _shape(res)
        return _best_throughput(model, system, res.chips, prompt, output, precision, cal,
                                stated=note.get("layout"))
    if "lora" in res.workload:
        raise Skip("LoRA fine-tuning: the training model counts full-weight gradients and "
                   "optimizer state, which LoRA does not compute")
    batch = res.batch or res.chips
    if res.metric == "ModelFlopsPerSecondPerChip":
        stated = note.get("layout", {})
        return _best_training(model, system, res.chips, batch, precision, cal, fsdp_only=True,
                              tp=stated.get("tp")).model_flops_per_s_per_chip
    if res.tokens is None:
        raise Skip("the result does not record the tokens its run trained (ak:tokensToTrain)")
    run = _best_training(model, system, res.chips, batch, precision, cal, fsdp_only=False,
                         stated=note.get("layout"))
    return float(res.tokens) / run.tokens_per_s


def check_stored_results(systems: SystemResolver, cal: Calibration,
                         kb: Any | None = None) -> list[FileResult]:
    """One :class:`FileResult` per (vendor, regime, kind) of the stored results the model can
    predict; skipped results (with their reasons) go to a last ``skipped`` result."""
    from accelkb.perf.from_kb import default_kb

    systems = cached(systems)
    groups: dict[tuple[str, str, str], FileResult] = {}
    skipped = FileResult(FILE, "stored results not validated here")
    for res in stored_results(kb or default_kb()):
        regime, sense = METRICS.get(res.metric, ("", "rate"))
        kind = "claims" if res.claim else "measured"
        try:
            predicted = predict(res, systems, cal)
        except Skip as why:
            skipped.skipped.append(f"{res.name}: {why}")
            continue
        key = (res.vendor, regime, kind)
        if key not in groups:
            groups[key] = FileResult(FILE, f"{res.vendor} {regime} ({kind}), own units",
                                     tag=(res.vendor, regime, kind))
        groups[key].rows.append(Row(f"{res.name} [{res.metric}]", res.value, predicted,
                                    sense=sense))
    return [groups[k] for k in sorted(groups)] + [skipped]
