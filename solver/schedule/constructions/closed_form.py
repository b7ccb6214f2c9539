"""Closed-form schedules that meet the lower bounds: allreduce on rings, switches and
hypercubes, alltoall through a switch.

- :func:`ring_allreduce`: every chunk is reduced towards a root and broadcast back from it: a
  root *edge* ``(r, r+1)`` on an even ring (both ends swap their halves' sums, then each
  broadcasts into its half), a root *vertex* ``r`` on an odd ring. In every step one chunk uses
  exactly one clockwise and one counter-clockwise link, at positions that shift with its root,
  so the ``n`` rotations of one chunk's schedule use every link exactly once per step: ``n``
  chunks (per unit of link multiplicity) finish in ``n-1`` steps, which is the ``transfers``
  and ``receive_latency`` bound for ``c = n``.
- :func:`switch_allreduce`: chips on one switch vertex with ``m`` unit links each way: in step
  ``t`` every chip sends chunks ``t*m .. t*m+m-1`` to the switch, which adds them and returns
  the sums in step ``t+1``: ``ceil(c/m) + 1`` steps, the ``receive_latency`` bound.

- :func:`doubling_allreduce`: recursive doubling on a hypercube labelled by bits (chip ``u``
  linked to ``u xor 2^k`` for every dimension ``k < d``, ``m`` unit links each way): in each
  step a chunk's holders swap partial sums across one dimension and add them, so after ``d``
  steps every chip holds the whole sum. Chunk ``j`` of a wave takes the dimensions in the
  order ``j, j+1, ...`` (mod ``d``), so the ``d*m`` chunks of a wave share no unit link:
  ``ceil(c/(d*m)) * d`` steps, the ``diameter`` bound for ``c <= d*m``.

- :func:`switch_alltoall`: chips on one switch with ``m`` unit links each way: the ``c*(n-1)``
  chunks of every chip are taken in the order (copy ``i``, shift ``k``), chunk ``q`` of chip ``s``
  going to ``s+k mod n``; chunk ``q`` goes up in step ``q // m`` and down in the next. For each
  ``q`` the shift is a permutation of the chips, so each down link gets one chunk per ``q``, at
  most ``m`` per step: ``ceil(c*(n-1)/m) + 1`` steps, the ``relay`` bound.

All return ``None`` when the topology is not of their shape. Allreduce chunks are ``(0, j)``.
"""

from __future__ import annotations

from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology


def ring_order(topo: Topology) -> tuple[list[int], int] | None:
    """The cyclic order of a bidirectional ring (every link with the same multiplicity ``m``)
    and ``m``; None when the topology is no such ring."""
    n = topo.n
    if topo.endpoints != n or n < 3:
        return None
    mult = set(topo.links.values())
    if len(mult) != 1 or len(topo.links) != 2 * n:
        return None
    out = topo.out_neighbors()
    if any(len(out[v]) != 2 for v in range(n)):
        return None
    if any((v, u) not in topo.links for u, v in topo.links):
        return None
    order, prev, cur = [0], -1, 0
    while True:
        nxt = out[cur][0] if out[cur][0] != prev else out[cur][1]
        if nxt == 0:
            break
        order.append(nxt)
        prev, cur = cur, nxt
        if len(order) > n:
            return None
    if len(order) != n:
        return None
    return order, next(iter(mult))


def _one_chunk(n: int, r: int) -> list[tuple[int, int, int]]:
    """``(step, from position, to position)`` of one chunk rooted at position ``r``."""
    out: list[tuple[int, int, int]] = []
    steps = n - 1
    # clockwise link leaves position r-h+s; counter-clockwise leaves r+1+h-s (even, edge
    # root) or r+h-s (odd, vertex root) -- see the module docstring
    h = n // 2 - 1 if n % 2 == 0 else (n - 1) // 2
    ccw0 = r + 1 + h if n % 2 == 0 else r + h
    for s in range(steps):
        cw = (r - h + s) % n
        ccw = (ccw0 - s) % n
        out.append((s, cw, (cw + 1) % n))
        out.append((s, ccw, (ccw - 1) % n))
    return out


