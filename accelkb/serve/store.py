"""External store: accelkb's graphs in a real SPARQL server, read and written over the protocol.

For users who outgrow one machine, ``--store sparql+http://host:port/query`` keeps the named
graphs (asserted, inferred, derivations, estimates, results) in any SPARQL 1.1 server: Oxigraph
server, Virtuoso, Fuseki or a clustered store. Only the standard protocols are used:

- writes are one SPARQL 1.1 Update request (``DROP SILENT GRAPH`` for each graph, then one
  ``INSERT DATA`` holding every graph, so blank nodes shared between graphs stay one node);
- queries are SPARQL 1.1 Protocol POSTs that name the graphs with ``default-graph-uri`` and
  ``named-graph-uri``: the default graph is their union, exactly as in the embedded store, and the
  server's other graphs are not seen.

Results come back as :class:`rdflib.query.Result`, so everything that renders an embedded result
(``accelkb query``'s table, JSON, CSV) renders a remote one unchanged.
"""

from __future__ import annotations

import io
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.query import Result

from accelkb.errors import InputError
from accelkb.ontology.kb import _PREFIXES, GRAPHS, KnowledgeBase

SCHEMES = {"sparql+http": "http", "sparql+https": "https"}
_RESULT_TYPES = {
    "application/sparql-results+json": "json",
    "application/sparql-results+xml": "xml",
}
_GRAPH_TYPES = {"application/n-triples": "nt", "text/turtle": "turtle"}
_ACCEPT = ("application/sparql-results+json, application/n-triples;q=0.9, "
           "text/turtle;q=0.8, application/sparql-results+xml;q=0.7")


def kb_nquads(kb: KnowledgeBase) -> bytes:
    """Every named graph of ``kb`` as N-Quads (what the endpoint and the stores load)."""
    data = kb.dataset.serialize(format="nquads", encoding="utf-8")
    return data if isinstance(data, bytes) else data.encode("utf-8")


