"""Comparisons at a chosen chip count (``--compare SYSTEM:CHIPS``), and the fewest chips of a
compared system that hold a workload its own size cannot: q2 compared a 16-socket SN40L rack
training GPT-3 175B with 8-GPU DGX nodes, which hold a fifth of its model state, so the table
said only "does not fit"."""

from __future__ import annotations

import pytest

from accelkb.advise import compared, parts
from accelkb.advise.advice import Comparison, Estimate
from accelkb.advise.costs import cost_rows
from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.from_kb import default_kb, model_spec, system_spec


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return default_kb()


@pytest.mark.parametrize("text", ["dgx-h100:", "dgx-h100:0", "dgx-h100:-8", "dgx-h100:1.5",
                                  ":8"])
def test_a_malformed_target_is_bad_input(text: str) -> None:
    with pytest.raises(InputError, match="--compare"):
        compared.parse_target(text)


def test_a_count_no_system_reaches_fails_before_any_estimate(kb: KnowledgeBase) -> None:
    with pytest.raises(InputError, match=r"--compare dgx-h100:4000: .*at most 1016"):
        compared.resolve(kb, ["dgx-h100:4000"])


def test_more_chips_come_in_whole_building_blocks(kb: KnowledgeBase) -> None:
    # 12 GPUs are a DGX and a half: no layout can even be formed on them (the audit's run said
    # "no layout fits" after trying 0 layouts)
    with pytest.raises(InputError, match=r"dgx-h100's 8-chip building blocks .*\(e.g. 8 or 16\)"):
        compared.resolve(kb, ["dgx-h100:12"])
    part = compared.resolve(kb, ["dgx-h100:4"])[0]  # part of one node is a real choice
    assert part.spec.chips == 4 and compared.where(part) == "4 of a dgx-h100's 8 chips"
    assert len(compared.resolve(kb, ["dgx-h100", "dgx-h100:8", "dgx-h100:16"])) == 2


def test_cli_exits_2_on_a_malformed_target(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["advise", "--system", "ipu-pod16", "--workload", "gpt3-2.7b-training",
                 "--compare", "dgx-h100:zero", "--quiet"])
    assert code == 2
    assert "expected SYSTEM or SYSTEM:CHIPS" in capsys.readouterr().err


def test_a_system_at_more_chips_runs_on_the_system_built_of_it(kb: KnowledgeBase) -> None:
    own, scaled = compared.resolve(kb, ["dgx-h100", "dgx-h100:16"])
    assert (own.spec.name, own.spec.chips, compared.where(own)) == ("dgx-h100", 8, "")
    assert own.own_chips == scaled.own_chips == 8
    assert (scaled.name, scaled.spec.chips) == ("dgx-h100", 16)
    assert scaled.spec.name != "dgx-h100"  # two nodes need the network between nodes
    assert len(scaled.spec.levels) == 2
    assert scaled.spec.name in compared.where(scaled)
    model = model_spec("gpt3-2.7b")
    c = compared.comparison(model, scaled, "training", 512, 0, 0, None, "time", kb=kb)
    assert c.estimate is not None and c.estimate.chips == 16
    assert c.system == "dgx-h100" and c.scaled


def test_a_scaled_purchase_says_the_network_is_not_priced(kb: KnowledgeBase) -> None:
    model = model_spec("gpt3-2.7b")
    scaled = compared.resolve(kb, ["dgx-h100:16"])[0]
    c = compared.comparison(model, scaled, "training", 512, 0, 0, None, "time", kb=kb)
    own = compared.comparison(model, compared.resolve(kb, ["dgx-h100"])[0], "training", 512,
                              0, 0, None, "time", kb=kb)
    assert c.estimate is not None and own.estimate is not None
    # priced against an IPU-POD (purchase only), so both rows are purchases
    rows = cost_rows(kb, "ipu-pod16", own.estimate, "training", [own, c])
    assert rows[1].price_kind == rows[2].price_kind == "purchase"
    assert "not in the price" not in rows[1].price
    assert "not in the price" in rows[2].price
    # a part of one system needs no network between systems
    half = own.model_copy(update={"chips": 4, "system_chips": 4})
    row = cost_rows(kb, "ipu-pod16", own.estimate, "training", [half])[1]
    assert "not in the price" not in row.price
    # per chip, 16 GPUs cost what 8 do, twice
    assert rows[2].usd_per_hour == pytest.approx(2 * rows[1].usd_per_hour, rel=1e-6)


