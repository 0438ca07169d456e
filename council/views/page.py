"""report.html: the final report with everything a reader needs to judge it, in one page.

The markdown report, rendered, with each cited source numbered and linked to a table of who
found it and whether anyone cross-checked it; the claims with their verdicts; the coverage
score and the gaps left; the dissent and the antagonist's points, with where the report
answers them; and each agent's timeline with its tokens and cost.

Everything an agent wrote is untrusted: markdown is parsed with raw HTML off, then the HTML
goes through nh3 (an allow-list sanitiser), and the page's Content-Security-Policy forbids
scripts and every network request. The page has no script of its own, so any `<script>` in
its DOM is an injection that survived. Built from the run's files alone, so `council report`
can rebuild it for any run, including runs made before this page existed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

from council import graph
from council.domains import Policy
from council.evidence import asking, claimcheck, reportcheck, score, sources
from council.evidence.finalreport import (
    FINAL_REPORT_LIMIT,
    PROVENANCE_HEADING,
    REPORT_PHASES,
    STAMP,
)
from council.evidence.ledger import Usage, by_phase, format_cost, format_usage, spent, total
from council.runoptions import no_search
from council.store import agentfs
from council.store.loop import MARKER
from council.store.state import RunState, said
from council.store.workspace import CLAIMS, COUNTERPOINTS, DISSENT, Workspace
from council.views.status import epoch, phase_accounts

PAGE = "report.html"
SOURCES_FILE = "sources.json"
# What markdown-it can produce from a report, and nothing else: no img (a remote image is a
# request the reader did not make), no style attribute (CSS can load URLs), no form.
TAGS = {"a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "s",
        "code", "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th",
        "td", "sup", "sub", "span"}
ATTRIBUTES = {"a": {"href", "title", "class"}, "ol": {"start"}, "sup": {"class"},
              "span": {"class"}, **{f"h{n}": {"id"} for n in range(1, 7)}}
SCHEMES = {"http", "https", "mailto"}
HEADING_ID = "r-"  # ids from the report's headings, apart from the page's own
ANSWERS = re.compile(r"counterpoint|dissent|objection|opposing|rebuttal|criticism", re.I)
VERDICT_CLASS = {"SUPPORTED": "supported", "UNSUPPORTED": "disputed", "OVERSTATED": "disputed",
                 "CONTRADICTED": "disputed", "UNVERIFIED": "unverified"}
PHASE_COLOURS = {p.name: p.colour for p in graph.GRAPH}  # declared with each phase

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("council", "templates"),
    undefined=jinja2.StrictUndefined,
    autoescape=True,
    keep_trailing_newline=True,
)
_ENV.filters["counted"] = graph.counted  # "1 claim", "3 claims": `n|counted("claim")`


# ---------------------------------------------------------------- markdown, made safe
@dataclass
class Citations:
    """Canonical URL → source number, and which numbers the report cites, in order."""

    numbers: Mapping[str, int]
    used: list[int] = field(default_factory=list)

    def number(self, url: str) -> int | None:
        key = sources.canonical(url)
        n = self.numbers.get(key) if key else None
        if n is not None and n not in self.used:
            self.used.append(n)
        return n


def _markdown(citations: Citations | None, prefix: str = HEADING_ID) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

    def annotate(state: StateCore) -> None:
        seen: dict[str, int] = {}
        tokens = state.tokens
        for i, token in enumerate(tokens):
            if token.type == "heading_open" and i + 1 < len(tokens):
                slug = _slug(tokens[i + 1].content)
                seen[slug] = seen.get(slug, 0) + 1
                token.attrSet("id", prefix + slug + (f"-{seen[slug]}" if seen[slug] > 1
                                                     else ""))
            if token.type == "inline" and token.children:
                token.children = list(_links(token.children, citations))

    md.core.ruler.push("council_links", annotate)
    md.add_render_rule("image", _image_as_link)
    return md


def _links(children: Sequence[Token], citations: Citations | None) -> Iterator[Token]:
    """Bare URLs become links; a link to a ledger source is followed by its number."""
    href: str | None = None
    for token in children:
        if token.type == "text" and href is None:
            yield from _linkify(token, citations)
            continue
        yield token
        if token.type == "link_open":
            href = str(token.attrGet("href") or "")
        elif token.type == "link_close":
            yield from _cite(href or "", citations)
            href = None


def _linkify(token: Token, citations: Citations | None) -> Iterator[Token]:
    text, at = token.content, 0
    for start, end, url in sources.bare_urls(text):
        if start > at:
            yield _text(text[at:start])
        target = url if "://" in url else "https://" + url
        yield Token("link_open", "a", 1, attrs={"href": target})
        yield _text(url)
        yield Token("link_close", "a", -1)
        yield from _cite(target, citations)
        at = end
    if at < len(text):
        yield _text(text[at:])


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def _cite(url: str, citations: Citations | None) -> Iterator[Token]:
    n = citations.number(url) if citations else None
    if n is not None:
        yield Token("html_inline", "", 0,
                    content=f'<sup class="cite"><a href="#source-{n}">[{n}]</a></sup>')


def _image_as_link(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                   env: Any) -> str:
    """An image would be fetched on opening the page: show it as a link instead."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    return (f'<a class="image" href="{_attr(src)}">image: {_attr(alt)}</a>'
            if src.startswith(("http://", "https://")) else f"image: {_attr(alt)}")


