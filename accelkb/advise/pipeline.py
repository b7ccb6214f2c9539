"""``advise``: a question about a system and a workload in, an explained and checked answer out.

Pipeline (DESIGN.md §1): knowledge base -> performance estimate of the best default layout ->
bottlenecks (rules, with derivations) -> candidate optimizations that mitigate them (from the
catalogue, filtered by vendor and phase) -> each checked before/after by the performance model
(and by the configuration solver where available) -> ranked by checked gain -> what-ifs,
comparisons, scaling, schedules -> :class:`~accelkb.advise.advice.Advice`, asserted back into the graph.

Examples
--------
>>> a = advise("dgx-a100", "gpt3-13b-training")
>>> a.recommendations[0].status in ("recommended", "no-gain", "already-applied", "blocked", "not-modelled")
True
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from accelkb.advise import compared, parts
from accelkb.advise import findings as find
from accelkb.advise import solver as advise_solver
from accelkb.advise.advice import Advice, Recommendation
from accelkb.advise.citations import marker_iris, numbered
from accelkb.advise.costs import Overrides, cost_rows, cost_sentence
from accelkb.advise.costs import Workload as CostWorkload
from accelkb.advise.kbfacts import (
    facts_about,
    local,
    source_refs,
    subjects_of_system,
    vendor_forms,
)
from accelkb.advise.models import sizes as advise_sizes
from accelkb.advise.models import workloads as advise_workloads
from accelkb.advise.network import advantages as advise_advantages
from accelkb.advise.network import schedules as advise_schedule
from accelkb.advise.network import traffic as advise_network
from accelkb.advise.plan import commands as plan_commands
from accelkb.advise.plan.combined import combined_plan
from accelkb.errors import InputError
from accelkb.ontology.kb import RESULTS, KnowledgeBase, stored_query
from accelkb.ontology.namespace import AK
from accelkb.perf import InferenceEstimate, TrainingConfig
from accelkb.perf.api import parse_parallel
from accelkb.perf.cost.estimate import check_overrides
from accelkb.perf.from_kb import system_spec, workload_model_spec
from accelkb.solver.config.instance import DEFAULT_GLOBAL_BATCH

GOALS = ("time", "throughput", "latency", "energy", "cost")
_PHASES: dict[Any, str] = {AK.Training: "training", AK.Inference: "inference", AK.Prefill: "inference",
           AK.Decode: "inference"}

Progress = Callable[[str], None]


def _workload(kb: KnowledgeBase, name: str) -> dict[str, Any]:
    g = kb.asserted
    w = kb.resolve("workload", name)
    model = g.value(w, AK.model)
    phase_iri = g.value(w, AK.phase)
    if model is None or phase_iri not in _PHASES:
        raise InputError(f"workload {name}: expected a model and a phase in the knowledge base")

    def num(p: URIRef, default: float) -> float:
        v = g.value(w, p)
        return float(v.toPython()) if isinstance(v, Literal) else default

    return {
        "iri": w, "model_iri": model, "model": str(g.value(model, AK.shortName)),
        "phase": _PHASES[phase_iri], "phase_iri": phase_iri,
        "gbs": int(num(AK.globalBatchSize, 0)), "tokens": num(AK.tokensToTrain, 0) or None,
        "prompt": int(num(AK.inputTokens, 0)) or 128, "output": int(num(AK.outputTokens, 0)) or 128,
        "precision": parts.PRECISION_NOTATION.get(g.value(w, AK.precision)),
        "label": str(g.value(w, parts.RDFS_LABEL) or name),
    }


def _workload_seq(kb: KnowledgeBase, wl: dict[str, Any], model: Any, phase: str
                  ) -> dict[str, int]:
    """``{"seq_len": n}`` when a training workload runs its model at another length than the
    model's own (``--parallel seq=n`` reproduces it), else nothing."""
    if phase != "training" or _model_seq(kb, wl) == model.seq_len:
        return {}
    return {"seq_len": model.seq_len}


