"""A seat's failure: what kind it is and what it costs the seat. Each CLI's module reads what
its CLI printed into one typed `Failure` (agents/failure.py); council's own troubles (a
timeout, no report, an unsafe report, a missing CLI) are read from council's words here
(`classify`). What each kind costs:

- a plan's limit or a quota (plan_limit, quota): the vendor will refuse every request until
  its reset, so the seat stops at once, with no retry; the limit is recorded machine-wide
  (store/limits.py: "CLI X, with this credential, is limited until T"), and the seat is
  dropped for the rest of the run or its role moves to its `fallback` (naming the change of
  billing).
- auth, missing_cli: the CLI fails the same way in every later phase: dropped (one line says
  how to log in) or moved to its fallback, as above.
- a rate limit, an overload, a cut stream, a request that never answered (rate_limit,
  overloaded, stream_cut, no_answer): retried within the phase (`after`), with the vendor's
  own wait (Retry-After, RetryInfo, "try again in …", a reset) or else a growing pause
  (PAUSES), for as long as the phase's time limit allows: a wait that would end past it is
  not started, and the seat gives up this phase only. council's retries and the CLI's own
  (claude's api_retry events, codex's "Reconnecting... n/m") are counted together.
- anything else (a crash, a timeout, no report): this phase's trouble, not the seat's for
  good; the seat is kept for the next phases.
- A seat that names a `fallback` CLI which is installed is not dropped: its role moves to that
  CLI (the profile's model for it), for this phase and the rest of the run, and the run's
  provenance says so.

The decisions (`classify`, `after`, `next_step`, `fallback_seat`) are pure functions;
`give_up` records the outcome in state.yaml and the machine's limits."""

from __future__ import annotations

import enum
import os
import re
import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from council.agents.environment import agent_env
from council.agents.failure import PASSING, Failure, Kind, one_line
from council.graph import Phase
from council.readiness.preflight import LOGIN, credential_key
from council.runoptions import PROFILES, Seat
from council.store import events, limits
from council.store.owner import StateOwner
from council.store.state import RunState
from council.store.workspace import Workspace

# council's own failures, read from council's own words (the vendors' come typed from each
# CLI's module). Order matters: the first matching kind wins.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("missing_cli", re.compile(r"not installed or not on PATH")),
    ("timeout", re.compile(r"\btimed out after\b")),
    # council's no-activity watchdog: the request never answered (a retryable no_answer).
    (Kind.NO_ANSWER.value, re.compile(r"\bno output or report change\b")),
    ("no_report", re.compile(r"exited without writing its report")),
    # A link, FIFO, device or oversized file left as its report (seatfolder.take_report):
    # the agent turned, or a page turned it; before the words of any path could match below.
    ("unsafe_report", re.compile(r"^its report was .*: not published$")),
)


def classify(error: str | None) -> str | None:
    """The failure kind of council's own error message (a timeout, the idle watchdog, no
    report, a missing CLI), "crash" for any other, None when there is no error. A vendor's
    failure is its CLI module's `classify` (Adapter.classify), not this."""
    if not error:
        return None
    for kind, pattern in KINDS:
        if pattern.search(error):
            return kind
    return Kind.CRASH.value


HARD_LIMITS = frozenset({Kind.PLAN_LIMIT.value, Kind.QUOTA.value})
DROP = frozenset({*HARD_LIMITS, Kind.AUTH.value, "missing_cli"})
# Growing pauses between retries of a passing fault when the vendor named no wait, by the
# retries counted so far (council's and the CLI's own): a blip is retried at once, a long
# overload every 90 s.
PAUSES = (5.0, 15.0, 45.0, 90.0)
MIN_WAIT = 1.0  # a vendor wait of 0 (or in the past) is still a pause
# Where the phase has no time limit: the retries counted (the CLI's own too) before the seat
# gives up this phase.
MAX_RETRIES = 12
RETRIES = MAX_RETRIES  # compatibility: phases name it in their line

# What each passing kind is, in progress.log's words.
SAID = {
    Kind.RATE_LIMIT: "rate limited by the vendor",
    Kind.OVERLOADED: "the vendor is overloaded",
    Kind.STREAM_CUT: "the answer's stream was cut",
    Kind.NO_ANSWER: "no answer came",
}


class Action(enum.StrEnum):
    RETRY = "retry"  # wait `wait` seconds, then run the seat again within this phase
    GIVE_UP = "give_up"  # a hard limit, auth, a missing CLI: the seat is given up (give_up)
    KEEP = "keep"  # this phase's trouble: the seat ends the phase failed, kept for the next


@dataclass(frozen=True)
class Step:
    """What council does after a seat's failed turn, and the line that says so."""

    action: Action
    wait: float = 0.0
    said: str | None = None


def pause(retries: int) -> float:
    """The growing pause after `retries` retries (council's and the CLI's own)."""
    return PAUSES[min(max(retries, 0), len(PAUSES) - 1)]


