"""The result of ``accelkb advise``: data first, prose second (the report only renders this).

The JSON schema is stable: ``Advice.model_json_schema()``; ``schema_version`` changes when a
field's meaning changes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceRef(_Frozen):
    """A source a number or a statement rests on."""

    iri: str = Field(description="IRI of the ak:Source")
    title: str = Field(description="title of the source")
    publisher: str = Field(default="", description="publisher")
    url: str = Field(default="", description="URL if known")
    kind: str = Field(default="", description="source kind (vendor document, paper, ...)")


class Fact(_Frozen):
    """One sourced fact of the knowledge base used by the advice."""

    subject: str = Field(description="short name or IRI of the subject")
    property: str = Field(description="property local name")
    value: float | str = Field(description="value in SI base units")
    confidence: str = Field(default="", description="high, medium or low")
    source: str = Field(default="", description="IRI of the source")


class Range(_Frozen):
    """Where a measured value of a figure is expected (the validation residuals of the chip's
    vendor in that regime: :func:`accelkb.perf.uncertainty.interval`)."""

    low: float = Field(description="lower end, in the figure's unit")
    high: float = Field(description="upper end, in the figure's unit")
    basis: str = Field(description="which validation rows and rule give the range")


class Estimate(_Frozen):
    """The performance model's numbers for one configuration."""

    configuration: dict[str, Any] = Field(description="the layout estimated (perf config fields)")
    chips: int = Field(description="chips used")
    time_s: float = Field(description="training step time, or decode time per token, s")
    tokens_per_s: float = Field(description="aggregate tokens per second")
    tokens_per_s_per_user: float | None = Field(default=None, description="inference: per user")
    ttft_s: float | None = Field(default=None, description="inference: time to first token, s")
    mfu: float = Field(description="model FLOPs utilisation")
    memory_per_chip_bytes: dict[str, float] = Field(description="bytes per chip per memory tier")
    layer_working_set_bytes: float | None = Field(
        default=None, description="training on a chip that computes only from SRAM: bytes one "
        "layer's backward pass holds in SRAM at once (a necessary bound)")
    sram_bytes: float | None = Field(default=None, description="the SRAM that working set "
                                     "must fit, per chip")
    breakdown_s: dict[str, float] = Field(description="time split by cause, s")
    joules_per_token: float | None = Field(default=None, description="energy per token, J")
    end_to_end_tokens_per_s: float | None = Field(
        default=None, description="inference: generated tokens per second counting each "
        "request's prefill too, the rate cost and energy per token are priced on")
    end_to_end_joules_per_token: float | None = Field(
        default=None, description="inference: energy per generated token, prefill included, J")
    power_w: float | None = Field(default=None, description="average power, W")
    time_to_train_s: float | None = Field(default=None, description="training: time for the "
                                          "workload's tokens, s")
    bound: str | None = Field(default=None, description="inference: what limits decode")
    ranges: dict[str, Range] = Field(default_factory=dict, description="the baseline's "
                                     "headline figures (time_s, tokens_per_s, "
                                     "tokens_per_s_per_user, ttft_s, time_to_train_s): where the "
                                     "measured value is expected")


class Finding(_Frozen):
    """A bottleneck with its evidence and the derivation that found it."""

    bottleneck: str = Field(description="bottleneck short name")
    label: str = Field(description="bottleneck label")
    evidence: str = Field(description="the numbers that show it, in words")
    share_of_time: float | None = Field(default=None, description="fraction of the step or "
                                        "token time attributable to it")
    derivation: list[str] = Field(default_factory=list, description="rule -> facts -> sources "
                                  "chain, one line per step")
    rule: str = Field(default="", description="IRI of the rule (or check) that derived it")


