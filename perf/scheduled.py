"""Collective times from collision-free schedules, falling back to the alpha-beta model.

On a network whose transfers the compiler schedules ahead of time (``NetworkLevelSpec.scheduled``,
from ``ak:StaticNetworkScheduling`` in the knowledge base: Groq's C2C network) a collective takes
exactly its schedule's makespan: ``steps x (chunk / unit-link bandwidth + per-hop latency)``, with
the steps synthesized by :func:`accelkb.solver.schedule` on the level's generator topology. No
software cost per step is added there (nothing synchronises at run time); on dynamically routed
networks (GPUs), where ``mode="schedule"`` forces a schedule, the fitted per-step software
latency ``collective_step_latency_s`` is added to each step, as in the alpha-beta model.

Modes: ``alpha-beta`` (never schedule), ``auto`` (schedule on compiler-scheduled levels only) and
``schedule`` (every level whose topology the solver can build). A schedule is used only when the
group is a whole topology (or any subset of a fully connected one), has at most
:data:`MAX_RANKS` ranks and the solver returns a verified schedule within
:data:`TIME_LIMIT_S`; otherwise the alpha-beta time is used and the reason recorded. Synthesis
results (and failures) are memoised per (topology, collective, ranks, chunks, demand) in-process,
so only the first estimate on a network pays for them.

The default (:data:`DEFAULT_MODE`) is ``alpha-beta``; estimates on statically scheduled chips
(:mod:`accelkb.perf.execution.static`, Groq) use ``auto`` unless a mode is asked for. There,
Llama-2 70B decode on groq-576 (tp=8, pp=72, INT8) takes 0.24 ms of all-reduces and 0.13 ms of
pipeline hops per token, where the NCCL-fitted alpha-beta model gave 3.45 ms and 0.78 ms.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> lv = [NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=9.8e10,
...                        latency_s=6e-7, topology="full", generator="full:8", scheduled=True,
...                        link_bandwidth_bytes_per_s=1.4e10)]
>>> secs, info = timed_collective("all_reduce", 1.6e4, 8, lv, load_calibration(), mode="auto")
>>> info.source, info.makespan_steps, info.chunks, round(secs * 1e6, 2)
('schedule', 2, 8, 1.49)
>>> timed_collective("all_reduce", 1.6e4, 8, lv, load_calibration(), mode="alpha-beta")[1].fallback
'alpha-beta requested'
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .calibration import Calibration
from .collectives import collective_time, split_group
from .execution.nccl import OPS as NCCL_OPS
from .execution.nccl import nccl_time
from .specs import NetworkLevelSpec

CollectiveMode = Literal["auto", "schedule", "alpha-beta"]
MODES: tuple[str, ...] = ("auto", "schedule", "alpha-beta")
DEFAULT_MODE: CollectiveMode = "alpha-beta"
MAX_RANKS = 128  # larger groups: synthesis takes seconds to minutes, too slow inside an estimate
TIME_LIMIT_S = 2.0  # wall-clock budget of one synthesis inside an estimate
_SOLVER_OP = {"all_reduce": "allreduce", "all_gather": "allgather",
              "reduce_scatter": "reduce_scatter", "all_to_all": "alltoall", "p2p": "traffic"}


class CollectiveTiming(BaseModel):
    """How one collective of an estimate was timed: the source, and the schedule if any."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: str = Field(description="all_reduce, all_gather, reduce_scatter, all_to_all or p2p")
    ranks: int = Field(description="chips taking part (2 for p2p)")
    bytes: float = Field(description="message size as the alpha-beta model reads it, bytes")
    seconds: float = Field(description="time of one such collective, s")
    source: Literal["schedule", "alpha-beta", "nccl", "fused"] = Field(
        description="where the time comes from ('nccl': NCCL's own cost model, accelkb.perf.execution.nccl, "
        "on levels whose collectives a run-time library launches; 'fused': inside the compute "
        "kernel, no time of its own; see fallback for why)")
    level: str = Field(description="network level the collective runs over")
    topology: str | None = Field(default=None, description="generator spec scheduled on")
    chunks: int | None = Field(default=None, description="chunks per rank of the schedule "
                               "(allreduce: vector chunks)")
    makespan_steps: int | None = Field(default=None, description="steps of the schedule")
    lower_bound_steps: int | None = Field(default=None, description="solver's lower bound")
    status: str | None = Field(default=None, description="OPTIMAL or FEASIBLE")
    fallback: str | None = Field(default=None, description="why no schedule was used "
                                 "(alpha-beta and fused sources)")


_FIELDS = frozenset(CollectiveTiming.model_fields)


def _timing(**values: Any) -> CollectiveTiming:
    """A :class:`CollectiveTiming` from values this module computed (every field given, types
    already right), without validation: model_construct costs ~5 us, several per estimate."""
    obj = CollectiveTiming.__new__(CollectiveTiming)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(_FIELDS))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


@functools.lru_cache(maxsize=4096)
def _synthesize(spec: str, collective: str, chunks: int,
                demand: tuple[tuple[int, int, int], ...]) -> Any:
    """A verified ScheduleResult (transfers dropped) or the reason there is none (str)."""
    try:
        solver = importlib.import_module("accelkb.solver.schedule.api")
        res = solver.schedule(spec, collective, chunks, time_limit_s=TIME_LIMIT_S,
                              demand=list(demand) or None)
    except Exception as exc:  # noqa: BLE001 - any solver failure falls back, with its reason
        return f"solver failed on {spec} {collective}: {type(exc).__name__}: {exc}"
    if res.makespan_steps is None or not res.verified or res.status.value not in (
            "OPTIMAL", "FEASIBLE"):
        return f"solver gave no verified schedule on {spec} ({res.status.value}: {res.proof})"
    return res.model_copy(update={"transfers": ()})


