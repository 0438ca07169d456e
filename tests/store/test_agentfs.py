"""agentfs: what an agent leaves is read without following links, regular files only,
bounded; writes into its folder never follow a link."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from council.store import agentfs


def test_a_plain_file_is_read_up_to_the_bound(tmp_path: Path) -> None:
    (tmp_path / "r.md").write_bytes(b"x" * 3000)
    assert agentfs.read(tmp_path / "r.md", 100) == b"x" * 100
    assert agentfs.read(tmp_path / "r.md", 10_000) == b"x" * 3000
    assert agentfs.size(tmp_path / "r.md") == 3000


def test_a_tail_is_the_last_bytes_never_before_its_start(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"0123456789")
    assert agentfs.tail(path, 4) == (b"6789", True)
    assert agentfs.tail(path, 4, start=8) == (b"89", False)
    assert agentfs.tail(path, 100, start=3) == (b"3456789", False)
    (tmp_path / "link").symlink_to(path)
    with pytest.raises(agentfs.UnsafeFile):
        agentfs.tail(tmp_path / "link", 4)


def test_json_past_its_bound_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    path.write_text('{"claims": ["' + "x" * 100 + '"]}')
    assert agentfs.read_json(path) == {"claims": ["x" * 100]}
    with pytest.raises(ValueError, match="larger than 50 bytes"):
        agentfs.read_json(path, 50)
    (tmp_path / "link.json").symlink_to(path)
    with pytest.raises(agentfs.UnsafeFile):
        agentfs.read_json(tmp_path / "link.json")
    (tmp_path / "bad.md").write_bytes(b"caf\xe9")
    assert agentfs.read_text(tmp_path / "bad.md", 100) == "caf\ufffd"


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        agentfs.read(tmp_path / "none.md", 10)


def test_a_link_is_refused_and_named(tmp_path: Path) -> None:
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    (tmp_path / "r.md").symlink_to(secret)
    with pytest.raises(agentfs.UnsafeFile, match=f"a link to {secret}"):
        agentfs.read(tmp_path / "r.md", 100)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "r.md")
    with pytest.raises(agentfs.UnsafeFile, match="a FIFO"):
        agentfs.read(tmp_path / "r.md", 100)


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "theirs").write_text("user's file")
    os.link(tmp_path / "theirs", tmp_path / "r.md")
    with pytest.raises(agentfs.UnsafeFile, match="2 hard links"):
        agentfs.read(tmp_path / "r.md", 100)


def test_a_sparse_terabyte_is_read_only_to_the_bound(tmp_path: Path) -> None:
    with open(tmp_path / "r.md", "wb") as handle:
        handle.truncate(1 << 40)
    assert agentfs.size(tmp_path / "r.md") == 1 << 40
    assert len(agentfs.read(tmp_path / "r.md", 4096)) == 4096


def test_write_replaces_a_planted_link_and_leaves_its_target(tmp_path: Path) -> None:
    outside = tmp_path / "authorized_keys"
    outside.write_text("the user's keys\n")
    seat = tmp_path / "seat"
    seat.mkdir()
    (seat / "research-prompt.md").symlink_to(outside)
    agentfs.write(seat, "research-prompt.md", "the prompt")
    assert outside.read_text() == "the user's keys\n"
    assert not (seat / "research-prompt.md").is_symlink()
    assert (seat / "research-prompt.md").read_text() == "the prompt"


def test_write_refuses_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    seat = tmp_path / "seat"
    seat.mkdir()
    (seat / ".gemini").symlink_to(home)
    with pytest.raises(agentfs.UnsafeFile, match="not a folder"):
        agentfs.write(seat, ".gemini/settings.json", "{}")
    assert list(home.iterdir()) == []


def test_write_makes_missing_folders(tmp_path: Path) -> None:
    agentfs.write(tmp_path, "a/b/c.txt", b"data")
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"data"
    assert not [p for p in (tmp_path / "a" / "b").iterdir() if p.name.startswith(".")]


def test_fresh_dir_removes_a_link_not_its_target(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    (home / "keep").write_text("keep")
    seat = tmp_path / "seat"
    seat.mkdir()
    (seat / "refinement-inputs").symlink_to(home)
    what = agentfs.fresh_dir(seat, "refinement-inputs")
    assert what == f"a link to {home}"
    assert (home / "keep").read_text() == "keep"
    assert (seat / "refinement-inputs").is_dir()
    assert not (seat / "refinement-inputs").is_symlink()


def test_fresh_dir_empties_a_real_folder_without_entering_links(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    (home / "keep").write_text("keep")
    inputs = tmp_path / "seat" / "inputs"
    inputs.mkdir(parents=True)
    (inputs / "old.md").write_text("old")
    (inputs / "link").symlink_to(home)
    assert agentfs.fresh_dir(tmp_path / "seat", "inputs") == "a folder"
    assert list(inputs.iterdir()) == []
    assert (home / "keep").exists()


def test_remove_says_nothing_stood_there(tmp_path: Path) -> None:
    assert agentfs.remove(tmp_path, "none") is None


def test_write_takes_chunks_and_a_failing_source_replaces_nothing(tmp_path: Path) -> None:
    seat = tmp_path / "seat"
    seat.mkdir()
    agentfs.write(seat, "log.jsonl", iter([b"one\n", b"two\n"]))
    assert (seat / "log.jsonl").read_bytes() == b"one\ntwo\n"

    def broken() -> Iterator[bytes]:
        yield b"half"
        raise OSError(5, "Input/output error")

    with pytest.raises(OSError, match="Input/output"):
        agentfs.write(seat, "log.jsonl", broken())
    assert (seat / "log.jsonl").read_bytes() == b"one\ntwo\n"
    assert sorted(p.name for p in seat.iterdir()) == ["log.jsonl"]
