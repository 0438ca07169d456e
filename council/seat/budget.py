"""The run's budget (`--max-cost`, `--max-tokens`): once the ledger passes it, every running
loop, of every phase the graph declares as looping, is told to stop after its current turn
(the hooks stop asking for more), and the run goes on to synthesis with what it has; a seat
that starts after that gets one turn (phases.within_budget)."""

from __future__ import annotations

from council import graph
from council.evidence.ledger import over_budget, spent
from council.store import events, loop
from council.store.owner import StateOwner
from council.store.state import RunState
from council.store.workspace import Workspace


def check(ws: Workspace, owner: StateOwner) -> str | None:
    """Stop spending if the run is over its budget; returns why, or None."""

    def change(state: RunState) -> tuple[str | None, bool, list[str]]:
        seats = list(state.agents)
        if state.budget_exhausted:
            return state.budget_exhausted, False, seats
        why = over_budget(spent(state), state.options.max_cost, state.options.max_tokens)
        if why:
            state.budget_exhausted = why
        return why, why is not None, seats

    why, newly, seats = owner.update(change)
    if why:
        # Every looping phase stops after its current turn, as the graph declares them.
        loops = [ws.loop_file(seat, phase) for seat in seats
                 for phase in graph.GRAPH if phase.loops]
        for loop_file in loops:
            if not loop_file.exists():
                continue
            try:
                loop.deactivate(loop_file)
            except (OSError, ValueError):
                continue
    if newly:
        events.emit(ws.root, "run", f"budget reached: {why}; agents stop after their "
                    "current turn and the run goes on to synthesis")
    return why
