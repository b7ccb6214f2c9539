"""Z3 encoding of the configuration problem: one function per declared constraint.

Decision variables (Z3 integers over the instance's finite domains): ``tp, pp, dp, mb`` (micro-
batch), ``v`` (interleaved chunks), ``rc`` (recompute: 0 full, 1 selective, 2 none), ``sp``,
``zero``, ``prec`` (index into the instance's precisions), ``offload`` (optimizer state in the
slowest tier), and for inference ``batch`` and ``pipelined``. ``chips`` and ``m`` (micro-batches
per step) are defined from them.

Every declared constraint is added with ``assert_and_track`` under a Boolean named by its IRI.
Arithmetic that is not linear (products, divisibility) is written as a case split over the
finite domains with precomputed coefficients (``tp == 8 and pp == 16 -> chips == 128 dp``), so
every assertion Z3 sees is linear. Memory, streaming and time come from the performance module
and are added lazily (``theory_clauses``): when Z3 proposes a layout that breaks one of them,
a clause that excludes that layout -- generalised along directions in which perf's memory is
monotone -- is added under the same tracking Boolean.

Examples
--------
>>> import z3
>>> s = z3.Solver(); x = z3.Int("x")
>>> s.add(one_of(x, [2, 4])); s.check() == z3.sat
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import z3

from accelkb.solver.config.instance import RECOMPUTE, Instance
from accelkb.solver.config.model import Layout
from accelkb.solver.config.theory import Memory, capacity, memory, streaming_need

Clause = z3.BoolRef  # noqa: N816


def one_of(var: z3.ArithRef, values: Iterable[int]) -> z3.BoolRef:
    """``var`` takes one of ``values``."""
    return z3.Or([var == v for v in values])


@dataclass
class Encoding:
    """A Z3 solver holding the instance's variables and tracked constraints."""

    inst: Instance
    active: frozenset[str]
    solver: z3.Solver = field(default_factory=lambda: z3.SolverFor("QF_LIA"))  # linear only
    v: dict[str, z3.ArithRef] = field(default_factory=dict)
    track: dict[str, str] = field(default_factory=dict)
    _lits: dict[tuple[str, int], z3.BoolRef] = field(default_factory=dict)

    def add(self, key: str, expr: z3.BoolRef) -> None:
        """Assert ``expr`` tracked under the IRI of constraint ``key`` (if active).

        The first assertion of a constraint goes through ``assert_and_track`` with a Boolean
        named by the IRI; later ones (the lazily learned memory clauses) are added as
        ``IRI -> clause`` with the same Boolean, so one literal per constraint reaches the core.
        """
        if key not in self.active:
            return
        iri = self.inst.constraints[key].iri
        lit = z3.Bool(iri)
        if iri in self.track:
            self.solver.add(z3.Implies(lit, expr))
            return
        self.track[iri] = key
        self.solver.assert_and_track(expr, lit)

    def key_of(self, literal: z3.ExprRef) -> str:
        """Constraint key of a tracking literal from an unsat core."""
        return self.track[str(literal)]

    def decode(self, mdl: z3.ModelRef) -> Layout:
        """The :class:`Layout` of a Z3 model."""
        val = {k: mdl.eval(self.v[k], model_completion=True).as_long() for k in ALL_VARS}
        inst = self.inst
        return Layout(tp=val["tp"], pp=val["pp"], dp=val["dp"], micro_batch=val["mb"],
                      interleave=val["v"], recompute=RECOMPUTE[val["rc"]],  # type: ignore
                      sequence_parallel=bool(val["sp"]), zero=val["zero"],
                      precision=inst.precision[val["prec"]],
                      offload_optimizer=bool(val["offload"]), batch=val["batch"],
                      pipelined=bool(val["pipelined"]))

    def equals(self, lay: Layout, names: Iterable[str]) -> z3.BoolRef:
        """Conjunction ``var == value of lay`` over ``names`` (literals cached)."""
        lits = []
        for n in names:
            k = (n, _value(self.inst, lay, n))
            if k not in self._lits:
                self._lits[k] = self.v[n] == k[1]
            lits.append(self._lits[k])
        return z3.And(*lits)


