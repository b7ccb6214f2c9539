"""Pieces of the advise pipeline: estimates as report data, candidate checks, what-ifs, scaling.

Every number comes from the performance model run on knowledge-base specs; nothing is computed
by the report. Functions here take specs and configurations and return :mod:`accelkb.advise.advice`
objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rdflib import URIRef

from accelkb.advise.advice import (
    AT_TDP,
    Comparison,
    Estimate,
    Range,
    Recommendation,
    ScalingPoint,
    WhatIf,
)
from accelkb.advise.baseline import best_inference_config, best_training_config
from accelkb.advise.findings import clip as find_clip
from accelkb.advise.kbfacts import local
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK
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
from accelkb.perf.api import parse_parallel
from accelkb.perf.from_kb import resized

SKOS_PREF = URIRef("http://www.w3.org/2004/02/skos/core#prefLabel")
SKOS_BROADER = URIRef("http://www.w3.org/2004/02/skos/core#broader")
RDFS_LABEL = URIRef("http://www.w3.org/2000/01/rdf-schema#label")
PRECISION_NOTATION: dict[Any, str] = {AK.FP32: "fp32", AK.TF32: "tf32", AK.FP16: "fp16", AK.BF16: "bf16",
                      AK.FP8: "fp8", AK.INT8: "int8"}


def as_estimate(est: TrainingEstimate | InferenceEstimate) -> Estimate:
    """Report data for one perf estimate."""
    if isinstance(est, TrainingEstimate):
        return Estimate(configuration=est.config.model_dump(), chips=est.chips,
                        time_s=est.step_time_s, tokens_per_s=est.tokens_per_s, mfu=est.mfu,
                        memory_per_chip_bytes=dict(est.memory_per_chip_bytes),
                        breakdown_s=dict(est.breakdown), joules_per_token=est.joules_per_token,
                        power_w=est.power_w, time_to_train_s=est.time_to_train_s,
                        layer_working_set_bytes=est.layer_working_set_bytes
                        if est.sram_only_bytes else None, sram_bytes=est.sram_only_bytes)
    return Estimate(configuration=est.config.model_dump(), chips=est.chips,
                    time_s=est.decode_s_per_token, tokens_per_s=est.tokens_per_s,
                    tokens_per_s_per_user=est.tokens_per_s_per_user, ttft_s=est.ttft_s,
                    mfu=est.mfu, memory_per_chip_bytes=dict(est.memory_per_chip_bytes),
                    breakdown_s=dict(est.breakdown), joules_per_token=est.joules_per_token,
                    end_to_end_tokens_per_s=est.end_to_end_tokens_per_s,
                    end_to_end_joules_per_token=est.end_to_end_joules_per_token,
                    power_w=est.power_w, bound=est.bound)


def ranges(est: TrainingEstimate | InferenceEstimate, vendor: str | None) -> dict[str, Range]:
    """The range of each headline figure of ``est``, keyed by the report's field names."""
    from accelkb.perf.inference import physical_bounds
    from accelkb.perf.uncertainty import INFERENCE_FIGURES, bounded, interval

    if isinstance(est, TrainingEstimate):
        figures = {"time_s": ("step_time_s", "training", "time"),
                   "tokens_per_s": ("tokens_per_s", "training", "rate"),
                   "time_to_train_s": ("time_to_train_s", "training", "time")}
    else:
        figures = {"time_s": ("decode_s_per_token", *INFERENCE_FIGURES["decode_s_per_token"]),
                   "tokens_per_s_per_user": ("tokens_per_s_per_user",
                                             *INFERENCE_FIGURES["tokens_per_s_per_user"]),
                   "ttft_s": ("ttft_s", *INFERENCE_FIGURES["ttft_s"])}
    bounds = physical_bounds(est) if isinstance(est, InferenceEstimate) else {}
    out = {}
    for key, (field, regime, sense) in figures.items():
        value = getattr(est, field, None)
        if isinstance(value, int | float) and value > 0:
            iv = bounded(interval(float(value), sense, vendor, regime),
                         *bounds.get(field, (None, None)))
            out[key] = Range(low=iv.low, high=iv.high, basis=iv.basis)
    return out


def to_parallel(cfg: TrainingConfig | InferenceConfig) -> str:
    """The configuration as ``key=value,...`` (the perf ``--parallel`` syntax)."""
    skip = {"queue_when_full"}
    items = [(k, v) for k, v in cfg.model_dump().items() if v is not None and k not in skip]
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in items)


