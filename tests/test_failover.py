"""What a seat's failure kind means for the rest of the run (council/failover.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from council.config import Seat
from council.errors import ConfigError
from council.failover import BACKOFF, MAX_WAIT, RETRIES, fallback_seat, next_step, retry_after


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