def _attr(value: str) -> str:
    return str(Markup.escape(value))


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-")[:60] or "section"


def safe_html(markdown: str, citations: Citations | None = None, prefix: str = HEADING_ID,
              inline: bool = False) -> Markup:
    """Untrusted markdown as HTML that can run nothing and load nothing (`inline`: one
    paragraph's worth, for a table cell)."""
    markdown = markdown.replace(MARKER, "")  # the agents' loop marker means nothing here
    md = _markdown(citations, prefix)
    html = md.renderInline(markdown) if inline else md.render(markdown)
    cleaned = nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=SCHEMES,
                        link_rel="noopener noreferrer nofollow", strip_comments=True)
    return Markup(cleaned)  # noqa: S704 - sanitised by nh3 just above


# ---------------------------------------------------------------- the page's parts
@dataclass(frozen=True)
class SourceRow:
    n: int
    url: str
    agents: list[str]
    phases: list[str]
    status: str  # cross-checked / one agent / gap fill only / synthesis only
    claims: list[tuple[str, str]]  # (claim id, verdict) of claims citing it
    cited: bool  # the final report cites it
    policy: str | None = None  # outside the run's source policy: why (domains.DENIED, …)


@dataclass(frozen=True)
class Bar:
    x: float  # percent of the width
    width: float
    phase: str
    colour: str
    title: str


@dataclass(frozen=True)
class Lane:
    agent: str
    cli: str
    bars: list[Bar]
    iterations: int
    usage: str


def _source_rows(ledger: Mapping[str, Any], checked: Mapping[str, Any] | None,
                 cited: Iterable[int]) -> list[SourceRow]:
    by_source: dict[str, list[tuple[str, str]]] = {}
    for claim in claimcheck.listed(checked):
        for url in claim.get("sources") or []:
            key = sources.canonical(str(url))
            if key:
                by_source.setdefault(key, []).append(
                    (str(claim.get("id", "?")), str(claim.get("verdict") or "not checked")))
    in_report = set(cited)
    rows: list[SourceRow] = []
    for entry in ledger.get("sources") or []:
        cited_by: Mapping[str, list[str]] = entry.get("cited_by") or {}
        agents = sorted(a for a, phases in cited_by.items()
                        if set(phases) - {graph.SYNTHESIS.name})
        phases = sorted({p for ps in cited_by.values() for p in ps})
        if entry.get("synthesis_only") or not agents:
            status = "only in the synthesis"
        elif entry.get("gap_fill_only"):
            status = "gap fill only: not cross-checked"
        elif len(agents) > 1:
            status = f"cross-checked: found by {len(agents)} agents"
        else:
            status = "one agent only"
        n = int(entry.get("n", len(rows) + 1))
        rows.append(SourceRow(n, str(entry.get("url", "")), agents, phases, status,
                              by_source.get(sources.canonical(str(entry.get("url", ""))) or "",
                                            []), n in in_report,
                              str(entry["policy"]) if entry.get("policy") else None))
    return rows


def _ledger(ws: Workspace, state: RunState) -> dict[str, Any]:
    """sources.json, or for a run without one, the ledger rebuilt from its reports."""
    try:
        data = agentfs.read_json(ws.root / SOURCES_FILE)
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):
        pass
    texts = []
    for name in state.agents:
        for phase in REPORT_PHASES:
            text = _read(ws.published_output(name, phase))
            if text is not None:
                texts.append((name, phase, text))
    return sources.build(texts).to_dict()


