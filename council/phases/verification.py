"""Phase between refinement and synthesis: one agent lists the reports' load-bearing claims
(claims-draft.json, validated, one retry) and, when the run has a scope, says which of its
sub-questions and dimensions the reports covered; then agents of other vendors check them against
their sources. The result, claims.json, tells the synthesis what to keep, soften and drop.

A failure here never stops the run: the phase is marked degraded and the synthesis goes on
without verdicts (and says so)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from council import events, prompts
from council.claims import (
    MAX_CLAIMS,
    Claim,
    Verdict,
    assign,
    load,
    summary,
    tally,
    validate_claims,
    validate_verdicts,
)
from council.config import Seat
from council.loop import read_report
from council.phases import RunContext, ask_json, run_parallel
from council.phases.synthesis import choose_synthesizer
from council.runner import SeatTask
from council.scope import SCOPE, Coverage, validate_coverage
from council.scope import load as load_scope
from council.state import atomic_write
from council.workspace import CLAIMS


async def run(ctx: RunContext, contributors: list[Seat], source_phase: str) -> dict[str, Any]:
    """Extract and verify; returns what claims.json holds."""
    ws = ctx.ws
    done = load(ws.root / CLAIMS)
    if done is not None:
        return done  # a resumed run that had finished verifying
    names = [s.name for s in contributors]
    extractor = choose_synthesizer(ctx.options.synthesizer, ctx.seats(),
                                   contributors)
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}

    found = load_scope(ws.root / SCOPE)
    candidates = [extractor, *(s for s in contributors if s.name != extractor.name)]

    def render(seat: Seat, error: str | None) -> tuple[str, dict[str, Path]]:
        folder = ws.peers_dir(seat.name, "claims")
        return prompts.render(
            "claims", topic=ctx.topic, agents=names, max_claims=MAX_CLAIMS, error=error,
            reports=[{"name": s.name, "path": str(folder / ws.output_name(s.name, source_phase))}
                     for s in contributors],
            scope=found, report_path=str(ws.working_output(seat.name, "claims"))), inputs

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

    answer, error = await ask_json(ctx, "claims", candidates, render, validate)
    if answer is None:
        return _write(ctx, {"status": "degraded", "error": error, "claims": []})
    claims, coverage, coverage_error = answer
    if coverage_error:
        events.emit(ws.root, "claims", f"coverage not judged: {coverage_error}")

    plan = assign(claims, {s.name: s.cli for s in contributors})
    events.emit(ws.root, "verification", f"started: {len(claims)} claims, checked by "
                + ", ".join(f"{seat} ({len(batch)})" for seat, batch in plan.items()))
    seats = {s.name: s for s in contributors}
    tasks = []
    for seat, batch in plan.items():
        prompt = prompts.render(
            "verify", topic=ctx.topic, claims=[c.to_dict() for c in batch],
            report_path=str(ws.working_output(seat, "verification")))
        tasks.append(SeatTask(replace(seats[seat], max_iterations=1), "verification", prompt, 1))
    results = await run_parallel(ctx, tasks)

    verdicts: dict[str, Verdict] = {}
    for seat, batch in plan.items():
        if not results[seat].usable:
            continue
        try:
            text = read_report(ws.published_output(seat, "verification")) or ""
            verdicts.update(validate_verdicts(json.loads(text), [c.id for c in batch], seat))
        except ValueError as exc:
            events.emit(ws.root, "verification", f"invalid verdicts file: {exc}", agent=seat)
    counts = tally(claims, verdicts)
    status = "ok" if counts["UNVERIFIED"] == 0 else "partial"
    data: dict[str, Any] = {"status": status, "tally": counts,
                            "claims": [_entry(c, verdicts.get(c.id)) for c in claims]}
    if coverage_error:
        data["coverage_error"] = coverage_error
    if found and coverage:
        data["questions"] = [
            {"id": qid, "question": text, "status": coverage.questions[qid][0],
             "claims": list(coverage.questions[qid][1])}
            for qid, text in found.questions.items()]
        data["dimensions"] = [
            {"id": did, "dimension": text, "covered": coverage.dimensions[did]}
            for did, text in found.dimensions.items()]
    return _write(ctx, data)


def _entry(claim: Claim, verdict: Verdict | None) -> dict[str, Any]:
    entry = claim.to_dict()
    entry.update(verdict=verdict.verdict if verdict else "UNVERIFIED",
                 evidence=verdict.evidence if verdict else "",
                 verifier=verdict.verifier if verdict else None)
    return entry


def _write(ctx: RunContext, data: dict[str, Any]) -> dict[str, Any]:
    atomic_write(ctx.ws.root / CLAIMS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    done = summary(data) if "tally" in data else f"degraded: {data.get('error')}"
    events.emit(ctx.ws.root, "verification", f"finished: {done}")
    return data
