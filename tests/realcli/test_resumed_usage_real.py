"""A resumed claude seat's usage is counted once (issue 43, item 15), with the real claude
offline. claude 2.1.332's `result` may carry a resumed session's earlier totals; council's
counter (agents/claude.py ClaudeUsage) must neither count the interrupted process's requests
twice nor drop them. The supervisor is killed (SIGKILL) while claude is in its research
loop, the run is resumed (`claude --resume`), and the research phase's booked input tokens
are compared with what the scripted server answered for that phase (each answer states
USAGE_IN input tokens). On a0243e7 (and main 8f32659) the interrupted process's messages
were dropped once the resumed process stated its own figures: 2 of 5 requests booked."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
import yaml
from conftest import wait_for

from .helpers import end, kill_supervisor, resume_killed
from .server import USAGE_IN, ScriptedServer
from .test_council import state, the_run
from .test_graph_real import phase_of, start

pytestmark = pytest.mark.realcli


@pytest.mark.timeout(400)
@pytest.mark.parametrize("delay", [0.4, 2.0])
def test_a_resumed_claude_seats_tokens_match_the_servers(
        delay: float, cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """0.4 s answers: the orphaned claude ends its loop, with its result, before the resume
    (whose first result's total_cost_usd then carries the orphan's cost too). 2 s: the
    orphan is still in a request when the resume ends it, so it writes no result and only
    its messages tell what it spent."""
    folder = tmp_path
    server.script = {"anthropic": {"never_finish": True, "delay": delay}}
    proc = start(cli_env, folder, "run", "--test", "--agents", "claude", "--max-iterations",
                 "4", "q")
    tree: list[psutil.Process] = []
    try:
        def in_second_turn() -> bool:
            try:
                research = state(the_run(folder))["agents"]["claude"]["phases"]["research"]
            except (OSError, ValueError, TypeError, KeyError, yaml.YAMLError):
                return False
            return int(research.get("iteration") or 0) >= 2 and bool(
                (research.get("usage") or {}).get("tokens_in"))

        wait_for(in_second_turn, timeout=120)
        tree = kill_supervisor(proc)
        run = the_run(folder)
        booked_before = state(run)["agents"]["claude"]["phases"]["research"]["usage"]
        resumed = resume_killed(run, cli_env)
    finally:
        end([proc, *tree])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    research = state(run)["agents"]["claude"]["phases"]["research"]
    served = [r for r in server.records("anthropic")
              if phase_of(r.get("report_path")) == "research" and r.get("answer")]
    # The request claude was waiting on when the resume ended it was answered by the server
    # but never reached claude's log: at most that one is missing; none is counted twice.
    booked = research["usage"]["tokens_in"] // USAGE_IN
    assert len(served) - 1 <= booked <= len(served), (booked, len(served), booked_before)
    assert booked >= booked_before["tokens_in"] // USAGE_IN + 2  # the resumed turns added
