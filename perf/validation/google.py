"""Google's MLPerf Training v1.0 runs on 64 TPU v4 chips, as training throughput.

Each row's rate is read from the run's own MLPerf log (``mlperf_training_tpu_v4_throughput.csv``
says which blocks and timestamps), so it excludes initialisation and compilation and includes
the evaluations inside the blocks. The layouts are the logs': data parallel over the 64 chips,
no gradient accumulation (ResNet-50: 128 images per chip; BERT-Large: 48 sequences of 512).
The model picks recomputation for BERT (the fastest that fits the chip's HBM: the log does not
say); nothing is fitted on these rows.
"""

from __future__ import annotations

from accelkb.errors import InputError
from accelkb.perf.calibration import Calibration
from accelkb.perf.dense import estimate_dense_training
from accelkb.perf.validation.others import _resnet
from accelkb.perf.validation.training import (
    FileResult,
    Row,
    SystemResolver,
    best_layout,
    cached,
    known_models,
    read_rows,
)

FILE = "mlperf_training_tpu_v4_throughput.csv"


def check_tpu_mlperf(systems: SystemResolver, cal: Calibration) -> FileResult:
    """Predicted samples per second of every row of :data:`FILE`."""
    systems = cached(systems)
    res = FileResult(FILE, "training throughput (samples/s), TPU v4 MLPerf Training v1.0")
    for r in read_rows(FILE):
        chips, gbs, mb = int(r["chips"]), int(r["global_batch"]), int(r["micro_batch"])
        label = f"{r['round']} {r['system']} x{chips} {r['model']} b{gbs}"
        try:
            system = systems(r["system"], chips)
            if r["model"] == "resnet50":
                predicted = estimate_dense_training(
                    _resnet(), system, chips, gbs, cal, precision=r["precision"],
                    micro_batch=mb).samples_per_s
            else:
                fastest = None
                for rc in ("none", "selective", "full"):
                    base: dict[str, object] = {
                        "tp": 1, "pp": 1, "dp": chips, "global_batch": gbs, "recompute": rc,
                        "precision": r["precision"], "seq_len": int(r["seq_len"])}
                    est = best_layout(known_models()[r["model"]], system, base, cal,
                                      micro_batches=(mb,), interleaves=(1,))
                    if est is not None and (fastest is None or est.step_time_s < fastest):
                        fastest = est.step_time_s
                if fastest is None:
                    res.skipped.append(f"{label}: no recomputation setting fits")
                    continue
                predicted = gbs / fastest
        except InputError as exc:
            res.skipped.append(f"{label}: {exc}")
            continue
        res.rows.append(Row(label, float(r["throughput"]), predicted, sense="rate"))
    return res
