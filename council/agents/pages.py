"""The pages a run's agents fetched, read back from their CLIs' logs: each adapter's `fetches`
finds its CLI's fetches and their results (claude's WebFetch, gemini's web_fetch; codex logs
its searches, not the pages). The eval's judge reads them to check citations, and `council
ask` gives them to the seat that answers a follow-up question, so neither fetches a page
again. Reads the logs streamed and bounded."""

from __future__ import annotations

from pathlib import Path

from council.agents import adapters
from council.agents.base import json_events

MAX_PAGE_CHARS = 6000  # of a fetched page: what the judge or an ask is shown of it


def fetched_pages(run_dir: Path) -> dict[str, str]:
    """What the run's agents fetched, by canonical URL, from `logs/*.jsonl` (each event read
    by every CLI's adapter: a log's events are one CLI's, and no two CLIs' look alike). The
    first text found for a URL is kept, cut to MAX_PAGE_CHARS."""
    pages: dict[str, str] = {}
    logs = run_dir / "logs"
    if not logs.is_dir():
        return pages
    readers = adapters()
    for log in sorted(logs.glob("*.jsonl")):  # json_events opens plain files only
        pending: dict[str, str] = {}  # tool call id → canonical URL
        for event in json_events(log):
            for call_id, url, text in (f for a in readers for f in a.fetches(event)):
                if url is not None:
                    pending[call_id] = url
                elif text is not None and call_id in pending:
                    pages.setdefault(pending.pop(call_id), text[:MAX_PAGE_CHARS])
    return pages
