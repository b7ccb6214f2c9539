"""Render SPARQL results for people (table) and programs (SPARQL 1.1 JSON, CSV, RDF)."""

from __future__ import annotations

from rdflib import BNode, Literal, URIRef
from rdflib.query import Result

from accelkb.errors import InputError

_SHORT = {
    "https://w3id.org/accelkb/schema#": "ak:",
    "https://w3id.org/accelkb/data/": "kb:",
    "https://w3id.org/accelkb/source/": "src:",
}


def _cell(term: object) -> str:
    if term is None:
        return ""
    if isinstance(term, URIRef):
        text = str(term)
        for ns, prefix in _SHORT.items():
            if text.startswith(ns):
                return prefix + text[len(ns):]
        return text
    if isinstance(term, BNode):
        return f"_:{term}"
    if isinstance(term, Literal):
        return str(term)
    return str(term)


def render_table(result: Result) -> str:
    """A fixed-width text table of a SELECT result (or 'true'/'false' for ASK).

    Examples
    --------
    >>> from rdflib import Graph
    >>> print(render_table(Graph().query("SELECT ?x WHERE { VALUES ?x { 1 2 } }")), end="")
    x
    -
    1
    2
    (2 rows)
    """
    if result.type == "ASK":
        return ("true" if result.askAnswer else "false") + "\n"
    names = [str(v) for v in (result.vars or [])]
    rows = [[_cell(row[i]) for i in range(len(names))] for row in result]  # type: ignore[index]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines) + "\n"


def render_result(result: Result, fmt: str) -> str:
    """Serialize a query result as 'table', 'json' (SPARQL 1.1 results JSON / JSON-LD) or 'csv'."""
    if fmt not in ("table", "json", "csv"):
        raise InputError(f"expected --format table, json or csv, got '{fmt}'")
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        graph = result.graph
        assert graph is not None  # rdflib sets it for graph results (not user input)
        rdf_fmt = {"table": "turtle", "json": "json-ld", "csv": "nt"}[fmt]
        return graph.serialize(format=rdf_fmt)
    if fmt == "table":
        return render_table(result)
    if result.type == "ASK" and fmt == "csv":  # SPARQL's CSV format covers SELECT only
        return f"boolean\r\n{'true' if result.askAnswer else 'false'}\r\n"
    data = result.serialize(format=fmt)
    text = data.decode("utf-8") if isinstance(data, bytes) else str(data)
    return text if text.endswith("\n") else text + "\n"
