"""The hand-back to a host session (the Claude Code plugin): the council stops before the
synthesis, the main session writes the final report from these instructions, and council then
stamps it and ends the run. The host's flow, which does not own the run (its supervisor has
ended), reads the state and passes it in: the run's file (state.StateFile)."""

from __future__ import annotations

from council.evidence import finalreport, reportcheck
from council.phases import evidence, synthesis
from council.run.pipeline import set_phase
from council.store import events, loop
from council.store.runlock import RunLock
from council.store.state import MAIN_SESSION, RunEnd, RunState, States, load_state
from council.store.workspace import Workspace, phase_of
from council.views import page

__all__ = ["MAIN_SESSION", "complete_handover", "fail_run", "handover"]


def handover(ws: Workspace, state: RunState | None = None) -> str:
    """The instructions that hand the synthesis to the main Claude session: the synthesis's
    own prompt (synthesis.prompt), on the reports the one rule says feed it
    (finalreport.contributions), where they were published. `state`: as the host's flow read
    it, or else read from the run's file (the supervisor has ended)."""
    if state is None:
        state = load_state(ws.root)
    source, names = finalreport.contributions(state)
    options = state.options
    seats = [options.seat(n) for n in names]
    return synthesis.prompt(ws, state, options, seats, phase_of(source), ws.final_report)


def complete_handover(ws: Workspace, states: States) -> bool:
    """After the main session's turn: stamp the final report and end the run, if it exists."""
    text = loop.read_report(ws.final_report)
    if not text or not text.strip():
        return False
    # The run's lock, as a supervisor holds it, while the run is ended: a reader (the MCP
    # tools) takes a run as ended once nothing holds it, so after the last progress line.
    with RunLock(ws.root):
        state = states.state
        _, names = finalreport.contributions(state)
        finalreport.stamp_final_report(ws, states, names, len(state.agents), MAIN_SESSION)
        # The integrity check against what the run's checking phases stored (issue 44): the
        # hook's time budget fetches nothing more, and the host's session has no repair turn.
        reportcheck.publish(ws, reportcheck.check(ws, evidence.is_offline(state.options)))
        set_phase(ws, states, RunEnd.DONE)
        page.publish(ws, states.state)
        events.emit(ws.root, "run", f"done: {ws.final_report}")
    return True


def fail_run(ws: Workspace, states: States, reason: str) -> None:
    with RunLock(ws.root):
        set_phase(ws, states, RunEnd.FAILED, reason)
        page.publish(ws, states.state)
        events.emit(ws.root, "run", f"failed: {reason}")
