from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from council.store.loop import (
    MARKER,
    REPORT_BOUND,
    decide,
    final_status,
    read_report,
    report_bound,
    report_facts,
    without_mark,
)

Facts = Callable[[str | None], tuple[bool, bool]]


@pytest.fixture
def facts(tmp_path: Path) -> Facts:
    """(has text, complete) of a report with this text, read as the hook and runner read it
    (None: no report file at all)."""
    def read(text: str | None) -> tuple[bool, bool]:
        path = tmp_path / "report.md"
        path.unlink(missing_ok=True)
        if text is not None:
            path.write_text(text)
        return report_facts(path)

    return read


def test_continue_until_cap(facts: Facts) -> None:
    draft = facts("# draft")[1]
    d = decide(draft, 1, 3)
    assert (d.proceed, d.iteration, d.why) == (True, 2, "continue")
    d = decide(draft, 3, 3)
    assert (d.proceed, d.iteration, d.why) == (False, 3, "capped")


def test_marker_ends_the_loop_before_the_cap(facts: Facts) -> None:
    d = decide(facts(f"# done\n{MARKER}\n")[1], 1, 10)
    assert (d.proceed, d.why) == (False, "complete")


def test_missing_report_keeps_asking_until_cap(facts: Facts) -> None:
    assert decide(facts(None)[1], 1, 2).proceed
    assert not decide(facts(None)[1], 2, 2).proceed


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
def test_final_status(facts: Facts, report: str | None, iteration: int, cap: int,
                      status: str) -> None:
    assert final_status(*facts(report), iteration, cap) == status


MARKED = [
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
]


@pytest.mark.parametrize(("report", "complete"), MARKED)
def test_the_marker_counts_alone_on_a_line_outside_code(facts: Facts, report: str,
                                                        complete: bool) -> None:
    assert facts(report)[1] is complete
    assert (decide(facts(report)[1], 1, 10).why == "complete") is complete


@pytest.mark.parametrize(("report", "complete"), MARKED)
def test_the_published_text_loses_only_the_lines_that_mark_it_complete(
        facts: Facts, report: str, complete: bool) -> None:
    published = without_mark(report)
    assert facts(published)[1] is False  # nothing left that would end a loop
    assert (published != report) is complete  # a quoted marker is the agent's text: kept
    assert published.count(MARKER) == report.count(MARKER) - complete


def test_a_marker_quoted_at_the_end_of_a_huge_report(facts: Facts) -> None:
    # A 20 MB report that only quotes the marker, at its very end: the whole text is read.
    report = ("word " * 20 + "\n") * 200_000 + f"```\n{MARKER}\n```\n"
    assert len(report) > 20_000_000
    assert facts(report) == (True, False)


@pytest.mark.timeout(30)
def test_a_report_that_is_no_plain_file_is_no_text_and_not_complete(tmp_path: Path) -> None:
    """What the hook and the runner read after a turn is what an agent left: a link (to a
    finished report elsewhere, or a secret), a FIFO (which would block an open for ever) or
    a flood past the bound is judged empty, never followed or waited on."""
    done = tmp_path / "elsewhere.md"
    done.write_text(f"# r\n\n{MARKER}\n")
    (tmp_path / "link.md").symlink_to(done)
    os.mkfifo(tmp_path / "fifo.md")
    assert report_facts(done) == (True, True)
    assert report_facts(tmp_path / "link.md") == (False, False)
    assert report_facts(tmp_path / "fifo.md") == (False, False)
    assert report_facts(done, bound=8) == (False, False)
    assert read_report(tmp_path / "link.md") is None
    assert read_report(tmp_path / "fifo.md") is None
    assert read_report(done) == f"# r\n\n{MARKER}\n"


def test_the_report_bound_is_the_cap_where_it_is_larger() -> None:
    assert report_bound(None) == REPORT_BOUND == 64 << 20
    assert report_bound(2_000_000) == REPORT_BOUND
    assert report_bound(100 << 20) == 100 << 20


def test_a_turns_line_is_written_before_a_deactivate_can_stop_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43, item 15: test_a_budget_reached_in_the_first_turns_… once saw `iteration 2/6`
    logged below "budget reached": on a0243e7 end_turn decided under the loop file's lock
    but wrote its line after releasing it, so the budget's deactivate and its line could
    come between. Now the line is written while the lock is held: at that moment no other
    process can take it (a deactivate waits)."""
    import fcntl

    from council.store import loop

    loop_file = tmp_path / "research.loop"
    loop.write_loop(loop_file, 1, 6, True)
    held: list[bool] = []

    def emit(run_dir: object, phase: str, message: str, agent: str) -> None:
        with open(f"{loop_file}.lock", "a") as other:  # another open file: as another process
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(True)
            else:
                held.append(False)

    monkeypatch.setattr("council.store.progress.emit", emit)
    decision = loop.end_turn(loop_file, tmp_path / "report.md", tmp_path, "research", "claude")
    assert (decision.proceed, decision.iteration) == (True, 2)
    assert held == [True]
    assert loop.deactivate(loop_file) == 2
    stopped = loop.end_turn(loop_file, tmp_path / "report.md", tmp_path, "research", "claude")
    assert (stopped.why, held) == ("inactive", [True])  # nothing logged once inactive
