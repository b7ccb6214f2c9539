"""advise: structure and key numbers of the answer, errors, formats, the graph round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkb.advise import advise
from accelkb.advise.advice import Advice
from accelkb.advise.report import render
from accelkb.cli import main
from accelkb.errors import InputError, UnknownNameError
from accelkb.ontology.kb import KnowledgeBase


@pytest.fixture(scope="module")
def advice(kb: KnowledgeBase) -> Advice:
    return advise("dgx-a100", "gpt3-13b-training", compare=["ipu-pod16"], kb=kb)


def test_answer_first_with_numbers(advice: Advice) -> None:
    assert advice.answer.startswith("On 8 chips of dgx-a100")
    assert "s per step" in advice.answer and "MFU" in advice.answer
    assert 2 <= advice.answer.count(". ") + 1 <= 6  # the last: the systems compared
    assert "Compared on the same workload: ipu-pod16: " in advice.answer


def test_baseline_is_a_fitting_estimate(advice: Advice) -> None:
    b = advice.baseline
    assert b.chips == 8 and b.time_s > 0 and 0 < b.mfu < 1
    assert sum(b.memory_per_chip_bytes.values()) <= 80e9  # A100 80 GB from the knowledge base
    assert abs(sum(b.breakdown_s.values()) - b.time_s) / b.time_s < 1e-6


def test_recommendations_are_checked_and_ranked(advice: Advice) -> None:
    recs = advice.recommendations
    assert recs, "a GPT training on 8 GPUs must yield candidates"
    order = {"recommended": 0, "no-gain": 1, "already-applied": 2, "blocked": 3, "not-modelled": 4}
    assert [order[r.status] for r in recs] == sorted(order[r.status] for r in recs)
    for r in recs:
        if r.status in ("recommended", "no-gain"):
            assert r.before is not None and r.after is not None and r.speedup is not None
            assert r.speedup == pytest.approx(r.before.time_s / r.after.time_s)
            assert (r.speedup > 1) == (r.status == "recommended")
        if r.status == "blocked":
            assert r.blocked_by
        if r.optimization == "solver-optimal-layout":  # from Z3 over the declared constraints
            assert r.derivation and "Z3 configuration solver" in r.derivation[0]
        else:  # from the rules / catalogue
            assert r.derivation and any("ak:mitigates" in line for line in r.derivation)
    good = [r.speedup for r in recs if r.status == "recommended"]
    assert good == sorted(good, reverse=True)


def _run_estimate(cmd: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    import shlex

    argv = shlex.split(cmd)
    assert argv[:2] == ["accelkb", "estimate"]
    capsys.readouterr()
    assert main([*argv[1:], "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_every_changed_layout_prints_the_command_that_reproduces_it(
        advice: Advice, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: the baseline, each recommendation that changes the layout, and the combined
    plan print the exact `accelkb estimate` command of their figure; running it gives it."""
    assert advice.baseline_command
    out = _run_estimate(advice.baseline_command, capsys)
    assert out["step_time_s"] == pytest.approx(advice.baseline.time_s, rel=1e-9)
    rows = [r for r in advice.recommendations if r.after is not None and r.configuration_change]
    assert rows and all(r.command for r in rows)
    if advice.plan is not None:
        rows.append(advice.plan)
    for r in rows:
        out = _run_estimate(r.command, capsys)
        assert out["step_time_s"] == pytest.approx(r.after.time_s, rel=1e-9), r.command
    assert "Reproduce: `accelkb estimate training --model gpt3-13b --system dgx-a100" in \
        render(advice, "md")


def test_the_combined_plan_applies_compatible_rows_once(advice: Advice) -> None:
    """Issue 27: the plan's gain is its own layout's, re-estimated, not a product of rows; each
    recommended row is either in it or left out with a reason."""
    recommended = [r for r in advice.recommendations if r.status == "recommended"]
    plan = advice.plan
    if len(recommended) < 2:
        assert plan is None
        return
    assert plan is not None and plan.after is not None and plan.speedup is not None
    assert plan.speedup == pytest.approx(advice.baseline.time_s / plan.after.time_s)
    assert plan.speedup >= max(r.speedup or 0 for r in recommended) - 1e-9
    assert len(plan.includes) + len(plan.excludes) == len(recommended)
    assert all(":" in x for x in plan.excludes)  # each exclusion says why


def test_findings_have_evidence(advice: Advice) -> None:
    assert advice.findings
    for f in advice.findings:
        assert f.evidence and f.derivation


def test_every_fact_is_sourced_and_cited(advice: Advice) -> None:
    cited = {s.iri for s in advice.sources}
    assert advice.facts
    assert all(f.source in cited for f in advice.facts), "every fact's source appears under Sources"
    assert any(f.property == "peakFlopsBf16" and f.value == 312e12 for f in advice.facts)


