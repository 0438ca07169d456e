"""A CLI's failure read from its vendor's own words: every text and body of
../shared/notes/vendor-faults.md (and the error rows of the CLI notes), as each real CLI prints
it, classified by that CLI's module; and the parsers they share."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from council.agents import claude, codex, gemini
from council.agents.failure import (
    Failure,
    Kind,
    duration,
    epoch,
    next_pacific_midnight,
    one_line,
    resets,
    retry_after,
    try_again_at,
    try_again_in,
)

NOW = datetime(2026, 11, 28, 16, 45, tzinfo=UTC)


# --------------------------------------------------------------------------- claude
def claude_result(text: str, status: int | None = None, error_type: str | None = None,
                  is_error: bool = True, **extra: Any) -> dict[str, Any]:
    """claude 2.1.332's stream-json result after an API error (seen: subtype success)."""
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text,
            "api_error_status": status, "api_error_type": error_type,
            "terminal_reason": "api_error" if is_error else "completed", "modelUsage": {},
            **extra}


def api_retry(status: int | None, error: str, delay_ms: int = 600) -> dict[str, Any]:
    return {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 1,
            "retry_delay_ms": delay_ms, "error_status": status, "error": error}


def claude_kind(events: list[dict[str, Any]], returncode: int = 1) -> Failure:
    found = claude.classify(events, "", returncode, NOW)
    assert found is not None
    return found


RATE_TEXT = ("API Error: Request rejected (429) · This request would exceed the rate limit for "
             "your organization (…) of 50,000 input tokens per minute. …")


def test_claude_rate_limit_waits_what_claude_was_told() -> None:
    found = claude_kind([api_retry(429, "rate_limit", 8027),
                         claude_result(RATE_TEXT, 429, "rate_limit_error")])
    assert found.kind is Kind.RATE_LIMIT
    assert found.wait == 8.0  # retry-after: 8, as claude's own retry honoured it
    assert found.status == 429
    assert found.message == RATE_TEXT
    assert found.passing


def test_claude_rate_limited_text_of_the_notes() -> None:
    found = claude_kind([claude_result("API Error: Request rejected (429) · Rate limited", 429)])
    assert (found.kind, found.wait) == (Kind.RATE_LIMIT, None)


def test_claude_api_key_plan_limit_is_a_plan_limit() -> None:
    text = ("API Error: Request rejected (429) · This request would exceed your account's rate "
            "limit. Please try again later.")
    found = claude_kind([claude_result(text, 429, "rate_limit_error")])
    assert found.kind is Kind.PLAN_LIMIT
    assert not found.passing


@pytest.mark.parametrize(("text", "window", "reset"), [
    ("You've hit your session limit · resets 3:50pm (Asia/Tokyo)", "five_hour",
     datetime(2026, 11, 29, 15, 50, tzinfo=ZoneInfo("Asia/Tokyo"))),
    ("You've hit your limit · resets 1pm (Europe/Lisbon)", None,
     datetime(2026, 11, 29, 13, 0, tzinfo=ZoneInfo("Europe/Lisbon"))),
    ("You've hit your monthly spend limit. See Usage in Settings", "month", None),
    ("Claude AI usage limit reached|1795910400", None, datetime(2026, 11, 29, tzinfo=UTC)),
])
def test_claude_subscription_texts_are_plan_limits_with_their_reset(
        text: str, window: str | None, reset: datetime | None) -> None:
    found = claude_kind([claude_result(text)])
    assert found.kind is Kind.PLAN_LIMIT
    assert found.window == window
    assert found.resets_at == reset
    assert found.until(NOW) == reset


def test_claude_rate_limit_event_gives_the_reset_and_window() -> None:
    event = {"type": "rate_limit_event", "rate_limit_info": {
        "status": "rejected", "resetsAt": 1795910400, "rateLimitType": "seven_day"}}
    found = claude_kind([event, claude_result("You've hit your weekly limit")])
    assert found.kind is Kind.PLAN_LIMIT
    assert found.resets_at == datetime(2026, 11, 29, tzinfo=UTC)
    assert found.window == "seven_day"