def after(failure: Failure, retries: int, now: datetime, left: float | None,
          limit: float | None = None, paused: int | None = None) -> Step:
    """What a seat's `failure` costs it, `retries` retries (council's and its CLI's own)
    into the phase, with `left` seconds of the phase's time limit `limit` left (None: no
    limit). A passing fault is retried after the vendor's wait, else a growing pause, if
    that wait ends before the phase's deadline; a hard limit or auth is given up at once,
    with no retry; anything else is kept for the next phases (pure). The pause grows with
    council's own pauses (`paused`; default `retries`): a CLI that already retried on its
    own for a while has waited through its own pauses, so council's first is short, not
    the longest (codex's five reconnects would otherwise make it 90 s)."""
    kind = failure.kind
    if kind.value in DROP:
        return Step(Action.GIVE_UP)
    if kind not in PASSING:
        return Step(Action.KEEP)
    until = failure.until(now)
    vendor = None if until is None else max((until - now).total_seconds(), MIN_WAIT)
    wait = vendor if vendor is not None else pause(retries if paused is None else paused)
    words = SAID[kind]
    asked = "" if vendor is None else f" (the vendor asked for {vendor:g} s)"
    if left is not None and wait >= left:
        return Step(Action.KEEP, said=f"{words}: no retry{asked} fits in the {max(left, 0):.0f} s "
                    "left of the phase's time limit; the seat goes on at the next phase")
    if left is None and retries >= MAX_RETRIES:
        return Step(Action.KEEP, said=f"{words}: still failing after {retries} retries; the "
                    "seat goes on at the next phase")
    within = f"within the phase's {limit:g} s" if limit is not None else "no phase time limit"
    return Step(Action.RETRY, wait, f"{words}: retrying in {wait:g} s{asked} (retry "
                f"{retries + 1}, {within})")


def next_step(kind: str | None, retries_done: int, error: str | None) -> tuple[str, float]:
    """("give_up", 0) | ("keep", 0) after a seat's phase ended failed: the seat's runner
    has already retried what passes (`after`), within the phase's time."""
    if kind in DROP:
        return "give_up", 0.0
    return "keep", 0.0


def fallback_seat(seat: Seat, profile: str) -> Seat | None:
    """The seat on its fallback CLI, if it names one that is installed."""
    if seat.fallback is None or shutil.which(seat.fallback) is None:
        return None
    model = {s.cli: s for s in PROFILES.get(profile, PROFILES["production"])}[seat.fallback]
    return replace(seat, cli=seat.fallback, model=model.model, effort=model.effort,
                   extra_args=(), fallback=None)


def credential(seat: Seat, environ: dict[str, str] | None = None,
               home: Path | None = None) -> str:
    """The credential the seat's CLI uses, as the machine's limits name it
    (limits.credential_id): where its login comes from and, for a key in its environment, a
    digest of the key."""
    env = agent_env(seat.cli, environ, extra=seat.env)
    return credential_key(seat.cli, env, home or Path.home())


def record_limit(ws: Workspace, seat: Seat, kind: str, error: str | None,
                 retry_at: str | None, now: datetime | None = None) -> limits.Limit:
    """Record machine-wide that the seat's CLI, with its credential, is limited until the
    vendor's reset (`retry_at`, else limits.DEFAULT_HOLD from now)."""
    now = now or datetime.now(UTC)
    resets = datetime.fromisoformat(retry_at) if retry_at else None
    limit = limits.Limit(
        cli=seat.cli, credential=credential(seat, dict(os.environ)), kind=kind,
        until=limits.until(resets, None, now).isoformat(), message=one_line(error, 300),
        met=now.isoformat(), run_id=ws.root.name, seat=seat.name)
    limits.record(limit)
    return limit


def give_up(ws: Workspace, owner: StateOwner, seat: Seat, phase: Phase, kind: str,
            error: str | None) -> Seat | None:
    """The seat's CLI has failed for good: move the seat to its fallback CLI (returned, to
    run this phase again) or drop it for the rest of the run (None). A plan's limit or a
    quota is recorded machine-wide first, until its reset (record_limit)."""
    why = f"{kind}: {(error or 'failed').splitlines()[0][:160]}"
    limited = None
    if kind in HARD_LIMITS and not seat.self_hosted:
        record = owner.state.agents[seat.name].phases.get(phase.name)
        limited = record_limit(ws, seat, kind, error, record.retry_at if record else None)
    words = {Kind.PLAN_LIMIT.value: "plan limit", Kind.QUOTA.value: "quota spent"}
    head = (f"{words[kind]}: {seat.cli} is limited until {limited.until_time():%Y-%m-%d %H:%M} "
            f"UTC ({one_line(error, 160)})") if limited else None

    def change(state: RunState) -> Seat | None:
        options = state.options
        if limited is not None:  # the seat may be tried again when its limit ends
            failed = state.agents[seat.name].phases.get(phase.name)
            if failed is not None and not failed.retry_at:
                failed.retry_at = limited.until
        moved = fallback_seat(options.seat(seat.name), options.profile)
        if moved is None:
            state.dropped = {**(state.dropped or {}), seat.name: why}
            return None
        state.options = replace(options, seats=tuple(
            moved if s.name == seat.name else s for s in options.seats))
        record = state.agents[seat.name]
        record.cli, record.model = moved.cli, moved.model
        state.provenance = [*(state.provenance or []),
                            f"the {seat.name} seat ran on {moved.cli} from the {phase.name} phase "
                            f"on, because {seat.cli} failed ({why})"]
        return moved

    moved = owner.update(change)
    if moved is not None:
        billed = credential(moved, dict(os.environ)).split("#", 1)[0]
        lead = head or f"{seat.cli} failed for good ({why})"
        events.emit(ws.root, phase.name, f"{lead}; the seat goes on with its fallback, "
                    f"{moved.cli}, billed to {moved.cli}'s credential ({billed}) from now on",
                    agent=seat.name)
    elif head is not None:
        events.emit(ws.root, phase.name, f"{head}; dropped for the rest of the run",
                    agent=seat.name)
    else:
        hint = f"; {LOGIN[seat.cli]}" if kind == "auth" and seat.cli in LOGIN else ""
        events.emit(ws.root, phase.name, f"dropped for the rest of the run ({why}){hint}",
                    agent=seat.name)
    return moved
