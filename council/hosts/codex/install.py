"""What Codex has installed of council, and whether it trusts the plugin's hooks, read from
its own files (what `council doctor` shows: codex runs an untrusted hook nowhere, and says
nothing about it in `codex exec`); the plan `council setup codex` runs (add this council's
files as the `council` marketplace and install the plugin from it); and, after it, trusting
the installed hooks in config.toml as codex's /hooks screen does. The decisions are pure
(`decide`, `with_trust`); writing config.toml happens in `trust_hooks`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from council.hosts import install
from council.hosts.install import PLUGIN, PLUGIN_ID, Plan, SetupError, Step
from council.readiness.setup import HostSetup
from council.store.disk import atomic_write

# codex 0.169's names for hook events in its trust keys.
HOOK_EVENTS = {"UserPromptSubmit": "user_prompt_submit", "Stop": "stop"}
TRUST_HINT = ("run `council setup codex` (it trusts council's hooks as codex's /hooks screen "
              "does), or trust them in `codex`'s /hooks; `codex exec` skips untrusted hooks "
              "without a word")


def home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


# ---------------------------------------------------------------- what codex trusts


def hook_identity(event: str, handler: dict[str, Any]) -> str:
    """codex's identity hash of one hook handler, as it stores it in `trusted_hash`: SHA-256
    of the handler's normalised form as compact JSON with sorted keys (codex 0.169; the
    command is the raw one, before ${PLUGIN_ROOT} is filled in)."""
    normal: dict[str, Any] = {"type": "command", "command": handler["command"],
                              "timeout": max(1, int(handler.get("timeout", 600))),
                              "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    identity = {"event_name": HOOK_EVENTS[event], "hooks": [normal]}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def bundle_hash(root: Path) -> str:
    """codex's hash of an installed plugin's files (`trusted_content_hash`): every entry,
    depth first with names in byte order, as its length-prefixed relative path and then
    "directory" or "file", the size and the bytes (codex 0.169)."""
    digest = hashlib.sha256(b"codex-plugin-bundle-v1")

    def entry(rel: str) -> None:
        path = root / rel if rel else root
        name = rel.encode("utf-8")
        digest.update(struct.pack("<Q", len(name)) + name)
        if path.is_dir():
            digest.update(b"directory")
            for child in sorted(os.listdir(path), key=os.fsencode):
                if child not in ("__pycache__", ".venv") and not child.endswith(
                        (".pyc", ".egg-info")):
                    entry(f"{rel}/{child}" if rel else child)
        else:
            data = path.read_bytes()
            digest.update(b"file" + struct.pack("<Q", len(data)) + data)

    entry("")
    return "sha256:" + digest.hexdigest()


def cache(folder: Path, plugin_id: str) -> Path | None:
    """The copy of the plugin codex installed and loads (the newest version's folder)."""
    versions = folder / "plugins" / "cache" / plugin_id.split("@", 1)[1] / PLUGIN
    installed = sorted(versions.iterdir()) if versions.is_dir() else []
    return installed[-1] if installed else None


def hook_trust(plugin_id: str, root: Path) -> dict[str, dict[str, str]]:
    """What codex records when its /hooks screen trusts each of the installed plugin's hooks:
    `[hooks.state."<key>"]` tables of `trusted_hash` and `trusted_content_hash`, by key."""
    hooks = json.loads((root / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    bundle = bundle_hash(root)
    return {f"{plugin_id}:hooks/hooks.json:{HOOK_EVENTS[event]}:{g}:{h}":
            {"trusted_hash": hook_identity(event, handler), "trusted_content_hash": bundle}
            for event, groups in hooks.items()
            for g, group in enumerate(groups)
            for h, handler in enumerate(group["hooks"])}


def trust_verdict(states: dict[str, Any], wanted: dict[str, dict[str, str]]) -> str:
    """"trusted", "not trusted", "changed since trusted" or "disabled": codex's reading of
    its recorded hook states against what trusting the installed hooks records."""
    verdicts = set()
    for key, hashes in wanted.items():
        state = states.get(key, {})
        if "trusted_hash" not in state:
            verdicts.add("not trusted")
        elif (state["trusted_hash"], state.get("trusted_content_hash")) != (
                hashes["trusted_hash"], hashes["trusted_content_hash"]):
            verdicts.add("changed since trusted")
        elif state.get("enabled") is False:
            verdicts.add("disabled")
    for verdict in ("not trusted", "changed since trusted", "disabled"):
        if verdict in verdicts:
            return verdict
    return "trusted"


def trust(folder: Path, plugin_id: str) -> str:
    """"trusted", "not trusted", "changed since trusted", "disabled" or "not installed" for
    the plugin's hooks."""
    config = tomllib.loads((folder / "config.toml").read_text("utf-8"))
    root = cache(folder, plugin_id)
    if root is None:
        return "not installed"
    return trust_verdict(config.get("hooks", {}).get("state", {}),
                         hook_trust(plugin_id, root))


# ---------------------------------------------------------------- doctor's line


def check() -> HostSetup:
    folder = home()
    add = install.setup_fix("codex")
    try:
        config = tomllib.loads((folder / "config.toml").read_text("utf-8"))
    except OSError:
        config = {}
    except tomllib.TOMLDecodeError as exc:
        return HostSetup("codex", "config.toml unreadable", False,
                         f"fix {folder / 'config.toml'}: {exc}")
    plugins = [key for key, value in config.get("plugins", {}).items()
               if key.startswith(f"{PLUGIN}@") and isinstance(value, dict)]
    if not plugins:
        return HostSetup("codex", "plugin not installed", False, add)
    if config.get("features", {}).get("plugins") is False:
        return HostSetup("codex", "plugins are off in config.toml", False,
                         "set `plugins = true` under [features] in "
                         f"{folder / 'config.toml'}")
    if config["plugins"][plugins[0]].get("enabled") is False:
        return HostSetup("codex", "plugin disabled", False,
                         f"enable {plugins[0]} in {folder / 'config.toml'}")
    verdict = trust(folder, plugins[0])
    if verdict == "not installed":
        return HostSetup("codex", "plugin not installed", False, add)
    if verdict != "trusted":
        return HostSetup("codex", f"hooks {verdict}", False, TRUST_HINT)
    if install.council_on_path() is None:
        return HostSetup("codex", "hooks cannot find council", False, install.path_fix())
    return HostSetup("codex", "ready (plugin installed, hooks trusted)", True)


# ---------------------------------------------------------------- `council setup codex`


def decide(config: Mapping[str, Any], installed: str | None, files: Path) -> Plan:
    """Add `files` as the `council` marketplace and install the plugin from it (again when
    codex's copy differs from this council's: `installed` is its bundle hash, None when
    there is none). Plugins turned off, a plugin the user disabled, or a marketplace of the
    same name from elsewhere are the user's choices: named, not changed."""
    if config.get("features", {}).get("plugins") is False:
        raise SetupError("codex's plugins are off (`plugins = false` under [features] in "
                         f"{home() / 'config.toml'}): set it to true, then run "
                         "`council setup codex`")
    plugin = config.get("plugins", {}).get(PLUGIN_ID)
    if isinstance(plugin, dict) and plugin.get("enabled") is False:
        raise SetupError(f"{PLUGIN_ID} is disabled in "
                         f"{home() / 'config.toml'}: set `enabled = true` under "
                         f"[plugins.\"{PLUGIN_ID}\"], then run `council setup codex`")
    market = config.get("marketplaces", {}).get(PLUGIN)
    ours = isinstance(market, dict) and market.get("source") == str(files)
    steps: list[Step] = []
    if market is None:
        steps.append(Step(("codex", "plugin", "marketplace", "add", str(files))))
    elif not ours and not isinstance(plugin, dict):
        where = market.get("source") if isinstance(market, dict) else "elsewhere"
        raise SetupError(f"codex already has a marketplace named {PLUGIN} from {where}: "
                         f"install from it with `codex plugin add {PLUGIN_ID}`, or run "
                         f"`codex plugin marketplace remove {PLUGIN}` and then "
                         "`council setup codex`")
    packaged = bundle_hash(files / "extensions" / "codex")
    if installed is None or ((market is None or ours) and installed != packaged):
        steps.append(Step(("codex", "plugin", "add", PLUGIN_ID)))
    return Plan(tuple(steps), f"installed plugin {PLUGIN_ID} from {files}" if steps
                else "")


def plan(files: Path) -> Plan:
    _text, config = read_config(home() / "config.toml")
    copy = cache(home(), PLUGIN_ID)
    return decide(config, None if copy is None else bundle_hash(copy), files)


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


def read_config(path: Path) -> tuple[str, dict[str, Any]]:
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


def trust_hooks(folder: Path) -> bool:
    """Record trust for the hooks of codex's installed copy of the plugin in config.toml
    (through a link to the file it points at, the file's mode kept); False when they are
    trusted already. Hooks the user turned off stay off, and setup says so."""
    path = folder / "config.toml"
    text, config = read_config(path)
    root = cache(folder, PLUGIN_ID)
    if root is None:
        raise SetupError(f"codex installed no copy of {PLUGIN_ID} under {folder}: run "
                         f"`codex plugin add {PLUGIN_ID}` yourself to see why")
    wanted = hook_trust(PLUGIN_ID, root)
    states = config.get("hooks", {}).get("state", {})
    if trust_verdict(states, wanted) in ("trusted", "disabled"):
        return False
    new = with_trust(text, wanted)
    try:
        after = trust_verdict(tomllib.loads(new).get("hooks", {}).get("state", {}), wanted)
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


def finish() -> list[str]:
    """codex runs a plugin's hooks only once they are trusted: trust them now."""
    if not trust_hooks(home()):
        return []
    return [f"trusted council's hooks in {home() / 'config.toml'}, as codex's /hooks screen "
            "records it (review them there)"]
