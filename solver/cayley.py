"""Regular automorphism groups of generated topologies: tori, hypercubes, rings, cliques.

A topology on which a group ``H`` of automorphisms acts *regularly* (for every chip ``v``
exactly one ``g_v`` in ``H`` maps chip 0 to ``v``) is a Cayley graph: the links leaving ``u``
are ``g_u`` applied to the links leaving 0, so every link has a *type*, the out-neighbour of 0
it comes from (``g_u^-1(v)`` for the link ``u -> v``). :mod:`schedule_cayley` schedules one
template chunk and copies it with every ``g_v``; two copies never share a link in a step as
long as the template uses each type at most once per step.

Only the translation groups of the generators are found (``torus:AxBxC`` by coordinates modulo
the sizes, ``hypercube:d`` by XOR, ``ring:n`` and ``full:n`` by rotation); every element is
checked to map links to links of the same multiplicity, so a topology that only carries such a
name is refused rather than trusted. ``parity`` is a homomorphism onto ``Z_2`` (the
coordinate of an even-sized dimension modulo 2, bit 0 of a hypercube address) when there is one:
its kernel is an index-2 subgroup.

>>> from accelkb.solver.topology import parse_topology
>>> c = cayley_group(parse_topology("torus:2x4"))
>>> c.elements[5][0], c.link_type(5, 1) == c.link_type(4, 0), c.parity[:4]
(5, True, (0, 0, 0, 0))
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from accelkb.solver.topology import Topology


@dataclass(frozen=True)
class CayleyGroup:
    """``elements[v]``: the automorphism (a chip permutation) that maps chip 0 to ``v``;
    ``inverses[v]``: its inverse; ``parity[v]``: the coset of ``elements[v]`` in an index-2
    subgroup, or None."""

    elements: tuple[tuple[int, ...], ...]
    inverses: tuple[tuple[int, ...], ...]
    parity: tuple[int, ...] | None

    def link_type(self, u: int, v: int) -> int:
        """The type of link ``u -> v``: the out-neighbour ``g_u^-1(v)`` of chip 0."""
        return self.inverses[u][v]


def _coordinates(topo: Topology) -> tuple[list[tuple[int, ...]], tuple[int, ...], str] | None:
    """Chip coordinates, the sizes and the group law ('add' or 'xor') the name implies."""
    m = re.fullmatch(r"(torus|hypercube|ring|full):([0-9x]+)", topo.name)
    if m is None:
        return None
    kind, arg = m.groups()
    if kind == "hypercube":
        d = int(arg)
        return [tuple((v >> k) & 1 for k in range(d)) for v in range(1 << d)], (2,) * d, "xor"
    dims = tuple(int(x) for x in arg.split("x")) if kind == "torus" else (int(arg),)
    return list(itertools.product(*[range(d) for d in dims])), dims, "add"


def cayley_group(topo: Topology) -> CayleyGroup | None:
    """The translation group of a generated torus/hypercube/ring/clique, or None (module
    docstring); every element is verified to be an automorphism of ``topo``."""
    found = _coordinates(topo)
    if found is None or topo.ranks not in (0, topo.n):
        return None
    coords, dims, law = found
    if len(coords) != topo.n:
        return None
    index = {c: i for i, c in enumerate(coords)}
    elements = []
    for shift in coords:
        if law == "xor":
            g = tuple(index[tuple(a ^ b for a, b in zip(c, shift, strict=True))] for c in coords)
        else:
            g = tuple(index[tuple((a + b) % d for a, b, d in zip(c, shift, dims, strict=True))]
                      for c in coords)
        if any(topo.links.get((g[u], g[v])) != m for (u, v), m in topo.links.items()):
            return None
        elements.append(g)
    even = next((k for k, d in enumerate(dims) if d % 2 == 0), None)
    parity = None if even is None else tuple(c[even] % 2 for c in coords)
    inverses = []
    for g in elements:
        inv = [0] * len(g)
        for i, x in enumerate(g):
            inv[x] = i
        inverses.append(tuple(inv))
    return CayleyGroup(tuple(elements), tuple(inverses), parity)