def _lanes(state: RunState) -> tuple[list[Lane], float]:
    """Each agent's phases as bars on one time axis (percent of the run), and its length.
    The axis spans the run's phases only: a `council ask` turn, a day later perhaps, would
    squeeze every bar to a sliver (its turns are listed apart: _asks)."""
    spans = [(s, e) for rec in state.agents.values() for phase, ap in rec.phases.items()
             if phase != graph.ASK.name and (s := epoch(ap.started_at)) is not None
             and (e := epoch(ap.ended_at) or epoch(state.updated_at) or s) is not None]
    if not spans:
        return [], 0.0
    begin = min(s for s, _ in spans)
    length = max(max(e for _, e in spans) - begin, 1.0)
    lanes = []
    for name, rec in state.agents.items():
        bars, started = [], []
        for phase, ap in rec.phases.items():
            start = epoch(ap.started_at)
            if start is None or phase == graph.ASK.name:
                continue
            started.append(ap)
            end = epoch(ap.ended_at) or epoch(state.updated_at) or start
            used = Usage.from_dict(ap.usage)
            x = (start - begin) / length * 100
            bars.append(Bar(round(x, 2), round(max((end - start) / length * 100, 0.6), 2),
                            phase, PHASE_COLOURS.get(phase, "#777777"),
                            f"{phase}: {said(ap.status, ap.max_iterations)}, "
                            f"{graph.counted(ap.iteration, 'iteration')}, "
                            f"{end - start:.0f} s, {format_usage(used)}"))
        lanes.append(Lane(name, rec.cli, bars, sum(ap.iteration for ap in started),
                          format_usage(total(ap.usage for ap in started))))
    return lanes, length


@dataclass(frozen=True)
class AskTurn:
    agent: str
    started: str  # when the follow-up began (UTC, to the minute)
    seconds: int
    usage: str


def _asks(state: RunState) -> list[AskTurn]:
    """The `council ask` turns, apart from the run's timeline: each agent's last one (its
    state keeps one record of the phase), when it began, how long it took, what it cost."""
    turns = []
    for name, rec in state.agents.items():
        ap = rec.phases.get(graph.ASK.name)
        start = epoch(ap.started_at) if ap is not None else None
        if ap is None or start is None:
            continue
        end = epoch(ap.ended_at) or start
        turns.append(AskTurn(name, str(ap.started_at)[:16].replace("T", " "),
                             round(end - start), format_usage(Usage.from_dict(ap.usage))))
    return turns


def _report_body(ws: Workspace) -> tuple[str | None, str | None]:
    """(the final report without council's stamp, Completeness and Sources sections, which
    the page shows as its own parts; the stamp line)."""
    text = _read(ws.final_report)
    if text is None:
        return None, None
    stamp = None
    if text.startswith(STAMP):
        first, _, text = text.partition("\n")
        stamp = first[2:].strip().replace("`", "")
    for heading in (sources.SOURCES_HEADING, score.HEADING, PROVENANCE_HEADING):
        text = sources.remove_section(text, heading)
    return text, stamp


def _read(path: Path) -> str | None:
    """A report of the run's, or None when there is none (or a link, a FIFO stands there:
    the page is read by a person, so nothing it shows is read through a link)."""
    try:
        return agentfs.read_text(path, FINAL_REPORT_LIMIT)
    except OSError:
        return None


def render(ws: Workspace, state: RunState) -> str:
    """The page's HTML for a run, from its files and its state (the owner's at the end of a
    run, the file's for `council report` and `open`), which it only reads."""
    ledger = _ledger(ws, state)
    numbers = {key: int(e["n"]) for e in ledger.get("sources") or []
               if (key := sources.canonical(str(e.get("url", "")))) is not None}
    citations = Citations(numbers)
    body, stamp = _report_body(ws)
    report = safe_html(body, citations) if body is not None else None
    answered = [(str(token.attrGet("id")), token.content) for token in _headings(body or "")
                if ANSWERS.search(token.content)]
    checked = claimcheck.load(ws.root / CLAIMS)
    opposition = [(title, safe_html(text, prefix=prefix)) for title, text, prefix in (
        ("Dissent: the strongest case against the consensus", _read(ws.root / DISSENT),
         "dissent-"),
        ("The antagonist's counterpoints", _read(ws.root / COUNTERPOINTS), "counter-"))
        if text]
    lanes, length = _lanes(state)
    return _ENV.get_template("report.html.j2").render(
        followups=_followups(ws, Citations(numbers)),  # not the report's own citations
        state=state, stamp=stamp, report=report, answered=answered,
        sources=_source_rows(ledger, checked, citations.used),
        malformed=ledger.get("malformed") or [],
        policy=(Policy.of(ledger["policy"]).describe()
                if isinstance(ledger.get("policy"), dict) else None),
        claims=_claim_rows(checked), coverage=_coverage(state, checked),
        opposition=opposition, lanes=lanes, length=length, colours=PHASE_COLOURS,
        asks=_asks(state),
        total=format_usage(spent(state)), spending=_spending(state),
        accounts=_accounts(ws, state),
        # Seats that had neither their vendor's web search nor an MCP search server.
        no_search=no_search(state.options.seats),
        integrity=_integrity(ws),
    )


