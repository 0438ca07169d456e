"""Is council set up in each host? What `council doctor` reports per host, read from the
hosts' own files and never changed here: whether each host's hooks can find `council`, whether
the Gemini extension is installed, and whether the Codex plugin is installed and its hooks are
trusted (codex runs an untrusted hook nowhere, and says nothing about it in `codex exec`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLUGIN = "council"
PLUGIN_ID = f"{PLUGIN}@{PLUGIN}"  # the plugin, in the marketplace of the same name


@dataclass(frozen=True)
class HostSetup:
    host: str
    state: str  # one short phrase: "ready", "not installed", "hooks not trusted", …
    ready: bool
    fix: str | None = None  # one line: what to do


def hostfiles() -> Path | None:
    """This council's host files: council/hostfiles in an installed wheel (pyproject's
    force-include copies them there), or else the checkout an editable install runs from,
    whose root holds them in the same layout: the Claude Code plugin and its marketplace,
    the Codex marketplace, extensions/gemini and extensions/codex. None when neither has
    them (a broken install)."""
    package = Path(__file__).resolve().parents[1]
    for root in (package / "hostfiles", package.parent):
        if (root / ".claude-plugin" / "plugin.json").is_file() and \
                (root / "extensions" / "gemini" / "gemini-extension.json").is_file():
            return root
    return None


def setup_fix(host: str) -> str:
    return f"run `council setup {host}`"


def council_on_path() -> str | None:
    return shutil.which("council")


def path_fix() -> str:
    return (f"`council` is not on PATH, so no host's hooks can run it: add "
            f"{Path(sys.executable).parent} to PATH, or pip install council into an "
            "environment that is")


# ---------------------------------------------------------------- Claude Code


def claude_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


@dataclass(frozen=True)
class ClaudePlugin:
    """council's plugin as Claude Code recorded its install (plugins/installed_plugins.json,
    settings.json's enabledPlugins, plugins/known_marketplaces.json)."""

    plugin_id: str
    version: str
    folder: Path  # claude's own copy, which it loads
    enabled: bool
    source: str | None  # where the marketplace came from: a folder, a repository, a URL


def claude_marketplaces(home: Path | None = None) -> dict[str, Any]:
    """The marketplaces Claude Code knows, by name (plugins/known_marketplaces.json)."""
    return _json_object((claude_home() if home is None else home) / "plugins"
                        / "known_marketplaces.json")


def claude_plugin(home: Path | None = None) -> ClaudePlugin | None:
    """council's user-scope install in Claude Code, or None (a project-scope install loads
    only in its project, so it does not count)."""
    home = claude_home() if home is None else home
    plugins = _json_object(home / "plugins" / "installed_plugins.json").get("plugins") or {}
    for plugin_id, records in plugins.items():
        if not (str(plugin_id).startswith(f"{PLUGIN}@") and isinstance(records, list)):
            continue
        for record in records:
            if isinstance(record, dict) and record.get("scope") == "user":
                enabled = _json_object(home / "settings.json").get("enabledPlugins") or {}
                market = claude_marketplaces(home).get(str(plugin_id).split("@", 1)[1]) or {}
                where = market.get("source") or {}
                source = where.get("path") or where.get("repo") or where.get("url")
                return ClaudePlugin(str(plugin_id), str(record.get("version") or "?"),
                                    Path(str(record.get("installPath") or "")),
                                    enabled.get(plugin_id) is True,
                                    None if source is None else str(source))
    return None


def claude() -> HostSetup:
    """Installed as a plugin (what `council setup claude` does) and enabled; a session
    started with `--plugin-dir` loads it without an install, which no file records."""
    plugin = claude_plugin()
    if plugin is None:
        files = hostfiles()
        also = f" (or start claude with --plugin-dir {files})" if files else ""
        return HostSetup("claude", "plugin not installed", False, setup_fix("claude") + also)
    if not (plugin.folder / ".claude-plugin" / "plugin.json").is_file():
        return HostSetup("claude", f"plugin files missing ({plugin.folder})", False,
                         f"run `claude plugin uninstall {plugin.plugin_id}`, then "
                         "`council setup claude`")
    if not plugin.enabled:
        return HostSetup("claude", "plugin disabled", False, setup_fix("claude"))
    if council_on_path() is None:
        return HostSetup("claude", "hooks cannot find council", False, path_fix())
    return HostSetup("claude", f"ready (plugin {plugin.plugin_id} {plugin.version} from "
                     f"{plugin.source or 'a marketplace'})", True)


