"""Published snapshots (council/snapshots.py): atomic copies with their sha256, cut at the
report cap with a note."""

from __future__ import annotations

import hashlib
from pathlib import Path

from council.snapshots import digest, publish


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
