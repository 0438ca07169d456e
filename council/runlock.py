"""One supervisor per run: an exclusive flock on research/<id>/supervisor.lock.

The kernel drops a flock when its holder dies, even by `kill -9` or a reboot, so a stale
lock can never block a resume. The file also records the holder's pid and process start time
(psutil), so `council cancel` can signal the supervisor without hitting a recycled pid.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

import psutil

from council.errors import CouncilError
from council.spawn import same_process

LOCK_FILE = "supervisor.lock"


class RunLockedError(CouncilError):
    """Another live supervisor owns the run."""


@dataclass(frozen=True)
class Holder:
    pid: int
    started: float  # psutil create_time of the supervisor process

    def process(self) -> psutil.Process | None:
        """The live supervisor, or None if it is gone (or its pid now belongs to another)."""
        return same_process(self.pid, self.started)


class RunLock:
    """Held by the supervisor for its whole life; released on close or death."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            holder = read_holder(run_dir)
            who = f" (pid {holder.pid})" if holder else ""
            raise RunLockedError(
                f"run {run_dir.name} is already being supervised{who}; "
                f"use `council status {run_dir.name}` or `council cancel {run_dir.name}`"
            ) from None
        me = psutil.Process()
        record = json.dumps({"pid": me.pid, "started": me.create_time()}).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, record, 0)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_holder(run_dir: Path) -> Holder | None:
    try:
        data = json.loads((run_dir / LOCK_FILE).read_text())
        return Holder(int(data["pid"]), float(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_supervisor(run_dir: Path) -> Holder | None:
    """The supervisor holding the run's lock right now, if any."""
    path = run_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(run_dir)
    finally:
        os.close(fd)
    return None
