"""Hypothesis fuzz of every command's options and input files (issue 31).

Each example builds a command line from a mix of good and bad values (names, numbers, layouts,
files) and runs it in this process. Whatever the input, the command must:

- exit 0 (answered), 1 (a negative answer), 2 (bad input) or 3 (no answer within the limit),
  never 70 (an internal error) nor anything else;
- print no traceback;
- finish within its time limit plus a constant (commands without a limit: within a ceiling);
- leave no output file (and no temporary file) behind when it exits 2.

The examples are derandomized, so CI runs the same cases every time. ``ACCELKB_FUZZ_EXAMPLES``
scales the number of examples per command; ``ACCELKB_FUZZ_REPORT=FILE.json`` writes the
exit-code table and the slowest cases to FILE (the figures of the issue's resolution).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelkb.cli import main
from accelkb.commands._limit import TimeLimitReached, wall_clock_limit

SCALE = float(os.environ.get("ACCELKB_FUZZ_EXAMPLES", "1"))
#: What a command may take beyond its own limit, in this process (the knowledge base is
#: loaded once): the rules' inference, the estimate of the answer, and the machine's noise.
SLACK_S = 8.0
#: Commands without a time limit must still answer within this.
CEILING_S = 45.0

EXITS: Counter[tuple[str, int]] = Counter()
SLOWEST: list[tuple[float, float | None, list[str]]] = []

_BAD_NAMES = ["", "ipu-pod46", "GPT3-13B", "x" * 300, "../../etc/passwd", "llama2-70b-decode "]
_NUMBERS = ["0", "-1", "1", "2", "8", "64", "1.5", "nan", "inf", "-inf", "1e400", "true",
            "", "9" * 5000, "0x10", " 8", "1000000000000"]
_SECONDS = ["0.05", "0.3", "1", "0", "-1", "nan", "inf", "1e400", "x"]
_KEYS = ["tp", "pp", "dp", "mb", "gbs", "zero", "recompute", "sp", "v", "batch", "in", "out",
         "precision", "collectives", "dp_overlap", "micro_batch", "bogus", "TP", ""]
_VALUES = ["0", "1", "2", "4", "8", "64", "-1", "1.5", "nan", "inf", "true", "maybe", "full",
           "selective", "int8", "fp7", "auto", "schedule", "", "9" * 5000]


_WORKED_EXAMPLE = re.search(  # a user's own chip and systems (the data README's example)
    r"<!-- worked-example -->\n```turtle\n(.*?)```",
    (REPO / "ontology" / "data" / "README.md").read_text(encoding="utf-8"),
    re.S).group(1)  # type: ignore[union-attr]


def _files(root: Path) -> dict[str, str]:
    """Input files, good and bad, written once."""
    files = {
        "bad.json": "{not json",
        "deep.json": "[" * 5000 + "]" * 5000,
        "digits.json": '{"traffic": [[0, 1, ' + "9" * 5000 + "]]}",
        "infinity.json": '{"graph": {}, "nodes": [{"id": 0}], "links": Infinity}',
        "list.json": "[1, 2, 3]",
        "graph-string.json": '{"graph": "x", "nodes": [], "links": []}',
        "traffic.json": '{"traffic": [[0, 1, 2], [1, 0, 1]]}',
        "huge-traffic.json": '{"traffic": [[0, 1, 1e12]]}',
        "model.json": json.dumps({"name": "fuzz-model", "layers": 4, "hidden_size": 256,
                                  "attention_heads": 4, "sequence_length": 128,
                                  "vocab_size": 1000}),
        "empty.ttl": "",
        "bad.ttl": "@prefix ak: <https://w3id.org/accelkb/schema#> .\n<a> ak:x \"abc",
        "typo.ttl": "@prefix ak: <https://w3id.org/accelkb/schema#> .\n"
                    "<https://example.org/c> a ak:Chip ; ak:tdpWatt 5 .",
        "eight.ttl": "@prefix ak: <https://w3id.org/accelkb/schema#> .\n"
                     "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
                     "<https://example.org/s> a ak:System ; ak:chipCount \"eight\"^^xsd:integer .",
        "binary.ttl": "\udcff",  # written as bytes below
        "query.rq": "SELECT ?n WHERE { ?s ak:shortName ?n } LIMIT 3",
        "bad.rq": "SELECT WHERE {",
        "good.ttl": _WORKED_EXAMPLE,
        "ring4.json": json.dumps({"directed": False, "multigraph": False, "graph": {},
                                  "nodes": [{"id": i} for i in range(4)],
                                  "links": [{"source": i, "target": (i + 1) % 4}
                                            for i in range(4)]}),
        "links-float.json": json.dumps({"directed": False, "multigraph": False, "graph": {},
                                        "nodes": [{"id": 0}, {"id": 1}],
                                        "links": [{"source": 0, "target": 1, "links": 1.5}]}),
    }
    for name, text in files.items():
        path = root / name
        if name == "binary.ttl":
            path.write_bytes(b"\xff\xfe\x00garbage")
        else:
            path.write_text(text, encoding="utf-8")
    (root / "a-directory").mkdir()
    return {name: str(root / name) for name in [*files, "a-directory"]} | {
        "missing.json": str(root / "missing.json")}


FILES = _files(Path(tempfile.mkdtemp(prefix="accelkb-fuzz-")))


def _path(*names: str) -> list[str]:
    return [FILES[n] for n in names]


_MISSING = [FILES["a-directory"], FILES["missing.json"]]
_PARALLEL_OK = ["", "tp=8", "tp=4,pp=2,gbs=64,mb=1", "tp=8,dp=8,gbs=512,mb=1,zero=1",
                "batch=8,in=512,out=128", "tp=8,pp=9,batch=1,in=512,out=512,precision=int8",
                "gbs=1024,mb=2,recompute=selective"]
_PARALLEL_BAD = st.lists(st.tuples(st.sampled_from(_KEYS), st.sampled_from(_VALUES)),
                         min_size=1, max_size=4).map(
                             lambda kv: ",".join(f"{k}={v}" for k, v in kv))
_DATA_BAD = _path("empty.ttl", "bad.ttl", "typo.ttl", "eight.ttl", "binary.ttl") + _MISSING

#: An option: (values that make sense, values that do not (a list or a strategy), required).
#: None as the good values marks a flag.
Option = tuple[list[str] | None, list[str] | st.SearchStrategy[str], bool]


def _command(positional: Option | None = None, **options: Option) -> st.SearchStrategy[list[str]]:
    """Command lines: each optional option present or not, with a sensible value; then at most
    one fault: one option's value replaced by a bad one, or a required option left out."""
    names = list(options)
    faults: list[str | None] = [None, None, *names] + (["<positional>"] if positional else [])

    def value(draw: st.DrawFn, pool: list[str] | st.SearchStrategy[str]) -> str:
        return draw(pool if isinstance(pool, st.SearchStrategy) else st.sampled_from(pool))

    @st.composite
    def build(draw: st.DrawFn) -> list[str]:
        fault = draw(st.sampled_from(faults))
        omit = fault is not None and draw(st.booleans())
        argv: list[str] = []
        if positional is not None:
            good, bad, _ = positional
            text = value(draw, bad if fault == "<positional>" and not omit else good or [""])
            argv += [text] if text else []
        for name in names:
            good, bad, required = options[name]
            if name == fault and omit or name != fault and not required \
                    and not draw(st.booleans()):
                continue
            argv.append("--" + name.replace("_", "-"))
            if good is not None:  # not a flag
                argv.append(value(draw, bad if name == fault else good))
        return argv

    return build()


