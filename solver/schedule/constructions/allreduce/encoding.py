"""Z3 encoding of allreduce within a fixed number of steps: exact schedules and optimality proofs.

State: ``know[j][v][w]@t`` -- chip ``v``'s partial sum of chunk ``j`` contains rank ``w``'s
contribution at the start of step ``t``. A send of chunk ``j`` over ``u->v`` in step ``t`` adds
``u``'s contributions to ``v``'s from step ``t+1`` on.

Two modes (one function per constraint group below):

- **relaxed** (``exact=False``): knowledge only grows by union -- one-way gossip. Every valid
  reduction schedule is a solution (a partial sum never holds more than the union of what
  reached the chip), so **UNSAT with T steps proves that no allreduce fits in T steps**.
  A SAT answer may double-count and is only a candidate for the checker.
- **exact** (``exact=True``): what the replay accepts, less arrivals that change nothing. At
  most one arrival of a step is a *base*: it holds everything the chip holds and replaces the
  chip's value; the other arrivals are pairwise disjoint and disjoint from the base (from the
  chip's value when there is no base). SAT decodes to a schedule the independent checker
  accepts. UNSAT is a proof too: in any valid schedule, an arrival the replay ignores (a
  subset of what the chip then holds) or that a later base swallows can be dropped without
  changing any chip's value, and what is left is of this form. So both modes prove
  optimality; the relaxed one is smaller and is tried first.

Every Z3 name says what it means: ``know[c=3][v=4][w=0]@t2``, ``send[c=3][1->4]@t1``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from accelkb.solver.schedule.model import TransferT
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.z3fast import all_of, any_of, at_most, check_until

MAX_STATE_VARIABLES = 120_000  # knowledge variables worth handing to Z3 within seconds
ENCODE_SECONDS_PER_TERM = 7e-5  # building the constraints (Python + z3 API): at most 68 us
# measured with z3fast (exact mode, torus:4x4, 2 chunks, 4 steps; 25-52 us on the dragonflies)


@dataclass(frozen=True)
class AllreduceProblem:
    """Allreduce of ``chunks`` unit chunks on ``topology`` within ``steps`` steps."""

    topology: Topology
    chunks: int
    steps: int
    exact: bool


def state_size(p: AllreduceProblem, dist: Sequence[Sequence[int]]) -> int:
    """Knowledge variables the encoding creates (the rest are constants)."""
    n = p.topology.endpoints
    # (v, w) at distance d >= 1 is a variable in steps d .. p.steps
    per_chunk = sum(p.steps - d + 1 for v in range(p.topology.n) for w in range(n)
                    if v != w and 0 <= (d := dist[w][v]) <= p.steps)
    return per_chunk * p.chunks


def encode_seconds(p: AllreduceProblem, dist: Sequence[Sequence[int]]) -> float:
    """About how long :func:`encode` takes: one term per knowledge variable and in-link.

    The build cannot be interrupted, so :func:`solve` skips it when it would overrun the
    deadline."""
    links = len(p.topology.links) / max(p.topology.n, 1)
    return state_size(p, dist) * (links + 1) * ENCODE_SECONDS_PER_TERM


def _knowledge(p: AllreduceProblem, dist: Sequence[Sequence[int]]) -> list[list[list[list]]]:
    """know[j][t][v][w]: a Z3 Bool, or a Python bool where the distance decides it."""
    n, nv = p.topology.endpoints, p.topology.n
    know: list[list[list[list]]] = []
    for j in range(p.chunks):
        per_t = []
        for t in range(p.steps + 1):
            rows = []
            for v in range(nv):
                row: list = []
                for w in range(n):
                    if v == w:
                        row.append(True)
                    elif dist[w][v] < 0 or dist[w][v] > t:
                        row.append(False)
                    else:
                        row.append(z3.Bool(f"know[c={j}][v={v}][w={w}]@t{t}"))
                rows.append(row)
            per_t.append(rows)
        know.append(per_t)
    return know


def _sends(p: AllreduceProblem, dist: Sequence[Sequence[int]]) -> dict:
    """send[(j, u, v, t)]: chunk ``j`` over ``u->v`` in step ``t`` (``u`` must hold something:
    a switch only from its distance to the nearest rank on)."""
    n = p.topology.endpoints
    near = [min(dist[w][u] for w in range(n)) for u in range(p.topology.n)]
    return {(j, u, v, t): z3.Bool(f"send[c={j}][{u}->{v}]@t{t}")
            for j in range(p.chunks) for (u, v) in sorted(p.topology.links)
            for t in range(max(near[u], 0), p.steps)}


def _lit(x, s_and=None):
    if isinstance(x, bool):
        return z3.BoolVal(x)
    return x


def _add_transition(s: z3.Solver, p: AllreduceProblem, know, send: dict) -> None:
    """A chip's contributions grow exactly by what arrives: know@t+1 = know@t | arrivals."""
    inn = p.topology.in_neighbors()
    n = p.topology.endpoints
    for j in range(p.chunks):
        for t in range(p.steps):
            for v in range(p.topology.n):
                for w in range(n):
                    nxt = know[j][t + 1][v][w]
                    if isinstance(nxt, bool):
                        continue
                    terms = [_lit(know[j][t][v][w])]
                    for u in inn[v]:
                        b = send.get((j, u, v, t))
                        k = know[j][t][u][w]
                        if b is not None and k is not False:
                            terms.append(b if k is True else all_of([b, k]))
                    s.add(nxt == any_of(terms))


