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
import stat
import tempfile
from pathlib import Path

from accelkb.errors import InputError


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def check_target(path: str, option: str = "--out") -> Path:
    """``path`` as a place a file can be written, checked before any work is done (a command
    with two outputs must not write the first and then refuse the second).

    Raises
    ------
    InputError
        If ``path`` is a directory or its directory does not exist (named as ``option``).
    """
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{option} {path}: expected a file path, got a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{option} {path}: expected an existing directory, got {parent}, which "
                         "does not exist")
    return target


def write_atomically(path: str, text: str, option: str = "--out") -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    Raises
    ------
    InputError
        If ``path`` is a directory or its directory does not exist (named as ``option``).
    """
    target = check_target(path, option)
    parent = target.parent if str(target.parent) else Path(".")
    mode = _mode_for(target)
    sweep_stale(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
