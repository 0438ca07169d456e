"""Verification, beside the antagonist: agents of other vendors check the claims the last
coverage judgement listed (phases/claims.py) against their sources. The result, claims.json
with verdicts, tells the synthesis what to keep, soften and drop. A verifier that fails leaves
its claims UNVERIFIED (status partial); the synthesis goes on and says so."""

from __future__ import annotations

import json
from typing import Any

from council import prompts
from council.domains import Policy
from council.evidence.claimcheck import (
    KEY,
    Claim,
    Verdict,
    assign,
    listed,
    load,
    mark_outside,
    summary,
    tally,
    validate_verdicts,
)
from council.graph import Phase, counted
from council.phases import RunContext, evidence, run_parallel, seat_task
from council.phases.claims import EXTRACTED
from council.store import events
from council.store.disk import atomic_write
from council.store.loop import read_report
from council.store.workspace import CLAIMS


async def run(ctx: RunContext, phase: Phase) -> None:
    """Check the claims claims.json lists (written by the last coverage judgement), each by
    an agent of another vendor than the one that made it (runoptions.Seat.vendor: a
    self-hosted seat's is its model's family), else another seat; adds the verdicts and the
    tally."""
    ws, name = ctx.ws, phase.name
    data = load(ws.root / CLAIMS)
    if data is None or data.get("status") != EXTRACTED:
        return  # nothing listed (degraded), or a resumed run that had finished verifying
    _, contributors = ctx.contributors()
    claims = [Claim(c["id"], c["agent"], c["claim"], tuple(c.get("sources", [])))
              for c in listed(data)]
    plan = assign(claims, {s.name: s.vendor for s in contributors})
    await evidence.ensure(ctx, name)  # the sources' text, the same for every verifier
    events.emit(ws.root, name, f"started: {counted(len(claims), 'claim')}, checked by "
                + ", ".join(f"{seat} ({len(batch)})" for seat, batch in plan.items()))
    seats = {s.name: s for s in contributors}
    tasks = []
    for seat, batch in plan.items():
        prompt = prompts.render(
            phase.prompt, topic=ctx.topic, claims=[c.to_dict() for c in batch],
            stored=evidence.shown(ws, [c.to_dict() for c in batch]),
            report_path=str(ws.working_output(seat, phase)))
        tasks.append(seat_task(phase, seats[seat], prompt))
    results = await run_parallel(ctx, tasks)
    verdicts: dict[str, Verdict] = {}
    for seat, batch in plan.items():
        if not results[seat].usable:
            continue
        try:
            text = read_report(ws.published_output(seat, phase)) or ""
            verdicts.update(validate_verdicts(json.loads(text), [c.id for c in batch], seat))
        except ValueError as exc:
            events.emit(ws.root, name, f"invalid verdicts file: {exc}", agent=seat)
    counts = tally(claims, verdicts)
    data.update({"status": "ok" if counts["UNVERIFIED"] == 0 else "partial", "tally": counts,
                 KEY: [_entry(c, verdicts.get(c.id)) for c in claims]})
    mark_outside(data, Policy.of(ctx.options.sources))
    atomic_write(ws.root / CLAIMS, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    events.emit(ws.root, name, f"finished: {summary(data)}")


def _entry(claim: Claim, verdict: Verdict | None) -> dict[str, Any]:
    entry = claim.to_dict()
    entry.update(verdict=verdict.verdict if verdict else "UNVERIFIED",
                 evidence=verdict.evidence if verdict else "",
                 verifier=verdict.verifier if verdict else None)
    return entry