class Recommendation(_Frozen):
    """A candidate optimization, checked by the performance model (and the solver)."""

    optimization: str = Field(description="optimization short name")
    label: str = Field(description="optimization label")
    mitigates: list[str] = Field(description="bottlenecks it addresses")
    status: Literal["recommended", "no-gain", "blocked", "not-modelled", "already-applied"] = Field(
        description="recommended: checked gain; no-gain: checked, not faster; blocked: a "
        "constraint forbids it; not-modelled: the performance model cannot quantify it; "
        "already-applied: part of the baseline")
    speedup: float | None = Field(default=None, description="before time / after time")
    before: Estimate | None = Field(default=None, description="baseline estimate")
    after: Estimate | None = Field(default=None, description="estimate with the optimization")
    configuration_change: dict[str, Any] = Field(default_factory=dict, description="what changes")
    blocked_by: str = Field(default="", description="why it cannot apply (constraint, numbers)")
    costs: list[str] = Field(default_factory=list, description="costs and risks")
    requires: list[str] = Field(default_factory=list, description="preconditions")
    published_effect: str = Field(default="", description="a published figure, with its source")
    derivation: list[str] = Field(default_factory=list, description="rule -> facts -> sources")
    solver_check: str = Field(default="", description="what the configuration solver said")
    vendor_form: str = Field(default="", description="what the change is called on this "
                             "vendor's chips, from the knowledge base (e.g. zero=3 on an IPU: "
                             "Replicated Tensor Sharding)")
    command: str = Field(default="", description="the `accelkb estimate` command that gives "
                         "the 'after' figure (or the baseline's), when the layout changes")
    includes: list[str] = Field(default_factory=list, description="combined plan: the rows "
                                "it applies, each with its gain on top of the rows before it")
    excludes: list[str] = Field(default_factory=list, description="combined plan: the rows it "
                                "leaves out, and why")


class WhatIf(_Frozen):
    """A hardware or architecture lever, quantified by re-running the model with a changed fact."""

    lever: str = Field(description="what changes, in words")
    change: str = Field(description="the changed fact (e.g. 'IPU-Link bandwidth x2')")
    time_s: float | None = Field(description="step or token time with the change, s (None: "
                                 "not estimated, the note says why)")
    speedup: float | None = Field(description="baseline time / time with the change (None: "
                                  "not estimated)")
    note: str = Field(default="", description="caveats")


#: How a per-watt basis that puts every system on its chips' TDP begins
#: (:func:`accelkb.advise.parts.one_power_boundary`; the cost section's note reads it).
AT_TDP = "tokens/s per W at each chip's TDP"


class Comparison(_Frozen):
    """The same workload on another system."""

    system: str = Field(description="system short name")
    chips: int = Field(description="chips used")
    estimate: Estimate | None = Field(default=None, description="its best default estimate")
    tokens_per_s_per_watt: float | None = Field(default=None, description="performance per watt")
    error: str = Field(default="", description="why it could not be estimated")
    scaled: str = Field(default="", description="where the system was run at more chips than it "
                        "has (--compare SYSTEM:CHIPS): the larger system of the knowledge base "
                        "that joined them; '' at its own size")
    system_chips: int | None = Field(default=None, description="the chips of the system it ran "
                                     "on (as asked, or the system's own); the layout may use "
                                     "fewer (one replica), given in chips")
    own_chips: int | None = Field(default=None, description="the chips of the system as the "
                                  "knowledge base describes it (a DGX H100's 8): more chips "
                                  "than this are joined by a network its price leaves out")
    fewest_chips: int | None = Field(default=None, description="where no layout fits: the "
                                     "fewest chips of the system on which one does")
    fewest_chips_time_s: float | None = Field(default=None, description="the step or token time "
                                              "on those chips, s")


class ScalingPoint(_Frozen):
    """One point of the scaling curve over chip counts."""

    chips: int = Field(description="chips")
    time_s: float | None = Field(description="step or token time, s (None: does not fit)")
    tokens_per_s: float | None = Field(description="aggregate tokens per second")
    tokens_per_s_per_user: float | None = Field(default=None, description="inference: per user")
    note: str = Field(default="", description="why a point is missing")


