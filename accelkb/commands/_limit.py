"""A wall-clock limit for work that runs in this process and cannot be told to stop (rdflib's
SPARQL evaluation): a ``SIGALRM`` timer interrupts it between two bytecodes.

Only the main thread receives signals; elsewhere (a command run from a worker thread) the limit
is not enforced, and :func:`wall_clock_limit` says so by yielding ``False``.

Examples
--------
>>> import time
>>> try:
...     with wall_clock_limit(0.05):
...         while True:
...             time.sleep(0.01)
... except TimeLimitReached as exc:
...     print(exc)
no answer within 0.05 s
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from accelkb.errors import InputError

#: After the limit, the interval at which the timer repeats until the body has unwound.
REPEAT_S = 0.05


class TimeLimitReached(Exception):
    """The limit ran out before the work finished: no answer, which is not a negative one."""


#: The longest time limit a command takes: a week. Solvers and timers hold limits as
#: integers (Z3: milliseconds in 32 bits, 49 days), and 1e308 s overflowed them (exit 70).
MAX_SECONDS = 7 * 86400.0


def seconds_option(value: float, option: str) -> float:
    """``value`` if it is a number of seconds > 0 and at most :data:`MAX_SECONDS`, else an
    InputError naming ``option``.

    >>> seconds_option(1e308, "--timeout")
    Traceback (most recent call last):
    ...
    accelkb.errors.InputError: expected --timeout > 0 and at most 604800 seconds (a week), got 1e+308
    """
    if not 0 < value <= MAX_SECONDS:  # NaN fails both comparisons
        raise InputError(f"expected {option} > 0 and at most {MAX_SECONDS:g} seconds (a week), "
                         f"got {value:g}")
    return value


@contextmanager
def wall_clock_limit(seconds: float) -> Iterator[bool]:
    """Raise :class:`TimeLimitReached` in the body once ``seconds`` have passed."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        # a handler that runs inside a garbage-collector callback or a __del__ has its
        # exception printed and dropped: ask again shortly, until the body has unwound
        signal.setitimer(signal.ITIMER_REAL, REPEAT_S)
        raise TimeLimitReached(f"no answer within {seconds:g} s")

    hook = sys.unraisablehook

    def quiet(unraisable: Any) -> None:  # the dropped exception of such a callback: not news
        if not isinstance(unraisable.exc_value, TimeLimitReached):
            hook(unraisable)

    previous = signal.signal(signal.SIGALRM, expire)
    sys.unraisablehook = quiet
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook


#: The most tokens a training run is asked to count: 1e16, a thousand times the largest
#: published (Llama 3's 15.6e12); 1e308 made every time and cost infinite (exit 70 in --json).
MAX_TOKENS = 1e16


def tokens_option(value: float | None) -> float | None:
    """``--tokens`` if given as a positive number up to :data:`MAX_TOKENS`, else InputError.

    >>> tokens_option(float("nan"))
    Traceback (most recent call last):
    ...
    accelkb.errors.InputError: --tokens: expected a positive number of at most 1e+16, got nan
    """
    if value is not None and not 0 < value <= MAX_TOKENS:  # NaN fails both comparisons
        raise InputError(f"--tokens: expected a positive number of at most {MAX_TOKENS:g}, got "
                         f"{value:g}")
    return value
