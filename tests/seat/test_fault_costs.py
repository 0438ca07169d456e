"""What a vendor's refusal costs a seat in a whole `council run`, with the fake claude
speaking claude 2.1.332's protocol for it (tests/fakes: `crash_kind` rate_limit, overloaded,
auth: its own `api_retry` events and waits, then its last words and an error result, exit 1):
the retry loop waits the vendor's wait and continues the session; no wait is started that
ends past the phase's time limit; a refused login is stopped at claude's first retry; and
a failed seat's finished turns are published as partial (seat/runner.py, seat/failover.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Council

from council.seat.runner import own_retry_words

CONFIG = ("agents:\n  claude: {cli: claude, model: haiku, max_iterations: 4}\n"
          "  codex: {cli: codex, max_iterations: 2}\n  gemini: {cli: gemini, max_iterations: 2}\n")


def state_of(run: Path) -> dict[str, Any]:
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def claude_processes(council: Council, phase: str = "research") -> list[list[dict[str, Any]]]:
    """Each claude process of the phase's seat, its log events in order."""
    by_pid: dict[int, list[dict[str, Any]]] = {}
    for event in council.fake_log():
        if event["cli"] == "claude" and event["seat"] == "claude":
            by_pid.setdefault(event["pid"], []).append(event)
    return [events for events in by_pid.values()
            if any(e["event"] == "turn" and e.get("phase") == phase for e in events)]


def test_a_rate_limit_is_retried_after_the_vendors_wait_on_the_same_session(
        council: Council) -> None:
    """claude's one own retry waits the vendor's retry-after (2 s) and meets the 429 again;
    council waits the same 2 s, counts claude's retry with its own, and continues the
    session, which then gets through."""
    council.env["CLAUDE_CODE_MAX_RETRIES"] = "1"
    council.script({"claude": {"crash": True, "crash_kind": "rate_limit", "retry_after": 2,
                               "crash_count": 1, "finish_after": 2}})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    log = (run / "progress.log").read_text()
    assert ("research claude rate limited by the vendor: retrying in 2 s (the vendor asked for "
            "2 s) (retry 2, within the phase's ") in log, log
    rec = state_of(run)["agents"]["claude"]["phases"]["research"]
    assert (rec["status"], rec["iteration"], rec["partial"]) == ("complete", 2, False)
    assert rec["failure"] is None
    first, second = claude_processes(council)
    retries = [e for e in first if e["event"] == "exit"]
    assert [e["code"] for e in retries] == [1]
    # The second process continued the first's session, after the vendor's wait.
    session = next(e["session"] for e in first if e["event"] == "turn")
    start = next(e for e in second if e["event"] == "start")
    assert "--resume" in start["argv"]
    assert start["argv"][start["argv"].index("--resume") + 1] == session
    assert start["t"] - retries[0]["t"] >= 2.0
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()


def test_no_wait_is_started_that_would_end_past_the_phases_time_limit(
        council: Council) -> None:
    """An 8-s retry-after met at about 9 s into a 12-s phase: council does not wait, the seat
    ends this phase failed (kept for the next) after one process."""
    council.env["CLAUDE_CODE_MAX_RETRIES"] = "1"
    council.script({"claude:research": {"crash": True, "crash_kind": "rate_limit",
                                        "retry_after": 8}})
    proc = council.run("run", "--test", "--timeout", "12", "q")
    assert proc.returncode in (0, 3), proc.stderr
    run = council.only_run()
    log = (run / "progress.log").read_text()
    assert "research claude rate limited by the vendor: no retry (the vendor asked for 8 s) " \
        "fits in the " in log, log
    assert "left of the phase's time limit; the seat goes on at the next phase" in log
    assert len(claude_processes(council)) == 1
    rec = state_of(run)["agents"]["claude"]["phases"]["research"]
    assert (rec["status"], rec["failure"]) == ("failed", "rate_limit")
    assert rec["retry_at"] is not None
    assert "claude" not in (state_of(run).get("dropped") or {})


