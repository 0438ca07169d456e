"""Runs one seat through one phase: start its CLI, keep its loop going, publish its output.

Phases decide *what* each seat does (prompts, inputs); this module decides nothing about
phases. The loop rule itself lives in `loop.py`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import anyio
import watchfiles

from council import prompts, spawn
from council.agents import adapter_for
from council.agents.base import Adapter, AgentJob, Invocation, LogTail, Outcome, json_events
from council.agents.environment import agent_env
from council.agents.failure import Failure, Kind, one_line
from council.domains import Policy
from council.errors import CouncilError
from council.evidence.ledger import Book, Usage, charge, format_usage
from council.graph import Phase, counted
from council.runoptions import Seat
from council.seat import budget, failover, seatfolder
from council.store import agentfs, disk, events, loop, redact, snapshots
from council.store.owner import StateOwner
from council.store.progress import utc_now
from council.store.state import AgentPhase, RunState, SeatStatus, said
from council.store.workspace import Workspace


@dataclass(frozen=True)
class SeatTask:
    """What a phase asks of one seat."""

    seat: Seat
    phase: Phase
    prompt: str
    max_iterations: int
    inputs: Mapping[str, Path] = field(default_factory=dict)  # copied into the seat's folder
    # The seat's record from an interrupted earlier attempt at this phase (council resume).
    previous: AgentPhase | None = None
    tools: str | None = None  # graph.WEB, FILES or EDIT in place of its phase's own


@dataclass(frozen=True)
class Limits:
    timeout: float | None  # per agent per phase
    grace: float  # between SIGTERM and SIGKILL
    idle: float | None = None  # no output, report or loop change for this long: stuck
    budgeted: bool = False  # a --max-cost or --max-tokens is set: check spending as it goes
    report_cap: int | None = None  # bytes of a report the next phases get (snapshots.py)


@dataclass
class Activity:
    """When the agent last showed a sign of life (output, a file change, a hook call)."""

    last: float = field(default_factory=time.monotonic)
    idle_fired: bool = False


@dataclass
class SeatRun:
    """One seat's turn at one phase, from its first prompt to its final record: what
    `_prepare` sets up, `_drive` fills in and `_finish` records."""

    ws: Workspace
    owner: StateOwner  # the run's state: the seat's record is changed through it
    task: SeatTask
    limits: Limits
    adapter: Adapter
    job: AgentJob
    report: Path
    instructions: Path
    loop_file: Path
    logs: tuple[Path, Path]  # the CLI's stdout and stderr
    session: str | None  # the session to continue, for an interrupted seat
    meter: Meter
    activity: Activity = field(default_factory=Activity)
    began: float = field(default_factory=time.monotonic)
    returncode: int | None = None
    outcome: Outcome = field(default_factory=Outcome)
    # Set when a fresh session replaces one its CLI had no record of: the watcher looks for
    # the session id again from this offset of the log (the failed resume printed the old).
    fresh_from: int | None = None
    # The vendor's failure the last process ended in, as its CLI's module read it (None: it
    # did not fail, or council's own trouble: a timeout, no report).
    failure: Failure | None = None
    retries: int = 0  # council's retries at this phase (the CLI's own: meter.own_retries)
    # The running CLI process's scope: cancelled to stop it when its output makes its
    # failure certain (Adapter.fatal).
    stopper: anyio.CancelScope | None = None

    @property
    def seat(self) -> str:
        return self.task.seat.name

    @property
    def phase(self) -> Phase:
        return self.task.phase

    @property
    def bound(self) -> int:
        """The most of its report, or of an input, council reads (loop.report_bound)."""
        return loop.report_bound(self.limits.report_cap)


async def run_seat(ws: Workspace, owner: StateOwner, task: SeatTask,
                   limits: Limits) -> AgentPhase:
    """Run the seat's loop to its end and return its final record for the phase. The
    teardown is shielded: a cancellation cannot cut it short (it waits for it). The task
    binds its phase and seat once (events.bound): every event of the seat's turn is said
    with `events.say`."""
    with events.bound(task.phase.name, task.seat.name):
        run = _prepare(ws, owner, task, limits)
        try:
            await _drive(run)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await _finish(run, cancelled=True)
            raise
        with anyio.CancelScope(shield=True):
            final = await _finish(run, cancelled=False)
        return final


def _prepare(ws: Workspace, owner: StateOwner, task: SeatTask, limits: Limits) -> SeatRun:
    """Lay out the seat's folder, prompt, instructions and loop file; mark it running."""
    seat, phase = task.seat, task.phase
    folder = seatfolder.own_folder(ws, seat.name, phase.name)
    report = ws.working_output(seat.name, phase)
    log, err_log = ws.log_file(seat.name, phase), ws.stderr_file(seat.name, phase)
    log.parent.mkdir(exist_ok=True)

    seatfolder.quarantine(ws, seat.name, phase.name)
    instructions = ws.instructions_file(seat.name, phase)
    instructions.parent.mkdir(exist_ok=True)
    disk.atomic_write(instructions, prompts.render("continue", report_path=str(report),
                                                    marker=loop.MARKER))
    adapter = adapter_for(seat.cli)
    loop_file = ws.loop_file(seat.name, phase)
    first_iteration, session, prompt = _starting_point(task, adapter, report, instructions,
                                                       loop_file)
    prompt_file = seatfolder.put(ws, seat.name, phase.name, f"{phase.name}-prompt.md",
                                 prompt)
    loop.write_loop(loop_file, first_iteration, task.max_iterations, active=True)
    job = AgentJob(
        seat=seat,
        tag=phase.name,
        cwd=folder,
        prompt_file=prompt_file,
        hook_args=("--run-dir", str(ws.root), "--seat", seat.name, "--phase", phase.name,
                   "--report", str(report), "--loop", str(loop_file),
                   "--instructions", str(instructions)),
        max_iterations=task.max_iterations,
        home=ws.private_home(seat.name),
        private_dir=ws.root / "loops",
        tools=task.tools or phase.tools,
        sources=Policy.of(owner.state.options.sources),
    )

    def start(state: RunState) -> None:
        record = state.agents[seat.name].phase(phase.name)
        record.status, record.iteration = SeatStatus.RUNNING, first_iteration
        record.max_iterations = task.max_iterations
        record.started_at, record.ended_at, record.error = utc_now(), None, None
        record.failure, record.retry_at, record.partial = None, None, False
        record.output = str(ws.published_output(seat.name, phase).relative_to(ws.root))
        record.log = str(log.relative_to(ws.root))

    owner.update(start)
    model = f"model {seat.model}" if seat.model else "default model"
    how = "resumed" if task.previous else "started"
    if task.previous and session:
        how += f" session {session}"
    events.say(ws.root, f"{how} ({seat.cli}, {model}, "
               f"iteration {first_iteration}/{task.max_iterations})")
    return SeatRun(ws, owner, task, limits, adapter, job, report, instructions, loop_file,
                   (log, err_log), session, Meter(adapter, seat, log, first_iteration, ws.root))


