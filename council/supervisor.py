"""Runs a council from start to end: research → refinement → synthesis.

Degrade, don't die: a seat that fails is left out of later phases and the run goes on; only
a phase where every seat failed stops the run. One signal-handling task at the root cancels
the run on SIGINT/SIGTERM; every agent's process tree is stopped and the state says
`cancelled`."""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import psutil

from council import (
    claims,
    crash,
    events,
    loop,
    prompts,
    regression,
    score,
    sessions,
    snapshots,
    sources,
    spawn,
)
from council.config import RunOptions, Seat
from council.errors import CouncilError, PhaseFailedError
from council.phases import (
    RunContext,
    antagonist,
    gapfill,
    refinement,
    research,
    synthesis,
    verification,
)
from council.phases import scope as scoping
from council.progress import utc_now
from council.runlock import RunLock, live_supervisor
from council.scope import SCOPE
from council.scope import load as load_scope
from council.state import (
    PHASES,
    AgentRecord,
    RunState,
    create_state,
    load_state,
    owned,
    update_state,
)
from council.workspace import CLAIMS, COUNTERPOINTS, Workspace, create_workspace

EXIT_OK, EXIT_FAILED = 0, 1
MAIN_SESSION = "main-session"  # the synthesiser when the Claude Code plugin drives the run
STAMP = "> council run "
SIGNAL_EXIT = {signal.SIGHUP: 129, signal.SIGINT: 130, signal.SIGTERM: 143}


@dataclass(frozen=True)
class RunResult:
    ws: Workspace
    exit_code: int
    message: str


def start_run(topic: str, options: RunOptions, base: Path | None = None) -> Workspace:
    """Create research/<id>/ with its state, ready for `execute`."""
    ws = create_workspace(base)
    crash.note_run(ws.root)
    state = RunState(
        id=ws.id,
        topic=topic,
        created_at=utc_now(),
        options=options.to_dict(),
        agents={s.name: AgentRecord(cli=s.cli, model=s.model) for s in options.seats},
    )
    create_state(ws.root, state)
    seats = ", ".join(f"{s.name} ({s.cli})" for s in options.seats)
    events.emit(ws.root, "run", f"{ws.id} created with {len(options.seats)} agents: {seats}")
    return ws


def execute(ws: Workspace, synthesise: bool = True) -> RunResult:
    """Run every remaining phase of the run in `ws` (all of them for a new run, what is left
    for a resumed one). Holds the run's lock throughout; never raises for agent failures.

    With `synthesise=False` (the Claude Code plugin) it stops after refinement and leaves the
    synthesis to the main Claude session: see `handover` and `complete_handover`."""
    crash.note_run(ws.root)
    # The supervisor owns the state for the whole run: in memory, mirrored to state.yaml.
    with RunLock(ws.root), owned(ws.root) as state:
        if state.phase == "done":
            return RunResult(ws, EXIT_OK, f"run {ws.id} is already done: {ws.final_report}")
        if state.phase == "synthesis" and state.synthesizer == MAIN_SESSION and synthesise \
                and sessions.is_bound(ws.root.parent, ws.id):
            raise CouncilError(f"run {ws.id} is waiting for its Claude Code session to write "
                               "the synthesis; cancel it first to resume it here")
        options = RunOptions.from_dict(state.options)
        orphans = _stop_orphans(ws, state, options.grace_period)
        if orphans:
            events.emit(ws.root, "run", f"stopped agents left running by an earlier "
                        f"supervisor: {', '.join(orphans)}")
        return anyio.run(_execute, ws, options, state.topic, synthesise)


def _stop_orphans(ws: Workspace, state: RunState, grace: float) -> list[str]:
    """Agents whose supervisor died (kill -9, crash) may still be running: stop them before
    anything else touches their files."""
    recorded = {
        name: (ap.pid, ap.pid_started)
        for name, rec in state.agents.items()
        for ap in rec.phases.values()
        if ap.pid and ap.pid_started and ap.status == "running"
    }
    stopped = set(spawn.stop_orphans(list(recorded.values()), grace))
    return sorted(name for name, (pid, _) in recorded.items() if pid in stopped)