def test_what_ifs_and_comparison(advice: Advice) -> None:
    levers = {w.lever for w in advice.what_ifs}
    assert "faster HBM" in levers and "faster scale-up links" in levers
    (cmp,) = advice.comparisons
    assert cmp.system == "ipu-pod16" and (cmp.estimate is not None or cmp.error)


def test_scaling_curve_grows_with_chips(advice: Advice) -> None:
    pts = [p for p in advice.scaling if p.tokens_per_s]
    assert len(pts) >= 2
    assert pts[-1].tokens_per_s > pts[0].tokens_per_s  # type: ignore[operator]


def test_formats(advice: Advice) -> None:
    md = render(advice, "md")
    assert md.startswith("# ") and "## Answer" in md and "## Sources" in md
    html = render(advice, "html")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "</html>" in html
    data = json.loads(render(advice, "json"))
    assert data["schema_version"] == advice.schema_version
    assert Advice.model_validate(data) == advice
    with pytest.raises(InputError, match="expected --format"):
        render(advice, "pdf")


def test_recommendations_are_queryable_with_sparql(kb: KnowledgeBase, advice: Advice) -> None:
    rows = list(kb.query("""SELECT ?name ?status ?rank WHERE {
        ?a a ak:Advice ; ak:aboutSystem kb:dgx-a100 ; ak:recommends ?r .
        ?r ak:optimization/ak:shortName ?name ; ak:recommendationStatus ?status ; ak:rankInAdvice ?rank }
        ORDER BY ?rank"""))
    catalogue = [r for r in advice.recommendations if r.optimization != "solver-optimal-layout"]
    assert [str(r[0]) for r in rows] == [r.optimization for r in catalogue]
    assert str(rows[0][1]) == catalogue[0].status


def test_wrong_names_list_closest(kb: KnowledgeBase) -> None:
    with pytest.raises(UnknownNameError) as info:
        advise("ipu-pod46", "gpt3-13b-training", kb=kb)
    assert "ipu-pod64" in info.value.suggestions
    with pytest.raises(UnknownNameError) as info:
        advise("ipu-pod64", "gpt3-13b-trainig", kb=kb)
    assert "gpt3-13b-training" in info.value.suggestions
    with pytest.raises(InputError, match="expected --goal"):
        advise("ipu-pod64", "gpt3-13b-training", goal="speed", kb=kb)


def test_cli_exit_codes_and_atomic_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["advise", "--system", "dgx-a100x", "--workload", "gpt3-13b-training"]) == 2
    err = capsys.readouterr().err
    assert "unknown system 'dgx-a100x'" in err and "Traceback" not in err
    assert main(["advise", "--system", "dgx-a100", "--workload", "gpt3-13b-training",
                 "--out", str(tmp_path / "missing" / "r.md")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_user_chip_and_workload_flow_through(data_dir: Path) -> None:
    kb = KnowledgeBase([data_dir / "good_minimal.ttl", data_dir / "user_chip_workload.ttl"])
    a = advise("acme-x1-pod", "tiny-gpt-training", kb=kb)
    assert a.chips == 32 and a.baseline.time_s > 0
    assert any(f.subject == "x1" and f.property == "peakFlopsBf16" for f in a.facts)
    assert any("Acme" in s.title for s in a.sources)


def test_solver_step_reports_an_infeasible_layout_in_words() -> None:
    """Regression: an UNSATISFIABLE answer of the configuration solver crashed the report step
    (it read ``Reason.text``; the field is ``message``), a bug only a type check saw."""
    from accelkb.advise.solver import solver_recommendation
    from accelkb.perf import TrainingConfig, estimate_training
    from accelkb.perf.api import resolve_model, resolve_system

    model, system = resolve_model("gpt3-175b"), resolve_system("ipu-pod16")
    cfg = TrainingConfig(tp=1, pp=16, dp=1, micro_batch=1, global_batch=16, recompute="full")
    small = resolve_system("dgx-a100")
    base = estimate_training("gpt3-13b", small, TrainingConfig(tp=8, global_batch=8))
    rec, note = solver_recommendation(model, system, "ipu-pod16", cfg, base, "time")
    assert rec is None
    assert note.startswith("Z3 configuration solver: UNSATISFIABLE: ")
    assert "GB" in note, note  # the reason in numbers, not a field name


def test_sizes_need_a_training_workload_and_known_models(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["advise", "--system", "groq-576", "--workload", "llama2-70b-inference",
                 "--sizes", "gpt3-13b", "--quiet"]) == 2
    assert "expected --sizes with a training workload" in capsys.readouterr().err
    assert main(["advise", "--system", "dgx-a100", "--workload", "gpt3-13b-training",
                 "--sizes", "gpt3-13b", "no-such-model", "--quiet"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err