def test_an_allowed_rate_limit_event_is_no_failure() -> None:
    event = {"type": "rate_limit_event",
             "rate_limit_info": {"status": "allowed_warning", "resetsAt": 1795910400}}
    assert claude.classify([event, claude_result("done", is_error=False)], "", 0, NOW) is None


def test_an_error_result_with_exit_0_is_a_failure() -> None:
    # claude-code issue 79500: a rate-limited answer as subtype success, is_error, exit 0.
    found = claude.classify([claude_result("API Error: Request rejected (429) · Rate limited",
                                           429)], "", 0, NOW)
    assert found is not None
    assert found.kind is Kind.RATE_LIMIT


@pytest.mark.parametrize(("events", "kind", "status"), [
    ([api_retry(529, "overloaded"),
      claude_result("API Error: 529 Overloaded. This is a server-side issue, usually temporary "
                    "— try again in a moment.", 529, "overloaded_error")], Kind.OVERLOADED, 529),
    ([claude_result("API Error: 500 Internal server error. This is a server-side issue…", 500)],
     Kind.OVERLOADED, 500),
    ([api_retry(401, "authentication_failed"),
      claude_result("Invalid API key · Fix external API key", 401, "authentication_error")],
     Kind.AUTH, 401),
    ([api_retry(None, "unknown"),
      claude_result("API Error: Connection to the API was lost (ECONNRESET). This is usually "
                    "temporary — try again.", api_error="connection_failed")],
     Kind.STREAM_CUT, None),
    ([claude_result("Request timed out. If the API is slow to answer, or a proxy or gateway "
                    "holds responses, set API_TIMEOUT_MS above 3000.")], Kind.NO_ANSWER, None),
    ([claude_result("API Error: Unable to connect to API (ConnectionRefused)")],
     Kind.NO_ANSWER, None),
    ([claude_result("API Error: 400 bad thing", 400)], Kind.CRASH, 400),
    ([{"type": "result", "subtype": "error_max_turns", "is_error": True,
       "errors": ["Reached maximum number of turns (4)"]}], Kind.CRASH, None),
])
def test_claude_api_errors(events: list[dict[str, Any]], kind: Kind, status: int | None) -> None:
    found = claude_kind(events)
    assert (found.kind, found.status) == (kind, status)


def test_claude_cut_stream_then_success_is_no_failure() -> None:
    events = [api_retry(None, "unknown"),
              claude_result("Report updated.", is_error=False,
                            modelUsage={"claude-opus-5-5": {"outputTokens": 30}})]
    assert claude.classify(events, "", 0, NOW) is None
    assert claude.answered_models(events) == ["claude-opus-5-5"]


def test_claude_crash_without_a_result_keeps_stderr() -> None:
    found = claude_kind([], returncode=1)
    assert found.message == "claude exited with code 1"
    crashed = claude.classify([], "Error: When using --print, --output-format=stream-json "
                              "requires --verbose\n", 1, NOW)
    assert crashed is not None
    assert crashed.kind is Kind.CRASH
    assert crashed.message.startswith("Error: When using --print")


def test_claude_models_from_model_usage_then_assistant_messages() -> None:
    result = claude_result("x", is_error=False, modelUsage={
        "claude-opus-4-8[1m]": {"canonicalModel": "claude-opus-4-8"},
        "claude-haiku-5-5": {}})
    assert claude.answered_models([result]) == ["claude-opus-4-8", "claude-haiku-5-5"]
    live = [{"type": "assistant", "message": {"model": "claude-sonnet-5-5"}},
            {"type": "assistant", "message": {"model": "<synthetic>"}}]
    assert claude.answered_models(live) == ["claude-sonnet-5-5"]


