"""Preflight (council/readiness/preflight.py): where each CLI's login comes from, named never
shown, and which seats a run keeps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import FAKES_BIN

from council.config import Overrides, load_options
from council.errors import UsageError
from council.readiness import preflight
from council.readiness.preflight import Readiness, check, credentials, prepare, stranded_key


def test_credentials_come_from_a_variable_or_the_clis_own_login_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert [credentials(cli, {}, home) for cli in ("claude", "codex", "gemini")] == [None] * 3
    assert credentials("claude", {"ANTHROPIC_API_KEY": "sk-secret"}, home) == \
        "ANTHROPIC_API_KEY"
    assert credentials("claude", {"ANTHROPIC_API_KEY": ""}, home) is None  # set but empty
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text("{}")
    assert credentials("claude", {}, home) == str(home / ".claude" / ".credentials.json")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    assert credentials("gemini", {}, home) == str(home / ".gemini" / "oauth_creds.json")
    (home / ".codex").mkdir()
    (home / ".codex" / "auth.json").write_text("{}")
    assert credentials("codex", {}, home) == str(home / ".codex" / "auth.json")


def test_a_codex_provider_of_ones_own_needs_its_key_variable(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    config = codex_home / "config.toml"
    config.write_text('model_provider = "mock"\n[model_providers.mock]\n'
                      'base_url = "http://127.0.0.1:1/v1"\nenv_key = "MOCK_API_KEY"\n')
    env = {"CODEX_HOME": str(codex_home)}
    assert credentials("codex", env, tmp_path) is None
    assert credentials("codex", {**env, "MOCK_API_KEY": "x"}, tmp_path) == "MOCK_API_KEY"
    config.write_text('model_provider = "local"\n[model_providers.local]\n'
                      'base_url = "http://127.0.0.1:1/v1"\n')
    assert "no key needed" in str(credentials("codex", env, tmp_path))
    config.write_text("not = [valid toml")
    assert credentials("codex", env, tmp_path) is None


def _found(**ready: bool) -> dict[str, Readiness]:
    return {cli: Readiness(cli, f"/bin/{cli}", "1.0", "1.0", "KEY" if ok else None)
            for cli, ok in ready.items()}


def test_the_default_council_keeps_the_ready_seats_and_names_the_rest() -> None:
    options = load_options(Overrides())
    kept, notes = prepare(options, explicit=False,
                          found=_found(claude=False, codex=True, gemini=True))
    assert [s.name for s in kept.seats] == ["codex", "gemini"]
    assert kept.synthesizer == "codex"  # claude would have; it cannot
    assert notes == ["skipping claude: claude has no credentials: log in with `claude` then "
                     "/login, or set ANTHROPIC_API_KEY"]


def test_named_agents_must_all_be_ready() -> None:
    options = load_options(Overrides(agents=("claude", "codex")))
    with pytest.raises(UsageError, match="an agent you asked for cannot run here\ncodex "):
        prepare(options, explicit=True, found=_found(claude=True, codex=False))
    with pytest.raises(UsageError, match="no agent can run here"):
        prepare(load_options(Overrides()), explicit=False,
                found=_found(claude=False, codex=False, gemini=False))


def test_every_version_the_real_cli_suite_passed_on_is_tested() -> None:
    """A CLI that updated itself to the pin, or a user who kept an earlier pin the suite
    passed on, gets no warning; the install line names the pin."""
    assert preflight.tested_versions() == {"claude": "2.1.332", "codex": "0.171.0",
                                           "gemini": "0.61.0"}
    passed = preflight.passed_versions()
    assert {"2.1.197", "2.1.332"} <= set(passed["claude"])
    assert {"0.169.0", "0.171.0"} <= set(passed["codex"])
    found = {"claude": Readiness("claude", "/bin/claude", "2.1.197", "2.1.332", "KEY",
                                 passed=passed["claude"])}
    kept, notes = prepare(load_options(Overrides(agents=("claude",))), explicit=True,
                          found=found)
    assert [s.name for s in kept.seats] == ["claude"]
    assert notes == []
    missing = Readiness("codex", None, None, "0.171.0", None, passed=passed["codex"])
    assert missing.problem == ("codex is not installed: npm install -g @openai/codex@0.171.0 "
                               "(Node 16 or newer)")  # each pin's own engines (claude: 22)
    assert Readiness("claude", None, None, "2.1.332", None).problem.endswith(  # type: ignore[union-attr]
        "@anthropic-ai/claude-code@2.1.332 (Node 22 or newer)")


def test_a_version_council_was_not_tested_with_is_a_warning() -> None:
    found = {"claude": Readiness("claude", "/bin/claude", "9.9.9", "2.1.197", "KEY")}
    kept, notes = prepare(load_options(Overrides(agents=("claude",))), explicit=True,
                          found=found)
    assert [s.name for s in kept.seats] == ["claude"]
    assert notes == ["claude 9.9.9 is not the version council is tested with (2.1.197); it "
                     "may still work"]


def test_a_version_is_asked_once_per_executable_until_it_changes(tmp_path: Path) -> None:
    """The `--version` call is the slow part of the preflight (a node CLI's start-up): it is
    remembered for the very file that answered, and asked again once that file changes."""
    from council.readiness.preflight import check, version_cache

    bin_dir, home, calls = tmp_path / "bin", tmp_path / "home", tmp_path / "calls"
    bin_dir.mkdir()
    cli = bin_dir / "claude"
    cli.write_text(f"#!/bin/sh\necho x >> {calls}\necho '2.1.197 (Claude Code)'\n")
    cli.chmod(0o755)
    env = {"PATH": str(bin_dir), "ANTHROPIC_API_KEY": "k"}

    def version() -> str | None:
        return check(["claude"], env, home)["claude"].version

    assert version() == version() == "2.1.197"
    assert calls.read_text().count("x") == 1
    assert version_cache(env, home).is_file()
    cli.write_text(cli.read_text().replace("2.1.197", "2.2.0"))  # an upgrade
    assert version() == "2.2.0"
    assert calls.read_text().count("x") == 2
    # doctor always asks afresh
    assert check(["claude"], env, home, every_version=True)["claude"].version == "2.2.0"
    assert calls.read_text().count("x") == 3


def test_a_version_is_asked_with_the_agents_allow_list_in_a_throwaway_home(
        tmp_path: Path) -> None:
    """`<cli> --version` sees what an agent would of council's environment, runs outside the
    project council was started in, and leaves nothing behind."""
    from council.readiness.preflight import check

    bin_dir, home, seen = tmp_path / "bin", tmp_path / "home", tmp_path / "seen"
    bin_dir.mkdir()
    cli = bin_dir / "gemini"
    cli.write_text(f"#!/bin/sh\n{{ env; echo CWD=$(pwd); ls -A; }} > {seen}\necho 0.61.0\n")
    cli.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "GEMINI_API_KEY": "k",
           "GITHUB_TOKEN": "ghp-planted", "PYTHONPATH": "/src", "DATABASE_URL": "pg://x"}
    assert check(["gemini"], env, home)["gemini"].version == "0.61.0"
    lines = seen.read_text().splitlines()
    assert "GEMINI_API_KEY=k" in lines
    assert not [line for line in lines if line.startswith(("GITHUB_TOKEN", "PYTHONPATH",
                                                           "DATABASE_URL"))]
    (scratch,) = [line.split("=", 1)[1] for line in lines if line.startswith("HOME=")]
    assert f"CWD={scratch}" in lines
    assert scratch != str(home)
    assert not Path(scratch).exists()
    assert {".env", ".gemini"} <= set(lines)  # gemini's search for a .env ends there
    assert "GEMINI_CLI_NO_RELAUNCH=true" in lines


def test_a_gemini_key_kept_only_in_its_dotenv_is_named_with_the_fix(tmp_path: Path) -> None:
    """council ends gemini's .env search in each workspace, so a key only in ~/.gemini/.env
    never reaches an agent: the preflight says which variable, where, and to export it,
    never its value."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / ".env").write_text("# mine\nexport GEMINI_API_KEY=AIza-very-secret\n")
    env = {"PATH": str(FAKES_BIN)}
    (gemini,) = check(["gemini"], env, home).values()
    assert gemini.credentials is None
    assert gemini.problem == (
        f"gemini has no credentials its agents can use: GEMINI_API_KEY is set in "
        f"{home / '.gemini' / '.env'}, a file council keeps from its agents (a cloned "
        "project's .env is read the same way); export the variable in the shell that runs "
        "council")
    assert stranded_key("gemini", {}, home) == f"GEMINI_API_KEY is set in {home}/.gemini/.env"
    for unset in ("GEMINI_API_KEY\n", "GEMINI_API_KEY=\n", 'GEMINI_API_KEY=""\n',
                  "GEMINI_API_KEY= # later\n", "# GEMINI_API_KEY=x\n"):
        (home / ".gemini" / ".env").write_text("OTHER=1\n" + unset)
        assert stranded_key("gemini", {}, home) is None, unset
    (home / ".gemini" / ".env").write_text("export\tGEMINI_API_KEY='x'\n")
    assert stranded_key("gemini", {}, home) == f"GEMINI_API_KEY is set in {home}/.gemini/.env"
    (home / ".gemini" / ".env").unlink()
    os.mkfifo(home / ".gemini" / ".env")  # never waited on
    assert stranded_key("gemini", {}, home) is None
    cli_home = tmp_path / "cli-home"
    (cli_home / ".gemini").mkdir(parents=True)
    (cli_home / ".env").write_text("GEMINI_API_KEY=x\n")
    assert stranded_key("gemini", {"GEMINI_CLI_HOME": str(cli_home)}, home) == \
        f"GEMINI_API_KEY is set in {cli_home}/.env"
    (home / ".env").write_text("GOOGLE_API_KEY = x\n")
    assert stranded_key("gemini", {}, home) == f"GOOGLE_API_KEY is set in {home}/.env"
    assert stranded_key("claude", {}, home) is None
    (gemini,) = check(["gemini"], {**env, "GEMINI_API_KEY": "k"}, home).values()
    assert gemini.ready
    assert gemini.stranded is None


def test_each_clis_npm_package_is_the_one_its_pin_names() -> None:
    """clis.py and tested_versions.json (which scripts/install-clis.sh reads) name one
    package per CLI, and pin every CLI council drives."""
    import json
    from importlib import resources

    from council.clis import REGISTRY

    pins = json.loads(resources.files("council").joinpath("tested_versions.json").read_text())
    assert {name: cli.npm for name, cli in REGISTRY.items()} == {
        name: pins[name]["npm"] for name in REGISTRY}