def _model_seq(kb: KnowledgeBase, wl: dict[str, Any]) -> int | None:
    """The sequence length of the workload's model as the knowledge base states it."""
    v = kb.asserted.value(wl["model_iri"], AK.sequenceLength)
    return int(v.toPython()) if isinstance(v, Literal) else None


def _foreign_notes(model: Any, spec: Any, cfg: Any, phase: str) -> list[str]:
    """What the baseline borrows from other vendors' fits (the calibration constants among the
    ones its figures depend on most), as `accelkb estimate` says it."""
    from accelkb.perf import estimate_inference, estimate_training
    from accelkb.perf.uncertainty import foreign_by_vendors

    run = estimate_training if phase == "training" else estimate_inference
    try:
        est = run(model, spec, cfg, with_uncertainty=True)
    except InputError:
        return []
    return [f"Constants fitted only on {vendors} measurements and applied to this other vendor's "
            f"chip: {', '.join(names)}; the terms they set (often the per-operation overhead "
            "behind a latency-bound finding) are as uncertain as the ranges say"
            for vendors, names in foreign_by_vendors(est.foreign_constants).items()]


def _candidates(kb: KnowledgeBase, bottlenecks: list[str], vendor: Any, phase_iri: Any
                ) -> list[tuple[URIRef, list[str]]]:
    """Optimizations mitigating the found bottlenecks, applicable to the vendor and the phase."""
    g = kb.asserted
    out: dict[Any, list[str]] = {}
    for b in bottlenecks:
        for opt in g.subjects(AK.mitigates, URIRef(b)):
            vendors = set(g.objects(opt, AK.appliesToVendor))
            if vendors and vendor not in vendors:
                continue
            phases = set(g.objects(opt, AK.appliesToPhase))
            if phases and not ({phase_iri} | set(g.objects(phase_iri, parts.SKOS_BROADER))) & phases:
                continue
            out.setdefault(opt, []).append(local(b))
    return sorted(out.items(), key=lambda kv: str(kv[0]))


def _software_levers(kb: KnowledgeBase, vendor: Any, phase_iri: Any, spec: Any
                     ) -> list[advise_sizes.SoftwareLever]:
    """The catalogue's layout changes (``ak:perfConfigChange``) for the phase and vendor that
    the chip can run (a precision lever needs the chip's peak at that precision)."""
    g = kb.asserted
    out: dict[str, advise_sizes.SoftwareLever] = {}
    for opt, text in g.subject_objects(AK.perfConfigChange):
        vendors = set(g.objects(opt, AK.appliesToVendor))
        phases = set(g.objects(opt, AK.appliesToPhase))
        if (vendors and vendor not in vendors) or (phases and not (
                {phase_iri} | set(g.objects(phase_iri, parts.SKOS_BROADER))) & phases):
            continue
        needed: Any = g.value(opt, AK.requiresPrecision)
        if needed is not None and parts.PRECISION_NOTATION.get(needed) not in spec.chip.peak_flops:
            continue
        change = parse_parallel(str(text))
        out.setdefault(str(text), advise_sizes.SoftwareLever(parts.label(kb, opt), change))
    return sorted(out.values(), key=lambda lv: lv.label)


_GOAL_WORDS = {"cost": "cheaper", "energy": "on less energy", "throughput": "with more "
               "throughput", "latency": "with lower latency"}


