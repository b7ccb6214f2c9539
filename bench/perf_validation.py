"""Print the performance model's error on every published measurement shipped in perf/validation/data/
and every benchmark result stored in the knowledge base (accelkb.perf.validation.published).

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
import math
import sys
from pathlib import Path
from typing import Any

from accelkb.perf.calibration import load_calibration
from accelkb.perf.validation import fit, published, residuals
from accelkb.perf.validation.suite import run_all
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
    if fr.skipped and rows and not fr.rows:  # the stored results not validated: each, why
        for line in fr.skipped:
            print(f"  skipped {line}")
    elif fr.skipped and rows:
        reasons = sorted({s.split(": ", 1)[-1][:90] for s in fr.skipped})
        print("skipped because: " + "; ".join(reasons[:4]))


def print_vendors(results: list[FileResult]) -> None:
    """One line per vendor and regime: rows, median and max |error|, the share of rows whose
    measurement lies inside the interval the model gives (in-sample for the rows that are the
    interval's basis: the measured ones where a group has three or more; out of sample for the
    claims left out of it), and the published orderings reproduced."""
    from accelkb.perf.uncertainty import interval, residual_table

    table = residual_table()
    found = residuals.residuals(results)
    print("\n## Per vendor and regime\n")
    print("inside: the share of rows inside the interval the model states (in-sample for the "
          "rows it rests on;\nclaims a group with 3+ measured rows leaves out are out of sample); "
          "held-out: inside the\ninterval the group's other basis rows would give (leave one "
          "out)\n")
    print(f"{'vendor':<11} {'regime':<10} {'kind':<9} {'rows':>5} {'median':>8} {'max':>8} "
          f"{'inside':>7} {'held-out':>9}")
    groups: dict[tuple[str, str, str], list[residuals.Residual]] = {}
    regimes: dict[tuple[str, str], list[residuals.Residual]] = {}
    for r in found:
        groups.setdefault((r.vendor, r.regime, r.kind), []).append(r)
        regimes.setdefault((r.vendor, r.regime), []).append(r)
    pooled = float(table.get("pooled_abs_q95") or 1.0)
    held: dict[int, bool] = {}
    for rows in regimes.values():  # the interval's basis rows left out one at a time
        basis = residuals.basis_rows(rows)
        held.update({id(r): ok for r, ok in zip(
            basis, residuals.loo_inside([x.r for x in basis], pooled), strict=True)})
        others = [x.r for x in basis]  # a row outside the basis (a claim) against all of it
        held.update({id(r): residuals.loo_inside([*others, r.r], pooled)[-1]
                     for r in rows if all(r is not b for b in basis)})
    for (vendor, regime, _kind), rows in sorted(groups.items()):
        errors = sorted(abs(r.error) for r in rows)  # |predicted / measured - 1|, own metric
        iv = interval(1.0, "time", vendor, regime, table)
        inside = sum(math.log(iv.low) - 1e-9 <= r.r <= math.log(iv.high) + 1e-9 for r in rows)
        loo = sum(held[id(r)] for r in rows)
        print(f"{vendor:<11} {regime:<10} {rows[0].kind:<9} {len(rows):>5} "
              f"{100 * errors[len(errors) // 2]:>7.1f}% {100 * errors[-1]:>7.1f}% "
              f"{100 * inside / len(rows):>6.0f}% {100 * loo / len(rows):>8.0f}%")
    orderings = [(fr.metric.split()[0], row) for fr in results
                 if fr.file == "mlperf_training_ipu_vs_dgx_bert_resnet.csv" for row in fr.rows]
    kept = sum((row.measured > 1) == (row.predicted > 1) for _, row in orderings)
    print(f"\norderings IPU-POD vs DGX A100 (MLPerf time to train): {kept} of {len(orderings)} "
          "reproduced")
    for what, row in orderings:
        ok = "yes" if (row.measured > 1) == (row.predicted > 1) else "NO"
        print(f"  {what:<10} {row.label:<44} measured {row.measured:.3g}, model "
              f"{row.predicted:.3g}: {ok}")
    offline = [row for fr in results if fr.file == published.FILE for row in fr.rows
               if "offline" in row.label and "[AggregateTokensPerSecond]" in row.label]
    pairs = [(a, b) for i, a in enumerate(offline) for b in offline[i + 1:]]
    same = [(a, b) for a, b in pairs
            if (a.measured > b.measured) == (a.predicted > b.predicted)]
    print(f"\norderings of MLPerf Inference llama2-70b Offline throughput (whole submissions): "
          f"{len(same)} of {len(pairs)} pairs reproduced")
    for a, b in pairs:
        if (a, b) not in same:
            print(f"  NOT: {a.label.split()[0]} ({a.measured:.4g} measured, {a.predicted:.4g} "
                  f"model) vs {b.label.split()[0]} ({b.measured:.4g}, {b.predicted:.4g})")


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
        for step in (fit.fit_collectives, fit.fit_compute, fit.fit_serving_reserve,
                     fit.fit_inference, fit.fit_power,
                     fit.fit_dataflow, fit.fit_deterministic, fit.fit_graphcore):
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
    print_vendors(results)
    print("\n## Summary\n")
    print(f"{'file':<48} {'metric':<52} {'rows':>5} {'median':>8} {'max':>8}")
    for fr in results:
        if not fr.rows:
            continue
        print(f"{fr.file[:48]:<48} {fr.metric[:52]:<52} {len(fr.rows):>5} "
              f"{100 * fr.median_error:>7.1f}% {100 * fr.max_error:>7.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