async def _drive(run: SeatRun) -> None:
    """Run the CLI under its time limit and idle watchdog, with state.yaml kept live,
    retrying what its vendor's failure lets pass within the phase's time (`_attempts`);
    whatever goes wrong ends up in `run.outcome`, never as an exception."""
    limits = run.limits
    stop_watch = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_watch_agent, run, stop_watch)
        with anyio.move_on_after(limits.timeout) as deadline:
            try:
                await anyio.to_thread.run_sync(
                    seatfolder.copy_inputs, run.ws, run.seat, run.phase.name, run.task.inputs,
                    run.bound)
                await _attempts(run, deadline.deadline)
            except (CouncilError, OSError) as exc:  # e.g. the CLI is not installed
                run.outcome, run.failure = Outcome(run.outcome.session_id, str(exc)), None
        stop_watch.set()
    if deadline.cancelled_caught:
        run.outcome = Outcome(run.outcome.session_id, f"timed out after {limits.timeout:g} s")
        run.failure = None


async def _attempts(run: SeatRun, deadline: float) -> None:
    """Run the seat's CLI; after a failure its vendor says will pass (a rate limit, an
    overload, a cut stream, no answer), wait the vendor's wait or a growing pause and run it
    again, continuing its session or its partial report, for as long as the phase's time
    limit (`deadline`, anyio's clock) leaves room for the wait (failover.after)."""
    limit = run.limits.timeout
    while True:
        await _attempt(run)
        # The CLI's own retries up to its exit, before they are counted with council's (the
        # watcher reads its log at most once a second).
        run.meter.read(force=True, final=True)
        failure = run.failure
        if failure is None or run.outcome.error is None:
            return
        left = None if limit is None else deadline - anyio.current_time()
        step = failover.after(failure, run.retries + run.meter.own_retries,
                              datetime.now(UTC), left, limit, paused=run.retries)
        if step.said:
            events.say(run.ws.root, step.said)
        if step.action != failover.Action.RETRY:
            return
        run.retries += 1
        _set(run.owner, run.seat, run.phase, failure=failure.kind.value,
             error=run.outcome.error, retry_at=_iso(failure.until(datetime.now(UTC))))
        await anyio.sleep(step.wait)
        run.session = _retry_point(run)