def advise(system: str, workload: str, chips: int | None = None, goal: str = "time",
           compare: Sequence[str] = (), kb: KnowledgeBase | None = None,
           progress: Progress | None = None, question: str | None = None,
           slo: float | None = None, price: float | None = None,
           kwh_price: float | None = None, pue: float | None = None,
           model_ref: str | None = None, data: Sequence[str] = (),
           sizes: Sequence[str] = (), workloads: Sequence[str] = ()) -> Advice:
    """Explained, quantitatively checked recommendations for ``workload`` on ``system``.

    With ``goal`` cost or energy, an inference baseline (and every compared system) is the
    batch and layout with the least $ or joules per token that keeps ``slo`` tokens/s per user.
    ``price`` (dollars per chip-hour) prices this system instead of the knowledge base's
    quotes; ``kwh_price`` and ``pue`` replace the facility assumptions for every system priced.
    ``model_ref`` (the model as ``accelkb estimate --model`` takes it, default the workload's
    model name) and ``data`` (the ``--data`` files the knowledge base was built with) go into the
    ``accelkb estimate`` command printed for each layout. ``sizes`` (training: model short
    names) adds a sweep of the same system over model sizes (:mod:`accelkb.advise.models.sizes`);
    ``workloads`` (training workload short names, e.g. vision models) adds those workloads on
    this system and the compared systems (:mod:`accelkb.advise.models.workloads`).

    Raises
    ------
    UnknownNameError
        A system or workload name the knowledge base does not know (with the closest names).
    InputError
        A goal that is not one of time, throughput, latency, energy, cost; or a workload that
        cannot run at all on the system (the message says why).
    """
    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    if goal not in GOALS:
        raise InputError(f"expected --goal among {', '.join(GOALS)}, got '{goal}'")
    if slo is not None and not 0 < slo < float("inf"):
        raise InputError(f"expected --slo-tokens-per-s-per-user > 0, got {slo}")
    check_overrides(price, kwh_price, pue)
    from accelkb.perf.from_kb import default_kb

    kb = kb or default_kb()
    g = kb.asserted
    sys_iri = kb.resolve("system", system)
    wl = _workload(kb, workload)
    others = compared.resolve(kb, list(compare))  # fail early on a wrong name or chip count
    for m in sizes:
        kb.resolve("model", m)
    extra = [advise_workloads.workload_facts(kb, w) for w in workloads]
    if (wl["model_iri"], RDF.type, AK.ConvolutionalModel) in g:
        raise InputError(
            f"workload {workload}: a report answers transformer workloads; {wl['model']} is a "
            "convolutional network, estimated by `accelkb estimate training --model "
            f"{wl['model']} --system {system} --parallel gbs=N`, configured by `accelkb "
            f"configure --model {wl['model']} --system {system} --gbs N`, and compared across "
            f"systems with its cost in a report's --workloads {workload}")
    model = workload_model_spec(wl["iri"], kb=kb)  # at the workload's sequence length
    spec = system_spec(system, chips=chips, kb=kb)
    phase = wl["phase"]
    if sizes and phase != "training":
        raise InputError(f"expected --sizes with a training workload, got the {phase} workload "
                         f"{workload}")
    gbs = wl["gbs"] or (max(DEFAULT_GLOBAL_BATCH, spec.chips) if phase == "training"
                        else max(spec.chips, 8))
    gbs_note = ("" if wl["gbs"] or phase != "training" else
                f"global batch: the workload states none, so {gbs} sequences are assumed (the "
                "configuration solver's and `accelkb infer`'s default, at least one per chip); "
                "a published run's own batch changes the pipeline bubble and the layout")
    say(f"estimating the best default layout of {wl['model']} on {system} ({spec.chips} chips)")
    declared = advise_solver.constraint_checker(  # the solver's checker, without Z3
        model, spec, system, TrainingConfig(global_batch=gbs)) if phase == "training" else None
    cfg, base, base_note = parts.baseline(
        model, spec, phase, gbs, wl["prompt"], wl["output"], wl["precision"], goal, slo,
        (lambda c: not declared(c)) if declared is not None else None)
    if phase != "training":
        cfg, base, base_note = advise_solver.inference_baseline(
            model, spec, system, wl["prompt"], wl["output"], goal, (cfg, base, base_note))
    if phase == "training" and wl["tokens"]:
        base = parts.estimate(model, spec, cfg, wl["tokens"])
    say("deriving bottlenecks with the rules")
    findings, rule_cands = find.findings(kb, sys_iri, wl["iri"], spec, model, base,
                                         parts.to_parallel(cfg))
    say(f"checking candidate optimizations for {len(findings)} bottleneck(s)")
    vendor = g.value(g.value(sys_iri, AK.chip), AK.vendor)
    if rule_cands is None:  # rules unavailable: the catalogue's mitigates links
        candidates = [(opt, mit, "unknown", "", "") for opt, mit in
                      _candidates(kb, [f.rule_bottleneck for f in findings], vendor, wl["phase_iri"])]
    else:
        candidates = [(URIRef(c.optimization), [f"bottleneck-{m}" for m in c.mitigates], c.status,
                       c.note, c.condition) for c in rule_cands]
    recs: list[Recommendation] = []
    for opt, mitigated, status, note, condition in candidates:
        chain = find.optimization_chain(kb, opt, mitigated, findings)
        rec = parts.check_candidate(kb, opt, mitigated, model, spec, cfg, base, wl["tokens"], chain)
        if status == "unmet" and rec.status in ("recommended", "no-gain", "not-modelled"):
            rec = rec.model_copy(update={"status": "blocked", "blocked_by": condition,
                                         "speedup": None, "after": None})
        elif note and not rec.solver_check:
            rec = rec.model_copy(update={"solver_check": f"rules: {note}"})
        recs.append(rec)
    check = advise_solver.constraint_checker(model, spec, system, cfg)
    if check is not None:
        recs = [_constraint_checked(r, check, cfg) for r in recs]
    say("asking the Z3 configuration solver for the best layout")
    solver_rec, solver_note = advise_solver.solver_recommendation(model, spec, system, cfg, base, goal)
    if solver_rec is not None:
        recs.append(solver_rec)
    recs = [_vendor_named(r, vendor_forms(kb, r.configuration_change, vendor)) for r in recs]
    order = {"recommended": 0, "no-gain": 1, "already-applied": 2, "blocked": 3, "not-modelled": 4}
    recs.sort(key=lambda r: (order[r.status], -(r.speedup or 0.0), r.optimization))
    say("combining the compatible recommendations into one plan")
    plan = combined_plan(model, spec, cfg, base, recs,
                         lambda m, s, c: parts.estimate(m, s, c, wl["tokens"]), parts.key_time,
                         parts.as_estimate, check)
    if plan is not None:
        plan = _vendor_named(plan, vendor_forms(kb, plan.configuration_change, vendor))
    model_ref = model_ref or wl["model"]
    seq = _workload_seq(kb, wl, model, phase)

    def reproduce(r: Recommendation) -> Recommendation:
        if r.after is None or not r.configuration_change:
            return r
        return r.model_copy(update={"command": plan_commands.command(
            system, model_ref, {**r.after.configuration, **seq}, phase, chips, wl["tokens"],
            data)})

    recs = [reproduce(r) for r in recs]
    plan = reproduce(plan) if plan is not None else None
    say("quantifying hardware what-ifs")
    whatifs = parts.what_ifs(model, spec, cfg, base)
    say("comparing systems")

    def same_search(other: Any, grid: tuple[Any, Any, str]) -> tuple[Any, Any, str]:
        if phase == "training":
            return grid
        return advise_solver.inference_baseline(model, other, other.name, wl["prompt"],
                                                wl["output"], goal, grid)

    comparisons = [compared.comparison(model, o, phase, gbs, wl["prompt"], wl["output"],
                                       wl["precision"], goal, slo, same_search, wl["tokens"],
                                       kb)
                   for o in others]
    comparisons, base_per_watt, per_watt_basis = parts.one_power_boundary(
        spec, base, [(o.spec, c) for o, c in zip(others, comparisons, strict=True)])
    size_rows = []
    if sizes and phase == "training":
        say(f"sweeping {len(sizes)} model sizes")
        size_rows = advise_sizes.size_sweep(sizes, spec, gbs, wl["precision"],
                                            _software_levers(kb, vendor, wl["phase_iri"], spec),
                                            seq_len=model.seq_len)
    other_rows = []
    if extra:
        say(f"estimating {len(extra)} other workload(s) on {1 + len(others)} systems")
        other_rows = advise_workloads.other_workloads(
            kb, extra, [(system, spec)] + [(o.name, o.spec) for o in others],
            _software_levers(kb, vendor, AK.Training, spec))
    say("scaling over chip counts")
    counts = parts.scaling_counts(spec, phase, model, spec.chips)
    if getattr(base, "chips", spec.chips) not in counts:  # the solver's layout took fewer chips
        counts = sorted({*counts, base.chips})
    scaling = parts.scaling(model, spec, phase, gbs, wl["prompt"], wl["output"],
                            # inference: at the baseline's precision (the solver may pick INT8)
                            wl["precision"] if phase == "training" else cfg.precision,
                            goal, counts, slo)
    schedules = []
    if phase != "training" or goal == "latency":
        say("synthesizing a collision-free schedule and simulating dynamic routing")
        schedules = advise_schedule.schedules(spec)
    if schedules:
        s0 = schedules[0]
        text = (f"on {s0.topology}: {s0.collective} in {s0.makespan_steps} steps ({s0.status}, bound "
                f"{s0.lower_bound_steps}) collision-free vs {s0.dynamic_makespan_steps:g} steps under "
                "simulated dynamic routing")
        recs = [r.model_copy(update={"solver_check": (r.solver_check + "; " if r.solver_check else "")
                                     + text})
                if r.optimization in _network_scheduling(kb) else r for r in recs]
    say("collecting facts and sources")
    subjects = subjects_of_system(kb, sys_iri) + [wl["model_iri"], wl["iri"]]
    facts = facts_about(kb, subjects)
    measured = _measured(kb, sys_iri, wl["iri"])
    derivations = [ln for f in findings for ln in f.finding.derivation] + \
        [ln for r in recs for ln in r.derivation]
    cited = [f.source for f in facts] + [m[1] for m in measured] + marker_iris(derivations)
    sources = source_refs(kb, cited)
    numbers = {s.iri: i for i, s in enumerate(sources, 1)}
    findings = [dataclasses.replace(f, finding=f.finding.model_copy(update={"derivation": [
        numbered(ln, numbers) for ln in f.finding.derivation]})) for f in findings]
    recs = [r.model_copy(update={"derivation": [numbered(ln, numbers) for ln in r.derivation]})
            for r in recs]
    est = parts.as_estimate(base).model_copy(update={"ranges": parts.ranges(base,
                                                                           spec.chip.vendor)})
    network, adv, latency, scaling = _network(model, spec, base, est, scaling, wl, goal, slo)
    net_words = (advise_advantages.sentence(adv, est.time_s, network, schedules) if adv else
                 advise_network.sentence(network, est.time_s, schedules))
    shown = system if spec.name == system else f"{spec.name} (scaling {system} out)"
    answer = find.answer_text(shown, workload, phase, est, findings, recs, whatifs, spec.chips,
                              scaling, net_words, plan)
    say("pricing the baseline and the systems compared")
    costs = cost_rows(kb, system, est, phase, comparisons, Overrides(price, kwh_price, pue),
                      CostWorkload(wl["model_iri"], wl["prompt"] or 0, wl["output"] or 0),
                      spec.chips)
    if goal in ("cost", "energy"):
        answer = cost_sentence(costs, goal) + " " + answer
    if comparisons:
        answer += " " + compared.sentence(comparisons, est, phase, goal)
    if size_rows:
        answer += " " + advise_sizes.sentence(size_rows, system)
    if other_rows:
        answer += " " + advise_workloads.sentence(other_rows)
    advice = Advice(
        question=question or f"How can {workload} run {_GOAL_WORDS.get(goal, 'faster')} on "
        f"{system}?", costs=costs,
        system=system, workload=workload, phase=phase, goal=goal, chips=spec.chips,
        answer=answer, baseline=est, baseline_note=base_note, plan=plan,
        baseline_command=plan_commands.command(system, model_ref, {**est.configuration, **seq}, phase,
                                               chips, wl["tokens"], data),
        findings=[f.finding for f in findings], recommendations=recs, what_ifs=whatifs,
        comparisons=comparisons, per_watt_basis=per_watt_basis,
        baseline_tokens_per_s_per_watt=base_per_watt, scaling=scaling, schedules=schedules, network=network,
        advantages=adv, token_latency=latency, sizes=size_rows, other_workloads=other_rows,
        facts=facts, sources=sources,
        assumptions=[*find.assumptions(spec, cfg, phase), solver_note,
                     *([gbs_note] if gbs_note else []),
                     *_foreign_notes(model, spec, cfg, phase)],
        measured=[m[0] for m in measured], seconds=time.perf_counter() - started)
    assert_advice(kb, advice, sys_iri, wl["iri"])
    return advice