class SizePoint(_Frozen):
    """Training one model size on the system: what it takes and what limits it
    (:mod:`accelkb.advise.models.sizes`)."""

    model: str = Field(description="model short name")
    parameters: float = Field(description="parameters")
    fits: bool = Field(description="whether any layout fits")
    note: str = Field(default="", description="why not, when it does not fit")
    layout: str = Field(default="", description="the best layout found")
    step_s: float | None = Field(default=None, description="step time, s")
    tokens_per_s: float | None = Field(default=None, description="trained tokens per second")
    mfu: float | None = Field(default=None, description="model FLOPs utilisation")
    tokens_per_joule: float | None = Field(default=None, description="performance per watt")
    largest_share: str = Field(default="", description="the largest part of the step")
    largest_share_fraction: float | None = Field(default=None, description="its share")
    best_lever: str = Field(default="", description="the hardware what-if that buys most")
    best_lever_change: str = Field(default="", description="the fact it changes")
    best_lever_speedup: float | None = Field(default=None, description="its speed-up")
    next_lever: str = Field(default="", description="the second lever and its speed-up")
    software_lever: str = Field(default="", description="the catalogued software change that "
                                "buys most at this size")
    software_lever_change: str = Field(default="", description="the layout fields it sets")
    software_lever_speedup: float | None = Field(default=None, description="its speed-up")


class OtherWorkload(_Frozen):
    """Another training workload (e.g. a vision model) on one of the report's systems, at its
    best layout, with the time and cost of its run (:mod:`accelkb.advise.models.workloads`)."""

    workload: str = Field(description="workload short name")
    model: str = Field(description="model short name")
    system: str = Field(description="system short name")
    chips: int = Field(description="chips used")
    fits: bool = Field(description="whether any layout fits")
    note: str = Field(default="", description="why not, when it does not fit")
    layout: str = Field(default="", description="the best layout found")
    precision: str = Field(default="", description="arithmetic precision")
    step_s: float | None = Field(default=None, description="step time, s")
    samples_per_s: float | None = Field(default=None, description="trained samples (images or "
                                        "sequences) per second")
    samples_to_train: float | None = Field(default=None, description="samples in the run")
    time_to_train_s: float | None = Field(default=None, description="the run, s")
    samples_per_joule: float | None = Field(default=None, description="performance per watt")
    usd_to_train: float | None = Field(default=None, description="the run, dollars")
    usd_to_train_low: float | None = Field(default=None, description="low end, dollars")
    usd_to_train_high: float | None = Field(default=None, description="high end, dollars")
    working_set_bytes: float | None = Field(default=None, description="bytes held at once per "
                                            "chip (layer or replica working set)")
    sram_bytes: float | None = Field(default=None, description="the SRAM it must fit, on a chip "
                                     "that computes only from SRAM")
    measured: str = Field(default="", description="published times to train this workload on "
                          "this system and chip count, each with its round and batch")
    measured_s: float | None = Field(default=None, description="the published time to train at "
                                     "the workload's own batch (the same run as modelled), s")
    levers: list[str] = Field(default_factory=list, description="on the report's own system: "
                              "the levers that buy most, best first, each with its speed-up")


class ScheduleSummary(_Frozen):
    """A synthesized collision-free schedule against dynamic routing."""

    topology: str = Field(description="topology spec")
    collective: str = Field(description="collective")
    status: str = Field(description="solver outcome")
    makespan_steps: int | None = Field(description="schedule makespan in steps")
    lower_bound_steps: int | None = Field(description="lower bound in steps")
    dynamic_makespan_steps: float | None = Field(default=None, description="dynamic-routing "
                                                 "makespan in the simulator, steps")
    seconds: float | None = Field(default=None, description="schedule time in seconds")
    load_imbalance: float | None = Field(default=None, description="max / mean link load of "
                                         "the schedule")
    dynamic_load_imbalance: float | None = Field(default=None, description="max / mean link "
                                                 "load under adaptive routing")
    heatmap_svg: str = Field(default="", description="link x step heat map (SVG)")


