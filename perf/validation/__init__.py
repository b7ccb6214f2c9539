"""accelkb.perf.validation: the performance model against published measurements.

- :mod:`.training`: row and file result types, the readers of ``../shared/validation/`` and the
  training files (Megatron, Korthikanti, vTrain, MosaicML);
- :mod:`.others`: the other measurements (NCCL collectives, LLM inference and power, MLPerf
  ordering, vendor claims);
- :mod:`.graphcore`: Graphcore's own Bow Pod throughput tables;
- :mod:`.published`: the benchmark results stored in the knowledge base;
- :mod:`.suite`: :func:`run_all`, every check in one run;
- :mod:`.fit`: the grid searches that fit the calibration constants on those files.

The calibration constants themselves are part of the model (:mod:`accelkb.perf.calibration`).
May import the performance model (:mod:`accelkb.perf`); the model never imports this package.
"""

from accelkb.perf.validation.suite import run_all
from accelkb.perf.validation.training import (
    FileResult,
    Row,
    SystemResolver,
    cached,
    known_models,
    read_rows,
    validation_dir,
)

__all__ = ["FileResult", "Row", "SystemResolver", "cached", "known_models", "read_rows", "run_all",
           "validation_dir"]