def _vendor_named(rec: Recommendation, forms: list[tuple[str, str]]) -> Recommendation:
    """The recommendation with the vendor's own names of its change (ZeRO-3 on an IPU:
    Replicated Tensor Sharding) in its label, which the answer quotes, and in full under the
    change."""
    if not forms:
        return rec
    names = " / ".join(name for name, _ in forms)
    return rec.model_copy(update={"label": f"{rec.label}, on these chips {names}",
                                  "vendor_form": "; ".join(text for _, text in forms)})


def _constraint_checked(rec: Recommendation, check: Any, cfg: Any) -> Recommendation:
    """Block a checked candidate whose layout breaks a declared constraint (the solver's checker)."""
    if rec.status not in ("recommended", "no-gain") or not rec.configuration_change:
        return rec
    broken = check(type(cfg).model_validate({**cfg.model_dump(), **rec.configuration_change}))
    if broken:
        return rec.model_copy(update={"status": "blocked", "blocked_by": "; ".join(broken)[:400]})
    note = "layout meets every declared constraint (configuration solver's checker)"
    return rec.model_copy(update={"solver_check": f"{rec.solver_check}; {note}" if rec.solver_check
                                  else note})


def _network_scheduling(kb: KnowledgeBase) -> set[str]:
    """Short names of optimizations provided by static network scheduling."""
    g = kb.asserted
    return {str(g.value(o, AK.shortName)) for o in
            g.subjects(AK.providedByFeature, AK.StaticNetworkScheduling)}


