"""Benchmark the configuration solver: solve time, optimum vs exhaustive enumeration, Megatron.

    python bench/configure_bench.py                 # the five systems + the Megatron rows
    python bench/configure_bench.py --skip-megatron # only the five systems
    python bench/configure_bench.py --megatron-rows 2 --timeout 300
    python bench/configure_bench.py --skip-cases --skip-megatron   # only the pipeline partition

Part 1 (the issue's cases): for each case Z3 enumerates the feasible set and perf ranks it; the
same domains are then enumerated exhaustively in plain Python (independent checker, no Z3) and
ranked the same way. Printed: status, feasible layouts (Z3 / exhaustive), whether the optimum
is the same layout with the same objective value, both times and their ratio.

Part 2 (Megatron SC'21 Table 1 weak-scaling rows in ../shared/validation/): given model, GPU
count and batch, the solver's choice is compared under the model with the published layout
(t, p, d, full recompute; micro-batch and interleaving not published, so the fastest valid ones,
as perf's validation does), and the published layout's prediction with the measured TFLOP/s.

Part 3 (pipeline partition): Z3 Optimize's slowest stage against the exact dynamic programme.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from accelkb.errors import InputError
from accelkb.perf.validation.training import read_rows
from accelkb.solver.config.api import configure
from accelkb.solver.config.instance import build_instance
from accelkb.solver.config.model import ConfigRequest, Layout
from accelkb.solver.config.rank import rank
from accelkb.solver.config.search import exhaustive
from accelkb.solver.config.theory import estimate

CASES: list[tuple[str, dict[str, Any]]] = [
    ("GPT-3 175B, 1024 x A100", dict(model="gpt3-175b", system="dgx-a100-superpod",
                                     chips=1024, global_batch=1536)),
    ("Megatron 1T, 3072 x A100", dict(model="megatron-gpt-1t", system="dgx-a100-superpod",
                                      chips=3072, global_batch=3072)),
    ("GPT-3 175B, IPU-POD256", dict(model="gpt3-175b", system="ipu-pod256",
                                    global_batch=2048)),
    ("GPT-3 175B, SambaRack SN40L-16", dict(model="gpt3-175b", system="sambarack-sn40l-16",
                                            global_batch=512)),
    ("Llama-2 70B inference, 576 GroqChips (tokens/s)",
     dict(model="llama2-70b", system="groq-576", phase="inference", objective="throughput")),
]


def part1(timeout: float) -> None:
    print("| case | status | feasible Z3 / exhaustive | best layout | objective | same optimum "
          "| Z3 solve s | exhaustive s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, kw in CASES:
        req = ConfigRequest(timeout_s=timeout, **kw)
        res = configure(req)
        if res.status.value in ("ERROR", "UNKNOWN", "UNSATISFIABLE"):
            why = res.message[:160].replace("|", "/")
            print(f"| {label} | {res.status.value} | - | {why} | - | - | "
                  f"{res.solve_time_s:.1f} | - | - |")
            continue
        inst = build_instance(req)
        t0 = time.monotonic()
        every = rank(inst, exhaustive(inst))
        t_ex = time.monotonic() - t0
        best = res.best
        assert best is not None
        same = bool(every) and every[0].layout == best.layout and \
            abs(every[0].objective_value - best.objective_value) <= 1e-12 * abs(
                best.objective_value)
        print(f"| {label} | {res.status.value} | {res.feasible_count} / {len(every)} | "
              f"`{best.layout.text()}` | {best.objective_value:.4g} | "
              f"{'yes' if same else 'NO'} | {res.solve_time_s:.1f} | {t_ex:.1f} | "
              f"{res.solve_time_s / t_ex:.2f} |")


def _published(inst: Any, r: dict[str, str]) -> tuple[Layout, float] | None:
    """Fastest published layout (t, p, d, full recompute) over micro-batch and interleaving."""
    best: tuple[Layout, float] | None = None
    for mb in (1, 2, 4, 8, 16):
        for v in (1, 2, 3, 4, 6) if int(r["pipeline_mp"]) > 1 else (1,):
            lay = Layout(tp=int(r["tensor_mp"]), pp=int(r["pipeline_mp"]),
                         dp=int(r["data_parallel"]), micro_batch=mb, interleave=v,
                         recompute="full", precision=inst.precision[0])
            if inst.model.layers % (lay.pp * v):
                continue
            try:
                t = estimate(inst, lay)[0]
            except InputError:
                continue
            if best is None or t < best[1]:
                best = (lay, t)
    return best


def part2(rows: int, timeout: float) -> None:
    print("\n| Megatron row | GPUs | published layout (best mb, v) | published pred. s/step | "
          "chosen layout | chosen pred. s/step | chosen >= published | pred. vs measured "
          "TFLOP/s/GPU (error) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in read_rows("megatron_sc21_table1_weak_scaling.csv")[:rows]:
        name = f"megatron-gpt-{r['params_billion']}b"
        n, gbs = int(r["num_gpus"]), int(r["global_batch_size"])
        req = ConfigRequest(model=name, system="dgx-a100-superpod", chips=n, global_batch=gbs,
                            timeout_s=timeout)
        inst = build_instance(req)
        pub = _published(inst, r)
        res = configure(req)
        if pub is None or res.best is None:
            print(f"| {name} | {n} | {pub} | - | {res.status.value} | - | - | - |")
            continue
        from accelkb.perf import training as T
        from accelkb.solver.config.theory import training_config

        est = T.estimate(inst.model, inst.system, training_config(pub[0], gbs),
                         inst.calibration)
        measured = float(r["achieved_tflops_per_gpu"])
        pred = est.hardware_flops_per_s_per_chip / 1e12
        ok = res.best.time_s <= pub[1] * (1 + 1e-9)
        print(f"| {name} | {n} | `{pub[0].text()}` | {pub[1]:.3f} | `{res.best.layout.text()}` "
              f"({res.status.value}) | {res.best.time_s:.3f} | {'yes' if ok else 'NO'} | "
              f"{pred:.0f} vs {measured:.0f} ({100 * (pred / measured - 1):+.1f}%) |")


PARTITIONS = [("GPT-3 760M, 8 IPUs of IPU-POD16 (seq 1024, full recompute)",
               ("gpt3-760m", "ipu-pod16", 8, 1024)),
              ("GPT-3 760M, 16 IPUs of IPU-POD16 (seq 1024, full recompute)",
               ("gpt3-760m", "ipu-pod16", 16, 1024)),
              ("GPT-3 2.7B, 16 IPUs of IPU-POD16 (seq 512, full recompute)",
               ("gpt3-2.7b", "ipu-pod16", 16, 512))]


def part3() -> None:
    from accelkb.solver.config.partition import dp_minmax, partition_pipeline, units

    print("\n| pipeline partition | status | stages (units) | slowest stage ms | exact DP ms | "
          "same | Z3 s | DP s |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (model, system, stages, seq) in PARTITIONS:
        res = partition_pipeline(model, system, stages, recompute="full", seq_len=seq)
        u, cap = units(model, system, 1, "full", seq_len=seq)
        t0 = time.monotonic()
        exact = dp_minmax(u.time_ns, u.state, u.stash, u.temp, stages, cap)
        t_dp = time.monotonic() - t0
        sizes = ",".join(str(s.units) for s in res.stages) or "-"
        best = "-" if res.max_stage_time_s is None else f"{1e3 * res.max_stage_time_s:.3f}"
        ex = "-" if exact is None else f"{exact[0] / 1e6:.3f}"
        same = (exact is None) == (res.max_stage_time_s is None) and (
            exact is None or abs(exact[0] / 1e9 - (res.max_stage_time_s or 0)) < 1e-12)
        print(f"| {label} | {res.status.value} | {sizes} | {best} | {ex} | "
              f"{'yes' if same else 'NO'} | {res.solve_time_s:.2f} | {t_dp:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=float, default=300.0, help="solver limit per case, s")
    ap.add_argument("--skip-megatron", action="store_true")
    ap.add_argument("--skip-cases", action="store_true")
    ap.add_argument("--megatron-rows", type=int, default=6)
    ap.add_argument("--skip-partition", action="store_true")
    args = ap.parse_args()
    if not args.skip_cases:
        part1(args.timeout)
    if not args.skip_megatron:
        part2(args.megatron_rows, args.timeout)
    if not args.skip_partition:
        part3()


if __name__ == "__main__":
    main()
