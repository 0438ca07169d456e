"""The two writers of a run's events: the supervisor's (structlog, council.events) and the
hooks' minimal one (council.progress). A script reading events.jsonl, or a person running
`tail -f progress.log`, must not be able to tell which one wrote a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council import events, progress

# Every character class JSON escapes differently, folding whitespace, and text json.dumps
# leaves raw (non-ASCII, U+2028, DEL, a lone surrogate that the file write replaces).
TRICKY = [
    "iteration 2/10",
    'quote " and \\ backslash',
    "a CLI error\nover two lines\r\n\tand a tab",
    "controls \x00 \x01 \x08 \x0b \x0c \x1b \x1f \x7f",
    "ünï 研究 🦉 \u2028 \u2029 \u0085",
    "lone \ud800 surrogate",
    "</script>{{ x }} {% if %}",
    "",
]
EVENTS = [(scope, message, agent) for message in TRICKY
          for scope, agent in (("run", None), ("research", "codex"), ("gapfill", None))]


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "stamp", lambda: "2026-11-24T01:02:03.456Z")


def test_hook_writer_and_structlog_writer_produce_identical_lines(tmp_path: Path,
                                                                  frozen: None) -> None:
    hooks, supervisor = tmp_path / "hooks", tmp_path / "supervisor"
    hooks.mkdir()
    supervisor.mkdir()
    for scope, message, agent in EVENTS:
        progress.emit(hooks, scope, message, agent=agent)
        events.emit(supervisor, scope, message, agent=agent)
    for name in (progress.PROGRESS_FILE, progress.EVENTS_FILE):
        written = (hooks / name).read_bytes()
        assert written == (supervisor / name).read_bytes(), name
        assert len(written.splitlines()) == len(EVENTS)


def test_events_read_as_a_script_reads_them(tmp_path: Path, frozen: None) -> None:
    events.emit(tmp_path, "research", "iteration 2/10\nnext", agent="codex")
    events.emit(tmp_path, "gapfill", "started: 2 gap(s)")
    records = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert records == [
        {"time": "2026-11-24T01:02:03.456Z", "scope": "research", "agent": "codex",
         "message": "iteration 2/10 next"},
        {"time": "2026-11-24T01:02:03.456Z", "scope": "gapfill", "agent": None,
         "message": "started: 2 gap(s)"},
    ]
    assert (tmp_path / "progress.log").read_text().splitlines() == [
        "2026-11-24T01:02:03.456Z research codex iteration 2/10 next",
        "2026-11-24T01:02:03.456Z gapfill started: 2 gap(s)",
    ]


@pytest.mark.parametrize("text", [*TRICKY, "".join(map(chr, range(0x80)))])
def test_json_string_escapes_as_json_dumps_does(text: str) -> None:
    assert progress.json_string(text) == json.dumps(text, ensure_ascii=False)


def test_real_stamps_have_milliseconds_and_sort_in_order(tmp_path: Path) -> None:
    for n in range(20):
        events.emit(tmp_path, "run", f"event {n}")
    stamps = [x.split(" ", 1)[0] for x in (tmp_path / "progress.log").read_text().splitlines()]
    assert all(len(s) == len("2026-11-24T01:02:03.456Z") and s[19] == "." for s in stamps)
    assert stamps == sorted(stamps)


def test_parallel_writers_put_events_in_one_order_in_both_files(tmp_path: Path) -> None:
    """Hooks (other processes) and the supervisor write at the same moment; a script that
    pairs progress.log lines with events.jsonl records must find them in the same order."""
    import subprocess
    import sys

    code = ("import sys\nfrom council import progress\n"
            "for i in range(300): progress.emit(sys.argv[1], 'research', f'hook {i}', 'codex')\n")
    hooks = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)]) for _ in range(3)]
    for i in range(300):
        events.emit(tmp_path, "research", f"supervisor {i}", agent="claude")
    assert [hook.wait() for hook in hooks] == [0, 0, 0]
    lines = (tmp_path / progress.PROGRESS_FILE).read_text().splitlines()
    records = [json.loads(line) for line in
               (tmp_path / progress.EVENTS_FILE).read_text().splitlines()]
    assert len(lines) == len(records) == 1200
    assert [f"{r['time']} {r['scope']} {r['agent']} {r['message']}" for r in records] == lines
