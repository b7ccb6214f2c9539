"""Print the performance model's error on every published measurement shipped in perf/validation/data/.

    python bench/perf_validation.py            # all rows, table per file + summary
    python bench/perf_validation.py --quick    # sample the big files
    python bench/perf_validation.py --summary  # only the per-file median / max table
    python bench/perf_validation.py --fit      # refit the calibration constants (grid search)
    python bench/perf_validation.py --residuals  # rewrite perf/data/residuals.json (intervals)

Systems come from the knowledge base (accelkb.perf.from_kb); when that adapter is not installed
the explicit datasheet specs of tests/perf_fixtures.py stand in (a note says so).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from accelkb.perf.calibration import load_calibration
from accelkb.perf.validation import fit, residuals
from accelkb.perf.validation.others import run_all
from accelkb.perf.validation.training import FileResult, SystemResolver


def resolver() -> tuple[SystemResolver, str]:
    """The knowledge base's system resolver, or the test fixtures' explicit specs."""
    try:
        kb: Any = importlib.import_module("accelkb.perf.from_kb")
        return kb.system_spec, "knowledge base (accelkb.perf.from_kb)"
    except ModuleNotFoundError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        fixtures: Any = importlib.import_module("perf_fixtures")
        return fixtures.resolver, "explicit datasheet specs (tests/perf_fixtures.py)"


def print_file(fr: FileResult, rows: bool) -> None:
    print(f"\n## {fr.file} — {fr.metric}")
    if rows:
        print(f"{'row':<72} {'measured':>12} {'predicted':>12} {'error':>8}")
        for r in fr.rows:
            print(f"{r.label[:72]:<72} {r.measured:>12.4g} {r.predicted:>12.4g} "
                  f"{100 * r.error:>+7.1f}%")
    print(f"rows {len(fr.rows)}, skipped {len(fr.skipped)}; median |error| "
          f"{100 * fr.median_error:.1f}%, max |error| {100 * fr.max_error:.1f}%")
    if fr.skipped and rows:
        reasons = sorted({s.split(": ", 1)[-1][:90] for s in fr.skipped})
        print("skipped because: " + "; ".join(reasons[:4]))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="sample the big files")
    p.add_argument("--summary", action="store_true", help="only the per-file summary")
    p.add_argument("--fit", action="store_true", help="refit the calibration constants")
    p.add_argument("--residuals", action="store_true",
                   help="rewrite perf/data/residuals.json, the basis of every interval")
    args = p.parse_args()
    systems, where = resolver()
    cal = load_calibration()
    print(f"# accelkb.perf validation — systems from {where}")
    if args.fit:
        for step in (fit.fit_collectives, fit.fit_compute, fit.fit_inference, fit.fit_power):
            res = step(systems, cal)
            cal = cal.model_copy(update=res.values)
            print(f"{step.__name__}: {res.values}  errors (median, max): "
                  + ", ".join(f"{k}: {m:.3f}, {x:.3f}" for k, (m, x) in res.errors.items()))
        return 0
    results = run_all(systems, cal, quick=args.quick)
    if args.residuals:
        target = Path(__file__).resolve().parents[1] / "perf" / "data" / "residuals.json"
        table = residuals.summary(residuals.residuals(results))
        target.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {target}")
    if not args.summary:
        for fr in results:
            print_file(fr, rows=True)
    print("\n## Summary\n")
    print(f"{'file':<48} {'metric':<52} {'rows':>5} {'median':>8} {'max':>8}")
    for fr in results:
        print(f"{fr.file[:48]:<48} {fr.metric[:52]:<52} {len(fr.rows):>5} "
              f"{100 * fr.median_error:>7.1f}% {100 * fr.max_error:>7.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
