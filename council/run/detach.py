"""Starting a run's supervisor as a process of its own, so that the run outlives whoever
started it.

An MCP client (`council mcp`) may end its server at any moment: at the end of its session,
or whenever it restarts its servers. A council run takes minutes to an hour. So the server
does not supervise the run itself: it starts `council resume ID`, the command line's own
way of supervising an existing run (`supervisor.execute`, as `council run` does after
`start_run`, with the same crash log, exit codes and signal handling), in a session of its
own, so that neither the server's end nor a signal to its process group or terminal reaches
it. Its stdin is /dev/null and its output goes to the run's `logs/supervisor.log` (the
server's stdout is the protocol). It runs with this interpreter and the package's entry file
under `-I`, as the agents' hooks do: nothing from the project folder (a cloned repository's
`council/` or `sitecustomize.py`) or from PYTHONPATH is imported.

The starter then waits, briefly, until the supervisor holds the run's lock (runlock.py): a
supervisor that could not start is an error at once, with its last line, rather than a run
that stays `interrupted`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from council.errors import CouncilError
from council.store import agentfs
from council.store.progress import SUPERVISOR_LOG
from council.store.runlock import live_supervisor
from council.store.state import ENDED, load_state
from council.store.workspace import Workspace

ENTRY = Path(__file__).resolve().parents[1] / "__main__.py"
# How long a start waits, at most, for the supervisor to take the run's lock (a Python
# start-up and council's imports: ~0.3 s on an idle machine, a second on a busy one). Past
# it the answer says `starting`: the MCP client is waiting for the answer.
READY_WAIT = 1.0


@dataclass(frozen=True)
class Launched:
    """A supervisor started for a run."""

    pid: int
    supervised: bool  # it held the run's lock (or had already ended the run) when we looked


def argv(run_id: str, base: Path) -> list[str]:
    """The supervisor's command line: `council resume ID` with this interpreter, isolated."""
    return [sys.executable, "-I", str(ENTRY), "resume", run_id, "--research-dir", str(base)]


def launch(ws: Workspace, base: Path, wait: float = READY_WAIT) -> Launched:
    """Start the supervisor of the run in `ws`, detached; wait up to `wait` seconds for it
    to hold the run. A CouncilError, with the supervisor's last line, if it ends without
    having run."""
    log = ws.root / "logs" / SUPERVISOR_LOG
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        proc = subprocess.Popen(argv(ws.id, base), stdin=subprocess.DEVNULL, stdout=fd,
                                stderr=fd, cwd=Path.cwd(), start_new_session=True,
                                close_fds=True)
    finally:
        os.close(fd)
    try:
        supervised = _wait_until_supervised(ws, proc, wait)
    finally:
        # Reap it when it ends, if this process is still there; else init does.
        threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
    return Launched(proc.pid, supervised)


def _wait_until_supervised(ws: Workspace, proc: subprocess.Popen[bytes], wait: float) -> bool:
    deadline = time.monotonic() + wait
    while True:
        if live_supervisor(ws.root) is not None:
            return True
        code = proc.poll()
        if code is not None:
            if _ended(ws):  # a short run (or a failed one) that ran to its end already
                return True
            raise CouncilError(f"run {ws.id} did not start: "
                               f"{last_line(ws.root / 'logs' / SUPERVISOR_LOG)} "
                               f"(its supervisor exited {code}); `council resume {ws.id}` "
                               "starts it from a terminal")
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)  # polling a process that is not ours to wait on yet


def _ended(ws: Workspace) -> bool:
    try:
        return load_state(ws.root).phase in ENDED
    except CouncilError:
        return False


def last_line(path: Path, limit: int = 1 << 20) -> str:
    """The last non-empty line of a log (of its first `limit` bytes), or words saying there
    is none."""
    try:
        data = agentfs.read(path, limit)
    except OSError:
        return "no output"
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    return next((line for line in reversed(lines) if line), "no output")
