"""Where the realcli tests find the real CLIs, and what a session says about it: the pinned
cache (scripts/install-clis.sh), else the user's own CLIs on PATH, else a skip that says how
to enable them (a failure under COUNCIL_REQUIRE_REAL_CLIS=1, as in CI).

Each setup runs pytest itself, `--setup-only` on one realcli test: the `real_clis` fixture
asks each CLI its version and the session reports it, but no CLI is started for real. The
stand-in CLIs here only answer `--version`, in each real CLI's own words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from realcli.helpers import locate, reported_version

REPO = Path(__file__).resolve().parents[1]
ANSWERS = {"claude": "{} (Claude Code)", "codex": "codex-cli {}", "gemini": "{}"}


def stand_ins(folder: Path, versions: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for cli, version in versions.items():
        exe = folder / cli
        exe.write_text(f"#!/bin/sh\necho '{ANSWERS[cli].format(version)}'\n")
        exe.chmod(0o755)
    return folder


def session(tmp_path: Path, cache: Path, path: list[Path],
            **env: str) -> subprocess.CompletedProcess[str]:
    """pytest's own run of one realcli test's fixtures, as a user would start it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("COUNCIL_", "PYTEST_"))}
    clean.update(env, COUNCIL_CLI_CACHE=str(cache), PYTEST_DEBUG_TEMPROOT=str(tmp_path),
                 PATH=os.pathsep.join([*map(str, path), "/usr/bin", "/bin"]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--setup-only", "-rs",
         "tests/realcli/test_containment.py"],
        cwd=REPO, env=clean, capture_output=True, text=True, timeout=110,
        stdin=subprocess.DEVNULL)


def test_the_cli_versions_are_read_as_each_cli_prints_them() -> None:
    assert reported_version("2.1.332 (Claude Code)\n") == "2.1.332"
    assert reported_version("codex-cli 0.171.0\n") == "0.171.0"
    assert reported_version("0.61.0\n") == "0.61.0"
    assert reported_version("command not found") is None


def test_the_pinned_cache_comes_first_then_path(tmp_path: Path) -> None:
    cache = stand_ins(tmp_path / "cache" / "bin", {"claude": "2.1.332"})
    user = stand_ins(tmp_path / "user", {"claude": "2.1.400", "codex": "0.171.0"})
    found = locate(cache, str(user))
    assert found["claude"] == (cache / "claude", f"cache {cache}")
    assert found["codex"] == (user / "codex", f"PATH {user / 'codex'}")
    assert "gemini" not in found
    fakes = REPO / "tests" / "fakes" / "bin"
    assert locate(tmp_path / "none", str(fakes)) == {}  # the fake CLIs never count


@pytest.mark.slow
def test_a_session_uses_the_pinned_cache_and_names_its_versions(tmp_path: Path) -> None:
    cache = tmp_path / "clis"
    stand_ins(cache / "bin", {"claude": "2.1.332", "codex": "0.171.0", "gemini": "0.61.0"})
    user = stand_ins(tmp_path / "user", {"claude": "2.1.400", "codex": "0.172.0",
                                         "gemini": "0.62.0"})
    proc = session(tmp_path, cache, [user])
    assert proc.returncode == 0, proc.stdout[-3000:]
    bin_dir = cache / "bin"
    assert f"real CLIs: claude from cache {bin_dir}, codex from cache {bin_dir}, gemini from " \
           f"cache {bin_dir}" in proc.stdout
    assert f"real CLIs used: claude 2.1.332 (cache {bin_dir}), codex 0.171.0 (cache " \
           f"{bin_dir}), gemini 0.61.0 (cache {bin_dir})" in proc.stdout


@pytest.mark.slow
def test_without_a_cache_a_session_uses_the_clis_on_path(tmp_path: Path) -> None:
    user = stand_ins(tmp_path / "user", {"claude": "2.1.400", "codex": "0.172.0",
                                         "gemini": "0.62.0"})
    proc = session(tmp_path, tmp_path / "no-cache", [user])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "skipped" not in proc.stdout.splitlines()[-1]
    assert f"real CLIs used: claude 2.1.400 (PATH {user / 'claude'}), codex 0.172.0 (PATH " \
           f"{user / 'codex'}), gemini 0.62.0 (PATH {user / 'gemini'})" in proc.stdout


@pytest.mark.slow
def test_without_the_clis_a_session_skips_saying_how_to_enable_them(tmp_path: Path) -> None:
    only_codex = stand_ins(tmp_path / "user", {"codex": "0.171.0"})
    proc = session(tmp_path, tmp_path / "no-cache", [only_codex])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 skipped" in proc.stdout.splitlines()[-1]
    assert "real claude, gemini not in" in proc.stdout
    assert "scripts/install-clis.sh" in proc.stdout
    assert "put claude, codex and gemini on PATH" in proc.stdout
    assert "real CLIs used" not in proc.stdout

    required = session(tmp_path, tmp_path / "no-cache", [only_codex],
                       COUNCIL_REQUIRE_REAL_CLIS="1")
    assert required.returncode == 1, required.stdout[-3000:]
    assert "1 error" in required.stdout.splitlines()[-1]
