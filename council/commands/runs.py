"""`council list`, MCP `list_research`: the runs of a research folder, oldest first."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from pathlib import Path

from council.commands import TEXT
from council.errors import CouncilError
from council.evidence import ledger
from council.store import provenance
from council.store.state import RunState, load_state
from council.store.workspace import Workspace, find_run, list_runs
from council.views import status as views


@dataclass(frozen=True)
class Listed:
    """One run: the table's facts with stable keys, whole (the topic uncut, times as
    written, the duration in seconds). A run whose state cannot be read has only its id,
    `own` and the `error` saying why; the rest are null."""

    id: str
    phase: str | None = None  # views.shown_phase
    state_phase: str | None = None
    created_at: str | None = None
    ended_at: str | None = None
    duration_s: int | None = None
    cost_usd: float | None = None
    cost_estimated: bool | None = None
    topic: str | None = None
    final_report: str | None = None
    own: bool = True
    error: str | None = None


# `council list --json`'s keys, for every run (documented in its --help).
LIST_JSON_KEYS = tuple(f.name for f in fields(Listed))


@dataclass(frozen=True)
class Runs:
    runs: list[Listed]
    latest: str | None  # the run a command without an id takes
    readable: list[tuple[RunState, Workspace]] = field(metadata=TEXT)  # the table's rows

    @property
    def foreign(self) -> list[str]:
        """The runs council did not make on this machine: shown read only."""
        return [run.id for run in self.runs if not run.own]

    @property
    def unreadable(self) -> list[str]:
        return [f"{run.id}  unreadable: {run.error}" for run in self.runs if run.error]


def runs(base: Path) -> Runs:
    """Every run of the research folder `base`, oldest first."""
    known = provenance.load()
    listed, shown = [], []
    for ws in list_runs(base):
        own = provenance.own(ws.root, known)
        try:
            state = load_state(ws.root)
        except CouncilError as exc:
            listed.append(Listed(ws.id, own=own, error=str(exc)))
            continue
        shown.append((state, ws))
        listed.append(one(state, ws, own))
    try:
        latest: str | None = find_run(None, base).id
    except CouncilError:
        latest = None
    return Runs(listed, latest, shown)


def one(state: RunState, ws: Workspace, own: bool) -> Listed:
    start, end = views.epoch(state.created_at), views.epoch(state.ended_at)
    spent = ledger.spent(state)
    return Listed(ws.id, views.shown_phase(state, ws), state.phase, state.created_at,
                  state.ended_at,
                  None if start is None else round((end or time.time()) - start),
                  spent.to_dict()["cost_usd"], spent.estimated, state.topic,
                  str(ws.final_report) if ws.final_report.is_file() else None, own)
