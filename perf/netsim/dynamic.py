"""Dynamic-routing network simulator: the same traffic without a pre-planned schedule.

Messages are unit chunks routed hop by hop (store and forward) in the step model of
``../shared/bench/README.md``: a unit link moves one chunk per step. Each directed link has a
FIFO queue; chunks that reach a chip in the same step are queued in an arbitration order
(round-robin over input links, seeded). Next hops:

- ``ecmp``: a per-flow hash picks one of the shortest-path next hops (static per flow);
- ``adaptive``: minimal-adaptive, the shortest-path next hop with the shortest queue per unit
  link at the moment the chunk arrives.

Collectives under dynamic routing are what a dynamically routed fabric runs: allgather sends
each chunk from its owner to every rank as its own message, reduce-scatter sends each partial
to its owner, allreduce is reduce-scatter then allgather (a chunk's allgather messages leave
its owner once its last partial has arrived), broadcast sends every chunk from the root to each
rank, alltoall and traffic matrices are point to point.

Where this flatters dynamic routing (so the gap it reports for alltoall and traffic matrices
is a *lower* estimate of what a schedule buys): buffers are infinite (no drops, no credit
stalls, no back-pressure), there is no head-of-line blocking (every output link has its own
queue), arbitration is instantaneous, routing tables are perfect shortest paths, and chunks
have no header or packetization cost. Where it does not: for allgather, reduce-scatter,
allreduce and broadcast the point-to-point form is also a weaker *algorithm* than a schedule's
(no forwarding copies, no adding on the way), so that gap mixes algorithm and timing;
:mod:`selftimed` runs the schedule's own transfers without their planned
steps, which separates the two.

Examples
--------
>>> from accelkb.solver.schedule.topology import parse_topology
>>> r = simulate_collective(parse_topology("ring:4"), "alltoall")
>>> r.makespan_steps >= 2
True
"""

from __future__ import annotations

import random
import statistics
import zlib
from collections import deque
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError
from accelkb.solver.schedule.bounds import all_distances
from accelkb.solver.schedule.topology import Topology

POLICIES = ("ecmp", "adaptive")
MAX_MESSAGES = 400_000  # larger simulations take minutes (pure Python): callers skip them


