"""The network sections of a report, in Markdown: the layout's per-token traffic scheduled and
under dynamic routing, the three claimed advantages each on its own, and per-token latency at
the chip counts a strong-scaling question asks about."""

from __future__ import annotations

from accelkb.advise.advice import Advice


def _ms(s: float | None) -> str:
    return f"{s * 1e3:.4g} ms" if s is not None else ""


def _load(x: float | None) -> str:
    return f"{x:.2f}" if x is not None else "n/a (one flow)"


def network_sections(a: Advice) -> list[str]:
    """Markdown lines (empty when the advice has no scheduled per-token traffic)."""
    if not a.network:
        return []
    L = ["## What the collision-free network buys per token", "",
         "Each collective of one generated token as the estimate scheduled it, and the same "
         "collective on the same links under simulated dynamic routing: contention alone, then "
         "with the best of NCCL's transport protocols (its flags and credits).", "",
         "| transfer | topology | per token | steps scheduled (bound) | steps ECMP | "
         "steps adaptive | max/mean link load (scheduled / ECMP / adaptive) | "
         "per token scheduled | per token dynamic, contention | with NCCL transport |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for n in a.network:
        loads = " / ".join(_load(x) for x in (n.load_imbalance_scheduled, n.load_imbalance_ecmp,
                                              n.load_imbalance_adaptive))
        with_transport = (_ms(n.per_token * n.dynamic_transport_s)
                          if n.dynamic_transport_s is not None else "n/a")
        L.append(f"| {n.role} | {n.topology} | {n.per_token} | {n.scheduled_steps} "
                 f"({n.lower_bound_steps}) | {n.ecmp_steps:g} | {n.adaptive_steps:g} | {loads} | "
                 f"{_ms(n.per_token * n.scheduled_s)} | {_ms(n.per_token * n.dynamic_s)} | "
                 f"{with_transport} |")
    L.append("")
    if a.advantages:
        L += ["### The three claimed advantages, each on its own", "",
              "| advantage claimed | measured as | per token | share of the token | "
              "with a GPU stack's software per step |", "|---|---|---|---|---|"]
        for adv in a.advantages:
            upper = _ms(adv.upper_seconds_per_token) if adv.upper_seconds_per_token else ""
            L.append(f"| {adv.claim} | {adv.measure} | {_ms(adv.seconds_per_token)} | "
                     f"{100 * adv.share_of_token:.2g} % | {upper} |")
        L.append("")
        for adv in a.advantages:
            L += [f"- {adv.claim}:", *[f"  - {b}" for b in adv.basis]]
        L += ["", "Not modelled on either side: link framing (Groq's is not public in the "
              "sources found), software launch jitter, retries.", ""]
    if a.token_latency:
        counts = ", ".join(str(t.chips) for t in a.token_latency)
        L += [f"### Per-user speed and per-token latency at {counts} chips", "",
              "A compiled schedule has no source of variation, so its p99 is its p50; under "
              "dynamic routing the contention model has none at this traffic either, so the "
              "dynamic p99 is a lower bound (jitter and retries are not modelled).", "",
              "| chips | tokens/s per user | p50 scheduled | p99 scheduled | p50 dynamic | "
              "p99 dynamic | layout or why not |", "|---|---|---|---|---|---|---|"]
        for t in a.token_latency:
            speed = f"{t.tokens_per_s_per_user:,.1f}" if t.tokens_per_s_per_user else ""
            L.append(f"| {t.chips} | {speed} | {_ms(t.scheduled_p50_s)} | "
                     f"{_ms(t.scheduled_p99_s)} | {_ms(t.dynamic_p50_s)} | "
                     f"{_ms(t.dynamic_p99_s)} | {t.layout or t.note} |")
        L.append("")
    return L
