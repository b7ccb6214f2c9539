"""Performance estimates into the graph: one ``ak:Estimate`` node per (workload, system, chips).

The performance model (:mod:`accelkb.perf`) computes the numbers for a default configuration
(or the one given); each becomes a triple on the estimate node in the estimates graph, with an
``ak:provenance`` node recording the formula, the perf function (``ak:formulaRef``), its inputs
(``ak:estimateInput "name=value"``) and the knowledge it was computed from
(``prov:wasDerivedFrom`` the system and model IRIs, whose facts carry their sources).

Default configuration (documented, not tuned): training uses data parallelism with ZeRO-1 when
16 bytes per parameter fit the fast memory (SRAM + HBM) of one chip with 20 % to spare;
otherwise tensor parallelism inside the innermost network level (a power of two dividing the
heads) times as many pipeline stages as needed, full recomputation, micro-batch 1. Inference
uses the fewest tensor x pipeline chips that hold weights and KV cache in fast memory, tensor
parallelism inside the innermost level.

What the perf API does not give is computed here from the specs and documented per quantity:
aggregate memory per tier, the ridge point of the tier holding the weights, arithmetic intensity
of one pass over the weights, the pipeline bubble (p - 1) / m, and the input rate (4-byte token
ids at the estimated tokens/s).
"""

from __future__ import annotations

import importlib.metadata
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rdflib import RDF, Literal, URIRef
from rdflib.namespace import XSD

from accelkb.errors import InfeasibleError, InputError
from accelkb.ontology import loader
from accelkb.ontology.kb import ESTIMATES, KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.perf import InferenceConfig, TrainingConfig, estimate_inference, estimate_training
from accelkb.perf.api import config
from accelkb.perf.compute import peak_for
from accelkb.perf.from_kb import NoNetworkError, chip_spec_of, system_spec, workload_model_spec
from accelkb.perf.memory import kv_cache_bytes
from accelkb.perf.shapes import total_params
from accelkb.perf.specs import ModelSpec, NetworkLevelSpec, SystemSpec

PROV_NS = "http://www.w3.org/ns/prov#"
BYTES_PER = {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0}
#: Mixed-precision Adam as the performance model's memory check counts it: 16-bit weights,
#: fp32 gradients (Megatron's; TrainingConfig.grad_bytes), fp32 master weights, momentum and
#: variance. Rajbhandari et al. 2020 (kb:bottleneck-memory-capacity) count 16 B with 16-bit
#: gradients; a finding and the memory check beside it must say the same bytes.
STATE_BYTES_PER_PARAM = 2.0 + TrainingConfig.model_fields["grad_bytes"].default + 12.0
#: Input bytes per token: int32 token ids as data loaders feed them.
INPUT_BYTES_PER_TOKEN = 4.0
_FAST = ("sram", "hbm")
_OFF = ("ddr", "streaming")
_TRAINING = {AK.Training}


class Quantity(BaseModel):
    """One estimated number with how it was computed."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    value: float = Field(description="the number, SI base units")
    formula: str = Field(description="the formula, in words and symbols")
    ref: str = Field(description="the function that computed it (module.function)")
    inputs: dict[str, float | str] = Field(description="inputs of the formula by name")


class PairEstimate(BaseModel):
    """The estimate of one (workload, system, chips): configuration and quantities."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    workload: str = Field(description="workload IRI")
    system: str = Field(description="system IRI")
    model: str = Field(description="model IRI")
    chips: int = Field(description="chips the estimate uses")
    configuration: str = Field(description="parallel configuration, key=value list")
    fits: bool | None = Field(description="the configuration fits in memory (None: not known)")
    notes: list[str] = Field(description="why some numbers are missing")
    quantities: dict[str, Quantity] = Field(description="schema property local name -> number")
    perf_version: str = Field(description="version of the performance model")


def _perf_version() -> str:
    try:
        return "accelkb.perf " + importlib.metadata.version("accelkb")
    except importlib.metadata.PackageNotFoundError:
        return "accelkb.perf (unversioned checkout)"


def _short(kb: KnowledgeBase, iri: Any) -> str:
    return str(kb.asserted.value(iri, AK.shortName) or iri)


