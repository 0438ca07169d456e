"""research/.sessions/<session id>.json: the council requests a Claude Code session made.

The plugin's UserPromptSubmit hook records a `/council:deep-research` request here the moment
it is typed; the Stop hook of the same turn (same `prompt_id`) claims it and drives the run.
Nothing is read from the session's transcript, which print mode may not have written yet (and
`--no-session-persistence` never writes).

A request moves pending → running (bound to a run) → released, once. Every change is a
read-modify-write under an flock of the folder (disk.locked), written atomically, so a repeated or
concurrent Stop can never start a second run, and two sessions never share a file. The folder
is 0700 and its files 0600 (a request holds the topic), read and written through agentfs:
a link or FIFO planted there is never followed or waited on.

This module sits beside `state` and `workspace`: the supervisor asks it whether a session
still waits on a run and releases sessions on cancel; it knows nothing of hooks or phases.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

from council.store import agentfs, disk, gitignore

SESSIONS_DIR = ".sessions"
KEEP = 20  # requests remembered per session (released ones are only history)
MAX_FILE_BYTES = 1 << 20  # KEEP requests, each a typed command line
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
T = TypeVar("T")

PENDING, RUNNING, RELEASED = "pending", "running", "released"


@dataclass
class Request:
    """One typed `/council:deep-research ARGS`."""

    prompt_id: str | None
    args: str
    received_at: float = field(default_factory=time.time)
    status: str = PENDING
    run: str | None = None
    reminders: int = 0  # times the main session was asked again for the final report

    @classmethod
    def from_dict(cls, data: object) -> Request | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(prompt_id=_opt_str(data.get("prompt_id")), args=str(data["args"]),
                       received_at=float(data.get("received_at", 0)),
                       status=str(data.get("status", RELEASED)),
                       run=_opt_str(data.get("run")), reminders=int(data.get("reminders", 0)))
        except (KeyError, TypeError, ValueError):
            return None


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def session_file(base: Path, session_id: str) -> Path:
    """Where a session's requests live; refuses an id that could name another path."""
    if not SESSION_ID.fullmatch(session_id):
        raise ValueError(f"unexpected session id {session_id!r}")
    return base / SESSIONS_DIR / f"{session_id}.json"


def load(path: Path) -> list[Request]:
    """A session's requests, oldest first. A file council cannot read holds none: an older
    council's binding, or a damaged file, never starts anything."""
    try:
        data = json.loads(agentfs.read(path, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not a plain file, or not JSON
        return []
    items = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [r for r in map(Request.from_dict, items) if r is not None]


def _save(path: Path, requests: list[Request]) -> None:
    kept = requests[-KEEP:]
    agentfs.write(path.parent, path.name,
                  json.dumps({"requests": [asdict(r) for r in kept]}))  # 0600


def _locked(base: Path) -> disk.Locked:
    """The sessions folder, locked (disk.locked): made 0700 on first use; a link at
    .sessions (a cloned repository's) is refused there, not followed."""
    folder = base / SESSIONS_DIR
    if not base.is_dir():  # the research folder's first use: a typed request, before any run
        base.mkdir(parents=True, exist_ok=True)
        gitignore.ensure(base)
    with suppress(FileExistsError):
        folder.mkdir(0o700)
    return disk.locked(folder, folder=True)


def update(base: Path, session_id: str, change: Callable[[list[Request]], T]) -> T:
    """Apply `change` to a session's requests (in place) and save them, under the lock."""
    path = session_file(base, session_id)
    with _locked(base):
        requests = load(path)
        result = change(requests)
        _save(path, requests)
    return result


def match(requests: list[Request], prompt_id: str | None) -> Request | None:
    """The request a Stop with this prompt_id belongs to.

    By prompt_id when the Stop carries one (Claude Code sends the same id to the
    UserPromptSubmit and every Stop of a turn); else the newest request still open, since
    public docs do not promise prompt_id. A request recorded without an id is matched the
    same way."""
    if prompt_id:
        for request in reversed(requests):
            if request.prompt_id == prompt_id:
                return request
    for request in reversed(requests):
        if request.status != RELEASED and (not prompt_id or request.prompt_id is None):
            return request
    return None


def supersede(requests: list[Request], keep: Request | None = None) -> list[Request]:
    """Release every open request but `keep`: a new prompt means their turns are over. Their
    Stop never came (the user interrupted the turn) or their hook was stopped; either way a
    later stop must not start or drive them. Returns the ones that were bound to a run."""
    stale = []
    for request in requests:
        if request is not keep and request.status != RELEASED:
            if request.status == RUNNING:
                stale.append(request)
            request.status = RELEASED
    return stale


def drop_pending(requests: list[Request]) -> None:
    """A new prompt: the requests whose Stop never came (the user interrupted that turn) must
    not start at some later stop. Running ones are left to the next Stop, which names them
    (`supersede`): a prompt typed while a council runs must not orphan it."""
    for request in requests:
        if request.status == PENDING:
            request.status = RELEASED


def record(base: Path, session_id: str, prompt_id: str | None, args: str) -> None:
    """A typed request, pending until its turn's Stop."""
    def change(requests: list[Request]) -> None:
        drop_pending(requests)
        requests.append(Request(prompt_id=prompt_id, args=args))

    update(base, session_id, change)


def _each_session(base: Path) -> Iterator[Path]:
    folder = base / SESSIONS_DIR
    if folder.is_dir():
        yield from folder.glob("*.json")


def is_bound(base: Path, run_id: str) -> bool:
    """Whether a Claude session is still driving this run."""
    return any(r.run == run_id and r.status == RUNNING
               for path in _each_session(base) for r in load(path))


def release_run(base: Path, run_id: str) -> None:
    """Release every session request bound to a run (cancel): those sessions may stop."""
    for path in list(_each_session(base)):
        def change(requests: list[Request]) -> None:
            for request in requests:
                if request.run == run_id:
                    request.status = RELEASED

        if any(r.run == run_id and r.status != RELEASED for r in load(path)):
            update(base, path.stem, change)