async def _attempt(run: SeatRun) -> None:
    """One start of the seat's CLI (its turns, for a CLI council loops), under the idle
    watchdog: a CLI silent for the idle limit is stopped, as a request that never answered
    (a no_answer the seat retries)."""
    limits, activity = run.limits, run.activity
    activity.last, activity.idle_fired = time.monotonic(), False
    run.failure = None
    async with anyio.create_task_group() as watched:
        watched.start_soon(_idle_watchdog, activity, limits.idle, watched.cancel_scope,
                           Quiet(run.ws))
        run.returncode, run.outcome = await _turns(run)
        watched.cancel_scope.cancel()
    if activity.idle_fired:
        said = f"no output or report change for {limits.idle:g} s"
        run.outcome = Outcome(run.outcome.session_id, said)
        run.failure = Failure(Kind.NO_ANSWER, said)


def _retry_point(run: SeatRun) -> str | None:
    """The session a retry continues (its CLI's own, where it can), with the prompt that
    says so in the seat's prompt file; else a fresh session pointed at the partial report.
    Returns the session to continue, or None."""
    session = run.outcome.session_id or run.session
    if session and run.adapter.resumes_sessions:
        iteration = run.task.max_iterations
        with suppress(OSError, ValueError):
            iteration = loop.read_loop(run.loop_file)[0]
        decision = loop.Decision(True, iteration, run.task.max_iterations, "continue")
        prompt = RETRY_NOTE + _continuation(run, decision)
    else:
        session = None
        prompt = run.task.prompt + (RESUME_NOTE if run.report.exists() else "")
    seatfolder.put(run.ws, run.seat, run.phase.name, run.job.prompt_file.name, prompt)
    return session


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat(timespec="seconds")


async def _finish(run: SeatRun, cancelled: bool) -> AgentPhase:
    """The one teardown, for a seat that ended and one whose run was cancelled: stop its
    loop, book its usage, take its report, judge it, publish it and record the result. The
    report is read once, off the event loop, into council's capture (seatfolder.take_report):
    judging and publishing read that, never the agent's path again. Run shielded."""
    iteration = loop.deactivate(run.loop_file)
    run.meter.read(force=True, final=True)
    taken = await anyio.to_thread.run_sync(_take, run)
    try:
        return _conclude(run, cancelled, iteration, taken.capture)
    finally:
        if taken.capture is not None:
            taken.capture.unlink(missing_ok=True)


def _take(run: SeatRun) -> seatfolder.Taken:
    """Scrub council's secrets from what the agent left (its CLI's logs, and its report as
    captured) before anything is published from them; the usage is read already. One line
    names the agent and each variable, never the value. A report that cannot be taken
    safely fails the seat."""
    found = redact.secrets()
    seatfolder.scrub_logs(run.ws, run.seat, run.phase.name, found)
    taken = seatfolder.take_report(run.ws, run.seat, run.phase.name, run.bound, found)
    if taken.error is not None:
        run.outcome, run.failure = Outcome(run.outcome.session_id, taken.error), None
    return taken


