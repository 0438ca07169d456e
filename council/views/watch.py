"""`council watch`: a live view of a run that redraws when its files change.

On a terminal it is a table (rich) with one row per agent and a bar per phase; otherwise it
prints progress.log's lines as they come, so it can be piped. It ends when the run ends (or
its supervisor is gone) and prints the final report's path."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import watchfiles
from rich.console import Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table

from council import graph
from council.evidence import score
from council.store import agentfs
from council.store.progress import PROGRESS_FILE
from council.store.state import ENDED, RunEnd, RunState, SeatStatus, load_state
from council.store.workspace import Workspace
from council.views import status

SHOWN_ENDED = (*ENDED, status.INTERRUPTED)  # a run no supervisor holds waits no more


def changes(ws: Workspace) -> Iterator[None]:
    """Yield once now, then whenever the run's files change (at least every second)."""
    yield
    for _ in watchfiles.watch(ws.root, debounce=100, step=20, rust_timeout=1000,
                              yield_on_timeout=True, recursive=True):
        yield


def ended(state: RunState, ws: Workspace) -> bool:
    return status.shown_phase(state, ws) in SHOWN_ENDED


def follow_lines(ws: Workspace, out: Callable[[str], None]) -> RunState:
    """Plain mode: every progress.log line, as it is written."""
    read = 0  # bytes of progress.log printed so far, up to its last whole line
    state = load_state(ws.root)
    for _ in changes(ws):
        lines, read, skipped = new_lines(ws.root / PROGRESS_FILE, read)
        if skipped:
            out(f"… ({skipped:,} bytes of progress.log left out: more was written at once "
                "than a look reads)")
        for line in lines:
            out(line)
        state = load_state(ws.root)
        if ended(state, ws):
            break
    return state


FOLLOW_CHUNK = 1 << 20  # at most this much of progress.log per look, however much it holds


def new_lines(path: Path, start: int) -> tuple[list[str], int, int]:
    """The whole lines written to the log at `path` since byte `start`: (the lines, where
    the next look starts, how many bytes were left out). At most FOLLOW_CHUNK bytes are read
    (the newest), following no link and never waiting on a FIFO: a planted log may be a link
    to /dev/zero. A line still being written is returned once it is whole."""
    try:
        fd = agentfs.open_regular(path)
    except OSError:
        return [], start, 0
    with os.fdopen(fd, "rb", buffering=0) as handle:
        size = os.fstat(fd).st_size
        start = min(start, size)  # a log made again from empty: follow it from its top
        first = max(start, size - FOLLOW_CHUNK)
        handle.seek(first)
        data = handle.read(size - first)
    skipped = first - start
    if skipped:  # the first line read is cut: it starts the left-out part
        cut = data.find(b"\n") + 1
        skipped, first, data = skipped + cut, first + cut, data[cut:]
    whole = data[:data.rfind(b"\n") + 1]
    return whole.decode("utf-8", "replace").splitlines(), first + len(whole), skipped


def table(state: RunState, ws: Workspace) -> Group:
    grid = Table(title=f"council {state.id} · {status.shown_phase(state, ws)} · "
                       f"{' '.join(state.topic.split())[:60]}", expand=True)
    for column in ("agent", "phase", "status", "iter", "elapsed", "report", "tokens", "cost",
                   "quiet", "last event"):
        grid.add_column(column, overflow="fold" if column == "last event" else "ellipsis")
    rows = status.rows(state, ws)
    for r in rows:
        grid.add_row(r.agent, r.phase, r.status,
                     f"{r.iteration}/{r.max_iterations}" if r.max_iterations else "-",
                     "-" if r.elapsed_s is None else status._duration(r.elapsed_s),
                     "-" if r.output_bytes is None else status._size(r.output_bytes),
                     status._tokens(r.tokens), status._cost(r.cost_usd, r.cost_estimated),
                     "-" if r.quiet_s is None else status._duration(r.quiet_s),
                     (r.last_event or "")[:80])
    if state.completeness:
        done = state.completeness
        grid.caption = (f"completeness {score.summary(done)}"
                        + ("" if state.phase == RunEnd.DONE else ", provisional"))
    bars = Table.grid(padding=(0, 1))
    for phase in phases(state):
        records = [rec.phases[phase] for rec in state.agents.values() if phase in rec.phases]
        finished = sum(1 for ap in records
                       if ap.status not in (SeatStatus.PENDING, SeatStatus.RUNNING))
        total = len(records) or (len(state.agents) if phase in EVERY_SEAT else 1)
        bars.add_row(f"{phase:<12}", ProgressBar(total=total, completed=finished, width=30),
                     f"{finished}/{total}")
    return Group(grid, bars)


EVERY_SEAT = tuple(p.name for p in graph.GRAPH if p.who == graph.EVERY)


def phases(state: RunState) -> list[str]:
    """The phases this run will have (its options say which), and any it already had."""
    planned = graph.planned(state.options)
    return [p for p in graph.NAMES if p in planned
            or any(p in rec.phases for rec in state.agents.values())]


def live(ws: Workspace) -> RunState:
    state = load_state(ws.root)
    with Live(table(state, ws), auto_refresh=False, transient=False) as view:
        for _ in changes(ws):
            state = load_state(ws.root)
            view.update(table(state, ws), refresh=True)
            if ended(state, ws):
                break
    return state


def watch(ws: Workspace, out: Callable[[str], None]) -> RunState:
    return live(ws) if sys.stdout.isatty() else follow_lines(ws, out)
