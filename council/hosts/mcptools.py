"""What each of `council mcp`'s tools and resources does, in council's own terms: the
arguments each takes (`council run`'s options are options.py's, the tools' own are declared
here the same way: each kind gives the JSON Schema the clients see and the check), what it
answers (a text for the model, and the same facts as data: one dataclass per tool gives
both the data and its JSON Schema), and the one-line error of a request that cannot be
served. Nothing here knows the MCP SDK: mcpserver.py maps these onto it.

A request is checked by run/prepare.py, as `council run`'s is: the topic (size, encoding,
empty), the options (`load_options`: a project's ./council.yaml only once trusted, trust.py),
the CLIs (`preflight.prepare`), the research folder (`ensure_base`). A bad value is refused with
the line `council run` prints for it, in the declaration's words (options.Option.take). A
started run is the same supervised run as `council run`'s, detached from the server
(detach.py), and recorded once per request (mcprequests.py). A run is started only while the
machine runs fewer than its max_runs (run/supervisor.py), and has a budget by default
(MCP_MAX_COST).

The data must stand on its own: given both, Claude Code (2.1.197, seen offline) shows its
model the structured content as JSON and not the text. So the data carries what the text
says (the plan, the report's markdown, what to do next).
"""

from __future__ import annotations

import calendar
import io
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from council import graph
from council.errors import CouncilError, UsageError
from council.evidence import ledger
from council.hosts import mcprequests
from council.options import Flag, Kind, Number, Option, Text, for_mcp
from council.run import detach, prepare
from council.runoptions import RunOptions
from council.store import agentfs
from council.store.progress import PROGRESS_FILE
from council.store.provenance import ForeignRunError
from council.store.runlock import live_supervisor
from council.store.state import ENDED, RunEnd, RunState, load_state, readable
from council.store.workspace import Workspace, find_run, list_runs
from council.topic import check_topic
from council.trust import UntrustedConfig
from council.views import status

PROGRESS_LINES = 12  # progress.log lines research_status shows
MAX_WAIT = 55  # seconds research_status may wait: under the 60 s many clients allow a call
MAX_REPORT_BYTES = 4 << 20  # a final report is read up to this; past it, cut with a note
MAX_RESOURCE_BYTES = 32 << 20  # a resource is one JSON-RPC message
TOPIC_SHOWN = 500  # characters of the topic in a status (the topic may be a megabyte)
# start_research answers within this, its client waiting (two seconds at most in all;
# preflight alone may take 1.5 s, waiting for a slow CLI's --version): what the checks leave
# of it is spent seeing the supervisor take the run, so one that cannot start is an error
# at once rather than a run that stays `starting`.
ANSWER_S = 1.5
REFUSAL_S = 0.4  # and past it, a supervisor seen refusing the run for want of a slot
STARTING_S = 30  # a run no supervisor holds yet, this young, is starting, not interrupted
# An MCP run's budget when neither the client nor a config file gives one. The default
# council's plan estimates ~$4 at list prices as a floor (two requests a turn; each search or
# page read adds one): $10 lets such a run end as planned, while a client's model that starts
# runs unasked spends at most $10 a run, and max_runs runs at once.
MCP_MAX_COST = 10.0
RESOURCE_FILES = {"final-report.md": ("text/markdown", "final report (markdown)"),
                  "report.html": ("text/html", "report page, with its citations, claims "
                                  "and timeline"),
                  "sources.json": ("application/json", "sources: every cited URL and who "
                                   "cited it")}
URI = re.compile(r"council://runs/(?P<run>[^/]+)/(?P<name>[^/]+)")


@dataclass(frozen=True)
class Call:
    """Who asks: the research folder, this server process and the request's JSON-RPC id."""

    base: Path
    instance: str
    request_id: object = None
    note: Callable[[float, str], None] | None = None  # progress: percent, what is done

    def progress(self, percent: float, message: str) -> None:
        if self.note is not None:
            self.note(percent, message)


@dataclass(frozen=True)
class Answer:
    """A tool's result: text for the model, the same facts as data."""

    text: str
    data: dict[str, Any]

    @classmethod
    def of(cls, text: str, facts: Any) -> Answer:
        """An answer whose data is `facts`, an instance of its tool's answer type."""
        return cls(text, asdict(facts))


# ---------------------------------------------------------------- what the tools answer
# Each tool's structured answer is typed once, here: its JSON Schema (the tool's
# outputSchema) and its data are made from the same dataclass.


