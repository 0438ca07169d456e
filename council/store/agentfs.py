"""The one way council reads what an agent left in its folder, and the one way it writes there.

council runs as the user, outside every CLI's sandbox; an agent (or a web page that turned
it) can leave anything in its folder: a link to `~/.ssh/id_ed25519` or `/proc/self/environ`
named as its report, a FIFO that blocks whoever opens it, a sparse terabyte, a hard link to
a file of the user's, a folder swapped for a link to `~`. So:

- a read opens the file with O_NOFOLLOW | O_NONBLOCK, requires a regular file with one link
  (checked on the open handle, so nothing can be swapped in between), and reads at most a
  bound; anything else raises `UnsafeFile`, whose message says what stood there;
- a write walks from a folder council made, opening each folder below it with O_NOFOLLOW,
  creates a temp file with O_EXCL | O_NOFOLLOW there and renames it over the name: a link
  planted at that name is replaced, never followed;
- a folder council hands an agent afresh (a phase's inputs) is removed whatever it is, without
  following it, and made again.

Standard library only: the hooks read reports through this module after every agent turn.
"""

from __future__ import annotations

import contextlib
import os
import stat

TYPE_CHECKING = False  # no typing import: this module runs in the hook, after every turn
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_CHUNK = 1 << 20
JSON_LIMIT = 64 << 20  # a run's own JSON file (claims, sources, scope): far below this
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_APPEND_FLAGS = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                 | os.O_CLOEXEC)


class UnsafeFile(OSError):
    """What an agent left is not a plain file council may read or write through: its
    message says what stood there ("a link to /root/.ssh/id_ed25519", "a FIFO")."""


def describe(path: str | os.PathLike[str]) -> str:
    """What stands at `path`, in words, without following it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        try:
            return f"a link to {os.readlink(path)}"
        except OSError:
            return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if info.st_nlink != 1:
        return f"a file with {info.st_nlink} hard links"
    return "a regular file"


def _check(fd: int, path: str | os.PathLike[str]) -> os.stat_result:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        raise UnsafeFile(f"{os.fspath(path)} is {describe(path)}, not a plain file")
    return info


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on the plain file at `path` (the caller closes it); raises
    FileNotFoundError when nothing is there, PermissionError when it may not be read, and
    UnsafeFile for anything but a regular file with one link. Never blocks: a FIFO opens at
    once, and is refused."""
    return _open_plain(path, _READ_FLAGS)


