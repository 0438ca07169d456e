"""Which project config files the user has trusted.

A `./council.yaml` comes with the project, and a cloned repository can ship one whose seats
put `--dangerously-bypass-approvals-and-sandbox` or an `--mcp-config` shell command on a CLI's
command line, or pass `GITHUB_TOKEN` to an agent. council runs as the user, so such a file is
obeyed only once the user has said so, as Claude Code and Codex gate a project's settings
behind folder trust: `council trust FILE` records the file's real path and the sha256 of its
bytes in the user's own config folder, and a file that is unknown, or whose bytes changed
since, is refused with one line saying what it would change. A file the user named with
`--config`, and the user's own config file, need no record: the user chose them.

The decision (`verdict`) is a pure function of the record and the bytes read; the record is
written with `disk.atomic_write`. Standard library only, cheap to import: the hosts' hooks
load the options of every council request.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from council import paths
from council.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORE = "trusted.json"
VERSION = 1
TRUSTED, CHANGED, UNKNOWN = "trusted", "changed", "unknown"
# What the config's origin was, as the plan and state.yaml say it.
EXPLICIT = "named with --config"
OWN = "your own config file"


class UntrustedConfig(ConfigError):
    """A project config file the user has not trusted, or that changed since: one line naming
    it, what it would change and the command that trusts it."""

    def __init__(self, path: Path, summary: str, changed: bool) -> None:
        self.path = path
        self.summary = summary
        self.changed = changed
        super().__init__(self.line())

    def line(self, absolute: bool = False) -> str:
        """The refusal. `absolute`: name the file by its full path (a hook's user types the
        command in a terminal that may stand elsewhere than the session)."""
        name = shown(self.path, absolute)
        why = "changed since you trusted it" if self.changed else "is not trusted"
        return (f"{name} {why} (it sets {self.summary}): review it, then run "
                f"`council trust {shlex.quote(name)}`")


def shown(path: Path, absolute: bool = False) -> str:
    """How a file is named to the user: `./council.yaml` below the current folder, else its
    full path; as given, never resolved (a link is named as the link)."""
    full = Path(os.path.abspath(path))
    text = str(full)
    if not absolute and full.is_relative_to(Path.cwd()):
        text = "./" + str(full.relative_to(Path.cwd()))
    return text if text.isprintable() else json.dumps(text)


def store_file() -> Path:
    """trusted.json beside the user's own config file (so $COUNCIL_CONFIG_HOME and
    $XDG_CONFIG_HOME move both)."""
    return paths.user_config_file().parent / STORE


def digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def load() -> dict[str, dict[str, Any]]:
    """The trusted files: real path → {"sha256", "trusted_at"}; empty without a record. A
    record council did not write is an error, not an empty list (a typo would otherwise
    refuse every project, and `council trust` would overwrite the user's file)."""
    path = store_file()
    try:
        with open(path, "rb") as handle:
            text = handle.read(4_000_000)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
        files = data["files"]
        if not isinstance(files, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("sha256"), str)
                for v in files.values()):
            raise ValueError("files")
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{path} is not a trust record council wrote; remove it, then "
                          "trust your project config files again") from exc
    return files


def verdict(record: dict[str, dict[str, Any]], real: str, sha256: str) -> str:
    """TRUSTED when `real` was trusted with these very bytes, CHANGED when with others,
    UNKNOWN when never."""
    entry = record.get(real)
    if entry is None:
        return UNKNOWN
    return TRUSTED if entry.get("sha256") == sha256 else CHANGED


def record(real: Path, sha256: str) -> None:
    """Trust `real` (a resolved path) with these bytes, replacing what was recorded for it."""
    import time

    files = load()
    files[str(real)] = {"sha256": sha256,
                        "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    _save(files)


def revoke(real: Path) -> bool:
    """Forget `real`; whether it had been trusted."""
    files = load()
    if files.pop(str(real), None) is None:
        return False
    _save(files)
    return True


def _save(files: dict[str, dict[str, Any]]) -> None:
    from council.store.disk import atomic_write

    path = store_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Paths and digests only: nothing for redaction to hide, and a path it rewrote would
    # no longer match.
    atomic_write(path, json.dumps({"version": VERSION, "files": files}, indent=2,
                                  sort_keys=True) + "\n", redacted=True)
