"""Parse and check rule files: a comment header plus one SPARQL CONSTRUCT query per file.

A rule file ``rules/<id>.rq`` looks like::

    # id: memory-capacity-bound
    # title: Model state exceeds the aggregate fast memory
    # explanation: ?system is memory-capacity bound for ?workload because ...
    # reads: ak:Estimate ak:modelStateBytes ak:deviceMemoryBytes
    # writes: ak:BottleneckFinding ak:system ak:workload ak:bottleneck ak:evidence
    # source: kb:bottleneck-memory-capacity
    CONSTRUCT { ... } WHERE { ... }

Every check runs on every file and all problems are reported together
(:class:`RuleFileError`), each with the file path. A rule is refused when it does not parse,
uses a schema term the closed namespace does not define, mints blank nodes (``[]``, ``_:x`` or
``BNODE()`` in the template; they never reach a fixpoint), or its header disagrees with its text
(``writes`` must list exactly what the template writes, ``reads`` every schema term the pattern
reads).

Examples
--------
>>> rules = load_rules()
>>> len(rules) >= 25
True
>>> rules["memory-capacity-bound"].title
'Model state exceeds the aggregate fast memory of the chips'
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rdflib import BNode, URIRef, Variable
from rdflib.namespace import RDF
from rdflib.paths import Path as SparqlPath
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import Query

from accelkb.errors import InputError
from accelkb.ontology import loader
from accelkb.ontology.kb import _PREFIXES
from accelkb.ontology.namespace import AK

RULE_NS = loader.DATA_NS + "rule-"
HEADER_KEYS = ("id", "title", "explanation", "reads", "writes", "source")
_HEADER = re.compile(r"^#\s*(\w+)\s*:\s*(.*)$")
_KNOWN_AK = {loader.SCHEMA_NS + name for name in AK.__annotations__}


class RuleFileError(InputError):
    """One or more rule files are bad; ``problems`` lists ``path: message`` for every one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s) in rule files:\n  "
                         + "\n  ".join(self.problems))


class Pattern(BaseModel):
    """One triple pattern of a rule (template or premise); terms are N3 strings or ?vars."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    s: Any = Field(description="subject: rdflib term or Variable")
    p: Any = Field(description="predicate: rdflib URIRef or Variable")
    o: Any = Field(description="object: rdflib term or Variable")
    optional: bool = Field(default=False, description="from an OPTIONAL or UNION branch: a "
                           "premise only when the instantiated triple exists")


class Rule(BaseModel):
    """A parsed, checked rule: header fields, the query as SELECT, template and premise patterns."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    id: str = Field(description="rule id, the file stem (kebab-case)")
    iri: URIRef = Field(description="stable IRI of the rule, kb:rule-<id>")
    title: str = Field(description="one-line title")
    explanation: str = Field(description="explanation template with ?variables")
    reads: frozenset[URIRef] = Field(description="schema terms (predicates, classes) it reads")
    writes: frozenset[URIRef] = Field(description="predicates and classes its template writes")
    source: URIRef = Field(description="where the rule's reasoning comes from (src: or kb: IRI)")
    path: str = Field(description="file the rule came from")
    select_text: str = Field(description="the rule's WHERE part as a SELECT * query, with "
                             "prefixes, run by the engine")
    template: tuple[Pattern, ...] = Field(description="CONSTRUCT template patterns")
    premises: tuple[Pattern, ...] = Field(description="triple patterns of the WHERE part whose "
                                          "instances are recorded as premises")
    reads_any: bool = Field(default=False, description="a pattern has a variable predicate")
    recorded_vars: frozenset[str] = Field(description="variables whose bindings derivation "
                                          "records keep: those of the template and the "
                                          "explanation (the rest are in the premises)")
    select_query: Any = Field(default=None, exclude=True, repr=False,
                              description="the WHERE part as a prepared rdflib SELECT query")
    typed_reads: frozenset[tuple[Any, Any]] = Field(description="(subject class or None, term) "
                                                    "pairs the pattern reads; None is a wildcard")
    typed_writes: frozenset[tuple[Any, Any]] = Field(description="(subject class or None, term) "
                                                     "pairs the template writes")


def _prologue() -> str:
    return "".join(f"PREFIX {k}: <{v}>\n" for k, v in sorted(_PREFIXES.items()))