def _measured(kb: KnowledgeBase, system: URIRef, workload: URIRef) -> list[tuple[str, str]]:
    out = []
    for row in kb.query(stored_query("measured_results"), {"system": system, "workload": workload}):
        r: Any = row
        what = []
        if r.seconds is not None:
            what.append(f"{float(r.seconds):.4g} s")
        if r.tps is not None:
            what.append(f"{float(r.tps):.4g} tokens/s")
        if r.flops is not None:
            what.append(f"{float(r.flops) / 1e12:.4g} TFLOP/s per chip")
        kind = "vendor claim" if str(r.claim).lower() == "true" else "measured"
        out.append((f"{r.label or local(r.result)}: {', '.join(what)} ({kind})", str(r.src or "")))
    return out


def assert_advice(kb: KnowledgeBase, advice: Advice, system: URIRef, workload: URIRef) -> URIRef:
    """Record the recommendations in the RESULTS graph so SPARQL can query them."""
    graph = kb.graph(RESULTS)
    base = f"https://w3id.org/accelkb/result/advice/{local(system)}/{local(workload)}"
    node = URIRef(base)
    graph.remove((node, None, None))
    graph.add((node, RDF.type, AK.Advice))
    graph.add((node, AK.aboutSystem, system))
    graph.add((node, AK.aboutWorkload, workload))
    for rank, rec in enumerate(advice.recommendations, start=1):
        r = URIRef(f"{base}/{rec.optimization}")
        graph.remove((r, None, None))
        graph.add((node, AK.recommends, r))
        graph.add((r, RDF.type, AK.Recommendation))
        opt = kb.names("optimization").get(rec.optimization)
        if opt is not None:
            graph.add((r, AK.optimization, opt))
        graph.add((r, AK.recommendationStatus, Literal(rec.status)))
        graph.add((r, AK.rankInAdvice, Literal(rank, datatype=XSD.integer)))
        if rec.speedup is not None and rec.before and rec.after:
            graph.add((r, AK.predictedSpeedup, Literal(round(rec.speedup, 6), datatype=XSD.double)))
            graph.add((r, AK.predictedTimeBeforeSeconds, Literal(rec.before.time_s, datatype=XSD.double)))
            graph.add((r, AK.predictedTimeAfterSeconds, Literal(rec.after.time_s, datatype=XSD.double)))
    _assert_costs(kb, graph, node, base, advice)
    return node