async def _execute(ws: Workspace, options: RunOptions, topic: str,
                   synthesise: bool) -> RunResult:
    ctx = RunContext(ws, options, topic)
    received: list[signal.Signals] = []
    result: RunResult | None = None
    async with anyio.create_task_group() as root:
        root.start_soon(_watch_signals, root.cancel_scope, received)
        try:
            result = await _pipeline(ctx, synthesise)
        except PhaseFailedError as exc:
            _set_phase(ws, "failed", str(exc))
            events.emit(ws.root, "run", f"failed: {exc}")
            result = RunResult(ws, EXIT_FAILED, str(exc))
        finally:
            root.cancel_scope.cancel()
    if received:
        sig = received[0]
        stopped = _mark_cancelled(ws, sig.name)
        message = f"cancelled by {sig.name}" + (f"; stopped {', '.join(stopped)}"
                                                if stopped else "")
        events.emit(ws.root, "run", message)
        return RunResult(ws, SIGNAL_EXIT[sig], message)
    assert result is not None
    return result


async def _watch_signals(scope: anyio.CancelScope, received: list[signal.Signals]) -> None:
    """The first SIGINT/SIGTERM/SIGHUP cancels the run; later ones are absorbed, so a second
    Ctrl-C cannot cut short the stopping of agents (a closed terminal sends SIGHUP, which
    would otherwise kill the supervisor and orphan its agents)."""
    with anyio.open_signal_receiver(*SIGNAL_EXIT) as signals:
        async for sig in signals:
            if not received:
                received.append(signal.Signals(sig))
                scope.cancel()


async def _pipeline(ctx: RunContext, synthesise: bool) -> RunResult:
    """research → refinement → synthesis. Each phase runs only the seats that have not
    finished it, so the same code serves a new run and a resumed one."""
    ws, seats = ctx.ws, list(ctx.options.seats)
    total = len(seats)

    found = None
    if ctx.options.verify and total >= 2:  # what verification measures coverage against
        _set_phase(ws, "scope")
        found = await scoping.run(ctx)

    _set_phase(ws, "research")
    _announce(ctx, "research", ctx.seats(), "in parallel")
    await research.run(ctx, found)
    survivors = _survivors(ctx, "research", total)

    source_phase = "research"
    exhausted = load_state(ws.root).budget_exhausted
    if exhausted:
        events.emit(ws.root, "refinement", f"skipped: {exhausted}")
    elif len(survivors) >= refinement.MIN_SEATS:
        _set_phase(ws, "refinement")
        _announce(ctx, "refinement", survivors, "read each other's reports")
        await refinement.run(ctx, survivors)
        survivors = _survivors(ctx, "refinement", total)
        source_phase = "refinement"
        _record_regressions(ws)
    else:
        events.emit(ws.root, "refinement", "skipped: fewer than two agents finished research")

    exhausted = load_state(ws.root).budget_exhausted
    if ctx.options.verify and len(survivors) >= 2 and not exhausted:
        _set_phase(ws, "verification")
        await verification.run(ctx, survivors, source_phase)
        await _fill_gaps(ctx, survivors, source_phase)
    exhausted = load_state(ws.root).budget_exhausted  # verification or gap fill may spend it
    if len(survivors) >= 2 and not exhausted:
        run_it, why = antagonist.should_run(ctx.options.debate, verification_facts(ws),
                                            ctx.options.mode)
        events.emit(ws.root, "antagonist", ("started: " if run_it else "skipped: ") + why)
        if run_it:
            _set_phase(ws, "antagonist")
            await antagonist.run(ctx, survivors, source_phase, verification_facts(ws))

    _set_phase(ws, "synthesis")
    _record_completeness(ws)  # before the synthesis, which is told the score and the gaps
    if not synthesise:
        update_state(ws.root, lambda s: setattr(s, "synthesizer", MAIN_SESSION))
        events.emit(ws.root, "synthesis", f"handed to the main Claude session: "
                    f"{len(survivors)} reports to synthesise")
        return RunResult(ws, EXIT_OK, "handed over")
    chosen = load_state(ws.root).synthesizer
    writer = next((s for s in survivors if s.name == chosen), None) or \
        synthesis.choose_synthesizer(ctx.options.synthesizer, ctx.seats() or seats, survivors)
    if writer.name != ctx.options.synthesizer:
        events.emit(ws.root, "synthesis", f"{ctx.options.synthesizer} cannot synthesise; "
                    f"{writer.name} writes the final report instead")
    update_state(ws.root, lambda s: setattr(s, "synthesizer", writer.name))
    events.emit(ws.root, "synthesis",
                f"started: {writer.name} synthesises {len(survivors)} reports")
    record = await synthesis.run(ctx, writer, survivors, source_phase)
    if not record.usable:
        raise PhaseFailedError(f"synthesis failed: {record.error}; the agents' reports are "
                               f"kept in {ws.root}")
    _stamp_final_report(ws, [s.name for s in survivors], total, source_phase, writer.name)
    _set_phase(ws, "done")
    events.emit(ws.root, "run", f"done: {ws.final_report}")
    return RunResult(ws, EXIT_OK, str(ws.final_report))


