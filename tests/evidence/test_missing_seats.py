"""The record names what a fault took (issue 42): the final report's header says each missing
seat and why, with the reset of a plan limit or quota (finalreport.missing,
contributed_line); a run that finished without one exits 3 (commands/outcome.py)."""

from __future__ import annotations

from pathlib import Path

from council import graph
from council.commands.outcome import EXIT_DEGRADED, outcome
from council.commands.status import next_step, without
from council.evidence.finalreport import Missing, contributed_line, missing
from council.run.supervisor import RunResult
from council.runoptions import RunOptions, Seat
from council.store.state import AgentPhase, AgentRecord, RunState, SeatStatus
from council.store.workspace import Workspace

SEATS = ("claude", "codex", "gemini")


def run_with(codex: dict[str, AgentPhase], dropped: dict[str, str] | None = None) -> RunState:
    agents = {name: AgentRecord(cli=name) for name in SEATS}
    for name in ("claude", "gemini"):
        agents[name].phases["research"] = AgentPhase(status=SeatStatus.COMPLETE)
        agents[name].phases["refinement"] = AgentPhase(status=SeatStatus.COMPLETE)
    agents["codex"].phases.update(codex)
    return RunState(id="20261128-100000-abcdef", topic="q", created_at="x",
                    options=RunOptions(seats=tuple(Seat(n, n) for n in SEATS)), phase="done",
                    agents=agents, dropped=dropped,
                    steps={"research": graph.DONE, "refinement": graph.DONE})


def test_the_header_names_a_plan_limit_and_its_reset() -> None:
    state = run_with({"research": AgentPhase(status=SeatStatus.FAILED, failure="plan_limit",
                                             retry_at="2026-11-30T00:53:00+00:00")})
    lost = missing(state)
    assert lost == [Missing("codex", "plan_limit", "2026-11-30T00:53:00+00:00")]
    assert contributed_line(["claude", "gemini"], 3, lost) == (
        "2 of 3 agents contributed (claude, gemini); codex: plan limit until 2026-11-30 "
        "00:53 UTC")


def test_a_failure_without_a_reset_is_named_by_its_kind() -> None:
    for kind, words in (("auth", "login refused"), ("crash", "crashed"),
                        ("timeout", "timed out"), ("overloaded", "vendor overloaded"),
                        ("rate_limit", "rate limit")):
        state = run_with({"research": AgentPhase(status=SeatStatus.FAILED, failure=kind,
                                                 retry_at="2026-11-28T10:00:05+00:00")})
        assert [m.describe() for m in missing(state)] == [f"codex: {words}"], kind


def test_a_seat_lost_in_refinement_is_missing_from_a_run_built_on_refinement() -> None:
    state = run_with({"research": AgentPhase(status=SeatStatus.COMPLETE),
                      "refinement": AgentPhase(status=SeatStatus.FAILED, failure="quota",
                                               retry_at="2026-11-29T00:00:00Z")})
    assert [m.describe() for m in missing(state)] == [
        "codex: quota spent until 2026-11-29 00:00 UTC"]


def test_a_partial_report_is_named_as_partial() -> None:
    state = run_with({"research": AgentPhase(status=SeatStatus.COMPLETE),
                      "refinement": AgentPhase(status=SeatStatus.STOPPED, failure="auth",
                                               partial=True)})
    assert [m.describe() for m in missing(state)] == ["codex: partial report (login refused)"]


def test_a_seat_that_never_ran_is_named_by_why_it_was_dropped() -> None:
    state = run_with({}, dropped={"codex": "missing_cli: codex not installed or not on PATH"})
    assert [m.describe() for m in missing(state)] == ["codex: CLI not installed"]


def test_a_full_run_misses_nobody() -> None:
    full = run_with({"research": AgentPhase(status=SeatStatus.COMPLETE),
                     "refinement": AgentPhase(status=SeatStatus.COMPLETE)})
    assert missing(full) == []
    assert without(full) == ""
    assert contributed_line(["claude", "codex", "gemini"], 3, []) == (
        "3 of 3 agents contributed (claude, codex, gemini)")


def test_a_run_that_finished_without_a_seat_exits_3(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "20261128-100000-abcdef")
    lost = ("codex: plan limit until 2026-11-30 00:53 UTC",)
    said = outcome(RunResult(ws, 0, str(ws.final_report), lost), tmp_path)
    assert said.code == EXIT_DEGRADED == 3
    assert f"final report: {ws.final_report}" in said.out
    assert said.err == [f"council: finished without {lost[0]}; try them again with: council "
                        f"resume {ws.id} --research-dir {tmp_path}"]
    assert outcome(RunResult(ws, 0, str(ws.final_report)), tmp_path).code == 0
    assert outcome(RunResult(ws, 1, "failed"), tmp_path).code == 1


def test_the_mcp_and_hook_surfaces_say_it_in_their_words() -> None:
    state = run_with({"research": AgentPhase(status=SeatStatus.FAILED, failure="plan_limit",
                                             retry_at="2026-11-30T00:53:00Z")})
    assert without(state) == ("; finished without codex: plan limit until 2026-11-30 00:53 UTC "
                              "(`council resume 20261128-100000-abcdef` tries again where it "
                              "can)")
    assert next_step(state.id, "done", ["codex: plan limit until 2026-11-30 00:53 UTC"]) == (
        f"get_report with run_id {state.id} gives the final report; the run finished "
        "without codex: plan limit until 2026-11-30 00:53 UTC: `council resume "
        f"{state.id}` in a terminal tries again where it can")
