"""Pipeline partition (the IPU question): contiguous layers to stages, each fitting its memory,
minimising the slowest stage.

Units are the embedding, every transformer layer and the output head (uneven on purpose). Per
unit the performance module gives: parameters (x bytes of state per parameter), the activation
stash of one micro-batch, the temporaries of its working set and its forward+backward time.
Stage ``i`` of ``p`` keeps its units' state, ``p - i`` stashed micro-batches (1F1B) and the
temporaries of its largest unit, all in the fast memory (SRAM on an IPU).

Encoding: boundaries ``0 = c_0 < c_1 < ... < c_p = U`` (Z3 integers); stage sums are prefix-sum
lookups (precomputed tables, so every assertion is linear); ``stage-nonempty`` and
``stage-fits-memory`` are tracked under their IRIs; Z3 ``Optimize`` minimises the bound on the
stage time. :func:`dp_partition` is the exact dynamic programme (no Z3) used as the independent
check: both must give the same optimum.

Examples
--------
>>> dp_minmax([3, 1, 1, 3], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], 2, 10)
(4, [0, 2, 4])
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import z3
from pydantic import BaseModel, ConfigDict, Field

from accelkb.perf.api import resolve_model, resolve_system
from accelkb.perf.calibration import load_calibration
from accelkb.perf.compute import Op, layer_forward_ops, logits_ops, ops_time, peak_for, recompute_ops
from accelkb.perf.memory import activation_bytes_per_layer, model_state_bytes
from accelkb.perf.shapes import BYTES_PER, embedding_params, output_params, params_per_layer
from accelkb.perf.specs import ModelSpec, SystemSpec
from accelkb.solver.config.instance import declared_constraints
from accelkb.solver.config.model import Status

NS = 1e9  # times in integer nanoseconds for Z3


class Stage(BaseModel):
    """One pipeline stage of a partition."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    first: str = Field(description="first unit (embedding, layer-<k>, head)")
    last: str = Field(description="last unit")
    units: int = Field(description="number of units")
    memory_bytes: float = Field(description="state + stash + temporaries, bytes")
    time_s: float = Field(description="forward + backward time of one micro-batch, s")


