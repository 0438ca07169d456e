"""What each of `council mcp`'s tools and resources does, in council's own terms: the
arguments each takes (`council run`'s options are options.py's, the tools' own are declared
here the same way: each kind gives the JSON Schema the clients see and the check), what it
answers, and the one-line error of a request that cannot be served. Nothing here knows the
MCP SDK: mcpserver.py maps these onto it.

Each tool asks one of council's questions (council/commands/: start, status, report, cancel,
ask, list) and renders its answer: a text for the model, and the answer as data, whose JSON
Schema is the tool's outputSchema (both made from the answer's type, as `council status
--json` and `council list --json` print the same data). A request is checked by
run/prepare.py, as `council run`'s is (commands/start.py).

The data must stand on its own: given both, Claude Code (2.1.197, seen offline) shows its
model the structured content as JSON and not the text. So the data carries what the text
says (the plan, the report's markdown, what to do next).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from council import commands, graph
from council.commands import cancel as cancelling
from council.commands import report as reporting
from council.commands import runs as listing
from council.commands.ask import Answered, answer, prepare
from council.commands.report import Report, read_resource, resources, templates
from council.commands.start import MCP_MAX_COST, Call, Started, with_budget
from council.commands.start import start as start_run
from council.commands.status import MAX_WAIT, Status, next_step, status
from council.errors import UsageError
from council.options import Flag, Kind, Number, Option, Text, for_mcp
from council.store.provenance import ForeignRunError
from council.store.state import ENDED
from council.trust import UntrustedConfig
from council.views.status import plain, render, runs_table

__all__ = ["MAX_WAIT", "MCP_MAX_COST", "Call", "read_resource", "resources", "templates",
           "with_budget"]
TOPIC_SHOWN = 500  # characters of the topic in a status (the topic may be a megabyte)
TOPIC_LISTED = 200  # and in a list's row


@dataclass(frozen=True)
class Answer:
    """A tool's result: text for the model, the same facts as data."""

    text: str
    data: dict[str, Any]

    @classmethod
    def of(cls, text: str, facts: Any) -> Answer:
        """An answer whose data is `facts`, an instance of its tool's answer type."""
        return cls(text, commands.data(facts))


json_schema = commands.json_schema


def error_line(exc: BaseException) -> str:
    """The line `council` prints for this error; for an untrusted config or a run folder
    council did not make, the line for a model (trust.py, provenance.py): it asks the model
    to have the user decide in a terminal, names no command, and names the file by its full
    path."""
    if isinstance(exc, UntrustedConfig | ForeignRunError):
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
    return Param(Option(name, kind, None, help, optional=True), required)


RUN_ID = _own("run_id", Text(), "A run id (YYYYMMDD-HHMMSS-xxxxxx), as start_research "
              "and list_research give it.", required=True)
# An MCP run's budget is its own (start.MCP_MAX_COST): the description says it.
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


ASK_PARAMS = (
    _own("question", Text(longest=4000), "The follow-up question, in words.", required=True),
    _own("run_id", Text(), "The finished run to ask about (default: the newest run)."),
    _own("agent", Text(longest=40), "The seat of the run that answers (default: the one "
         "that wrote its final report)."),
    _own("research", Flag(), "Let it search the web for one bounded turn (default false: "
         "the run's evidence only); sources it adds are marked new."),
)



# ---------------------------------------------------------------- the tools


def start(args: dict[str, Any], call: Call) -> Answer:
    """start_research: the run started (commands/start.py), its id, plan and paths."""
    began = start_run(args, call)
    pid, phase = began.supervisor_pid, began.phase
    head = (f"this request already started council run {began.run_id}; nothing new was "
            "started" if began.reused else
            f"council run {began.run_id}: {graph.counted(len(began.agents), 'agent')} "
            f"({', '.join(began.agents)}), profile {began.profile}")
    lines = [head, *(f"council: {n}" for n in began.notes)]
    if not began.reused:
        lines += began.plan
    lines += [f"phase: {phase}"
              + (f"; supervised by pid {pid} in a session of its own, so it goes on when "
                 "this server or its client ends" if pid and phase not in ENDED else ""),
              f"follow it: research_status with run_id {began.run_id} (wait up to "
              f"{MAX_WAIT} s for its end), or tail -f {began.paths.progress_log}",
              f"when it is done: get_report with run_id {began.run_id}"]
    return Answer.of("\n".join(lines), began)


@dataclass(frozen=True)
class Followed(Status):
    """research_status's answer: `council status --json`'s, and what to do next."""

    next: str


def run_status(args: dict[str, Any], call: Call) -> Answer:
    """research_status: the run's phase, each agent's state, spending, progress lines."""
    found = status(args["run_id"], call.base)
    head = f"run {found.id}: {found.phase} ({found.percent}%)\n\n"
    text = head + plain(render(found.overview))
    if found.progress:
        text += "\n\nlast lines of progress.log:\n" + "\n".join(found.progress)
    then = next_step(found.id, found.phase, found.missing)
    text += f"\n\nnext: {then}"
    facts = {f.name: getattr(found, f.name) for f in fields(found)}
    return Answer.of(text, Followed(**{**facts, "topic": _cut(found.topic, TOPIC_SHOWN)},
                                    next=then))


def get_report(args: dict[str, Any], call: Call) -> Answer:
    """get_report: the final report's markdown, fenced as untrusted material
    (commands/report.for_model), and where the page and sources are; a run that is not done
    says so, with its phase."""
    found = reporting.report(args["run_id"], call.base)
    if found.markdown is None:
        return Answer.of(reporting.not_done(found), found)
    return Answer.of(reporting.for_model(found), found)


def cancel(args: dict[str, Any], call: Call) -> Answer:
    """cancel_research: stop a running council; its files are kept."""
    done = cancelling.cancel(args["run_id"], call.base)
    return Answer.of(done.message, done)


def ask_research(args: dict[str, Any], call: Call) -> Answer:
    """ask_research: `council ask`, answered while the client waits (one seat, two turns
    at most): refused in one line, before anything is sent, as the command refuses it."""
    answered = answer(prepare(args.get("run_id"), args["question"], args.get("agent"),
                              bool(args.get("research")), call.base))
    return Answer.of(answered.markdown.rstrip("\n") +
                     f"\n\n---\nanswer file: {answered.answer_file}", answered)


def list_research(args: dict[str, Any], call: Call) -> Answer:
    """list_research: every run of the research folder, oldest first."""
    found = listing.runs(call.base)
    text = (plain(runs_table(found.readable)) if found.readable else
            f"no council runs yet in {call.base}")
    text = "\n".join([text, *found.unreadable]
                     + ([f"latest: {found.latest}"] if found.latest else []))
    cut = [replace(run, topic=None if run.topic is None else _cut(run.topic, TOPIC_LISTED))
           for run in found.runs]
    return Answer.of(text, replace(found, runs=cut))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


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
        Followed, run_status),
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
        cancelling.Cancelled, cancel, read_only=False),
    ToolSpec(
        "list_research", "List research councils",
        "Every council run of this project's research folder: id, phase, start, cost and "
        "topic, and which one is the latest.",
        (),
        listing.Runs, list_research),
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
