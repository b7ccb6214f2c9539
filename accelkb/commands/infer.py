"""``accelkb infer``: bottlenecks and ranked candidate optimizations for a workload on a system.

Examples::

    accelkb infer --workload llama2-70b-decode --system groq-576
    accelkb infer --workload gpt3-175b-training --system ipu-pod64 --json
"""

from __future__ import annotations

import argparse
import sys

from accelkb.commands._knowledge import CHIPS_HELP, add_data_option
from accelkb.errors import InputError
from accelkb.jsonio import dumps_strict

NAME = "infer"
HELP = "estimate a workload on a system and derive its bottlenecks and candidate optimizations"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workload", required=True, help="workload short name")
    parser.add_argument("--system", required=True, help="system short name")
    parser.add_argument("--chips", type=int, default=None, help=CHIPS_HELP)
    parser.add_argument("--parallel", default=None, metavar="K=V,...",
                        help="configuration to estimate instead of the default")
    add_data_option(parser)
    parser.add_argument("--json", action="store_true", help="the InferenceReport as JSON")


def run(args: argparse.Namespace) -> int:
    from accelkb.ontology.kb import KnowledgeBase
    from accelkb.rules import infer

    if args.chips is not None and args.chips < 1:
        raise InputError(f"--chips: expected a positive number of chips, got {args.chips}")
    kb = KnowledgeBase(args.data)
    report = infer(kb, args.workload, args.system, args.chips, parallel=args.parallel)
    if args.json:
        sys.stdout.write(dumps_strict(report.model_dump(mode="json"), indent=2, sort_keys=True)
                         + "\n")
        return 0
    lines = [f"{report.workload} on {report.system}: {report.chips} chips, "
             f"{report.configuration}"]
    lines += [f"  note: {n}" for n in report.estimate_notes]
    for f in report.findings:
        lines.append(f"- {f.label} [{f.rule}] {f.iri}")
        lines.append(f"    {f.explanation}")
        for c in f.candidates:
            lines.append(f"    {c.rank}. {c.label} ({c.status}, score {c.score:.3g})"
                         if c.score is not None else f"    -. {c.label} ({c.status})")
    if not report.findings:
        lines.append("no findings")
    lines.append(f"rules: {len(report.fixpoint.order)}, passes: {report.fixpoint.passes}, "
                 f"new triples: {report.fixpoint.new_triples}, derivations: "
                 f"{report.fixpoint.derivations}, store: {report.store}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
