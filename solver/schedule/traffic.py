"""Traffic matrices for ``collective="traffic"``: read from a JSON file, or derived from a
parallel layout (the point-to-point traffic of tensor, pipeline and data parallelism).

A traffic matrix is a list of ``(src, dst, chunks)``: ``chunks`` unit chunks from chip ``src``
to chip ``dst``, no combining (model of ``../shared/bench/README.md``).

File formats (``accelkb schedule --collective traffic --traffic FILE``)::

    {"traffic": [[0, 1, 4], {"src": 1, "dst": 2, "chunks": 4}, ...]}
    {"matrix": [[0, 4, 0], [0, 0, 4], [4, 0, 0]]}     # row = source, column = destination

Layout traffic (:func:`layout_traffic`) places ranks as Megatron-LM does, tensor-parallel
innermost: chip ``(d * pp + s) * tp + t`` holds tensor rank ``t`` of pipeline stage ``s`` of
data-parallel replica ``d``, so a tensor group is ``tp`` consecutive chips (one node).

- ``tensor``: in each tensor group every ordered pair exchanges ``chunks`` chunks: one phase
  (reduce-scatter or all-gather) of a tensor-parallel all-reduce done point to point; the
  all-reduce is two such phases, one after the other.
- ``pipeline``: chip ``(d, s, t)`` sends ``chunks`` chunks to ``(d, s+1, t)``: the activations
  of one micro-batch crossing every stage boundary (the backward pass sends the transpose).
- ``data``: in each data-parallel group (same stage and tensor rank) every ordered pair
  exchanges ``chunks`` chunks: one phase of the gradient all-reduce done point to point.
- ``all``: the three at once, what overlapped parallelism puts on the network together.

Examples
--------
>>> layout_traffic(2, 2, 1, "pipeline", chunks=3)
[(0, 2, 3), (1, 3, 3)]
>>> layout_traffic(2, 1, 1, "tensor")
[(0, 1, 1), (1, 0, 1)]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelkb.errors import InputError
from accelkb.jsonio import strict_json

KINDS = ("tensor", "pipeline", "data", "all")

Demand = list[tuple[int, int, int]]


def _chip(d: int, s: int, t: int, tp: int, pp: int) -> int:
    return (d * pp + s) * tp + t


def layout_traffic(tp: int, pp: int, dp: int, kind: str, chunks: int = 1) -> Demand:
    """Traffic of a ``tp x pp x dp`` layout (module docstring); pairs in ascending order.

    Raises
    ------
    InputError
        a degree or ``chunks`` below 1, an unknown ``kind``, or a kind with no traffic (e.g.
        ``tensor`` with ``tp=1``).
    """
    for name, value in (("tp", tp), ("pp", pp), ("dp", dp), ("chunks", chunks)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"expected {name} to be an integer >= 1, got {value!r}")
    if kind not in KINDS:
        raise InputError(f"expected a traffic kind among {', '.join(KINDS)}, got {kind!r}")
    pairs: dict[tuple[int, int], int] = {}

    def add(a: int, b: int) -> None:
        pairs[(a, b)] = pairs.get((a, b), 0) + chunks

    for d in range(dp):
        for s in range(pp):
            for t in range(tp):
                here = _chip(d, s, t, tp, pp)
                if kind in ("tensor", "all"):
                    for t2 in range(tp):
                        if t2 != t:
                            add(here, _chip(d, s, t2, tp, pp))
                if kind in ("pipeline", "all") and s + 1 < pp:
                    add(here, _chip(d, s + 1, t, tp, pp))
                if kind in ("data", "all"):
                    for d2 in range(dp):
                        if d2 != d:
                            add(here, _chip(d2, s, t, tp, pp))
    if not pairs:
        degree = {"tensor": "tp", "pipeline": "pp", "data": "dp"}.get(kind, "tp, pp or dp")
        raise InputError(f"expected {degree} > 1 for {kind} traffic, got tp={tp}, pp={pp}, "
                         f"dp={dp}: no chip sends anything")
    return [(a, b, k) for (a, b), k in sorted(pairs.items())]


#: Most chunks one traffic entry may ask for: the schedule holds every chunk, and the solver
#: stops long before (a 576-chip all-to-all is 331,200 chunks).
MAX_CHUNKS_PER_ENTRY = 1_000_000


def _count(value: Any, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"expected {what} as an integer >= 0 at {where}, got {value!r}")
    if value > MAX_CHUNKS_PER_ENTRY:
        raise InputError(f"expected {what} of at most {MAX_CHUNKS_PER_ENTRY:,} at {where}, "
                         f"got {value:,}")
    return value


def parse_traffic(data: Any, where: str = "traffic file") -> Demand:
    """The ``(src, dst, chunks)`` entries of a decoded traffic document (module docstring);
    entries with 0 chunks are dropped.

    >>> parse_traffic({"matrix": [[0, 2], [1, 0]]})
    [(0, 1, 2), (1, 0, 1)]

    Raises
    ------
    InputError
        naming the entry that is malformed, what was expected and what was found.
    """
    if not isinstance(data, dict) or not ({"traffic", "matrix"} & data.keys()):
        raise InputError(f"expected a JSON object with a 'traffic' list or a 'matrix' in "
                         f"{where}, got {type(data).__name__}"
                         + (f" with keys {sorted(data)}" if isinstance(data, dict) else ""))
    out: Demand = []
    if "matrix" in data:
        rows = data["matrix"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows) or \
                any(len(r) != len(rows) for r in rows):
            raise InputError(f"expected 'matrix' in {where} to be a square list of lists, got "
                             f"{json.dumps(rows)[:80]}")
        for s, row in enumerate(rows):
            for d, value in enumerate(row):
                k = _count(value, f"{where}: matrix[{s}][{d}]", "a chunk count")
                if s == d and k:
                    raise InputError(f"expected 0 on the diagonal of 'matrix' in {where} (a chip "
                                     f"does not send to itself), got {k} at matrix[{s}][{d}]")
                if k:
                    out.append((s, d, k))
    else:
        entries = data["traffic"]
        if not isinstance(entries, list):
            raise InputError(f"expected 'traffic' in {where} to be a list, got "
                             f"{type(entries).__name__}")
        for i, e in enumerate(entries):
            at = f"{where}: traffic[{i}]"
            if isinstance(e, dict):
                missing = {"src", "dst", "chunks"} - e.keys()
                if missing:
                    raise InputError(f"expected keys src, dst, chunks at {at}, got {sorted(e)}")
                e = [e["src"], e["dst"], e["chunks"]]
            if not isinstance(e, list) or len(e) != 3:
                raise InputError(f"expected [src, dst, chunks] at {at}, got {json.dumps(e)[:80]}")
            s, d, k = (_count(x, at, name) for x, name in zip(e, ("src", "dst", "chunks"),
                                                              strict=True))
            if s == d:
                raise InputError(f"expected distinct src and dst at {at}, got {s} twice")
            if k:
                out.append((s, d, k))
    if not out:
        raise InputError(f"expected at least one entry with chunks > 0 in {where}, got none")
    return out


def read_traffic(path: str | Path) -> Demand:
    """:func:`parse_traffic` of a JSON file.

    Raises
    ------
    InputError
        unreadable file, invalid JSON, or a malformed entry.
    """
    p = Path(path)
    try:
        data = strict_json(p.read_text("utf-8"), str(p), "a readable JSON traffic file")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"expected a readable JSON traffic file, got {str(p)!r}: {exc}") from None
    return parse_traffic(data, where=str(p))

