"""A per-vendor limit on CLI processes across every `council eval` on this machine.

Each vendor has N slot files under the user's cache folder (`~/.cache/council/eval-slots/`);
a council run that starts k CLI processes of a vendor at once holds k of its slots (an
exclusive flock on each) for as long as it runs, and so does a `cli:` judge's call. Two
`council eval` processes share the files, so together they stay within the user's limit for
each vendor's API; the kernel drops a dead process's locks, so a kill leaves nothing held.

All of a run's slots are taken at once or none: a run that finds too few free releases what
it took and waits, so two runs can never each hold half of what the other needs."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio

from council.store import disk

POLL_SECONDS = 0.5  # how often a waiting run looks again; runs last minutes
DEFAULT_PER_VENDOR = 4  # two runs of the whole pipeline at once: the dissenter's vendor has 2 each
PER_VENDOR_ENV = "COUNCIL_EVAL_PER_VENDOR"  # `council eval --per-vendor` sets it


def per_vendor() -> int:
    """The limit in force: $COUNCIL_EVAL_PER_VENDOR (what `council eval --per-vendor` sets, and
    how `inspect eval` users set it), else DEFAULT_PER_VENDOR."""
    try:
        return max(1, int(os.environ.get(PER_VENDOR_ENV) or DEFAULT_PER_VENDOR))
    except ValueError:
        return DEFAULT_PER_VENDOR


def slots_dir() -> Path:
    """`$XDG_CACHE_HOME/council/eval-slots`, else `~/.cache/council/eval-slots`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "council" / "eval-slots"


def needs(counts: Mapping[str, int], limit: int) -> dict[str, int]:
    """How many slots of each vendor a run takes: its processes of that vendor, at most the
    limit (a council with more seats of one vendor than the limit still runs, alone)."""
    return {vendor: min(n, limit) for vendor, n in sorted(counts.items()) if n > 0}


def try_take(folder: Path, wanted: Mapping[str, int], limit: int) -> list[int] | None:
    """File descriptors holding `wanted` slots, or None (and nothing held) when too few are
    free."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    held: list[int] = []
    for vendor, count in sorted(wanted.items()):
        got = 0
        for index in range(limit):
            if got == count:
                break
            fd = os.open(folder / f"{vendor}-{index}.lock",
                         os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
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
async def holding(counts: Mapping[str, int], limit: int,
                  folder: Path | None = None) -> AsyncIterator[None]:
    """Hold the slots a run needs for the length of the block, waiting for them first."""
    wanted = needs(counts, limit)
    where = folder or slots_dir()
    while True:
        # Not in a thread: a cancellation arriving while a thread held new locks would
        # drop its result, and the locks with it, until this process ends.
        held = try_take(where, wanted, limit)
        if held is not None:
            break
        await anyio.sleep(POLL_SECONDS)
    try:
        yield
    finally:
        release(held)
