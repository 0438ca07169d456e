"""`council ask`, MCP `ask_research`: a follow-up question about a finished run, answered by
one of its agents from the run's own evidence (run/ask.py). The run's page, when it has one,
gets the answer in its follow-ups section, whichever surface asked."""

from __future__ import annotations

from dataclasses import dataclass, field

from council.commands.report import MAX_REPORT_BYTES, read_text, refresh
from council.graph import counted
from council.run import ask as asking
from council.run.ask import Prepared
from council.run.ask import prepare as prepare

__all__ = ["Answered", "Prepared", "answer", "prepare", "summary"]


@dataclass(frozen=True)
class Answered:
    run_id: str
    answer_file: str
    markdown: str
    agent: str
    cited: list[str]  # the run's sources the answer cites
    outside: list[str]  # URLs it cites that are not the run's (new with research, else flagged)
    claims: list[str]  # "c3 (SUPPORTED)": the run's claims it names
    research: bool  # it could search: its outside URLs are new sources, not flags
    # Its quotes against the evidence store's text of the pages they cite: the footer's
    # words ("1 of 2 found in the stored pages", or not checked and why), and the ones not
    # found there.
    quotes: str = "none to check"
    quotes_not_found: list[str] = field(default_factory=list)


def answer(prepared: Prepared) -> Answered:
    """Ask the prepared question (the seat's two turns at most) and read its answer."""
    done = asking.ask(prepared, publish=refresh)
    found = done.found
    return Answered(prepared.ws.id, str(done.path), read_text(done.path, MAX_REPORT_BYTES),
                    done.seat, list(found.cited), list(found.outside),
                    [f"{cid} ({verdict})" for cid, verdict in found.claims], found.research,
                    done.quotes.line, list(done.quotes.missing))


def summary(answered: Answered) -> str:
    """What the answer rests on, in one line."""
    outside = len(answered.outside)
    return (f"{len(answered.cited)} of the run's sources cited, "
            f"{counted(len(answered.claims), 'claim')} named"
            + (f", {counted(outside, 'URL')} not among the run's sources"
               if outside and not answered.research else "")
            + (f", {counted(outside, 'new source')}" if outside and answered.research else "")
            + (f", {counted(len(answered.quotes_not_found), 'quote')} not found in the "
               "stored pages" if answered.quotes_not_found else ""))
