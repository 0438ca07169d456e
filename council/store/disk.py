"""The store: how council replaces a file of its own, and how it locks one. One helper each,
so every writer gets the same guarantees.

- `atomic_write`: a file is replaced whole. A temp file beside it is written, (by default)
  fsynced and renamed over it, so a reader sees the old file or the new one, never a torn
  one, and a full disk or a kill leaves the old one. Text is redacted on the way
  (council/store/redact.py) unless the caller says it redacted it already; bytes must be. The temp
  file is made with O_EXCL | O_NOFOLLOW and renamed over whatever stood at the name, so a
  link planted there is replaced, never written through.
- `locked` / `lock`: an exclusive flock (or a shared or non-blocking one) serialises the
  read-modify-writes of a run's state, a loop file, the sessions folder, and progress.log's
  two files; the kernel drops it when its holder dies. A lock file is opened O_NOFOLLOW: a
  link at its name is refused, not followed (O_CREAT through a dangling link would make a
  file wherever it points).

This is the writer for council's own folders: the run folder, loops/, the cache. Their paths
are trusted, because council made them and no agent can write there (docs/containment.md).
An agent's folder is a different trust boundary: anything below it may be a link or FIFO the
agent left. What council writes there (a prompt, a phase's inputs, a scrubbed report), and
in a folder a cloned repository may have planted (research/.sessions), goes through
`agentfs.write`, which opens every folder on the way without following a link. Use that one
there, and this one here.

The hooks import this module after every agent turn (the loop file and its lock, progress.log's
lock), so it imports only `os`, `fcntl`, `contextlib` and council.store.redact, which the hooks
import anyway.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from council.store import redact

TYPE_CHECKING = False  # no typing import: the hooks load this module after every turn
if TYPE_CHECKING:
    from collections.abc import Iterable

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_LOCK_FILE = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_LOCK_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def atomic_write(path: str | os.PathLike[str], data: str | bytes | Iterable[bytes], *,
                 redacted: bool = False, durable: bool = True, mode: int = 0o600) -> None:
    """Replace `path` with `data`, atomically. Text has every secret of council's environment
    redacted unless the caller `redacted` it already (state.yaml, redacted in its data, not
    its text); bytes, or an iterable of chunks (a file larger than memory should hold, or
    one hashed or bounded as it is copied), must be `redacted` already, or this raises
    TypeError: nothing reaches a file unredacted by accident. `durable` fsyncs the file
    before the rename (a loop file, rewritten after every turn and rebuilt from the state if
    lost, skips it). If writing or `data` raises, nothing is replaced."""
    if isinstance(data, str):
        data = (data if redacted else redact.clean(data)).encode("utf-8")
    elif not redacted:
        raise TypeError("atomic_write: bytes must be redacted by the caller (redacted=True)")
    target = os.fspath(path)
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, _CREATE, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in (data,) if isinstance(data, bytes) else data:
                handle.write(chunk)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def lock(fd: int, *, shared: bool = False, wait: bool = True) -> bool:
    """flock an open file or folder until it is closed: exclusive unless `shared`. With
    `wait` False it does not block: False when another process holds the lock."""
    how = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        fcntl.flock(fd, how if wait else how | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class Locked:
    """An exclusive lock on a lock file (made when missing) or on a folder, held for the
    length of a `with` block. A class, not contextlib: the hooks take it after every turn."""

    __slots__ = ("fd", "folder", "path")

    def __init__(self, path: str | os.PathLike[str], folder: bool = False) -> None:
        self.path = os.fspath(path)
        self.folder = folder
        self.fd = -1

    def __enter__(self) -> int:
        self.fd = os.open(self.path, _LOCK_FOLDER if self.folder else _LOCK_FILE, 0o644)
        try:
            lock(self.fd)
        except BaseException:
            os.close(self.fd)
            raise
        return self.fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing drops the flock
        self.fd = -1


def locked(path: str | os.PathLike[str], *, folder: bool = False) -> Locked:
    """`with locked(path):` serialises the writers of what `path` guards: a lock file, made
    0644 when missing, or (`folder`) the folder itself, which must exist."""
    return Locked(path, folder)
