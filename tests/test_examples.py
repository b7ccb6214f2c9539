"""The example queries under examples/queries run as tests against golden results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_rows import EXAMPLES, GOLDEN, rows_of

from accelkb.ontology.kb import KnowledgeBase

QUERIES = sorted(EXAMPLES.glob("*.rq"))


def test_every_example_has_a_golden() -> None:
    assert len(QUERIES) >= 5
    missing = [q.stem for q in QUERIES if not (GOLDEN / f"{q.stem}.json").exists()]
    assert not missing, f"run python tests/golden_rows.py and review: {missing}"


@pytest.mark.parametrize("rq", QUERIES, ids=[q.stem for q in QUERIES])
def test_example_query_matches_golden(kb: KnowledgeBase, rq: Path) -> None:
    expected = json.loads((GOLDEN / f"{rq.stem}.json").read_text(encoding="utf-8"))
    got = rows_of(kb.query(rq.read_text(encoding="utf-8")))
    if isinstance(expected, list):
        assert len(expected) > 0, f"{rq.stem}: a golden with no rows proves nothing"
    assert got == expected


def test_sram_query_answers_the_question(kb: KnowledgeBase) -> None:
    rows = rows_of(kb.query((EXAMPLES / "chips_with_200mb_sram.rq").read_text(encoding="utf-8")))
    assert isinstance(rows, list)
    names = {r["name"] for r in rows}  # type: ignore[index]
    assert {"gc200", "groqchip", "sn40l"} <= names
    assert all(float(r["sram_bytes"]) >= 2e8 for r in rows)  # type: ignore[index]
    assert "a100-sxm4-80gb" not in names
