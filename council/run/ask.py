"""`council ask [ID] QUESTION`: a follow-up question on a finished run, answered by one seat
of that run from the run's own evidence, without paying for the research again.

- `prepare` decides everything that can refuse the ask before anything is sent (no CLI is
  started): the run (find_run, with `act`: a foreign run is refused as `report` and `resume`
  refuse it), that a supervisor does not hold it (a running run is its supervisor's), that it
  has a final report, and which seat answers (the run's synthesiser, or `--agent`). Each
  refusal is one line and exit 2.
- `ask` runs the seat like any phase's (seat/runner.py), declared once as graph.ASK: its
  own folder (agents/<seat>.ask/), the run's evidence copied in as its inputs (final report,
  the agents' published reports, claims.json, sources.json, the pages the agents fetched),
  file tools only, at most two turns, its usage in the run's ledger under that name. The
  prompt also holds the stored text of the run's sources most relevant to the question
  (evidence/asking.py `relevant`: at most asking.ASK_PAGES pages from the evidence store,
  research/<id>/evidence/), cut, folded and fenced as verification shows them
  (phases/evidence.py `shown`), which the answer may quote. With
  `--research` the two turns are two conversations: a research turn with the web tools,
  which writes notes, then the answering turn with file tools only, given those notes as one
  more input (the web is offered where it is used, not to the turn that writes the answer).
  It holds the run's lock while it runs, so no resume starts meanwhile.
- council then checks the answer (evidence/asking.py: URLs outside the run's sources,
  claims named with their verdicts, quotes not in the stored text of the page they cite;
  a run without a store, an older or an offline one, gets its quotes marked not checked,
  with why), appends what it found, and writes
  research/<id>/asks/<n>-<slug>.md through agentfs's no-follow writer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from council import graph, prompts
from council.agents.pages import fetched_pages
from council.errors import CouncilError, UsageError
from council.evidence import asking, claimcheck, fetch, reportcheck
from council.evidence.finalreport import REPORT_PHASES, read_final_report
from council.evidence.ledger import Usage, format_usage
from council.phases import RunContext, seat_task
from council.phases.evidence import shown
from council.runoptions import Seat
from council.seat.runner import Limits, run_seat
from council.store import agentfs, events, loop, provenance, redact
from council.store.disk import atomic_write
from council.store.owner import StateOwner, owned
from council.store.runlock import RunLock, live_supervisor
from council.store.state import AgentPhase, RunState, readable
from council.store.workspace import CLAIMS, Workspace, find_run, phase_of

ASK = graph.ASK
SOURCES = "sources.json"
PAGES = "fetched-pages.md"  # the pages the agents fetched, as one file of the ask's inputs
NOTES = "ask-research-notes.md"  # the research turn's notes, an input of the answering turn
NOTES_TURN, ANSWER_TURN = "notes", "answer"  # the prompt's turns: research notes, the answer
MAX_QUESTION = 4000  # characters: a question, not a document
NO_STORE = "the run has no evidence store (it ran before council kept one, or cited no page)"
OFFLINE = "the run ran offline: council fetched no page to check them against"
WHAT = {graph.RESEARCH.name: "research report", graph.REFINEMENT.name: "refined report",
        graph.DISSENT.name: "dissent memo", graph.GAPFILL.name: "gap-fill report"}


class AskError(UsageError):
    """The ask cannot be sent: an unknown or foreign run, one still running, one without a
    final report, a seat the run does not have. Nothing was started (exit 2)."""


@dataclass(frozen=True)
class Prepared:
    ws: Workspace
    state: RunState
    seat: Seat
    question: str
    research: bool


@dataclass(frozen=True)
class Asked:
    path: Path  # research/<id>/asks/<n>-<slug>.md
    found: asking.Check
    seat: str
    usage: Usage
    quotes: asking.Quoted


def prepare(run_id: str | None, question: str, agent: str | None = None,
            research: bool = False, base: Path | None = None) -> Prepared:
    """Every check before an ask; raises AskError (one line) or returns what to send."""
    question = question.strip()
    if not question:
        raise AskError("the question is empty")
    if len(question) > MAX_QUESTION:
        raise AskError(f"the question is {len(question):,} characters; keep it under "
                       f"{MAX_QUESTION:,}")
    try:
        ws = find_run(run_id, base, act="ask a question of")
        provenance.require_own(ws.root, "ask a question of")  # the latest too
    except CouncilError as exc:
        raise AskError(str(exc)) from None
    holder = live_supervisor(ws.root)
    if holder is not None:
        raise AskError(f"run {ws.id} is running (supervisor pid {holder.pid}) and its "
                       f"supervisor owns it; ask once it has ended (`council status {ws.id}`)")
    if not ws.final_report.is_file():
        raise AskError(f"run {ws.id} has no final report to ask about "
                       f"(`council status {ws.id}` says where it stopped)")
    state = readable(ws.root)
    seats = {s.name: s for s in state.options.seats}
    name = agent or (state.synthesizer if state.synthesizer in seats
                     else state.options.synthesizer)
    if name not in seats:
        raise AskError(f"run {ws.id} has no agent {name!r}; its agents: "
                       f"{', '.join(seats)}")
    return Prepared(ws, state, seats[name], question, research)


def evidence(ws: Workspace, state: RunState,
             question: str) -> tuple[dict[str, Path], dict[str, Any]]:
    """The run's evidence as the ask's inputs (name in its folder → council's published
    file), and what the prompt says of them, with the stored pages relevant to `question`."""
    inputs: dict[str, Path] = {ws.final_report.name: ws.final_report}
    reports = []
    for name, rec in state.agents.items():
        for phase in map(phase_of, REPORT_PHASES):  # finalreport's names
            ap = rec.phases.get(phase.name)
            path = ws.published_output(name, phase)
            if ap is not None and ap.usable and path.is_file():
                inputs[path.name] = path
                reports.append({"name": name, "file": path.name,
                                "what": WHAT.get(phase.name, phase.name)})
    listing: dict[str, Any] = {"reports": reports, "claims_file": None, "sources": None,
                               "pages": None, "claim_list": [], "stored": None,
                               "stored_limit": asking.ASK_PAGES}
    claims = claimcheck.load(ws.root / CLAIMS)
    if claims is not None:
        inputs[CLAIMS] = ws.root / CLAIMS
        listing["claims_file"] = CLAIMS
        listing["claim_list"] = [
            {"id": c["id"], "verdict": c.get("verdict") or "UNVERIFIED",
             "claim": " ".join(str(c.get("claim", "")).split())[:300]}
            for c in claims.get(claimcheck.KEY) or []
            if isinstance(c, dict) and isinstance(c.get("id"), str)]
    if (ws.root / SOURCES).is_file():
        inputs[SOURCES] = ws.root / SOURCES
        listing["sources"] = SOURCES
    pages = fetched_pages(ws.root)
    if pages:
        path = ws.work / PAGES
        atomic_write(path, "".join(f"## {url}\n\n{text}\n\n" for url, text in pages.items()))
        inputs[PAGES] = path
        listing["pages"] = PAGES
    listing["stored"] = _stored(ws, question, claimcheck.listed(claims))
    return inputs, listing


def _stored(ws: Workspace, question: str,
            claims: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The stored pages relevant to `question` (asking.relevant), as verification shows
    them (`shown`); None when the store holds no page's text."""
    store = fetch.folder(ws.root)
    stored = {r.canonical or r.url for r in fetch.load_index(store) if r.ok}
    if not stored:
        return None
    chosen = asking.relevant(question, claims, read_final_report(ws),
                             reportcheck.sources_of(ws), stored)
    return shown(ws, [{"sources": [url]} for url in chosen]) if chosen else None