async def _fill_gaps(ctx: RunContext, survivors: list[Seat], source_phase: str) -> None:
    """One bounded round on what verification found missing (phases/gapfill.py)."""
    ws = ctx.ws
    todo = gapfill.gaps(verification_facts(ws))
    exhausted = load_state(ws.root).budget_exhausted
    if not todo or exhausted:
        events.emit(ws.root, "gapfill", "skipped: " + (
            exhausted or "no open sub-question, refuted answer or uncovered dimension"))
        return
    plan = gapfill.assign(todo, survivors)
    pending = [seat.name for seat, _ in ctx.to_run("gapfill", [s for s in survivors
                                                                if s.name in plan])]
    if not pending:
        return  # a resumed run that had finished its gap fill
    _set_phase(ws, "gapfill")
    events.emit(ws.root, "gapfill", (
        f"started: {len(todo)} gap(s), " if len(pending) == len(plan)
        else f"resumed: {', '.join(pending)} still to finish; ") + ", ".join(
        f"{seat} ({', '.join(g.id for g in batch)})" for seat, batch in plan.items()))
    await gapfill.run(ctx, survivors, source_phase, plan)
    state = load_state(ws.root)
    failed = [(seat, rec) for seat in plan
              if (rec := state.agents[seat].phases.get("gapfill")) is not None
              and not rec.usable]
    events.emit(ws.root, "gapfill", f"finished: {len(plan) - len(failed)} of {len(plan)} "
                "gap reports" + "".join(f"; {seat} failed ({rec.error})"
                                          for seat, rec in failed))


def _announce(ctx: RunContext, phase: str, seats: list[Seat], how: str) -> None:
    todo = [seat.name for seat, _ in ctx.to_run(phase, seats)]
    if len(todo) == len(seats):
        events.emit(ctx.ws.root, phase, f"started: {len(todo)} agents {how}")
    elif todo:
        events.emit(ctx.ws.root, phase, f"resumed: {', '.join(todo)} still to finish")


def _survivors(ctx: RunContext, phase: str, total: int) -> list[Seat]:
    survivors = ctx.usable(phase)
    if not survivors:
        raise PhaseFailedError(f"every agent failed in {phase}; see "
                               f"{ctx.ws.root / 'progress.log'}")
    events.emit(ctx.ws.root, phase,
                f"finished: {len(survivors)} of {total} agents produced a report")
    return survivors


def _stamp_final_report(ws: Workspace, contributors: list[str], total: int,
                        source_phase: str, writer: str) -> None:
    """Put who actually contributed at the top: a degraded run must not read like a full one."""
    cut = load_state(ws.root).budget_exhausted
    facts = verification_facts(ws)
    checked = claims.summary(facts) if facts else None
    body = ws.final_report.read_text(encoding="utf-8", errors="replace")
    if body.startswith(STAMP):  # stamped by an earlier, interrupted attempt
        body = body.split("\n\n", 1)[-1]
    ledger = _write_ledger(ws, body)
    result = _record_completeness(ws, ledger)
    changed = _check_snapshots(ws)  # with the seats that moved to a fallback CLI
    gaps_filled = synthesis.gap_fill_ran(load_state(ws.root))
    header = (f"{STAMP}`{ws.id}` · {len(contributors)} of {total} agents contributed "
              f"({', '.join(contributors)}) · {score.headline(result)} · "
              f"{_phases_ran(ws, source_phase, gaps_filled)} · synthesised by {writer}"
              + (f" · claims: {checked}" if checked else "")
              + (f" · cut short by the budget ({cut})" if cut else "")
              + (f" · {len(changed)} provenance note(s), see Provenance" if changed else "")
              + "\n\n")
    section = score.section(result)
    if changed:
        section += (f"\n{PROVENANCE}\n\n" + "".join(f"- {line}\n" for line in changed))
    if gaps_filled:
        section += ("\n_Coverage was judged before the gap-filling round, whose findings were "
                    "not cross-checked by another agent._\n")
    body = sources.replace_sources(sources.remove_section(
        sources.remove_section(body, score.HEADING), PROVENANCE_HEADING),
                                   section + "\n" + sources.sources_section(ledger))
    ws.final_report.write_text(header + body, encoding="utf-8")


