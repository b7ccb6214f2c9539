"""Sweep runs: the same rows on every engine and worker count, resumable after kill -9, a
timeout is UNKNOWN, the summary and the Pareto figure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.sweep import SweepSpec, run_sweep
from accelkb.sweep.evaluate import COLUMNS
from accelkb.sweep.store import read_rows

TIMING = {"solve_seconds", "estimate_seconds", "worker"}
SPEC = """\
models: [llama2-7b, llama2-13b]
systems: [dgx-h100, sambarack-sn40l-16, tpu-v5e-pod]
chips: [2, 4, 8]
precisions: [bf16, int8]
goals: [time, cost]
latency_targets: [null, 150]
whatifs:
  sn40l.ddr.bandwidth: [x2]
"""


def _stable(path: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in read_rows(path)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ref")
    (d / "s.yaml").write_text(SPEC)
    assert main(["sweep", str(d / "s.yaml"), "--out", str(d / "r.csv"), "--workers", "1",
                 "--no-progress"]) == 0
    return d


def test_rows_are_whole_and_ordered(reference: Path) -> None:
    rows = read_rows(reference / "r.csv")
    assert len(rows) == 2 * 4 * 3 * 8  # models x system variants x chips x points per group
    assert list(rows[0]) == list(COLUMNS)
    assert {r["status"] for r in rows} <= {"OPTIMAL", "FEASIBLE", "UNSATISFIABLE", "UNKNOWN",
                                          "ERROR"}
    for r in rows:
        if r["status"] == "OPTIMAL":
            assert r["time_s_low"] <= r["time_s"] <= r["time_s_high"] and r["layout"]
        else:
            assert r["reason"] and r["layout"] is None
    sn = [r for r in rows if r["system"] == "sambarack-sn40l-16" and r["precision"] == "int8"]
    assert sn and all("no int8 peak" in r["reason"] for r in sn)
    fast = [r for r in rows if r["latency_target"] == 150]
    assert any("keeps 150 tokens/s per user" in (r["reason"] or "") for r in fast)
    assert all(1 / r["time_s"] >= 150 for r in fast if r["status"] == "OPTIMAL")
    assert any(r["status"] == "OPTIMAL" for r in fast)
    assert not list(reference.glob("r.csv.journal"))


def test_two_workers_and_parquet_give_the_same_rows(reference: Path, tmp_path: Path) -> None:
    assert main(["sweep", str(reference / "s.yaml"), "--out", str(tmp_path / "r.parquet"),
                 "--workers", "2", "--no-progress"]) == 0
    assert _stable(tmp_path / "r.parquet") == _stable(reference / "r.csv")


def test_ray_engine_gives_the_same_rows(reference: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    # Ray's workers start in the driver's folder; from a source checkout with the package
    # installed (CI) that folder's accelkb/ would shadow the installed package.
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(reference / "s.yaml"), "--out", str(tmp_path / "r.csv"),
                 "--engine", "ray", "--workers", "2", "--no-progress"]) == 0
    assert _stable(tmp_path / "r.csv") == _stable(reference / "r.csv")


def test_a_sweep_killed_with_kill_9_resumes_to_the_same_rows(reference: Path,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    cmd = [sys.executable, "-m", "accelkb.cli", "sweep", str(reference / "s.yaml"), "--out",
           str(out), "--workers", "1", "--no-progress"]
    # run outside the checkout: `python -m` puts the folder first on sys.path
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    journal = out.with_name(out.name + ".journal")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(journal.glob("*.jsonl"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list(journal.glob("*.jsonl")))
    assert 2 <= done < 12 and not out.exists()  # stopped midway, nothing final written
    assert main(["sweep", str(reference / "s.yaml"), "--out", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    assert _stable(out) == _stable(reference / "r.csv")
    assert not journal.exists()
    # a second run finds everything done and solves nothing
    spec = SweepSpec.model_validate(__import__("yaml").safe_load(SPEC))
    again = run_sweep(spec, out, progress=False)
    assert again.solved == 0 and again.reused == again.points


def test_a_journal_of_another_spec_is_refused(reference: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "o.yaml"
    other.write_text(SPEC.replace("goals: [time, cost]", "goals: [time]"))
    out = tmp_path / "r.csv"
    out.write_bytes((reference / "r.csv").read_bytes())
    assert main(["sweep", str(other), "--out", str(out), "--no-progress"]) == 2
    assert "rows of another spec" in capsys.readouterr().err


def test_a_timeout_is_unknown_never_infeasible(tmp_path: Path) -> None:
    spec = SweepSpec(models=["gpt3-13b"], systems=["dgx-h100"], phases=["training"],
                     timeout_s=0.001)
    run = run_sweep(spec, tmp_path / "r.csv", progress=False)
    (row,) = read_rows(tmp_path / "r.csv")
    assert row["status"] in ("UNKNOWN", "FEASIBLE") and run.statuses.get("UNSATISFIABLE") is None


def test_summary_and_pareto_figure(reference: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    fig = tmp_path / "p.svg"
    assert main(["sweep", "--summary", str(reference / "r.csv"), "--figure", str(fig)]) == 0
    text = capsys.readouterr().out
    assert "Pareto frontier" in text and "Best point per system" in text
    assert "dgx-h100" in text and "sambarack-sn40l-16" in text
    svg = fig.read_text()
    assert "<svg" in svg and "dollars per million tokens" in svg
    assert main(["sweep", "--summary", str(tmp_path / "missing.csv")]) == 2


def test_rows_go_into_the_results_graph_for_sparql(reference: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`query --results`: every row becomes an ak:SweepPoint linked to its system; the SPARQL
    answer equals what the file says; a hand-broken file is refused whole with exit 2."""
    rows = read_rows(reference / "r.csv")
    q = ('SELECT ?sys (COUNT(?p) AS ?n) WHERE { ?p a ak:SweepPoint ; ak:solverStatus "OPTIMAL" ;'
         ' ak:configuredSystem ?s . ?s ak:shortName ?sys } GROUP BY ?sys ORDER BY ?sys')
    assert main(["query", "--results", str(reference / "r.csv"), "--format", "csv", q]) == 0
    got = dict(line.split(",") for line in capsys.readouterr().out.split()[1:])
    want: dict[str, int] = {}
    for r in rows:
        if r["status"] == "OPTIMAL":
            want[r["system"]] = want.get(r["system"], 0) + 1
    assert {k: int(v) for k, v in got.items()} == want
    bad = tmp_path / "bad.csv"
    text = (reference / "r.csv").read_text()
    bad.write_text(text.replace(",OPTIMAL,", ",DONE,", 1))
    assert main(["query", "--results", str(bad), "ASK { ?p a ak:SweepPoint }"]) == 2
    err = capsys.readouterr().err
    assert "expected one solver outcome" in err and "nothing was added" in err
    for name, said in (("missing.csv", "no such file"), ("r.txt", "expected a .csv or .parquet")):
        assert main(["query", "--results", str(tmp_path / name), "ASK { ?s ?p ?o }"]) == 2
        assert said in capsys.readouterr().err