def _conclude(run: SeatRun, cancelled: bool, iteration: int,
              capture: Path | None) -> AgentPhase:
    ws, seat, phase = run.ws, run.seat, run.phase
    outcome = run.outcome  # a report that could not be taken fails the seat
    if cancelled:
        final = _record(run.owner, seat, phase, SeatStatus.CANCELLED, run.returncode,
                        outcome.session_id, "stopped: the run was cancelled", iteration,
                        run.meter.record())
        events.say(ws.root, "stopped (run cancelled)")
        return final

    has_text, complete = (False, False) if capture is None else \
        loop.report_facts(capture, run.bound)
    if outcome.error is not None:
        status = SeatStatus.FAILED
    else:
        status = loop.final_status(has_text, complete, iteration, run.task.max_iterations)
        if status == SeatStatus.FAILED:
            outcome = Outcome(outcome.session_id,
                              f"{run.adapter.cli} exited without writing its report")
    # A failed seat's report with content, in a phase whose reports feed the next ones, is
    # published as partial: what it finished is kept (resume continues it), though no later
    # phase of this run builds on it (a failed seat's record is not `usable`).
    partial = status == SeatStatus.FAILED and has_text and phase.feeds
    snapshot = None
    if status != SeatStatus.FAILED or partial:  # what later phases read, whatever it does next
        assert capture is not None
        snapshot = _publish(run, capture)
    models = run.adapter.answered_models(json_events(run.logs[0]))
    final = _record(run.owner, seat, phase, status, run.returncode, outcome.session_id,
                    outcome.error, iteration, run.meter.record(), snapshot,
                    run.failure if outcome is run.outcome else None, models, partial)
    if run.limits.budgeted:
        budget.check(ws, run.owner)
    elapsed = time.monotonic() - run.began
    asked = run.task.seat.model
    if models and (asked is None or any(asked not in m for m in models)):
        events.say(ws.root, f"answered by {', '.join(models)}"
                   + (f" (asked for {asked})" if asked else ""))
    if status == SeatStatus.FAILED:
        kept = ""
        if partial:
            assert snapshot is not None
            kept = (f"; its partial report ({counted(final.iteration, 'iteration')}, "
                    f"{snapshot.size} bytes) is published as partial")
        events.say(ws.root, f"failed ({final.failure}) after {elapsed:.0f} s: "
                   f"{outcome.error}{kept}")
    else:
        assert snapshot is not None
        events.say(ws.root, f"{said(status, final.max_iterations)} after "
                   f"{counted(final.iteration, 'iteration')}, "
                   f"{elapsed:.0f} s, {snapshot.size} bytes, {format_usage(run.meter.total)}")
    return final


def _publish(run: SeatRun, capture: Path) -> snapshots.Published:
    """Publish the seat's captured report, cut at the run's cap (what every later phase
    reads, whatever the agent does next), and say so when it was cut."""
    cap = run.limits.report_cap
    snapshot = snapshots.publish(capture, run.ws.published_output(run.seat, run.phase), cap)
    if snapshot.cut_at is not None:
        assert snapshot.full is not None
        assert cap is not None
        events.say(run.ws.root, f"report is {snapshot.size:,} bytes, over the "
                   f"{cap:,}-byte cap: the next phases get its first "
                   f"{snapshot.cut_at:,} bytes, with a note; all of it is in "
                   f"{snapshot.full.name}")
    return snapshot


