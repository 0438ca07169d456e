"""A seat's failure: its kind, and what it means for the rest of the run
(council/seat/failover.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from council.errors import ConfigError
from council.graph import RESEARCH
from council.run.supervisor import start_run
from council.runoptions import RunOptions, Seat
from council.seat.failover import (
    BACKOFF,
    MAX_WAIT,
    RETRIES,
    classify,
    fallback_seat,
    give_up,
    next_step,
    retry_after,
)
from council.store.owner import owned
from council.store.state import load_state


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        # Messages the real CLIs print (../shared/notes), as council's adapters report them.
        ("claude exited with code 1: Invalid API key · Fix external API key", "auth"),
        ("claude exited with code 1: API Error: Request rejected (429) · Rate limited",
         "rate_limit"),
        ("claude exited with code 1: API Error: 500 Internal server error.", "server"),
        ("claude exited with code 1: API Error: Unable to connect to API (ConnectionRefused)",
         "network"),
        ("codex exited with code 1: Quota exceeded. Check your plan and billing details.",
         "quota"),
        ("codex exited with code 1: unexpected status 401 Unauthorized: url: x", "auth"),
        ("codex exited with code 1: exceeded retry limit, last status: 429 Too Many Requests",
         "rate_limit"),
        ("codex exited with code 1: Missing environment variable: `MOCK_API_KEY`.", "auth"),
        ("gemini exited with code 41 (no valid authentication configured)", "auth"),
        ("gemini exited with code 173 (rate limited (HTTP 429))", "rate_limit"),
        ("gemini exited with code 244 (server error (HTTP 500)): Internal error", "server"),
        ("timed out after 600 s", "timeout"),
        ("no output or report change for 300 s", "idle"),
        ("gemini is not installed or not on PATH", "missing_cli"),
        ("codex exited without writing its report", "no_report"),
        ("claude exited with code 3", "crash"),
        ("its report was a link, not a plain file: not published", "unsafe_report"),
        ("its report was a FIFO, not a plain file: not published", "unsafe_report"),
        (None, None),
    ],
)
def test_classify(error: str | None, kind: str | None) -> None:
    assert classify(error) == kind


@pytest.mark.parametrize(("error", "seconds"), [
    ("429 Too Many Requests; Retry-After: 30", 30.0),
    ("quota exceeded. Please retry in 12.5s.", 12.5),
    ('{"error": {"details": [{"retryDelay": "7s"}]}}', 7.0),
    ("API Error: Request rejected (429) · Rate limited", None),
    (None, None),
])
def test_retry_after_is_read_from_the_clis_words(error: str | None,
                                                 seconds: float | None) -> None:
    assert retry_after(error) == seconds


def test_the_kind_decides_the_next_step() -> None:
    assert next_step("rate_limit", 0, "Rate limited") == ("retry", BACKOFF[0])
    assert next_step("rate_limit", 1, "retry after 3") == ("retry", 3.0)
    assert next_step("rate_limit", RETRIES, "Rate limited") == ("give_up", 0.0)
    assert next_step("rate_limit", 0, f"retry after {MAX_WAIT + 1:g}") == ("give_up", 0.0)
    for kind in ("auth", "quota", "missing_cli"):
        assert next_step(kind, 0, "x") == ("give_up", 0.0)
    for other in ("server", "timeout", "idle", "crash", "no_report", None):
        assert next_step(other, 0, "x") == ("keep", 0.0)


def test_a_fallback_must_be_installed_and_another_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seat = Seat("claude", "claude", model="opus", effort="high", fallback="codex",
                extra_args=("--add-dir", "/data"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fallback_seat(seat, "production") is None  # codex is not installed
    codex = tmp_path / "codex"
    codex.write_text("#!/bin/sh\n")
    os.chmod(codex, 0o755)
    moved = fallback_seat(seat, "production")
    assert moved is not None
    assert (moved.name, moved.cli, moved.model, moved.fallback) == ("claude", "codex",
                                                                    "gpt-5.5", None)
    assert moved.extra_args == ()  # claude's flags mean nothing to codex
    with pytest.raises(ConfigError, match="fallback must be another CLI"):
        Seat.from_dict("claude", {"cli": "claude", "fallback": "claude"}, "council.yaml")


def test_a_seat_that_gives_up_moves_to_its_fallback_in_the_runs_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """give_up edits the run's typed seats: the moved seat is what every later reader of the
    state gets, and state.yaml holds it as a seat's mapping, like any other."""
    claude = Seat("claude", "claude", model="opus", fallback="codex")
    gemini = Seat("gemini", "gemini", model="pro")
    options = RunOptions(seats=(claude, gemini), synthesizer="claude")
    ws = start_run("Tides?", options, tmp_path / "research")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\n")
    os.chmod(bin_dir / "codex", 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    with owned(ws.root) as owner:
        moved = give_up(ws, owner, claude, RESEARCH, "auth", "Invalid API key")
        assert moved is not None
        assert moved.cli == "codex"
        assert owner.state.options.seats == (moved, gemini)
        assert owner.state.agents["claude"].cli == "codex"
        assert give_up(ws, owner, gemini, RESEARCH, "quota", "quota exceeded") is None
        assert owner.state.options.seats == (moved, gemini)  # dropped, not removed
        assert owner.state.dropped == {"gemini": "quota: quota exceeded"}
    stored = yaml.safe_load((ws.root / "state.yaml").read_text())["options"]
    assert stored["seats"] == [moved.to_dict(), gemini.to_dict()]
    assert load_state(ws.root).options.seat("claude") == moved
