"""`accelkb validate` and `accelkb query` as a user runs them: output, formats, exit codes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from accelkb.cli import main

EXAMPLES = REPO / "examples" / "queries"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_bundled_ok(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["valid"] is True and data["counts"]["chip"] >= 10


def test_validate_bad_file_exit_2(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, err = run(capsys, "validate", str(data_dir / "bad" / "link_to_unknown_chip.ttl"))
    assert code == 2
    assert out == ""
    assert "ak:connectsChip must point to a declared ak:Chip" in err
    assert "Traceback" not in err


def test_query_json_is_sparql_results_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "query", "--format", "json", "--file",
                       str(EXAMPLES / "chips_with_200mb_sram.rq"))
    assert code == 0
    data = json.loads(out)
    assert data["head"]["vars"][:2] == ["chip", "name"]
    names = {b["name"]["value"] for b in data["results"]["bindings"]}
    assert "groqchip" in names


def test_query_csv_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    text = "SELECT ?n WHERE { ?c a ak:Chip ; ak:shortName ?n } ORDER BY ?n"
    code, out, _ = run(capsys, "query", "--format", "csv", text)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["n"] and ["gc200"] in rows
    code, out, _ = run(capsys, "query", text)
    assert code == 0 and "gc200" in out and out.rstrip().endswith("rows)")


def test_query_ask_and_construct(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "query", "--format", "json", "ASK { kb:gc200 a ak:Chip }")
    assert code == 0 and json.loads(out)["boolean"] is True
    code, out, _ = run(capsys, "query", "--file", str(EXAMPLES / "describe_gc200.rq"))
    assert code == 0 and "capacityBytes" in out


def test_query_with_user_data(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, "query", "--data", str(data_dir / "good_minimal.ttl"), "--format",
                       "csv", "SELECT ?n WHERE { ?c a ak:Chip ; ak:shortName ?n }")
    assert code == 0 and "acme-x1" in out


@pytest.mark.parametrize("argv, needle", [
    (["query", "SELEC ?x"], "SPARQL syntax error"),
    (["query"], "expected a SPARQL query text or --file"),
    (["query", "--file", "/nonexistent/q.rq"], "no such query file"),
    (["query", "--format", "xml", "ASK {}"], "invalid choice"),
    (["validate", "/nonexistent/x.ttl"], "no such file"),
    (["query", "--no-write", "ASK {}"], "expected --no-write together with --store"),
    (["query", "--store", "http://127.0.0.1:1/q", "ASK {}"], "expected a store URL like sparql+http://"),
])
def test_bad_input_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_console_script_runs_as_a_process(tmp_path: Path) -> None:
    # Run outside the checkout: from its root, ./accelkb would shadow the installed package.
    proc = subprocess.run([sys.executable, "-m", "accelkb.cli", "query", "ASK { ?c a ak:Chip }"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "true"


def test_missing_tier_bandwidth_names_the_tiers(capsys: pytest.CaptureFixture[str]) -> None:
    """SN30: no public SRAM or DDR bandwidth; the error says which tiers lack what and how to
    add it, instead of only 'got none'."""
    code, _, err = run(capsys, "infer", "--workload", "gpt3-13b-training",
                       "--system", "datascale-sn30-8")
    assert code == 2 and "Traceback" not in err
    assert "kb:sn30-ddr (no bandwidth)" in err and "kb:sn30-sram (no bandwidth)" in err
    assert "--data" in err
