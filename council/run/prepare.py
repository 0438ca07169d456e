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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from council import graph
from council.config import Overrides, load_options, plan_lines
from council.evidence.estimate import plan_lines as estimate_lines
from council.readiness import preflight
from council.run import supervisor
from council.runoptions import RunOptions
from council.store.workspace import Workspace, ensure_base
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

    topic: str | bytes
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
    topic = check_topic(request.topic, request.source)
    overrides = Overrides(**request.given)  # each value read and checked as declared
    options = load_options(overrides)
    if request.limits is not None:
        options = request.limits(options)
    options, notes = preflight.prepare(options, explicit="agents" in overrides)
    if request.base is not None:
        ensure_base(request.base)
    return Prepared(topic, options, notes)


def start(prepared: Prepared, base: Path) -> Workspace:
    """Create the prepared run in `base`, ready for its supervisor."""
    return supervisor.start_run(prepared.topic, prepared.options, base)


def plan(options: RunOptions) -> list[str]:
    """The plan's lines: the phases and seats, the estimate, the config and what it sets."""
    return [*graph.plan(options), *estimate_lines(options), *plan_lines(options)]
