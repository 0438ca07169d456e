"""The last phase: one seat writes final-report.md from the reports the phases after the
research build on (graph.feeding), with the claims' verdicts, the gap reports, the dissent
memo and the antagonist's counterpoints; council then stamps it (evidence/finalreport.py).
Under a host whose own session writes it (the Claude Code plugin), the run hands it over
instead (handover.py), with the same prompt (`prompt`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from council import graph, prompts
from council.domains import Policy
from council.errors import PhaseFailedError
from council.evidence import claimcheck, finalreport, ledger, regression, score
from council.evidence.ledger import format_usage
from council.graph import Phase, counted
from council.phases import (
    RunContext,
    evidence,
    gapfill,
    listed,
    reports,
    run_parallel,
    seat_task,
)
from council.phases.chooser import writer
from council.runoptions import RunOptions, Seat, no_search
from council.seat import seatfolder
from council.seat.runner import SeatTask
from council.store import events, loop
from council.store.state import MAIN_SESSION, RunState
from council.store.workspace import COUNTERPOINTS, DISSENT, GAPS, PhaseLike, Workspace, phase_of


def methodology(state: RunState, contributors: list[Seat], source_phase: PhaseLike
                ) -> list[str]:
    """Facts the final report must state: who took part, with what, and what failed."""
    lines = [f"{len(contributors)} of {counted(len(state.agents), 'agent')} contributed to "
             "this report "
             f"({', '.join(s.name for s in contributors)})."]
    for name, rec in state.agents.items():
        parts = []
        for phase, ap in rec.phases.items():
            if phase == graph.SYNTHESIS.name:
                continue
            what = f"{phase}: {ap.status}, {ap.iteration}/{ap.max_iterations} iterations"
            if ap.error:
                what += f" ({ap.error})"
            parts.append(what)
        model = rec.model or "its default model"
        used = ledger.of_agent(rec)
        lines.append(f"{name} ({rec.cli}, {model}): " + ("; ".join(parts) or "did not run")
                     + f"; {format_usage(used)}")
    for name, rec in state.agents.items():
        for ap in rec.phases.values():  # what a refinement lost of the reports it refined
            dropped, gone = ap.dropped_sources, ap.dropped_claims
            if dropped:
                count = regression.total(dropped)
                lines.append(f"{name} dropped {graph.counted(count, 'source')} between its "
                             "research and "
                             f"refined reports: {', '.join(dropped[:5])}"
                             + (" …" if count > 5 else ""))
            if gone:
                lines.append(f"{name} dropped "
                             f"{graph.counted(regression.total(gone), 'cited claim')} between "
                             "its research and refined reports (quoted above).")
    first, last = graph.FEEDS[0], graph.FEEDS[-1]
    if state.budget_exhausted:
        lines.append(f"The run's budget cut the research short ({state.budget_exhausted}): "
                     "agents stopped after their current turn.")
    elif phase_of(source_phase) is first:
        lines.append(f"{last.label.capitalize()} did not run (fewer than two agents finished "
                     f"{first.label}); the synthesis uses the {first.label} reports.")
    if state.completeness:
        done = state.completeness
        lines.append(f"Completeness score computed by council: {score.summary(done)}; "
                     + "; ".join(f"{k.replace('_', ' ')}: {v['detail']}"
                                 for k, v in done["signals"].items()) + ".")
    spent = ledger.spent(state)
    lines.append(f"Spent so far: {format_usage(spent)}"
                 + (" (partly estimated from list prices)" if spent.estimated else "") + ".")
    return lines


def dropped_claims(state: RunState) -> list[dict[str, Any]]:
    """Each agent's cited claims that refinement lost: model-written text, so the prompt
    quotes them as untrusted material, apart from the facts council states."""
    return [{"name": name, claimcheck.KEY: ap.dropped_claims} for name, rec in state.agents.items()
            for ap in rec.phases.values() if ap.dropped_claims]


def prompt(ws: Workspace, state: RunState, options: RunOptions, contributors: list[Seat],
           source_phase: PhaseLike, report_path: Path, folder: Path | None = None,
           patch: bool = False) -> str:
    """The synthesis's prompt, the one builder for whoever writes the final report: a seat of
    the run (`folder`: its inputs folder, where its copies of the reports are) or the host's
    own session under the Claude Code plugin (handover.py; no folder: the run folder, where
    the reports were published). Either way it writes to `report_path`."""
    where = folder if folder is not None else ws.root
    facts = finalreport.verification_facts(ws)  # claims.json, read once
    return prompts.render(
        graph.SYNTHESIS.prompt,
        topic=state.topic,
        mode=options.mode,
        contributors=listed(ws, phase_of(source_phase), contributors, where),
        total_agents=len(state.agents),
        report_path=str(report_path),
        methodology=methodology(state, contributors, source_phase),
        dropped=dropped_claims(state),
        marker=loop.MARKER,
        verification=facts,
        policy=Policy.of(options.sources).describe() if options.sources else None,
        outside=claimcheck.resting_outside(facts),
        counterpoints=str(where / COUNTERPOINTS) if counterpoints(ws) else None,
        dissent=str(where / DISSENT) if (ws.root / DISSENT).is_file() else None,
        gap_reports=gap_reports(ws, state, contributors, folder),
        since=options.since, patch=patch,
        no_search=[name for name in no_search(options.seats)
                   if name in {s.name for s in contributors}],
    )


def task(ctx: RunContext, phase: Phase, synthesizer: Seat, contributors: list[Seat],
         source_phase: Phase) -> SeatTask:
    ws = ctx.ws
    state = ctx.owner.state
    inputs_dir = ws.peers_dir(synthesizer.name, phase)
    inputs = reports(ws, source_phase, contributors)
    if counterpoints(ws):  # read from the synthesiser's own folder, like the reports
        inputs[COUNTERPOINTS] = ws.root / COUNTERPOINTS
    if (ws.root / DISSENT).is_file():
        inputs[DISSENT] = ws.root / DISSENT
    for gap in gap_reports(ws, state, contributors, inputs_dir):
        if gap["path"]:
            inputs[Path(gap["path"]).name] = ws.published_output(gap["name"], graph.GAPFILL)
    patch = ctx.options.since is not None
    text = prompt(ws, state, ctx.options, contributors, source_phase,
                  ws.working_output(synthesizer.name, phase), inputs_dir, patch)
    pending = dict(ctx.to_run(phase, [synthesizer]))
    previous = pending.get(synthesizer)
    if patch and previous is None:  # not over the edits of an interrupted attempt
        seed_report(ws, synthesizer.name, ctx.options.since or "")
    made = seat_task(phase, synthesizer, text, inputs, previous,
                     own=ctx.options.synthesis_max_iterations)
    return replace(made, tools=graph.EDIT) if patch else made


def seed_report(ws: Workspace, seat: str, since: str) -> None:
    """Revision by patching (issue 35): the earlier run's final report, without council's
    stamp and "What changed" section (finalreport.body_of), becomes the synthesiser's report
    file, which it then edits (graph.EDIT: no tool that writes a file whole, where the CLI
    can withhold one), so a paragraph nothing touched stays byte-identical."""
    earlier = finalreport.read_final_report(Workspace(ws.root.parent / since))
    seatfolder.own_folder(ws, seat, graph.SYNTHESIS.name)
    seatfolder.put(ws, seat, graph.SYNTHESIS.name, ws.output_name(seat, graph.SYNTHESIS.name),
                   finalreport.body_of(earlier))


async def run(ctx: RunContext, phase: Phase) -> None:
    """Write the final report and stamp it; under the Claude Code plugin, hand it to the main
    session instead (handover.py). A synthesis that fails stops the run, keeping the reports."""
    ws, name = ctx.ws, phase.name
    source_phase, survivors = ctx.contributors()
    # Before the synthesis, which is told the score and the gaps.
    finalreport.record_completeness(ws, ctx.owner)
    if not ctx.synthesise:
        ctx.owner.update(lambda s: setattr(s, "synthesizer", MAIN_SESSION))
        events.emit(ws.root, name, f"handed to the main Claude session: "
                    f"{counted(len(survivors), 'report')} to synthesise")
        return
    chosen = ctx.owner.state.synthesizer
    pen = next((s for s in survivors if s.name == chosen), None) or \
        writer(ctx.options.synthesizer, ctx.seats() or survivors, survivors)
    if pen.name != ctx.options.synthesizer:
        events.emit(ws.root, name, f"{ctx.options.synthesizer} cannot synthesise; "
                    f"{pen.name} writes the final report instead")
    ctx.owner.update(lambda s: setattr(s, "synthesizer", pen.name))
    done = ctx.owner.state.agents[pen.name].phases.get(name)
    if not (done is not None and done.usable and ws.final_report.is_file()):
        events.emit(ws.root, name, f"started: {pen.name} synthesises "
                    f"{counted(len(survivors), 'report')}")
        record = (await run_parallel(ctx, [task(ctx, phase, pen, survivors, source_phase)]))[
            pen.name]
        if not record.usable:
            raise PhaseFailedError(f"{name} failed: {record.error}; the agents' reports "
                                   f"are kept in {ws.root}")
    def stamp() -> None:
        finalreport.stamp_final_report(ws, ctx.owner, [s.name for s in survivors],
                                       len(ctx.options.seats), pen.name)

    await evidence.refetch_earlier(ctx, name)  # --since: before changes.json is written
    stamp()
    await evidence.check_report(ctx, phase, pen, stamp)  # integrity.json, one repair turn


def gap_reports(ws: Workspace, state: RunState, contributors: list[Seat],
                folder: Path | None = None) -> list[dict[str, Any]]:
    """The gap-filling round, seat by seat (gaps.json): the gaps it was given, and its report
    (in `folder` when given, else where it was published) or why there is none."""
    out = []
    for name, batch in gapfill.load_plan(ws.root / GAPS).items():
        ap = state.agents[name].phases.get(graph.GAPFILL.name) if name in state.agents else None
        published = ws.published_output(name, graph.GAPFILL)
        usable = ap is not None and ap.usable and published.is_file()
        out.append({"name": name, "gaps": [f"{g.get('id')}: {g.get('text')}" for g in batch],
                    "path": str(folder / published.name if folder else published)
                    if usable else None,
                    "error": None if usable else (ap.error if ap and ap.error else "did not run")})
    return out


def counterpoints(ws: Workspace) -> str | None:
    """The antagonist's report, if it ran and wrote one."""
    path = ws.root / COUNTERPOINTS
    return str(path) if path.is_file() else None
