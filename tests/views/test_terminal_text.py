"""What reaches a terminal is text, not control (issue 43, item 7): a run's topic, an
agent's error and progress.log's lines, whoever wrote them, reach `council status`, `list`
and `watch` (piped and on a terminal), the live view of `council run` and progress.log itself
with every control character but newline and tab shown as an escape, and markup printed as
typed. The hostile text holds an OSC 52 (writes the user's clipboard), a CSI 2J (clears the
screen), the one-byte C1 CSI, a bell, a bidi override and rich markup."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Council
from realcli.helpers import HOSTILE, OSC52, controls, on_a_terminal, sent

from council import cli, cliparts
from council.runoptions import RunOptions
from council.store import progress, provenance
from council.store.state import AgentPhase, AgentRecord, RunState, create_state
from council.store.terminal import safe
from council.store.workspace import Workspace

RUN_ID = "20261123-100000-abcdef"


def test_safe_shows_every_control_but_newline_and_tab() -> None:
    assert safe("a\tb\nc") == "a\tb\nc"
    assert safe(OSC52) == "\\x1b]52;c;ZXZpbA==\\x07"
    assert safe("\x9b2J\x7f\r\x00") == "\\x9b2J\\x7f\\x0d\\x00"
    assert safe("\u202eevil\u2066") == "\\u202eevil\\u2066"
    assert safe("ünï 研究 🦉 [blink]") == "ünï 研究 🦉 [blink]"
    kept = safe("".join(map(chr, range(0x3000))))
    assert not controls(kept)
    assert not [c for c in kept if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0
                or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]


def test_progress_log_and_events_hold_the_text_not_the_sequences(tmp_path: Path) -> None:
    progress.emit(tmp_path, "research", f"failed (transient) after 3 s: {HOSTILE}",
                  agent="codex")
    line = (tmp_path / progress.PROGRESS_FILE).read_text()
    assert not controls(line)
    assert "\\x1b]52;c;" in line
    assert "[blink]look[/blink]" in line
    record = json.loads((tmp_path / progress.EVENTS_FILE).read_text())
    assert record["message"] == safe(f"failed (transient) after 3 s: {HOSTILE}")
    assert not controls(record["message"])


def plant(base: Path, own: bool) -> Workspace:
    """A finished run whose topic, gemini's error and progress.log's last line are hostile:
    council's own (`own`) or a folder that arrived from elsewhere."""
    ws = Workspace(base / RUN_ID)
    ws.root.mkdir(parents=True)
    started = "2026-11-23T10:00:00Z"
    create_state(ws.root, RunState(
        id=RUN_ID, topic=HOSTILE, created_at=started, options=RunOptions(seats=()),
        phase="done", ended_at="2026-11-23T10:05:00Z", error=HOSTILE, agents={
            "codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                status="complete", iteration=2, max_iterations=2, started_at=started,
                ended_at="2026-11-23T10:01:30Z")}),
            "gemini": AgentRecord(cli="gemini", phases={"research": AgentPhase(
                status="failed", iteration=1, max_iterations=2, started_at=started,
                ended_at="2026-11-23T10:00:10Z", error=HOSTILE)}),
        }))
    # Written as a planted file is, raw: not through council's writer.
    (ws.root / progress.PROGRESS_FILE).write_text(
        f"2026-11-23T10:00:05.000Z research codex {HOSTILE}\n"
        f"2026-11-23T10:00:06.000Z research gemini {HOSTILE}\n")
    if own:
        provenance.record(ws.root)
    return ws


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


@pytest.mark.parametrize("own", [True, False], ids=["own", "planted"])
@pytest.mark.parametrize("command", ["status", "list", "watch"])
def test_piped_a_hostile_run_prints_text(tmp_path: Path, command: str, own: bool) -> None:
    plant(tmp_path, own)
    args = [command, "--research-dir", str(tmp_path)] + ([RUN_ID] if command != "list" else [])
    out = invoke(*args)
    assert not controls(out), out
    if command != "list" or own:  # list names a planted run by its id alone
        assert "\\x1b]52;c;" in out
        assert "[blink]look[/blink]" in out


@pytest.mark.parametrize("command", ["status", "list"])
def test_on_a_terminal_a_hostile_run_is_styled_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """rich on a terminal colours the header (its own escapes) and nothing of the run's."""
    monkeypatch.setattr(cliparts, "on_terminal", lambda: True)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "400")
    plant(tmp_path, own=True)
    out = invoke(command, "--research-dir", str(tmp_path), *([RUN_ID] if command != "list" else []))
    assert "\x1b[1;4m" in out  # rich styled the header: this was the terminal path
    assert not sent(out), out
    assert "[blink]look[/blink]" in out


def terminal_env(council: Council) -> dict[str, str]:
    return {**council.env, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50"}


@pytest.mark.parametrize("command", ["watch", "status"])
def test_watch_and_status_on_a_real_terminal_send_no_sequence_of_the_run(
        council: Council, command: str) -> None:
    plant(council.research, own=False)
    shown = on_a_terminal([sys.executable, "-m", "council", command, RUN_ID],
                          terminal_env(council), council.root).decode()
    assert "\x1b[" in shown  # rich drew for a terminal
    assert "[blink]look[/blink]" in shown
    assert not sent(shown), shown


@pytest.mark.slow
def test_a_cli_error_with_escape_sequences_reaches_the_live_view_as_text(
        council: Council) -> None:
    """codex fails its first turn with an error body holding an OSC 52, a CSI 2J and markup;
    `council run` on a terminal shows the failure in its live table, as text, and writes it
    to progress.log as text."""
    council.script({"codex:research": {"crash": True, "crash_message": HOSTILE}})
    shown = on_a_terminal([sys.executable, "-m", "council", "run", "--test",
                           "--agents", "claude,codex", "why is the sky blue"],
                          terminal_env(council), council.root,
                          exit_code=3).decode()  # finished without codex
    run = council.only_run()
    log = (run / progress.PROGRESS_FILE).read_text()
    assert "\\x1b]52;c;" in log, log  # the error reached the log, as text
    assert not controls(log)
    assert "[blink]look" in shown  # the live view showed the error's text...
    assert not sent(shown), shown  # ...and sent none of it
    status = subprocess.run([sys.executable, "-m", "council", "status"], env=council.env,
                            cwd=council.root, capture_output=True, text=True, timeout=60)
    assert "\\x1b]52;c;" in status.stdout
    assert not controls(status.stdout)
