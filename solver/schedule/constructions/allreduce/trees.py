"""Allreduce as per-chunk trees, solved by Z3 without symmetry: small instances.

Chunk ``j`` is reduced along an in-tree into its root ``r = j mod n``, either alone or together
with a *partner*, an out-neighbour of the root with a link back: the two reduce disjoint halves
and exchange their sums in one step, after which both hold the total. It is then broadcast
along an out-tree from the root (and the partner). Every chip other than the roots sends its
partial sum once and receives the total once, so a chunk takes ``2(n-1)`` transfers, the
fewest an allreduce chunk can use.

The exchange is what single-root trees (the Cayley templates of :mod:`cayley_template`) lack:
on ``hypercube:3`` with 8 chunks a single root needs 3 steps to reduce and 3 to broadcast, a
pair 2 + 1 + 2 = 5, the bound (the constructions give 6 and Z3's exact encoding, on the whole
state, does not decide 5 within a minute; this model finds it in 0.1-0.5 s).

State, per chunk: which partner (or none), the step ``done`` from which the root holds the
total (a pair exchanges in step ``done - 1``), one Boolean per reduction arc ``u -> w @ t`` and
per broadcast arc. A reduction arc into a chip that is not a root needs that chip to send
later; one into the root (or partner) must come before the exchange; a broadcast arc needs its
sender to hold the total. Slot capacities are shared by all chunks.

SAT is a schedule (the independent checker replays it); UNSAT only rules out such trees, never
an allreduce.
"""

from __future__ import annotations

import time

import z3

from accelkb.solver.schedule.best import Best
from accelkb.solver.schedule.model import Instance, TransferT
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.schedule.verify import verify
from accelkb.solver.z3fast import all_of, any_of, at_most, check_until

MAX_ARCS = 20_000  # arc Booleans worth building (dragonfly:nodes=2,chips=4, 16 chunks, 5 steps:
# 8,960, built and solved in 1.6 s)
BUILD_SECONDS_PER_ARC = 2e-4  # building the encoding, per arc (measured 56-87 us; the review
# saw up to 186 us on a loaded machine)


def arc_count(inst: Instance, steps: int) -> int:
    """Reduction and broadcast arc Booleans of the encoding at ``steps``."""
    return 2 * inst.chunks * inst.topology.unit_links * steps


class _Chunk:
    """The Booleans of one chunk with root ``r``."""

    def __init__(self, s: z3.Solver, topo: Topology, j: int, r: int, steps: int) -> None:
        out = topo.out_neighbors()
        name = f"c{j}"
        self.r = r
        self.partner = {w: z3.Bool(f"{name}.partner[{w}]") for w in out[r]
                        if (w, r) in topo.links}
        self.done = {t: z3.Bool(f"{name}.done@t{t}") for t in range(1, steps)}
        s.add(at_most(list(self.partner.values()), 1))
        s.add(any_of(list(self.done.values())), at_most(list(self.done.values()), 1))
        self.red = {(u, w, t): z3.Bool(f"{name}.reduce[{u}->{w}]@t{t}")
                    for u in range(topo.n) if u != r for w in out[u] for t in range(steps - 1)}
        self.bc = {(u, w, t): z3.Bool(f"{name}.broadcast[{u}->{w}]@t{t}")
                   for u in range(topo.n) for w in out[u] if w != r for t in range(1, steps)}
        self.paired = any_of(list(self.partner.values()))

    def done_after(self, t: int) -> z3.BoolRef:
        """The root holds the total only after step ``t`` (``done > t``)."""
        return any_of([b for d, b in self.done.items() if d > t])

    def done_by(self, t: int) -> z3.BoolRef:
        """The root holds the total at the start of step ``t`` (``done <= t``)."""
        return any_of([b for d, b in self.done.items() if d <= t])


