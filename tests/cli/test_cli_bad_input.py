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
from accelkb.perf.from_kb import system_spec


@pytest.mark.parametrize(("argv", "message"), [
    (["infer", "--workload", "gpt3-13b-training", "--system", "ipu-pod64", "--parallel", "tp=0"],
     "tp: Input should be greater than or equal to 1 (got 0)"),
    (["infer", "--workload", "gpt3-13b-training", "--system", "ipu-pod64", "--chips", "-1"],
     "--chips: expected a positive number of chips, got -1"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--constraint",
      "precision=fp7"], "expected precisions among fp32, tf32, fp16, bf16, fp8, int8, got 'fp7'"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--timeout", "inf"],
     "expected --timeout > 0 and at most 604800 seconds (a week), got inf"),
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--timeout", "nan"],
     "expected --timeout > 0 and at most 604800 seconds (a week), got nan"),
    (["schedule", "--topology", "ring:4", "--collective", "allgather", "--out", "{tmp}"],
     "expected a file path, got a directory"),
])
def test_bad_input_exits_2(argv: list[str], message: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_huge_chip_count_is_answered_not_hung(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # the knowledge base has no system of 10^12 IPUs: refused, naming what is missing
    assert main(["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--chips",
                 "1000000000000", "--timeout", "5"]) == 2
    assert "no system of at least 1000000000000 built of it" in capsys.readouterr().err
    # a system file whose fabric claims to join them: solved, not hung (divisors() counted to n)
    big = tmp_path / "pod.json"
    big.write_text(system_spec("ipu-pod64").model_copy(update={"max_chips": 10**12})
                   .model_dump_json())
    started = time.monotonic()
    code = main(["configure", "--model", "gpt3-13b", "--system", str(big), "--chips",
                 "1000000000000", "--timeout", "5"])
    assert code == 1 and "UNSATISFIABLE" in capsys.readouterr().out
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


@pytest.mark.parametrize("spec", ["ring:100000000", "torus:3000x3000", "torus:1000x1000x1000",
                                  "switch:10000000", "dragonfly:nodes=9,chips=100000", "full:5000"])
def test_huge_topologies_are_refused_before_they_are_built(spec: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert main(["schedule", "--topology", spec, "--collective", "allgather"]) == 2
    assert "expected a network of at most 65,536 chips" in capsys.readouterr().err
    assert time.monotonic() - started < 5  # nothing was allocated


@pytest.mark.parametrize(("content", "message"), [
    ('{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "links": Infinity}]}',
     "expected JSON numbers, got Infinity"),
    ('{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "links": '
     + "9" * 5000 + "}]}", "expected an integer of at most 30 digits, got one of 5000"),
    ('{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "links": 1.5}]}',
     "to be a whole number from 1 to 1024"),
    ('{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1, "links": true}]}',
     "to be a whole number from 1 to 1024"),
    ('{"nodes": [{"id": 0}, {"id": 1}], "edges": [{"source": 0, "target": 1}], "graph": ["x"]}',
     "expected 'graph' to be an object"),
    ("[" * 100000 + "]" * 100000, "nested too deep to read"),
])
def test_bad_topology_files_exit_2(content: str, message: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "topology.json"
    path.write_text(content, encoding="utf-8")
    assert main(["schedule", "--topology-file", str(path), "--collective", "allgather"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("extra", "message"), [
    (["--time-limit", "nan"], "expected --time-limit > 0 and at most 604800 seconds (a week), "
     "got nan"),
    (["--time-limit", "inf"], "expected --time-limit > 0 and at most 604800 seconds (a week), "
     "got inf"),
    (["--message-bytes", "nan", "--json"], "expected --message-bytes > 0, got nan"),
])
def test_non_finite_numbers_exit_2(extra: list[str], message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "--topology", "ring:4", "--collective", "allgather", *extra]) == 2
    assert message in capsys.readouterr().err


def test_a_traffic_entry_too_large_to_hold_exits_2(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "traffic.json"
    path.write_text('{"traffic": [[0, 1, 1000000000000]]}', encoding="utf-8")
    assert main(["schedule", "--topology", "ring:4", "--collective", "traffic", "--traffic",
                 str(path)]) == 2
    assert "expected chunks of at most 1,000,000" in capsys.readouterr().err


def test_jsonio_doctests() -> None:
    import doctest

    from accelkb import jsonio

    result = doctest.testmod(jsonio, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_no_answer_within_the_limit_is_exit_3_not_infeasible(
        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code = main(["schedule", "--system", "groq-576", "--collective", "alltoall", "--time-limit",
                 "0.01", "--json"])
    assert code == 3 and json.loads(capsys.readouterr().out)["status"] == "UNKNOWN"
    code = main(["configure", "--model", "gpt3-175b", "--system", "dgx-a100-superpod",
                 "--chips", "1024", "--timeout", "0.001", "--json"])
    out = json.loads(capsys.readouterr().out)
    # within 1 ms the search may or may not have met a first layout: never a "no" either way
    assert (code, out["status"]) in ((3, "UNKNOWN"), (0, "FEASIBLE"))


def test_a_schedule_that_fails_its_check_is_a_bug_not_a_no(
        capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.commands.schedule import _exit_code
    from accelkb.solver.status import Status

    assert [_exit_code(s, "") for s in Status] == [0, 0, 1, 3, EXIT_INTERNAL]
    assert "internal error" in capsys.readouterr().err


def test_parallel_messages_use_the_keys_the_user_typed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "inference", "--model", "llama2-70b", "--system", "groq-576",
                 "--parallel", "tp=8,mb=8"]) == 2
    err = capsys.readouterr().err
    assert "got mb: inference has no such setting" in err and "bs, " in err  # the keys it takes
    assert "micro_batch" not in err
    assert main(["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-a100",
                 "--parallel", "tp=8,mb=0"]) == 2
    assert "mb (micro_batch): Input should be greater than or equal to 1 (got 0)" in \
        capsys.readouterr().err


@pytest.mark.parametrize("chunks", ["1000000000", "100000"])
def test_a_schedule_too_big_to_build_is_refused_from_its_size(
        chunks: str, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["schedule", "--topology", "torus:4x4", "--collective", "allgather", "--chunks",
                 chunks, "--time-limit", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "expected a schedule of at most 5,000,000 transfers" in err
    assert "use fewer chunks" in err
    assert time.monotonic() - started < 5  # refused before the bounds' loops (ball: > 300 s)


@pytest.mark.parametrize(("argv", "limit"), [
    (["--system", "groq-576", "--collective", "alltoall"], 0.01),
    (["--system", "groq-576", "--collective", "alltoall"], 1.0),
    (["--system", "groq-576", "--collective", "allreduce", "--chunks", "72"], 0.01),
    (["--topology", "torus:4x4", "--collective", "allgather", "--chunks", "10000"], 5.0),
])
def test_a_time_limit_too_short_for_the_check_is_unknown_at_once(
        argv: list[str], limit: float, capsys: pytest.CaptureFixture[str]) -> None:
    main(["schedule", "--system", "groq-576", "--collective", "broadcast", "--time-limit",
          "0.01"])  # the knowledge base loaded: part of the process start, not of the limit
    capsys.readouterr()
    started = time.monotonic()
    code = main(["schedule", *argv, "--time-limit", str(limit), "--json"])
    took = time.monotonic() - started
    out = capsys.readouterr().out
    assert code == 3 and '"status": "UNKNOWN"' in out
    assert "needs a time limit (--time-limit) of at least" in out
    # the stated constant: the knowledge base (for --system) and the network's hop distances
    assert took < limit + 3.0, took


def test_a_local_query_has_a_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "--timeout", "2",
                 "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"])
    assert code == 3  # no answer, which is not a negative one
    assert "no answer within 2 s (--timeout 2)" in capsys.readouterr().err
    assert main(["query", "--timeout", "inf", "ASK {}"]) == 2
    assert "expected --timeout > 0 and at most 604800 seconds" in capsys.readouterr().err


def test_construct_where_with_a_limit_is_answered(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "--format", "csv",
                 "CONSTRUCT WHERE { ?s a ak:Chip ; ak:shortName ?n } ORDER BY ?n LIMIT 2"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(lines) == 4 and all("a100-sxm4" in line for line in lines)  # 2 chips x 2 triples


def test_a_default_the_user_never_gave_is_said_to_be_a_default(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "gpt3-13b", "--system", "ipu-pod64"]) == 2
    err = capsys.readouterr().err
    assert "got gbs=1, the default: give gbs=N" in err and "mb = 64 x 1, the default" in err
    assert main(["estimate", "training", "--model", "gpt3-13b", "--system", "ipu-pod64",
                 "--parallel", "tp=4,gbs=30,mb=2"]) == 2
    err = capsys.readouterr().err
    assert "dp x mb = 16 x 2 = 32 (dp = 64 chips / (tp x pp)), got gbs=30" in err
    assert "default" not in err


def test_a_store_failure_names_the_url_typed_and_what_was_tried(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "--store", "sparql+http://127.0.0.1:1/query", "ASK {}"]) == 2
    err = capsys.readouterr().err
    assert "the update endpoint of --store sparql+http://127.0.0.1:1/query" in err
    assert "while writing the knowledge" in err


def test_sigterm_during_an_out_write_leaves_no_temp_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    from accelkb.commands import _output

    def terminated_before_rename(src: str, dst: str) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here, inside the write

    monkeypatch.setattr(_output.os, "replace", terminated_before_rename)
    out = tmp_path / "s.json"
    code = main(["schedule", "--topology", "ring:4", "--collective", "allgather", "--out",
                 str(out)])
    assert code == 143 and "terminated" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # neither the target nor a temporary file
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


def test_the_next_write_removes_temp_files_of_killed_writers(tmp_path: Path) -> None:
    from accelkb.commands._output import write_atomically

    dead = tmp_path / ".s.json.999999999.abcd1234"  # above any pid_max: that writer is gone
    alive = tmp_path / f".s.json.{os.getpid()}.abcd1234"  # a write in progress: kept
    other = tmp_path / ".s.json.notes"  # not ours
    for p in (dead, alive, other):
        p.write_text("partial")
    write_atomically(str(tmp_path / "s.json"), "{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [alive.name, other.name, "s.json"])


def test_a_bad_second_output_is_refused_before_the_first_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the fuzz test: --out was written, then --figure <a directory> refused."""
    out = tmp_path / "s.json"
    assert main(["schedule", "--topology", "ring:8", "--collective", "allgather", "--out",
                 str(out), "--figure", str(tmp_path)]) == 2
    assert "--figure" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("argv", "message"), [
    (["configure", "--model", "gpt3-13b", "--system", "ipu-pod64", "--constraint",
      "sram_only=maybe"], "expected sram_only to be one of 1, true, yes, on, 0, false, no, off"),
    (["schedule", "--topology-file", "{tmp}/t.json", "--collective", "allgather"],
     "expected 'links' of each edge to be a whole number from 1 to 1024, got 1.5 on the edge"),
])
def test_values_once_accepted_silently_are_refused(argv: list[str], message: str,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.json").write_text('{"graph": {}, "nodes": [{"id": 0}, {"id": 1}], '
                                     '"links": [{"source": 0, "target": 1, "links": 1.5}]}')
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_ask_as_csv_is_answered(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the fuzz test: rdflib's CSV serializer takes SELECT results only (exit 70)."""
    assert main(["query", "--format", "csv", "ASK { ?c a ak:Chip }"]) == 0
    assert capsys.readouterr().out.splitlines() == ["boolean", "true"]


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_a_bad_per_user_speed_target_exits_2(value: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--system", "dgx-a100", "--workload", "llama2-70b-inference",
                 "--goal", "cost", "--slo-tokens-per-s-per-user", value, "--quiet"]) == 2
    assert "expected --slo-tokens-per-s-per-user > 0" in capsys.readouterr().err
