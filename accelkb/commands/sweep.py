"""``accelkb sweep SPEC --out FILE``: a design-space sweep, every point solved like
``configure``; ``accelkb sweep --summary FILE`` prints its frontier and best points;
``accelkb sweep --schema`` prints the spec's JSON schema."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from accelkb.errors import (
    EXIT_BAD_INPUT,
    EXIT_NEGATIVE,
    EXIT_NO_ANSWER,
    EXIT_OK,
    InputError,
)
from accelkb.files import resolve

NAME = "sweep"
HELP = "sweep models x systems x chips x precisions x goals x hardware what-ifs into CSV/Parquet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", nargs="?", metavar="SPEC.yaml|SPEC.toml",
                        help="the sweep specification (see --schema)")
    parser.add_argument("--out", metavar="FILE.csv|FILE.parquet",
                        help="results file; a killed sweep rerun with the same --out resumes")
    parser.add_argument("--engine", choices=("local", "ray"), default="local",
                        help="local process pool (default) or a Ray cluster")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: the CPUs, at most 8)")
    parser.add_argument("--address", default=None, help="with --engine ray: the cluster's "
                        "address (default: start a local Ray instance)")
    parser.add_argument("--summary", metavar="FILE", help="print the frontier and the best "
                        "point per system of a results file")
    parser.add_argument("--figure", metavar="FILE.svg|FILE.png", help="also draw the Pareto "
                        "figure (time vs cost, coloured by energy)")
    parser.add_argument("--schema", action="store_true", help="print the spec's JSON schema")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from accelkb.sweep import summary
    from accelkb.sweep.spec import SweepSpec, read_spec
    from accelkb.sweep.store import check_outcomes, check_target, read_rows

    if args.schema:
        json.dump(SweepSpec.model_json_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.figure and not args.figure.endswith((".svg", ".png")):
        raise InputError(f"expected --figure ending in .svg or .png, got '{args.figure}'")
    if args.summary:
        path = Path(args.summary)
        if not path.is_file():
            raise InputError(f"expected --summary to name a results file, got '{path}'")
        rows = read_rows(path)
        check_outcomes(path, rows)
        sys.stdout.write(summary.text(rows))
        if args.figure:
            summary.figure(rows, Path(args.figure))
        return 0
    if not args.spec or not args.out:
        raise InputError("expected SPEC and --out FILE (or --summary FILE, or --schema)")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"expected --workers >= 1, got {args.workers}")
    if args.address and args.engine != "ray":
        raise InputError("expected --address only with --engine ray")
    out = Path(args.out)
    check_target(out)
    if args.figure:  # before the sweep, not after hours of it
        resolve(args.figure, "--figure")
    spec = read_spec(args.spec)
    from accelkb.sweep.run import run_sweep

    workers = args.workers or min(8, os.cpu_count() or 1)
    done = run_sweep(spec, out, engine=args.engine, workers=workers, address=args.address,
                     progress=False if args.no_progress else None)
    states = ", ".join(f"{n} {s}" for s, n in sorted(done.statuses.items()))
    sys.stdout.write(f"{out}: {done.points} points ({done.solved} solved now, {done.reused} "
                     f"from earlier runs) in {done.seconds:.1f} s on {args.engine} x{workers}: "
                     f"{states}\n")
    if args.figure:
        summary.figure(read_rows(out), Path(args.figure))
    return exit_code(done.statuses)


def exit_code(statuses: dict[str, int]) -> int:
    """0 where some point was solved; else 1 where some was unsatisfiable (the answer is no),
    3 where some ran out of time (no answer: never "infeasible"), 2 where every point was an
    error (a spec the points cannot run, e.g. more chips than any system joins).

    >>> exit_code({"OPTIMAL": 3, "UNKNOWN": 1}), exit_code({"UNSATISFIABLE": 2, "UNKNOWN": 1})
    (0, 1)
    >>> exit_code({"UNKNOWN": 4}), exit_code({"ERROR": 4})
    (3, 2)
    """
    if statuses.get("OPTIMAL", 0) + statuses.get("FEASIBLE", 0):
        return EXIT_OK
    if statuses.get("UNSATISFIABLE", 0):
        return EXIT_NEGATIVE
    if statuses.get("UNKNOWN", 0):
        return EXIT_NO_ANSWER
    return EXIT_BAD_INPUT
