"""The research loop's one decision, shared by every CLI's loop.

claude and gemini ask it from their hooks after each turn; council asks it itself between
codex invocations. The counters of a running loop live in a small JSON *loop file* per seat
and phase, which the runner creates and mirrors into state.yaml. Hooks run after every agent
turn, so this module imports only the standard library's cheapest modules: no json, no
yaml, no dataclasses, no pathlib.
"""

from __future__ import annotations

import fcntl
import os

from council import progress

TYPE_CHECKING = False  # no typing import: this module runs in the hook, after every turn
if TYPE_CHECKING:
    from collections.abc import Iterable

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


def _complete(lines: Iterable[str]) -> bool:
    """Whether the report says it is complete: the marker alone on a line (surrounding
    blanks allowed), outside fenced code. A report that quotes the marker (explaining the
    protocol, pasting a page that holds it) does not end its loop."""
    fence = ""  # the fence that opened the code block we are in, if any
    for raw in lines:
        line = raw.strip()
        if fence:
            if line.startswith(fence) and not line[len(fence):].strip(fence[0]):
                fence = ""
        elif line[:3] in ("```", "~~~"):
            char = line[0]
            fence = char * (len(line) - len(line.lstrip(char)))
        elif line == MARKER:
            return True
    return False


def report_facts(path: str | os.PathLike[str]) -> tuple[bool, bool]:
    """(the report holds any text, it is complete). Runs after every agent turn, so the usual
    report, without the marker, is only scanned for it in 1 MB chunks (C speed, a chunk's
    memory); only a report that holds the marker is read line by line for fences."""
    marker = MARKER.encode()
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return False, False
    text = found = False
    tail = b""
    with handle:
        while chunk := handle.read(1 << 20):
            text = text or not chunk.isspace()
            if marker in tail + chunk[:len(marker)] or marker in chunk:
                found = True
                break
            tail = chunk[-len(marker):]
    if not found:
        return text, False
    with open(path, encoding="utf-8", errors="replace") as lines:
        return True, _complete(lines)


def decide(complete: bool, iteration: int, max_iterations: int) -> Decision:
    """After turn `iteration` (the report `complete` or not): go on, or let the agent stop?"""
    if complete:
        return Decision(False, iteration, max_iterations, "complete")
    if iteration >= max_iterations:
        return Decision(False, iteration, max_iterations, "capped")
    return Decision(True, iteration + 1, max_iterations, "continue")


def final_status(has_text: bool, complete: bool, iteration: int, max_iterations: int) -> str:
    """An agent's status once its CLI has exited cleanly (`report_facts` of its report)."""
    if not has_text:
        return "failed"
    if complete:
        return "complete"
    return "capped" if iteration >= max_iterations else "stopped"


def continuation_prompt(instructions: str, decision: Decision) -> str:
    return f"Iteration {decision.iteration} of {decision.max_iterations}.\n\n{instructions}"


def read_report(path: str | os.PathLike[str]) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_loop(path: str | os.PathLike[str], iteration: int, max_iterations: int,
               active: bool) -> None:
    """Create or replace a loop file atomically: `<iteration> <max_iterations> <active 0|1>`.

    Plain text rather than JSON: the hook parses it after every turn, and importing json
    (and with it re and enum) would be most of the hook's start-up time."""
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(f"{iteration} {max_iterations} {int(active)}\n")
    os.replace(tmp, path)


def read_loop(path: str | os.PathLike[str]) -> tuple[int, int, bool]:
    """(iteration, max_iterations, active) from a loop file."""
    with open(path, encoding="utf-8") as handle:
        fields = handle.read().split()
    if len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise ValueError(f"{os.fspath(path)} is not a loop file")
    return int(fields[0]), int(fields[1]), fields[2] == "1"


class _Locked:
    """An exclusive lock beside the loop file (a context manager without contextlib)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = f"{os.fspath(path)}.lock"
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def locked(path: str | os.PathLike[str]) -> _Locked:
    return _Locked(path)


def deactivate(path: str | os.PathLike[str]) -> int:
    """End a loop (the agent finished or the run stops); returns its last iteration."""
    with locked(path):
        iteration, cap, _ = read_loop(path)
        write_loop(path, iteration, cap, False)
        return iteration


def end_turn(loop_path: str | os.PathLike[str], report_path: str | os.PathLike[str],
             run_dir: str | os.PathLike[str], phase: str, seat: str) -> Decision:
    """Record the end of one turn in the loop file and progress.log; say what comes next."""
    _, complete = report_facts(report_path)
    with locked(loop_path):
        iteration, cap, active = read_loop(loop_path)
        if not active:
            # Finished, failed or cancelled: never keep an agent going.
            return Decision(False, iteration, cap, "inactive")
        decision = decide(complete, iteration, cap)
        if decision.proceed:
            write_loop(loop_path, decision.iteration, cap, True)
    if decision.why == "continue":
        message = f"iteration {decision.iteration}/{cap}"
    elif decision.why == "complete":
        message = f"marked its report complete after iteration {iteration}/{cap}"
    else:
        message = f"reached its cap of {cap} iterations"
    progress.emit(run_dir, phase, message, agent=seat)
    return decision
