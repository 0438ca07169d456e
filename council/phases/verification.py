"""Verification, beside the antagonist: agents of other vendors check the claims the last
coverage judgement listed (phases/claims.py) against their sources. The result, claims.json
with verdicts, tells the synthesis what to keep, soften and drop. A verifier that fails leaves
its claims UNVERIFIED (status partial); the synthesis goes on and says so."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from council import events, prompts
from council.claims import Claim, Verdict, assign, load, summary, tally, validate_verdicts
from council.loop import read_report
from council.phases import RunContext, run_parallel
from council.phases.claims import EXTRACTED
from council.runner import SeatTask
from council.state import atomic_write
from council.workspace import CLAIMS


async def run(ctx: RunContext) -> None:
    """Check the claims claims.json lists (written by the claims or recheck phase), each by
    an agent of another vendor than the one that made it; adds the verdicts and the tally."""
    ws = ctx.ws
    data = load(ws.root / CLAIMS)
    if data is None or data.get("status") != EXTRACTED:
        return  # nothing listed (degraded), or a resumed run that had finished verifying
    _, contributors = ctx.contributors()
    claims = [Claim(c["id"], c["agent"], c["claim"], tuple(c.get("sources", [])))
              for c in data["claims"]]
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
    data.update(status="ok" if counts["UNVERIFIED"] == 0 else "partial", tally=counts,
                claims=[_entry(c, verdicts.get(c.id)) for c in claims])
    atomic_write(ws.root / CLAIMS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    events.emit(ws.root, "verification", f"finished: {summary(data)}")


def _entry(claim: Claim, verdict: Verdict | None) -> dict[str, Any]:
    entry = claim.to_dict()
    entry.update(verdict=verdict.verdict if verdict else "UNVERIFIED",
                 evidence=verdict.evidence if verdict else "",
                 verifier=verdict.verifier if verdict else None)
    return entry
