"""The final report's frame, written by council rather than by an agent: the stamp line at the
top (who contributed, the phases that ran, the score), the completeness score and coverage
before and after the gap fill, the provenance notes and the Sources rebuilt from the ledger.
With it, the run's rules that frame rests on: who contributed (`contributions`), the claims'
verdicts as recorded (`verification_facts`), the completeness record and the check of the
published snapshots. They are the run's records, not a view of it, so they sit on the evidence
floor, where the phases, the engine and the hosts' hand-back all read them; views/ only
renders (page.py shows what this module wrote).

The final report is replaced whole (disk.atomic_write: temp file, fsync, rename), never
rewritten in place: under the Claude Code plugin it is the main session's synthesis, with no
other copy, and a full disk or a kill between a truncate and a write would lose it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from council import graph
from council.domains import Policy
from council.errors import PhaseFailedError
from council.evidence import changes, claimcheck, fetch, regression, score, sources
from council.evidence.coverage import SCOPE
from council.evidence.coverage import load as load_scope
from council.runoptions import OTHER_VENDORS, checkers
from council.store import agentfs, events, loop, snapshots
from council.store.disk import atomic_write
from council.store.state import AgentPhase, RunState, SeatStatus, States
from council.store.workspace import CLAIMS, Workspace

STAMP = "> council run "
PROVENANCE = "## Provenance"
PROVENANCE_HEADING = re.compile(r"^##\s+Provenance\s*$", re.M | re.I)
# The phases whose seats write research reports: the ledger's sources.
REPORT_PHASES = tuple(p.name for p in graph.GRAPH if p.report)
# Read at most this much of the final report: far above any report (an agent's is cut at
# max_report_bytes, 2 MB by default), and a bound on a sparse or endless file.
FINAL_REPORT_LIMIT = 32 << 20


def read_final_report(ws: Workspace) -> str:
    """The final report's text, read as what an agent left (agentfs): a link, a FIFO or a
    device at its name is not published (PhaseFailedError) but never followed or waited on."""
    try:
        data = agentfs.read(ws.final_report, FINAL_REPORT_LIMIT)
    except agentfs.UnsafeFile as exc:
        raise PhaseFailedError(f"{exc}: the final report was not published") from exc
    return data.decode("utf-8", errors="replace")


def verification_facts(ws: Workspace) -> dict[str, Any] | None:
    """claims.json as checked (claimcheck.load): what the skip decisions, the synthesis's
    prompt and the stamp read of the claims and their verdicts, or None before there are any."""
    return claimcheck.load(ws.root / CLAIMS)


def contributions(state: RunState) -> tuple[str, list[str]]:
    """(the phase whose reports feed the phases after it, the agents that produced a usable
    one): the one rule (graph.feeding), which the synthesis and the checks before it
    (RunContext.contributors), the host's hand-off and the completeness score all use."""
    def usable(phase: str) -> list[str]:
        return [n for n, rec in state.agents.items()
                if (ap := rec.phases.get(phase)) is not None and ap.usable]

    phase = graph.feeding(state.steps, lambda p: bool(usable(p.name)))
    return phase.name, usable(phase.name)


# How a reader is told why a seat is missing: a failure's kind (agents/failure.Kind's values,
# council's own, and the words of runs recorded before those kinds), as a few words.
KIND_WORDS = {
    "plan_limit": "plan limit", "quota": "quota spent", "rate_limit": "rate limit",
    "overloaded": "vendor overloaded", "auth": "login refused", "stream_cut": "stream cut",
    "no_answer": "no answer", "crash": "crashed", "timeout": "timed out",
    "idle": "no output (idle)", "no_report": "wrote no report",
    "unsafe_report": "report not safe to publish", "missing_cli": "CLI not installed",
    "server": "server error", "network": "network error",
}
# The kinds whose end the vendor names (a reset): the record says until when.
TIMED = ("plan_limit", "quota")


@dataclass(frozen=True)
class Missing:
    """A seat the run started with that has no report the later phases build on, and why:
    its failure's kind, when the vendor said it may be tried again, and whether what it had
    finished was published as partial."""

    seat: str
    kind: str | None  # the failure's kind; None: it never ran, or ran without failing
    until: str | None = None  # ISO 8601 UTC, for a plan limit or a quota
    partial: bool = False

    def until_text(self) -> str | None:
        return _utc(self.until) if self.until else None

    def describe(self) -> str:
        """`codex: plan limit until 2026-11-30 00:53 UTC`."""
        why = KIND_WORDS.get(self.kind or "", self.kind or "did not finish")
        if self.partial:
            why = f"partial report ({why})"
        shown = self.until_text()
        return f"{self.seat}: {why}" + (f" until {shown}" if shown else "")


