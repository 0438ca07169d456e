"""A sample's council run: reuse, resume or start afresh; where it lives; its wall time."""

from __future__ import annotations

from pathlib import Path

import pytest

from council.evaluation import results
from council.store.state import RunState


def state(phase: str) -> RunState:
    return RunState(id="20261122-031441-88dba5", topic="Q?", created_at="x", options={},
                    phase=phase)


@pytest.mark.parametrize(("phase", "supervised", "action"), [
    (None, False, results.NEW),
    ("failed", False, results.NEW),
    ("done", False, results.REUSE),
    ("done", True, results.RESUME),  # still held: an earlier evaluation's run, mid-ending
    ("cancelled", False, results.RESUME),
    ("research", False, results.RESUME),
    ("synthesis", True, results.RESUME),
])
def test_what_to_do_with_the_latest_run(phase: str | None, supervised: bool,
                                        action: str) -> None:
    assert results.decide(state(phase) if phase else None, supervised) == action


def test_a_questions_id_never_leaves_its_folder(tmp_path: Path) -> None:
    hostile = results.sample_folder(tmp_path, "council", "../../etc/passwd\n")
    assert hostile.parent == tmp_path / "council"
    assert hostile.name.startswith("etc-passwd-")
    assert results.sample_folder(tmp_path, "c", "a/b") != results.sample_folder(tmp_path, "c",
                                                                               "a-b")
    assert results.sample_folder(tmp_path, "c", "...").name.startswith("q-")


def test_wall_time_adds_up_over_the_invocations_that_ran_it(tmp_path: Path) -> None:
    results.add_wall(tmp_path, "run-a", 10.0)
    results.add_wall(tmp_path, "run-a", 2.5)
    results.add_wall(tmp_path, "run-b", -3)
    assert results.walls(tmp_path) == {"run-a": 12.5, "run-b": 0.0}
    (tmp_path / results.WALL_FILE).write_text("garbage")
    assert results.walls(tmp_path) == {}
