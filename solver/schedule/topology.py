"""Network topologies for schedule synthesis: one parser for every generator spec.

A :class:`Topology` is a directed multigraph given as ``links[(u, v)] = m``: ``m`` parallel unit
links from chip ``u`` to chip ``v``; one unit link carries one chunk per step. Chips are numbered
``0 .. n-1``. ``groups`` optionally lists the hierarchy (e.g. chips of a node, nodes of a rack),
which bounds and decompositions use.

Generator grammar (``parse_topology``), all sizes positive integers:

``ring:N``
    bidirectional ring of N chips.
``torus:AxB`` / ``torus:AxBxC`` (also ``torus:A:B``)
    2-D / 3-D torus with wrap-around, one link each way per neighbour.
``full:N`` (also ``fc:N``)
    N fully connected chips (a GroqNode is ``full:8``).
``hypercube:D``
    2**D chips, neighbours differ in one bit.
``switch:N``
    N chips on one non-blocking switch (DGX-style NVSwitch node): vertex N is the switch, one
    unit link each way per chip; the switch forwards but is not a rank.
``dragonfly:nodes=N[,chips=8][,ports=4]``
    one-level Groq dragonfly: N nodes of ``chips`` fully connected chips, each chip with
    ``ports`` global ports; node pairs get ``chips*ports // (N-1)`` global links each (same as
    ``groq:N``; GroqRack is ``dragonfly:nodes=9``).
``dragonfly:racks=R,nodes=N[,chips=8][,ports=4][,local=2]``
    two-level Groq dragonfly: R racks of N nodes; ``local`` links between every node pair in a
    rack, the remaining ports spread evenly over rack pairs (same as ``groq2l:R*N:N:local``;
    the 576-chip system is ``dragonfly:racks=8,nodes=9``).

Port wiring (matches ``../shared/bench/topologies/GroqDF*.json``): inside a node a port index
``p`` sits on chip ``p mod chips``; the global links of a node (or rack) to its peers, peers in
ascending order, take consecutive port indices, and the ``k``-th link of a pair joins the
``k``-th port of each side's block.

Examples
--------
>>> t = parse_topology("torus:4x4")
>>> t.n, t.unit_links
(16, 64)
>>> parse_topology("dragonfly:nodes=9").n
72
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import networkx as nx

from accelkb.errors import InputError
from accelkb.jsonio import strict_json

GRAMMAR_HINT = (
    "ring:N, torus:AxB, torus:AxBxC, full:N, hypercube:D, switch:N, "
    "dragonfly:nodes=N[,chips=8,ports=4] or dragonfly:racks=R,nodes=N[,chips=8,ports=4,local=2]"
)


@dataclass(frozen=True)
class Topology:
    """A directed multigraph of chips; ``links[(u, v)]`` unit links from ``u`` to ``v``."""

    name: str
    n: int
    links: Mapping[tuple[int, int], int]
    groups: tuple[tuple[tuple[int, ...], ...], ...] = field(default=())
    ranks: int = 0
    """Chips that take part in collectives are ``0 .. ranks-1``; the other vertices are
    switches that only forward (and, in the step model, may copy or add). 0 means all."""

    @property
    def endpoints(self) -> int:
        """Number of ranks (chips that take part in collectives)."""
        return self.ranks or self.n

    @property
    def unit_links(self) -> int:
        """Total number of unit links (directed)."""
        return sum(self.links.values())

    def out_neighbors(self) -> list[list[int]]:
        """``out[u]`` = chips ``u`` has a link to, sorted."""
        out: list[list[int]] = [[] for _ in range(self.n)]
        for u, v in sorted(self.links):
            out[u].append(v)
        return out

    def in_neighbors(self) -> list[list[int]]:
        """``inn[v]`` = chips with a link to ``v``, sorted."""
        inn: list[list[int]] = [[] for _ in range(self.n)]
        for u, v in sorted(self.links):
            inn[v].append(u)
        return inn

    @cached_property
    def _units(self) -> tuple[list[int], list[int]]:
        ins, outs = [0] * self.n, [0] * self.n
        for (u, v), m in self.links.items():
            outs[u] += m
            ins[v] += m
        return ins, outs

    def in_units(self, v: int) -> int:
        """Unit links entering ``v``."""
        return self._units[0][v]

    def out_units(self, v: int) -> int:
        """Unit links leaving ``v``."""
        return self._units[1][v]

    def reversed(self) -> Topology:
        """The same chips with every link turned around."""
        return Topology(self.name + "^T", self.n, {(v, u): m for (u, v), m in self.links.items()},
                        self.groups, self.ranks)

    def to_networkx(self) -> nx.DiGraph:
        """A networkx DiGraph with edge attribute ``links``."""
        g = nx.DiGraph(name=self.name)
        g.add_nodes_from(range(self.n))
        for (u, v), m in self.links.items():
            g.add_edge(u, v, links=m)
        return g


def _check(topo: Topology) -> Topology:
    if topo.n < 1:
        raise InputError(f"expected a topology with at least 1 chip, got {topo.n}, in {topo.name}")
    for (u, v), m in topo.links.items():
        if u == v or not (0 <= u < topo.n and 0 <= v < topo.n) or m < 1:
            raise InputError(
                f"expected links between distinct chips 0..{topo.n - 1} with multiplicity >= 1, "
                f"got {u}->{v} x{m}, in {topo.name}")
    if topo.n > 1 and not nx.is_strongly_connected(topo.to_networkx()):
        raise InputError(f"expected a strongly connected topology, got one that is not, "
                         f"in {topo.name}")
    return topo


def _bidir(name: str, n: int, pairs: list[tuple[int, int]], groups=()) -> Topology:
    links: dict[tuple[int, int], int] = {}
    for u, v in pairs:
        if u == v:
            continue
        links[(u, v)] = links.get((u, v), 0) + 1
        links[(v, u)] = links.get((v, u), 0) + 1
    return _check(Topology(name, n, links, tuple(groups)))


def ring(n: int) -> Topology:
    """Bidirectional ring; ``ring(2)`` has one link each way."""
    if n == 2:
        return _check(Topology("ring:2", 2, {(0, 1): 1, (1, 0): 1}))
    return _bidir(f"ring:{n}", n, [(i, (i + 1) % n) for i in range(n)])


def torus(dims: tuple[int, ...]) -> Topology:
    """Torus with wrap-around; a dimension of 2 gets one link each way, of 1 none."""
    n = 1
    for d in dims:
        n *= d
    coords = list(itertools.product(*[range(d) for d in dims]))
    index = {c: i for i, c in enumerate(coords)}
    links: dict[tuple[int, int], int] = {}
    for c in coords:
        for k, d in enumerate(dims):
            if d == 1:
                continue
            for step in ((1, -1) if d > 2 else (1,)):
                nb = list(c)
                nb[k] = (c[k] + step) % d
                links[(index[c], index[tuple(nb)])] = 1
    return _check(Topology("torus:" + "x".join(map(str, dims)), n, links))


def full(n: int) -> Topology:
    """N fully connected chips."""
    return _check(Topology(f"full:{n}", n, {(u, v): 1 for u in range(n) for v in range(n)
                                            if u != v}))


def hypercube(d: int) -> Topology:
    """2**d chips; neighbours differ in one bit."""
    n = 1 << d
    return _check(Topology(f"hypercube:{d}", n, {(u, u ^ (1 << k)): 1 for u in range(n)
                                                 for k in range(d)}))


def _wire_blocks(members: list[list[int]], per_pair: int) -> list[tuple[int, int]]:
    """Join groups pairwise: ``members[g]`` is the ordered port list (chip per port) of group g."""
    ng = len(members)
    pairs = []
    for a in range(ng):
        for b in range(a + 1, ng):
            ja = b - 1  # index of b among a's peers (ascending, a excluded)
            jb = a      # index of a among b's peers
            for k in range(per_pair):
                pairs.append((members[a][ja * per_pair + k], members[b][jb * per_pair + k]))
    return pairs


def dragonfly(nodes: int, chips: int = 8, ports: int = 4, racks: int = 1,
              local: int = 2) -> Topology:
    """Groq-style dragonfly; see the module docstring for the wiring."""
    if racks == 1:
        if nodes < 2 or chips * ports < nodes - 1:
            raise InputError(f"expected 2 <= nodes <= chips*ports+1 = {chips * ports + 1}, got "
                             f"nodes={nodes}, in dragonfly spec")
        pairs = [(g * chips + i, g * chips + j) for g in range(nodes)
                 for i in range(chips) for j in range(i + 1, chips)]
        node_ports = [[g * chips + p % chips for p in range(chips * ports)] for g in range(nodes)]
        pairs += _wire_blocks(node_ports, chips * ports // (nodes - 1))
        groups = (tuple(tuple(range(g * chips, (g + 1) * chips)) for g in range(nodes)),)
        return _bidir(f"dragonfly:nodes={nodes},chips={chips},ports={ports}", nodes * chips,
                      pairs, groups)
    rack_chips = nodes * chips
    intra = local * (nodes - 1)
    left = chips * ports - intra
    if racks < 2 or left < 0 or left % chips or nodes * left < racks - 1:
        raise InputError(f"expected local*(nodes-1) <= chips*ports, the ports left over a "
                         f"multiple of chips, and enough of them for {racks} racks, got "
                         f"racks={racks}, nodes={nodes}, chips={chips}, ports={ports}, "
                         f"local={local}, in dragonfly spec")
    pairs = []
    for r in range(racks):
        base = r * rack_chips
        for g in range(nodes):
            b = base + g * chips
            pairs += [(b + i, b + j) for i in range(chips) for j in range(i + 1, chips)]
        node_ports = [[base + g * chips + p % chips for p in range(intra)] for g in range(nodes)]
        pairs += _wire_blocks(node_ports, local)
    per_chip = left // chips  # inter-rack ports per chip; rack ports: passes over chips x nodes
    rack_ports = [[r * rack_chips + g * chips + c for _ in range(per_chip)
                   for c in range(chips) for g in range(nodes)] for r in range(racks)]
    pairs += _wire_blocks(rack_ports, nodes * left // (racks - 1))
    node_groups = tuple(tuple(range(k * chips, (k + 1) * chips)) for k in range(racks * nodes))
    rack_groups = tuple(tuple(range(r * rack_chips, (r + 1) * rack_chips)) for r in range(racks))
    return _bidir(f"dragonfly:racks={racks},nodes={nodes},chips={chips},ports={ports},"
                  f"local={local}", racks * rack_chips, pairs, (node_groups, rack_groups))


def switch(n: int, ports: int = 1) -> Topology:
    """N chips on one non-blocking switch (vertex ``n``), ``ports`` unit links each way per chip.

    The switch is a vertex that forwards, copies and adds like a chip but is no rank; a chip
    moves ``ports`` chunks per step in and out, which is what limits a switched node.
    """
    links = {}
    for c in range(n):
        links[(c, n)] = ports
        links[(n, c)] = ports
    return _check(Topology(f"switch:{n}", n + 1, links, (), n))


#: Largest networks built at all (the schedule solver itself stops at 1,200 chips, the dynamic
#: simulator at 400,000 messages): a spec past these is refused before anything is allocated.
MAX_BUILT_CHIPS = 65_536
MAX_BUILT_LINKS = 4_000_000


def _size(spec: str, chips: int, links: int) -> None:
    """Refuse, before building, a network too large to build (``ring:100000000`` exhausted
    the machine's memory before any size check ran)."""
    if chips > MAX_BUILT_CHIPS or links > MAX_BUILT_LINKS:
        raise InputError(f"expected a network of at most {MAX_BUILT_CHIPS:,} chips and "
                         f"{MAX_BUILT_LINKS:,} directed links, got {chips:,} chips and "
                         f"{links:,} links, in {spec!r}")


def _int(text: str, spec: str, what: str) -> int:
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) < 1:
        raise InputError(f"expected a positive integer for {what}, got {text!r}, in topology "
                         f"spec {spec!r}; grammar: {GRAMMAR_HINT}")
    return int(text)


