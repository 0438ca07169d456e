"""The command line's one error handler (council/cli.py): no traceback ever reaches a user."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Council

from council import cli, preflight, supervisor
from council.errors import RunNotFoundError


def test_an_unexpected_error_is_one_line_and_a_crash_log_in_the_run(
        monkeypatch: pytest.MonkeyPatch, isolated: Path) -> None:
    def explode(ws: object, synthesise: bool = True) -> supervisor.RunResult:
        raise RuntimeError("something council did not foresee\nsecond line")

    monkeypatch.setattr(supervisor, "execute", explode)
    monkeypatch.setattr(preflight, "prepare", lambda options, explicit: (options, []))
    result = CliRunner().invoke(cli.main, ["run", "--test", "q"])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("council: internal error (RuntimeError: something council did not "
                           "foresee); details in ")
    log = Path(line.rsplit("details in ", 1)[1])
    (run,) = [p for p in (isolated / "research").iterdir() if p.name[0].isdigit()]
    assert log.parent == run
    text = log.read_text()
    assert "Traceback (most recent call last)" in text
    assert "second line" in text


def test_a_council_error_inside_a_task_group_is_its_own_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def grouped(*_: object) -> None:
        raise ExceptionGroup("tasks", [RunNotFoundError("no run x in research")])

    monkeypatch.setattr(cli, "cancel_run", grouped)
    monkeypatch.setattr(cli, "find_run", lambda *_: None)
    result = CliRunner().invoke(cli.main, ["cancel", "x"])
    assert (result.exit_code, result.stderr) == (1, "council: error: no run x in research\n")


@pytest.mark.parametrize(("args", "first", "hint"), [
    (("run", "--bogus", "q"), "council: error: No such option '--bogus'.",
     "hint: `council run --help` lists what it takes"),
    (("nosuch",), "council: error: No such command 'nosuch'.",
     "hint: `council --help` lists what it takes"),
    (("run", "--mode", "vibes", "q"), "council: error: Invalid value for '--mode': 'vibes' "
     "is not one of 'exploratory', 'compliance', 'decision'.",
     "hint: `council run --help` lists what it takes"),
])
def test_usage_errors_are_one_line_and_a_hint(council: Council, args: tuple[str, ...],
                                              first: str, hint: str) -> None:
    proc = council.run(*args)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [first, hint]


def test_end_of_input_at_the_confirm_is_a_no(council: Council) -> None:
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("council: error: not started")
    assert "Aborted" not in proc.stderr
    assert not council.fake_log()
