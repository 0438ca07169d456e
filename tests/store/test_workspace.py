"""A run's folder: ids, the latest run, its mode, research/.gitignore, the dissent folder."""

from __future__ import annotations

import calendar
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from council.config import SEAT_NAME
from council.errors import RunNotFoundError, UsageError
from council.store import gitignore, provenance
from council.store.runlock import RunLock
from council.store.workspace import (
    LATEST,
    LATEST_SLACK_S,
    Workspace,
    active_runs,
    check_run_id,
    create_workspace,
    find_run,
    latest_id,
    list_runs,
)

ID = "20261122-031441-88dba5"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
MADE = calendar.timegm(time.strptime(ID[:15], "%Y%m%d-%H%M%S"))


def fake_run(base: Path, run_id: str) -> Path:
    """A run folder as a cloned repository could ship one."""
    root = base / run_id
    root.mkdir(parents=True)
    (root / "state.yaml").write_text(f"id: {run_id}\n")
    return root


@pytest.mark.parametrize("bad", [f"{ID}\n", f" {ID}", f"{ID}/..", "../x", "", f"{ID}0"])
def test_a_run_id_must_match_whole(bad: str) -> None:
    with pytest.raises(UsageError, match="not a run id"):
        check_run_id(bad)
    assert check_run_id(ID) == ID


@pytest.mark.parametrize(("target", "written", "expected"), [
    (ID, MADE + 0.4, ID),
    (ID, MADE + LATEST_SLACK_S, ID),
    (ID, MADE + LATEST_SLACK_S + 1, None),  # a checkout made the link later
    (ID, MADE - LATEST_SLACK_S - 1, None),
    (f"{ID}\n", MADE, None),
    (f"../{ID}", MADE, None),
    (f"/tmp/{ID}", MADE, None),
    ("29991399-999999-aaaaaa", MADE, None),  # the pattern, but no time
])
def test_latest_names_a_bare_id_written_when_its_run_was_made(
        target: str, written: float, expected: str | None) -> None:
    assert latest_id(target, written) == expected


def test_the_latest_run_is_the_one_this_machine_made_not_the_highest_id(
        tmp_path: Path) -> None:
    base = tmp_path / "research"
    ours = create_workspace(base)
    fake_run(base, "29991231-235959-ffffff")  # shipped in a cloned repository
    (ours.root / "state.yaml").write_text(f"id: {ours.id}\n")
    assert [ws.id for ws in list_runs(base)][-1] == "29991231-235959-ffffff"
    assert find_run(None, base) == ours


def test_a_shipped_latest_link_is_not_trusted(tmp_path: Path) -> None:
    base = tmp_path / "research"
    fake_run(base, "29991231-235959-ffffff")
    (base / LATEST).symlink_to("29991231-235959-ffffff")  # as a checkout makes it: now
    with pytest.raises(RunNotFoundError, match=r"names no run this machine made.*council list"):
        find_run(None, base)


@pytest.mark.parametrize("target", ["../elsewhere", "/tmp", "29991231-235959-ffffff\n"])
def test_latest_is_only_a_bare_id(tmp_path: Path, target: str) -> None:
    base = tmp_path / "research"
    fake_run(base, "20260101-000000-aaaaaa")
    (base / LATEST).symlink_to(target)
    with pytest.raises(RunNotFoundError, match="give a run id"):
        find_run(None, base)


def test_without_latest_the_run_a_supervisor_holds_is_the_latest(tmp_path: Path) -> None:
    base = tmp_path / "research"
    ours = fake_run(base, "20260101-000000-aaaaaa")
    provenance.record(ours)
    fake_run(base, "29991231-235959-ffffff")
    with pytest.raises(RunNotFoundError, match="no run is active"):
        find_run(None, base)
    with RunLock(ours):
        assert active_runs(base) == [Workspace(ours)]
        assert find_run(None, base) == Workspace(ours)


def test_no_runs_at_all(tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError, match="no council runs"):
        find_run(None, tmp_path / "research")


def test_a_linked_run_folder_is_no_run(tmp_path: Path) -> None:
    base = tmp_path / "research"
    elsewhere = fake_run(tmp_path / "elsewhere", ID)
    base.mkdir()
    (base / ID).symlink_to(elsewhere)
    assert list_runs(base) == []
    with pytest.raises(RunNotFoundError, match="is a link to"):
        find_run(ID, base)


def test_a_run_folder_is_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        ws = create_workspace(tmp_path / "research")
    finally:
        os.umask(old)
    for folder in (ws.root, ws.root / "logs", ws.root / "agents", ws.root / "loops"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert os.readlink(ws.root.parent / LATEST) == ws.id


def test_a_new_research_folder_ignores_everything_in_it(tmp_path: Path) -> None:
    base = tmp_path / "research"
    create_workspace(base)
    assert (base / ".gitignore").read_text() == gitignore.IGNORE_ALL
    assert "*" in gitignore.IGNORE_ALL.splitlines()


def test_a_users_own_gitignore_is_kept(tmp_path: Path) -> None:
    base = tmp_path / "research"
    base.mkdir()
    (base / ".gitignore").write_text("mine\n")
    create_workspace(base)
    assert (base / ".gitignore").read_text() == "mine\n"


def test_a_link_at_gitignore_is_not_followed(tmp_path: Path) -> None:
    base = tmp_path / "research"
    base.mkdir()
    target = tmp_path / "victim"
    (base / ".gitignore").symlink_to(target)
    create_workspace(base)
    assert not target.exists()


@needs_git
def test_a_research_folder_of_the_users_gets_councils_names_only(tmp_path: Path) -> None:
    base = tmp_path / "research"
    base.mkdir()
    (base / "notes.md").write_text("mine")
    ws = create_workspace(base)
    (ws.root / "state.yaml").write_text("id: x\n")
    assert (base / ".gitignore").read_text() == gitignore.IGNORE_COUNCIL
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert ignored(tmp_path, f"research/{ws.id}/state.yaml", "research/latest")
    assert not ignored(tmp_path, "research/notes.md")


@needs_git
def test_git_ignores_a_run_and_the_gitignore_itself(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path / "research")
    (ws.root / "state.yaml").write_text("id: x\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert ignored(tmp_path, f"research/{ws.id}/state.yaml", "research/.gitignore")


def ignored(repo: Path, *paths: str) -> bool:
    """Whether git ignores every one of `paths` in `repo`."""
    return all(subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", path],
                              check=False).returncode == 0 for path in paths)


@pytest.mark.parametrize(("names", "everything"), [
    ([], True),
    ([ID, "latest", ".latest-x", ".sessions", "crash-20260101T000000Z-1.log"], True),
    ([ID, "notes.md"], False),
    ([f"{ID}-copy"], False),
])
def test_which_gitignore(names: list[str], everything: bool) -> None:
    assert (gitignore.content(names) == gitignore.IGNORE_ALL) is everything


def test_the_dissent_folder_sits_beside_the_research_folder(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / ID)
    research, dissent = ws.work_dir("codex", "research"), ws.work_dir("codex", "dissent")
    assert research == ws.seat_dir("codex")
    assert dissent.parent == research.parent == ws.root / "agents"
    assert not dissent.is_relative_to(research)
    assert ws.working_output("codex", "dissent") == dissent / "dissent.md"
    assert ws.peers_dir("codex", "dissent").parent == dissent
    # no seat can be named like a dissent folder
    assert not SEAT_NAME.match(dissent.name)
    assert ws.loop_file("codex", "dissent") != ws.loop_file("codex", "research")
