"""Search: Z3 enumerates the feasible layouts (lazy perf clauses + blocking clauses).

Method: Z3 proposes a layout satisfying every tracked structural constraint; the performance
module checks memory, streaming and budgets (``theory_clauses``); a broken layout is excluded
under its constraint's tracking literal, a feasible one is recorded and excluded by an untracked
blocking clause; this repeats until UNSAT (the whole feasible set is known) or the deadline.
Ranking then uses perf's estimates (``rank``). :func:`exhaustive` enumerates the same
domains without Z3 (the independent checker as filter) and is the oracle benchmarks compare
against.

Examples
--------
>>> Outcome("sat", []).state
'sat'
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import z3

from accelkb.errors import InputError
from accelkb.solver.config.check import check_layout
from accelkb.solver.config.encoding import Encoding, encode, theory_clauses
from accelkb.solver.config.instance import Instance
from accelkb.solver.config.model import Layout
from accelkb.solver.config.theory import estimate

ScoreFn = Callable[[Layout], "tuple[float, float] | None"]


@dataclass
class Outcome:
    """What a search found: ``state`` is sat (complete), partial (deadline), unsat or unknown."""

    state: str
    layouts: list[Layout]
    core: list[str] = field(default_factory=list)
    learned: list[tuple[str, z3.BoolRef]] = field(default_factory=list)
    checks: int = 0


def perf_score(inst: Instance) -> ScoreFn:
    """(time, tokens/s) of a layout from perf, None when perf refuses it (memoised)."""
    cache: dict[Layout, tuple[float, float] | None] = {}

    def score(lay: Layout) -> tuple[float, float] | None:
        if lay not in cache:
            try:
                t, tok, _, _ = estimate(inst, lay)
                cache[lay] = (t, tok)
            except InputError:
                cache[lay] = None
        return cache[lay]
    return score


def find(enc: Encoding, deadline: float, score: ScoreFn, limit: int = 1,
         learned: list[tuple[str, z3.BoolRef]] | None = None) -> Outcome:
    """Find up to ``limit`` feasible layouts (``limit=0``: all) before ``deadline``.

    Learned theory clauses from earlier searches (``learned``) are replayed first; clauses of
    constraints that are not active are skipped.
    """
    s = enc.solver
    out = Outcome("unsat", [], learned=list(learned or []))
    for key, clause in out.learned:
        enc.add(key, clause)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            out.state = "partial" if out.layouts else "unknown"
            return out
        s.set("timeout", max(1, int(left * 1000)))
        res = s.check()
        out.checks += 1
        if res == z3.unknown:
            out.state = "partial" if out.layouts else "unknown"
            return out
        if res == z3.unsat:
            if out.layouts:
                out.state = "sat"
            else:
                out.core = sorted({enc.key_of(lit) for lit in s.unsat_core()})
            return out
        lay = enc.decode(s.model())
        broken = theory_clauses(enc, lay, score)
        if broken:
            for key, clause in broken:
                enc.add(key, clause)
                out.learned.append((key, clause))
            continue
        if score(lay) is None:  # perf refuses a layout the declared constraints accept
            s.add(z3.Not(enc.equals(lay, _names())))
            continue
        out.layouts.append(lay)
        if limit and len(out.layouts) >= limit:
            out.state = "sat"
            return out
        s.add(z3.Not(enc.equals(lay, _names())))


def _names() -> tuple[str, ...]:
    from accelkb.solver.config.encoding import ALL_VARS
    return ALL_VARS


def feasible_set(inst: Instance, timeout_s: float) -> tuple[Outcome, Encoding]:
    """Enumerate every feasible layout of ``inst`` with Z3 within ``timeout_s``."""
    enc = encode(inst)
    out = find(enc, time.monotonic() + timeout_s, perf_score(inst), limit=0)
    return out, enc


def domain(inst: Instance) -> Iterator[Layout]:
    """Every combination of the instance's domains (training: dp from the chip counts)."""
    if inst.training:
        for n, tp, pp in itertools.product(inst.chip_counts, inst.tp, inst.pp):
            if n % (tp * pp):
                continue
            for mb, v, rc, sp, z, prec, off in itertools.product(
                    inst.micro_batch, inst.interleave, inst.recompute, inst.sequence_parallel,
                    inst.zero, inst.precision, inst.offload):
                yield Layout(tp=tp, pp=pp, dp=n // (tp * pp), micro_batch=mb, interleave=v,
                             recompute=rc, sequence_parallel=sp, zero=z,  # type: ignore
                             precision=prec, offload_optimizer=off)
        return
    whole = inst.request.objective == "throughput"
    for tp, pp, b, prec, pl in itertools.product(inst.tp, inst.pp, inst.batch, inst.precision,
                                                 inst.pipelined):
        reps = max(1, inst.max_chips // (tp * pp)) if whole else 1
        yield Layout(tp=tp, pp=pp, dp=reps, batch=b, precision=prec, pipelined=pl)


def exhaustive(inst: Instance) -> list[Layout]:
    """All feasible layouts by plain enumeration, filtered by the independent checker (no Z3)."""
    score = perf_score(inst)
    return [lay for lay in domain(inst) if not check_layout(inst, lay, score)]
