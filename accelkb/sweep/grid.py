"""The points of a sweep and the groups they are solved in.

A point is one (model, system, chips, phase, what-if, precision, goal, latency target). The
points that share (model, system, chips, phase, what-if) share one Z3 enumeration of the
feasible layouts: precisions, goals and targets only filter and re-rank that set. What-ifs are
tried one at a time, each on the systems whose chip it names, beside the unchanged system.
Training ignores latency targets and takes no 'latency' goal (it is the step time, 'time').

Examples
--------
>>> from accelkb.sweep.spec import SweepSpec
>>> from accelkb.perf.from_kb import system_spec
>>> s = SweepSpec(models=["llama2-7b"], systems=["dgx-h100"], goals=["time", "energy"],
...               precisions=["bf16", "int8"])
>>> [p.label() for p in points(s, {"dgx-h100": system_spec("dgx-h100")})][:2]
['llama2-7b dgx-h100 x8 inference bf16 time', 'llama2-7b dgx-h100 x8 inference bf16 energy']
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from accelkb.perf import SystemSpec
from accelkb.sweep import whatif
from accelkb.sweep.spec import SweepSpec


class Point(BaseModel):
    """One point of the grid."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    system: str
    chips: int
    phase: str
    precision: str
    goal: str
    latency_target: float | None = None
    whatif: str = ""
    whatif_value: str = ""

    def group(self) -> tuple[str, str, int, str, str, str]:
        """What the points of one Z3 enumeration share."""
        return (self.model, self.system, self.chips, self.phase, self.whatif, self.whatif_value)

    def ident(self) -> str:
        """A stable id of the point (16 hex digits of the hash of its fields)."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        """'llama2-7b dgx-h100 x8 inference bf16 time' (and the target, the what-if)."""
        out = f"{self.model} {self.system} x{self.chips} {self.phase} {self.precision} {self.goal}"
        if self.latency_target is not None:
            out += f" >={self.latency_target:g} tok/s/user"
        if self.whatif:
            out += f" [{self.whatif}={self.whatif_value}]"
        return out


def points(spec: SweepSpec, systems: dict[str, SystemSpec]) -> list[Point]:
    """Every point of ``spec`` in a fixed order (``systems``: each system's perf spec)."""
    out: list[Point] = []
    seen: set[Point] = set()
    for model in spec.models:
        for name in spec.systems:
            sys_spec = systems[name]
            counts = list(dict.fromkeys(sys_spec.chips if c == "all" else int(c)
                                        for c in spec.chips))
            variants: list[tuple[str, str]] = [("", "")] + [
                (key, str(v)) for key, values in spec.whatifs.items()
                if whatif.applies(key, sys_spec) for v in values]
            for chips in counts:
                for phase in spec.phases:
                    for key, value in variants:
                        for prec in spec.precisions:
                            for goal in spec.goals:
                                if phase == "training" and goal == "latency":
                                    continue
                                targets: list[float | None] = (
                                    [None] if phase == "training" else list(spec.latency_targets))
                                for target in targets:
                                    p = Point(model=model, system=name, chips=chips, phase=phase,
                                              precision=prec, goal=goal, latency_target=target,
                                              whatif=key, whatif_value=value)
                                    if p not in seen:
                                        seen.add(p)
                                        out.append(p)
    return out


def groups(pts: list[Point]) -> list[list[Point]]:
    """The points grouped by :meth:`Point.group`, groups in the order of their first point."""
    by: dict[Any, list[Point]] = {}
    for p in pts:
        by.setdefault(p.group(), []).append(p)
    return list(by.values())
