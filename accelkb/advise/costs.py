"""The cost and energy rows of a report: this system's baseline and each compared system, from
the knowledge base's price quotes and facility assumptions (:mod:`accelkb.perf.cost`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from accelkb.advise.advice import Comparison, CostRow, Estimate
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase


class Overrides(NamedTuple):
    """The user's price of this system (dollars per chip-hour) and facility figures."""

    price: float | None = None
    kwh_price: float | None = None
    pue: float | None = None


class Workload(NamedTuple):
    """What an API price is matched on: the model served (IRI) and the request's lengths."""

    model: Any
    prompt: int
    output: int


NO_OVERRIDES = Overrides()


def cost_row(kb: KnowledgeBase, system: str, est: Estimate, phase: str, prefer: str = "cloud",
         overrides: Overrides = NO_OVERRIDES, api: Workload | None = None) -> CostRow:
    from accelkb.perf.cost.estimate import cost_of

    # inference is priced per generated token with each request's prefill counted, as
    # `accelkb estimate` prices it and as the cost search ranks it (the decode-only rate made a
    # DGX H100's tokens 2.9x cheaper, beside an API price that includes the prompt)
    data: dict[str, Any] = {
        "power_w": est.power_w, "tokens_per_s": est.tokens_per_s,
        "end_to_end_tokens_per_s": est.end_to_end_tokens_per_s or est.tokens_per_s,
        "joules_per_token": est.joules_per_token,
        "end_to_end_joules_per_token": est.end_to_end_joules_per_token,
        "time_to_train_s": est.time_to_train_s,
        "energy_to_train_j": (est.power_w * est.time_to_train_s
                              if est.power_w and est.time_to_train_s else None)}
    # the dollars' range carries the estimate's own (inference: the per-user rate's, at the
    # layout's batch), as `accelkb estimate`'s does
    low_high = None
    if (rate := est.ranges.get("tokens_per_s")) is not None:
        low_high = (rate.low, rate.high)
    elif (user := est.ranges.get("tokens_per_s_per_user")) and est.tokens_per_s_per_user:
        k = est.tokens_per_s / est.tokens_per_s_per_user
        low_high = (user.low * k, user.high * k)
    if low_high is not None:
        data["uncertainty"] = {"tokens_per_s": {"interval": {"low": low_high[0],
                                                             "high": low_high[1]}}}
    market = _market(kb, system, api) if phase != "training" else None
    try:
        rep = cost_of(data, phase, system, est.chips, overrides.price, overrides.kwh_price,
                      overrides.pue, kb=kb, prefer=prefer)
    except InputError as exc:  # no price: the energy figures still stand
        from accelkb.perf.cost.estimate import overridden
        from accelkb.perf.cost.from_kb import facility
        from accelkb.perf.cost.model import kwh_per_million_tokens

        jpt = est.end_to_end_joules_per_token or est.joules_per_token
        fac = overridden(facility(kb), overrides.kwh_price, overrides.pue)
        tpj = 1.0 / jpt if jpt else None
        kwh = kwh_per_million_tokens(jpt, fac.pue if fac else 1.0) if jpt else None
        if market is None:
            return CostRow(system=system, chips=est.chips, note=str(exc).split(":")[0],
                           tokens_per_joule=tpj, kwh_per_million_tokens=kwh)
        quote, fig = market
        return CostRow(system=system, chips=est.chips, usd_per_million_tokens=fig.usd,
                       usd_low=fig.low, usd_high=fig.high, price_kind="api",
                       price=_price_words(quote, fig), market=fig.basis[0],
                       basis=[*fig.basis, "no price of the system itself in the knowledge base"],
                       tokens_per_joule=tpj, kwh_per_million_tokens=kwh)
    per = rep.usd_per_million_tokens
    return CostRow(system=system, chips=est.chips, usd_per_hour=rep.usd_per_hour.usd,
                   usd_per_million_tokens=per.usd, usd_low=per.low, usd_high=per.high,
                   kwh_per_million_tokens=rep.kwh_per_million_tokens,
                   tokens_per_joule=rep.tokens_per_joule,
                   usd_to_train=rep.usd_to_train.usd if rep.usd_to_train else None,
                   usd_to_train_low=rep.usd_to_train.low if rep.usd_to_train else None,
                   usd_to_train_high=rep.usd_to_train.high if rep.usd_to_train else None,
                   price_kind=rep.quote.kind, price=_price_words(rep.quote, rep.usd_per_hour),
                   includes_host=rep.quote.includes_host,
                   facility=rep.facility.basis if rep.facility and rep.quote.kind == "purchase"
                   else "", market=market[1].basis[0] if market else "",
                   basis=[*rep.usd_per_hour.basis, rep.energy_basis])


