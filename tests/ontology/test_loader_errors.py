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
