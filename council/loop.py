"""The research loop's one decision, shared by every CLI's loop.

claude and gemini ask it from their hooks after each turn; council asks it itself between
codex invocations. The counters of a running loop live in a small JSON *loop file* per seat
and phase, which the runner creates and mirrors into state.yaml. Hooks run after every agent
turn, so this module imports only the standard library's cheapest modules: no yaml, no
dataclasses, no pathlib.
"""

from __future__ import annotations

import fcntl
import json
import os
from typing import TYPE_CHECKING

from council import progress

if TYPE_CHECKING:
    from os import PathLike

    StrPath = str | PathLike[str]

MARKER = "<!-- RESEARCH_COMPLETE -->"


class Decision:
    """What comes after a turn: `proceed` to turn `iteration`, or stop (`why`)."""

    __slots__ = ("iteration", "max_iterations", "proceed", "why")

    def __init__(self, proceed: bool, iteration: int, max_iterations: int, why: str) -> None:
        self.proceed = proceed
        self.iteration = iteration
        self.max_iterations = max_iterations
        self.why = why  # "continue" | "complete" | "capped" | "inactive"

    def __repr__(self) -> str:
        return (f"Decision({self.proceed}, {self.iteration}, {self.max_iterations}, "
                f"{self.why!r})")


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


def read_report(path: StrPath) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_loop(path: StrPath, iteration: int, max_iterations: int, active: bool) -> None:
    """Create or replace a loop file atomically."""
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"iteration": iteration, "max_iterations": max_iterations,
                   "active": active}, handle)
    os.replace(tmp, path)


def read_loop(path: StrPath) -> dict[str, int | bool]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError(f"{os.fspath(path)} is not a loop file")
    return data


class _Locked:
    """An exclusive lock beside the loop file (a context manager without contextlib)."""

    def __init__(self, path: StrPath) -> None:
        self.path = f"{os.fspath(path)}.lock"
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def locked(path: StrPath) -> _Locked:
    return _Locked(path)


def deactivate(path: StrPath) -> int:
    """End a loop (the agent finished or the run stops); returns its last iteration."""
    with locked(path):
        data = read_loop(path)
        write_loop(path, int(data["iteration"]), int(data["max_iterations"]), False)
        return int(data["iteration"])


def end_turn(loop_path: StrPath, report_path: StrPath, run_dir: StrPath, phase: str,
             seat: str) -> Decision:
    """Record the end of one turn in the loop file and progress.log; say what comes next."""
    report = read_report(report_path)
    with locked(loop_path):
        data = read_loop(loop_path)
        iteration, cap = int(data["iteration"]), int(data["max_iterations"])
        if not data.get("active"):
            # Finished, failed or cancelled: never keep an agent going.
            return Decision(False, iteration, cap, "inactive")
        decision = decide(report, iteration, cap)
        if decision.proceed:
            write_loop(loop_path, decision.iteration, cap, True)
    if decision.why == "continue":
        message = f"iteration {decision.iteration}/{cap}"
    elif decision.why == "complete":
        message = f"marked its report complete after iteration {iteration}/{cap}"
    else:
        message = f"reached its cap of {cap} iterations"
    progress.emit(run_dir, phase, seat, message)
    return decision
