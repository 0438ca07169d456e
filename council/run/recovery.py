"""What `council resume` may start from, beyond a run council made and left as it was.

- `council resume --rebuild`: a run whose state.yaml is corrupt (or gone) gets a new one,
  rebuilt from what the run folder holds: run.json (the topic and options, written once when
  the run was created) and the published reports. Every report found counts as that agent's
  finished work for its phase; everything else is done again. The corrupt file is kept.
- `council adopt`: a run folder council did not make on this machine (store/provenance.py),
  which the user moved there themselves, becomes council's once they have seen what its
  seats would run: resuming it starts each recorded seat's CLI with its recorded
  `extra_args` and `env`, exactly as trusting a council.yaml would.
- A seat a vendor's fault took (`reopening`, `reopen`): a seat whose research or refinement
  failed for a kind that passes (RECOVERABLE: a plan limit or a quota after its reset, a rate
  limit, an overload, a cut stream, no answer, a crash, a timeout, a refused login once its
  CLI finds a login again) is tried again by `council resume`, in the phase it failed in,
  continuing its session or its partial report; the phases that build on that phase run
  again (graph.downstream) so the new report reaches the claims, the checks and the final
  report, which is rewritten. The other seats keep what they finished: their research and
  refined reports are not paid for twice (a provenance note says their refinement did not
  read the recovered report). A seat whose reset has not come is not waited for: one line
  says until when, and the rest of the run goes on without it.

Only a person adopts: the record is refused under an agent (trust.refuse_an_agent), whoever
calls `adopt`."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from council import graph, trust
from council.errors import StateError
from council.evidence.finalreport import KIND_WORDS, last_failure
from council.paths import run_work
from council.run.cancel import log_event
from council.store import events, limits, loop, provenance, snapshots
from council.store.progress import utc_now
from council.store.state import (
    RUN_SPEC,
    STATE_FILE,
    AgentPhase,
    AgentRecord,
    RunState,
    SeatStatus,
    StateFile,
    States,
    load_state,
    read_spec,
    replace_state,
)
from council.store.workspace import CLAIMS, COUNTERPOINTS, GAPS, Workspace

# The agents' own research reports, one file per seat (dissent.md is one for the run: it is
# redone).
REPORT_PHASES = tuple(p.name for p in graph.GRAPH if p.report and p.per_seat)


def rebuild(ws: Workspace) -> str:
    """Write a new state.yaml for the run from its folder; one line saying what was kept."""
    try:
        state = read_spec(ws.root)
    except (OSError, ValueError, KeyError, TypeError, StateError) as exc:
        raise StateError(f"cannot rebuild run {ws.id}: {ws.root / RUN_SPEC} is missing or "
                         f"unreadable ({exc}); the run cannot be resumed") from exc
    options = state.options
    kept, bound = [], loop.report_bound(options.max_report_bytes)
    for seat in options.seats:
        record = state.agents[seat.name] = AgentRecord(cli=seat.cli, model=seat.model)
        for phase in REPORT_PHASES:
            path = ws.published_output(seat.name, phase)
            has_text, complete = loop.report_facts(path, bound)
            if not has_text:
                continue
            record.phases[phase] = AgentPhase(
                status=SeatStatus.COMPLETE if complete else SeatStatus.STOPPED,
                sha256=snapshots.digest(path),
                output=path.name, ended_at=_stamp(path))
            kept.append(f"{seat.name} {phase}")
    old = ws.root / STATE_FILE
    if old.exists():
        old.replace(ws.root / f"{STATE_FILE}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ')}")
    replace_state(ws.root, state)
    what = ", ".join(kept) if kept else "no finished report"
    events.emit(ws.root, "run", f"state rebuilt from {RUN_SPEC} and the reports: {what}")
    return f"rebuilt the state of run {ws.id} from its reports ({what}); the rest is redone"


def _stamp(path: Path) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(path.stat().st_mtime))
    except OSError:
        return utc_now()


def adoption(ws: Workspace) -> list[str]:
    """What the user takes on by adopting the run: its topic, phase and, per seat, the CLI,
    model, `extra_args`, `env` and `fallback` a resume would start. Values are JSON-quoted:
    the folder's author wrote them, and no escape code or newline reaches the terminal."""
    state = load_state(ws.root)
    options = state.options
    lines = [f"run {ws.id} in {ws.root}: phase {state.phase}, "
             f"topic {json.dumps(' '.join(state.topic.split())[:120])}",
             f"config: {json.dumps(options.config_file) if options.config_file else 'none'}"
             f" ({json.dumps(options.config_trust or 'not judged')} where it was made)"]
    for seat in options.seats:
        bits = [f"cli {seat.cli}",
                f"model {json.dumps(seat.model) if seat.model else 'its CLI default'}"]
        bits += [f"extra_args {json.dumps(list(seat.extra_args))}"] if seat.extra_args else []
        bits += [f"env {json.dumps(list(seat.env))}"] if seat.env else []
        bits += [f"fallback {seat.fallback}"] if seat.fallback else []
        lines.append(f"  {seat.name}: {'; '.join(bits)}")
    if not any(s.extra_args or s.env for s in options.seats):
        lines.append("  no seat has extra_args or env")
    return lines


