"""accelkb.solver: the Z3 solvers, configuration and network schedule, and what they share.

Two solvers that share only Z3, the outcome type and the error types:

- :mod:`accelkb.solver.config`: the best parallel layout of a model on a system, or a minimal
  explanation of why none exists (imports :mod:`accelkb.perf` and :mod:`accelkb.ontology`);
- :mod:`accelkb.solver.schedule`: collision-free collective schedules with lower bounds and an
  independent checker (imports nothing of accelkb but :mod:`accelkb.errors` and this package's
  shared modules);
- shared: :mod:`accelkb.solver.status` (OPTIMAL / FEASIBLE / UNSATISFIABLE / UNKNOWN / ERROR)
  and :mod:`accelkb.solver.z3fast` (large Boolean terms built with one Z3 C call).

Neither solver imports the other. Exposed here: :func:`configure`, :func:`schedule`,
:func:`collective_seconds`, :func:`layout_traffic`, :func:`read_traffic` and the result types.
``accelkb.solver.schedule`` is the function; the schedule package's modules are imported by
their full name (``from accelkb.solver.schedule.topology import parse_topology``).
"""

from accelkb.solver.config.api import configure
from accelkb.solver.config.model import ConfigResult
from accelkb.solver.schedule.api import collective_seconds, schedule
from accelkb.solver.schedule.model import ScheduleResult
from accelkb.solver.schedule.traffic import layout_traffic, read_traffic
from accelkb.solver.status import Status

__all__ = ["configure", "ConfigResult", "collective_seconds", "layout_traffic", "read_traffic",
           "schedule", "ScheduleResult", "Status"]
