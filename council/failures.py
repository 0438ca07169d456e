"""What kind of failure an agent's error is, from the words and exit codes its CLI used.

Pure and shared by every adapter: users act differently on "log in again" (auth), "wait or
pay" (quota, rate limit) and "the agent got stuck" (timeout, idle)."""

from __future__ import annotations

import re

# Order matters: the first matching kind wins (a 429 quota error is a quota error).
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("missing_cli", re.compile(r"not installed or not on PATH")),
    ("timeout", re.compile(r"\btimed out after\b")),
    ("idle", re.compile(r"\bno output or report change\b")),
    ("no_report", re.compile(r"exited without writing its report")),
    # A link, FIFO, device or oversized file left as its report (seatfolder.take_report):
    # the agent turned, or a page turned it; before the words of any path could match below.
    ("unsafe_report", re.compile(r"^its report was .*: not published$")),
    ("quota", re.compile(r"quota|insufficient_quota|billing|credit balance|RESOURCE_EXHAUSTED",
                         re.I)),
    ("auth", re.compile(r"\b401\b|\b403\b|unauthori[sz]ed|invalid api key|api key|"
                        r"authenticat|auth method|log ?in|Missing environment variable|"
                        r"code 41\b|code 145\b|code 147\b", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate.?limit|too many requests|code 173\b", re.I)),
    ("network", re.compile(r"unable to connect|connection (failed|refused)|fetch failed|"
                           r"ECONNREFUSED|ENOTFOUND|network", re.I)),
    ("server", re.compile(r"\b5\d\d\b|server error|overloaded|high demand|code 244\b", re.I)),
)


def classify(error: str | None) -> str | None:
    """The failure kind of an agent's error message, or None when there is no error."""
    if not error:
        return None
    for kind, pattern in KINDS:
        if pattern.search(error):
            return kind
    return "crash"