# --------------------------------------------------------------------------- codex
def codex_failed(message: str, *notices: str) -> list[dict[str, Any]]:
    """codex 0.171's --json events of a failed turn (seen)."""
    return [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
            *({"type": "error", "message": n} for n in notices),
            {"type": "error", "message": message},
            {"type": "turn.failed", "error": {"message": message}}]


def codex_kind(message: str, *notices: str, now: datetime = NOW) -> Failure:
    found = codex.classify(codex_failed(message, *notices), "", 1, now)
    assert found is not None
    return found


def test_codex_usage_limit_at_a_date() -> None:
    found = codex_kind("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/"
                       "pro), visit https://chatgpt.com/settings/usage to purchase more credits "
                       "or try again at Nov 30th, 2026 12:53 AM.")
    assert found.kind is Kind.PLAN_LIMIT
    assert found.resets_at == datetime(2026, 11, 30, 0, 53, tzinfo=UTC)


def test_codex_usage_limit_later_today_in_codexs_local_time() -> None:
    text = ("You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
            "visit https://chatgpt.com/settings/usage to purchase more credits or try again at "
            "7:15 PM.")
    found = codex.classify(codex_failed(text), "", 1, NOW, ZoneInfo("Europe/Berlin"))
    assert found is not None
    assert found.kind is Kind.PLAN_LIMIT
    assert found.resets_at == datetime(2026, 11, 28, 19, 15, tzinfo=ZoneInfo("Europe/Berlin"))


def test_codex_older_usage_limit_in_days() -> None:
    found = codex_kind("You've hit your usage limit. … try again in 4 days 6 hours 37 minutes.")
    assert found.kind is Kind.PLAN_LIMIT
    assert found.wait == 4 * 86400 + 6 * 3600 + 37 * 60
    assert found.resets_at == NOW + timedelta(seconds=found.wait)


@pytest.mark.parametrize(("message", "notices", "kind", "status", "wait"), [
    ("Quota exceeded. Check your plan and billing details.", (), Kind.QUOTA, None, None),
    ("Your workspace is out of credits. Add credits to continue.", (), Kind.QUOTA, None, None),
    ("Selected model is at capacity. Please try a different model.", (), Kind.OVERLOADED,
     None, None),
    ("exceeded retry limit, last status: 429 Too Many Requests", (), Kind.RATE_LIMIT, 429,
     None),
    ("exceeded retry limit, last status: 429 Too Many Requests",
     ("Reconnecting... 1/1 (exceeded retry limit, last status: 429 Too Many Requests)",),
     Kind.RATE_LIMIT, 429, None),
    ("Rate limit reached for gpt-5.5 … Please try again in 7.0s. …", (), Kind.RATE_LIMIT,
     None, 7.0),
    ("unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., "
     "url: http://127.0.0.1:46313/v1/responses",
     ("Reconnecting... 1/5 (unexpected status 503 Service Unavailable: The server is "
      "overloaded or not ready yet., url: http://127.0.0.1:46313/v1/responses)",),
     Kind.OVERLOADED, 503, None),
    ("We’re currently experiencing high demand, which may cause temporary errors.",
     ("Reconnecting... 5/5 (We’re currently experiencing high demand, which may cause "
      "temporary errors.)",), Kind.OVERLOADED, None, None),
    ("unexpected status 401 Unauthorized: Incorrect API key provided: dummy. You can find "
     "your API key at https://platform.openai.com/account/api-keys., url: "
     "http://127.0.0.1:40385/v1/responses", (), Kind.AUTH, 401, None),
    ("Your access token could not be refreshed because your refresh token was already used. "
     "Please log out and sign in again.", (), Kind.AUTH, None, None),
    ("Missing environment variable: `MOCK_API_KEY`.", (), Kind.AUTH, None, None),
    ("stream disconnected before completion: Transport error: network error: error decoding "
     "response body", ("Reconnecting... 1/1 (stream disconnected before completion: Transport "
                       "error: network error: error decoding response body)",),
     Kind.STREAM_CUT, None, None),
    ("stream disconnected before completion: idle timeout waiting for SSE", (),
     Kind.NO_ANSWER, None, None),
    ("Connection failed: error sending request", (), Kind.NO_ANSWER, None, None),
    ("unexpected status 400 Bad Request: {\"error\": \"bad\"}", (), Kind.CRASH, 400, None),
])
def test_codex_messages(message: str, notices: tuple[str, ...], kind: Kind,
                        status: int | None, wait: float | None) -> None:
    found = codex_kind(message, *notices)
    assert (found.kind, found.status, found.wait) == (kind, status, wait)
    assert found.message == one_line(message)


