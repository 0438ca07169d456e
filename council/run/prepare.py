"""One way to start a run. Every entry point (`council run`, a host's prompt and stop hooks,
the MCP server's start_research) hands its request to `prepare`, which checks it in one
order and returns the run as it would start, or raises the one CouncilError that says why
it cannot (each entry point renders that line its own way: stderr, a refused prompt, a tool
error). Starting it is a second step, `start`, because the entry points do different things
in between: the command line reserves a run slot and may ask `--confirm`; the MCP server
looks for room and claims its request key around the creation.

The order is the command line's: the topic (size, encoding, empty), the options as
declared, the config file and whether it may be obeyed (config.load_options, trust.py), the
entry point's own limits, the CLIs (preflight.prepare), then the research folder
(ensure_base), so that a run that cannot start says so before its plan is shown."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from council import graph
from council.config import Overrides, load_options, plan_lines, synthesizer_lines
from council.errors import RunNotFoundError, StateError, UsageError
from council.evidence.estimate import plan_lines as estimate_lines
from council.readiness import preflight
from council.run import supervisor
from council.runoptions import RunOptions
from council.seat.failover import fallback_seat
from council.store import limits, provenance
from council.store.state import RunEnd, load_state
from council.store.workspace import LATEST, Workspace, ensure_base, find_run
from council.topic import check_topic


@dataclass(frozen=True)
class Request:
    """A request to start a run, as an entry point received it.

    `given` holds the options by name as typed or sent, None where not given (read and
    checked here, as config.Overrides reads them); agents named there must all be ready.
    `base` is the research folder, checked to take a run folder; None where the entry point
    answers for the folder itself (a host's prompt hook records the request in it, and a
    write error there has its own advice). `limits` bounds the options as the entry point
    must (the stop hook's time, an MCP client's budget)."""

    topic: str | bytes | None  # None: the earlier run's (`since`), which must then be given
    source: str  # where the topic came from, named in its errors: "the command line"
    given: Mapping[str, Any] = field(default_factory=dict)
    base: Path | None = None
    limits: Callable[[RunOptions], RunOptions] | None = None


@dataclass(frozen=True)
class Prepared:
    """A run as it would start: its topic, its options (the seats whose CLI is ready), and
    the preflight's notes (skipped agents, version warnings)."""

    topic: str
    options: RunOptions
    notes: list[str]

    @property
    def plan(self) -> list[str]:
        """What the run will do, cost and obey, as shown before it starts."""
        return plan(self.options)

    @property
    def config_file(self) -> str | None:
        """The config file the run obeys, if any."""
        return self.options.config_file

    @property
    def config_trust(self) -> str | None:
        """Why it may be obeyed: named with --config, the user's own, or trusted."""
        return self.options.config_trust


def prepare(request: Request) -> Prepared:
    """The run `request` asks for, or the CouncilError that says why it cannot run."""
    given = dict(request.given)
    text: str | bytes | None = request.topic
    if given.get("since") is not None:  # first: a refused --since spawns nothing
        if given.get("verify") is False:
            raise UsageError("--since with --no-verify: a --since run verifies the earlier "
                             "claims again to say what changed; drop --no-verify")
        earlier = since(str(given["since"]), request.base)
        given["since"] = earlier.id
        if text is None:
            text, request = earlier.topic, replace(request, source=f"run {earlier.id}")
    if text is None:
        raise UsageError("no topic: give it as an argument or with --topic-file FILE")
    topic = check_topic(text, request.source)
    overrides = Overrides(**given)  # each value read and checked as declared
    options = load_options(overrides)
    if request.limits is not None:
        options = request.limits(options)
    options, notes = preflight.prepare(options, explicit="agents" in overrides)
    options, held = limited(options)
    notes += held
    if request.base is not None:
        ensure_base(request.base)
    return Prepared(topic, options, notes)


