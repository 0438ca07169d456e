"""Slot files: a limit on how many of a kind of thing run at once on this machine, across
every council process of the user.

A kind (one vendor's CLI processes in `council eval`, council runs) has slot files in a
folder under the user's cache folder (`~/.cache/council/<folder>/<kind>-<n>.lock`). Holding a
slot is holding an exclusive flock on its file for as long as the file stays open. The
kernel drops a flock when its holder dies (`kill -9` included), so a killed process frees
its slots, and no file left behind ever blocks anyone.

Two ways to take slots:
- `try_take` (and `holding`, which waits for them): all of a set of slots or none, each kind
  up to a limit of slot files (evaluation/slots.py: a run's or a judge's CLI processes per
  vendor). A taker that finds too few free releases what it took, so two can never each hold
  half of what the other needs.
- `take_counted`: one slot of a kind whose limit is a count of holders (council runs,
  run/supervisor.py). The taker writes a label into its slot's file (what holds it: a run's
  id and folder), so that a refusal can name every holder (`holders`).

Every take, every look at the holders and every label change happens under the folder's own
flock, held for a moment. A look probes each file's flock, and would otherwise make a taker
see a free slot as held; and a count and the take that follows it are one step.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import anyio

from council.errors import CouncilError
from council.store import disk

POLL_SECONDS = 0.5  # how often `holding` looks again: what waits for slots runs for minutes
LABEL_BYTES = 1024  # a label is read up to this; it is a run's id and folder
MAX_SLOT = 1000  # a slot file numbered past this is not one of council's
_OPEN = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


def cache_folder(name: str) -> Path:
    """`$XDG_CACHE_HOME/council/<name>`, else `~/.cache/council/<name>`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "council" / name


@contextmanager
def _serialised(folder: Path) -> Iterator[None]:
    """The folder made (0700) if missing, and its flock held for the block."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with disk.locked(folder, folder=True):
        yield


def _open(path: Path, create: bool) -> int | None:
    """A slot file, opened without following a link or waiting on a FIFO; None when it is
    missing or is not a plain file (not council's: left alone)."""
    try:
        fd = os.open(path, _OPEN | (os.O_CREAT if create else 0), 0o600)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _label(fd: int, label: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, label.encode("utf-8", "replace")[:LABEL_BYTES], 0)


def try_take(folder: Path, wanted: Mapping[str, int], limit: int) -> list[int] | None:
    """File descriptors holding `wanted` slots (kind → how many, each kind's slot files
    numbered below `limit`), or None, with nothing held, when too few are free."""
    held: list[int] = []
    with _serialised(folder):
        for kind, count in sorted(wanted.items()):
            got = 0
            for index in range(limit):
                if got == count:
                    break
                fd = _open(folder / f"{kind}-{index}.lock", create=True)
                if fd is None:
                    continue
                if not disk.lock(fd, wait=False):
                    os.close(fd)
                    continue
                held.append(fd)
                got += 1
            if got < count:
                release(held)
                return None
    return held


def release(held: list[int]) -> None:
    for fd in held:
        with suppress(OSError):
            os.close(fd)  # closing the only descriptor drops its flock
    held.clear()


@asynccontextmanager
async def holding(wanted: Mapping[str, int], limit: int, folder: Path) -> AsyncIterator[None]:
    """Hold `wanted` slots (as `try_take`) for the length of the block, waiting for them
    first."""
    while True:
        # Not in a thread: a cancellation arriving while a thread held new locks would
        # drop its result, and the locks with it, until this process ends.
        held = try_take(folder, wanted, limit)
        if held is not None:
            break
        await anyio.sleep(POLL_SECONDS)
    try:
        yield
    finally:
        release(held)


# ---------------------------------------------------------------- counted slots, labelled


@dataclass(frozen=True)
class Counted:
    """What `take_counted` got: the slot's descriptor, or None when `limit` others hold one;
    and the labels of the slots others hold."""

    fd: int | None
    holders: list[str]


def take_counted(folder: Path, kind: str, limit: int, label: str) -> Counted:
    """One slot of `kind` with `label` written in it, unless `limit` slots of it are held
    already (by any process, whatever limit it took them under)."""
    with _serialised(folder):
        free, holders = _probe(folder, kind, keep_free=True)
        if len(holders) >= limit:
            if free is not None:
                os.close(free)
            return Counted(None, holders)
        if free is None:
            free = _new_slot(folder, kind)
        _label(free, label)
        return Counted(free, holders)


def holders(folder: Path, kind: str) -> list[str]:
    """The labels of the held slots of `kind`, in the order of their files."""
    with _serialised(folder):
        return _probe(folder, kind, keep_free=False)[1]


def relabel(folder: Path, fd: int, label: str) -> None:
    """Say what holds a slot now (a run that got its id after it took the slot)."""
    with _serialised(folder):
        _label(fd, label)


def _probe(folder: Path, kind: str, keep_free: bool) -> tuple[int | None, list[str]]:
    """(the lowest free slot file, locked, if `keep_free`; the labels of the held ones)."""
    pattern = re.compile(rf"{re.escape(kind)}-(\d{{1,4}})\.lock")
    numbered = sorted((int(m[1]), name) for name in os.listdir(folder)
                      if (m := pattern.fullmatch(name)) and int(m[1]) < MAX_SLOT)
    free: int | None = None
    labels: list[str] = []
    for _, name in numbered:
        fd = _open(folder / name, create=False)
        if fd is None:
            continue
        if disk.lock(fd, wait=False):
            if keep_free and free is None:
                free = fd
            else:
                os.close(fd)
            continue
        try:
            raw = os.pread(fd, LABEL_BYTES, 0)
        finally:
            os.close(fd)
        text = _UNPRINTABLE.sub("?", raw.decode("utf-8", "replace")).strip()
        labels.append(text or "one starting")
    return free, labels


def _new_slot(folder: Path, kind: str) -> int:
    """A slot file at the lowest number no file has, locked (under the folder's lock, so
    no one else can be taking it)."""
    for index in range(MAX_SLOT):
        path = folder / f"{kind}-{index}.lock"
        if os.path.lexists(path):
            continue
        fd = _open(path, create=True)
        if fd is not None and disk.lock(fd, wait=False):
            return fd
        if fd is not None:
            os.close(fd)
    raise CouncilError(f"no slot file can be made in {folder}: {MAX_SLOT} are taken")
