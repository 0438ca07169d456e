"""council adopt: a run folder council did not make becomes its own only once a person has
seen what its seats would run."""

from __future__ import annotations

from pathlib import Path

from conftest import Council, answer_on_a_terminal

from council.runoptions import RunOptions, Seat
from council.store import provenance
from council.store.state import RunState, create_state

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
