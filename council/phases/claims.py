"""The council judges its own coverage, twice: one agent lists the reports' load-bearing claims
(claims-draft.json, validated, with the retries graph.py allows) and, when the run has a scope,
says which sub-questions and dimensions the reports answer. council writes the result to
claims.json.

The first judgement (this phase) judges the reports the phases after the research build on;
its gaps feed the gap fill. The second (phases/recheck.py) judges again once the gap reports
are in, lists the claims anew (so the gap fill's findings are cross-checked too) and keeps the
first judgement under "before", so the report can state coverage before and after.
Verification then checks the listed claims. A judgement that fails never stops the run: the
first leaves claims.json `degraded` (nothing to verify), a failed second one keeps the first
judgement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from council import graph, prompts
from council.domains import Policy
from council.evidence.claimcheck import (
    KEY,
    MAX_CLAIMS,
    Claim,
    coverage_summary,
    load,
    mark_outside,
    validate_claims,
)
from council.evidence.coverage import SCOPE, Coverage, Scope, validate_coverage
from council.evidence.coverage import load as load_scope
from council.graph import Phase
from council.phases import RunContext, ask_json, listed, reports
from council.phases.chooser import writer
from council.phases.gapfill import published
from council.runoptions import Seat
from council.store import events
from council.store.disk import atomic_write
from council.store.workspace import CLAIMS

EXTRACTED = "extracted"  # claims.json's status between a judgement and the verification
JUDGED_BY = "judged_by"  # claims.json's key: the phase whose judgement it holds


async def run(ctx: RunContext, phase: Phase) -> None:
    await judge(ctx, phase)


async def judge(ctx: RunContext, phase: Phase, again: bool = False) -> dict[str, Any]:
    """Write claims.json from the contributors' reports (and, judging `again`, the gap
    reports, keeping the first judgement); returns what it holds."""
    ws, name = ctx.ws, phase.name
    earlier = load(ws.root / CLAIMS)
    if earlier is not None and earlier.get(JUDGED_BY, graph.CLAIMS.name) == name:
        return earlier  # a resumed run that had finished this judgement
    source_phase, contributors = ctx.contributors()
    names = [s.name for s in contributors]
    extractor = writer(ctx.options.synthesizer, ctx.seats(), contributors)
    inputs = reports(ws, source_phase, contributors)
    gaps = published(ctx.ws) if again else []
    inputs.update({path.name: path for _, path in gaps})
    found = load_scope(ws.root / SCOPE)
    candidates = [extractor, *(s for s in contributors if s.name != extractor.name)]
    seeded = ctx.earlier()  # a --since run: the earlier run's claims, listed again by id

    def render(seat: Seat, error: str | None) -> tuple[str, dict[str, Path]]:
        folder = ws.peers_dir(seat.name, phase)
        return prompts.render(
            phase.prompt, topic=ctx.topic, agents=names, max_claims=MAX_CLAIMS, error=error,
            reports=listed(ws, source_phase, contributors, folder),
            gap_reports=[{"name": seat, "path": str(folder / path.name)} for seat, path in gaps],
            scope=found, earlier=seeded,
            report_path=str(ws.working_output(seat.name, phase))), inputs

    def validate(data: Any, last: bool) -> tuple[list[Claim], Coverage | None, str | None]:
        claims = validate_claims(data, names)
        if not found:
            return claims, None, None
        try:
            return claims, validate_coverage(data, found, {c.id for c in claims}), None
        except (ValueError, TypeError) as exc:
            if not last:
                raise
            # Good claims are worth verifying even when the coverage judgement is not.
            return claims, None, f"invalid coverage judgement: {exc}"

    events.emit(ws.root, name, f"started: {extractor.name} lists the claims"
                + (" and judges coverage" if found else "")
                + (f", with {graph.counted(len(gaps), 'gap report')}" if gaps else ""))
    answer, error = await ask_json(ctx, phase, candidates, render, validate)
    if answer is None:
        if earlier is not None and again:  # keep the first judgement
            events.emit(ws.root, name, f"failed: {error}; the first judgement stands")
            return _write(ctx, {**earlier, "recheck_error": error}, name, quiet=True)
        return _write(ctx, {"status": "degraded", "error": error, KEY: []}, name)
    claims, coverage, coverage_error = answer
    if coverage_error:
        events.emit(ws.root, name, f"coverage not judged: {coverage_error}")
    data = _judgement(name, claims, found, coverage, coverage_error)
    if again and earlier is not None and "questions" in earlier:
        data["before"] = {"questions": earlier["questions"],
                          "dimensions": earlier.get("dimensions", [])}
    return _write(ctx, data, name)


def _judgement(name: str, claims: list[Claim], found: Scope | None,
               coverage: Coverage | None, coverage_error: str | None) -> dict[str, Any]:
    """claims.json as the phase `name` judged it: its claims, not verified yet, and the
    coverage of the scope's sub-questions and dimensions, or why it was not judged."""
    data: dict[str, Any] = {"status": EXTRACTED, JUDGED_BY: name,
                            KEY: [{**c.to_dict(), "verdict": "UNVERIFIED", "evidence": "",
                                   "verifier": None} for c in claims]}
    if coverage_error:
        data["coverage_error"] = coverage_error
    if found and coverage:
        data["questions"] = [
            {"id": qid, "question": text, "status": coverage.questions[qid][0],
             KEY: list(coverage.questions[qid][1])}
            for qid, text in found.questions.items()]
        data["dimensions"] = [
            {"id": did, "dimension": text, "covered": coverage.dimensions[did]}
            for did, text in found.dimensions.items()]
    return data


def _write(ctx: RunContext, data: dict[str, Any], phase: str,
           quiet: bool = False) -> dict[str, Any]:
    mark_outside(data, Policy.of(ctx.options.sources))
    atomic_write(ctx.ws.root / CLAIMS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if not quiet:
        done = (f"degraded: {data.get('error')}" if data.get("status") == "degraded" else
                graph.counted(len(data[KEY]), "claim") + (
                    f"; {coverage_summary(data)}" if "questions" in data else ""))
        events.emit(ctx.ws.root, phase, f"finished: {done}")
    return data