def _market(kb: KnowledgeBase, system: str, api: Workload | None) -> tuple[Any, Any] | None:
    """The newest API price of the workload's model on this system's chip, and what it comes
    to per million generated tokens at the workload's prompt and output lengths."""
    if api is None or api.output < 1:
        return None
    from accelkb.perf.cost.from_kb import api_quotes
    from accelkb.perf.cost.model import api_per_million_generated

    quotes = [q for q in api_quotes(system, api.model, kb) if q.usd_per_m_output is not None]
    if not quotes:
        return None
    return quotes[0], api_per_million_generated(quotes[0], api.prompt, api.output)


def _price_words(quote: Any, hour: Any) -> str:
    """'purchase $32,450 per 4 chips (Graphcore, 2020-07-15, Medium)' or the market line."""
    market = next((b for b in hour.basis if b.startswith("median of ")), "")
    if market:
        return market
    if quote.kind == "api":
        who = ", ".join(x for x in (quote.provider, quote.offering, quote.observed_on,
                                    quote.confidence) if x)
        return (f"API ${quote.usd_per_m_input or 0:g} in / ${quote.usd_per_m_output:g} out per M "
                f"tokens ({who})")
    figure = (f"${quote.usd_per_hour:,.2f}/h" if quote.usd_per_hour is not None
              else f"${quote.usd_purchase:,.0f}")
    who = ", ".join(x for x in (quote.provider, quote.observed_on, quote.confidence) if x)
    return f"{quote.kind} {figure} per {quote.chips or 1} chips ({who})"


def cost_rows(kb: KnowledgeBase, system: str, base: Estimate, phase: str,
              comparisons: list[Comparison], overrides: Overrides = NO_OVERRIDES,
              api: Workload | None = None, system_chips: int | None = None) -> list[CostRow]:
    """This system's row first, then one per compared system that has an estimate, all priced
    by the kind of price most of them have (:func:`common_kind`: a purchase against a purchase,
    a cloud rate against a cloud rate), so which system is named first does not change which is
    cheaper.

    ``overrides.price`` prices this system only; the facility figures apply to every row. With
    ``api`` (inference), a system with no price of its own is priced by the newest API price of
    the model served on its chip, marked as a market price."""
    prefer = common_kind(kb, [system, *(c.system for c in comparisons if c.estimate is not None)],
                         api)
    me = _part(cost_row(kb, system, base, phase, prefer, overrides=overrides, api=api),
               system_chips)
    me = _other_kind(kb, me, system, base, phase, overrides, api)
    others = Overrides(None, overrides.kwh_price, overrides.pue)
    return [me] + [_part(_scaled(cost_row(kb, c.system, c.estimate, phase, prefer, others, api),
                                 c), c.system_chips)
                   for c in comparisons if c.estimate is not None]


