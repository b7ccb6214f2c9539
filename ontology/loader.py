"""Read Turtle/TriG files and validate knowledge with SHACL.

Parsing reports the file and line of a syntax error; validation reports every violation at once,
each naming the node, the property, the offending value and the expectation. Nothing here keeps
state: callers get a complete graph or an exception, never half of one.
"""

from __future__ import annotations

import difflib
import importlib.resources
import logging
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rdflib
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, RDFS, SH
from rdflib.plugins.parsers.notation3 import BadSyntax
from rdflib.term import Node

from accelkb.errors import InputError, ValidationError

# rdflib logs a traceback for every literal it cannot convert; ill_typed() reports them instead.
logging.getLogger("rdflib.term").addFilter(
    lambda record: "Failed to convert Literal lexical form" not in record.getMessage())

SCHEMA_NS = "https://w3id.org/accelkb/schema#"
DATA_NS = "https://w3id.org/accelkb/data/"
SOURCE_NS = "https://w3id.org/accelkb/source/"
#: The accelkb IRI bases in use (schema, knowledge, sources, named graphs, shapes, results, user
#: files); an IRI under https://w3id.org/accelkb/ outside them is a mistyped @prefix.
KNOWN_BASES = (SCHEMA_NS, DATA_NS, SOURCE_NS, "https://w3id.org/accelkb/schema/",
               "https://w3id.org/accelkb/graph/", "https://w3id.org/accelkb/shapes#",
               "https://w3id.org/accelkb/result/", "https://w3id.org/accelkb/user/")
ACCELKB_ROOT = "https://w3id.org/accelkb/"

_FORMATS = {".ttl": "turtle", ".turtle": "turtle", ".trig": "trig", ".nt": "nt", ".n3": "n3",
            ".jsonld": "json-ld", ".rdf": "xml", ".owl": "xml"}


def _package_files(folder: str, suffixes: tuple[str, ...]) -> list[tuple[str, bytes]]:
    root = importlib.resources.files("accelkb.ontology").joinpath(folder)
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.is_file() and entry.name.endswith(suffixes):
            out.append((f"accelkb/ontology/{folder}/{entry.name}", entry.read_bytes()))
    return out


def bundled_schema() -> list[tuple[str, bytes]]:
    """(name, content) of the schema files shipped with accelkb, in a stable order."""
    return _package_files("schema", (".ttl",))


def bundled_shapes() -> list[tuple[str, bytes]]:
    """(name, content) of the SHACL shape files shipped with accelkb."""
    return _package_files("shapes", (".ttl",))


def bundled_data() -> list[tuple[str, bytes]]:
    """(name, content) of the knowledge files shipped with accelkb."""
    return _package_files("data", (".ttl", ".trig"))


def rdf_format(name: str) -> str:
    """The rdflib parser name for a file name, or an InputError naming the accepted suffixes."""
    suffix = Path(name).suffix.lower()
    if suffix not in _FORMATS:
        accepted = ", ".join(sorted(_FORMATS))
        raise InputError(f"{name}: expected an RDF file ({accepted}), got suffix '{suffix or '(none)'}'")
    return _FORMATS[suffix]


def parse_into(graph: Graph, name: str, content: bytes | str, fmt: str | None = None) -> None:
    """Parse ``content`` into ``graph``; a syntax error becomes an InputError with file and line.

    Examples
    --------
    >>> g = Graph()
    >>> parse_into(g, "x.ttl", "<urn:a> <urn:b> <urn:c> .")
    >>> len(g)
    1
    >>> parse_into(g, "bad.ttl", "<urn:a> <urn:b> .")
    Traceback (most recent call last):
    ...
    accelkb.errors.InputError: bad.ttl:1: Turtle syntax error: ...
    """
    fmt = fmt or rdf_format(name)
    text = _decoded(name, content) if isinstance(content, bytes) else content
    try:
        graph.parse(data=text, format=fmt, publicID=f"file:///{Path(name).name}")
    except BadSyntax as exc:
        offset = getattr(exc, "_i", 0)
        line = text[:offset].count("\n") + 1
        why = getattr(exc, "_why", str(exc))
        raise InputError(f"{name}:{line}: Turtle syntax error: {why}") from None
    except Exception as exc:  # rdflib raises many types for other syntaxes
        if fmt in ("turtle", "n3", "nt", "trig"):
            line, why = _turtle_failure(text, exc)
            raise InputError(f"{name}:{line}: Turtle syntax error: {why}") from None
        raise InputError(f"{name}: could not parse as {fmt}: {exc}") from None


