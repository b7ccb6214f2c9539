"""The ``--data`` option of every command that reads the knowledge base (not a command: the CLI
skips modules whose name starts with ``_``).

A command that resolves names through the performance model (``estimate``, ``configure``,
``schedule --system``) runs inside :func:`knowledge`, so a chip, system or model defined in the
user's files resolves there exactly as a bundled one does.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

CHIPS_HELP = ("resize the system to N chips; more than it has run on the knowledge base's system "
              "built of it (dgx-h100: dgx-h100-superpod), or are refused when there is none")

DATA_HELP = ("your own Turtle/TriG (a chip, system or model), validated together with the "
             "bundled knowledge, all or nothing; repeatable")


def add_data_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--data FILE`` (repeatable) to ``parser``."""
    parser.add_argument("--data", action="append", default=[], metavar="FILE.ttl", help=DATA_HELP)


@contextmanager
def knowledge(args: argparse.Namespace) -> Iterator[None]:
    """Within the block, names resolve against the bundled knowledge plus ``args.data``.

    Raises
    ------
    InputError
        When a file cannot be read, parsed or validated (every violation listed).
    """
    if not getattr(args, "data", None):
        yield
        return
    from accelkb.knowledge import KnowledgeBase
    from accelkb.perf.from_kb import using

    with using(KnowledgeBase(args.data)):
        yield


RESULTS_HELP = ("a results file of accelkb sweep (.csv or .parquet): its rows go into the "
                "knowledge base's results graph as ak:SweepPoint nodes, checked with SHACL, "
                "all or nothing; repeatable")


def add_results_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--results FILE`` (repeatable) to ``parser``."""
    parser.add_argument("--results", action="append", default=[], metavar="FILE.parquet",
                        help=RESULTS_HELP)


def load_results(kb: object, files: list[str]) -> int:
    """Assert the rows of each sweep results file into ``kb``'s results graph; the points added.

    Raises
    ------
    InputError
        A file that is missing, not a results file, or refused by the shapes.
    """
    from pathlib import Path

    from accelkb.errors import InputError
    from accelkb.sweep.rdf import assert_rows
    from accelkb.sweep.store import FORMATS, read_rows

    added = 0
    for name in files:
        path = Path(name)
        if path.suffix not in FORMATS:
            raise InputError(f"--results {name}: expected a .csv or .parquet file of accelkb sweep")
        if not path.is_file():
            raise InputError(f"--results {name}: no such file")
        added += assert_rows(kb, read_rows(path), what=name)
    return added
