"""A comparison's costs do not depend on which system is named first (from an audit): a compared
system took the first system's kind of price, so `--system ipu-pod64 --compare dgx-h100` priced
the DGX H100 by purchase ($9.26/h, the cheaper of the two) and the same comparison the other way
round priced it by cloud rate ($0.255 per M tokens, 2.5x the IPU's)."""

from __future__ import annotations

import pytest

from accelkb.advise.advice import Comparison, Estimate
from accelkb.advise.costs import common_kind, cost_rows, like_for_like
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.cost.from_kb import system_quotes
from accelkb.perf.from_kb import default_kb


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return default_kb()


def _est(chips: int, tokens_per_s: float, power_w: float) -> Estimate:
    return Estimate(configuration={}, chips=chips, time_s=1.0, tokens_per_s=tokens_per_s,
                    mfu=0.4, memory_per_chip_bytes={}, breakdown_s={"compute": 1.0},
                    joules_per_token=power_w / tokens_per_s, power_w=power_w,
                    time_to_train_s=1e6)


def test_the_kind_most_systems_have_whichever_comes_first(kb: KnowledgeBase) -> None:
    ipu = {q.kind for q in system_quotes("ipu-pod64", kb)}
    h100 = {q.kind for q in system_quotes("dgx-h100", kb)}
    assert ipu == {"purchase"} and {"cloud", "purchase"} <= h100  # the premise of the bug
    assert common_kind(kb, ["ipu-pod64", "dgx-h100"]) == "purchase"
    assert common_kind(kb, ["dgx-h100", "ipu-pod64"]) == "purchase"
    assert common_kind(kb, ["dgx-h100"]) == "purchase"  # a tie: the owner's cost
    assert common_kind(kb, ["dgx-h100", "dgx-a100"]) == "cloud"
    # q1's comparison: two IPU-PODs (purchase only), a DGX A100 (cloud only), a DGX H100 (both)
    assert {q.kind for q in system_quotes("dgx-a100", kb)} == {"cloud"}
    assert common_kind(kb, ["dgx-a100", "ipu-pod16", "dgx-h100", "ipu-pod64"]) == "purchase"


def test_each_system_costs_the_same_in_either_order(kb: KnowledgeBase) -> None:
    ipu, h100 = _est(64, 3.0e5, 15_000.0), _est(8, 3.2e5, 8_000.0)
    one = cost_rows(kb, "ipu-pod64", ipu, "training", [Comparison(system="dgx-h100", chips=8,
                                                                  estimate=h100)])
    two = cost_rows(kb, "dgx-h100", h100, "training", [Comparison(system="ipu-pod64", chips=64,
                                                                  estimate=ipu)])
    by_one = {r.system: r.usd_per_million_tokens for r in one}
    by_two = {r.system: r.usd_per_million_tokens for r in two}
    assert by_one == by_two and all(by_one.values())
    assert {r.price_kind for r in one} == {"purchase"}
    # same kind, different scope: an IPU-M2000's price has no host server, a DGX's has
    assert "differ in what they cover" in like_for_like(one)


def test_an_inference_cost_table_says_each_rows_batch() -> None:
    """q3 priced Groq at $186 per M tokens against DGX H100's $25.7, both at batch 1, and a
    --goal cost run set Groq's batch 32 against H100's 128, neither saying so (from an audit)."""
    from accelkb.advise import advise
    from accelkb.advise.report import render

    a = advise("dgx-h100", "llama2-70b-inference", compare=["dgx-a100"], goal="energy")
    text = render(a, "md")
    def in_flight(c: dict[str, int]) -> int:  # a pipelined layout has a batch on each stage
        return c["batch"] * (c["pp"] if c["pipelined"] else 1)

    batches = {in_flight(a.baseline.configuration),
               *(in_flight(c.estimate.configuration) for c in a.comparisons if c.estimate)}
    line = next(x for x in text.splitlines() if x.startswith("Per million generated tokens"))
    if len(batches) == 1:
        n = batches.pop()
        assert f"(each with {n} sequence{'s' * (n != 1)} in flight" in line
    else:
        assert f"dgx-h100 with {in_flight(a.baseline.configuration)} in flight" in line
    assert "--goal cost searches it" in line


