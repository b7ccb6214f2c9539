"""Design-space sweeps: many models x systems x chip counts x precisions x goals x hardware
what-ifs, each point solved like ``accelkb configure`` (Z3, best feasible layout) and estimated
with its interval, on one machine or a Ray cluster, into a CSV or Parquet file that a killed
run resumes (``accelkb sweep``)."""

from accelkb.sweep.run import SweepRun, run_sweep
from accelkb.sweep.spec import SweepSpec, read_spec

__all__ = ["SweepRun", "SweepSpec", "read_spec", "run_sweep"]
