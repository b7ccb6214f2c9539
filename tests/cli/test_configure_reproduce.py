"""configure prints the `accelkb estimate` command of its best layout, and that command gives
the time configure reports. From an audit: the printed layout said it was parseable by
estimate, which refused it for training (batch and pipelined are inference keys), and the
solver ranked training layouts without the data-parallel overlap advise's baseline estimates
with, so it called ZeRO-2 OPTIMAL on an IPU-POD64 (49.2 s) where ZeRO-3 takes 41.3 s."""

from __future__ import annotations

import json
import shlex

import pytest

from accelkb.cli import main


@pytest.mark.parametrize("argv", [
    ["--model", "gpt3-13b", "--system", "ipu-pod64", "--gbs", "1024"],
    ["--model", "llama2-70b", "--system", "dgx-h100", "--phase", "inference"],
])
def test_the_printed_estimate_command_gives_the_reported_time(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["configure", *argv]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("estimate "))
    time_s = float(next(x for x in out.splitlines() if x.strip().startswith("time "))
                   .split()[1])
    command = shlex.split(line.strip().removeprefix("estimate").strip())
    assert command[:2] == ["accelkb", "estimate"]
    assert main([*command[1:], "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    got = est.get("step_time_s") or est["decode_s_per_token"]
    assert got == pytest.approx(time_s, rel=1e-3)


def test_the_solver_ranks_zero_3_where_perf_finds_it_fastest(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--gbs", "1024",
                 "--json"]) == 0
    best = json.loads(capsys.readouterr().out)["best"]
    assert best["layout"]["zero"] == 3 and best["time_s"] < 45.0