@dataclass(frozen=True)
class Paths:
    run_dir: str
    progress_log: str
    final_report: str
    report_html: str
    sources_json: str


@dataclass(frozen=True)
class Uris:
    final_report: str
    report_html: str
    sources_json: str


@dataclass(frozen=True)
class Started:
    run_id: str
    reused: bool
    phase: str
    supervisor_pid: int | None
    profile: str
    agents: list[str]
    synthesizer: str
    plan: list[str]
    notes: list[str]
    paths: Paths
    resources: Uris
    next: str


@dataclass(frozen=True)
class Spent:
    tokens: int
    cost_usd: float | None
    estimated: bool


@dataclass(frozen=True)
class Status:
    run_id: str
    topic: str
    phase: str
    percent: int
    ended: bool
    plan: str
    error: str | None
    created_at: str
    ended_at: str | None
    supervisor_pid: int | None
    spent: Spent
    budget_exhausted: str | None
    agents: list[status.AgentFacts]  # each agent's state as `council status --json` has it
    progress: list[str]
    paths: Paths
    next: str


@dataclass(frozen=True)
class Report:
    run_id: str
    done: bool
    phase: str
    percent: int
    error: str | None
    markdown: str | None
    paths: Paths
    resources: Uris
    next: str


@dataclass(frozen=True)
class Cancelled:
    run_id: str
    message: str
    phase: str


@dataclass(frozen=True)
class Listed:
    run_id: str
    phase: str
    created_at: str
    ended_at: str | None
    cost_usd: float | None
    cost_estimated: bool
    topic: str


@dataclass(frozen=True)
class Runs:
    runs: list[Listed]
    latest: str | None


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def json_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of an answer's type: a dataclass is an object that has every field,
    `X | None` may be null, `list[X]` is an array of X."""
    if is_dataclass(kind):
        hints = get_type_hints(kind)
        properties = {f.name: json_schema(hints[f.name]) for f in fields(kind)}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if get_origin(kind) is list:
        return {"type": "array", "items": json_schema(get_args(kind)[0])}
    inner = [arg for arg in get_args(kind) if arg is not type(None)]
    if len(inner) == 1:  # X | None
        return {"type": [json_schema(inner[0])["type"], "null"]}
    return {"type": _JSON_TYPES[kind]}


def error_line(exc: BaseException) -> str:
    """The line `council` prints for this error; for an untrusted config or a run folder
    council did not make, the line for a model (trust.py, provenance.py): it asks the model
    to have the user decide in a terminal, names no command, and names the file by its full
    path."""
    if isinstance(exc, UntrustedConfig):
        return f"council: error: {exc.for_model()}"
    if isinstance(exc, ForeignRunError):
        return f"council: error: {exc.for_model()}"
    return f"council: error: {exc}"


# ---------------------------------------------------------------- arguments


@dataclass(frozen=True)
class Param:
    """One argument of a tool: an option, whose kind (council/options.py) gives its JSON
    Schema and its check. A `council run` option is named in errors by its flag, as
    `council run` names it; a tool's own argument by its name."""

    option: Option
    required: bool = False
    run: bool = False  # one of `council run`'s options
    note: str = ""  # what the description adds for an MCP client

    @property
    def name(self) -> str:
        return self.option.name

    @property
    def flag(self) -> str | None:
        return self.option.flag if self.run else None

    @property
    def schema(self) -> dict[str, Any]:
        schema = self.option.schema()
        if self.note:
            schema["description"] += " " + self.note
        return schema


def _own(name: str, kind: Kind, help: str, required: bool = False) -> Param:
    """A tool's own argument, declared as a run option is (no default, no surface)."""
    return Param(Option(name, kind, None, help, field=False, optional=True), required)


RUN_ID = _own("run_id", Text(), "A run id (YYYYMMDD-HHMMSS-xxxxxx), as start_research "
              "and list_research give it.", required=True)
# An MCP run's budget is its own (MCP_MAX_COST): the description says it.
NOTES = {"max_cost": f"An MCP run's default: {MCP_MAX_COST:g}, or the config file's."}


