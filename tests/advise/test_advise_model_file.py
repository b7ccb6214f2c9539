"""``advise --model FILE --phase ...``: a model file instead of a workload name, with the same
shapes ``estimate --model FILE`` uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.advise.model_file import model_workload
from accelkb.cli import main
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.api import resolve_model
from accelkb.perf.from_kb import model_spec

MODEL = {"name": "My Model 8B", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
         "ffn_hidden": 14336, "vocab": 128256, "seq_len": 8192, "gated_mlp": True}


@pytest.fixture()
def model_json(tmp_path: Path) -> Path:
    path = tmp_path / "my_model.json"
    path.write_text(json.dumps(MODEL), encoding="utf-8")
    return path


def test_a_json_model_has_the_shapes_estimate_reads(model_json: Path, tmp_path: Path) -> None:
    extra, text, name = model_workload(str(model_json), "training", global_batch=512,
                                       tokens=1e12, prompt_len=None, output_len=None)
    assert (extra, name) == ([], "my-model-8b-training")
    generated = tmp_path / "generated.ttl"
    generated.write_text(text, encoding="utf-8")
    kb = KnowledgeBase([str(generated)])
    via_kb = model_spec("my-model-8b", kb=kb)
    direct = resolve_model(model_json)
    assert via_kb.model_dump(exclude={"name"}) == direct.model_dump(exclude={"name"})
    row = next(iter(kb.query("SELECT ?g ?t WHERE { ?w ak:shortName 'my-model-8b-training' ; "
                             "ak:globalBatchSize ?g ; ak:tokensToTrain ?t }")))
    assert [int(v) for v in row] == [512, 10**12]  # type: ignore[union-attr]


def test_advise_on_a_json_model(model_json: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["advise", "--system", "dgx-h100", "--model", str(model_json), "--phase",
                 "inference", "--prompt-len", "1024", "--output-len", "256", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    advice = json.loads(out)
    assert advice["workload"] == "my-model-8b-inference" and advice["baseline"]["tokens_per_s"] > 0


def test_advise_on_a_turtle_model(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["advise", "--system", "acme-x1-pod", "--model", str(data_dir / "good_minimal.ttl"),
                 "--phase", "training", "--gbs", "64", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["workload"] == "tiny-gpt-training"


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "{json}"], "expected --phase training or --phase inference"),
    (["--model", "{json}", "--phase", "training", "--gbs", "0"], "--gbs: expected a positive"),
    (["--model", "{tmp}/model.txt", "--phase", "training"], "expected a model file (.json"),
    (["--model", "{tmp}/none.ttl", "--phase", "training"], "describing exactly one model"),
    (["--workload", "gpt3-13b-training", "--gbs", "8"], "go with --model FILE"),
])
def test_bad_model_options_exit_2(argv: list[str], message: str, model_json: Path,
                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "model.txt").write_text("layers: 2", encoding="utf-8")
    (tmp_path / "none.ttl").write_text("<urn:a> <urn:b> <urn:c> .", encoding="utf-8")
    argv = [a.format(json=model_json, tmp=tmp_path) for a in argv]
    assert main(["advise", "--system", "dgx-h100", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
