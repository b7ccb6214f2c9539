"""advise --goal cost / energy (issue 26): the baseline minimises $ or J per token under a
per-user speed target, the report is titled and answered for cost, and prices every system."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from accelkb.advise import advise
from accelkb.advise.report import render
from accelkb.errors import InputError
from accelkb.knowledge import KnowledgeBase

#: A user's own chip and node (the data README's worked example, prefix my:), which no bundled
#: price covers, with a price and an inference workload.
WORKED = re.search(r"<!-- worked-example -->\n```turtle\n(.*?)```",
                   (REPO / "ontology" / "data" / "README.md").read_text(encoding="utf-8"),
                   re.S).group(1)  # type: ignore[union-attr]
PRICE = WORKED + """
my:price-page a ak:Source ; dcterms:title "A cloud's price page" ; dcterms:publisher "Cloud" ;
    dcterms:date "2026-11-01"^^xsd:date ; ak:sourceKind ak:VendorDocument .
my:price-node a ak:PriceQuote ; rdfs:label "8-chip instance" ; ak:priceOf my:node ;
    ak:priceKind ak:CloudOnDemand ; ak:provider "Cloud" ; ak:offering "x8" ;
    ak:observedOn "2026-11-01"^^xsd:date ; ak:chipsPriced 8 ; ak:usdPerHour 80.0 ;
    dcterms:source my:price-page ; ak:confidence ak:Medium .
my:llama3-8b-inference a ak:Workload ; rdfs:label "Llama 3 8B serving" ;
    ak:shortName "my-llama3-8b-inference" ; ak:model my:llama3-8b ; ak:phase ak:Inference ;
    ak:precision ak:BF16 ; ak:sequenceLength 8192 ; ak:inputTokens 512 ; ak:outputTokens 256 ;
    dcterms:source my:spec-sheet ; ak:confidence ak:Low .