def start_params() -> tuple[Param, ...]:
    """start_research's arguments: the topic, `council run`'s options an MCP client may give
    (council/options.py's MCP_CLIENT), and the request's own key."""
    return (
        _own("topic", Text(), "The research question, in words (up to 1,000,000 "
             "bytes).", required=True),
        *(Param(option, run=True, note=NOTES.get(option.name, ""))
          for option in for_mcp()),
        _own("request_key", Text(longest=200), "Your own key for this request (an "
             "idempotency key): asking again with the same key and arguments, even after a "
             "restart, returns the same run instead of starting another."))


START_PARAMS = start_params()
STATUS_PARAMS = (
    _own("run_id", Text(), "The run (default: the newest run)."),
    _own("wait", Number(f"a whole number of seconds from 0 to {MAX_WAIT}", 0,
                                above=False, whole=True, maximum=MAX_WAIT),
         f"Seconds to wait for the run to end before answering (0 to {MAX_WAIT}; default "
         "0). Progress notifications are sent meanwhile to a client that asked for them."),
)


def parse(params: tuple[Param, ...], tool: str, arguments: Mapping[str, Any] | None
          ) -> dict[str, Any]:
    """The arguments, checked against `params`: each known one with its value (None when
    not given), or a UsageError in `council run`'s words."""
    given = dict(arguments or {})
    known = {p.name: p for p in params}
    unknown = sorted(set(given) - set(known))
    if unknown:
        takes = ", ".join(known) or "no arguments"
        raise UsageError(f"unknown option {unknown[0]!r} for {tool}: it takes {takes}")
    out: dict[str, Any] = {}
    for param in params:
        value = given.get(param.name)
        if value is None:
            if param.required:
                raise UsageError(f"{tool} needs {param.name!r}")
            out[param.name] = None
            continue
        out[param.name] = check_value(param, value)
    return out


def check_value(param: Param, value: Any) -> Any:
    """One value, checked by its option's kind as the command line's is (same bounds, same
    words; options.Option.take)."""
    return param.option.take(value, param.flag or param.name)


def input_schema(params: tuple[Param, ...]) -> dict[str, Any]:
    """The tool's inputSchema."""
    return {"type": "object", "properties": {p.name: p.schema for p in params},
            "required": [p.name for p in params if p.required], "additionalProperties": False}


# ---------------------------------------------------------------- start_research


def start(args: dict[str, Any], call: Call) -> Answer:
    """start_research: check the request as `council run` does, start the run detached,
    answer with its id, plan and paths. The same request asked again gets the same run."""
    began = time.monotonic()
    topic = check_topic(args["topic"], "start_research")
    names = tuple(args["agents"] or ())
    if args["agents"] is not None and not names:
        raise UsageError("--agents needs at least one agent name")
    asked = {k: v for k, v in args.items() if v is not None}
    digest = mcprequests.fingerprint(asked)
    key = mcprequests.key_for(args["request_key"], call.instance, call.request_id)
    base = call.base
    known = mcprequests.lookup(base, key, digest)
    if known is not None:
        return _again(find_run(known, base, act="resume"), base)
    call.progress(10, "checking the request: options, config file, CLIs")
    given = {option.name: args[option.name] for option in for_mcp()}
    from council.run import supervisor

    prepared = prepare.prepare(prepare.Request(
        topic, "start_research", {**given, "test": bool(args["test"]), "agents": names or None},
        base, limits=with_budget))
    supervisor.check_room()  # at the machine's max_runs: refused, and no run folder made

    def create() -> str:
        return prepare.start(prepared, base).id

    run_id, new = mcprequests.claim(base, key, digest, create)
    ws = find_run(run_id, base, act="resume")
    if not new:  # a copy of this request, at the same moment, started it
        return _again(ws, base)
    call.progress(50, f"run {ws.id} created; starting its supervisor")
    # What the checks left of the answer's time goes to seeing the supervisor take the run.
    left = ANSWER_S - (time.monotonic() - began)
    launched = detach.launch(ws, base, wait=min(detach.READY_WAIT, max(0.0, left)))
    refused = _refusal(ws, began + ANSWER_S + REFUSAL_S)
    if refused is not None:  # another run took the last slot after check_room looked
        raise supervisor.TooManyRuns(refused)
    return _started(ws, prepared.options, prepared.notes, launched, reused=False)