def _turtle_failure(text: str, exc: Exception) -> tuple[int, str]:
    """Line and reason of a failure of rdflib's Turtle parser that is not a BadSyntax: an
    ``assert`` on a string that never closes (its message quotes the text around the place,
    split at ``^``), or an IndexError where the text ends inside a token."""
    message = str(exc)
    if " at ^ in " in message:
        before, _, after = message.split(" at ^ in ", 1)[1].partition("^")
        found = text.find(before + after)
        if found >= 0:
            at = found + len(before)
            why = message.split(" at ^ in ", 1)[0]
            if why == "Quote expected in string":
                why = "a string that is never closed"
                for quotes in ('"""', "'''"):
                    opened = text.rfind(quotes, 0, at)
                    if opened >= 0 and text.find(quotes, opened + 3) < 0:  # runs to the end
                        at, why = opened, "a long string opened here is never closed"
            return text[:at].count("\n") + 1, why
    return text.count("\n") + 1, ("the file ends inside a statement (a name, string, IRI or "
                                   "list that is cut off)")


def _decoded(name: str, content: bytes) -> str:
    """``content`` as UTF-8 text, or an InputError naming the byte offset where it is not.

    Examples
    --------
    >>> _decoded("chip.ttl", "caf\u00e9".encode("latin-1"))
    Traceback (most recent call last):
    ...
    accelkb.errors.InputError: chip.ttl: expected UTF-8 text (...), got byte 0xe9 at offset 3 (line 1); ...
    """
    nul = content.find(b"\0")
    if nul >= 0:
        raise InputError(f"{name}: expected a text RDF file, got binary data (a NUL byte at "
                         f"offset {nul})")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        raise InputError(f"{name}: expected UTF-8 text (Turtle is always UTF-8), got byte "
                         f"0x{content[exc.start]:02x} at offset {exc.start} (line {line}); "
                         "re-save the file as UTF-8") from None


def read_user_file(path: str | Path) -> tuple[str, bytes]:
    """Read a user's RDF file; a missing or unreadable file is an InputError."""
    p = Path(path)
    rdf_format(str(p))
    try:
        return str(p), p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror}") from None


@dataclass(frozen=True)
class Violation:
    """One SHACL violation in domain words."""

    focus: str
    path: str
    value: str
    message: str

    def __str__(self) -> str:
        where = self.focus + (f", property {self.path}" if self.path else "")
        got = f", value {self.value}" if self.value else ""
        return f"{where}{got}: {self.message}"


_NUMERIC = ("#integer", "#decimal", "#double", "#float")


def _short(graph: Graph, term: object) -> str:
    if term is None:
        return ""
    if isinstance(term, URIRef):
        try:
            return graph.namespace_manager.normalizeUri(term)
        except Exception:
            return f"<{term}>"
    if isinstance(term, rdflib.Literal):
        if term.datatype is not None and str(term.datatype).endswith(_NUMERIC):
            return str(term)
        return repr(str(term)) if term.datatype is None else f"{str(term)!r}^^{_short(graph, term.datatype)}"
    if isinstance(term, rdflib.BNode):
        return "(a blank node)"
    return str(term)


def _bind_prefixes(graph: Graph) -> None:
    graph.bind("ak", SCHEMA_NS, replace=True)
    graph.bind("kb", DATA_NS, replace=True)
    graph.bind("src", SOURCE_NS, replace=True)


def _describe_blank(data: Graph, node: rdflib.BNode) -> str:
    """Name a blank node by the triple that points to it, e.g. 'the ak:provenance of kb:gc200'."""
    for s, p, _ in data.triples((None, None, node)):
        return f"the {_short(data, p)} node of {_short(data, s)}"
    return "(a blank node)"


_IRI_RE = re.compile(r"<?(https?://[^\s'<>,]+)>?")


