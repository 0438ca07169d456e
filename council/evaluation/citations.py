"""Cited claims: the (claim, URL) pairs a report makes, a fair sample of them to check, and
what council already holds of each page.

A quality judge rewards a report that sounds well sourced; whether its sources say what it
claims is another question, and the one a reader pays for. So the pairs are read from the
final report itself, the same way for every configuration (a single agent's report has no
claims.json), and the page text comes from what the run's agents fetched (claude's WebFetch
and gemini's web_fetch results in their logs), wherever the run has it.

Pure functions of text, except `fetched_pages`, which reads a run's logs (streamed, bounded)."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from council.agents.pages import MAX_PAGE_CHARS, fetched_pages

# A report's headings, code fences and sentences, read as the regression check reads them.
from council.evidence.regression import FENCE, HEADING, SENTENCE_END
from council.evidence.sources import LINK, canonical, extract

META_HEADING = re.compile(r"(?:\d+\.\s*)?(?:comprehensive\s+)?(?:sources?|references?|"
                          r"bibliography|works cited|completeness)(?:\s*\(.*\))?\s*:?", re.I)
ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
REFERENCE = re.compile(r"\[\^?(\d+(?:[,\s]+\^?\d+)*)\]")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
NUMBERED = re.compile(r"^\s*(?:\[(\d+)\]|(\d+)[.)])\s+(.*)$")
MIN_WORDS = 4  # a "claim" of fewer words (`Source: <url>`) belongs to the statement before
MAX_CLAIM_CHARS = 600
MAX_CITATIONS = 5  # citations checked per report (council eval --max-citations)
# council's own header line on a final report (who contributed, its completeness score):
# not the configuration's writing, and it names the configuration, so a judge never sees it.
HEADER = re.compile(r"\A\s*> council run `[^`]*`[^\n]*\n(?:>[^\n]*\n)*")


@dataclass(frozen=True)
class Citation:
    claim: str
    url: str  # canonical (sources.canonical)

    def to_dict(self) -> dict[str, str]:
        return {"claim": self.claim, "url": self.url}


def for_judging(report: str) -> str:
    """The report as a reader judges it: without council's header line and Completeness
    section, which describe the run (and name its configuration), not the answer."""
    text = HEADER.sub("", report, count=1)
    out, skipping = [], False
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            skipping = heading.group(1).strip().lower() == "completeness"
        if not skipping:
            out.append(line)
    return "\n".join(out).strip() + "\n"


def numbered_sources(report: str) -> dict[str, str]:
    """The report's Sources list by number (`1. <url> — …`, `[2] Title, url`): how a
    numbered reference `[2]` in the text resolves, as a reader would look it up."""
    found: dict[str, str] = {}
    in_sources = in_code = False
    for line in report.splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        heading = None if in_code else HEADING.match(line)
        if heading:
            in_sources = bool(META_HEADING.fullmatch(heading.group(1).strip()))
            continue
        match = NUMBERED.match(line) if in_sources and not in_code else None
        if match:
            urls = extract(match.group(3))
            if urls:
                found.setdefault(match.group(1) or match.group(2), urls[0])
    return found


def _blocks(report: str) -> Iterator[str]:
    """The report's statements outside headings, code and its Sources (and Completeness)
    sections: a bullet or wrapped paragraph is one block, a table row its own."""
    block: list[str] = []
    in_meta = in_code = False
    for line in report.splitlines():
        if FENCE.match(line):
            in_code = not in_code
            yield from _flush(block)
            continue
        heading = None if in_code else HEADING.match(line)
        if heading or in_code or not line.strip():
            yield from _flush(block)
            if heading:
                in_meta = bool(META_HEADING.fullmatch(heading.group(1).strip()))
            continue
        if in_meta:
            continue
        row = line.count("|") >= 2
        if ITEM.match(line) or row:
            yield from _flush(block)
        block.append(ITEM.sub("", line).strip(" |"))
        if row:
            yield from _flush(block)


def _flush(block: list[str]) -> Iterator[str]:
    if block:
        yield " ".join(block)
        block.clear()


def _content_words(sentence: str) -> int:
    bare = REFERENCE.sub(" ", LINK.sub(" ", sentence))
    return len(WORD.findall(bare))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CLAIM_CHARS else text[:MAX_CLAIM_CHARS - 1] + "…"


def cited_claims(report: str) -> list[Citation]:
    """Every (claim, URL) pair of the report, in order, without repeats. A claim is a
    sentence (bullet, table row) that carries a link or a numbered reference resolved
    through the Sources list; a link standing alone (`- https://…`, `Source: https://…`)
    cites the statement before it."""
    numbers = numbered_sources(report)
    pairs: list[Citation] = []
    seen: set[tuple[str, str]] = set()
    previous: str | None = None
    for block in _blocks(report):
        for sentence in SENTENCE_END.split(block):
            urls = [u for u in extract(sentence) if u.startswith(("http://", "https://",
                                                                   "www."))]
            for group in REFERENCE.findall(sentence):
                urls += [numbers[n] for n in re.findall(r"\d+", group) if n in numbers]
            if _content_words(sentence) >= MIN_WORDS:
                claim = _clip(REFERENCE.sub("", sentence))
                previous = claim
            elif urls and previous is not None:
                claim = previous
            else:
                continue
            for url in urls:
                key = canonical(url)
                if key is not None and (claim, key) not in seen:
                    seen.add((claim, key))
                    pairs.append(Citation(claim, key))
    return pairs


def choose(pairs: list[Citation], n: int, seed: str) -> list[Citation]:
    """Up to `n` pairs, drawn at random but the same for the same sample every time (so a
    rescored sample checks the same citations), in report order."""
    if len(pairs) <= n:
        return list(pairs)
    # Reproducible, not secret: a seeded PRNG is what is wanted.
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))  # noqa: S311
    picked = sorted(rng.sample(range(len(pairs)), n))
    return [pairs[i] for i in picked]


def cites_blocked(pairs: list[Citation], blocked: list[str]) -> list[str]:
    """The forbidden articles (DeepResearch Bench II) among a report's citations."""
    keys = {k for url in blocked if (k := canonical(url))}
    return sorted({p.url for p in pairs if p.url in keys})

__all__ = ["MAX_PAGE_CHARS", "fetched_pages"]  # read here by the judge, kept in agents/pages.py