def parse_store_url(url: str) -> tuple[str, str]:
    """The query and update URLs of a ``sparql+http(s)://`` store URL.

    The URL is the server's SPARQL query endpoint with ``sparql+`` in front of the scheme. The
    update endpoint is the same URL, except that a last path segment ``query`` becomes
    ``update`` (Oxigraph and Fuseki's layout; Virtuoso answers both on ``/sparql``).

    Raises
    ------
    InputError
        If the scheme is not ``sparql+http`` or ``sparql+https`` or the host is missing.

    Examples
    --------
    >>> parse_store_url("sparql+http://127.0.0.1:7878/query")
    ('http://127.0.0.1:7878/query', 'http://127.0.0.1:7878/update')
    >>> parse_store_url("sparql+https://db.example.org/sparql")
    ('https://db.example.org/sparql', 'https://db.example.org/sparql')
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.netloc:
        raise InputError(f"expected a store URL like sparql+http://127.0.0.1:7878/query, got "
                         f"'{url}'")
    scheme = SCHEMES[parts.scheme]
    query_url = urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))
    path = parts.path or "/"
    head, _, last = path.rpartition("/")
    update_path = f"{head}/update" if last == "query" else path
    update_url = urlunsplit((scheme, parts.netloc, update_path, parts.query, ""))
    return query_url, update_url


def _term(term: Any) -> str:
    """A term in SPARQL/N-Triples syntax (rdflib's ``n3()`` without prefixes)."""
    if isinstance(term, URIRef | Literal | BNode):
        return str(term.n3())
    return str(Literal(term).n3())


class RemoteStore:
    """accelkb's named graphs in a SPARQL 1.1 server.

    Parameters
    ----------
    url
        ``sparql+http://host:port/path`` (see :func:`parse_store_url`).
    timeout_s
        Socket timeout of each request, seconds.

    Examples
    --------
    >>> store = RemoteStore("sparql+http://127.0.0.1:7878/query")   # doctest: +SKIP
    >>> store.write(kb)                                              # doctest: +SKIP
    7621
    >>> store.query("ASK { ?c a ak:Chip }").askAnswer                # doctest: +SKIP
    True
    """

    def __init__(self, url: str, *, timeout_s: float = 120.0) -> None:
        self.url = url
        self.query_url, self.update_url = parse_store_url(url)
        self.timeout_s = timeout_s

    # -- HTTP ------------------------------------------------------------------------------
    def _post(self, target: str, form: Sequence[tuple[str, str]],
              accept: str) -> tuple[str, bytes]:
        where = target
        if target == self.update_url and target != self._typed():
            where = (f"{target}, the update endpoint of --store {self.url}, while writing the "
                     "knowledge to it (--no-write only queries)")
        request = urllib.request.Request(
            target, data=urlencode(form).encode("utf-8"), method="POST",
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": accept})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                ctype = (response.headers.get("Content-Type") or "").split(";")[0].strip()
                return ctype.lower(), response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace").strip()[:2000]
            raise InputError(f"the SPARQL store at {where} answered {exc.code} {exc.reason}: "
                             f"{detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise InputError(f"cannot reach the SPARQL store at {where}: {reason}") from None

    def _typed(self) -> str:
        """The store URL as the user typed it, without its ``sparql+`` scheme prefix."""
        return self.url.removeprefix("sparql+")

    # -- writing ---------------------------------------------------------------------------
    def write_graphs(self, graphs: Mapping[URIRef, Graph]) -> int:
        """Replace the given named graphs in the store; returns the number of triples written."""
        parts = [f"DROP SILENT GRAPH {g.n3()} ;" for g in graphs]
        parts.append("INSERT DATA {")
        count = 0
        for name, graph in graphs.items():
            if len(graph) == 0:
                continue
            parts.append(f"GRAPH {name.n3()} {{")
            for s, p, o in graph:
                parts.append(f"{_term(s)} {_term(p)} {_term(o)} .")
                count += 1
            parts.append("}")
        parts.append("}")
        self._post(self.update_url, [("update", "\n".join(parts))], "*/*")
        return count

    def write(self, kb: KnowledgeBase) -> int:
        """Replace accelkb's named graphs in the store with ``kb``'s; returns triples written."""
        return self.write_graphs({g: kb.dataset.graph(g) for g in GRAPHS})

    # -- reading ---------------------------------------------------------------------------
    def query(self, sparql: str, bindings: Mapping[str, Any] | None = None) -> Result:
        """Run a query over the union of accelkb's graphs in the store, like ``kb.query``.

        The same prefixes as :meth:`KnowledgeBase.query` are declared. ``bindings`` travel as a
        trailing ``VALUES`` block (the protocol has no other way to pass them): they join with
        the whole query's solutions, which equals pre-binding for queries without ``LIMIT``
        or sub-selects over the bound variables.

        Raises
        ------
        InputError
            If the store cannot be reached or refuses the query (its message is included).
        """
        prologue = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in _PREFIXES.items())
        text = prologue + sparql
        if bindings:
            names = list(bindings)
            row = " ".join(_term(bindings[n]) for n in names)
            text += "\nVALUES (" + " ".join(f"?{n}" for n in names) + f") {{ ({row}) }}"
        form = [("query", text)]
        form += [("default-graph-uri", str(g)) for g in GRAPHS]
        form += [("named-graph-uri", str(g)) for g in GRAPHS]
        ctype, body = self._post(self.query_url, form, _ACCEPT)
        return _parse_result(ctype, body, self.query_url)

    def triple_count(self) -> int:
        """Triples held in accelkb's graphs in the store."""
        rows = list(self.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"))
        return int(rows[0][0])  # type: ignore[index,arg-type]


def _parse_result(ctype: str, body: bytes, where: str) -> Result:
    if ctype in _RESULT_TYPES:
        return Result.parse(io.BytesIO(body), format=_RESULT_TYPES[ctype])
    if ctype in _GRAPH_TYPES:
        result = Result("CONSTRUCT")
        result.graph = Graph().parse(data=body.decode("utf-8"), format=_GRAPH_TYPES[ctype])
        return result
    raise InputError(f"expected SPARQL results JSON/XML or N-Triples/Turtle from {where}, got "
                     f"'{ctype or 'no content type'}'")


def query_store(url: str, sparql: str, data_files: Iterable[str] = (), *,
                write: bool = True, bindings: Mapping[str, Any] | None = None) -> Result:
    """``accelkb query --store URL``: write the knowledge into the store, then query it there.

    Parameters
    ----------
    url
        ``sparql+http://host:port/query`` of the server.
    sparql
        The query text.
    data_files
        Extra Turtle/TriG files, validated with the bundled knowledge before anything is written.
    write
        Replace accelkb's graphs in the store first (default). ``False`` queries what the store
        already holds (no local knowledge base is built: fast, for a store loaded before).

    Examples
    --------
    >>> result = query_store("sparql+http://127.0.0.1:7878/query",
    ...                      "SELECT ?c WHERE { ?c a ak:Chip }")  # doctest: +SKIP
    """
    store = RemoteStore(url)
    if write:
        store.write(KnowledgeBase(data_files))
    return store.query(sparql, bindings)


__all__ = ["RemoteStore", "kb_nquads", "parse_store_url", "query_store"]
