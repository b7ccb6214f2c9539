"""advise --workloads: other training workloads (vision models) on the report's systems."""

from __future__ import annotations

import pytest

from accelkb.advise.models.workloads import other_workloads, sentence, workload_facts
from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.calibration import load_calibration
from accelkb.perf.dense import best_dense_layout
from accelkb.perf.from_kb import dense_spec, system_spec


@pytest.fixture(scope="module")
def rows(kb: KnowledgeBase) -> list:
    wls = [workload_facts(kb, "resnet50-training"), workload_facts(kb, "vit-b16-training")]
    systems = [(n, system_spec(n, kb=kb)) for n in ("ipu-pod16", "dgx-a100")]
    return other_workloads(kb, wls, systems)


def test_every_workload_on_every_system(rows: list) -> None:
    assert [(r.workload, r.system) for r in rows] == [
        ("resnet50-training", "ipu-pod16"), ("resnet50-training", "dgx-a100"),
        ("vit-b16-training", "ipu-pod16"), ("vit-b16-training", "dgx-a100")]
    for r in rows:
        assert r.fits and r.time_to_train_s and r.samples_per_s and r.samples_per_joule
        assert r.time_to_train_s == pytest.approx(r.samples_to_train / r.samples_per_s)
        if r.system.startswith("ipu"):  # feasible in SRAM
            assert r.sram_bytes and 0 < (r.working_set_bytes or 0) <= r.sram_bytes
    # only the report's own system gets levers
    assert [bool(r.levers) for r in rows] == [True, False, True, False]


def test_resnet_row_is_the_dense_search_on_the_workloads_batch(kb: KnowledgeBase,
                                                               rows: list) -> None:
    est, mb, rc = best_dense_layout(dense_spec("resnet50", kb=kb), system_spec("ipu-pod16", kb=kb),
                                    16, 1920, load_calibration())
    r = rows[0]
    assert r.step_s == pytest.approx(est.step_time_s)
    assert r.layout == f"dp=16, micro-batch {mb}, recompute {'on' if rc else 'off'}"


def test_the_measured_run_is_set_beside_the_model(rows: list) -> None:
    pod16 = rows[0]
    # MLPerf Training v1.0 closed, IPU-POD16, batch 1920: 2226.9 s (the workload's own run)
    assert pod16.measured_s == pytest.approx(2226.9)
    assert "37.1 min at batch 1920" in pod16.measured
    text = sentence(rows)
    assert "on ipu-pod16 the same run measured 37.1 min where the model gives" in text
    assert "no published measurement" in text  # ViT has none


def test_a_workload_that_is_not_training_is_refused(kb: KnowledgeBase) -> None:
    with pytest.raises(InputError, match="expected a training workload"):
        workload_facts(kb, "llama2-70b-inference")


def test_cli_names_an_unknown_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--system", "ipu-pod16", "--workload", "bert-large-training",
                 "--workloads", "no-such-workload", "--quiet"]) == 2
    assert "no-such-workload" in capsys.readouterr().err
