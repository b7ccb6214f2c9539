"""``infer``: estimate a (workload, system), run every rule to a fixpoint, report the findings.

This is the stable entry point the advise stage calls. The store is Oxigraph (pyoxigraph) when
it is installed, else rdflib; results are written back into the knowledge base's inferred and
derivations graphs either way, so ``kb.query`` and :func:`accelkb.rules.explain` see them.
"""

from __future__ import annotations

import time
from typing import Any
from typing import Literal as Lit

from pydantic import BaseModel, ConfigDict, Field
from rdflib import URIRef

from accelkb.errors import InputError
from accelkb.ontology.kb import DERIVATIONS, INFERRED, KnowledgeBase, stored_query
from accelkb.ontology.namespace import AK

from .engine import FixpointReport, OxigraphStore, RdflibStore, run_fixpoint
from .estimates import assert_estimate, estimate_pair
from .explain import explain
from .parse import Rule, RuleFileError, load_rules

StoreName = Lit["auto", "oxigraph", "rdflib"]
Status = Lit["met", "unmet", "unknown"]
_STATUS: dict[Any, Status] = {AK.PreconditionMet: "met", AK.PreconditionUnmet: "unmet",
                              AK.PreconditionUnknown: "unknown"}


class CandidateResult(BaseModel):
    """One candidate optimization for a finding."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    iri: str = Field(description="IRI of the ak:CandidateOptimization node")
    optimization: str = Field(description="IRI of the optimization (kb:opt-...)")
    label: str = Field(description="its label")
    status: Lit["met", "unmet", "unknown"] = Field(description="whether its preconditions hold")
    precondition: str | None = Field(description="IRI of the precondition checked")
    note: str | None = Field(description="condition or caveat")
    score: float | None = Field(description="ranking score (status weight x published effect)")
    rank: int | None = Field(description="rank among the finding's candidates (1 = best)")


class FindingResult(BaseModel):
    """One bottleneck finding with its explanation and ranked candidates."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    iri: str = Field(description="IRI of the ak:BottleneckFinding node")
    bottleneck: str = Field(description="IRI of the bottleneck (kb:bottleneck-...)")
    label: str = Field(description="its label")
    rule: str | None = Field(description="id of the rule that found it")
    explanation: str = Field(description="the rule's explanation with the values filled in")
    candidates: list[CandidateResult] = Field(description="candidates, best rank first")


