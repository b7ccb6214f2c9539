"""``--data FILE`` on every command that reads the knowledge base: a user's chip, system and model
resolve in ``estimate``, ``configure`` and ``schedule --system`` as bundled ones do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.cli import build_parser, main
from accelkb.perf.from_kb import default_kb


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_every_command_that_reads_the_knowledge_takes_data() -> None:
    parser = build_parser()
    for command in ("estimate", "configure", "schedule", "infer", "explain", "query", "advise",
                    "serve"):
        argv = {"estimate": ["estimate", "training", "--model", "m", "--system", "s"],
                "configure": ["configure", "--model", "m", "--system", "s"],
                "schedule": ["schedule", "--system", "s", "--collective", "allgather"],
                "infer": ["infer", "--workload", "w", "--system", "s"],
                "explain": ["explain", "--workload", "w", "--system", "s"],
                "query": ["query", "ASK {}"], "advise": ["advise", "--system", "s",
                                                         "--workload", "w"],
                "serve": ["serve"]}[command]
        args = parser.parse_args([*argv, "--data", "a.ttl", "--data", "b.ttl"])
        assert args.data == ["a.ttl", "b.ttl"], command


def test_user_system_and_model_in_estimate(capsys: pytest.CaptureFixture[str],
                                           data_dir: Path) -> None:
    data = str(data_dir / "good_minimal.ttl")
    out = _json(capsys, "estimate", "training", "--model", "tiny-gpt", "--system", "acme-x1-pod",
                "--parallel", "tp=1,dp=8,gbs=64", "--data", data, "--json")
    assert out["system"] == "acme-x1-pod" and out["chips"] == 8 and out["step_time_s"] > 0
    out = _json(capsys, "estimate", "inference", "--model", "tiny-gpt", "--system", "acme-x1-box",
                "--data", data, "--json")
    assert out["system"] == "acme-x1-box" and out["tokens_per_s_per_user"] > 0
    # without the file the names are unknown, and nothing of the file stays active
    assert main(["estimate", "training", "--model", "tiny-gpt", "--system", "acme-x1-pod"]) == 2
    assert "unknown model 'tiny-gpt'" in capsys.readouterr().err
    assert "acme-x1-pod" not in default_kb().names("system")


def test_user_system_in_configure_and_schedule(capsys: pytest.CaptureFixture[str],
                                               data_dir: Path) -> None:
    data = str(data_dir / "good_minimal.ttl")
    out = _json(capsys, "configure", "--model", "tiny-gpt", "--system", "acme-x1-pod", "--gbs",
                "64", "--timeout", "30", "--data", data, "--json")
    assert out["status"] in ("OPTIMAL", "FEASIBLE") and out["best"]["layout"]["tp"] >= 1
    out = _json(capsys, "schedule", "--system", "acme-x1-pod", "--collective", "allgather",
                "--data", data, "--json")
    assert out["status"] == "OPTIMAL" and out["chips"] == 8


def test_a_bad_data_file_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_bytes(b"\x00\x01binary")
    assert main(["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-a100",
                 "--data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "binary data" in err and "Traceback" not in err
