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

Z3 decides the template once per *completion step* ``done`` (chip 0 holds the full sum from
``done`` on), with one Boolean per arc that distances allow: chip ``u`` sends its partial sum
by ``done - dist(u, 0)`` and receives the total from ``done + dist(0, u) - 1``. A counting
filter (:func:`fits`) drops completion steps whose per-step link counts cannot hold ``2(n-1)``
transfers; on GroqRack (``dragonfly:nodes=9``, with the lane group of :mod:`cayley`) at its
bound of 13 steps it leaves 4, 5, 8 and 9, and 8 is solved in 1-5 s. An UNSAT answer only rules
out such templates, not the allreduce.

With ``k*n`` chunks, ``k`` template chunks (each with its own completion step) share the slots,
and chunk ``(0, j*n + v)`` is the ``j``-th copied to chip ``v``: ``torus:4x4`` with 32 chunks
meets its bound of 15 steps (every link busy in every step), where two 8-step rounds take 16.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

import z3

from accelkb.solver.schedule.cayley import CayleyGroup
from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.z3fast import any_of, at_most, check_until

MAX_CHOICES = 80_000  # template arc Booleans worth handing to Z3 (GroqRack at 13 steps: 6.9k)
BUILD_SECONDS_PER_ARC = 2e-4  # building the encoding: 100-160 us per arc measured (GroqRack)
FIRST_SLICE_S = 3.0  # Z3 time per (completion step, seed) attempt in the first round; x1.5 a round
MAX_TUPLES = 8  # completion-step tuples tried with several chunks per root
NEAR_STEPS = 6  # completion steps nearest the middle those tuples draw on


def _paired(topo: Topology, group: CayleyGroup) -> bool:
    return group.parity is not None and all(
        topo.links.get((v, u)) == m for (u, v), m in topo.links.items())


def _slots(topo: Topology, group: CayleyGroup, steps: int, u: int, v: int, t: int,
           paired: bool) -> list[tuple[int, int, int]]:
    """The (step, type, coset) capacity slots the template link ``u -> v`` at step ``t`` takes."""
    if not paired:
        return [(t, group.link_type(u, v), 0)]
    par = group.parity
    assert par is not None
    return [(t, group.link_type(u, v), par[u]),
            (steps - 1 - t, group.link_type(v, u), 1 - par[v])]


def _arcs(topo: Topology, dist: Sequence[Sequence[int]], steps: int, done: int
          ) -> list[tuple[int, int, int, bool]]:
    """Template arcs ``(step, src, dst, is_reduction)`` that distances allow when chip 0 holds the
    complete chunk from step ``done`` on: ``u`` sends its partial sum by ``done - dist(u, 0)``
    (and after its children), and receives the sum from ``done + dist(0, u) - 1`` on."""
    arcs = []
    for (u, w) in sorted(topo.links):
        for t in range(steps):
            if u and t <= done - dist[u][0] and (t < done - dist[w][0] if w else t < done):
                arcs.append((t, u, w, True))
            if w and t >= done + dist[0][w] - 1 and (t > done + dist[0][u] - 1 if u else t >= done):
                arcs.append((t, u, w, False))
    return arcs


def _root_step_capacity(topo: Topology, group: CayleyGroup, steps: int, t: int, into: bool
                        ) -> int:
    """Most template links into (or out of) chip 0 at the self-paired step ``t`` whose slots,
    each taken twice in that step, fit: a brute force over chip 0's few links."""
    ends = [v for v in topo.out_neighbors()[0] for _ in range(topo.links[(0, v)])]
    if len(ends) > 16:
        return len(ends)
    best = 0
    for mask in range(1 << len(ends)):
        used: dict[tuple[int, int, int], int] = {}
        count = 0
        for i, v in enumerate(ends):
            if mask >> i & 1:
                count += 1
                a, b = (v, 0) if into else (0, v)
                for slot in _slots(topo, group, steps, a, b, t, True):
                    used[slot] = used.get(slot, 0) + 1
        if count > best and all(k <= topo.links[(0, s[1])] for s, k in used.items()):
            best = count
    return best


