"""Outcomes shared by both solvers (configuration and schedule): five, never two.

A timeout is UNKNOWN (nothing found) or FEASIBLE (something found, optimality not proved),
never UNSATISFIABLE.

>>> Status("OPTIMAL") is Status.OPTIMAL
True
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Outcome of a solve: a timeout is UNKNOWN or FEASIBLE, never UNSATISFIABLE."""

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    UNSATISFIABLE = "UNSATISFIABLE"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"
