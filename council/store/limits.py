"""The vendors' hard limits this machine has met: "CLI X, with this credential, is limited
until T" (a plan's usage limit, a daily quota). Kept machine-wide, beside the runs council
made (`~/.local/state/council/limits.json`), because a limit belongs to the credential, not
to the run that met it: a later run, in any project, must not pay for a refused request to
learn it again, and `council resume` must know when a seat can be tried again.

A credential is named, never shown: where the CLI's login comes from (a variable's or a
file's name, readiness/preflight.credentials) and, for a key, a short digest of its value, so
two keys of one CLI are two credentials and nothing in the file can be turned back into the
key. A limit with no known end (the vendor gave none) holds for DEFAULT_HOLD from when it
was met: long enough not to hammer a refused plan, short enough that a limit council
misread costs a few hours, not the seat for good.

The file is the user's own state, written only by council's supervisor through one locked,
atomic writer; a file that cannot be read holds no limit (a run then simply meets the vendor's
refusal again, and records it)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from council import paths
from council.errors import CouncilError
from council.store import agentfs, disk

FILE = "limits.json"
MAX_BYTES = 1 << 20
VERSION = 1
DEFAULT_HOLD = timedelta(hours=5)  # a limit whose end the vendor did not say


@dataclass(frozen=True)
class Limit:
    """One hard limit met: which CLI and credential, until when, and what the vendor said."""

    cli: str
    credential: str  # credential_id(): a name and a digest, never a secret
    kind: str  # agents/failure.Kind's value: plan_limit or quota
    until: str  # ISO 8601, UTC: when the seat may be tried again
    message: str  # the CLI's own words, one line
    met: str  # ISO 8601, UTC: when council met it
    run_id: str | None = None
    seat: str | None = None

    def until_time(self) -> datetime:
        return datetime.fromisoformat(self.until)

    def active(self, now: datetime) -> bool:
        return self.until_time() > now

    def describe(self) -> str:
        """`codex (OPENAI_API_KEY) is limited until 2026-11-30 00:53 UTC: You've hit…`."""
        name = self.credential.split("#", 1)[0]
        return (f"{self.cli} ({name}) is limited until "
                f"{self.until_time():%Y-%m-%d %H:%M} UTC: {self.message}")


def credential_id(source: str | None, value: str | None = None) -> str:
    """A credential's name for the record: its source (`ANTHROPIC_API_KEY`, `auth.json`) and,
    when the value is known (a key in the environment), `#` and 12 hex digits of its sha256.
    None (no credential found) is `unknown`."""
    name = source or "unknown"
    if not value:
        return name
    return f"{name}#{hashlib.sha256(value.encode('utf-8')).hexdigest()[:12]}"


def file() -> Path:
    return paths.state_home() / FILE


def load() -> list[Limit]:
    """Every limit recorded, expired ones too; none when there is no readable file."""
    try:
        data = json.loads(agentfs.read(file(), MAX_BYTES))
        return [Limit(**{k: v for k, v in raw.items() if k in Limit.__dataclass_fields__})
                for raw in data["limits"] if isinstance(raw, Mapping)]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def active(now: datetime | None = None) -> list[Limit]:
    """The limits still in force at `now` (default: this moment)."""
    now = now or datetime.now(UTC)
    return [limit for limit in load() if limit.active(now)]


def limit_on(cli: str, credential: str, now: datetime | None = None) -> Limit | None:
    """The limit in force on this CLI with this credential, the one ending last, if any."""
    found = [limit for limit in active(now) if limit.cli == cli and limit.credential == credential]
    return max(found, key=Limit.until_time) if found else None


def until(resets_at: datetime | None, wait: float | None, now: datetime) -> datetime:
    """When a limit ends: the vendor's reset time, else now + its wait, else DEFAULT_HOLD."""
    if resets_at is not None:
        return resets_at.astimezone(UTC)
    if wait is not None:
        return now + timedelta(seconds=wait)
    return now + DEFAULT_HOLD


def record(limit: Limit) -> None:
    """Add `limit`, replacing any earlier one on the same CLI and credential, and dropping
    the expired ones."""
    now = datetime.now(UTC)

    def edit(limits: list[Limit]) -> list[Limit]:
        return [*(old for old in limits if old.active(now)
                  and (old.cli, old.credential) != (limit.cli, limit.credential)), limit]

    _change(edit)


def clear(cli: str, credential: str | None = None) -> None:
    """Forget the limits on `cli` (with `credential`, only that one's): the user says it is
    lifted (a new plan, a new key)."""
    _change(lambda limits: [old for old in limits if old.cli != cli or (
        credential is not None and old.credential != credential)])


def _change(edit: Callable[[list[Limit]], list[Limit]]) -> None:
    path = file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with disk.locked(path.parent / f".{FILE}.lock"):
            limits = edit(load())
            text = json.dumps({"version": VERSION, "limits": [asdict(x) for x in limits]},
                              indent=1)
            disk.atomic_write(path, text + "\n")
    except OSError as exc:
        raise CouncilError(f"cannot record the vendors' limits in {path}: "
                           f"{exc.strerror or exc}") from exc
