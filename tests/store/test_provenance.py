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

from council.errors import CouncilError, RunNotFoundError, UsageError
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


def _remade(root: Path, keep: Path) -> None:
    """`root` removed and made again at its path from a copy (`keep`) of what it held, as
    an unpacked tarball of that very run would be; on ext4 the new folder usually gets the
    old one's inode. When this file system gave another, the record is pointed at the new
    folder's device and inode, as if it had not."""
    record = json.loads(provenance.registry_file().read_text())
    entry = record["runs"][root.name]
    # Held elsewhere, the seal's inode is not handed out again: a copy made within the same
    # clock tick as the seal would otherwise match it by chance (no attacker's copy is).
    os.link(root / provenance.SEAL, keep.parent / "held")
    shutil.rmtree(root)
    root.mkdir(0o700)
    shutil.copytree(keep, root, symlinks=True, dirs_exist_ok=True)
    info = os.lstat(root)
    if (info.st_dev, info.st_ino) != (entry["dev"], entry["ino"]):
        entry["dev"], entry["ino"] = info.st_dev, info.st_ino
        provenance.registry_file().write_text(json.dumps(record))


def test_a_run_removed_and_made_again_at_its_path_is_foreign(isolated: Path) -> None:
    """Issue 43, item 13: the record vouches for the folder council made, not for its path,
    device and inode, which a folder made again there can have too (ext4 hands the inode
    out again). Every byte of the copy is the run's own, its seal included."""
    ws = create_workspace(isolated / "research")
    create_state(ws.root, RunState(id=ws.id, topic="ours", created_at="x",
                                   options=RunOptions(seats=())))
    keep = isolated / "tarball" / ws.id
    shutil.copytree(ws.root, keep, symlinks=True)
    assert provenance.is_own(ws.root)
    _remade(ws.root, keep)
    now, then = provenance.Identity.of(ws.root), provenance.load()[ws.id]
    assert now is not None
    assert (now.path, now.dev, now.ino) == (then.path, then.dev, then.ino)
    assert not provenance.is_own(ws.root)
    assert own_runs(isolated / "research") == []
    with pytest.raises(provenance.ForeignRunError):
        find_run(ws.id, isolated / "research", act="resume")
    provenance.record(ws.root)  # `council adopt`: the person takes it back
    assert provenance.is_own(ws.root)


def test_the_seal_cannot_be_copied_in_or_touched(isolated: Path) -> None:
    """The seal is a file made when the run is recorded: its inode and change time are the
    record's, and nothing a copy does can set them; a seal changed since is no seal."""
    ws = create_workspace(isolated / "research")
    seal = ws.root / provenance.SEAL
    assert stat.S_ISREG(os.lstat(seal).st_mode)
    assert os.lstat(seal).st_mode & 0o077 == 0
    text = seal.read_bytes()
    copy = ws.root / "copied"
    copy.write_bytes(text)
    copy.replace(seal)  # the same words, another file
    assert not provenance.is_own(ws.root)
    provenance.record(ws.root)
    assert provenance.is_own(ws.root)
    record = json.loads(provenance.registry_file().read_text())
    record["runs"][ws.id]["seal"]["ctime_ns"] -= 1  # the time it was made is the record's
    provenance.registry_file().write_text(json.dumps(record))
    assert not provenance.is_own(ws.root)
    provenance.record(ws.root)
    assert provenance.is_own(ws.root)
    seal.unlink()
    seal.symlink_to(isolated / "elsewhere")
    assert not provenance.is_own(ws.root)
    provenance.record(ws.root)  # a link at the name is replaced, never followed
    assert not (isolated / "elsewhere").exists()
    assert provenance.is_own(ws.root)


def test_a_record_from_before_the_seal_still_names_its_folder(isolated: Path) -> None:
    """A run recorded by an older council (no seal in its record) is judged as then: by its
    real path, device and inode."""
    ws = create_workspace(isolated / "research")
    record = json.loads(provenance.registry_file().read_text())
    for entry in record["runs"].values():
        entry.pop("seal")
    record["version"] = 1
    provenance.registry_file().write_text(json.dumps(record))
    (ws.root / provenance.SEAL).unlink()
    assert provenance.is_own(ws.root)


def own_run(isolated: Path) -> Path:
    ws = create_workspace(isolated / "research")
    create_state(ws.root, RunState(id=ws.id, topic="ours", created_at="x",
                                   options=RunOptions(seats=())))
    assert provenance.is_own(ws.root)
    return ws.root


@pytest.mark.parametrize("writable", [stat.S_IWOTH, stat.S_IWGRP], ids=["others", "group"])
def test_a_record_in_a_folder_others_may_write_is_no_record(
        isolated: Path, capsys: pytest.CaptureFixture[str], writable: int) -> None:
    """Issue 43: runs.json in a folder another user may write vouches for nothing (they
    could add their planted run to it): every run is foreign, one line says why, and no run
    is recorded there."""
    root = own_run(isolated)
    folder = provenance.registry_file().parent
    folder.chmod(0o700 | writable)
    capsys.readouterr()
    assert not provenance.is_own(root)
    assert not provenance.is_own(root)
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one warning, once
    assert err.startswith(f"council: warning: {folder} is writable by others")
    assert f"chmod go-w {folder}" in err
    with pytest.raises(CouncilError, match=r"cannot record council's runs: .* writable by "
                                           r"others"):
        create_workspace(isolated / "research")
    folder.chmod(0o700)
    assert provenance.is_own(root)  # the fix restores the record


def test_a_record_in_another_users_folder_is_no_record(
        isolated: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = own_run(isolated)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(root).st_uid + 1)  # another user
    assert not provenance.is_own(root)
    assert "is not a folder of yours" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_a_record_another_user_owns_is_no_record(
        isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = own_run(isolated)
    os.chown(provenance.registry_file(), 65534, 65534)
    assert not provenance.is_own(root)
    err = capsys.readouterr().err
    assert f"{provenance.registry_file()} is owned by uid 65534, not you" in err
