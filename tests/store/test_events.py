"""A run's events: one writer and renderer (council.store.progress), which the hooks call directly
and the supervisor's structlog events (council.store.events) hand theirs to, with the phase and
agent a task bound once. A script reading events.jsonl, or a person running
`tail -f progress.log`, gets the same two formats from both."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
import pytest

from council.store import events, progress
from council.store.terminal import safe

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
STAMP = "2026-11-24T01:02:03.456Z"


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "stamp", lambda: STAMP)


def lines(run: Path) -> list[str]:
    return (run / progress.PROGRESS_FILE).read_text().splitlines()


@pytest.mark.parametrize("writer", [progress.emit, events.emit])
def test_both_files_are_written_in_their_one_format(tmp_path: Path, frozen: None,
                                                    writer: object) -> None:
    """The formats other tools tail, byte for byte: `TIME SCOPE [AGENT] MESSAGE` and the
    JSON object json.dumps would write, whichever of the two entry points wrote them; the
    message folded to one line and made text (terminal.safe: `\\x1b` for an ESC)."""
    assert callable(writer)
    for scope, message, agent in EVENTS:
        writer(tmp_path, scope, message, agent=agent)
    folded = [(scope, safe(" ".join(message.split())), agent)
              for scope, message, agent in EVENTS]
    log = "".join(f"{STAMP} {scope}{f' {agent}' if agent else ''} {message}\n"
                  for scope, message, agent in folded)
    records = "".join(json.dumps({"time": STAMP, "scope": scope, "agent": agent,
                                  "message": message}, ensure_ascii=False) + "\n"
                      for scope, message, agent in folded)
    assert (tmp_path / progress.PROGRESS_FILE).read_bytes() == log.encode("utf-8", "replace")
    assert (tmp_path / progress.EVENTS_FILE).read_bytes() == records.encode("utf-8", "replace")


def test_structlogs_events_are_written_by_the_one_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No second renderer: what structlog logs reaches progress.emit as its four fields."""
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(progress, "emit", lambda run, scope, message, agent=None:
                        seen.append((run, scope, agent, message)))
    events.emit(tmp_path, "research", "iteration 2/10", agent="codex")
    events.emit(tmp_path, "run", "budget reached")
    with events.bound("refinement", "gemini"):
        events.say(tmp_path, "started")
    assert seen == [(tmp_path, "research", "codex", "iteration 2/10"),
                    (tmp_path, "run", None, "budget reached"),
                    (tmp_path, "refinement", "gemini", "started")]


def test_events_read_as_a_script_reads_them(tmp_path: Path, frozen: None) -> None:
    events.emit(tmp_path, "research", "iteration 2/10\nnext", agent="codex")
    events.emit(tmp_path, "gapfill", "started: 2 gap(s)")
    records = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert records == [
        {"time": STAMP, "scope": "research", "agent": "codex", "message": "iteration 2/10 next"},
        {"time": STAMP, "scope": "gapfill", "agent": None, "message": "started: 2 gap(s)"},
    ]
    assert lines(tmp_path) == [
        f"{STAMP} research codex iteration 2/10 next",
        f"{STAMP} gapfill started: 2 gap(s)",
    ]


def test_a_task_binds_its_phase_and_agent_once(tmp_path: Path, frozen: None) -> None:
    """`say` takes the phase and agent the task bound; an event given its own scope (the
    run's budget, said from inside a seat's turn) keeps it, with no agent; the binding ends
    with its block."""
    with events.bound("research", "codex"):
        events.say(tmp_path, "started")
        events.emit(tmp_path, "run", "budget reached")
        with events.bound("research", "claude"):
            events.say(tmp_path, "nested")
        events.say(tmp_path, "again")
    events.say(tmp_path, "after")
    assert lines(tmp_path) == [f"{STAMP} research codex started",
                               f"{STAMP} run budget reached",
                               f"{STAMP} research claude nested",
                               f"{STAMP} research codex again",
                               f"{STAMP} run after"]


def test_each_seats_task_keeps_its_own_binding(tmp_path: Path, frozen: None) -> None:
    """Seats run side by side as tasks of one task group: each one's events, and those of the
    tasks and worker threads it starts, name that seat, never a sibling's."""
    both = threading.Barrier(2, timeout=10)

    async def seat(name: str) -> None:
        with events.bound("research", name):
            await anyio.to_thread.run_sync(both.wait)  # both seats are bound at once
            events.say(tmp_path, "in its task")
            async with anyio.create_task_group() as group:
                group.start_soon(_say_later, tmp_path)
            await anyio.to_thread.run_sync(events.say, tmp_path, "in a worker thread")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(seat, "claude")
            group.start_soon(seat, "codex")

    anyio.run(main)
    said = sorted(line.removeprefix(f"{STAMP} ") for line in lines(tmp_path))
    assert said == sorted(f"research {seat} {where}" for seat in ("claude", "codex")
                          for where in ("in its task", "in a child task", "in a worker thread"))


async def _say_later(run: Path) -> None:
    events.say(run, "in a child task")


@pytest.mark.parametrize("text", [*TRICKY, "".join(map(chr, range(0x80)))])
def test_json_string_escapes_as_json_dumps_does(text: str) -> None:
    assert progress.json_string(text) == json.dumps(text, ensure_ascii=False)


def test_real_stamps_have_milliseconds_and_sort_in_order(tmp_path: Path) -> None:
    for n in range(20):
        events.emit(tmp_path, "run", f"event {n}")
    stamps = [x.split(" ", 1)[0] for x in lines(tmp_path)]
    assert all(len(s) == len("2026-11-24T01:02:03.456Z") and s[19] == "." for s in stamps)
    assert stamps == sorted(stamps)


def test_parallel_writers_put_events_in_one_order_in_both_files(tmp_path: Path) -> None:
    """Hooks (other processes) and the supervisor write at the same moment; a script that
    pairs progress.log lines with events.jsonl records must find them in the same order."""
    import subprocess
    import sys

    code = ("import sys\nfrom council.store import progress\n"
            "for i in range(300): progress.emit(sys.argv[1], 'research', f'hook {i}', 'codex')\n")
    hooks = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)]) for _ in range(3)]
    for i in range(300):
        events.emit(tmp_path, "research", f"supervisor {i}", agent="claude")
    assert [hook.wait() for hook in hooks] == [0, 0, 0]
    written = lines(tmp_path)
    records = [json.loads(line) for line in
               (tmp_path / progress.EVENTS_FILE).read_text().splitlines()]
    assert len(written) == len(records) == 1200
    assert [f"{r['time']} {r['scope']} {r['agent']} {r['message']}" for r in records] == written
