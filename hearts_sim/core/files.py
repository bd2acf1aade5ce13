"""Writing results so that a failure (a full disk, a spent quota, a kill, a power cut) never
leaves half a file: a records part, a manifest, a level file, a report's figure, a network's
weights."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` afterwards, or what it held before: never half a file. The bytes
    go to a hidden temporary beside it (``.NAME.tmp``: no glob for ``*.parquet``, ``*.toml`` or
    ``*.npz`` and no Parquet dataset reads it), reach the disk (``fsync``), and only then replace
    ``path`` in one step, whose entry in the folder is synced in turn: after a power cut the file
    is the old one or the new one, not the empty or truncated file that a rename ahead of the
    data can leave on ext4, XFS or btrfs. Raises the ``OSError`` of a failed write, with the
    temporary removed."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        _sync(temporary, os.O_RDWR)  # the data, before the name points at it
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # a folder that cannot be opened or synced (Windows, NFS)
        _sync(path.parent, os.O_RDONLY)  # the rename itself


def _sync(path: Path, mode: int) -> None:
    """Flush what the system holds of ``path`` (a file or a folder) to the disk."""
    descriptor = os.open(path, mode)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


__all__ = ["write_atomically"]