"""


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    path = tmp_path_factory.mktemp("prices") / "prices.ttl"
    path.write_text(PRICE, encoding="utf-8")
    return KnowledgeBase([str(path)])


def test_goal_cost_batches_up_to_the_speed_target_and_prices_it(priced: KnowledgeBase) -> None:
    a = advise("my-npu-node", "my-llama3-8b-inference", goal="cost", kb=priced, slo=20.0)
    assert a.question == "How can my-llama3-8b-inference run cheaper on my-npu-node?"
    assert a.baseline.configuration["batch"] > 1  # batch 1 is the latency answer, not the cost one
    assert a.baseline.tokens_per_s_per_user >= 20.0
    assert "keeping 20 tokens/s per user" in a.baseline_note
    row = a.costs[0]
    assert row.system == "my-npu-node" and row.usd_per_hour == 80.0
    # priced per generated token with the prefill counted, as `accelkb estimate` prices it
    rate = a.baseline.end_to_end_tokens_per_s
    assert rate and rate < a.baseline.tokens_per_s
    assert row.usd_per_million_tokens == pytest.approx(80.0 / (rate * 3600) * 1e6)
    assert a.answer.startswith("At my-npu-node's cloud price, a million generated tokens cost $")
    text = render(a, "md")
    assert "## Cost and energy" in text and "$80.00" in text
    # without the target the batch grows further, and each token costs less
    loose = advise("my-npu-node", "my-llama3-8b-inference", goal="cost", kb=priced)
    assert loose.baseline.configuration["batch"] >= a.baseline.configuration["batch"]
    assert loose.costs[0].usd_per_million_tokens <= row.usd_per_million_tokens


def test_goal_energy_minimises_joules_and_says_so_without_a_price() -> None:
    a = advise("dgx-a100", "llama2-70b-inference", goal="energy", slo=10.0)
    assert "fewest joules per generated token, prefill counted" in a.baseline_note
    assert a.answer.startswith("dgx-a100 does ")
    latency = advise("dgx-a100", "llama2-70b-inference", goal="latency")
    assert a.baseline.joules_per_token < latency.baseline.joules_per_token
    assert a.costs[0].tokens_per_joule == pytest.approx(
        1 / (a.baseline.end_to_end_joules_per_token or 0))


def test_an_unreachable_speed_target_is_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"keeps 100000 tokens/s per user at any batch \(\d+ of "
                       r"\d+ tried fit; the fastest per user gives"):
        advise("dgx-a100", "llama2-70b-inference", goal="cost", slo=1e5)


def test_long_reasons_are_shortened_at_a_clause_or_a_word_never_mid_word() -> None:
    """Issue 27: the Answer was cut at 120 characters mid-word ('...intensity): str.')."""
    from accelkb.advise.findings import clip

    reason = ("constraint-streaming-intensity: streams weights at 4423 FLOP/byte, needs 5529; "
              "and more detail that does not belong in one sentence")
    assert clip(reason, 100) == ("constraint-streaming-intensity: streams weights at 4423 "
                                 "FLOP/byte, needs 5529")
    words = "groqchip " * 40
    cut = clip(words, 50)
    assert cut.endswith("...") and cut[:-3].split() == ["groqchip"] * 5
    assert clip("short.", 50) == "short"


def test_goal_cost_on_groq_takes_a_larger_batch_than_goal_latency() -> None:
    """Issue 26: on groq-576 the cheapest tokens come from a full pipeline of requests, not the
    one-request stream that gives the lowest latency."""
    cost = advise("groq-576", "llama2-70b-inference", goal="cost")
    latency = advise("groq-576", "llama2-70b-inference", goal="latency")
    assert latency.baseline.configuration["batch"] == 1
    assert not latency.baseline.configuration["pipelined"]
    c = cost.baseline.configuration  # batches in flight: one per stage where pipelined
    assert c["batch"] * (c["pp"] if c["pipelined"] else 1) > 1
    assert cost.baseline.tokens_per_s > 10 * latency.baseline.tokens_per_s
    assert cost.costs[0].tokens_per_joule > latency.costs[0].tokens_per_joule


def test_a_comparison_is_priced_like_for_like_or_says_it_is_not() -> None:
    """Issue 26/27: ipu-pod64 has a purchase price only, dgx-a100 a cloud rate only; the
    compared system is priced by the same kind where it has one, and the report warns where
    the kinds differ."""
    from accelkb.advise.costs import like_for_like

    a = advise("ipu-pod64", "gpt3-2.7b-training", compare=["ipu-pod16", "dgx-a100"])
    kinds = {r.system: r.price_kind for r in a.costs}
    assert kinds == {"ipu-pod64": "purchase", "ipu-pod16": "purchase", "dgx-a100": "cloud"}
    assert "Not like for like" in like_for_like(a.costs) and "dgx-a100: cloud" in render(a, "md")
    assert like_for_like([r for r in a.costs if r.price_kind == "purchase"]) == ""
    pod = a.costs[0]  # a run's dollars carry the price's range (Medium: x/÷ 1.2) and the
    assert pod.usd_to_train is not None and pod.usd_to_train_low is not None  # estimate's
    assert pod.usd_to_train_low < pod.usd_to_train < (pod.usd_to_train_high or 0)
    rate = a.baseline.ranges["tokens_per_s"]
    slowest = a.baseline.tokens_per_s / rate.low  # the run's hours at its slowest rate
    assert pod.usd_to_train_high == pytest.approx(pod.usd_to_train * 1.2 * slowest, rel=0.01)


def test_costs_are_queryable_with_sparql_after_advise(kb: KnowledgeBase) -> None:
    """Issue 26: each priced system of an advice is an ak:CostEstimate in the results graph.
    The SN40L rack has no public price of its own; its row is SambaNova Cloud's API price for
    the model served on SN40L (ak:servedOn), marked as a market price, with the facility
    figures a user gave applied to every row's energy."""
    from accelkb.ontology.kb import stored_query

    a = advise("sambarack-sn40l-16", "llama3.3-70b-inference", kb=kb, compare=["dgx-h100"],
               goal="cost",
               kwh_price=0.2, pue=1.25)
    rows = {str(r[0]): r for r in kb.query(stored_query("advice_costs"))}  # type: ignore[index]
    assert {"sambarack-sn40l-16", "dgx-h100"} <= set(rows)
    rack = rows["sambarack-sn40l-16"]
    mine = a.costs[0]
    assert mine.system == "sambarack-sn40l-16" and mine.price_kind == "api"
    # SambaNova Cloud's $0.60 in / $1.20 out at the workload's 10,000-token prompt and
    # 1,500-token answer: 1.2 + 0.6 x 10000 / 1500 per million generated tokens, Medium
    assert mine.usd_per_million_tokens == pytest.approx(1.2 + 0.6 * 10000 / 1500)
    assert (mine.usd_low, mine.usd_high) == pytest.approx((5.2 / 1.2, 5.2 * 1.2))
    assert "observed market price, not a cost" in mine.market and "SambaNova Cloud" in mine.price
    assert mine.kwh_per_million_tokens == pytest.approx(
        (a.baseline.end_to_end_joules_per_token or 0) * 1.25 / 3.6)
    assert float(rack[4]) == pytest.approx(mine.usd_per_million_tokens)  # type: ignore[arg-type]
    assert float(rack[5]) <= float(rack[4]) <= float(rack[6])  # the price's range
    assert str(rack[9]) == "api" and "SambaNova" in str(rack[10])  # kind and basis, in words
    assert str(rows["dgx-h100"][9]) == "cloud"
    text = render(a, "md")
    assert "What users pay per token for this model on these chips" in text
    assert "An API price is what a user pays the provider per token" in text
    assert a.answer.startswith("SambaNova Cloud charges $5.2 per million generated tokens")


def test_a_users_price_prices_this_system_only(kb: KnowledgeBase) -> None:
    """advise --price prices the advised system; the compared ones keep their own quotes."""
    from accelkb.advise.advice import Comparison, Estimate
    from accelkb.advise.costs import Overrides, cost_rows

    est = Estimate(configuration={"tp": 8, "batch": 8}, chips=8, time_s=0.02,
                   tokens_per_s=400.0, mfu=0.1, memory_per_chip_bytes={}, breakdown_s={},
                   joules_per_token=10.0, power_w=4000.0)
    rows = cost_rows(kb, "dgx-h100", est, "inference",
                     [Comparison(system="dgx-a100", chips=8, estimate=est)],
                     Overrides(price=2.0, pue=1.1))
    assert rows[0].price_kind == "override" and rows[0].usd_per_hour == pytest.approx(16.0)
    assert rows[0].usd_per_million_tokens == pytest.approx(16.0 / (400 * 3600) * 1e6)
    assert rows[1].price_kind == "cloud" and rows[1].usd_per_hour != pytest.approx(16.0)
    assert rows[1].kwh_per_million_tokens == pytest.approx(10.0 * 1.1 / 3.6)


@pytest.mark.parametrize("option", [["--price", "-1"], ["--pue", "0.5"], ["--kwh-price", "inf"]])
def test_advise_rejects_a_bad_price_before_any_work(option: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.cli import main

    assert main(["advise", "--system", "dgx-h100", "--workload", "llama2-70b-inference",
                 *option]) == 2
    err = capsys.readouterr().err
    assert f"expected {option[0]}" in err and "Traceback" not in err