def phase_name(cfg: TrainingConfig | InferenceConfig) -> str:
    return "training" if isinstance(cfg, TrainingConfig) else "inference"


def label(kb: KnowledgeBase, iri: Any) -> str:
    g = kb.asserted
    return str(g.value(iri, SKOS_PREF) or g.value(iri, RDFS_LABEL) or local(iri))


def estimate(model: ModelSpec, system: SystemSpec, cfg: TrainingConfig | InferenceConfig,
             tokens: float | None = None) -> TrainingEstimate | InferenceEstimate:
    if isinstance(cfg, TrainingConfig):
        return estimate_training(model, system, cfg, train_tokens=tokens)
    return estimate_inference(model, system, cfg)


def key_time(est: TrainingEstimate | InferenceEstimate) -> float:
    return est.step_time_s if isinstance(est, TrainingEstimate) else est.decode_s_per_token


def check_candidate(kb: KnowledgeBase, opt: URIRef, mitigates: list[str], model: ModelSpec,
                    system: SystemSpec, cfg: TrainingConfig | InferenceConfig,
                    base: TrainingEstimate | InferenceEstimate, tokens: float | None,
                    derivation: list[str]) -> Recommendation:
    """Apply the optimization's declared layout change and estimate before/after."""
    g = kb.asserted
    name = str(g.value(opt, AK.shortName) or local(opt))
    costs = sorted(label(kb, c) for c in g.objects(opt, AK.hasCost))
    requires = sorted(label(kb, p) for p in g.objects(opt, AK.requires))
    effects = []
    for eff in g.objects(opt, AK.hasEffect):
        speed: Any = g.value(eff, AK.reportedSpeedup)
        if speed is not None:
            ctx = g.value(eff, AK.context) or g.value(eff, AK.baseline) or ""
            effects.append(f"published: {float(speed):.3g}x ({ctx})".strip())
        elif (f := g.value(eff, AK.formula)) is not None:
            effects.append(f"formula: {f}")
    common: dict[str, Any] = dict(optimization=name, label=label(kb, opt), mitigates=mitigates,
                                  costs=costs, requires=requires,
                                  published_effect="; ".join(effects[:2]), derivation=derivation)
    chip = kb.names("chip").get(system.chip.name)
    features = set(g.objects(chip, AK.hasFeature)) if chip is not None else set()
    provided = set(g.objects(opt, AK.providedByFeature))
    if provided & features:
        return Recommendation(status="already-applied", before=as_estimate(base),
                              solver_check="built into the chip's execution model ("
                              + ", ".join(label(kb, f) for f in sorted(provided & features, key=str)) + ")",
                              **common)
    if g.value(opt, AK.coveredByLayoutSearch) is not None:
        chosen = {k: v for k, v in cfg.model_dump().items() if k in ("tp", "pp", "dp")}
        return Recommendation(status="already-applied", configuration_change=chosen,
                              before=as_estimate(base), solver_check="degree chosen by the layout "
                              "search of the baseline: " + ", ".join(f"{k}={v}" for k, v in chosen.items()),
                              **common)
    change_text = g.value(opt, AK.perfConfigChange)
    if change_text is None:
        return Recommendation(status="not-modelled", **common)
    change = parse_parallel(str(change_text))
    unknown = sorted(set(change) - set(type(cfg).model_fields))
    if unknown:
        return Recommendation(status="not-modelled", configuration_change=change,
                              blocked_by=f"no {', '.join(unknown)} lever in the {phase_name(cfg)} model",
                              **common)
    needed: Any = g.value(opt, AK.requiresPrecision)
    if needed is not None and PRECISION_NOTATION.get(needed) not in system.chip.peak_flops:
        return Recommendation(status="blocked", configuration_change=change,
                              blocked_by=f"{system.chip.name} has no {PRECISION_NOTATION.get(needed)} "
                              f"peak in the knowledge base", **common)
    current = cfg.model_dump()
    if all(current.get(k) == v for k, v in change.items()):
        return Recommendation(status="already-applied", configuration_change=change,
                              before=as_estimate(base), **common)
    if change.get("rts") and int(current.get("zero") or 0) >= 1:
        # the model shards with rts=true what ZeRO-1 shards (the optimizer state over the
        # replicas): q1b listed it as 'no-gain 1.000x' beside ZeRO-3, named RTS on IPUs, at 1.2x
        return Recommendation(
            status="already-applied", configuration_change=change, before=as_estimate(base),
            solver_check=f"the baseline's zero={current['zero']} already shards the optimizer "
            "state over the replicas, which is what rts=true shards in the model; sharding the "
            "weights and gradients too is ZeRO stage 3 (zero=3), RTS of the whole model state",
            **common)
    try:
        new_cfg = type(cfg).model_validate({**current, **change})
        after = estimate(model, system, new_cfg, tokens)
    except (InputError, ValueError) as exc:
        return Recommendation(status="blocked", configuration_change=change,
                              blocked_by=str(exc).splitlines()[0], before=as_estimate(base),
                              **common)
    speedup = key_time(base) / key_time(after)
    return Recommendation(status="recommended" if speedup > 1.005 else "no-gain", speedup=speedup,
                          before=as_estimate(base), after=as_estimate(after),
                          configuration_change=change, **common)


