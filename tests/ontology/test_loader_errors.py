"""Turtle errors name the file and the line, whatever part of rdflib's parser fails."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from rdflib import Graph

from accelkb.errors import InputError
from accelkb.ontology import loader


@pytest.mark.parametrize(("text", "line", "why"), [
    ('@prefix ak: <urn:x#> .\n\n<a> ak:x "abc', 3, "a string that is never closed"),
    ('@prefix ak: <urn:x#> .\n<a> ak:x """abc\ndef', 2, "a long string opened here"),
    ('@prefix ak: <urn:x#> .\n<a> ak:x ak:y ;\n  ak:na', 3, "the file ends inside a statement"),
    ('@prefix ak: <urn:x#> .\n<a> ak:x <b', 2, "unterminated URI reference"),
])
def test_a_turtle_error_gives_file_and_line(text: str, line: int, why: str) -> None:
    with pytest.raises(InputError) as got:
        loader.parse_into(Graph(), "my.ttl", text)
    assert str(got.value).startswith(f"my.ttl:{line}: Turtle syntax error: {why}")


def test_every_cut_of_a_real_file_is_reported_with_a_line() -> None:
    """A file cut anywhere (a failed copy, a half-saved edit) gets a line number, never an
    internal message such as 'string index out of range'."""
    text = (REPO / "ontology" / "data" / "groq.ttl").read_text(encoding="utf-8")
    for cut in range(1500, 9000, 37):
        try:
            loader.parse_into(Graph(), "x.ttl", text[:cut])
        except InputError as exc:
            assert re.match(r"x\.ttl:\d+: Turtle syntax error: ", str(exc)), (cut, str(exc))
            assert "index out of range" not in str(exc)


def test_an_unreadable_cache_is_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory that cannot be read (mode 000 for a non-root user) or a missing home
    directory: validation runs again rather than every command failing."""
    from pathlib import Path

    from accelkb.ontology import validation_cache

    def unreadable(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.delenv("ACCELKB_NO_CACHE", raising=False)
    monkeypatch.setattr(Path, "is_file", unreadable)
    monkeypatch.setattr(Path, "touch", unreadable)
    assert validation_cache.known_valid("0" * 64) is False
    validation_cache.remember_valid("0" * 64)  # best effort: no error

    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("ACCELKB_CACHE_DIR", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(homeless))
    assert validation_cache.known_valid("0" * 64) is False


def test_infinite_numbers_and_control_characters_are_refused() -> None:
    g = Graph()
    g.parse(format="turtle", data=(
        '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
        '<urn:t> <urn:capacity> "INF"^^xsd:double ; <urn:bw> "NaN"^^xsd:double ;\n'
        '  <urn:fine> "1.5e12"^^xsd:double ; <urn:label> "bad\\u0000tier" ;\n'
        '  <urn:note> "two\\nlines\\tand a tab" .'))
    messages = sorted(v.message for v in loader.ill_typed(g))
    assert messages == ["expected a finite number, got 'inf'",
                        "expected a finite number, got 'nan'",
                        "expected text without control characters, got '\\x00' in "
                        "'bad\\x00tier'"]