def _add_capacity(s: z3.Solver, p: AllreduceProblem, send: dict) -> None:
    """No unit link carries more than one chunk per step: collision-free by construction."""
    per: dict[tuple[int, int, int], list] = {}
    for (_j, u, v, t), b in send.items():
        per.setdefault((u, v, t), []).append(b)
    for (u, v, _t), bs in per.items():
        if len(bs) > p.topology.links[(u, v)]:
            s.add(at_most(bs, p.topology.links[(u, v)]))


def _add_holding(s: z3.Solver, p: AllreduceProblem, know, send: dict) -> None:
    """A switch sends a chunk only once it holds a partial sum of it."""
    n = p.topology.endpoints
    for (j, u, _v, t), b in send.items():
        if u >= n:
            held = [x for x in know[j][t][u] if x is not False]
            s.add(z3.Implies(b, any_of([_lit(x) for x in held])))


def _add_completion(s: z3.Solver, p: AllreduceProblem, know) -> None:
    """Every rank ends with every rank's contribution to every chunk."""
    n = p.topology.endpoints
    for j in range(p.chunks):
        for v in range(n):
            for w in range(n):
                x = know[j][p.steps][v][w]
                if x is False:
                    s.add(z3.BoolVal(False))
                elif x is not True:
                    s.add(x)


def _add_no_double_count(s: z3.Solver, p: AllreduceProblem, know, send: dict) -> dict:
    """Exact mode: at most one arrival of a step is a *base* that contains everything the chip
    holds (the replay lets it replace the chip's value, so it goes first); the other arrivals
    are pairwise disjoint and disjoint from the base, or from the chip's value when there is
    no base. Returns the base variables, ``base[(j, u, v, t)]``, for ordering the decoded
    transfers."""
    inn = p.topology.in_neighbors()
    n = p.topology.endpoints
    bases: dict = {}
    for j in range(p.chunks):
        for t in range(p.steps):
            for v in range(p.topology.n):
                arrivals = [(u, send[(j, u, v, t)]) for u in inn[v] if (j, u, v, t) in send]
                if not arrivals:
                    continue
                base = {u: z3.Bool(f"base[c={j}][{u}->{v}]@t{t}") for u, _ in arrivals}
                for u, b in arrivals:
                    s.add(z3.Implies(base[u], b))
                    bases[(j, u, v, t)] = base[u]
                if len(base) > 1:
                    s.add(at_most(list(base.values()), 1))
                rep = any_of(list(base.values()))
                for w in range(n):
                    held = know[j][t][v][w]
                    parts = [_lit(held)] if held is not False else []
                    carried = []
                    for u, b in arrivals:
                        k = know[j][t][u][w]
                        if k is not False:
                            carried.append(b if k is True else all_of([b, k]))
                    if len(carried) > 1:
                        s.add(at_most(carried, 1))
                    if parts and carried:
                        s.add(any_of([rep, at_most(parts + carried, 1)]))
                    if parts:
                        for u, _ in arrivals:
                            k = know[j][t][u][w]
                            if k is not True:  # the base holds what the chip holds
                                s.add(z3.Implies(all_of([base[u], parts[0]]), _lit(k)))
    return bases


def encode(p: AllreduceProblem, dist: Sequence[Sequence[int]]
           ) -> tuple[z3.Solver, dict, dict]:
    """Build the solver for ``p`` (no solving); returns it with the send variables and (exact
    mode) the base variables."""
    s = z3.Solver()
    know = _knowledge(p, dist)
    send = _sends(p, dist)
    _add_transition(s, p, know, send)
    _add_capacity(s, p, send)
    _add_holding(s, p, know, send)
    _add_completion(s, p, know)
    bases = _add_no_double_count(s, p, know, send) if p.exact else {}
    return s, send, bases


def solve(p: AllreduceProblem, dist: Sequence[Sequence[int]], deadline: float
          ) -> tuple[str, list[TransferT]]:
    """``("sat", transfers)``, ``("unsat", [])`` or ``("unknown", [])`` before ``deadline``.

    ``"unsat"`` is a proof in both modes: no allreduce of ``p.chunks`` chunks fits in
    ``p.steps`` steps. Decoded transfers are listed step by step with a base arrival before the
    other arrivals of its chip, the order in which the replay adds them.
    """
    if deadline - time.monotonic() <= max(0.05, encode_seconds(p, dist)):
        return "unknown", []
    s, send, bases = encode(p, dist)
    res = check_until(s, deadline)
    if res == z3.sat:
        m = s.model()

        def first(key: tuple) -> int:
            b = bases.get(key)
            return 0 if b is not None and z3.is_true(m.eval(b, model_completion=True)) else 1

        chosen = [key for key, b in send.items() if z3.is_true(m.eval(b, model_completion=True))]
        chosen.sort(key=lambda k: (k[3], first(k), k[1], k[2], k[0]))
        return "sat", [(t, u, v, (0, j)) for j, u, v, t in chosen]
    if res == z3.unsat:
        return "unsat", []
    return "unknown", []
