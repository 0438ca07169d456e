from __future__ import annotations

import pytest

from council.failures import classify


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