def _utc(stamp: str) -> str | None:
    """An ISO time as the records show it: `2026-11-30 00:53 UTC`; None if it is not one."""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def last_failure(phases: dict[str, AgentPhase]) -> AgentPhase | None:
    """A seat's latest failed (or partly published) record among the feeding phases."""
    found = [ap for p in reversed(graph.FEEDS) if (ap := phases.get(p.name)) is not None
             and (ap.status == SeatStatus.FAILED or ap.partial)]
    return found[0] if found else None


def missing(state: RunState, contributors: list[str] | None = None) -> list[Missing]:
    """The seats the run started with that the phases after the research do not build on (or
    build on a partial report of), each with why (pure, from the state). `contributors`: the
    agents with a usable report (contributions()), when the caller has them."""
    if contributors is None:
        contributors = contributions(state)[1]
    out = []
    for name, rec in state.agents.items():
        failed = last_failure(rec.phases)
        if name in contributors and (failed is None or not failed.partial):
            continue
        dropped = (state.dropped or {}).get(name)
        kind = failed.failure if failed is not None else (
            dropped.split(":", 1)[0] if dropped else None)
        until = failed.retry_at if failed is not None and kind in TIMED else None
        out.append(Missing(name, kind, until, failed is not None and failed.partial
                           and name in contributors))
    return out


def contributed_line(contributors: list[str], total: int, lost: list[Missing]) -> str:
    """The header's `2 of 3 agents contributed (claude, gemini); codex: plan limit until
    2026-11-30 00:53 UTC`."""
    return (f"{len(contributors)} of {graph.counted(total, 'agent')} contributed "
            f"({', '.join(contributors)})" + "".join(f"; {m.describe()}" for m in lost))


def stamp_final_report(ws: Workspace, states: States, contributors: list[str], total: int,
                       writer: str) -> None:
    """Put who actually contributed at the top: a degraded run must not read like a full one.
    `states`: the run's owner (the synthesis), or its file (the host session's hand-back)."""
    cut = states.state.budget_exhausted
    facts = verification_facts(ws)
    checked = claimcheck.summary(facts) if facts else None
    # Who checked them, where it was not other vendors (seats of one self-hosted model family).
    seats = states.state.options.seats
    who = checkers(seats)
    by = "" if len(seats) < 2 or who == OTHER_VENDORS else f", checked by {who}"
    body = body_of(loop.without_mark(read_final_report(ws)))  # the marker: not for readers
    ledger = _write_ledger(ws, states.state, body)
    opening = _changes(ws, states.state, ledger)
    result = record_completeness(ws, states, ledger)
    changed = check_snapshots(ws, states)  # with the seats that moved to a fallback CLI
    state = states.state
    gaps_filled = gap_fill_ran(state)
    lost = missing(state, contributors)
    header = (f"{STAMP}`{ws.id}` · {contributed_line(contributors, total, lost)} · "
              f"{score.headline(result)} · "
              f"depth {state.options.depth}: {phases_ran(ws, state)} · synthesised by {writer}"
              + (f" · claims: {checked}{by}" if checked else " · claims not checked"
                 + (f": {why}" if (why := graph.claims_unchecked(state.options)) else ""))
              + (f" · cut short by the budget ({cut})" if cut else "")
              + (f" · {graph.counted(len(changed), 'provenance note')}, see Provenance"
                 if changed else "")
              + "\n\n")
    section = score.section(result)
    change = claimcheck.coverage_change(facts)
    if change:
        section += f"\n{change}\n"
    if changed:
        section += (f"\n{PROVENANCE}\n\n" + "".join(f"- {line}\n" for line in changed))
    if gaps_filled and not change:
        section += ("\n_The gap-filling round's findings were not judged again: coverage is "
                    "as judged before it._\n")
    body = sources.replace_sources(sources.remove_section(
        sources.remove_section(body, score.HEADING), PROVENANCE_HEADING),
                                   section + "\n" + sources.sources_section(
                                       ledger, Policy.of(state.options.sources)))
    atomic_write(ws.final_report, header + opening + body)  # redacted there


def body_of(report: str) -> str:
    """A final report without what council put before its first heading: the stamp line
    (from an earlier, interrupted attempt, or the earlier run a --since run patches) and the
    section "What changed since …", which runs to the report's own first heading (council
    writes it with list lines only). The rest is left byte for byte: a --since run's
    synthesis patches it, and a paragraph nothing touched must stay identical."""
    if report.startswith(STAMP):
        report = report.split("\n\n", 1)[-1]
    if report.startswith(f"## {changes.HEADING} "):
        found = re.search(r"^#", report[3:], re.M)
        report = report[3 + found.start():] if found else ""
    return report


