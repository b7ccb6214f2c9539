"""Collectives: alpha-beta times on the system's real (hierarchical) topology.

A group of ``n`` chips whose members sit ``stride`` chips apart (tensor-parallel groups have
stride 1, pipeline neighbours stride ``tp``, data-parallel groups stride ``tp x pp``) is mapped onto
the network levels, innermost first. At level ``i`` the group has ``n_i`` members per enclosing
group; each level contributes ``steps x alpha_i + volume_i / (B_i x link_efficiency)``, where
``alpha_i = latency_i x hops + collective_step_latency_s``.

Algorithms: ``ring`` (flat ring over all members, limited by the slowest level crossed),
``hierarchical`` (ring inside each level, reduce-scatter inwards-out then all-gather back),
``tree`` (binary double tree: ``2 log2 n`` latency steps, ``2 S / B`` volume; only for groups that
span several levels, as NCCL uses trees between nodes), ``direct`` (every member sends straight to
every other: one latency step of ``max_hops``; only on fully connected levels) and ``auto`` (the
fastest of those that apply, as NCCL would pick).

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> from accelkb.perf.specs import NetworkLevelSpec
>>> lv = [NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=3e11,
...                        latency_s=1e-6, topology="switch")]
>>> t = collective_time("all_reduce", 1e9, 8, lv, cal=load_calibration(), algorithm="ring")
>>> t > 2 * 7 / 8 * 1e9 / 3e11
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from accelkb.errors import InputError

from .calibration import Calibration
from .execution.nccl import OPS as NCCL_OPS
from .execution.nccl import nccl_time
from .specs import NetworkLevelSpec

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p")
ALGORITHMS = ("auto", "ring", "hierarchical", "tree", "direct")


def split_group(n: int, stride: int, levels: Sequence[NetworkLevelSpec]) -> list[tuple[int, int]]:
    """Members per level: ``[(level_index, n_i), ...]`` with ``prod(n_i) == n``, innermost first.

    Raises
    ------
    InputError
        If the group does not fit in the outermost level.
    """
    if n < 1 or stride < 1:
        raise InputError(f"expected a positive group size and stride, got n={n}, stride={stride}")
    out: list[tuple[int, int]] = []
    inside = 1
    for i, lvl in enumerate(levels):
        members = min(n, max(1, lvl.group_chips // stride))
        if members > inside:
            out.append((i, -(-members // inside)))
            inside = members
        if inside >= n:
            return out
    raise InputError(f"expected a group of {n} chips (stride {stride}) to fit the system's "
                     f"{levels[-1].group_chips} chips, got too few")


def _alpha(lvl: NetworkLevelSpec, cal: Calibration, hops: int = 1) -> float:
    return lvl.latency_s * hops + cal.collective_step_latency_s


def _bw(lvl: NetworkLevelSpec, cal: Calibration) -> float:
    return lvl.bandwidth_bytes_per_s_per_chip * cal.link_efficiency


def _ring_factor(op: str, k: int) -> tuple[float, int]:
    """(volume factor of S, latency steps) of a ring collective over ``k`` members."""
    if op == "all_reduce":
        return 2.0 * (k - 1) / k, 2 * (k - 1)
    return (k - 1) / k, k - 1  # all_gather, reduce_scatter, all_to_all (pairwise)


def _hierarchical(op: str, size: float, parts: list[tuple[int, int]],
                  levels: Sequence[NetworkLevelSpec], cal: Calibration) -> float:
    t = 0.0
    s = size
    if op == "all_to_all":
        n = math.prod(k for _, k in parts)
        inside = 1
        for i, k in parts:
            frac = (inside * k - inside) / n  # share of data leaving the inner group at level i
            t += frac * size / _bw(levels[i], cal) + (k - 1) * _alpha(levels[i], cal)
            inside *= k
        return t
    for i, k in parts:
        vol, steps = _ring_factor(op, k)
        t += vol * s / _bw(levels[i], cal) + steps * _alpha(levels[i], cal)
        s /= k
    return t


def collective_time(
    op: str,
    size_bytes: float,
    n: int,
    levels: Sequence[NetworkLevelSpec],
    cal: Calibration,
    stride: int = 1,
    algorithm: str = "auto",
) -> float:
    """Time of one collective, seconds.

    Parameters
    ----------
    op
        ``all_reduce`` (size = buffer), ``all_gather`` (size = gathered output),
        ``reduce_scatter`` (size = input), ``all_to_all`` (size = data each chip holds) or
        ``p2p`` (size = message to the member ``stride`` chips away).
    n, stride
        Group size and distance between members in chip order.

    Raises
    ------
    InputError
        For an unknown operation or algorithm or a group that does not fit.
    """
    if op not in OPS:
        raise InputError(f"expected a collective among {OPS}, got {op!r}")
    if algorithm not in ALGORITHMS:
        raise InputError(f"expected an algorithm among {ALGORITHMS}, got {algorithm!r}")
    if size_bytes < 0:
        raise InputError(f"expected a non-negative message size, got {size_bytes}")
    if op == "p2p":
        lvl = levels[split_group(2, stride, levels)[-1][0]]
        return size_bytes / _bw(lvl, cal) + _alpha(lvl, cal)
    if n == 1 or size_bytes == 0:
        return 0.0
    parts = split_group(n, stride, levels)
    if levels[0].library == "nccl" and op in NCCL_OPS and algorithm == "auto":
        return nccl_time(op, size_bytes, n, levels, cal, parts)[0]
    outer = levels[parts[-1][0]]
    slowest = min((levels[i] for i, _ in parts), key=lambda lv: lv.bandwidth_bytes_per_s_per_chip)
    cands: dict[str, float] = {}
    vol, steps = _ring_factor(op, n)
    cands["ring"] = vol * size_bytes / _bw(slowest, cal) + steps * _alpha(outer, cal)
    cands["hierarchical"] = _hierarchical(op, size_bytes, parts, levels, cal)
    if op in ("all_reduce", "all_gather", "reduce_scatter") and len(parts) > 1:
        # trees pay off across levels (NCCL uses them between nodes, rings inside one)
        mult = 2.0 if op == "all_reduce" else 1.0
        depth = math.ceil(math.log2(n))
        cands["tree"] = mult * (size_bytes / _bw(slowest, cal) + depth * _alpha(outer, cal))
    if all(levels[i].topology == "full" for i, _ in parts):
        # one-shot exchange needs a wire to every member (fully connected levels only)
        hops = max(levels[i].max_hops for i, _ in parts)
        direct_steps = 2 if op == "all_reduce" else 1
        cands["direct"] = vol * size_bytes / _bw(slowest, cal) + \
            direct_steps * _alpha(outer, cal, hops)
    if algorithm == "auto":
        return min(cands.values())
    if algorithm not in cands:
        raise InputError(f"expected an algorithm among {sorted(cands)} for {op}, got {algorithm!r}")
    return cands[algorithm]


def lower_bounds(op: str, size_bytes: float, n: int, levels: Sequence[NetworkLevelSpec],
                 stride: int = 1) -> tuple[float, float]:
    """(bandwidth bound, latency bound) of a collective with ideal links and no software cost.

    The bandwidth bound is the volume each chip must send over its slowest crossed level at full
    link rate; the latency bound is ``ceil(log2 n)`` hardware hops at the outermost level.
    """
    if n <= 1:
        return 0.0, 0.0
    parts = split_group(n, stride, levels)
    slow = min(levels[i].bandwidth_bytes_per_s_per_chip for i, _ in parts)
    vol = 2.0 * (n - 1) / n if op == "all_reduce" else (n - 1) / n
    lat = math.ceil(math.log2(n)) * levels[parts[-1][0]].latency_s
    return vol * size_bytes / slow, lat