async def _turns(run: SeatRun) -> tuple[int | None, Outcome]:
    """Start the CLI; for CLIs without a native loop, re-invoke it on the same session. Each
    of those turns is one process: its usage is booked, and the budget checked, before the
    loop decides whether to go on."""
    adapter, meter = run.adapter, run.meter
    (log, err_log), session = run.logs, run.session
    invocation = adapter.prepare(run.job, session)
    resuming = session is not None  # this invocation continues an interrupted session
    while True:
        offset = log.stat().st_size if log.exists() else 0
        err_offset = err_log.stat().st_size if err_log.exists() else 0
        returncode, stopped = await _process(run, invocation)
        outcome = adapter.outcome(log, None if stopped else returncode, offset)
        if stopped:  # its output made its failure certain: stopped
            fatal = meter.fatal or Failure(Kind.CRASH, f"{adapter.cli} was stopped")
            run.failure, returncode = fatal, None
            return returncode, Outcome(outcome.session_id, f"{adapter.cli}: {fatal.message}")
        if resuming and outcome.error and session is not None and adapter.lost_session(
                outcome.error + "\n" + _said(err_log, err_offset)):
            invocation, session = _fresh_session(run, session), None
            continue
        resuming = False
        if outcome.error:
            run.failure = adapter.classify(json_events(log, offset), _said(err_log, err_offset),
                                           returncode, datetime.now(UTC))
            return returncode, outcome
        if adapter.native_loop:
            return returncode, outcome
        if outcome.session_id is None:
            return returncode, Outcome(None, f"{adapter.cli} printed no session id")
        if session is not None and outcome.session_id != session:
            return returncode, Outcome(session, f"{adapter.cli} resumed session "
                                       f"{outcome.session_id} instead of {session}")
        session = outcome.session_id
        following = await _next_turn(run, session)
        if following is None:
            return returncode, outcome
        invocation = following


async def _process(run: SeatRun, invocation: Invocation) -> tuple[int | None, bool]:
    """Run one of the seat's CLI processes to its end: (its exit code, whether council
    stopped it because its output made its failure certain: agents' `fatal`)."""
    job, (log, err_log) = run.job, run.logs
    # An allow-list of council's environment, never all of it (agents/environment.py).
    # A self-hosted seat gets none of its vendor's variables (agents/selfhosted.py).
    env = {**agent_env(run.adapter.cli, extra=job.seat.env,
                       vendor_vars=not job.seat.self_hosted), **invocation.env}

    def on_start(pid: int) -> None:
        _set(run.owner, job.seat.name, run.phase, pid=pid,
             pid_started=spawn.process_started(pid))

    returncode: int | None = None  # a process council stopped has none of its own
    with anyio.CancelScope() as stopper:
        run.stopper = stopper
        returncode = await spawn.run(
            invocation.argv, cwd=invocation.cwd, env=env, stdout=log, stderr=err_log,
            stdin_file=invocation.stdin_file, grace=run.limits.grace, on_start=on_start,
        )
    run.stopper = None
    return returncode, stopper.cancelled_caught


async def _next_turn(run: SeatRun, session: str) -> Invocation | None:
    """After a turn of a CLI council re-invokes: book it, let the loop decide, and return
    the next turn's invocation on the same session (None: the loop has ended)."""
    ws, job, meter, phase = run.ws, run.job, run.meter, run.phase
    run.outcome = Outcome(session)  # a cancel from here on still records the session
    _set(run.owner, job.seat.name, phase, session_id=session)
    if meter.read(force=True, final=True):
        _set(run.owner, job.seat.name, phase, usage=meter.record())
        if run.limits.budgeted:
            budget.check(ws, run.owner)  # a spent budget deactivates the loop: end_turn stops
    # The report as the hook reads it (through agentfs, bounded), off the event loop.
    decision = await anyio.to_thread.run_sync(
        loop.end_turn, run.loop_file, run.report, ws.root, phase.name, job.seat.name,
        run.bound)
    meter.advance(decision.iteration)
    if not decision.proceed:
        return None
    prompt = _continuation(run, decision)
    # Each `codex exec resume` loads the folder's instruction files anew: what the last
    # turn wrote (an AGENTS.override.md) must not steer the next.
    await anyio.to_thread.run_sync(seatfolder.quarantine, ws, job.seat.name, phase.name)
    return run.adapter.resume(job, session, prompt)


def _continuation(run: SeatRun, decision: loop.Decision) -> str:
    """The next turn's prompt on the same session: the seat's instructions file (council's,
    in loops/, out of the agent's reach), as the hook sends it."""
    return loop.continuation_prompt(run.instructions.read_text(encoding="utf-8"), decision)


