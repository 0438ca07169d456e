"""council adopt: a run folder council did not make becomes its own only once a person has
seen what its seats would run."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
from conftest import Council, answer_on_a_terminal

from council.run.recovery import adopt
from council.runoptions import RunOptions, Seat
from council.store import provenance
from council.store.state import AgentPhase, AgentRecord, RunState, create_state, load_state
from council.store.workspace import Workspace

RUN = "20261122-031441-88dba5"
QUESTION = f"Adopt run {RUN}? [y/N]: ".encode()


def moved_run(council: Council) -> Path:
    """A run the user moved here themselves, with a seat whose extra_args reach a CLI."""
    root = council.research / RUN
    root.mkdir(parents=True)
    seats = (Seat("codex", "codex", model="gpt-5.5",
                  extra_args=("-c", "mcp_servers.x.command=sh"), env=("GITHUB_TOKEN",)),
             Seat("claude", "claude", model="opus"))
    create_state(root, RunState(id=RUN, topic="moved\x1b[2J here", created_at="x",
                                options=RunOptions(seats=seats), phase="research"))
    return root


def test_adopt_needs_a_person_at_a_terminal(council: Council) -> None:
    root = moved_run(council)
    result = council.run("adopt", RUN)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "asks a person" in result.stderr
    assert "--yes" not in result.stderr  # a model that ran it is not told the way around
    assert not provenance.is_own(root)
    assert council.run("resume", RUN).returncode == 2  # still refused


def test_adopt_shows_what_the_seats_would_run_then_asks(council: Council) -> None:
    root = moved_run(council)
    code, shown = answer_on_a_terminal(council, ("adopt", RUN), QUESTION, b"n\n")
    assert code == 2, shown
    assert '  codex: cli codex; model "gpt-5.5"; extra_args ["-c", ' \
        '"mcp_servers.x.command=sh"]; env ["GITHUB_TOKEN"]' in shown
    assert "\x1b[2J" not in shown  # the folder's text reaches the terminal quoted
    assert not provenance.is_own(root)
    code, shown = answer_on_a_terminal(council, ("adopt", RUN), QUESTION, b"y\n")
    assert code == 0, shown
    assert f"adopted run {RUN}" in shown
    assert provenance.is_own(root)
    assert "already council's own" in council.run("adopt", RUN).stdout


def test_adopt_yes_is_for_the_users_own_scripts(council: Council) -> None:
    root = moved_run(council)
    result = council.run("adopt", RUN, "--yes")
    assert result.returncode == 0, result.stderr
    assert "extra_args" in result.stdout
    assert provenance.is_own(root)


def planted_run(council: Council, proc: psutil.Popen) -> Path:
    """A run folder someone else made, whose state says an agent of it is running as `proc`
    (a process of the user's, started after the boot, its start time read off /proc)."""
    root = council.research / RUN
    root.mkdir(parents=True)
    phase = AgentPhase(status="running", pid=proc.pid, pid_started=proc.create_time())
    create_state(root, RunState(
        id=RUN, topic="planted", created_at="2026-11-22T03:14:41Z", phase="research",
        options=RunOptions(seats=(Seat("codex", "codex"),)),
        agents={"codex": AgentRecord(cli="codex", phases={"research": phase})}))
    return root


def test_an_adopted_run_never_sweeps_the_processes_its_author_recorded(
        council: Council) -> None:
    """issue 43 item 14: the pids an adopted run's state names were recorded by whoever made
    the folder, elsewhere: none is an agent council started here, whatever its start time.
    Adopting drops them (progress.log says so), and `council cancel` stops nothing of the
    user's."""
    users = psutil.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                         start_new_session=True)
    try:
        root = planted_run(council, users)
        said = adopt(Workspace(root))
        result = council.run("cancel", RUN)
        assert result.returncode == 0, result.stderr
        assert users.is_running()
        assert users.status() != psutil.STATUS_ZOMBIE
        assert "1 agent process its state names" in said
        assert load_state(root).agents["codex"].phases["research"].pid is None
        assert load_state(root).phase == "cancelled"
        assert f"codex (pid {users.pid})" in (root / "progress.log").read_text()
    finally:
        users.kill()
        users.wait()


def test_cancel_of_an_adopted_run_whose_log_is_a_link(council: Council) -> None:
    """issue 43 item 14: a run folder adopted with its progress.log a link to a file of the
    user's: `council cancel` cancels it, writes nothing through the link, and says so in
    its one line (no internal error, no crash log)."""
    root = moved_run(council)
    adopt(Workspace(root))
    target = council.root / "bashrc"
    target.write_text("# the user's own\n")
    (root / "progress.log").unlink(missing_ok=True)
    (root / "progress.log").symlink_to(target)
    result = council.run("cancel", RUN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "internal error" not in result.stdout + result.stderr
    assert target.read_text() == "# the user's own\n"
    assert load_state(root).phase == "cancelled"
    assert f"cancelled run {RUN}" in result.stdout
    assert "progress.log is a link" in result.stdout + result.stderr
    assert not list(council.root.rglob("crash*"))
