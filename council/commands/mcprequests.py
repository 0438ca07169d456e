"""Which run an MCP request started: each request is recorded exactly once, and the same
request, asked again, gets the same run.

What "the same request" means:

- With a `request_key` (the client's idempotency key; optional): that key with the same
  arguments, also after the server or the client restarted, as long as it is among the last
  `sessions.KEEP` starts recorded in this research folder. The key with other arguments is
  refused: it names another request.
- Without one: the same JSON-RPC request id, from the same server process, with the same
  arguments: a request sent twice. A request id names a request only within its
  connection (clients number their requests afresh in every session), so after a restart
  the same id is a new request; a client that retries across restarts sends a key.

The records live beside the hosts' requests, in `research/.sessions/mcp.json`, and go
through `sessions.update`: the same flock, the same no-follow 0600 file, the same length
limit. An MCP record is born `released`: no host session waits on it, so nothing that
releases or supersedes hosts' requests (a cancel, a new prompt) has anything to change.

The file can also have come with a cloned repository: a record whose run council did not
make on this machine (store/provenance.py) names no run, so a planted key never resumes a
planted run, whose seats' `extra_args` would reach a CLI's command line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from council.errors import CouncilError, UsageError
from council.paths import RUN_ID
from council.store import provenance, sessions
from council.store.sessions import Request

SESSION = "mcp"  # research/.sessions/mcp.json
T = TypeVar("T")


def fingerprint(arguments: Mapping[str, Any]) -> str:
    """The request's arguments, as one hash: canonical JSON (sorted keys), the key itself
    left out."""
    fields = {k: v for k, v in arguments.items() if k != "request_key"}
    text = json.dumps(fields, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def key_for(request_key: str | None, instance: str, request_id: object) -> str:
    """The record's key: the client's own key (hashed: it is the client's text), else this
    server process and the JSON-RPC id."""
    if request_key is not None:
        return "key:" + hashlib.sha256(request_key.encode()).hexdigest()[:32]
    return f"id:{instance}:{json.dumps(request_id)}"


def find(requests: list[Request], key: str, digest: str,
         own: Callable[[str], bool]) -> str | None:
    """The run the request with this key started, or None; a UsageError when the key was
    used with other arguments. Only records of runs that are `own` count."""
    for request in reversed(requests):
        if request.prompt_id != key or request.run is None or not own(request.run):
            continue
        if request.args == digest:
            return request.run
        if key.startswith("key:"):
            raise UsageError(f"this request_key already started run {request.run} with other "
                             "arguments: use a new key for a new request")
    return None


def lookup(base: Path, key: str, digest: str) -> str | None:
    """The run this request already started, if it did (nothing is created to say no)."""
    if not sessions.session_file(base, SESSION).exists():
        return None
    return _update(base, lambda requests: find(requests, key, digest, _owner(base)))


def claim(base: Path, key: str, digest: str, create: Callable[[], str]) -> tuple[str, bool]:
    """(run id, whether it is new): the run this request started, or `create()`'s, recorded
    for it, under the lock, so two copies of one request start one run."""
    def change(requests: list[Request]) -> tuple[str, bool]:
        found = find(requests, key, digest, _owner(base))
        if found is not None:
            return found, False
        run = create()
        requests.append(Request(prompt_id=key, args=digest, status=sessions.RELEASED, run=run))
        return run, True

    return _update(base, change)


def _owner(base: Path) -> Callable[[str], bool]:
    """Whether a recorded run id names a run council made on this machine."""
    def own(run_id: str) -> bool:
        return bool(RUN_ID.fullmatch(run_id)) and provenance.is_own(base / run_id)

    return own


def _update(base: Path, change: Callable[[list[Request]], T]) -> T:
    """sessions.update, with a folder it cannot use (unwritable, or a link a cloned
    repository put at research/.sessions) said in one line."""
    try:
        return sessions.update(base, SESSION, change)
    except OSError as exc:
        where = base / sessions.SESSIONS_DIR
        raise CouncilError(f"cannot record the request in {where}: "
                           f"{exc.strerror or exc}") from exc
