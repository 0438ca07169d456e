from __future__ import annotations

import pytest

from council.loop import MARKER, decide, final_status, has_marker


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


@pytest.mark.parametrize(("report", "complete"), [
    (f"# r\n\n{MARKER}\n", True),
    (f"# r\n  {MARKER}  ", True),  # blanks around it on its line
    (MARKER, True),
    (f"ends with {MARKER} on a line of its own", False),
    (f"# r\n```\n{MARKER}\n```\n", False),
    (f"# r\n~~~~md\n```\n{MARKER}\n```\n~~~~\n", False),  # ``` does not close a ~~~~ fence
    (f"# r\n````\n```\n{MARKER}\n````\n", False),  # nor does a shorter fence close a longer
    (f"# r\n```python\nx = 1\n```\n\n{MARKER}\n", True),  # after the block closed
    (f"# r\n```\nnever closed\n{MARKER}\n", False),
    (f"# r\n```\n{MARKER}\n```\n{MARKER}\n", True),
])
def test_the_marker_counts_alone_on_a_line_outside_code(report: str, complete: bool) -> None:
    assert has_marker(report) is complete
    assert (decide(report, 1, 10).why == "complete") is complete


def test_a_marker_quoted_at_the_end_of_a_huge_report() -> None:
    # A 20 MB report that only quotes the marker, at its very end: the whole text is read.
    report = ("word " * 20 + "\n") * 200_000 + f"```\n{MARKER}\n```\n"
    assert len(report) > 20_000_000
    assert not has_marker(report)
