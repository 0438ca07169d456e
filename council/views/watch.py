"""`council watch`: a live view of a run that redraws when its files change.

On a terminal it is a table (rich) with one row per agent, a bar per phase and one for the
whole run (its share done and time left); otherwise it prints progress.log's lines as they
come, so it can be piped. It ends when the run ends (or its supervisor is gone) and prints
the final report's path.

`council run` on a terminal shows the same table while it supervises the run (`showing`):
one renderer for both, redrawn from the run's files, never from the supervisor's memory."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import watchfiles
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from council import graph
from council.errors import CouncilError
from council.evidence import score
from council.evidence.ledger import format_cost
from council.store import agentfs
from council.store.progress import PROGRESS_FILE
from council.store.state import ENDED, RunEnd, RunState, SeatStatus, load_state
from council.store.terminal import safe
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
            out(safe(line))  # a planted log's escape sequences stay text
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


COLUMNS = ("agent", "phase", "status", "iter", "elapsed", "report", "tokens", "cost", "quiet",
           "last event")
NARROW = 110  # below this many columns, the table drops what a glance can do without
NARROW_DROPS = ("elapsed", "report", "quiet")


def table(state: RunState, ws: Workspace, own: bool = False, width: int | None = None) -> Group:
    """The run's live table. `own`: drawn by the run's own supervisor, which holds the run
    (its phase is the state's, even in the moment before it takes the run's lock). `width`:
    the terminal's; a narrow one (an 80-column window) gets the agent, phase, state,
    iteration, tokens, cost and last event, readable, rather than every column cut short."""
    shown = state.phase if own else status.shown_phase(state, ws)
    grid = Table(title=Text(safe(f"council {state.id} · {shown} · "
                                 f"{' '.join(state.topic.split())[:60]}")), expand=True)
    columns = [c for c in COLUMNS
               if width is None or width >= NARROW or c not in NARROW_DROPS]
    for column in columns:
        if column == "last event":  # the one that gives way on a narrow terminal
            grid.add_column(column, overflow="fold", min_width=12)
        else:
            grid.add_column(column, no_wrap=True, overflow="ellipsis")
    for r in status.rows(state, ws):
        cells = dict(zip(COLUMNS, status._cells(  # untrusted text: never markup, no escapes
            r.agent, r.phase, r.status,
            f"{r.iteration}/{r.max_iterations}" if r.max_iterations else "-",
            "-" if r.elapsed_s is None else status._duration(r.elapsed_s),
            "-" if r.output_bytes is None else status._size(r.output_bytes),
            status._tokens(r.tokens),
            format_cost(r.cost_usd, r.cost_estimated, r.cost_self_hosted),
            "-" if r.quiet_s is None else status._duration(r.quiet_s),
            ((f"{r.why}: " if r.why else "") + (r.last_event or ""))[:80]), strict=True))
        grid.add_row(*(cells[c] for c in columns))
    if state.completeness:
        done = state.completeness
        grid.caption = (f"completeness {score.summary(done)}"
                        + ("" if state.phase == RunEnd.DONE else ", provisional"))
    bars = Table.grid(padding=(0, 1))
    for phase in phases(state):
        records = [rec.phases[phase] for rec in state.agents.values() if phase in rec.phases]
        finished = sum(1 for ap in records
                       if ap.status not in (SeatStatus.PENDING, SeatStatus.RUNNING))
        # Its seats are known once it starts (the seats of a phase after a failure, or the
        # verifiers of another vendor, may be fewer than the council's): until then no count
        # that would change under the reader's eyes (0/3, then 0/2).
        total = len(records)
        bars.add_row(f"{phase:<12}", ProgressBar(total=total or 1, completed=finished, width=30),
                     f"{finished}/{total}" if total else
                     "skipped" if str((state.steps or {}).get(phase, "")).startswith("skipped")
                     else "not started")
    going = status.progress(state) if shown == state.phase else None
    if going is not None:
        bars.add_row(f"{'overall':<12}", ProgressBar(total=100, completed=going.share * 100,
                                                     width=30),
                     f"{going} (rough)")
    return Group(grid, bars)


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
            view.update(table(state, ws, width=view.console.width), refresh=True)
            if ended(state, ws):
                break
    return state


REDRAWS_PER_SECOND = 1  # `showing`: the elapsed and quiet columns move by the second


@contextmanager
def showing(ws: Workspace) -> Iterator[None]:
    """While the body runs (this process supervising the run in `ws`), the run's live table
    in place on the terminal, redrawn every second by rich's refresh thread from the run's
    files. A look that fails (state.yaml unreadable for a moment) keeps the last table. On
    the way out (the run ended, or Ctrl-C stopped it) it draws the last table and gives the
    terminal back: cursor shown, nothing more redrawn."""
    shown: list[RenderableType] = [Text(f"council {ws.id} · starting")]
    console = Console()

    def latest() -> RenderableType:
        with suppress(CouncilError, OSError):
            shown[0] = table(load_state(ws.root), ws, own=True, width=console.width)
        return shown[0]

    with Live(console=console, get_renderable=latest, refresh_per_second=REDRAWS_PER_SECOND,
              transient=False):
        yield


def watch(ws: Workspace, out: Callable[[str], None]) -> RunState:
    return live(ws) if sys.stdout.isatty() else follow_lines(ws, out)
