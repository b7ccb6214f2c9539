"""Sweep rows as RDF: asserted into the knowledge base's ``results`` graph for SPARQL.

Each sweep run becomes a ``kb:sweep-<hash>`` node (``ak:SweepRun``) and each row a
``kb:sweep-<hash>-<point>`` node (``ak:SweepPoint``, a kind of ``ak:ConfigurationResult``) with
the point's coordinates, outcome, layout and figures (schema: ``ext-sweep.ttl``). Model and
system are linked to their knowledge-base nodes where the names resolve. The rows are checked
against the bundled SHACL shapes before anything is added: a hand-edited file with an unknown
outcome or an interval that does not hold its figure is refused whole.

Timing and host columns (``*_seconds``, ``worker``) are left out: they are not results.

Examples
--------
>>> from accelkb.ontology.kb import KnowledgeBase, RESULTS
>>> kb = KnowledgeBase(bundled_data=False, validate=False)
>>> row = {"spec_hash": "abc", "point_id": "p1", "model": "m", "system": "s", "chips": 8,
...        "phase": "inference", "precision": "bf16", "goal": "time", "status": "UNKNOWN",
...        "reason": "no answer within 60 s"}
>>> assert_rows(kb, [row])
1
>>> len(kb.query("SELECT ?p WHERE { ?p a ak:SweepPoint ; ak:solverStatus 'UNKNOWN' }"))
1
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rdflib import RDF, XSD, BNode, Graph, Literal, URIRef

from accelkb.errors import InputError, ValidationError
from accelkb.ontology import loader
from accelkb.ontology.namespace import AK

#: Column -> (property, datatype). Point and system names go in as text and, where they name
#: knowledge-base nodes, as links (ak:configuredModel, ak:configuredSystem).
PROPERTIES: dict[str, tuple[URIRef, URIRef]] = {
    "point_id": (AK.pointId, XSD.string), "model": (AK.pointModel, XSD.string),
    "system": (AK.pointSystem, XSD.string), "chips": (AK.pointChips, XSD.integer),
    "phase": (AK.pointPhase, XSD.string), "precision": (AK.pointPrecision, XSD.string),
    "goal": (AK.objectiveName, XSD.string), "latency_target": (AK.latencyTarget, XSD.double),
    "whatif": (AK.whatIfKey, XSD.string), "whatif_value": (AK.whatIfValue, XSD.string),
    "status": (AK.solverStatus, XSD.string), "reason": (AK.statusReason, XSD.string),
    "feasible_layouts": (AK.feasibleLayoutCount, XSD.integer),
    "layout": (AK.configurationText, XSD.string), "chips_used": (AK.layoutChips, XSD.integer),
    "tp": (AK.layoutTp, XSD.integer), "pp": (AK.layoutPp, XSD.integer),
    "dp": (AK.layoutDp, XSD.integer), "batch": (AK.layoutBatch, XSD.integer),
    "layout_precision": (AK.layoutPrecision, XSD.string),
    "time_s": (AK.timeSeconds, XSD.double), "time_s_low": (AK.timeSecondsLow, XSD.double),
    "time_s_high": (AK.timeSecondsHigh, XSD.double),
    "tokens_per_s": (AK.tokensPerSecond, XSD.double),
    "tokens_per_s_low": (AK.tokensPerSecondLow, XSD.double),
    "tokens_per_s_high": (AK.tokensPerSecondHigh, XSD.double),
    "tokens_per_s_per_user": (AK.tokensPerSecondPerUser, XSD.double),
    "tokens_per_s_per_user_low": (AK.tokensPerSecondPerUserLow, XSD.double),
    "tokens_per_s_per_user_high": (AK.tokensPerSecondPerUserHigh, XSD.double),
    "ttft_s": (AK.ttftSeconds, XSD.double), "ttft_s_low": (AK.ttftSecondsLow, XSD.double),
    "ttft_s_high": (AK.ttftSecondsHigh, XSD.double),
    "joules_per_token": (AK.joulesPerToken, XSD.double),
    "tokens_per_joule": (AK.tokensPerJoule, XSD.double),
    "power_w": (AK.averagePowerWatts, XSD.double),
    "usd_per_million_tokens": (AK.usdPerMillionTokens, XSD.double),
    "usd_per_million_tokens_low": (AK.usdPerMillionTokensLow, XSD.double),
    "usd_per_million_tokens_high": (AK.usdPerMillionTokensHigh, XSD.double),
    "interval_basis": (AK.intervalBasis, XSD.string),
}
#: Columns that are not results (they differ between runs and engines).
TIMING = frozenset({"solve_seconds", "estimate_seconds", "worker"})
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _node(*parts: str) -> URIRef:
    return URIRef(loader.DATA_NS + "-".join(_SAFE.sub("_", p) for p in parts))


def _literal(value: Any, datatype: URIRef, column: str, where: str) -> Literal:
    try:
        if datatype == XSD.integer:
            number = float(value)
            if number != int(number):
                raise ValueError(value)
            return Literal(int(number), datatype=XSD.integer)
        if datatype == XSD.double:
            return Literal(float(value), datatype=XSD.double)
    except (TypeError, ValueError):
        kind = "a whole number" if datatype == XSD.integer else "a number"
        raise InputError(f"{where}: expected {kind} in column {column}, got {value!r}") from None
    return Literal(str(value))


def rows_graph(rows: Iterable[dict[str, Any]], kb: Any = None) -> Graph:
    """The RDF of ``rows`` (a results file's rows); model and system linked through ``kb``.

    Raises
    ------
    InputError
        A row without ``spec_hash`` or ``point_id``, or a cell of the wrong kind.
    """
    g = Graph()
    runs: set[URIRef] = set()
    known = {kind: kb.names(kind) for kind in ("model", "system")} if kb is not None else {}
    for i, row in enumerate(rows, start=1):
        where = f"row {i}"
        digest, pid = row.get("spec_hash"), row.get("point_id")
        if not digest or not pid:
            raise InputError(f"{where}: expected a sweep result row (spec_hash and point_id), "
                             f"got columns {', '.join(sorted(row)) or 'none'}")
        run = _node("sweep", str(digest))
        if run not in runs:
            runs.add(run)
            g.add((run, RDF.type, AK.SweepRun))
            g.add((run, AK.specHash, Literal(str(digest))))
        node = _node("sweep", str(digest), str(pid))
        g.add((node, RDF.type, AK.SweepPoint))
        g.add((node, AK.inSweep, run))
        for column, value in row.items():
            if value is None or value == "" or column in TIMING or column == "spec_hash":
                continue
            if column not in PROPERTIES:
                raise InputError(f"{where}: unknown column '{column}' (expected the columns "
                                 "accelkb sweep writes)")
            prop, datatype = PROPERTIES[column]
            g.add((node, prop, _literal(value, datatype, column, where)))
        for kind, prop in (("model", AK.configuredModel), ("system", AK.configuredSystem)):
            if row.get(kind) in known.get(kind, {}):
                g.add((node, prop, known[kind][row[kind]]))
    return g


def _sweep_shapes() -> Graph:
    """The bundled shapes of sweep runs and points (with their prefix declarations): the rest
    of the shapes concern sourced facts and would only cost time on result rows."""
    shapes = loader.build_graph(loader.bundled_shapes())
    shp = "https://w3id.org/accelkb/shapes#"
    out = Graph()
    todo: list[Any] = [URIRef(shp + "SweepRunShape"), URIRef(shp + "SweepPointShape"),
                       URIRef(shp)]
    seen: set[Any] = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for p, o in shapes.predicate_objects(node):
            out.add((node, p, o))
            if isinstance(o, BNode):
                todo.append(o)
    return out


def assert_rows(kb: Any, rows: Iterable[dict[str, Any]], what: str = "the sweep rows",
                validate: bool = True) -> int:
    """Add ``rows`` to ``kb``'s results graph, all or nothing; returns the points added.
    ``validate=False`` skips the SHACL check (rows this process just computed).

    Raises
    ------
    InputError
        Rows that are not sweep rows, or rows the SHACL shapes refuse (a
        :class:`~accelkb.errors.ValidationError` listing every violation).
    """
    from accelkb.ontology.kb import RESULTS

    g = rows_graph(rows, kb)
    if validate:
        check = loader.build_graph(loader.bundled_schema())
        for t in g:
            check.add(t)
        found = loader.violations(check, _sweep_shapes(),
                                  sorted(g.subjects(RDF.type, AK.SweepPoint), key=str))
        if found:
            raise ValidationError(f"{len(found)} violation(s) in {what}; nothing was added",
                                  [str(v) for v in found])
    target = kb.graph(RESULTS)
    for t in g:
        target.add(t)
    return sum(1 for _ in g.subjects(RDF.type, AK.SweepPoint))