def _strip(text: str) -> str:
    """Blank out comments, strings and IRIs so braces and keywords can be found by position."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            q = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
            j = i + len(q)
            while j < n and text[j:j + len(q)] != q:
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + len(q))
        elif c == "<" and re.match(r"<[^\s<>\"{}|^`\\]*>", text[i:]):
            j = i + text[i:].index(">") + 1
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _select_text(body: str) -> str:
    """``CONSTRUCT {T} WHERE {P} mods`` -> ``SELECT * WHERE {P} mods`` (text outside T kept)."""
    clean = _strip(body)
    m = re.search(r"\bCONSTRUCT\b", clean, re.IGNORECASE)
    if not m:
        raise ValueError("expected a CONSTRUCT query, got none")
    start = clean.find("{", m.end())
    if start < 0 or clean[m.end():start].strip():
        raise ValueError("expected CONSTRUCT { template } WHERE { pattern } (the short form "
                         "CONSTRUCT WHERE is not allowed)")
    depth = 0
    for k in range(start, len(clean)):
        depth += {"{": 1, "}": -1}.get(clean[k], 0)
        if depth == 0:
            return body[:m.start()] + "SELECT *" + body[k + 1:]
    raise ValueError("expected a closing '}' after the CONSTRUCT template, got end of file")


def _as_select(construct: Query) -> Query:
    """The parsed CONSTRUCT's pattern as a prepared SELECT * (no second parse)."""
    algebra = construct.algebra
    select = CompValue("SelectQuery", p=algebra.p, PV=sorted(_all_vars(algebra.p)),
                       datasetClause=algebra.get("datasetClause"))
    return Query(construct.prologue, select)


def _walk_terms(node: Any) -> Iterator[Any]:
    if isinstance(node, URIRef | BNode):
        yield node
    elif isinstance(node, CompValue | dict):
        for v in node.values():
            yield from _walk_terms(v)
    elif isinstance(node, list | tuple | set | frozenset):
        for v in node:
            yield from _walk_terms(v)


def _bgp_triples(node: Any, optional: bool = False) -> Iterator[tuple[Any, Any, Any, bool]]:
    """Triple patterns of the algebra; MINUS and FILTER (NOT) EXISTS parts are not premises."""
    if isinstance(node, CompValue):
        name = node.name
        if name == "BGP":
            for t in node.triples:
                yield (*t, optional)
            return
        if name == "Minus":
            yield from _bgp_triples(node.p1, optional)
            return
        if name == "LeftJoin":
            yield from _bgp_triples(node.p1, optional)
            yield from _bgp_triples(node.p2, True)
            return
        if name == "Union":
            yield from _bgp_triples(node.p1, True)
            yield from _bgp_triples(node.p2, True)
            return
        if name == "Filter":
            yield from _bgp_triples(node.p, optional)
            return
        for key, v in node.items():
            if key not in ("expr", "A", "_vars", "PV", "res"):
                yield from _bgp_triples(v, optional)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from _bgp_triples(v, optional)


def _all_vars(node: Any) -> set[Variable]:
    out: set[Variable] = set()
    if isinstance(node, CompValue):
        out |= set(node.get("_vars") or ())
        for v in node.values():
            out |= _all_vars(v)
    elif isinstance(node, list | tuple):
        for v in node:
            out |= _all_vars(v)
    return out


def typed_terms(triples: Iterable[tuple[Any, ...]]) -> frozenset[tuple[Any, Any]]:
    """(class of the subject or None, predicate-or-class) for dependency analysis.

    A pattern ``?x ak:system ?s`` in a rule where ``?x a ak:Estimate`` also appears yields
    ``(ak:Estimate, ak:system)``; a type pattern ``?x a C`` yields ``(None, C)``.
    """
    triples = list(triples)
    cls: dict[Any, Any] = {}
    for s, p, o, *_ in triples:
        if p == RDF.type and isinstance(o, URIRef) and not isinstance(s, URIRef):
            cls.setdefault(s, o)
    out: set[tuple[Any, Any]] = set()
    for s, p, o, *_ in triples:
        if p == RDF.type:
            out.add((None, o if isinstance(o, URIRef) else None))
        elif isinstance(p, URIRef):
            out.add((cls.get(s), p))
        elif isinstance(p, SparqlPath):
            out |= {(None, t) for t in _path_terms(p)}
        else:
            out.add((None, None))
    return frozenset(out)


