"""What the read-only SPARQL endpoint refuses, and the message it gives.

Two things are refused with ``403 Forbidden``:

- **SPARQL Update**, ``LOAD`` included (it would make the server fetch a URL). The engine behind
  the endpoint is started read-only, so an update can never run; this module only gives the
  refusal a clear message instead of a syntax error.
- **Federation** (``SERVICE``): the engine would fetch any URL a query names. Any query whose text
  mentions ``service`` (any case) is parsed with rdflib's SPARQL grammar and refused if it holds
  a ``SERVICE`` pattern, or if it cannot be parsed at all (it could not be checked). Queries that
  do not mention the word skip the parse, so the check costs nothing on ordinary queries.
"""

from __future__ import annotations

from typing import Any

from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue


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
SERVICE_UNCHECKED = ("the query mentions SERVICE and could not be parsed to check that it is not a "
                     "federated query, so it is refused: ")


def _has_node(tree: Any, name: str) -> bool:
    """Whether a pyparsing/rdflib parse tree holds a component called ``name``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            if node.name == name:
                return True
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif hasattr(node, "asList") and not isinstance(node, str):
            stack.extend(list(node))
    return False


def check_query(text: str) -> None:
    """Refuse a federated query before it reaches the engine.

    Raises
    ------
    Refusal
        403 when the query holds a ``SERVICE`` pattern, or mentions the word and cannot be parsed.

    Examples
    --------
    >>> check_query("SELECT * WHERE { ?s ?p ?o }")
    >>> check_query("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    Traceback (most recent call last):
    ...
    accelkb.serve.policy.Refusal: federated queries are refused: ...
    """
    if "service" not in text.lower():
        return
    try:
        tree = parseQuery(text)
    except Exception as exc:  # pyparsing's ParseException and friends
        if update_refusal(text):
            raise Refusal(403, update_refusal(text) or UPDATE_REFUSED) from None
        raise Refusal(403, SERVICE_UNCHECKED + str(exc)) from None
    if _has_node(tree, "ServiceGraphPattern"):
        raise Refusal(403, SERVICE_REFUSED)


def update_refusal(text: str) -> str | None:
    """The refusal message if ``text`` is a SPARQL Update, else ``None``.

    Called when the engine rejects a query, to tell an update (refused) from a syntax error.

    Examples
    --------
    >>> update_refusal("LOAD <http://example.org/data.ttl>") == LOAD_REFUSED
    True
    >>> update_refusal("SELECT * WHERE { ?s ?p ?o }") is None
    True
    """
    try:
        tree = parseUpdate(text)
    except Exception:  # not an update: a plain syntax error, the engine's message stands
        return None
    return LOAD_REFUSED if _has_node(tree, "Load") else UPDATE_REFUSED
