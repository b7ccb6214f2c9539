"""The three advantages claimed for a software-scheduled network, each quantified on its own.

Groq names three (SC'23 talk "Strong Scaling of State-of-the-Art LLM Inference with Groq
Software-Scheduled Deterministic Networks"): (1) global load balancing by compiler-scheduled
traffic, (2) bandwidth efficiency from low control overhead, (3) low chip-to-chip latency from a
router-less, handshake-less direct topology. Against the same chips and links under dynamic
routing with an NCCL-style transport, one generated token's traffic (:mod:`.traffic`) costs

    scheduled:  sum_i n_i S_i (c_i / B + L)
    dynamic:    sum_i n_i D_i (c_i / (B s_p) + L (1 + k_p))

for ``n_i`` collectives of chunk size ``c_i`` per token, ``S_i`` scheduled and ``D_i`` simulated
steps, link bandwidth ``B``, hop latency ``L``, and the transport protocol ``p`` with payload
share ``s_p`` and ``k_p`` control messages per transfer (``perf/data/transports.json``: NCCL's
LL, LL128 and Simple, as its maintainers describe them; the best of them for each message). The
difference splits exactly into

    (1) contention      n_i (D_i - S_i)(c_i / B + L)
    (2) payload share   n_i D_i c_i / B x (1 / s_p - 1)
    (3) control latency n_i D_i L k_p

with the links' max/mean load (scheduled, ECMP, adaptive) beside (1) and the hops and control
messages per transfer beside (3). What is not modelled is said: link framing on both sides
(Groq's is not public), software launch jitter, retries.

Examples
--------
>>> [p.name for p in protocols()]
['LL', 'LL128', 'Simple']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from accelkb.advise.advice import (
    Advantage,
    ScalingPoint,
    ScheduleSummary,
    TokenLatency,
    TrafficRow,
)
from accelkb.errors import InputError


class Protocol(BaseModel):
    """A transport protocol of a dynamically routed fabric, with its source."""

    model_config = ConfigDict(frozen=True)
    name: str
    payload_share: float = Field(gt=0, le=1)
    control_messages: int = Field(ge=0)
    meaning: str
    source: str
    quote: str
    confidence: str


@lru_cache(maxsize=1)
def protocols() -> tuple[Protocol, ...]:
    """The transport protocols of ``perf/data/transports.json``."""
    text = (resources.files("accelkb.perf") / "data" / "transports.json").read_text("utf-8")
    return tuple(Protocol.model_validate(p) for p in json.loads(text)["protocols"])


def _dynamic_one(r: TrafficRow, p: Protocol) -> float:
    steps = min(r.ecmp_steps, r.adaptive_steps)
    return steps * (r.chunk_bytes / (r.link_bytes_per_s * p.payload_share)
                    + r.hop_latency_s * (1 + p.control_messages))


def best_protocol(r: TrafficRow) -> Protocol:
    """The protocol that moves ``r`` fastest under dynamic routing (what NCCL's tuner aims at:
    LL for small messages, Simple for large ones)."""
    return min(protocols(), key=lambda p: _dynamic_one(r, p))


def dynamic_seconds(r: TrafficRow) -> float:
    """One such collective under dynamic routing with the best transport protocol, s."""
    return _dynamic_one(r, best_protocol(r))


def nccl_software_s(protocol: str, steps: float) -> float:
    """What NCCL's own cost model charges one collective beyond the wire with ``protocol``
    over ``steps`` NVLink ring steps: its base latency plus a latency per step
    (``perf/data/nccl_tuning.json``), seconds.

    >>> round(nccl_software_s("LL", 2) * 1e6, 2)
    7.8
    """
    from accelkb.perf.execution.nccl import tuning

    t = tuning()
    return 1e-6 * (t["base_latency_us"]["ring"][protocol]
                   + steps * t["step_latency_us"]["nvlink"]["ring"][protocol])


def advantages(rows: list[TrafficRow], token_s: float,
               software_step_s: float | None = None, gpu_stack: bool = False
               ) -> list[Advantage]:
    """The three advantages on this token's traffic (empty without scheduled traffic).

    The latency advantage's upper figure is what a handshake-less network saves when the
    dynamic side is a GPU stack: with ``gpu_stack``, NCCL's own latencies, the smallest of its
    protocols' (:func:`nccl_software_s`: LL's on every size NCCL's table covers), so the figure
    is not inflated; or a flat ``software_step_s`` per step."""
    rows = [r for r in rows if r.link_bytes_per_s and r.chunk_bytes]
    if not rows:
        return []
    contention = payload = control = software = 0.0
    loads, shares, hops = [], [], []
    for r in rows:
        p = best_protocol(r)
        d = min(r.ecmp_steps, r.adaptive_steps)
        ser, lat = r.chunk_bytes / r.link_bytes_per_s, r.hop_latency_s
        contention += r.per_token * (d - r.scheduled_steps) * (ser + lat)
        payload += r.per_token * d * ser * (1 / p.payload_share - 1)
        control += r.per_token * d * lat * p.control_messages
        if r.load_imbalance_scheduled is not None:
            loads.append(f"{r.role}: max/mean link load {r.load_imbalance_scheduled:.2f} "
                         f"scheduled, {r.load_imbalance_ecmp or 0:.2f} ECMP, "
                         f"{r.load_imbalance_adaptive or 0:.2f} adaptive; "
                         f"{r.scheduled_steps:g} against {d:g} steps")
        else:
            loads.append(f"{r.role}: one point-to-point transfer, no load to balance; "
                         f"{r.scheduled_steps:g} against {d:g} steps")
        software += r.per_token * (min(nccl_software_s(q, d) for q in ("LL", "LL128", "Simple"))
                                   if gpu_stack else d * (software_step_s or 0.0))
        shares.append(f"{r.role}: {r.chunk_bytes:,.0f} B chunks; the best dynamic protocol is "
                      f"{p.name} (payload share {p.payload_share:.4g}, {p.control_messages} "
                      f"control message(s) per transfer: {p.meaning}; {p.source}, "
                      f"{p.confidence}); the schedule moves data with no flag or credit")
        hops.append(f"{r.role}: {r.hops_per_transfer:g} hop(s) per transfer both ways on "
                    f"{r.topology} ({r.hop_latency_s * 1e6:.3g} us each); control messages "
                    f"per transfer: 0 scheduled, {p.control_messages} dynamic ({p.name})")
    def frac(seconds: float) -> float:
        return seconds / token_s if token_s else 0.0

    return [
        Advantage(claim="global load balancing (compiler-scheduled traffic)",
                  measure="contention: steps under ECMP / adaptive routing against the "
                  "schedule's, on the same links", seconds_per_token=contention,
                  share_of_token=frac(contention), basis=loads),
        Advantage(claim="bandwidth efficiency (low control overhead)",
                  measure="payload share: the transport's flags in the data, against a "
                  "schedule that sends none", seconds_per_token=payload,
                  share_of_token=frac(payload), basis=shares),
        Advantage(claim="low chip-to-chip latency (router-less, handshake-less)",
                  measure="hops and control messages per transfer", seconds_per_token=control,
                  share_of_token=frac(control),
                  upper_seconds_per_token=control + software
                  if software_step_s or gpu_stack else None,
                  basis=hops + (["upper figure: NCCL's own latencies on the dynamic side, a "
                                 "base latency per collective and a latency per NVLink ring "
                                 "step, the smallest of its protocols' (NVIDIA/nccl "
                                 "tuning.cc: perf/data/nccl_tuning.json), which a compiled "
                                 "schedule does not pay"] if gpu_stack else
                                [f"upper figure: {software_step_s * 1e6:.3g} us of software "
                                 "launch and synchronisation per collective step on the "
                                 "dynamic side, which a compiled schedule does not pay"]
                                if software_step_s else []))]


def sentence(adv: list[Advantage], token_s: float, rows: Sequence[TrafficRow] = (),
             schedules: Sequence[ScheduleSummary] = ()) -> str:
    """What the network buys in one sentence: the layout's per-token traffic, the three
    advantages on it, and where traffic does contend (the rack-wide collective of
    ``schedules``). Empty without advantages."""
    if not adv:
        return ""
    parts = "; ".join(f"({i}) {a.claim.split(' (')[0]}: {a.seconds_per_token * 1e3:.2g} ms "
                      f"({_pct(a.share_of_token)})" for i, a in enumerate(adv, 1))
    total = sum(a.seconds_per_token for a in adv)
    upper = adv[-1].upper_seconds_per_token
    soft = (f"; with a GPU stack's software latencies on the dynamic side (NCCL's own, per "
            f"collective and per step), the "
            f"latency advantage grows to {upper * 1e3:.2g} ms ({_pct(upper / token_s)} of the "
            "token)" if upper is not None and token_s else "")
    sched = sum(r.per_token * r.scheduled_s for r in rows)
    what = ", ".join(f"{r.per_token} {r.role}s on {r.topology}" for r in rows)
    head = (f"The collision-free network: this layout's per-token traffic ({what}) takes "
            f"{sched * 1e3:.3g} ms of the {token_s * 1e3:.3g} ms token; against the same links "
            if rows else "Against the same links ")
    wide = [s for s in schedules if s.makespan_steps and s.dynamic_makespan_steps
            and s.dynamic_makespan_steps > s.makespan_steps]
    where = ""
    if wide:
        w = wide[0]
        loads = (f", max/mean link load {w.load_imbalance:.2f} against "
                 f"{w.dynamic_load_imbalance:.2f}" if w.load_imbalance and
                 w.dynamic_load_imbalance else "")
        where = (f"; it pays where traffic contends: an {w.collective} across {w.topology} takes "
                 f"{w.makespan_steps} steps scheduled against {w.dynamic_makespan_steps:g} under "
                 f"adaptive routing{loads}")
    return (f"{head}under dynamic routing with NCCL's transport protocols, the three claimed "
            f"advantages buy {parts}, {total * 1e3:.2g} ms in all{soft}{where}.")


def _pct(x: float) -> str:
    """'0.24 %', '100 %'."""
    return f"{100 * x:.2g} %" if 100 * x < 10 else f"{100 * x:.0f} %"


def token_latency(chips: int, token_s: float | None, per_user: float | None,
                  rows: list[TrafficRow], layout: str = "", note: str = "") -> TokenLatency:
    """Per-token latency at one chip count. A compiled schedule has no source of variation in
    the model, so its p99 equals its p50 (Groq's measured determinism: "Answer Fast", arXiv
    2206.11062, a deterministic tail latency for batch-1 BERT-base). Under dynamic routing the
    contention model has none either at this traffic (its collectives never contend); software
    jitter and retries, which make a dynamic fabric's tail, are not modelled, so its p99 is a
    lower bound and said as such."""
    if token_s is None:
        return TokenLatency(chips=chips, note=note)
    extra = sum(r.per_token * ((r.dynamic_transport_s or r.dynamic_s) - r.scheduled_s)
                for r in rows)
    return TokenLatency(chips=chips, tokens_per_s_per_user=per_user, scheduled_p50_s=token_s,
                        scheduled_p99_s=token_s, dynamic_p50_s=token_s + extra,
                        dynamic_p99_s=token_s + extra, layout=layout, note=note)


def asked_counts(rack: int, chips: int) -> list[int]:
    """The chip counts a strong-scaling question asks about: one rack, then doubling up to the
    system (72, 144, 288 and 576 on groq-576).

    >>> asked_counts(72, 576)
    [72, 144, 288, 576]
    """
    out, n = [], rack
    while n < chips:
        out.append(n)
        n *= 2
    return [*out, chips]


def latencies(counts: list[int], scaling: list[ScalingPoint], chips: int, token_s: float,
              per_user: float | None, rows: list[TrafficRow], layout: str,
              at: Callable[[int], tuple[float, float | None, list[TrafficRow], str]]
              ) -> list[TokenLatency]:
    """:func:`token_latency` at each of ``counts``: the baseline's own figures at ``chips``,
    ``at(n)`` (token time, per-user speed, traffic rows, layout) elsewhere; a count that does
    not fit keeps the scaling curve's reason."""
    points = {p.chips: p for p in scaling}
    out = []
    for n in counts:
        if n == chips:
            out.append(token_latency(n, token_s, per_user, rows, layout))
            continue
        p = points.get(n)
        if p is not None and p.time_s is None:
            out.append(token_latency(n, None, None, [], note=p.note or "does not fit"))
            continue
        try:
            t, u, r, lay = at(n)
        except InputError as exc:
            out.append(token_latency(n, None, None, [], note=str(exc).splitlines()[0][:160]))
            continue
        out.append(token_latency(n, t, u, r, lay))
    return out
