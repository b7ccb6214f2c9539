"""The project's own exception types.

Every error a user can cause is an :class:`InputError` (CLI exit code 2). Messages say what was
expected, what was got and where. A negative answer (e.g. an infeasible configuration) is not an
error: it is a result with a status, and the CLI exits 1 for it; where an estimate cannot return
one (a layout its chips cannot hold) it raises :class:`InfeasibleError`, which the CLI also
answers with 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Exit codes of the command line, one meaning each.
EXIT_OK = 0
EXIT_NEGATIVE = 1
EXIT_BAD_INPUT = 2
#: No answer within the time limit (UNKNOWN), which is neither a yes nor a no.
EXIT_NO_ANSWER = 3
#: An unexpected exception: never 1, which means "the answer is negative" (EX_SOFTWARE).
EXIT_INTERNAL = 70


class AccelkbError(Exception):
    """Base class of every exception accelkb raises on purpose."""


class InputError(AccelkbError):
    """Bad user input: a file, a name, a parameter. The CLI reports it and exits 2."""


class InfeasibleError(InputError):
    """A well-formed request the hardware cannot run: a layout whose memory needs exceed what its
    chips hold. A negative answer, not a mistake in the input: the CLI says why and exits 1 (as
    ``configure`` does for an unsatisfiable request). It derives from :class:`InputError` so that
    every search passing over a layout that does not fit goes on doing so.

    Examples
    --------
    >>> isinstance(InfeasibleError("configuration does not fit"), InputError)
    True
    """


class ValidationError(InputError):
    """Knowledge that fails validation. ``violations`` lists every problem found, not just the first.

    Examples
    --------
    >>> e = ValidationError("2 violations", ["a", "b"])
    >>> e.violations
    ['a', 'b']
    """

    def __init__(self, message: str, violations: list[str] | None = None) -> None:
        self.violations = list(violations or [])
        text = message
        if self.violations:
            text += "\n" + "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(text)


class UnknownNameError(InputError):
    """A short name (chip, system, model, workload) that the knowledge base does not know.

    Examples
    --------
    >>> str(UnknownNameError("system", "ipu-pod46", ["ipu-pod16", "ipu-pod64", "dgx-a100"]))
    "unknown system 'ipu-pod46'; closest known: ipu-pod64, ipu-pod16"
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        known = sorted(set(known))
        self.suggestions = difflib.get_close_matches(name, known, n=5, cutoff=0.4)
        hint = ", ".join(self.suggestions) if self.suggestions else ", ".join(known[:12])
        label = "closest known" if self.suggestions else "known"
        super().__init__(f"unknown {kind} '{name}'; {label}: {hint}")