class SimResult(BaseModel):
    """Outcome of one dynamic-routing simulation."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    policy: str = Field(description="ecmp, adaptive, or self-timed (selftimed)")
    messages: int = Field(description="unit chunks delivered end to end (self-timed: one-hop transfers)")
    makespan_steps: int = Field(description="step at which the last chunk arrived")
    p50_steps: float = Field(description="median message completion step")
    p99_steps: float = Field(description="99th percentile message completion step")
    link_utilization: float = Field(description="chunk-hops / (unit links x makespan)")
    max_queue: int = Field(description="longest link queue seen (chunks)")
    load_imbalance: float = Field(default=1.0, description="max / mean chunks carried per unit "
                                  "link, over every unit link of the topology (1 = perfectly "
                                  "balanced global load)")


def load_imbalance(loads: Mapping[tuple[int, int], int], cap: Mapping[tuple[int, int], int]
                   ) -> float:
    """Max over mean of the chunks each unit link carried (a link of multiplicity m is m unit
    links sharing its load), over every unit link of the topology.

    >>> load_imbalance({(0, 1): 2, (1, 0): 2}, {(0, 1): 1, (1, 0): 1, (1, 2): 1, (2, 1): 1})
    2.0
    """
    units = sum(cap.values())
    total = sum(loads.values())
    if not units or not total:
        return 1.0
    peak = max(loads.get(e, 0) / m for e, m in cap.items())
    return round(peak / (total / units), 4)


Message = tuple[int, int, int]  # (src, dst, group); group -1: no dependency


def collective_messages(topo: Topology, collective: str, chunks: int = 1,
                        demand: Sequence[tuple[int, int, int]] = (), root: int = 0
                        ) -> tuple[list[Message], dict[int, list[Message]]]:
    """Point-to-point messages of a collective and the messages released when a group is done.

    ``demand`` is the ``(src, dst, chunks)`` matrix of ``collective="traffic"``; ``root`` the
    source of a broadcast. Returns ``(initial, released)``: ``released[g]`` leaves once every
    message of group ``g`` has arrived (allreduce: the allgather of a chunk after its
    reduce-scatter). Ranks are the endpoints (chips), never switch vertices.
    """
    n = topo.endpoints
    initial: list[Message] = []
    released: dict[int, list[Message]] = {}
    if collective == "traffic":
        if not demand:
            raise InputError("expected a non-empty traffic matrix for collective 'traffic', "
                             "got none")
        initial = [(s, d, -1) for s, d, k in demand for _ in range(k)]
    elif collective == "broadcast":
        initial = [(root, d, -1) for _ in range(chunks) for d in range(n) if d != root]
    elif collective == "alltoall":
        initial = [(s, d, -1) for s in range(n) for d in range(n) if s != d for _ in range(chunks)]
    elif collective == "allgather":
        initial = [(r, d, -1) for r in range(n) for _ in range(chunks) for d in range(n) if d != r]
    elif collective == "reduce_scatter":
        initial = [(s, r, -1) for r in range(n) for _ in range(chunks) for s in range(n) if s != r]
    elif collective == "allreduce":
        for j in range(chunks):
            owner = j % n
            initial += [(s, owner, j) for s in range(n) if s != owner]
            released[j] = [(owner, d, -1) for d in range(n) if d != owner]
    else:
        raise InputError(f"expected a collective among alltoall, allgather, reduce_scatter, "
                         f"allreduce, broadcast, traffic, got {collective!r}")
    return initial, released


def percentiles(times: Sequence[int]) -> tuple[float, float]:
    """``(p50, p99)`` of sorted completion steps; ``(0.0, 0.0)`` for none."""
    if not times:
        return 0.0, 0.0
    return float(statistics.median(times)), float(times[min(len(times) - 1, int(0.99 * len(times)))])


def simulate(topo: Topology, initial: list[Message], released: dict[int, list[Message]] | None
             = None, policy: str = "adaptive", seed: int = 0, max_steps: int = 1_000_000
             ) -> SimResult:
    """Run the messages to completion under ``policy``.

    Raises
    ------
    InputError
        unknown policy or a message between chips that do not exist.
    """
    if policy not in POLICIES:
        raise InputError(f"expected a routing policy among {POLICIES}, got {policy!r}")
    n = topo.n
    for s, d, _ in initial:
        if not (0 <= s < n and 0 <= d < n) or s == d:
            raise InputError(f"expected messages between distinct chips 0..{n - 1}, got {s}->{d}")
    released = released or {}
    rng = random.Random(seed)
    dist = all_distances(topo)
    out = topo.out_neighbors()
    cap = topo.links
    queues: dict[tuple[int, int], deque[int]] = {e: deque() for e in cap}
    hops_cache: dict[tuple[int, int], list[int]] = {}
    msgs: list[list[int]] = []  # [src, dst, group, flow hash]
    pending: dict[int, int] = {}
    done_at: list[int] = []
    hop_count = 0
    carried: dict[tuple[int, int], int] = {}

    def next_hop(u: int, m: int) -> int:
        d = msgs[m][1]
        hops = hops_cache.get((u, d))
        if hops is None:
            hops = [v for v in out[u] if dist[v][d] == dist[u][d] - 1]
            hops_cache[(u, d)] = hops
        if len(hops) == 1:
            return hops[0]
        if policy == "ecmp":
            return hops[(msgs[m][3] + u) % len(hops)]
        return min(hops, key=lambda v: (len(queues[(u, v)]) / cap[(u, v)], rng.random()))

    def inject(batch: list[Message]) -> None:
        order = list(range(len(batch)))
        rng.shuffle(order)
        for i in order:
            s, d, g = batch[i]
            m = len(msgs)
            msgs.append([s, d, g, zlib.crc32(f"{s}:{d}:{m % 7}".encode())])
            done_at.append(-1)
            if g >= 0:
                pending[g] = pending.get(g, 0) + 1
            queues[(s, next_hop(s, m))].append(m)

    inject(initial)
    active = {e for e, q in queues.items() if q}
    step, max_q, delivered = 0, 0, 0
    while active:
        if step >= max_steps:
            raise InputError(f"expected the simulation to finish within {max_steps} steps")
        arrivals: dict[int, list[int]] = {}
        for e in sorted(active):
            q = queues[e]
            max_q = max(max_q, len(q))
            moved = min(cap[e], len(q))
            carried[e] = carried.get(e, 0) + moved
            for _ in range(moved):
                arrivals.setdefault(e[1], []).append(q.popleft())
                hop_count += 1
        later: list[Message] = []
        for v, ms in arrivals.items():
            rng.shuffle(ms)  # arbitration among chunks reaching v in the same step
            for m in ms:
                if msgs[m][1] == v:
                    done_at[m] = step + 1
                    delivered += 1
                    g = msgs[m][2]
                    if g >= 0:
                        pending[g] -= 1
                        if pending[g] == 0:
                            later += released.get(g, [])
                else:
                    queues[(v, next_hop(v, m))].append(m)
        if later:
            inject(later)
        active = {e for e, q in queues.items() if q}
        step += 1
    times = sorted(done_at)
    p50, p99 = percentiles(times)
    makespan = times[-1] if times else 0
    util = hop_count / (topo.unit_links * makespan) if makespan else 0.0
    return SimResult(policy=policy, messages=len(msgs), makespan_steps=makespan,
                     p50_steps=p50, p99_steps=p99,
                     link_utilization=round(util, 4), max_queue=max_q,
                     load_imbalance=load_imbalance(carried, cap))


def simulate_collective(topo: Topology, collective: str, chunks: int = 1,
                        policy: str = "adaptive", seed: int = 0,
                        demand: Sequence[tuple[int, int, int]] = (), root: int = 0) -> SimResult:
    """:func:`simulate` the point-to-point form of a collective (see the module docstring)."""
    initial, released = collective_messages(topo, collective, chunks, demand, root)
    return simulate(topo, initial, released, policy, seed)


def scheduled_stats(transfers, makespan: int, unit_links: int,
                    cap: Mapping[tuple[int, int], int] | None = None) -> dict[str, float]:
    """Completion statistics of a schedule, for side-by-side tables: last arrival per chip
    and chunk (p50/p99), link utilization and (with the topology's ``cap``) load imbalance."""
    last: dict[tuple, int] = {}
    carried: dict[tuple[int, int], int] = {}
    for t, u, v, c in transfers:
        carried[(u, v)] = carried.get((u, v), 0) + 1
        key = (v, c)
        last[key] = max(last.get(key, 0), t + 1)
    times = sorted(last.values())
    p50, p99 = percentiles(times)
    return {
        "makespan_steps": makespan,
        "p50_steps": p50,
        "p99_steps": p99,
        "link_utilization": round(len(transfers) / (unit_links * makespan), 4) if makespan
        else 0.0,
        "load_imbalance": load_imbalance(carried, cap) if cap is not None else float("nan"),
    }
