"""The research loop's one decision, shared by every CLI's loop.

claude and gemini ask it from their hooks after each turn; council asks it itself between
codex invocations. It is pure (`decide`) plus one locked state update (`end_turn`), so the
rule "continue until the marker or the cap" lives in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from council import progress
from council.state import RunState, update_state

MARKER = "<!-- RESEARCH_COMPLETE -->"


@dataclass(frozen=True)
class Decision:
    proceed: bool
    iteration: int
    max_iterations: int
    why: str  # "continue" | "complete" | "capped" | "inactive"


def has_marker(report: str | None) -> bool:
    return report is not None and MARKER in report


def decide(report: str | None, iteration: int, max_iterations: int) -> Decision:
    """After turn `iteration`: go on to the next turn, or let the agent stop?"""
    if has_marker(report):
        return Decision(False, iteration, max_iterations, "complete")
    if iteration >= max_iterations:
        return Decision(False, iteration, max_iterations, "capped")
    return Decision(True, iteration + 1, max_iterations, "continue")


def final_status(*, report: str | None, iteration: int, max_iterations: int) -> str:
    """An agent's status once its CLI has exited cleanly."""
    if not report or not report.strip():
        return "failed"
    if has_marker(report):
        return "complete"
    return "capped" if iteration >= max_iterations else "stopped"


def continuation_prompt(instructions: str, decision: Decision) -> str:
    return f"Iteration {decision.iteration} of {decision.max_iterations}.\n\n{instructions}"


def read_report(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def end_turn(run_dir: Path, seat: str, phase: str, report_path: Path) -> Decision:
    """Record the end of one turn in state.yaml and progress.log; say what comes next."""
    report = read_report(report_path)

    def change(state: RunState) -> Decision:
        record = state.agents[seat].phase(phase)
        if state.phase != phase or record.status != "running":
            # Cancelled, failed or already finished: never keep an agent going.
            return Decision(False, record.iteration, record.max_iterations, "inactive")
        decision = decide(report, record.iteration, record.max_iterations)
        record.iteration = decision.iteration
        return decision

    decision = update_state(run_dir, change)
    if decision.why == "continue":
        progress.emit(
            run_dir, phase, seat, f"iteration {decision.iteration}/{decision.max_iterations}"
        )
    elif decision.why == "complete":
        progress.emit(run_dir, phase, seat, f"marked its report complete "
                      f"after iteration {decision.iteration}/{decision.max_iterations}")
    elif decision.why == "capped":
        progress.emit(run_dir, phase, seat,
                      f"reached its cap of {decision.max_iterations} iterations")
    return decision
