"""`council doctor --live`: one real prompt through each CLI, in a throwaway folder that gives
the CLI nothing of its surroundings."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from conftest import FAKES_BIN

from council.readiness.doctor import live


def test_live_gemini_loads_no_env_file_from_around_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temp folder's parents are anyone's (/tmp): a trusted gemini would load the first
    .env it finds walking up from its folder. The folder's own empty .gemini/.env ends that."""
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    (temp_root / ".env").write_text("FROM_DOTENV=1\n")
    log = tmp_path / "fake-log.jsonl"
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    monkeypatch.setenv("PATH", f"{FAKES_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("COUNCIL_FAKE_LOG", str(log))
    monkeypatch.setenv("GEMINI_API_KEY", "fake-key")
    assert live("gemini").startswith("ok in ")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    (dotenv,) = [e for e in events if e["event"] == "dotenv"]
    assert dotenv["path"].endswith("/.gemini/.env")
    assert dotenv["names"] == []


def test_the_live_check_starts_none_of_the_users_mcp_servers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`doctor --live` drives each CLI as an agent of a run is driven: none of the user's MCP
    servers start, and the call runs in a folder of council's, not $TMPDIR."""
    from council.agents import adapter_for
    from council.agents.base import private_root

    def live_argv(cli: str, folder: Path) -> tuple[str, ...]:
        return adapter_for(cli).one_shot(folder, folder / "prompt.md").argv

    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('[mcp_servers.github]\ncommand = "gh-mcp"\n')
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert "--strict-mcp-config" in live_argv("claude", tmp_path)
    assert 'mcp_servers={"github"={enabled=false}}' in live_argv("codex", tmp_path)
    assert "--allowed-mcp-server-names" in live_argv("gemini", tmp_path)
    root = private_root("doctor")
    assert root.is_relative_to(Path.home() / ".cache")
    assert (root / ".git").is_dir()
