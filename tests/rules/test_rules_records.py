"""Derivation records: both stores record the same derivations (rule, bindings, premises,
generated triples), the background loader reports its errors, and explain finds a derived
literal whose lexical form Oxigraph wrote differently from rdflib."""

from __future__ import annotations

from typing import Any

import pytest
from rdflib import RDF, Dataset, Graph, Literal, URIRef
from test_rules_engine import _scenario

from accelkb.ontology.kb import DERIVATIONS, INFERRED, KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.rules.engine import PROV, OxigraphStore, RdflibStore, run_fixpoint
from accelkb.rules.explain import explain
from accelkb.rules.parse import load_rules


def _value(term: Any) -> Any:
    """Literals by value: the two SPARQL engines write computed numbers differently."""
    return (term.datatype, term.toPython()) if isinstance(term, Literal) else term


def _statement(g: Graph, st: Any) -> tuple[Any, Any, Any]:
    return (g.value(st, RDF.subject), g.value(st, RDF.predicate),
            _value(g.value(st, RDF.object)))


def _content(g: Graph) -> set[tuple[Any, ...]]:
    """Every derivation as (rule, bindings, premises, generated), independent of IRIs."""
    out = set()
    for d in g.subjects(RDF.type, AK.Derivation):
        assert (d, RDF.type, PROV.Activity) in g
        binds = frozenset((str(g.value(b, AK.bindingVariable)),
                            _value(g.value(b, AK.bindingValue)))
                          for b in g.objects(d, AK.binding))
        used = frozenset(_statement(g, st) for st in g.objects(d, PROV.used))
        made = frozenset(_statement(g, st) for st in g.subjects(PROV.wasGeneratedBy, d))
        assert made, d
        out.add((g.value(d, AK.rule), binds, used, made))
    return out


def test_both_stores_record_the_same_derivations() -> None:
    rules = load_rules()
    ox = OxigraphStore.from_dataset(_scenario())
    report = run_fixpoint(rules.values(), ox)
    from_ox = Graph()
    for t in ox.triples(DERIVATIONS):
        from_ox.add(t)
    ds = _scenario()
    run_fixpoint(rules.values(), RdflibStore(ds))
    from_rdflib = Graph() + ds.graph(DERIVATIONS)
    content = _content(from_ox)
    assert len(content) == report.derivations > 100
    assert content == _content(from_rdflib)
    # every generated statement is typed, and shared bindings are written once
    for st in from_ox.subjects(PROV.wasGeneratedBy, None):
        assert (st, RDF.type, RDF.Statement) in from_ox
    assert len(set(from_ox.objects(None, AK.binding))) < len(list(from_ox.objects(None,
                                                                                  AK.binding)))


_PREFIXES = {"prov": str(PROV), "ak": "https://w3id.org/accelkb/schema#", "rdf": str(RDF)}


def test_records_are_queryable_in_oxigraph_after_the_run() -> None:
    """In Oxigraph the records are RDF 1.2: premises and generated triples are triple terms."""
    ox = OxigraphStore.from_dataset(_scenario())
    report = run_fixpoint(load_rules().values(), ox)
    rows = list(ox.query(
        "SELECT (COUNT(DISTINCT ?d) AS ?n) WHERE { GRAPH ?g { ?d a ak:Derivation ; "
        "ak:rule ?r ; prov:used <<( ?s ?p ?o )>> ; prov:generated <<( ?x ?y ?z )>> } }",
        prefixes=_PREFIXES))
    assert int(rows[0][0].value) == report.derivations
    # which rule made each finding: one pattern, no rdf:Statement
    rows = list(ox.query(
        "SELECT ?f ?id WHERE { ?f a ak:BottleneckFinding . "
        "?d prov:generated <<( ?f rdf:type ak:BottleneckFinding )>> ; ak:rule/ak:ruleId ?id }",
        use_default_graph_as_union=True, prefixes=_PREFIXES))
    findings = {r["f"] for r in ox.query(
        f"SELECT ?f WHERE {{ GRAPH <{INFERRED}> {{ ?f a ak:BottleneckFinding }} }}",
        prefixes=_PREFIXES)}
    assert findings and {r["f"] for r in rows} == findings
    # bindings a premise holds are left to it in Oxigraph and restored on reading back
    raw = int(next(iter(ox.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?d ak:binding ?b } }",
                                 prefixes=_PREFIXES)))[0].value)
    restored = sum(1 for t in ox.triples(DERIVATIONS) if t[1] == AK.binding)
    assert 0 < raw < restored


def test_background_load_errors_reach_the_caller() -> None:
    ox = OxigraphStore.from_dataset(Dataset(default_union=True))
    ox.load_records("<https://example.org/s> <https://example.org/p> .\n")
    with pytest.raises(SyntaxError):
        ox.sync()
    ox.sync()  # reported once


def test_explain_a_derived_literal_written_by_oxigraph() -> None:
    kb = KnowledgeBase(validate=False)
    for t in _scenario().graph(URIRef("https://w3id.org/accelkb/graph/asserted")):
        kb.graph(URIRef("https://w3id.org/accelkb/graph/asserted")).add(t)
    ox = OxigraphStore.from_dataset(kb.dataset)
    run_fixpoint(load_rules().values(), ox)
    for graph in (INFERRED, DERIVATIONS):
        for t in ox.triples(graph):
            kb.graph(graph).add(t)
    scores = list(kb.graph(INFERRED).triples((None, AK.candidateScore, None)))
    assert scores and all(isinstance(o, Literal) for _, _, o in scores)
    tree = explain(kb, scores[0])
    assert tree.kind == "derived" and tree.rule_id == "candidate-score" and tree.premises


def test_a_premise_the_engine_cannot_record_anchors_no_binding() -> None:
    from accelkb.rules.records import anchored_vars

    rule = load_rules()["host-io-bound"]
    full = anchored_vars(rule)
    assert set(full) == {"e", "host", "rate", "system", "workload"}
    # without ?rate among the solution's variables its premise is not recorded: no anchor there
    partial = anchored_vars(rule, set(full) - {"rate"} | {"f"})
    assert "rate" not in partial and partial["host"] == full["host"]
