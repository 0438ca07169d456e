"""One seat chooser, the role its parameter (chooser.py): the synthesiser (WRITER), which the
scope and the claims' list are asked of first, and its OPPONENT (the dissent, the antagonist).
Pure."""

from __future__ import annotations

from council.phases.chooser import Role, choose, writer
from council.runoptions import Seat

CLAUDE, CODEX, GEMINI = Seat("claude", "claude"), Seat("codex", "codex"), Seat("gemini", "gemini")
CLAUDE2 = Seat("claude2", "claude")


def test_the_writer_is_the_synthesiser_while_it_has_a_report() -> None:
    seats = [CLAUDE, CODEX, GEMINI]
    assert writer("codex", seats, seats) is CODEX
    # The synthesiser's research failed: the first seat with a report writes.
    assert writer("claude", seats, [GEMINI, CODEX]) is GEMINI
    assert writer("nobody", seats, [CODEX, GEMINI]) is CODEX
    assert choose(Role.WRITER, "claude", seats, []) is None


def test_the_opponent_is_of_another_cli_than_the_writer() -> None:
    seats = [CLAUDE, CLAUDE2, CODEX]
    assert choose(Role.OPPONENT, "claude", seats, seats) is CODEX
    # No other CLI: another seat; a council of one: that seat.
    assert choose(Role.OPPONENT, "claude", [CLAUDE, CLAUDE2], [CLAUDE, CLAUDE2]) is CLAUDE2
    assert choose(Role.OPPONENT, "claude", [CLAUDE], [CLAUDE]) is CLAUDE
    # The writer is looked for among the seats still in the run, even one without a report
    # (the antagonist's candidates are the contributors).
    assert choose(Role.OPPONENT, "codex", seats, [CLAUDE, CODEX]) is CLAUDE
    # A writer no longer in the run: the first candidate stands for it.
    assert choose(Role.OPPONENT, "gemini", [CLAUDE, CODEX], [CLAUDE, CODEX]) is CODEX
    assert choose(Role.OPPONENT, "claude", seats, []) is None


def test_a_named_seat_is_taken_as_named_or_not_at_all() -> None:
    seats = [CLAUDE, CODEX, GEMINI]
    assert choose(Role.OPPONENT, "claude", seats, seats, named="claude") is CLAUDE
    assert choose(Role.OPPONENT, "claude", seats, [CLAUDE, CODEX], named="gemini") is None