def test_codex_reconnect_then_success_is_no_failure() -> None:
    events: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before "
                                     "completion: …)"},
        {"type": "turn.completed", "usage": {"input_tokens": 1}}]
    assert codex.classify(events, "", 0, NOW) is None
    assert codex.answered_models(events) == []  # codex 0.171's events name no model


def test_codex_killed_without_events_is_a_crash_with_its_stderr() -> None:
    found = codex.classify([], "Error: thread/resume: no rollout found for thread id x\n", 1,
                           NOW)
    assert found is not None
    assert found.kind is Kind.CRASH
    assert "no rollout found" in found.message


# --------------------------------------------------------------------------- gemini
def gemini_result(message: str, models: dict[str, int] | None = None,
                  status: str = "error") -> dict[str, Any]:
    """gemini 0.61's stream-json result (seen): `models` maps each to its total tokens."""
    return {"type": "result", "status": status,
            **({"error": {"type": "unknown", "message": message}} if status == "error" else {}),
            "stats": {"total_tokens": 0, "models": {
                m: {"total_tokens": t, "input_tokens": t, "output_tokens": 0}
                for m, t in (models or {"gemini-2.5-pro": 0}).items()}}}


DAILY_TEXT = ("[API Error: You have exhausted your daily quota on this model.]\nPlease wait and "
              "try again later. To increase your limits, request a quota increase through AI "
              "Studio, or switch to another /auth method")
MINUTE_TEXT = ("[API Error: You exceeded your current quota, please check your plan and billing "
               "details. For more information on this error, head to: https://ai.google.dev/"
               "gemini-api/docs/rate-limits. \n* Quota exceeded for metric: generativelanguage."
               "googleapis.com/generate_content_free_tier_requests, limit: 10, model: "
               "gemini-2.5-pro\nPlease retry in 60s.\nSuggested retry after 60s.]\nPlease wait "
               "and try again later.")
