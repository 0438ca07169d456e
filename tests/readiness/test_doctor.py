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
