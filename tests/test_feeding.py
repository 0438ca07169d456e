"""One rule says which reports feed the phases after the research (graph.feeding): the
synthesis (through RunContext.contributors), the host's hand-off and the completeness score
name the same ones, in the case where two rules used to disagree: a resume in which the
budget skipped a refinement that a crash had interrupted after one seat finished it."""

from __future__ import annotations

from pathlib import Path

from council import graph
from council.config import Overrides, load_options
from council.evidence import finalreport as report
from council.hosts import handover
from council.phases import RunContext, synthesis
from council.run.supervisor import start_run
from council.runoptions import RunOptions
from council.store.owner import owned
from council.store.state import AgentPhase, RunState, load_state, update_state
from council.store.workspace import Workspace


def interrupted_refinement(tmp_path: Path) -> tuple[Workspace, RunOptions]:
    """Two seats researched; claude had refined when the run was interrupted, codex had not;
    on resume the budget was spent, so the refinement was skipped."""
    options = load_options(Overrides(test=True, agents=("claude", "codex")))
    ws = start_run("q", options, tmp_path / "research")
    for seat in ("claude", "codex"):
        ws.published_output(seat, "research").write_text(
            f"# {seat}\n\nhttps://docs.python.org/{seat} and https://github.com/{seat}/x\n")
    ws.published_output("claude", "refinement").write_text("# claude, refined\n")

    def change(state: RunState) -> None:
        for seat in ("claude", "codex"):
            state.agents[seat].phases["research"] = AgentPhase(status="complete", iteration=1)
        state.agents["claude"].phases["refinement"] = AgentPhase(status="complete")
        state.agents["codex"].phases["refinement"] = AgentPhase(status="cancelled")
        state.budget_exhausted = "cost $2.00 reached the budget of $2.00"
        state.steps = {"research": "done",
                       "refinement": "skipped: cost $2.00 reached the budget of $2.00"}

    update_state(ws.root, change)
    return ws, options


def test_the_synthesis_the_hand_off_and_the_score_name_the_same_reports(
        tmp_path: Path) -> None:
    ws, options = interrupted_refinement(tmp_path)
    state = load_state(ws.root)
    assert report.contributions(state) == ("research", ["claude", "codex"])

    with owned(ws.root) as owner:
        # The synthesis: its contributors, and the reports its prompt names.
        ctx = RunContext(ws, owner, options, "q")
        source, seats = ctx.contributors()
        assert (source, [s.name for s in seats]) == (graph.RESEARCH, ["claude", "codex"])
        task = synthesis.task(ctx, graph.SYNTHESIS, seats[0], seats, source)
        assert set(task.inputs) == {"claude-report.md", "codex-report.md"}

        # The score counts both seats as contributors (no "1 of 2 agents failed" cap).
        result = report.record_completeness(ws, owner)
        assert (result.cap, result.cap_reason) == (1.0, "all 2 agents contributed")

    # The host's hand-off names the same two reports, and no refined one.
    text = handover.handover(ws, load_state(ws.root))
    assert str(ws.published_output("claude", "research")) in text
    assert str(ws.published_output("codex", "research")) in text
    assert "refined.md" not in text


def test_a_finished_refinement_feeds_what_follows(tmp_path: Path) -> None:
    ws, options = interrupted_refinement(tmp_path)
    update_state(ws.root, lambda s: setattr(s, "steps", {"research": "done",
                                                         "refinement": "done"}))
    assert report.contributions(load_state(ws.root)) == ("refinement", ["claude"])
    with owned(ws.root) as owner:
        source, seats = RunContext(ws, owner, options, "q").contributors()
    assert (source, [s.name for s in seats]) == (graph.REFINEMENT, ["claude"])
    assert "claude-refined.md" in handover.handover(ws, load_state(ws.root))


def test_the_hand_back_asks_what_the_synthesis_seat_is_asked(tmp_path: Path) -> None:
    """One prompt builder (synthesis.prompt): the host's session is asked exactly what a
    seat would be, but for where it reads the reports, the memo and the counterpoints (the
    run folder, not a seat's inputs folder) and where it writes (the final report)."""
    ws, options = interrupted_refinement(tmp_path)
    (ws.root / "dissent.md").write_text("# dissent\n")
    (ws.root / "counterpoints.md").write_text("# counterpoints\n")
    with owned(ws.root) as owner:
        ctx = RunContext(ws, owner, options, "q")
        source, seats = ctx.contributors()
        seat = synthesis.task(ctx, graph.SYNTHESIS, seats[0], seats, source).prompt
    pen = seats[0].name
    inputs = ws.peers_dir(pen, graph.SYNTHESIS.name)
    host = handover.handover(ws, load_state(ws.root))
    assert f"{inputs}/dissent.md" in seat
    assert f"{ws.root}/counterpoints.md" in host
    assert host == seat.replace(str(ws.working_output(pen, graph.SYNTHESIS.name)),
                                str(ws.final_report)).replace(str(inputs), str(ws.root))
