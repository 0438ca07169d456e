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
from collections.abc import Iterable, Iterator

from council.evidence.sources import LINK

KEPT = 0.6
MIN_WORDS = 4  # shorter statements carry too little to compare
MAX_LISTED = 20  # listed in state.yaml; `listed` says how many more there were
CLIP = 200

HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
SOURCES_HEADING = re.compile(r"(?:\d+\.\s*)?(?:comprehensive\s+)?(?:sources?|references?|"
                             r"bibliography|works cited)(?:\s*\(.*\))?\s*:?", re.I)
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
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
    """The report's statements, outside its Sources section, headings and code blocks. A
    bullet or a paragraph wrapped over several lines is one block before it is split into
    sentences; a table row is a block of its own."""
    blocks: list[list[str]] = []  # each block's lines, joined at the end: linear, however
    joining = False  # does the next plain line continue the current block?
    in_sources = in_code = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code, joining = not in_code, False
            continue
        heading = None if in_code else HEADING.match(line)
        if heading:
            in_sources = bool(SOURCES_HEADING.fullmatch(heading.group(1).strip()))
            joining = False
            continue
        if in_code or in_sources or not line.strip():
            joining = False
            continue
        row = line.count("|") >= 2
        body = ITEM.sub("", line).strip(" |")
        if joining and not row and not ITEM.match(line):
            blocks[-1].append(body)  # long a block gets (a pasted page with no blank line)
        else:
            blocks.append([body])
        joining = not row
    return [s.strip() for block in blocks for s in SENTENCE_END.split(" ".join(block))
            if s.strip()]


def _words(sentence: str) -> frozenset[str]:
    bare = REFERENCE.sub(" ", LINK.sub(" ", sentence)).lower()
    return frozenset(w for w in WORD.findall(bare) if w not in STOPWORDS)


def _cited(sentence: str) -> bool:
    return LINK.search(sentence) is not None or REFERENCE.search(sentence) is not None


def _numbers(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in words if any(ch.isdigit() for ch in w))


class _Index:
    """The refined report's sentences, by word: a claim is compared only with the sentences
    that share one of its rarest words, never with all of them (which made a big report
    quadratic). Pigeonhole: a sentence keeping KEPT of a claim's n words must hold one of
    its n - ceil(KEPT * n) + 1 rarest, and every figure it states."""

    def __init__(self, sentences: list[str]) -> None:
        self.words: list[frozenset[str]] = []
        self.postings: dict[str, list[int]] = {}
        seen: dict[frozenset[str], int] = {}
        for sentence in sentences:
            words = _words(sentence)
            if words in seen:  # repeated sentences are compared once
                continue
            seen[words] = len(self.words)
            for word in words:
                self.postings.setdefault(word, []).append(len(self.words))
            self.words.append(words)

    def keeps(self, words: frozenset[str]) -> bool:
        n = len(words)
        need = next(k for k in range(n + 1) if k / n >= KEPT)
        figures = _numbers(words)

        def rarity(word: str) -> int:
            return len(self.postings.get(word, ()))

        # A keeper holds every figure, so the rarest one is enough to find it.
        keys = [min(figures, key=rarity)] if figures else sorted(words, key=rarity)[:n - need + 1]
        candidates: set[int] = set()
        for key in keys:
            candidates.update(self.postings.get(key, ()))
        return any(len(words & self.words[i]) / n >= KEPT and figures <= self.words[i]
                   for i in candidates)


def dropped_claims(before: str, after: str) -> Iterator[str]:
    """The research report's cited claims that no sentence of the refined report keeps: one
    sharing KEPT of its words *and* every figure it states. Yielded one by one, clipped and
    without repeats, so a report with a hundred thousand of them is never held as a list."""
    refined = _Index(_sentences(after))
    seen: set[int] = set()  # hashes, not the sentences: memory stays small
    for sentence in _sentences(before):
        if not _cited(sentence):
            continue
        words = _words(sentence)
        if len(words) < MIN_WORDS or refined.keeps(words):
            continue
        clipped = sentence if len(sentence) <= CLIP else sentence[:CLIP - 1] + "…"
        if hash(clipped) not in seen:
            seen.add(hash(clipped))
            yield clipped


def cited_claims(text: str) -> Iterator[str]:
    """The report's cited claims, as this module counts them: each sentence (bullet, table
    row) outside its Sources section that carries a URL or a numbered reference and has at
    least MIN_WORDS content words, once each (the phase accounts' "claims made")."""
    seen: set[frozenset[str]] = set()
    for sentence in _sentences(text):
        words = _words(sentence)
        if _cited(sentence) and len(words) >= MIN_WORDS and words not in seen:
            seen.add(words)
            yield sentence


def kept(statements: Iterable[str], text: str) -> int:
    """How many of `statements` some sentence of `text` keeps (KEPT of its content words and
    every figure it states; a statement with no content word is never kept): the rule that
    finds dropped claims, used to count the claims a final report carries."""
    index = _Index(_sentences(text))
    return sum(1 for s in statements if (words := _words(s)) and index.keeps(words))


def listed(dropped: Iterable[str]) -> list[str]:
    """What state.yaml keeps: the first MAX_LISTED, then how many more."""
    kept: list[str] = []
    more = 0
    for claim in dropped:
        if len(kept) < MAX_LISTED:
            kept.append(claim)
        else:
            more += 1
    return [*kept, f"… and {more} more"] if more else kept


def total(kept: list[str]) -> int:
    """How many claims a `listed` list stands for."""
    more = re.fullmatch(r"… and (\d+) more", kept[-1]) if len(kept) > MAX_LISTED else None
    return MAX_LISTED + int(more.group(1)) if more else len(kept)
