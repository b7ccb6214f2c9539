"""A SPARQL 1.1 lexical scan for the endpoint's guard: what is code, what is not, how deep.

The guard must decide on exactly the text the engine runs. Two SPARQL parsers read a query
differently in places (rdflib ends a ``#`` comment only at ``\\n``, Oxigraph also at ``\\r``,
so ``#\\rSERVICE <...>`` was a comment to the guard and a federated query to the engine). This
scan therefore does not only *check* the text: it produces the text that is forwarded, with every
comment removed (its line break kept), so nothing it took for a comment reaches the engine. What
it takes for a string or an IRI is what the grammar allows there (SPARQL 1.1 §19.8); where an
engine could read it otherwise, the query is refused instead:

- a ``\\u``/``\\U`` escape is accepted only inside strings and IRIs, and never one that spells a
  character that ends or opens a token (quotes, backslash, ``<``, ``>``, ``{``, ``}``, ``#``, line
  breaks): §19.2 lets an engine decode escapes before parsing, Oxigraph does so only inside
  strings and IRIs, and the two readings must not differ;
- a short string may not hold a raw line break (the grammar forbids it);
- words are split into their letter runs for the keyword check, so ``ex:a.SERVICE`` counts as
  naming SERVICE even if an engine read its dot as the end of a triple.

It also measures how deep the query nests (brackets, plus runs of unary operators such as
``!!!!``): the engine parses and evaluates by recursion, and a 4 KB query of 4,000 ``!`` killed it.
The scan is linear in the text and never recurses.

Examples
--------
>>> s = scan("SELECT * { ?s ?p ?o } # a comment\\rLIMIT 1")
>>> s.text
'SELECT * { ?s ?p ?o } \\rLIMIT 1'
>>> s.keywords, s.depth
(('SELECT', 'LIMIT'), 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Characters an escape may not spell: each one ends or opens a token somewhere.
_STRUCTURAL = frozenset("\"'\\<>{}#\n\r")
_IRIREF = re.compile(r"<(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>")
_UCHAR = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_VARNAME = re.compile(r"[A-Za-z0-9_\u00B7-\U000EFFFF]+")
_WORD = re.compile(r"(?:[A-Za-z0-9_\-.:%\u00B7-\U000EFFFF]|\\.)+", re.DOTALL)
_LETTERS = re.compile(r"[A-Za-z]+")
_OPEN, _CLOSE = "({[", ")}]"
_UNARY = "!+-"


class LexError(ValueError):
    """The text cannot be read as SPARQL tokens; the message names the line and column."""


@dataclass(frozen=True)
class Scan:
    """What the scan found.

    ``text`` is the query to forward (comments removed); ``keywords`` the upper-case letter runs
    of the words in code, in order (keywords, prefixed names, ``a``, booleans); ``iris`` the IRIs
    as written; ``depth`` the deepest nesting; ``first_keyword`` the first word after the prologue
    (``BASE`` and ``PREFIX`` declarations), which says whether this is a query or an update.
    """

    text: str
    keywords: tuple[str, ...]
    iris: tuple[str, ...]
    depth: int
    first_keyword: str | None


def _where(text: str, i: int) -> str:
    line = text.count("\n", 0, i) + 1
    return f"line {line}, column {i - (text.rfind(chr(10), 0, i) + 1) + 1}"


def _check_escapes(text: str, start: int, end: int) -> None:
    for m in _UCHAR.finditer(text, start, end):
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or chr(code) in _STRUCTURAL:
            raise LexError(f"the escape {m.group(0)} at {_where(text, m.start())} spells a "
                           "quote, bracket, backslash, '#' or line break, which engines read "
                           "differently; write the character itself inside the string")


def _string_end(text: str, i: int) -> int:
    """Index just past the string literal that starts at ``i``."""
    quote = text[i]
    long = text.startswith(quote * 3, i)
    j = i + (3 if long else 1)
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if long:
            if text.startswith(quote * 3, j):  # the grammar allows no run of three inside
                return j + 3
        elif c == quote:
            return j + 1
        elif c in "\n\r":
            raise LexError(f"a line break inside the string that starts at {_where(text, i)} "
                           "(use a triple-quoted string for text over several lines)")
        j += 1
    raise LexError(f"the string that starts at {_where(text, i)} is not closed")


def scan(text: str) -> Scan:
    """Scan ``text`` as SPARQL 1.1 tokens (see the module docstring).

    Raises
    ------
    LexError
        For an unclosed string, a line break inside a short string, a ``\\u`` escape outside a
        string or IRI, or one that spells a structural character.
    """
    out: list[str] = []
    keywords: list[str] = []
    iris: list[str] = []
    words: list[tuple[str, str]] = []  # (kind, text) of the tokens the prologue check reads
    depth = deepest = unary = 0
    i, n, last = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in " \t\n\r":
            i += 1
            continue
        if c == "#":
            j = i + 1
            while j < n and text[j] not in "\n\r":
                j += 1
            out.append(text[last:i])
            last = i = j
            continue
        if c in "\"'":
            j = _string_end(text, i)
            _check_escapes(text, i, j)
            words.append(("string", ""))
            unary, i = 0, j
            continue
        if c == "<":
            m = _IRIREF.match(text, i)
            if m:
                _check_escapes(text, i, m.end())
                iris.append(m.group(0)[1:-1])
                words.append(("iri", m.group(0)))
                unary, i = 0, m.end()
                continue
        if c in "?$":
            m = _VARNAME.match(text, i + 1)
            if m:
                words.append(("var", ""))
                unary, i = 0, m.end()
                continue
        if c == "\\":
            raise LexError(f"a backslash at {_where(text, i)} outside a string, IRI or name "
                           "(\\u escapes are accepted only inside strings and IRIs)")
        m = _WORD.match(text, i)
        if m and c not in ".-":
            token = m.group(0)
            if "\\u" in token or "\\U" in token:
                raise LexError(f"a \\u escape at {_where(text, i)} outside a string or IRI")
            runs = [r.upper() for r in _LETTERS.findall(token)]
            keywords += runs
            words.append(("word", token.upper()))
            unary, i = 0, m.end()
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        if c in _UNARY:
            unary += 1
        elif c not in _OPEN:
            unary = 0
        deepest = max(deepest, depth + unary)
        i += 1
    out.append(text[last:])
    return Scan(text="".join(out), keywords=tuple(keywords), iris=tuple(iris), depth=deepest,
                first_keyword=_first_keyword(words))


def _first_keyword(tokens: list[tuple[str, str]]) -> str | None:
    """The first word after ``BASE <iri>`` and ``PREFIX name: <iri>`` declarations."""
    k = 0
    while k < len(tokens):
        kind, value = tokens[k]
        if kind == "word" and value == "BASE":
            k += 2
        elif kind == "word" and value == "PREFIX":
            k += 3
        elif kind == "word":
            return value
        else:
            return None
    return None