class InferenceReport(BaseModel):
    """What inference found for one (workload, system)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    workload: str = Field(description="workload IRI")
    system: str = Field(description="system IRI")
    chips: int = Field(description="chips estimated")
    configuration: str = Field(description="parallel configuration estimated")
    estimate: str = Field(description="IRI of the estimate node (estimates graph)")
    estimate_notes: list[str] = Field(description="why parts of the estimate are missing")
    store: str = Field(description="store the rules ran on: oxigraph or rdflib")
    findings: list[FindingResult] = Field(description="findings, by bottleneck")
    fixpoint: FixpointReport = Field(description="engine statistics")
    inferred_triples: int = Field(description="triples in the inferred graph afterwards")
    derivation_triples: int = Field(description="triples in the derivations graph afterwards")


def _rows(kb: KnowledgeBase, name: str, bindings: dict[str, Any]) -> Any:
    return kb.query(stored_query(name), bindings)


def check_sources(kb: KnowledgeBase, rules: dict[str, Rule]) -> None:
    """Every rule's ``# source:`` must name something the knowledge base describes.

    Raises
    ------
    RuleFileError
        Listing each rule whose source is unknown.
    """
    bad = [f"{r.path}: unknown source {r.source} (not described in the knowledge base)"
           for r in rules.values() if not any(True for _ in kb.asserted.triples((r.source, None,
                                                                                 None)))]
    if bad:
        raise RuleFileError(bad)


def _pick_store(store: StoreName) -> str:
    if store != "auto":
        return store
    try:
        import pyoxigraph  # noqa: F401
    except ImportError:
        return "rdflib"
    return "oxigraph"


def run_rules(kb: KnowledgeBase, rules: dict[str, Rule] | None = None, *,
              store: StoreName = "auto", max_rounds: int = 10,
              record: bool = True) -> tuple[FixpointReport, str]:
    """Run rules (default: the bundled ones) on the whole knowledge base; results into its graphs.

    Raises
    ------
    RuleFileError
        For bad rule files or unknown rule sources.
    InputError
        When the fixpoint is not reached within ``max_rounds`` passes.
    """
    rules = load_rules() if rules is None else rules
    check_sources(kb, rules)
    name = _pick_store(store)
    if name == "oxigraph":
        ox = OxigraphStore.from_dataset(kb.dataset)
        report = run_fixpoint(rules.values(), ox, max_rounds=max_rounds, record=record)
        for graph in (INFERRED, DERIVATIONS):
            target = kb.graph(graph)
            for t in ox.triples(graph):
                target.add(t)
    else:
        report = run_fixpoint(rules.values(), RdflibStore(kb.dataset), max_rounds=max_rounds,
                              record=record)
    if not report.converged:
        raise InputError(f"expected the rules to reach a fixpoint within {max_rounds} passes, "
                         f"got changes in pass {report.passes}; raise max_rounds or look for "
                         "rules that keep minting new terms")
    return report, name


def infer(kb: KnowledgeBase, workload: str | URIRef, system: str | URIRef,
          chips: int | None = None, *, parallel: str | None = None,
          store: StoreName = "auto", max_rounds: int = 10) -> InferenceReport:
    """Estimate ``workload`` on ``system``, run the rules, and report findings and candidates.

    Parameters
    ----------
    kb
        The knowledge base; the estimate, inferred facts and derivations are added to it.
    workload, system
        Short names or IRIs.
    chips
        Resize the system to this many chips.
    parallel
        Configuration to estimate instead of the default (``"tp=8,pp=4,dp=2,mb=1"``).
    store
        ``"auto"`` (Oxigraph if installed), ``"oxigraph"`` or ``"rdflib"``.
    max_rounds
        Limit on fixpoint passes.

    Raises
    ------
    UnknownNameError
        For a name the knowledge base does not know (with the closest names).
    InputError
        For a workload the performance model cannot estimate, or no fixpoint.

    Examples
    --------
    >>> kb = KnowledgeBase()
    >>> report = infer(kb, "llama2-70b-decode", "groq-576")
    >>> sorted({f.label for f in report.findings})[:2]
    ['load imbalance', 'memory-bandwidth-bound']
    """
    started = time.perf_counter()
    w = kb.resolve("workload", workload)
    s = kb.resolve("system", system)
    est = estimate_pair(kb, w, s, chips, parallel)
    node = assert_estimate(kb, est)
    report, name = run_rules(kb, store=store, max_rounds=max_rounds)
    findings = []
    rows: Any = kb.query(stored_query("rules_findings"), {"e": node})
    for row in rows:
        f = row.finding
        cands = [CandidateResult(
            iri=str(c.candidate), optimization=str(c.optimization),
            label=str(c.label or c.optimization), status=_STATUS.get(c.status, "unknown"),
            precondition=str(c.precondition) if c.precondition else None,
            note=str(c.note) if c.note else None,
            score=float(c.score) if c.score is not None else None,
            rank=int(float(c.rank)) if c.rank is not None else None)
            for c in _rows(kb, "rules_candidates", {"finding": f})]
        findings.append(FindingResult(
            iri=str(f), bottleneck=str(row.bottleneck),
            label=str(row.label or row.bottleneck),
            rule=str(row.rule) if row.rule else None,
            explanation=explain(kb, f, max_depth=0).text, candidates=cands))
    del started
    return InferenceReport(
        workload=str(w), system=str(s), chips=est.chips, configuration=est.configuration,
        estimate=str(node), estimate_notes=est.notes, store=name, findings=findings,
        fixpoint=report, inferred_triples=len(kb.graph(INFERRED)),
        derivation_triples=len(kb.graph(DERIVATIONS)))