def _shorten_iris(graph: Graph, text: str) -> str:
    """Write full IRIs in a message as prefixed names where a prefix is bound."""
    return _IRI_RE.sub(lambda m: _short(graph, URIRef(m.group(1))), text)


def _split_shapes(shapes: Graph) -> tuple[Graph, list[tuple[Any, Any]]]:
    """Core shapes (for pySHACL) and the (node shape, SPARQL constraint) pairs we run ourselves."""
    sparql = [(shape, c) for shape, c in shapes.subject_objects(SH.sparql)]
    core = Graph()
    drop = {(shape, SH.sparql, c) for shape, c in sparql}
    for t in shapes:
        if t not in drop:
            core.add(t)
    return core, sparql


def _target_pattern(shapes: Graph, shape: Any) -> str:
    """A SPARQL pattern binding ?this to the shape's targets (class, subjects-of, SPARQL target)."""
    parts = []
    for cls in shapes.objects(shape, SH.targetClass):
        parts.append(f"{{ ?this a/rdfs:subClassOf* <{cls}> }}")
    for prop in shapes.objects(shape, SH.targetSubjectsOf):
        parts.append(f"{{ ?this <{prop}> ?_o }}")
    for target in shapes.objects(shape, SH.target):
        select = shapes.value(target, SH.select)
        if select is not None:
            parts.append(f"{{ {select} }}")
    if not parts:
        raise InputError(f"shape {shape}: a SPARQL constraint needs a target class, subjects-of or "
                         "SPARQL target")
    return " UNION ".join(parts)


def _whole_graph_query(shapes: Graph, shape: Any, constraint: Any,
                       focus: Sequence[Node] | None = None) -> str:
    """Rewrite a SHACL-SPARQL constraint so one query finds its violations for every focus node.

    pySHACL runs the query once per focus node with ``$this`` pre-bound, which costs seconds on a
    few thousand nodes; the same semantics in one pass: ``$this`` becomes ``?this``, bound by the
    shape's targets inside the WHERE clause.
    """
    text = str(shapes.value(constraint, SH.select)).replace("$this", "?this")
    where = re.search(r"WHERE\s*\{", text, flags=re.IGNORECASE)
    if where is None:
        raise InputError(f"shape {shape}: expected a SELECT ... WHERE {{ }} constraint")
    head = re.sub(r"SELECT\s+(DISTINCT\s+)?\?this", "SELECT DISTINCT ?this", text[: where.start()],
                  count=1, flags=re.IGNORECASE)
    body = text[where.end():].rstrip()
    if not body.endswith("}"):
        raise InputError(f"shape {shape}: expected the constraint query to end with '}}'")
    values = ""
    if focus is not None:  # ?this: a focus IRI, or a blank node one of them holds
        iris = " ".join(f"<{f}>" for f in focus if isinstance(f, URIRef))
        values = (f"{{ VALUES ?this {{ {iris} }} }} UNION {{ VALUES ?_owner {{ {iris} }} "
                  "?_owner ?_held ?this FILTER (isBlank(?this)) } ")
    return f"{head}WHERE {{ {values}{_target_pattern(shapes, shape)} {body}"


_PREFIXES = {"ak": SCHEMA_NS, "dcterms": "http://purl.org/dc/terms/",
             "rdf": str(RDF), "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
             "xsd": "http://www.w3.org/2001/XMLSchema#", "skos": "http://www.w3.org/2004/02/skos/core#"}


def affected_nodes(data: Graph, added: Graph) -> list[Node]:
    """The nodes whose validity ``added`` (a part of ``data``) can change: the subjects of its
    triples and, for a blank subject, the IRIs that reach it; the IRIs its triples point to;
    the IRIs of ``data`` that point at its subjects; and the blank nodes (provenance, claims)
    that any of these IRIs hold."""
    found: set[Node] = set()
    seen: set[Node] = set()
    todo: list[Node] = list(set(added.subjects()))
    while todo:  # blank nodes of ``added`` (parsed apart) are climbed within ``added``
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, URIRef):
            found.add(node)
        else:
            todo.extend(added.subjects(None, node))
    found.update(s for iri in list(found) for s in data.subjects(None, iri)
                 if isinstance(s, URIRef))
    found.update(o for o in added.objects() if isinstance(o, URIRef)
                 and (o, None, None) in data)
    held = [o for iri in found for o in data.objects(iri, None) if isinstance(o, rdflib.BNode)]
    while held:  # the blank nodes these IRIs hold in ``data``, nested ones too
        node = held.pop()
        if node not in found:
            found.add(node)
            held.extend(o for o in data.objects(node, None) if isinstance(o, rdflib.BNode))
    return sorted(found, key=lambda n: (isinstance(n, rdflib.BNode), str(n)))


