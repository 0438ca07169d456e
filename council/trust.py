"""Which project config files the user has trusted.

A `./council.yaml` comes with the project, and a cloned repository can ship one whose seats
put `--dangerously-bypass-approvals-and-sandbox` or an `--mcp-config` shell command on a CLI's
command line, or pass `GITHUB_TOKEN` to an agent. council runs as the user, so such a file is
obeyed only once the user has said so, as Claude Code and Codex gate a project's settings
behind folder trust: `council trust FILE` shows what the file sets and asks, in a terminal,
then records the file's real path, the sha256 of its bytes and the state of every file its
`extra_args` name by full path (`--mcp-config /p/x.json`: that file's sha256) in the user's
own config folder. A file that is unknown, or whose bytes or named files changed since, is
refused with one line saying what it would change. A file the user named with `--config`,
and the user's own config file, need no record: the user chose them.

The refusal has two wordings. The person at `council run` is told the command that trusts
the file; a model (an MCP client's, a host's hook) is told only to ask the user to review it
and trust it in a terminal, never a command it could run itself (`for_model`).

The decision (`verdict`) is a pure function of the record, the bytes read and the named
files' states; the record is written with `disk.atomic_write`. Standard library only, cheap
to import: the hosts' hooks load the options of every council request.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

from council import paths
from council.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

STORE = "trusted.json"
VERSION = 2  # 2: each entry also holds "named", the files its extra_args name
TRUSTED, CHANGED, UNKNOWN = "trusted", "changed", "unknown"
# What the config's origin was, as the plan and state.yaml say it.
EXPLICIT = "named with --config"
OWN = "your own config file"
# What a file an extra_args value names is, besides "sha256:<hex>" for a plain file.
MISSING, FOLDER = "missing", "a folder"
MAX_NAMED_BYTES = 16 << 20  # a named file larger than this is refused, not hashed


class UntrustedConfig(ConfigError):
    """A project config file the user has not trusted, or that changed since (it, or a file
    its extra_args name): one line naming it, what it would change and the command that
    trusts it; `for_model` is the line for a model, which names no command."""

    def __init__(self, path: Path, summary: str, changed: bool, outline: str,
                 files: tuple[str, ...] = ()) -> None:
        self.path = path
        self.summary = summary  # with the file's values: for the person at the terminal
        self.changed = changed
        self.outline = outline  # checked names only: for a model (config.outline)
        self.files = files  # the named files that changed (the config's own bytes did not)
        super().__init__(self.line())

    def line(self, absolute: bool = False) -> str:
        """The refusal the person at the command line reads. `absolute`: name the file by
        its full path."""
        name = shown(self.path, absolute)
        why = "changed since you trusted it" if self.changed else "is not trusted"
        named = (f"{', '.join(map(_printable, self.files))}, which it names, changed; "
                 if self.files else "")
        return (f"{name} {why} ({named}it sets {self.summary}): review it, then run "
                f"`council trust {shlex.quote(name)}`")

    def for_model(self) -> str:
        """The refusal an MCP client's or a host's model reads: it asks for the user, and
        holds no command and no value from the file (a value could be one). The file is
        named by its full path: the user's terminal may stand in another folder. What it
        sets is named only by the words config.outline takes from checked names."""
        why = "changed since the user trusted it" if self.changed else "is not trusted"
        return (f"{shown(self.path, True)} {why} (it sets {self.outline}); council obeys a "
                "project's config file only once a person has reviewed it and trusted it "
                "in their own terminal, and a model cannot do that for them: ask the user "
                "to review the file and trust it in a terminal")


def _printable(text: str) -> str:
    return text if text.isprintable() else json.dumps(text)


def shown(path: Path, absolute: bool = False) -> str:
    """How a file is named to the user: `./council.yaml` below the current folder, else its
    full path; as given, never resolved (a link is named as the link)."""
    full = Path(os.path.abspath(path))
    text = str(full)
    if not absolute and full.is_relative_to(Path.cwd()):
        text = "./" + str(full.relative_to(Path.cwd()))
    return _printable(text)


def store_file() -> Path:
    """trusted.json beside the user's own config file (so $COUNCIL_CONFIG_HOME and
    $XDG_CONFIG_HOME move both)."""
    return paths.user_config_file().parent / STORE


def digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def load() -> dict[str, dict[str, Any]]:
    """The trusted files: real path → {"sha256", "named", "trusted_at"}; empty without a
    record. A record council did not write is an error, not an empty list (a typo would
    otherwise refuse every project, and `council trust` would overwrite the user's file)."""
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
                and isinstance(v.get("named", {}), dict)
                and all(isinstance(x, str) for x in v.get("named", {}).values())
                for v in files.values()):
            raise ValueError("files")
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{path} is not a trust record council wrote; remove it, then "
                          "trust your project config files again") from exc
    return files