INTEGRITY_ROWS = 200  # rows of the integrity table; integrity.json holds them all


def _integrity(ws: Workspace) -> dict[str, Any] | None:
    """integrity.json as the page's table (reportcheck.py): its header line, and one row
    per quote, number and claim sentence checked, and per cited source gone or retracted,
    failures first."""
    data = reportcheck.load(ws)
    if data is None:
        return None
    rows: list[dict[str, Any]] = []

    def items(key: str) -> list[Mapping[str, Any]]:
        part = data.get(key)
        listed = part.get("items") if isinstance(part, Mapping) else None
        return [i for i in listed or [] if isinstance(i, Mapping)]

    def said(value: Any, yes: str, no: str) -> str:
        return yes if value is True else no if value is False else "not checked"

    for q in items("quotes"):
        rows.append({"kind": "quote", "text": f"“{q.get('text', '')}”", "ok": q.get("found"),
                     "result": said(q.get("found"), "found", "not found")})
    for n in items("numbers"):
        rows.append({"kind": "number", "text": str(n.get("text", "")), "ok": n.get("traced"),
                     "result": said(n.get("traced"), "traced", "not traced")})
    for c in items("citations"):
        if c.get("sentence") is not None:
            rows.append({"kind": "claim sentence", "text": str(c.get("sentence")),
                         "ok": bool(c.get("cited")),
                         "result": "cited" if c.get("cited") else "no inline citation"})
    sources_ = data.get("sources")
    for p in (sources_.get("problems") or []) if isinstance(sources_, Mapping) else []:
        if isinstance(p, Mapping):
            rows.append({"kind": "source", "text": str(p.get("url", "")), "ok": False,
                         "result": str(p.get("why", ""))})
    rows.sort(key=lambda r: r["ok"] is not False)  # failures first, each kind in order
    return {"summary": str(data.get("summary", "")), "rows": rows[:INTEGRITY_ROWS],
            "more": max(0, len(rows) - INTEGRITY_ROWS)}


ASK_LIMIT = 4 << 20  # bytes of one answer shown; an answer is a few paragraphs


def _followups(ws: Workspace, citations: Citations) -> list[tuple[str, str, Markup]]:
    """The run's follow-up answers (`council ask`): file name, question, the answer as safe
    HTML (model-written, sanitised like the report; its headings' ids kept apart)."""
    out = []
    for n, name in enumerate(asking.listed(ws.root), 1):
        try:
            text = agentfs.read_text(ws.root / asking.ASKS / name, ASK_LIMIT)
        except OSError:
            continue
        question = asking.question_of(text)
        body = text.split("\n", 1)[1] if question else text
        out.append((name, question or name, safe_html(body, citations, prefix=f"ask{n}-")))
    return out


@dataclass(frozen=True)
class AccountRow:
    """One phase that ran, as the page's table shows it: its cost and what it changed."""

    phase: str
    turns: str
    requests: str
    tokens: str
    cost: str
    wall: str
    effect: str


def _accounts(ws: Workspace, state: RunState) -> list[AccountRow]:
    """Each phase's account (evidence/accounts.py), in words: the effect as `name value`
    pairs (`-` for a measure the run could not take)."""
    rows = []
    for a in phase_accounts(state, ws):
        used = a.usage
        rows.append(AccountRow(
            graph.BY_NAME[a.phase].label, str(a.turns),
            "-" if a.requests is None else str(a.requests),
            f"{used.tokens_in:,} ({used.tokens_cached:,} cached) / {used.tokens_out:,}",
            format_cost(used.cost_usd, used.estimated, used.self_hosted, 4),
            "-" if a.wall_s is None else f"{a.wall_s:.0f} s",
            ", ".join(f"{key.replace('_', ' ')} {'-' if value is None else value}"
                      for key, value in a.effect.items())))
    return rows