def limited(options: RunOptions, env: Mapping[str, str] | None = None,
            home: Path | None = None, now: datetime | None = None
            ) -> tuple[RunOptions, list[str]]:
    """The run's options without the seats whose CLI and credential a limit recorded on this
    machine holds (store/limits.py: a plan's usage limit, a daily quota met by an earlier
    run), or with their role moved to their `fallback` CLI when that one is installed, logged
    in and not limited itself; and the plan's line for each. Every seat limited: a
    UsageError naming each limit and its reset, before anything is created."""
    env = dict(os.environ if env is None else env)
    home = Path.home() if home is None else home
    found = limits.active(datetime.now(UTC) if now is None else now)
    if not found:
        return options, []

    def limit_of(cli: str) -> limits.Limit | None:
        key = preflight.credential_key(cli, env, home)
        held = [x for x in found if x.cli == cli and x.credential == key]
        return max(held, key=limits.Limit.until_time) if held else None

    seats, lines, held = [], [], []
    for seat in options.seats:
        limit = None if seat.self_hosted else limit_of(seat.cli)
        if limit is None:
            seats.append(seat)
            continue
        held.append(limit)
        head = limit.describe().split(": ", 1)[0]
        moved = fallback_seat(seat, options.profile)
        login = preflight.login_name(preflight.credentials(moved.cli, env, home)) \
            if moved is not None else None
        if moved is not None and login and limit_of(moved.cli) is None:
            seats.append(moved)
            lines.append(f"{head}: the {seat.name} seat's role moves to its fallback "
                         f"{moved.cli}, billed to {moved.cli}'s login ({login})")
        else:
            lines.append(f"{head}: {seat.name} left out")
    if not seats:
        raise UsageError("every agent is limited: " + "; ".join(
            limit.describe() for limit in held))
    synthesizer = options.synthesizer
    if synthesizer not in {s.name for s in seats}:
        synthesizer = seats[0].name
    return replace(options, seats=tuple(seats), synthesizer=synthesizer), lines


@dataclass(frozen=True)
class Earlier:
    """The run a `--since` run builds on: its id and its question."""

    id: str
    topic: str


def since(run: str, base: Path | None) -> Earlier:
    """The earlier run `--since RUN` names (an id, or latest), which must be one council made
    here (provenance.py: a folder restored from a cache is foreign until adopted) and have
    ended with a final report; else the UsageError or ForeignRunError that says why."""
    try:
        ws = find_run(run, base, act="build on")
        if run == LATEST:  # find_run only reads the latest: building on it acts on it
            provenance.require_own(ws.root, "build on")
        state = load_state(ws.root)
    except (RunNotFoundError, StateError) as exc:
        raise UsageError(f"--since {run}: {exc}") from None
    if state.phase != RunEnd.DONE or not ws.final_report.is_file():
        raise UsageError(f"--since {run}: run {ws.id} has no final report (it is "
                         f"{state.phase}); give a run that finished")
    return Earlier(ws.id, state.topic)


def start(prepared: Prepared, base: Path) -> Workspace:
    """Create the prepared run in `base`, ready for its supervisor."""
    return supervisor.start_run(prepared.topic, prepared.options, base)


def plan(options: RunOptions) -> list[str]:
    """The plan's lines: the phases and seats, the estimate, the config and what it sets."""
    since = ([f"since run {options.since}: seeded with its claims, verdicts and sources, which "
              "are verified again; changes.json says what changed"] if options.since else [])
    if options.since and not options.verify:
        # --no-verify is refused with --since (prepare); a config's `verify: false`, or the
        # test profile's, is not, so the plan says why it does not hold.
        off = ("the test profile turns verification off" if options.profile == "test"
               else "your config sets verify: false")
        since.append(f"  {off}, but a --since run verifies anyway: what changed is judged on "
                     "the claims, and unchecked they would all read as retracted")
    return [*graph.plan(options), *synthesizer_lines(options), *since, *estimate_lines(options),
            *plan_lines(options)]
