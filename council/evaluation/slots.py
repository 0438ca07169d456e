"""A per-vendor limit on CLI processes across every `council eval` on this machine.

Each vendor has N slot files under the user's cache folder (`~/.cache/council/eval-slots/`,
store/slots.py); a council run that starts k CLI processes of a vendor at once holds k of its
slots for as long as it runs, and so does a `cli:` judge's call. Two `council eval` processes
share the files, so together they stay within the user's limit for each vendor's API; the
kernel drops a dead process's locks, so a kill leaves nothing held.

All of a run's slots are taken at once or none: a run that finds too few free releases what
it took and waits, so two runs can never each hold half of what the other needs.

These limits are the eval's own: its sample runs are exempt from the machine's limit on
council runs (`max_runs`, run/supervisor.py), so `council eval --max-runs N` runs N."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from council.store import slots

DEFAULT_PER_VENDOR = 4  # two runs of the whole pipeline at once: the dissenter's vendor has 2 each
PER_VENDOR_ENV = "COUNCIL_EVAL_PER_VENDOR"  # `council eval --per-vendor` sets it
MAX_RUNS_ENV = "COUNCIL_EVAL_MAX_RUNS"  # `council eval --max-runs` sets it (solver.py reads it)


def per_vendor() -> int:
    """The limit in force: $COUNCIL_EVAL_PER_VENDOR (what `council eval --per-vendor` sets, and
    how `inspect eval` users set it), else DEFAULT_PER_VENDOR."""
    try:
        return max(1, int(os.environ.get(PER_VENDOR_ENV) or DEFAULT_PER_VENDOR))
    except ValueError:
        return DEFAULT_PER_VENDOR


def slots_dir() -> Path:
    """`$XDG_CACHE_HOME/council/eval-slots`, else `~/.cache/council/eval-slots`."""
    return slots.cache_folder("eval-slots")


def needs(counts: Mapping[str, int], limit: int) -> dict[str, int]:
    """How many slots of each vendor a run takes: its processes of that vendor, at most the
    limit (a council with more seats of one vendor than the limit still runs, alone)."""
    return {vendor: min(n, limit) for vendor, n in sorted(counts.items()) if n > 0}


@asynccontextmanager
async def holding(counts: Mapping[str, int], limit: int,
                  folder: Path | None = None) -> AsyncIterator[None]:
    """Hold the slots a run needs for the length of the block, waiting for them first."""
    async with slots.holding(needs(counts, limit), limit, folder or slots_dir()):
        yield
