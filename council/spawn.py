"""The one module that starts and stops agent processes.

Each agent runs in its own session (process group) with stdin from a file or /dev/null and
its output streamed straight to log files, so the supervisor never buffers it. Stopping is
TERM to the group, a grace period, KILL to the group, then a psutil sweep of descendants that
left the group; it always waits for the exit and is shielded from cancellation. (anyio alone
would SIGKILL only the direct child, with no grace.)
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
from collections.abc import Callable, Mapping
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.abc
import psutil

from council.errors import CouncilError

START_SLACK_S = 0.01  # psutil's start times are the kernel's, in clock ticks


class AgentMissingError(CouncilError):
    """The agent's CLI is not installed (not on PATH)."""


def resolve(executable: str, env: Mapping[str, str]) -> str:
    found = shutil.which(executable, path=env.get("PATH"))
    if found is None:
        raise AgentMissingError(f"{executable} is not installed or not on PATH")
    return found


async def run(
    argv: tuple[str, ...],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: Path,
    stderr: Path,
    stdin_file: Path | None = None,
    grace: float = 10.0,
    on_start: Callable[[int], None] | None = None,
) -> int:
    """Run one agent process to its end. If the caller's scope is cancelled (timeout, Ctrl-C),
    the whole process tree is stopped before the cancellation goes on."""
    full_env = dict(env)
    argv = (resolve(argv[0], full_env), *argv[1:])
    with ExitStack() as files:
        stdin: Any = files.enter_context(
            open(stdin_file, "rb") if stdin_file else open(os.devnull, "rb")  # noqa: SIM115
        )
        out = files.enter_context(_log(stdout))
        err = files.enter_context(_log(stderr))
        process = await anyio.open_process(
            list(argv), stdin=stdin, stdout=out, stderr=err, cwd=cwd, env=full_env,
            start_new_session=True,
        )
        try:
            if on_start is not None:
                on_start(process.pid)
            code = await process.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stop_tree(process, grace)
            raise
        # The agent is done; anything it left running in its group (a backgrounded tool
        # command) or its session goes with it.
        _signal_group(process.pid, signal.SIGKILL)
        _kill_session(process.pid)
        return code


async def stop_tree(process: anyio.abc.Process, grace: float) -> None:
    """TERM the group, wait up to `grace`, KILL the group, sweep descendants, reap."""
    pid = process.pid
    try:
        descendants = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    _signal_group(pid, signal.SIGTERM)
    with anyio.move_on_after(grace):
        await process.wait()
        # The leader is gone; give the rest of its group the same grace.
        # Nothing signals "the group is empty": poll the snapshot of descendants.
        while any(_running(p) for p in descendants):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    _signal_group(pid, signal.SIGKILL)
    for child in descendants:
        with suppress(psutil.Error):
            child.kill()
    _kill_session(pid)
    await process.wait()


def _log(path: Path) -> BinaryIO:
    """A CLI's log, opened to append without following a link or waiting on a FIFO, and
    only if it is a plain file: what stands at the name is never the user's `~/.bashrc`."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                 | os.O_CLOEXEC, 0o644)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise OSError(errno.EINVAL, f"{path} is not a plain file")
    return os.fdopen(fd, "ab")


def _kill_session(sid: int, started: float | None = None) -> None:
    """SIGKILL what is left in the agent's session but outside its process group: codex's
    sandbox starts a helper in a group of its own (`bwrap … --codex-run-as-fs-helper`,
    codex 0.169) that outlives codex, reparented to init. Safe with a pid the system has
    reused: while any process's session id is `sid`, no new process gets that pid. Only
    members made at or after the agent's recorded start (`started`, for a process council
    did not start itself): a session that already held older processes (nohup'd jobs,
    daemons) is not the agent's, whatever a state file says."""
    for proc in psutil.process_iter():
        with suppress(psutil.Error, OSError):
            if (proc.pid != sid and os.getsid(proc.pid) == sid
                    and (started is None or proc.create_time() >= started - START_SLACK_S)):
                proc.kill()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def process_started(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def same_process(pid: int, started: float) -> psutil.Process | None:
    """The live process with this pid *and* this start time: never a recycled pid."""
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - started) < START_SLACK_S:
            return proc
    except psutil.Error:
        pass
    return None


def stop_orphans(agents: list[tuple[int, float]], grace: float) -> list[int]:
    """Stop agent process groups left running by a supervisor that died (kill -9, crash).

    Each (pid, start time) is checked against the live process first, so a pid the system
    has since given to another program is left alone. Returns the pids that were stopped."""
    leaders = [p for pid, started in agents if (p := same_process(pid, started)) is not None]
    tree = list(leaders)
    for proc in leaders:
        with suppress(psutil.Error):
            tree += proc.children(recursive=True)
    for proc in leaders:
        _signal_group(proc.pid, signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace)
    for proc in leaders:
        _signal_group(proc.pid, signal.SIGKILL)
    for proc in alive:
        with suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    # Their sessions too, the leader gone or not: a process whose session id is an agent's
    # pid is from that agent's session (the kernel gives no new process a pid that is
    # still some session's id), such as codex's sandbox helper. Not where another program
    # now has the pid: the session of that id is then that program's.
    for pid, started in agents:
        if same_process(pid, started) is not None or not psutil.pid_exists(pid):
            _kill_session(pid, started)
    return [p.pid for p in leaders]