def _other_kind(kb: KnowledgeBase, me: CostRow, system: str, base: Estimate, phase: str,
                overrides: Overrides, api: Workload | None) -> CostRow:
    """This system's row, saying what it costs at its other kind of price where it has one:
    the table takes the kind most systems compared have, so a DGX H100's own $ per M tokens
    moved 5.3x between a list of IPU-PODs (purchase) and a list of GPUs (cloud) with no word
    (from an audit)."""
    from accelkb.perf.cost.from_kb import system_quotes

    if me.price_kind not in ("cloud", "purchase") or overrides.price is not None:
        return me
    other = "purchase" if me.price_kind == "cloud" else "cloud"
    if other not in {q.kind for q in system_quotes(system, kb)}:
        return me
    alt = cost_row(kb, system, base, phase, other, overrides=overrides, api=api)
    if alt.price_kind != other or alt.usd_per_million_tokens is None:
        return me
    words = (f"at its {other} price ({alt.price}) {system} costs "
             f"${alt.usd_per_million_tokens:,.3g} per M tokens (${alt.usd_low:,.3g}-"
             f"${alt.usd_high:,.3g}), against ${me.usd_per_million_tokens or 0:,.3g} at the "
             f"{me.price_kind} price every row here takes")
    return me.model_copy(update={"other_kind": words})


def _part(row: CostRow, system_chips: int | None) -> CostRow:
    """A layout on part of a system's chips is priced for the chips it uses (the rest can serve
    other work); the row says so, and what the whole system's price would make it."""
    if system_chips is None:
        return row
    row = row.model_copy(update={"system_chips": system_chips})
    if row.usd_per_hour is None or row.chips >= system_chips:
        return row
    fit = system_chips // row.chips
    idle = system_chips - fit * row.chips
    words = (f"{row.chips} of the system's {system_chips} chips priced (one replica of this "
             f"layout; {fit} fit" + (
                 ", so the whole system costs the same per token)" if not idle else
                 f", leaving {idle} chips that hold no replica: the whole system costs "
                 f"{system_chips / (fit * row.chips):.2f}x per token unless they serve other "
                 "work)"))
    return row.model_copy(update={"basis": [*row.basis, words], "price": f"{row.price}; {words}"})


def _scaled(row: CostRow, c: Comparison) -> CostRow:
    """A system compared at more chips than it has (``--compare SYSTEM:CHIPS``) is priced per
    chip of its own quote; a purchase of chips beyond one system then leaves out the network
    that joins the systems."""
    if row.price_kind != "purchase" or c.own_chips is None or c.chips <= c.own_chips:
        return row
    words = (f"{c.chips} chips priced per chip as {c.system}: the network that joins the "
             "systems (switches, cables) is not in the price")
    return row.model_copy(update={"basis": [*row.basis, words], "price": f"{row.price}; {words}"})


def common_kind(kb: KnowledgeBase, systems: list[str], api: Workload | None = None) -> str:
    """The kind of price (cloud or purchase) that the most of ``systems`` have a quote of, a tie
    going to 'purchase' (the owner's cost, the TCO a buyer compares; a cloud rate adds a
    provider's hosts, margin and idle time); each row then takes it where it has one and falls
    back to the other kind (:func:`like_for_like` says so). A system with neither counts for
    'cloud' where an API price of ``api``'s model prices it (both are market prices), else not
    at all.

    The same answer whichever system comes first: before, a compared system took the first
    system's kind, so naming an IPU-POD64 first priced a DGX H100 by purchase (cheapest of the
    two) and naming the DGX H100 first priced it by cloud rate (2.5x the IPU's cost)."""
    from accelkb.perf.cost.from_kb import system_quotes

    count = {"cloud": 0, "purchase": 0}
    for name in systems:
        try:
            kinds = {str(q.kind) for q in system_quotes(name, kb)} & set(count)
        except InputError:
            continue
        if not kinds and _market(kb, name, api) is not None:
            kinds = {"cloud"}
        for kind in count:
            count[kind] += kind in kinds
    return "purchase" if count["purchase"] >= count["cloud"] else "cloud"