def _fresh_session(run: SeatRun, lost: str) -> Invocation:
    """The interrupted session cannot be resumed: its CLI has no record of it (killed before
    it wrote it, or removed since). A fresh session is pointed at the partial report, as for
    a CLI that cannot resume at all; the seat keeps its iteration count."""
    events.say(run.ws.root, f"session {lost} cannot be resumed ({run.adapter.cli} has no "
               "record of it): a fresh session continues from the partial report")
    prompt = run.task.prompt + (RESUME_NOTE if run.report.exists() else "")
    seatfolder.put(run.ws, run.seat, run.phase.name, run.job.prompt_file.name, prompt)
    log = run.logs[0]
    run.fresh_from = log.stat().st_size if log.exists() else 0
    return run.adapter.prepare(run.job, None)


def _said(err_log: Path, start: int, limit: int = 64 << 10) -> str:
    """What the CLI wrote to stderr from byte `start` (its last `limit` bytes at most)."""
    try:
        return agentfs.tail(err_log, limit, start)[0].decode("utf-8", "replace")
    except OSError:
        return ""


# The instruction files each CLI reads from its working folder (seatfolder.py moves them,
# and the rest of what a CLI would load from there, out of the way at each phase's start).
MEMORY_FILES = seatfolder.MEMORY_FILES


RETRY_NOTE = ("Your last request failed on the model provider's side (council retried it). "
              "Your partial report is in the report file: continue from it; do not start "
              "over. ")

RESUME_NOTE = (
    "\n\nNote: an earlier session on this task was interrupted. Your partial report is "
    "already in the report file: read it first and continue from it; do not start over.\n"
)


def _starting_point(task: SeatTask, adapter: Adapter, report: Path, instructions: Path,
                    loop_file: Path) -> tuple[int, str | None, str]:
    """(first iteration, session to continue or None, first prompt) for a fresh or an
    interrupted seat. An interrupted one keeps its iteration count and, where its CLI can,
    its session; otherwise a fresh session is pointed at the partial report."""
    previous = task.previous
    if previous is None:
        return 1, None, task.prompt
    # An orphaned agent may have gone on counting in its loop file after state.yaml was
    # last written: never hand it more turns than its cap.
    counted = previous.iteration
    with suppress(OSError, ValueError):
        counted = max(counted, loop.read_loop(loop_file)[0])
    iteration = min(max(counted, 1), task.max_iterations)
    if previous.session_id and adapter.resumes_sessions:
        text = instructions.read_text(encoding="utf-8")
        decision = loop.Decision(True, iteration, task.max_iterations, "continue")
        prompt = ("Your previous session was interrupted before it finished. "
                  + loop.continuation_prompt(text, decision))
        return iteration, previous.session_id, prompt
    if report.exists():
        return iteration, None, task.prompt + RESUME_NOTE
    return iteration, None, task.prompt


def own_retry_words(cli: str, event: dict[str, object]) -> str:
    """A CLI's own retry, in its words: codex's `Reconnecting... 2/5 (unexpected status 503
    …)`, or claude's api_retry fields (`after HTTP 529 overloaded, in 2 s`)."""
    said = event.get("message")
    if isinstance(said, str) and said:
        return f"{cli} retries on its own: {one_line(said, 200)}"
    status, error, delay = (event.get("error_status"), event.get("error"),
                            event.get("retry_delay_ms"))
    why = " ".join(str(v) for v in (f"HTTP {status}" if status else None,
                                    None if error == "unknown" else error) if v)
    wait = f", in {float(delay) / 1000:g} s" if isinstance(delay, int | float) else ""
    return f"{cli} retries on its own{' after ' + why if why else ''}{wait}"


