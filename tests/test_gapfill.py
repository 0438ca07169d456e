"""Which gaps the gap-filling round takes, and who takes them (phases/gapfill.py, pure)."""

from __future__ import annotations

from typing import Any

from council.phases.gapfill import MAX_GAPS, assign, gaps
from council.runoptions import Seat


def facts(questions: list[tuple[str, list[str]]], covered: list[bool],
          verdicts: list[str]) -> dict[str, Any]:
    return {
        "status": "ok",
        "claims": [{"id": f"c{i}", "verdict": v} for i, v in enumerate(verdicts, 1)],
        "questions": [{"id": f"q{i}", "question": f"Q{i}?", "status": st, "claims": cs}
                      for i, (st, cs) in enumerate(questions, 1)],
        "dimensions": [{"id": f"d{i}", "dimension": f"D{i}", "covered": c}
                       for i, c in enumerate(covered, 1)],
    }


def test_open_and_refuted_first_then_uncovered_then_partial() -> None:
    data = facts([("partial", ["c1"]), ("answered", ["c1"]), ("answered", ["c2"]),
                  ("open", [])], [True, False], ["SUPPORTED", "CONTRADICTED"])
    found = gaps(data)
    assert [(g.id, g.why) for g in found] == [
        ("q3", "its evidence did not survive verification"), ("q4", "left open"),
        ("d2", "no report covered it")]
    assert len(found) == MAX_GAPS  # q1 (partial) did not make the cut


def test_nothing_to_fill() -> None:
    assert gaps(None) == []
    assert gaps({"status": "degraded", "claims": []}) == []
    assert gaps(facts([("answered", ["c1"])], [True], ["SUPPORTED"])) == []


def test_one_gap_per_agent_in_turn() -> None:
    data = facts([("open", []), ("open", []), ("open", [])], [], [])
    seats = [Seat("a", "claude"), Seat("b", "codex")]
    plan = assign(gaps(data), seats)
    assert {seat: [g.id for g in batch] for seat, batch in plan.items()} == {
        "a": ["q1", "q3"], "b": ["q2"]}


def test_an_unconfirmed_answer_is_named_as_such() -> None:
    data = facts([("answered", ["c1"]), ("answered", [])], [], ["UNVERIFIED"])
    assert [g.why for g in gaps(data)] == ["its answer was not confirmed by verification"] * 2
