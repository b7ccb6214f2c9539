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


def test_docstring_examples_run() -> None:
    import doctest

    from accelkb.ontology import loader

    result = doctest.testmod(loader, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize(("content", "expected"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "got binary data (a NUL byte at offset 8)"),
    ("@prefix ak: <https://w3id.org/accelkb/schema#> .\n# caf\u00e9\n".encode("latin-1"),
     "expected UTF-8 text (Turtle is always UTF-8), got byte 0xe9 at offset 54 (line 2)"),
])
def test_undecodable_files_exit_2_naming_the_offset(tmp_path: Path, content: bytes,
                                                    expected: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.cli import main

    path = tmp_path / "mine.ttl"
    path.write_bytes(content)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and str(path) in err and "Traceback" not in err


def test_names_are_kebab_case_and_stand_for_one_thing(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.cli import main

    path = tmp_path / "names.ttl"
    path.write_text("""@prefix ak: <https://w3id.org/accelkb/schema#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix ex: <https://example.org/mine/> .
ex:v a ak:Vendor ; rdfs:label "V" ; ak:shortName "ipu-pod64" .
ex:w a ak:Vendor ; rdfs:label "W" ; ak:shortName "a b" .
ex:x a ak:Vendor ; rdfs:label "X" ; ak:shortName "" .
ex:y a ak:Vendor ; rdfs:label "Y" ; ak:shortName "twice" .
ex:z a ak:Vendor ; rdfs:label "Z" ; ak:shortName "twice" .
""", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'ipu-pod64' is already the name of kb:ipu-pod64" in err  # a bundled system's name
    assert "'twice' is already the name of ex:z" in err and "'twice' is already the name of ex:y" in err
    assert err.count("expected one kebab-case ak:shortName") == 2  # "a b" and ""


def test_a_closed_vocabulary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt term (ak:tdpWatt for ak:tdpWatts) used to validate and then be ignored
    everywhere; a chip property on a memory tier too."""
    from accelkb.cli import main

    path = tmp_path / "typos.ttl"
    path.write_text("""@prefix ak: <https://w3id.org/accelkb/schema#> .
@prefix kb: <https://w3id.org/accelkb/data/> .
@prefix ex: <https://example.org/mine/> .
kb:gc200 ak:tdpWatt 300 .
ex:thing a ak:Chipp .
kb:gc200-sram ak:peakFlopsBf16 1.0e15 .
""", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ak:tdpWatt is not a term of the accelkb schema; closest: ak:tdpWatts" in err
    assert "ak:Chipp is not a term of the accelkb schema; closest: ak:Chip" in err
    assert "ak:peakFlopsBf16 applies to ak:Chip, not to ak:MemoryTier" in err
    assert "Traceback" not in err


def test_an_ill_typed_number_is_a_violation_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.cli import main

    path = tmp_path / "eight.ttl"
    path.write_text('@prefix ak: <https://w3id.org/accelkb/schema#> .\n'
                    '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
                    '<https://w3id.org/accelkb/data/dgx-a100> ak:chipCount "eight"^^xsd:integer .\n',
                    encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'eight' is not a valid xsd:integer" in err and "Traceback" not in err


def test_a_mistyped_accelkb_prefix_is_refused_with_the_iri_in_full(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file whose @prefix ak: points at a namespace that is not the schema's used to load
    without a word, and every fact in it was ignored."""
    from accelkb.cli import main

    path = tmp_path / "prefix.ttl"
    path.write_text("""@prefix ak: <https://w3id.org/accelkb/ontology#> .
@prefix kb: <https://w3id.org/accelkb/data/> .
kb:my-chip a ak:Chip ; ak:tdpWatts 700 .
""", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "got <https://w3id.org/accelkb/ontology#tdpWatts> (is an @prefix mistyped?)" in err
    assert "got <https://w3id.org/accelkb/ontology#Chip>" in err
    assert main(["validate"]) == 0  # the bundled knowledge uses only the project's bases