def _unskolem(node: Node | None) -> Node | None:
    """The blank node behind a skolem IRI (``.../.well-known/genid/...``), else the node."""
    if isinstance(node, URIRef) and "/.well-known/genid/" in node:
        return rdflib.BNode(node.rsplit("/", 1)[-1])
    return node


def violations(data: Graph, shapes: Graph, focus: Sequence[Node] | None = None
               ) -> list[Violation]:
    """Validate ``data`` (schema + knowledge) against ``shapes``; return every violation, sorted.

    Core constraints run in pySHACL; SHACL-SPARQL constraints run as one whole-graph query each
    (same results, a hundred times faster on the bundled knowledge). ``focus`` limits the core
    and the SPARQL constraints to those focus nodes (:func:`affected_nodes` of a user's
    additions to knowledge already known valid): the whole bundled graph takes about 10 s, a
    user file's nodes a fraction of it.
    """
    import pyshacl  # imported here: it is slow to import and only validation needs it

    ill = ill_typed(data)
    if ill:  # the shapes compare and multiply numbers: they cannot run on these
        return ill
    core, sparql = _split_shapes(shapes)
    if focus is not None and not any(isinstance(f, URIRef) for f in focus):
        conforms, report = True, Graph()
    else:
        # pySHACL takes IRIs only as focus nodes: blank nodes (provenance, claims) are
        # validated under their skolem IRIs and reported as the blank nodes they are.
        conforms, report, _ = pyshacl.validate(
            data if focus is None else data.skolemize(), shacl_graph=core, inference="none",
            advanced=True, allow_warnings=True, abort_on_first=False,
            focus_nodes=None if focus is None else [
                str(f.skolemize() if isinstance(f, rdflib.BNode) else f) for f in focus],
        )
    _bind_prefixes(data)
    found = set()
    if not conforms:
        for result in report.subjects(RDF.type, SH.ValidationResult):
            node = _unskolem(report.value(result, SH.focusNode))
            path = report.value(result, SH.resultPath)
            value = _unskolem(report.value(result, SH.value))
            text = report.value(result, SH.resultMessage)
            found.add(_violation(data, node, path, value, str(text or "constraint violated")))
    if focus is not None and not any(isinstance(f, URIRef) for f in focus):
        sparql = []  # nothing named to check (rdflib cannot evaluate an empty VALUES)
    for shape, constraint in sparql:
        query = _whole_graph_query(shapes, shape, constraint, focus)
        template = str(shapes.value(constraint, SH.message) or "constraint violated")
        for row in data.query(query, initNs=_PREFIXES):
            bound = row.asdict()  # type: ignore[union-attr]
            message = template
            for var, term in bound.items():  # {?path}, {?value} and any other selected variable
                message = message.replace("{?" + str(var) + "}", _short(data, term))
            found.add(_violation(data, bound.get("this"), bound.get("path"), bound.get("value"),
                                 message))
    found.update(vocabulary_violations(data))
    return sorted(found, key=lambda v: (v.focus, v.path, v.message, v.value))


