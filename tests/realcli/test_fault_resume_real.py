"""Resume recovers what a vendor's no took, with the real CLIs offline against the scripted
server's vendor faults (issue 42): a codex usage limit and a claude plan limit are named with
their reset in progress.log, status and the final report's header, after at most one refused
request per seat, and `council resume` after the reset adds both seats (3 of 3); a run where
every seat failed ends, once resumed, with a final report; a 401 at turn 3, then a resume once
the login is good again, continues the two finished turns.

These rest on the seat-level handling of faults too (agents/*.classify reading the limit and
its reset, the runner recording it in store/limits.py and publishing a failed seat's finished
turns as partial): they pass once both are in. "Time passes" is simulated where a reset lies
hours ahead (claude's plan limit says none the CLI prints: council holds it for
limits.DEFAULT_HOLD): the records' reset is moved into the past, as the clock would."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

TOPIC = "Tides?"


def council(env: dict[str, str], project: Path, *args: str,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "council", *args], env=env, cwd=project,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def the_run(project: Path) -> Path:
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    return run


def state(run: Path) -> dict[str, Any]:
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def header(run: Path) -> str:
    return (run / "final-report.md").read_text().splitlines()[0]


def refused(server: ScriptedServer, api: str, fault: str) -> int:
    return sum(1 for r in server.records(api) if r.get("answer") == f"fault {fault}")


@pytest.fixture
def env(cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
        ) -> dict[str, str]:
    """The CLIs' environment, with council's machine-wide state (the limits it records) in a
    folder this test reads too."""
    state_home = tmp_path / "council-state"
    monkeypatch.setenv("COUNCIL_STATE_HOME", str(state_home))
    return {**cli_env, "COUNCIL_STATE_HOME": str(state_home),
            "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}


def time_passes(run: Path) -> None:
    """The resets come: every failed seat's `retry_at`, and every limit recorded, lie in the
    past (what the clock does, without waiting hours)."""
    from council.store import limits

    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    path = run / "state.yaml"
    data = yaml.safe_load(path.read_text())
    for rec in data["agents"].values():
        for ap in rec["phases"].values():
            if ap.get("retry_at"):
                ap["retry_at"] = past
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    for limit in limits.active():
        limits.clear(limit.cli)


def test_plan_limits_are_named_with_their_reset_and_resume_adds_the_seats(
        env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {
        "openai": {"fault": {"name": "usage_limit", "resets_in": 120}},
        "anthropic": {"fault": {"name": "plan_limit"}},  # retry-after 9000: claude waits not
        "gemini": {"finish_after": 1}}
    first = council(env, tmp_path, "run", "--test", TOPIC)
    run = the_run(tmp_path)
    assert first.returncode == 3, first.stderr[-3000:]
    # At most one refused request per seat: a plan limit is not retried.
    assert refused(server, "openai", "usage_limit") == 1
    assert refused(server, "anthropic", "plan_limit") == 1
    st = state(run)
    for seat in ("claude", "codex"):
        rec = st["agents"][seat]["phases"]["research"]
        assert rec["failure"] == "plan_limit", rec
        assert rec["retry_at"], rec
    top = header(run)
    assert "1 of 3 agents contributed (gemini)" in top, top
    assert "claude: plan limit until " in top, top
    assert "codex: plan limit until " in top, top
    log = (run / "progress.log").read_text()
    assert "run finished without claude: plan limit until " in log, log[-3000:]
    assert "codex: plan limit until " in log
    status = council(env, tmp_path, "status", run.name).stdout
    assert "claude: plan limit until " in status
    assert "codex: plan limit until " in status
    # The limits are recorded machine-wide: a new run leaves both seats out, sending nothing.
    from council.store import limits

    assert {x.cli for x in limits.active()} == {"claude", "codex"}
    asked = {api: len(server.records(api)) for api in ("anthropic", "openai")}
    later = council({**env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "later")}, tmp_path,
                    "run", "--test", TOPIC)
    assert later.returncode == 0, later.stderr[-3000:]
    for cli in ("claude", "codex"):
        assert f"council: {cli} (" in later.stderr, later.stderr
    assert later.stderr.count("is limited until") == 2, later.stderr
    assert later.stderr.count(" left out") == 2, later.stderr
    assert {api: len(server.records(api)) for api in asked} == asked  # nothing sent

    # Before the reset: said, not waited for; nothing else to do, so still done without them.
    early = council(env, tmp_path, "resume", run.name)
    assert early.returncode == 3, early.stderr[-3000:]
    assert "not tried again before then" in early.stdout + early.stderr
    assert refused(server, "openai", "usage_limit") == 1

    server.script = {"openai": {"finish_after": 1}, "anthropic": {"finish_after": 1},
                     "gemini": {"finish_after": 1}}
    time_passes(run)
    resumed = council(env, tmp_path, "resume", run.name)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    st = state(run)
    assert st["phase"] == "done"
    for seat in ("claude", "codex"):
        assert st["agents"][seat]["phases"]["research"]["status"] in ("complete", "capped")
        assert (run / f"{seat}-report.md").is_file()  # its report is published
    assert "3 of 3 agents contributed (claude, codex, gemini)" in header(run)
    assert not st.get("dropped")


def test_every_seat_failing_then_resume_ends_with_a_final_report(
        env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {api: {"fault": {"name": "auth"}}
                     for api in ("anthropic", "openai", "gemini")}
    first = council(env, tmp_path, "run", "--test", TOPIC)
    run = the_run(tmp_path)
    assert first.returncode == 1, first.stderr[-3000:]
    assert state(run)["phase"] == "failed"
    assert not (run / "final-report.md").exists()

    server.script = {api: {"finish_after": 1} for api in ("anthropic", "openai", "gemini")}
    resumed = council(env, tmp_path, "resume", run.name)  # logged in again
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert state(run)["phase"] == "done"
    assert "3 of 3 agents contributed" in header(run)


def test_a_401_at_turn_3_then_resume_after_login_continues_the_finished_turns(
        env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    script = {"finish_after": 5}
    server.script = {"anthropic": {**script, "fault": {"name": "auth", "from_turn": 3}},
                     "openai": {**script, "fault": {"name": "auth", "from_turn": 3}},
                     "gemini": {"finish_after": 1}}
    first = council(env, tmp_path, "run", "--test", "--max-iterations", "5", TOPIC)
    run = the_run(tmp_path)
    assert first.returncode == 3, first.stderr[-3000:]
    st = state(run)
    sessions = {}
    for seat in ("claude", "codex"):
        rec = st["agents"][seat]["phases"]["research"]
        assert rec["failure"] == "auth", rec
        assert rec["iteration"] >= 2, rec  # two finished turns, kept
        sessions[seat] = rec["session_id"]
        assert sessions[seat]
    assert "claude: " in header(run)
    assert "codex: " in header(run)

    server.script = {"anthropic": script, "openai": script, "gemini": {"finish_after": 1}}
    resumed = council(env, tmp_path, "resume", run.name)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    st = state(run)
    for seat in ("claude", "codex"):
        rec = st["agents"][seat]["phases"]["research"]
        assert rec["status"] in ("complete", "capped"), rec
        assert rec["session_id"] == sessions[seat]  # the same session went on
        report = (run / f"{seat}-report.md").read_text()
        # Turns 1 and 2 from before the fault, and the turns after it, in one report: a
        # fresh session would have started again at turn 1.
        assert "## Turn 1" in report, report
        assert "## Turn 3" in report, report
    assert "3 of 3 agents contributed (claude, codex, gemini)" in header(run)
