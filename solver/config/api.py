"""``configure``: the best way to run a model on a system, or why it cannot run.

Method (stated in every result): Z3 enumerates the whole feasible set -- declared constraints
tracked under their IRIs, perf memory/streaming/budget constraints added lazily as clauses,
blocking clauses for found layouts -- then the performance module ranks it; the optimum is
OPTIMAL when the enumeration completed, FEASIBLE when the deadline cut it short. Every returned
layout is re-verified without Z3 (``check``). UNSAT gives a minimal set of constraints in
domain words with numbers.

Examples
--------
>>> r = configure(ConfigRequest(model="gpt3-175b", system="ipu-pod16", global_batch=512))
>>> r.status.value, [x.constraint.key for x in r.explanation][:1]
('UNSATISFIABLE', ['memory-capacity'])
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from accelkb.errors import InputError
from accelkb.solver.config.check import verify
from accelkb.solver.config.explain import render, shrink
from accelkb.solver.config.instance import build_instance
from accelkb.solver.config.model import ConfigRequest, ConfigResult, Status
from accelkb.solver.config.rank import pareto, rank
from accelkb.solver.config.search import feasible_set, perf_score

METHOD = ("Z3 enumerates the feasible set (declared constraints tracked by IRI; perf memory, "
          "streaming and budgets added lazily as clauses; blocking clauses), perf ranks it")


def configure(request: ConfigRequest | None = None, **kwargs: Any) -> ConfigResult:
    """Find the best configuration of a model on a system, or explain why there is none.

    Parameters
    ----------
    request
        A :class:`ConfigRequest`; or give its fields as keyword arguments.

    Returns
    -------
    ConfigResult
        OPTIMAL / FEASIBLE with ``best`` and ``pareto``; UNSATISFIABLE with ``explanation``;
        UNKNOWN on timeout; ERROR when the knowledge base lacks what the model needs (e.g. a
        system with no published inter-chip network).

    Raises
    ------
    InputError
        For an unknown model or system name or invalid request fields.
    """
    req = request or ConfigRequest(**kwargs)
    from accelkb.perf.api import is_dense_model

    if is_dense_model(req.model):  # a convolutional network: data parallel, nothing for Z3
        from accelkb.solver.config.dense import configure_dense

        try:
            return configure_dense(req)
        except InputError as exc:
            if type(exc).__name__ == "UnknownNameError":
                raise
            return ConfigResult(status=Status.ERROR, model=req.model, system=req.system,
                                phase=req.phase, objective=req.objective, method=METHOD,
                                chips_available=req.chips, message=str(exc))
    t0 = time.monotonic()
    base: dict[str, Any] = {"model": req.model, "system": req.system, "phase": req.phase,
            "objective": req.objective, "method": METHOD}
    try:
        inst = build_instance(req)
    except InputError as exc:
        if type(exc).__name__ == "UnknownNameError":
            raise
        return ConfigResult(status=Status.ERROR, chips_available=req.chips, message=str(exc),
                            solve_time_s=time.monotonic() - t0, **base)
    out, enc = feasible_set(inst, req.timeout_s)
    used = sorted(inst.constraints[k].iri for k in enc.active)
    if not str(req.system).endswith(".json"):  # more chips than it has: the system built of it
        base["system"] = inst.system.name
    common = {**base, "chips_available": inst.system.chips, "constraints_used": used,
              "global_batch": inst.global_batch if inst.training else None}
    if out.state == "unknown":
        return ConfigResult(status=Status.UNKNOWN, message=f"no answer within {req.timeout_s} s",
                            solve_time_s=time.monotonic() - t0, **common)
    if out.state == "unsat":
        mus, proven = shrink(inst, out, time.monotonic() + req.timeout_s)
        reasons = render(inst, mus)
        word = "minimal set" if proven else "set (minimality not proven before the deadline)"
        return ConfigResult(
            status=Status.UNSATISFIABLE, explanation=reasons,
            message=f"no configuration satisfies this {word} of constraints: " +
            "; ".join(r.message for r in reasons),
            solve_time_s=time.monotonic() - t0, **common)
    score = perf_score(inst)
    for lay in out.layouts:
        verify(inst, lay, score)
    ranked = rank(inst, out.layouts)
    status = Status.OPTIMAL if out.state == "sat" else Status.FEASIBLE
    best = ranked[0] if ranked else None
    return ConfigResult(
        status=status, best=best, pareto=pareto(ranked), feasible_count=len(out.layouts),
        message=f"{len(out.layouts)} feasible layouts; best {best.layout.text()}" if best else "",
        solve_time_s=time.monotonic() - t0, **common)


def assert_result(kb: Any, result: ConfigResult, name: str) -> URIRef:
    """Add ``result`` to the knowledge base's results graph as ``kb:config-<name>``.

    Returns the result node; its ``ak:violatesConstraint`` links (UNSAT) point to the declared
    constraints, so explanations are queryable with SPARQL.
    """
    from accelkb.ontology.kb import RESULTS
    from accelkb.ontology.namespace import AK

    g = kb.graph(RESULTS)
    node = URIRef(f"https://w3id.org/accelkb/data/config-{name}")
    g.add((node, RDF.type, AK.ConfigurationResult))
    g.add((node, AK.solverStatus, Literal(result.status.value)))
    g.add((node, AK.objectiveName, Literal(result.objective)))
    for kind, short, prop in (("model", result.model, AK.configuredModel),
                              ("system", result.system, AK.configuredSystem)):
        with contextlib.suppress(InputError):
            g.add((node, prop, kb.resolve(kind, short)))
    if result.best is not None:
        g.add((node, AK.configurationText, Literal(result.best.layout.text())))
        g.add((node, AK.objectiveValue, Literal(result.best.objective_value,
                                                datatype=XSD.double)))
    for r in result.explanation:
        g.add((node, AK.violatesConstraint, URIRef(r.constraint.iri)))
    return node
