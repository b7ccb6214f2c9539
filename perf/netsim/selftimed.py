"""A schedule's own transfers run self-timed: same algorithm, no planned steps.

:mod:`accelkb.perf.netsim` compares a schedule with dynamic routing of the collective's
point-to-point form. For alltoall and traffic matrices that is the same traffic; for allgather,
reduce-scatter, allreduce and broadcast it is also a different *algorithm* (each chunk sent to
every rank as its own message, no forwarding copies, no adding on the way), so that gap mixes
what the algorithm buys with what the planned timing buys.

:func:`self_timed` isolates the timing. Every transfer of the schedule becomes a one-hop message
on its own link, released as soon as its inputs have arrived (data-driven, as a runtime without
a global plan would run the same program):

- a chunk is forwarded once the sender holds it (its first planned arrival, or it is a source);
- a partial sum (reduce-scatter, allreduce) leaves once every arrival the plan adds into it
  before the planned step has come.

Each unit link moves one chunk per step, FIFO in the order messages become ready, ties broken
by seeded random arbitration. One-hop messages have no routing choice, so ECMP and adaptive
routing coincide here. A makespan equal to the schedule's says its timing buys nothing beyond
its algorithm on this instance; a larger one is the cost of contention without the plan; a
smaller one (a plan that idles) is possible too.

For reductions the run keeps the plan's *content*: each send carries the partial sum the plan
gives it (the contributions that reached the sender before its planned step), so the runtime
keeps one buffer per send. A runtime that adds every arrival into a single buffer could count a
contribution twice when a send leaves early; that is not what is modelled.

Examples
--------
>>> from accelkb.solver.schedule.topology import parse_topology
>>> ring = parse_topology("ring:3")
>>> # allgather on ring:3: chip 0's chunk to 1 and 2 in step 0, the rest likewise
>>> trs = [(0, s, (s + k) % 3, (s, 0)) for s in range(3) for k in (1, 2)]
>>> self_timed(ring, "allgather", trs).makespan_steps
1
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence

from accelkb.errors import InputError
from accelkb.perf.netsim.dynamic import SimResult, load_imbalance, percentiles
from accelkb.solver.schedule.model import ChunkId, Instance, TransferT
from accelkb.solver.schedule.topology import Topology

REDUCING = ("reduce_scatter", "allreduce")


def _dependencies(inst: Instance, transfers: Sequence[TransferT]) -> list[list[int]]:
    """For each transfer, the transfers whose arrival it waits for."""
    into: dict[tuple[int, ChunkId], list[int]] = {}
    for i, (_t, _u, v, c) in enumerate(transfers):
        into.setdefault((v, c), []).append(i)
    reducing = inst.collective in REDUCING
    deps: list[list[int]] = []
    for t, u, _v, c in transfers:
        earlier = [j for j in into.get((u, c), []) if transfers[j][0] < t]
        if reducing:
            deps.append(earlier)
        elif u in inst.sources(c) or not earlier:
            deps.append([])
        else:
            deps.append([min(earlier, key=lambda j: transfers[j][0])])
    return deps


def self_timed_transfers(topo: Topology, collective: str, transfers: Sequence[TransferT],
                         chunks: int = 1, seed: int = 0,
                         demand: Sequence[tuple[int, int, int]] = (), root: int = 0
                         ) -> tuple[list[TransferT], int]:
    """The transfers at the steps a data-driven run gives them, and the longest link queue.

    For allgather, broadcast, alltoall and traffic the result is itself a schedule the checker
    accepts; for reductions the content of each partial sum is the plan's, only its time moves.

    Raises
    ------
    InputError
        a transfer on a link the topology lacks.
    """
    inst = Instance(topo, collective, chunks, demand=tuple(demand), root=root)
    for _t, u, v, _c in transfers:
        if topo.links.get((u, v), 0) < 1:
            raise InputError(f"expected transfers on links of {topo.name}, got {u}->{v}")
    deps = _dependencies(inst, transfers)
    waiting = [len(d) for d in deps]
    users: list[list[int]] = [[] for _ in transfers]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    rng = random.Random(seed)
    queues: dict[tuple[int, int], deque[int]] = {}

    def enqueue(batch: list[int]) -> None:
        rng.shuffle(batch)
        for i in batch:
            _t, u, v, _c = transfers[i]
            queues.setdefault((u, v), deque()).append(i)

    enqueue([i for i, w in enumerate(waiting) if w == 0])
    done_at = [-1] * len(transfers)
    step, max_q, sent = 0, 0, 0
    while sent < len(transfers):
        if not any(queues.values()):  # cannot happen: every input is planned earlier
            raise RuntimeError("self-timed run stalled with transfers left")
        ready: list[int] = []
        for e in sorted(queues):
            q = queues[e]
            max_q = max(max_q, len(q))
            for _ in range(min(topo.links[e], len(q))):
                i = q.popleft()
                done_at[i] = step + 1
                sent += 1
                for k in users[i]:
                    waiting[k] -= 1
                    if waiting[k] == 0:
                        ready.append(k)
        enqueue(ready)
        step += 1
    return [(done_at[i] - 1, u, v, c) for i, (_t, u, v, c) in enumerate(transfers)], max_q


def self_timed(topo: Topology, collective: str, transfers: Sequence[TransferT],
               chunks: int = 1, seed: int = 0, demand: Sequence[tuple[int, int, int]] = (),
               root: int = 0) -> SimResult:
    """Run ``transfers`` (``(step, src, dst, chunk)``) data-driven, without their steps:
    makespan and p50/p99 of the last arrival per (destination, chunk), as the dynamic-routing
    runs count them; ``messages`` is the number of one-hop transfers; link utilization.

    Raises
    ------
    InputError
        a transfer on a link the topology lacks.
    """
    timed, max_q = self_timed_transfers(topo, collective, transfers, chunks, seed, demand, root)
    inst = Instance(topo, collective, chunks, demand=tuple(demand), root=root)
    wanted: dict[ChunkId, set[int]] = {}
    last: dict[tuple[int, ChunkId], int] = {}
    for t, _u, v, c in timed:
        if c not in wanted:
            wanted[c] = set(inst.destinations(c))
        if v in wanted[c]:
            last[(v, c)] = max(last.get((v, c), 0), t + 1)
    times = sorted(last.values())
    p50, p99 = percentiles(times)
    makespan = times[-1] if times else 0
    carried: dict[tuple[int, int], int] = {}
    for _t, u, v, _c in timed:
        carried[(u, v)] = carried.get((u, v), 0) + 1
    return SimResult(policy="self-timed", messages=len(timed), makespan_steps=makespan,
                     p50_steps=p50, p99_steps=p99,
                     link_utilization=round(len(timed) / (topo.unit_links * makespan), 4)
                     if makespan else 0.0,
                     max_queue=max_q, load_imbalance=load_imbalance(carried, topo.links))