def verdict(record: Mapping[str, Mapping[str, Any]], real: str, sha256: str,
            named: Mapping[str, str] | None = None) -> str:
    """TRUSTED when `real` was trusted with these very bytes and its named files as they
    are (`named`: path → `pin`), CHANGED when with others, UNKNOWN when never. A record from
    before named files were kept names none."""
    entry = record.get(real)
    if entry is None:
        return UNKNOWN
    same = entry.get("sha256") == sha256 and entry.get("named", {}) == dict(named or {})
    return TRUSTED if same else CHANGED


def changed_files(entry: Mapping[str, Any], named: Mapping[str, str]) -> tuple[str, ...]:
    """The named files whose state differs from the record's (one added, gone or edited)."""
    was: Mapping[str, str] = entry.get("named", {})
    return tuple(sorted(p for p in {*was, *named} if was.get(p) != named.get(p)))


def record(real: Path, sha256: str, named: Mapping[str, str] | None = None) -> None:
    """Trust `real` (a resolved path) with these bytes and named files, replacing what was
    recorded for it."""
    import time

    files = load()
    files[str(real)] = {"sha256": sha256, "named": dict(named or {}),
                        "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    _save(files)


# ---------------------------------------------------------------- files extra_args name

def candidates(args: Iterable[str]) -> list[str]:
    """Each value an argument list may name a file by: every argument, and what follows the
    first `=` of one (`--settings=/p/s.json`, codex's `-c model_instructions_file="/p/x"`),
    without its quotes."""
    found = []
    for arg in args:
        found.append(arg)
        if "=" in arg:
            found.append(arg.split("=", 1)[1].strip("\"'"))
    return found


def full_path(value: str) -> str | None:
    """The full path `value` names (`~` expanded, as a CLI may do), or None when it is not
    one: a relative name is the CLI's to resolve, in the agent's own folder."""
    if value.startswith("~"):
        value = os.path.expanduser(value)
    return value if value.startswith("/") else None


def climbs(value: str) -> bool:
    """Whether a relative value names a path through `..`: from the agent's folder that
    reaches the project (or anywhere), a file no record can pin."""
    return full_path(value) is None and ".." in value.split("/")


def pin(path: str, where: str) -> str:
    """What stands at a full path an extra_args value names, as trust records it:
    "sha256:<hex>" of a plain file's bytes, FOLDER (its contents are not pinned) or MISSING
    (a file that appears later changes the verdict). Links are resolved, then the file is
    read bounded and without following a link or blocking (agentfs); a FIFO, a device, a
    file larger than MAX_NAMED_BYTES is a ConfigError starting with `where`."""
    import hashlib

    from council.store import agentfs

    real = os.path.realpath(path)
    try:
        if stat.S_ISDIR(os.stat(real).st_mode):
            return FOLDER
        hashed, size = hashlib.sha256(), 0
        for chunk in agentfs.chunks(real, MAX_NAMED_BYTES + 1):
            hashed.update(chunk)
            size += len(chunk)
    except FileNotFoundError:
        return MISSING
    except OSError as exc:  # agentfs.UnsafeFile says what stands there
        raise ConfigError(f"{where} names {_printable(path)}, which council cannot check "
                          f"for trust: {exc.strerror or exc}") from exc
    if size > MAX_NAMED_BYTES:
        raise ConfigError(f"{where} names {_printable(path)}, larger than "
                          f"{MAX_NAMED_BYTES >> 20} MB: council cannot check it for trust")
    return "sha256:" + hashed.hexdigest()


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
