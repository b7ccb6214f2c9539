"""Golden rule tests: for every rule file, input triples + the rule -> exactly the expected
triples (graphs compared with ``rdflib.compare``), on both stores.

Each ``tests/rules/rules_golden/<rule-id>/`` holds ``input.ttl`` (with cases that must fire and cases
that must not) and ``expected.ttl`` (the inferred graph). Regenerate after a deliberate change
with ``python tests/rules/test_rules_golden.py`` and review the diff.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rdflib import Dataset, Graph
from rdflib.compare import graph_diff, isomorphic, to_isomorphic

from accelkb.ontology.kb import ASSERTED, INFERRED
from accelkb.rules.engine import OxigraphStore, RdflibStore, run_fixpoint
from accelkb.rules.parse import load_rules

GOLDEN = Path(__file__).resolve().parent / "rules_golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.ttl").is_file())
RULE_FILES = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "rules").glob("*.rq"))


def inferred(case: str, store: str) -> Graph:
    """Run the one rule of ``case`` on its input; return the inferred graph."""
    rule = load_rules()[case]
    ds = Dataset(default_union=True)
    ds.graph(ASSERTED).parse(GOLDEN / case / "input.ttl", format="turtle")
    if store == "rdflib":
        run_fixpoint([rule], RdflibStore(ds))
        return Graph() + ds.graph(INFERRED)
    ox = OxigraphStore.from_dataset(ds)
    run_fixpoint([rule], ox)
    out = Graph()
    for t in ox.triples(INFERRED):
        out.add(t)
    return out


def test_every_rule_has_a_golden_case() -> None:
    assert len(RULE_FILES) == 30
    assert CASES == RULE_FILES


@pytest.mark.parametrize("store", ["rdflib", "oxigraph"])
@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, store: str) -> None:
    got = inferred(case, store)
    expected = Graph().parse(GOLDEN / case / "expected.ttl", format="turtle")
    assert len(expected) > 0, f"{case}: an empty golden proves nothing"
    if not isomorphic(got, expected):
        _, missing, extra = graph_diff(to_isomorphic(expected), to_isomorphic(got))
        pytest.fail(f"{case} ({store}): missing {sorted(missing)}\nextra {sorted(extra)}")


if __name__ == "__main__":  # regenerate: python tests/rules/test_rules_golden.py [case ...]
    for name in sys.argv[1:] or CASES:
        g = inferred(name, "oxigraph")
        g.bind("ak", "https://w3id.org/accelkb/schema#")
        g.bind("kb", "https://w3id.org/accelkb/data/")
        g.bind("ex", "https://example.org/golden/")
        (GOLDEN / name / "expected.ttl").write_text(g.serialize(format="turtle"), "utf-8")
        print(name, len(g))
