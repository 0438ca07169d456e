"""After the gap fill, coverage is judged a second time, with the gap reports, and the claims
are listed anew (phases/claims.py): the report then states coverage before and after, and
verification checks the gap fill's findings like the rest."""

from __future__ import annotations

from council.graph import Phase
from council.phases import RunContext
from council.phases.claims import judge


async def run(ctx: RunContext, phase: Phase) -> None:
    await judge(ctx, phase, again=True)