def _phases_ran(ws: Workspace, source_phase: str, gaps_filled: bool) -> str:
    """`scope → research → refinement → verification → synthesis`, with what was skipped."""
    facts = verification_facts(ws)
    scoped = (ws.root / SCOPE).is_file()
    ran = [*([("scope" if load_scope(ws.root / SCOPE) else "scope (degraded)")] if scoped
             else []), "research",
           "refinement" if source_phase == "refinement" else "(refinement skipped)",
           *(["verification" + (" (degraded)" if facts.get("status") == "degraded" else "")]
             if facts else []),
           *(["gap fill"] if gaps_filled else []),
           *(["antagonist"] if (ws.root / COUNTERPOINTS).is_file() else []), "synthesis"]
    return " → ".join(ran)


def _record_completeness(ws: Workspace,
                         ledger: sources.Ledger | None = None) -> score.Completeness:
    """The run's completeness score (score.py) from its reports, verdicts and survivors,
    recorded in state.yaml."""
    state = load_state(ws.root)
    if ledger is None:
        ledger = sources.build(_reports(ws, state))
    _, contributors = contributions(state)
    result = score.compute(RunOptions.from_dict(state.options).mode,
                           [s.url for s in ledger.ordered() if s.agents],
                           verification_facts(ws), len(contributors), len(state.agents))
    update_state(ws.root, lambda s: setattr(s, "completeness", result.to_dict()))
    return result


def _check_snapshots(ws: Workspace) -> list[str]:
    """Name, once each, the published snapshots (or their originals) that changed since
    publication; returns them all, for the final report's provenance."""
    state = load_state(ws.root)
    found = snapshots.changes(ws, state)
    new = [line for line in found if line not in (state.provenance or [])]
    if new:
        update_state(ws.root, lambda s: setattr(s, "provenance", [*(s.provenance or []), *new]))
        for line in new:
            events.emit(ws.root, "run", f"provenance: {line}")
    return [*(state.provenance or []), *new]


PROVENANCE = "## Provenance"
PROVENANCE_HEADING = re.compile(r"^##\s+Provenance\s*$", re.M | re.I)


def _set_phase(ws: Workspace, phase: str, error: str | None = None) -> None:
    if phase in PHASES:  # a phase boundary: what the next phase reads must be as published
        _check_snapshots(ws)

    def change(state: RunState) -> None:
        state.phase = phase
        if error is not None:
            state.error = error
        if phase in ("done", "failed", "cancelled"):
            state.ended_at = utc_now()
        else:  # running (again, after a resume): the old ending no longer holds
            state.ended_at, state.error = None, None

    update_state(ws.root, change)


def _mark_cancelled(ws: Workspace, why: str) -> list[str]:
    stopped: list[str] = []

    def change(state: RunState) -> None:
        state.phase, state.error, state.ended_at = "cancelled", f"cancelled by {why}", utc_now()
        for name, rec in state.agents.items():
            for ap in rec.phases.values():
                if ap.status == "cancelled":
                    stopped.append(name)
                if ap.status in ("running", "pending"):
                    ap.status, ap.error = "cancelled", f"cancelled by {why}"
                    stopped.append(name)

    update_state(ws.root, change)
    return sorted(set(stopped))


def cancel_run(ws: Workspace) -> str:
    """Stop a run from another process: signal its supervisor, which stops its agents and
    records `cancelled`; with no live supervisor, stop its orphaned agents directly."""
    state = load_state(ws.root)
    if state.phase in ("done", "failed", "cancelled"):
        raise CouncilError(f"run {ws.id} has already ended ({state.phase}); nothing to cancel")
    options = RunOptions.from_dict(state.options)
    holder = live_supervisor(ws.root)
    proc = holder.process() if holder else None
    if proc is not None:
        sessions.release_run(ws.root.parent, ws.id)
        proc.send_signal(signal.SIGTERM)
        if not _wait_gone(proc, options.grace_period + 30):
            raise CouncilError(f"the supervisor of run {ws.id} (pid {proc.pid}) did not stop "
                               "within its grace period; try again or kill it")
        return f"cancelled run {ws.id}: its supervisor (pid {proc.pid}) stopped its agents"
    sessions.release_run(ws.root.parent, ws.id)  # a Claude session waiting on it may stop
    with RunLock(ws.root):
        orphans = _stop_orphans(ws, state, options.grace_period)
        stopped = _mark_cancelled(ws, "council cancel")
        events.emit(ws.root, "run", "cancelled by council cancel" +
                    (f"; stopped {', '.join(orphans)}" if orphans else ""))
    return f"cancelled run {ws.id}" + (f"; stopped {', '.join(stopped)}" if stopped else "")


