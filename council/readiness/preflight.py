"""Before a run starts: is each CLI it needs installed, which version, and logged in?

A bad setup is named before any folder is created or any agent is started, in one line per
problem that names the fix (the npm package, the login command, the variable). No secret is
ever read out: credentials are looked for by name (an environment variable is set, a login
file exists), never by value. The `--version` calls run in parallel, so the whole check
takes about as long as the slowest CLI's start-up (under 2 s), and only the first time:
a version is remembered for the executable it came from (its real path, size and mtime, so
an upgrade asks again) in ~/.cache/council/versions.json. A `--version` call gets what an
agent would of council's environment (the allow-list), and runs in a throwaway folder that is
also its HOME: nothing of the project it was started from, nothing it writes left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from council import clis
from council.agents import adapter_for, mcp
from council.agents.environment import agent_env
from council.config import CLIS
from council.errors import UsageError
from council.readiness import endpoint
from council.runoptions import RunOptions, Seat
from council.store import limits, logins

# Each CLI's npm package, its login hint and the variables that log it in: its facts (clis.py).
NPM = {name: cli.npm for name, cli in clis.REGISTRY.items()}
LOGIN = {name: cli.login for name, cli in clis.REGISTRY.items()}
KEYS = {name: cli.keys for name, cli in clis.REGISTRY.items()}
VERSION_TIMEOUT = 1.5  # seconds for `<cli> --version`; the check must stay under 2 s


@dataclass(frozen=True)
class Readiness:
    """What council found for one CLI."""

    cli: str
    path: str | None
    version: str | None
    tested: str  # the version council is tested with (and its install line names)
    credentials: str | None  # where a login was found (a variable's or a file's name)
    # A key the CLI would read from a file council keeps from its agents (gemini's
    # ~/.gemini/.env): named, so the fix says to export it rather than to log in again.
    stranded: str | None = None
    # Every version the real-CLI suite passed on (tested_versions.json's `passed`): a user
    # whose CLI updated itself, or who kept an earlier pin, is not warned for it.
    passed: tuple[str, ...] = ()

    @property
    def is_tested(self) -> bool:
        return self.version in (self.tested, *self.passed)

    @property
    def ready(self) -> bool:
        return self.path is not None and self.credentials is not None

    @property
    def problem(self) -> str | None:
        """One line naming the fix, or None."""
        if self.path is None:
            return (f"{self.cli} is not installed: npm install -g {NPM[self.cli]}@{self.tested} "
                    f"(Node {node_needed(self.cli)} or newer)")
        if self.credentials is None and self.stranded:
            return (f"{self.cli} has no credentials its agents can use: {self.stranded}, a file "
                    "council keeps from its agents (a cloned project's .env is read the same "
                    "way); export the variable in the shell that runs council")
        if self.credentials is None:
            return f"{self.cli} has no credentials: {LOGIN[self.cli]}"
        return None

    @property
    def warning(self) -> str | None:
        if self.path is not None and self.version is not None and not self.is_tested:
            return (f"{self.cli} {self.version} is not the version council is tested with "
                    f"({self.tested}); it may still work")
        return None


def _tested() -> dict[str, dict[str, Any]]:
    text = resources.files("council").joinpath("tested_versions.json").read_text("utf-8")
    return {cli: dict(json.loads(text)[cli]) for cli in CLIS}


def tested_versions() -> dict[str, str]:
    """The version of each CLI council installs and is tested with."""
    return {cli: str(data["version"]) for cli, data in _tested().items()}


def node_needed(cli: str) -> str:
    """The Node.js major version the pinned release declares it needs (its `engines`)."""
    return str(_tested()[cli].get("node", "")).removeprefix(">=") or "20"


def passed_versions() -> dict[str, tuple[str, ...]]:
    """Every version of each CLI the real-CLI suite passed on."""
    return {cli: tuple(map(str, data.get("passed") or ())) for cli, data in _tested().items()}


def credentials(cli: str, env: dict[str, str], home: Path) -> str | None:
    """Where this CLI's login comes from (a name, never a value), or None: one of its keys,
    its login file (where redaction reads it too), or what its adapter finds besides."""
    for name in KEYS[cli]:
        if env.get(name):
            return name
    login = Path(logins.login_file(cli, env, str(home)))
    if login.is_file():
        return str(login)
    return adapter_for(cli).login_elsewhere(login.parent, env)


def credential_key(cli: str, env: dict[str, str], home: Path) -> str:
    """The credential a seat of `cli` will use, as store/limits.py names it (a limit is
    recorded and looked up under it): the variable's name and a digest of its value, or the
    login file's name. Never the value itself."""
    source = credentials(cli, env, home)
    if source in KEYS[cli]:
        return limits.credential_id(source, env.get(source))
    return limits.credential_id(login_name(source))


def login_name(source: str | None) -> str | None:
    """Where a login comes from, as a line shows it: a variable's name, a login file's."""
    return Path(source).name if source and "/" in source else source


def stranded_key(cli: str, env: dict[str, str], home: Path) -> str | None:
    """A key the CLI would read from a file council keeps from its agents (gemini's
    ~/.gemini/.env): named, so the fix says to export it rather than to log in again."""
    return adapter_for(cli).stranded_key(env, home)


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def version_env(cli: str, env: dict[str, str], scratch: Path) -> dict[str, str]:
    """The environment of `<cli> --version`: the agents' allow-list of `env`, `scratch` as
    HOME, and what the CLI's facts add (gemini in one process: its relaunched child doubles
    the start-up)."""
    return {**agent_env(cli, env), "HOME": str(scratch), **dict(clis.facts(cli).version_env)}