def ask(prepared: Prepared, publish: Callable[[Workspace], object] | None = None) -> Asked:
    """Send the ask, check the answer and write it; `publish` rebuilds the run's page (the
    engine imports no view: the caller hands it). Raises CouncilError when the seat gives no
    answer (exit 1: it was sent)."""
    ws, seat = prepared.ws, prepared.seat
    with RunLock(ws.root), owned(ws.root) as owner:
        inputs, listing = evidence(ws, owner.state, prepared.question)
        name = asking.answer_name(prepared.question, asking.listed(ws.root))
        number = name.split("-", 1)[0]
        answer, used = _converse(_Turns(prepared, owner, listing), inputs, number)
        found, quotes = _write_answer(prepared, owner.state, name, answer, used)
        _keep_log(ws, seat.name, number)
        events.emit(ws.root, ASK.name, f"finished: {asking.ASKS}/{name} ({len(found.cited)} "
                    f"of the run's sources cited, {graph.counted(len(found.claims), 'claim')} named"
                    + (f", {graph.counted(len(found.outside), 'URL')} outside them"
                       if found.outside else "")
                    + f"; quotes {quotes.line})")
    if publish is not None:
        publish(ws)
    return Asked(ws.root / asking.ASKS / name, found, seat.name, used, quotes)


@dataclass(frozen=True)
class _Turns:
    """What an ask's conversations share: the ask, the run's owner (the lock is held), what
    the prompt says of the run's evidence."""
    prepared: Prepared
    owner: StateOwner
    listing: dict[str, Any]

    def turn(self, which: str, given: dict[str, Path], notes: str | None, tools: str | None,
             turns: int | None, limits: Limits) -> tuple[str | None, Usage, str | None]:
        """One conversation of the seat: (its report, its usage, its error)."""
        ws, seat, state = self.prepared.ws, self.prepared.seat, self.owner.state
        folder = ws.work_dir(seat.name, ASK)
        if folder.is_dir():  # an earlier answer or turn would make this one a "resume"
            agentfs.remove(folder, ws.output_name(seat.name, ASK))
        text = prompts.render(
            ASK.prompt, topic=state.topic, question=self.prepared.question, turn=which,
            inputs=str(ws.peers_dir(seat.name, ASK)), notes=notes,
            final_report=ws.final_report.name, marker=loop.MARKER,
            report_path=str(ws.working_output(seat.name, ASK)), **self.listing)
        task = seat_task(ASK, seat, text, given, own=turns)
        record: AgentPhase = anyio.run(run_seat, ws, self.owner, replace(task, tools=tools),
                                       limits)
        published = ws.published_output(seat.name, ASK)
        report = loop.read_report(published) if record.usable else None
        if published.is_file():
            agentfs.remove(ws.root, published.name)
        return report, Usage.from_dict(record.usage), record.error


