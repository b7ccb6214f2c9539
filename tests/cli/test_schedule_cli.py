"""`accelkb schedule`: exit codes, JSON summary, atomic --out, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.cli import main


def test_json_summary_and_out_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sched.json"
    fig = tmp_path / "sched.svg"
    rc = main(["schedule", "--topology", "ring:8", "--collective", "allgather", "--chunks", "2",
               "--json", "--out", str(out), "--figure", str(fig)])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "OPTIMAL" and summary["makespan_steps"] == 7
    assert summary["lower_bound_steps"] == 7 and summary["verified"] is True
    assert summary["chunks_per_rank"] == 2 and summary["synthesis_seconds"] >= 0
    data = json.loads(out.read_text())
    assert data["makespan_steps"] == 7 and len(data["transfers"]) == 8 * 7 * 2
    assert fig.read_text().startswith("<svg")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_topology_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"directed": False, "nodes": [{"id": i} for i in range(3)],
                             "edges": [{"source": 0, "target": 1}, {"source": 1, "target": 2}]}))
    rc = main(["schedule", "--topology-file", str(f), "--collective", "alltoall"])
    assert rc == 0
    assert "OPTIMAL" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["--topology", "ring:x", "--collective", "allgather"],
    ["--topology", "ring:4", "--collective", "allgather", "--chunks", "0"],
    ["--topology", "ring:4", "--collective", "allgather", "--time-limit", "-1"],
    ["--topology-file", "/nonexistent/t.json", "--collective", "allgather"],
    ["--topology", "ring:4", "--collective", "allgather", "--out", "/nonexistent/dir/x.json"],
    ["--topology", "ring:4", "--collective", "broadcast", "--root", "4"],
    ["--topology", "ring:4", "--collective", "allgather", "--root", "1"],
])
def test_bad_input_exits_2_with_a_message(argv: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", *argv]) == 2
    err = capsys.readouterr().err
    assert "expected" in err and "Traceback" not in err


def test_broadcast_from_a_chosen_root(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bcast.json"
    rc = main(["schedule", "--topology", "hypercube:4", "--collective", "broadcast", "--chunks",
               "16", "--root", "5", "--json", "--out", str(out)])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["status"], summary["makespan_steps"], summary["root"]) == ("OPTIMAL", 7, 5)
    transfers = json.loads(out.read_text())["transfers"]
    assert {tuple(t["chunk"])[0] for t in transfers} == {5}
    assert min(t["step"] for t in transfers if t["src"] == 5) == 0


def test_unknown_system_exits_2(monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.errors import UnknownNameError
    from accelkb.perf import from_kb

    def unknown(name: str) -> tuple[str, float, float]:
        raise UnknownNameError("system", name, ["groqrack", "dgx-a100"])

    monkeypatch.setattr(from_kb, "topology_spec", unknown)
    assert main(["schedule", "--system", "groqrak", "--collective", "allgather"]) == 2
    err = capsys.readouterr().err
    assert "unknown system 'groqrak'" in err and "Traceback" not in err


def test_a_system_scheduled_on_one_of_its_subsystems_says_so(
        capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.perf import from_kb

    # Bow Pod256: four Pod64 tori joined through GW-Link switches (switch:4, no chip level)
    assert from_kb.topology_spec("bow-pod256")[0] == "torus:4x16"
    assert from_kb.topology_scope("bow-pod256") == ("bow-pod64", 64, 256)
    assert from_kb.topology_scope("dgx-a100-superpod") == ("dgx-a100", 8, 1120)
    assert from_kb.topology_scope("groqrack") is None  # its dragonfly spans all 72 chips
    assert main(["schedule", "--system", "bow-pod256", "--collective", "allgather",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["chips"] == 64
    assert (summary["scope"]["level"], summary["scope"]["chips"],
            summary["scope"]["system_chips"]) == ("bow-pod64", 64, 256)
    assert main(["schedule", "--system", "dgx-a100-superpod", "--collective", "allgather"]) == 0
    assert "scope: one dgx-a100 (8 of the 1120 chips of dgx-a100-superpod)" in \
        capsys.readouterr().out
    assert main(["schedule", "--system", "groqnode", "--collective", "allgather",
                 "--json"]) == 0
    assert "scope" not in json.loads(capsys.readouterr().out)


def test_system_topology_and_seconds(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.perf import from_kb

    monkeypatch.setattr(from_kb, "topology_spec", lambda name: ("full:4", 1e9, 1e-6))
    rc = main(["schedule", "--system", "x", "--collective", "allgather", "--chunks", "3",
               "--message-bytes", "3e6", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert rc == 0 and summary["makespan_steps"] == 3
    assert summary["seconds"] == pytest.approx(3 * (1e6 / 1e9 + 1e-6))