def fits(topo: Topology, group: CayleyGroup, steps: int, done: int) -> bool:
    """Necessary condition on the step counts for a template that completes at chip 0 at
    ``done``: ``n-1`` reduction links in ``[0, done)``, as many broadcast links in
    ``[done, steps)``, at most ``in(0)`` of them in step ``done-1`` (all into chip 0), at most
    ``out(0)`` in step ``done``, at most the slots ``S`` of a step in any step; paired, the links
    of steps ``t`` and ``steps-1-t`` share ``S`` slots, and the self-paired middle step takes
    half (less where chip 0's own links collide)."""
    n, per_type = topo.n, topo.out_units(0)
    paired = _paired(topo, group)
    slots = 2 * per_type if paired else per_type
    cap = [slots] * steps
    cap[done - 1] = min(cap[done - 1], topo.in_units(0))
    cap[done] = min(cap[done], topo.out_units(0))
    if sum(cap[:done]) < n - 1 or sum(cap[done:]) < n - 1:
        return False
    if not paired:
        return True
    total = sum(min(slots, cap[t] + cap[steps - 1 - t]) for t in range(steps) if 2 * t < steps - 1)
    if steps % 2:
        mid = steps // 2
        half = min(slots // 2, cap[mid])
        if mid in (done - 1, done):
            half = min(half, _root_step_capacity(topo, group, steps, mid, into=mid < done))
        total += half
    return total >= 2 * (n - 1)


def reduction_steps(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]],
                    steps: int) -> list[int]:
    """The steps at which chip 0 may complete the template chunk, those that pass :func:`fits`,
    nearest the middle first and, paired, one of each mirrored pair ``d``, ``steps - d`` (the
    time-reversed template of one is a template of the other, moved by an odd element). The
    candidates whose step ``done - 1`` or ``done`` is the self-paired middle step go last:
    chip 0's own links leave that step least room (on ``hypercube:5`` at 13 steps Z3 finds no
    template for 6 or 7 in 2 s, and one for 8 in 0.1 s)."""
    low = max(dist[u][0] for u in range(topo.n))
    high = steps - max(dist[0][u] for u in range(topo.n))
    ok = [d for d in range(max(low, 1), high + 1) if fits(topo, group, steps, d)]
    if _paired(topo, group):  # the mirror of a template is a template of the mirrored step
        ok = [d for d in ok if 2 * d >= steps or steps - d not in ok]
    return sorted(ok, key=lambda d: (abs(2 * d - steps) <= 1, abs(2 * d - steps), -d))


def _encode(topo: Topology, group: CayleyGroup, steps: int,
            arcsets: list[list[tuple[int, int, int, bool]]]
            ) -> tuple[z3.Solver, list[list[z3.BoolRef]]]:
    """One Boolean per arc of each template chunk; per chunk and chip exactly one reduction send
    and one broadcast receive; an arc ``u -> w`` of the reduction needs ``w`` to send later, one
    of the broadcast needs ``u`` to have received earlier; slot capacities, shared by the
    chunks."""
    ctx = z3.Context()  # its own: Z3's search then does not depend on what else was built
    s = z3.Solver(ctx=ctx)
    paired = _paired(topo, group)
    slots: dict[tuple[int, int, int], list[z3.BoolRef]] = {}
    every = []
    for j, arcs in enumerate(arcsets):
        bools = [z3.Bool(f"c{j}.{'reduce' if red else 'broadcast'}[{u}->{w}]@t{t}", ctx)
                 for t, u, w, red in arcs]
        every.append(bools)
        at: dict[tuple[bool, int, int], list[z3.BoolRef]] = {}  # (reduction?, chip, step) -> arcs
        for b, (t, u, w, red) in zip(bools, arcs, strict=True):
            at.setdefault((red, u if red else w, t), []).append(b)
        when = {key: z3.Bool(f"c{j}.{'sends' if key[0] else 'receives'}[{key[1]}]@t{key[2]}",
                             ctx)
                for key in at}
        per_chip: dict[tuple[bool, int], list[z3.BoolRef]] = {}
        for key, bs in at.items():
            s.add(when[key] == any_of(bs), at_most(bs, 1))
            per_chip.setdefault(key[:2], []).append(when[key])
        for ws in per_chip.values():
            s.add(any_of(ws), at_most(ws, 1))
        for b, (t, u, w, red) in zip(bools, arcs, strict=True):
            if red and w:
                later = [when[k] for k in ((True, w, x) for x in range(t + 1, steps)) if k in when]
                s.add(z3.Implies(b, any_of(later, ctx)))
            elif not red and u:
                earlier = [when[k] for k in ((False, u, x) for x in range(t)) if k in when]
                s.add(z3.Implies(b, any_of(earlier, ctx)))
            for slot in _slots(topo, group, steps, u, w, t, paired):
                slots.setdefault(slot, []).append(b)
    for (_t, typ, _c), bs in slots.items():
        s.add(at_most(bs, topo.links[(0, typ)]))
    return s, every