def _wait_gone(proc: psutil.Process, timeout: float) -> bool:
    """Wait for a process that is not our child: it is gone once it has exited, even if its
    parent has not reaped it yet (a zombie)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)  # polling a process we cannot wait() on
    return False


def contributions(state: RunState) -> tuple[str, list[str]]:
    """(the phase whose reports feed the synthesis, the agents that produced one)."""
    for phase in ("refinement", "research"):
        names = [n for n, rec in state.agents.items()
                 if (ap := rec.phases.get(phase)) is not None and ap.usable]
        if names:
            return phase, names
    return "research", []


def handover(ws: Workspace) -> str:
    """The instructions that hand the synthesis to the main Claude session."""
    state = load_state(ws.root)
    source, names = contributions(state)
    seats = [RunOptions.from_dict(state.options).seat(n) for n in names]
    contributors = [{"name": s.name, "cli": s.cli, "model": s.model,
                     "path": str(ws.published_output(s.name, source))} for s in seats]
    return prompts.render(
        "synthesis", topic=state.topic, contributors=contributors,
        mode=RunOptions.from_dict(state.options).mode,
        total_agents=len(state.agents), report_path=str(ws.final_report),
        methodology=synthesis.methodology(state, seats, source),
        dropped=synthesis.dropped_claims(state), marker=loop.MARKER,
        verification=verification_facts(ws), counterpoints=synthesis.counterpoints(ws),
        gap_reports=synthesis.gap_reports(ws, state, seats),
    )


def complete_handover(ws: Workspace) -> bool:
    """After the main session's turn: stamp the final report and end the run, if it exists."""
    report = loop.read_report(ws.final_report)
    if not report or not report.strip():
        return False
    state = load_state(ws.root)
    source, names = contributions(state)
    _stamp_final_report(ws, names, len(state.agents), source, MAIN_SESSION)
    _set_phase(ws, "done")
    events.emit(ws.root, "run", f"done: {ws.final_report}")
    return True


def fail_run(ws: Workspace, reason: str) -> None:
    _set_phase(ws, "failed", reason)
    events.emit(ws.root, "run", f"failed: {reason}")


def _reports(ws: Workspace, state: RunState) -> list[tuple[str, str, str]]:
    out = []
    for name, rec in state.agents.items():
        for phase in ("research", "refinement", "gapfill"):
            text = loop.read_report(ws.published_output(name, phase))
            if text and (ap := rec.phases.get(phase)) is not None and ap.usable:
                out.append((name, phase, text))
    return out


def _write_ledger(ws: Workspace, final_report: str) -> sources.Ledger:
    """sources.json from every report of the run; the final report's Sources come from it."""
    state = load_state(ws.root)
    writer = state.synthesizer or "synthesis"
    ledger = sources.build([*_reports(ws, state), (writer, "synthesis", final_report)])
    regressions = {name: ap.dropped_sources for name, rec in state.agents.items()
                   if (ap := rec.phases.get("refinement")) and ap.dropped_sources}
    sources.write(ws.root / "sources.json", ledger, regressions)
    return ledger


def _record_regressions(ws: Workspace) -> None:
    """No silent regression: sources and cited claims an agent dropped between its research
    and refined reports go into state.yaml, progress.log and the synthesis's methodology."""
    def change(state: RunState) -> list[tuple[str, int, int]]:
        found = []
        for name, rec in state.agents.items():
            ap = rec.phases.get("refinement")
            before = loop.read_report(ws.published_output(name, "research"))
            after = loop.read_report(ws.published_output(name, "refinement"))
            if ap is None or not ap.usable or before is None or after is None:
                continue
            ap.dropped_sources = sources.disappeared(before, after)
            ap.dropped_claims = regression.listed(regression.dropped_claims(before, after))
            gone = regression.total(ap.dropped_claims) if ap.dropped_claims else 0
            if ap.dropped_sources or gone:
                found.append((name, len(ap.dropped_sources), gone))
        return found

    for name, dropped, gone in update_state(ws.root, change):
        events.emit(ws.root, "refinement", f"dropped {dropped} source(s) and {gone} cited claim(s) "
                    "its research report had", agent=name)


def verification_facts(ws: Workspace) -> dict[str, Any] | None:
    return claims.load(ws.root / CLAIMS)
