"""Graphcore's published training throughput on Bow Pod16 and Pod64 (BERT-Large, ResNet-50).

The MLPerf rows of :mod:`.others` compare IPU-PODs with DGX A100 as time-to-train ratios; the rows
here check the IPU model on its own, in samples per second, against Graphcore's performance-
results tables (``graphcore_bow_training_throughput.csv``, each row with the table row it quotes).
Nothing is fitted on them. The layouts are those of Graphcore's MLPerf BERT and ResNet-50 code:

- BERT-Large: four-stage pipeline per replica with the layers per IPU of Graphcore's MLPerf
  POD16 configuration (``perf/data/mlperf_submissions.json``: 3, 7, 7, 7, embedding on the first
  IPU), replicas on the other IPUs, replicated tensor sharding of the optimizer state, 16-bit
  weights and gradients, recomputation in the backward pass; the tables give no micro-batch, so
  the model takes the fastest that fits the SRAM (as a submitter tunes it);
- ResNet-50: data parallel, one replica per IPU, at the micro-batch and recomputation of the
  configuration the row's global batch identifies (``micro_batch``, ``recompute`` and
  ``layout_source`` columns: Graphcore's own ``configs.yml``, replicas x micro-batch x gradient
  accumulation = the row's global batch). Left to choose, the model takes a larger micro-batch
  without recomputation (its working set leaves out code, exchange buffers and convolution
  temporaries), which no published configuration runs; a row without a stated layout gets that
  choice (:func:`accelkb.perf.dense.best_dense_layout`).
"""

from __future__ import annotations

from accelkb.errors import InputError
from accelkb.perf.calibration import Calibration
from accelkb.perf.dense import best_dense_layout, estimate_dense_training
from accelkb.perf.specs import ModelSpec, SystemSpec
from accelkb.perf.training import TrainingEstimate
from accelkb.perf.validation.others import _resnet, _submissions
from accelkb.perf.validation.training import (
    FileResult,
    Row,
    SystemResolver,
    best_layout,
    cached,
    known_models,
    read_rows,
)

FILE = "graphcore_bow_training_throughput.csv"


def check_graphcore_throughput(systems: SystemResolver, cal: Calibration) -> FileResult:
    """Predicted samples per second of every row of :data:`FILE`."""
    systems = cached(systems)
    res = FileResult(FILE, "training throughput (samples/s), Graphcore Bow Pods")
    stages = tuple(int(x) for x in _submissions()["bert"]["ipu"]["stage_layers"]["16"])  # type: ignore[index]
    models = known_models()
    for r in read_rows(FILE):
        ipus, gbs, seq = int(r["ipus"]), int(r["global_batch"]), int(r["seq_len"])
        label = f"{r['system']} {r['model']} {r['phase']} {r['framework']} {r['sdk']} b{gbs}"
        try:
            system = systems(r["system"], ipus)
            if r["model"] == "resnet50":
                predicted = _resnet_rate(r, system, ipus, gbs, cal)
            else:
                est = _transformer(models[r["model"]], r, system, ipus, gbs, seq, stages, cal)
                if est is None:
                    res.skipped.append(f"{label}: no micro-batch fits the SRAM")
                    continue
                predicted = gbs / est.step_time_s
        except InputError as exc:
            res.skipped.append(f"{label}: {exc}")
            continue
        res.rows.append(Row(label, float(r["throughput"]), predicted, sense="rate"))
    return res


def _resnet_rate(r: dict[str, str], system: SystemSpec, ipus: int, gbs: int,
                 cal: Calibration) -> float:
    if r["micro_batch"]:
        return estimate_dense_training(_resnet(), system, ipus, gbs, cal,
                                       recompute=r["recompute"] == "yes",
                                       micro_batch=int(r["micro_batch"])).samples_per_s
    return best_dense_layout(_resnet(), system, ipus, gbs, cal)[0].samples_per_s


def _transformer(model: ModelSpec, r: dict[str, str], system: SystemSpec, ipus: int, gbs: int,
                 seq: int, mlperf_stages: tuple[int, ...], cal: Calibration
                 ) -> TrainingEstimate | None:
    """A row's stated pipeline (``stage_layers``, ``micro_batch``) where it has one; BERT-Large
    at Graphcore's MLPerf stages; otherwise the fastest of 1, 2 and 4 even stages per replica
    (the tables give no layout: as a submitter tunes it). Replicated tensor sharding and
    recomputation throughout, as in every Graphcore BERT and ViT configuration."""
    if r["stage_layers"]:
        options = [tuple(int(x) for x in r["stage_layers"].split())]
    elif model.name == "bert-large":
        options = [mlperf_stages]
    else:
        options = [(model.layers // pp,) * pp for pp in (1, 2, 4) if model.layers % pp == 0]
    mbs = (int(r["micro_batch"]),) if r["micro_batch"] else (1, 2, 4, 8, 16, 32)
    best: TrainingEstimate | None = None
    for st in options:
        base = {"tp": 1, "pp": len(st), "dp": ipus // len(st), "global_batch": gbs,
                "recompute": "full", "rts": True, "precision": "fp16", "grad_bytes": 2,
                "stage_layers": st, "seq_len": seq}
        est = best_layout(model, system, base, cal, micro_batches=mbs, interleaves=(1,))
        if est is not None and (best is None or est.step_time_s < best.step_time_s):
            best = est
    return best