def test_a_refused_login_is_stopped_at_claudes_first_retry_and_keeps_two_turns(
        council: Council) -> None:
    """A 401 from the third report turn on: claude would retry it six times (31 s of
    backoff, council's CLAUDE_CODE_MAX_RETRIES); council stops it at its first api_retry,
    drops the seat with the login fix, and publishes its two finished turns as partial."""
    (council.root / "council.yaml").write_text(CONFIG)
    council.script({"claude": {"crash": True, "crash_kind": "auth", "crash_on_turn": 3,
                               "finish_after": 4}})
    proc = council.run("run", "--test", "--config", "council.yaml", "--max-iterations", "4",
                       "q")
    assert proc.returncode in (0, 3), proc.stderr
    run = council.only_run()
    (process,) = claude_processes(council)
    (exit_event,) = [e for e in process if e["event"] == "exit"]
    turn3 = next(e for e in process if e["event"] == "turn" and e["report_turn"] == 3)
    assert exit_event.get("signal"), exit_event  # stopped by council, not at its own end
    assert exit_event["t"] - turn3["t"] < 8, (exit_event, turn3)
    # Its first retry waits 0.5 s: council read the api_retry and stopped it before that
    # (two at most on a busy machine; it would make six).
    retries = [line for line in (run / "logs" / "claude-research.jsonl").read_text()
               .splitlines() if '"subtype":"api_retry"' in line.replace(" ", "")]
    assert 1 <= len(retries) <= 2, retries
    st = state_of(run)
    rec = st["agents"]["claude"]["phases"]["research"]
    assert (rec["status"], rec["failure"], rec["partial"]) == ("failed", "auth", True), rec
    assert rec["iteration"] == 3
    published = (run / rec["output"]).read_text()
    assert "## Turn 1" in published, published
    assert "## Turn 2" in published
    assert "## Turn 3" not in published
    assert st["dropped"]["claude"].startswith("auth: ")
    log = (run / "progress.log").read_text()
    assert "its partial report (3 iterations, " in log, log
    assert "research claude dropped for the rest of the run (auth: claude: claude's login " \
        "was refused (HTTP 401, authentication_failed)" in log, log
    assert "log in with `claude`" in log
    assert "refinement" not in st["agents"]["claude"]["phases"]
    assert "2 of 3 agents contributed (codex, gemini)" in (run / "final-report.md").read_text()


def test_a_failed_seats_finished_turns_are_published_as_partial(council: Council) -> None:
    """An HTTP 400 (no one retries it) on the third turn: the seat fails for this phase, its
    first two turns are published, marked partial, and no later phase of the run uses them."""
    (council.root / "council.yaml").write_text(CONFIG)
    council.script({"claude": {"crash": True, "crash_kind": "bad_request", "crash_on_turn": 3,
                               "finish_after": 4}})
    proc = council.run("run", "--test", "--config", "council.yaml", "--max-iterations", "4",
                       "q")
    assert proc.returncode in (0, 3), proc.stderr
    run = council.only_run()
    st = state_of(run)
    rec = st["agents"]["claude"]["phases"]["research"]
    assert (rec["status"], rec["failure"], rec["partial"]) == ("failed", "crash", True), rec
    published = run / rec["output"]
    text = published.read_text()
    assert "## Turn 2" in text, text
    assert "## Turn 3" not in text
    assert rec["sha256"]
    assert "claude" not in (st.get("dropped") or {})  # kept for the next phase
    refined = {name: a["phases"].get("refinement", {}).get("status")
               for name, a in st["agents"].items()}
    assert refined["codex"] == "complete"
    # The partial report fed no one: the refinement prompts name the others' reports only.
    for seat in ("codex", "gemini"):
        prompt = (run / "agents" / seat / "refinement-prompt.md").read_text()
        assert published.name not in prompt, prompt


@pytest.mark.parametrize(("cli", "event", "said"), [
    ("claude", {"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 6,
                "retry_delay_ms": 1020, "error_status": 529, "error": "overloaded"},
     "claude retries on its own after HTTP 529 overloaded, in 1.02 s"),
    ("claude", {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 6,
                "retry_delay_ms": 566, "error_status": None, "error": "unknown"},
     "claude retries on its own, in 0.566 s"),
    ("codex", {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before "
               "completion: Transport error: network error: error decoding response body)"},
     "codex retries on its own: Reconnecting... 1/5 (stream disconnected before completion: "
     "Transport error: network error: error decoding response body)"),
])
def test_a_clis_own_retry_is_named_in_its_words(cli: str, event: dict[str, object],
                                                said: str) -> None:
    """As claude 2.1.332 and codex 0.171.0 printed them against the scripted server."""
    assert own_retry_words(cli, event) == said
