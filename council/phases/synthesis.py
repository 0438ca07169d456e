"""Phase 3: one seat writes final-report.md from the contributors' reports."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from council import budget, claims, loop, prompts, regression
from council.config import Seat
from council.ledger import Usage, format_usage
from council.phases import RunContext, gapfill, run_parallel
from council.runner import SeatTask
from council.state import AgentPhase, RunState, load_state
from council.workspace import CLAIMS, COUNTERPOINTS, Workspace


def choose_synthesizer(preferred: str, seats: list[Seat], contributors: list[Seat]) -> Seat:
    """The configured synthesiser if it still works, else the first contributor."""
    names = {s.name for s in contributors}
    for seat in seats:
        if seat.name == preferred and seat.name in names:
            return seat
    return contributors[0]


def methodology(state: RunState, contributors: list[Seat], source_phase: str) -> list[str]:
    """Facts the final report must state: who took part, with what, and what failed."""
    lines = [f"{len(contributors)} of {len(state.agents)} agents contributed to this report "
             f"({', '.join(s.name for s in contributors)})."]
    for name, rec in state.agents.items():
        parts = []
        for phase, ap in rec.phases.items():
            if phase == "synthesis":
                continue
            what = f"{phase}: {ap.status}, {ap.iteration}/{ap.max_iterations} iterations"
            if ap.error:
                what += f" ({ap.error})"
            parts.append(what)
        model = rec.model or "its default model"
        used = sum((Usage.from_dict(ap.usage) for ap in rec.phases.values()), Usage())
        lines.append(f"{name} ({rec.cli}, {model}): " + ("; ".join(parts) or "did not run")
                     + f"; {format_usage(used)}")
    for name, rec in state.agents.items():
        dropped = (rec.phases["refinement"].dropped_sources
                   if "refinement" in rec.phases else None)
        if dropped:
            lines.append(f"{name} dropped {len(dropped)} source(s) between its research and "
                         f"refined reports: {', '.join(dropped[:5])}"
                         + (" …" if len(dropped) > 5 else ""))
        gone = rec.phases["refinement"].dropped_claims if "refinement" in rec.phases else None
        if gone:
            lines.append(f"{name} dropped {regression.total(gone)} cited claim(s) between its "
                         "research and refined reports (quoted above).")
    if state.budget_exhausted:
        lines.append(f"The run's budget cut the research short ({state.budget_exhausted}): "
                     "agents stopped after their current turn.")
    elif source_phase == "research":
        lines.append("Refinement did not run (fewer than two agents finished research); the "
                     "synthesis uses the research reports.")
    if state.completeness:
        done = state.completeness
        lines.append(f"Completeness score computed by council: {done['score']}/100 (confidence "
                     f"cap {done['cap']}: {done['cap_reason']}); "
                     + "; ".join(f"{k.replace('_', ' ')}: {v['detail']}"
                                 for k, v in done["signals"].items()) + ".")
    spent = budget.spent(state)
    lines.append(f"Spent so far: {format_usage(spent)}"
                 + (" (partly estimated from list prices)" if spent.estimated else "") + ".")
    return lines


def dropped_claims(state: RunState) -> list[dict[str, Any]]:
    """Each agent's cited claims that refinement lost: model-written text, so the prompt
    quotes them as untrusted material, apart from the facts council states."""
    return [{"name": name, "claims": ap.dropped_claims} for name, rec in state.agents.items()
            if (ap := rec.phases.get("refinement")) is not None and ap.dropped_claims]


def task(ctx: RunContext, synthesizer: Seat, contributors: list[Seat],
         source_phase: str) -> SeatTask:
    ws = ctx.ws
    state = load_state(ws.root)
    inputs_dir = ws.peers_dir(synthesizer.name, "synthesis")
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}
    counter = counterpoints(ws)
    if counter:  # read from the synthesiser's own folder, like the reports
        inputs[COUNTERPOINTS] = ws.root / COUNTERPOINTS
    gaps = gap_reports(ws, state, contributors, inputs_dir)
    for gap in gaps:
        if gap["path"]:
            inputs[Path(gap["path"]).name] = ws.published_output(gap["name"], "gapfill")
    listed = [{"name": s.name, "cli": s.cli, "model": s.model,
               "path": str(inputs_dir / ws.output_name(s.name, source_phase))}
              for s in contributors]
    prompt = prompts.render(
        "synthesis",
        topic=ctx.topic,
        mode=ctx.options.mode,
        contributors=listed,
        total_agents=len(state.agents),
        report_path=str(ws.working_output(synthesizer.name, "synthesis")),
        methodology=methodology(state, contributors, source_phase),
        dropped=dropped_claims(state),
        marker=loop.MARKER,
        verification=claims.load(ws.root / CLAIMS),
        counterpoints=str(inputs_dir / COUNTERPOINTS) if counter else None,
        gap_reports=gaps,
    )
    seat = replace(synthesizer, max_iterations=ctx.options.synthesis_max_iterations)
    pending = dict(ctx.to_run("synthesis", [synthesizer]))
    return SeatTask(seat=seat, phase="synthesis", prompt=prompt,
                    max_iterations=seat.max_iterations, inputs=inputs,
                    previous=pending.get(synthesizer))


async def run(ctx: RunContext, synthesizer: Seat, contributors: list[Seat],
              source_phase: str) -> AgentPhase:
    """Write the final report (or return the finished record of an earlier attempt)."""
    done = load_state(ctx.ws.root).agents[synthesizer.name].phases.get("synthesis")
    if done is not None and done.usable and ctx.ws.final_report.is_file():
        return done  # a resumed run that had finished its synthesis

    results = await run_parallel(ctx, [task(ctx, synthesizer, contributors, source_phase)])
    return results[synthesizer.name]


def gap_reports(ws: Workspace, state: RunState, contributors: list[Seat],
                folder: Path | None = None) -> list[dict[str, Any]]:
    """The gap-filling round, seat by seat: the gaps it was given, and its report (in
    `folder` when given, else where it was published) or why there is none."""
    plan = gapfill.assign(gapfill.gaps(claims.load(ws.root / CLAIMS)), contributors)
    out = []
    for name, batch in plan.items():
        ap = state.agents[name].phases.get("gapfill")
        published = ws.published_output(name, "gapfill")
        usable = ap is not None and ap.usable and published.is_file()
        out.append({"name": name, "gaps": [f"{g.id}: {g.text}" for g in batch],
                    "path": str(folder / published.name if folder else published)
                    if usable else None,
                    "error": None if usable else (ap.error if ap and ap.error else "did not run")})
    return out


def gap_fill_ran(state: RunState) -> bool:
    return any((ap := rec.phases.get("gapfill")) is not None and ap.usable
               for rec in state.agents.values())


def counterpoints(ws: Workspace) -> str | None:
    """The antagonist's report, if it ran and wrote one."""
    path = ws.root / COUNTERPOINTS
    return str(path) if path.is_file() else None