def _add_chunk(s: z3.Solver, topo: Topology, c: _Chunk, steps: int) -> None:
    r = c.r
    sends_at: dict[tuple[int, int], list[z3.BoolRef]] = {}  # (chip, step) -> reduction arcs
    for (u, _w, t), b in c.red.items():
        sends_at.setdefault((u, t), []).append(b)
    recv: dict[int, list[tuple[int, z3.BoolRef]]] = {}  # chip -> (step, broadcast arc into it)
    for (_u, w, t), b in c.bc.items():
        recv.setdefault(w, []).append((t, b))

    def sends_after(w: int, t: int) -> z3.BoolRef:
        return any_of([b for x in range(t + 1, steps) for b in sends_at.get((w, x), [])])

    def holds_total_by(u: int, t: int) -> z3.BoolRef:
        got = any_of([b for x, b in recv.get(u, []) if x < t])
        if u == r:
            return c.done_by(t)
        if u in c.partner:
            return z3.Or(z3.And(c.partner[u], c.done_by(t)), got)
        return got

    for u in range(topo.n):
        if u == r:
            continue
        mine = [b for (a, _w, _t), b in c.red.items() if a == u]
        s.add(any_of(mine), at_most(mine, 1))
        into = [b for _t, b in recv.get(u, [])]
        if u in c.partner:  # its one send is the exchange; it receives no broadcast
            p = c.partner[u]
            for t, d in c.done.items():
                if t - 1 >= 0 and (u, r, t - 1) in c.red:
                    s.add(z3.Implies(z3.And(p, d), c.red[(u, r, t - 1)]))
            s.add(z3.If(p, z3.Not(any_of(into)), z3.And(any_of(into), at_most(into, 1))))
        else:
            s.add(any_of(into), at_most(into, 1))
    for (u, w, t), b in c.red.items():
        if w == r:  # before the exchange (paired) or the root's completion; the exchange itself
            before = z3.If(c.paired, c.done_after(t + 1), c.done_after(t))
            exchange = (z3.And(c.partner[u], c.done[t + 1])
                        if u in c.partner and t + 1 in c.done else z3.BoolVal(False))
            s.add(z3.Implies(b, z3.Or(before, exchange)))
            continue
        if u in c.partner:
            s.add(z3.Implies(b, z3.Not(c.partner[u])))
        if w in c.partner:  # into the partner before the exchange, else w sends later
            s.add(z3.Implies(b, z3.If(c.partner[w], c.done_after(t + 1), sends_after(w, t))))
        else:
            s.add(z3.Implies(b, sends_after(w, t)))
    for (u, _w, t), b in c.bc.items():
        s.add(z3.Implies(b, holds_total_by(u, t)))


def _decode(model: z3.ModelRef, chunks: list[_Chunk]) -> list[TransferT]:
    trs: list[TransferT] = []
    for j, c in enumerate(chunks):
        for (u, w, t), b in list(c.red.items()) + list(c.bc.items()):
            if z3.is_true(model.eval(b)):
                trs.append((t, u, w, (0, j)))
        for w, p in c.partner.items():
            if z3.is_true(model.eval(p)):
                done = next(t for t, d in c.done.items() if z3.is_true(model.eval(d)))
                trs.append((done - 1, c.r, w, (0, j)))
    return sorted(trs, key=lambda tr: tr[0])


def solve(inst: Instance, steps: int, deadline: float) -> tuple[str, list[TransferT]]:
    """``("sat", transfers)``, ``("unsat", [])`` (no such trees) or ``("unknown", [])``."""
    topo = inst.topology
    s = z3.Solver()
    chunks = [_Chunk(s, topo, j, j % topo.n, steps) for j in range(inst.chunks)]
    slots: dict[tuple[int, int, int], list[z3.BoolRef]] = {}
    for c in chunks:
        _add_chunk(s, topo, c, steps)
        for (u, w, t), b in list(c.red.items()) + list(c.bc.items()):
            slots.setdefault((u, w, t), []).append(b)
        for w, p in c.partner.items():  # the root's half of the exchange
            for t, d in c.done.items():
                slots.setdefault((c.r, w, t - 1), []).append(all_of([p, d]))
    for (u, w, _t), bs in slots.items():
        s.add(at_most(bs, topo.links[(u, w)]))
    verdict = check_until(s, deadline)
    if verdict == z3.sat:
        return "sat", _decode(s.model(), chunks)
    return ("unsat" if verdict == z3.unsat else "unknown"), []


def tree_allreduce(inst: Instance, deadline: float, best: Best) -> None:
    """Below the best schedule, one step at a time while Z3 finds trees (each checked by the
    independent checker before it is offered), down to ``best.target``; only where every chip is
    a rank and the encoding is small (:data:`MAX_ARCS`) and builds in the time left."""
    topo = inst.topology
    if inst.n != topo.n or inst.collective != "allreduce":
        return
    while best.steps is not None and best.steps - 1 >= max(best.target, 2):
        steps = best.steps - 1
        arcs = arc_count(inst, steps)
        if arcs > MAX_ARCS or arcs * BUILD_SECONDS_PER_ARC > deadline - time.monotonic():
            return
        verdict, trs = solve(inst, steps, deadline)
        if verdict != "sat" or not verify(inst, trs, steps).ok:
            return
        best.offer(steps, trs, "Z3 per-chunk trees: reduced into a root (or a root pair that "
                   "exchanges its halves), broadcast back")
