"""Published snapshots (council/store/snapshots.py): atomic copies with their sha256, cut at the
report cap with a note."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from council.runoptions import RunOptions
from council.store.snapshots import Refused, capture, changes, digest, publish
from council.store.state import AgentPhase, AgentRecord, RunState
from council.store.workspace import Workspace


def test_a_report_under_the_cap_is_copied_whole(tmp_path: Path) -> None:
    source, target = tmp_path / "agent.md", tmp_path / "run.md"
    source.write_text("# r\n\nline\n")
    published = publish(source, target, cap=10_000)
    assert target.read_bytes() == source.read_bytes()
    assert published.sha256 == published.original_sha256 == digest(target) == \
        hashlib.sha256(source.read_bytes()).hexdigest()
    assert published.cut_at is None


def test_a_report_over_the_cap_is_cut_at_a_line_with_a_note(tmp_path: Path) -> None:
    source, target = tmp_path / "agent.md", tmp_path / "claude-report.md"
    lines = [f"Line {i}: é text that goes on for a while.\n" for i in range(2000)]
    source.write_text("".join(lines))
    published = publish(source, target, cap=10_000)
    text = target.read_text()
    head, note = text.split("\n\n> **council:**", 1)
    assert len(head.encode()) <= 10_000
    assert head.endswith("while.\n")  # cut after a whole line, never inside one
    assert source.read_text().startswith(head)
    assert f"this report is {source.stat().st_size:,} bytes" in note
    assert "claude-report.full.md" in note
    assert published.full == tmp_path / "claude-report.full.md"
    assert published.full.read_bytes() == source.read_bytes()
    assert published.sha256 == digest(target) != published.original_sha256
    assert published.original_sha256 == digest(source)


def test_json_answers_are_never_cut(tmp_path: Path) -> None:
    source, target = tmp_path / "a.json", tmp_path / "b.json"
    source.write_text('{"claims": ["' + "x" * 50_000 + '"]}')
    publish(source, target, cap=10_000)
    assert target.read_text() == source.read_text()


def test_capture_copies_a_plain_report_and_refuses_anything_else(tmp_path: Path) -> None:
    """The one read of an agent's report: a plain file within the bound is copied into
    council's capture; a link, FIFO, hard link or file over the bound is refused, named,
    and nothing is copied."""
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    report, target = tmp_path / "r.md", tmp_path / "capture"
    report.write_text("# r\n")
    assert capture(report, target, bound=100) == 4
    assert target.read_text() == "# r\n"
    report.unlink()
    with pytest.raises(FileNotFoundError):
        capture(report, target, bound=100)
    cases: dict[str, tuple[Callable[[], object], str]] = {
        "link": (lambda: report.symlink_to(secret), f"a link to {secret}"),
        "fifo": (lambda: os.mkfifo(report), "a FIFO"),
        "hard link": (lambda: os.link(secret, report), "a file with 2 hard links"),
        "flood": (lambda: report.write_bytes(b"x" * 101),
                  "a file of 101 bytes, over the 100-byte bound"),
    }
    for make, what in cases.values():
        target.unlink(missing_ok=True)
        make()
        with pytest.raises(Refused) as refused:
            capture(report, target, bound=100)
        assert refused.value.what == what
        assert not target.exists()
        report.unlink()
    assert not list(tmp_path.glob(".capture.*"))  # no temp file left behind


def test_a_sparse_terabyte_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    with report.open("wb") as handle:
        handle.truncate(1 << 40)
    with pytest.raises(Refused, match="1,099,511,627,776 bytes"):
        capture(report, tmp_path / "capture", bound=64 << 20)
    assert digest(report, bound=64 << 20) is None


def test_an_original_turned_into_a_link_counts_as_changed(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run")
    folder = ws.work_dir("codex", "research")
    folder.mkdir(parents=True)
    ws.working_output("codex", "research").write_text("# r\n")
    published = publish(ws.working_output("codex", "research"),
                        ws.published_output("codex", "research"))
    state = RunState(id="x", topic="q", created_at="now", options=RunOptions(seats=()))
    state.agents["codex"] = AgentRecord(cli="codex", phases={"research": AgentPhase(
        status="complete", sha256=published.sha256)})
    assert changes(ws, state) == []
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("# r\n")  # the same text, but reached through a link
    ws.working_output("codex", "research").unlink()
    ws.working_output("codex", "research").symlink_to(elsewhere)
    assert changes(ws, state) == [
        "codex changed its research output (codex-report.md) in its folder after it was "
        f"published; council used the published snapshot (sha256 {published.sha256[:12]}…)"]
