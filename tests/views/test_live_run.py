"""`council run` in a terminal, read as the person who typed it reads it (tmux): the run's
table in place while it runs, its share done and time left, and after Ctrl-C the terminal
given back with a line that says how to resume. Piped output is tests/test_cli.py's."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Iterator

import pytest
from conftest import Council
from realcli.helpers import Terminal

pytestmark = pytest.mark.slow

SEATS = ("claude", "codex", "gemini")
DONE = re.compile(r"overall\s+\S+\s+(\d+)% done, (~\d+ min|under a minute) left \(rough\)")


@pytest.fixture
def terminal(council: Council) -> Iterator[Callable[[], Terminal]]:
    """Opens a shell in a private tmux server, in the test's folder, with the fake CLIs and
    the environment as scripted so far."""
    opened: list[Terminal] = []

    def open_one() -> Terminal:
        env = {**council.env, "TERM": "xterm-256color", "PS1": "$ "}
        opened.append(Terminal("live", ["bash", "--norc", "--noprofile"], cwd=council.root,
                               env=env))
        return opened[-1]

    try:
        yield open_one
    finally:
        for term in opened:
            term.close()


def council_run(*args: str) -> str:
    return shlex.join([sys.executable, "-m", "council", "run", "--test", *args])


def cursor_shown(term: Terminal) -> bool:
    return term._tmux("display", "-p", "-t", "main", "#{cursor_flag}").strip() == "1"


def seat_line(screen: str, seat: str) -> str:
    return next(line for line in screen.splitlines() if line.startswith(f"│ {seat} "))


def test_a_run_on_a_terminal_shows_its_progress_in_place_and_ctrl_c_names_resume(
        council: Council, terminal: Callable[[], Terminal]) -> None:
    # The research takes two short turns; the refinement hangs until Ctrl-C.
    council.script({**{f"{cli}:research": {"delay": 1} for cli in SEATS},
                    **{f"{cli}:refinement": {"hang": True} for cli in SEATS}})
    term = terminal()
    term.type(council_run("why is the sky blue"))

    # The plan gives the cost and the time, each expected and at most.
    assert term.shows(r"time: ~\d+ min expected", 30), term.screen
    assert re.search(r"cost: ~\$[\d.]+ expected, at most", " ".join(term.screen.split())), \
        term.screen
    # During the research: every seat's row says it is running, and the run's share and
    # time left are under the phases' bars.
    assert term.shows(r"(?s)(research +│ running.*){3}.*overall.*left \(rough\)", 30), \
        term.screen
    first = term.screen
    for seat in SEATS:
        assert re.search(r"│ research +│ running +│ [12]/2", seat_line(first, seat)), first
    early = DONE.search(first)
    assert early is not None, first
    assert not cursor_shown(term)  # rich's live display holds the terminal
    # The same place on the screen now shows the refinement: the table was redrawn, not
    # printed again below.
    assert term.shows(r"(?s)(refinement +│ running.*){3}", 30), term.screen
    later = term.screen
    assert later.count("┃ agent") == 1, later
    for seat in SEATS:
        assert re.search(r"│ refinement +│ running +│", seat_line(later, seat)), later
    now = DONE.search(later)
    assert now is not None, later
    assert int(now.group(1)) > int(early.group(1)), (early.group(0), now.group(0))

    run = council.only_run()
    term.keys("C-c")
    assert term.shows(rf"council: cancelled by SIGINT; .*continue it with: "
                          rf"council resume {run.name}\n", 30), term.screen
    # The last table stays, says the run was cancelled, and the terminal is the shell's
    # again: cursor shown, the prompt back and answering.
    assert f"council {run.name} · cancelled" in term.screen
    assert cursor_shown(term)
    term.type("echo exit=$?")
    assert term.shows(r"\nexit=130\n", 30), term.screen


def test_quiet_prints_the_plain_lines_on_a_terminal_too(
        council: Council, terminal: Callable[[], Terminal]) -> None:
    term = terminal()
    term.type(council_run("--quiet", "why is the sky blue"))
    assert term.shows(r"report page: .*\(council open ", 60), term.screen
    run = council.only_run()
    tail = term.screen[term.screen.index(f"council run {run.name}: 3 agents"):]
    lines = [line for line in tail.splitlines() if line.strip()]
    assert [line.split(":")[0] for line in lines[:4]] == [
        f"council run {run.name}", "follow it with", "final report", "report page"], tail
    assert "overall" not in tail
    assert "┃" not in tail