class TrafficRow(_Frozen):
    """One kind of transfer of a generated token, scheduled and under dynamic routing."""

    role: str = Field(description="tensor-parallel all-reduce or pipeline hop")
    topology: str = Field(description="generator topology it runs on")
    per_token: int = Field(description="how many of them one generated token needs")
    scheduled_steps: int = Field(description="steps of the collision-free schedule")
    lower_bound_steps: int | None = Field(default=None, description="the solver's lower bound")
    ecmp_steps: float = Field(description="steps under ECMP routing in the simulator")
    adaptive_steps: float = Field(description="steps under minimal-adaptive routing")
    scheduled_s: float = Field(description="time of one, scheduled, s")
    dynamic_s: float = Field(description="time of one under the better dynamic policy, s "
                             "(contention only)")
    chunk_bytes: float = Field(default=0.0, description="bytes one chunk carries")
    link_bytes_per_s: float = Field(default=0.0, description="unit-link bandwidth, B/s")
    hop_latency_s: float = Field(default=0.0, description="per-hop latency of the level, s")
    hops_per_transfer: float = Field(default=1.0, description="minimal-path hops of a transfer "
                                     "(mean over the collective's chip pairs)")
    load_imbalance_scheduled: float | None = Field(default=None, description="max / mean link "
                                                   "load of the schedule (collectives only)")
    load_imbalance_ecmp: float | None = Field(default=None, description="max / mean link load, "
                                              "ECMP")
    load_imbalance_adaptive: float | None = Field(default=None, description="max / mean link "
                                                  "load, minimal-adaptive")
    dynamic_transport_s: float | None = Field(default=None, description="time of one under "
                                              "dynamic routing with the best NCCL transport "
                                              "protocol (flags, credits), s")


class Advantage(_Frozen):
    """One advantage claimed for a software-scheduled network, measured per generated token
    (:mod:`accelkb.advise.network.advantages`)."""

    claim: str = Field(description="the advantage as claimed")
    measure: str = Field(description="what was measured, scheduled against dynamic, in words")
    seconds_per_token: float = Field(description="time per token it saves, s (hardware model)")
    share_of_token: float = Field(description="that time over the token time")
    upper_seconds_per_token: float | None = Field(default=None, description="with a GPU "
                                                  "collective's software cost per step added "
                                                  "to the dynamic side, s")
    basis: list[str] = Field(default_factory=list, description="figures and sources used")


class TokenLatency(_Frozen):
    """Per-user speed and per-token latency at one chip count, scheduled and dynamic."""

    chips: int = Field(description="chips")
    note: str = Field(default="", description="why there is no figure (does not fit)")
    tokens_per_s_per_user: float | None = Field(default=None, description="scheduled")
    scheduled_p50_s: float | None = Field(default=None, description="per-token latency, median")
    scheduled_p99_s: float | None = Field(default=None, description="per-token latency, p99")
    dynamic_p50_s: float | None = Field(default=None, description="the same layout under "
                                        "dynamic routing with NCCL's transport, median")
    dynamic_p99_s: float | None = Field(default=None, description="the same, p99")
    layout: str = Field(default="", description="the layout at this chip count")


