"""The research loop's one decision, shared by every CLI's loop.

claude and gemini ask it from their hooks after each turn; council asks it itself between
codex invocations. The counters of a running loop live in a small JSON *loop file* per seat
and phase, which the runner creates and mirrors into state.yaml. Hooks run after every agent
turn, so this module imports only the standard library's cheapest modules: no json, no
yaml, no dataclasses, no pathlib.
"""

from __future__ import annotations

import os

from council.store import agentfs, disk, progress

TYPE_CHECKING = False  # no typing import: this module runs in the hook, after every turn
if TYPE_CHECKING:
    import io
    from collections.abc import Iterable, Iterator

    from council.store.state import SeatStatus

MARKER = "<!-- RESEARCH_COMPLETE -->"

# The most of a report council reads when no larger cap is set. An agent's report is read
# after every turn (by the hook) and once at the end (captured, scrubbed, published); a
# report an agent left could be a sparse terabyte, so every read has a bound. 64 MiB is more
# than three times the 20 MB report council's benchmarks take as the worst case (a pasted
# appendix: some five million tokens, more than a model writes in a phase), and is copied,
# scrubbed and hashed in a fraction of a second; a report over it is a flood, not research,
# and is refused.
REPORT_BOUND = 64 << 20


def report_bound(cap: int | None) -> int:
    """The bound on a report's size for a run whose report cap (max_report_bytes) is `cap`:
    a report over the cap but within the bound is published cut, with its whole text beside
    it (snapshots.py); one over the bound is not published at all."""
    return REPORT_BOUND if cap is None else max(cap, REPORT_BOUND)


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


def _marks(lines: Iterable[str]) -> Iterator[bool]:
    """For each line, whether it is the completion mark: the marker alone on a line
    (surrounding blanks allowed), outside fenced code. A report that quotes the marker
    (explaining the protocol, pasting a page that holds it) does not end its loop."""
    fence = ""  # the fence that opened the code block we are in, if any
    for raw in lines:
        line = raw.strip()
        if fence:
            if line.startswith(fence) and not line[len(fence):].strip(fence[0]):
                fence = ""
        elif line[:3] in ("```", "~~~"):
            char = line[0]
            fence = char * (len(line) - len(line.lstrip(char)))
        yield not fence and line == MARKER


def _complete(lines: Iterable[str]) -> bool:
    """Whether the report says it is complete (`_marks`), read no further than the mark."""
    return any(_marks(lines))


def without_mark(text: str) -> str:
    """`text` without the lines that mark it complete (`_marks`): the marker is the loop's
    signal to council, read from the agent's own copy before publication, and means nothing
    to a reader of the published report. A marker quoted in code stays, as written."""
    lines = text.splitlines(keepends=True)
    return "".join(line for line, mark in zip(lines, _marks(lines), strict=True) if not mark)


def report_facts(path: str | os.PathLike[str], bound: int = REPORT_BOUND) -> tuple[bool, bool]:
    """(the report holds any text, it is complete). Runs after every agent turn, so the usual
    report, without the marker, is only scanned for it in 1 MB chunks (C speed, a chunk's
    memory); only a report that holds the marker is read line by line for fences.

    The report is what an agent left: it is opened through agentfs (no link followed, a
    FIFO never waited on) and read up to `bound`. Anything but a plain file, or one larger
    than the bound, is no text and not complete: the loop goes on, and the end of the phase
    refuses to publish it."""
    try:
        fd = agentfs.open_regular(path)
    except OSError:  # missing, or a link, FIFO, device, hard link: nothing council reads
        return False, False
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > bound:
            return False, False
        marker = MARKER.encode()
        text = found = False
        tail = b""
        left = bound
        while left > 0 and (chunk := handle.read(min(1 << 20, left))):
            left -= len(chunk)
            text = text or not chunk.isspace()
            if marker in tail + chunk[:len(marker)] or marker in chunk:
                found = True
                break
            tail = chunk[-len(marker):]
        if not found:
            return text, False
        handle.seek(0)
        return True, _complete(_lines(handle, bound))


