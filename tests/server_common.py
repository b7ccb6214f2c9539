"""Helpers shared by the endpoint and store tests (no tests here): skips, result comparison."""

from __future__ import annotations

import select
import subprocess
import time
from decimal import Decimal
from typing import Any

import pytest
from rdflib import BNode, Literal
from rdflib.query import Result

from accelkb.errors import InputError
from accelkb.serve.backend import find_oxigraph


def require_oxigraph() -> None:
    """Skip the calling test when the Oxigraph server binary is not installed."""
    try:
        find_oxigraph()
    except InputError:
        pytest.skip("the Oxigraph server binary is not installed (pip install oxigraph; it is in "
                    "accelkb's test extra)")


def _cell(term: Any) -> tuple[str, str]:
    if term is None:
        return ("unbound", "")
    if isinstance(term, BNode):
        return ("bnode", "")  # labels differ between stores; only the kind is comparable
    if isinstance(term, Literal):
        value = term.toPython()
        if isinstance(value, int | Decimal) and not isinstance(value, bool):
            # Engines promote numeric types differently (rdflib sums an integer and a decimal
            # to xsd:integer when the value is whole, Oxigraph to xsd:decimal as the spec says):
            # numbers compare by value.
            return ("number", str(Decimal(value).normalize()))
        key = repr(value) if not isinstance(value, Literal) else str(term)
        return (f"literal:{term.datatype or ''}:{term.language or ''}", key)
    return ("iri", str(term))


def rows(result: Result) -> list[tuple[tuple[str, str], ...]]:
    """A SELECT result as a sorted list of comparable rows (values, not lexical forms)."""
    names = list(result.vars or [])
    table: Any = result
    return sorted(tuple(_cell(row[name]) for name in names) for row in table)


def same_answer(a: Result, b: Result) -> bool:
    """Whether two results answer the same: equal rows, booleans or isomorphic graphs."""
    from rdflib.compare import isomorphic

    if a.type != b.type and {a.type, b.type} != {"CONSTRUCT", "DESCRIBE"}:
        return False
    if a.type == "ASK":
        return bool(a.askAnswer) == bool(b.askAnswer)
    if a.type in ("CONSTRUCT", "DESCRIBE"):
        assert a.graph is not None and b.graph is not None
        return isomorphic(a.graph, b.graph)
    return [str(v) for v in a.vars or []] == [str(v) for v in b.vars or []] and rows(a) == rows(b)


def await_url(proc: subprocess.Popen[str], deadline: float) -> str:
    """The URL ``accelkb serve`` prints on stderr when it listens."""
    assert proc.stderr is not None
    lines = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "SPARQL endpoint at " in line:
            return line.split("SPARQL endpoint at ")[1].split()[0]
    raise AssertionError("accelkb serve did not print its URL: " + "".join(lines))


def ensure_stopped(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` if it still runs, reap it and close its stderr (a test's ``finally``)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)
    if proc.stderr:
        proc.stderr.close()
