"""An unexpected error, told in one line: its traceback goes to a crash log, in the run's
folder when there is a run, and the user gets the log's path instead of a traceback."""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

from council import paths
from council.store import redact

_run_dir: Path | None = None  # the run this process works on, once it has one


def note_run(run_dir: Path) -> None:
    """Crash logs of this process go into this run's folder from now on."""
    global _run_dir
    _run_dir = run_dir


def summary(exc: BaseException) -> str:
    """`Type: first line of the message`, short enough for one line."""
    text = str(exc).strip().splitlines()
    line = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


def write_log(exc: BaseException, command: str) -> Path | None:
    """Write the traceback to crash-<time>-<pid>.log in the run's folder (else the research
    folder, else the temp dir); the path, or None when nowhere could take it. The log is a
    new file (O_EXCL | O_NOFOLLOW, 0600): a link or file planted at its name, in a shared
    temp dir say, is neither followed nor overwritten, and the next folder is tried."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    text = (f"council {command} crashed at {stamp} (pid {os.getpid()})\n\n"
            + "".join(traceback.format_exception(exc)))
    folders = [f for f in (_run_dir, paths.research_dir(), Path(tempfile.gettempdir())) if f]
    for folder in folders:
        path = folder / f"crash-{stamp}-{os.getpid()}.log"
        if os.path.islink(folder):  # a research/ that came as a link is no place of ours
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(redact.clean(text))
        except OSError:
            continue
        return path
    return None
