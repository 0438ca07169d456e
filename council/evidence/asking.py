"""Follow-up questions on a finished run (`council ask`): the decisions about an answer, as
pure functions of text, so they are tested without a process.

- `slug` and `answer_name`: the answer's file name, research/<id>/asks/<n>-<slug>.md. The
  question is untrusted text (a user's, or an MCP client's model's): only lowercase ASCII
  letters, digits and single hyphens reach the name, at most SLUG_CHARS of them.
- `check`: the URLs an answer cites, set against the run's own sources (sources.json, the
  same canonical form the ledger uses). A URL the run never cited is flagged, or, when the
  ask was allowed to research (`--research`), marked new: a model can make a URL up, and a
  reader must see which links the run's evidence stands behind. Every link a viewer would
  follow counts, however it is spelt (`HTTPS://`, a protocol-relative `//host`, a host with
  full-width dots, `example。com`); one that is no web address council can check (`data:`,
  `javascript:`) is always flagged.
- `claims_named`: the claim ids of claims.json an answer names, with their verdicts.
- `relevant`: which of the evidence store's pages an ask is shown (issue 44), by a rule
  simple enough to state in the prompt: the sources of the run's claims and of the final
  report's sentences that share most words with the question, then the final report's own
  sources, only pages the store holds a text of, at most ASK_PAGES.
- `quoted`: the answer's quotes, checked against the stored texts of the pages they cite
  by the report's own check (integrity.py's quote matching), so a quote a model made up is
  named, as a made-up link is.
- `footer`: the few lines council appends to every answer, saying all of that.
- `listed`: the answers a run holds, for `council status` and report.html.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.evidence import integrity
from council.evidence.claimcheck import KEY
from council.evidence.sources import canonical, extract

ASKS = "asks"  # the run folder's folder of answers
SLUG_CHARS = 48
ANSWER = re.compile(rf"^(\d{{1,6}})-([a-z0-9-]{{0,{SLUG_CHARS}}})\.md$")
CLAIM_ID = re.compile(r"\b(c\d{1,4})\b")
FOOTER = "## Checked by council"
# Links a markdown viewer follows that sources.extract (a report's citations) does not read:
# an autolink of any scheme (`<data:text/html,…>`), and a bare URL with its scheme in
# capitals (`HTTPS://`), which a viewer links as it does `https://`.
MORE_LINKS = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]{0,31}:[^>\s]+)>|"
                        r"(?<![<\w/])((?i:https?|ftp)://[^\s<>\"'`\]]+)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]{0,31}:|^//")  # a link that leaves the file
# The dots a browser's IDNA mapping reads as `.` in a host: ideographic, full-width,
# half-width ideographic.
DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
SHOWN_CHARS = 200  # an unchecked link in the footer (a data: URL may be megabytes)
ASK_PAGES = 6  # stored pages an ask is shown (each cut as verification cuts it)


def slug(question: str) -> str:
    """The question as a file name's part: lowercase ASCII words joined by hyphens, at most
    SLUG_CHARS characters, cut at a word's end where it can be; "question" when nothing
    safe is left (a question in another script, or only punctuation)."""
    words = re.findall(r"[a-z0-9]+", question.lower())
    out = ""
    for word in words:
        joined = f"{out}-{word}" if out else word
        if len(joined) > SLUG_CHARS:
            if not out:
                out = word[:SLUG_CHARS]
            break
        out = joined
    return out or "question"


def answer_name(question: str, existing: Iterable[str]) -> str:
    """`<n>-<slug>.md`, n one more than the highest number among `existing` names."""
    numbers = [int(m.group(1)) for name in existing if (m := ANSWER.match(name))]
    return f"{max(numbers, default=0) + 1}-{slug(question)}.md"


def run_sources(data: Mapping[str, Any] | None) -> set[str]:
    """The canonical URLs of a run's sources.json (each source's url and its variants)."""
    out: set[str] = set()
    for source in (data or {}).get("sources") or []:
        if not isinstance(source, Mapping):
            continue
        for url in [source.get("url"), *(source.get("variants") or [])]:
            if isinstance(url, str) and (key := canonical(url)):
                out.add(key)
    return out


@dataclass(frozen=True)
class Check:
    """What council found in an answer."""

    cited: tuple[str, ...]  # the run's sources it cites, canonical, in order
    outside: tuple[str, ...]  # URLs it cites that the run never cited, canonical, in order
    claims: tuple[tuple[str, str], ...]  # (claim id, verdict) of the claims it names
    research: bool  # it was allowed to research: its outside URLs are new sources, not flags
    # Links that leave the answer but are no web address council can check (`data:`,
    # `javascript:`, a malformed host), as written: flagged whatever the ask could do.
    unchecked: tuple[str, ...] = ()

    @property
    def flagged(self) -> tuple[str, ...]:
        """Links a reader should distrust: outside URLs when the ask had no web to find them
        with, and every unchecked link."""
        return (() if self.research else self.outside) + self.unchecked

    def to_dict(self) -> dict[str, Any]:
        return {"cited": list(self.cited), "new" if self.research else "flagged":
                list(self.outside), KEY: [{"id": i, "verdict": v} for i, v in self.claims],
                "unchecked": list(self.unchecked)}


def claims_named(answer: str, claims: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(id, verdict) of each claim of claims.json the answer names, in the order named."""
    verdicts = {c["id"]: str(c.get("verdict") or "UNVERIFIED")
                for c in (claims or {}).get(KEY) or []
                if isinstance(c, Mapping) and isinstance(c.get("id"), str)}
    named = dict.fromkeys(m.group(1) for m in CLAIM_ID.finditer(answer))
    return [(cid, verdicts[cid]) for cid in named if cid in verdicts]


