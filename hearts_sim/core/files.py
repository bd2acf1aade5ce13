"""Writing results so that a failure (a full disk, a spent quota, a kill, a power cut) never
leaves half a file: a records part, a manifest, a level file, a report's figure, a network's
weights; and so that two processes never write one run at once."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from hearts_sim.core.errors import InputError

try:
    import fcntl
except ImportError:  # Windows: no flock, so no lock (below)
    fcntl = None  # type: ignore[assignment]


def unwritable(folder: Path) -> str | None:
    """Why no file can be created in ``folder`` (None if one can), found by creating one: a
    permission check (``os.access``) passes for root everywhere, ``/proc`` and a read-only mount
    included, and the refusal came after the work whose results it lost."""
    try:
        descriptor, name = tempfile.mkstemp(dir=folder, prefix=".write-test.")
        os.close(descriptor)
        os.unlink(name)
    except OSError as error:
        if error.errno == errno.ENOENT and folder.is_dir():  # /proc: "No such file or directory"
            return "no file can be created in it"
        return error.strerror or str(error)
    return None


def taken_out(out: Path) -> str:
    """Why ``--out`` ``out``, which exists, is no folder for a new run: a file (it was called "not
    an empty directory", as if a folder) or a folder with something in it."""
    if not out.is_dir():
        return f"--out {out} is a file, not a folder: choose a new or empty folder"
    return f"--out {out} exists and is not an empty directory"


def broken_link(path: Path) -> str | None:
    """What is wrong with ``path`` when it is a symbolic link that leads nowhere (to a missing
    file, or round in a loop); None otherwise. Creating a folder there failed with "File exists"."""
    if not path.is_symlink() or path.exists():
        return None
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python 3.11's word for a loop (3.13: OSError ELOOP)
        return f"{path} is a symbolic link that loops"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"{path} is a symbolic link that loops"
    return f"{path} is a symbolic link to {os.readlink(path)}, which does not exist"


def shell_path(path: Path | str) -> str:
    """``path`` as a word of a command line printed to be pasted (``resume with: ...``): quoted
    for the shell where it must be (``stop me``), and ``./`` before a relative path that starts
    with ``-``, which a command would read as an option."""
    text = str(path)
    return shlex.quote(f"./{text}" if text.startswith("-") else text)


def toml_text(path: Path) -> str:
    """A TOML file's text: UTF-8, TOML's encoding, whatever the locale says (a level's
    description in ``é`` failed under ``LC_ALL=C``), and a byte-order mark, which Notepad writes
    and ``tomllib`` took for an invalid statement, dropped."""
    return path.read_bytes().decode("utf-8-sig")


def arrow_path(path: Path | str) -> str:
    """``path`` as pyarrow must be given it: absolute. pyarrow reads a relative path whose first
    part holds a colon (``run:1``) as a URI and refuses it, and expands a leading ``~``, so the
    records of ``./~/runs/a`` were read from ``$HOME/runs/a``: another run's, without a word.
    pyarrow takes names as UTF-8: a name's bytes on disk (``disk_bytes``) are given as the
    characters they are in UTF-8 (under ``LC_ALL=C PYTHONUTF8=0`` they came as surrogates, which
    pyarrow could not encode), and a name whose bytes are not UTF-8 is an ``InputError``."""
    text = str(Path(path).absolute())
    try:
        return disk_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{text}: its name's bytes are not UTF-8, which pyarrow reads only: rename it"
        ) from None


def disk_bytes(path: Path | str) -> bytes:
    """A path's bytes as they are on disk, the same under any locale: for digests, and for
    libraries that take UTF-8. A locale that is not UTF-8 decodes names to its own characters or to
    surrogates, which ``os.fsencode`` turns back; a name it cannot (typed in, not read from disk)
    as UTF-8."""
    try:
        return os.fsencode(path)
    except UnicodeEncodeError:
        return str(path).encode("utf-8", "surrogateescape")