# ---- what-ifs: hardware levers, quantified by re-running the model with one fact changed ----

def _scale_levels(system: SystemSpec, factor: float, which: str) -> SystemSpec:
    levels = list(system.levels)
    idx = range(len(levels)) if which == "all" else [0 if which == "inner" else len(levels) - 1]
    for i in idx:
        levels[i] = levels[i].model_copy(update={
            "bandwidth_bytes_per_s_per_chip": levels[i].bandwidth_bytes_per_s_per_chip * factor})
    return system.model_copy(update={"levels": levels})


def _scale_latency(system: SystemSpec, factor: float) -> SystemSpec:
    levels = [lv.model_copy(update={"latency_s": lv.latency_s * factor}) for lv in system.levels]
    return system.model_copy(update={"levels": levels})


def _halve_latency(system: SystemSpec) -> SystemSpec:
    return _scale_latency(system, 0.5)


def _scale_tier(system: SystemSpec, kind: str, field: str, factor: float) -> SystemSpec | None:
    if system.chip.tier(kind) is None:
        return None
    tiers = [t.model_copy(update={field: getattr(t, field) * factor}) if t.kind == kind else t
             for t in system.chip.memory_tiers]
    return system.model_copy(update={"chip": system.chip.model_copy(update={"memory_tiers": tiers})})


def _add_fp8(system: SystemSpec) -> SystemSpec | None:
    peaks = dict(system.chip.peak_flops)
    if "fp8" in peaks:
        return None
    base = peaks.get("bf16") or peaks.get("fp16")
    if base is None:
        return None
    peaks["fp8"] = 2 * base
    return system.model_copy(update={"chip": system.chip.model_copy(update={"peak_flops": peaks})})


#: (lever, change text, builder, note). The factors are the hypotheses being asked, not facts.
WHAT_IFS: list[tuple[str, str, Callable[[SystemSpec], SystemSpec | None], str]] = [
    ("faster scale-up links", "innermost network level bandwidth x2",
     lambda s: _scale_levels(s, 2.0, "inner"), "e.g. twice the IPU-Link / NVLink / C2C bandwidth"),
    ("faster scale-out links", "outermost network level bandwidth x2",
     lambda s: _scale_levels(s, 2.0, "outer") if len(s.levels) > 1 else None,
     "e.g. twice the GW-Link / InfiniBand bandwidth per chip"),
    ("more chip-to-chip links", "every network level's bandwidth per chip x2",
     lambda s: _scale_levels(s, 2.0, "all"), "e.g. more Groq C2C links per chip"),
    ("lower link latency", "per-hop latency x0.5", _halve_latency,
     "matters where small messages dominate (decode)"),
    ("more on-chip SRAM", "SRAM capacity per chip x2",
     lambda s: _scale_tier(s, "sram", "capacity_bytes", 2.0), "a larger die or stacked SRAM"),
    ("faster on-chip SRAM feed", "SRAM bandwidth per chip x2",
     lambda s: _scale_tier(s, "sram", "bandwidth_bytes_per_s", 2.0),
     "on a statically scheduled chip (Groq), the rate at which weights reach the matrix units"),
    ("faster HBM", "HBM bandwidth per chip x2",
     lambda s: _scale_tier(s, "hbm", "bandwidth_bytes_per_s", 2.0), "next HBM generation"),
    ("faster off-chip tier", "DDR / streaming memory bandwidth per chip x2",
     lambda s: _scale_tier(s, "ddr", "bandwidth_bytes_per_s", 2.0)
     or _scale_tier(s, "streaming", "bandwidth_bytes_per_s", 2.0), "more DDR channels"),
    ("an FP8 datapath", "FP8 peak = 2 x the 16-bit peak, used for the linear layers' products "
     "(training: FP8 mixed precision, the rest 16-bit)", _add_fp8,
     "hypothesis for chips without FP8 (e.g. SN40L); numerics must hold"),
]


