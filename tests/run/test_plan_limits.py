"""A run planned while a vendor's limit recorded on this machine holds (store/limits.py)
leaves the seat out or moves its role to its fallback, and its plan says so; every seat
limited is one line naming each limit, before anything is created (run/prepare.limited).
doctor names the credential each seat will use and the limits recorded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import FAKES_BIN

from council.errors import UsageError
from council.readiness import doctor
from council.readiness.preflight import credential_key
from council.run.prepare import limited
from council.runoptions import RunOptions, Seat
from council.store import limits

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
KEYS = {"ANTHROPIC_API_KEY": "a-key", "OPENAI_API_KEY": "o-key", "GEMINI_API_KEY": "g-key"}


def record(cli: str, key: str, hours: float = 2, kind: str = "plan_limit") -> limits.Limit:
    limit = limits.Limit(cli, limits.credential_id(key, KEYS[key]), kind,
                         (NOW + timedelta(hours=hours)).isoformat(), "You've hit your limit",
                         NOW.isoformat())
    limits.record(limit)
    return limit


def options(*seats: Seat) -> RunOptions:
    return RunOptions(seats=seats or tuple(Seat(n, n) for n in ("claude", "codex", "gemini")),
                      synthesizer="codex")


def test_no_limit_plans_every_seat(tmp_path: Path) -> None:
    opts = options()
    assert limited(opts, KEYS, tmp_path, NOW) == (opts, [])


def test_a_limited_seat_is_left_out_and_the_plan_says_until_when(tmp_path: Path) -> None:
    record("codex", "OPENAI_API_KEY")
    planned, lines = limited(options(), KEYS, tmp_path, NOW)
    assert [s.name for s in planned.seats] == ["claude", "gemini"]
    assert planned.synthesizer == "claude"  # the synthesiser was left out: the first seat
    until = f"{NOW + timedelta(hours=2):%Y-%m-%d %H:%M}"
    assert lines == [f"codex (OPENAI_API_KEY) is limited until {until} UTC: codex left out"]


def test_another_key_of_the_same_cli_is_not_limited(tmp_path: Path) -> None:
    record("codex", "OPENAI_API_KEY")
    planned, lines = limited(options(), {**KEYS, "OPENAI_API_KEY": "a-new-key"}, tmp_path, NOW)
    assert len(planned.seats) == 3
    assert lines == []


def test_an_expired_limit_holds_nothing(tmp_path: Path) -> None:
    record("codex", "OPENAI_API_KEY", hours=-1)
    assert limited(options(), KEYS, tmp_path, NOW)[1] == []


def test_a_limited_seat_moves_to_its_fallback_billed_to_its_login(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(FAKES_BIN))  # the fallback CLI is installed
    record("claude", "ANTHROPIC_API_KEY")
    planned, lines = limited(options(Seat("claude", "claude", fallback="codex"),
                                     Seat("gemini", "gemini")), KEYS, tmp_path, NOW)
    assert [(s.name, s.cli) for s in planned.seats] == [("claude", "codex"),
                                                        ("gemini", "gemini")]
    assert lines[0].endswith(": the claude seat's role moves to its fallback codex, billed "
                             "to codex's login (OPENAI_API_KEY)")
    # a fallback that is limited too: left out
    record("codex", "OPENAI_API_KEY")
    planned, lines = limited(options(Seat("claude", "claude", fallback="codex"),
                                     Seat("gemini", "gemini")), KEYS, tmp_path, NOW)
    assert [s.name for s in planned.seats] == ["gemini"]
    assert lines[0].endswith(": claude left out")


def test_every_seat_limited_is_one_line_naming_each(tmp_path: Path) -> None:
    for cli, key in (("claude", "ANTHROPIC_API_KEY"), ("codex", "OPENAI_API_KEY"),
                     ("gemini", "GEMINI_API_KEY")):
        record(cli, key, kind="quota")
    with pytest.raises(UsageError) as refused:
        limited(options(), KEYS, tmp_path, NOW)
    text = str(refused.value)
    assert "\n" not in text
    assert text.startswith("every agent is limited: ")
    assert text.count("is limited until") == 3


def test_a_login_file_is_named_not_its_path(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert credential_key("codex", {}, tmp_path) == "auth.json"
    assert credential_key("codex", {"OPENAI_API_KEY": "k"}, tmp_path).startswith(
        "OPENAI_API_KEY#")
    assert "k" not in credential_key("codex", {"OPENAI_API_KEY": "k"}, tmp_path).split("#")[0]


def test_doctor_says_an_api_key_overrides_a_subscription_login(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text("{}")
    seats = (Seat("claude", "claude"), Seat("codex", "codex"))
    rows = doctor.credential_rows(seats, {"ANTHROPIC_API_KEY": "k"}, tmp_path)
    assert rows["claude"] == {"cli": "claude", "source": "ANTHROPIC_API_KEY",
                              "overrides": str(tmp_path / ".claude" / ".credentials.json")}
    assert rows["codex"]["source"] is None
    assert doctor.credential_lines(rows, tmp_path) == [
        "credentials (what each agent will use):",
        "  claude: ANTHROPIC_API_KEY (overrides your claude.ai login in "
        "~/.claude/.credentials.json: billed per token)",
        "  codex: none"]
    # the login alone: no override
    assert doctor.credential_rows(seats, {}, tmp_path)["claude"] == {
        "cli": "claude", "source": ".credentials.json", "overrides": None}


def test_doctor_lists_each_limit_until_when() -> None:
    assert doctor.limit_lines([]) == ["vendor limits recorded on this machine: none"]
    limit = record("codex", "OPENAI_API_KEY")
    lines = doctor.limit_lines(doctor.limit_rows())
    assert lines[1] == f"  {limit.describe()}"
    assert "is limited until" in lines[1]