def _done_tuples(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]], steps: int,
                 per_root: int) -> list[tuple[int, ...]]:
    """Completion steps of ``per_root`` template chunks. One chunk: :func:`reduction_steps`
    (its own order). Several: each step one that :func:`fits` alone, among the
    :data:`NEAR_STEPS` nearest the middle; the total within ``steps`` times chip 0's links; one
    of each mirrored tuple where paired; none where the encoding would exceed
    :data:`MAX_CHOICES`; at most :data:`MAX_TUPLES`, nearest the middle first and, among those,
    the tuples that are their own mirror (``torus:4x4`` with 32 chunks at 15 steps: ``(7, 8)``
    in 0.07 s, ``(7, 7)`` unknown after 20 s; the same on ``torus:4x8``, ``torus:6x6``,
    ``hypercube:5``)."""
    if per_root == 1:
        return [(d,) for d in reduction_steps(topo, group, dist, steps)]
    if per_root * 2 * (topo.n - 1) > steps * topo.out_units(0):
        return []
    low = max(dist[u][0] for u in range(topo.n))
    high = steps - max(dist[0][u] for u in range(topo.n))
    if high < max(low, 1) or per_root * len(_arcs(topo, dist, steps, (low + high) // 2)) > MAX_CHOICES:
        return []
    near = sorted(range(max(low, 1), high + 1), key=lambda d: abs(2 * d - steps))[:NEAR_STEPS]
    ok = sorted(d for d in near if fits(topo, group, steps, d))
    paired = _paired(topo, group)
    found = []
    for ds in itertools.combinations_with_replacement(ok, per_root):
        mirror = tuple(sorted(steps - d for d in ds))
        if paired and mirror < ds and all(d in ok for d in mirror):
            continue
        found.append((sum(abs(2 * d - steps) for d in ds), paired and mirror != ds, ds))
    return [ds for *_key, ds in sorted(found)[:MAX_TUPLES]]


def template(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]], steps: int,
             deadline: float, per_root: int = 1) -> tuple[str, list[list[tuple[int, int, int]]]]:
    """``("sat", [[(step, u, v), ...], ...])``, the links of each of the ``per_root`` template
    chunks reduced into chip 0, or ``("unsat" | "unknown", [])``.

    One encoding per tuple of completion steps (:func:`reduction_steps`, :func:`_done_tuples`);
    Z3 gets them in rounds, each attempt a slice of time with a new random seed, since its time
    on one encoding varies several-fold with the seed (GroqRack at 13 steps, completion step 8:
    0.7-5.2 s for 11 of 12 seeds, the twelfth over 8 s). Every round tries every candidate:
    which one Z3 solves fast is not predictable (``torus:4x4x4`` at 21 steps: completion step 12
    is first and unknown after 8 s with each of 4 seeds, 13 is solved in 0.6-1.1 s; GroqRack: 8
    is solved, 9 is not), and adding them one round at a time reached 13 there only after
    9.4 s."""
    dones = _done_tuples(topo, group, dist, steps, per_root)
    if not dones:
        return "unsat", []
    built: dict[tuple[int, ...], tuple[z3.Solver, list[list[z3.BoolRef]], list]] = {}
    settled: set[tuple[int, ...]] = set()
    slice_s = FIRST_SLICE_S
    for seed in itertools.count():
        for done in dones:
            if done in settled:
                continue
            if done not in built:
                arcsets = [_arcs(topo, dist, steps, d) for d in done]
                size = sum(map(len, arcsets))
                if size > MAX_CHOICES or (
                        deadline - time.monotonic() < size * BUILD_SECONDS_PER_ARC):
                    settled.add(done)  # the build cannot be interrupted: do not overrun
                    continue
                built[done] = (*_encode(topo, group, steps, arcsets), arcsets)
            s, bools, arcsets = built[done]
            s.set("random_seed", seed)
            res = check_until(s, min(deadline, time.monotonic() + slice_s))
            if res == z3.sat:
                m = s.model()
                return "sat", [sorted((t, u, w) for b, (t, u, w, _r) in zip(bs, arcs, strict=True)
                                      if z3.is_true(m.eval(b, model_completion=True)))
                               for bs, arcs in zip(bools, arcsets, strict=True)]
            if res == z3.unsat:
                settled.add(done)
            if time.monotonic() >= deadline - 0.05:
                return "unknown", []
        if len(settled) == len(dones):
            return ("unsat" if all(d in built for d in dones) else "unknown"), []
        slice_s *= 1.5
    return "unknown", []  # pragma: no cover - itertools.count never ends


def cayley_allreduce(topo: Topology, group: CayleyGroup, dist: Sequence[Sequence[int]],
                     steps: int, deadline: float, per_root: int = 1) -> list[TransferT] | None:
    """An allreduce of ``per_root * n`` chunks in ``steps`` steps from ``per_root`` templates
    (module docstring), chunk ``(0, j*n + v)`` the ``j``-th one reduced to chip ``v``; None when
    Z3 finds none before ``deadline``."""
    verdict, templates = template(topo, group, dist, steps, deadline, per_root)
    if verdict != "sat":
        return None
    trs: list[TransferT] = []
    par = group.parity if _paired(topo, group) else None
    odd = next(v for v in range(topo.n) if par[v]) if par is not None else 0
    for j, arcs in enumerate(templates):
        base = j * topo.n
        for g in group.elements:
            if par is not None and par[g[0]]:
                continue
            trs += [(t, g[u], g[v], (0, base + g[0])) for t, u, v in arcs]
            if par is not None:
                h = [g[x] for x in group.elements[odd]]
                trs += [(steps - 1 - t, h[v], h[u], (0, base + h[0])) for t, u, v in arcs]
    return sorted(trs)
