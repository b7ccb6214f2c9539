"""Points per second of ``accelkb sweep`` on this machine: the local engine with 1 and 2
workers and Ray with 2 workers, as ratios from one run, and the per-point cost split (solve,
estimate, I/O).

Usage: ``python bench/sweep_bench.py [SPEC]`` (default: examples/sweeps/inference-1000.yaml).
Each engine starts from an empty output file, so every point is solved in each run; the rows
of all runs are compared with each other (timing columns left out).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from accelkb.sweep import read_spec, run_sweep
from accelkb.sweep.store import read_rows

ROOT = Path(__file__).resolve().parents[1]
TIMING = {"solve_seconds", "estimate_seconds", "worker"}


def main(argv: list[str]) -> int:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "sweeps" / "inference-1000.yaml"
    spec = read_spec(spec_path)
    runs = [("local", 1), ("local", 2)]
    try:
        import ray  # noqa: F401

        runs.append(("ray", 2))
    except ImportError:
        print("ray not installed: pip install 'accelkb[ray]' to time it")
    results = {}
    stable: dict[str, list[dict[str, object]]] = {}
    with tempfile.TemporaryDirectory() as d:
        for engine, workers in runs:
            out = Path(d) / f"{engine}-{workers}.csv"
            run = run_sweep(spec, out, engine=engine, workers=workers, progress=False)
            rows = read_rows(out)
            key = f"{engine} x{workers}"
            results[key] = (run, rows)
            stable[key] = [{k: v for k, v in r.items() if k not in TIMING} for r in rows]
    base = results["local x1"][0]
    print(f"spec {spec_path.name}: {base.points} points, statuses {base.statuses}")
    print(f"{'engine':<10} {'wall s':>8} {'points/s':>9} {'vs local x1':>12}  same rows")
    first = stable["local x1"]
    for key, (run, _) in results.items():
        rate = run.points / run.seconds
        print(f"{key:<10} {run.seconds:8.1f} {rate:9.2f} {base.seconds / run.seconds:11.2f}x  "
              f"{stable[key] == first}")
    run, rows = results["local x1"]
    solve = sum(float(r["solve_seconds"] or 0) for r in rows)  # type: ignore[arg-type]
    est = sum(float(r["estimate_seconds"] or 0) for r in rows)  # type: ignore[arg-type]
    other = max(0.0, run.seconds - solve - est - run.io_seconds)
    n = run.points
    print(f"per point (local x1): solve {1e3 * solve / n:.1f} ms, estimate {1e3 * est / n:.1f} "
          f"ms, I/O {1e3 * run.io_seconds / n:.2f} ms, other (spec check, knowledge base, "
          f"grid) {1e3 * other / n:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
