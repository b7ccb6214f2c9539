"""Configuration solver: optimum vs exhaustive enumeration, MUS explanations, checker, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import ValidationError
from accelkb.ontology.kb import RESULTS, KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.perf.calibration import load_calibration
from accelkb.solver.config.api import assert_result, configure
from accelkb.solver.config.check import check_layout, verify
from accelkb.solver.config.encoding import GROUPS, THEORY_KEYS, encode
from accelkb.solver.config.instance import build_instance, declared_constraints
from accelkb.solver.config.model import ConfigRequest, Layout, Status, UserConstraints
from accelkb.solver.config.rank import rank
from accelkb.solver.config.search import domain, exhaustive, perf_score


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 4-layer, 4-head GPT small enough to enumerate in a second."""
    path = tmp_path_factory.mktemp("models") / "tiny-gpt.json"
    path.write_text(json.dumps({"layers": 4, "hidden": 256, "heads": 4, "kv_heads": 4,
                                "ffn_hidden": 1024, "vocab": 1000, "seq_len": 128,
                                "gated_mlp": False}))
    return str(path)


def _req(model: str, **kw: object) -> ConfigRequest:
    base: dict[str, object] = {"system": "dgx-a100-superpod", "chips": 2, "global_batch": 4}
    base.update(kw)
    return ConfigRequest(model=model, **base)


def test_every_encoded_constraint_is_declared(kb: KnowledgeBase) -> None:
    keys = declared_constraints(kb)
    encoded = {"chip-product", "chip-budget", "heads-divisible-tp", "layers-divisible-stages",
               "tp-within-fast-domain", "user-tp-within-node", "batch-divisible",
               "interleave-microbatches", "sequence-parallel-needs-tp", "zero-no-pipeline",
               "ipu-gradient-accumulation", "precision-supported", "user-precision",
               "stage-fits-memory", "stage-nonempty", *THEORY_KEYS}
    assert encoded == set(keys), sorted(encoded ^ set(keys))
    assert len(GROUPS) == 8
    for info in keys.values():
        assert info.title and info.rationale and info.sources, info.iri


def test_optimum_equals_exhaustive_enumeration(kb: KnowledgeBase, tiny: str) -> None:
    req = _req(tiny)
    res = configure(req)
    assert res.status == Status.OPTIMAL
    inst = build_instance(req, kb)
    every = exhaustive(inst)
    assert res.feasible_count == len(every) > 5
    best = rank(inst, every)[0]
    assert res.best is not None
    assert res.best.objective_value == pytest.approx(best.objective_value)
    assert res.best.layout == best.layout
    score = perf_score(inst)
    for s in res.pareto:
        verify(inst, s.layout, score)
    times = [s.time_s for s in res.pareto]
    assert times == sorted(times) and res.pareto[0].time_s == res.best.time_s


def test_objectives_disagree_where_they_should(tiny: str) -> None:
    fast = configure(_req(tiny, objective="time"))
    few = configure(_req(tiny, objective="chips"))
    assert fast.best is not None and few.best is not None
    assert few.best.chips == 1 < fast.best.chips


def test_unsat_memory_is_explained_with_numbers(kb: KnowledgeBase) -> None:
    req = _req("gpt3-175b", chips=8, global_batch=64)
    res = configure(req)
    assert res.status == Status.UNSATISFIABLE
    keys = [r.constraint.key for r in res.explanation]
    assert "memory-capacity" in keys
    mem = next(r for r in res.explanation if r.constraint.key == "memory-capacity")
    # the A100 80GB holds 80 GiB (NVIDIA's GB is binary; issue 28), 85.9 decimal GB
    assert mem.numbers["least_bytes_per_chip"] > mem.numbers["limit_bytes_per_chip"] == 80 * 2**30
    assert "gpt3-175b training needs" in mem.message and "85.9 GB per chip" in mem.message
    assert mem.constraint.iri.endswith("constraint-memory-capacity")
    # minimal: dropping any member leaves a layout that satisfies the others
    inst = build_instance(req, kb)
    for k in keys:
        rest = frozenset(keys) - {k}
        assert any(not check_layout(inst, lay, None, rest) for lay in domain(inst)), k


def test_feasibility_boundary_time_budget(kb: KnowledgeBase, tiny: str) -> None:
    best = configure(_req(tiny))
    assert best.best is not None
    t = best.best.time_s
    ok = configure(_req(tiny, constraints=UserConstraints(time_budget_s=t * 1.0001)))
    assert ok.status == Status.OPTIMAL and ok.feasible_count >= 1
    bad = configure(_req(tiny, constraints=UserConstraints(time_budget_s=t * 0.999)))
    assert bad.status == Status.UNSATISFIABLE
    assert "user-time-budget" in [r.constraint.key for r in bad.explanation]


