"""Every path council uses comes from here, so tests can point them all at tmp_path."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

RESEARCH_DIR_ENV = "COUNCIL_RESEARCH_DIR"
RESEARCH_FOLDER = "research"  # the runs' folder in a project (and in an eval's sample folder)
CONFIG_HOME_ENV = "COUNCIL_CONFIG_HOME"
STATE_HOME_ENV = "COUNCIL_STATE_HOME"
# A run's folder name: its UTC start time and a random suffix. Always `fullmatch`ed: `$`
# with re.match would let "20261122-031441-88dba5\n" through.
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
# A run folder's working files, out of its top level (the reports a person reads): the
# agents' JSON answers council rewrites (scope-draft.json, …-verdicts.json) and the lock
# files (supervisor.lock, .state.lock). A run made before it has them at the top level.
RUN_WORK = "work"
# A seat's name (and a CLI's): it names folders and files of the run and appears in every
# progress line, so it is a plain word. Checked in every config and every state.yaml read.
SEAT_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def research_dir() -> Path:
    """The folder holding one sub-folder per run (default ./research)."""
    return Path(os.environ.get(RESEARCH_DIR_ENV) or Path.cwd() / RESEARCH_FOLDER).absolute()


def run_work(run_dir: Path) -> Path:
    """Where the run in `run_dir` keeps its working files: its `work/` folder, which
    create_workspace makes with the run, or, for a run made before (no such folder), the run
    folder itself, where that run's drafts and locks already are, so it still resumes and
    reads as it was made. Only a real folder counts (lstat): a link named `work` is never
    followed, and the run's files stay where they were."""
    try:
        if stat.S_ISDIR(os.lstat(run_dir / RUN_WORK).st_mode):
            return run_dir / RUN_WORK
    except OSError:
        pass
    return run_dir


def user_config_file() -> Path:
    """~/.config/council/config.yaml, or $COUNCIL_CONFIG_HOME/config.yaml."""
    base = os.environ.get(CONFIG_HOME_ENV)
    if base:
        return Path(base) / "config.yaml"
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "council" / "config.yaml"


def project_config_file() -> Path:
    return Path.cwd() / "council.yaml"


def state_home() -> Path:
    """council's own state on this machine (the runs it made): $COUNCIL_STATE_HOME, else
    $XDG_STATE_HOME/council, else ~/.local/state/council. Never in a project: a project
    arrives with whatever its author put in it."""
    base = os.environ.get(STATE_HOME_ENV)
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "council"
