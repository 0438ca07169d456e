"""The store (council/store/disk.py): one way to replace a file of council's own, one way
to lock."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from council.store import disk, state

PACKAGE = Path(__file__).parents[2] / "council"


def test_a_file_is_replaced_whole_with_no_temp_file_left(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = run / "claims.json"
    target.write_text("old\n")
    disk.atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in run.iterdir()) == ["claims.json"]


def test_a_writer_that_fails_half_way_leaves_the_old_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = run / "report.md"
    target.write_text("the published report\n")

    def chunks() -> Iterator[bytes]:
        yield b"half of the new"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        disk.atomic_write(target, chunks(), redacted=True)
    assert target.read_text() == "the published report\n"
    assert sorted(p.name for p in run.iterdir()) == ["report.md"]


def test_text_is_redacted_and_bytes_must_be_already(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNCIL_TEST_API_KEY", "s3cr3t-value-0123456789")
    target = tmp_path / "sources.json"
    disk.atomic_write(target, "key: s3cr3t-value-0123456789\n")
    assert target.read_text() == "key: REDACTED:COUNCIL_TEST_API_KEY\n"
    disk.atomic_write(target, "already: s3cr3t-value-0123456789\n", redacted=True)
    assert "s3cr3t" in target.read_text()  # the caller said it had redacted it (state.yaml)
    with pytest.raises(TypeError, match="redacted"):
        disk.atomic_write(target, b"raw bytes")


def test_a_link_at_the_name_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("the user's file\n")
    target = tmp_path / "final-report.md"
    target.symlink_to(victim)
    disk.atomic_write(target, "the report\n")
    assert victim.read_text() == "the user's file\n"
    assert not target.is_symlink()
    assert target.read_text() == "the report\n"


def test_a_lock_is_exclusive_until_its_block_ends(tmp_path: Path) -> None:
    guard = tmp_path / ".state.lock"
    with disk.locked(guard):
        fd = os.open(guard, os.O_RDWR)
        try:
            assert not disk.lock(fd, wait=False)
            assert not disk.lock(fd, shared=True, wait=False)
        finally:
            os.close(fd)
    fd = os.open(guard, os.O_RDWR)
    try:
        assert disk.lock(fd, wait=False)
    finally:
        os.close(fd)


def test_a_folder_can_be_the_lock(tmp_path: Path) -> None:
    with disk.locked(tmp_path, folder=True):
        fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert not disk.lock(fd, wait=False)
        finally:
            os.close(fd)


def test_a_link_at_a_locks_name_is_refused_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "x.lock").symlink_to(elsewhere)  # dangling: O_CREAT would make `elsewhere`
    with pytest.raises(OSError), disk.locked(tmp_path / "x.lock"):
        pass
    assert not elsewhere.exists()
    (tmp_path / "real").mkdir()
    (tmp_path / "folder").symlink_to(tmp_path / "real")
    with pytest.raises(OSError), disk.locked(tmp_path / "folder", folder=True):
        pass


def test_the_states_lock_is_the_stores_and_its_writer_the_one_helper(tmp_path: Path) -> None:
    """state.py keeps no writer of its own (every module imports disk.atomic_write), and its
    file lock is a store lock."""
    assert not hasattr(state, "atomic_write")
    with state.locked(tmp_path):
        fd = os.open(tmp_path / ".state.lock", os.O_RDWR)
        try:
            assert not disk.lock(fd, wait=False)
        finally:
            os.close(fd)
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if "import atomic_write" in p.read_text(encoding="utf-8")
                   and "from council.store.disk import atomic_write" not in p.read_text(
                       encoding="utf-8"))
    assert users == []


# Who may still call flock or rename a temp file over a file by hand, and why.
OWN_WRITERS = {
    "store/disk.py": "the store itself",
    "store/agentfs.py": "the writer for agents' folders, a different trust boundary",
    "store/workspace.py": "research/latest is a link, replaced by renaming a new link over it",
}


def test_every_module_that_locks_or_replaces_a_file_uses_the_store() -> None:
    """And each exception is still needed: drop one from OWN_WRITERS once it is moved."""
    by_hand = re.compile(r"fcntl\.flock|mkstemp|replace\(tmp\b")
    found = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if by_hand.search(p.read_text(encoding="utf-8")))
    assert found == sorted(OWN_WRITERS)
