"""Large Boolean terms for Z3 without the Python-side coercion cost of ``z3.Or``/``z3.AtMost``.

``z3.Or(list)`` and ``z3.AtMost(*list, k)`` check and cast every argument in Python (about 3 µs
each); the schedule encodings build hundreds of thousands of such terms, which made encoding,
not solving, the cost of a synthesis (switch:8 all-to-all, 4 chunks: 22 s to build against a
10 s limit). These helpers take Boolean expressions of one context and call the C API once.

>>> import z3
>>> a, b = z3.Bools("a b")
>>> s = z3.Solver(); s.add(any_of([a, b]), at_most([a, b], 1), z3.Not(a))
>>> s.check() == z3.sat and z3.is_true(s.model()[b])
True
>>> any_of([])
False
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import z3


def _array(bs: Sequence[z3.BoolRef]) -> Any:
    return (z3.Ast * len(bs))(*[b.as_ast() for b in bs])


def _nary(mk: Any, bs: Sequence[z3.BoolRef], empty: bool, ctx: z3.Context | None) -> z3.BoolRef:
    if not bs:
        return z3.BoolVal(empty, ctx)
    if len(bs) == 1:
        return bs[0]
    ctx = bs[0].ctx
    return z3.BoolRef(mk(ctx.ref(), len(bs), _array(bs)), ctx)


def any_of(bs: Sequence[z3.BoolRef], ctx: z3.Context | None = None) -> z3.BoolRef:
    """The disjunction of ``bs`` (``False`` when empty, in ``ctx``: the main one by default)."""
    return _nary(z3.Z3_mk_or, bs, False, ctx)


def all_of(bs: Sequence[z3.BoolRef], ctx: z3.Context | None = None) -> z3.BoolRef:
    """The conjunction of ``bs`` (``True`` when empty, in ``ctx``: the main one by default)."""
    return _nary(z3.Z3_mk_and, bs, True, ctx)


def at_most(bs: Sequence[z3.BoolRef], k: int) -> z3.BoolRef:
    """At most ``k`` of ``bs`` are true (``True`` when there are no more than ``k``)."""
    if len(bs) <= k:
        return z3.BoolVal(True, bs[0].ctx if bs else None)
    ctx = bs[0].ctx
    return z3.BoolRef(z3.Z3_mk_atmost(ctx.ref(), len(bs), _array(bs), k), ctx)


def check_until(s: z3.Solver, deadline: float) -> z3.CheckSatResult:
    """``s.check()`` limited to what is left before ``deadline`` (``time.monotonic()``
    seconds); ``unknown`` without solving when less than 50 ms is left."""
    left = deadline - time.monotonic()
    if left <= 0.05:
        return z3.unknown
    s.set("timeout", max(1, int(left * 1000)))
    return s.check()
