"""Dollars and kilowatt-hours of an estimate: what a system's hour costs, and per token.

A system's hour costs either its **cloud rate** (whole instances: ``ceil(chips / chips per
instance) x rate``; energy and facility are in the rate) or its **capital cost amortised** over
the hours it does useful work plus its **energy** at the facility's PUE and electricity price::

    capex / (years x 8760 h x utilisation) + power x PUE x $/kWh

From the hour and the estimate's throughput follow ``$ per million tokens`` and, from its
average power, ``kWh per million tokens`` and tokens per joule (performance per watt). Every
figure carries its basis: the price quote (provider, offering, region, date, source) and the
facility assumptions it used. A price of Low confidence gives a range of x/÷ 1.5, Medium
x/÷ 1.2 (a convention of this module, stated in the basis); High gives none.

Examples
--------
>>> q = PriceQuote(kind="cloud", provider="Cloud", offering="8-chip", chips=8, usd_per_hour=40.0,
...                confidence="Medium", source="price page")
>>> h = hourly_cost(16, q, power_w=None, facility=None)
>>> h.usd, round(h.low, 2), round(h.high, 2)
(80.0, 66.67, 96.0)
>>> round(per_million_tokens(h, tokens_per_s=1000.0).usd, 2)
22.22
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError

HOURS_PER_YEAR = 8760.0
#: Range factor of a price by its confidence (a convention, said in every basis that uses it).
RANGE = {"High": 1.0, "Medium": 1.2, "Low": 1.5}


class PriceQuote(BaseModel):
    """One dated, sourced price of a system, a chip or a served model."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["cloud", "committed", "api", "purchase", "override"]
    provider: str = ""
    offering: str = ""
    region: str = ""
    observed_on: str = ""
    chips: int | None = Field(default=None, ge=1, description="chips in the priced unit")
    usd_per_hour: float | None = Field(default=None, gt=0)
    usd_purchase: float | None = Field(default=None, gt=0)
    usd_per_m_input: float | None = Field(default=None, gt=0, description="API price: dollars "
                                          "per million input tokens")
    usd_per_m_output: float | None = Field(default=None, gt=0, description="API price: dollars "
                                           "per million output tokens")
    confidence: Literal["High", "Medium", "Low"] = "Low"
    source: str = ""
    includes_host: bool | None = Field(default=None, description="a purchase: whether the "
                                       "price covers the host that runs the accelerators "
                                       "(a DGX server's does, a PCIe card's does not); None: "
                                       "not said")

    def describe(self) -> str:
        """The quote in words, for a basis line."""
        where = ", ".join(x for x in (self.provider, self.offering, self.region,
                                      self.observed_on) if x)
        figure = (f"${self.usd_per_hour:,.2f}/h" if self.usd_per_hour is not None
                  else f"${self.usd_purchase:,.0f}" if self.usd_purchase is not None
                  else f"${self.usd_per_m_input or 0:g} in / ${self.usd_per_m_output or 0:g} out "
                  "per M tokens" if self.kind == "api" else "")
        unit = " per chip" if self.chips == 1 else f" per {self.chips} chips" if self.chips else ""
        return (f"{self.kind} price {figure}{unit} ({where}; {self.confidence} confidence"
                + (f"; {self.source}" if self.source else "") + ")")


