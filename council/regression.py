"""No silent regression: the cited claims an agent's research report made that its refined
report no longer makes. Refinement may rightly drop a claim it found wrong, but it must not
lose one by accident, so every drop is listed (state.yaml, progress.log, the methodology).

Deterministic and deliberately simple: a *cited claim* is a sentence (or bullet, or table
row) outside the Sources section that carries a URL or a numbered reference; it counts as kept
when some sentence of the refined report holds at least KEPT of its content words (numbers
included, so "40 ms" becoming "80 ms" is a change). Rewording beyond that reads as a drop: the
list errs towards showing too much."""

from __future__ import annotations

import re

from council.sources import LINK

KEPT = 0.6
MIN_WORDS = 4  # shorter statements carry too little to compare
MAX_LISTED = 20
CLIP = 200

HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
SOURCES_HEADING = re.compile(r"^(?:\d+\.\s*)?(?:comprehensive\s+)?(?:sources?|references?)\b",
                             re.I)
REFERENCE = re.compile(r"\[\^?\d+(?:[,\s]+\^?\d+)*\]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[*_])")
WORD = re.compile(r"[a-z0-9]+(?:[.,%][a-z0-9]+)*%?")
_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how i if in into is it its itself just
more most much my no nor not now of off on once only or other our ours out over own same she
should so some such than that the their theirs them then there these they this those through
to too under until up very was we were what when where which while who whom why will with
would you your yours may might must shall per via
"""
STOPWORDS = frozenset(_STOP_TEXT.split())


ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _sentences(text: str) -> list[str]:
    """The report's statements, outside its Sources section and headings. A bullet or a
    paragraph wrapped over several lines is one block before it is split into sentences."""
    blocks: list[str] = []
    joining = False  # does the next plain line continue the current block?
    in_sources = False
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            in_sources = bool(SOURCES_HEADING.match(heading.group(1).strip()))
            joining = False
            continue
        if in_sources or not line.strip():
            joining = False
            continue
        starts_block = ITEM.match(line) or line.lstrip().startswith("|")
        body = ITEM.sub("", line).strip(" |")
        if joining and not starts_block:
            blocks[-1] += " " + body
        else:
            blocks.append(body)
        joining = not line.lstrip().startswith("|")
    return [s.strip() for block in blocks for s in SENTENCE_END.split(block) if s.strip()]


def _words(sentence: str) -> frozenset[str]:
    bare = REFERENCE.sub(" ", LINK.sub(" ", sentence)).lower()
    return frozenset(w for w in WORD.findall(bare) if w not in STOPWORDS)


def _cited(sentence: str) -> bool:
    return LINK.search(sentence) is not None or REFERENCE.search(sentence) is not None


def dropped_claims(before: str, after: str) -> list[str]:
    """The research report's cited claims that no sentence of the refined report keeps."""
    refined = [_words(s) for s in _sentences(after)]
    dropped: list[str] = []
    for sentence in _sentences(before):
        if not _cited(sentence):
            continue
        words = _words(sentence)
        if len(words) < MIN_WORDS:
            continue
        best = max((len(words & other) / len(words) for other in refined), default=0.0)
        if best < KEPT:
            clipped = sentence if len(sentence) <= CLIP else sentence[:CLIP - 1] + "…"
            if clipped not in dropped:
                dropped.append(clipped)
    return dropped[:MAX_LISTED]
