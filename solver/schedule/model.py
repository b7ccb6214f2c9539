"""The schedule model: frozen instance, typed outcomes, plain result objects.

A collective on a topology is a set of *chunks*; each chunk has a start set of chips that hold
it (or a partial value of it) and a set of chips that must end with it. Chunk identifiers are
the ``[rank, index]`` pairs of ``../shared/bench/README.md``; alltoall and traffic chunks with
more than one chunk per pair are ``[source, destination, index]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.status import Status

__all__ = ["COLLECTIVE_NAMES", "REDUCING", "ChunkId", "Instance", "ScheduleResult", "Status",
           "TransferT", "step_seconds"]

REDUCING = ("reduce_scatter", "allreduce")
COLLECTIVE_NAMES = ("allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "traffic")

ChunkId = tuple[int, ...]


@dataclass(frozen=True)
class Instance:
    """A collective on a topology (frozen).

    ``chunks`` is chunks per rank (allgather, reduce_scatter, broadcast root, alltoall per pair)
    or the vector length (allreduce). ``demand`` (traffic only) maps (source, destination) to a
    chunk count.
    """

    topology: Topology
    collective: str
    chunks: int = 1
    demand: tuple[tuple[int, int, int], ...] = field(default=())
    root: int = 0

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVE_NAMES:
            raise InputError(f"expected a collective among {', '.join(COLLECTIVE_NAMES)}, got "
                             f"{self.collective!r}")
        if self.chunks < 1:
            raise InputError(f"expected chunks >= 1, got {self.chunks}")
        n = self.topology.endpoints
        for s, d, k in self.demand:
            if not (0 <= s < n and 0 <= d < n) or s == d or k < 0:
                raise InputError(f"expected traffic entries (src, dst, chunks) with distinct "
                                 f"chips in 0..{n - 1} and chunks >= 0, got ({s}, {d}, {k})")
        if self.collective == "traffic" and not self.demand:
            raise InputError("expected a non-empty traffic matrix for collective 'traffic', "
                             "got none")
        if not 0 <= self.root < n:
            raise InputError(f"expected a broadcast root in 0..{n - 1}, got {self.root}")

    @property
    def n(self) -> int:
        """Number of ranks (switch vertices excluded)."""
        return self.topology.endpoints

    def demand_map(self) -> dict[tuple[int, int], int]:
        """(src, dst) -> chunks, for alltoall and traffic."""
        if self.collective == "alltoall":
            return {(s, d): self.chunks for s in range(self.n) for d in range(self.n) if s != d}
        out: dict[tuple[int, int], int] = {}
        for s, d, k in self.demand:
            out[(s, d)] = out.get((s, d), 0) + k
        return out

    def chunk_ids(self) -> list[ChunkId]:
        """Every chunk of the collective, in a fixed order."""
        n, c = self.n, self.chunks
        if self.collective in ("allgather", "reduce_scatter"):
            return [(r, i) for r in range(n) for i in range(c)]
        if self.collective == "allreduce":
            return [(0, i) for i in range(c)]
        if self.collective == "broadcast":
            return [(self.root, i) for i in range(c)]
        ids: list[ChunkId] = []
        for (s, d), k in sorted(self.demand_map().items()):
            ids += [(s, d)] if k == 1 and self.collective == "alltoall" and c == 1 else \
                [(s, d, i) for i in range(k)]
        return ids

    def sources(self, chunk: ChunkId) -> list[int]:
        """Chips that hold the chunk (or a partial value of it) at step 0."""
        if self.collective in REDUCING:
            return list(range(self.n))
        return [chunk[0]]

    def destinations(self, chunk: ChunkId) -> list[int]:
        """Chips that must hold the chunk (complete) at the end."""
        if self.collective in ("allgather", "broadcast", "allreduce"):
            return list(range(self.n))
        if self.collective == "reduce_scatter":
            return [chunk[0]]
        return [chunk[1]]


TransferT = tuple[int, int, int, ChunkId]
"""One transfer: ``(step, src, dst, chunk)``: the chunk over one unit link src->dst in step."""


class ScheduleResult(BaseModel):
    """A synthesized schedule with its bound, proof status and independent verification."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    status: Status = Field(description="OPTIMAL, FEASIBLE, UNSATISFIABLE, UNKNOWN or ERROR")
    topology: str = Field(description="topology name or spec")
    chips: int = Field(description="number of chips")
    collective: str = Field(description="collective name")
    chunks_per_rank: int = Field(description="chunks per rank (allreduce: vector length)")
    makespan_steps: int | None = Field(description="steps of the schedule; None without one")
    lower_bound_steps: int = Field(description="best lower bound on the makespan")
    bounds: dict[str, float] = Field(description="every lower bound, by name, in steps")
    gap: float | None = Field(description="makespan / lower bound - 1 (0 when they meet)")
    method: str = Field(description="how the schedule was found and optimality shown")
    proof: str = Field(description="why the status holds (bound met, UNSAT at T-1, timeout)")
    verified: bool = Field(description="the independent checker replayed the schedule")
    synthesis_seconds: float = Field(description="wall time of the synthesis")
    transfers: tuple[TransferT, ...] = Field(
        default=(), description="the schedule: (step, src, dst, chunk); built without "
        "re-validation (model_construct) because schedules reach millions of transfers")

    def summary(self) -> dict[str, object]:
        """The stable JSON summary (no transfers)."""
        return {
            "status": self.status.value, "topology": self.topology, "chips": self.chips,
            "collective": self.collective, "chunks_per_rank": self.chunks_per_rank,
            "makespan_steps": self.makespan_steps, "lower_bound_steps": self.lower_bound_steps,
            "bounds": dict(sorted(self.bounds.items())), "gap": self.gap, "method": self.method,
            "proof": self.proof, "verified": self.verified,
            "synthesis_seconds": round(self.synthesis_seconds, 3),
            "transfers": len(self.transfers),
        }

    def schedule_file(self) -> dict[str, object]:
        """The full schedule in the file format of ``../shared/bench/README.md``.

        Transfers are sorted; for a reduction, within a step they keep the order the checker
        replayed them in: an arrival that replaces a chip's partial sum (it contains it) comes
        before those that add to it, so a replay in file order sees the same sums.
        """
        if self.collective in REDUCING:
            rows = sorted(self.transfers, key=lambda tr: tr[0])
        else:
            rows = sorted(self.transfers)
        return {
            "topology": self.topology, "collective": self.collective,
            "chunks_per_rank": self.chunks_per_rank, "makespan_steps": self.makespan_steps,
            "transfers": [{"chunk": list(c), "src": u, "dst": v, "step": t}
                          for t, u, v, c in rows],
        }

    def seconds(self, chunk_bytes: float, link_bandwidth_bytes_per_s: float,
                hop_latency_s: float) -> float | None:
        """Makespan in seconds: one step is ``chunk_bytes / bandwidth + hop_latency``."""
        if self.makespan_steps is None:
            return None
        return self.makespan_steps * step_seconds(chunk_bytes, link_bandwidth_bytes_per_s,
                                                  hop_latency_s)


def step_seconds(chunk_bytes: float, link_bandwidth_bytes_per_s: float,
                 hop_latency_s: float) -> float:
    """Duration of one step: serialize one chunk on one unit link, plus one hop of latency.

    Examples
    --------
    >>> step_seconds(1e6, 1e9, 1e-6)
    0.001001
    """
    if link_bandwidth_bytes_per_s <= 0 or chunk_bytes < 0 or hop_latency_s < 0:
        raise InputError(f"expected bandwidth > 0, bytes >= 0 and latency >= 0, got "
                         f"{link_bandwidth_bytes_per_s}, {chunk_bytes}, {hop_latency_s}")
    return chunk_bytes / link_bandwidth_bytes_per_s + hop_latency_s
