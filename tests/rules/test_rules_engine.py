"""Rule loading, checking and the fixpoint engine: bad-rule corpus, order independence,
idempotence, the pass limit, and one derivation record per inferred triple."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from conftest import TESTS
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import RDF, Dataset, Graph, Literal, URIRef
from rdflib.compare import isomorphic

from accelkb.ontology.kb import ASSERTED, DERIVATIONS, INFERRED
from accelkb.rules.engine import (
    PROV,
    OxigraphStore,
    RdflibStore,
    dependency_order,
    run_fixpoint,
    statement_iri,
)
from accelkb.rules.parse import RuleFileError, load_rules, parse_rule, rule_files

BAD = TESTS / "data" / "bad_rules"
GOLDEN = TESTS / "rules" / "rules_golden"

#: file -> the message each bad rule must produce
EXPECTED_PROBLEMS = {
    "syntax-error.rq": "SPARQL syntax error at line 9",
    "unknown-term.rq": "unknown schema term ak:modelStateByte",
    "blank-node-template.rq": "the template mints blank nodes",
    "bnode-function.rq": "BNODE() mints blank nodes",
    "missing-header.rq": "header line '# source: ...' is missing or empty",
    "wrong-writes.rq": "header writes must list what the template writes: missing "
                       "['ak:boundBy'], not written ['ak:rank']",
    "id-mismatch.rq": "header id 'another-name' differs from the file name 'id-mismatch'",
    "not-construct.rq": "not a rule: expected a CONSTRUCT query",
}


@functools.lru_cache(maxsize=1)
def _scenario_triples() -> tuple[tuple[Any, Any, Any], ...]:
    g = Graph()
    for case in sorted(GOLDEN.iterdir()):
        if (case / "input.ttl").is_file():
            text = (case / "input.ttl").read_text("utf-8")
            g.parse(data=text.replace("https://example.org/golden/",
                                      f"https://example.org/golden/{case.name}/"),
                    format="turtle")
    return tuple(g)


def _scenario() -> Dataset:
    """Every golden input at once, each case in its own namespace: findings, candidates,
    scores and ranks interact."""
    ds = Dataset(default_union=True)
    g = ds.graph(ASSERTED)
    for t in _scenario_triples():
        g.add(t)
    return ds


@functools.lru_cache(maxsize=1)
def _reference() -> tuple[Graph, OxigraphStore]:
    return _run(sorted(load_rules()))


def _graph(triples: list[Any]) -> Graph:
    g = Graph()
    for t in triples:
        g.add(t)
    return g


def _run(order: list[str], record: bool = True) -> tuple[Graph, OxigraphStore]:
    rules = load_rules()
    store = OxigraphStore.from_dataset(_scenario())
    report = run_fixpoint([rules[i] for i in order], store, record=record)
    assert report.converged
    return _graph(store.triples(INFERRED)), store


def test_bad_rule_corpus_reports_every_file() -> None:
    files = rule_files(BAD)
    assert len(files) == len(EXPECTED_PROBLEMS)
    with pytest.raises(RuleFileError) as info:
        load_rules(files)
    problems = info.value.problems
    for name, message in EXPECTED_PROBLEMS.items():
        assert any(p.startswith(str(BAD / name)) and message in p for p in problems), name
    assert all(any(p.startswith(str(BAD / n)) for p in problems) for n in EXPECTED_PROBLEMS)


def test_one_bad_file_does_not_hide_good_ones() -> None:
    good = rule_files()[:3]
    bad = [(str(BAD / "unknown-term.rq"), (BAD / "unknown-term.rq").read_text())]
    with pytest.raises(RuleFileError) as info:
        load_rules(good + bad)
    assert len(info.value.problems) == 1


def test_duplicate_ids_are_refused() -> None:
    path, text = rule_files()[0]
    with pytest.raises(RuleFileError, match="duplicate rule id"):
        load_rules([(path, text), (path, text)])


def test_bundled_rules_load_and_depend() -> None:
    rules = load_rules()
    assert len(rules) == 30
    order = [r.id for r in dependency_order(rules.values())]
    for finding in ("memory-capacity-bound", "pipeline-bubble-bound", "host-io-bound"):
        assert order.index(finding) < order.index("candidate-zero-sharding")
    assert order.index("candidate-int8-weights") < order.index("candidate-score")
    assert order[-1] == "rank-candidates"
    assert all(r.iri.startswith("https://w3id.org/accelkb/data/rule-") for r in rules.values())


def test_parse_refuses_blank_node_in_brackets() -> None:
    rule, problems = parse_rule("# id: x\nCONSTRUCT { [] ak:rank 1 } WHERE { }", "x.rq")
    assert rule is None and any("blank node" in p for p in problems)


@settings(max_examples=3, deadline=None)
@given(st.permutations(sorted(load_rules())))
def test_fixpoint_independent_of_rule_file_order(order: list[str]) -> None:
    reference, _ = _reference()
    got, _ = _run(list(order))
    assert len(reference) > 100
    assert isomorphic(reference, got)


def test_fixpoint_is_idempotent_and_records_every_triple() -> None:
    inferred, store = _run(sorted(load_rules()))
    again = run_fixpoint(load_rules().values(), store)
    assert isomorphic(_graph(store.triples(INFERRED)), inferred)
    assert again.converged and again.new_triples == 0 and again.derivations == 0
    derivations = _graph(store.triples(DERIVATIONS))
    generated = {(derivations.value(st, RDF.subject), derivations.value(st, RDF.predicate),
                  derivations.value(st, RDF.object))
                 for st in derivations.subjects(PROV.wasGeneratedBy, None)}
    assert set(inferred) <= generated
    # Statement IRIs are the hash of the triple's N-Triples form (IRIs alike in both stores).
    for t in inferred:
        if not any(isinstance(x, Literal) for x in t):
            assert (statement_iri(t), PROV.wasGeneratedBy, None) in derivations, t
    plain, _ = _run(sorted(load_rules()), record=False)
    assert isomorphic(plain, inferred)


def test_both_stores_agree_on_the_scenario() -> None:
    ox, _ = _reference()
    ds = _scenario()
    run_fixpoint(load_rules().values(), RdflibStore(ds))
    assert isomorphic(ox, Graph() + ds.graph(INFERRED))


def test_pass_limit_is_reported() -> None:
    text = """# id: grow
# title: mints a new IRI from every IRI, forever
# explanation: ?x leads to ?y
# reads: ak:note
# writes: ak:note
# source: kb:bottleneck-compute
CONSTRUCT { ?y ak:note "x" } WHERE { ?x ak:note ?n BIND (IRI(CONCAT(STR(?x), "x")) AS ?y) }
"""
    rule, problems = parse_rule(text, "grow.rq")
    assert rule is not None, problems
    ds = Dataset(default_union=True)
    ds.graph(ASSERTED).add((URIRef("https://example.org/a"),
                            URIRef("https://w3id.org/accelkb/schema#note"),
                            URIRef("https://example.org/b")))
    report = run_fixpoint([rule], OxigraphStore.from_dataset(ds), max_rounds=3)
    assert not report.converged and report.passes == 3 and report.new_triples == 3


def test_derivation_records_are_prov_o() -> None:
    _, store = _reference()
    derivations = _graph(store.triples(DERIVATIONS))
    acts = set(derivations.subjects(RDF.type, PROV.Activity))
    assert acts and all((a, PROV.used, None) in derivations for a in acts)
