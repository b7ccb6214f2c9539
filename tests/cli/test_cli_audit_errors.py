"""User mistakes and negative answers found by an error-handling audit (about 240 commands):
each got exit 70 ("a bug in accelkb"), exit 0 with a wrong or non-finite answer, or the wrong
one of exits 1 and 2. Each case here is the audit's command, or its smallest form."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.cli import main

EST = ["estimate", "inference", "--model", "llama2-70b", "--system", "dgx-h100"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("query", [
    "SELECT * WHERE { SERVICE <file:///etc/passwd> { ?s ?p ?o } }",
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }"])
def test_a_local_query_refuses_service_instead_of_fetching_it(
        query: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["query", query], capsys)
    assert code == 2 and "SERVICE would make accelkb fetch an arbitrary URL" in err


def test_a_local_query_says_an_update_is_refused_not_a_syntax_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["query", "INSERT DATA { <a> <b> <c> }"], capsys)
    assert code == 2 and "read-only: SPARQL Update" in err and "syntax" not in err


@pytest.mark.parametrize("argv, said", [
    ([*EST, "--kwh-price", "12"], "expected --kwh-price below 10 USD per kWh (0.12 is 12 cents)"),
    ([*EST, "--price", "1e308", "--json"], "expected --price below 100000 USD per chip-hour"),
    (["configure", "--model", "gpt3-13b", "--system", "dgx-h100", "--gbs", "512", "--timeout",
      "1e308"], "expected --timeout > 0 and at most 604800 seconds"),
    (["schedule", "--topology", "torus:4x4", "--collective", "allreduce", "--time-limit",
      "1e308"], "expected --time-limit > 0 and at most 604800 seconds"),
    (["query", "--timeout", "1e308", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"],
     "expected --timeout > 0 and at most 604800 seconds"),
    (["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-h100", "--parallel",
      "tp=8,gbs=8", "--tokens", "nan"], "--tokens: expected a positive number of at most 1e+16"),
    (["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-h100", "--parallel",
      "tp=8,gbs=8", "--tokens", "1e308", "--json"], "--tokens: expected a positive number"),
    (["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-h100", "--parallel",
      "tp=8,tp=4,gbs=8"], "expected each --parallel key once, got tp twice: 'tp=8' and 'tp=4'"),
    (["estimate", "training", "--model", "gpt3-13b", "--system", "dgx-h100", "--parallel",
      "gbs=8,global_batch=16"], "got global_batch twice"),
])
def test_numbers_no_one_means_are_bad_input(argv: list[str], said: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(argv, capsys)
    assert code == 2, err
    assert said in err and "bug" not in err and "Infinity" not in out


@pytest.mark.parametrize("parallel", ["tp=7", "tp=128"])
def test_infer_refuses_a_layout_estimate_refuses(parallel: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # it had exited 0, and explain derived an interconnect-bound finding from tp=7
    code, _, err = _run(["infer", "--workload", "gpt3-175b-training", "--system", "ipu-pod64",
                         "--parallel", parallel], capsys)
    assert code == 2 and f"--parallel {parallel}: expected tp to divide the 96" in err


def test_a_speed_target_no_layout_meets_is_a_no(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["advise", "--system", "dgx-h100", "--workload", "llama2-70b-inference",
                         "--goal", "cost", "--slo-tokens-per-s-per-user", "1e9", "--quiet"],
                        capsys)
    assert code == 1 and "keeps 1e+09 tokens/s per user" in err


def test_a_sweep_spec_that_is_not_utf8_is_bad_input(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_bytes(b"\xff\xfename: x\n")
    code, _, err = _run(["sweep", str(spec), "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 2 and "expected UTF-8 text, got byte 0xff at offset 0" in err


def test_configure_says_an_error_on_stderr_not_into_its_output(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["configure", "--model", "llama2-70b", "--system", "dgx-h100",
                           "--phase", "inference", "--chips", "1000000"], capsys)
    assert code == 2 and out == "" and "at most 1016 (dgx-h100-superpod)" in err


@pytest.mark.parametrize("change, said", [
    ({"host_bandwidth_bytes_per_s_per_chip": -5}, "host_bandwidth_bytes_per_s_per_chip"),
    ({"chip": {"peak_flops": {"bf16": 1e-300}}}, "expected every peak_flops value between"),
    ({"chip": {"tdp_watts": -700}}, "tdp_watts"),
    ({"power_watts_per_chip": 0}, "power_watts_per_chip"),
    ({"chips": 1_000_000}, "whose outermost joins all 1000000 chips, got group_chips [8]"),
])
def test_a_system_file_with_impossible_values_is_bad_input(
        tmp_path: Path, change: dict[str, object], said: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    # a negative host bandwidth had given a negative step time with exit 0; a 1e-300 peak a
    # division by zero (exit 70); a million chips over an 8-chip level were estimated as 8
    import json

    from accelkb.perf.from_kb import system_spec

    data = json.loads(system_spec("dgx-h100").model_dump_json())
    for key, value in change.items():
        if isinstance(value, dict):
            data[key].update(value)
        else:
            data[key] = value
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    code, _, err = _run(["estimate", "training", "--model", "gpt3-13b", "--system", str(path),
                         "--parallel", "tp=8,gbs=8,offload=1"], capsys)
    assert code == 2 and said in err, err


@pytest.mark.parametrize("argv, said", [
    (["schedule", "--topology", "torus:1x1", "--collective", "allreduce"],
     "expected a network of at least 2 chips to schedule a collective on, got 1"),
    (["schedule", "--topology", "torus:4x4", "--collective", "allreduce", "--message-bytes",
      "100"], "expected --message-bytes only with --system"),
    (["schedule", "--topology", "torus:4x4", "--collective", "allgather", "--out", ""],
     "expected --out to name a file, got an empty name"),
    (["schedule", "--topology", "torus:4x4", "--collective", "allgather", "--figure", "f.png"],
     "expected --figure ending in .svg"),
    (["configure", "--model", "gpt3-13b", "--system", "dgx-h100", "--phase", "inference",
      "--gbs", "64"], "expected --gbs (a training global batch) only with --phase training"),
    (["advise", "--system", "dgx-h100", "--workload", "llama2-70b-inference", "--goal", "time",
      "--slo-tokens-per-s-per-user", "50", "--quiet"],
     "expected --slo-tokens-per-s-per-user only with --goal cost or energy"),
])
def test_an_option_that_does_not_apply_is_said_not_ignored(
        argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(argv, capsys)
    assert code == 2 and said in err, err


def test_a_yaml_mistake_says_what_and_where(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nmodels: [llama2-7b\nsystems: [dgx-h100]\n")
    code, _, err = _run(["sweep", str(spec), "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 2 and "not valid YAML: expected ',' or ']'" in err and "at line 3, column" in err


def test_validate_says_every_files_error_at_once(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad, junk = tmp_path / "bad.ttl", tmp_path / "junk.ttl"
    bad.write_text("<a> <b> .\n")
    junk.write_text('@prefix x: <urn:x#> .\nx:a x:b "c\n')
    code, _, err = _run(["validate", str(bad), str(tmp_path / "none.ttl"), str(junk)], capsys)
    assert code == 2 and "3 files cannot be used" in err
    assert "none.ttl: no such file" in err and "bad.ttl:1:" in err and "junk.ttl:2:" in err


def test_a_summary_refuses_a_status_no_solver_gives(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    rows = tmp_path / "r.csv"
    rows.write_text("point_id,status\np1,BANANA\n")
    code, _, err = _run(["sweep", "--summary", str(rows)], capsys)
    assert code == 2 and "expected one solver outcome per row" in err and "BANANA" in err


def test_explain_says_a_malformed_iri_and_how_to_derive_findings(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["explain", "not an iri <>"], capsys)
    assert code == 2 and "expected an IRI" in err and "serialize" not in err
    code, _, err = _run(["explain", "https://w3id.org/accelkb/data/nothing"], capsys)
    assert code == 2 and "accelkb explain --workload W --system S" in err