def ill_typed(data: Graph) -> list[Violation]:
    """Literals that are not usable values, sorted: text not of its datatype
    (``"eight"^^xsd:integer``); a number that is not finite (``"INF"^^xsd:double``, NaN: valid
    XSD, but no capacity, bandwidth or count is infinite); a string with a control character
    (NUL and the rest of C0 but tab and line breaks), which no label or note needs and which
    terminals and files downstream mangle.

    Examples
    --------
    >>> g = Graph()
    >>> _ = g.parse(data='<urn:x> <urn:n> "eight"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    ...             format="turtle")
    >>> print(ill_typed(g)[0].message)
    'eight' is not a valid xsd:integer
    """
    found = []
    for s, p, o in data:
        if not isinstance(o, rdflib.Literal):
            continue
        if o.ill_typed:
            found.append(_violation(data, s, p, o, f"{str(o)!r} is not a valid "
                                    f"{_short(data, o.datatype)}"))
        elif isinstance(o.value, float) and not math.isfinite(o.value):
            found.append(_violation(data, s, p, o, f"expected a finite number, got {str(o)!r}"))
        elif _CONTROL.search(str(o)):
            char = _CONTROL.search(str(o)).group(0)  # type: ignore[union-attr]
            found.append(_violation(data, s, p, None, f"expected text without control "
                                    f"characters, got {char!r} in {str(o)[:60]!r}"))
    return sorted(found, key=lambda v: (v.focus, v.path, v.message, v.value))


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def vocabulary_violations(data: Graph) -> list[Violation]:
    """Uses of the ``ak:`` vocabulary that the schema does not allow.

    - a term in the schema's namespace that nothing declares (``ak:tdpWatt`` for
      ``ak:tdpWatts``: it used to validate, and the value was then ignored everywhere), with the
      closest declared terms;
    - a property on a subject of a type outside the property's ``rdfs:domain`` (a chip property
      on a memory tier). Untyped nodes (provenance blank nodes) are not checked;
    - an IRI under ``https://w3id.org/accelkb/`` outside the project's bases (a mistyped
      ``@prefix ak:``, whose every fact would load and then be ignored).

    Examples
    --------
    >>> g = build_graph(bundled_schema())
    >>> _ = g.parse(data="<urn:x> a <https://w3id.org/accelkb/schema#Chip> ; "
    ...            "<https://w3id.org/accelkb/schema#tdpWatt> 700 .", format="turtle")
    >>> print(vocabulary_violations(g)[0].message)
    ak:tdpWatt is not a term of the accelkb schema; closest: ak:tdpWatts
    >>> g = build_graph(bundled_schema())
    >>> _ = g.parse(data="<urn:x> <https://w3id.org/accelkb/ontology#tdpWatts> 700 .",
    ...             format="turtle")
    >>> print(vocabulary_violations(g)[0].message)  # doctest: +NORMALIZE_WHITESPACE
    expected an IRI under the schema <https://w3id.org/accelkb/schema#> (ak:), the knowledge
    (kb:) or another accelkb base, got <https://w3id.org/accelkb/ontology#tdpWatts> (is an
    @prefix mistyped?)
    """
    declared = {s for s in data.subjects(RDF.type) if isinstance(s, URIRef)
                and str(s).startswith(SCHEMA_NS)}
    names = sorted(str(t)[len(SCHEMA_NS):] for t in declared)
    supers: dict[Any, set[Any]] = {}
    for sub, sup in data.subject_objects(RDFS.subClassOf):
        supers.setdefault(sub, set()).add(sup)
    domains: dict[Any, set[Any]] = {}
    for prop, dom in data.subject_objects(RDFS.domain):
        if str(prop).startswith(SCHEMA_NS):
            domains.setdefault(prop, set()).add(dom)
    kinds: dict[Any, set[Any]] = {}
    found: list[Violation] = []
    unknown: set[tuple[Any, Any, Any]] = set()
    stray: set[tuple[Any, Any, Any]] = set()
    for s, p, o in data:
        for term in (s, p, o):
            if isinstance(term, URIRef) and str(term).startswith(SCHEMA_NS) \
                    and term not in declared:
                unknown.add((s, p, term))
            elif isinstance(term, URIRef) and str(term).startswith(ACCELKB_ROOT) \
                    and not str(term).startswith(KNOWN_BASES) \
                    and str(term) != SCHEMA_NS.rstrip("#"):
                stray.add((s, p, term))
        if p in domains:
            if s not in kinds:
                kinds[s] = _with_supers(set(data.objects(s, RDF.type)), supers)
            if kinds[s] and not kinds[s] & domains[p]:
                found.append(_violation(data, s, p, o, _domain_message(
                    data, p, domains[p], set(data.objects(s, RDF.type)))))
    for s, p, term in unknown:
        local = str(term)[len(SCHEMA_NS):]
        close = difflib.get_close_matches(local, names, n=3, cutoff=0.6)
        hint = ("closest: " + ", ".join(f"ak:{c}" for c in close)) if close else \
            "see the schema (ontology/schema/accelkb.ttl) for the terms there are"
        found.append(_violation(data, s, p, None, f"ak:{local} is not a term of the accelkb "
                                f"schema; {hint}"))
    for s, p, term in sorted(stray, key=str)[:20]:
        v = _violation(data, s, p, None, "")
        found.append(Violation(v.focus, v.path, v.value, (  # the IRI in full, not as a prefix
            f"expected an IRI under the schema <{SCHEMA_NS}> (ak:), the knowledge (kb:) or "
            f"another accelkb base, got <{term}> (is an @prefix mistyped?)")))
    return found


