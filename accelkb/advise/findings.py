"""Bottlenecks with evidence, the explanation chains, and the answer's prose.

Findings come from the rule engine (:mod:`accelkb.rules`): each carries its derivation down to
sourced facts, and the time share the performance model attributes to it. If the rule engine
fails, they come from the performance model's time breakdown and memory placement (each cause
above a threshold share), labelled as such, so a report never loses its evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rdflib import URIRef
from rdflib.namespace import SKOS

from accelkb.advise.advice import Estimate, Finding, Recommendation, ScalingPoint, WhatIf
from accelkb.advise.citations import marker
from accelkb.advise.kbfacts import local
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf import InferenceEstimate, ModelSpec, SystemSpec, TrainingEstimate

KB = "https://w3id.org/accelkb/data/"

#: Which bottleneck each performance-model time component is evidence of.
COMPONENT_BOTTLENECK = {
    "compute": "compute", "recompute": "compute", "tensor_parallel_comm": "interconnect-bandwidth",
    "pipeline_p2p": "interconnect-bandwidth", "pipeline_bubble": "pipeline-bubble",
    "data_parallel_comm": "interconnect-bandwidth", "optimizer": "memory-bandwidth",
    "offload": "memory-capacity", "memory": "memory-bandwidth",
    "overhead": "latency-synchronization", "pipeline_hops": "latency-synchronization",
    "elementwise_passes": "memory-bandwidth",
}
#: The bottlenecks that are a share of the step's time (memory capacity decides what fits).
_TIMED = ("compute", "memory-bandwidth", "interconnect-bandwidth", "latency-synchronization")
#: A component must take at least this share of the time to count as a bottleneck.
SHARE_THRESHOLD = 0.10


@dataclass(frozen=True)
class Found:
    finding: Finding
    rule_bottleneck: str  # IRI of the ak:Bottleneck


def _fmt_s(s: float) -> str:
    return f"{s:.3g} s" if s >= 1 else f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} µs"


def _fmt_bytes(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.3g} B"


def _breakdown_findings(kb: KnowledgeBase, spec: SystemSpec, est: TrainingEstimate | InferenceEstimate
                        ) -> list[Found]:
    shares, detail, total = _shares(est)
    return _share_findings(kb, spec, est, shares, detail, total)


def _shares(est: TrainingEstimate | InferenceEstimate
            ) -> tuple[dict[str, float], dict[str, list[str]], float]:
    """Each bottleneck's share of the step in the model's breakdown, with the parts behind it."""
    parts = {k: v for k, v in est.breakdown.items() if k != "prefill_s" and v > 0}
    total = sum(parts.values()) or 1.0
    busy = parts.get("compute", 0.0) + parts.get("recompute", 0.0)
    if isinstance(est, TrainingEstimate) and est.elementwise_s > 0 and busy > 0:
        # inside compute, the elementwise passes are bound by memory bandwidth, not the units
        for k in ("compute", "recompute"):
            if k in parts:
                parts[k] -= est.elementwise_s * parts[k] / busy
        parts["elementwise_passes"] = est.elementwise_s
    shares: dict[str, float] = {}
    detail: dict[str, list[str]] = {}
    for comp, secs in parts.items():
        b = COMPONENT_BOTTLENECK.get(comp)
        if b is None:
            continue
        # In decode, tensor-parallel messages are tiny: their time is latency, not bandwidth.
        if comp == "tensor_parallel_comm" and isinstance(est, InferenceEstimate) and \
                est.bound == "latency":
            b = "latency-synchronization"
        shares[b] = shares.get(b, 0.0) + secs / total
        detail.setdefault(b, []).append(f"{comp.replace('_', ' ')} {_fmt_s(secs)} "
                                        f"({100 * secs / total:.0f} %)")
    return shares, detail, total


def _share_findings(kb: KnowledgeBase, spec: SystemSpec, est: TrainingEstimate | InferenceEstimate,
                    shares: dict[str, float], detail: dict[str, list[str]], total: float
                    ) -> list[Found]:
    out = []
    g = kb.asserted
    for b, share in sorted(shares.items(), key=lambda kv: -kv[1]):
        if share < SHARE_THRESHOLD:
            continue
        iri = URIRef(KB + "bottleneck-" + b)
        label = str(g.value(iri, URIRef("http://www.w3.org/2004/02/skos/core#prefLabel")) or b)
        evidence = "; ".join(detail[b]) + f" of a {_fmt_s(total)} " + (
            "step" if isinstance(est, TrainingEstimate) else "decode step")
        out.append(Found(Finding(bottleneck=b, label=label, evidence=evidence, share_of_time=share,
                                 derivation=[f"performance model breakdown: {evidence}"],
                                 rule="accelkb.advise.findings (time breakdown)"), str(iri)))
    fast = spec.chip.memory_tiers[0]
    spilled = {t: sum(v.values()) for t, v in est.placement.items() if t != fast.kind}
    if spilled and any(v > 0 for v in spilled.values()):
        iri = URIRef(KB + "bottleneck-memory-capacity")
        need = sum(est.memory_breakdown_bytes.values())
        where = ", ".join(f"{_fmt_bytes(v)} in {k}" for k, v in spilled.items())
        ev = (f"model state and activations need {_fmt_bytes(need)} per chip but "
              f"{fast.kind.upper()} holds {_fmt_bytes(fast.capacity_bytes)}; {where}")
        if not any(f.rule_bottleneck == str(iri) for f in out):
            out.append(Found(Finding(bottleneck="memory-capacity", label="memory capacity",
                                     evidence=ev, derivation=[f"performance model placement: {ev}"],
                                     rule="accelkb.advise.findings (memory placement)"), str(iri)))
    return out


@dataclass(frozen=True)
class RuleCandidate:
    """A candidate optimization as the rules derived it for one or more findings."""

    optimization: str  # IRI
    mitigates: tuple[str, ...]  # bottleneck short names
    status: str  # met / unmet / unknown precondition
    note: str
    rank: int | None
    condition: str = ""  # unmet: the precondition that failed, with the rule's numbers


_NUMBER = re.compile(r'^"([-+0-9.eE]+)"\^\^<http://www\.w3\.org/2001/XMLSchema#\w+>$')


def failed_condition(kb: KnowledgeBase, candidate: Any) -> str:
    """'data-parallel degree at least 2 not met: dp = 1 (rule candidate-zero-sharding)': the
    precondition a rule found unmet and the numbers it compared, from its derivation record."""
    from accelkb.rules.explain import explain

    pre = kb.asserted.value(URIRef(candidate.precondition), SKOS.prefLabel) if \
        candidate.precondition else None
    words = str(pre) if pre is not None else "precondition"
    try:
        e = explain(kb, URIRef(candidate.iri))
    except Exception:  # the record is best effort; the precondition's name still stands
        return f"{words} not met (rules)"
    numbers = []
    for var, value in sorted(e.bindings.items()):
        if (m := _NUMBER.match(value)) is not None:
            numbers.append(f"{var} = {float(m.group(1)):g}")
    said = f": {', '.join(numbers)}" if numbers else ""
    return f"{words} not met{said} (rule {e.rule_id or 'unknown'})"


def findings(kb: KnowledgeBase, system: URIRef, workload: URIRef, spec: SystemSpec,
             model: ModelSpec, est: TrainingEstimate | InferenceEstimate, parallel: str
             ) -> tuple[list[Found], list[RuleCandidate] | None]:
    """Bottlenecks of the estimate and the rules' candidates (None when the rules are absent).

    The rules run on the same configuration as the baseline (``parallel``), so their evidence
    and the report's numbers agree.
    """
    try:
        from accelkb.rules import explain, infer
    except ImportError:
        return _breakdown_findings(kb, spec, est), None
    try:
        report = infer(kb, workload, system, chips=spec.chips, parallel=parallel)
    except Exception as exc:  # a rule-engine failure must not hide the model's evidence
        fallback = _breakdown_findings(kb, spec, est)
        note = f"rule engine failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
        return [Found(f.finding.model_copy(update={"derivation": [*f.finding.derivation, note]}),
                      f.rule_bottleneck) for f in fallback], None
    shares = {f.rule_bottleneck: f.finding.share_of_time for f in _breakdown_findings(kb, spec, est)}
    raw = {KB + "bottleneck-" + b: v for b, v in _shares(est)[0].items()}
    found: dict[str, Found] = {}
    cands: dict[str, RuleCandidate] = {}
    for f in report.findings:
        name = local(f.bottleneck).removeprefix("bottleneck-")
        try:
            lines = [ln.rstrip() for ln in explain(kb, URIRef(f.iri)).render(cite=marker).splitlines()
                     if ln.strip()]  # the tree's indent kept: the report nests the premises
        except Exception as exc:  # explanation is best effort; the finding stands
            lines = [f.explanation, f"(explanation unavailable: {type(exc).__name__})"]
        if f.bottleneck in found:  # several rules found the same bottleneck: keep both chains
            old = found[f.bottleneck].finding
            found[f.bottleneck] = Found(old.model_copy(update={
                "evidence": old.evidence + " Also: " + f.explanation,
                "derivation": old.derivation + lines}), f.bottleneck)
        else:
            share = shares.get(f.bottleneck)
            minor = share is None and name in _TIMED and raw.get(f.bottleneck, 1.0) < \
                SHARE_THRESHOLD  # a capacity limit is not a share of the time
            found[f.bottleneck] = Found(Finding(
                bottleneck=name, label=f.label, evidence=f.explanation + (
                    f"; but in the model's breakdown it takes "
                    f"{100 * raw.get(f.bottleneck, 0.0):.1f} % of the time, so it does not "
                    "limit this layout" if minor else ""),
                share_of_time=raw.get(f.bottleneck, 0.0) if minor else share, derivation=lines,
                rule=f"rule {f.rule}" if f.rule else ""), f.bottleneck)
        for c in f.candidates:
            prev = cands.get(c.optimization)
            mit = tuple(sorted({*(prev.mitigates if prev else ()), name}))
            rank = min(r for r in (c.rank, prev.rank if prev else None) if r is not None) \
                if (c.rank is not None or (prev and prev.rank is not None)) else None
            status = "met" if c.status == "met" or (prev and prev.status == "met") else c.status
            condition = failed_condition(kb, c) if status == "unmet" else ""
            cands[c.optimization] = RuleCandidate(c.optimization, mit, status, c.note or "", rank,
                                                  condition)
    ordered = sorted(found.values(), key=lambda x: -(x.finding.share_of_time or 0.0))
    return ordered, sorted(cands.values(), key=lambda c: c.optimization)


def optimization_chain(kb: KnowledgeBase, opt: URIRef, mitigated: list[str],
                       found: list[Found]) -> list[str]:
    """Why the optimization is a candidate: bottleneck -> catalogue link -> its sources."""
    g = kb.asserted
    lines = []
    for f in found:
        if f.finding.bottleneck in [m.removeprefix("bottleneck-") for m in mitigated]:
            lines.append(f"bottleneck {f.finding.bottleneck}: {f.finding.evidence}")
    lines.append(f"catalogue: {local(opt)} ak:mitigates {', '.join(mitigated)}")
    srcs = sorted({str(s) for s in g.objects(opt, URIRef("http://purl.org/dc/terms/source"))})
    for eff in g.objects(opt, URIRef("https://w3id.org/accelkb/schema#hasEffect")):
        srcs += sorted({str(s) for s in g.objects(eff, URIRef("http://purl.org/dc/terms/source"))})
    if srcs:
        lines.append("sources: " + ", ".join(local(s) for s in dict.fromkeys(srcs)))
    return lines


def assumptions(spec: SystemSpec, cfg: Any, phase: str) -> list[str]:
    out = [
        "Estimates come from accelkb's performance model (roofline compute with fitted efficiency, "
        "alpha-beta collectives, Korthikanti activation memory, ZeRO model-state memory); its "
        "validation error is reported by bench/perf_validation.py.",
        f"Layout: {', '.join(f'{k}={v}' for k, v in cfg.model_dump().items() if v not in (None, False))}.",
    ]
    if any(lv.latency_s == 0 for lv in spec.levels):
        out.append("Where the knowledge base has no link latency, only the calibrated software "
                   "latency per collective step is counted (medium confidence).")
    if spec.watts_per_chip is None and spec.average_watts_per_chip is not None:
        out.append("No full-power figure for this system in the knowledge base (ak:maxPowerWatts, "
                   "ak:powerWatts or the chip's ak:tdpWatts): energy is the published average "
                   f"power under load, {spec.average_basis or 'ak:averagePowerWatts'}, whatever "
                   "the layout's activity (low confidence for other workloads).")
    elif spec.watts_per_chip is None:
        out.append("No full-power figure for this system in the knowledge base (ak:maxPowerWatts, "
                   "ak:powerWatts or the chip's ak:tdpWatts; an ak:averagePowerWatts is not one): "
                   "energy is not reported.")
    else:
        out.append(f"Energy: power between the calibrated idle floor and full power by activity; "
                   f"full power is {spec.watts_basis}.")
    if phase != "training":
        out.append("Inference: one request stream (batch 1) unless the goal is throughput; decode "
                   "time per token excludes network time outside the system.")
    return out


def _scaling_sentence(scaling: list[ScalingPoint], chips: int | None = None) -> str:
    """The strong-scaling sentence of an inference answer. Every point is a model estimate;
    counts above ``chips`` (the system's own) are the same system scaled, and the sentence says
    so.

    >>> pts = [ScalingPoint(chips=n, time_s=1.0, tokens_per_s=v, tokens_per_s_per_user=v)
    ...        for n, v in ((8, 60.0), (16, 80.0))]
    >>> _scaling_sentence(pts, 8)  # doctest: +NORMALIZE_WHITESPACE
    'Strong scaling (estimated): from 8 chips; per-user speed is 80 tokens/s at best (16 chips,
     the system scaled past its 8) and does not fall up to 16 chips.'
    """
    fits = [p for p in scaling if p.time_s is not None and p.tokens_per_s_per_user]
    if len(fits) < 2:
        return ""
    best = max(fits, key=lambda p: p.tokens_per_s_per_user or 0.0)
    last = fits[-1]
    misses = [p.chips for p in scaling if p.time_s is None and p.chips < fits[0].chips]
    start = (f"of the chip counts tried, the weights first fit on {fits[0].chips}" if misses
             else f"from {fits[0].chips} chips")

    def at(n: int) -> str:
        return f"{n} chips, the system scaled past its {chips}" if chips and n > chips \
            else f"{n} chips"
    change = (last.tokens_per_s_per_user or 0.0) / (best.tokens_per_s_per_user or 1.0) - 1
    if best.chips == last.chips or change > -0.01:
        return (f"Strong scaling (estimated): {start}; per-user speed is "
                f"{best.tokens_per_s_per_user:.0f} tokens/s at best ({at(best.chips)}) and does "
                f"not fall up to {last.chips} chips.")
    return (f"Strong scaling (estimated): {start}; per-user speed peaks at {at(best.chips)} "
            f"({best.tokens_per_s_per_user:.0f} tokens/s) and is {100 * change:+.0f} % at "
            f"{last.chips} chips, where extra pipeline hops outweigh the extra chips.")


def clip(text: str, limit: int = 200) -> str:
    """``text`` whole if short; else its first clause (to a ';'), else cut at a word, with '...'.

    >>> clip("a; b", 2)
    'a'
    >>> clip("one two three", 9)
    'one two...'
    """
    text = text.strip().rstrip(".")
    if len(text) <= limit:
        return text
    first = text.split("; ", 1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0] + "..."


def answer_text(system: str, workload: str, phase: str, est: Estimate, found: list[Found],
                recs: list[Recommendation], whatifs: list[WhatIf], chips: int,
                scaling: list[ScalingPoint] | None = None, network: str = "",
                plan: Recommendation | None = None) -> str:
    """Three to six sentences with the numbers, written from the data only (``network``: what
    the collision-free network buys, :func:`accelkb.advise.network.traffic.sentence`; ``plan``: the
    compatible levers applied together, :mod:`accelkb.advise.plan.combined`)."""
    def rng(key: str, scale: float = 1.0, fmt: str = ".3g", unit: str = "") -> str:
        r = est.ranges.get(key)
        return (f" (range {r.low * scale:{fmt}}-{r.high * scale:{fmt}}{unit})" if r is not None
                else "")

    where = (f"On {chips} chips of {system}" if est.chips >= chips else
             f"On {system}, with the best layout on {est.chips} of its {chips} chips")
    if phase == "training":
        first = (f"{where}, the best default layout trains {workload} at "
                 f"{est.time_s:.3g} s per step{rng('time_s', unit=' s')} ({est.tokens_per_s:,.0f} tokens/s, "
                 f"MFU {100 * est.mfu:.0f} %)")
        if est.time_to_train_s:
            first += (f", {est.time_to_train_s / 86400:.1f} days for the workload's tokens"
                      f"{rng('time_to_train_s', 1 / 86400, '.1f', ' days')}")
    else:
        first = (f"{where}, {workload} decodes at "
                 f"{est.tokens_per_s_per_user or 0:.0f} tokens/s per user"
                 f"{rng('tokens_per_s_per_user', 1.0, '.0f')} "
                 f"({est.time_s * 1e3:.3g} ms per token, {est.bound or 'mixed'}-bound), time to first "
                 f"token {1e3 * (est.ttft_s or 0):.0f} ms{rng('ttft_s', 1e3, '.0f', ' ms')}")
    sentences = [first + "."]
    if phase != "training" and scaling and (line := _scaling_sentence(scaling, chips)):
        sentences.append(line)
    if network:
        sentences.append(network)
    main = [f for f in found if f.finding.share_of_time is None
            or f.finding.share_of_time >= SHARE_THRESHOLD]
    if main:
        top = ", ".join(f"{f.finding.label} ({100 * f.finding.share_of_time:.0f} % of the time)"
                        if f.finding.share_of_time else f.finding.label for f in main[:3])
        sentences.append(f"The main bottlenecks are {top}.")
    good = [r for r in recs if r.status == "recommended"]
    if good:
        best = ", ".join(f"{r.label} ({r.speedup:.2f}x)" for r in good[:3])
        together = (f"; applied together as one re-checked layout ({len(plan.includes)} of "
                    f"{len(plan.includes) + len(plan.excludes)}), they give {plan.speedup:.2f}x"
                    if plan is not None and plan.speedup else "")
        sentences.append(f"Checked by the model, the best software levers are {best}{together}.")
    else:
        sentences.append("No catalogued software lever improves on this layout in the model.")
    hw = [w for w in whatifs if w.speedup is not None and w.speedup > 1.02]
    if hw:
        sentences.append(f"The strongest hardware lever is {hw[0].lever} ({hw[0].change}: "
                         f"{hw[0].speedup:.2f}x).")
    blocked = [r for r in recs if r.status == "blocked"]
    if blocked:
        sentences.append(f"{len(blocked)} candidate(s) are blocked, among them {blocked[0].label}: "
                         f"{clip(blocked[0].blocked_by)}.")
    return " ".join(sentences[:6])
