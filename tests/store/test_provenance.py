"""Which run folders are council's: those it made on this machine, and no other."""

from __future__ import annotations

import calendar
import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from council.errors import RunNotFoundError, UsageError
from council.runoptions import RunOptions
from council.store import progress, provenance
from council.store.agentfs import UnsafeFile
from council.store.state import RunState, create_state
from council.store.workspace import (
    create_workspace,
    ensure_base,
    find_run,
    latest_run,
    list_runs,
    own_runs,
)


def planted(base: Path, run_id: str = "20261122-031441-88dba5") -> Path:
    """A run folder as a tarball or a clone brings it: council's files, not council's run."""
    root = base / run_id
    root.mkdir(parents=True)
    create_state(root, RunState(id=run_id, topic="planted", created_at="2026-11-22T03:14:41Z",
                                options=RunOptions(seats=())))
    return root


def test_a_run_council_makes_is_its_own_and_a_planted_one_is_not(isolated: Path) -> None:
    base = isolated / "research"
    ws = create_workspace(base)
    create_state(ws.root, RunState(id=ws.id, topic="ours", created_at="x",
                                   options=RunOptions(seats=())))
    shipped = planted(base)
    assert provenance.is_own(ws.root)
    assert not provenance.is_own(shipped)
    assert [w.root for w in list_runs(base)] == sorted([ws.root, shipped])
    assert [w.root for w in own_runs(base)] == [ws.root]
    record = json.loads(provenance.registry_file().read_text())
    assert record["runs"][ws.id]["path"] == os.path.realpath(ws.root)
    assert provenance.registry_file().is_relative_to(isolated / "home" / ".local" / "state")


def test_a_copy_of_a_run_is_another_folder(isolated: Path) -> None:
    """The record names a folder (device and inode, and its real path), not an id: a copy
    of one of this machine's runs, say from a shared eval folder, is foreign."""
    ws = create_workspace(isolated / "research")
    copy = isolated / "shared" / ws.id
    shutil.copytree(ws.root, copy, symlinks=True)
    assert not provenance.is_own(copy)
    assert provenance.is_own(ws.root)


def test_a_moved_run_is_foreign_until_adopted(isolated: Path) -> None:
    ws = create_workspace(isolated / "research")
    create_state(ws.root, RunState(id=ws.id, topic="ours", created_at="x",
                                   options=RunOptions(seats=())))
    moved = isolated / "elsewhere" / ws.id
    moved.parent.mkdir()
    ws.root.rename(moved)
    assert not provenance.is_own(moved)
    provenance.record(moved)
    assert provenance.is_own(moved)


def test_acting_on_a_foreign_run_is_refused_in_one_line_reading_is_not(isolated: Path) -> None:
    base = isolated / "research"
    shipped = planted(base)
    assert find_run(shipped.name, base).root == shipped  # status and watch read it
    with pytest.raises(provenance.ForeignRunError) as caught:
        find_run(shipped.name, base, act="cancel")
    line = str(caught.value)
    assert "\n" not in line
    assert str(shipped) in line
    assert "will not cancel it" in line
    assert f"council adopt {shipped.name}" in line
    assert caught.value.exit_code == 2
    assert "council adopt" not in caught.value.for_model()  # a model is given no command


def test_latest_names_only_a_run_of_council_s_own(isolated: Path) -> None:
    """A tarball restores research/latest's mtime to its run's id: that is no proof."""
    base = isolated / "research"
    shipped = planted(base)
    os.symlink(shipped.name, base / "latest")
    made = calendar.timegm(time.strptime(shipped.name[:15], "%Y%m%d-%H%M%S"))
    os.utime(base / "latest", (made, made), follow_symlinks=False)
    assert latest_run(base) is None
    with pytest.raises(RunNotFoundError, match="names no run this machine made"):
        find_run(None, base)


def test_a_record_council_cannot_read_makes_every_run_foreign(isolated: Path) -> None:
    ws = create_workspace(isolated / "research")
    provenance.registry_file().write_text("not json")
    assert not provenance.is_own(ws.root)
    provenance.registry_file().unlink()
    os.symlink("/dev/zero", provenance.registry_file())  # never read through a link
    assert not provenance.is_own(ws.root)


def test_research_as_a_link_is_refused(isolated: Path) -> None:
    real = isolated / "somewhere"
    real.mkdir()
    (isolated / "research").symlink_to(real)
    for act in (lambda: ensure_base(isolated / "research"),
                lambda: create_workspace(isolated / "research"),
                lambda: find_run(None, isolated / "research"),
                lambda: list_runs(isolated / "research")):
        with pytest.raises(UsageError, match=r"is a link to .*does not follow it"):
            act()
    assert list(real.iterdir()) == []


def test_the_base_probe_writes_through_no_planted_link(isolated: Path) -> None:
    base = isolated / "research"
    base.mkdir()
    victim = isolated / "victim"
    victim.write_text("keep me")
    for pid in (os.getpid(), 1):  # the old probe's name was .council-probe-<pid>
        (base / f".council-probe-{pid}").symlink_to(victim)
    ensure_base(base)
    assert victim.read_text() == "keep me"


def test_progress_lines_never_go_through_a_link_or_wait_on_a_fifo(isolated: Path) -> None:
    run = isolated / "run"
    run.mkdir()
    bashrc = isolated / ".bashrc"
    bashrc.write_text("# the user's\n")
    (run / progress.PROGRESS_FILE).symlink_to(bashrc)
    with pytest.raises(UnsafeFile, match="a link to"):
        progress.emit(run, "run", "x; touch /tmp/pwned; #", agent="codex")
    assert bashrc.read_text() == "# the user's\n"
    (run / progress.PROGRESS_FILE).unlink()
    os.mkfifo(run / progress.PROGRESS_FILE)
    with pytest.raises(UnsafeFile, match="a FIFO"):  # at once: no reader is waited for
        progress.emit(run, "run", "hello")
    os.unlink(run / progress.PROGRESS_FILE)
    (run / progress.EVENTS_FILE).symlink_to(bashrc)
    with pytest.raises(UnsafeFile):
        progress.emit(run, "run", "hello")
    assert bashrc.read_text() == "# the user's\n"
    assert stat.S_ISREG(os.lstat(run / progress.PROGRESS_FILE).st_mode)