AUTH_BODY = {"error": {"code": 401, "message": "Request had invalid authentication credentials.",
                       "status": "UNAUTHENTICATED",
                       "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                    "reason": "ACCESS_TOKEN_EXPIRED"}]}}


@pytest.mark.parametrize(("message", "stderr", "returncode", "kind", "status", "wait"), [
    (MINUTE_TEXT, "RetryableQuotaError: You exceeded your current quota\n  retryDelayMs: 60000",
     173, Kind.RATE_LIMIT, 429, 60.0),
    ("[API Error: The model is overloaded. Please try again later.]",
     "RetryableQuotaError: The model is overloaded. Please try again later.", 247,
     Kind.OVERLOADED, 503, None),
    (f"[API Error: {json.dumps(AUTH_BODY)}]", "_ApiError: …\n  status: 401", 145, Kind.AUTH,
     401, None),
    ("[API Error: terminated]", "TypeError: terminated\n  [cause]: SocketError: other side "
     "closed", 1, Kind.STREAM_CUT, None, None),
    ("[API Error: exception TypeError: fetch failed sending request]", "", 1, Kind.NO_ANSWER,
     None, None),
    ("[API Error: Internal error]", "", 244, Kind.OVERLOADED, 500, None),
    ("[API Error: {\"error\":{\"code\":400,\"message\":\"bad\"}}]", "", 144, Kind.CRASH, 400,
     None),
    ("[API Error: You exceeded your current quota … limit: 0, model: gemini-3-pro]", "", 173,
     Kind.QUOTA, 429, None),
])
def test_gemini_errors(message: str, stderr: str, returncode: int, kind: Kind,
                       status: int | None, wait: float | None) -> None:
    found = gemini.classify([gemini_result(message)], stderr, returncode, NOW)
    assert found is not None
    assert (found.kind, found.status, found.wait) == (kind, status, wait)
    assert found.models == ()  # the asked model, with no tokens, did not answer


def test_gemini_daily_quota_stops_until_midnight_pacific() -> None:
    found = gemini.classify([gemini_result(DAILY_TEXT)], "TerminalQuotaError: You have "
                            "exhausted your daily quota on this model.", 173, NOW)
    assert found is not None
    assert (found.kind, found.window, found.status) == (Kind.QUOTA, "day", 429)
    assert found.resets_at == datetime(2026, 11, 29, tzinfo=ZoneInfo("America/Los_Angeles"))
    assert not found.passing


@pytest.mark.parametrize(("returncode", "kind"), [
    (41, Kind.AUTH), (42, Kind.CRASH), (44, Kind.CRASH), (52, Kind.CRASH), (53, Kind.CRASH),
    (54, Kind.CRASH), (55, Kind.CRASH), (130, Kind.CRASH)])
def test_gemini_exit_codes_without_a_result(returncode: int, kind: Kind) -> None:
    stderr = "Invalid auth method selected." if returncode == 41 else ""
    found = gemini.classify([], stderr, returncode, NOW)
    assert found is not None
    assert found.kind is kind
    if not stderr:
        assert found.message == f"gemini exited with code {returncode}"


def test_gemini_answering_on_another_model_is_no_failure_but_named() -> None:
    events = [{"type": "init", "model": "flash-lite"},
              gemini_result("", {"gemini-3.5-flash-lite": 0, "gemini-3.8-flash": 300},
                            status="success")]
    assert gemini.classify(events, "", 0, NOW) is None
    assert gemini.answered_models(events) == ["gemini-3.8-flash"]


def test_gemini_empty_reply_with_exit_0_is_no_answer() -> None:
    result = {"type": "result", "status": "error",
              "error": {"type": "INVALID_STREAM", "message": "Model stream ended with empty "
                                                             "response text."}}
    found = gemini.classify([result], "", 0, NOW)
    assert found is not None
    assert found.kind is Kind.NO_ANSWER


def test_gemini_json_output_models_are_read_too() -> None:
    answer = {"stats": {"models": {"gemini-2.5-pro": {"tokens": {"total": 71822}},
                                   "gemini-3.5-flash-lite": {"tokens": {"total": 0}}}}}
    assert gemini.answered_models([answer]) == ["gemini-2.5-pro"]


# --------------------------------------------------------------------------- parsers
@pytest.mark.parametrize(("value", "seconds"), [
    ("8", 8.0), ("9000", 9000.0), ("1.5", 1.5), ("Sat, 28 Nov 2026 16:46:00 GMT", 60.0),
    ("Sat, 28 Nov 2026 16:00:00 GMT", 0.0), ("", None), ("soon", None)])
def test_retry_after(value: str, seconds: float | None) -> None:
    assert retry_after(value, NOW) == seconds


@pytest.mark.parametrize(("text", "seconds"), [
    ("60s", 60.0), ("33s", 33.0), ("0.5s", 0.5), ("33.5ms", 0.0335), ("1m12.5s", 72.5),
    ("6h5m", 21900.0), ("4 days 6 hours 37 minutes", 369420.0), ("2 hours", 7200.0),
    ("soon", None)])
def test_duration(text: str, seconds: float | None) -> None:
    found = duration(text)
    assert found == pytest.approx(seconds) if seconds is not None else found is None


@pytest.mark.parametrize(("text", "seconds"), [
    ("Rate limit reached for gpt-5.5 … Please try again in 7.0s. …", 7.0),
    ("Please try again in 1m30s.", 90.0),
    ("Please retry in 59.5s.", 59.5),
    ("Suggested retry after 60s.", 60.0),
    ("try again in a moment", None), ("try again later", None)])
def test_try_again_in(text: str, seconds: float | None) -> None:
    assert try_again_in(text) == seconds


def test_try_again_at_reads_codexs_forms_in_its_zone() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    assert try_again_at("try again at Nov 30th, 2026 12:53 AM.", NOW, tokyo) == \
        datetime(2026, 11, 30, 0, 53, tzinfo=tokyo)
    assert try_again_at("try again at Nov 30th, 12:53 AM.", NOW) == \
        datetime(2026, 11, 30, 0, 53, tzinfo=UTC)
    # A time of day already past is tomorrow's; a date already past without a year, next
    # year's.
    assert try_again_at("try again at 3:15 PM.", NOW) == datetime(2026, 11, 29, 15, 15,
                                                                  tzinfo=UTC)
    assert try_again_at("try again at Jan 2nd, 1:00 AM", NOW) == datetime(2027, 1, 2, 1, 0,
                                                                          tzinfo=UTC)
    assert try_again_at("try again later", NOW) is None
    assert try_again_at("try again at Feb 30th, 1:00 AM", NOW) is None


def test_resets_reads_claudes_forms_in_the_zone_it_names() -> None:
    plus2 = timezone(timedelta(hours=2))
    assert resets("resets 3:50pm (Asia/Tokyo)", NOW) == \
        datetime(2026, 11, 29, 15, 50, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert resets("resets 8pm", NOW, plus2) == datetime(2026, 11, 28, 20, 0, tzinfo=plus2)
    assert resets("It resets Dec 2 at 5pm (Europe/Lisbon)", NOW) == \
        datetime(2026, 12, 2, 17, 0, tzinfo=ZoneInfo("Europe/Lisbon"))
    assert resets("resets 1pm (Not/AZone)", NOW) == datetime(2026, 11, 29, 13, 0, tzinfo=UTC)
    assert resets("resets soon", NOW) is None


def test_epoch_and_the_pacific_midnight() -> None:
    assert epoch(1795910400) == datetime(2026, 11, 29, tzinfo=UTC)
    assert epoch("1795910400") == epoch(1795910400000)
    assert epoch(None) is None
    assert epoch(True) is None
    assert epoch("soon") is None
    assert next_pacific_midnight(NOW) == datetime(2026, 11, 29,
                                                  tzinfo=ZoneInfo("America/Los_Angeles"))


def test_a_failure_says_when_to_try_again() -> None:
    waited = Failure(Kind.RATE_LIMIT, "x", wait=7.0)
    assert waited.until(NOW) == NOW + timedelta(seconds=7)
    assert Failure(Kind.CRASH, "x").until(NOW) is None
    assert one_line("a\n\x1b[31mb\tc  ") == "a [31mb c"


def test_gemini_prices_each_model_that_answered_at_its_own_rate() -> None:
    """A flash-lite seat answered on flash: the tokens are flash's, at flash's price."""
    from council.agents.gemini import GeminiUsage
    from council.evidence.ledger import price

    counter = GeminiUsage("flash-lite")
    counter.add({"type": "result", "status": "success", "stats": {
        "total_tokens": 1100, "input_tokens": 1000, "output_tokens": 100, "cached": 0,
        "models": {"gemini-3.5-flash-lite": {"total_tokens": 0, "input_tokens": 0,
                                             "output_tokens": 0, "cached": 0},
                   "gemini-3.8-flash": {"total_tokens": 1100, "input_tokens": 1000,
                                        "output_tokens": 100, "cached": 0}}}})
    usage = counter.total()
    assert (usage.tokens_in, usage.tokens_out) == (1000, 100)
    assert usage.cost_usd == price("gemini", "gemini-3.8-flash", 1000, 100)
    assert usage.cost_usd != price("gemini", "flash-lite", 1000, 100)
