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


def test_phase_of_unknown_file_is_other() -> None:
    assert volume.phase_of("/x/notes.md") == "other"
    assert volume.phase_of("/x/codex-verdicts.json") == "verification"
