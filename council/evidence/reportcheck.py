"""The published report's integrity (issue 44), as a run records it: integrity.check
(integrity.py) of final-report.md against claims.json, sources.json and the evidence store's
texts (fetch.py), written to research/<id>/integrity.json, put as a line into the report's
header, and each failure marked in the report where it stands (integrity.mark).

The line joins the stamp's paragraph (finalreport.STAMP), so a re-stamp (a resumed run, the
repair turn) drops it with the stamp (finalreport.body_of) and writes it anew. Offline
(`--offline`, COUNCIL_OFFLINE=1) nothing was fetched: the line says the quotes and numbers
were not checked, and why; the citations are counted all the same."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from council.evidence import changes, claimcheck, fetch, integrity
from council.evidence.finalreport import STAMP, read_final_report
from council.evidence.integrity import Integrity
from council.store import agentfs
from council.store.disk import atomic_write
from council.store.workspace import CLAIMS, Workspace

INTEGRITY_JSON = "integrity.json"
LINE = "> integrity (computed by council): "
OFFLINE = "quotes and numbers not checked: council fetched no source (offline)"
MAX_LISTED = 20  # failures a repair prompt lists


@dataclass(frozen=True)
class Checked:
    result: Integrity
    summary: str  # the header's line, after LINE
    offline: bool


def sources_of(ws: Workspace) -> list[dict[str, Any]]:
    """sources.json's sources (none when it is missing or unreadable)."""
    try:
        data = agentfs.read_json(ws.root / "sources.json")
    except (OSError, ValueError):
        return []
    listed = data.get("sources") if isinstance(data, dict) else None
    return [s for s in listed or [] if isinstance(s, dict)]


def summary(result: Integrity, offline: bool) -> str:
    """The header's words: integrity's own line, or offline, what was not checked."""
    if not offline:
        return result.summary()
    share = result.cited_share
    cited = "no claim sentence found" if share is None else \
        f"{round(share * 100)}% of claim sentences cited"
    return f"{OFFLINE}; {cited}"


def _without_changes(report: str) -> str:
    """`report` with a --since run's "What changed since …" section blanked (council's own
    list, offsets kept): none of its figures or links is the synthesiser's."""
    found = re.search(rf"^## {re.escape(changes.HEADING)} ", report, re.M)
    if found is None:
        return report
    end = re.search(r"^#", report[found.end():], re.M)
    stop = found.end() + end.start() if end else len(report)
    return report[:found.start()] + re.sub(r"[^\n]", " ", report[found.start():stop]) + \
        report[stop:]


def check(ws: Workspace, offline: bool, report: str | None = None) -> Checked:
    """The integrity of `report` (the published final report by default)."""
    text = _without_changes(read_final_report(ws) if report is None else report)
    store = fetch.folder(ws.root)
    records = fetch.load_index(store)
    claims = claimcheck.listed(claimcheck.load(ws.root / CLAIMS))
    texts = {} if offline else fetch.texts(store, records)
    result = integrity.check(text, claims, sources_of(ws), texts, [] if offline else records)
    return Checked(result, summary(result, offline), offline)


def _with_line(report: str, line: str) -> str:
    """`report` with the integrity line at the end of the stamp's paragraph (none: first)."""
    if report.startswith(STAMP) and "\n\n" in report:
        head, rest = report.split("\n\n", 1)
        return f"{head}\n{LINE}{line}\n\n{rest}"
    return f"{LINE}{line}\n\n{report}"


def publish(ws: Workspace, checked: Checked) -> dict[str, Any]:
    """integrity.json, and the report with its header line and its failures marked (the
    report must be the one `checked` was computed on). Returns integrity.json's data."""
    data = {**checked.result.to_dict(), "summary": checked.summary,
            "offline": checked.offline}
    atomic_write(ws.root / INTEGRITY_JSON, json.dumps(data, indent=2, ensure_ascii=False)
                 + "\n")
    marked = integrity.mark(read_final_report(ws), checked.result)
    atomic_write(ws.final_report, _with_line(marked, checked.summary))
    return data


def load(ws: Workspace) -> dict[str, Any] | None:
    """A run's integrity.json (council's own), or None before there is one."""
    try:
        data = agentfs.read_json(ws.root / INTEGRITY_JSON)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "summary" in data else None


def figures(ws: Workspace) -> dict[str, Any] | None:
    """integrity.json's figures without its items: `council status --json`'s `integrity`."""
    data = load(ws)
    if data is None:
        return None
    out: dict[str, Any] = {"summary": data.get("summary"), "offline": data.get("offline"),
                           "failures": data.get("failures"),
                           "file": str(ws.root / INTEGRITY_JSON)}
    for key in ("quotes", "numbers", "citations"):
        part = data.get(key)
        if isinstance(part, dict):
            out[key] = {k: v for k, v in part.items() if k != "items"}
    part = data.get("sources")
    if isinstance(part, dict):
        out["sources"] = part
    return out


def failures(result: Integrity, report: str) -> list[str]:
    """What failed, one line each (the report's words cut short: model-written text, which
    the repair prompt fences), in the report `result` was computed on."""
    def around(start: int, end: int) -> str:
        return " ".join(report[max(0, start - 100):end + 40].split())

    out = [f'quote not found in its cited source: "{" ".join(q.text.split())[:200]}"'
           for q in result.quotes if q.found is False]
    out += [f"number {n.text} not found in its cited sources, in: …{around(n.start, n.end)}…"
            for n in result.numbers if n.traced is False]
    out += [f"claim sentence without an inline link to its source: "
            f"{' '.join(c.sentence.split())[:200]}"
            for c in result.claims if c.sentence is not None and not c.cited]
    out += [f"cited source {p.url}: {p.why}" for p in result.problems]
    return out[:MAX_LISTED]
