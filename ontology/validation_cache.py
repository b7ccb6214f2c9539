"""Remember which exact sets of files passed validation, so the CLI does not re-run SHACL.

The key is a SHA-256 over accelkb's and pySHACL's versions, the shapes and every source file's
name and bytes: any change to any of them means a new validation. Only successes are cached, as
empty marker files in ``$ACCELKB_CACHE_DIR`` (default ``~/.cache/accelkb/validated``). Set
``ACCELKB_NO_CACHE=1`` to always validate. A cache that cannot be written is silently skipped.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def _directory() -> Path:
    root = os.environ.get("ACCELKB_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "accelkb"
    return base / "validated"


def key(sources: Iterable[tuple[str, bytes]], shapes: Iterable[tuple[str, bytes]]) -> str:
    """A content hash of everything validation depends on."""
    h = hashlib.sha256()
    h.update(f"accelkb={_version('accelkb')};pyshacl={_version('pyshacl')}".encode())
    for group in (shapes, sources):
        for name, content in group:
            h.update(Path(name).name.encode() + b"\0" + hashlib.sha256(content).digest())
    return h.hexdigest()


def known_valid(digest: str) -> bool:
    """True if exactly these files passed validation before."""
    if os.environ.get("ACCELKB_NO_CACHE"):
        return False
    try:  # an unreadable cache (mode 000, no home directory) is no cache: validate again
        return (_directory() / digest).is_file()
    except (OSError, RuntimeError):
        return False


def remember_valid(digest: str) -> None:
    """Record a passed validation (best effort)."""
    if os.environ.get("ACCELKB_NO_CACHE"):
        return
    try:
        d = _directory()
        d.mkdir(parents=True, exist_ok=True)
        (d / digest).touch()
    except (OSError, RuntimeError):  # RuntimeError: Path.home() without a home directory
        pass