def adopt(ws: Workspace) -> str:
    """Record the run as council's own (provenance.py): from now on it may be resumed,
    cancelled and written into like a run made here. The agent processes its state names
    were recorded by whoever made the folder, elsewhere or before it came here: none is an
    agent council started on this machine, and a pid with its start time can be read off
    any process of the user's. So they are forgotten first, and no sweep (`council cancel`,
    a resume) ever signals them. Refused under an agent, before anything is written."""
    trust.refuse_an_agent("nothing was adopted")
    forgotten = StateFile(ws.root).update(_forget_processes)
    provenance.record(ws.root)
    said = (f"adopted run {ws.id}: council now treats {ws.root} as its own "
            f"(`council resume {ws.id}` continues it)")
    if not forgotten:
        return said
    many = len(forgotten) > 1
    what = (f"the {len(forgotten)} agent process{'es' if many else ''} its state names "
            f"({', '.join(forgotten)}) {'were' if many else 'was'} not started here: council "
            f"will not stop {'them' if many else 'it'}")
    return said + f"; {what}" + log_event(ws, f"adopted; {what}")


def _forget_processes(state: RunState) -> list[str]:
    """Drop every agent process the state records; those dropped, as `seat (pid N)`."""
    forgotten = []
    for name, rec in state.agents.items():
        for ap in rec.phases.values():
            if ap.pid is not None or ap.pid_started is not None:
                forgotten += [f"{name} (pid {ap.pid})"] if ap.pid else []
                ap.pid = ap.pid_started = None
    return sorted(set(forgotten))


# The failures `council resume` tries again (agents/failure.Kind's values, council's own, and
# the kinds of runs recorded before those: server, network). Not among them: a report that
# was not safe to publish, a CLI that wrote none, a CLI that is not installed.
RECOVERABLE = frozenset({"plan_limit", "quota", "rate_limit", "overloaded", "stream_cut",
                         "no_answer", "crash", "timeout", "idle", "auth", "server", "network"})
# What a re-opened phase that the others' reports do not feed leaves behind, moved aside
# (into the run's work folder, before-resume/) so that it is made again, not reused.
REDONE = {graph.CLAIMS.name: CLAIMS, graph.RECHECK.name: CLAIMS, graph.GAPFILL.name: GAPS,
          graph.ANTAGONIST.name: COUNTERPOINTS}
BEFORE_RESUME = "before-resume"


@dataclass(frozen=True)
class Lost:
    """A seat a recoverable fault took: where, why, and when it may be tried again."""

    seat: str
    cli: str
    phase: str  # the feeding phase it failed in
    kind: str
    until: datetime | None = None  # its reset (retry_at, or a limit recorded since)

    def waiting_line(self) -> str:
        """`codex: plan limit until 2026-11-30 00:53 UTC: not tried again before then`."""
        assert self.until is not None
        words = finalreport_words(self.kind)
        return (f"{self.seat}: {words} until {self.until.astimezone(UTC):%Y-%m-%d %H:%M} "
                "UTC: not tried again before then; the rest runs without it, and `council "
                "resume` after then adds it")


def finalreport_words(kind: str) -> str:
    return KIND_WORDS.get(kind, kind)


@dataclass(frozen=True)
class Reopening:
    """What a resume does about the seats faults took (pure: `reopening`)."""

    seats: list[Lost] = field(default_factory=list)  # tried again now
    waiting: list[Lost] = field(default_factory=list)  # before their reset
    not_ready: list[tuple[Lost, str]] = field(default_factory=list)  # its CLI's problem
    steps: list[str] = field(default_factory=list)  # re-opened, in graph order

    def lines(self) -> list[str]:
        """What the resume says of them, one line each."""
        out = [f"{lost.seat}: {finalreport_words(lost.kind)} in {lost.phase}: tried again "
               f"(continuing its work); then {', '.join(self.steps[1:]) or 'nothing else'} "
               "run again" for lost in self.seats]
        out += [lost.waiting_line() for lost in self.waiting]
        out += [f"{lost.seat}: {finalreport_words(lost.kind)} in {lost.phase}: not tried "
                f"again: {why}" for lost, why in self.not_ready]
        return out