def _path_terms(path: Any) -> set[URIRef]:
    """IRIs inside a property path (``ak:subsystem*/ak:hasTopology``)."""
    if isinstance(path, URIRef):
        return {path}
    out: set[URIRef] = set()
    for attr in ("path", "arg", "args"):
        v = getattr(path, attr, None)
        for item in (v if isinstance(v, list | tuple) else [v]):
            if item is not None:
                out |= _path_terms(item)
    return out


def _read_terms(triples: Iterable[tuple[Any, Any, Any, bool]]) -> tuple[set[URIRef], bool]:
    terms: set[URIRef] = set()
    anyp = False
    for _s, p, o, _ in triples:
        if isinstance(p, Variable):
            anyp = True
        elif p == RDF.type:
            if isinstance(o, URIRef):
                terms.add(o)
            else:
                anyp = True
        elif isinstance(p, URIRef):
            terms.add(p)
        elif isinstance(p, SparqlPath):
            terms |= _path_terms(p)
    return terms, anyp


def _expand(token: str) -> URIRef:
    prefix, sep, local = token.partition(":")
    if not sep or prefix not in _PREFIXES:
        raise ValueError(f"expected a prefixed name such as ak:Estimate, got '{token}'")
    return URIRef(str(_PREFIXES[prefix]) + local)


def _header(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        m = _HEADER.match(line)
        if m and m.group(1) in HEADER_KEYS:
            fields[m.group(1)] = (fields.get(m.group(1), "") + " " + m.group(2)).strip()
        elif m and m.group(1) not in HEADER_KEYS and not fields.get("_free"):
            fields.setdefault("_unknown", m.group(1))
    return fields


def _is_schema(term: URIRef) -> bool:
    return str(term).startswith(loader.SCHEMA_NS)


def parse_rule(text: str, path: str) -> tuple[Rule | None, list[str]]:
    """Parse one rule file; return the rule (or None) and every problem found, each with ``path``.

    Examples
    --------
    >>> rule, problems = parse_rule("# id: x\\nCONSTRUCT { [] ak:rank 1 } WHERE { }", "x.rq")
    >>> rule is None and any("blank node" in p for p in problems)
    True
    """
    problems: list[str] = []
    stem = Path(path).stem
    head = _header(text)
    if "_unknown" in head:
        problems.append(f"{path}: unknown header key '{head['_unknown']}' (expected "
                        f"{', '.join(HEADER_KEYS)})")
    for key in HEADER_KEYS:
        if not head.get(key):
            problems.append(f"{path}: header line '# {key}: ...' is missing or empty")
    if head.get("id") and head["id"] != stem:
        problems.append(f"{path}: header id '{head['id']}' differs from the file name '{stem}'")
    if re.search(r"\bBNODE\s*\(", _strip(text), re.IGNORECASE):
        problems.append(f"{path}: BNODE() mints blank nodes; rules that mint blank nodes are "
                        "refused (mint an IRI from the bindings instead)")
    try:
        select = _prologue() + _select_text(text)
    except ValueError as exc:
        problems.append(f"{path}: not a rule: {exc}")
        return None, problems
    try:
        construct = prepareQuery(_prologue() + text)
    except Exception as exc:  # pyparsing and rdflib raise several types
        line = getattr(exc, "lineno", None)
        where = f" at line {line - _prologue().count(chr(10))}" if isinstance(line, int) else ""
        msg = str(getattr(exc, "msg", "") or exc).splitlines()[0]
        problems.append(f"{path}: SPARQL syntax error{where}: {msg}")
        return None, problems
    algebra = construct.algebra
    if algebra.name != "ConstructQuery":
        problems.append(f"{path}: expected a CONSTRUCT query, got {algebra.name}")
        return None, problems
    template = [Pattern(s=s, p=p, o=o) for s, p, o in (algebra.template or [])]
    if any(isinstance(t, BNode) for pat in template for t in (pat.s, pat.p, pat.o)):
        problems.append(f"{path}: the template mints blank nodes ([] or _:x); rules that mint "
                        "blank nodes are refused (mint an IRI from the bindings instead)")
    unknown = sorted({str(t) for t in _walk_terms(algebra) if isinstance(t, URIRef)
                      and _is_schema(t) and str(t) not in _KNOWN_AK})
    for term in unknown:
        problems.append(f"{path}: unknown schema term ak:{term[len(loader.SCHEMA_NS):]} "
                        "(not in accelkb.ontology.namespace.AK)")
    pattern = list(_bgp_triples(algebra.p))
    reads, reads_any = _read_terms(pattern)
    writes, _ = _read_terms((p.s, p.p, p.o, False) for p in template)
    declared: dict[str, set[URIRef]] = {}
    for key in ("reads", "writes"):
        declared[key] = set()
        for token in head.get(key, "").replace(",", " ").split():
            try:
                declared[key].add(_expand(token))
            except ValueError as exc:
                problems.append(f"{path}: header {key}: {exc}")
    short = sorted(_short(t) for t in writes - declared["writes"])
    extra = sorted(_short(t) for t in declared["writes"] - writes)
    if head.get("writes") and (short or extra):
        problems.append(f"{path}: header writes must list what the template writes: missing "
                        f"{short or 'nothing'}, not written {extra or 'nothing'}")
    missing = sorted(_short(t) for t in reads - declared["reads"] if _is_schema(t))
    if head.get("reads") and missing:
        problems.append(f"{path}: header reads is missing schema terms the pattern reads: "
                        f"{missing}")
    bound = {str(v) for v in _all_vars(algebra.p)}
    unbound = sorted(set(re.findall(r"\?(\w+)", head.get("explanation", ""))) - bound)
    if unbound:
        problems.append(f"{path}: explanation uses {', '.join('?' + v for v in unbound)}, which "
                        "the rule's pattern does not bind")
    source = None
    try:
        source = _expand(head.get("source", "").split()[0]) if head.get("source") else None
    except ValueError as exc:
        problems.append(f"{path}: header source: {exc}")
    if problems or source is None:
        return None, problems
    premises = tuple(Pattern(s=s, p=p, o=o, optional=opt) for s, p, o, opt in pattern
                     if isinstance(p, URIRef | Variable))
    rule = Rule(id=stem, iri=URIRef(RULE_NS + stem), title=head["title"],
                explanation=head["explanation"], reads=frozenset(reads | declared["reads"]),
                writes=frozenset(writes), source=source, path=path, select_text=select,
                template=tuple(template), premises=premises, reads_any=reads_any,
                select_query=_as_select(construct),
                recorded_vars=frozenset(
                    {str(t) for pat in template for t in (pat.s, pat.p, pat.o)
                     if isinstance(t, Variable)}
                    | set(re.findall(r"\?(\w+)", head["explanation"]))),
                typed_reads=typed_terms(pattern),
                typed_writes=typed_terms((p.s, p.p, p.o) for p in template))
    return rule, []


def _short(term: URIRef) -> str:
    for prefix, ns in _PREFIXES.items():
        if str(term).startswith(str(ns)):
            return f"{prefix}:{str(term)[len(str(ns)):]}"
    return str(term)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str, path: str) -> tuple[Rule | None, tuple[str, ...]]:
    rule, problems = parse_rule(text, path)
    return rule, tuple(problems)


