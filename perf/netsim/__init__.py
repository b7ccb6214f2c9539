"""accelkb.perf.netsim: network simulators, the baseline a schedule is compared with.

- :mod:`.dynamic`: the collective's point-to-point form under dynamic routing (ECMP,
  minimal-adaptive), store and forward with FIFO link queues;
- :mod:`.selftimed`: a schedule's own transfers run self-timed (no planned steps);
- :mod:`.compare`: :func:`sweep`, scheduled vs self-timed vs dynamic over growing topologies.

Exposes the names below (the former ``accelkb.perf.netsim`` module's). May import
:mod:`accelkb.solver.schedule` (topologies, bounds, the solver in :mod:`.compare`) and
:mod:`accelkb.errors`; nothing of the performance model.
"""

from accelkb.perf.netsim.compare import sweep
from accelkb.perf.netsim.dynamic import (
    MAX_MESSAGES,
    POLICIES,
    SimResult,
    collective_messages,
    percentiles,
    scheduled_stats,
    simulate,
    simulate_collective,
)
from accelkb.perf.netsim.selftimed import self_timed, self_timed_transfers

__all__ = ["MAX_MESSAGES", "POLICIES", "SimResult", "collective_messages", "percentiles",
           "scheduled_stats", "self_timed", "self_timed_transfers", "simulate",
           "simulate_collective", "sweep"]