def check(answer: str, sources: set[str], claims: Mapping[str, Any] | None,
          research: bool) -> Check:
    """The URLs `answer` cites, split into the run's `sources` and the rest, and the claims
    it names. The answer's own footer, if a model wrote one, counts like any other text."""
    urls, unchecked = [], []
    for link in links(answer):
        key = canonical(_spelt(link))
        if key:
            urls.append(key)
        elif SCHEME.match(link):
            unchecked.append(link)
    ordered = list(dict.fromkeys(urls))
    return Check(tuple(u for u in ordered if u in sources),
                 tuple(u for u in ordered if u not in sources),
                 tuple(claims_named(answer, claims)), research,
                 tuple(dict.fromkeys(unchecked)))


def links(text: str) -> list[str]:
    """Every link target in a markdown text, as written: its citations (sources.extract),
    its autolinks of any scheme and its bare URLs whatever the scheme's case."""
    found = extract(text)
    for match in MORE_LINKS.finditer(text):
        if match.group(1):
            found.append(match.group(1))
        else:  # read as extract reads a bare URL (the sentence's full stop is not its own)
            scheme, sep, rest = match.group(2).partition("://")
            found += extract(scheme.lower() + sep + rest)
    return found


def _spelt(link: str) -> str:
    """A link as a browser reads it: a protocol-relative `//host/…` is https, a scheme is
    case-blind, and a host's full-width dots are dots."""
    if link.startswith("//"):
        link = "https:" + link
    scheme, sep, rest = link.partition("://")
    if not sep:
        return link
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.translate(DOTS)}{slash}{path}"


def relevant(question: str, claims: Sequence[Mapping[str, Any]], report: str,
             sources: Sequence[Mapping[str, Any]], stored: Collection[str],
             limit: int = ASK_PAGES) -> list[str]:
    """The canonical URLs of the stored pages most relevant to `question`, at most `limit`.

    Each claim of claims.json (`claims`, its text) and each sentence of the final report
    (`report`; its `[n]` marks read through sources.json's `sources`) scores the number of
    the question's content words it holds (integrity.content_words). Those scoring above
    nothing give their sources, best first (a tie: claims before the report's sentences,
    each in its own order); then the sources the final report cites, in its order, fill
    what is left. Only pages the store holds a text of (`stored`, canonical URLs) count."""
    asked = integrity.content_words(question)
    said = integrity.sentences(report, _numbered(sources))
    units = [(str(c.get("claim", "")),
              tuple(u for x in c.get("sources") or [] if (u := canonical(str(x)))))
             for c in claims]
    units += [(s.masked, s.sources) for s in said]
    scores = [len(asked & integrity.content_words(text)) for text, _ in units]
    best = sorted((i for i, score in enumerate(scores) if score), key=lambda i: -scores[i])
    ordered = [u for i in best for u in units[i][1]] + [u for s in said for u in s.sources]
    return [u for u in dict.fromkeys(ordered) if u in stored][:limit]


