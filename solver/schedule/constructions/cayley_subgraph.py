"""A spanning subgraph with a regular automorphism group, for dragonflies that have none.

The template search of :mod:`cayley_template` needs a Cayley topology. A one-level Groq
dragonfly whose nodes do not split their global ports evenly is not one: on
``dragonfly:nodes=8`` (GroqDF8x8) chips 0-3 of a node have 4 global links and chips 4-7 have 3.
Dropping links cannot make a schedule invalid (it only uses fewer of them), so a schedule found on
a subgraph that *is* Cayley is a schedule of the whole topology.

:func:`cayley_subgraph` looks for one: every chip keeps as many global links as the chip with the
fewest, the same links are dropped in every lane (so the lane rotation stays an automorphism),
and a subgraph counts when :func:`accelkb.solver.schedule.cayley.cayley_group` finds its lane group. The
links to drop from the lane-0 chips are chosen by a backtracking search over the excess links
(an ``f``-factor of the chips with ports to spare), at most :data:`MAX_CANDIDATES` of them.

The price is capacity: GroqDF8x8 keeps 640 of its 672 unit links, so a template on it can reach
13 steps (the full topology's bound is 12, where every link is busy in every step) and does,
where the constructions give 14.

>>> from accelkb.solver.schedule.topology import parse_topology
>>> sub, group = cayley_subgraph(parse_topology("dragonfly:nodes=8"))
>>> sub.unit_links, len(group.elements)
(640, 64)
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import networkx as nx

from accelkb.solver.schedule.cayley import CayleyGroup, cayley_group, lane_rotation
from accelkb.solver.schedule.topology import Topology

MAX_CANDIDATES = 200  # sets of links to drop tried (GroqDF8x8 has exactly one)
SEARCH_SECONDS = 2.0  # at most this long looking for one (GroqDF8x8: 0.03 s)


def _drop_sets(edges: dict[tuple[int, int], int], excess: dict[int, int],
               deadline: float = math.inf) -> Iterator[list[tuple[int, int]]]:
    """Every multiset of undirected ``edges`` (``(u, v)`` with ``u < v`` -> multiplicity) that
    takes exactly ``excess[c]`` links away from each chip ``c`` (chips not in ``excess`` lose
    none), once each: the edges are decided in order, how many units of each to drop. Stops
    early once ``deadline`` (a ``time.monotonic()`` value) has passed.

    >>> sorted(map(sorted, _drop_sets({(0, 1): 1, (0, 2): 1, (1, 2): 1}, {0: 1, 1: 1})))
    [[(0, 1)]]
    """
    excess = {c: k for c, k in excess.items() if k}
    order = sorted(e for e in edges if e[0] in excess and e[1] in excess)
    # every dropped link takes one from each end: each connected part needs an even total
    parts = nx.Graph(order)
    parts.add_nodes_from(excess)
    if any(sum(excess[c] for c in part) % 2 for part in nx.connected_components(parts)):
        return
    last = {c: max((i for i, e in enumerate(order) if c in e), default=-1) for c in excess}
    if any(last[c] < 0 for c in excess):
        return
    left = dict(excess)
    chosen: list[tuple[int, int]] = []

    def walk(i: int) -> Iterator[list[tuple[int, int]]]:
        if time.monotonic() > deadline:
            return
        if i == len(order):
            if not any(left.values()):
                yield list(chosen)
            return
        u, v = order[i]
        for k in range(min(edges[(u, v)], left[u], left[v]), -1, -1):
            left[u] -= k
            left[v] -= k
            if all(left[c] == 0 for c in (u, v) if last[c] == i):
                chosen.extend([(u, v)] * k)
                yield from walk(i + 1)
                del chosen[len(chosen) - k:]
            left[u] += k
            left[v] += k

    yield from walk(0)


def cayley_subgraph(topo: Topology, min_unit_links: int = 0, seconds: float = SEARCH_SECONDS
                    ) -> tuple[Topology, CayleyGroup] | None:
    """``(subgraph, its lane group)`` as in the module docstring, or None where the topology is
    not a one-level lane dragonfly with symmetric links, already has its chips' global link
    counts equal, the subgraph would keep fewer than ``min_unit_links`` unit links, or no
    candidate has a lane group within ``seconds`` (the candidates and the group search both
    stop then: one automorphism search alone can take minutes, e.g. on
    ``dragonfly:nodes=8,ports=2``, 32 lane-0 chips of degree 4)."""
    found = lane_rotation(topo)
    if found is None or any(topo.links.get((v, u)) != m for (u, v), m in topo.links.items()):
        return None
    lanes, rotate = found
    size = len(topo.groups[0][0])
    edges = {(u, v): m for (u, v), m in topo.links.items()
             if u < v and u % lanes == 0 and v % lanes == 0 and u // size != v // size}
    ports = {c: 0 for c in range(0, topo.n, lanes)}
    for (u, v), m in edges.items():
        ports[u] += m
        ports[v] += m
    fewest = min(ports.values())
    excess = {c: k - fewest for c, k in ports.items() if k > fewest}
    if not excess or topo.unit_links - lanes * sum(excess.values()) < min_unit_links:
        return None
    stop = time.monotonic() + seconds
    for tried, drop in enumerate(_drop_sets(edges, excess, stop)):
        if tried >= MAX_CANDIDATES:
            return None
        links = dict(topo.links)
        for u, v in drop:
            for shift in range(lanes):
                turn = rotate(shift)
                for a, b in ((turn[u], turn[v]), (turn[v], turn[u])):
                    links[(a, b)] -= 1
                    if links[(a, b)] == 0:
                        del links[(a, b)]
        sub = Topology(topo.name, topo.n, links, topo.groups, topo.ranks)
        group = cayley_group(sub, stop)
        if group is not None:
            return sub, group
    return None