def _domain_message(data: Graph, prop: Any, allowed: set[Any], kinds: set[Any]) -> str:
    ours = sorted(_short(data, k) for k in kinds if str(k).startswith(SCHEMA_NS))
    return (f"{_short(data, prop)} applies to {' or '.join(sorted(_short(data, d) for d in allowed))}"
            f", not to {' / '.join(ours) or 'this kind of node'}")


def _with_supers(classes: set[Any], supers: dict[Any, set[Any]]) -> set[Any]:
    """``classes`` and every class above them (``rdfs:subClassOf``, transitively)."""
    out, stack = set(classes), list(classes)
    while stack:
        for sup in supers.get(stack.pop(), ()):
            if sup not in out:
                out.add(sup)
                stack.append(sup)
    return out


def _violation(data: Graph, focus: Any, path: Any, value: Any, message: str) -> Violation:
    focus_txt = _describe_blank(data, focus) if isinstance(focus, rdflib.BNode) else _short(data, focus)
    path_txt = _short(data, path) if isinstance(path, URIRef) else ""
    value_txt = _short(data, value) if value is not None and value != focus else ""
    return Violation(focus_txt, path_txt, _shorten_iris(data, value_txt), _shorten_iris(data, message))


def build_graph(sources: Iterable[tuple[str, bytes]]) -> Graph:
    """Parse several (name, content) pairs into one new graph (all or nothing); a syntax error
    in several files is said for each of them at once (:func:`one_error`)."""
    graph = Graph()
    _bind_prefixes(graph)
    errors: list[InputError] = []
    for name, content in sources:
        try:
            parse_into(graph, name, content)
        except InputError as exc:
            errors.append(exc)
    if errors:
        raise one_error(errors)
    return graph


def read_user_files(paths: Iterable[str | Path]) -> list[tuple[str, bytes]]:
    """Read the user's RDF files; where one cannot be read, say it with every other file's
    syntax error at once (not one file per run).

    Raises
    ------
    InputError
        Naming every unreadable file and every syntax error (:func:`one_error`).
    """
    user: list[tuple[str, bytes]] = []
    errors: list[InputError] = []
    for path in paths:
        try:
            user.append(read_user_file(path))
        except InputError as exc:
            errors.append(exc)
    if errors:
        for name, content in user:
            try:
                parse_into(Graph(), name, content)
            except InputError as exc:
                errors.append(exc)
        raise one_error(errors)
    return user


def one_error(errors: Sequence[InputError]) -> InputError:
    """One error saying every file's (``validate bad.ttl junk.ttl`` said only the first).

    >>> print(one_error([InputError("a.ttl:1: x"), InputError("b.ttl: no such file")]))
    2 files cannot be used:
      - a.ttl:1: x
      - b.ttl: no such file
    """
    if len(errors) == 1:
        return errors[0]
    return InputError(f"{len(errors)} files cannot be used:\n"
                      + "\n".join(f"  - {e}" for e in errors))


def validate_or_raise(data: Graph, shapes: Graph, what: Sequence[str],
                      focus: Sequence[Node] | None = None) -> None:
    """Raise one ValidationError listing every violation found in ``data`` (core constraints
    on ``focus`` only, when given: see :func:`violations`)."""
    found = violations(data, shapes, focus)
    if found:
        files = ", ".join(what) if what else "the knowledge"
        raise ValidationError(
            f"{len(found)} violation(s) in {files}; nothing was loaded", [str(v) for v in found]
        )
