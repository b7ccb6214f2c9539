"""The ``accelkb`` command line.

Exit codes: 0 ok, 1 the answer is negative (e.g. infeasible), 2 bad input, 3 no answer within
the time limit (UNKNOWN: a timeout is never "infeasible"), 70 an internal error (a bug: one
line saying so, the traceback only with ``--debug``). A user mistake never shows a
traceback: every :class:`~accelkb.errors.InputError` becomes one clear message on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, ModuleType

from accelkb import commands
from accelkb.errors import (  # noqa: F401 (re-exported: the CLI's exit codes)
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_NEGATIVE,
    EXIT_NO_ANSWER,
    EXIT_OK,
    InfeasibleError,
    InputError,
)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message but use our prefix."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"accelkb: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def _command_modules() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"{commands.__name__}.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="accelkb", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


class _Terminated(BaseException):
    """SIGTERM arrived: unwind (removing temporary files on the way) and exit 128 + 15."""


@contextmanager
def _terminate_unwinds() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` in the main thread, so that ``finally`` and
    ``except BaseException`` blocks (the temporary file of an ``--out`` write) run, where the
    default action would end the process on the spot."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (also used as the console-script entry point)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (exit 2) and --help (exit 0)
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_BAD_INPUT
    try:
        with _terminate_unwinds():
            return int(args._run(args))
    except _Terminated:
        sys.stderr.write("accelkb: terminated\n")
        return 143
    except InfeasibleError as exc:  # a well-formed request the hardware cannot run: "no"
        sys.stderr.write(f"accelkb {args.command}: infeasible: {exc}\n")
        return EXIT_NEGATIVE
    except InputError as exc:
        sys.stderr.write(f"accelkb {args.command}: error: {exc}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `accelkb query ... | head`: the reader left, not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        sys.stderr.write("accelkb: interrupted\n")
        return 130
    except (RecursionError, MemoryError) as exc:
        sys.stderr.write(f"accelkb {args.command}: error: the input is too large or too deeply "
                         f"nested to process ({type(exc).__name__})\n")
        return EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, said as one
        if args.debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"accelkb {args.command}: internal error: {type(exc).__name__}: {exc}\n"
                         "  this is a bug in accelkb, not in your input; please report it with "
                         "the command line (--debug prints the traceback)\n")
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
