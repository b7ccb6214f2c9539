"""The systems a report compares with: which ones, at how many chips, and the workload on each.

``--compare dgx-h100`` runs the workload on a DGX H100 as the knowledge base describes it (8
GPUs: system for system, as MLPerf compares an IPU-POD16 with a DGX A100). ``--compare
dgx-h100:16`` runs it on 16 GPUs, for a comparison at this system's chip count: the knowledge
base's larger system built of DGX H100s (its SuperPOD) joins the nodes, exactly as
``accelkb estimate --system dgx-h100 --chips 16`` does. A compared system that is priced is
priced by its own quotes per chip, so 16 GPUs cost two DGX H100s.

Examples
--------
>>> parse_target("dgx-h100")
Target(name='dgx-h100', chips=None)
>>> parse_target("dgx-h100:16")
Target(name='dgx-h100', chips=16)
>>> parse_target("dgx-h100:0")
Traceback (most recent call last):
...
accelkb.errors.InputError: --compare dgx-h100:0: expected SYSTEM or SYSTEM:CHIPS with CHIPS a \
whole number of at least 1, got '0'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from accelkb.advise.advice import Comparison
from accelkb.advise.baseline import INFER_PRECISIONS
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.perf import ModelSpec, SystemSpec


class Target(NamedTuple):
    """A system to compare with, and the chips to run it at (None: the system's own)."""

    name: str
    chips: int | None


class Compared(NamedTuple):
    """A resolved target: the knowledge base's short name, the spec the workload runs on
    (``spec.name`` is another system where the target was scaled out) and the chips of the
    system itself."""

    name: str
    spec: SystemSpec
    own_chips: int


def parse_target(text: str) -> Target:
    """``SYSTEM`` or ``SYSTEM:CHIPS`` (see the module's examples)."""
    name, sep, count = text.strip().partition(":")
    if not name:
        raise InputError(f"--compare {text}: expected SYSTEM or SYSTEM:CHIPS, got no system name")
    if not sep:
        return Target(name, None)
    if not count.isdigit() or int(count) < 1:
        raise InputError(f"--compare {text}: expected SYSTEM or SYSTEM:CHIPS with CHIPS a whole "
                         f"number of at least 1, got '{count}'")
    return Target(name, int(count))


def resolve(kb: KnowledgeBase, texts: list[str] | tuple[str, ...]) -> list[Compared]:
    """Each ``--compare`` entry as a spec, failing before any estimate runs on a wrong name or a
    chip count no system of the knowledge base reaches (both bad input)."""
    from accelkb.perf.from_kb import system_spec

    out: list[Compared] = []
    for text in texts:
        target = parse_target(text)
        iri = kb.resolve("system", target.name)
        name = str(kb.asserted.value(iri, AK.shortName) or target.name)
        own = system_spec(name, kb=kb)
        group = own.levels[0].group_chips if own.levels else 1
        if target.chips is not None and target.chips > own.chips and target.chips % group:
            raise InputError(f"--compare {text}: expected a whole number of {name}'s "
                             f"{group}-chip building blocks above its own {own.chips} chips "
                             f"(e.g. {target.chips - target.chips % group or group} or "
                             f"{target.chips + group - target.chips % group}), got "
                             f"{target.chips}")
        try:
            spec = system_spec(name, chips=target.chips, kb=kb)
        except InputError as exc:
            raise InputError(f"--compare {text}: {exc}") from exc
        if any(o.name == name and o.spec.chips == spec.chips for o in out):
            continue  # the same system at the same size, named twice
        out.append(Compared(name, spec, own.chips))
    return out


def where(c: Compared, used: int | None = None) -> str:
    """A report's note on where the workload ran: on a larger system that scales this one out,
    and on part of the chips (one replica, ``used`` of them); '' for all of a system's own.

    >>> from accelkb.perf.from_kb import system_spec
    >>> where(Compared("dgx-h100", system_spec("dgx-h100", chips=64), 8), used=4)
    '64 chips of dgx-h100-superpod (dgx-h100 scaled out; priced per chip as dgx-h100); one \
replica on 4 of them, 16 such fit'
    """
    notes = []
    if c.spec.name != c.name:
        notes.append(f"{c.spec.chips} chips of {c.spec.name} ({c.name} scaled out; priced per "
                     f"chip as {c.name})")
    elif c.spec.chips != c.own_chips:
        notes.append(f"{c.spec.chips} of a {c.name}'s {c.own_chips} chips")
    if used is not None and used < c.spec.chips:
        notes.append(f"one replica on {used} of them, {c.spec.chips // used} such fit")
    return "; ".join(notes)


def comparison(model: ModelSpec, other: Compared, phase: str, gbs: int, prompt: int, output: int,
               precision: str | None, goal: str, slo: float | None = None,
               refine: Callable[[SystemSpec, tuple[Any, Any, str]], tuple[Any, Any, str]]
               | None = None, tokens: float | None = None,
               kb: KnowledgeBase | None = None) -> Comparison:
    """The workload on another system, by the same search as this system's baseline
    (``refine``: the step that follows the grid, e.g. the configuration solver's layout;
    ``tokens``: training, the workload's tokens, for the time and cost of the whole run;
    ``kb``: the knowledge base the systems come from). Where no layout fits, the row says the
    fewest chips of that system that do (:func:`first_fit`)."""
    from accelkb.advise import parts

    spec = other.spec
    try:
        found = parts.baseline(model, spec, phase, gbs, prompt, output, precision, goal, slo)
        cfg, est, _ = refine(spec, found) if refine is not None else found
        if phase == "training" and tokens:
            est = parts.estimate(model, spec, cfg, tokens)
    except InputError as exc:
        error = str(exc).splitlines()[0]
        fit = first_fit(model, other, phase, gbs, prompt, output, precision, goal, slo, kb,
                        refine)
        row = Comparison(system=other.name, chips=spec.chips, error=error, scaled=where(other),
                         system_chips=spec.chips, own_chips=other.own_chips)
        if fit is None:
            return row
        n, time_s = fit
        return row.model_copy(update={
            "error": f"{error}; the fewest {other.name} chips that fit it: {n}, at "
                     f"{_time(time_s, phase)} {_UNIT[phase == 'training']} (--compare "
                     f"{other.name}:{n})", "fewest_chips": n, "fewest_chips_time_s": time_s})
    e = parts.as_estimate(est).model_copy(update={"ranges": parts.ranges(est, spec.chip.vendor)})
    return Comparison(system=other.name, chips=e.chips, estimate=e,
                      tokens_per_s_per_watt=parts.per_watt(e), scaled=where(other, e.chips),
                      system_chips=spec.chips, own_chips=other.own_chips)


_UNIT = {True: "per step", False: "per token"}


def _time(seconds: float, phase: str) -> str:
    return f"{seconds:.3g} s" if phase == "training" else f"{seconds * 1e3:.3g} ms"



#: How many larger chip counts :func:`first_fit` tries before it gives up.
FIT_TRIES = 6


def least_chips(model: ModelSpec, spec: SystemSpec, phase: str) -> int:
    """Fewest chips whose memory holds the model's state at all, sharded over every chip
    (ZeRO-3): training, 16-bit weights, FP32 gradients and Adam state
    (:func:`accelkb.perf.memory.model_state_bytes`); inference, the weights at the narrowest
    precision the chip computes in, since the layout search falls back to it where the
    workload's do not fit (Groq's INT8). A lower bound: activations, the KV cache and whole
    layers per stage need more."""
    from accelkb.perf.memory import model_state_bytes
    from accelkb.perf.shapes import BYTES_PER, total_params

    params = total_params(model)
    if phase == "training":
        need = sum(model_state_bytes(params, 1).values())
    else:
        need = min([BYTES_PER[p] for p in spec.chip.peak_flops if p in INFER_PRECISIONS]
                   or [2.0]) * params
    per_chip = sum(t.capacity_bytes for t in spec.chip.memory_tiers)
    return max(1, math.ceil(need / per_chip))


def first_fit(model: ModelSpec, other: Compared, phase: str, gbs: int, prompt: int, output: int,
              precision: str | None, goal: str, slo: float | None = None,
              kb: KnowledgeBase | None = None,
              refine: Callable[[SystemSpec, tuple[Any, Any, str]], tuple[Any, Any, str]]
              | None = None) -> tuple[int, float] | None:
    """(chips, step or token time) of the fewest chips of ``other``'s system, above the count
    that did not fit, on which the same search finds a layout: multiples of its fastest
    level's group (a DGX's 8 GPUs) from :func:`least_chips`, :data:`FIT_TRIES` of them at
    most; None where none of them fits or the knowledge base joins no more chips. ``refine`` as
    in :func:`comparison`, so the time is the one ``--compare SYSTEM:CHIPS`` gives."""
    from accelkb.advise import parts
    from accelkb.perf.from_kb import system_spec

    spec = other.spec
    group = spec.levels[0].group_chips if spec.levels else 1
    n = max(spec.chips + 1, least_chips(model, spec, phase))
    n = math.ceil(n / group) * group
    for _ in range(FIT_TRIES):
        try:
            bigger = system_spec(other.name, chips=n, kb=kb)
        except InputError:
            return None  # the knowledge base joins no more of them
        try:
            found = parts.baseline(model, bigger, phase, gbs, prompt, output, precision, goal,
                                   slo)
            _, est, _ = refine(bigger, found) if refine is not None else found
        except InputError:
            n += group
            continue
        return n, parts.as_estimate(est).time_s
    return None


def sentence(rows: list[Comparison], own: Any, phase: str, goal: str = "time") -> str:
    """The compared systems in one sentence, each against this system's baseline ``own`` (an
    :class:`~accelkb.advise.advice.Estimate`): its step or token time, how fast that is against
    this system's (throughput instead for an inference goal of throughput, cost or energy), on
    how many times the chips; a system that fits no layout says so with the fewest chips that
    do (empty without comparisons)."""
    unit = _UNIT[phase == "training"]
    by_time = phase == "training" or goal == "latency"
    out: list[str] = []
    for c in rows:
        size = c.system_chips or c.chips
        name = c.system if size == (c.own_chips or size) else f"{c.system} x{size}"
        if c.estimate is None:
            out.append(f"{name}: no layout fits on its {c.chips} chips (the fewest that fit it: "
                       f"{c.fewest_chips}, at {_time(c.fewest_chips_time_s or 0, phase)} {unit})"
                       if c.fewest_chips else f"{name}: not estimated (see the comparison)")
            continue
        ratio = (own.time_s / c.estimate.time_s if by_time
                 else c.estimate.tokens_per_s / own.tokens_per_s)
        # per chip only where the ratio is of work done (a step of the same batch, tokens/s):
        # a token's latency is no more "per chip" on 8 chips than on 328
        per_chip = ("" if c.estimate.chips == own.chips or phase != "training" and by_time else
                    f" ({ratio * own.chips / c.estimate.chips:.2f}x per chip)")
        out.append(f"{name}: {_time(c.estimate.time_s, phase)} {unit} on {c.estimate.chips} "
                   f"chips, {ratio:.2f}x {'the speed' if by_time else 'the throughput'} of this "
                   f"system's {own.chips}{per_chip}")
    return "Compared on the same workload: " + "; ".join(out) + "." if out else ""
