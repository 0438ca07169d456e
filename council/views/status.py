"""What `council status` and `council list` show: the run's phase and one row per agent, one
row per run. Pure: it builds rows, and rich tables of them, from a state and the run folder;
cli.py prints them."""

from __future__ import annotations

import calendar
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from council import graph
from council.agents.base import json_object
from council.errors import CouncilError
from council.evidence import accounts, asking, estimate, finalreport, ledger, score
from council.evidence.ledger import format_cost, format_usage
from council.runoptions import NO_SEARCH, search_path
from council.store import agentfs
from council.store.progress import PROGRESS_FILE, SUPERVISOR_LOG
from council.store.runlock import live_supervisor
from council.store.state import (
    ENDED,
    MAIN_SESSION,
    RunEnd,
    RunState,
    SeatStatus,
    begun,
    said,
)
from council.store.terminal import safe
from council.store.workspace import Workspace

if TYPE_CHECKING:  # rich is imported by the functions that build tables: hooks never load it
    from rich.console import Group, RenderableType
    from rich.table import Table
    from rich.text import Text


@dataclass(frozen=True)
class AgentFacts:
    """An agent's state in a run, declared once: `council status --json` gives it in each
    AgentRow, and the MCP server's research_status answers with it (its outputSchema is made
    from this type, mcptools.Status)."""

    agent: str
    cli: str
    phase: str
    status: str
    iteration: int
    max_iterations: int
    tokens: int = 0
    cost_usd: float | None = None
    cost_estimated: bool = False
    error: str | None = None
    last_event: str | None = None
    cost_self_hosted: bool = False  # a self-hosted seat: its $0 is a fact (ledger.charge)
    # Why it failed (agents/failure.Kind's value, or council's own: timeout, idle, ...) and,
    # for a plan limit or quota, when it may be tried again (ISO 8601 UTC).
    failure: str | None = None
    retry_at: str | None = None

    @property
    def why(self) -> str | None:
        """`plan limit until 2026-11-30 00:53 UTC`: its failure as the header says it."""
        if self.failure is None:
            return None
        return finalreport.Missing(self.agent, self.failure, self.retry_at
                                   if self.failure in finalreport.TIMED else None
                                   ).describe().split(": ", 1)[1]

    def facts(self) -> AgentFacts:
        """These facts alone, without what a row adds for the terminal."""
        return AgentFacts(**{f.name: getattr(self, f.name) for f in fields(AgentFacts)})


@dataclass(frozen=True)
class AgentRow(AgentFacts):
    """An agent's facts and what `council status`'s table adds: how long, how much it wrote,
    how long it has been quiet, how it searches."""

    elapsed_s: float | None = None
    output_bytes: int | None = None
    quiet_s: float | None = None  # a running agent: seconds since its last output
    # How it searches the web (runoptions.search_path): "no web search" for a seat with
    # neither its vendor's search nor an MCP search server; None for a seat not configured.
    web_search: str | None = None


def epoch(stamp: str | None) -> float | None:
    """A state's UTC time in seconds, or None: none recorded, or not a time council writes
    (a state.yaml that came in a tarball says what it likes)."""
    if not stamp or not isinstance(stamp, str):
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def rows(state: RunState, ws: Workspace, now: float | None = None) -> list[AgentRow]:
    """One row per agent, for the latest phase it took part in; once the run is done, the
    phase of an agent whose last phase went well reads `done` (that phase may be long over: a
    row that says `verification` after the synthesis reads as a seat still at it), while
    one that failed or never ran keeps the phase where it did."""
    now = time.time() if now is None else now
    events = last_events(ws)
    searches = web_search(state)
    out = []
    for name, rec in state.agents.items():
        phase = next((p for p in reversed(graph.NAMES) if p in rec.phases), None)
        if phase is None:
            out.append(AgentRow(name, rec.cli, "-", SeatStatus.PENDING, 0, 0,
                                web_search=searches.get(name)))
            continue
        ap = rec.phases[phase]
        start, end = epoch(ap.started_at), epoch(ap.ended_at)
        elapsed = None if start is None else (end or now) - start
        size = next((info.st_size for path in (ws.working_output(name, phase),
                                                ws.published_output(name, phase))
                     if (info := _plain(path)) is not None), None)
        used = ledger.of_agent(rec)
        quiet = None
        if ap.status == SeatStatus.RUNNING:
            changed = [info.st_mtime for path in (
                ws.log_file(name, phase), ws.stderr_file(name, phase),
                ws.working_output(name, phase)) if (info := _plain(path)) is not None]
            quiet = max(now - max(changed), 0.0) if changed else elapsed
        shown = RunEnd.DONE.value if state.phase == RunEnd.DONE and ap.usable else phase
        out.append(AgentRow(name, rec.cli, shown, said(ap.status, ap.max_iterations),
                            ap.iteration, ap.max_iterations,
                            used.tokens, used.cost_usd, used.estimated, ap.error,
                            events.get(name), cost_self_hosted=used.self_hosted,
                            failure=ap.failure if ap.status == SeatStatus.FAILED or ap.partial
                            else None, retry_at=ap.retry_at,
                            elapsed_s=elapsed, output_bytes=size, quiet_s=quiet,
                            web_search=searches.get(name)))
    return out


