"""Where each CLI keeps its settings folder and its login file: the one place for these paths.

The preflight asks whether a login file exists (never what it holds); redaction reads the
tokens in it, so that a value an agent copied out of one is hidden wherever it lands. Both
must look in the same places, so both take them from here.

Imported by redaction, and so by the hooks' event writer: `os` only (not even pathlib, which
would bring `re` and `urllib` into every hook)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # no typing import: see the module's docstring
if TYPE_CHECKING:
    from collections.abc import Mapping

# The login file each CLI writes in its settings folder when the user logs in.
LOGIN_FILE = {"claude": ".credentials.json", "codex": "auth.json", "gemini": "oauth_creds.json"}


def config_dir(cli: str, env: Mapping[str, str], home: str) -> str:
    """The CLI's own settings folder, as the CLI itself finds it: `CLAUDE_CONFIG_DIR`,
    `CODEX_HOME` or `GEMINI_CLI_HOME` when set, else under `home`."""
    if cli == "claude":
        return env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    if cli == "codex":
        return env.get("CODEX_HOME") or os.path.join(home, ".codex")
    if cli == "gemini":
        return os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini")
    raise ValueError(f"unknown CLI {cli!r}")


def login_file(cli: str, env: Mapping[str, str], home: str) -> str:
    """Where the CLI keeps the tokens of a login, whether or not it is there."""
    return os.path.join(config_dir(cli, env, home), LOGIN_FILE[cli])


def login_files(env: Mapping[str, str], home: str) -> dict[str, str]:
    """Every CLI's login file, by CLI."""
    return {cli: login_file(cli, env, home) for cli in LOGIN_FILE}