@functools.lru_cache(maxsize=1024)
def _endpoints(spec: str) -> int | str:
    try:
        topo = importlib.import_module("accelkb.solver.schedule.topology")
        return int(topo.parse_topology(spec).endpoints)
    except Exception as exc:  # noqa: BLE001
        return f"cannot build topology {spec!r}: {exc}"


def _plan(op: str, n: int, stride: int, lvl: NetworkLevelSpec,
          ) -> tuple[str, list[tuple[int, tuple[tuple[int, int, int], ...]]]] | str:
    """(generator spec, [(chunks, demand), ...] candidates) or why the group cannot be
    scheduled."""
    spec = lvl.generator
    if spec is None or lvl.link_bandwidth_bytes_per_s is None:
        return f"level {lvl.name} has no generator topology and unit-link bandwidth"
    ends = _endpoints(spec)
    if isinstance(ends, str):
        return ends
    if op == "p2p":
        if stride >= ends:
            return f"members {stride} chips apart do not fit {spec} ({ends} chips)"
        return spec, [(c, ((0, stride, c),)) for c in (1, 4)]
    if stride != 1 or n != ends:
        if stride == 1 and spec.startswith("full:") and n < ends:
            spec = f"full:{n}"  # any subset of a fully connected group is fully connected
        else:
            return (f"group of {n} chips at stride {stride} is not the whole of {spec} "
                    f"({ends} chips); the solver schedules whole topologies")
    if n > MAX_RANKS:
        return f"{n} ranks exceed the {MAX_RANKS}-rank limit for synthesis inside an estimate"
    return spec, [(c, ()) for c in ((1, n) if op == "all_reduce" else (1,))]


def fused_timing(op: str, size_bytes: float, ranks: int, level: str, why: str
                 ) -> CollectiveTiming:
    """The record of a collective that the compiler fuses into the compute kernel, so that it
    takes no time of its own (streaming dataflow decode: :mod:`accelkb.perf.execution.dataflow`)."""
    return _timing(op=op, ranks=ranks, bytes=size_bytes, seconds=0.0, source="fused",
                   level=level, topology=None, chunks=None, makespan_steps=None,
                   lower_bound_steps=None, status=None, fallback=why)


def timed_collective(op: str, size_bytes: float, n: int, levels: Sequence[NetworkLevelSpec],
                     cal: Calibration, stride: int = 1, mode: str | None = None,
                     ) -> tuple[float, CollectiveTiming]:
    """Seconds of one collective and how they were obtained (see the module docs).

    Arguments are those of :func:`accelkb.perf.collectives.collective_time` plus ``mode``
    (None: :data:`DEFAULT_MODE`).

    Raises
    ------
    InputError
        As :func:`collective_time` (unknown operation, group that does not fit).
    """
    asked, mode = mode is not None, mode or DEFAULT_MODE
    ranks = 2 if op == "p2p" else n
    parts = split_group(ranks, stride, levels)
    lvl = levels[parts[-1][0]]
    reason: str
    if mode == "alpha-beta":
        reason = "alpha-beta requested" if asked else \
            "alpha-beta, the default (collectives=auto times it by a schedule where one exists)"
    elif len(parts) > 1:
        reason = f"group spans {len(parts)} network levels; schedules cover one level"
    elif not lvl.scheduled and mode != "schedule":
        reason = (f"level {lvl.name} is dynamically routed (not compiler-scheduled); "
                  "alpha-beta as measured on such networks")
    elif size_bytes == 0 or ranks == 1:
        reason = "nothing to move"
    else:
        plan = _plan(op, n, stride, lvl)
        if isinstance(plan, str):
            reason = plan
        else:
            got = _best(op, size_bytes, n, lvl, cal, *plan)
            if not isinstance(got, str):
                return got.seconds, got
            reason = got
    secs = collective_time(op, size_bytes, n, levels, cal, stride=stride)
    source = "alpha-beta"
    if levels[0].library == "nccl" and op in NCCL_OPS and ranks > 1 and size_bytes > 0:
        source = "nccl"
        reason += f"; {nccl_time(op, size_bytes, n, levels, cal, parts)[1]} as NCCL's cost model picks"
    return secs, _timing(
        op=op, ranks=ranks, bytes=size_bytes, seconds=secs, source=source,
        level=lvl.name, topology=None, chunks=None, makespan_steps=None,
        lower_bound_steps=None, status=None, fallback=reason)


def _best(op: str, size: float, n: int, lvl: NetworkLevelSpec, cal: Calibration, spec: str,
          cands: list[tuple[int, tuple[tuple[int, int, int], ...]]]) -> CollectiveTiming | str:
    """The fastest verified schedule among the chunk counts, or the last failure reason."""
    assert lvl.link_bandwidth_bytes_per_s is not None
    hop = lvl.latency_s + (0.0 if lvl.scheduled else cal.collective_step_latency_s)
    # bytes one chunk carries: allreduce splits the vector, the others each rank's shard
    shard = size if op in ("all_reduce", "p2p") else size / n
    best: CollectiveTiming | None = None
    reason = ""
    for chunks, demand in cands:
        res = _synthesize(spec, _SOLVER_OP[op], chunks, demand)
        if isinstance(res, str):
            reason = res
            continue
        secs = res.seconds(shard / chunks, lvl.link_bandwidth_bytes_per_s, hop)
        if best is None or secs < best.seconds:
            best = _timing(
                op=op, ranks=2 if op == "p2p" else n, bytes=size, seconds=secs,
                source="schedule", level=lvl.name, topology=spec, chunks=chunks,
                makespan_steps=res.makespan_steps, lower_bound_steps=res.lower_bound_steps,
                status=res.status.value, fallback=None)
    return best if best is not None else reason