def open_append(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A descriptor for appending to the plain file at `path` (made when missing; the caller
    closes it), raising as `open_regular` does. For every file council appends to in a run
    folder (progress.log, events.jsonl, the CLIs' logs): a folder that came in a tarball may
    hold a link to `~/.bashrc`, or a FIFO, at any of those names."""
    return _open_plain(path, _APPEND_FLAGS, mode)


def _open_plain(path: str | os.PathLike[str], flags: int, mode: int = 0o600) -> int:
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise
        # ELOOP: the name is a link; ENXIO: a socket, or a FIFO with no reader to write to;
        # others: say what stands there.
        raise UnsafeFile(f"{os.fspath(path)} is {describe(path)}, not a plain file") from exc
    try:
        _check(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def chunks(path: str | os.PathLike[str], limit: int | None) -> Iterator[bytes]:
    """The plain file at `path` in chunks, at most `limit` bytes of it (None: all of it;
    a bound the caller can afford). Raises as `open_regular` does, at the first step."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        left = limit
        while left is None or left > 0:
            data = handle.read(_CHUNK if left is None else min(_CHUNK, left))
            if not data:
                return
            if left is not None:
                left -= len(data)
            yield data


def read(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most `limit` bytes of the plain file at `path`; raises as `open_regular` does."""
    return b"".join(chunks(path, limit))


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """`read`, decoded as UTF-8 with what does not decode replaced: for a report or a log."""
    return read(path, limit).decode("utf-8", errors="replace")


def read_json(path: str | os.PathLike[str], limit: int = JSON_LIMIT) -> object:
    """The JSON document in the plain file at `path`; a file past `limit` bytes is not read
    whole and raises ValueError, as a malformed one does. Raises as `open_regular` does."""
    import json  # here: importing this module stays as cheap as the hooks need

    data = read(path, limit + 1)
    if len(data) > limit:
        raise ValueError(f"{os.fspath(path)} is larger than {limit} bytes")
    return json.loads(data.decode("utf-8"))


def read_own(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most `limit` bytes of a file of the user's own setup (a CLI's config in their
    home), which the CLI itself reads through a link (a dotfiles manager's): the link is
    followed, but anything but a regular file at its end (a FIFO, a device) raises
    UnsafeFile at once, never blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise
        raise UnsafeFile(f"{os.fspath(path)} is {describe(path)}, not a plain file") from exc
    with os.fdopen(fd, "rb", buffering=0) as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(f"{os.fspath(path)} is {describe(os.path.realpath(path))}, not a "
                             "plain file")
        return handle.read(limit)


def tail(path: str | os.PathLike[str], limit: int, start: int = 0) -> tuple[bytes, bool]:
    """The plain file's last `limit` bytes at most, none before byte `start`, and whether
    anything after `start` was left out (the first line may then be cut). Raises as
    `open_regular` does."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        size = os.fstat(fd).st_size
        first = max(start, size - limit)
        handle.seek(first)
        return handle.read(limit), first > start


def size(path: str | os.PathLike[str]) -> int:
    """The plain file's size in bytes (what it claims: a sparse file claims more than it
    holds); raises as `open_regular` does."""
    fd = open_regular(path)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _open_dirs(folder: str | os.PathLike[str], parts: list[str], create: bool) -> int:
    """A descriptor on folder/parts…, each part opened with O_NOFOLLOW (made 0700 when
    missing and `create`): a part an agent swapped for a link raises UnsafeFile."""
    fd = os.open(folder, _DIR_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise UnsafeFile(f"{part!r} is not a plain name")
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o700, dir_fd=fd)
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                where = os.path.join(os.fspath(folder), part)
                raise UnsafeFile(f"{where} is {describe(where)}, not a folder") from exc
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _split(rel: str) -> tuple[list[str], str]:
    parts = [p for p in rel.split("/") if p]
    if not parts:
        raise UnsafeFile(f"{rel!r} names no file")
    return parts[:-1], parts[-1]


def write(folder: str | os.PathLike[str], rel: str, data: bytes | str | Iterable[bytes],
          mode: int = 0o600) -> None:
    """Replace `folder`/`rel` with `data`, atomically, following no link: `folder` is one
    council made (its own path is trusted), each folder of `rel` below it is opened with
    O_NOFOLLOW (made when missing), and whatever stood at the name (a file, a link) is
    replaced by a rename, never written through. `data` may be an iterable of chunks, for a
    file larger than memory should hold (a scrubbed log); if it raises, nothing is
    replaced."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    dirs, name = _split(rel)
    dfd = _open_dirs(folder, dirs, create=True)
    try:
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as handle:
                for piece in (data,) if isinstance(data, bytes) else data:
                    handle.write(piece)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)


def remove(folder: str | os.PathLike[str], rel: str) -> str | None:
    """Remove whatever stands at `folder`/`rel` without following it (a link goes, not its
    target; a folder goes with its contents, links inside it unfollowed); what stood there,
    in words, or None when nothing did."""
    import shutil  # only the supervisor removes things; the hooks never import this

    dirs, name = _split(rel)
    dfd = _open_dirs(folder, dirs, create=False)
    try:
        try:
            info = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        what = describe(os.path.join(os.fspath(folder), rel))
        if stat.S_ISDIR(info.st_mode):
            # rmtree opens each folder with O_NOFOLLOW relative to its parent's descriptor:
            # a link inside is unlinked, never entered.
            shutil.rmtree(os.path.join(os.fspath(folder), rel))
        else:
            os.unlink(name, dir_fd=dfd)
        return what
    finally:
        os.close(dfd)


def fresh_dir(folder: str | os.PathLike[str], rel: str) -> str | None:
    """Make `folder`/`rel` an empty folder of council's, removing whatever stood there first
    (without following it); what stood there, in words, or None."""
    what = remove(folder, rel)
    dirs, name = _split(rel)
    dfd = _open_dirs(folder, dirs, create=True)
    try:
        os.mkdir(name, 0o700, dir_fd=dfd)
    finally:
        os.close(dfd)
    return what