def like_for_like(rows: list[CostRow]) -> str:
    """A warning when the rows rest on different kinds of price, and one when some purchases
    cover the host that runs the accelerators and some do not (either, both, or '')."""
    kinds = {r.price_kind for r in rows if r.price_kind}
    bought = [r for r in rows if r.price_kind == "purchase" and r.includes_host is not None]
    out = []
    if len(kinds) > 1:
        by = "; ".join(f"{r.system}: {r.price_kind}" for r in rows if r.price_kind)
        api = (" An API price is what a user pays the provider per token, at the provider's "
               "own batch and margin, not what the chips cost." if "api" in kinds else "")
        out.append("Not like for like: these rows rest on different kinds of price (" + by +
                   "). A cloud rate includes hosts, network, facility and the provider's "
                   "margin; a purchase price is amortised at the facility assumptions." + api)
    if len({r.includes_host for r in bought}) > 1:
        by = "; ".join(f"{r.system}: {'with' if r.includes_host else 'without'} its host"
                       for r in bought)
        out.append(("Nor are the purchases alike" if out else "Not like for like: these purchase "
                    "prices differ") + " in what they cover (" + by + "). A price without the "
                   "host leaves out the servers (CPUs, memory, network cards) and switches the "
                   "accelerators need, so it understates the owner's cost against one that "
                   "includes them.")
    return " ".join(out)


def _names(rows: list[CostRow]) -> list[str]:
    """Each row's name, with its system's chips where a system appears at two sizes (dgx-h100
    and dgx-h100 x64: the answer named the SuperPOD's price as a DGX H100's)."""
    twice = {r.system for r in rows if sum(x.system == r.system for x in rows) > 1}
    return [f"{r.system} x{r.system_chips or r.chips}" if r.system in twice else r.system
            for r in rows]


def cost_sentence(rows: list[CostRow], goal: str) -> str:
    """One sentence for the answer when the goal is cost or energy. The cheapest is named only
    among rows priced by the same kind as this system's (an API price, with the provider's
    margin, was named cheapest against a cloud rental of H100s)."""
    if not rows:
        return ""
    me, names = rows[0], _names(rows)
    if goal == "energy":
        if me.tokens_per_joule is None:
            return f"No power figure for {me.system}, so its energy per token is not known."
        i = max((i for i, r in enumerate(rows) if r.tokens_per_joule),
                key=lambda i: rows[i].tokens_per_joule or 0)
        tail = (f"; of the systems compared, {names[i]} does the most work per joule "
                f"({rows[i].tokens_per_joule:.3g} tokens/J)" if i else "")
        return (f"{me.system} does {me.tokens_per_joule:.3g} tokens per joule at the chips "
                f"({me.kwh_per_million_tokens or 0:.3g} kWh per million tokens with the "
                f"facility, prefill counted){tail}.")
    if me.usd_per_million_tokens is None:
        return (f"No price for {me.system} in the knowledge base, so its cost is not known "
                "(give a --data file with an ak:PriceQuote).")
    if me.price_kind == "api":
        provider = me.price.split("(", 1)[-1].split(",", 1)[0]
        head = (f"{provider} charges ${me.usd_per_million_tokens:,.3g} per million generated "
                f"tokens for this model on {me.system}'s chips (range ${me.usd_low:,.3g} to "
                f"${me.usd_high:,.3g}; an observed market price, not the cost of owning them)")
    else:
        head = (f"At {me.system}'s {me.price_kind} price, a million generated tokens cost "
                f"${me.usd_per_million_tokens:,.3g} (range ${me.usd_low:,.3g} to "
                f"${me.usd_high:,.3g}; prefill counted)")
    alike = [i for i, r in enumerate(rows)
             if r.usd_per_million_tokens is not None and r.price_kind == me.price_kind]
    i = min(alike, key=lambda i: rows[i].usd_per_million_tokens or 0.0)
    tail = (f"; of the systems compared at a {me.price_kind} price, {names[i]} is cheapest at "
            f"${rows[i].usd_per_million_tokens:,.3g}" if i else "")
    others = [names[j] for j, r in enumerate(rows)
              if r.usd_per_million_tokens is not None and r.price_kind != me.price_kind]
    if others:
        tail += (f" ({', '.join(others)} priced otherwise, so not ranked: see the cost "
                 "table's warning)")
    return head + tail + "."