def rule_files(directory: str | Path | None = None) -> list[tuple[str, str]]:
    """(path, text) of every ``*.rq`` file in ``directory`` (default: the bundled rules), sorted."""
    if directory is not None:
        return [(str(p), p.read_text(encoding="utf-8"))
                for p in sorted(Path(directory).glob("*.rq"))]
    root = importlib.resources.files("accelkb.rules")
    return sorted((f"rules/{f.name}", f.read_text(encoding="utf-8"))
                  for f in root.iterdir() if f.name.endswith(".rq"))


def load_rules(files: Iterable[tuple[str, str]] | None = None) -> dict[str, Rule]:
    """Parse and check rule files (default: the bundled ``rules/*.rq``); id -> rule.

    Parsed rules are cached by file content, so loading the same files again is free.

    Raises
    ------
    RuleFileError
        Listing every problem of every bad file (and duplicate ids), if any.
    """
    rules: dict[str, Rule] = {}
    problems: list[str] = []
    for path, text in (rule_files() if files is None else files):
        rule, found = _parse_cached(text, path)
        problems += list(found)
        if rule is not None:
            if rule.id in rules:
                problems.append(f"{path}: duplicate rule id '{rule.id}' (also in "
                                f"{rules[rule.id].path})")
            rules[rule.id] = rule
    if problems:
        raise RuleFileError(problems)
    return rules
