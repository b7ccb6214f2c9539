"""``accelkb configure``: best parallel configuration of a model on a system, or why none exists.

Examples::

    accelkb configure --model gpt3-175b --system dgx-a100-superpod --chips 1024 --gbs 1536 --json
    accelkb configure --model llama2-70b --system groq-576 --phase inference \\
        --objective throughput --constraint precision=fp16

Exit 0 with a configuration, 1 when it is infeasible (the explanation is in the output) or the
solver found nothing in time, 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from accelkb.commands._knowledge import CHIPS_HELP, add_data_option, knowledge
from accelkb.commands._limit import seconds_option
from accelkb.errors import EXIT_BAD_INPUT, EXIT_NEGATIVE, EXIT_NO_ANSWER, EXIT_OK, InputError
from accelkb.jsonio import dumps_strict

NAME = "configure"
_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8")
#: Request fields as the user typed them, for error messages.
_OPTIONS = {"timeout_s": "--timeout", "chips": "--chips", "global_batch": "--gbs",
            "model": "--model", "system": "--system", "phase": "--phase",
            "objective": "--objective", "constraints": "--constraint"}
HELP = "find the best parallel configuration of a model on a system (Z3), or explain why none"

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
_KEYS = {"max_chips": int, "max_tp": int, "sram_only": bool, "time_budget_s": float,
         "min_tokens_per_s": float, "precision": str}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="NAME|FILE.json",
                        help="knowledge-base model name or JSON model file")
    parser.add_argument("--system", required=True, metavar="NAME|FILE.json",
                        help="knowledge-base system name or SystemSpec JSON file")
    parser.add_argument("--phase", choices=("training", "inference"), default="training")
    parser.add_argument("--chips", type=int, default=None, help="chips available; " + CHIPS_HELP)
    parser.add_argument("--gbs", type=int, default=None, help="training global batch")
    parser.add_argument("--objective", choices=("time", "throughput", "energy", "chips"),
                        default="time")
    parser.add_argument("--constraint", action="append", default=[], metavar="KEY=VALUE",
                        help=f"user constraint, KEY among {sorted(_KEYS)} (precision may be "
                        "repeated or '+'-joined, e.g. precision=fp16+int8)")
    parser.add_argument("--timeout", type=float, default=60.0, help="solver time limit, s")
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")
    add_data_option(parser)


def parse_constraints(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` items into :class:`UserConstraints` fields.

    Raises
    ------
    InputError
        For a malformed item, an unknown key or a bad value.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().lower().replace("-", "_")
        if not sep or key not in _KEYS:
            raise InputError(f"expected --constraint KEY=VALUE with KEY among {sorted(_KEYS)}, "
                             f"got {item!r}")
        kind = _KEYS[key]
        try:
            if key == "precision":
                for p in value.split("+"):
                    if p not in _PRECISIONS:
                        raise InputError(f"--constraint precision={value}: expected precisions "
                                         f"among {', '.join(_PRECISIONS)}, got '{p}'")
                out["precisions"] = tuple(out.get("precisions", ())) + tuple(value.split("+"))
            elif kind is bool:
                word = value.strip().lower()
                if word not in _TRUE + _FALSE:
                    raise InputError(f"--constraint {item}: expected {key} to be one of "
                                     f"{', '.join(_TRUE + _FALSE)}, got {value!r}")
                out[key] = word in _TRUE
            else:
                out[key] = kind(value)
        except ValueError:
            raise InputError(f"expected a {kind.__name__} for --constraint {key}, "
                             f"got {value!r}") from None
    return out


def _human(r: Any) -> str:
    lines = [f"{r.status.value}: {r.model} {r.phase} on {r.system} "
             f"({r.chips_available} chips), objective {r.objective}"]
    if r.best is not None:
        b = r.best
        lines.append(f"  best      {b.layout.text()}")
        lines.append(f"  estimate  accelkb estimate {r.phase} --model {r.model} --system "
                     f"{r.system} --chips {b.chips} --parallel '{b.layout.parallel(r.phase)}"
                     + (f",gbs={r.global_batch}'" if r.global_batch else "'"))
        lines.append(f"  time      {b.time_s:.4g} s   tokens/s {b.tokens_per_s:.4g}   "
                     f"memory/chip {b.memory_per_chip_bytes / 1e9:.2f} GB   chips {b.chips}")
        lines.append(f"  feasible  {r.feasible_count} layouts; Pareto front {len(r.pareto)}")
    for reason in r.explanation:
        lines.append(f"  - {reason.constraint.title} <{reason.constraint.iri}>")
        lines.append(f"    {reason.message}")
    if r.best is None and not r.explanation and r.message:
        lines.append(f"  {r.message}")
    lines.append(f"  solved in {r.solve_time_s:.2f} s ({r.method})")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Run the command with the user's ``--data`` files active; returns the exit code."""
    with knowledge(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    import pydantic

    from accelkb.solver.config.api import configure
    from accelkb.solver.config.model import ConfigRequest, Status, UserConstraints

    seconds_option(args.timeout, "--timeout")
    if args.gbs is not None and args.phase != "training":
        raise InputError("expected --gbs (a training global batch) only with --phase training, "
                         f"got it with --phase {args.phase}")
    try:
        req = ConfigRequest(model=args.model, system=args.system, phase=args.phase,
                            chips=args.chips, global_batch=args.gbs, objective=args.objective,
                            constraints=UserConstraints(**parse_constraints(args.constraint)),
                            timeout_s=args.timeout)
    except pydantic.ValidationError as exc:
        msgs = "; ".join(f"{_OPTIONS.get(str(e['loc'][0]), '.'.join(map(str, e['loc'])))}: "
                         f"{e['msg']} (got {e.get('input')!r})" for e in exc.errors())
        raise InputError(f"invalid configure request: {msgs}") from None
    result = configure(req)
    if result.status == Status.ERROR and not args.json:  # an error goes where errors go, not
        # into the file a `> cfg.json` redirect writes
        sys.stderr.write(f"accelkb configure: error: {result.message}\n")
        return EXIT_BAD_INPUT
    if args.json:
        sys.stdout.write(dumps_strict(result.model_dump(mode="json"), indent=2, sort_keys=True)
                         + "\n")
    else:
        sys.stdout.write(_human(result))
    if result.status == Status.ERROR:  # the knowledge base lacks what the request needs
        return EXIT_BAD_INPUT
    if result.status == Status.UNKNOWN:  # no answer within --timeout: neither a yes nor a no
        return EXIT_NO_ANSWER
    return EXIT_OK if result.status in (Status.OPTIMAL, Status.FEASIBLE) else EXIT_NEGATIVE
