"""`council resume` recovers what a fault took (issue 42), driven with the fake CLIs: a seat
that failed in research is tried again, continuing its work, the phases built on research
run again for its report and the final report is rewritten; a run where every seat failed
can be resumed; a limit recorded on this machine is named in the next run's plan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from conftest import Council


def state_of(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    return data


def header(run: Path) -> str:
    return (run / "final-report.md").read_text().splitlines()[0]


def test_a_finished_run_that_lost_a_seat_is_resumed_to_add_it(council: Council) -> None:
    council.script({"codex:research": {"crash": True, "crash_on_turn": 2,
                                       "crash_kind": "bad_request"}})
    first = council.run("run", "--test", "q")
    assert first.returncode == 3, first.stderr
    run = council.only_run()
    assert "2 of 3 agents contributed (claude, gemini); codex: " in header(run)
    before = state_of(run)
    session = before["agents"]["codex"]["phases"]["research"]["session_id"]
    assert before["agents"]["codex"]["phases"]["research"]["status"] == "failed"
    refined_claude = (run / "claude-refined.md").read_text()

    council.script({})  # the vendor answers again
    seen = len(council.fake_log())
    resumed = council.run("resume", run.name)
    assert resumed.returncode == 0, resumed.stderr
    after = council.fake_log()[seen:]
    st = state_of(run)
    assert st["phase"] == "done"
    codex = st["agents"]["codex"]["phases"]
    assert codex["research"]["status"] in ("complete", "capped")  # it went on to its cap
    assert codex["refinement"]["status"] == "complete"  # its refinement ran, for it alone
    assert "3 of 3 agents contributed (claude, codex, gemini)" in header(run)
    assert (run / "claude-refined.md").read_text() == refined_claude  # not paid twice
    # codex continued its thread: the turn it had finished before the fault is kept
    research = [e for e in after if e["event"] == "start" and e["seat"] == "codex"]
    assert "resume" in research[0]["argv"]
    assert session in research[0]["argv"]
    # only codex researched and refined again; the others' reports were kept
    turns = {(e["seat"], e["phase"]) for e in after if e["event"] == "turn"}
    assert {seat for seat, phase in turns if phase in ("research", "refinement")} == {"codex"}
    log = (run / "progress.log").read_text()
    assert "resume: codex: " in log
    assert "they did not read it" in (run / "final-report.md").read_text()  # provenance


def test_a_run_where_every_seat_failed_can_be_resumed(council: Council) -> None:
    council.script({"*": {"crash": True, "crash_kind": "bad_request"}})
    first = council.run("run", "--test", "q")
    assert first.returncode == 1
    run = council.only_run()
    assert state_of(run)["phase"] == "failed"

    council.script({})
    resumed = council.run("resume", run.name)
    assert resumed.returncode == 0, resumed.stderr
    assert state_of(run)["phase"] == "done"
    assert "3 of 3 agents contributed" in header(run)


def test_a_seat_before_its_reset_is_not_waited_for(council: Council) -> None:
    council.script({"codex:research": {"crash": True, "crash_kind": "bad_request"}})
    assert council.run("run", "--test", "q").returncode == 3
    run = council.only_run()
    until = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)

    def limited(data: dict[str, Any]) -> None:
        rec = data["agents"]["codex"]["phases"]["research"]
        rec["failure"], rec["retry_at"] = "plan_limit", until.isoformat()

    path = run / "state.yaml"
    data = yaml.safe_load(path.read_text())
    limited(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    resumed = council.run("resume", run.name)
    # Nothing else to do: the run stays done without codex, and says until when.
    assert resumed.returncode == 3, resumed.stderr
    shown = f"{until:%Y-%m-%d %H:%M} UTC"
    assert f"codex: plan limit until {shown}: not tried again before then" in resumed.stdout \
        + resumed.stderr
    assert state_of(run)["phase"] == "done"
    status = council.run("status")
    assert f"plan limit until {shown}" in status.stdout


def record(cli: str, key: str, until: datetime, kind: str = "plan_limit") -> None:
    """A limit met on this machine, as the seat's runner records it (the test's HOME is the
    council processes' too)."""
    from council.store import limits

    limits.record(limits.Limit(cli, limits.credential_id(key, "fake-key"), kind,
                               until.isoformat(), "You've hit your usage limit.",
                               datetime.now(UTC).isoformat()))


def test_a_recorded_limit_leaves_the_seat_out_of_the_next_run(council: Council) -> None:
    until = datetime.now(UTC) + timedelta(hours=3)
    record("codex", "OPENAI_API_KEY", until)
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    assert (f"codex (OPENAI_API_KEY) is limited until {until:%Y-%m-%d %H:%M} UTC: codex left "
            "out") in proc.stderr
    st = state_of(council.only_run())
    assert set(st["agents"]) == {"claude", "gemini"}
    assert not any(e["cli"] == "codex" for e in council.fake_log())

    # Every seat limited: one line naming each and its reset, exit 2, nothing created.
    record("claude", "ANTHROPIC_API_KEY", until, "quota")
    record("gemini", "GEMINI_API_KEY", until, "quota")
    runs = set(council.research.iterdir())
    refused = council.run("run", "--test", "q")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("council: error: every agent is limited: ")
    for cli in ("claude", "codex", "gemini"):
        assert f"{cli} (" in lines[0]
    assert set(council.research.iterdir()) == runs


def test_a_limited_seat_moves_to_its_fallback(council: Council) -> None:
    from conftest import write_trusted_config

    write_trusted_config(council.root, "agents:\n  codex: {cli: codex, fallback: gemini}\n"
                         "  claude: {cli: claude}\n")
    record("codex", "OPENAI_API_KEY", datetime.now(UTC) + timedelta(hours=1))
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    assert ("the codex seat's role moves to its fallback gemini, billed to gemini's login "
            "(GEMINI_API_KEY)") in proc.stderr
    st = state_of(council.only_run())
    assert st["agents"]["codex"]["cli"] == "gemini"
