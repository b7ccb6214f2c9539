"""Independent check of a layout without Z3: chip count, divisibility, options, memory, budgets.

Every declared constraint is re-stated here in plain Python (memory and streaming through the
performance module), so a layout the solver returns is verified by code that shares nothing with
the encoding. The same checker filters the exhaustive enumeration the benchmarks compare with.

Examples
--------
>>> from accelkb.solver.config.model import Layout
>>> Layout(tp=3, pp=1, dp=1).chips
3
"""

from __future__ import annotations

from collections.abc import Callable

from accelkb.errors import ValidationError
from accelkb.perf.memory import serving_engine_applies
from accelkb.solver.config.instance import Instance
from accelkb.solver.config.model import Layout
from accelkb.solver.config.theory import capacity, memory, streaming_need

Violation = tuple[str, str]


def check_layout(inst: Instance, lay: Layout,
                 score: Callable[[Layout], tuple[float, float] | None] | None = None,
                 active: frozenset[str] | None = None) -> list[Violation]:
    """Every (constraint key, message) ``lay`` breaks; empty when it is feasible.

    ``score`` gives (time, tokens/s) for the user's budgets; ``active`` restricts the check to
    these constraint keys (default: those the instance encodes).
    """
    from accelkb.solver.config.encoding import default_active

    act = active if active is not None else default_active(inst)
    m, u = inst.model, inst.request.constraints
    out: list[Violation] = []

    def need(key: str, ok: bool, msg: str) -> None:
        if key in act and not ok:
            out.append((key, msg))

    n = lay.chips
    need("chip-budget", n <= inst.max_chips, f"uses {n} chips, at most {inst.max_chips}")
    if inst.training:
        need("chip-product", n in inst.chip_counts,
             f"t x p x d = {n}, expected one of {list(inst.chip_counts)[:6]}")
        need("layers-divisible-stages", m.layers % (lay.pp * lay.interleave) == 0
             and (lay.pp > 1 or lay.interleave == 1),
             f"{m.layers} layers not divisible by p x v = {lay.pp} x {lay.interleave}")
        need("batch-divisible", inst.global_batch % (lay.dp * lay.micro_batch) == 0,
             f"batch {inst.global_batch} not divisible by d x b = {lay.dp} x {lay.micro_batch}")
        mbs = max(1, inst.global_batch // (lay.dp * lay.micro_batch))
        need("interleave-microbatches", lay.interleave == 1 or mbs % lay.pp == 0,
             f"{mbs} micro-batches not a multiple of p = {lay.pp} with v = {lay.interleave}")
        need("sequence-parallel-needs-tp", not lay.sequence_parallel or lay.tp > 1,
             "sequence parallelism with t = 1")
        need("zero-no-pipeline", lay.zero < 2 or lay.pp == 1,
             f"ZeRO stage {lay.zero} with {lay.pp} pipeline stages")
        need("ipu-gradient-accumulation", lay.pp == 1 or mbs > 2 * lay.pp,
             f"gradient accumulation {mbs} <= 2 x {lay.pp} stages")
    else:
        need("layers-divisible-stages", lay.pp <= m.layers, f"p = {lay.pp} > {m.layers}")
    need("heads-divisible-tp", m.heads % lay.tp == 0, f"{m.heads} heads not divisible by "
         f"t = {lay.tp}")
    need("tp-within-fast-domain", lay.tp <= inst.fast_domain,
         f"t = {lay.tp} > {inst.fast_domain} chips of the innermost network level")
    need("user-tp-within-node", u.max_tp is None or lay.tp <= u.max_tp,
         f"t = {lay.tp} > user limit {u.max_tp}")
    peaks = set(inst.system.chip.peak_flops)
    prec_ok = lay.precision in peaks or (lay.precision in ("fp16", "bf16")
                                         and bool({"fp16", "bf16"} & peaks))
    if inst.training:  # as the encoding: FP8 mixed precision trains, INT8 does not here
        prec_ok = prec_ok and lay.precision != "int8"
    need("precision-supported", prec_ok, f"{lay.precision} not supported by "
         f"{inst.system.chip.name} for {inst.request.phase}")
    need("user-precision", u.precisions is None or lay.precision in u.precisions,
         f"{lay.precision} not among {u.precisions}")
    mem = memory(inst, lay)
    cap = capacity(inst)
    need("memory-capacity", mem.total <= cap,
         f"needs {mem.total / 1e9:.2f} GB per chip, may use {cap / 1e9:.2f} GB"
         + (" (what its serving engine leaves to weights and KV cache)"
            if not inst.training and serving_engine_applies(inst.system.chip) else ""))
    need("user-sram-only", mem.total <= mem.sram_capacity,
         f"needs {mem.total / 1e9:.2f} GB per chip, SRAM {mem.sram_capacity / 1e9:.2f} GB")
    need("groq-weights-in-sram", mem.items["weights"] <= mem.sram_capacity,
         f"weights {mem.items['weights'] / 1e9:.3f} GB per chip, SRAM "
         f"{mem.sram_capacity / 1e9:.3f} GB")
    if inst.training and lay.offload_optimizer:
        opt = mem.items["optimizer_offloaded"]
        need("offload-slow-tier", max(mem.fast_capacity, mem.in_fast) + opt <= cap,
             f"offloaded optimizer {opt / 1e9:.2f} GB does not fit beside the rest")
    if inst.training and mem.slow_capacity > 0 and mem.in_fast > mem.fast_capacity:
        have, want = streaming_need(inst, lay)
        need("streaming-intensity", have >= want,
             f"streams weights at {have:.0f} FLOP/byte, needs {want:.0f}")
    if out or score is None:
        return out
    sc = score(lay)
    if sc is None:
        out.append(("performance-model", "the performance module refuses this layout"))
        return out
    need("user-time-budget", u.time_budget_s is None or sc[0] <= u.time_budget_s,
         f"time {sc[0]:.4g} s > budget {u.time_budget_s}")
    need("user-throughput", u.min_tokens_per_s is None or sc[1] >= u.min_tokens_per_s,
         f"{sc[1]:.4g} tokens/s < target {u.min_tokens_per_s}")
    return out


def verify(inst: Instance, lay: Layout,
           score: Callable[[Layout], tuple[float, float] | None] | None = None) -> None:
    """Raise unless ``lay`` satisfies every constraint the instance encodes.

    Raises
    ------
    ValidationError
        Naming each broken constraint and its numbers.
    """
    bad = check_layout(inst, lay, score)
    if bad:
        raise ValidationError(f"layout {lay.text()} breaks: " +
                              "; ".join(f"{k}: {msg}" for k, msg in bad))