def scratch_folder(root: Path) -> None:
    """Make `root` a folder where a CLI finds nothing of anyone's: an empty `.env` and
    `.gemini/.env` end gemini's walk up for one (trusted or not) at once."""
    (root / ".gemini").mkdir(exist_ok=True)
    for name in (".env", ".gemini/.env"):
        (root / name).write_bytes(b"")


def _version(path: str, env: dict[str, str], timeout: float, cwd: Path) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, cwd=cwd,
                             timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return next((w for w in out.stdout.split() if w[:1].isdigit()), None)


def version_cache(env: dict[str, str], home: Path) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(home / ".cache")
    return Path(base) / "council" / "versions.json"


def executable_key(path: str) -> str | None:
    """What identifies the program behind `path`: its real file, inode, size, mtime and
    ctime (npm may install files with a fixed mtime, but a rewritten file has a new ctime)."""
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
    except OSError:
        return None
    return f"{real}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _versions(paths: dict[str, str], env: dict[str, str], home: Path, timeout: float,
              fresh: bool) -> dict[str, str | None]:
    """Each CLI's version: remembered ones from the cache (unless `fresh`), the rest asked in
    parallel and remembered."""
    cache_file = version_cache(env, home)
    cached = {} if fresh else _json(cache_file)
    known = cached if isinstance(cached, dict) else {}
    keys = {cli: executable_key(path) for cli, path in paths.items()}
    found: dict[str, str | None] = {cli: str(known[key]) for cli, key in keys.items()
                                    if key and isinstance(known.get(key), str)}
    ask = {cli: path for cli, path in paths.items() if cli not in found}
    if ask:
        with (tempfile.TemporaryDirectory(prefix="council-version-") as tmp,
              ThreadPoolExecutor(max_workers=len(ask)) as pool):
            scratch = Path(tmp)
            scratch_folder(scratch)
            futures = {cli: pool.submit(_version, path, version_env(cli, env, scratch),
                                        timeout, scratch)
                       for cli, path in ask.items()}
            found.update({cli: future.result() for cli, future in futures.items()})
        new = {keys[cli]: found[cli] for cli in ask if keys[cli] and found[cli]}
        if new:
            _remember(cache_file, new)
    return found


def _remember(cache_file: Path, new: dict[str | None, str | None]) -> None:
    """Add to the cache; a cache that cannot be written only costs the next run the
    `--version` calls."""
    from council.store.disk import atomic_write

    old = _json(cache_file)
    data = {**(old if isinstance(old, dict) else {}), **new}
    with suppress(OSError):
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cache_file, json.dumps(data, indent=1), redacted=True)


def check(clis: list[str], env: dict[str, str] | None = None, home: Path | None = None,
          version_timeout: float = VERSION_TIMEOUT,
          every_version: bool = False) -> dict[str, Readiness]:
    """Each CLI's readiness, the `--version` calls in parallel (a version not known in
    `version_timeout` is left unknown: it only ever warns). Only the CLIs that can run are
    asked their version, unless `every_version` (doctor shows them all)."""
    env = dict(os.environ) if env is None else env
    home = Path.home() if home is None else home
    pinned, passed = tested_versions(), passed_versions()
    paths = {cli: shutil.which(cli, path=env.get("PATH")) for cli in clis}
    logins = {cli: credentials(cli, env, home) for cli in clis}
    wanted = {cli: path for cli, path in paths.items()
              if path and (logins[cli] or every_version)}
    versions = _versions(wanted, env, home, version_timeout, fresh=every_version)
    return {cli: Readiness(cli, paths[cli], versions.get(cli), pinned[cli], logins[cli],
                           None if logins[cli] else stranded_key(cli, env, home), passed[cli])
            for cli in clis}


def needs_login(seat: Seat) -> bool:
    """Whether the seat needs its vendor's login: a seat with a base_url needs its CLI
    installed and no login, its server being checked instead (endpoint.py). The one place
    this is decided: a run's preflight and `council doctor` both ask it."""
    return not seat.self_hosted


def can_start(seat: Seat, found: Readiness) -> bool:
    """Whether the seat's CLI, as `found`, lets it start: installed, and logged in when the
    seat needs a login (needs_login)."""
    return found.ready if needs_login(seat) else found.path is not None


def prepare(options: RunOptions, explicit: bool,
            found: dict[str, Readiness] | None = None) -> tuple[RunOptions, list[str]]:
    """The run's options with the seats whose CLI is ready, and the lines to show (skips and
    version warnings). Seats named with --agents must all be ready, and at least one seat
    must be: otherwise a UsageError, one line per problem."""
    clis = sorted({seat.cli for seat in options.seats})
    found = check(clis) if found is None else found
    login = {seat.cli for seat in options.seats if needs_login(seat)}
    notes = [w for cli in clis if (w := found[cli].warning)]
    problems = [p for cli in clis if (p := found[cli].problem) and
                (cli in login or found[cli].path is None)]
    ready = tuple(s for s in options.seats if can_start(s, found[s.cli]))
    if (explicit and problems) or not ready:
        raise UsageError("\n".join(["no agent can run here" if not ready else
                                    "an agent you asked for cannot run here", *problems]))
    for seat in ready:  # every variable its MCP servers read is set (ConfigError if not)
        mcp.given(seat.mcp_servers, os.environ, seat.name)
    servers, server_notes = endpoint.check(ready)
    if servers:
        raise UsageError("\n".join(servers))
    notes += server_notes
    skipped = [s.name for s in options.seats if s not in ready]
    if skipped:
        notes.append(f"skipping {', '.join(skipped)}: "
                     + "; ".join(problems))
    synthesizer = options.synthesizer
    if synthesizer not in {s.name for s in ready}:
        synthesizer = ready[0].name
    return replace(options, seats=ready, synthesizer=synthesizer), notes
