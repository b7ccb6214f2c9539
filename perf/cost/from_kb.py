"""Price quotes and facility assumptions from the knowledge base (``ak:PriceQuote``,
``ak:FacilityAssumption``; schema ``ontology/schema/ext-cost.ttl``).

A quote of a system applies to it and to every system built of it (a DGX H100 instance rate
prices a DGX H100 SuperPOD node by node); a quote of a chip prices any system of that chip.
"""

from __future__ import annotations

from typing import Any

from rdflib import Graph, URIRef

from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.perf.cost.model import Facility, PriceQuote
from accelkb.perf.from_kb import default_kb

_KINDS = {AK.CloudOnDemand: "cloud", AK.CloudCommitted: "committed", AK.PerTokenApi: "api",
          AK.Purchase: "purchase"}


def _num(g: Graph, s: Any, p: URIRef) -> float | None:
    v = g.value(s, p)
    return float(v.toPython()) if v is not None else None


def _text(g: Graph, s: Any, p: Any) -> str:
    v = g.value(s, p)
    return str(v) if v is not None else ""


def _confidence(g: Graph, node: Any) -> str:
    c = g.value(node, AK.confidence)
    if c is None:
        for prov in g.objects(node, AK.provenance):
            c = g.value(prov, AK.confidence)
            if c is not None:
                break
    name = str(c).rsplit("#", 1)[-1] if c is not None else "Low"
    return name if name in ("High", "Medium", "Low") else "Low"


def _source(g: Graph, node: Any) -> str:
    from rdflib.namespace import DCTERMS

    src = g.value(node, DCTERMS.source)
    if src is None:
        return ""
    return _text(g, src, DCTERMS.title) or str(src)


def quote_of(g: Graph, node: Any) -> PriceQuote:
    """The :class:`PriceQuote` of one ``ak:PriceQuote`` node."""
    chips = _num(g, node, AK.chipsPriced)
    return PriceQuote(
        kind=_KINDS.get(g.value(node, AK.priceKind), "purchase"),  # type: ignore[arg-type]
        provider=_text(g, node, AK.provider), offering=_text(g, node, AK.offering),
        region=_text(g, node, AK.region), observed_on=_text(g, node, AK.observedOn),
        chips=int(chips) if chips else None, usd_per_hour=_num(g, node, AK.usdPerHour),
        usd_purchase=_num(g, node, AK.usdPurchase),
        usd_per_m_input=_num(g, node, AK.usdPerMillionInputTokens),
        usd_per_m_output=_num(g, node, AK.usdPerMillionOutputTokens), confidence=_confidence(g, node),  # type: ignore[arg-type]
        source=_source(g, node), includes_host=None if (host := g.value(node, AK.includesHost))
        is None else bool(host.toPython()))


def system_quotes(name: str, kb: KnowledgeBase | None = None) -> list[PriceQuote]:
    """Every cloud or purchase quote that prices system ``name`` (its own, those of the systems
    it is built of, those of its chip), newest first.

    Raises
    ------
    UnknownNameError
        ``name`` is not a system.
    """
    kb = kb or default_kb()
    g = kb.asserted
    iri = kb.resolve("system", name)
    targets: list[Any] = []
    node: Any = iri
    while node is not None and node not in targets:
        targets.append(node)
        node = g.value(node, AK.subsystem)
    chip = g.value(iri, AK.chip)
    if chip is not None:
        targets.append(chip)
    out = []
    for target in targets:
        for q in g.subjects(AK.priceOf, target):
            quote = quote_of(g, q)
            if quote.kind != "api":
                if quote.chips is None and target == chip:
                    quote = quote.model_copy(update={"chips": 1})
                out.append(quote)
    return _newest_first(out)


def api_quotes(system: str, model: Any, kb: KnowledgeBase | None = None) -> list[PriceQuote]:
    """The per-token API prices of ``model`` (an IRI) served on the chip of system ``name``
    (``ak:servedOn``), newest first: what users pay for the model on that hardware.

    Raises
    ------
    UnknownNameError
        ``system`` is not a system.
    """
    kb = kb or default_kb()
    g = kb.asserted
    chip = g.value(kb.resolve("system", system), AK.chip)
    if chip is None or model is None:
        return []
    out = [quote_of(g, q) for q in g.subjects(AK.priceOf, URIRef(str(model)))
           if (q, AK.servedOn, chip) in g and (q, AK.priceKind, AK.PerTokenApi) in g]
    return _newest_first(out)


def _newest_first(quotes: list[PriceQuote]) -> list[PriceQuote]:
    """``quotes`` newest first; quotes of one day cheapest per chip first, then by every other
    field, so that the order never depends on the graph's (per-process) iteration order."""
    def tie(q: PriceQuote) -> tuple[Any, ...]:
        per_chip = (q.usd_per_hour or 0.0) / (q.chips or 1)
        return (q.provider, per_chip, q.usd_purchase or 0.0, q.usd_per_m_output or 0.0,
                q.usd_per_m_input or 0.0, q.chips or 0, q.offering, q.region, q.kind, q.source)
    return sorted(sorted(quotes, key=tie), key=lambda q: q.observed_on, reverse=True)