def _changes(ws: Workspace, state: RunState, ledger: sources.Ledger) -> str:
    """In a --since run, what changed since the earlier run (changes.compare), written to
    changes.json and changes.md; the final report's opening section. "" otherwise."""
    since = state.options.since
    if since is None:
        return ""
    earlier = ws.root.parent / since
    before, cited_then = changes.recorded(earlier)
    now = claimcheck.listed(verification_facts(ws))
    pages = changes.load_pages(fetch.folder(ws.root))
    not_checked = None
    if pages is None:  # nothing was fetched again: say why, when there was something to fetch
        why = changes.OFFLINE if state.options.offline or fetch.offline() else \
            changes.NOT_FETCHED
        not_checked = (why, len(changes.refetchable(earlier)))
    found = changes.compare(since, before, now, cited_then,
                            [s.url for s in ledger.ordered() if s.agents], pages or (),
                            not_checked)
    text = changes.markdown(found)
    atomic_write(ws.root / changes.CHANGES_JSON,
                 json.dumps(found, indent=2, ensure_ascii=False) + "\n")
    atomic_write(ws.root / changes.CHANGES_MD, text)
    events.emit(ws.root, "run", changes.headline(found))
    return text + "\n"


def gap_fill_ran(state: RunState) -> bool:
    return any((ap := rec.phases.get(graph.GAPFILL.name)) is not None and ap.usable
               for rec in state.agents.values())


def phases_ran(ws: Workspace, state: RunState) -> str:
    """`scope → research ∥ dissent → refinement → … → synthesis`: the phases that ran, from
    the graph and the state, with what was degraded, and the refinement when its own rule
    skipped it (a phase the depth leaves out is not news: the header names the depth)."""
    steps = state.steps or {}
    facts = verification_facts(ws)
    ran = {name for name, what in steps.items() if what == graph.DONE} | {graph.SYNTHESIS.name}
    if not steps:  # a run made before the graph was recorded: what its files show
        ran |= {p.name for p in graph.GRAPH if p.loops
                and any(p.name in rec.phases for rec in state.agents.values())}
    degraded = {graph.SCOPE.name: not load_scope(ws.root / SCOPE),
                graph.VERIFICATION.name: facts is not None
                and facts.get("status") in ("degraded", "extracted")}

    def label(name: str) -> str:
        shown = graph.BY_NAME[name].label
        return f"{shown} (degraded)" if degraded.get(name) else shown

    out = " → ".join(" ∥ ".join(label(n) for n in group) for group in graph.groups(ran))
    first, last = graph.FEEDS[0], graph.FEEDS[-1]
    if last.name not in ran and graph.by_depth(last, state.options) is None:
        out = out.replace(first.label, f"{first.label} → ({last.label} skipped)", 1)
    return out


def record_completeness(ws: Workspace, states: States,
                        ledger: sources.Ledger | None = None) -> score.Completeness:
    """The run's completeness score (score.py) from its reports, verdicts and survivors,
    recorded in the run's state."""
    state = states.state
    if ledger is None:
        ledger = sources.build(_reports(ws, state))
    _, contributors = contributions(state)
    result = score.compute(state.options.mode,
                           [s.url for s in ledger.ordered() if s.agents],
                           verification_facts(ws), len(contributors), len(state.agents),
                           graph.unchecked(state.options))
    states.update(lambda s: setattr(s, "completeness", result.to_dict()))
    return result


def check_snapshots(ws: Workspace, states: States) -> list[str]:
    """Name, once each, the published snapshots (or their originals) that changed since
    publication; returns them all, for the final report's provenance."""
    state = states.state
    known = list(state.provenance or [])
    found = snapshots.changes(ws, state)
    new = [line for line in found if line not in known]
    if new:
        states.update(lambda s: setattr(s, "provenance", [*(s.provenance or []), *new]))
        for line in new:
            events.emit(ws.root, "run", f"provenance: {line}")
    return [*known, *new]


def _reports(ws: Workspace, state: RunState) -> list[tuple[str, str, str]]:
    out = []
    for name, rec in state.agents.items():
        for phase in REPORT_PHASES:
            text = loop.read_report(ws.published_output(name, phase))
            if text and (ap := rec.phases.get(phase)) is not None and ap.usable:
                out.append((name, phase, text))
    return out


def _write_ledger(ws: Workspace, state: RunState, final_report: str) -> sources.Ledger:
    """sources.json from every report of the run; the final report's Sources come from it."""
    final = graph.SYNTHESIS.name
    writer = state.synthesizer or final
    ledger = sources.build([*_reports(ws, state), (writer, final, final_report)])
    # state keeps the first dropped sources and "… and N more": the URLs and the count apart
    listed = {name: ap.dropped_sources for name, rec in state.agents.items()
              for ap in rec.phases.values() if ap.dropped_sources}
    regressions = {name: urls[:regression.MAX_LISTED] for name, urls in listed.items()}
    totals = {name: regression.total(urls) for name, urls in listed.items()}
    sources.write(ws.root / "sources.json", ledger, regressions, totals,
                  Policy.of(state.options.sources))
    return ledger
