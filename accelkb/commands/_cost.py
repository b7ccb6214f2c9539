"""The cost options that ``estimate`` and ``advise`` share: a user's price and facility."""

from __future__ import annotations

import argparse


def add_cost_options(parser: argparse.ArgumentParser, whose: str = "the system's") -> None:
    """``--price``, ``--kwh-price`` and ``--pue`` (checked by
    :func:`accelkb.perf.cost.estimate.check_overrides` before any work)."""
    parser.add_argument("--price", type=float, default=None, metavar="USD",
                        help=f"dollars per chip-hour instead of {whose} newest cloud price "
                        "(or purchase price) in the knowledge base")
    parser.add_argument("--kwh-price", type=float, default=None, metavar="USD",
                        help="electricity price, dollars per kWh (default: the knowledge base's "
                        "facility assumptions)")
    parser.add_argument("--pue", type=float, default=None,
                        help="power usage effectiveness of the facility (default: the knowledge "
                        "base's facility assumptions)")