# ---------------------------------------------------------------- Gemini CLI


def gemini_home() -> Path:
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def gemini(folder_here: Path | None = None) -> HostSetup:
    """Installed with `gemini extensions link` (what `council setup gemini` does: a link
    that follows the installed package) or `install` (a copy); and whether gemini trusts the
    folder doctor runs in, since gemini loads no extension command in one it does not."""
    install = gemini_install()
    if install is None:
        return HostSetup("gemini", "extension not installed", False, setup_fix("gemini"))
    source = Path(str(install.get("source") or gemini_home() / "extensions" / PLUGIN))
    if install.get("type") == "link" and not (source / "gemini-extension.json").is_file():
        return HostSetup("gemini", f"extension linked to a missing folder ({source})", False,
                         f"run `gemini extensions uninstall {PLUGIN}`, then "
                         "`council setup gemini`")
    if council_on_path() is None:
        return HostSetup("gemini", "hooks cannot find council", False, path_fix())
    how = f"linked to {source}" if install.get("type") == "link" else "installed"
    trusted = gemini_trusts_folder(Path.cwd() if folder_here is None else folder_here)
    if trusted is not True:
        why = "marked Don't trust" if trusted is False else "not trusted yet"
        return HostSetup("gemini", f"ready (extension {how}); this folder {why}", True,
                         UNTRUSTED_HINT)
    return HostSetup("gemini", f"ready (extension {how})", True)


def gemini_install() -> dict[str, Any] | None:
    """Gemini's record of council's extension (`source`, `type`: "link" or a copy), {} for
    an extension folder without one, None when there is no extension named council."""
    folder = gemini_home() / "extensions" / PLUGIN
    if not folder.is_dir():
        return None
    return _json_object(folder / ".gemini-extension-install.json")


UNTRUSTED_HINT = ("gemini runs no extension command in a folder it does not trust: choose "
                  "\"Trust folder\" when it asks, or `/permissions trust` in gemini; headless, "
                  "`gemini -p … --skip-trust`")
TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


def trust_rule(folder: Path, rules: dict[str, str]) -> bool | None:
    """Gemini 0.61's reading of trustedFolders.json: of the rules whose folder holds `folder`
    (a TRUST_PARENT rule's folder is its path's parent), the longest path wins; None when
    none does (gemini then asks, or exits 55 headless)."""
    best, level = -1, None
    for rule, value in rules.items():
        if value not in TRUST_LEVELS:
            continue
        base = Path(os.path.realpath(Path(rule).parent if value == "TRUST_PARENT" else rule))
        if (folder == base or base in folder.parents) and len(rule) > best:
            best, level = len(rule), value
    return None if level is None else level != "DO_NOT_TRUST"


def gemini_trusts_folder(folder: Path) -> bool | None:
    """Whether gemini trusts `folder`, as 0.61 decides it from the environment, the user's
    settings (folder trust can be off) and trustedFolders.json."""
    forced = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or forced == "false":
        return False
    if forced == "true":
        return True
    settings = _json_object(gemini_home() / "settings.json")
    if ((settings.get("security") or {}).get("folderTrust") or {}).get("enabled") is False:
        return True
    rules = _json_object(Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                              or gemini_home() / "trustedFolders.json"))
    return trust_rule(Path(os.path.realpath(folder)),
                      {str(k): str(v) for k, v in rules.items()})


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON object file, or {} when it is missing or not plain JSON (gemini also accepts
    comments; such a file reads as no rule here)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------- Codex

