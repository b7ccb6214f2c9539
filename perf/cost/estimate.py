"""The cost and energy figures of a performance estimate.

For training: dollars and kWh per million trained tokens and, with tokens to train, per run.
For inference: dollars and kWh per million generated tokens at the estimate's batch (end-to-end
throughput, prefill included). Both give tokens per joule at the chips (performance per watt).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.cost.from_kb import choose, facility, market, system_quotes
from accelkb.perf.cost.model import (
    Facility,
    Figure,
    PriceQuote,
    hourly_cost,
    kwh_per_million_tokens,
    per_million_tokens,
)


class CostReport(BaseModel):
    """What the estimated run costs, in dollars and kWh, with the basis of each figure."""

    model_config = ConfigDict(frozen=True)
    quote: PriceQuote = Field(description="the price used")
    facility: Facility | None = Field(description="the facility assumptions used, if any")
    usd_per_hour: Figure = Field(description="the chips used, one hour")
    usd_per_million_tokens: Figure = Field(description="trained (training) or generated "
                                           "(inference, prefill included) tokens")
    kwh_per_million_tokens: float | None = Field(description="facility energy (IT energy x PUE)")
    tokens_per_joule: float | None = Field(description="tokens per joule at the chips "
                                           "(performance per watt: tokens/s per W)")
    usd_to_train: Figure | None = Field(default=None, description="the whole run (training "
                                        "with tokens to train)")
    kwh_to_train: float | None = Field(default=None, description="the whole run's facility "
                                       "energy, kWh")
    energy_basis: str = Field(description="what the energy figures rest on")


def overridden(fac: Facility | None, kwh_price: float | None, pue: float | None
               ) -> Facility | None:
    """``fac`` with the user's --kwh-price and --pue (a partial facility when there is none:
    enough for energy, not for amortising a purchase)."""
    if kwh_price is None and pue is None:
        return fac
    base = fac or Facility(pue=1.0, usd_per_kwh=1.0, amortisation_years=1.0, utilisation=1.0,
                           basis="")
    update: dict[str, Any] = {}
    said = []
    if kwh_price is not None:
        update["usd_per_kwh"] = kwh_price
        said.append(f"--kwh-price {kwh_price:g}")
    if pue is not None:
        update["pue"] = pue
        said.append(f"--pue {pue:g}")
    basis = (fac.basis + "; " if fac else "") + "overridden: " + ", ".join(said)
    return Facility.model_validate({**base.model_dump(), **update, "basis": basis})


def check_overrides(price: float | None = None, kwh_price: float | None = None,
                    pue: float | None = None) -> None:
    """Raise :class:`InputError` for a price, electricity price or PUE a user cannot mean.

    >>> check_overrides(price=2.5, pue=1.2)
    >>> check_overrides(pue=0.9)
    Traceback (most recent call last):
    ...
    accelkb.errors.InputError: expected --pue between 1 and 5 (facility power / IT power), got 0.9
    """
    for value, option, most, unit in ((price, "--price", 1e5, "USD per chip-hour"),
                                      (kwh_price, "--kwh-price", 10.0, "USD per kWh"),
                                      (pue, "--pue", 5.0, "")):
        if value is not None and not 0 < value < float("inf"):
            raise InputError(f"expected {option} > 0 (a finite number), got {value}")
        if value is not None and option != "--pue" and value >= most:
            raise InputError(f"expected {option} below {most:g} {unit}"
                             + (" (0.12 is 12 cents)" if option == "--kwh-price" else "")
                             + f", got {value:g}")
    if pue is not None and not 1.0 <= pue <= 5.0:
        raise InputError(f"expected --pue between 1 and 5 (facility power / IT power), got {pue}")


def cost_of(estimate: dict[str, Any], phase: str, system: str, chips: int,
            price: float | None = None, kwh_price: float | None = None,
            pue: float | None = None, kb: KnowledgeBase | None = None,
            prefer: str = "cloud") -> CostReport:
    """The cost report of ``estimate`` (a training or inference estimate's model_dump).

    ``price`` is a user's dollars per chip-hour; without it the system's quotes of the
    ``prefer`` kind (cloud: the providers' median; purchase: amortised plus energy) are used,
    else those of the other kind.

    Raises
    ------
    InputError
        No price for the system and none given, or bad overrides.
    """
    check_overrides(price, kwh_price, pue)
    spread = None
    if price is not None:
        quote = PriceQuote(kind="override", chips=1, usd_per_hour=price, confidence="High",
                           source="--price")
    else:
        quotes = system_quotes(system, kb)
        quote = choose(quotes, prefer)
        spread = market(quotes, quote.kind)
        if spread is not None:
            quote = spread[0]
    fac = overridden(facility(kb), kwh_price, pue)
    power = estimate.get("power_w")
    hour = hourly_cost(chips, quote, power, fac if quote.kind == "purchase" else None)
    if spread is not None:  # the providers' spread is the range, not the quote's confidence
        _, low, high, line = spread
        hour = Figure(usd=hour.usd, low=min(hour.usd, low * chips),
                      high=max(hour.usd, high * chips),
                      basis=[line, *[b for b in hour.basis if not b.startswith("range x/÷")]])
    rate_key = "tokens_per_s" if phase == "training" else "end_to_end_tokens_per_s"
    rate = float(estimate[rate_key])
    tokens = per_million_tokens(hour, rate)
    span = _rate_span(estimate, rate)
    if span is not None:  # the model's own uncertainty, not only the price's
        tokens = Figure(usd=tokens.usd, low=hour.low * 1e6 / (span[1] * 3600.0),
                        high=hour.high * 1e6 / (span[0] * 3600.0), basis=[
                            *tokens.basis, f"range: the price's and the throughput's "
                            f"({span[0]:,.4g} to {span[1]:,.4g} tokens/s, the estimate's "
                            "interval)"])
    # inference is priced per token end to end (prefill included): its energy on that basis too
    jpt = (estimate.get("end_to_end_joules_per_token") if phase != "training" else None) \
        or estimate.get("joules_per_token")
    pue_used = fac.pue if fac is not None else 1.0
    energy_basis = (f"average power {power:,.4g} W of the chips used x PUE {pue_used:g}"
                    if power else "no power figure for the system")
    if power and estimate.get("power_basis"):
        energy_basis += f" (full power: {estimate['power_basis']})"
    if fac is None:
        energy_basis += " (no facility assumptions: energy at the chips only)"
    out: dict[str, Any] = {
        "quote": quote, "facility": fac, "usd_per_hour": hour, "usd_per_million_tokens": tokens,
        "kwh_per_million_tokens": kwh_per_million_tokens(jpt, pue_used) if jpt else None,
        "tokens_per_joule": 1.0 / jpt if jpt else None, "energy_basis": energy_basis}
    seconds = estimate.get("time_to_train_s")
    if phase == "training" and seconds:
        f = seconds / 3600.0
        lo = hi = f
        if span is not None:  # a slower run costs more hours, a faster one fewer
            lo, hi = f * rate / span[1], f * rate / span[0]
        out["usd_to_train"] = Figure(usd=hour.usd * f, low=hour.low * lo, high=hour.high * hi,
                                     basis=[*hour.basis, f"for {seconds / 86400:,.3g} days"
                                            + (f" ({lo / 24:,.3g} to {hi / 24:,.3g} days in the "
                                               "estimate's interval)" if span else "")])
        joules = estimate.get("energy_to_train_j")
        out["kwh_to_train"] = joules * pue_used / 3.6e6 if joules else None
    return CostReport(**out)


def _rate_span(estimate: dict[str, Any], rate: float) -> tuple[float, float] | None:
    """The interval of the rate cost is priced on, from the estimate's own interval of its
    tokens per second (``uncertainty``, when the estimate has one), scaled to ``rate`` (the
    end-to-end rate of inference moves with the decode rate): cost ranges carried the price's
    spread only, so $ per run on a chip with +-13x throughput showed +-20 %."""
    iv = ((estimate.get("uncertainty") or {}).get("tokens_per_s") or {}).get("interval")
    base = estimate.get("tokens_per_s")
    if not iv or not base or not iv.get("low") or not iv.get("high"):
        return None
    scale = rate / float(base)
    low, high = float(iv["low"]) * scale, float(iv["high"]) * scale
    return (min(low, rate), max(high, rate)) if low > 0 else None
