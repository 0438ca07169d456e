"""`council setup HOST`: install council into Claude Code, Gemini CLI or Codex from the files
this council was installed with (setup.hostfiles()), with each CLI's own commands, so a pip
install needs no checkout. What is already there is read first (setup.py's readers, the same
`council doctor` reports from): a host that is set up is left alone, and anything of the
user's that setup would have to replace (a marketplace or extension of the same name from
elsewhere, a plugin they turned off) is named with the command that clears it, not changed.

The decisions are pure (`claude_plan`, `gemini_plan`, `codex_plan`, `with_trust`); running the
CLIs and writing codex's config.toml happen in `setup_host`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.errors import CouncilError
from council.readiness import setup
from council.readiness.preflight import NPM
from council.spawn import AgentMissingError, resolve
from council.store.disk import atomic_write

HOSTS = ("claude", "gemini", "codex")
COMMAND_TIMEOUT = 120.0


class SetupError(CouncilError):
    """A host cannot be set up as things are; the message names the fix."""


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    # gemini's --consent trusts the folder it runs in: the extension's own, never the user's
    cwd: Path | None = None


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]  # the host CLI's commands, in order; none when already set up
    did: str  # what the steps do, said once they ran


# ---------------------------------------------------------------- decisions


def claude_plan(plugin: setup.ClaudePlugin | None, marketplaces: Mapping[str, Any],
                files: Path) -> Plan:
    """Add `files` as the `council` marketplace (unless it already is) and install the plugin
    from it; enable an installed plugin that is off. Claude Code replaces a marketplace of
    the same name without a word, so one from elsewhere stops setup instead."""
    if plugin is not None:
        if plugin.enabled:
            return Plan((), "")
        return Plan((Step(("claude", "plugin", "enable", plugin.plugin_id)),),
                    f"enabled plugin {plugin.plugin_id}")
    known = marketplaces.get(setup.PLUGIN)
    source = ((known or {}).get("source") or {}) if isinstance(known, dict) else {}
    steps = [Step(("claude", "plugin", "install", setup.PLUGIN_ID, "--scope", "user"))]
    if known is None:
        steps.insert(0, Step(("claude", "plugin", "marketplace", "add", str(files))))
    elif source.get("path") != str(files):
        where = source.get("path") or source.get("repo") or source.get("url") or "elsewhere"
        raise SetupError(f"claude already has a marketplace named {setup.PLUGIN} from {where}: "
                         f"install from it with `claude plugin install {setup.PLUGIN_ID}`, or "
                         f"run `claude plugin marketplace remove {setup.PLUGIN}` and then "
                         "`council setup claude`")
    return Plan(tuple(steps), f"installed plugin {setup.PLUGIN_ID} from {files}")


def gemini_plan(install: Mapping[str, Any] | None, files: Path) -> Plan:
    """Link the packaged extension (a link follows the package when it is upgraded in
    place), running gemini in the extension's folder, the one --consent trusts. An
    extension named council that is already there is kept, unless its link is dangling."""
    extension = files / "extensions" / "gemini"
    if install is None:
        return Plan((Step(("gemini", "extensions", "link", str(extension), "--consent"),
                          cwd=extension),),
                    f"linked extension {setup.PLUGIN} to {extension}")
    source = Path(str(install.get("source") or ""))
    if install.get("type") == "link" and not (source / "gemini-extension.json").is_file():
        raise SetupError(f"gemini's extension {setup.PLUGIN} is linked to a missing folder "
                         f"({source}): run `gemini extensions uninstall {setup.PLUGIN}`, then "
                         "`council setup gemini`")
    return Plan((), "")


def codex_plan(config: Mapping[str, Any], installed: str | None, files: Path) -> Plan:
    """Add `files` as the `council` marketplace and install the plugin from it (again when
    codex's copy differs from this council's: `installed` is its bundle hash, None when
    there is none). Plugins turned off, a plugin the user disabled, or a marketplace of the
    same name from elsewhere are the user's choices: named, not changed."""
    if config.get("features", {}).get("plugins") is False:
        raise SetupError("codex's plugins are off (`plugins = false` under [features] in "
                         f"{setup.codex_home() / 'config.toml'}): set it to true, then run "
                         "`council setup codex`")
    plugin = config.get("plugins", {}).get(setup.PLUGIN_ID)
    if isinstance(plugin, dict) and plugin.get("enabled") is False:
        raise SetupError(f"{setup.PLUGIN_ID} is disabled in "
                         f"{setup.codex_home() / 'config.toml'}: set `enabled = true` under "
                         f"[plugins.\"{setup.PLUGIN_ID}\"], then run `council setup codex`")
    market = config.get("marketplaces", {}).get(setup.PLUGIN)
    ours = isinstance(market, dict) and market.get("source") == str(files)
    steps: list[Step] = []
    if market is None:
        steps.append(Step(("codex", "plugin", "marketplace", "add", str(files))))
    elif not ours and not isinstance(plugin, dict):
        where = market.get("source") if isinstance(market, dict) else "elsewhere"
        raise SetupError(f"codex already has a marketplace named {setup.PLUGIN} from {where}: "
                         f"install from it with `codex plugin add {setup.PLUGIN_ID}`, or run "
                         f"`codex plugin marketplace remove {setup.PLUGIN}` and then "
                         "`council setup codex`")
    packaged = setup.bundle_hash(files / "extensions" / "codex")
    if installed is None or ((market is None or ours) and installed != packaged):
        steps.append(Step(("codex", "plugin", "add", setup.PLUGIN_ID)))
    return Plan(tuple(steps), f"installed plugin {setup.PLUGIN_ID} from {files}" if steps
                else "")


