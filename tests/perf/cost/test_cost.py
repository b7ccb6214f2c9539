"""Cost and energy of estimates (issue 26): cloud rates, purchase amortised plus energy,
overrides, and the figures' basis."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf.cost.model import Facility, PriceQuote, hourly_cost, per_million_tokens

#: A user's own chip and systems (the data README's worked example, prefix my:), which no
#: bundled price covers, so these quotes are the only ones for them.
WORKED = re.search(r"<!-- worked-example -->\n```turtle\n(.*?)```",
                   (REPO / "ontology" / "data" / "README.md").read_text(encoding="utf-8"),
                   re.S).group(1)  # type: ignore[union-attr]
PRICES = WORKED + """
@prefix kb: <https://w3id.org/accelkb/data/> .
my:price-page a ak:Source ; dcterms:title "A cloud's price page" ; dcterms:publisher "Cloud" ;
    dcterms:date "2026-11-01"^^xsd:date ; ak:sourceKind ak:VendorDocument .
my:price-old a ak:PriceQuote ; rdfs:label "8-chip instance, 2025" ; ak:priceOf my:node ;
    ak:priceKind ak:CloudOnDemand ; ak:provider "Cloud" ; ak:offering "x8" ; ak:region "us" ;
    ak:observedOn "2025-01-01"^^xsd:date ; ak:chipsPriced 8 ; ak:usdPerHour 98.0 ;
    dcterms:source my:price-page ; ak:confidence ak:High .
my:price-new a ak:PriceQuote ; rdfs:label "8-chip instance, 2026" ; ak:priceOf my:node ;
    ak:priceKind ak:CloudOnDemand ; ak:provider "Cloud" ; ak:offering "x8" ; ak:region "us" ;
    ak:observedOn "2026-11-01"^^xsd:date ; ak:chipsPriced 8 ; ak:usdPerHour 80.0 ;
    dcterms:source my:price-page ; ak:confidence ak:Medium .
my:price-pod a ak:PriceQuote ; rdfs:label "an IPU-POD16, as reported" ; ak:priceOf kb:ipu-pod16 ;
    ak:priceKind ak:Purchase ; ak:observedOn "2021-01-01"^^xsd:date ; ak:chipsPriced 16 ;
    ak:usdPurchase 150000.0 ; dcterms:source my:price-page ; ak:confidence ak:Low .
my:price-facility a ak:FacilityAssumption ; rdfs:label "a facility" ; ak:pue 1.5 ;
    ak:usdPerKilowattHour 0.1 ; ak:amortisationYears 4 ; ak:utilisation 0.8 ;
    dcterms:source my:price-page ; ak:confidence ak:Low .
