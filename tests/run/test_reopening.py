"""What `council resume` does about the seats a fault took (run/recovery.py): which are tried
again, which wait for their reset, which steps re-open and what becomes of their records and
outputs. Pure decisions, and their application to a state in memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from council import graph
from council.run.recovery import (
    RECOVERABLE,
    Lost,
    Reopening,
    lost_seats,
    reopen,
    reopening,
)
from council.runoptions import RunOptions, Seat
from council.store.state import AgentPhase, AgentRecord, RunState, SeatStatus
from council.store.workspace import CLAIMS, Workspace

T = TypeVar("T")
NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
SEATS = ("claude", "codex", "gemini")
AFTER_RESEARCH = ["research", "refinement", "claims", "gapfill", "recheck", "verification",
                  "antagonist", "synthesis"]


def done(**more: object) -> AgentPhase:
    return AgentPhase(status=SeatStatus.COMPLETE, iteration=2, max_iterations=2,
                      started_at="2026-11-28T10:00:00Z", session_id="s", **more)  # type: ignore[arg-type]


def failed(kind: str, retry_at: str | None = None, partial: bool = False) -> AgentPhase:
    return AgentPhase(status=SeatStatus.FAILED, iteration=2, max_iterations=3,
                      started_at="2026-11-28T10:00:00Z", session_id="sess-codex",
                      error=f"{kind}!", failure=kind, retry_at=retry_at, partial=partial,
                      usage={"tokens_in": 10})


def finished_run(codex: AgentPhase | None = None) -> RunState:
    """A done run: claude and gemini researched, refined, claimed, synthesised; codex lost
    in research (with `codex`'s record)."""
    agents = {name: AgentRecord(cli=name) for name in SEATS}
    for name in ("claude", "gemini"):
        agents[name].phases.update(research=done(), refinement=done())
    agents["claude"].phases.update(claims=done(usage={"tokens_in": 5}), synthesis=done())
    agents["codex"].phases["research"] = codex or failed("plan_limit", "2026-11-28T11:00:00Z")
    return RunState(id="20261128-100000-abcdef", topic="q", created_at="x",
                    options=RunOptions(seats=tuple(Seat(n, n) for n in SEATS)), phase="done",
                    agents=agents, dropped={"codex": "plan_limit: You've hit your limit"},
                    steps={p.name: graph.DONE for p in graph.GRAPH},
                    ended_at="2026-11-28T10:30:00Z")


def test_a_seat_is_lost_for_each_recoverable_kind_and_only_those() -> None:
    for kind in (*RECOVERABLE, "no_report", "unsafe_report", "missing_cli"):
        lost = lost_seats(finished_run(failed(kind)))
        assert (lost == [Lost("codex", "codex", "research", kind)]) is (kind in RECOVERABLE), kind
    assert lost_seats(finished_run(done())) == []
    # a partial report published for a failed seat counts as lost too
    partial = AgentPhase(status=SeatStatus.STOPPED, failure="auth", partial=True)
    assert [x.seat for x in lost_seats(finished_run(partial))] == ["codex"]


def test_after_its_reset_a_seat_is_tried_again_and_everything_built_on_research_reopens(
) -> None:
    plan = reopening(finished_run(), NOW, {"codex": None}, {})
    assert [x.seat for x in plan.seats] == ["codex"]
    assert plan.waiting == []
    assert plan.not_ready == []
    assert plan.steps == AFTER_RESEARCH  # not scope, not dissent (beside the research)


def test_before_its_reset_a_seat_waits_and_nothing_reopens() -> None:
    later = (NOW + timedelta(hours=3)).isoformat()
    plan = reopening(finished_run(failed("plan_limit", later)), NOW, {"codex": None}, {})
    assert plan.seats == []
    assert plan.steps == []
    (waiting,) = plan.waiting
    assert waiting.until == NOW + timedelta(hours=3)
    (line,) = plan.lines()
    assert line.startswith("codex: plan limit until 2026-11-28 15:00 UTC: not tried again "
                           "before then; the rest runs without it")


def test_a_limit_recorded_since_holds_the_seat_too() -> None:
    plan = reopening(finished_run(failed("crash")), NOW, {"codex": None},
                     {"codex": NOW + timedelta(minutes=5)})
    assert plan.seats == []
    assert [x.seat for x in plan.waiting] == ["codex"]


def test_a_seat_whose_cli_fails_the_preflight_is_not_tried() -> None:
    problem = "codex has no credentials: log in with `codex login`"
    plan = reopening(finished_run(failed("auth")), NOW, {"codex": problem}, {})
    assert plan.seats == []
    assert plan.not_ready == [(Lost("codex", "codex", "research", "auth"),
                                                    problem)]
    assert plan.lines() == [f"codex: login refused in research: not tried again: {problem}"]
    # logged in again: tried
    assert [x.seat for x in reopening(finished_run(failed("auth")), NOW, {"codex": None},
                                      {}).seats] == ["codex"]


def test_a_partial_seats_own_later_work_is_made_afresh(tmp_path: Path) -> None:
    state = finished_run(AgentPhase(status=SeatStatus.STOPPED, failure="auth", partial=True,
                                    started_at="x", iteration=1))
    state.agents["codex"].phases["refinement"] = done(usage={"tokens_in": 7})
    reopen(Workspace(tmp_path), Owner(state), reopening(state, NOW, {}, {}))
    assert state.agents["codex"].phases["research"].status == SeatStatus.PENDING
    refined = state.agents["codex"].phases["refinement"]  # it refined a partial report
    assert refined.status == SeatStatus.PENDING
    assert refined.started_at is None
    assert refined.usage == {"tokens_in": 7}
    assert state.agents["claude"].phases["refinement"].status == SeatStatus.COMPLETE


def test_a_seat_lost_in_refinement_reopens_from_refinement() -> None:
    state = finished_run(done())
    state.agents["codex"].phases["refinement"] = failed("overloaded")
    plan = reopening(state, NOW, {}, {})
    assert [(x.seat, x.phase) for x in plan.seats] == [("codex", "refinement")]
    assert plan.steps == AFTER_RESEARCH[1:]


@dataclass
class Owner:
    state: RunState

    def update(self, change: Callable[[RunState], T], now: bool = False) -> T:
        return change(self.state)


def test_reopening_keeps_the_lost_seats_work_and_what_every_phase_spent(
        tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "20261128-100000-abcdef")
    (ws.root / "work").mkdir(parents=True)  # the run's own working files (paths.RUN_WORK)
    (ws.root / CLAIMS).write_text("{}")
    state = finished_run()
    owner = Owner(state)
    reopen(ws, owner, reopening(state, NOW, {}, {}))
    codex = state.agents["codex"].phases["research"]
    # unfinished, continuing its session and turns, with what it spent
    assert codex.status == SeatStatus.PENDING
    assert (codex.session_id, codex.iteration, codex.started_at) == (
        "sess-codex", 2, "2026-11-28T10:00:00Z")
    assert codex.usage == {"tokens_in": 10}
    assert codex.failure is codex.error is codex.retry_at is None
    assert state.dropped is None
    assert state.phase == "research"
    assert state.ended_at is None
    assert state.steps == {"scope": graph.DONE, "dissent": graph.DONE}
    # the others keep their reports; a one-seat phase starts afresh, keeping what it spent
    assert state.agents["claude"].phases["refinement"].status == SeatStatus.COMPLETE
    claims = state.agents["claude"].phases["claims"]
    assert claims.status == SeatStatus.PENDING
    assert claims.started_at is None
    assert claims.usage == {"tokens_in": 5}
    assert state.agents["claude"].phases["synthesis"].status == SeatStatus.PENDING
    # claims.json is made again, the old one moved aside
    assert not (ws.root / CLAIMS).exists()
    assert (ws.root / "work" / "before-resume" / CLAIMS).is_file()
    (note,) = state.provenance or []
    assert note == ("claude, gemini wrote their refinement before codex's research was "
                    "recovered (council resume): they did not read it")


def test_nothing_to_reopen_changes_nothing(tmp_path: Path) -> None:
    state = finished_run(done())
    before = repr(state)
    reopen(Workspace(tmp_path), Owner(state), Reopening())
    assert repr(state) == before


@pytest.mark.parametrize("phase", [graph.RESEARCH, graph.REFINEMENT])
def test_downstream_is_what_builds_on_a_phase(phase: graph.Phase) -> None:
    later = [p.name for p in graph.downstream(phase)]
    assert graph.SYNTHESIS.name in later
    assert graph.SCOPE.name not in later
    assert graph.DISSENT.name not in later
    assert all(graph.GRAPH.index(graph.BY_NAME[n]) > graph.GRAPH.index(phase) for n in later)


def test_a_seat_dropped_before_its_research_is_owed_it(tmp_path: Path) -> None:
    state = finished_run(done())
    del state.agents["codex"].phases["research"]
    state.agents["codex"].phases["scope"] = failed("auth")
    state.dropped = {"codex": "auth: invalid x-api-key"}
    plan = reopening(state, NOW, {"codex": None}, {})
    assert [(x.seat, x.phase, x.kind) for x in plan.seats] == [("codex", "research", "auth")]
    reopen(Workspace(tmp_path), Owner(state), plan)
    assert state.dropped is None
    assert "research" not in state.agents["codex"].phases  # research.run starts it afresh