def _spending(state: RunState) -> list[dict[str, str]]:
    """Each agent's tokens (input, of it cached, output) and cost at each phase it took part
    in, as the page's table shows them (`~` for council's estimate)."""
    def cost(row: dict[str, Any]) -> str:
        return format_cost(row["cost_usd"], row["estimated"], bool(row.get("self_hosted")), 4)

    return [{"agent": r["agent"], "phase": r["phase"], "tokens_in": f"{r['tokens_in']:,}",
             "tokens_cached": f"{r['tokens_cached']:,}", "tokens_out": f"{r['tokens_out']:,}",
             "cost": cost(r)} for r in by_phase(state)]


def _headings(markdown: str) -> list[Token]:
    """The report's headings, as annotated (with their ids) for the page."""
    tokens = _markdown(None).parse(markdown)
    return [Token("heading", "", 0, attrs={"id": str(t.attrGet("id"))},
                  content=tokens[i + 1].content)
            for i, t in enumerate(tokens) if t.type == "heading_open"]


@dataclass(frozen=True)
class ClaimRow:
    id: str
    claim: str
    agent: str
    verdict: str
    kind: str  # supported / disputed / unverified
    verifier: str
    evidence: Markup  # the verifier's words: untrusted, its URLs made links
    outside_policy: bool = False  # its sources are all outside the run's source policy


def _claim_rows(checked: Mapping[str, Any] | None) -> list[ClaimRow]:
    rows = []
    for claim in claimcheck.listed(checked):
        verdict = str(claim.get("verdict") or "UNVERIFIED")
        rows.append(ClaimRow(str(claim.get("id", "")), str(claim.get("claim", "")),
                             str(claim.get("agent", "")), verdict.lower(),
                             VERDICT_CLASS.get(verdict, "unverified"),
                             str(claim.get("verifier") or "-"),
                             safe_html(str(claim.get("evidence") or ""), inline=True),
                             claim.get(claimcheck.OUTSIDE) is True))
    return rows


@dataclass(frozen=True)
class Coverage:
    score: int | None
    signals: list[dict[str, Any]]
    questions: list[tuple[str, str]]  # (question, status)
    dimensions: list[tuple[str, bool]]
    change: str | None  # before and after the gap fill
    gaps: list[str]
    unscored: str | None = None  # why the run is not scored (score.py), when it is not


def _coverage(state: RunState, checked: Mapping[str, Any] | None) -> Coverage:
    done = state.completeness or {}
    signals = [{"name": name.replace("_", " "), **value}
               for name, value in (done.get("signals") or {}).items() if isinstance(value, dict)]
    questions = [(str(q.get("question", "")), str(q.get("status", "open")))
                 for q in (checked or {}).get("questions") or []]
    dimensions = [(str(d.get("dimension", "")), bool(d.get("covered")))
                  for d in (checked or {}).get("dimensions") or []]
    gaps = [q for q, status in questions if status != "answered"] + \
        [d for d, covered in dimensions if not covered]
    raw = done.get("score")
    unscored = done.get("unscored")
    return Coverage(int(raw) if isinstance(raw, (int, float)) else None, signals, questions,
                    dimensions, claimcheck.coverage_change(checked) if checked else None, gaps,
                    str(unscored) if unscored else None)


def build(ws: Workspace, state: RunState) -> Path:
    """Write the run's report.html (atomically: a reader never sees half a page)."""
    from council.store.disk import atomic_write

    path = ws.root / PAGE
    atomic_write(path, render(ws, state))
    return path


def publish(ws: Workspace, state: RunState) -> Path | None:
    """Write report.html at a run's end and say where; a page that cannot be written is
    an event, never a failure of the run it describes."""
    from council.store import events

    try:
        path = build(ws, state)
    except Exception as exc:  # the run has ended: its page must not undo it
        events.emit(ws.root, "run", f"could not write {PAGE}: {type(exc).__name__}: {exc}; "
                    f"`council report {ws.id}` tries again")
        return None
    events.emit(ws.root, "run", f"page: {path}")
    return path