def parse_topology(spec: str) -> Topology:
    """Build a topology from a generator spec (grammar in the module docstring).

    Raises
    ------
    InputError
        unknown generator or bad parameters; the message names the spec and the grammar.

    Examples
    --------
    >>> parse_topology("ring:8").unit_links
    16
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise InputError(f"expected a topology spec KIND:PARAMS ({GRAMMAR_HINT}), got {spec!r}")
    kind, _, params = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "ring":
        n = _int(params, spec, "N")
        if n < 2:
            raise InputError(f"expected ring size >= 2, got {n}, in {spec!r}")
        _size(spec, n, 2 * n)
        return ring(n)
    if kind == "torus":
        dims = tuple(_int(p, spec, "dimension") for p in re.split(r"[x:]", params))
        if not 1 <= len(dims) <= 3:
            raise InputError(f"expected 1 to 3 torus dimensions, got {len(dims)}, in {spec!r}")
        n = math.prod(dims)
        _size(spec, n, 2 * len(dims) * n)
        return torus(dims)
    if kind in ("full", "fc"):
        n = _int(params, spec, "N")
        if n < 2:
            raise InputError(f"expected at least 2 chips, got {n}, in {spec!r}")
        _size(spec, n, n * (n - 1))
        return full(n)
    if kind == "hypercube":
        d = _int(params, spec, "D")
        if d > 12:
            raise InputError(f"expected hypercube dimension <= 12, got {d}, in {spec!r}")
        return hypercube(d)
    if kind == "switch":
        n = _int(params, spec, "N")
        if n < 2:
            raise InputError(f"expected at least 2 chips on a switch, got {n}, in {spec!r}")
        _size(spec, n, 2 * n)
        return switch(n)
    if kind == "groq":  # file alias: groq:N == dragonfly:nodes=N
        nodes = _int(params, spec, "nodes")
        _size(spec, 8 * nodes, 8 * nodes * 12)
        return dragonfly(nodes)
    if kind == "groq2l":  # file alias: groq2l:TOTAL_NODES:NODES_PER_RACK:LOCAL
        parts = [_int(p, spec, "groq2l field") for p in params.split(":")]
        if len(parts) != 3 or parts[0] % parts[1]:
            raise InputError(f"expected groq2l:TOTAL:PER_RACK:LOCAL with PER_RACK dividing TOTAL,"
                             f" got {spec!r}")
        _size(spec, 8 * parts[0], 8 * parts[0] * 12)
        return dragonfly(parts[1], racks=parts[0] // parts[1], local=parts[2])
    if kind == "dragonfly":
        allowed = {"nodes", "chips", "ports", "racks", "local", "groups"}
        kw: dict[str, int] = {}
        for item in filter(None, params.split(",")):
            key, eq, val = item.partition("=")
            key = key.strip()
            if not eq or key not in allowed:
                raise InputError(f"expected dragonfly parameters key=value with keys "
                                 f"{sorted(allowed)}, got {item!r}, in {spec!r}")
            kw["nodes" if key == "groups" else key] = _int(val, spec, key)
        if "nodes" not in kw:
            raise InputError(f"expected dragonfly:nodes=N[,...], got no nodes=, in {spec!r}")
        chips = kw["nodes"] * kw.get("chips", 8) * kw.get("racks", 1)
        _size(spec, chips, chips * (kw.get("chips", 8) + kw.get("ports", 4)))
        return dragonfly(**kw)
    raise InputError(f"expected a topology kind among ring, torus, full, hypercube, switch, "
                     f"dragonfly, "
                     f"got {kind!r}, in {spec!r}; grammar: {GRAMMAR_HINT}")


def load_topology_file(path: str | Path) -> Topology:
    """Read a networkx node-link JSON file; edge attribute ``links`` (default 1) = multiplicity.

    Nodes are renumbered ``0..n-1`` in file order. Undirected files get links both ways; a file
    without ``directed`` is undirected, as networkx reads it (a ring read as one-way links
    scheduled an all-gather in 3 steps instead of 2). A ``graph.spec`` naming a dragonfly
    restores the node/rack groups.

    Raises
    ------
    InputError
        missing or unreadable file, not node-link JSON, or a bad graph.
    """
    p = Path(path)
    try:
        data = strict_json(p.read_text(encoding="utf-8"), str(p), "a node-link JSON topology file")
    except FileNotFoundError:
        raise InputError(f"expected an existing topology file, got {str(p)!r} (not found)") \
            from None
    except (OSError, ValueError) as exc:
        raise InputError(f"expected a node-link JSON topology file, got unreadable {str(p)!r}: "
                         f"{exc}") from None
    if not isinstance(data, dict) or "nodes" not in data:
        raise InputError(f"expected node-link JSON with 'nodes' and 'edges' (or 'links'), got "
                         f"keys {sorted(data)[:6] if isinstance(data, dict) else type(data)}, "
                         f"in {str(p)!r}")
    edges = data.get("edges", data.get("links"))
    if not isinstance(edges, list):
        raise InputError(f"expected an 'edges' list, got {type(edges).__name__}, in {str(p)!r}")
    if not isinstance(data["nodes"], list):
        raise InputError(f"expected a 'nodes' list, got {type(data['nodes']).__name__}, "
                         f"in {str(p)!r}")
    _size(str(p), len(data["nodes"]), len(edges) * 2)
    try:
        ids = [nd["id"] for nd in data["nodes"]]
        index = {x: i for i, x in enumerate(ids)}
        links: dict[tuple[int, int], int] = {}
        for e in edges:
            if not isinstance(e, dict):
                raise InputError(f"expected each edge to be an object with 'source' and "
                                 f"'target', got {str(e)[:60]!r}, in {str(p)!r}")
            m = e.get("links", 1)
            if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 1024:
                raise InputError(f"expected 'links' of each edge to be a whole number from 1 to "
                                 f"1024, got {m!r} on the edge {e.get('source')!r} - "
                                 f"{e.get('target')!r}, in {str(p)!r}")
            u, v = index[e["source"]], index[e["target"]]
            links[(u, v)] = links.get((u, v), 0) + m
            if not data.get("directed", False):  # networkx's node_link_graph's default
                links[(v, u)] = links.get((v, u), 0) + m
    except (KeyError, TypeError) as exc:
        why = (f"{exc} is missing or not a node id" if isinstance(exc, KeyError)
               else f"an id that cannot be one ({exc})")
        raise InputError(f"expected nodes with an 'id' and edges whose 'source' and 'target' "
                         f"are node ids, but {why}, in {str(p)!r}") from None
    graph = data.get("graph") or {}
    if not isinstance(graph, dict):
        raise InputError(f"expected 'graph' to be an object (name, spec), got "
                         f"{type(graph).__name__}, in {str(p)!r}")
    name = str(graph.get("name") or p.stem)
    groups: tuple = ()
    spec = graph.get("spec")
    if isinstance(spec, str) and spec.split(":")[0] in ("groq", "groq2l", "dragonfly"):
        try:
            gen = parse_topology(spec)
            if dict(gen.links) == links:
                groups = gen.groups
        except InputError:
            groups = ()
    return _check(Topology(name, len(ids), links, groups))


def resolve_topology(spec: str | None = None, path: str | Path | None = None) -> Topology:
    """Exactly one of a generator spec or a file path."""
    if (spec is None) == (path is None):
        raise InputError("expected exactly one of a topology spec or a topology file, got "
                         f"{'both' if spec else 'neither'}")
    return parse_topology(spec) if spec is not None else load_topology_file(path)  # type: ignore
