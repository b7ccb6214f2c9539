"""Allreduce of a few chunks on a network of fully connected groups (Groq nodes).

:func:`groups_allreduce` applies where the topology's first-level groups (the nodes of a
``dragonfly:nodes=N``) are each fully connected and every chip has a link from some chip of
every other group, as in ``dragonfly:nodes=2`` to ``nodes=5`` with four global ports per chip:

Every chunk's intra-group step adds inside every group (each chip sending its current value
to all its group mates, one chunk on each intra-group link); the chunks take the intra links
one step each, chunk ``j`` in step ``j``. Each chunk also has one global step, of either kind:

- *sums after* (a step after ``j``): every chip receives chunk ``j``'s group sum of each other
  group over one link from it;
- *singletons before* (a step before ``j``, where every group's chips can be assigned, over
  links, to the chips of each other group, one receiver per sender and unit link): every chip
  sends its own value to its receiver in each other group, so in step ``j`` each chip adds its
  mates' values, each with the singletons it received: every chip of every group exactly once.

The sums a chip adds are of disjoint chip sets, so nothing is counted twice. The global steps
are placed last chunk first (singletons as late as possible, sums as early as possible) within
``max(c, 2)`` steps, else ``c + 1``: on ``dragonfly:nodes=2`` to ``nodes=5`` ``c`` chunks take
``max(c, 2)`` steps; one chunk takes 2, the diameter bound, where the general search found 4.

Examples
--------
>>> from accelkb.solver.schedule.topology import parse_topology
>>> groups_allreduce(parse_topology("dragonfly:nodes=3"), 1)[0]
2
>>> groups_allreduce(parse_topology("dragonfly:nodes=3"), 3)[0]  # singletons before, chunks 1, 2
3
>>> groups_allreduce(parse_topology("dragonfly:nodes=9"), 1) is None  # 4 ports, 8 other nodes
True
"""

from __future__ import annotations

from collections.abc import Mapping

from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology


def groups_allreduce(topo: Topology, chunks: int) -> tuple[int, list[TransferT]] | None:
    """``(steps, transfers)`` of the group construction (module docstring), chunk ``(0, j)``;
    None when the topology has no such groups."""
    if not topo.groups or topo.ranks or chunks < 1:
        return None
    groups = topo.groups[0]
    if len(groups) < 2 or sorted(v for g in groups for v in g) != list(range(topo.n)):
        return None
    links = topo.links
    if any(links.get((u, w), 0) < 1 for g in groups for u in g for w in g if u != w):
        return None
    feeds: list[tuple[int, int]] = []  # (sender in another group, receiver)
    for gi, g in enumerate(groups):
        for v in g:
            for gx, other in enumerate(groups):
                if gx == gi:
                    continue
                src = next((x for x in other if links.get((x, v), 0) >= 1), None)
                if src is None:
                    return None
                feeds.append((src, v))
    singles = _assignment(topo, groups)
    for steps in range(max(chunks, 2), chunks + 2):
        placed = _place(chunks, steps, feeds, singles, links)
        if placed is not None:
            break
    else:
        return None  # not reached: with c + 1 steps every chunk has its own feed step
    transfers: list[TransferT] = []
    for j, (step, pairs) in enumerate(placed):
        transfers += [(j, u, w, (0, j)) for g in groups for u in g for w in g if u != w]
        transfers += [(step, x, v, (0, j)) for x, v in pairs]
    return steps, transfers


def _place(chunks: int, steps: int, feeds: list[tuple[int, int]],
           singles: list[tuple[int, int]] | None, links: Mapping[tuple[int, int], int]
           ) -> list[tuple[int, list[tuple[int, int]]]] | None:
    """The global step of every chunk (``j`` has its intra-group step at ``j``): singletons at
    a step before ``j`` (latest first) or sums at a step after it (earliest first), last chunk
    first, within ``steps`` and the unit links; None where some chunk finds no room."""
    use: dict[tuple[int, int, int], int] = {}
    placed: list[tuple[int, list[tuple[int, int]]]] = [(0, [])] * chunks
    for j in reversed(range(chunks)):
        options = [(s, singles) for s in range(j - 1, -1, -1) if singles is not None]
        options += [(s, feeds) for s in range(j + 1, steps)]
        for step, pairs in options:
            need: dict[tuple[int, int], int] = {}
            for x, v in pairs:
                need[(x, v)] = need.get((x, v), 0) + 1
            if all(use.get((step, x, v), 0) + k <= links[(x, v)] for (x, v), k in need.items()):
                for (x, v), k in need.items():
                    use[(step, x, v)] = use.get((step, x, v), 0) + k
                placed[j] = (step, pairs)
                break
        else:
            return None
    return placed


def _assignment(topo: Topology, groups: tuple[tuple[int, ...], ...]
                ) -> list[tuple[int, int]] | None:
    """``(sender, receiver)`` pairs: every chip sends to one chip of each other group over a
    link, every chip receiving from at most one chip of each other group per unit link; None
    where a greedy pass finds no such assignment."""
    links = topo.links
    pairs: list[tuple[int, int]] = []
    for gi, g in enumerate(groups):
        for gx, other in enumerate(groups):
            if gx == gi:
                continue
            room = {v: 0 for v in other}
            for x in g:
                v = next((v for v in other if links.get((x, v), 0) > room[v]), None)
                if v is None:
                    return None
                room[v] += 1
                pairs.append((x, v))
    return pairs
