"""Each phase's account: what it cost and what it changed, computed by council from the run's
files, never by a model (`council status --json`'s `phases`, report.html's table, `council
eval`'s cost by phase).

A phase *ran* when state.yaml's `steps` says it ended "done", or an agent has a record of it
(a phase under way, or one a crash cut short), or, for the synthesis, when the final report
exists (the Claude Code session may write it without a seat). Which phases those are is read
from graph.GRAPH and the state, so a run of any depth gets the accounts of what it ran.

Cost: each agent's usage at the phase (ledger.py), its turns (the iterations it reached), the
model requests where the CLI reports them (claude's `num_turns`; the caller reads the logs, see
views/status.py) and the wall time from the agents' first start to their last end.

Effect, per phase, by the rules council already applies elsewhere:

- scope: the sub-questions and dimensions scope.json holds (0 when the scope degraded).
- research: usable reports, distinct sources (sources.canonical), cited claims made
  (regression.cited_claims: a sentence with a URL or numbered reference and four content
  words), summed over the reports.
- refinement: per agent, sources its refined report added and dropped against its research
  report; claims changed (research claims the refined report no longer keeps, by
  regression's rule: reworded past it, or dropped) and new claims (the reverse).
- claims: the claims its extractor listed (claims-draft.json), the coverage it judged
  (sub-questions answered, partial, open; dimensions covered) and the gaps it left
  (gaps.json's plan).
- gapfill: gaps researched, gap reports, sources no feeding report cited; gaps closed as the
  recheck judged them (None when there was no recheck).
- recheck: coverage before and after (claims.json's "before" and its own judgement), gaps
  closed, claims listed anew.
- verification: the verdicts as the synthesis uses them: supported (SUPPORTED), softened
  (OVERSTATED: stated only as far as the evidence goes), dropped (UNSUPPORTED, CONTRADICTED)
  and unverifiable (UNVERIFIED: nobody could check it).
- dissent, antagonist: points raised (`points`) and `answered`: the points whose title the
  final report's Counterpoints section takes up (KEPT of the title's content words appear in
  it). That counts a point taken up, not whether the answer is any good: that would take a
  judgement council cannot compute, so it is left out.
- synthesis: claims carried (of the claims given to it, claims.json's or else the feeding
  reports' cited claims, those the final report keeps by regression's rule, outside its
  Sources and dropped-claims sections) and sources cited (distinct URLs outside the Sources
  section council rebuilds).
- a phase none of these name (one added later): its usable outputs.

Pure over `RunFiles`, which `read` fills from the run folder (bounded, no link followed: an
agent may have left anything at a name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from council import graph
from council.evidence import claimcheck, regression, sources
from council.evidence.coverage import SCOPE
from council.evidence.ledger import Usage, total
from council.store import agentfs
from council.store.state import AgentPhase, RunState
from council.store.workspace import CLAIMS, GAPS, Workspace

READ_LIMIT = 32 << 20  # a published output is cut at max_report_bytes (2 MB by default)
Effect = dict[str, int | None]


@dataclass(frozen=True)
class PhaseAccount:
    """One phase that ran: what it cost, and what it changed (`effect`)."""

    phase: str
    turns: int
    usage: Usage
    wall_s: float | None  # None: a start or an end is not recorded (yet)
    requests: int | None  # None: a CLI of the phase does not report them
    effect: Effect

    def to_dict(self) -> dict[str, Any]:
        used = self.usage
        return {"phase": self.phase, "turns": self.turns, "tokens_in": used.tokens_in,
                "tokens_cached": used.tokens_cached, "tokens_out": used.tokens_out,
                "cost_usd": None if used.cost_usd is None else round(used.cost_usd, 6),
                "estimated": used.estimated,
                "wall_s": None if self.wall_s is None else round(self.wall_s, 3),
                "requests": self.requests, "effect": dict(self.effect)}


@dataclass(frozen=True)
class RunFiles:
    """What the accounts read of a run folder, parsed: published outputs by (seat, phase),
    the final report, and council's JSON files (None: missing or not JSON)."""

    outputs: Mapping[tuple[str, str], str] = field(default_factory=dict)
    final_report: str | None = None
    scope: Any = None
    claims: Any = None
    gaps: Any = None
    # The raw JSON drafts of the judging phases, by phase (claims-draft.json, ...).
    drafts: Mapping[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------ reading

def _text(path: Any) -> str | None:
    try:
        return agentfs.read(path, READ_LIMIT).decode("utf-8", errors="replace")
    except OSError:  # missing, a link, a FIFO, a folder (agentfs.UnsafeFile is an OSError)
        return None


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _json(path: Any) -> Any:
    return _loads(_text(path))


def read(ws: Workspace, state: RunState) -> RunFiles:
    """The files the accounts need, read bounded and without following a link."""
    outputs: dict[tuple[str, str], str] = {}
    drafts: dict[str, Any] = {}
    for name, rec in state.agents.items():
        for recorded, ap in rec.phases.items():
            phase = graph.BY_NAME.get(recorded)  # a record names its phase
            if not ap.usable or phase is None:
                continue
            text = _text(ws.published_output(name, phase))
            if text is None:
                continue
            outputs[(name, phase.name)] = text
            if not phase.per_seat and phase.name not in drafts:
                drafts[phase.name] = _loads(text)
    return RunFiles(outputs, _text(ws.final_report), _json(ws.root / SCOPE),
                    _json(ws.root / CLAIMS), _json(ws.root / GAPS), drafts)


# ------------------------------------------------------------------------------ cost

def ran(state: RunState, files: RunFiles) -> list[graph.Phase]:
    """The phases that ran, in graph order."""
    steps = state.steps or {}
    had = {p for rec in state.agents.values() for p in rec.phases}
    out = [p for p in graph.GRAPH if steps.get(p.name) == graph.DONE or p.name in had]
    if graph.SYNTHESIS not in out and files.final_report is not None:
        out.append(graph.SYNTHESIS)
    return out


def _records(state: RunState, phase: graph.Phase) -> list[tuple[str, AgentPhase]]:
    return [(name, ap) for name, rec in state.agents.items()
            if (ap := rec.phases.get(phase.name)) is not None]


def _wall(records: list[AgentPhase], epoch: Callable[[str | None], float | None]
          ) -> float | None:
    started = [epoch(ap.started_at) for ap in records if ap.started_at]
    ended = [epoch(ap.ended_at) for ap in records if ap.started_at]
    if not started or None in started or None in ended:
        return None
    return max(0.0, max(e for e in ended if e is not None) - min(s for s in started
                                                                   if s is not None))


def _requests(names: list[str], phase: graph.Phase,
              reported: Mapping[tuple[str, str], int | None]) -> int | None:
    counts = [reported.get((name, phase.name)) for name in names]
    if not counts or any(c is None for c in counts):
        return None
    return sum(c for c in counts if c is not None)


def accounts(state: RunState, files: RunFiles,
             requests: Mapping[tuple[str, str], int | None],
             epoch: Callable[[str | None], float | None]) -> list[PhaseAccount]:
    """Every phase that ran, in graph order, with its cost and its effect. `requests`: the
    model requests each (seat, phase) made, where its CLI reports them; `epoch`: a state's
    time in seconds (views.status.epoch)."""
    out = []
    for phase in ran(state, files):
        records = _records(state, phase)
        effect = EFFECTS.get(phase, _outputs)(phase, state, files)
        out.append(PhaseAccount(
            phase.name, sum(ap.iteration for _, ap in records),
            total(ap.usage for _, ap in records),
            _wall([ap for _, ap in records], epoch),
            _requests([name for name, _ in records], phase, requests),
            effect or {"outputs": 0}))
    return out


# ------------------------------------------------------------------------------ effects

def _outputs(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    return {"outputs": sum(1 for (_, p) in files.outputs if p == phase.name)}


def _reports(files: RunFiles, phase: graph.Phase) -> dict[str, str]:
    return {seat: text for (seat, p), text in files.outputs.items() if p == phase.name}


def _urls(text: str) -> set[str]:
    return {c for u in sources.extract(text) if (c := sources.canonical(u))}


def _scope(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    data = files.scope if isinstance(files.scope, dict) and files.scope.get("status") == "ok" \
        else {}
    return {"questions": len(_list(data.get("questions"))),
            "dimensions": len(_list(data.get("dimensions")))}


def _research(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    reports = _reports(files, phase)
    return {"reports": len(reports),
            "sources": len(set().union(*map(_urls, reports.values()))),
            "claims_made": sum(len(list(regression.cited_claims(t))) for t in reports.values())}


def _refinement(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    refined = _reports(files, phase)
    earlier = _reports(files, graph.before(phase))
    added = dropped = changed = new = 0
    for seat, after in refined.items():
        before = earlier.get(seat)
        if before is None:
            continue
        old, now = _urls(before), _urls(after)
        added += len(now - old)
        dropped += len(old - now)
        changed += sum(1 for _ in regression.dropped_claims(before, after))
        new += sum(1 for _ in regression.dropped_claims(after, before))
    return {"reports": len(refined), "sources_added": added, "sources_dropped": dropped,
            "claims_changed": changed, "claims_new": new}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _coverage(judged: Any, suffix: str = "") -> Effect:
    """Sub-questions answered, partial, open and dimensions covered of a judgement."""
    judged = judged if isinstance(judged, dict) else {}
    questions = [q for q in _list(judged.get("questions")) if isinstance(q, dict)]
    dims = [d for d in _list(judged.get("dimensions")) if isinstance(d, dict)]
    out: Effect = {f"questions_{s}{suffix}": sum(1 for q in questions if q.get("status") == s)
                   for s in ("answered", "partial", "open")}
    out[f"dimensions_covered{suffix}"] = sum(1 for d in dims if d.get("covered") is True)
    return out


def _first_judgement(files: RunFiles) -> Any:
    claims = files.claims if isinstance(files.claims, dict) else {}
    if claims.get("judged_by", graph.CLAIMS.name) == graph.CLAIMS.name:
        return claims
    return claims.get("before")


def _planned_gaps(files: RunFiles) -> list[tuple[str, str]]:
    """(kind, id) of every gap gaps.json's plan hands a seat."""
    plan = files.gaps.get("plan") if isinstance(files.gaps, dict) else None
    if not isinstance(plan, dict):
        return []
    return [(str(g.get("kind")), str(g.get("id"))) for batch in plan.values()
            for g in _list(batch) if isinstance(g, dict)]


def _closed(files: RunFiles) -> int | None:
    """Gaps of the plan that the second judgement found answered or covered."""
    claims = files.claims if isinstance(files.claims, dict) else {}
    if claims.get("judged_by") != graph.RECHECK.name:
        return None
    answered = {q.get("id") for q in _list(claims.get("questions"))
                if isinstance(q, dict) and q.get("status") == "answered"}
    covered = {d.get("id") for d in _list(claims.get("dimensions"))
               if isinstance(d, dict) and d.get("covered") is True}
    return sum(1 for kind, gid in _planned_gaps(files)
               if gid in (answered if kind == "question" else covered))


def _claims(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    draft = files.drafts.get(phase.name)
    return {"claims_listed": len(claimcheck.listed(draft if isinstance(draft, dict) else None)),
            **_coverage(_first_judgement(files)), "gaps_found": len(_planned_gaps(files))}


def _gapfill(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    gap_reports = _reports(files, phase)
    feeding = graph.feeding(state.steps, lambda p: any(k[1] == p.name for k in files.outputs))
    known = set().union(*map(_urls, _reports(files, feeding).values()))
    found = set().union(*map(_urls, gap_reports.values()))
    return {"gaps": len(_planned_gaps(files)), "reports": len(gap_reports),
            "sources_new": len(found - known), "gaps_closed": _closed(files)}


def _recheck(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    claims = files.claims if isinstance(files.claims, dict) else {}
    after = claims if claims.get("judged_by") == phase.name else None
    draft = files.drafts.get(phase.name)
    return {**_coverage(claims.get("before") if after else _first_judgement(files), "_before"),
            **_coverage(after, "_after"), "gaps_closed": _closed(files),
            "claims_listed": len(claimcheck.listed(draft if isinstance(draft, dict) else None))}


SOFTENED = ("OVERSTATED",)
DROPPED = ("UNSUPPORTED", "CONTRADICTED")


def _verification(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    claims = files.claims if isinstance(files.claims, dict) else None
    verdicts = [str(c.get("verdict")) for c in claimcheck.listed(claims) if isinstance(c, dict)]
    return {"claims_checked": len(verdicts),
            "supported": verdicts.count("SUPPORTED"),
            "softened": sum(verdicts.count(v) for v in SOFTENED),
            "dropped": sum(verdicts.count(v) for v in DROPPED),
            "unverifiable": sum(1 for v in verdicts if v not in claimcheck.VERDICTS)}


# ------------------------------------------------------------------------ the opposition

HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.+)$")  # a top-level list item: no indent
OPPOSING = re.compile(r"opposing case", re.I)
# The headings the dissent and antagonist prompts prescribe around the points themselves.
FRAME = re.compile(r"^(?:\d+\.\s*)?(?:the likely consensus|the opposing case|disconfirming "
                   r"evidence|what would settle it|what survives|sources?|references?|"
                   r"counterpoints|dissent)\b", re.I)
COUNTERPOINTS_SECTION = re.compile(r"^##\s+(?:\d+\.\s*)?Counterpoints\b.*$", re.M | re.I)
DROPPED_SECTION = re.compile(r"^##\s+Claims Dropped in Verification\s*$", re.M | re.I)


def _lines(text: str) -> Iterable[str]:
    """The memo's lines outside code blocks."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield line


def points(memo: str) -> list[str]:
    """The points a dissent or antagonist memo raises, by the structure its prompt asks for:
    the `###` headings (else the top-level list items) under its "Opposing Case" section;
    without one, its `##` headings other than the frame (consensus, disconfirming evidence,
    what would settle it, what survives, sources)."""
    inside = False
    under: list[str] = []
    items: list[str] = []
    sections: list[str] = []
    for line in _lines(memo):
        heading = HEADING.match(line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2).strip()
            if level <= 2:
                inside = bool(OPPOSING.search(title))
                if level == 2 and not FRAME.match(title):
                    sections.append(title)
            elif level == 3 and inside:
                under.append(title)
            continue
        item = ITEM.match(line)
        if inside and item:
            items.append(item.group(1).strip())
    return under or items or sections


def answered(raised: list[str], final_report: str | None) -> int | None:
    """How many of the points the final report's Counterpoints section takes up (None: no
    final report)."""
    if final_report is None:
        return None
    found = COUNTERPOINTS_SECTION.search(final_report)
    if found is None:
        return 0
    nxt = re.search(r"^## ", final_report[found.end():], re.M)
    section = final_report[found.end():found.end() + nxt.start() if nxt else None]
    return regression.kept(raised, section)


def _opposition(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    """Points the memo (the dissent's, the antagonist's) raised, and how many the final
    report takes up."""
    memo = next((t for (_, p), t in files.outputs.items() if p == phase.name), None)
    raised = points(memo or "")
    return {"points": len(raised), "answered": answered(raised, files.final_report)}


def _synthesis(phase: graph.Phase, state: RunState, files: RunFiles) -> Effect:
    report = files.final_report or ""
    body = sources.remove_section(sources.remove_section(report, sources.SOURCES_HEADING),
                                  DROPPED_SECTION)
    listed = [str(c.get("claim", "")) for c in claimcheck.listed(
        files.claims if isinstance(files.claims, dict) else None) if isinstance(c, dict)]
    if not listed:
        feeding = graph.feeding(state.steps,
                                lambda p: any(k[1] == p.name for k in files.outputs))
        listed = [c for t in _reports(files, feeding).values()
                  for c in regression.cited_claims(t)]
    return {"claims_given": len(listed), "claims_carried": regression.kept(listed, body),
            "sources_cited": len(_urls(body))}


EFFECTS: Mapping[graph.Phase, Callable[[graph.Phase, RunState, RunFiles], Effect]] = {
    graph.SCOPE: _scope, graph.RESEARCH: _research, graph.DISSENT: _opposition,
    graph.REFINEMENT: _refinement, graph.CLAIMS: _claims, graph.GAPFILL: _gapfill,
    graph.RECHECK: _recheck, graph.VERIFICATION: _verification,
    graph.ANTAGONIST: _opposition, graph.SYNTHESIS: _synthesis,
}