def test_user_precision_and_tp_constraints(tiny: str) -> None:
    res = configure(_req(tiny, constraints=UserConstraints(max_tp=1, precisions=("int8",))))
    assert res.status == Status.UNSATISFIABLE
    # int8 is not a training precision, and the user allows nothing else: both are needed
    assert [r.constraint.key for r in res.explanation] == ["precision-supported",
                                                           "user-precision"]


def test_fp8_trains_where_the_chip_has_fp8_units(tiny: str) -> None:
    # FP8 mixed precision (H100 tensor cores) is a training precision; the A100 has no FP8 peak
    h100 = configure(_req(tiny, system="dgx-h100", constraints=UserConstraints(
        precisions=("fp8",))))
    assert h100.status == Status.OPTIMAL and h100.best is not None
    assert h100.best.layout.precision == "fp8"
    a100 = configure(_req(tiny, constraints=UserConstraints(precisions=("fp8",))))
    assert a100.status == Status.UNSATISFIABLE
    assert "precision-supported" in [r.constraint.key for r in a100.explanation]


def test_checker_names_each_broken_constraint(kb: KnowledgeBase, tiny: str) -> None:
    inst = build_instance(_req(tiny), kb)
    bad = Layout(tp=3, pp=1, dp=1, micro_batch=3, sequence_parallel=False)
    keys = [k for k, _ in check_layout(inst, bad)]
    assert "heads-divisible-tp" in keys and "chip-product" in keys
    with pytest.raises(ValidationError, match="heads-divisible-tp: 4 heads not divisible"):
        verify(inst, bad)


def test_encoding_tracks_constraints_by_iri(kb: KnowledgeBase, tiny: str) -> None:
    enc = encode(build_instance(_req(tiny), kb))
    names = set(enc.track)
    assert "https://w3id.org/accelkb/data/constraint-heads-divisible-tp" in names
    assert all(enc.key_of(__import__("z3").Bool(n)) for n in names)


def test_unsat_inference_names_the_serving_engines_memory_budget(kb: KnowledgeBase) -> None:
    """Llama-2 70B at bf16 with 64 sequences of 1,024 tokens on 2 A100 80 GB: 79.7 GB per chip
    fits the raw HBM (85.9 GB) but not what vLLM / TensorRT-LLM leave to weights and KV cache,
    the bound the performance module applies too."""
    res = configure(_req("llama2-70b", phase="inference", batches=(64,), prompt_len=512,
                         output_len=512, constraints={"precisions": ["bf16"]}))
    assert res.status == Status.UNSATISFIABLE
    mem = next(r for r in res.explanation if r.constraint.key == "memory-capacity")
    assert mem.numbers["least_bytes_per_chip"] < 80 * 2**30
    cal = load_calibration()
    assert mem.numbers["limit_bytes_per_chip"] == pytest.approx(
        cal.serving_memory_fraction * 80 * 2**30 - cal.serving_reserve_bytes)
    assert "a serving engine takes 90% of each GPU" in mem.message


def test_result_asserted_into_graph(kb: KnowledgeBase) -> None:
    res = configure(_req("gpt3-175b", chips=8, global_batch=64))
    node = assert_result(kb, res, "test-gpt3-8")
    g = kb.graph(RESULTS)
    try:
        assert (node, AK.solverStatus, None) in g
        assert any(str(o).endswith("constraint-memory-capacity")
                   for o in g.objects(node, AK.violatesConstraint))
    finally:
        g.remove((node, None, None))


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str], tiny: str) -> None:
    code = main(["configure", "--model", "gpt3-175b", "--system", "dgx-a100-superpod",
                 "--chips", "8", "--gbs", "64", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["status"] == "UNSATISFIABLE" and out["explanation"]
    code = main(["configure", "--model", tiny, "--system", "dgx-a100-superpod", "--chips", "2",
                 "--gbs", "4", "--constraint", "max_tp=1"])
    text = capsys.readouterr().out
    assert code == 0 and text.startswith("OPTIMAL") and "tp=" in text
    code = main(["configure", "--model", tiny, "--system", "dgx-a100-superpod",
                 "--constraint", "colour=red"])
    assert code == 2 and "expected --constraint KEY=VALUE" in capsys.readouterr().err


def test_unknown_system_is_input_error(tiny: str) -> None:
    code = main(["configure", "--model", tiny, "--system", "no-such-system"])
    assert code == 2
    assert Path(tiny).is_file()


def test_timeout_is_never_infeasible(tiny: str) -> None:
    res = configure(_req(tiny, timeout_s=1e-6))
    assert res.status in (Status.UNKNOWN, Status.FEASIBLE)
    assert not res.explanation


def test_energy_objective_and_dict_constraints(tiny: str) -> None:
    res = configure(model=tiny, system="dgx-a100-superpod", chips=2, global_batch=4,
                    objective="energy", constraints={"max_chips": 1})
    assert res.status == Status.OPTIMAL and res.best is not None
    assert res.best.chips == 1
    assert res.best.joules_per_token == pytest.approx(res.best.objective_value)