def ring_allreduce(topo: Topology, chunks: int) -> tuple[int, list[TransferT]] | None:
    """Root-pipelined allreduce on a ring (module docstring); None if ``topo`` is no ring."""
    found = ring_order(topo)
    if found is None:
        return None
    order, m = found
    n = len(order)
    per_wave = n * m
    trs: list[TransferT] = []
    waves = -(-chunks // per_wave)
    for j in range(chunks):
        wave, r = divmod(j, per_wave)
        base = wave * (n - 1)
        for s, a, b in _one_chunk(n, r % n):
            trs.append((base + s, order[a], order[b], (0, j)))
    return waves * (n - 1), trs


def switch_ports(topo: Topology) -> int | None:
    """``m`` when the ranks hang off one switch vertex (the last vertex) by ``m`` unit links
    each way and have no other links; else None."""
    n = topo.endpoints
    if topo.n != n + 1:
        return None
    hub = n
    mult = {topo.links.get((v, hub), 0) for v in range(n)} | \
        {topo.links.get((hub, v), 0) for v in range(n)}
    if len(mult) != 1 or 0 in mult or len(topo.links) != 2 * n:
        return None
    return next(iter(mult))


def switch_alltoall(topo: Topology, chunks: int) -> tuple[int, list[TransferT]] | None:
    """Alltoall through one switch (module docstring); None if ``topo`` is no such switch.

    >>> from accelkb.solver.schedule.topology import parse_topology
    >>> steps, trs = switch_alltoall(parse_topology("switch:8"), 2)
    >>> steps, len(trs)
    (15, 224)
    """
    m = switch_ports(topo)
    if m is None:
        return None
    n, hub = topo.endpoints, topo.endpoints
    trs: list[TransferT] = []
    for i in range(chunks):
        for k in range(1, n):
            q = i * (n - 1) + k - 1
            for s in range(n):
                d = (s + k) % n
                ch = (s, d) if chunks == 1 else (s, d, i)
                trs.append((q // m, s, hub, ch))
                trs.append((q // m + 1, hub, d, ch))
    return -(-(n - 1) * chunks // m) + 1, trs


def switch_allreduce(topo: Topology, chunks: int) -> tuple[int, list[TransferT]] | None:
    """Add-and-return through one switch vertex (module docstring); None otherwise."""
    m = switch_ports(topo)
    if m is None:
        return None
    n, hub = topo.endpoints, topo.endpoints
    trs: list[TransferT] = []
    for j in range(chunks):
        t = j // m
        for v in range(n):
            trs.append((t, v, hub, (0, j)))
            trs.append((t + 1, hub, v, (0, j)))
    return -(-chunks // m) + 1, trs


def hypercube_dimension(topo: Topology) -> tuple[int, int] | None:
    """``(d, m)`` when every chip ``u`` of ``2^d`` chips (no switches) has ``m`` or more unit
    links to ``u xor 2^k`` for each ``k < d`` (``m`` the least such count); else None.

    >>> from accelkb.solver.schedule.topology import parse_topology
    >>> hypercube_dimension(parse_topology("hypercube:3")), hypercube_dimension(parse_topology("ring:8"))
    ((3, 1), None)
    """
    n = topo.n
    d = n.bit_length() - 1
    if topo.endpoints != n or n < 2 or n != 1 << d:
        return None
    m = min(topo.links.get((u, u ^ (1 << k)), 0) for u in range(n) for k in range(d))
    return (d, m) if m >= 1 else None


def doubling_allreduce(topo: Topology, chunks: int) -> tuple[int, list[TransferT]] | None:
    """Recursive doubling with rotated dimension orders (module docstring); None if ``topo``
    is no bit-labelled hypercube.

    >>> from accelkb.solver.schedule.topology import parse_topology
    >>> steps, trs = doubling_allreduce(parse_topology("hypercube:4"), 4)
    >>> steps, len(trs)
    (4, 256)
    """
    found = hypercube_dimension(topo)
    if found is None:
        return None
    d, m = found
    per_wave = d * m
    trs: list[TransferT] = []
    for j in range(chunks):
        wave, r = divmod(j, per_wave)
        for s in range(d):
            bit = 1 << ((r + s) % d)
            trs.extend((wave * d + s, u, u ^ bit, (0, j)) for u in range(topo.n))
    return -(-chunks // per_wave) * d, trs
