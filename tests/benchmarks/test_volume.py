"""benchmarks/volume.py's sums of the scripted server's log (pure; no CLI runs)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import volume


def test_requests_are_summed_per_cli_and_phase() -> None:
    records = [
        {"api": "anthropic", "method": "POST", "bytes": 100, "report_path": "/r/claude-report.md"},
        {"api": "anthropic", "method": "POST", "bytes": 50, "report_path": None},
        {"api": "openai", "method": "POST", "bytes": 30, "report_path": "/r/claims-draft.json"},
        {"api": "gemini", "method": "POST", "bytes": 20, "report_path": "/r/gemini-refined.md"},
        {"api": "gemini", "method": "GET", "bytes": 999},  # not a model request
        {"api": "other", "method": "POST", "bytes": 999},
    ]
    v = volume.volume(records)
    assert (v.count, v.total) == (4, 200)
    assert v.sent == {"claude": 150, "codex": 30, "gemini": 20}
    assert v.mean("claude") == 75
    assert v.phase_sent == {"research": 100, "other": 50, "claims": 30, "refinement": 20}
    assert v.phase_requests == {"research": 1, "other": 1, "claims": 1, "refinement": 1}


def test_the_depths_are_reported_side_by_side() -> None:
    """`--only volume` ends with the three depths in one table, each over one agent and deep."""
    labels = [label for label, _ in volume.RUNS]
    assert [label for label in labels if label.startswith("depth ")] == [
        "depth quick", "depth standard", "depth deep"]

    def made(n: int) -> volume.Volume:
        v = volume.Volume()
        v.requests["claude"], v.sent["claude"] = n, n * 1000
        return v

    rows = volume.depths_side_by_side({"one agent": made(8), "depth quick": made(16),
                                       "depth standard": made(36), "depth deep": made(58)})
    assert [row.split()[:2] for row in rows[1:]] == [["quick", "16"], ["standard", "36"],
                                                       ["deep", "58"]]
    assert rows[2].split()[-2:] == ["4.5", "62%"]


def test_phase_of_unknown_file_is_other() -> None:
    assert volume.phase_of("/x/notes.md") == "other"
    assert volume.phase_of("/x/codex-verdicts.json") == "verification"
