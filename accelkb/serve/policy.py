"""What the read-only SPARQL endpoint refuses, and the message it gives.

Every decision is taken on the scan of :mod:`accelkb.serve.lexer`, and the text that scan
returns (comments removed) is what the engine gets, so the guard and the engine cannot read the
query differently (rdflib and Oxigraph did, on a comment ended by ``\r``). The scan is linear in
the query, so the check itself is cheap even on a megabyte of text.

- **SPARQL Update** (``INSERT``, ``DELETE``, ``LOAD``, ...): 403. The engine is also started
  read-only, so an update could never run; the refusal gives the reason.
- **Federation** (``SERVICE``): 403, when the word appears in code (outside strings, comments and
  absolute IRIs) in any spelling or case; the engine would fetch any URL a query names.
- **Nesting** deeper than :data:`MAX_NESTING` (brackets plus runs of unary operators): 400. The
  engine parses and evaluates by recursion; 1,600 nested ``FILTER EXISTS`` overflowed its stack
  and killed it (measured here; the probe that found the hole saw 4,000 ``!`` do the same).
- Text that cannot be read as SPARQL tokens (an unclosed string, a stray escape): 400.
"""

from __future__ import annotations

from accelkb.serve.lexer import LexError, Scan, scan

#: Deepest nesting accepted (brackets, plus runs of unary operators). Oxigraph 0.5.13 answered
#: 800 levels of every kind tried (parentheses, ``!``, groups, OPTIONAL, subqueries, UNION,
#: FILTER EXISTS) and died at 1,600 nested FILTER EXISTS and 4,000 nested OPTIONALs; the
#: issue's probe saw deaths from 700 nested subqueries. Hand-written queries stay below 20.
MAX_NESTING = 100
#: First words of the SPARQL 1.1 Update operations.
UPDATE_VERBS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE",
                          "COPY", "WITH"})


class Refusal(Exception):
    """A request the endpoint refuses: an HTTP status and a message for the user.

    Examples
    --------
    >>> r = Refusal(403, "no")
    >>> (r.status, r.message)
    (403, 'no')
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


UPDATE_REFUSED = ("this SPARQL endpoint is read-only: SPARQL Update (INSERT, DELETE, LOAD, CLEAR, "
                  "DROP, CREATE, ADD, MOVE, COPY) is refused")
LOAD_REFUSED = ("this SPARQL endpoint is read-only: LOAD is refused (it would make the server "
                "fetch a URL into the store)")
SERVICE_REFUSED = ("federated queries are refused: SERVICE would make this server fetch an "
                   "arbitrary URL; query the other endpoint directly instead")

def _scan(text: str) -> Scan:
    try:
        return scan(text)
    except LexError as exc:
        raise Refusal(400, f"the query could not be read: {exc}") from None


def _names_service(found: Scan) -> bool:
    if "SERVICE" in found.keywords:
        return True
    # an IRI with no scheme is relative: where an engine read its '<' as an operator, its
    # content would be code
    return any(":" not in iri and "SERVICE" in iri.upper() for iri in found.iris)


def check_query(text: str) -> str:
    """Refuse what the endpoint does not run; return the text to forward to the engine.

    Returns
    -------
    str
        ``text`` without its comments (line breaks kept), exactly what was checked.

    Raises
    ------
    Refusal
        403 for an update or a ``SERVICE`` pattern; 400 for nesting deeper than
        :data:`MAX_NESTING` or text that cannot be read as SPARQL tokens.

    Examples
    --------
    >>> check_query("SELECT * WHERE { ?s ?p ?o }  # all")
    'SELECT * WHERE { ?s ?p ?o }  '
    >>> check_query("SELECT * WHERE { #\\rSERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    Traceback (most recent call last):
    ...
    accelkb.serve.policy.Refusal: federated queries are refused: ...
    """
    found = _scan(text)
    if found.first_keyword in UPDATE_VERBS:
        raise Refusal(403, LOAD_REFUSED if found.first_keyword == "LOAD" else UPDATE_REFUSED)
    if _names_service(found):
        raise Refusal(403, SERVICE_REFUSED)
    if found.depth > MAX_NESTING:
        raise Refusal(400, f"the query nests {found.depth} levels deep (brackets and unary "
                           f"operators); at most {MAX_NESTING} are accepted, deeper queries "
                           "overflow the SPARQL engine")
    return found.text


def update_refusal(text: str) -> str | None:
    """The refusal message if ``text`` is a SPARQL Update, else ``None``.

    Examples
    --------
    >>> update_refusal("LOAD <http://example.org/data.ttl>") == LOAD_REFUSED
    True
    >>> update_refusal("SELECT * WHERE { ?s ?p ?o }") is None
    True
    """
    try:
        first = scan(text).first_keyword
    except LexError:
        return None
    if first not in UPDATE_VERBS:
        return None
    return LOAD_REFUSED if first == "LOAD" else UPDATE_REFUSED