def _lines(handle: io.BufferedReader, bound: int) -> Iterable[str]:
    """The handle's lines, decoded, up to `bound` bytes in all (the file may still grow)."""
    left = bound
    while left > 0 and (raw := handle.readline(left)):
        left -= len(raw)
        yield raw.decode("utf-8", errors="replace")


def decide(complete: bool, iteration: int, max_iterations: int) -> Decision:
    """After turn `iteration` (the report `complete` or not): go on, or let the agent stop?"""
    if complete:
        return Decision(False, iteration, max_iterations, "complete")
    if iteration >= max_iterations:
        return Decision(False, iteration, max_iterations, "capped")
    return Decision(True, iteration + 1, max_iterations, "continue")


def final_status(has_text: bool, complete: bool, iteration: int,
                 max_iterations: int) -> SeatStatus:
    """An agent's status once its CLI has exited cleanly (`report_facts` of its report)."""
    from council.store.state import SeatStatus  # the runner's (loaded); never the hook's

    if not has_text:
        return SeatStatus.FAILED
    if complete:
        return SeatStatus.COMPLETE
    return SeatStatus.CAPPED if iteration >= max_iterations else SeatStatus.STOPPED


def continuation_prompt(instructions: str, decision: Decision) -> str:
    return f"Iteration {decision.iteration} of {decision.max_iterations}.\n\n{instructions}"


def read_report(path: str | os.PathLike[str], bound: int | None = None) -> str | None:
    """The text of a report (council's published copy, as a rule), or None when there is
    none. Read through agentfs: a link, FIFO or device standing at the path is no report,
    never followed or waited on; `bound` caps what is read (None: the whole file)."""
    try:
        data = b"".join(agentfs.chunks(path, bound))
    except FileNotFoundError:
        return None
    except agentfs.UnsafeFile:
        return None
    return data.decode("utf-8", errors="replace")


def write_loop(path: str | os.PathLike[str], iteration: int, max_iterations: int,
               active: bool) -> None:
    """Create or replace a loop file atomically: `<iteration> <max_iterations> <active 0|1>`.

    Plain text rather than JSON: the hook parses it after every turn, and importing json
    (and with it re and enum) would be most of the hook's start-up time. Not fsynced: it is
    rewritten every turn, and a resume takes the larger of it and state.yaml's count."""
    disk.atomic_write(path, f"{iteration} {max_iterations} {int(active)}\n".encode(),
                       redacted=True, durable=False, mode=0o644)


def read_loop(path: str | os.PathLike[str]) -> tuple[int, int, bool]:
    """(iteration, max_iterations, active) from a loop file."""
    with open(path, encoding="utf-8") as handle:
        fields = handle.read().split()
    if len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise ValueError(f"{os.fspath(path)} is not a loop file")
    return int(fields[0]), int(fields[1]), fields[2] == "1"


def locked(path: str | os.PathLike[str]) -> disk.Locked:
    """An exclusive lock beside the loop file: the hook and the supervisor take turns."""
    return disk.locked(f"{os.fspath(path)}.lock")


def deactivate(path: str | os.PathLike[str]) -> int:
    """End a loop (the agent finished or the run stops); returns its last iteration."""
    with locked(path):
        iteration, cap, _ = read_loop(path)
        write_loop(path, iteration, cap, False)
        return iteration


def end_turn(loop_path: str | os.PathLike[str], report_path: str | os.PathLike[str],
             run_dir: str | os.PathLike[str], phase: str, seat: str,
             bound: int = REPORT_BOUND) -> Decision:
    """Record the end of one turn in the loop file and progress.log; say what comes next.
    The report is read as `report_facts` reads it: a link or FIFO there is not complete.

    The line is written under the loop file's lock, with the decision: a `deactivate` (the
    budget reached, a cancel) waits for it, so progress.log never shows a turn going on
    after the line that stopped every loop (seat/budget.py writes that line once each loop
    is deactivated). Written after the lock, a hook slowed down between the two could log
    "iteration 2/6" below "budget reached" (seen under load)."""
    _, complete = report_facts(report_path, bound)
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
