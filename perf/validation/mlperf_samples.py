"""What each MLPerf Training submission trained to reach its target: the mean, over the runs the
score averages, of the epochs (ResNet-50) or training samples (BERT) its logs record at run_stop.

MLPerf scores a submission by the mean time of its runs without the fastest and the slowest (an
aborted run counts as the slowest), five runs for ResNet-50 and ten for BERT. The time-to-train
ratios of :mod:`accelkb.perf.validation.others` are predicted as samples x modelled time per
sample, so the samples are the mean over those same runs; where the stored copy of the results
lacks some of a submission's logs, the mean of the successful runs that are there
(:class:`Samples` keeps how many and whether the set was complete). Data:
``mlperf_training_samples_to_train.csv``, one row per log.

Examples
--------
>>> s = samples_to_train("resnet", "v1.1", "ipu-pod64")
>>> round(s.samples), s.runs, s.complete
(48684346, 3, True)
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

from accelkb.perf.validation.training import read_rows

FILE = "mlperf_training_samples_to_train.csv"
#: ImageNet-1k training images per epoch (the logs' ``train_samples``).
IMAGENET_TRAIN_IMAGES = 1_281_167
#: Runs per submission (MLPerf Training v1.x rules) and the system each results folder holds.
RUNS = {"resnet": 5, "bert": 10}
_SYSTEMS = {"ipu-pod16": "ipu-pod16", "ipu-pod64": "ipu-pod64", "ipu-pod128": "ipu-pod128",
            "ipu-pod256": "ipu-pod256", "dgxa100": "dgx-a100"}
#: Rounds whose Graphcore results folders (still named ipu-podN) hold Bow IPUs: the v2.0 system
#: JSONs say 'accelerator_model_name': 'Graphcore Bow IPU', 1.85 GHz ("Bow Pod64", ...).
BOW_ROUNDS = frozenset({"v2.0"})


@dataclass(frozen=True)
class Samples:
    """Mean samples (images or sequences) to train, over ``runs`` logs; ``complete`` when every
    log of the submission was read and the score's own runs could be picked."""

    samples: float
    runs: int
    complete: bool


def _system(folder: str, mlperf_round: str) -> str | None:
    name = folder.split("/")[2]
    system = next((v for k, v in _SYSTEMS.items() if name.startswith(k)), None)
    if system is not None and mlperf_round in BOW_ROUNDS and system.startswith("ipu-"):
        return "bow-" + system.removeprefix("ipu-")
    return system


@functools.cache
def _table() -> dict[tuple[str, str, str], Samples]:
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in read_rows(FILE):
        system = _system(r["system_dir"], r["round"])
        if system is not None:
            groups.setdefault((r["benchmark"], r["round"], system), []).append(r)
    out = {}
    for (bench, rnd, system), rows in groups.items():
        scale = IMAGENET_TRAIN_IMAGES if bench == "resnet" else 1
        complete = len(rows) == RUNS[bench]
        if complete:  # the score's runs: drop the fastest and the slowest (aborted = slowest)
            ordered = sorted(rows, key=lambda r: (r["status"] != "success", float(r["run_seconds"])))
            kept = ordered[1:-1]
        else:
            kept = [r for r in rows if r["status"] == "success"]
        values = [float(r["epochs_or_samples"]) * scale for r in kept]
        out[(bench, rnd, system)] = Samples(statistics.fmean(values), len(values), complete)
    return out


def samples_to_train(benchmark: str, mlperf_round: str, system: str) -> Samples | None:
    """The mean samples to train of one submission, or None when its logs were not read."""
    return _table().get((benchmark, mlperf_round, system))