def what_ifs(model: ModelSpec, system: SystemSpec, cfg: TrainingConfig | InferenceConfig,
             base: TrainingEstimate | InferenceEstimate) -> list[WhatIf]:
    out = []
    for lever, change, build, note in WHAT_IFS:
        if build is _halve_latency and all(lv.latency_s == 0 for lv in system.levels):
            out.append(WhatIf(lever=lever, change=change, time_s=None,
                              speedup=None, note="not estimated: the knowledge base "
                              "gives no hardware latency for these links (only the software "
                              "latency per collective is counted), so halving it would read "
                              "1.000x whatever the links do"))
            continue
        changed = build(system)
        if changed is None:
            continue
        new_cfg = cfg
        if "FP8" in change:
            new_cfg = type(cfg).model_validate({**cfg.model_dump(), "precision": "fp8"})
        try:
            est = estimate(model, changed, new_cfg)
        except InputError as exc:
            out.append(WhatIf(lever=lever, change=change, time_s=None, speedup=None,
                              note=f"not estimated: {str(exc).splitlines()[0]}"))
            continue
        out.append(WhatIf(lever=lever, change=change, time_s=key_time(est),
                          speedup=key_time(base) / key_time(est), note=note))
    return sorted(out, key=lambda w: -(w.speedup or 0.0))


def _cheapest(model: ModelSpec, system: SystemSpec, prompt: int, output: int,
              precision: str | None, goal: str, slo: float | None) -> tuple[Any, Any, str]:
    """Inference for --goal cost or energy: the layout and batch with the most tokens per
    second per chip used (the least $ per token) or the fewest joules per token, among those
    that keep ``slo`` tokens/s per user (:mod:`accelkb.advise.cheapest`)."""
    from accelkb.advise.cheapest import MAX_BATCH, cheapest_inference_config

    ib = cheapest_inference_config(model, system, prompt, output, precision,
                                   "cost" if goal == "cost" else "energy", slo)
    what = ("most generated tokens per second per chip used, prefill counted (least $ per "
            "token)" if goal == "cost" else "fewest joules per generated token, prefill counted")
    slo_words = f", keeping {slo:g} tokens/s per user" if slo is not None else \
        ", with no per-user speed target (--slo-tokens-per-s-per-user)"
    flight = (f"batch {ib.config.batch} on each of {ib.config.pp} pipeline stages" if
              ib.config.pipelined else f"batch {ib.config.batch}")
    note = (f"{what}, over {ib.tried} layouts, each at the largest batch up to {MAX_BATCH} it "
            f"holds at once{slo_words}: {flight} at {ib.config.precision.upper()}, on "
            f"{ib.estimate.chips} of {system.chips} chips")
    return ib.config, ib.estimate, note


def baseline(model: ModelSpec, system: SystemSpec, phase: str, gbs: int, prompt: int, output: int,
             precision: str | None, goal: str, slo: float | None = None,
             allowed: Callable[[Any], bool] | None = None) -> tuple[Any, Any, str]:
    """(config, estimate, note) of the best default layout for the phase (``allowed``:
    training layouts that meet the knowledge base's declared constraints)."""
    if phase != "training" and goal in ("cost", "energy"):
        return _cheapest(model, system, prompt, output, precision, goal, slo)
    if phase == "training":
        b = best_training_config(model, system, gbs, precision, allowed)
        note = (f"fastest of {b.fitted} fitting layouts out of {b.tried} tried (tensor parallel within "
                f"the fastest level, pipeline over layers, recompute and ZeRO-1 options)")
        return b.config, b.estimate, note
    ib = best_inference_config(model, system, prompt, output, 1, precision,
                               "throughput" if goal == "throughput" else "latency")
    note = (f"lowest per-token latency of {ib.fitted} fitting layouts out of {ib.tried} tried, at "
            f"{ib.config.precision.upper()} (tensor parallel within the fastest level, pipeline stages "
            "across the rest)")
    return ib.config, ib.estimate, note


def _power_scope(spec: SystemSpec) -> str:
    if spec.power_watts_per_chip is not None:
        return "system" if spec.chip.tdp_watts is not None else "system, no chip TDP"
    if spec.chip.tdp_watts is not None:
        return "chip"
    return "average" if spec.average_watts_per_chip is not None else "none"


