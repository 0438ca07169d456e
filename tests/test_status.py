"""`council status`'s rows (council/status.py): pure functions of a state and a run folder."""

from __future__ import annotations

import os
from pathlib import Path

from council.state import AgentPhase, AgentRecord, RunState
from council.status import as_text, rows
from council.workspace import Workspace


def test_a_running_agent_shows_when_it_last_wrote_anything(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    state = RunState(id="r", topic="q", created_at="2026-11-23T10:00:00Z", options={},
                     phase="research", agents={
                         "claude": AgentRecord(cli="claude", phases={"research": AgentPhase(
                             status="running", started_at="2026-11-23T10:00:00Z")}),
                         "codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                             status="complete", started_at="2026-11-23T10:00:00Z",
                             ended_at="2026-11-23T10:01:00Z")}),
                     })
    now = 1795428000.0 + 600  # ten minutes after it started
    log, report = ws.log_file("claude", "research"), ws.working_output("claude", "research")
    for path, seconds_ago in ((log, 130), (report, 95)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (now - seconds_ago, now - seconds_ago))
    by_agent = {r.agent: r for r in rows(state, ws, now=now)}
    assert by_agent["claude"].quiet_s == 95  # the newest of its log, stderr and report
    assert by_agent["codex"].quiet_s is None  # only running agents are waited on
    line = next(x for x in as_text(state, ws).splitlines() if x.startswith("claude"))
    assert "last output" in line
