"""What Gemini CLI has installed of council, and whether it trusts a folder, read from its
own files and never changed here (what `council doctor` shows); and the plan `council setup
gemini` runs: link the packaged extension. Gemini asks nothing more of an extension's hooks,
so nothing follows the plan; it runs them even in a folder it does not trust (gemini/
__init__.py refuses the command there)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from council.hosts import install
from council.hosts.install import PLUGIN, Plan, SetupError, Step, json_object
from council.readiness.setup import HostSetup

UNTRUSTED_HINT = ("gemini runs no extension command in a folder it does not trust: choose "
                  "\"Trust folder\" when it asks, or `/permissions trust` in gemini; headless, "
                  "`gemini -p … --skip-trust`")
TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


def home() -> Path:
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def installed() -> dict[str, Any] | None:
    """Gemini's record of council's extension (`source`, `type`: "link" or a copy), {} for
    an extension folder without one, None when there is no extension named council."""
    folder = home() / "extensions" / PLUGIN
    if not folder.is_dir():
        return None
    return json_object(folder / ".gemini-extension-install.json")


def check(folder_here: Path | None = None) -> HostSetup:
    """Installed with `gemini extensions link` (what `council setup gemini` does: a link
    that follows the installed package) or `install` (a copy); and whether gemini trusts the
    folder doctor runs in, since gemini loads no extension command in one it does not."""
    record = installed()
    if record is None:
        return HostSetup("gemini", "extension not installed", False,
                         install.setup_fix("gemini"))
    source = Path(str(record.get("source") or home() / "extensions" / PLUGIN))
    if record.get("type") == "link" and not (source / "gemini-extension.json").is_file():
        return HostSetup("gemini", f"extension linked to a missing folder ({source})", False,
                         f"run `gemini extensions uninstall {PLUGIN}`, then "
                         "`council setup gemini`")
    if install.council_on_path() is None:
        return HostSetup("gemini", "hooks cannot find council", False, install.path_fix())
    how = f"linked to {source}" if record.get("type") == "link" else "installed"
    trusted = trusts_folder(Path.cwd() if folder_here is None else folder_here)
    if trusted is not True:
        why = "marked Don't trust" if trusted is False else "not trusted yet"
        return HostSetup("gemini", f"ready (extension {how}); this folder {why}", True,
                         UNTRUSTED_HINT)
    return HostSetup("gemini", f"ready (extension {how})", True)


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


def trusts_folder(folder: Path) -> bool | None:
    """Whether gemini trusts `folder`, as 0.61 decides it from the environment, the user's
    settings (folder trust can be off) and trustedFolders.json."""
    forced = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or forced == "false":
        return False
    if forced == "true":
        return True
    settings = json_object(home() / "settings.json")
    if ((settings.get("security") or {}).get("folderTrust") or {}).get("enabled") is False:
        return True
    rules = json_object(Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                             or home() / "trustedFolders.json"))
    return trust_rule(Path(os.path.realpath(folder)),
                      {str(k): str(v) for k, v in rules.items()})


# gemini relaunches itself as a child process unless told not to: one starts faster.
NO_RELAUNCH = {"GEMINI_CLI_NO_RELAUNCH": "true"}


def decide(record: Mapping[str, Any] | None, files: Path) -> Plan:
    """Link the packaged extension (a link follows the package when it is upgraded in
    place), running gemini in the extension's folder, the one --consent trusts. An
    extension named council that is already there is kept, unless its link is dangling."""
    extension = files / "extensions" / "gemini"
    if record is None:
        return Plan((Step(("gemini", "extensions", "link", str(extension), "--consent"),
                          cwd=extension, env=NO_RELAUNCH),),
                    f"linked extension {PLUGIN} to {extension}")
    source = Path(str(record.get("source") or ""))
    if record.get("type") == "link" and not (source / "gemini-extension.json").is_file():
        raise SetupError(f"gemini's extension {PLUGIN} is linked to a missing folder "
                         f"({source}): run `gemini extensions uninstall {PLUGIN}`, then "
                         "`council setup gemini`")
    return Plan((), "")


def plan(files: Path) -> Plan:
    return decide(installed(), files)


def finish() -> list[str]:
    return []