def _refusal(ws: Workspace, deadline: float) -> str | None:
    """The line the run's supervisor refused it with, if another run took the last slot
    after check_room looked. A supervisor takes its slot before the run's lock, so one that
    holds the run without a slot is ending it as failed: that is waited for, until
    `deadline`. None for a run that has its slot or no supervisor yet (its answer says
    `starting`; research_status tells the rest)."""
    from council.run.supervisor import holds_slot

    while True:
        live = live_supervisor(ws.root) is not None
        slotted = live and holds_slot(ws)
        line = refused_line(readable(ws.root))
        if line is not None:
            return line
        if not live or slotted or time.monotonic() >= deadline:
            return None
        time.sleep(0.02)  # the supervisor is a process of its own: nothing to wait on


def with_budget(options: RunOptions) -> RunOptions:
    """An MCP run's options: a budget of MCP_MAX_COST unless the client's max_cost or the
    config file's set one. The client's model decides to start a run, not the user: what it
    may spend unasked is bounded, and the plan in the answer says so."""
    if options.max_cost is not None:
        return options
    return replace(options, max_cost=MCP_MAX_COST)


def refused_line(state: RunState) -> str | None:
    """Why a run ended before anything was done for it (its supervisor found the machine's
    runs at their limit), or None."""
    if state.phase != RunEnd.FAILED or state.steps or any(r.phases for r in state.agents.values()):
        return None
    return state.error


def _again(ws: Workspace, base: Path) -> Answer:
    """The run a request already started. One that never got going (its supervisor could
    not start, or the server ended between recording and starting it) is started now, if
    the machine has room for it."""
    from council.run.supervisor import begun, check_room

    state = readable(ws.root)
    launched = None
    if not begun(state) and live_supervisor(ws.root) is None:
        check_room()
        launched = detach.launch(ws, base)
    return _started(ws, state.options, [], launched, reused=True)


def _started(ws: Workspace, options: RunOptions, notes: list[str],
             launched: detach.Launched | None, reused: bool) -> Answer:
    state = readable(ws.root)
    holder = live_supervisor(ws.root)
    pid = holder.pid if holder else (launched.pid if launched else None)
    phase = shown_phase(state, ws)
    seats = [s.name for s in options.seats]
    plan = prepare.plan(options)
    head = (f"this request already started council run {ws.id}; nothing new was started"
            if reused else f"council run {ws.id}: {graph.counted(len(seats), 'agent')} "
            f"({', '.join(seats)}), "
            f"profile {options.profile}")
    lines = [head, *(f"council: {n}" for n in notes)]
    if not reused:
        lines += plan
    lines += [f"phase: {phase}"
              + (f"; supervised by pid {pid} in a session of its own, so it goes on when "
                 "this server or its client ends" if pid and phase not in ENDED else ""),
              f"follow it: research_status with run_id {ws.id} (wait up to {MAX_WAIT} s "
              f"for its end), or tail -f {ws.root / PROGRESS_FILE}",
              f"when it is done: get_report with run_id {ws.id}"]
    return Answer.of("\n".join(lines), Started(
        ws.id, reused, phase, pid, options.profile, seats, options.synthesizer, plan,
        list(notes), paths(ws), uris(ws.id), next_step(ws.id, phase)))


# ---------------------------------------------------------------- research_status


def run_status(args: dict[str, Any], call: Call) -> Answer:
    """research_status: the run's phase, each agent's state, spending, progress lines."""
    ws = find_run(args["run_id"], call.base)
    state = readable(ws.root)
    phase = shown_phase(state, ws)
    percent = progress_percent(state, _planned(state))
    shown = status.overview(state, ws, phase="starting (its supervisor is starting up)"
                            if phase == "starting" else None)
    spent = ledger.spent(state)
    holder = live_supervisor(ws.root)  # before the log: once it has let go, every line is in
    lines = tail(ws.root / PROGRESS_FILE, PROGRESS_LINES)
    text = f"run {ws.id}: {phase} ({percent}%)\n\n" + _plain(status.render(shown))
    if lines:
        text += "\n\nlast lines of progress.log:\n" + "\n".join(lines)
    text += f"\n\nnext: {next_step(ws.id, phase)}"
    return Answer.of(text, Status(
        ws.id, _cut(state.topic, TOPIC_SHOWN), phase, percent, ended(phase, holder is not None),
        status.plan_line(state), state.error, state.created_at, state.ended_at,
        holder.pid if holder else None, Spent(spent.tokens, spent.cost_usd, spent.estimated),
        state.budget_exhausted,
        [row.facts() for row in shown.agents],
        lines, paths(ws), next_step(ws.id, phase)))