@dataclass(frozen=True)
class Quoted:
    """An answer's quotes (a span of at least integrity.QUOTE_WORDS words in quotation
    marks), checked against the stored text of the pages cited beside them."""

    found: int = 0
    checked: int = 0
    missing: tuple[str, ...] = ()  # the quotes not found in the stored page they cite
    open: int = 0  # not checked: their pages have no stored text (or only a cut part)
    unattributed: int = 0  # not checked: no link to a source beside them
    unchecked: str | None = None  # why no quote could be checked (no store), or None

    @property
    def line(self) -> str:
        """The footer's words, e.g. `1 of 2 found in the stored pages`."""
        if self.unchecked is not None:
            return f"not checked: {self.unchecked}"
        if not (self.checked or self.open or self.unattributed):
            return "none to check"
        parts = [f"{self.found} of {self.checked} found in the stored pages"] \
            if self.checked else []
        if self.open:
            parts.append(f"{self.open} not checked (no stored text of the page it cites)")
        if self.unattributed:
            parts.append(f"{self.unattributed} not checked (no source named beside it)")
        return "; ".join(parts)


def _numbered(sources: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """sources.json's sources by their number: what a `[n]` mark cites."""
    return {s["n"]: s["url"] for s in sources
            if isinstance(s.get("n"), int) and isinstance(s.get("url"), str)}


def attributed(answer: str, sources: Sequence[Mapping[str, Any]]) -> set[str]:
    """The canonical URLs `answer`'s sentences cite (links, and `[n]` marks read through
    sources.json's `sources`): the stored texts its quotes can be checked against."""
    return {u for s in integrity.sentences(answer, _numbered(sources)) for u in s.sources}


def quoted(answer: str, sources: Sequence[Mapping[str, Any]], texts: Mapping[str, str],
           records: Iterable[integrity.Fetched] = ()) -> Quoted:
    """The quotes of `answer`, each searched in the stored text (`texts`: canonical URL →
    text, fetch.texts; those of `attributed` are enough) of the sources it is attributed
    to: the final report's check
    (integrity.check), its quotes only. `sources`: sources.json's, for `[n]` marks;
    `records`: the store's, so a page cut at the store's limits is not checked."""
    result = integrity.check(answer, [], sources, texts, records)
    found, checked, open_ = result.quote_counts
    return Quoted(found, checked, tuple(q.text for q in result.quotes if q.found is False),
                  open_, result.unattributed_quotes)


def footer(found: Check, usage: str, quotes: Quoted) -> str:
    """council's lines under an answer: what it rests on, whether its quotes are in the
    pages they cite, and what it cost."""
    lines = ["", "---", "", FOOTER, ""]
    lines.append(f"- Sources of the run it cites: {len(found.cited)}.")
    if found.claims:
        lines.append("- Claims of the run it names: "
                     + ", ".join(f"{cid} ({verdict})" for cid, verdict in found.claims) + ".")
    else:
        lines.append("- It names no claim of the run.")
    if found.outside and found.research:
        lines.append("- New sources, found by this ask's own research (not checked by "
                     "another agent):")
        lines += [f"  - {url}" for url in found.outside]
    elif found.outside:
        lines.append("- Not among the run's sources (the ask had no web: a link the model "
                     "may have made up; do not rely on it):")
        lines += [f"  - {url}" for url in found.outside]
    if found.unchecked:
        lines.append("- Links that are no web address council can check (do not follow "
                     "them):")
        lines += [f"  - `{_shown(link)}`" for link in found.unchecked]
    lines.append(f"- Quotes: {quotes.line}.")
    if quotes.missing:
        lines.append("- Not found in the stored text of the page it cites (a quote the "
                     "model may have made up; do not rely on it):")
        lines += [f"  - \"{_cut(' '.join(q.split()))}\"" for q in quotes.missing]
    lines.append(f"- Cost: {usage}.")
    return "\n".join(lines) + "\n"


def _shown(link: str) -> str:
    """An unchecked link as the footer shows it: code, never a link, cut short."""
    return _cut(link).replace("`", "%60")


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def listed(root: Path) -> list[str]:
    """The answers of a run (file names under asks/), oldest first; none when asks/ is not
    a folder of its own (a link is not followed)."""
    folder = root / ASKS
    if folder.is_symlink() or not folder.is_dir():
        return []
    names = [entry.name for entry in os.scandir(folder)
             if ANSWER.match(entry.name) and entry.is_file(follow_symlinks=False)]
    return sorted(names, key=lambda n: int(n.split("-", 1)[0]))


def question_of(text: str) -> str:
    """The question an answer file opens with (`# Q: …`), for listing it."""
    first = text.split("\n", 1)[0]
    return first[len("# Q: "):].strip() if first.startswith("# Q: ") else ""


def header(question: str, run_id: str, seat: str, cli: str, research: bool) -> str:
    """The answer file's opening lines, written by council above the model's answer."""
    one_line = " ".join(question.split())
    how = "with a research turn" if research else "from the run's evidence only"
    return (f"# Q: {one_line}\n\n> council ask on run `{run_id}` · answered by {seat} "
            f"({cli}) {how}\n\n")

