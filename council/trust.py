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

Who may answer `council trust` and `council adopt` (`person_answers`): a person, never a
model. A model's shell tool has no terminal, and `script` or a pipe gives it one, so a
terminal proves little; what a model cannot shed is its parent. The question is refused when
this process runs under an agent: a claude, codex or gemini CLI, or council itself (a run's
supervisor and seats, a hook, the MCP server) anywhere in its ancestry, or their marks in the
environment. `--yes` skips the question for the user's own scripts (cron), under the same
rule. The decision (`agent_above`) is a pure function of the ancestry, read by `ancestry`
(psutil, imported there), and of the environment; `record` and run/recovery.adopt ask it
again before they write, so no path to them from a hook or the MCP server can write either.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from council import paths
from council.errors import ConfigError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
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
    recorded for it. Refused under an agent (`refuse_an_agent`)."""
    import time

    refuse_an_agent("nothing was trusted")
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


# ---------------------------------------------------------------- a person, or an agent

AGENT_CLIS = ("claude", "codex", "gemini")
# An agent CLI known by its npm package, whatever starts it (`npx`, `node …/dist/index.js`).
PACKAGES = {"@anthropic-ai/claude-code": "claude", "@openai/codex": "codex",
            "@google/gemini-cli": "gemini"}
# Programs that run a script named by their first argument: the script is the program.
INTERPRETERS = ("node", "nodejs", "bun", "deno", "python", "python3")
# What each CLI sets in its shell tool's environment (seen: claude 2.1.332, codex 0.171,
# gemini 0.61). A model can unset a variable; it cannot change its parent, so these only add
# to the ancestry: they still tell when the ancestry was cut (a double fork).
MARKERS = {"CLAUDECODE": "claude", "CODEX_THREAD_ID": "codex", "GEMINI_CLI": "gemini"}
# council commands that answer a model: a host's hook and the MCP server.
FOR_MODELS = ("hook", "mcp")
T = TypeVar("T")


@dataclass(frozen=True)
class Ancestor:
    """One process above this one, as `ancestry` read it (empty where it could not)."""

    pid: int
    name: str = ""  # the kernel's name (a script started by its #! line: the script's)
    exe: str = ""
    argv: tuple[str, ...] = ()


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    for end in (".exe", ".js", ".mjs", ".cjs"):
        name = name.removesuffix(end)
    return name


def _is_interpreter(path: str) -> bool:
    name = _stem(path)
    return name.rstrip("0123456789.") in INTERPRETERS


def council_command(argv: tuple[str, ...] | list[str]) -> str | None:
    """The council command `argv` runs (`run`, `hook`, `mcp`, "" for none), or None when it
    is not council: `council …`, `python -m council …`, `python -I …/council/__main__.py …`."""
    args = list(argv)
    for i, arg in enumerate(args[:4]):
        if (_stem(arg) == "council" and (i == 0 or _is_interpreter(args[0])
                                        or args[i - 1] == "-m")) \
                or arg.replace("\\", "/").endswith("council/__main__.py"):
            rest = [a for a in args[i + 1:] if not a.startswith("-")]
            return rest[0] if rest else ""
    return None


def agent_of(proc: Ancestor) -> str | None:
    """Which agent `proc` is: "claude", "codex" or "gemini" for those CLIs (their native
    binary, a node launcher of their package), "council" for council itself, else None."""
    names = [_stem(proc.name), _stem(proc.exe), *(_stem(a) for a in proc.argv[:1])]
    script = ""  # what an interpreter runs: its first argument that is no option
    if any(map(_is_interpreter, (proc.exe, *proc.argv[:1]))):
        script = next((a for a in proc.argv[1:4] if not a.startswith("-")), "")
        names.append(_stem(script))
    for cli in AGENT_CLIS:
        if cli in names:
            return cli
    for package, cli in PACKAGES.items():
        if any(package in text for text in (proc.exe, *proc.argv[:1], script)):
            return cli
    if "council" in names[:2] or council_command(proc.argv) is not None:
        return "council"
    return None


def agent_above(ancestors: Iterable[Ancestor], env: Mapping[str, str],
                argv: tuple[str, ...] | list[str] = ()) -> str | None:
    """What shows that an agent, not a person, started this process, in words ("claude (pid
    4242)"), or None: the nearest ancestor that is an agent CLI or council, else an agent
    CLI's mark in `env`, else this process itself (`argv`) being council's hook or MCP
    server, which answer models."""
    for proc in ancestors:
        if (agent := agent_of(proc)) is not None:
            return f"{agent} (pid {proc.pid})"
    for name, cli in MARKERS.items():
        if env.get(name):
            return f"{cli} ({name} is set)"
    if (command := council_command(argv)) in FOR_MODELS:
        return f"council {command}"
    return None


def person_answers(yes: bool, terminal: bool, agent: str | None) -> bool:
    """Whether a question only a person may answer (trust a config, adopt a run) may be
    asked, or skipped with `--yes`: never under an agent (`agent_above`), and only at a
    terminal unless `yes` (the user's own script)."""
    return agent is None and (yes or terminal)


def ancestry(limit: int = 128) -> list[Ancestor]:
    """The processes above this one, nearest first, as far as they can be read (another
    user's process gives what it allows: its pid, often its name)."""
    import psutil

    def read(call: Callable[[], T], default: T) -> T:
        try:
            return call()
        except (psutil.Error, OSError):
            return default

    found: list[Ancestor] = []
    proc = read(psutil.Process().parent, None)
    while proc is not None and len(found) < limit:
        found.append(Ancestor(proc.pid, read(proc.name, ""), read(proc.exe, ""),
                              tuple(read(proc.cmdline, []))))
        proc = read(proc.parent, None)
    return found


def agent_here() -> str | None:
    """`agent_above` for this process, read now."""
    return agent_above(ancestry(), os.environ, sys.argv)


def refuse_an_agent(nothing: str) -> None:
    """Before a trust or adoption record is written: refuse (UsageError, ending `nothing`)
    when this process runs under an agent (`agent_here`)."""
    if (agent := agent_here()) is not None:
        raise UsageError(f"only a person may do this, in a terminal of their own; this runs "
                         f"under {agent}: {nothing}")


def ask_a_person(yes: bool, refusal: str) -> None:
    """`council trust` and `council adopt`, before they show anything: refused with
    `refusal` unless a person may answer (`person_answers`): at a terminal, or with `yes`
    (the user's own script), and in neither case under an agent; under one the line also
    names it, so a person who typed it inside an agent's session sees why. Neither says
    `--yes`, so a model is not told it."""
    agent = agent_here()
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if not person_answers(yes, terminal, agent):
        raise UsageError(refusal + (f" (this runs under {agent}, and an agent cannot "
                                    "answer for you)" if agent else ""))