def ended(phase: str, held: bool) -> bool:
    """A run has ended once its phase says so and its supervisor has let go of it: it marks
    the phase first and writes the last progress line after, so a client told `ended` on
    the phase alone could read a log without its last line."""
    return phase in ENDED and not held


def next_step(run_id: str, phase: str) -> str:
    """What the client can do next, in one sentence (some clients show the model only the
    structured data)."""
    if phase == RunEnd.DONE:
        return f"get_report with run_id {run_id} gives the final report"
    what = {RunEnd.FAILED: "failed", RunEnd.CANCELLED: "was cancelled",
            status.INTERRUPTED: "was interrupted (no supervisor holds it)"}.get(phase)
    if what:
        return (f"the run {what}; `council resume {run_id}` in a terminal continues it; "
                "research_status says why")
    return (f"research_status with run_id {run_id} and wait {MAX_WAIT} answers when it ends "
            "(call it again until ended is true), then get_report")


def shown_phase(state: RunState, ws: Workspace, now: float | None = None) -> str:
    """`council status`'s phase, but `starting` for a young run whose detached supervisor
    has not taken it yet (rather than `interrupted`)."""
    phase = status.shown_phase(state, ws)
    if phase == status.INTERRUPTED and starting(state, now):
        return "starting"
    return phase


