"""`council adopt`: take over a run folder council did not make on this machine, after
seeing what its seats would run (run/recovery.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from council.commands import TEXT
from council.run import recovery
from council.store import provenance
from council.store.workspace import Workspace, find_run


@dataclass(frozen=True)
class Adoption:
    run_id: str
    own: bool  # already council's own: nothing to adopt
    ws: Workspace = field(metadata=TEXT)

    def review(self) -> list[str]:
        """What adopting it takes on: its topic, phase and each seat's CLI, model,
        extra_args, env and fallback."""
        return recovery.adoption(self.ws)


def adoption(run_id: str, base: Path) -> Adoption:
    ws = find_run(run_id, base)
    return Adoption(ws.id, provenance.is_own(ws.root), ws)


def adopt(adoption: Adoption) -> str:
    """Record the run as council's own: it may be resumed, cancelled and written into."""
    return recovery.adopt(adoption.ws)