ALL_VARS = ("tp", "pp", "dp", "mb", "v", "rc", "sp", "zero", "prec", "offload", "batch",
            "pipelined")
STATE_VARS = ("tp", "pp", "dp", "zero", "prec", "offload")


def _value(inst: Instance, lay: Layout, name: str) -> int:
    return {"tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "mb": lay.micro_batch,
            "v": lay.interleave, "rc": RECOMPUTE.index(lay.recompute),
            "sp": int(lay.sequence_parallel), "zero": lay.zero,
            "prec": inst.precision.index(lay.precision), "offload": int(lay.offload_optimizer),
            "batch": lay.batch, "pipelined": int(lay.pipelined)}[name]


def encode(inst: Instance, active: Iterable[str] | None = None) -> Encoding:
    """Build the solver: domains, definitions and every active declared constraint.

    ``active`` restricts the tracked constraints to these keys (MUS shrinking); by default all
    constraints that apply to the instance and that the request switches on.
    """
    keys = frozenset(active) if active is not None else default_active(inst)
    enc = Encoding(inst, keys)
    _variables(enc)
    for fn in GROUPS:
        fn(enc)
    return enc


def default_active(inst: Instance) -> frozenset[str]:
    """Constraint keys encoded for ``inst``: all that apply, user ones only when asked."""
    u = inst.request.constraints
    wanted = {"user-sram-only": u.sram_only, "user-tp-within-node": u.max_tp is not None,
              "user-precision": u.precisions is not None,
              "user-time-budget": u.time_budget_s is not None,
              "user-throughput": u.min_tokens_per_s is not None}
    return frozenset(k for k in inst.constraints if wanted.get(k, True))


