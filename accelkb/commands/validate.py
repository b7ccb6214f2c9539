"""``accelkb validate [FILES]``: check the bundled knowledge plus your files with SHACL."""

from __future__ import annotations

import argparse
import json
import sys

from accelkb.ontology.kb import KnowledgeBase

NAME = "validate"
HELP = "validate the bundled knowledge plus Turtle/TriG FILES (exit 2 listing every violation)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="extra Turtle or TriG files")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def run(args: argparse.Namespace) -> int:
    kb = KnowledgeBase(args.files)  # raises ValidationError (exit 2) listing every violation
    counts = kb.counts()
    if args.json:
        json.dump({"valid": True, "load_seconds": round(kb.load_seconds, 3), "counts": counts},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    what = " + ".join(["bundled knowledge", *args.files])
    sys.stdout.write(f"valid: {what} ({kb.load_seconds:.2f} s to load and validate)\n")
    for key, value in counts.items():
        sys.stdout.write(f"  {key:<18} {value}\n")
    return 0
