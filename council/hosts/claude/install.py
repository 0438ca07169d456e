"""What Claude Code has installed of council, read from its own files and never changed here
(what `council doctor` shows), and the plan `council setup claude` runs: add this council's
files as the `council` marketplace and install the plugin from it. Claude Code runs an
installed, enabled plugin's hooks without asking, so nothing follows the plan."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.hosts import install
from council.hosts.install import PLUGIN, PLUGIN_ID, Plan, SetupError, Step, json_object
from council.readiness.setup import HostSetup


def home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


@dataclass(frozen=True)
class Plugin:
    """council's plugin as Claude Code recorded its install (plugins/installed_plugins.json,
    settings.json's enabledPlugins, plugins/known_marketplaces.json)."""

    plugin_id: str
    version: str
    folder: Path  # claude's own copy, which it loads
    enabled: bool
    source: str | None  # where the marketplace came from: a folder, a repository, a URL


def marketplaces(folder: Path | None = None) -> dict[str, Any]:
    """The marketplaces Claude Code knows, by name (plugins/known_marketplaces.json)."""
    return json_object((home() if folder is None else folder) / "plugins"
                       / "known_marketplaces.json")


def installed(folder: Path | None = None) -> Plugin | None:
    """council's user-scope install in Claude Code, or None (a project-scope install loads
    only in its project, so it does not count)."""
    folder = home() if folder is None else folder
    plugins = json_object(folder / "plugins" / "installed_plugins.json").get("plugins") or {}
    for plugin_id, records in plugins.items():
        if not (str(plugin_id).startswith(f"{PLUGIN}@") and isinstance(records, list)):
            continue
        for record in records:
            if isinstance(record, dict) and record.get("scope") == "user":
                enabled = json_object(folder / "settings.json").get("enabledPlugins") or {}
                market = marketplaces(folder).get(str(plugin_id).split("@", 1)[1]) or {}
                where = market.get("source") or {}
                source = where.get("path") or where.get("repo") or where.get("url")
                return Plugin(str(plugin_id), str(record.get("version") or "?"),
                              Path(str(record.get("installPath") or "")),
                              enabled.get(plugin_id) is True,
                              None if source is None else str(source))
    return None


def check() -> HostSetup:
    """Installed as a plugin (what `council setup claude` does) and enabled; a session
    started with `--plugin-dir` loads it without an install, which no file records."""
    plugin = installed()
    if plugin is None:
        files = install.hostfiles()
        also = f" (or start claude with --plugin-dir {files})" if files else ""
        return HostSetup("claude", "plugin not installed", False,
                         install.setup_fix("claude") + also)
    if not (plugin.folder / ".claude-plugin" / "plugin.json").is_file():
        return HostSetup("claude", f"plugin files missing ({plugin.folder})", False,
                         f"run `claude plugin uninstall {plugin.plugin_id}`, then "
                         "`council setup claude`")
    if not plugin.enabled:
        return HostSetup("claude", "plugin disabled", False, install.setup_fix("claude"))
    if install.council_on_path() is None:
        return HostSetup("claude", "hooks cannot find council", False, install.path_fix())
    return HostSetup("claude", f"ready (plugin {plugin.plugin_id} {plugin.version} from "
                     f"{plugin.source or 'a marketplace'})", True)


def decide(plugin: Plugin | None, known: Mapping[str, Any], files: Path) -> Plan:
    """Add `files` as the `council` marketplace (unless it already is) and install the plugin
    from it; enable an installed plugin that is off. Claude Code replaces a marketplace of
    the same name without a word, so one from elsewhere stops setup instead."""
    if plugin is not None:
        if plugin.enabled:
            return Plan((), "")
        return Plan((Step(("claude", "plugin", "enable", plugin.plugin_id)),),
                    f"enabled plugin {plugin.plugin_id}")
    market = known.get(PLUGIN)
    source = ((market or {}).get("source") or {}) if isinstance(market, dict) else {}
    steps = [Step(("claude", "plugin", "install", PLUGIN_ID, "--scope", "user"))]
    if market is None:
        steps.insert(0, Step(("claude", "plugin", "marketplace", "add", str(files))))
    elif source.get("path") != str(files):
        where = source.get("path") or source.get("repo") or source.get("url") or "elsewhere"
        raise SetupError(f"claude already has a marketplace named {PLUGIN} from {where}: "
                         f"install from it with `claude plugin install {PLUGIN_ID}`, or "
                         f"run `claude plugin marketplace remove {PLUGIN}` and then "
                         "`council setup claude`")
    return Plan(tuple(steps), f"installed plugin {PLUGIN_ID} from {files}")


def plan(files: Path) -> Plan:
    return decide(installed(), marketplaces(), files)


def finish() -> list[str]:
    return []
