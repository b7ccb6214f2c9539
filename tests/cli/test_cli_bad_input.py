"""Bad input through the CLI: exit 2 with a message, never a traceback; a bug is exit 70 with one
line (the traceback only with --debug); output files keep the umask. Regression tests for the
reproducers of the CLI fuzz run."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from accelkb.cli import EXIT_INTERNAL, main


@pytest.mark.parametrize(("argv", "message"), [
    (["infer", "--workload", "gpt3-13b-training", "--system", "ipu-pod64", "--parallel", "tp=0"],
     "tp: Input should be greater than or equal to 1 (got 0)"),
    (["infer", "--workload", "gpt3-13b-training", "--system", "ipu-pod64", "--chips", "-1"],
     "--chips: expected a positive number of chips, got -1"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--constraint",
      "precision=fp7"], "expected precisions among fp32, tf32, fp16, bf16, fp8, int8, got 'fp7'"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--timeout", "inf"],
     "--timeout: Input should be a finite number (got inf)"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--timeout", "nan"],
     "--timeout: Input should be a finite number"),
    (["schedule", "--topology", "ring:4", "--collective", "allgather", "--out", "{tmp}"],
     "expected a file path, got a directory"),
])
def test_bad_input_exits_2(argv: list[str], message: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_huge_chip_count_is_answered_not_hung(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--chips",
                 "1000000000000", "--timeout", "5"])
    assert code == 1 and "UNSATISFIABLE" in capsys.readouterr().out  # divisors() counted to n
    assert time.monotonic() - started < 60


def test_an_internal_error_is_exit_70_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.commands import validate

    def broken(args: object) -> int:
        raise RuntimeError("something accelkb got wrong")

    monkeypatch.setattr(validate, "run", broken)
    assert main(["validate"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: something accelkb got wrong" in err
    assert "this is a bug in accelkb" in err and "Traceback" not in err
    assert main(["--debug", "validate"]) == EXIT_INTERNAL
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_out_files_keep_the_umask_or_the_existing_mode(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schedule.json"
    old = os.umask(0o022)
    try:
        assert main(["schedule", "--topology", "ring:4", "--collective", "allgather", "--out",
                     str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        out.chmod(0o640)
        assert main(["schedule", "--topology", "ring:4", "--collective", "allgather", "--out",
                     str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
    finally:
        os.umask(old)
    capsys.readouterr()
    assert [p.name for p in tmp_path.iterdir()] == ["schedule.json"]  # no temporary file left
