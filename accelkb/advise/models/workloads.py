"""Other training workloads on the report's systems, such as the computer-vision models
(ResNet-50, ViT) that an IPU-POD buyer also trains.

Each workload is taken on the report's system and on every compared system at the same
global batch and run length (the workload's), at the best layout the same search finds:
the transformer layout grid for a transformer (ViT is an encoder), and for a convolutional
network (ResNet-50) the data-parallel micro-batches with and without recomputation
(:func:`accelkb.perf.dense.best_dense_layout`). Every layout on a chip that computes only from
SRAM is checked to fit it. A row gives the run's time, its cost and samples per joule, and
the published measurement of the same run where the knowledge base has one. On the report's
own system the hardware what-ifs of :data:`accelkb.advise.parts.WHAT_IFS` and (for a
transformer) the catalogued software changes are re-estimated, best first.

Examples
--------
>>> from accelkb.perf.from_kb import default_kb, system_spec
>>> kb = default_kb()
>>> rows = other_workloads(kb, [workload_facts(kb, "resnet50-training")],
...                        [("ipu-pod16", system_spec("ipu-pod16"))])
>>> rows[0].fits, rows[0].levers[0].split(":")[0] != ""
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rdflib import RDF, Literal, URIRef

from accelkb.advise import parts
from accelkb.advise.advice import Estimate, OtherWorkload
from accelkb.advise.costs import common_kind, cost_row
from accelkb.advise.models.sizes import SoftwareLever, best_software
from accelkb.advise.plan.commands import parallel_text
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase, stored_query
from accelkb.ontology.namespace import AK
from accelkb.perf import SystemSpec, TrainingConfig
from accelkb.perf.calibration import load_calibration
from accelkb.perf.dense import DenseWorkload, best_dense_layout
from accelkb.perf.energy import run_power
from accelkb.perf.from_kb import dense_spec, workload_model_spec
from accelkb.perf.memory import sram_only_capacity


def workload_facts(kb: KnowledgeBase, name: str) -> dict[str, Any]:
    """What a row needs of a training workload: its model, batch, precision and run length.

    Raises
    ------
    UnknownNameError
        Not a workload.
    InputError
        Not a training workload, or without a global batch or a run length.
    """
    g = kb.asserted
    w = kb.resolve("workload", name)
    model = g.value(w, AK.model)
    if model is None or g.value(w, AK.phase) != AK.Training:
        raise InputError(f"workload {name}: expected a training workload with a model")

    def num(p: URIRef) -> float | None:
        v = g.value(w, p)
        return float(v.toPython()) if isinstance(v, Literal) else None

    gbs, tokens, samples = num(AK.globalBatchSize), num(AK.tokensToTrain), num(AK.samplesToTrain)
    if not gbs or not (tokens or samples):
        raise InputError(f"workload {name}: expected a global batch and tokensToTrain or "
                         "samplesToTrain in the knowledge base")
    return {"iri": w, "name": name, "model": str(g.value(model, AK.shortName)), "gbs": int(gbs),
            "tokens": tokens, "samples": samples,
            "dense": (model, RDF.type, AK.ConvolutionalModel) in g,
            "precision": parts.PRECISION_NOTATION.get(g.value(w, AK.precision))}


def other_workloads(kb: KnowledgeBase, workloads: Sequence[dict[str, Any]],
                    systems: Sequence[tuple[str, SystemSpec]],
                    software: Sequence[SoftwareLever] = ()) -> list[OtherWorkload]:
    """One row per (workload, system); the first system is the report's own and gets levers.
    Every row is priced by the kind of price most systems have
    (:func:`accelkb.advise.costs.common_kind`)."""
    out = []
    prefer = common_kind(kb, [name for name, _ in systems])
    for wl in workloads:
        for i, (name, spec) in enumerate(systems):
            row = (_dense_row if wl["dense"] else _transformer_row)(kb, wl, name, spec,
                                                                   i == 0, software, prefer)
            text, same = _measured(kb, wl, name, spec.chips)
            out.append(row.model_copy(update={"measured": text, "measured_s": same}))
    return out


def _measured(kb: KnowledgeBase, wl: dict[str, Any], system: str, chips: int
              ) -> tuple[str, float | None]:
    """The knowledge base's times to train this workload's model on this system (or its parts)
    and chip count (the stored query ``measured_results``), and the one at the workload's own
    batch (None if none)."""
    sys_iri = kb.names("system").get(system)
    if sys_iri is None:
        return "", None
    found, same = [], None
    for row in kb.query(stored_query("measured_results"), {"system": sys_iri,
                                                           "workload": wl["iri"]}):
        r: Any = row
        if r.metric != AK.TimeToTrain or r.seconds is None or r.chips is None \
                or int(r.chips) != chips:
            continue
        secs = float(r.seconds)
        if r.batch is not None and int(r.batch) == wl["gbs"]:
            same = secs if same is None else min(same, secs)
        found.append(f"{r.round or 'measured'} {r.division or ''}: {secs / 60:.1f} min at "
                     f"batch {r.batch}".replace("  ", " "))
    return "; ".join(sorted(found)), same


def _transformer_row(kb: KnowledgeBase, wl: dict[str, Any], name: str, spec: SystemSpec,
                     own: bool, software: Sequence[SoftwareLever], prefer: str
                     ) -> OtherWorkload:
    model = workload_model_spec(wl["iri"], kb=kb)
    head = {"workload": wl["name"], "model": wl["model"], "system": name, "chips": spec.chips}
    try:
        cfg, base, _ = parts.baseline(model, spec, "training", wl["gbs"], 0, 0, wl["precision"],
                                      "time")
    except InputError as exc:
        return OtherWorkload(**head, fits=False, note=str(exc).splitlines()[0][:240])
    base = parts.estimate(model, spec, cfg, wl["tokens"])
    est = parts.as_estimate(base)
    levers: list[str] = []
    if own and isinstance(cfg, TrainingConfig):
        soft = best_software(model, spec, cfg, est.time_s, software)
        hard = [w for w in parts.what_ifs(model, spec, cfg, base) if w.speedup is not None]
        ranked = [(w.speedup, f"{w.lever} ({w.change})") for w in hard[:2]]
        if soft:
            ranked.append((soft[1], f"{soft[0].label} ("
                           + ", ".join(f"{k}={v}" for k, v in soft[0].change.items()) + ")"))
        levers = [f"{text}: {gain:.2f}x" for gain, text in sorted(ranked, reverse=True)]
    seq = model.seq_len
    return _with_cost(kb, OtherWorkload(
        **head, fits=True, layout=parallel_text(cfg) or parts.to_parallel(cfg),
        precision=str(est.configuration.get("precision", "")), step_s=est.time_s,
        samples_per_s=est.tokens_per_s / seq, samples_to_train=(wl["tokens"] or 0) / seq,
        time_to_train_s=est.time_to_train_s,
        samples_per_joule=1.0 / (est.joules_per_token * seq) if est.joules_per_token else None,
        working_set_bytes=est.layer_working_set_bytes, sram_bytes=est.sram_bytes,
        levers=levers), est, prefer)


def _dense_row(kb: KnowledgeBase, wl: dict[str, Any], name: str, spec: SystemSpec, own: bool,
               _software: Sequence[SoftwareLever], prefer: str) -> OtherWorkload:
    work = dense_spec(wl["model"], kb=kb)
    cal = load_calibration()
    precision = wl["precision"] or "fp16"
    head = {"workload": wl["name"], "model": wl["model"], "system": name, "chips": spec.chips}
    try:
        dense, mb, rc = best_dense_layout(work, spec, spec.chips, wl["gbs"], cal, precision)
    except InputError as exc:
        return OtherWorkload(**head, fits=False, note=str(exc).splitlines()[0][:240])
    samples = wl["samples"] or 0.0
    power, _ = run_power(spec, spec.chips, dense.activity, cal)
    run_s = samples / dense.samples_per_s if samples else None
    levers = _dense_levers(work, spec, wl["gbs"], cal, precision, dense.step_time_s) if own \
        else []
    est = Estimate(configuration={"dp": spec.chips, "micro_batch": mb, "recompute": rc,
                                  "precision": precision}, chips=spec.chips,
                   time_s=dense.step_time_s, tokens_per_s=dense.samples_per_s, mfu=0.0,
                   memory_per_chip_bytes={}, breakdown_s=dict(dense.breakdown),
                   joules_per_token=power / dense.samples_per_s if power else None,
                   power_w=power, time_to_train_s=run_s)
    return _with_cost(kb, OtherWorkload(
        **head, fits=True, layout=f"dp={spec.chips}, micro-batch {mb}, recompute "
        f"{'on' if rc else 'off'}", precision=precision, step_s=dense.step_time_s,
        samples_per_s=dense.samples_per_s, samples_to_train=samples or None,
        time_to_train_s=run_s,
        samples_per_joule=dense.samples_per_s / power if power else None,
        working_set_bytes=dense.working_set_bytes, sram_bytes=sram_only_capacity(spec.chip),
        levers=levers), est, prefer)


def _dense_levers(work: DenseWorkload, spec: SystemSpec, gbs: int, cal: Any, precision: str,
                  step_s: float) -> list[str]:
    """Each hardware what-if re-searched (micro-batch, recompute) on the changed system."""
    out = []
    for lever, change, build, _note in parts.WHAT_IFS:
        changed = build(spec)
        if changed is None:
            continue
        try:
            est, mb, rc = best_dense_layout(work, changed, spec.chips, gbs, cal,
                                            "fp8" if "FP8" in change else precision)
        except InputError:
            continue
        gain = step_s / est.step_time_s
        if gain > 1.005:
            out.append((gain, f"{lever} ({change}; then micro-batch {mb}, recompute "
                        f"{'on' if rc else 'off'})"))
    return [f"{text}: {gain:.2f}x" for gain, text in sorted(out, reverse=True)[:3]]


def _with_cost(kb: KnowledgeBase, row: OtherWorkload, est: Estimate, prefer: str
               ) -> OtherWorkload:
    cost = cost_row(kb, row.system, est, "training", prefer)
    return row.model_copy(update={"usd_to_train": cost.usd_to_train,
                                  "usd_to_train_low": cost.usd_to_train_low,
                                  "usd_to_train_high": cost.usd_to_train_high})


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds / 60:.3g} min" if seconds < 5400 else f"{seconds / 3600:.3g} h"


def sentence(rows: Sequence[OtherWorkload]) -> str:
    """Per workload: the run on each system with its cost, the measurement where there is
    one, and the own system's best lever (empty without rows)."""
    out = []
    for wl in dict.fromkeys(r.workload for r in rows):
        rs = [r for r in rows if r.workload == wl]
        fit = [r for r in rs if r.fits and r.time_to_train_s]
        if not fit:
            out.append(f"{wl} fits none of the systems compared ({rs[0].note})")
            continue
        runs = ", ".join(f"{_minutes(r.time_to_train_s)} on {r.system}"
                         + (f" (${r.usd_to_train:,.3g})" if r.usd_to_train else "") for r in fit)
        own = rs[0]
        meas = [r for r in fit if r.measured_s]
        check = "".join(
            f"; on {r.system} the same run measured {_minutes(r.measured_s)} where the model "
            f"gives {_minutes(r.time_to_train_s)} ({(r.measured_s or 0) / (r.time_to_train_s or 1):.2f}"
            "x the model)" for r in meas) or \
            "; no published measurement of the same run (system, chips, batch) in the knowledge base"
        lever = (f"; on {own.system} the lever that buys most is {own.levers[0]}"
                 if own.levers else "")
        out.append(f"{wl} ({(own.samples_to_train or 0) / 1e6:,.1f}M samples): {runs}{check}{lever}")
    return "Other workloads: " + "; ".join(out) + "." if out else ""