def _header(key: str) -> re.Pattern[str]:
    return re.compile(r"^[ \t]*\[[ \t]*hooks[ \t]*\.[ \t]*state[ \t]*\.[ \t]*([\"'])"
                      + re.escape(key) + r"\1[ \t]*\][ \t]*(#.*)?$")


def with_trust(text: str, wanted: Mapping[str, Mapping[str, str]]) -> str:
    """config.toml's text with each of council's hooks trusted as codex's /hooks screen
    records it: a `[hooks.state."KEY"]` table with `trusted_hash` and
    `trusted_content_hash`. A table that is there has just those two lines replaced (an
    `enabled` the user set stays); a missing one is appended; nothing else changes."""
    lines = text.splitlines(keepends=True)
    for key, hashes in wanted.items():
        values = [f"{name} = {json.dumps(value)}\n" for name, value in hashes.items()]
        at = next((i for i, line in enumerate(lines) if _header(key).match(line)), None)
        if at is None:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines += ["\n", f"[hooks.state.{json.dumps(key)}]\n", *values]
            continue
        end = next((i for i in range(at + 1, len(lines))
                    if lines[i].lstrip().startswith("[")), len(lines))
        body = [line for line in lines[at + 1:end]
                if not re.match(r"[ \t]*(trusted_hash|trusted_content_hash)[ \t]*=", line)]
        lines[at + 1:end] = [*values, *body]
    return "".join(lines)


# ---------------------------------------------------------------- doing it