class Meter:
    """An agent's usage for one phase, read from its CLI's log as it grows and booked, split
    by iteration, in its usage ledger (ledger.Book), at what it costs the user (a
    self-hosted seat's tokens cost nothing: ledger.charge)."""

    def __init__(self, adapter: Adapter, seat: Seat, log: Path, first_iteration: int,
                 run_dir: Path | None = None) -> None:
        self.adapter, self.seat, self.run_dir = adapter, seat, run_dir
        self.tail, self.counter = LogTail(log), adapter.usage_counter(seat.model)
        self.book = Book(first_iteration)
        self.read_at = 0.0
        self.own_retries = 0  # the CLI's own retries seen in its log (Adapter.own_retry)
        self.fatal: Failure | None = None  # an event made the process's failure certain
        # What the log already holds (an earlier attempt at this phase, before a resume) is
        # counted, never read as this attempt's retries: a seat resumed after a refused login
        # is not stopped for its last attempt's api_retry.
        for event in self.tail.new_events(False):
            self.counter.add(event)

    @property
    def total(self) -> Usage:
        return self.book.total

    def read(self, force: bool = False, final: bool = False) -> bool:
        """Read what the log gained (`final` once the CLI has exited) and book its usage (at
        most once a second unless forced); True if the booked usage changed. The events are
        read at every call: a CLI's own retry of a refused login is stopped before its next
        request (claude's first comes 0.5 s after its api_retry, codex's 0.2 s after its
        "Reconnecting...")."""
        restarts = self.tail.restarts
        new = list(self.tail.new_events(final))
        if self.tail.restarts != restarts:  # the log was replaced: count it afresh
            self.counter = self.adapter.usage_counter(self.seat.model)
        for event in new:
            self.counter.add(event)
            if self.adapter.own_retry(event):
                self.own_retries += 1
                self.fatal = self.fatal or self.adapter.fatal(event)
                # Said as it happens: a CLI that rides out a blip on its own costs the seat
                # time, and progress.log names it (docs/faults.md).
                if self.run_dir is not None:
                    events.say(self.run_dir, f"{own_retry_words(self.adapter.cli, event)} "
                               f"(retry {self.own_retries} of the phase, counted with "
                               "council's)")
        now = time.monotonic()
        if not force and now - self.read_at < 1.0:
            return False
        self.read_at = now
        return self.book.book(charge(self.counter.total(), self.seat.self_hosted))

    def advance(self, iteration: int) -> None:
        """Book what the log gains from now on to `iteration` (later ones only)."""
        self.book.advance(iteration)

    def record(self) -> dict[str, object]:
        return self.book.record()


async def _watch_agent(run: SeatRun, stop: anyio.Event) -> None:
    """Keep state.yaml live while the agent runs: copy the loop file's iteration as hooks
    move it on (hooks stay cheap, with no YAML), record the session id as soon as the CLI
    prints it (so a run whose supervisor is killed can still resume that session), and keep
    the ledger and the budget current. `stop` ends the watch at once; `rust_timeout` bounds
    the wait on a cancel."""
    ws, seat, phase, meter, activity = run.ws, run.seat, run.phase, run.meter, run.activity
    budgeted, loop_file, log = run.limits.budgeted, run.loop_file, run.logs[0]
    signs_of_life = (str(ws.work_dir(seat, phase)), str(log), str(run.logs[1]))
    offset = log.stat().st_size if log.exists() else 0
    seen, session = loop.read_loop(loop_file)[0], None
    async for _ in watchfiles.awatch(
        loop_file.parent, log.parent, watch_filter=lambda _c, p: p.startswith(signs_of_life),
        recursive=False, debounce=200, step=20, stop_event=stop, rust_timeout=200,
    ):
        activity.last = time.monotonic()
        try:
            iteration = loop.read_loop(loop_file)[0]
        except (OSError, ValueError):
            iteration = seen
        changes: dict[str, object] = {}
        if run.fresh_from is not None:
            offset, session, run.fresh_from = run.fresh_from, None, None
        if session is None:
            session = meter.adapter.outcome(log, None, offset).session_id
            if session is not None:
                changes["session_id"] = session
        if meter.read(force=iteration != seen):
            changes["usage"] = meter.record()
        if meter.fatal is not None and run.stopper is not None:
            run.stopper.cancel()  # e.g. claude retrying a refused login: stop it now
        if iteration != seen:
            seen = iteration
            meter.advance(iteration)
            changes["iteration"] = iteration
        if changes:
            _set(run.owner, seat, phase, **changes)
            if budgeted and "usage" in changes:
                budget.check(ws, run.owner)


