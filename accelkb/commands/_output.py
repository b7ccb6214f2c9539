"""Writing a command's output file (not a command: the CLI skips modules starting with ``_``).

The file appears whole or not at all: the text goes to a temporary file beside the target,
which is renamed over it. The result has the mode a plain ``open(path, "w")`` would give it
(the umask, or the replaced file's own mode), not the temporary file's 0600.

The temporary file is removed when the write fails or the process is stopped (SIGTERM and
Ctrl-C unwind through it: see :func:`accelkb.cli.main`). A ``kill -9`` cannot be caught, so
the name carries the writer's process id, ``.NAME.PID.XXXXXXXX``, and the next write to the
same target removes the temporary files whose process no longer runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from accelkb.files import publish, resolve


def check_target(path: str, option: str = "--out") -> Path:
    """``path`` as a place a file can be written, checked before any work is done (a command
    with two outputs must not write the first and then refuse the second); a symbolic link is
    followed (:func:`accelkb.files.resolve`).

    Raises
    ------
    InputError
        If ``path`` is a directory or its directory does not exist (named as ``option``).
    """
    return resolve(path, option)


def write_atomically(path: str, text: str, option: str = "--out") -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`accelkb.files.publish`).

    Raises
    ------
    InputError
        If ``path`` is a directory, its directory does not exist, or the file system refuses
        the write (named as ``option``).
    """
    sweep_stale(resolve(path, option))
    publish(path, lambda p: p.write_text(text, encoding="utf-8"), option)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it runs
        return True
    return True


def sweep_stale(target: Path) -> list[Path]:
    """Remove the temporary files of writes to ``target`` whose process is gone; returns them.

    Only names of the form ``.NAME.PID.XXXXXXXX`` are touched, where PID is not a running
    process: a write in progress elsewhere keeps its file.
    """
    removed: list[Path] = []
    parent = target.parent if str(target.parent) else Path(".")
    head = f".{target.name}."
    try:
        names = [p for p in parent.iterdir() if p.name.startswith(head)]
    except OSError:
        return removed
    for candidate in names:
        pid, dot, rest = candidate.name[len(head):].partition(".")
        if not (dot and pid.isdigit() and len(rest) == 8) or _running(int(pid)):
            continue
        try:
            candidate.unlink()
            removed.append(candidate)
        except OSError:
            continue
    return removed