def _variables(enc: Encoding) -> None:
    """Variables and their finite domains (untracked: a domain is not a requirement)."""
    inst, s = enc.inst, enc.solver
    doms: dict[str, Iterable[int]] = {
        "tp": inst.tp, "pp": inst.pp, "mb": inst.micro_batch, "v": inst.interleave,
        "rc": range(len(inst.recompute) if inst.training else 3),
        "sp": [int(b) for b in inst.sequence_parallel], "zero": inst.zero,
        "prec": range(len(inst.precision)), "offload": [int(b) for b in inst.offload],
        "batch": inst.batch, "pipelined": [int(b) for b in inst.pipelined]}
    for name in ALL_VARS:
        enc.v[name] = z3.Int(name)
    for name, dom in doms.items():
        s.add(one_of(enc.v[name], dom))
    if not inst.training:
        s.add(enc.v["rc"] == RECOMPUTE.index("none"))
    enc.v["chips"] = z3.Int("chips_used")
    enc.v["m"] = z3.Int("microbatches_per_step")
    tp, pp, dp, chips = enc.v["tp"], enc.v["pp"], enc.v["dp"], enc.v["chips"]
    big = max(inst.system.chips, inst.global_batch, max(inst.chip_counts)) * 64
    s.add(enc.v["m"] >= 1, enc.v["m"] <= big, chips >= 1, chips <= big, dp >= 1, dp <= big)
    if inst.training:
        s.add(one_of(dp, inst.dp), one_of(chips, inst.chip_counts))
        for d in inst.dp:  # m = floor(B / (d b)): a definition, checked by batch-divisible
            for b in inst.micro_batch:
                s.add(z3.Implies(z3.And(dp == d, enc.v["mb"] == b),
                                 enc.v["m"] == max(1, inst.global_batch // (d * b))))
    else:  # inference replicas: all chips that fit for throughput, else one replica
        whole = inst.request.objective == "throughput"
        for a in inst.tp:
            for p in inst.pp:
                reps = max(1, inst.max_chips // (a * p)) if whole else 1
                s.add(z3.Implies(z3.And(tp == a, pp == p), z3.And(dp == reps,
                                                                  chips == a * p * reps)))
        s.add(enc.v["m"] == 1)


def _chip_product(enc: Encoding) -> None:
    """chip-product: t x p x d == chips used (case split over (t, p): linear in d)."""
    inst = enc.inst
    tp, pp, dp, chips = enc.v["tp"], enc.v["pp"], enc.v["dp"], enc.v["chips"]
    if inst.training:
        enc.add("chip-product", z3.And([z3.Implies(z3.And(tp == a, pp == p), chips == a * p * dp)
                                        for a in inst.tp for p in inst.pp]))


def _chip_budget(enc: Encoding) -> None:
    """chip-budget: chips used <= the system's chips and the user's maximum."""
    enc.add("chip-budget", enc.v["chips"] <= enc.inst.max_chips)


def _heads(enc: Encoding) -> None:
    """heads-divisible-tp: t divides the attention heads."""
    h = enc.inst.model.heads
    enc.add("heads-divisible-tp", one_of(enc.v["tp"], [t for t in enc.inst.tp if h % t == 0]))


def _layers(enc: Encoding) -> None:
    """layers-divisible-stages: p x v divides the layers (training); v = 1 without pipeline."""
    inst, pp, v = enc.inst, enc.v["pp"], enc.v["v"]
    ok = [z3.And(pp == p, v == c) for p in inst.pp for c in inst.interleave
          if inst.model.layers % (p * c) == 0 and (p > 1 or c == 1)]
    enc.add("layers-divisible-stages", z3.Or(ok) if ok else z3.BoolVal(False))
    if not inst.training:
        enc.solver.add(pp <= inst.model.layers)


def _fast_domain(enc: Encoding) -> None:
    """tp-within-fast-domain: t <= chips of the innermost network level; user's max t."""
    enc.add("tp-within-fast-domain", enc.v["tp"] <= enc.inst.fast_domain)
    u = enc.inst.request.constraints.max_tp
    if u is not None:
        enc.add("user-tp-within-node", enc.v["tp"] <= u)


def _batch(enc: Encoding) -> None:
    """batch-divisible: d x b divides the global batch (pairs precomputed)."""
    inst = enc.inst
    if not inst.training:
        return
    pairs = [z3.And(enc.v["dp"] == d, enc.v["mb"] == b) for d in inst.dp
             for b in inst.micro_batch if inst.global_batch % (d * b) == 0]
    enc.add("batch-divisible", z3.Or(pairs) if pairs else z3.BoolVal(False))


def _interleave(enc: Encoding) -> None:
    """interleave-microbatches: v > 1 needs m a multiple of p (triples precomputed)."""
    inst = enc.inst
    if not inst.training:
        return
    ok = [z3.And(enc.v["dp"] == d, enc.v["mb"] == b, enc.v["pp"] == p)
          for d in inst.dp for b in inst.micro_batch for p in inst.pp
          if max(1, inst.global_batch // (d * b)) % p == 0]
    enc.add("interleave-microbatches", z3.Implies(enc.v["v"] > 1, z3.Or(ok) if ok else False))


def _options(enc: Encoding) -> None:
    """sequence-parallel-needs-tp, zero-no-pipeline, ipu-gradient-accumulation, precisions."""
    x, inst = enc.v, enc.inst
    enc.add("sequence-parallel-needs-tp", z3.Implies(x["sp"] == 1, x["tp"] > 1))
    enc.add("zero-no-pipeline", z3.Implies(x["zero"] >= 2, x["pp"] == 1))
    enc.add("ipu-gradient-accumulation", z3.Implies(x["pp"] > 1, x["m"] > 2 * x["pp"]))
    peaks = inst.system.chip.peak_flops
    ok = [i for i, p in enumerate(inst.precision) if p in peaks or
          (p in ("fp16", "bf16") and ({"fp16", "bf16"} & set(peaks)))]
    if inst.training:  # FP8 mixed precision trains (Transformer Engine); INT8 is inference's
        ok = [i for i in ok if inst.precision[i] != "int8"]
    enc.add("precision-supported", one_of(x["prec"], ok) if ok else z3.BoolVal(False))
    allowed = inst.request.constraints.precisions
    if allowed is not None:
        idx = [i for i, p in enumerate(inst.precision) if p in allowed]
        enc.add("user-precision", one_of(x["prec"], idx) if idx else z3.BoolVal(False))


GROUPS: tuple[Callable[[Encoding], None], ...] = (
    _chip_product, _chip_budget, _heads, _layers, _fast_domain, _batch, _interleave, _options)

THEORY_KEYS = ("memory-capacity", "offload-slow-tier", "streaming-intensity", "user-sram-only",
               "groq-weights-in-sram", "user-time-budget", "user-throughput")


def theory_clauses(enc: Encoding, lay: Layout,
                   score: Callable[[Layout], tuple[float, float] | None]) -> list[tuple[str, z3.BoolRef]]:
    """Clauses excluding ``lay`` for every perf-derived constraint it breaks.

    ``score(lay)`` returns (time, tokens/s) from the performance module or None when perf
    refuses the layout. Returned clauses are (constraint key, clause); the caller adds them
    tracked under that key.
    """
    inst, act = enc.inst, enc.active
    mem = memory(inst, lay)
    out: list[tuple[str, z3.BoolRef]] = []
    cap = capacity(inst)
    if "memory-capacity" in act and mem.total > cap:
        out.append(("memory-capacity", _generalised(enc, lay, mem, cap, mem.total)))
    if "user-sram-only" in act and mem.total > mem.sram_capacity:
        out.append(("user-sram-only", _generalised(enc, lay, mem, mem.sram_capacity,
                                                   mem.total)))
    if "groq-weights-in-sram" in act and mem.items["weights"] > mem.sram_capacity:
        out.append(("groq-weights-in-sram", z3.Not(enc.equals(lay, ("tp", "pp", "prec")))))
    if inst.training and lay.offload_optimizer and "offload-slow-tier" in act:
        opt = mem.items["optimizer_offloaded"]
        if max(mem.fast_capacity, mem.in_fast) + opt > cap:
            out.append(("offload-slow-tier", z3.Not(enc.equals(lay, ALL_VARS))))
    if inst.training and "streaming-intensity" in act and mem.slow_capacity > 0:
        have, need = streaming_need(inst, lay)
        if mem.in_fast > mem.fast_capacity and have < need:
            out.append(("streaming-intensity", z3.Not(enc.equals(lay, ALL_VARS))))
    if out:
        return out
    u = inst.request.constraints
    if u.time_budget_s is not None or u.min_tokens_per_s is not None:
        sc = score(lay)
        if sc is not None and u.time_budget_s is not None and sc[0] > u.time_budget_s:
            out.append(("user-time-budget", z3.Not(enc.equals(lay, ALL_VARS))))
        if sc is not None and u.min_tokens_per_s is not None and sc[1] < u.min_tokens_per_s:
            out.append(("user-throughput", z3.Not(enc.equals(lay, ALL_VARS))))
    return out


def _generalised(enc: Encoding, lay: Layout, mem: Memory, cap: float, total: float) -> z3.BoolRef:
    """Exclude ``lay`` and every layout perf's memory model says needs at least as much.

    Model state depends only on (t, p, d, ZeRO, precision, offload); activations grow with the
    micro-batch (``b min(p, m)`` never falls as b grows), with less recompute and without
    sequence parallelism; the KV cache grows with the batch, and a pipelined layout's holds the
    batches of all its stages.
    """
    state = sum(b for k, b in mem.items.items() if k not in ("activations", "kv_cache"))
    x = enc.v
    if state > cap:
        return z3.Not(enc.equals(lay, STATE_VARS))
    if not enc.inst.training:  # a pipelined layout holds pp batches' KV cache: never less
        same = z3.And(enc.equals(lay, ("tp", "pp", "prec")), x["batch"] >= lay.batch)
        return z3.Not(z3.And(same, x["pipelined"] == 1) if lay.pipelined else same)
    rc = RECOMPUTE.index(lay.recompute)
    return z3.Not(z3.And(enc.equals(lay, STATE_VARS + ("v",)), x["mb"] >= lay.micro_batch,
                         x["rc"] >= rc, x["sp"] <= int(lay.sequence_parallel)))
