"""A crash log is a new private file: a link planted at its name is never written through."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from council import paths
from council.run import crash

STAMP = "20261122T031441Z"


def test_a_link_at_the_crash_logs_name_is_not_followed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("time.strftime", lambda *_: STAMP)
    run = tmp_path / "research" / "20261122-031441-88dba5"
    run.mkdir(parents=True)
    victim = tmp_path / "bashrc"
    victim.write_text("the user's file\n")
    name = f"crash-{STAMP}-{os.getpid()}.log"
    (run / name).symlink_to(victim)
    monkeypatch.setattr(crash, "_run_dir", run)
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        log = crash.write_log(exc, "run")
    assert victim.read_text() == "the user's file\n"
    assert log is not None
    assert log == paths.research_dir() / name  # the next folder took it
    assert "RuntimeError: boom" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