class PartitionResult(BaseModel):
    """Outcome of :func:`partition_pipeline`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    status: Status = Field(description="OPTIMAL, UNSATISFIABLE, UNKNOWN or ERROR")
    stages: list[Stage] = Field(default_factory=list, description="stages in pipeline order")
    max_stage_time_s: float | None = Field(default=None, description="slowest stage, s")
    exact_max_stage_time_s: float | None = Field(default=None, description="optimum of the "
                                                 "exact dynamic programme (independent check)")
    capacity_bytes: float = Field(description="fast memory per chip, bytes")
    explanation: list[str] = Field(default_factory=list, description="UNSAT: constraint IRIs "
                                   "with what they demand")
    solve_time_s: float = Field(default=0.0, description="Z3 time, s")


@dataclass(frozen=True)
class Units:
    """Per-unit integer tables: names, state bytes, stash bytes, temporaries, time (ns)."""

    names: list[str]
    state: list[int]
    stash: list[int]
    temp: list[int]
    time_ns: list[int]


def units(model: ModelSpec | str | Path, system: SystemSpec | str | Path, micro_batch: int = 1,
          recompute: str = "none",
          precision: str | None = None, offload_optimizer: bool = True,
          seq_len: int | None = None, grad_bytes: float = 2.0) -> tuple[Units, float]:
    """Unit tables from perf and the fast-memory capacity per chip (first tier)."""
    m = resolve_model(model)
    if seq_len:
        m = m.model_copy(update={"seq_len": seq_len})
    s = resolve_system(system)
    chip, cal = s.chip, load_calibration()
    prec = precision or next(p for p in ("bf16", "fp16", "fp32") if p in chip.peak_flops)
    e = float(BYTES_PER[prec])
    st1 = model_state_bytes(1.0, 1, 0, weight_bytes=e, grad_bytes=grad_bytes)
    per_param = st1["weights"] + st1["gradients"] + (0.0 if offload_optimizer else st1["optimizer"])
    peak, bw = peak_for(chip, prec), chip.memory_tiers[0].bandwidth_bytes_per_s
    tok = float(micro_batch * m.seq_len)
    fwd = layer_forward_ops(m, micro_batch, m.seq_len, m.seq_len, 1, False, prec)
    host = not chip.compiled  # eager launches overlap the device's work (compute.ops_time)
    t_layer = ops_time(fwd, peak, bw, cal, 3.0, overlap_host=host) + ops_time(
        recompute_ops(fwd, recompute), peak, bw, cal, overlap_host=host)
    stash = activation_bytes_per_layer(m, micro_batch, 1, False, recompute)
    temp = activation_bytes_per_layer(m, micro_batch, 1, False, "none")
    emb_out = tok * m.hidden * e
    t_emb = ops_time([Op("embedding", "stream", 0.0, 2.0 * emb_out)], peak, bw, cal, 3.0,
                     overlap_host=host)
    head_params = output_params(m) or m.vocab * m.hidden
    lg = logits_ops(m, tok, 1, prec)
    logits_bytes = tok * m.vocab * e
    names = ["embedding"] + [f"layer-{k}" for k in range(m.layers)] + ["head"]
    st = [embedding_params(m) * per_param] + [params_per_layer(m) * per_param] * m.layers + \
        [head_params * per_param]
    sh = [emb_out] + [stash] * m.layers + [emb_out]
    tm = [emb_out] + [temp] * m.layers + [logits_bytes]
    tt = [t_emb] + [t_layer] * m.layers + [ops_time(lg, peak, bw, cal, 3.0, overlap_host=host)]
    return Units(names, [round(x) for x in st], [round(x) for x in sh], [round(x) for x in tm],
                 [max(1, round(x * NS)) for x in tt]), chip.memory_tiers[0].capacity_bytes


def _stage_mem(u: Units, a: int, b: int, depth: int) -> int:
    return sum(u.state[a:b]) + depth * sum(u.stash[a:b]) + max(u.temp[a:b])


def dp_minmax(time_ns: list[int], state: list[int], stash: list[int], temp: list[int],
              stages: int, cap: float) -> tuple[int, list[int]] | None:
    """Exact min-max contiguous partition with per-stage memory limits (no Z3).

    Returns (optimal slowest-stage time, boundaries) or None when no partition fits.
    """
    u = Units([""] * len(time_ns), state, stash, temp, time_ns)
    n, inf = len(time_ns), float("inf")
    best = [[inf] * (n + 1) for _ in range(stages + 1)]
    back = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0
    for k in range(1, stages + 1):
        depth = stages - (k - 1)
        for j in range(k, n - (stages - k) + 1):
            for i in range(k - 1, j):
                if best[k - 1][i] == inf or _stage_mem(u, i, j, depth) > cap:
                    continue
                v = max(best[k - 1][i], sum(time_ns[i:j]))
                if v < best[k][j]:
                    best[k][j], back[k][j] = v, i
    if best[stages][n] == inf:
        return None
    cuts, j = [n], n
    for k in range(stages, 0, -1):
        j = back[k][j]
        cuts.append(j)
    return int(best[stages][n]), cuts[::-1]


def _lookup(var: z3.ArithRef, table: list[int]) -> z3.ArithRef:
    expr: z3.ArithRef = z3.IntVal(table[-1])
    for k in range(len(table) - 2, -1, -1):
        expr = z3.If(var == k, table[k], expr)
    return expr


def partition_pipeline(model: ModelSpec | str | Path, system: SystemSpec | str | Path, stages: int,
                       micro_batch: int = 1,
                       recompute: str = "none", precision: str | None = None,
                       offload_optimizer: bool = True, timeout_s: float = 60.0,
                       kb: object | None = None, seq_len: int | None = None,
                       grad_bytes: float = 2.0) -> PartitionResult:
    """Assign contiguous units to ``stages`` chips minimising the slowest stage (Z3 Optimize).

    Raises
    ------
    InputError
        For unknown names or fewer units than stages.
    """
    from accelkb.errors import InputError
    from accelkb.perf.from_kb import default_kb

    u, cap = units(model, system, micro_batch, recompute, precision, offload_optimizer, seq_len,
                   grad_bytes)
    n = len(u.names)
    if not 1 <= stages <= n:
        raise InputError(f"expected 1 <= stages <= {n} units, got {stages}")
    info = declared_constraints(kb or default_kb())
    pre = {k: [sum(t[:i]) for i in range(n + 1)] for k, t in
           (("time", u.time_ns), ("state", u.state), ("stash", u.stash))}
    opt = z3.Optimize()
    opt.set("timeout", int(timeout_s * 1000))
    c = [z3.IntVal(0)] + [z3.Int(f"stage_{i}_starts_at_unit") for i in range(1, stages)] + \
        [z3.IntVal(n)]
    bound = z3.Int("slowest_stage_ns")
    nonempty = z3.And([c[i] < c[i + 1] for i in range(stages)])
    opt.assert_and_track(nonempty, z3.Bool(info["stage-nonempty"].iri))
    fits = []
    for i in range(stages):
        tmax = z3.Int(f"stage_{i}_temporaries")
        opt.add(*[z3.Implies(z3.And(c[i] <= k, k < c[i + 1]), tmax >= u.temp[k])
                  for k in range(n)], tmax >= 0)
        mem = (_lookup(c[i + 1], pre["state"]) - _lookup(c[i], pre["state"]) +
               (stages - i) * (_lookup(c[i + 1], pre["stash"]) - _lookup(c[i], pre["stash"]))
               + tmax)
        fits.append(mem <= int(cap))
        opt.add(_lookup(c[i + 1], pre["time"]) - _lookup(c[i], pre["time"]) <= bound)
    opt.assert_and_track(z3.And(fits), z3.Bool(info["stage-fits-memory"].iri))
    opt.minimize(bound)
    t0 = time.monotonic()
    res = opt.check()
    took = time.monotonic() - t0
    exact = dp_minmax(u.time_ns, u.state, u.stash, u.temp, stages, cap)
    if res == z3.unknown:
        return PartitionResult(status=Status.UNKNOWN, capacity_bytes=cap, solve_time_s=took)
    if res == z3.unsat:
        core = sorted(str(x) for x in opt.unsat_core())
        need = sum(u.state) / stages
        return PartitionResult(
            status=Status.UNSATISFIABLE, capacity_bytes=cap, solve_time_s=took,
            explanation=[f"{iri}: {stages} stages must hold {sum(u.state) / 1e9:.2f} GB of state"
                         f" ({need / 1e9:.3f} GB per stage on average) plus stashes, each stage "
                         f"has {cap / 1e9:.3f} GB" for iri in core])
    mdl = opt.model()
    cuts = [0] + [mdl.eval(x).as_long() for x in c[1:-1]] + [n]
    out = [Stage(first=u.names[a], last=u.names[b - 1], units=b - a,
                 memory_bytes=float(_stage_mem(u, a, b, stages - i)),
                 time_s=sum(u.time_ns[a:b]) / NS)
           for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False))]
    return PartitionResult(
        status=Status.OPTIMAL, stages=out, max_stage_time_s=max(s.time_s for s in out),
        exact_max_stage_time_s=None if exact is None else exact[0] / NS, capacity_bytes=cap,
        solve_time_s=took)
