"""Independent schedule checker (no Z3): replays a schedule step by step.

Checks, each failure naming the step, link, chip and chunk:

1. every transfer uses an existing link, and no link carries more chunks in a step than it has
   unit links (collision-free);
2. a chunk (or partial sum) is sent only when the sender holds it at the start of the step;
3. reductions never double-count: a received partial sum is added only when it shares no
   contribution with what the receiver holds; a complete superset replaces it; anything else
   is an error;
4. at the end every destination holds its chunks complete; the makespan covers every step.

It is the oracle of the property tests and runs on every synthesized schedule.

Examples
--------
>>> from accelkb.solver.topology import parse_topology
>>> from accelkb.solver.schedule_model import Instance
>>> inst = Instance(parse_topology("ring:2"), "allgather")
>>> verify(inst, [(0, 0, 1, (0, 0)), (0, 1, 0, (1, 0))], 1).ok
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from operator import itemgetter

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import AccelkbError
from accelkb.solver.schedule_model import REDUCING, Instance, TransferT


class ScheduleError(AccelkbError):
    """A schedule that breaks the model; the message names step, link, chip and chunk."""


class VerifyReport(BaseModel):
    """What the replay found."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    ok: bool = Field(description="True when every check passed")
    transfers: int = Field(description="transfers replayed")
    makespan_steps: int = Field(description="one more than the last step used")
    max_link_load: float = Field(description="largest chunks-per-step / unit-links ratio seen")
    errors: tuple[str, ...] = Field(description="every problem found (at most 20 listed)")


_LINK = itemgetter(1, 2)  # (src, dst) of a transfer


def _complete_mask(n: int) -> int:
    return (1 << n) - 1


def verify(inst: Instance, transfers: Iterable[TransferT], makespan_steps: int,
           raise_on_error: bool = False) -> VerifyReport:
    """Replay ``transfers`` (``(step, src, dst, chunk)``) for ``inst``.

    Raises
    ------
    ScheduleError
        with ``raise_on_error``, on the first problem.
    """
    topo = inst.topology
    errors: list[str] = []

    def fail(msg: str) -> None:
        if raise_on_error:
            raise ScheduleError(msg)
        if len(errors) < 20:
            errors.append(msg)

    chunks = inst.chunk_ids()
    index = {c: i for i, c in enumerate(chunks)}
    by_step: dict[int, list[TransferT]] = {}
    count = 0
    for tr in transfers:
        by_step.setdefault(tr[0], []).append(tr)
        count += 1
    last = max(by_step, default=-1)
    if last >= makespan_steps:
        fail(f"step {last}: transfers after the stated makespan of {makespan_steps} steps")
    if by_step and min(by_step) < 0:
        fail(f"step {min(by_step)}: negative step")
    reducing = inst.collective in REDUCING
    full = _complete_mask(inst.n)
    # state: reducing: sums[v][chunk index] = contribution mask (0: nothing held); otherwise
    # held[v][chunk index] = 1 when held (lists, not dicts: millions of lookups at 576 chips)
    sums = [[0] * len(chunks) for _ in range(topo.n)] if reducing else []
    held = [bytearray(len(chunks)) for _ in range(topo.n)] if not reducing else []
    for i, c in enumerate(chunks):
        for s in inst.sources(c):
            if reducing:
                sums[s][i] = 1 << s
            else:
                held[s][i] = 1
    max_load = 0.0
    links = topo.links
    for step in sorted(by_step):
        trs = by_step[step]
        for (u, v), k in Counter(map(_LINK, trs)).items():
            cap = links.get((u, v), 0)
            if cap == 0:
                fail(f"step {step}: link {u}->{v} does not exist in {topo.name}")
                continue
            max_load = max(max_load, k / cap)
            if k > cap:
                fail(f"step {step}: link {u}->{v} carries {k} chunks but has {cap} unit links")
        if reducing:
            arrivals: list[tuple[int, int, int]] = []
            for _, u, v, c in trs:
                i = index.get(c, -1)
                if i < 0:
                    fail(f"step {step}: link {u}->{v} carries unknown chunk {list(c)} for "
                         f"{inst.collective} with {inst.chunks} chunks")
                    continue
                mask = sums[u][i]
                if not mask:
                    fail(f"step {step}: chip {u} sends chunk {list(c)} to {v} before holding it")
                    continue
                arrivals.append((v, i, mask))
            for v, i, mask in arrivals:
                into = sums[v]
                cur = into[i]
                if cur & mask == 0:
                    into[i] = cur | mask
                elif mask & cur == cur:
                    into[i] = mask
                elif cur & mask != mask:
                    fail(f"step {step}: chip {v} would double-count chunk {list(chunks[i])}: it "
                         f"holds contributions of chips {_bits(cur)} and receives {_bits(mask)}")
        else:
            gained: list[tuple[int, int]] = []
            for _, u, v, c in trs:
                i = index.get(c, -1)
                if i < 0:
                    fail(f"step {step}: link {u}->{v} carries unknown chunk {list(c)} for "
                         f"{inst.collective} with {inst.chunks} chunks")
                    continue
                if not held[u][i]:
                    fail(f"step {step}: chip {u} sends chunk {list(c)} to {v} before holding it")
                    continue
                gained.append((v, i))
            for v, i in gained:
                held[v][i] = 1
    everyone = inst.collective in ("allgather", "broadcast")
    for d in range(inst.n) if everyone else ():
        i = held[d].find(0)
        if i >= 0:
            fail(f"end: chip {d} lacks complete chunk {list(chunks[i])} (has nothing) after "
                 f"{makespan_steps} steps")
    for i, c in enumerate(chunks if not everyone else ()):
        for d in inst.destinations(c):
            got = (sums[d][i] or None) if reducing else (full if held[d][i] else None)
            if got != full:
                what = "nothing" if got is None else f"contributions of chips {_bits(got)}"
                fail(f"end: chip {d} lacks complete chunk {list(c)} (has {what}) after "
                     f"{makespan_steps} steps")
    return VerifyReport(ok=not errors, transfers=count, makespan_steps=makespan_steps,
                        max_link_load=max_load, errors=tuple(errors))


def _bits(mask: int) -> list[int]:
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    if len(out) > 12:
        return out[:12] + [-1]
    return out
