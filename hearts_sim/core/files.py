"""Writing results so that a failure (a full disk, a spent quota, a kill) never leaves half a file:
a records part, a manifest, a level file, a report's figure, a network's weights."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` afterwards, or what it held before: never half a file. The bytes
    go to a hidden temporary beside it (``.NAME.tmp``: no glob for ``*.parquet``, ``*.toml`` or
    ``*.npz`` and no Parquet dataset reads it), which then replaces ``path`` in one step. Raises
    the ``OSError`` of a failed write, with the temporary removed."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


__all__ = ["write_atomically"]
