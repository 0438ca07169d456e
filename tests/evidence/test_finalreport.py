"""The final report and sources.json are replaced whole, never rewritten in place: a full
disk, or a kill between truncate and write, must not lose the Claude-host synthesis."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from council.errors import PhaseFailedError
from council.evidence import finalreport as report
from council.evidence import sources
from council.runoptions import RunOptions
from council.store.loop import MARKER
from council.store.state import AgentPhase, AgentRecord, RunState, StateFile, create_state
from council.store.workspace import Workspace

SYNTHESIS = "# The answer\n\nThe main session's synthesis, cited [a](https://example.org/a).\n"


def a_run(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path / "20261122-031441-88dba5")
    ws.root.mkdir()
    create_state(ws.root, RunState(
        id=ws.id, topic="q", created_at="2026-11-22T03:14:41Z",
        options=RunOptions(seats=()), phase="synthesis", synthesizer="main-session",
        agents={"claude": AgentRecord(cli="claude",
                                      phases={"research": AgentPhase(status="complete")})}))
    ws.final_report.write_text(SYNTHESIS)
    return ws


def full_disk(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Writing the file `name` fails as on a full disk (other files are written)."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if f".{name}." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr("os.fsync", fsync)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_full_disk_keeps_the_synthesis(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ws = a_run(tmp_path)
    full_disk(monkeypatch, "final-report.md")
    with pytest.raises(OSError, match="No space left"):
        report.stamp_final_report(ws, StateFile(ws.root), ["claude"], 1, "main-session")
    assert ws.final_report.read_text() == SYNTHESIS
    assert leftovers(ws.root) == []


def test_the_stamped_report_replaces_the_file(tmp_path: Path) -> None:
    ws = a_run(tmp_path)
    before = ws.final_report.stat().st_ino
    report.stamp_final_report(ws, StateFile(ws.root), ["claude"], 1, "main-session")
    text = ws.final_report.read_text()
    assert text.startswith(report.STAMP)
    assert "The main session's synthesis" in text
    assert ws.final_report.stat().st_ino != before  # a new file, renamed over the old one
    assert '"https://example.org/a"' in (ws.root / "sources.json").read_text()


def test_the_published_report_has_no_completion_marker(tmp_path: Path) -> None:
    ws = a_run(tmp_path)
    ws.final_report.write_text(f"{SYNTHESIS}\n{MARKER}\n\n```\n{MARKER}\n```\n")
    report.stamp_final_report(ws, StateFile(ws.root), ["claude"], 1, "main-session")
    text = ws.final_report.read_text()
    assert text.count(MARKER) == 1  # only the one quoted in code, as the synthesis wrote it
    assert f"```\n{MARKER}\n```" in text
    assert "The main session's synthesis" in text


def test_a_linked_final_report_is_not_followed(tmp_path: Path) -> None:
    ws = a_run(tmp_path)
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    ws.final_report.unlink()
    ws.final_report.symlink_to(secret)
    with pytest.raises(PhaseFailedError, match=r"is a link to .*id_ed25519.*not published"):
        report.stamp_final_report(ws, StateFile(ws.root), ["claude"], 1, "main-session")
    assert secret.read_text() == "PRIVATE KEY"
    assert not (ws.root / "sources.json").exists()


def test_sources_json_survives_a_full_disk(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sources.json"
    path.write_text('{"old": true}\n')
    full_disk(monkeypatch, "sources.json")
    with pytest.raises(OSError, match="No space left"):
        sources.write(path, sources.build([("a", "research", "https://example.org/")]), {})
    assert path.read_text() == '{"old": true}\n'
    assert leftovers(tmp_path) == []
