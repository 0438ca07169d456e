"""The hand-back to a host session (the Claude Code plugin): the council stops before the
synthesis, the main session writes the final report from these instructions, and council then
stamps it and ends the run. The host's flow, which does not own the run (its supervisor has
ended), reads the state and passes it in: the run's file (state.StateFile)."""

from __future__ import annotations

from council import graph, prompts
from council.phases import synthesis
from council.phases.synthesis import MAIN_SESSION
from council.run.pipeline import set_phase
from council.store import events, loop
from council.store.runlock import RunLock
from council.store.state import RunState, States, load_state
from council.store.workspace import DISSENT, Workspace
from council.views import page, report

__all__ = ["MAIN_SESSION", "complete_handover", "fail_run", "handover"]


def handover(ws: Workspace, state: RunState | None = None) -> str:
    """The instructions that hand the synthesis to the main Claude session: the synthesis's
    own prompt, on the reports the one rule says feed it (report.contributions). `state`: as
    the host's flow read it, or else read from the run's file (the supervisor has ended)."""
    if state is None:
        state = load_state(ws.root)
    source, names = report.contributions(state)
    options = state.options
    seats = [options.seat(n) for n in names]
    contributors = [{"name": s.name, "cli": s.cli, "model": s.model,
                     "path": str(ws.published_output(s.name, source))} for s in seats]
    dissent = ws.root / DISSENT
    return prompts.render(
        graph.SYNTHESIS.prompt, topic=state.topic, contributors=contributors, mode=options.mode,
        total_agents=len(state.agents), report_path=str(ws.final_report),
        methodology=synthesis.methodology(state, seats, source),
        dropped=synthesis.dropped_claims(state), marker=loop.MARKER,
        verification=report.verification_facts(ws),
        counterpoints=synthesis.counterpoints(ws),
        dissent=str(dissent) if dissent.is_file() else None,
        gap_reports=synthesis.gap_reports(ws, state, seats),
    )


def complete_handover(ws: Workspace, states: States) -> bool:
    """After the main session's turn: stamp the final report and end the run, if it exists."""
    text = loop.read_report(ws.final_report)
    if not text or not text.strip():
        return False
    # The run's lock, as a supervisor holds it, while the run is ended: a reader (the MCP
    # tools) takes a run as ended once nothing holds it, so after the last progress line.
    with RunLock(ws.root):
        state = states.state
        _, names = report.contributions(state)
        report.stamp_final_report(ws, states, names, len(state.agents), MAIN_SESSION)
        set_phase(ws, states, "done")
        page.publish(ws, states.state)
        events.emit(ws.root, "run", f"done: {ws.final_report}")
    return True


def fail_run(ws: Workspace, states: States, reason: str) -> None:
    with RunLock(ws.root):
        set_phase(ws, states, "failed", reason)
        page.publish(ws, states.state)
        events.emit(ws.root, "run", f"failed: {reason}")