def _network(model: Any, spec: Any, base: Any, est: Any, scaling: list[Any], wl: dict[str, Any],
             goal: str, slo: float | None
             ) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """Inference on a scheduled network: the layout's per-token traffic both ways, the three
    claimed advantages, per-token latency at the chip counts a scaling question asks, and the
    scaling curve with the memory arithmetic of each count that does not fit."""
    if not isinstance(base, InferenceEstimate):
        return [], [], [], scaling
    network = advise_network.traffic(base, model.layers, spec)
    if not network:
        return [], [], [], scaling
    adv = advise_advantages.advantages(network, est.time_s, gpu_stack=True)

    def at(n: int) -> tuple[float, float | None, list[Any], str]:
        sized = spec.with_chips(n)
        cfg, e, _ = parts.baseline(model, sized, "inference", wl["gbs"] or 8, wl["prompt"],
                                   wl["output"], wl["precision"], goal, slo)
        return (e.decode_s_per_token, e.tokens_per_s_per_user,
                advise_network.traffic(e, model.layers, sized), parts.to_parallel(cfg))

    rack = spec.levels[1].group_chips if len(spec.levels) > 1 else spec.chips
    counts = advise_advantages.asked_counts(rack, spec.chips)
    from accelkb.perf.shapes import BYTES_PER, total_params

    weights = total_params(model) * BYTES_PER.get(str(base.config.precision), 2)
    per_chip = sum(t.capacity_bytes for t in spec.chip.memory_tiers)
    scaling = [p if p.time_s is not None or weights <= p.chips * per_chip else
               p.model_copy(update={"note": f"the {base.config.precision.upper()} weights alone "
                                    f"({weights / 1e9:.1f} GB) exceed {p.chips} x "
                                    f"{per_chip / 1e9:.3g} GB = {p.chips * per_chip / 1e9:.1f} "
                                    "GB of memory"})
               for p in scaling]
    latency = advise_advantages.latencies(counts, scaling, est.chips, est.time_s,
                                          est.tokens_per_s_per_user, network,
                                          parts.to_parallel(base.config), at)
    return network, adv, latency, scaling


