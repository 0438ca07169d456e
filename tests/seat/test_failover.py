"""A seat's failure: its kind, and what it means for the rest of the run
(council/seat/failover.py)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from council.agents.failure import Failure, Kind
from council.errors import ConfigError
from council.graph import RESEARCH
from council.run.supervisor import start_run
from council.runoptions import RunOptions, Seat
from council.seat.failover import (
    MAX_RETRIES,
    PAUSES,
    Action,
    after,
    classify,
    credential,
    fallback_seat,
    give_up,
    next_step,
)
from council.store import limits
from council.store.owner import owned
from council.store.state import RunState, load_state

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        # council's own words; a vendor's failure is its CLI module's (tests/agents).
        ("timed out after 600 s", "timeout"),
        ("no output or report change for 300 s", "no_answer"),
        ("gemini is not installed or not on PATH", "missing_cli"),
        ("codex exited without writing its report", "no_report"),
        ("claude exited with code 3", "crash"),
        ("its report was a link, not a plain file: not published", "unsafe_report"),
        ("its report was a FIFO, not a plain file: not published", "unsafe_report"),
        (None, None),
    ],
)
def test_classify_reads_councils_own_words(error: str | None, kind: str | None) -> None:
    assert classify(error) == kind


@pytest.mark.parametrize("kind", [Kind.PLAN_LIMIT, Kind.QUOTA, Kind.AUTH])
def test_a_hard_limit_or_a_refused_login_is_given_up_at_once(kind: Kind) -> None:
    step = after(Failure(kind, "no", wait=1.0), 0, NOW, 3600.0, 3600.0)
    assert step.action is Action.GIVE_UP
    assert next_step(kind.value, 0, "no") == ("give_up", 0.0)


def test_a_passing_fault_waits_what_the_vendor_asked() -> None:
    step = after(Failure(Kind.RATE_LIMIT, "429", wait=8.0), 1, NOW, 3000.0, 3600.0)
    assert (step.action, step.wait) == (Action.RETRY, 8.0)
    assert step.said == ("rate limited by the vendor: retrying in 8 s (the vendor asked for "
                         "8 s) (retry 2, within the phase's 3600 s)")
    reset = Failure(Kind.RATE_LIMIT, "429", resets_at=NOW + timedelta(seconds=60))
    assert after(reset, 0, NOW, 3000.0, 3600.0).wait == 60.0


def test_without_a_vendor_wait_the_pause_grows_with_every_retry_counted() -> None:
    """council's retries and the CLI's own are one count: after claude's own 3 retries,
    council's first pause is the fourth step."""
    cut = Failure(Kind.OVERLOADED, "529")
    waits = [after(cut, n, NOW, 3000.0, 3600.0).wait for n in range(6)]
    assert waits == [*PAUSES, PAUSES[-1], PAUSES[-1]]
    assert waits == sorted(waits)


@pytest.mark.parametrize("kind", [Kind.RATE_LIMIT, Kind.OVERLOADED, Kind.STREAM_CUT,
                                  Kind.NO_ANSWER])
def test_no_wait_is_started_that_ends_past_the_phases_deadline(kind: Kind) -> None:
    step = after(Failure(kind, "x", wait=30.0), 0, NOW, 29.0, 3600.0)
    assert step.action is Action.KEEP
    assert step.said is not None
    assert "fits in the 29 s left of the phase's time limit" in step.said
    assert after(Failure(kind, "x", wait=30.0), 0, NOW, 31.0, 3600.0).action is Action.RETRY
    assert next_step(kind.value, 0, "x") == ("keep", 0.0)  # the runner retried it already


def test_a_phase_without_a_time_limit_still_bounds_the_retries() -> None:
    cut = Failure(Kind.STREAM_CUT, "terminated")
    assert after(cut, MAX_RETRIES - 1, NOW, None).action is Action.RETRY
    assert after(cut, MAX_RETRIES, NOW, None).action is Action.KEEP


@pytest.mark.parametrize("kind", ["crash", "timeout", "no_report", "unsafe_report", None])
def test_the_phases_own_trouble_keeps_the_seat(kind: str | None) -> None:
    assert next_step(kind, 0, "x") == ("keep", 0.0)
    assert after(Failure(Kind.CRASH, "x"), 0, NOW, 100.0).action is Action.KEEP


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


def test_a_plan_limit_is_recorded_machine_wide_until_its_reset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """give_up on a plan's limit: the limit on the CLI and its credential (named, the key
    digested) until the reset the seat's record holds; progress.log names it."""
    codex = Seat("codex", "codex")
    ws = start_run("Tides?", RunOptions(seats=(codex,), synthesizer="codex"),
                   tmp_path / "research")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("PATH", str(tmp_path))  # no fallback installed
    with owned(ws.root) as owner:
        def failed(state: RunState) -> None:
            record = state.agents["codex"].phase(RESEARCH.name)
            record.retry_at = "2026-11-30T00:53:00+00:00"
        owner.update(failed)
        assert give_up(ws, owner, codex, RESEARCH, "plan_limit",
                       "You've hit your usage limit.") is None
    (limit,) = limits.load()
    assert (limit.cli, limit.kind, limit.until) == ("codex", "plan_limit",
                                                    "2026-11-30T00:53:00+00:00")
    assert limit.credential.startswith("OPENAI_API_KEY#")
    assert "sk-test-secret" not in limits.file().read_text()
    assert limit.credential == credential(codex, dict(os.environ))
    log = (ws.root / "progress.log").read_text()
    assert ("research codex plan limit: codex is limited until 2026-11-30 00:53 UTC "
            "(You've hit your usage limit.); dropped for the rest of the run") in log


def test_an_auth_failure_is_not_a_recorded_limit(tmp_path: Path) -> None:
    claude = Seat("claude", "claude")
    ws = start_run("Tides?", RunOptions(seats=(claude,), synthesizer="claude"),
                   tmp_path / "research")
    with owned(ws.root) as owner:
        give_up(ws, owner, claude, RESEARCH, "auth", "Invalid API key")
    assert limits.load() == []