def test_the_fewest_chips_that_fit_is_the_first_count_that_does(kb: KnowledgeBase) -> None:
    model = model_spec("gpt3-175b")
    node = compared.resolve(kb, ["dgx-h100"])[0]
    c = compared.comparison(model, node, "training", 1536, 0, 0, None, "time", kb=kb)
    assert c.estimate is None and "does not fit" in c.error
    fit = compared.first_fit(model, node, "training", 1536, 0, 0, None, "time", kb=kb)
    assert fit is not None
    n, step = fit
    assert f"fewest dgx-h100 chips that fit it: {n}," in c.error
    assert n >= compared.least_chips(model, node.spec, "training") > 8
    _, est, _ = parts.baseline(model, system_spec("dgx-h100", chips=n, kb=kb), "training",
                               1536, 0, 0, None, "time")
    assert parts.as_estimate(est).time_s == pytest.approx(step)
    with pytest.raises(InputError, match="fits"):  # one node fewer does not
        parts.baseline(model, system_spec("dgx-h100", chips=n - 8, kb=kb), "training", 1536,
                       0, 0, None, "time")


def test_no_hint_where_the_knowledge_base_joins_no_more_chips(
        kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[int] = []

    def never_fits(model: object, spec: object, *args: object) -> None:
        tried.append(spec.chips)  # type: ignore[attr-defined]
        raise InputError("does not fit")

    monkeypatch.setattr(parts, "baseline", never_fits)
    # no system of the knowledge base is built of sn40l-nodes: nothing joins a 16th socket
    node = compared.resolve(kb, ["sn40l-node"])[0]
    assert compared.first_fit(model_spec("gpt3-2.7b"), node, "training", 64, 0, 0, None,
                              "time", kb=kb) is None
    assert tried == []  # it stops there, without estimating


def _est(chips: int, time_s: float) -> Estimate:
    return Estimate(configuration={}, chips=chips, time_s=time_s, tokens_per_s=1e6 / time_s,
                    mfu=0.4, memory_per_chip_bytes={}, breakdown_s={"compute": time_s})


def test_the_answer_sentence_puts_each_system_against_this_one() -> None:
    own = _est(16, 600.0)
    rows = [Comparison(system="dgx-h100", chips=48, estimate=_est(48, 150.0), scaled="48 of x",
                       system_chips=48, own_chips=8),
            Comparison(system="dgx-a100", chips=8, error="does not fit", fewest_chips=48,
                       fewest_chips_time_s=400.0),
            Comparison(system="odd", chips=8, error="no network")]
    text = compared.sentence(rows, own, "training")
    assert "dgx-h100 x48: 150 s per step on 48 chips, 4.00x the speed of this system's 16 " \
        "(1.33x per chip)" in text
    assert "dgx-a100: no layout fits on its 8 chips (the fewest that fit it: 48, at 400 s" in text
    assert "odd: not estimated" in text
    # inference at a throughput goal compares tokens per second, not the token time
    text = compared.sentence([Comparison(system="b", chips=8, estimate=_est(8, 0.02))],
                             _est(8, 0.01), "inference", "throughput")
    assert "20 ms per token on 8 chips, 0.50x the throughput" in text
    # a latency ratio is not a rate, so it has no per-chip form
    lat = compared.sentence([Comparison(system="b", chips=8, estimate=_est(8, 0.02))],
                            _est(328, 0.01), "inference", "latency")
    assert "0.50x the speed of this system's 328." in lat and "per chip" not in lat
    assert compared.sentence([], own, "training") == ""


def test_the_lower_bound_for_inference_is_at_the_narrowest_precision(kb: KnowledgeBase) -> None:
    # the audit's run: Groq's 16-bit bound (600 chips) was above the 328 its INT8 layout uses
    from accelkb.perf.shapes import total_params

    model = model_spec("llama2-70b")
    rack = system_spec("groqrack", kb=kb)
    cap = sum(t.capacity_bytes for t in rack.chip.memory_tiers)
    n = compared.least_chips(model, rack, "inference")
    assert (n - 1) * cap < total_params(model) <= n * cap  # one byte per weight
    fit = compared.first_fit(model, compared.resolve(kb, ["groqrack"])[0], "inference", 0, 550,
                             150, "bf16", "latency", kb=kb)
    assert fit is not None and n <= fit[0] < 2 * n
