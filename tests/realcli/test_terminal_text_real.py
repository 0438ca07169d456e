"""A real CLI's error text reaches the user's terminal and progress.log as text (issue 43,
item 7): the scripted server refuses gemini with a vendor's body whose message holds an OSC 52
(a clipboard write), a CSI 2J (a clear), a bell, a bidi override and rich markup; gemini prints
it as its own error (`[API Error: …]`), and `council run` on a pseudo-terminal shows it in its
live view, `council status` in its table, and progress.log in its lines: as text, markup as
typed, no sequence sent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .helpers import HOSTILE, controls, on_a_terminal, sent
from .server import ScriptedServer

pytestmark = pytest.mark.realcli


def test_a_vendors_hostile_error_reaches_the_live_view_and_the_log_as_text(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {"anthropic": {"finish_after": 1}, "openai": {"finish_after": 1},
                     "gemini": {"fault": {"name": "auth", "message": HOSTILE}}}
    env = {**cli_env, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50"}
    shown = on_a_terminal([sys.executable, "-m", "council", "run", "--test", "Tides?"], env,
                          tmp_path, timeout=240, exit_code=3).decode()  # without gemini
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    log = (run / "progress.log").read_text()
    assert "]52;c;ZXZpbA==" in log, log  # gemini's words reached the log...
    assert "[blink]look[/blink]" in log
    assert not controls(log)  # ...as text
    assert not controls((run / "events.jsonl").read_text())
    assert "login refused" in shown, shown  # the live view's last event column
    assert not sent(shown), shown
    status = on_a_terminal([sys.executable, "-m", "council", "status"], env, tmp_path).decode()
    assert "[blink]look[/blink]" in status, status
    assert not sent(status), status