def web_search(state: RunState) -> dict[str, str]:
    """Each configured seat's search path (runoptions.search_path), by name."""
    return {seat.name: search_path(seat) for seat in state.options.seats}


def _plain(path: Path) -> os.stat_result | None:
    """The file's own facts when it is a plain file, without following a link: a report in
    an agent's folder may be a link to a file of the user's, whose size is not its own."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


# The phase words for a run mid-phase that no supervisor holds (shown_phase): not states.
INTERRUPTED = "interrupted"
STARTING = "starting"
STARTING_S = 30  # a run whose supervisor was launched this recently is starting
EVENTS_TAIL = 1 << 20  # progress.log's last MB holds every agent's latest line


def last_events(ws: Workspace) -> dict[str, str]:
    """Each agent's latest progress.log line (without time and phase), from the log's last
    EVENTS_TAIL bytes, no link followed: a planted log may be a link to /dev/zero."""
    events: dict[str, str] = {}
    try:
        data, cut = agentfs.tail(ws.root / PROGRESS_FILE, EVENTS_TAIL)
    except OSError:
        return events
    lines = data.decode("utf-8", "replace").splitlines()[1 if cut else 0:]
    for line in lines:
        words = line.split(" ", 3)
        if len(words) == 4 and words[1] in graph.NAMES:
            events[words[2]] = words[3]
    return events


def shown_phase(state: RunState, ws: Workspace, now: float | None = None) -> str:
    """The run's phase word, on every surface (`council status`, `list`, `watch`, the MCP
    tools, the hooks): the phase, or `interrupted` when the run is mid-phase but no
    supervisor holds it (it crashed, was killed, or the machine rebooted: `council resume`
    continues it), or `starting` for a young run whose detached supervisor has not taken it
    yet (an MCP request's, the moment after it answered)."""
    if state.phase == graph.SYNTHESIS.name and state.synthesizer == MAIN_SESSION:
        return state.phase  # the Claude Code session writes it: no supervisor is expected
    if state.phase in graph.NAMES and live_supervisor(ws.root) is None:
        return STARTING if starting(state, ws, now) else INTERRUPTED
    return state.phase


def starting(state: RunState, ws: Workspace, now: float | None = None) -> bool:
    """A run that nothing has worked on yet (store.state.begun) whose detached supervisor
    (run/detach.py: an MCP request's) was launched less than STARTING_S ago: it is on its
    way. A run started in a terminal or a host's hook is supervised by its starter, so
    without a supervisor it is interrupted, however young."""
    if begun(state):
        return False
    launched = _plain(ws.root / "logs" / SUPERVISOR_LOG)
    if launched is None:
        return False
    return (time.time() if now is None else now) - launched.st_mtime < STARTING_S


def percent(state: RunState) -> int:
    """How far the run is, 0 to 100, on every surface: the share of its planned time behind
    it (evidence/estimate.py, weighted by each stage's planned seconds), 100 only once done.
    0 when its options (from another council version) plan nothing this one can weigh."""
    if state.phase == RunEnd.DONE:
        return 100
    try:
        share = estimate.share_done(state)
    except (CouncilError, TypeError, ValueError, KeyError, AttributeError):
        return 0
    return min(99, int(100 * share))


LOG_LIMIT = 64 << 20  # a CLI's log of one phase is kilobytes to a few MB; past this, not read


def _events(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON object lines of a CLI's log, read without following a link; a log over
    LOG_LIMIT raises ValueError (its count would be short). Lazy: a CLI that reports no
    requests never has its log opened."""
    rest = b""
    read = 0
    for chunk in agentfs.chunks(path, LOG_LIMIT + 1):
        read += len(chunk)
        if read > LOG_LIMIT:
            raise ValueError(f"{path} is over {LOG_LIMIT} bytes")
        *lines, rest = (rest + chunk).split(b"\n")
        for line in lines:
            if (event := json_object(line)) is not None:
                yield event
    if (event := json_object(rest)) is not None:
        yield event


def requests(state: RunState, ws: Workspace) -> dict[tuple[str, str], int | None]:
    """The model requests each agent made at each phase, where its CLI reports them in its
    log (agents' `requests`), else None."""
    from council.agents import adapter_for

    out: dict[tuple[str, str], int | None] = {}
    for name, rec in state.agents.items():
        try:
            adapter = adapter_for(rec.cli)
        except KeyError:  # a state.yaml from elsewhere may name any CLI
            adapter = None
        for phase in rec.phases:
            try:
                out[(name, phase)] = adapter.requests(_events(ws.log_file(name, phase))) \
                    if adapter is not None else None
            except (OSError, ValueError):
                out[(name, phase)] = None
    return out


def phase_accounts(state: RunState, ws: Workspace) -> list[accounts.PhaseAccount]:
    """Each phase that ran: its cost and its effect, from the run's files."""
    return accounts.accounts(state, accounts.read(ws, state), requests(state, ws), epoch)


@dataclass(frozen=True)
class Progress:
    """How far a run is: the share of its planned time behind it (0 to 1) and the seconds
    it still needs, roughly (evidence/estimate.py: the plan's figure, then the run's pace)."""

    share: float
    left_s: float
    percent: int  # the share as every surface says it (percent())

    def __str__(self) -> str:
        return f"{self.percent}% done, {estimate.rough(self.left_s)} left"


def progress(state: RunState, now: float | None = None) -> Progress | None:
    """The run's progress while it is under way; None once it has ended, or when its options
    (from another council version) plan nothing this one can weigh."""
    if state.phase in ENDED:
        return None
    try:
        share = estimate.share_done(state)
        planned = estimate.duration(state.options)
    except (CouncilError, TypeError, ValueError, KeyError, AttributeError):
        return None
    start = epoch(state.created_at)
    now = time.time() if now is None else now
    elapsed = 0.0 if start is None else max(now - start, 0.0)
    return Progress(share, estimate.time_left(planned, share, elapsed), percent(state))


def _one_line(text: str, limit: int) -> str:
    """`text` on one line (runs of whitespace, newlines included, become one space), cut to
    `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _cells(*values: str) -> list[Text]:
    """Every cell as rich Text, made terminal-safe: a topic or an error is untrusted text;
    Text prints `[bold]` or `[link=...]` literally instead of reading it as markup, and
    terminal.safe shows an escape sequence (`\\x1b]52;…`) instead of sending it."""
    from rich.text import Text

    return [Text(safe(v)) for v in values]


NUMBERS = ("iter", "elapsed", "report", "tokens", "cost", "duration", "last output")


def _table(columns: Sequence[str], styled: bool, wrap: Sequence[str] = ()) -> Table:
    """A table with a header row and no borders, one line per row in columns two spaces
    apart (to grep or cut when piped); `styled` (a terminal): the header bold, underlined."""
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False,
                  header_style="bold underline" if styled else "")
    for name in columns:
        if name in wrap:  # free text: wrapped between words, a too-long word folded
            table.add_column(name, overflow="fold")
        else:
            table.add_column(name, no_wrap=True,
                             justify="right" if name in NUMBERS else "left")
    return table


def plan_line(state: RunState) -> str:
    """The run's phases in order (`a ∥ b`: at the same time): those its options plan and any
    it already had."""
    had = {p for rec in state.agents.values() for p in rec.phases}
    try:
        planned = set(graph.planned(state.options))
    except (CouncilError, TypeError, ValueError):  # options from another council version
        planned = set()
    stages = graph.groups(planned | had)
    return " → ".join(" ∥ ".join(group) for group in stages) or "-"


AGENT_COLUMNS = ("agent", "cli", "phase", "status", "iter", "elapsed", "report", "tokens",
                 "cost", "last output", "event / error")


def agents_table(agent_rows: Sequence[AgentRow], styled: bool = False) -> Table:
    """`council status`'s table: one row per agent. `last output` is how long ago a running
    agent last wrote anything; the last column is its error, or else its latest event."""
    table = _table(AGENT_COLUMNS, styled, wrap=("event / error",))
    for r in agent_rows:
        note = (f"{r.why}: {r.error}" if r.why else r.error) or r.last_event or ""
        table.add_row(*_cells(
            r.agent, r.cli, r.phase, r.status,
            f"{r.iteration}/{r.max_iterations}" if r.max_iterations else "-",
            "-" if r.elapsed_s is None else _duration(r.elapsed_s),
            "-" if r.output_bytes is None else _size(r.output_bytes),
            _tokens(r.tokens), format_cost(r.cost_usd, r.cost_estimated, r.cost_self_hosted),
            "-" if r.quiet_s is None else f"{_duration(r.quiet_s)} ago",
            _one_line(note, 160)))
    return table


@dataclass(frozen=True)
class Overview:
    """What `council status` shows, as data: the run's facts (name, value) in order, one row
    per agent, and the notes under the table. The MCP server's research_status answers with
    them too, in its own words where it knows more (a run that is starting)."""

    facts: list[tuple[str, str]]
    agents: list[AgentRow]
    notes: list[str]


def overview(state: RunState, ws: Workspace, now: float | None = None,
             phase: str | None = None) -> Overview:
    """The run's facts (id, topic, phase, plan, spending, score), its agents' rows and notes.
    `phase`: the phase word (shown_phase), when the caller has it; an interrupted run's says
    how to resume it, a starting one's that its supervisor is starting up."""
    if phase is None:
        phase = shown_phase(state, ws, now)
    if phase == INTERRUPTED:
        phase = f"interrupted in {state.phase} (no supervisor): council resume {state.id}"
    elif phase == STARTING:
        phase = "starting (its supervisor is starting up)"
    facts = [("run", state.id), ("topic", _one_line(state.topic, 200)), ("phase", phase),
             ("plan", plan_line(state))]
    going = progress(state, now) if phase == state.phase else None  # not interrupted
    if going is not None:
        facts.append(("progress", f"{going} (rough)"))
    if state.error:
        facts.append(("error", _one_line(state.error, 300)))
    spent = ledger.spent(state)
    facts.append(("spent", format_usage(spent)
                  + (" (~ estimated from list prices)" if spent.estimated else "")
                  + (f"; budget reached: {state.budget_exhausted}" if state.budget_exhausted
                     else "")))
    if state.completeness:
        done = state.completeness
        facts.append(("score", f"completeness {score.summary(done)}"
                               + (", provisional" if state.phase != RunEnd.DONE else "")))
    agent_rows = rows(state, ws, now)
    notes = []
    if any(r.status == SeatStatus.QUEUED for r in agent_rows):
        limit = state.options.max_parallel
        notes.append("queued: waiting for a free process slot"
                     + (f" (--max-parallel {limit})" if limit else " (--max-parallel)"))
    blind = [r.agent for r in agent_rows if r.web_search == NO_SEARCH]
    if blind:
        notes.append(f"{NO_SEARCH}: {', '.join(blind)} (neither its vendor's search nor an "
                     "MCP server with `search: true`)")
    lost = finalreport.missing(state) if state.phase == RunEnd.DONE else []
    if lost:
        notes.append(f"finished without {'; '.join(m.describe() for m in lost)}: "
                     f"council resume {state.id} tries again where it can")
    if ws.final_report.is_file():
        notes.append(f"final report: {ws.final_report}")
    notes += [f"follow-up: {ws.root / asking.ASKS / name}" for name in asking.listed(ws.root)]
    return Overview(facts, agent_rows, notes)


def status_view(state: RunState, ws: Workspace, now: float | None = None,
                styled: bool = False) -> Group:
    """`council status`: a few lines about the run (id, topic, phase, plan, spending), then
    the agents' table."""
    return render(overview(state, ws, now), styled)


def render(shown: Overview, styled: bool = False) -> Group:
    """An overview as `council status` prints it: its facts, the agents' table, its notes."""
    from rich.console import Group
    from rich.table import Table

    header = Table.grid(padding=(0, 2))
    header.add_column(no_wrap=True)
    header.add_column(overflow="fold")
    for key, value in shown.facts:
        header.add_row(*_cells(key, value))
    parts: list[RenderableType] = [header, "", agents_table(shown.agents, styled)]
    if shown.notes:
        parts += ["", *_cells(*shown.notes)]
    return Group(*parts)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _tokens(n: int) -> str:
    return "-" if not n else (f"{n / 1000:.1f}k" if n >= 1000 else str(n))


LIST_COLUMNS = ("run", "phase", "started", "duration", "cost", "topic")


def runs_table(runs: Iterable[tuple[RunState, Workspace]], styled: bool = False) -> Table:
    """`council list`: one row per run, with a header row."""
    table = _table(LIST_COLUMNS, styled, wrap=("topic",))
    for state, ws in runs:
        start = epoch(state.created_at)
        end = epoch(state.ended_at) or time.time()
        duration = "-" if start is None else _duration(end - start)
        spent = ledger.spent(state)
        table.add_row(*_cells(state.id, shown_phase(state, ws), state.created_at, duration,
                              format_cost(spent.cost_usd, spent.estimated, spent.self_hosted),
                              _one_line(state.topic, 60)))
    return table


PIPED_WIDTH = 1000  # piped output is not wrapped: one line per row, for grep and cut


def plain(*renderables: RenderableType) -> str:
    """rich renderables (these tables) as plain text, as `council status` prints them piped
    and the MCP tools answer them: no escape codes, not wrapped, no trailing spaces."""
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=PIPED_WIDTH, force_terminal=False, no_color=True,
            color_system=None, highlight=False, markup=False, emoji=False,
            ).print(*renderables)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())
