"""MCP `start_research`: check a request as `council run` does (run/prepare.py), start the
run detached from the server (run/detach.py), record it once per request (mcprequests.py).
The same request asked again gets the same run. A run is started only while the machine runs
fewer than its max_runs (run/supervisor.py), and has a budget by default (MCP_MAX_COST)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from council.commands import mcprequests
from council.commands.report import Uris, uris
from council.commands.status import Paths, next_step, paths
from council.errors import UsageError
from council.options import DEFAULT_MAX_COST, for_mcp
from council.run import detach, prepare, supervisor
from council.runoptions import RunOptions
from council.store.runlock import live_supervisor
from council.store.state import RunEnd, RunState, begun, readable
from council.store.workspace import Workspace, find_run
from council.topic import check_topic
from council.views.status import shown_phase

# start_research answers within this, its client waiting (two seconds at most in all;
# preflight alone may take 1.5 s, waiting for a slow CLI's --version): what the checks leave
# of it is spent seeing the supervisor take the run, so one that cannot start is an error
# at once rather than a run that stays `starting`.
ANSWER_S = 1.5
REFUSAL_S = 0.4  # and past it, a supervisor seen refusing the run for want of a slot
# An MCP run's budget when neither the client nor a config file gives one: every run's
# default spend limit (options.py), which here a config file's `max_cost: null` does not
# lift either: a client's model that starts runs unasked spends at most this a run, and
# max_runs runs at once.
MCP_MAX_COST = DEFAULT_MAX_COST


@dataclass(frozen=True)
class Started:
    run_id: str
    reused: bool  # this request had already started it
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
class Call:
    """Who asks: the research folder, the server process, the request's JSON-RPC id, and
    where its steps are told (percent, what is done)."""

    base: Path
    instance: str
    request_id: object = None
    note: Callable[[float, str], None] | None = None

    def progress(self, percent: float, message: str) -> None:
        if self.note is not None:
            self.note(percent, message)


def start(args: dict[str, Any], asked: Call) -> Started:
    """Start the run `args` asks for (start_research's arguments), or give the one this
    request already started."""
    began = time.monotonic()
    topic = check_topic(args["topic"], "start_research")
    names = tuple(args["agents"] or ())
    if args["agents"] is not None and not names:
        raise UsageError("--agents needs at least one agent name")
    digest = mcprequests.fingerprint({k: v for k, v in args.items() if v is not None})
    key = mcprequests.key_for(args["request_key"], asked.instance, asked.request_id)
    base = asked.base
    known = mcprequests.lookup(base, key, digest)
    if known is not None:
        return again(find_run(known, base, act="resume"), base)
    asked.progress(10, "checking the request: options, config file, CLIs")
    given = {option.name: args[option.name] for option in for_mcp()}
    prepared = prepare.prepare(prepare.Request(
        topic, "start_research", {**given, "test": bool(args["test"]), "agents": names or None},
        base, limits=with_budget))
    supervisor.check_room()  # at the machine's max_runs: refused, and no run folder made
    run_id, new = mcprequests.claim(base, key, digest,
                                    lambda: prepare.start(prepared, base).id)
    ws = find_run(run_id, base, act="resume")
    if not new:  # a copy of this request, at the same moment, started it
        return again(ws, base)
    asked.progress(50, f"run {ws.id} created; starting its supervisor")
    # What the checks left of the answer's time goes to seeing the supervisor take the run.
    left = ANSWER_S - (time.monotonic() - began)
    launched = detach.launch(ws, base, wait=min(detach.READY_WAIT, max(0.0, left)))
    refused = refusal(ws, began + ANSWER_S + REFUSAL_S)
    if refused is not None:  # another run took the last slot after check_room looked
        raise supervisor.TooManyRuns(refused)
    return started(ws, prepared.options, prepared.notes, launched, reused=False)


def refusal(ws: Workspace, deadline: float) -> str | None:
    """The line the run's supervisor refused it with, if another run took the last slot
    after check_room looked. A supervisor takes its slot before the run's lock, so one that
    holds the run without a slot is ending it as failed: that is waited for, until
    `deadline`. None for a run that has its slot or no supervisor yet (its answer says
    `starting`; research_status tells the rest)."""
    while True:
        live = live_supervisor(ws.root) is not None
        slotted = live and supervisor.holds_slot(ws)
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


def again(ws: Workspace, base: Path) -> Started:
    """The run a request already started. One that never got going (its supervisor could
    not start, or the server ended between recording and starting it) is started now, if
    the machine has room for it."""
    state = readable(ws.root)
    launched = None
    if not begun(state) and live_supervisor(ws.root) is None:
        supervisor.check_room()
        launched = detach.launch(ws, base)
    return started(ws, state.options, [], launched, reused=True)


def started(ws: Workspace, options: RunOptions, notes: list[str],
            launched: detach.Launched | None, reused: bool) -> Started:
    holder = live_supervisor(ws.root)
    pid = holder.pid if holder else (launched.pid if launched else None)
    phase = shown_phase(readable(ws.root), ws)
    return Started(ws.id, reused, phase, pid, options.profile, [s.name for s in options.seats],
                   options.synthesizer, prepare.plan(options), list(notes), paths(ws),
                   uris(ws.id), next_step(ws.id, phase))