def _num(kb: KnowledgeBase, s: Any, p: URIRef) -> float | None:
    v = kb.asserted.value(s, p)
    return float(v.toPython()) if isinstance(v, Literal) else None


def _system(kb: KnowledgeBase, iri: URIRef, chips: int | None) -> tuple[SystemSpec, list[str]]:
    """The perf spec of a system; without a published network, one chip's spec per position."""
    name = _short(kb, iri)
    try:
        return system_spec(name, chips, kb=kb), []
    except NoNetworkError as exc:  # any other refusal (e.g. more chips than exist) stands
        chip = kb.asserted.value(iri, AK.chip)
        if not isinstance(chip, URIRef):
            raise
        n = chips or int(_num(kb, iri, AK.chipCount) or 1)
        level = NetworkLevelSpec(name="unpublished", group_chips=n,
                                 bandwidth_bytes_per_s_per_chip=1.0, latency_s=0.0,
                                 topology="full")
        spec = SystemSpec(name=name, chip=chip_spec_of(kb, chip), chips=n, levels=[level])
        return spec, [f"no communication estimate: {exc}"]


def _tier_sum(spec: SystemSpec, kinds: tuple[str, ...]) -> float:
    return sum(t.capacity_bytes for t in spec.chip.memory_tiers if t.kind in kinds)


def _pow2_tp(model: ModelSpec, limit: int) -> int:
    tp = 1
    while tp * 2 <= limit and model.heads % (tp * 2) == 0:
        tp *= 2
    return tp


