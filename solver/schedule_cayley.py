"""Allreduce on a Cayley topology: Z3 schedules one template chunk, the group copies it.

With a regular automorphism group (:mod:`cayley`) and ``n`` chunks, chunk ``v`` (reduced to
chip ``v``) gets the template schedule of chunk 0 moved by ``g_v``. The template is a reduction
in-tree into chip 0 over steps ``[0, C)`` followed by a broadcast tree out of it over
``[C, T)``: ``2(n-1)`` transfers, the fewest an allreduce chunk can use. Copies never collide
when the template uses each link *type* at most (its multiplicity) once per step, because the
copies of one typed link in a step are distinct links.

That alone cannot reach the ``transfers`` bound: a chunk then moves at most ``deg`` transfers a
step, so reduction and broadcast take ``ceil((n-1)/deg)`` steps each, one after the other.
Where the group has an index-2 subgroup (``parity``), the chunks reduced to the odd coset run
the *time-reversed* template instead (reverse every link and the order of steps; the reversed
broadcast is a reduction into the same root and vice versa), moved by an odd element. A
template that reduces quickly and broadcasts slowly then shares every step with a reversed copy
that does the opposite, and the condition becomes: in step ``t``, the template's links of type
``s`` leaving even chips, plus the links of step ``T-1-t`` whose reversal has type ``s`` and
leaves an odd chip, number at most the multiplicity. On ``hypercube:5`` and ``torus:2x4x4``
this meets the bound (13 steps; 14 without the pairing).

Z3 decides the template with integer send/receive steps per chip and one Boolean per (chip,
link, step) choice; an UNSAT answer only rules out such templates, not the allreduce.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import z3

from accelkb.solver.cayley import CayleyGroup
from accelkb.solver.schedule_model import TransferT
from accelkb.solver.topology import Topology
from accelkb.solver.z3fast import check_until

MAX_CHOICES = 80_000  # template Booleans worth handing to Z3 (torus 4x4x4 at 21 steps: 16k)
BUILD_SECONDS_PER_CHOICE = 3e-4  # building the encoding: 250-290 us per Boolean measured


def _paired(topo: Topology, group: CayleyGroup) -> bool:
    return group.parity is not None and all(
        topo.links.get((v, u)) == m for (u, v), m in topo.links.items())


def template_size(topo: Topology, steps: int) -> int:
    """Booleans of the template encoding: a send and a receive choice per (chip, link, step)."""
    return 2 * len(topo.links) * steps


def _slots(topo: Topology, group: CayleyGroup, steps: int, u: int, v: int, t: int,
           paired: bool) -> list[tuple[int, int, int]]:
    """The (step, type, coset) capacity slots the template link ``u -> v`` at step ``t`` takes."""
    if not paired:
        return [(t, group.link_type(u, v), 0)]
    par = group.parity
    assert par is not None
    return [(t, group.link_type(u, v), par[u]),
            (steps - 1 - t, group.link_type(v, u), 1 - par[v])]


def template(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]], steps: int,
             deadline: float) -> tuple[str, list[tuple[int, int, int]]]:
    """``("sat", [(step, u, v), ...])`` for chunk 0, or ``("unsat" | "unknown", [])``."""
    n, paired = topo.n, _paired(topo, group)
    if deadline - time.monotonic() < template_size(topo, steps) * BUILD_SECONDS_PER_CHOICE:
        return "unknown", []  # the build cannot be interrupted: do not overrun the deadline
    out, inn = topo.out_neighbors(), topo.in_neighbors()
    s = z3.Solver()
    c_low = max(dist[u][0] for u in range(n))
    c_high = steps - max(dist[0][u] for u in range(n))
    if c_low > c_high:
        return "unsat", []
    done = z3.Int("reduced_at")
    s.add(done >= c_low, done <= c_high)
    send = {u: z3.Int(f"send_step[{u}]") for u in range(1, n)}
    recv = {u: z3.Int(f"receive_step[{u}]") for u in range(1, n)}
    for u in range(1, n):
        s.add(send[u] >= 0, send[u] <= done - dist[u][0],
              recv[u] >= done + dist[0][u] - 1, recv[u] <= steps - 1)
    slots: dict[tuple[int, int, int], list[z3.BoolRef]] = {}
    arcs: dict[z3.BoolRef, tuple[int, int, int]] = {}
    for u in range(1, n):
        ups, downs = [], []
        for t in range(steps):
            for w in out[u]:
                b = z3.Bool(f"reduce[{u}->{w}]@t{t}")
                s.add(z3.Implies(b, send[u] == t),
                      z3.Implies(b, send[w] > t if w else done > t))
                ups.append(b)
                arcs[b] = (t, u, w)
            for w in inn[u]:
                b = z3.Bool(f"broadcast[{w}->{u}]@t{t}")
                s.add(z3.Implies(b, recv[u] == t),
                      z3.Implies(b, recv[w] < t if w else done <= t))
                downs.append(b)
                arcs[b] = (t, w, u)
        s.add(z3.PbEq([(b, 1) for b in ups], 1), z3.PbEq([(b, 1) for b in downs], 1))
    for b, (t, u, v) in arcs.items():
        for slot in _slots(topo, group, steps, u, v, t, paired):
            slots.setdefault(slot, []).append(b)
    for (_t, typ, _c), bs in slots.items():
        cap = topo.links[(0, typ)]
        if len(bs) > cap:
            s.add(z3.PbLe([(b, 1) for b in bs], cap))
    res = check_until(s, deadline)
    if res == z3.unsat:
        return "unsat", []
    if res != z3.sat:
        return "unknown", []
    m = s.model()
    return "sat", sorted(a for b, a in arcs.items() if z3.is_true(m.eval(b, model_completion=True)))


def cayley_allreduce(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]],
                     steps: int, deadline: float) -> list[TransferT] | None:
    """An allreduce of ``n`` chunks in ``steps`` steps from a template (module docstring), chunk
    ``(0, v)`` reduced to chip ``v``; None when Z3 finds no template before ``deadline``."""
    if template_size(topo, steps) > MAX_CHOICES:
        return None
    per_step = topo.out_units(0)
    if not _paired(topo, group) and steps < 2 * -(-(topo.n - 1) // per_step):
        return None  # reduction, then broadcast, each at most out(0) transfers a step
    verdict, arcs = template(topo, group, dist, steps, deadline)
    if verdict != "sat":
        return None
    trs: list[TransferT] = []
    par = group.parity if _paired(topo, group) else None
    odd = next(v for v in range(topo.n) if par[v]) if par is not None else 0
    for g in group.elements:
        if par is not None and par[g[0]]:
            continue
        trs += [(t, g[u], g[v], (0, g[0])) for t, u, v in arcs]
        if par is not None:
            h = [g[x] for x in group.elements[odd]]
            trs += [(steps - 1 - t, h[v], h[u], (0, h[0])) for t, u, v in arcs]
    return sorted(trs)
