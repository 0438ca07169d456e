"""The run's state during the run: one owner, the supervisor (or whatever else holds the
run's lock), which holds the state in memory and is handed to every phase in the run's
context (phases.RunContext.owner). state.yaml is only its mirror, written atomically at most
every COALESCE seconds and at every phase change, and never read back to decide anything.
Whatever another process does to the file (garbles, truncates, deletes or replaces it: an
agent that escaped its folder, a user's editor) changes no decision and ends nothing: the
next write puts the true state back and progress.log says so once.

Reads come from the owner's own state, with no copy (`StateOwner.state`: read it, never
change it); changes go only through `StateOwner.update`, under the owner's lock, against the
thread that writes the mirror. The schema and the YAML are state.py's; the atomic write is
disk.py's."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from council.store import disk
from council.store import state as schema
from council.store.progress import utc_now
from council.store.state import RunState

T = TypeVar("T")

COALESCE = 0.2  # seconds: the owner writes its mirror at most this often, and at phase changes


class StateOwner:
    """The hold on one run's state. Its changes (hundreds per phase with a dozen agents) are
    mirrored to state.yaml at most every COALESCE seconds, at once when the phase changes,
    and a timer writes the last one of a burst; so the file is never more than COALESCE
    behind, and a crash loses at most that. Whatever another process did to the file is
    overwritten, and said once in progress.log; a file that cannot be written is said once
    and tried again."""

    def __init__(self, run_dir: Path, state: RunState, written: str | None) -> None:
        self.run_dir = run_dir
        self._state = state  # the truth, whatever happens to the file
        self._written = written  # the text the owner last wrote to the mirror (or read)
        self._told = False  # whether progress.log already says the file was tampered with
        self._lock = threading.RLock()
        self._phase: str | None = state.phase  # the phase the mirror shows
        self._last = 0.0  # when the mirror was last written (monotonic)
        self._dirty = False
        self._timer: threading.Timer | None = None

    @property
    def state(self) -> RunState:
        """The run's state itself, as it is now, without a copy: read it, never change it
        (an update is the only way in). The run's code reads it on the event loop's thread,
        where every update is made too."""
        return self._state

    def update(self, change: Callable[[RunState], T], now: bool = False) -> T:
        """Apply `change` to the state under the owner's lock and mirror it; returns (a copy
        of) what `change` returns. `now` writes the mirror at once: a change a crash must not
        lose, such as the pid of an agent just started (a resume stops orphans by the pids it
        finds in the file). A change that fails half-way leaves what it did (the owner's
        state is never dropped) and is not mirrored."""
        with self._lock:
            result = change(self._state)
            self._state.updated_at = utc_now()
            self._mirror(now)
            return copy.deepcopy(result)

    def _mirror(self, now: bool) -> None:
        with self._lock:
            self._dirty = True
            wait = self._last + COALESCE - time.monotonic()
            if now or self._state.phase != self._phase or wait <= 0:
                self._write()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self.flush)
                self._timer.daemon = True
                self._timer.start()

    def flush(self) -> None:
        """Write what is not written yet (the timer, and the owner's exit)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._dirty:
                self._write()

    def _write(self) -> None:
        from council.store import events  # only an owner writes a mirror: hooks never pay

        state = self._state
        text = schema.dump(state)
        path = schema.state_path(self.run_dir)
        self._dirty, self._last = False, time.monotonic()
        try:
            on_disk: str | None = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if on_disk != self._written and not self._told:
            self._told = True
            events.emit(self.run_dir, "run", f"{path.name} was changed by another process "
                        "(garbled, truncated, replaced or deleted); the supervisor's own "
                        "state is kept and the file rewritten from it")
        try:
            disk.atomic_write(path, text, redacted=True)
        except OSError as exc:
            if self._written is not None:  # said once per failing spell
                events.emit(self.run_dir, "run", f"cannot write {path.name} "
                            f"({exc.strerror or exc}); the run goes on and tries again at "
                            "the next change")
            self._written = None
            return
        self._written, self._told, self._phase = text, False, state.phase


@contextmanager
def owned(run_dir: Path) -> Iterator[StateOwner]:
    """Own the run's state for the length of the block (the supervisor, holding the run's
    lock): read once from the file, then kept in memory and only mirrored to it. The last
    change reaches the file before the block ends, and readers believe the file again."""
    text, state = schema.take(run_dir)
    owner = StateOwner(run_dir, state, written=text)
    schema._owners[run_dir] = owner
    try:
        yield owner
    finally:
        owner.flush()
        schema._owners.pop(run_dir, None)
