"""The search state shared by the schedule strategies: the best schedule so far.

>>> b = Best()
>>> b.target = 3
>>> b.offer(5, [], "greedy"); b.offer(4, [], "z3"); b.offer(6, [], "worse")
>>> b.steps, b.method, b.done
(4, 'z3', False)
"""

from __future__ import annotations

from accelkb.solver.schedule.model import TransferT


class Best:
    """The best schedule so far and how it was found."""

    def __init__(self) -> None:
        self.steps: int | None = None
        self.transfers: list[TransferT] = []
        self.method = ""
        self.target = 0  # the lower bound: no need to search further once met
        self.lp: float | None = None  # the alltoall LP bound, where computed after the search

    @property
    def done(self) -> bool:
        return self.steps is not None and self.steps <= self.target

    def offer(self, steps: int, transfers: list[TransferT], method: str) -> None:
        if self.steps is None or steps < self.steps:
            self.steps, self.transfers, self.method = steps, transfers, method