# codex 0.169's names for hook events in its trust keys.
CODEX_EVENTS = {"UserPromptSubmit": "user_prompt_submit", "Stop": "stop"}
TRUST_HINT = ("run `council setup codex` (it trusts council's hooks as codex's /hooks screen "
              "does), or trust them in `codex`'s /hooks; `codex exec` skips untrusted hooks "
              "without a word")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def hook_identity(event: str, handler: dict[str, Any]) -> str:
    """codex's identity hash of one hook handler, as it stores it in `trusted_hash`: SHA-256
    of the handler's normalised form as compact JSON with sorted keys (codex 0.169; the
    command is the raw one, before ${PLUGIN_ROOT} is filled in)."""
    normal: dict[str, Any] = {"type": "command", "command": handler["command"],
                              "timeout": max(1, int(handler.get("timeout", 600))),
                              "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    identity = {"event_name": CODEX_EVENTS[event], "hooks": [normal]}
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


def codex_cache(home: Path, plugin_id: str) -> Path | None:
    """The copy of the plugin codex installed and loads (the newest version's folder)."""
    versions = home / "plugins" / "cache" / plugin_id.split("@", 1)[1] / PLUGIN
    installed = sorted(versions.iterdir()) if versions.is_dir() else []
    return installed[-1] if installed else None


def codex_hook_trust(plugin_id: str, root: Path) -> dict[str, dict[str, str]]:
    """What codex records when its /hooks screen trusts each of the installed plugin's hooks:
    `[hooks.state."<key>"]` tables of `trusted_hash` and `trusted_content_hash`, by key."""
    hooks = json.loads((root / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    bundle = bundle_hash(root)
    return {f"{plugin_id}:hooks/hooks.json:{CODEX_EVENTS[event]}:{g}:{h}":
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


def codex_trust(home: Path, plugin_id: str) -> str:
    """"trusted", "not trusted", "changed since trusted", "disabled" or "not installed" for
    the plugin's hooks."""
    config = tomllib.loads((home / "config.toml").read_text("utf-8"))
    root = codex_cache(home, plugin_id)
    if root is None:
        return "not installed"
    return trust_verdict(config.get("hooks", {}).get("state", {}),
                         codex_hook_trust(plugin_id, root))


def codex() -> HostSetup:
    home = codex_home()
    add = setup_fix("codex")
    try:
        config = tomllib.loads((home / "config.toml").read_text("utf-8"))
    except OSError:
        config = {}
    except tomllib.TOMLDecodeError as exc:
        return HostSetup("codex", "config.toml unreadable", False,
                         f"fix {home / 'config.toml'}: {exc}")
    plugins = [key for key, value in config.get("plugins", {}).items()
               if key.startswith(f"{PLUGIN}@") and isinstance(value, dict)]
    if not plugins:
        return HostSetup("codex", "plugin not installed", False, add)
    if config.get("features", {}).get("plugins") is False:
        return HostSetup("codex", "plugins are off in config.toml", False,
                         "set `plugins = true` under [features] in "
                         f"{home / 'config.toml'}")
    if config["plugins"][plugins[0]].get("enabled") is False:
        return HostSetup("codex", "plugin disabled", False,
                         f"enable {plugins[0]} in {home / 'config.toml'}")
    trust = codex_trust(home, plugins[0])
    if trust == "not installed":
        return HostSetup("codex", "plugin not installed", False, add)
    if trust != "trusted":
        return HostSetup("codex", f"hooks {trust}", False, TRUST_HINT)
    if council_on_path() is None:
        return HostSetup("codex", "hooks cannot find council", False, path_fix())
    return HostSetup("codex", "ready (plugin installed, hooks trusted)", True)


def cli_on_path(cli: str) -> bool:
    return shutil.which(cli) is not None


def check_hosts() -> list[HostSetup]:
    """Each host's setup; a host whose files cannot be read says so rather than failing. A
    host CLI that is not installed is only named: the CLI table's fix line says how."""
    found = []
    for check in (claude, gemini, codex):
        if not cli_on_path(check.__name__):
            found.append(HostSetup(check.__name__, f"{check.__name__} not on PATH", False))
            continue
        try:
            found.append(check())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            found.append(HostSetup(check.__name__, f"cannot tell ({exc})", False))
    return found