class Facility(BaseModel):
    """Facility and finance assumptions, stated and overridable."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    pue: float = Field(ge=1.0, le=5.0, description="facility power / IT power")
    usd_per_kwh: float = Field(gt=0, lt=10, description="electricity price")
    amortisation_years: float = Field(gt=0, le=30)
    utilisation: float = Field(gt=0, le=1, description="fraction of hours doing useful work")
    basis: str = ""


class Figure(BaseModel):
    """A cost figure with its range and what it rests on."""

    model_config = ConfigDict(frozen=True)
    usd: float
    low: float
    high: float
    basis: list[str]


def _ranged(usd: float, confidence: str, basis: list[str]) -> Figure:
    f = RANGE[confidence]
    if f > 1.0:
        basis = [*basis, f"range x/÷ {f:g} for a {confidence}-confidence price"]
    return Figure(usd=usd, low=usd / f, high=usd * f, basis=basis)


def hourly_cost(chips: int, quote: PriceQuote, power_w: float | None,
                facility: Facility | None) -> Figure:
    """What an hour of ``chips`` chips costs under ``quote``.

    Raises
    ------
    InputError
        A purchase price without power or facility assumptions, or a quote with no figure.
    """
    if chips < 1:
        raise InputError(f"expected a positive number of chips to price, got {chips}")
    if quote.kind in ("cloud", "committed", "override"):
        if quote.usd_per_hour is None:
            raise InputError(f"expected an hourly rate in {quote.describe()}, got none")
        per = quote.chips or 1
        units = math.ceil(chips / per)
        usd = units * quote.usd_per_hour
        why = (f"{units} x {quote.describe()}" if per > 1 or quote.kind != "override"
               else f"{chips} chips x ${quote.usd_per_hour:,.4g} per chip-hour (--price)")
        return _ranged(usd, quote.confidence, [why + "; energy and facility in the rate"])
    if quote.kind == "purchase":
        if quote.usd_purchase is None or not quote.chips:
            raise InputError(f"expected a purchase price and its chip count in "
                             f"{quote.describe()}, got none")
        if facility is None:
            raise InputError("expected facility assumptions (PUE, $/kWh, amortisation years, "
                             "utilisation) to cost a purchase, got none: give a --data file "
                             "with an ak:FacilityAssumption, or --pue and --kwh-price")
        if power_w is None:
            raise InputError("expected the system's power to cost its energy, got none in "
                             "the knowledge base")
        capex = quote.usd_purchase / quote.chips * chips / (
            facility.amortisation_years * HOURS_PER_YEAR * facility.utilisation)
        energy = power_w / 1000.0 * facility.pue * facility.usd_per_kwh
        return _ranged(capex + energy, quote.confidence, [
            f"capital: {quote.describe()} for {chips} chips, over "
            f"{facility.amortisation_years:g} years at {facility.utilisation:.0%} utilisation: "
            f"${capex:,.2f}/h",
            f"energy: {power_w / 1000:,.3g} kW x PUE {facility.pue:g} x "
            f"${facility.usd_per_kwh:g}/kWh = ${energy:,.2f}/h",
            *([facility.basis] if facility.basis else [])])
    raise InputError(f"expected a system price (cloud, committed or purchase), got a "
                     f"{quote.kind} price")


def per_million_tokens(hour: Figure, tokens_per_s: float) -> Figure:
    """Dollars per million tokens at ``tokens_per_s`` (the hour's range carried over)."""
    if not tokens_per_s > 0:
        raise InputError(f"expected a positive throughput to price tokens, got {tokens_per_s}")
    per = 1e6 / (tokens_per_s * 3600.0)
    return Figure(usd=hour.usd * per, low=hour.low * per, high=hour.high * per,
                  basis=[*hour.basis, f"at {tokens_per_s:,.4g} tokens/s"])


def api_per_million_generated(quote: PriceQuote, prompt: int, output: int) -> Figure:
    """What a user pays an API provider per million generated tokens when each request has
    ``prompt`` input and ``output`` generated tokens: ``out + in x prompt / output``.

    It is an observed market price (the provider's margin and batching included), not the cost
    of owning the chips; its range is that of its confidence.

    >>> q = PriceQuote(kind="api", provider="Cloud", usd_per_m_input=0.6, usd_per_m_output=1.2,
    ...                confidence="Medium")
    >>> f = api_per_million_generated(q, prompt=128, output=128)
    >>> round(f.usd, 2), round(f.low, 2), round(f.high, 2)
    (1.8, 1.5, 2.16)

    Raises
    ------
    InputError
        Not an API price, or no token counts.
    """
    if quote.kind != "api" or quote.usd_per_m_output is None:
        raise InputError(f"expected a per-token API price, got {quote.describe()}")
    if prompt < 0 or output < 1:
        raise InputError(f"expected prompt >= 0 and output >= 1 tokens, got {prompt} and {output}")
    usd = quote.usd_per_m_output + (quote.usd_per_m_input or 0.0) * prompt / output
    return _ranged(usd, quote.confidence, [
        f"observed market price, not a cost: {quote.describe()}, at {prompt} prompt and "
        f"{output} generated tokens per request: ${quote.usd_per_m_output:g} + "
        f"${quote.usd_per_m_input or 0:g} x {prompt}/{output} = ${usd:,.4g} per M generated "
        "tokens (the provider's margin and batching included)"])


def kwh_per_million_tokens(joules_per_token: float, pue: float) -> float:
    """Facility energy per million tokens, kWh."""
    return joules_per_token * pue * 1e6 / 3.6e6