def per_watt(e: Any) -> float | None:
    """Tokens per second per watt of a report estimate: for inference, generated tokens per
    joule with each request's prefill counted (what the cost table's tokens/J says, and what
    the cost and energy searches rank), else its tokens per second over its power."""
    if getattr(e, "end_to_end_joules_per_token", None):
        return 1.0 / float(e.end_to_end_joules_per_token)
    return e.tokens_per_s / e.power_w if e.power_w else None


def _per_watt_at_tdp(spec: SystemSpec, e: Any) -> float | None:
    """:func:`per_watt` with the run's power put on the chips' TDP where it can be: a system's
    full power (a server's maximum input, shared per chip) scaled to the chip's TDP at the same
    activity; a system without a chip TDP keeps its own figure."""
    pw = per_watt(e)
    if pw is not None and spec.power_watts_per_chip is not None \
            and spec.chip.tdp_watts is not None:
        pw *= spec.power_watts_per_chip / spec.chip.tdp_watts
    return pw


def one_power_boundary(own: SystemSpec, own_est: Any, others: list[tuple[SystemSpec, Comparison]]
                       ) -> tuple[list[Comparison], float | None, str]:
    """(comparisons, this system's tokens/s per W, basis) with every per-watt figure on one
    boundary where one exists. Where the full-power figures differ in scope (DGX H100: the
    server's 10,200 W maximum; an MI300X platform: only its GPUs' TDP) and every chip has a
    TDP, all go on the chips' TDP; where they differ and some chip has none, each keeps its own
    figure and the basis says they are not comparable; else the basis is empty."""
    specs = [own, *[s for s, _ in others]]
    scopes = {s.name: _power_scope(s) for s in specs}
    own_pw = per_watt(own_est)
    kinds = set(scopes.values()) - {"none"}
    if kinds <= {"system", "system, no chip TDP"} or len(kinds) <= 1:
        return [c for _, c in others], own_pw, ""
    listed = "; ".join(f"{n}: {_SCOPE_WORDS[scope]}" for n, scope in scopes.items())
    if not kinds <= {"system", "chip"}:  # a chip without a TDP or a published average
        return [c for _, c in others], own_pw, (
            "each system's own full-power figure, and these differ in scope with no common "
            f"boundary to put them on, so the column is not like for like ({listed})")
    out = [c.model_copy(update={"tokens_per_s_per_watt": _per_watt_at_tdp(s, c.estimate)})
           if c.estimate is not None else c for s, c in others]
    return out, _per_watt_at_tdp(own, own_est), (
        f"{AT_TDP} (each run's activity kept): the knowledge base's full-power figures differ "
        f"in scope ({listed})")



_SCOPE_WORDS = {"system": "the whole system's maximum", "chip": "the chip's TDP",
                "system, no chip TDP": "the whole system's maximum, no chip TDP",
                "average": "a published average under load", "none": "no power figure"}


def scaling(model: ModelSpec, system: SystemSpec, phase: str, gbs: int, prompt: int, output: int,
            precision: str | None, goal: str, counts: list[int],
            slo: float | None = None) -> list[ScalingPoint]:
    points = []
    for n in counts:
        try:
            _, est, _ = baseline(model, resized(system, n), phase, gbs, prompt, output, precision,
                                 goal, slo)
        except InputError as exc:
            points.append(ScalingPoint(chips=n, time_s=None, tokens_per_s=None,
                                       note=find_clip(str(exc).splitlines()[0], 160)))
            continue
        e = as_estimate(est)
        points.append(ScalingPoint(chips=n, time_s=e.time_s, tokens_per_s=e.tokens_per_s,
                                   tokens_per_s_per_user=e.tokens_per_s_per_user))
    return points


def scaling_counts(system: SystemSpec, phase: str, model: ModelSpec, chips: int) -> list[int]:
    """Chip counts for the scaling curve: powers of two of the fastest group and multiples of the
    next level's group (racks, nodes) up to 2x the system, at most 12 points, the system's own
    size always included."""
    group = system.levels[0].group_chips
    counts = {chips}
    n = group
    while n <= max(2 * chips, group):
        counts.add(n)
        n *= 2
    if len(system.levels) > 1:
        step = system.levels[1].group_chips
        counts.update(range(step, 2 * chips + 1, step))
    if phase != "training":  # inference: stages must not outnumber layers
        counts = {c for c in counts if c // max(1, min(group, model.heads)) <= model.layers}
    ordered = sorted(counts)
    if len(ordered) > 12:  # keep both ends and spread the rest
        idx = {round(i * (len(ordered) - 1) / 11) for i in range(12)}
        ordered = sorted({ordered[i] for i in idx} | {chips})
    return ordered