def test_a_reports_dollar_range_carries_the_estimates_own(kb: KnowledgeBase) -> None:
    from accelkb.advise.advice import Range

    plain = _est(8, 3.2e5, 8_000.0)
    ranged = plain.model_copy(update={"ranges": {
        "tokens_per_s": Range(low=2.4e5, high=3.6e5, basis="validation rows")}})
    p = cost_rows(kb, "dgx-h100", plain, "training", [])[0]
    r = cost_rows(kb, "dgx-h100", ranged, "training", [])[0]
    assert r.usd_per_million_tokens == pytest.approx(p.usd_per_million_tokens)
    assert r.usd_low == pytest.approx((p.usd_low or 0) * 3.2 / 3.6)  # at the fastest rate
    assert r.usd_high == pytest.approx((p.usd_high or 0) * 3.2 / 2.4)  # at the slowest


def test_purchases_that_differ_in_what_they_cover_are_not_like_for_like(kb: KnowledgeBase
                                                                       ) -> None:
    """A GroqCard's price (one PCIe card) was set against an HGX H100 server's (CPUs, memory,
    InfiniBand cards) with no warning, since both are purchases (from an audit)."""
    groq = system_quotes("groq-576", kb)
    h100 = [q for q in system_quotes("dgx-h100", kb) if q.kind == "purchase"]
    assert {q.includes_host for q in groq if q.kind == "purchase"} == {False}
    assert h100 and all(q.includes_host for q in h100)
    rows = cost_rows(kb, "groq-576", _est(576, 4.0e3, 9.0e4), "inference",
                     [Comparison(system="dgx-h100", chips=8, estimate=_est(8, 6.0e3, 6.0e3))])
    assert [r.price_kind for r in rows] == ["purchase", "purchase"]
    warning = like_for_like(rows)
    assert warning.startswith("Not like for like: these purchase prices differ in what they "
                              "cover")
    assert "groq-576: without its host" in warning and "dgx-h100: with its host" in warning
    same = [r.model_copy(update={"includes_host": True}) for r in rows]
    assert like_for_like(same) == ""
    # with a cloud rate beside them, both warnings
    mixed = [*rows, rows[1].model_copy(update={"system": "dgx-a100", "price_kind": "cloud",
                                               "includes_host": None})]
    both = like_for_like(mixed)
    assert "different kinds of price" in both and "Nor are the purchases alike in what they cover" in both


def test_this_systems_row_says_its_cost_at_its_other_kind_of_price(kb: KnowledgeBase) -> None:
    """A DGX H100's own $ per M tokens moved 5.3x between a comparison with IPU-PODs (priced by
    purchase) and one with DGX A100s (cloud), with no word (from an audit)."""
    h100 = _est(8, 3.2e5, 8_000.0)
    by_cloud = cost_rows(kb, "dgx-h100", h100, "training",
                         [Comparison(system="dgx-a100", chips=8, estimate=h100)])[0]
    by_purchase = cost_rows(kb, "dgx-h100", h100, "training",
                            [Comparison(system="ipu-pod64", chips=64, estimate=h100)])[0]
    assert (by_cloud.price_kind, by_purchase.price_kind) == ("cloud", "purchase")
    assert f"${by_purchase.usd_per_million_tokens:,.3g} per M tokens" in by_cloud.other_kind
    assert f"${by_cloud.usd_per_million_tokens:,.3g} per M tokens" in by_purchase.other_kind
    only = cost_rows(kb, "ipu-pod64", h100, "training", [])[0]  # one kind of price: nothing
    assert only.other_kind == ""
