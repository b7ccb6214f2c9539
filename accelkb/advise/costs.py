"""The cost and energy rows of a report: this system's baseline and each compared system, from
the knowledge base's price quotes and facility assumptions (:mod:`accelkb.perf.cost`)."""

from __future__ import annotations

from typing import Any

from accelkb.advise.advice import Comparison, CostRow, Estimate
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase


def _row(kb: KnowledgeBase, system: str, est: Estimate, phase: str,
         prefer: str = "cloud") -> CostRow:
    from accelkb.perf.cost.estimate import cost_of

    data: dict[str, Any] = {
        "power_w": est.power_w, "tokens_per_s": est.tokens_per_s,
        "end_to_end_tokens_per_s": est.tokens_per_s, "joules_per_token": est.joules_per_token,
        "time_to_train_s": est.time_to_train_s,
        "energy_to_train_j": (est.power_w * est.time_to_train_s
                              if est.power_w and est.time_to_train_s else None)}
    try:
        rep = cost_of(data, phase, system, est.chips, kb=kb, prefer=prefer)
    except InputError as exc:  # no price: the energy figures still stand
        from accelkb.perf.cost.from_kb import facility
        from accelkb.perf.cost.model import kwh_per_million_tokens

        jpt = est.joules_per_token
        fac = facility(kb)
        return CostRow(system=system, chips=est.chips, note=str(exc).split(":")[0],
                       tokens_per_joule=1.0 / jpt if jpt else None,
                       kwh_per_million_tokens=(kwh_per_million_tokens(jpt, fac.pue if fac
                                                                      else 1.0)
                                               if jpt else None))
    per = rep.usd_per_million_tokens
    return CostRow(system=system, chips=est.chips, usd_per_hour=rep.usd_per_hour.usd,
                   usd_per_million_tokens=per.usd, usd_low=per.low, usd_high=per.high,
                   kwh_per_million_tokens=rep.kwh_per_million_tokens,
                   tokens_per_joule=rep.tokens_per_joule,
                   usd_to_train=rep.usd_to_train.usd if rep.usd_to_train else None,
                   price_kind=rep.quote.kind, price=_price_words(rep.quote, rep.usd_per_hour),
                   facility=rep.facility.basis if rep.facility and rep.quote.kind == "purchase"
                   else "",
                   basis=[*rep.usd_per_hour.basis, rep.energy_basis])


def _price_words(quote: Any, hour: Any) -> str:
    """'purchase $32,450 per 4 chips (Graphcore, 2020-07-15, Medium)' or the market line."""
    market = next((b for b in hour.basis if b.startswith("median of ")), "")
    if market:
        return market
    figure = (f"${quote.usd_per_hour:,.2f}/h" if quote.usd_per_hour is not None
              else f"${quote.usd_purchase:,.0f}")
    who = ", ".join(x for x in (quote.provider, quote.observed_on, quote.confidence) if x)
    return f"{quote.kind} {figure} per {quote.chips or 1} chips ({who})"


def cost_rows(kb: KnowledgeBase, system: str, base: Estimate, phase: str,
              comparisons: list[Comparison]) -> list[CostRow]:
    """This system's row first, then one per compared system that has an estimate, priced by
    the same kind of price as this system where they have one (a purchase against a purchase,
    a cloud rate against a cloud rate)."""
    me = _row(kb, system, base, phase)
    prefer = me.price_kind if me.price_kind in ("cloud", "purchase") else "cloud"
    return [me] + [_row(kb, c.system, c.estimate, phase, prefer)
                   for c in comparisons if c.estimate is not None]


def like_for_like(rows: list[CostRow]) -> str:
    """A warning when the rows rest on different kinds of price, else ''."""
    kinds = {r.price_kind for r in rows if r.price_kind}
    if len(kinds) < 2:
        return ""
    by = "; ".join(f"{r.system}: {r.price_kind}" for r in rows if r.price_kind)
    return ("Not like for like: these rows rest on different kinds of price (" + by + "). A "
            "cloud rate includes hosts, network, facility and the provider's margin; a purchase "
            "price here may cover the accelerators only, amortised at the facility assumptions.")


def cost_sentence(rows: list[CostRow], goal: str) -> str:
    """One sentence for the answer when the goal is cost or energy."""
    if not rows:
        return ""
    me = rows[0]
    if goal == "energy":
        if me.tokens_per_joule is None:
            return f"No power figure for {me.system}, so its energy per token is not known."
        best = max((r for r in rows if r.tokens_per_joule), key=lambda r: r.tokens_per_joule or 0)
        tail = (f"; of the systems compared, {best.system} does the most work per joule "
                f"({best.tokens_per_joule:.3g} tokens/J)" if best is not me else "")
        return (f"{me.system} does {me.tokens_per_joule:.3g} tokens per joule at the chips "
                f"({me.kwh_per_million_tokens or 0:.3g} kWh per million tokens with the "
                f"facility){tail}.")
    if me.usd_per_million_tokens is None:
        return (f"No price for {me.system} in the knowledge base, so its cost is not known "
                "(give a --data file with an ak:PriceQuote).")
    priced = [r for r in rows if r.usd_per_million_tokens is not None]
    best = min(priced, key=lambda r: r.usd_per_million_tokens or 0.0)
    tail = (f"; of the systems compared, {best.system} is cheapest at "
            f"${best.usd_per_million_tokens:,.3g}" if best is not me else "")
    return (f"At {me.system}'s price, a million tokens cost ${me.usd_per_million_tokens:,.3g} "
            f"(range ${me.usd_low:,.3g} to ${me.usd_high:,.3g}){tail}.")
