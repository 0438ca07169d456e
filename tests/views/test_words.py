"""Words that look like failures (issue 43, item 4): what `status`, `watch`, progress.log,
the page and `ask` say of a run that went as planned."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from council.commands.ask import Answered, summary
from council.config import Overrides, load_options
from council.evidence.changes import headline
from council.store.state import AgentPhase, AgentRecord, RunState, create_state, said
from council.store.workspace import Workspace
from council.views.status import rows
from council.views.watch import table

RUN_ID = "20261123-100000-abcdef"
SEATS = ("claude", "codex", "gemini")


def run_in(tmp_path: Path, phase: str, phases: dict[str, dict[str, AgentPhase]],
           steps: dict[str, str] | None = None) -> tuple[RunState, Workspace]:
    ws = Workspace(tmp_path / RUN_ID)
    ws.root.mkdir(parents=True)
    state = RunState(id=RUN_ID, topic="q", created_at="2026-11-23T10:00:00Z",
                     options=load_options(Overrides(verify=True)), phase=phase, steps=steps,
                     agents={s: AgentRecord(cli=s, phases=phases.get(s, {})) for s in SEATS})
    create_state(ws.root, state)
    return state, ws


def one_turn(status: str = "capped") -> AgentPhase:
    return AgentPhase(status=status, iteration=1, max_iterations=1,
                      started_at="2026-11-23T10:00:00Z", ended_at="2026-11-23T10:01:00Z")


def shown(renderable: object) -> str:
    console = Console(record=True, width=200)
    console.print(renderable)
    return console.export_text()


def test_a_one_turn_phase_that_took_its_turn_is_complete_not_capped(tmp_path: Path) -> None:
    assert said("capped", 1) == "complete"
    assert said("capped", 7) == "capped"  # a loop that hit its cap: the reader may care
    assert said("failed", 1) == "failed"
    state, ws = run_in(tmp_path, "verification", {
        "claude": {"claims": one_turn()}, "codex": {"verification": one_turn()},
        "gemini": {"research": AgentPhase(status="capped", iteration=7, max_iterations=7)}})
    by_agent = {r.agent: r for r in rows(state, ws)}
    assert (by_agent["claude"].status, by_agent["codex"].status) == ("complete", "complete")
    assert by_agent["gemini"].status == "capped"
    assert "capped" not in shown(table(state, ws, own=True)).split("gemini")[0]


def test_once_the_run_is_done_no_row_names_a_phase_as_if_it_were_under_way(
        tmp_path: Path) -> None:
    state, ws = run_in(tmp_path, "done", {
        "claude": {"synthesis": one_turn("complete")},
        "codex": {"verification": one_turn()}, "gemini": {"research": one_turn("failed")}})
    by_agent = {r.agent: r.phase for r in rows(state, ws)}
    assert by_agent == {"claude": "done", "codex": "done", "gemini": "research"}


def test_a_phase_bar_has_no_count_until_its_seats_are_known(tmp_path: Path) -> None:
    """The verification bar said 0/3, then 0/2 once it began with two verifiers."""
    state, ws = run_in(tmp_path, "claims", {s: {"research": one_turn("complete")}
                                            for s in SEATS})
    before = next(line for line in shown(table(state, ws, own=True)).splitlines()
                  if line.startswith("verification"))
    assert before.rstrip().endswith("not started"), before
    assert "/" not in before
    running = AgentPhase(status="running", iteration=1, max_iterations=1)
    state, ws = run_in(tmp_path / "later", "verification",
                       {"claude": {"verification": running}, "codex": {"verification": running}},
                       steps={"research": "done", "claims": "done"})
    during = next(line for line in shown(table(state, ws, own=True)).splitlines()
                  if line.startswith("verification"))
    assert during.rstrip().endswith("0/2"), during


def test_counts_say_one_in_the_singular() -> None:
    assert headline({"since": RUN_ID, "changed": False, "compared": True,
                     "claims": {"unchanged": 1, "flipped": [], "new": [], "retracted": []},
                     "sources": {"new": [], "gone": []}}).startswith(
        f"no change since {RUN_ID}: 1 claim verified again")
    one = Answered(RUN_ID, "a.md", "", "claude", ["https://a.example"],
                   ["https://b.example"], ["c1 (SUPPORTED)"], research=False)
    assert summary(one) == ("1 of the run's sources cited, 1 claim named, 1 URL not among the "
                            "run's sources")
