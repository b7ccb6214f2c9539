"""Samples to train of each MLPerf Training submission, from its own logs (one row per run)."""

from __future__ import annotations

import pytest

from accelkb.perf.validation import mlperf_samples as M
from accelkb.perf.validation.training import read_rows


def test_every_run_row_has_its_log_and_a_status() -> None:
    rows = read_rows(M.FILE)
    assert len(rows) == 151
    assert all(r["source"].startswith(f"github.com/mlcommons/training_results_{r['round']} ") and
               r["file"] in r["source"] and r["status"] in ("success", "aborted") for r in rows)


def test_the_score_drops_the_fastest_and_the_slowest_run_and_an_aborted_run_counts_slowest() -> None:
    # v1.1 IPU-POD16 ResNet-50: result_0 aborted at epoch 38 (accuracy 0.75846 < 0.759), so it is
    # the dropped slowest; the fastest successful run is dropped too; 3 runs of 38 epochs remain
    s = M.samples_to_train("resnet", "v1.1", "ipu-pod16")
    assert s is not None and s.complete and s.runs == 3
    assert s.samples == 38 * M.IMAGENET_TRAIN_IMAGES


def test_bert_samples_vary_per_run_so_one_log_is_not_enough() -> None:
    # v1.0 IPU-POD16 BERT: runs need 2.45M to 2.98M sequences; the score's 8 runs average 2.714M,
    # where result_0 alone (2,800,237) was used before
    s = M.samples_to_train("bert", "v1.0", "ipu-pod16")
    assert s is not None and s.runs == 8 and s.samples == pytest.approx(2_713_962.25)


def test_a_submission_with_logs_missing_averages_the_runs_that_are_there() -> None:
    s = M.samples_to_train("bert", "v1.0", "dgx-a100")
    assert s is not None and not s.complete and s.runs == 8
    assert M.samples_to_train("bert", "v0.7", "dgx-a100") is None


def test_v2_graphcore_folders_hold_bow_ipus() -> None:
    """v2.0's folders keep the ipu-podN names but the round's system JSONs say 'Graphcore Bow
    IPU': its runs count for the Bow Pods, not for the GC200 IPU-PODs of v1.x."""
    bow = M.samples_to_train("resnet", "v2.0", "bow-pod256")
    assert bow is not None and not bow.complete and bow.runs == 3
    assert bow.samples == 45 * M.IMAGENET_TRAIN_IMAGES  # Graphcore's fixed 45 epochs
    assert M.samples_to_train("resnet", "v2.0", "ipu-pod256") is None
    nv = M.samples_to_train("resnet", "v2.0", "dgx-a100")  # result_2 aborted: the slowest
    assert nv is not None and nv.complete and nv.runs == 3 and nv.samples == 35 * 1_281_167
