"""Allreduce of a few chunks on a network of fully connected groups (Groq nodes).

:func:`groups_allreduce` applies where the topology's first-level groups (the nodes of a
``dragonfly:nodes=N``) are each fully connected and every chip has a link from some chip of
every other group, as in ``dragonfly:nodes=2`` to ``nodes=5`` with four global ports per chip:

1. step ``j``: chunk ``j`` is added inside every group, every chip sending its own value to all
   its group mates (one chunk on each intra-group link), so each chip holds its group's sum;
2. step ``j+1``: every chip receives chunk ``j``'s group sum of each other group over one link
   from that group, while the intra-group links carry chunk ``j+1``.

The sums a chip adds are of disjoint chip sets, so nothing is counted twice: ``c + 1`` steps
for ``c`` chunks, which is the diameter bound (2) for one chunk on such a dragonfly, where the
general search found 4.

Examples
--------
>>> from accelkb.solver.topology import parse_topology
>>> groups_allreduce(parse_topology("dragonfly:nodes=3"), 1)[0]
2
>>> groups_allreduce(parse_topology("dragonfly:nodes=9"), 1) is None  # 4 ports, 8 other nodes
True
"""

from __future__ import annotations

from accelkb.solver.schedule_model import TransferT
from accelkb.solver.topology import Topology


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
    transfers: list[TransferT] = []
    for j in range(chunks):
        transfers += [(j, u, w, (0, j)) for g in groups for u in g for w in g if u != w]
        transfers += [(j + 1, x, v, (0, j)) for x, v in feeds]
    return chunks + 1, transfers