SYSTEMS = ["ipu-pod16", "ipu-pod64", "dgx-a100", "dgx-h100", "groq-576", "sn40l-node",
           "tpu-v4-pod"]
_CHIPS_OK = ["8", "16", "64"]
_FLAG: Option = (None, [], False)
COMMANDS: dict[str, tuple[str, st.SearchStrategy[list[str]], str | None, int]] = {
    # case: (command, argument strategy, the option holding its time limit, examples)
    "estimate": ("estimate", _command(
        (["training", "inference"], ["decode", "TRAINING"], True),
        model=(["gpt3-13b", "llama2-70b", "bert-large", "gpt3-1.3b", FILES["model.json"]],
               _BAD_NAMES + _path("bad.json", "deep.json", "bad.ttl") + _MISSING, True),
        system=(SYSTEMS, _BAD_NAMES + _MISSING, True), chips=(_CHIPS_OK, _NUMBERS, False),
        parallel=(_PARALLEL_OK, _PARALLEL_BAD, False), tokens=(["1e9", "3e11"], _NUMBERS, False),
        json=_FLAG, data=([FILES["good.ttl"]], _DATA_BAD, False)), None, 16),
    "configure": ("configure", _command(
        model=(["gpt3-13b", "llama2-70b", "gpt3-1.3b", FILES["model.json"]],
               _BAD_NAMES + _path("deep.json", "list.json") + _MISSING, True),
        system=(SYSTEMS, _BAD_NAMES, True), phase=(["training", "inference"], ["x", ""], False),
        chips=(_CHIPS_OK, _NUMBERS, False), gbs=(["64", "512"], _NUMBERS, False),
        constraint=(["precision=int8", "tp=4", "pp=2"],
                    ["precision=fp7", "tp=0", "bogus=1", "tp", "sram_only=maybe", "=",
                     "pp=nan"], False),
        timeout=(["0.3", "1", "2"], _SECONDS, True),
        objective=(["time", "throughput", "energy", "chips"], ["cost", "x"], False),
        json=_FLAG), "--timeout", 14),
    "schedule": ("schedule", _command(
        topology=(["ring:8", "torus:4x4", "full:4", "torus:4x4x4", "hypercube:3",
                   "dragonfly:nodes=3,chips=2,ports=1"],
                  ["ring:100000000", "torus:3000x3000", "torus:1000x1000x1000",
                   "switch:10000000", "ring:0", "ring:x", "dragonfly:nodes=9,chips=100000",
                   ""], True),
        collective=(["allgather", "allreduce", "alltoall", "broadcast", "reduce_scatter"],
                    ["gossip", "traffic", ""], True),
        chunks=(["1", "2", "4"], _NUMBERS, False),
        time_limit=(["0.3", "1", "2"], _SECONDS, True),
        out=(["{out}"], ["{tmp}"], False), figure=(["{out}.svg"], ["{tmp}"], False),
        json=_FLAG, dynamic=_FLAG), "--time-limit", 18),
    "schedule-system": ("schedule", _command(
        system=(["groq-576", "ipu-pod16", "dgx-h100", "groq-72"],
                _BAD_NAMES + ["gpt3-13b"], True),
        collective=(["allgather", "allreduce", "alltoall", "broadcast"], ["gossip"], True),
        chunks=(["1", "8", "72"], _NUMBERS, False),
        time_limit=(["0.01", "0.3", "2"], _SECONDS, True),
        message_bytes=(["16384", "1e6"], _NUMBERS, False),
        json=_FLAG), "--time-limit", 12),
    "schedule-traffic": ("schedule", _command(
        topology=(["ring:8", "torus:4x4"], ["ring:1"], True),
        collective=(["traffic"], ["allgather"], True),
        traffic=(_path("traffic.json"),
                 _path("huge-traffic.json", "digits.json", "deep.json", "list.json",
                       "bad.json") + _MISSING, False),
        traffic_of=(["tp=2,pp=2", "tp=4,dp=2"], ["tp=0", "tp=99", "x", "tp=1.5"], False),
        time_limit=(["0.5", "2"], _SECONDS, True), json=_FLAG), "--time-limit", 10),
    "schedule-file": ("schedule", _command(
        topology_file=(_path("ring4.json"),
                       _path("infinity.json", "list.json", "graph-string.json", "deep.json",
                             "bad.json", "links-float.json") + _MISSING, True),
        collective=(["allgather", "allreduce"], ["x"], True),
        time_limit=(["0.5", "2"], _SECONDS, True)), "--time-limit", 8),
    "infer": ("infer", _command(
        workload=(["gpt3-13b-training", "llama2-70b-decode", "bert-large-training"],
                  _BAD_NAMES, True),
        system=(SYSTEMS, _BAD_NAMES, True), chips=(_CHIPS_OK, _NUMBERS, False),
        parallel=(_PARALLEL_OK, _PARALLEL_BAD, False), json=_FLAG,
        data=([FILES["good.ttl"]], _DATA_BAD, False)), None, 5),
    "explain": ("explain", _command(
        workload=(["gpt3-13b-training", "llama2-70b-decode"], _BAD_NAMES, True),
        system=(SYSTEMS, _BAD_NAMES, True), chips=(_CHIPS_OK, _NUMBERS, False),
        json=_FLAG), None, 4),
    "advise": ("advise", _command(
        system=(["ipu-pod16", "dgx-a100", "groq-576"], _BAD_NAMES, True),
        workload=(["bert-large-training", "llama2-70b-inference"], _BAD_NAMES, True),
        chips=(["16", "64"], _NUMBERS, False),
        goal=(["time", "throughput", "latency", "energy"], ["x", ""], False),
        format=(["md", "json", "html"], ["pdf"], False), out=(["{out}"], ["{tmp}"], False),
        quiet=(None, [], True)), None, 4),
    "query": ("query", _command(
        (["ASK {}", "SELECT * WHERE { ?s ?p ?o } LIMIT 2",
          "CONSTRUCT WHERE { ?s a ak:Chip } LIMIT 2",
          "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f }"],
         ["SELECT WHERE {", "DROP ALL", "SERVICE <http://x> {}", "{" * 3000], True),
        format=(["table", "json", "csv"], ["xml", ""], False),
        timeout=(["0.05", "0.5", "3"], _SECONDS, True),
        data=([FILES["good.ttl"]], _DATA_BAD, False)), "--timeout", 10),
    "validate": ("validate", _command(
        ([FILES["good.ttl"], ""], _DATA_BAD + _path("model.json"), False),
        json=_FLAG), None, 5),
}


