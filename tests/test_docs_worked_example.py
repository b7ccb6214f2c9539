"""The worked example of ``ontology/data/README.md`` (a user's chip, systems, model and workload)
runs as written: its Turtle validates, and every command it lists answers on it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import REPO

from accelkb.cli import main

README = (REPO / "ontology" / "data" / "README.md").read_text(encoding="utf-8")
TURTLE = re.search(r"<!-- worked-example -->\n```turtle\n(.*?)```", README, re.S)
COMMANDS = re.search(r"<!-- worked-example-commands -->\n```bash\n(.*?)```", README, re.S)
EXPECTED = [  # what each command's answer must say about the user's hardware, in order
    ("validate", "valid: bundled knowledge + my_npu.ttl"),
    ("estimate", "my-llama3-8b on my-npu-pod (32 chips)"),
    ("configure", "my-llama3-8b training on my-npu-pod (32 chips)"),
    ("schedule", "verified without Z3: True"),
    ("advise", "# How can my-llama3-8b-training run faster on my-npu-pod?"),
    ("advise", "# How can my-llama3-8b-inference run faster on my-npu-node?"),  # a model file
]
LINES = COMMANDS.group(1).strip().splitlines() if COMMANDS else []


def test_the_readme_holds_the_example() -> None:
    assert TURTLE and COMMANDS
    assert [shlex.split(c)[1] for c in LINES] == [command for command, _ in EXPECTED]


@pytest.mark.parametrize(("line", "expected"), [
    (line, text) for line, (_, text) in zip(LINES, EXPECTED, strict=True)])
def test_each_command_of_the_example(line: str, expected: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert TURTLE is not None
    (tmp_path / "my_npu.ttl").write_text(TURTLE.group(1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(line)
    assert argv[0] == "accelkb"
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert expected in out, out[:400]
