"""A seat's failure: what kind it is, from the words and exit codes its CLI used, and what
that means for the rest of the run. Users act differently on "log in again" (auth), "wait or
pay" (quota, rate limit) and "the agent got stuck" (timeout, idle), and so does council:

- auth, quota, missing_cli: the CLI will fail the same way in every later phase, so the seat
  is dropped for the rest of the run at once (one line says how to log in), instead of being
  started again and failing again in each phase.
- rate_limit: retried after a pause (the CLI's Retry-After where it reports one, else a short
  backoff), at most RETRIES times per phase; then dropped like the others.
- anything else (a crash, a timeout, a server error): this phase's trouble, not the seat's for
  good; the seat is kept for the next phases.
- A seat that names a `fallback` CLI which is installed is not dropped: its role moves to that
  CLI (the profile's model for it), for this phase and the rest of the run, and the run's
  provenance says so.

The decisions (`classify`, `next_step`, `fallback_seat`) are pure functions; `give_up`
records the outcome in state.yaml."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace

from council.graph import Phase
from council.readiness.preflight import LOGIN
from council.runoptions import PROFILES, Seat
from council.store import events
from council.store.owner import StateOwner
from council.store.state import RunState
from council.store.workspace import Workspace

# Order matters: the first matching kind wins (a 429 quota error is a quota error).
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("missing_cli", re.compile(r"not installed or not on PATH")),
    ("timeout", re.compile(r"\btimed out after\b")),
    ("idle", re.compile(r"\bno output or report change\b")),
    ("no_report", re.compile(r"exited without writing its report")),
    # A link, FIFO, device or oversized file left as its report (seatfolder.take_report):
    # the agent turned, or a page turned it; before the words of any path could match below.
    ("unsafe_report", re.compile(r"^its report was .*: not published$")),
    ("quota", re.compile(r"quota|insufficient_quota|billing|credit balance|RESOURCE_EXHAUSTED",
                         re.I)),
    ("auth", re.compile(r"\b401\b|\b403\b|unauthori[sz]ed|invalid api key|api key|"
                        r"authenticat|auth method|log ?in|Missing environment variable|"
                        r"code 41\b|code 145\b|code 147\b", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate.?limit|too many requests|code 173\b", re.I)),
    ("network", re.compile(r"unable to connect|connection (failed|refused)|fetch failed|"
                           r"ECONNREFUSED|ENOTFOUND|network", re.I)),
    ("server", re.compile(r"\b5\d\d\b|server error|overloaded|high demand|code 244\b", re.I)),
)


def classify(error: str | None) -> str | None:
    """The failure kind of an agent's error message, or None when there is no error."""
    if not error:
        return None
    for kind, pattern in KINDS:
        if pattern.search(error):
            return kind
    return "crash"


DROP = frozenset({"auth", "quota", "missing_cli"})
RETRIES = 2  # rate-limit retries per seat per phase
BACKOFF = (5.0, 15.0)  # seconds, when the CLI gives no Retry-After
MAX_WAIT = 60.0  # a longer Retry-After is not waited out: the seat is given up instead
RETRY_AFTER = re.compile(
    r"retry[- _]after\D{0,3}(\d+(?:\.\d+)?)|retry in (\d+(?:\.\d+)?)\s*s|"
    r"\"retryDelay\"\s*:\s*\"(\d+(?:\.\d+)?)s\"", re.I)


def retry_after(error: str | None) -> float | None:
    """The pause a CLI's rate-limit message asks for, in seconds, if it names one."""
    found = RETRY_AFTER.search(error or "")
    if found is None:
        return None
    return float(next(g for g in found.groups() if g))


def next_step(kind: str | None, retries_done: int, error: str | None) -> tuple[str, float]:
    """("retry", seconds) | ("give_up", 0) | ("keep", 0) after a seat's failure."""
    if kind == "rate_limit" and retries_done < RETRIES:
        wait = retry_after(error)
        if wait is None:
            wait = BACKOFF[min(retries_done, len(BACKOFF) - 1)]
        if wait <= MAX_WAIT:
            return "retry", wait
        return "give_up", 0.0
    if kind in DROP or kind == "rate_limit":
        return "give_up", 0.0
    return "keep", 0.0  # a crash, a timeout: this phase's trouble, not the seat's for good


def fallback_seat(seat: Seat, profile: str) -> Seat | None:
    """The seat on its fallback CLI, if it names one that is installed."""
    if seat.fallback is None or shutil.which(seat.fallback) is None:
        return None
    model = {s.cli: s for s in PROFILES.get(profile, PROFILES["production"])}[seat.fallback]
    return replace(seat, cli=seat.fallback, model=model.model, effort=model.effort,
                   extra_args=(), fallback=None)


def give_up(ws: Workspace, owner: StateOwner, seat: Seat, phase: Phase, kind: str,
            error: str | None) -> Seat | None:
    """The seat's CLI has failed for good: move the seat to its fallback CLI (returned, to
    run this phase again) or drop it for the rest of the run (None)."""
    why = f"{kind}: {(error or 'failed').splitlines()[0][:160]}"

    def change(state: RunState) -> Seat | None:
        options = state.options
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
        events.emit(ws.root, phase.name, f"{seat.cli} failed for good ({why}); the "
                    f"seat goes on with its fallback, {moved.cli}", agent=seat.name)
    else:
        hint = f"; {LOGIN[seat.cli]}" if kind == "auth" and seat.cli in LOGIN else ""
        events.emit(ws.root, phase.name, f"dropped for the rest of the run ({why}){hint}",
                    agent=seat.name)
    return moved
