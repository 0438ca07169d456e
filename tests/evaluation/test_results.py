"""A sample's council run: reuse, resume or start afresh; where it lives; its wall time."""

from __future__ import annotations

from pathlib import Path

import pytest

from council.evaluation import results
from council.runoptions import RunOptions
from council.store.state import RunState


def state(phase: str) -> RunState:
    return RunState(id="20261122-031441-88dba5", topic="Q?", created_at="x",
                    options=RunOptions(seats=()),
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


def test_only_a_run_council_made_here_is_reused(isolated: Path) -> None:
    """A log folder from elsewhere may hold a "done" run of the same question whose final
    report is a link to a private key: it is neither reused nor read."""
    from council.store.state import create_state
    from council.store.workspace import create_workspace

    research = isolated / "research"
    planted = research / "29991231-235959-ffffff"
    planted.mkdir(parents=True)
    create_state(planted, RunState(id=planted.name, topic="q", created_at="x",
                                   options=RunOptions(seats=()),
                                   phase="done"))
    (planted / "final-report.md").symlink_to(isolated / "home" / "id_ed25519")
    assert results.latest(research, "q") is None
    ours = create_workspace(research)
    create_state(ours.root, RunState(id=ours.id, topic="q", created_at="x",
                                     options=RunOptions(seats=())))
    found = results.latest(research, "q")
    assert found is not None
    assert found[0] == ours
    (ours.root / "final-report.md").symlink_to(isolated / "home" / "id_ed25519")
    (isolated / "home" / "id_ed25519").write_text("PRIVATE KEY")
    assert results._report(ours.root / "final-report.md") == ""
