"""research/.gitignore: a run (its topic, the agents' reports, their logs) is never committed
by accident.

A research folder that holds only council's own things gets `*`, which ignores everything in
it, itself included (as a Python venv does), so nothing shows in `git status` at all. A folder
that also holds files of the user's (a project's own `research/`) gets council's names only:
`*` there would silently hide the user's next notes from git. A `.gitignore` already there is
the user's and is never touched. Standard library only: the plugin's prompt hook makes
research/.sessions, and with it the folder, before any run exists.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from pathlib import Path

from council.paths import RUN_ID

NAME = ".gitignore"
IGNORE_ALL = "# Written by council: nothing in this folder is committed by accident.\n*\n"
IGNORE_COUNCIL = (
    "# Written by council: its runs in this folder are never committed by accident.\n"
    "/[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]-*/\n"
    "/latest\n/.latest-*\n/.sessions/\n/crash-*.log\n/.council-probe-*\n"
)
# Names council itself leaves directly in the research folder (workspace.py, sessions.py,
# crash.py).
COUNCIL_NAMES = ("latest", ".latest-*", ".sessions", "crash-*.log", ".council-probe-*")


def councils_own(name: str) -> bool:
    """Whether an entry of the research folder is one council makes."""
    return bool(RUN_ID.fullmatch(name)) or any(fnmatch.fnmatchcase(name, pattern)
                                               for pattern in COUNCIL_NAMES)


def content(names: list[str]) -> str:
    """The .gitignore for a research folder holding `names`: everything when all are
    council's, else council's names only."""
    return IGNORE_ALL if all(councils_own(n) for n in names) else IGNORE_COUNCIL


def ensure(base: Path) -> bool:
    """Write base/.gitignore unless something stands at that name (never followed, never
    replaced); whether it was written. A folder council cannot write to gets none: the run's
    own creation reports that."""
    try:
        names = os.listdir(base)
        if NAME in names:
            return False
        fd = os.open(base / NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
    except OSError:  # FileExistsError: written meanwhile, or a link stands there
        return False
    with contextlib.suppress(OSError), os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content(names))
    return True
