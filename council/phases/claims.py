"""The council judges its own coverage, twice: one agent lists the reports' load-bearing claims
(claims-draft.json, validated, one retry) and, when the run has a scope, says which
sub-questions and dimensions the reports answer. council writes the result to claims.json.

`claims` judges the refined reports; its gaps feed the gap fill. `recheck` judges again once
the gap reports are in, lists the claims anew (so the gap fill's findings are cross-checked
too) and keeps the first judgement under "before", so the report can state coverage before
and after. Verification then checks the listed claims. A judgement that fails never stops the
run: the first leaves claims.json `degraded` (nothing to verify), a failed recheck keeps the
first judgement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from council import events, prompts
from council.claims import MAX_CLAIMS, Claim, coverage_summary, load, validate_claims
from council.config import Seat
from council.phases import RunContext, ask_json
from council.phases.gapfill import load_plan
from council.phases.synthesis import choose_synthesizer
from council.scope import SCOPE, Coverage, validate_coverage
from council.scope import load as load_scope
from council.state import atomic_write
from council.workspace import CLAIMS, GAPS

EXTRACTED = "extracted"  # claims.json's status between a judgement and the verification


async def run(ctx: RunContext) -> None:
    await judge(ctx, "claims")


async def judge(ctx: RunContext, phase: str) -> dict[str, Any]:
    """Write claims.json from the contributors' reports (and, for `recheck`, the gap
    reports); returns what it holds."""
    ws = ctx.ws
    earlier = load(ws.root / CLAIMS)
    if earlier is not None and earlier.get("judged_by", "claims") == phase:
        return earlier  # a resumed run that had finished this judgement
    source_phase, contributors = ctx.contributors()
    names = [s.name for s in contributors]
    extractor = choose_synthesizer(ctx.options.synthesizer, ctx.seats(), contributors)
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}
    gaps = _gap_reports(ctx) if phase == "recheck" else []
    inputs.update({path.name: path for _, path in gaps})
    found = load_scope(ws.root / SCOPE)
    candidates = [extractor, *(s for s in contributors if s.name != extractor.name)]

    def render(seat: Seat, error: str | None) -> tuple[str, dict[str, Path]]:
        folder = ws.peers_dir(seat.name, phase)
        return prompts.render(
            "claims", topic=ctx.topic, agents=names, max_claims=MAX_CLAIMS, error=error,
            reports=[{"name": s.name, "path": str(folder / ws.output_name(s.name, source_phase))}
                     for s in contributors],
            gap_reports=[{"name": name, "path": str(folder / path.name)} for name, path in gaps],
            scope=found, report_path=str(ws.working_output(seat.name, phase))), inputs

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

    events.emit(ws.root, phase, f"started: {extractor.name} lists the claims"
                + (" and judges coverage" if found else "")
                + (f", with {len(gaps)} gap report(s)" if gaps else ""))
    answer, error = await ask_json(ctx, phase, candidates, render, validate)
    if answer is None:
        if earlier is not None and phase == "recheck":  # keep the first judgement
            events.emit(ws.root, phase, f"failed: {error}; the first judgement stands")
            return _write(ctx, {**earlier, "recheck_error": error}, phase, quiet=True)
        return _write(ctx, {"status": "degraded", "error": error, "claims": []}, phase)
    claims, coverage, coverage_error = answer
    if coverage_error:
        events.emit(ws.root, phase, f"coverage not judged: {coverage_error}")
    data: dict[str, Any] = {"status": EXTRACTED, "judged_by": phase,
                            "claims": [{**c.to_dict(), "verdict": "UNVERIFIED", "evidence": "",
                                        "verifier": None} for c in claims]}
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
    if phase == "recheck" and earlier is not None and "questions" in earlier:
        data["before"] = {"questions": earlier["questions"],
                          "dimensions": earlier.get("dimensions", [])}
    return _write(ctx, data, phase)


def _gap_reports(ctx: RunContext) -> list[tuple[str, Path]]:
    """The gap fill's published reports: (seat, path)."""
    ws = ctx.ws
    return [(name, path) for name in load_plan(ws.root / GAPS)
            if (path := ws.published_output(name, "gapfill")).is_file()]


def _write(ctx: RunContext, data: dict[str, Any], phase: str,
           quiet: bool = False) -> dict[str, Any]:
    atomic_write(ctx.ws.root / CLAIMS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if not quiet:
        done = (f"degraded: {data.get('error')}" if data.get("status") == "degraded" else
                f"{len(data['claims'])} claims" + (
                    f"; {coverage_summary(data)}" if "questions" in data else ""))
        events.emit(ctx.ws.root, phase, f"finished: {done}")
    return data