def _converse(talk: _Turns, inputs: dict[str, Path], number: str) -> tuple[str, Usage]:
    """The ask's conversations (a research turn first, with `--research`), each booked in the
    ledger as it ends: (the answer, their usage). Raises CouncilError without an answer."""
    prepared, owner = talk.prepared, talk.owner
    ws, seat, state = prepared.ws, prepared.seat, owner.state
    before = state.agents[seat.name].phases.get(ASK.name)
    earlier = Usage.from_dict(before.usage) if before is not None else Usage()
    limits = replace(RunContext(ws, owner, state.options, state.topic).limits(ASK),
                     budgeted=False)  # the run's budget was the research's
    events.emit(ws.root, ASK.name, f"started: {seat.name} answers a follow-up question"
                + (" with a research turn" if prepared.research else ""))
    used, notes = Usage(), None
    if prepared.research:  # one turn with the web tools, its notes for the answer
        found_notes, spent, _ = talk.turn(NOTES_TURN, inputs, None, graph.WEB, 1, limits)
        used += spent
        owner.update(lambda s: _book(s, seat.name, earlier + used))
        _keep_log(ws, seat.name, f"{number}-research")
        if found_notes:
            atomic_write(ws.work / NOTES, found_notes)
            inputs, notes = {**inputs, NOTES: ws.work / NOTES}, NOTES
    answer, spent, error = talk.turn(ANSWER_TURN, inputs, notes, None,
                                     1 if prepared.research else None, limits)
    used += spent
    owner.update(lambda s: _book(s, seat.name, earlier + used))
    if not answer:
        raise CouncilError(f"{seat.name} gave no answer: {error or 'no text'}; "
                           f"see {ws.root / 'progress.log'}")
    return answer, used


def _write_answer(prepared: Prepared, state: RunState, name: str, answer: str,
                  used: Usage) -> tuple[asking.Check, asking.Quoted]:
    """Check the answer against the run's evidence and write it, with what the check found,
    to research/<id>/asks/<name> (redacted, through agentfs's no-follow writer)."""
    ws, seat = prepared.ws, prepared.seat
    found = asking.check(answer, asking.run_sources(_json(ws.root / SOURCES)),
                         claimcheck.load(ws.root / CLAIMS), prepared.research)
    body = "\n".join(ln for ln in answer.splitlines() if ln.strip() != loop.MARKER)
    quotes = _quotes(ws, state, body)
    text = (asking.header(prepared.question, ws.id, seat.name, seat.cli, prepared.research)
            + body.strip() + "\n" + asking.footer(found, format_usage(used), quotes))
    agentfs.write(ws.root, f"{asking.ASKS}/{name}", redact.clean(text))
    return found, quotes


def _quotes(ws: Workspace, state: RunState, answer: str) -> asking.Quoted:
    """The answer's quotes checked against the stored texts of the pages it cites (only
    those texts are read); not checked, with why, when the run has no store."""
    store = fetch.folder(ws.root)
    records = fetch.load_index(store)
    if not records:
        offline = state.options.offline or (reportcheck.load(ws) or {}).get("offline") is True
        return asking.Quoted(unchecked=OFFLINE if offline else NO_STORE)
    sources = reportcheck.sources_of(ws)
    cited = asking.attributed(answer, sources)
    texts = fetch.texts(store, [r for r in records if (r.canonical or r.url) in cited])
    return asking.quoted(answer, sources, texts, records)


def _book(state: RunState, seat: str, total: Usage) -> None:
    """The seat's `ask` line of the ledger holds every ask it answered on this run."""
    state.agents[seat].phase(ASK.name).usage = {**total.to_dict(), "per_iteration": []}


def _keep_log(ws: Workspace, seat: str, number: str) -> None:
    """This ask's CLI log (or its research turn's), kept under the answer's number, so the
    next conversation's usage is read from a log of its own."""
    for path in (ws.log_file(seat, ASK), ws.stderr_file(seat, ASK)):
        if path.is_file() and not path.is_symlink():
            path.rename(path.with_name(path.name.replace(f"-{ASK.name}.",
                                                         f"-{ASK.name}-{number}.", 1)))


def _json(path: Path) -> Any:
    try:
        return agentfs.read_json(path)
    except (OSError, ValueError):
        return None