QUIET_REPORT = 60.0  # say that an agent is silent after every this many seconds of it


@dataclass(frozen=True)
class Quiet:
    """Where to say that an agent has gone quiet (the seat's task has bound who)."""

    ws: Workspace

    def every(self, idle: float | None) -> float:
        """Every 60 s, or a quarter of a shorter idle limit: the notices come before it."""
        return QUIET_REPORT if idle is None else min(QUIET_REPORT, idle / 4)

    def say(self, silent: float, idle: float | None) -> None:
        limit = f"gives up at {idle:g} s" if idle else "no idle limit"
        events.say(self.ws.root, f"no output for {silent:g} s ({limit})")


async def _idle_watchdog(activity: Activity, idle: float | None, scope: anyio.CancelScope,
                         quiet: Quiet) -> None:
    """Say that an agent is silent after every `quiet.every` seconds of silence, so a user
    watching progress.log knows whom council is waiting on; stop it after `idle` seconds
    (a hung retry loop)."""
    every = quiet.every(idle)
    since, said = activity.last, 0  # the silence being counted, and notices given in it
    # Sleeps until the next notice or the deadline, both of which move whenever the agent
    # shows life: not a poll.
    while True:
        if activity.last != since:
            since, said = activity.last, 0
        silent = time.monotonic() - since
        if idle is not None and silent >= idle:
            break
        if int(silent // every) > said:
            said = int(silent // every)
            quiet.say(said * every, idle)
        wake = since + (said + 1) * every
        if idle is not None:
            wake = min(wake, since + idle)
        await anyio.sleep(max(wake - time.monotonic(), 0.01))
    activity.idle_fired = True
    scope.cancel()


def _set(owner: StateOwner, seat: str, phase: Phase, **values: object) -> None:
    def change(state: RunState) -> None:
        record = state.agents[seat].phase(phase.name)
        for key, value in values.items():
            setattr(record, key, value)

    # A new pid is written at once, not coalesced: a resume after a crash stops the orphans
    # it finds by pid in the file.
    owner.update(change, now="pid" in values)


def _record(owner: StateOwner, seat: str, phase: Phase, status: str, returncode: int | None,
            session_id: str | None, error: str | None, iteration: int,
            usage: dict[str, object] | None = None,
            snapshot: snapshots.Published | None = None, failure: Failure | None = None,
            models: list[str] | None = None, partial: bool = False) -> AgentPhase:
    """The seat's final record for the phase. A failed seat's kind is its vendor's
    (`failure`, read by its CLI's module), else council's own (failover.classify)."""
    failed = status == SeatStatus.FAILED
    retry_at = _iso(failure.until(datetime.now(UTC))) if failed and failure else None

    def change(state: RunState) -> AgentPhase:
        record = state.agents[seat].phase(phase.name)
        if usage is not None:
            record.usage = usage
        record.sha256 = snapshot.sha256 if snapshot else None
        record.original_sha256 = (snapshot.original_sha256 if snapshot and
                                  snapshot.original_sha256 != snapshot.sha256 else None)
        record.status, record.exit_code, record.error = status, returncode, error
        record.failure = (failure.kind.value if failure else failover.classify(error)) \
            if failed else None
        record.retry_at, record.partial = retry_at, partial
        if models:
            record.models = models
        record.iteration = iteration
        record.ended_at, record.pid, record.pid_started = utc_now(), None, None
        if session_id:
            record.session_id = session_id
        return record

    return owner.update(change)


def fail_seat(ws: Workspace, owner: StateOwner, seat: str, phase: Phase,
              error: str) -> AgentPhase:
    """Record a seat as failed when council itself could not run it to its end, even
    before it had a loop file."""
    iteration = 0
    with suppress(OSError, ValueError):
        iteration = loop.deactivate(ws.loop_file(seat, phase))
    events.emit(ws.root, phase.name, f"failed: {error}", agent=seat)
    return _record(owner, seat, phase, SeatStatus.FAILED, None, None, error, iteration)