class CostRow(_Frozen):
    """What the estimated work costs on one system, in dollars and kWh, with its basis."""

    system: str = Field(description="system short name")
    chips: int = Field(description="chips used")
    usd_per_hour: float | None = Field(default=None, description="the chips used, one hour")
    usd_per_million_tokens: float | None = Field(default=None, description="per million "
                                                 "trained or generated tokens")
    usd_low: float | None = Field(default=None, description="low end of $ per million tokens")
    usd_high: float | None = Field(default=None, description="high end of $ per million tokens")
    kwh_per_million_tokens: float | None = Field(default=None, description="facility energy")
    tokens_per_joule: float | None = Field(default=None, description="performance per watt")
    usd_to_train: float | None = Field(default=None, description="training: the whole run")
    usd_to_train_low: float | None = Field(default=None, description="training: low end of "
                                           "the run's dollars")
    usd_to_train_high: float | None = Field(default=None, description="training: high end of "
                                            "the run's dollars")
    includes_host: bool | None = Field(default=None, description="a purchase price: whether "
                                       "it covers the host that runs the accelerators")
    price_kind: str = Field(default="", description="cloud, committed, purchase, override or "
                            "api (an observed market price): what the figures rest on")
    price: str = Field(default="", description="the price used, in a few words (provider, "
                       "offering, date, confidence)")
    facility: str = Field(default="", description="the facility assumptions used, if any")
    market: str = Field(default="", description="inference: what an API provider charges for "
                        "the model on this system's chip (an observed market price), if known")
    basis: list[str] = Field(default_factory=list, description="the price and assumptions used")
    system_chips: int | None = Field(default=None, description="the chips of the system it "
                                     "ran on, where the layout uses fewer (one replica)")
    other_kind: str = Field(default="", description="this system only: its cost at the other "
                            "kind of price it has (the table prices every row by the kind most "
                            "systems compared have, so this system's own figure moves with the "
                            "list)")
    note: str = Field(default="", description="why there is no cost (no price)")


class Advice(_Frozen):
    """An explained, quantitatively checked answer about one workload on one system."""

    schema_version: str = Field(default=SCHEMA_VERSION, description="JSON schema version")
    question: str = Field(description="the question answered")
    system: str = Field(description="system short name")
    workload: str = Field(description="workload short name")
    phase: str = Field(description="training or inference")
    goal: str = Field(description="what 'better' means: time, throughput, latency, energy, cost")
    chips: int = Field(description="chips used")
    answer: str = Field(description="three to six sentences with the numbers")
    baseline: Estimate = Field(description="the starting configuration's estimate")
    baseline_note: str = Field(description="how the baseline was chosen")
    baseline_command: str = Field(default="", description="the `accelkb estimate` command that "
                                  "gives the baseline's figures")
    plan: Recommendation | None = Field(default=None, description="the compatible "
                                        "recommendations applied together as one layout")
    findings: list[Finding] = Field(description="bottlenecks with evidence")
    recommendations: list[Recommendation] = Field(description="ranked by checked gain")
    what_ifs: list[WhatIf] = Field(description="hardware and architecture levers")
    comparisons: list[Comparison] = Field(description="the same workload on other systems")
    per_watt_basis: str = Field(default="", description="where the systems' full-power figures "
                                "differ in scope (a whole server against a chip's TDP): the "
                                "boundary every tokens/s per W of the comparison is put on")
    baseline_tokens_per_s_per_watt: float | None = Field(
        default=None, description="this system's tokens/s per W on the comparison's boundary")
    scaling: list[ScalingPoint] = Field(description="scaling over chip counts")
    schedules: list[ScheduleSummary] = Field(default_factory=list, description="network schedules")
    advantages: list[Advantage] = Field(default_factory=list, description="inference on a "
                                        "scheduled network: the three claimed advantages, "
                                        "each quantified per token")
    token_latency: list[TokenLatency] = Field(default_factory=list, description="inference on "
                                              "a scheduled network: per-token latency at the "
                                              "chip counts asked about")
    network: list[TrafficRow] = Field(default_factory=list, description="inference: the "
                                      "layout's per-token traffic, scheduled and under dynamic "
                                      "routing (accelkb.advise.network.traffic)")
    facts: list[Fact] = Field(description="sourced facts the advice rests on")
    sources: list[SourceRef] = Field(description="every source cited")
    assumptions: list[str] = Field(description="assumptions and their confidence")
    measured: list[str] = Field(default_factory=list, description="published measurements of "
                                "this workload on this system, for comparison")
    sizes: list[SizePoint] = Field(default_factory=list, description="training: the same "
                                   "system over model sizes (what limits it as models grow)")
    other_workloads: list[OtherWorkload] = Field(
        default_factory=list, description="training: other workloads (e.g. vision models) on "
        "this system and the compared systems")
    costs: list[CostRow] = Field(default_factory=list, description="cost and energy of the "
                                 "baseline and of each compared system")
    seconds: float = Field(description="time taken to produce the advice, s")