def _assert_costs(kb: KnowledgeBase, graph: Any, node: URIRef, base: str, advice: Advice) -> None:
    """One ak:CostEstimate per priced or energy-estimated system of the advice (issue 26)."""
    systems = kb.names("system")
    for row in advice.costs:
        c = URIRef(f"{base}/cost/{row.system}")
        graph.remove((c, None, None))
        graph.add((node, AK.hasCostEstimate, c))
        graph.add((c, RDF.type, AK.CostEstimate))
        if (sys_iri := systems.get(row.system)) is not None:
            graph.add((c, AK.aboutSystem, sys_iri))
        graph.add((c, AK.chipsCosted, Literal(row.chips, datatype=XSD.integer)))
        for prop, value in ((AK.estimatedUsdPerHour, row.usd_per_hour),
                            (AK.estimatedUsdPerMillionTokens, row.usd_per_million_tokens),
                            (AK.estimatedUsdPerMillionTokensLow, row.usd_low),
                            (AK.estimatedUsdPerMillionTokensHigh, row.usd_high),
                            (AK.estimatedKwhPerMillionTokens, row.kwh_per_million_tokens),
                            (AK.estimatedTokensPerJoule, row.tokens_per_joule),
                            (AK.estimatedUsdPerRun, row.usd_to_train),
                            (AK.estimatedUsdPerRunLow, row.usd_to_train_low),
                            (AK.estimatedUsdPerRunHigh, row.usd_to_train_high)):
            if value is not None:
                graph.add((c, prop, Literal(float(value), datatype=XSD.double)))
        if row.price_kind:
            graph.add((c, AK.priceKindUsed, Literal(row.price_kind)))
        basis = "; ".join(row.basis) or row.note
        if basis:
            graph.add((c, AK.costBasis, Literal(basis)))
