"""Loading and validation: every bad file gets its message; nothing is ever half-loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TESTS

from accelkb.errors import InputError, UnknownNameError, ValidationError
from accelkb.ontology.kb import KnowledgeBase

BAD = sorted((TESTS / "data" / "bad").glob("*.ttl"))


def expected_message(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name} must start with '# expect: <message>'"
    return first[len("# expect: "):]


def test_bad_corpus_is_not_empty() -> None:
    # A golden suite silently shrunk to nothing would pass vacuously.
    assert len(BAD) >= 15


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_file_is_rejected_with_its_message(path: Path) -> None:
    # Validated against the schema alone: the corpus files are self-contained.
    with pytest.raises(InputError) as info:
        KnowledgeBase([path], bundled_data=False)
    assert expected_message(path) in str(info.value)


def test_validation_lists_every_violation_at_once(tmp_path: Path, data_dir: Path) -> None:
    text = (data_dir / "good_minimal.ttl").read_text(encoding="utf-8")
    text = text.replace("ak:capacityBytes 500000000", "ak:capacityBytes -1")
    text = text.replace("ak:connectsChip ex:x1 ;", "ak:connectsChip ex:nope ;")
    bad = tmp_path / "two_problems.ttl"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        KnowledgeBase([bad], bundled_data=False)
    assert len(info.value.violations) == 2
    assert "two_problems.ttl" in str(info.value)


def test_good_user_file_loads_and_resolves(data_dir: Path) -> None:
    kb = KnowledgeBase([data_dir / "good_minimal.ttl"])
    assert str(kb.resolve("chip", "acme-x1")) == "https://example.org/lab/x1"
    assert str(kb.resolve("system", "acme-x1-pod")).endswith("x1-pod")


def test_failed_load_leaves_knowledge_base_unchanged(kb: KnowledgeBase, data_dir: Path) -> None:
    fresh = KnowledgeBase([data_dir / "good_minimal.ttl"], bundled_data=False)
    before = len(fresh.asserted)
    with pytest.raises(ValidationError):
        fresh.load(data_dir / "bad" / "negative_capacity.ttl")
    assert len(fresh.asserted) == before
    assert "acme-x1" in fresh.names("chip")


def test_syntax_error_names_file_and_line(data_dir: Path) -> None:
    with pytest.raises(InputError, match=r"syntax_error\.ttl:5: Turtle syntax error"):
        KnowledgeBase([data_dir / "bad" / "syntax_error.ttl"], bundled_data=False)


def test_missing_file_and_wrong_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        KnowledgeBase([tmp_path / "absent.ttl"])
    other = tmp_path / "notes.txt"
    other.write_text("hello", encoding="utf-8")
    with pytest.raises(InputError, match=r"expected an RDF file .* got suffix '\.txt'"):
        KnowledgeBase([other])


def test_unknown_name_lists_closest(kb: KnowledgeBase) -> None:
    with pytest.raises(UnknownNameError) as info:
        kb.resolve("system", "ipu-pod46")
    assert "ipu-pod64" in info.value.suggestions
    with pytest.raises(InputError, match="expected a kind among"):
        kb.names("gadget")


def test_query_syntax_error_is_input_error(kb: KnowledgeBase) -> None:
    with pytest.raises(InputError, match="SPARQL syntax error"):
        kb.query("SELEC ?x WHERE { ?x ?y ?z }")


def test_query_takes_bindings_not_formatting(kb: KnowledgeBase) -> None:
    rows = list(kb.query("SELECT ?c WHERE { ?c ak:shortName ?n }", {"n": "gc200"}))
    assert len(rows) == 1