def write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` afterwards, or what it held before: never half a file. The bytes
    go to a hidden temporary beside it (``.NAME.XXXXXXXX.tmp``: no glob for ``*.parquet``,
    ``*.toml`` or ``*.npz`` and no Parquet dataset reads it), reach the disk (``fsync``), and only
    then replace ``path`` in one step, whose entry in the folder is synced in turn: after a power
    cut the file is the old one or the new one, not the empty or truncated file that a rename
    ahead of the data can leave on ext4, XFS or btrfs. Raises the ``OSError`` of a failed write
    (or the ``KeyboardInterrupt`` within one), with the temporary removed.

    No link in the folder is followed: the temporary is a new file of an unpredictable name
    (``tempfile.mkstemp``, created exclusively), and the rename replaces a link at ``path``
    rather than writing where it points. A run folder unpacked from a download, or one another
    user could write, wrote through ``.NAME.tmp`` links into files outside it until 2026-12-07.
    The file gets the mode a plain write gives (``0o666`` less the umask), not ``mkstemp``'s
    ``0o600``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        try:
            if hasattr(os, "fchmod"):  # not on Windows (before Python 3.13), whose files have no such mode
                os.fchmod(descriptor, 0o666 & ~_umask())
            view = memoryview(data)
            while view:  # a write to a file may take part of the bytes
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)  # the data, before the name points at it
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:  # a failed write, or Ctrl-C within it
        temporary.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # a folder that cannot be opened or synced (Windows, NFS)
        _sync(path.parent, os.O_RDONLY)  # the rename itself


# the temporary a killed ``write_atomically`` leaves in a run's or a kept job's folders: of a
# manifest, a records part or a job's file (``.NAME.XXXXXXXX.tmp``; ``.NAME.tmp`` before 2026-12-07)
RUN_TEMPORARY = re.compile(r"\.(manifest\.json|tune\.json|levels\.json|part-\d{6,}\.parquet)(\.\w{8})?\.tmp")


def is_leftover_write(path: Path) -> bool:
    """Whether ``path`` is the temporary of a ``write_atomically`` killed before its rename in a
    run's or a kept job's folder (``RUN_TEMPORARY``): nothing that was written. Any other hidden
    ``.tmp`` file is not ours (it was taken for one until 2026-12-08)."""
    return RUN_TEMPORARY.fullmatch(path.name) is not None and path.is_file()


def remove_leftover_writes(folder: Path) -> None:
    """Delete the temporaries that killed writes left in ``folder`` (``is_leftover_write``), by
    the process that alone writes there (its lock held), so that none is mid-write: a run killed
    in many writes kept each, a records part's size, until 2026-12-08. Any other file stays, and
    so does a link (no write made it); one that cannot be deleted (a read-only mount) is left as
    it is. Where no lock can be taken (Windows, a mount without flock) a second process writing
    the same run at once could lose a temporary to this; one writer at a time is the rule there."""
    for path in folder.iterdir():
        if is_leftover_write(path) and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.unlink()


def _umask() -> int:
    """This process's umask, read where it can be without changing it (Linux's
    ``/proc/self/status``); elsewhere set to ``0o077`` for a moment and put back, so that a
    file another thread creates in that moment is, if anything, more private."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _sync(path: Path, mode: int) -> None:
    """Flush what the system holds of ``path`` (a folder) to the disk."""
    descriptor = os.open(path, mode)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def read_json_object(
    path: Path, error: Callable[[str], Exception], missing: str, what: str, damaged: str = ""
) -> dict[str, Any]:
    """The JSON object in ``path`` (a manifest, a tune's settings); otherwise ``error`` with one
    line: ``missing`` when there is no file, what failed when it cannot be read or parsed (and,
    where it is no JSON, ``damaged``: what then), and that it is not ``what`` when it holds
    something other than an object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(missing) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise error(f"cannot read {path}: {problem}{damaged}") from None
    except OSError as problem:
        raise error(f"cannot read {path}: {problem}") from None
    if not isinstance(value, dict):
        raise error(f"{path} is not {what} (not a JSON object)")
    return value


class LockHeld(Exception):
    """Another holds the lock; ``holder`` is what it wrote there (its pid), or ""; ``ours``: the
    holder is this process (another call in it: a thread, the run's own callback)."""

    def __init__(self, holder: str, ours: bool = False):
        super().__init__(holder)
        self.holder, self.ours = holder, ours

    @property
    def pid(self) -> int | None:
        """The holder's process id, None when it has not written it (yet)."""
        return int(self.holder) if self.holder.isdigit() else None

    @property
    def who(self) -> str:
        """The holder, for a message: ``another process (pid 4242)``, or this one's other thread."""
        if self.ours:  # known by the lock's file, not its pid: a container's pid 1 is another's too
            return f"this process (pid {os.getpid()}), in another call"  # a thread's, a callback's
        return f"another process (pid {self.holder})" if self.holder else "another process"


# the locks this process holds: each descriptor and its file (device, inode); a forked child
# closes its copies at once
_held_locks: dict[int, tuple[int, int]] = {}


def _let_go_in_child() -> None:
    """In a forked child (a notebook's ``multiprocessing`` pool, a server's worker), close the
    copies of the parent's lock descriptors: a ``flock`` lasts while any copy is open, so the
    child held the run's lock for as long as it lived, and a run stopped in the parent read as
    "being written" by it, the parent's pid named, until the child ended."""
    for descriptor in _held_locks:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _held_locks.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork (nor flock)
    os.register_at_fork(after_in_child=_let_go_in_child)


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing, this process's pid written
    in it) for the block, or raise ``LockHeld`` at once if another process holds it. The kernel
    releases the lock when the process ends however it ends, so a run killed with SIGKILL or by
    a power cut never leaves a stale lock behind (the file stays; only the flock counts).

    Where there is nothing to lock with, the block runs unlocked: Windows (no ``fcntl``), a
    filesystem that refuses ``flock`` (some network mounts), or a file that cannot be created
    (a read-only folder, whose writes then fail with their own error).

    A ``path`` that is a symbolic link is refused (``InputError``), not followed: a link planted
    in a run folder (kept by tar, unzip and git, or made by another user of a shared folder) had
    its target outside the run truncated to this process's pid until 2026-12-07. ``O_NOFOLLOW``
    refuses a link made between the look and the open, where the system has it (not Windows). So
    is one that is no plain file: a FIFO (which tar keeps too) was a traceback (``ftruncate``'s
    ``EINVAL``), a folder let the run go unlocked."""
    if os.path.islink(path):
        raise InputError(_not_a_lock(path))
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | _NO_LINK_NO_WAIT, 0o644)
    except OSError:
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
            raise InputError(_not_a_lock(path)) from None  # a link made since the look (ELOOP), a folder
        yield
        return
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        raise InputError(_not_a_lock(path))
    _held_locks[descriptor] = (status.st_dev, status.st_ino)
    try:
        if fcntl is not None and _locked(descriptor):
            with contextlib.suppress(OSError):  # a note: a full disk is told by the first write
                os.ftruncate(descriptor, 0)
                os.write(descriptor, f"{os.getpid()}\n".encode())
        yield
    finally:
        # not in the map: a forked child, which closed its copy already (the number may be reused)
        if _held_locks.pop(descriptor, None) is not None:
            os.close(descriptor)  # releases the flock


# a lock file is opened without following a link, and without waiting for a writer (a FIFO's
# open does), where the system can (not Windows)
_NO_LINK_NO_WAIT = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _not_a_lock(path: Path) -> str:
    """Why ``path``, a symbolic link or no plain file, is refused as a lock file, in one line."""
    if not os.path.islink(path):
        return f"{path} is not a plain file, as a lock file must be: remove it and run again"
    try:
        where = f" (to {os.readlink(path)})"
    except OSError:  # gone again
        where = ""
    return (
        f"{path} is a symbolic link{where}, not a lock file: a link in a run's folder would send its "
        f"writes elsewhere; remove it and run again"
    )


# A writer that finds the lock taken tries again this many times, this far apart: ``look_at_lock``
# takes it for a moment to look, and a writer starting in that moment must not be refused.
LOCK_TRIES, LOCK_RETRY_SECONDS = 5, 0.02
_HELD = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)  # flock's errors for a lock another holds


def _locked(descriptor: int) -> bool:
    """Take the flock on ``descriptor``: True when taken, False when this filesystem has none;
    ``LockHeld`` when another process holds it."""
    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno not in _HELD:
                return False  # ENOLCK, ENOSYS, EOPNOTSUPP: no locks on this filesystem
            if attempt + 1 < LOCK_TRIES:
                time.sleep(LOCK_RETRY_SECONDS)
    raise _holder(descriptor)


def _holder(descriptor: int) -> LockHeld:
    """The ``LockHeld`` of the process holding the lock file open on ``descriptor``: what it wrote,
    and whether it is this process (a lock on the same file among those it holds, ``descriptor``'s
    own entry aside: a writer refused registers its descriptor before it tries, so every refusal
    said "this process (its own pid), in another call" of another process's run)."""
    status = os.fstat(descriptor)
    file = (status.st_dev, status.st_ino)
    ours = any(held == file for other, held in list(_held_locks.items()) if other != descriptor)
    return LockHeld(os.pread(descriptor, 64, 0).decode(errors="replace").strip(), ours)


class LockLook(NamedTuple):
    """What ``look_at_lock`` saw: whether it can tell who writes (``known``: not on Windows, nor on
    a filesystem that refuses ``flock``, where writers run unlocked), and who holds the lock."""

    known: bool
    holder: LockHeld | None


def look_at_lock(path: Path) -> LockLook:
    """Who holds the ``exclusive_lock`` on ``path`` (as the ``LockHeld`` a writer would meet; None:
    nobody), looking with a shared lock taken for a moment, which a writer starting then waits out
    (``LOCK_TRIES``). A missing lock file is known to be free: no writer has taken it, and so is
    one that is a link or no plain file, which no writer takes (``exclusive_lock``): opened
    following links and waiting, a FIFO's open waited for a writer, and ``status`` hung."""
    if fcntl is None:
        return LockLook(False, None)
    try:
        descriptor = os.open(path, os.O_RDONLY | _NO_LINK_NO_WAIT)
    except OSError:
        return LockLook(True, None)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return LockLook(True, None)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in _HELD:
            return LockLook(True, _holder(descriptor))
        return LockLook(False, None)
    finally:
        os.close(descriptor)  # releases a shared lock it took
    return LockLook(True, None)


__all__ = ["LockHeld", "exclusive_lock", "LockLook", "look_at_lock", "read_json_object", "write_atomically"]