def _when(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def lost_seats(state: RunState) -> list[Lost]:
    """The seats of the run whose latest research or refinement failed (or was published
    partial) for a recoverable kind (pure)."""
    out = []
    first = graph.FEEDS[0]
    for seat in state.options.seats:
        rec = state.agents.get(seat.name)
        if rec is None:
            continue
        failed = last_failure(rec.phases)
        if failed is not None:
            if failed.failure in RECOVERABLE:
                phase = next(p for p in reversed(graph.FEEDS) if rec.phases.get(p.name) is failed)
                out.append(Lost(seat.name, seat.cli, phase.name, failed.failure,
                                _when(failed.retry_at)))
            continue
        # Dropped before its research (in the scope phase): it is owed its research.
        kind = (state.dropped or {}).get(seat.name, "").split(":", 1)[0]
        research = rec.phases.get(first.name)
        if kind in RECOVERABLE and (research is None or not research.usable):
            when = [ap.retry_at for ap in rec.phases.values() if ap.failure == kind]
            out.append(Lost(seat.name, seat.cli, first.name, kind,
                            _when(when[-1] if when else None)))
    return out


def reopening(state: RunState, now: datetime, problems: Mapping[str, str | None],
              limited: Mapping[str, datetime]) -> Reopening:
    """Which lost seats a resume at `now` tries again, which wait for their reset, and which
    cannot run (`problems`: each CLI's preflight problem, None when it is ready; `limited`:
    a limit recorded machine-wide on a seat's CLI and credential, by seat), and the steps
    that re-open: each lost seat's phase and every phase built on it (pure)."""
    now_seats, waiting, not_ready = [], [], []
    for lost in lost_seats(state):
        until = max((t for t in (lost.until, limited.get(lost.seat)) if t is not None),
                    default=None)
        problem = problems.get(lost.cli)
        if problem:
            not_ready.append((lost, problem))
        elif until is not None and until > now:
            waiting.append(Lost(lost.seat, lost.cli, lost.phase, lost.kind, until))
        else:
            now_seats.append(lost)
    names: set[str] = set()
    for lost in now_seats:
        phase = graph.BY_NAME[lost.phase]
        names |= {phase.name, *(p.name for p in graph.downstream(phase))}
    steps = [p.name for p in graph.GRAPH if p.name in names]
    return Reopening(now_seats, waiting, not_ready, steps)


def reopen(ws: Workspace, owner: States, plan: Reopening) -> None:
    """Apply `plan` to the run: each lost seat's record becomes unfinished (keeping its
    session, turns and usage, so it continues), it is no longer dropped, the re-opened steps
    are forgotten (a one-seat phase's records start afresh, keeping what they spent; what they
    wrote for the run is moved aside), and the run is running again."""
    if not plan.seats:
        return
    recovered = {lost.seat: lost for lost in plan.seats}
    feeding = {p.name for p in graph.FEEDS}

    def change(state: RunState) -> None:
        for lost in plan.seats:
            record = state.agents[lost.seat].phases.get(lost.phase)
            if record is None:  # dropped before it: its phase runs it afresh
                continue
            record.status = SeatStatus.PENDING
            record.error = record.failure = record.retry_at = None
            record.partial = False
        state.dropped = {k: v for k, v in (state.dropped or {}).items()
                         if k not in recovered} or None
        for name in plan.steps:
            for seat, rec in state.agents.items():
                if (old := rec.phases.get(name)) is None or (seat in recovered and (
                        name == recovered[seat].phase)):
                    continue
                # In a feeding phase the others keep their reports (only the recovered seat
                # runs it again: a refinement it made of a partial report is made afresh).
                if name not in feeding or seat in recovered:
                    rec.phases[name] = AgentPhase(usage=old.usage, log=old.log)
        state.steps = {k: v for k, v in (state.steps or {}).items()
                       if k not in plan.steps} or None
        kept = [n for n in state.agents if n not in recovered]
        later = [n for n in plan.steps[1:] if n in feeding]
        if kept and later:
            state.provenance = [*(state.provenance or []), *(
                f"{', '.join(kept)} wrote their {graph.BY_NAME[n].label} before "
                f"{', '.join(recovered)}'s {plan.seats[0].phase} was recovered (council "
                "resume): they did not read it" for n in later)]
        state.phase, state.ended_at, state.error = plan.steps[0], None, None

    aside = run_work(ws.root) / BEFORE_RESUME
    for name in dict.fromkeys(REDONE[n] for n in plan.steps if n in REDONE):
        path = ws.root / name
        if path.is_file():
            aside.mkdir(exist_ok=True)
            path.replace(aside / name)
    owner.update(change)
    for line in plan.lines()[:len(plan.seats)]:
        events.emit(ws.root, "run", f"resume: {line}")


def limited_seats(state: RunState, now: datetime,
                  credential: Mapping[str, str]) -> dict[str, datetime]:
    """The limits recorded machine-wide on the lost seats' CLIs and credentials
    (`credential`: each seat's credential id), by seat."""
    out = {}
    for lost in lost_seats(state):
        found = limits.limit_on(lost.cli, credential.get(lost.seat, ""), now)
        if found is not None:
            out[lost.seat] = found.until_time()
    return out