def run_step(host: str, step: Step, env: Mapping[str, str]) -> None:
    """One host command, its output kept; a failure is one line naming it."""
    try:
        argv = (resolve(step.argv[0], env), *step.argv[1:])
    except AgentMissingError:
        raise SetupError(f"{host} is not installed or not on PATH: npm install -g {NPM[host]}, "
                         f"then run `council setup {host}`") from None
    shown = " ".join(step.argv)
    try:
        done = subprocess.run(argv, cwd=step.cwd, env=dict(env), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        raise SetupError(f"`{shown}` did not finish in {COMMAND_TIMEOUT:g} s: run it yourself "
                         "to see what it waits for") from None
    except OSError as exc:
        raise SetupError(f"`{shown}` could not start: {exc.strerror or exc}") from None
    if done.returncode != 0:
        # the error's own line: stderr's last, else stdout's (codex's harmless temp-dir
        # warning left out)
        said = [line.strip() for out in (done.stdout, done.stderr) for line in out.splitlines()
                if line.strip() and not line.startswith("WARNING: proceeding")]
        raise SetupError(f"`{shown}` failed (exit {done.returncode}: "
                         f"{said[-1][:200] if said else 'no output'}): run it yourself to see "
                         "why")


def read_codex_config(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return "", {}
    except OSError as exc:
        raise SetupError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"{path} is not valid TOML ({exc}): fix it, then run "
                         "`council setup codex`") from None


def trust_codex_hooks(home: Path) -> bool:
    """Record trust for the hooks of codex's installed copy of the plugin in config.toml
    (through a link to the file it points at, the file's mode kept); False when they are
    trusted already. Hooks the user turned off stay off, and setup says so."""
    path = home / "config.toml"
    text, config = read_codex_config(path)
    root = setup.codex_cache(home, setup.PLUGIN_ID)
    if root is None:
        raise SetupError(f"codex installed no copy of {setup.PLUGIN_ID} under {home}: run "
                         f"`codex plugin add {setup.PLUGIN_ID}` yourself to see why")
    wanted = setup.codex_hook_trust(setup.PLUGIN_ID, root)
    states = config.get("hooks", {}).get("state", {})
    verdict = setup.trust_verdict(states, wanted)
    if verdict in ("trusted", "disabled"):
        return False
    new = with_trust(text, wanted)
    try:
        after = setup.trust_verdict(tomllib.loads(new).get("hooks", {}).get("state", {}),
                                    wanted)
    except tomllib.TOMLDecodeError:
        after = "unreadable"
    if after not in ("trusted", "disabled"):
        raise SetupError(f"cannot record trust for council's hooks in {path} as it is laid "
                         "out: trust them in `codex`'s /hooks instead")
    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    # The user's own file, written as they wrote it: not redacted (it holds their settings).
    atomic_write(target, new.encode("utf-8"), redacted=True, mode=mode)
    return True


def state_line(host: str) -> list[str]:
    """What `council doctor` now says of the host, and its fix when there is one."""
    found = {"claude": setup.claude, "gemini": setup.gemini, "codex": setup.codex}[host]()
    return [f"{host}: {found.state}", *([f"{host}: {found.fix}"] if found.fix else [])]


def setup_host(host: str) -> list[str]:
    """Set up `host`; the lines to print: what was done (or that nothing needed doing), then
    what doctor says of it now."""
    files = setup.hostfiles()
    if files is None:
        raise SetupError("this council install has no host files (council/hostfiles): "
                         "reinstall council from its wheel or repository")
    env = {**os.environ, "GEMINI_CLI_NO_RELAUNCH": "true"}
    if host == "claude":
        plan = claude_plan(setup.claude_plugin(), setup.claude_marketplaces(), files)
    elif host == "gemini":
        plan = gemini_plan(setup.gemini_install(), files)
    else:
        home = setup.codex_home()
        _text, config = read_codex_config(home / "config.toml")
        cache = setup.codex_cache(home, setup.PLUGIN_ID)
        plan = codex_plan(config, None if cache is None else setup.bundle_hash(cache), files)
    for step in plan.steps:
        run_step(host, step, env)
    did = [plan.did] if plan.steps else []
    if host == "codex" and trust_codex_hooks(setup.codex_home()):
        did.append(f"trusted council's hooks in {setup.codex_home() / 'config.toml'}, as "
                   "codex's /hooks screen records it (review them there)")
    lines = [f"{host}: {what}" for what in did] or [f"{host}: already set up, nothing changed"]
    return [*lines, *state_line(host)]
