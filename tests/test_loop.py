from __future__ import annotations

import pytest

from council.loop import MARKER, decide, final_status


def test_continue_until_cap() -> None:
    d = decide("# draft", 1, 3)
    assert (d.proceed, d.iteration, d.why) == (True, 2, "continue")
    d = decide("# draft", 3, 3)
    assert (d.proceed, d.iteration, d.why) == (False, 3, "capped")


def test_marker_ends_the_loop_before_the_cap() -> None:
    d = decide(f"# done\n{MARKER}\n", 1, 10)
    assert (d.proceed, d.why) == (False, "complete")


def test_missing_report_keeps_asking_until_cap() -> None:
    assert decide(None, 1, 2).proceed
    assert not decide(None, 2, 2).proceed


@pytest.mark.parametrize(
    ("report", "iteration", "cap", "status"),
    [
        (None, 1, 3, "failed"),
        ("   \n", 3, 3, "failed"),
        (f"x\n{MARKER}", 1, 3, "complete"),
        ("x", 3, 3, "capped"),
        ("x", 1, 3, "stopped"),
    ],
)
def test_final_status(report: str | None, iteration: int, cap: int, status: str) -> None:
    assert final_status(report=report, iteration=iteration, max_iterations=cap) == status