def facility(kb: KnowledgeBase | None = None) -> Facility | None:
    """The knowledge base's facility assumptions, or None: the first ``ak:FacilityAssumption``
    with all four figures, a user's own (outside the bundled ``kb:`` namespace) before the
    bundled defaults."""
    from rdflib.namespace import RDF

    kb = kb or default_kb()
    g = kb.asserted
    bundled = "https://w3id.org/accelkb/data/"
    for node in sorted(g.subjects(RDF.type, AK.FacilityAssumption),
                       key=lambda n: (str(n).startswith(bundled), str(n))):
        values = {k: _num(g, node, p) for k, p in (
            ("pue", AK.pue), ("usd_per_kwh", AK.usdPerKilowattHour),
            ("amortisation_years", AK.amortisationYears), ("utilisation", AK.utilisation))}
        if all(v is not None for v in values.values()):
            return Facility(**values,  # type: ignore[arg-type]
                            basis=_facility_basis(g, node, values))
    return None


def market(quotes: list[PriceQuote], kind: str = "cloud"
           ) -> tuple[PriceQuote, float, float, str] | None:
    """The market for ``kind`` prices: each provider's newest quote, the median rate per
    chip-hour as a quote for one chip (an 8-GPU instance's rate priced one GPU of a DGX H100 at
    the whole instance's $49/h while its range went down to $3.20), the lowest and highest rates
    per chip-hour, and a line saying so. None with fewer than two providers (a single quote has
    no market spread)."""
    newest: dict[str, PriceQuote] = {}
    for q in quotes:  # newest first
        if q.kind == kind and q.usd_per_hour is not None and q.provider not in newest:
            newest[q.provider] = q
    if len(newest) < 2:
        return None
    ranked = sorted(newest.values(), key=lambda q: (q.usd_per_hour or 0) / (q.chips or 1))
    rates = [(q.usd_per_hour or 0) / (q.chips or 1) for q in ranked]
    mid = ranked[len(ranked) // 2]
    if len(ranked) % 2:  # the median rate per chip-hour, so any chip count is priced alike
        mid = mid.model_copy(update={"chips": 1, "usd_per_hour": rates[len(rates) // 2]})
    else:  # the median of an even count is between the two middle quotes
        low_mid = ranked[len(ranked) // 2 - 1]
        order = ("Low", "Medium", "High")
        mid = PriceQuote(
            kind=mid.kind, provider=f"between {low_mid.provider} and {mid.provider}",
            offering="median rate per chip-hour", chips=1,
            usd_per_hour=(rates[len(rates) // 2 - 1] + rates[len(rates) // 2]) / 2.0,
            confidence=min(low_mid.confidence, mid.confidence, key=order.index),
            source=f"mean of {low_mid.source or low_mid.provider} and {mid.source or mid.provider}")
    line = (f"median of {len(ranked)} providers' newest {kind} rates per chip-hour: "
            f"${rates[0]:,.2f} ({ranked[0].provider}) to ${rates[-1]:,.2f} "
            f"({ranked[-1].provider})")
    return mid, rates[0], rates[-1], line


def _facility_basis(g: Graph, node: Any, values: dict[str, float | None]) -> str:
    """'facility assumptions NAME: PUE 1.58 (Medium, source), ...' from the node's provenance."""
    from rdflib.namespace import DCTERMS

    said = {AK.pue: f"PUE {values['pue']:g}",
            AK.usdPerKilowattHour: f"${values['usd_per_kwh']:g}/kWh",
            AK.amortisationYears: f"{values['amortisation_years']:g} years",
            AK.utilisation: f"utilisation {values['utilisation']:g}"}
    parts = []
    for prop, text in said.items():
        how = next((p for p in g.objects(node, AK.provenance)
                    if (p, AK.forProperty, prop) in g), None)
        if how is None:
            parts.append(f"{text} ({_confidence(g, node)})")
            continue
        src = g.value(how, DCTERMS.source)
        title = _text(g, src, DCTERMS.title) if src is not None else ""
        parts.append(f"{text} ({_confidence(g, how)}" + (f", {title}" if title else "") + ")")
    return f"facility assumptions {str(node).rsplit('/', 1)[-1]}: " + "; ".join(parts)


def choose(quotes: list[PriceQuote], prefer: str = "cloud") -> PriceQuote:
    """The newest quote of the preferred kind, else the newest of any kind.

    Raises
    ------
    InputError
        No quote at all.
    """
    if not quotes:
        raise InputError("expected a price for the system, got none in the knowledge base: give "
                         "--price USD_PER_CHIP_HOUR or a --data file with an ak:PriceQuote")
    same = [q for q in quotes if q.kind == prefer]
    return (same or quotes)[0]
