"""One supervisor per run: an exclusive flock (disk.lock) on research/<id>/work/supervisor.lock
(paths.run_work: at the top of a run made before work/).

The kernel drops a flock when its holder dies, even by `kill -9` or a reboot, so a stale
lock can never block a resume. The file also records the holder's pid and process start time
(psutil), so `council cancel` can signal the supervisor without hitting a recycled pid.

`council status`, `cancel` and `find_run` ask every run folder whether a supervisor holds it,
a cloned repository's too: the lock file is opened O_NOFOLLOW | O_NONBLOCK, so a link or a
FIFO at its name is neither followed nor waited on, and counts as no supervisor.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import psutil

from council.errors import CouncilError
from council.paths import run_work
from council.spawn import same_process
from council.store import agentfs, disk

LOCK_FILE = "supervisor.lock"
_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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
        self.path = run_work(run_dir) / LOCK_FILE
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _OPEN, 0o600)
        except OSError as exc:
            raise CouncilError(f"cannot lock run {run_dir.name}: {self.path} "
                               f"({agentfs.describe(self.path)}): {exc.strerror or exc}"
                               ) from exc
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            raise CouncilError(f"cannot lock run {run_dir.name}: {self.path} is "
                               f"{agentfs.describe(self.path)}, not a plain file")
        if not disk.lock(self.fd, wait=False):
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
        data = json.loads(agentfs.read(run_work(run_dir) / LOCK_FILE, 4096))
        return Holder(int(data["pid"]), float(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_supervisor(run_dir: Path) -> Holder | None:
    """The supervisor holding the run's lock right now, if any."""
    path = run_work(run_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN)
    except OSError:  # missing, or a link
        return None
    try:
        free = disk.lock(fd, shared=True, wait=False)
    finally:
        os.close(fd)
    return None if free else read_holder(run_dir)
