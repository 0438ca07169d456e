"""Fixtures for running the real claude, codex and gemini CLIs offline against ScriptedServer.

The CLIs come from the cache scripts/install-clis.sh fills (``${COUNCIL_CLI_CACHE:-~/.cache/
council/clis}/bin``, the tested versions) or, for a CLI not there, from PATH (a user's own
``npm install -g``). The session reports the versions it ran; without the CLIs the tests skip
saying how to enable them, or fail when COUNCIL_REQUIRE_REAL_CLIS=1 (CI). Every test here must
be marked ``realcli`` (``pytestmark = pytest.mark.realcli``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from .helpers import CLIS, ENABLE, RealClis, cli_cache, locate, reported_version
from .server import ScriptedServer

# Captured at import, before any fixture monkeypatches HOME.
REAL_HOME = Path.home()
# The evidence tests' page server (tests/evidence/pageserver.py), which the realcli evidence
# test serves its cited pages with: importable as `pageserver`, as tests/evidence's own are.
sys.path.append(str(Path(__file__).parents[1] / "evidence"))
# Passed through from the caller's environment; everything else a CLI sees is set here.
PASSTHROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "TERM")
# The CLIs this session ran, for its closing line (set by the `real_clis` fixture).
USED: list[RealClis] = []


def _missing(reason: str) -> NoReturn:
    """Skip, unless CI (COUNCIL_REQUIRE_REAL_CLIS=1) installed the CLIs and expects them."""
    if os.environ.get("COUNCIL_REQUIRE_REAL_CLIS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def real_clis(tmp_path_factory: pytest.TempPathFactory) -> RealClis:
    """The real CLIs, each linked into one bin dir, or a skip saying how to get them."""
    cache_bin = cli_cache(REAL_HOME) / "bin"
    found = locate(cache_bin, os.environ.get("PATH", ""))
    if missing := [cli for cli in CLIS if cli not in found]:
        _missing(f"real {', '.join(missing)} not in {cache_bin} nor on PATH: {ENABLE}")
    # `--version` writes under HOME, CODEX_HOME and GEMINI_CLI_HOME: keep it in a scratch home.
    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "GEMINI_CLI_HOME")}
    env["HOME"] = str(tmp_path_factory.mktemp("version-check-home"))
    bin_dir = tmp_path_factory.mktemp("real-clis") / "bin"
    bin_dir.mkdir()
    versions, sources = {}, {}
    for cli, (exe, source) in found.items():
        try:
            out = subprocess.run([str(exe), "--version"], capture_output=True, text=True,
                                 timeout=60, stdin=subprocess.DEVNULL, env=env).stdout
        except (OSError, subprocess.TimeoutExpired) as exc:
            _missing(f"real {cli} at {exe} does not run: {exc}: {ENABLE}")
        version = reported_version(out)
        if version is None:
            _missing(f"real {cli} at {exe} reports no version ({out.strip()[:80]!r}): {ENABLE}")
        versions[cli], sources[cli] = version, source
        (bin_dir / cli).symlink_to(exe)
    clis = RealClis(bin_dir, versions, sources)
    USED.append(clis)
    return clis


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the CLI versions the realcli tests ran on, beside their pass/fail counts (in a
    pytest-xdist worker, nothing: tests/conftest.py prints what the workers hand back)."""
    for clis in USED:
        terminalreporter.write_line(f"real CLIs used: {clis.describe()}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its closing line to the controller, which prints it."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["real_clis"] = [clis.describe() for clis in USED]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """A ScriptedServer with the default script; tests may replace `server.script`."""
    with ScriptedServer({}, tmp_path / "server-log.jsonl") as srv:
        yield srv


def codex_config(base_url: str) -> str:
    """$CODEX_HOME/config.toml: a custom Responses provider and no traffic elsewhere.

    No model is pinned: codex 0.169.0 then asks for its default, gpt-6.1-sol, whose tools come
    in "code mode" (an `additional_tools` input item whose JS `exec` tool wraps apply_patch, and
    no web_search tool); a direct apply_patch call is still accepted. council passes -m when a
    seat names a model."""
    return f"""\
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 1
stream_max_retries = 1
stream_idle_timeout_ms = 30000

[analytics]
enabled = false

[feedback]
enabled = false

[features]
# Without this every run resolves github and chatgpt hosts.
plugins = false
# Without this a dead server is retried forever.
unbounded_connection_retries = false
"""


GEMINI_USER_SETTINGS: dict[str, Any] = {
    # Without it GOOGLE_GEMINI_BASE_URL selects the "gateway" auth type: exit 41.
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    # The only switch that stops the usage-statistics DNS lookups.
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                # Main-chat attempts (default 10, 5-30 s apart). Side calls such as the
                # model router keep their own 5 attempts whatever this says.
                "maxAttempts": 1},
}


@pytest.fixture
def cli_env(tmp_path: Path, server: ScriptedServer, real_clis: RealClis) -> dict[str, str]:
    """The whole environment for running all three CLIs offline against `server`.

    A throwaway HOME, CODEX_HOME and GEMINI_CLI_HOME, the base URLs and dummy keys, and the
    switches that stop updates, telemetry and long retries. Nothing else is inherited but
    PATH (with the real CLIs first) and the locale."""
    root = tmp_path / "cli-env"
    home, codex_home, gemini_home, tmp = (root / "home", root / "codex-home",
                                          root / "gemini-home", root / "tmp")
    for folder in (home, codex_home, gemini_home / ".gemini", tmp):
        folder.mkdir(parents=True)
    (codex_home / "config.toml").write_text(codex_config(server.url), encoding="utf-8")
    (gemini_home / ".gemini" / "settings.json").write_text(
        json.dumps(GEMINI_USER_SETTINGS, indent=2), encoding="utf-8")
    env = {name: os.environ[name] for name in PASSTHROUGH if name in os.environ}
    env.update({
        "PATH": os.pathsep.join([str(real_clis.bin_dir), os.environ.get("PATH", "/usr/bin:/bin")]),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        # claude
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        # codex
        "CODEX_HOME": str(codex_home),
        "MOCK_API_KEY": "dummy",
        # gemini
        "GEMINI_CLI_HOME": str(gemini_home),
        "GOOGLE_GEMINI_BASE_URL": server.url,
        "GEMINI_API_KEY": "dummy",
        # council fetches no cited source (issue 44): a test about fetching clears this and
        # cites only a page server on loopback (test_evidence_real.py)
        "COUNCIL_OFFLINE": "1",
    })
    return env