def _limit(argv: list[str], option: str | None) -> float | None:
    if option is None or option not in argv:
        return None
    try:
        value = float(argv[argv.index(option) + 1])
    except (ValueError, IndexError):
        return None
    return value if 0 < value < 1e6 else None


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_no_input_crashes_hangs_or_leaves_files(case: str) -> None:
    command, strategy, limit_option, examples = COMMANDS[case]

    @settings(max_examples=max(1, int(examples * SCALE)), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(args: list[str]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            argv = [command, *(a.replace("{out}", out).replace("{tmp}", tmp) for a in args)]
            given_limit = _limit(argv, limit_option)
            stdout, stderr = io.StringIO(), io.StringIO()
            started = time.monotonic()
            try:
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                        wall_clock_limit(CEILING_S + SLACK_S + (given_limit or 0)):
                    code = main(argv)
            except TimeLimitReached:
                pytest.fail(f"hung: accelkb {' '.join(argv)}")
            took = time.monotonic() - started
            EXITS[(case, code)] += 1
            SLOWEST.append((took, given_limit, argv))
            err = stderr.getvalue()
            line = "accelkb " + " ".join(a[:80] for a in argv)
            assert code in (0, 1, 2, 3), f"exit {code}: {line}\n{err[-1500:]}"
            assert "Traceback" not in err, f"{line}\n{err[-1500:]}"
            assert took <= (given_limit + SLACK_S if given_limit else CEILING_S), \
                f"{took:.1f} s: {line}"
            if code == 2:
                assert os.listdir(tmp) == [], f"{line} left {os.listdir(tmp)}"

    run()


def teardown_module() -> None:
    report = os.environ.get("ACCELKB_FUZZ_REPORT")
    if not report:
        return
    SLOWEST.sort(key=lambda row: -(row[0] - (row[1] or 0)))
    Path(report).write_text(json.dumps({
        "exits": sorted([c, code, n] for (c, code), n in EXITS.items()),
        "slowest_over_limit": [{"seconds": round(t, 2), "limit": limit, "argv": argv[:14]}
                               for t, limit, argv in SLOWEST[:12]],
    }, indent=1) + "\n", encoding="utf-8")
