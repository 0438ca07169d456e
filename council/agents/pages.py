"""The pages a run's agents fetched, read back from their CLIs' logs: claude's WebFetch and
gemini's web_fetch results (codex logs its searches, not the pages). The eval's judge reads
them to check citations, and `council ask` gives them to the seat that answers a follow-up
question, so neither fetches a page again. Reads the logs streamed and bounded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from council.agents.base import json_events
from council.evidence.sources import canonical, extract

MAX_PAGE_CHARS = 6000  # of a fetched page: what the judge or an ask is shown of it

FETCH_TOOLS = {"WebFetch", "web_fetch"}


def fetched_pages(run_dir: Path) -> dict[str, str]:
    """What the run's agents fetched, by canonical URL: claude's WebFetch results and
    gemini's web_fetch results in `logs/*.jsonl` (codex logs its searches, not the pages).
    The first text found for a URL is kept, cut to MAX_PAGE_CHARS."""
    pages: dict[str, str] = {}
    logs = run_dir / "logs"
    if not logs.is_dir():
        return pages
    for log in sorted(logs.glob("*.jsonl")):  # json_events opens plain files only
        pending: dict[str, str] = {}  # tool call id → canonical URL
        for event in json_events(log):
            for call_id, url, text in _fetches(event):
                if url is not None:
                    pending[call_id] = url
                elif text is not None and call_id in pending:
                    pages.setdefault(pending.pop(call_id), text[:MAX_PAGE_CHARS])
    return pages


def _fetches(event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
    """(call id, URL, None) for each fetch a log event starts, (call id, None, text) for
    each tool result it carries; claude's stream-json and gemini's."""
    kind = event.get("type")
    if kind == "tool_use" and event.get("tool_name") in FETCH_TOOLS:  # gemini
        url = _url_of(event.get("parameters"))
        if url:
            yield str(event.get("tool_id")), url, None
    elif kind == "tool_result" and isinstance(event.get("output"), str):  # gemini
        yield str(event.get("tool_id")), None, event["output"]
    elif kind in ("assistant", "user"):  # claude
        message = event.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") in FETCH_TOOLS:
                url = _url_of(block.get("input"))
                if url:
                    yield str(block.get("id")), url, None
            elif block.get("type") == "tool_result":
                text = _text_of(block.get("content"))
                if text:
                    yield str(block.get("tool_use_id")), None, text


def _url_of(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    if isinstance(params.get("url"), str):
        return canonical(params["url"])
    found = extract(params["prompt"]) if isinstance(params.get("prompt"), str) else []
    return canonical(found[0]) if found else None


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        text = "\n".join(p for p in parts if isinstance(p, str))
        return text or None
    return None
