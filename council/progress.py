"""progress.log: one human line per event, so `tail -f` shows a run live.

Each line is written with a single O_APPEND write, so lines from parallel hooks and the
supervisor never interleave, and nothing is buffered. Hooks import this module: it uses only
`os` and `time`.
"""

from __future__ import annotations

import os
import time

PROGRESS_FILE = "progress.log"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def format_line(*parts: str) -> str:
    text = " ".join(p for p in parts if p)
    # One event, one line: a multi-line message (an error from a CLI) is folded.
    return f"{utc_now()} {' '.join(text.split())}\n"


def emit(run_dir: str | os.PathLike[str], *parts: str) -> None:
    """Append e.g. `2026-11-21T14:31:00Z research codex iteration 2/10`."""
    data = format_line(*parts).encode("utf-8", "replace")
    path = os.path.join(run_dir, PROGRESS_FILE)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