def _split(model: ModelSpec, spec: SystemSpec, need_per_model: float) -> tuple[int, int, bool]:
    """(tp, pp, fits): the fewest chips holding ``need_per_model`` in fast memory."""
    fast = _tier_sum(spec, _FAST) * 0.8
    shards = max(1, math.ceil(need_per_model / fast)) if fast > 0 else spec.chips + 1
    if shards == 1:
        return 1, 1, True
    tp = min(_pow2_tp(model, spec.levels[0].group_chips), _pow2_tp(model, shards))
    pp = min(model.layers, math.ceil(shards / tp), max(1, spec.chips // tp))
    return tp, pp, tp * pp >= shards


def _precision(kb: KnowledgeBase, workload: URIRef) -> str:
    p = kb.asserted.value(workload, AK.precision)
    from rdflib.namespace import SKOS
    note = kb.asserted.value(p, SKOS.notation) if p is not None else None
    return str(note) if note is not None else "bf16"


def estimate_pair(kb: KnowledgeBase, workload: URIRef, system: URIRef, chips: int | None = None,
                  parallel: str | None = None) -> PairEstimate:
    """Estimate one (workload, system) with the performance model.

    Raises
    ------
    InputError
        For a workload whose model the performance model cannot shape (not a transformer),
        or a configuration the performance model rejects.
    """
    g = kb.asserted
    model_iri = g.value(workload, AK.model)
    phase = g.value(workload, AK.phase)
    if model_iri is None or phase is None:
        raise InputError(f"workload {_short(kb, workload)}: expected ak:model and ak:phase")
    model = workload_model_spec(workload, kb=kb)  # the model at the workload's sequence length
    spec, notes = _system(kb, system, chips)
    prec = _precision(kb, workload)
    if parallel and "precision" in (asked := _parse(parallel)):
        prec = str(asked["precision"])  # the layout's precision (an INT8 deployment), not the
        # released checkpoint's: bytes per weight and the ridge point follow it (issue 27)
    e = BYTES_PER.get(prec, 2.0)
    params = float(total_params(model))
    n = spec.chips
    q: dict[str, Quantity] = {}
    per_chip = {k: _tier_sum(spec, (k,)) for k in ("sram", "hbm", "ddr", "streaming")}
    q["estimatedChips"] = Quantity(value=n, formula="chips of the system (or as asked)",
                                   ref="accelkb.perf.from_kb.system_spec", inputs={"chips": n})
    for prop, kinds in (("onChipMemoryBytes", ("sram",)), ("deviceMemoryBytes", _FAST),
                        ("offChipMemoryBytes", _OFF)):
        total = sum(per_chip[k] for k in kinds) * n
        has = [k for k in kinds if per_chip[k] > 0] or list(kinds)  # the tiers it has
        inputs: dict[str, float | str] = {"chips": n}
        inputs.update({f"{k}_bytes_per_chip": per_chip[k] for k in has})
        q[prop] = Quantity(value=total, formula=f"chips x per-chip capacity of {'+'.join(has)}",
                           ref="accelkb.rules.estimates.estimate_pair", inputs=inputs)
    q["fastDomainChips"] = Quantity(value=spec.levels[0].group_chips,
                                    formula="chips in the innermost network level",
                                    ref="accelkb.perf.from_kb.system_spec",
                                    inputs={"level": spec.levels[0].name})
    if not notes:
        q["fastLinkBytesPerSecond"] = Quantity(
            value=spec.levels[0].bandwidth_bytes_per_s_per_chip,
            formula="per-chip bandwidth of the innermost network level",
            ref="accelkb.perf.from_kb.system_spec", inputs={"level": spec.levels[0].name})
    if phase in _TRAINING:
        fits = _training(kb, workload, model, spec, prec, params, parallel, q, notes)
        config = q.pop("_config").formula
    else:
        fits = _inference(kb, workload, model, spec, prec, params, parallel, q, notes)
        config = q.pop("_config").formula
    weights_tier = _weights_tier(spec, params * e / max(1.0, q["_shards"].value))
    q.pop("_shards")
    peak = peak_for(spec.chip, prec)
    ridge = peak / weights_tier.bandwidth_bytes_per_s
    q["ridgePoint"] = Quantity(value=ridge, formula="peak FLOP/s / bandwidth of the tier that "
                               "holds the weights", ref="accelkb.perf.compute.peak_for",
                               inputs={"peak_flops": peak, "tier": weights_tier.kind,
                                       "bandwidth": weights_tier.bandwidth_bytes_per_s})
    if spec.host_bandwidth_bytes_per_s_per_chip is not None:
        q["hostLinkBytesPerSecondPerChip"] = Quantity(
            value=spec.host_bandwidth_bytes_per_s_per_chip,
            formula="host link bandwidth / chips sharing it",
            ref="accelkb.perf.from_kb.system_spec", inputs={})
    return PairEstimate(workload=str(workload), system=str(system), model=str(model_iri),
                        chips=n, configuration=config, fits=fits, notes=notes, quantities=q,
                        perf_version=_perf_version())


def _weights_tier(spec: SystemSpec, weights_per_chip: float) -> Any:
    for t in spec.chip.memory_tiers:
        if weights_per_chip <= t.capacity_bytes:
            return t
    return spec.chip.memory_tiers[-1]


def _training(kb: KnowledgeBase, workload: URIRef, model: ModelSpec, spec: SystemSpec, prec: str,
              params: float, parallel: str | None, q: dict[str, Quantity],
              notes: list[str]) -> bool | None:
    state = STATE_BYTES_PER_PARAM * params
    q["modelStateBytes"] = Quantity(
        value=state, formula=f"{STATE_BYTES_PER_PARAM:g} B/param x parameters (16-bit weights, "
        "fp32 gradients, fp32 master weights and Adam moments, as the memory check counts "
        "them; ZeRO's 16 B has 16-bit gradients)", ref="accelkb.perf.shapes.total_params",
        inputs={"parameters": params, "bytes_per_param": STATE_BYTES_PER_PARAM})
    gbs = int(_num(kb, workload, AK.globalBatchSize) or 512)
    tp, pp, fits = _split(model, spec, state)
    dp = max(1, spec.chips // (tp * pp))
    while gbs % dp:
        dp -= 1
    if parallel:
        cfg: dict[str, Any] = {"global_batch": gbs, "precision": "bf16" if prec == "bf16"
                               else "fp16"} | _parse(parallel)
        config(TrainingConfig, cfg)  # invalid values (tp=0) are bad input, said as such
    elif tp * pp == 1:
        cfg = {"dp": dp, "zero": 1, "micro_batch": 1, "global_batch": gbs}
    else:
        cfg = {"tp": tp, "pp": pp, "dp": dp, "micro_batch": 1, "global_batch": gbs,
               "recompute": "full"}
    tp, pp = int(cfg.get("tp", 1)), int(cfg.get("pp", 1))
    dp = int(cfg.get("dp") or max(1, spec.chips // (tp * pp)))
    mb = int(cfg.get("micro_batch", 1))
    m = max(1, int(cfg.get("global_batch", gbs)) // (dp * mb))
    q["_config"] = Quantity(value=0, formula=",".join(f"{k}={v}" for k, v in sorted(cfg.items())),
                            ref="", inputs={})
    q["_shards"] = Quantity(value=tp * pp, formula="", ref="", inputs={})
    _degrees(q, tp, pp, dp, spec)
    q["microbatchCount"] = Quantity(value=m, formula="m = global batch / (dp x micro-batch)",
                                    ref="accelkb.perf.training.estimate",
                                    inputs={"global_batch": gbs, "dp": dp, "micro_batch": mb})
    v = int(cfg.get("interleave", 1))
    q["bubbleFraction"] = Quantity(value=(pp - 1) / (m * v), formula="(p - 1) / (m v) "
                                   "(Narayanan et al. 2021, 1F1B)",
                                   ref="accelkb.perf.training.estimate",
                                   inputs={"p": pp, "m": m, "v": v})
    tokens = mb * model.seq_len
    q["arithmeticIntensity"] = Quantity(
        value=2.0 * tokens / BYTES_PER.get(prec, 2.0),
        formula="2 x tokens per micro-batch / bytes per weight (one GEMM pass over the weights)",
        ref="accelkb.perf.shapes.total_params",
        inputs={"tokens": tokens, "bytes_per_weight": BYTES_PER.get(prec, 2.0)})
    q["streamedArithmeticIntensity"] = q["arithmeticIntensity"]
    try:
        est = estimate_training(model, spec, cfg)
    except InputError as exc:
        _user_layout_error(exc, parallel)
        notes.append(f"no time estimate: {exc}")
        return False if "fit" in str(exc) else None
    b = est.breakdown
    comm = b.get("tensor_parallel_comm", 0) + b.get("pipeline_p2p", 0) + \
        b.get("data_parallel_comm", 0)
    q["computeSeconds"] = Quantity(value=b.get("compute", 0) + b.get("recompute", 0),
                                   formula="compute + recompute of one step",
                                   ref="accelkb.perf.training.estimate",
                                   inputs={k: b[k] for k in ("compute", "recompute") if k in b})
    if not _no_network(notes):
        q["communicationSeconds"] = Quantity(
            value=comm, formula="tensor-parallel + pipeline p2p + data-parallel communication "
            "of one step", ref="accelkb.perf.training.estimate",
            inputs={k: b[k] for k in ("tensor_parallel_comm", "pipeline_p2p",
                                      "data_parallel_comm") if k in b})
    if _no_network(notes):
        return True
    q["inputBytesPerSecondPerChip"] = Quantity(
        value=est.tokens_per_s * INPUT_BYTES_PER_TOKEN / est.chips,
        formula="tokens/s x 4 B per token id / chips", ref="accelkb.perf.training.estimate",
        inputs={"tokens_per_s": est.tokens_per_s, "chips": est.chips})
    return True


def _inference(kb: KnowledgeBase, workload: URIRef, model: ModelSpec, spec: SystemSpec,
               prec: str, params: float, parallel: str | None, q: dict[str, Quantity],
               notes: list[str]) -> bool | None:
    e = BYTES_PER.get(prec, 2.0)
    batch = int(_num(kb, workload, AK.batchSize) or 1)
    prompt = int(_num(kb, workload, AK.inputTokens) or 128)
    out = int(_num(kb, workload, AK.outputTokens) or 128)
    kv = kv_cache_bytes(model, batch, prompt + out, 1, 1, prec)
    q["modelStateBytes"] = Quantity(value=params * e, formula="parameters x bytes per weight",
                                    ref="accelkb.perf.shapes.total_params",
                                    inputs={"parameters": params, "bytes_per_weight": e})
    q["kvCacheBytes"] = Quantity(value=kv, formula="2 x layers x kv_dim x context x batch x "
                                 "bytes", ref="accelkb.perf.memory.kv_cache_bytes",
                                 inputs={"batch": batch, "context": prompt + out})
    tp, pp, fits = _split(model, spec, params * e + kv)
    cfg: dict[str, Any] = {"batch": batch, "prompt_len": prompt, "output_len": out,
                           "precision": prec}
    if parallel:  # the user's layout, the rest at its defaults (as `accelkb estimate` reads it),
        # not merged with the default split: tp=8 on a DGX H100 is tp=8, pp=1
        cfg |= _parse(parallel)
        config(InferenceConfig, cfg)
    else:
        cfg |= {"tp": tp, "pp": pp}
    if int(cfg["batch"]) != batch:  # the layout's batch, not the workload's, sets the evidence
        batch = int(cfg["batch"])
        kv = kv_cache_bytes(model, batch, prompt + out, 1, 1, prec)
        q["kvCacheBytes"] = q["kvCacheBytes"].model_copy(update={
            "value": kv, "inputs": {"batch": batch, "context": prompt + out}})
    tp, pp = int(cfg.get("tp", 1)), int(cfg.get("pp", 1))
    q["_config"] = Quantity(value=0, formula=",".join(f"{k}={v}" for k, v in sorted(cfg.items())),
                            ref="", inputs={})
    q["_shards"] = Quantity(value=tp * pp, formula="", ref="", inputs={})
    _degrees(q, tp, pp, 1, spec)
    q["arithmeticIntensity"] = Quantity(
        value=2.0 * batch / e, formula="2 x batch / bytes per weight (one decode step reads "
        "every weight once for the whole batch)", ref="accelkb.perf.inference.estimate",
        inputs={"batch": batch, "bytes_per_weight": e})
    if not fits and not parallel:
        notes.append(f"no time estimate: weights and KV cache ({params * e + kv:.3g} B) do not "
                     f"fit the fast memory of {spec.chips} chips")
        return False
    try:
        est = estimate_inference(model, spec, cfg)
    except InputError as exc:
        _user_layout_error(exc, parallel)
        notes.append(f"no time estimate: {exc}")
        return False if "fit" in str(exc) else None
    b = est.breakdown
    if _no_network(notes):
        q["computeSeconds"] = Quantity(value=b["compute"] + b["memory"],
                                       formula="compute + memory time of one decode step",
                                       ref="accelkb.perf.inference.estimate",
                                       inputs={"compute": b["compute"], "memory": b["memory"]})
        return True
    q["secondsPerToken"] = Quantity(value=est.decode_s_per_token, formula="decode step time",
                                    ref="accelkb.perf.inference.estimate", inputs=dict(b))
    q["computeSeconds"] = Quantity(value=b["compute"] + b["memory"],
                                   formula="compute + memory time of one decode step",
                                   ref="accelkb.perf.inference.estimate",
                                   inputs={"compute": b["compute"], "memory": b["memory"]})
    if not _no_network(notes):
        q["communicationSeconds"] = Quantity(
            value=b["tensor_parallel_comm"] + b["pipeline_hops"],
            formula="tensor-parallel all-reduces + pipeline hops of one decode step",
            ref="accelkb.perf.inference.estimate",
            inputs={"tensor_parallel_comm": b["tensor_parallel_comm"],
                    "pipeline_hops": b["pipeline_hops"]})
        q["hopLatencySecondsPerToken"] = Quantity(
            value=b["overhead"] + b["tensor_parallel_comm"] + b["pipeline_hops"],
            formula="per-operation overhead + all-reduce + pipeline-hop time per token (the "
            "latency terms of perf's decode breakdown)", ref="accelkb.perf.inference.estimate",
            inputs={k: b[k] for k in ("overhead", "tensor_parallel_comm", "pipeline_hops")})
    return True


def _no_network(notes: list[str]) -> bool:
    return any(n.startswith("no communication") for n in notes)


def _degrees(q: dict[str, Quantity], tp: int, pp: int, dp: int, spec: SystemSpec) -> None:
    for prop, value in (("tensorParallelSize", tp), ("pipelineParallelSize", pp),
                        ("dataParallelSize", dp)):
        q[prop] = Quantity(value=value, formula="default configuration (see module docs)",
                           ref="accelkb.rules.estimates.estimate_pair", inputs={})
    level = next((lvl for lvl in spec.levels if lvl.group_chips >= tp), spec.levels[-1])
    if level.name == "unpublished":
        return
    q["tensorParallelLinkBytesPerSecond"] = Quantity(
        value=level.bandwidth_bytes_per_s_per_chip,
        formula="per-chip bandwidth of the innermost level holding tp chips",
        ref="accelkb.perf.from_kb.system_spec", inputs={"level": level.name, "tp": tp})


def _user_layout_error(exc: InputError, parallel: str | None) -> None:
    """Re-raise, as bad input, an error of a layout the user gave that no system could run
    (tp=7 with 96 heads): ``estimate`` refuses it, and findings derived from it would describe
    a layout that cannot exist. A layout that is valid but does not fit the chips stays a
    finding's evidence (memory-capacity bound)."""
    if parallel and not isinstance(exc, InfeasibleError):
        raise InputError(f"--parallel {parallel}: {exc}") from None


def _parse(parallel: str) -> dict[str, Any]:
    from accelkb.perf.api import parse_parallel
    return parse_parallel(parallel)


def estimate_iri(est: PairEstimate) -> URIRef:
    """Deterministic IRI of an estimate node (workload, system, chips, configuration)."""
    import hashlib
    key = "|".join((est.workload, est.system, str(est.chips), est.configuration))
    return URIRef(loader.DATA_NS + "estimate-" + hashlib.blake2b(key.encode(),
                                                                  digest_size=8).hexdigest())


_MODEL_ONLY = {"modelStateBytes", "kvCacheBytes"}
_SYSTEM_ONLY = {"estimatedChips", "onChipMemoryBytes", "deviceMemoryBytes", "offChipMemoryBytes",
                "fastDomainChips", "fastLinkBytesPerSecond", "tensorParallelLinkBytesPerSecond",
                "hostLinkBytesPerSecondPerChip", "ridgePoint"}


def _basis(name: str, est: PairEstimate, kb: KnowledgeBase) -> list[URIRef]:
    """The knowledge a quantity was computed from: the model, the system and its chip, or all."""
    system = [URIRef(est.system)]
    chip = kb.asserted.value(URIRef(est.system), AK.chip)
    if isinstance(chip, URIRef):
        system.append(chip)
    if name in _MODEL_ONLY:
        return [URIRef(est.model)]
    if name in _SYSTEM_ONLY:
        return system
    return [URIRef(est.model), *system]


def assert_estimate(kb: KnowledgeBase, est: PairEstimate) -> URIRef:
    """Write the estimate node and its provenance into the estimates graph; return its IRI."""
    node = estimate_iri(est)
    prov = URIRef(PROV_NS)
    g = kb.graph(ESTIMATES)
    g.add((node, RDF.type, AK.Estimate))
    g.add((node, RDF.type, URIRef(PROV_NS + "Entity")))
    g.add((node, AK.workload, URIRef(est.workload)))
    g.add((node, AK.system, URIRef(est.system)))
    g.add((node, AK.model, URIRef(est.model)))
    g.add((node, AK.configuration, Literal(est.configuration)))
    g.add((node, AK.perfVersion, Literal(est.perf_version)))
    if est.fits is not None:
        g.add((node, AK.fitsInMemory, Literal(est.fits)))
    for note in est.notes:
        g.add((node, AK.estimateNote, Literal(note)))
    for name, quantity in sorted(est.quantities.items()):
        prop = getattr(AK, name)
        value = Literal(quantity.value, datatype=XSD.double)
        g.add((node, prop, value))
        pv = URIRef(f"{node}-{name}")
        g.add((node, AK.provenance, pv))
        g.add((pv, RDF.type, AK.Provenance))
        g.add((pv, AK.forProperty, prop))
        g.add((pv, AK.formula, Literal(quantity.formula)))
        g.add((pv, AK.formulaRef, Literal(quantity.ref)))
        g.add((pv, AK.confidence, AK.Medium))
        for basis in _basis(name, est, kb):
            g.add((pv, URIRef(prov + "wasDerivedFrom"), basis))
        for k, v in sorted(quantity.inputs.items()):
            g.add((pv, AK.estimateInput, Literal(f"{k}={v:.6g}" if isinstance(v, float)
                                                 else f"{k}={v}")))
    return node
