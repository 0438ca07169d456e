"""Which seat takes a phase that one seat runs: one chooser, the role its parameter.

- WRITER: the pen of the council's answer, the configured synthesiser while it still has a
  report to build on, else the first candidate. It writes the synthesis, and the scope and
  the claims' list are asked of it first.
- OPPONENT: the case against that answer (the dissent, the antagonist), from a candidate of
  another CLI than the writer's (the opposition should not come from the pen that writes
  the answer), else from another seat, else from the first. A seat named for it (--dissent
  AGENT) is taken as named, or nobody when it has left the run.

Pure: the phases pass in the seats still in the run and the candidates."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from council.runoptions import Seat


class Role(Enum):
    WRITER = "writer"
    OPPONENT = "opponent"


def choose(role: Role, synthesizer: str, seats: Sequence[Seat], candidates: Sequence[Seat],
           named: str | None = None) -> Seat | None:
    """The seat of `candidates` that takes `role`; `seats` are the seats still in the run,
    among which the writer (`synthesizer`) is looked for. None when there is no candidate,
    or the `named` seat is not one."""
    if named is not None:
        return next((s for s in candidates if s.name == named), None)
    if not candidates:
        return None
    if role is Role.WRITER:
        names = {s.name for s in candidates}
        return next((s for s in seats if s.name == synthesizer and s.name in names),
                    candidates[0])
    writer = next((s for s in seats if s.name == synthesizer), candidates[0])
    return next((s for s in candidates if s.vendor != writer.vendor), None) or \
        next((s for s in candidates if s.name != writer.name), candidates[0])


def writer(synthesizer: str, seats: Sequence[Seat], candidates: Sequence[Seat]) -> Seat:
    """The WRITER among `candidates`, which must not be empty."""
    chosen = choose(Role.WRITER, synthesizer, seats, candidates)
    if chosen is None:
        raise ValueError("no seat to write")
    return chosen
