"""Writing a command's output file (not a command: the CLI skips modules starting with ``_``).

The file appears whole or not at all: the text goes to a temporary file beside the target,
which is renamed over it. The result has the mode a plain ``open(path, "w")`` would give it
(the umask, or the replaced file's own mode), not the temporary file's 0600.
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


def write_atomically(path: str, text: str, option: str = "--out") -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename.

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
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
