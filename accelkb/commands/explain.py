"""``accelkb explain``: why a finding or candidate holds, down to asserted facts and sources.

Derivations live in memory, so the command first runs inference for the (workload, system) the
fact belongs to, then explains the fact (IRIs are deterministic: ``accelkb infer`` prints them).
Without an IRI it explains every finding of the pair.

Examples::

    accelkb explain --workload gpt3-175b-training --system ipu-pod64
    accelkb explain https://w3id.org/accelkb/data/estimate-...-finding-memory-capacity-bound \\
        --workload gpt3-175b-training --system ipu-pod64 --json
"""

from __future__ import annotations

import argparse
import sys

from accelkb.commands._knowledge import CHIPS_HELP, add_data_option
from accelkb.errors import InputError
from accelkb.jsonio import dumps_strict

NAME = "explain"
HELP = "explain a derived finding or candidate down to asserted facts and their sources"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("iri", nargs="?", help="IRI of the finding, candidate or other derived "
                        "node (default: every finding of the pair)")
    parser.add_argument("--workload", help="workload short name (runs inference first)")
    parser.add_argument("--system", help="system short name (runs inference first)")
    parser.add_argument("--chips", type=int, default=None, help=CHIPS_HELP)
    parser.add_argument("--parallel", default=None, metavar="K=V,...",
                        help="configuration to estimate instead of the default")
    add_data_option(parser)
    parser.add_argument("--json", action="store_true", help="the derivation tree as JSON")


def run(args: argparse.Namespace) -> int:
    from accelkb.ontology.kb import KnowledgeBase
    from accelkb.rules import explain, infer

    if bool(args.workload) != bool(args.system):
        raise InputError("expected both --workload and --system (or neither), got one")
    if not args.iri and not args.workload:
        raise InputError("expected an IRI or --workload and --system, got neither")
    if args.chips is not None and args.chips < 1:
        raise InputError(f"--chips: expected a positive number of chips, got {args.chips}")
    if args.iri and (not args.iri.strip() or any(c in args.iri for c in ' <>"{}|\\^`')):
        raise InputError(f"expected an IRI (no spaces or <>\"{{}}|\\^` characters), got "
                         f"{args.iri!r}")
    kb = KnowledgeBase(args.data)
    iris = [args.iri] if args.iri else []
    if args.workload:
        report = infer(kb, args.workload, args.system, args.chips, parallel=args.parallel)
        if not iris:
            iris = [f.iri for f in report.findings]
    trees = [explain(kb, iri) for iri in iris]
    if args.json:
        data = [t.model_dump(mode="json") for t in trees]
        sys.stdout.write(dumps_strict(data if len(data) != 1 else data[0], indent=2,
                                    sort_keys=True) + "\n")
    else:
        if not trees:
            sys.stdout.write("no findings\n")
        sys.stdout.write("\n\n".join(t.render() for t in trees) + "\n")
    return 0
