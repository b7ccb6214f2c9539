"""Explain infeasibility: shrink Z3's unsat core to a minimal set (MUS) and say it in numbers.

The core Z3 returns is shrunk by deletion: drop one constraint; if every layout of the domain
still breaks one of the rest (independent checker, no Z3), it was not needed. What is left is
minimal: removing any one member leaves a layout that satisfies the others. If the deadline
cuts the pass short the core is reported unshrunk, not as a MUS. Each member is
rendered with numbers from the knowledge base and the performance module.

Examples
--------
>>> gb(2.8e12)
'2800.0 GB'
"""

from __future__ import annotations

import time

from accelkb.perf.memory import serving_engine_applies
from accelkb.solver.config.check import check_layout
from accelkb.solver.config.instance import Instance
from accelkb.solver.config.model import Reason
from accelkb.solver.config.search import Outcome, domain, perf_score
from accelkb.solver.config.theory import capacity, memory, model_state_total, streaming_need

MEMORY_KEYS = ("memory-capacity", "user-sram-only", "groq-weights-in-sram", "offload-slow-tier",
               "streaming-intensity")


def gb(b: float) -> str:
    """Bytes as decimal gigabytes."""
    return f"{b / 1e9:.1f} GB"


def shrink(inst: Instance, out: Outcome, deadline: float) -> tuple[list[str], bool]:
    """A minimal subset of Z3's core ``out.core``; the flag says whether minimality was proven.

    Deletion against the independent checker: for every layout of the domain the set of core
    constraints it breaks is computed once; a subset of the core is still infeasible iff every
    layout breaks at least one of its members. Stops (unproven) at ``deadline``.
    """
    core = frozenset(out.core)
    u = inst.request.constraints
    score = perf_score(inst) if (u.time_budget_s or u.min_tokens_per_s) else None
    broken: set[frozenset[str]] = set()
    for lay in domain(inst):
        if time.monotonic() >= deadline:
            return sorted(core), False
        broken.add(frozenset(k for k, _ in check_layout(inst, lay, score, core)))
    keep = set(core)
    for key in sorted(core):
        trial = keep - {key}
        if all(b & trial for b in broken):
            keep = trial
    return sorted(keep), True


def render(inst: Instance, mus: list[str]) -> list[Reason]:
    """Each constraint of ``mus`` in domain words with numbers."""
    return [_reason(inst, key, mus) for key in mus]


def _least(inst: Instance, mus: list[str]) -> tuple[float, float]:
    """(least bytes per chip, most FLOP per streamed byte) over layouts the rest of ``mus``
    allows (memory constraints dropped), by enumeration with the independent checker."""
    rest = frozenset(k for k in mus if k not in MEMORY_KEYS)
    least, best_int = float("inf"), 0.0
    for lay in domain(inst):
        if check_layout(inst, lay, None, rest):
            continue
        least = min(least, memory(inst, lay).total)
        if inst.training:
            best_int = max(best_int, streaming_need(inst, lay)[0])
    return least, best_int


def _reason(inst: Instance, key: str, mus: list[str]) -> Reason:
    info = inst.constraints[key]
    m, s = inst.model, inst.system
    prec = inst.precision[0]
    nums: dict[str, float] = {}
    tiers = ", ".join(f"{t.kind} {gb(t.capacity_bytes * s.chips)}" for t in s.chip.memory_tiers)
    if key in ("memory-capacity", "user-sram-only", "groq-weights-in-sram"):
        state = model_state_total(inst, prec)
        least, _ = _least(inst, mus)
        cap = capacity(inst) if key == "memory-capacity" else \
            sum(t.capacity_bytes for t in s.chip.memory_tiers if t.kind == "sram")
        what = "model state (weights, gradients, Adam)" if inst.training else "weights"
        msg = (f"{m.name} {inst.request.phase} needs {gb(state)} of {what} at {prec}; "
               f"{s.name} ({s.chips} x {s.chip.name}) has {tiers}; the least any allowed layout "
               f"needs is {gb(least)} per chip, the limit is {gb(cap)} per chip")
        if key == "memory-capacity" and not inst.training and serving_engine_applies(s.chip):
            c = inst.calibration
            msg += (f" (a serving engine takes {c.serving_memory_fraction:.0%} of each GPU and "
                    f"keeps {c.serving_reserve_bytes / 1e9:.2f} GB of that for its own "
                    "buffers)")
        nums = {"model_state_bytes": state, "least_bytes_per_chip": least,
                "limit_bytes_per_chip": cap, "chips": float(s.chips)}
    elif key == "streaming-intensity":
        _, best = _least(inst, mus)
        lay0 = next(iter(domain(inst)))
        need = streaming_need(inst, lay0)[1]
        msg = (f"weights that do not fit {gb(s.chip.memory_tiers[0].capacity_bytes)} of fast "
               f"memory per chip stream from {s.chip.memory_tiers[-1].kind} at "
               f"{s.chip.memory_tiers[-1].bandwidth_bytes_per_s / 1e9:.1f} GB/s per chip: "
               f"offloading would need {need:.0f} FLOP per streamed byte, the layouts the other "
               f"constraints allow reach at most {best:.0f}")
        nums = {"flop_per_byte_needed": need, "flop_per_byte_available": best}
    elif key == "heads-divisible-tp":
        msg = f"{m.name} has {m.heads} attention heads; t must divide them"
        nums = {"heads": float(m.heads)}
    elif key == "layers-divisible-stages":
        msg = f"{m.name} has {m.layers} layers; p x v must divide them"
        nums = {"layers": float(m.layers)}
    elif key == "tp-within-fast-domain":
        msg = (f"the innermost network level of {s.name} ({s.levels[0].name}) joins "
               f"{inst.fast_domain} chips; t <= {inst.fast_domain}")
        nums = {"fast_domain_chips": float(inst.fast_domain)}
    elif key in ("chip-product", "chip-budget"):
        msg = f"{inst.max_chips} chips available; t x p x d must use {list(inst.chip_counts)[-1]}"
        nums = {"chips": float(inst.max_chips)}
    elif key == "batch-divisible":
        msg = (f"global batch {inst.global_batch} sequences = d x b x m on {inst.max_chips} "
               f"chips (t x p x d), micro-batch b among {list(inst.micro_batch)}")
        nums = {"global_batch": float(inst.global_batch)}
    elif key == "ipu-gradient-accumulation":
        msg = (f"a {s.chip.name} pipeline of p stages needs m = {inst.global_batch} / (d x b) "
               f"> 2 p micro-batches per step")
        nums = {"global_batch": float(inst.global_batch)}
    elif key == "interleave-microbatches":
        msg = f"with v > 1, m = {inst.global_batch} / (d x b) must be a multiple of p"
        nums = {"global_batch": float(inst.global_batch)}
    else:
        u = inst.request.constraints
        msg = {"user-time-budget": f"time budget {u.time_budget_s} s",
               "user-throughput": f"target {u.min_tokens_per_s} tokens/s",
               "user-precision": f"precisions allowed {u.precisions}",
               "user-tp-within-node": f"t <= {u.max_tp}"}.get(key, info.title)
    return Reason(constraint=info, message=msg, numbers=nums)