def starting(state: RunState, now: float | None = None) -> bool:
    """A run that nothing has worked on yet, made less than STARTING_S ago."""
    from council.run.supervisor import begun

    if begun(state):
        return False
    try:
        made = calendar.timegm(time.strptime(state.created_at, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return False
    return (time.time() if now is None else now) - made < STARTING_S


def _planned(state: RunState) -> list[str]:
    try:
        return graph.planned(state.options)
    except (CouncilError, TypeError, ValueError):  # options from another council version
        return []


def progress_percent(state: RunState, planned: list[str]) -> int:
    """How far the run is, 0-100: its phases that ended (done or skipped) count whole,
    those running count for their agents' share of their iterations (a finished agent's
    whole); 100 only once done."""
    if state.phase == RunEnd.DONE:
        return 100
    steps = state.steps or {}
    names = list(dict.fromkeys([*planned, *steps]))
    if not names:
        return 0
    worked = 0.0
    for name in names:
        if name in steps:
            worked += 1
            continue
        shares = [_share(rec.phases[name].usable, rec.phases[name].iteration,
                         rec.phases[name].max_iterations)
                  for rec in state.agents.values() if name in rec.phases]
        if shares:
            worked += sum(shares) / len(shares)
    return min(99, int(100 * worked / len(names)))


def _share(usable: bool, iteration: int, cap: int) -> float:
    if usable:
        return 1.0
    return min(iteration / cap, 0.9) if cap else 0.0


def tail(path: Path, count: int, limit: int = 64 << 10) -> list[str]:
    """The last `count` lines of a log (read from its last `limit` bytes, no link
    followed)."""
    try:
        data, cut = agentfs.tail(path, limit)
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    if cut:
        lines = lines[1:]  # the first is cut
    return [line for line in lines if line.strip()][-count:]


def _plain(renderable: Any) -> str:
    """rich renderables (status.py's tables) as plain text, as `council status` prints
    them piped."""
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=1000, force_terminal=False, no_color=True, color_system=None,
            highlight=False, markup=False, emoji=False).print(renderable)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


# ---------------------------------------------------------------- get_report, cancel, list


def get_report(args: dict[str, Any], call: Call) -> Answer:
    """get_report: the final report's markdown and where the page and sources are; a run
    that is not done says so, with its phase."""
    ws = find_run(args["run_id"], call.base)
    state = readable(ws.root)
    phase = shown_phase(state, ws)
    where = paths(ws)
    report = Report(ws.id, False, phase, progress_percent(state, _planned(state)),
                    state.error, None, where, uris(ws.id), next_step(ws.id, phase))
    if state.phase != RunEnd.DONE or not ws.final_report.is_file():
        why = f": {state.error}" if state.error else ""
        what = {str(RunEnd.FAILED): "failed",
                str(RunEnd.CANCELLED): "was cancelled"}.get(phase)
        text = (f"run {ws.id} {what}{why}; it has no final report. Its agents' reports are "
                f"in {ws.root}" if what else
                f"run {ws.id} is not done: it is {phase} ({report.percent}%). Ask again "
                f"once research_status says done (it can wait up to {MAX_WAIT} s).")
        return Answer.of(text, report)
    markdown = read_text(ws.final_report, MAX_REPORT_BYTES)
    text = (markdown.rstrip("\n") + f"\n\n---\nfinal report: {where.final_report}\n"
            f"report page: {where.report_html}\nsources: {where.sources_json}")
    return Answer.of(text, replace(report, done=True, markdown=markdown))


def cancel(args: dict[str, Any], call: Call) -> Answer:
    """cancel_research: stop a running council; its files are kept."""
    from council.run.cancel import cancel_run

    ws = find_run(args["run_id"], call.base, act="cancel")
    message = cancel_run(ws)
    return Answer.of(message, Cancelled(ws.id, message, shown_phase(readable(ws.root), ws)))


ASK_PARAMS = (
    _own("question", Text(longest=4000), "The follow-up question, in words.", required=True),
    _own("run_id", Text(), "The finished run to ask about (default: the newest run)."),
    _own("agent", Text(longest=40), "The seat of the run that answers (default: the one "
         "that wrote its final report)."),
    _own("research", Flag(), "Let it search the web for one bounded turn (default false: "
         "the run's evidence only); sources it adds are marked new."),
)


@dataclass(frozen=True)
class Answered:
    run_id: str
    answer_file: str
    markdown: str
    agent: str
    cited: list[str]  # the run's sources the answer cites
    outside: list[str]  # URLs it cites that are not the run's (new with research, else flagged)
    claims: list[str]  # "c3 (SUPPORTED)": the run's claims it names


def ask_research(args: dict[str, Any], call: Call) -> Answer:
    """ask_research: `council ask`, answered while the client waits (one seat, two turns
    at most): refused in one line, before anything is sent, as the command refuses it."""
    from council.run import ask

    prepared = ask.prepare(args.get("run_id"), args["question"], args.get("agent"),
                           bool(args.get("research")), call.base)
    done = ask.ask(prepared)
    markdown = read_text(done.path, MAX_REPORT_BYTES)
    found = done.found
    return Answer.of(markdown.rstrip("\n") + f"\n\n---\nanswer file: {done.path}", Answered(
        prepared.ws.id, str(done.path), markdown, done.seat, list(found.cited),
        list(found.outside), [f"{cid} ({verdict})" for cid, verdict in found.claims]))


def list_research(args: dict[str, Any], call: Call) -> Answer:
    """list_research: every run of the research folder, oldest first."""
    listed: list[tuple[RunState, Workspace]] = []
    rows: list[Listed] = []
    unreadable: list[str] = []
    for ws in list_runs(call.base):
        try:
            state = load_state(ws.root)
        except CouncilError as exc:
            unreadable.append(f"{ws.id}  unreadable: {exc}")
            continue
        listed.append((state, ws))
        spent = ledger.spent(state)
        rows.append(Listed(ws.id, shown_phase(state, ws), state.created_at, state.ended_at,
                           spent.cost_usd, spent.estimated, _cut(state.topic, 200)))
    try:
        latest: str | None = find_run(None, call.base).id
    except CouncilError:
        latest = None
    text = _plain(status.runs_table(listed)) if listed else \
        f"no council runs yet in {call.base}"
    text = "\n".join([text, *unreadable] + ([f"latest: {latest}"] if latest else []))
    return Answer.of(text, Runs(rows, latest))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def read_text(path: Path, limit: int) -> str:
    """A file of the run, as text, up to `limit` bytes (then cut, with a note), never
    following a link."""
    data = agentfs.read(path, limit + 1)
    text = data[:limit].decode("utf-8", "replace")
    if len(data) > limit:
        text += f"\n\n[cut at {limit:,} bytes: the whole file is {path}]\n"
    return text


# ---------------------------------------------------------------- paths and resources


def paths(ws: Workspace) -> Paths:
    return Paths(str(ws.root), str(ws.root / PROGRESS_FILE), str(ws.final_report),
                 str(ws.root / "report.html"), str(ws.root / "sources.json"))


def uri(run_id: str, name: str) -> str:
    return f"council://runs/{run_id}/{name}"


def uris(run_id: str) -> Uris:
    return Uris(uri(run_id, "final-report.md"), uri(run_id, "report.html"),
                uri(run_id, "sources.json"))


@dataclass(frozen=True)
class ResourceEntry:
    uri: str
    name: str
    mime_type: str
    description: str
    size: int


def resources(base: Path, newest: int = 100) -> list[ResourceEntry]:
    """Each file of RESOURCE_FILES that the newest runs have (none where the research folder
    is refused: a link)."""
    out = []
    try:
        runs = list_runs(base)[-newest:]
    except CouncilError:
        return []
    for ws in runs:
        for name, (mime, what) in RESOURCE_FILES.items():
            path = ws.root / name
            try:
                size = path.lstat().st_size if path.is_file() and not path.is_symlink() else -1
            except OSError:
                size = -1
            if size >= 0:
                out.append(ResourceEntry(uri(ws.id, name), f"{ws.id}/{name}", mime,
                                         f"Run {ws.id}'s {what}", size))
    return out


def templates() -> list[tuple[str, str, str, str]]:
    """(uri template, name, mime type, description) of each kind of resource."""
    return [(f"council://runs/{{run_id}}/{name}", name, mime,
             f"A run's {what}; list_research gives the run ids")
            for name, (mime, what) in RESOURCE_FILES.items()]


def read_resource(address: str, base: Path) -> tuple[str, str]:
    """(text, mime type) of a resource; a CouncilError for an address that names none."""
    match = URI.fullmatch(address)
    if match is None or match["name"] not in RESOURCE_FILES:
        raise UsageError(f"{address!r} is not a council resource: they are "
                         f"council://runs/RUN_ID/ followed by {', '.join(RESOURCE_FILES)}")
    ws = find_run(match["run"], base)
    path = ws.root / match["name"]
    try:
        data = agentfs.read(path, MAX_RESOURCE_BYTES + 1)
    except FileNotFoundError as exc:
        raise CouncilError(f"run {ws.id} has no {match['name']} yet "
                           f"(research_status says how far it is)") from exc
    except OSError as exc:
        raise CouncilError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_RESOURCE_BYTES:
        raise CouncilError(f"{path} is larger than {MAX_RESOURCE_BYTES:,} bytes; read it "
                           "from the disk")
    return data.decode("utf-8", "replace"), RESOURCE_FILES[match["name"]][0]


# ---------------------------------------------------------------- the tools


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    answer: type  # its data's type
    run: Callable[[dict[str, Any], Call], Answer]
    read_only: bool = True
    idempotent: bool = True

    @property
    def output(self) -> dict[str, Any]:
        """The tool's outputSchema."""
        return json_schema(self.answer)


TOOLS = (
    ToolSpec(
        "start_research", "Start a research council",
        "Start a council run: claude, codex and gemini research the topic in parallel, "
        "read each other's reports, check each other's claims, and one writes the final "
        "report. Answers at once with the run id, its plan and paths; the run goes on "
        "detached (minutes to an hour). Follow it with research_status, then get_report.",
        START_PARAMS,
        Started, start, read_only=False, idempotent=False),
    ToolSpec(
        "research_status", "Research council status",
        "A run's phase, how far it is, each agent's state, tokens and cost, and the last "
        "progress lines (the newest run by default). With wait, answers when the run ends "
        f"or after that many seconds (up to {MAX_WAIT}).",
        STATUS_PARAMS,
        Status, run_status),
    ToolSpec(
        "get_report", "Research council report",
        "The final report of a finished run, as markdown, with the paths of its report "
        "page (report.html) and sources (sources.json). A run that is not done says so, "
        "with its phase.",
        (RUN_ID,),
        Report, get_report),
    ToolSpec(
        "cancel_research", "Cancel a research council",
        "Stop a running council: its agents are stopped and its files kept "
        "(`council resume RUN_ID` in a terminal continues it).",
        (RUN_ID,),
        Cancelled, cancel, read_only=False),
    ToolSpec(
        "list_research", "List research councils",
        "Every council run of this project's research folder: id, phase, start, cost and "
        "topic, and which one is the latest.",
        (),
        Runs, list_research),
    ToolSpec(
        "ask_research", "Ask a finished research council",
        "A follow-up question on a finished run, answered by one of its agents from the "
        "run's own evidence (its reports, claims with verdicts, sources), in a minute or "
        "two: the answer cites the run's sources and names the claims it rests on, or says "
        "the evidence does not answer. Costs one agent's two turns at most.",
        ASK_PARAMS,
        Answered, ask_research, read_only=False, idempotent=False),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
