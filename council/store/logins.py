"""Where each CLI keeps its settings folder and its login file (clis.py has the names): the one
place for these paths.

The preflight asks whether a login file exists (never what it holds); redaction reads the
tokens in it, so that a value an agent copied out of one is hidden wherever it lands. Both
must look in the same places, so both take them from here.

Imported by redaction, and so by the hooks' event writer: `os` and the CLIs' facts (clis.py)
only (not even pathlib, which would bring `re` and `urllib` into every hook)."""

from __future__ import annotations

import os

from council import clis

TYPE_CHECKING = False  # no typing import: see the module's docstring
if TYPE_CHECKING:
    from collections.abc import Mapping


def config_dir(cli: str, env: Mapping[str, str], home: str) -> str:
    """The CLI's own settings folder, as the CLI itself finds it (clis.py: `CLAUDE_CONFIG_DIR`,
    `CODEX_HOME` or `GEMINI_CLI_HOME` when set), else under `home`."""
    facts = clis.facts(cli)
    given = env.get(facts.config_var) if facts.config_var else None
    if given and not facts.config_var_is_home:
        return given
    return os.path.join(given or home, facts.config_folder)


def login_file(cli: str, env: Mapping[str, str], home: str) -> str:
    """Where the CLI keeps the tokens of a login, whether or not it is there."""
    return os.path.join(config_dir(cli, env, home), clis.facts(cli).login_file)


def login_files(env: Mapping[str, str], home: str) -> dict[str, str]:
    """Every CLI's login file, by CLI."""
    return {cli: login_file(cli, env, home) for cli in clis.REGISTRY}
