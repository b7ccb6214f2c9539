"""Publishing an output file whole or not at all, without harming what the name points to.

Every command that writes a file (``--out``, ``--figure``) writes it through :func:`publish`:
the content goes to a temporary file beside the target, which is renamed over it, so a reader
never sees half a file and a failed write leaves the old one. Two kinds of target are not
renamed over:

- a symbolic link is followed, and the file it names is replaced (``--out latest.json`` where
  ``latest.json -> run-42.json`` updates run-42.json and keeps the link);
- a device, a FIFO or a socket (``--out /dev/stdout``, a named pipe) is written through, as
  ``open(path, "w")`` would: renaming over it would replace ``/dev/null`` with a regular file.

A file that cannot be written (a read-only or full file system, no permission) is bad input
(:class:`~accelkb.errors.InputError`, exit 2) that names the option and the reason, not an
internal error.

Examples
--------
>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> publish(d / "a.txt", lambda p: p.write_text("hello"))
>>> (d / "a.txt").read_text()
'hello'
>>> publish(d / "missing" / "b.txt", lambda p: p.write_text("x"))
Traceback (most recent call last):
...
accelkb.errors.InputError: --out ...b.txt: expected an existing directory, got ...missing, ...
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from accelkb.errors import InputError


def resolve(path: str | Path, option: str = "--out") -> Path:
    """The file a write to ``path`` lands in: a symbolic link followed to its target, checked
    to be a writable place (not a directory; its directory exists).

    Raises
    ------
    InputError
        If the target is a directory or its directory does not exist (named as ``option``).
    """
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    if target.is_dir():
        raise InputError(f"{option} {path}: expected a file path, got a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{option} {path}: expected an existing directory, got {parent}, which "
                         "does not exist")
    return target


def is_special(target: Path) -> bool:
    """Whether ``target`` exists and is not a regular file (a device, FIFO or socket)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode)


def publish(path: str | Path, write: Callable[[Path], object], option: str = "--out",
            suffix: str = "") -> None:
    """Make ``path`` hold what ``write(tmp)`` writes to the path it is given, at once.

    The temporary file is ``.NAME.PID.XXXXXXXX`` beside the target, so a later write can tell a
    dead writer's leftovers (:func:`accelkb.commands._output.sweep_stale`), then ``suffix``
    (for a writer that picks its format by the extension). The result gets the mode a plain
    ``open(path, "w")`` would give it. See the module for links, devices and failures.

    Raises
    ------
    InputError
        ``path`` is a directory, its directory does not exist, or the file system refused the
        write (read-only, full, no permission): named as ``option`` with the reason.
    """
    target = resolve(path, option)
    try:
        if is_special(target):  # a device or a pipe: write through it, never rename over it
            write(target)
            return
        parent = target.parent if str(target.parent) else Path(".")
        mode = _mode_for(target)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=suffix,
                                    dir=parent)
        os.close(fd)
        tmp = Path(name)
        try:
            write(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except InputError:
        raise
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def _mode_for(target: Path) -> int:
    """The replaced file's own mode, or what the umask gives a new file."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
