"""`council doctor`: can each CLI run here? On PATH, its version, whether council is tested
with that version, and where its login would come from. No network calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from council.config import CLIS

# Where each CLI finds credentials: environment variables, then files under the home.
AUTH_ENV = {
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"),
}
AUTH_FILES = {
    "claude": (".claude/.credentials.json", ".claude.json"),
    "codex": ("auth.json",),  # under $CODEX_HOME (default ~/.codex)
    "gemini": (".gemini/oauth_creds.json", ".gemini/settings.json"),
}


@dataclass(frozen=True)
class Check:
    cli: str
    path: str | None
    version: str | None
    tested: str
    auth: str

    @property
    def usable(self) -> bool:
        return self.path is not None and self.version is not None


def tested_versions() -> dict[str, str]:
    text = resources.files("council").joinpath("tested_versions.json").read_text("utf-8")
    data = json.loads(text)
    return {cli: str(data[cli]["version"]) for cli in CLIS}


def auth_hint(cli: str, env: dict[str, str], home: Path) -> str:
    found = [name for name in AUTH_ENV[cli] if env.get(name)]
    base = {"codex": Path(env.get("CODEX_HOME") or home / ".codex"),
            "gemini": Path(env.get("GEMINI_CLI_HOME") or home)}.get(cli, home)
    found += [str(base / f) for f in AUTH_FILES[cli] if (base / f).is_file()]
    return ("found " + ", ".join(found)) if found else "no credentials found (log in first)"


def check(cli: str, env: dict[str, str], home: Path) -> Check:
    path = shutil.which(cli, path=env.get("PATH"))
    version = None
    if path:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30, stdin=subprocess.DEVNULL, env=env)
            version = next((w for w in out.stdout.split() if w[:1].isdigit()), None)
        except (OSError, subprocess.TimeoutExpired):
            version = None
    pinned = tested_versions()[cli]
    if version is None:
        tested = "-"
    elif version == pinned:
        tested = "yes"
    else:
        tested = f"no (council is tested with {pinned})"
    return Check(cli, path, version, tested, auth_hint(cli, env, home))


def run_doctor() -> tuple[list[Check], int]:
    env = dict(os.environ)
    checks = [check(cli, env, Path.home()) for cli in CLIS]
    return checks, 0 if any(c.usable for c in checks) else 1