"""


@pytest.fixture()
def prices(tmp_path: Path) -> str:
    path = tmp_path / "prices.ttl"
    path.write_text(PRICES, encoding="utf-8")
    return str(path)


def _estimate(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["estimate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_cloud_rate_prices_whole_instances_and_tokens(prices: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = _estimate(capsys, "inference", "--model", "my-llama3-8b", "--system", "my-npu-node",
                    "--parallel", "tp=8,batch=64,in=512,out=512", "--data", prices)
    cost = out["cost"]
    assert cost["quote"]["usd_per_hour"] == 80.0  # the newest quote, not the 2025 one
    assert cost["usd_per_hour"]["usd"] == 80.0
    assert cost["usd_per_hour"]["low"] == pytest.approx(80 / 1.2)  # Medium confidence
    per = 80.0 / (out["end_to_end_tokens_per_s"] * 3600) * 1e6
    assert cost["usd_per_million_tokens"]["usd"] == pytest.approx(per)
    jpt = out["end_to_end_joules_per_token"]  # priced per token end to end: energy too
    assert cost["kwh_per_million_tokens"] == pytest.approx(jpt * 1.5 / 3.6)
    assert cost["facility"]["pue"] == 1.5  # the file's facility, read before the bundled one
    assert cost["tokens_per_joule"] == pytest.approx(1 / jpt)
    assert any("Cloud, x8, us, 2026-11-01" in b for b in cost["usd_per_hour"]["basis"])


def test_a_purchase_is_amortised_and_its_energy_added(prices: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = _estimate(capsys, "training", "--model", "bert-large", "--system", "ipu-pod16",
                    "--parallel", "gbs=256,mb=1,recompute=full", "--tokens", "1e9",
                    "--data", prices)
    cost = out["cost"]
    capex = 150000.0 / (4 * 8760 * 0.8)
    energy = out["power_w"] / 1000 * 1.5 * 0.1
    assert cost["usd_per_hour"]["usd"] == pytest.approx(capex + energy)
    assert cost["usd_per_hour"]["high"] == pytest.approx((capex + energy) * 1.5)  # Low
    assert cost["usd_to_train"]["usd"] == pytest.approx(
        (capex + energy) * out["time_to_train_s"] / 3600)
    assert cost["kwh_to_train"] == pytest.approx(out["energy_to_train_j"] * 1.5 / 3.6e6)


def test_overrides_and_their_errors(prices: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = _estimate(capsys, "inference", "--model", "my-llama3-8b", "--system", "my-npu-node",
                    "--parallel", "tp=8,batch=8", "--price", "2.5", "--pue", "1.2",
                    "--data", prices)
    assert out["cost"]["usd_per_hour"]["usd"] == pytest.approx(8 * 2.5)
    assert out["cost"]["facility"]["pue"] == 1.2
    assert "overridden: --pue 1.2" in out["cost"]["facility"]["basis"]
    assert main(["estimate", "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                 "--parallel", "tp=8", "--pue", "0.5"]) == 2
    assert "expected --pue between 1 and 5" in capsys.readouterr().err
    assert main(["estimate", "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                 "--parallel", "tp=8", "--price", "nan"]) == 2


def test_no_price_is_said_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    out = _estimate(capsys, "inference", "--model", "llama2-70b", "--system", "sn40l-node",
                    "--parallel", "tp=8")  # SambaNova publishes no price
    assert "expected a price for the system, got none" in out["cost"]["unavailable"]


def test_several_providers_give_the_median_and_their_spread(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The bundled prices: each provider's newest rate; the median is the figure, the cheapest
    and dearest provider the range."""
    out = _estimate(capsys, "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                    "--parallel", "tp=8,batch=8")
    hour = out["cost"]["usd_per_hour"]
    assert hour["low"] < hour["usd"] < hour["high"]
    assert hour["basis"][0].startswith("median of ") and "providers' newest cloud" in hour["basis"][0]


def test_a_purchase_needs_facility_assumptions() -> None:
    q = PriceQuote(kind="purchase", chips=8, usd_purchase=3e5, confidence="Low")
    with pytest.raises(InputError, match="expected facility assumptions"):
        hourly_cost(8, q, power_w=5000.0, facility=None)
    fac = Facility(pue=1.0, usd_per_kwh=0.1, amortisation_years=1, utilisation=1.0)
    hour = hourly_cost(8, q, power_w=5000.0, facility=fac)
    assert hour.usd == pytest.approx(3e5 / 8760 + 0.5)
    assert per_million_tokens(hour, 1e6 / 3600).usd == pytest.approx(hour.usd)


def test_the_market_does_not_depend_on_the_order_quotes_are_read() -> None:
    """Two quotes of one provider on one day (Hugging Face's 1- and 4-chip TPU v5e offers): the
    graph's iteration order changes between processes, the chosen quote and spread must not."""
    from accelkb.perf.cost.from_kb import _newest_first, market, system_quotes

    quotes = system_quotes("tpu-v5e-pod")
    same_day = [q for q in quotes if q.provider == "Hugging Face Spaces"]
    assert len({q.observed_on for q in same_day}) == 1 < len(same_day)
    first = market(_newest_first(quotes))
    assert market(_newest_first(list(reversed(quotes)))) == first
    assert first is not None and first[1] == pytest.approx(1.2)  # Google's $1.20 per chip-hour


def test_the_median_of_an_even_market_lies_between_its_middle_quotes() -> None:
    """Two providers at $2.79 and $3.43 per chip-hour: the median is $3.11, not the cheaper one
    (the A100 and B200 reports priced 10-13 % low)."""
    from accelkb.perf.cost.from_kb import market

    quotes = [PriceQuote(kind="cloud", provider="A", chips=8, usd_per_hour=8 * 2.79,
                         confidence="Medium"),
              PriceQuote(kind="cloud", provider="B", chips=8, usd_per_hour=8 * 3.43,
                         confidence="High")]
    spread = market(quotes)
    assert spread is not None
    mid, low, high, _ = spread
    assert mid.usd_per_hour == pytest.approx(3.11) and mid.chips == 1
    assert (low, high) == pytest.approx((2.79, 3.43)) and mid.confidence == "Medium"
    three = market([*quotes, PriceQuote(kind="cloud", provider="C", chips=1, usd_per_hour=5.0)])
    assert three is not None and three[0].provider == "B"


def test_the_market_prices_any_chip_count_per_chip(capsys: pytest.CaptureFixture[str]) -> None:
    """An odd market's median was one provider's 8-GPU instance, so one GPU of a DGX H100 cost
    the whole instance ($49.24/h) while its range went down to $3.20 (from an audit)."""
    one = _estimate(capsys, "inference", "--model", "llama3.1-8b", "--system", "dgx-h100",
                    "--chips", "1", "--parallel", "tp=1")["cost"]["usd_per_hour"]
    eight = _estimate(capsys, "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                      "--parallel", "tp=8")["cost"]["usd_per_hour"]
    assert one["usd"] == pytest.approx(eight["usd"] / 8)
    assert one["low"] < one["usd"] < one["high"]
    assert one["high"] == pytest.approx(eight["high"] / 8)


def test_inference_energy_is_priced_on_the_tokens_cost_is(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """Cost counted the prefill's time (end-to-end tokens/s) and energy did not (decode only):
    at batch 256 with 2,048-token prompts the kWh per million tokens was 4x too low next to the
    dollars of the same run (from an audit)."""
    out = _estimate(capsys, "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                    "--parallel", "tp=8,batch=256,in=2048,out=256")
    decode, e2e = out["joules_per_token"], out["end_to_end_joules_per_token"]
    slower = out["tokens_per_s"] / out["end_to_end_tokens_per_s"]
    assert slower > 3 and e2e > decode * slower * 0.9  # the prefill's seconds carry its joules
    assert out["cost"]["tokens_per_joule"] == pytest.approx(1 / e2e)
    short = _estimate(capsys, "inference", "--model", "llama2-70b", "--system", "dgx-h100",
                      "--parallel", "tp=8,batch=1,in=8,out=512")
    assert short["end_to_end_joules_per_token"] == pytest.approx(short["joules_per_token"],
                                                                 rel=0.02)


def test_cost_ranges_carry_the_estimates_own_interval(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """The $ ranges were the price's spread only: GPT-3 175B on 1,024 A100s cost $2.23-2.74M to
    train while its time to train spanned -14 % to +26 % (from an audit)."""
    out = _estimate(capsys, "training", "--model", "gpt3-175b", "--system", "dgx-a100-superpod",
                    "--chips", "1024", "--parallel", "tp=8,pp=16,dp=8,mb=1,gbs=1536,"
                    "recompute=full", "--tokens", "3e11")
    hour, per, run = (out["cost"][k] for k in ("usd_per_hour", "usd_per_million_tokens",
                                                "usd_to_train"))
    iv = out["uncertainty"]["tokens_per_s"]["interval"]
    assert per["low"] == pytest.approx(hour["low"] * 1e6 / (iv["high"] * 3600))
    assert per["high"] == pytest.approx(hour["high"] * 1e6 / (iv["low"] * 3600))
    price_only = hour["high"] / hour["low"]
    assert per["high"] / per["low"] > price_only * 1.2  # wider than the price's spread
    assert run["low"] < run["usd"] < run["high"]
    assert run["high"] / run["low"] == pytest.approx(per["high"] / per["low"])
    assert any("the estimate's interval" in b for b in per["basis"])
