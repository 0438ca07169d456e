"""The report's integrity, computed by council, not by a model: quotes, numbers and citations
checked against the evidence store's texts (fetch.py). Pure: the report, claims.json's
claims, sources.json's sources, the stored texts and the sources' fetch records go in; a
typed `Integrity` comes out (its `to_dict` is integrity.json, its `summary` the report
header's line), and `mark` puts each failure into the report where it stands.

What is checked, and the choices made:

- Quotes: a span in double quotation marks ("…", “…”, „…“, «…») of at least
  QUOTE_WORDS words, attributed to a source: a link (or a `[n]` of the Sources list) in its
  sentence, else in the sentence right after. It is found when its words appear, in order
  and adjacent, in one of those sources' stored text, after Unicode compatibility folding,
  case folding and with punctuation, quote marks and whitespace ignored. An ellipsis or a
  [bracketed insertion] splits it into parts, each found in turn. A quote whose sources
  have no stored text is not checked (counted apart), as is a quote with no attribution.
- Numbers: in every sentence that cites a source, and in every sentence stating a claim of
  claims.json (cited by the claim's sources too). "1,000", "1000", "1 000" are one number;
  "12.5%" and "12.5 percent" are 12.5; "1.2 million" is 1,200,000 as well as 1.2; a number
  is traced when a cited source holds it, or a more precise number that rounds to it
  ("12%" for 12.47%, "1.2 million" for 1,234,567). Not counted: years (a bare 1800-2100:
  they date a claim and pages often carry them only in bylines the extractor drops),
  one-digit counts, numbers that are part of a name (COVID-19, GPT-4, 5G), and digits in
  links, citation marks and quotes (a quote is checked whole).
- Citations: each claim of claims.json is matched to the report sentence that states it
  (the one holding most of its content words, at least CLAIM_MATCH of them); it is cited
  when that sentence (or a citation right after it) links a source of sources.json. A
  claim no sentence states is listed apart and not in the percentage.
- A quote or number not found in sources whose stored text was cut off at the store's
  limits (`truncated`) is not checked, rather than failed: it may be in the part not read.
- Sources: a cited source whose record says gone (404, 410) or whose page marks itself
  retracted (pagetext.py) is named.

Skipped in the report: fenced code, headings, council's stamp lines, and the Sources and
Provenance sections (council writes those)."""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Protocol

from council.evidence.finalreport import PROVENANCE_HEADING, STAMP
from council.evidence.sources import LINK, SOURCES_HEADING, canonical, extract

QUOTE_WORDS = 4
CLAIM_MATCH = 0.5
MARK = "⚠"
QUOTE_MISSING = f" {MARK}[quote not found in the cited source]"
NUMBER_MISSING = f" {MARK}[number not found in the cited sources]"
UNCITED = f" {MARK}[claim without an inline citation]"
GONE = f" {MARK}[cited source is gone]"
RETRACTED = f" {MARK}[cited source is retracted]"
MARKERS = re.compile(rf" {MARK}\[[a-z ]+\]")

QUOTES = re.compile(r'"([^"\n]{1,4000})"|“([^”\n]{1,4000})”|„([^“”\n]{1,4000})[“”]|'
                    r"«\s?([^»\n]{1,4000}?)\s?»")
REFERENCE = re.compile(r"\[\^?(\d{1,4})\](?!\()")
CODE = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
ITEM = re.compile(r"^\s*([-*+]|\d{1,3}[.)])\s+")
SECTION = re.compile(r"^##\s", re.M)
# A sentence ends at . ! ? (and closing quotes or brackets) before whitespace and a capital,
# a digit, a quote or a bracket; not after an initial or a common abbreviation.
BOUNDARY = re.compile(r"[.!?][\"”’)\]]*\s+(?=[A-Z0-9\"“(\[*_])")
ABBREVIATIONS = re.compile(r"(\b[A-Z]|\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|No|Dr|Mr|Ms|Mrs|St|"
                           r"approx|Inc|Ltd|Co|U\.S|U\.K|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|"
                           r"Oct|Nov|Dec))\.$")
GROUP = r"[,\u00a0\u202f\u2009' ]"
# A number: digits, grouped by thousands or not, a decimal part, then a percent sign or
# word and a scale word or letter; never inside a word (COVID-19, GPT-4, 5G, H100).
SCALE_WORD = r"(?i:thousand|million|billion|trillion|bn)|[kKMB]"
NUMBER = re.compile(
    rf"(?<![\w.,-])[-−+]?(\d{{1,3}}(?:{GROUP}\d{{3}})+(?!\d)|\d+)"
    rf"(?:([.,])(\d+))?(?=(?:{SCALE_WORD})\b|\W|$)"
    rf"(?:\s?(%|(?i:percent|per cent)\b))?(?:\s?({SCALE_WORD})\b)?")
SCALES = {"thousand": 3, "k": 3, "K": 3, "million": 6, "M": 6, "billion": 9, "bn": 9,
          "B": 9, "trillion": 12}  # words looked up in lower case
STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "from", "by",
    "with", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this",
    "that", "these", "those", "than", "then", "there", "their", "they", "he", "she", "we",
    "you", "i", "not", "no", "has", "have", "had", "do", "does", "did", "will", "would", "can",
    "could", "may", "might", "should", "so", "such", "into", "over", "under", "about", "after",
    "before", "between", "more", "most", "less", "also", "which", "who", "whom", "what", "when",
    "where", "while", "per", "via"})


class Fetched(Protocol):
    """What integrity reads of a source's fetch record (fetch.Record is one)."""

    @property
    def url(self) -> str: ...
    @property
    def canonical(self) -> str | None: ...
    @property
    def status(self) -> int | None: ...
    @property
    def retracted(self) -> str | None: ...
    @property
    def gone(self) -> bool: ...
    @property
    def truncated(self) -> bool: ...


@dataclass(frozen=True)
class Quote:
    text: str
    start: int  # in the report, of the opening quotation mark
    end: int  # after the closing one
    sources: tuple[str, ...]  # canonical URLs it is attributed to
    found: bool | None  # None: not checked (no source text stored)
    found_in: str | None = None


@dataclass(frozen=True)
class Number:
    text: str
    start: int
    end: int
    sources: tuple[str, ...]
    traced: bool | None  # None: not checked (no source text stored)
    claim: str | None = None  # the id of the claim whose sentence holds it


@dataclass(frozen=True)
class ClaimCitation:
    claim: str  # its id
    sentence: str | None  # the report's sentence stating it; None: no sentence does
    start: int = -1
    end: int = -1
    cited: bool = False
    sources: tuple[str, ...] = ()  # sources.json sources that sentence links


@dataclass(frozen=True)
class SourceProblem:
    url: str
    why: str  # "gone (HTTP 404)", "retracted: its title reads …"


@dataclass(frozen=True)
class Integrity:
    quotes: tuple[Quote, ...] = ()
    numbers: tuple[Number, ...] = ()
    claims: tuple[ClaimCitation, ...] = ()
    problems: tuple[SourceProblem, ...] = ()
    unattributed_quotes: int = 0
    fetched: int = 0  # sources with a stored text

    def _count(self, items: Iterable[Quote | Number], attr: str) -> tuple[int, int, int]:
        values = [getattr(i, attr) for i in items]
        return (sum(v is True for v in values), sum(v is not None for v in values),
                sum(v is None for v in values))

    @property
    def quote_counts(self) -> tuple[int, int, int]:
        """(found, checked, not checked)."""
        return self._count(self.quotes, "found")

    @property
    def number_counts(self) -> tuple[int, int, int]:
        """(traced, checked, not checked)."""
        return self._count(self.numbers, "traced")

    @property
    def cited_share(self) -> float | None:
        """The share of claim sentences with an inline citation; None when no claim is
        stated in the report."""
        stated = [c for c in self.claims if c.sentence is not None]
        return sum(c.cited for c in stated) / len(stated) if stated else None

    @property
    def failures(self) -> int:
        return (sum(q.found is False for q in self.quotes)
                + sum(n.traced is False for n in self.numbers)
                + sum(c.sentence is not None and not c.cited for c in self.claims)
                + len(self.problems))

    def summary(self) -> str:
        """The report header's line: `quotes 11 of 12 found, numbers 30 of 33 traced, 96% of
        claim sentences cited`, and what was not checked, gone or retracted."""
        q_found, q_checked, q_open = self.quote_counts
        n_found, n_checked, n_open = self.number_counts
        share = self.cited_share
        cited = "no claim sentence found" if share is None else \
            f"{round(share * 100)}% of claim sentences cited"
        if not self.fetched and (self.quotes or self.numbers):
            line = f"quotes and numbers not checked (no source text stored), {cited}"
        else:
            line = (f"quotes {q_found} of {q_checked} found, numbers {n_found} of {n_checked} "
                    f"traced, {cited}")
            if q_open or n_open:
                line += (f"; not checked for want of a stored source: {q_open} quote"
                         f"{'' if q_open == 1 else 's'}, {n_open} number"
                         f"{'' if n_open == 1 else 's'}")
        gone = sum(p.why.startswith("gone") for p in self.problems)
        retracted = len(self.problems) - gone
        if gone or retracted:
            line += "; cited sources " + ", ".join(
                part for part in (f"{gone} gone" if gone else "",
                                  f"{retracted} retracted" if retracted else "") if part)
        return line

    def to_dict(self) -> dict[str, Any]:
        """integrity.json."""
        q_found, q_checked, q_open = self.quote_counts
        n_found, n_checked, n_open = self.number_counts
        share = self.cited_share
        return {
            "schema_version": 1, "summary": self.summary(),
            "quotes": {"found": q_found, "checked": q_checked, "not_checked": q_open,
                       "unattributed": self.unattributed_quotes,
                       "items": [_plain(q) for q in self.quotes]},
            "numbers": {"traced": n_found, "checked": n_checked, "not_checked": n_open,
                        "items": [_plain(n) for n in self.numbers]},
            "citations": {"stated": sum(c.sentence is not None for c in self.claims),
                          "cited": sum(c.cited for c in self.claims),
                          "share": None if share is None else round(share, 4),
                          "items": [_plain(c) for c in self.claims]},
            "sources": {"fetched": self.fetched, "problems": [asdict(p) for p in self.problems]},
            "failures": self.failures,
        }


def _plain(item: Quote | Number | ClaimCitation) -> dict[str, Any]:
    data = asdict(item)
    data["sources"] = list(data["sources"])
    return data


# --- reading the report -----------------------------------------------------------------

@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str  # the report's text of it
    masked: str  # the same, links, code and citation marks blanked (same offsets)
    sources: tuple[str, ...]  # canonical URLs it cites (links and [n] marks)
    quotes: tuple[tuple[int, int], ...] = field(default=())  # absolute spans
    block: int = 0  # the paragraph (list item, table row) it is in


def _skipped_spans(report: str) -> list[tuple[int, int]]:
    """The Sources and Provenance sections: council's, not the synthesiser's."""
    spans = []
    for heading in (SOURCES_HEADING, PROVENANCE_HEADING):
        if match := heading.search(report):
            nxt = SECTION.search(report, match.end())
            spans.append((match.start(), nxt.start() if nxt else len(report)))
    return spans


def _blocks(report: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each paragraph, list item and table row that holds prose."""
    skipped = _skipped_spans(report)
    fenced = False
    start: int | None = None
    pos = 0
    for line in report.splitlines(keepends=True):
        here, pos = pos, pos + len(line)
        if FENCE.match(line):
            fenced = not fenced
        bare = line.strip()
        ends = (fenced or FENCE.match(line) or not bare or HEADING.match(line)
                or line.startswith(STAMP) or any(a <= here < b for a, b in skipped))
        new = ITEM.match(line) or bare.startswith("|")
        if start is not None and (ends or new):
            yield start, here
            start = None
        if not ends:
            if start is None:
                start = here
            if bare.startswith("|"):
                yield start, pos
                start = None
    if start is not None:
        yield start, len(report)


def _mask(text: str) -> str:
    """`text` with link targets, inline code and citation marks blanked, offsets kept."""
    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    def link(m: re.Match[str]) -> str:
        whole = m.group(0)
        if whole.startswith("[") and "](" in whole:  # keep a markdown link's text
            cut = whole.index("](")
            return " " + whole[1:cut] + " " * (len(whole) - cut)
        if m.group(3):  # a bare URL: the sentence's own ")." after it stays, a boundary
            url = extract(whole)[0]
            return " " * len(url) + whole[len(url):]
        return " " * len(whole)

    return REFERENCE.sub(blank, CODE.sub(blank, LINK.sub(link, text)))


def _cited(text: str, numbered: Mapping[int, str]) -> tuple[str, ...]:
    """The canonical URLs `text` cites: its links, and its [n] marks of the Sources list."""
    found = [canonical(u) for u in extract(text)]
    found += [canonical(numbered[int(m.group(1))]) for m in REFERENCE.finditer(text)
              if int(m.group(1)) in numbered]
    return tuple(dict.fromkeys(u for u in found if u))


def sentences(report: str, numbered: Mapping[int, str] | None = None) -> list[Sentence]:
    """The report's prose as sentences, with what each cites. A sentence that is only a
    citation ("([source](url))" after a full stop) joins the sentence before it."""
    numbered = numbered or {}
    out: list[Sentence] = []
    for number, (b_start, b_end) in enumerate(_blocks(report)):
        block = report[b_start:b_end]
        masked = _mask(block)
        quotes = [(m.start(), m.end()) for m in QUOTES.finditer(masked)]
        cuts = [0]
        for m in BOUNDARY.finditer(masked):
            inside = any(a < m.start() < b - 1 for a, b in quotes)
            if not inside and not ABBREVIATIONS.search(masked[max(0, m.start() - 12):
                                                              m.start() + 1]):
                cuts.append(m.end())
        cuts.append(len(block))
        pieces: list[tuple[int, int]] = []
        for a, b in itertools.pairwise(cuts):
            if pieces and len(re.findall(r"\w", masked[a:b])) < 3:
                pieces[-1] = (pieces[-1][0], b)  # a citation only: the sentence before's
            elif masked[a:b].strip():
                pieces.append((a, b))
        for a, b in pieces:
            text = block[a:b]
            out.append(Sentence(b_start + a, b_start + b, text, masked[a:b],
                                _cited(text, numbered),
                                tuple((b_start + qa, b_start + qb) for qa, qb in quotes
                                      if a <= qa < b), number))
    return out


# --- normalising ------------------------------------------------------------------------

def _fold(text: str) -> str:
    """Compatibility-folded, case-folded, with quote marks, dashes and invisible characters
    made plain."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.translate(_PLAIN)


_PLAIN = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "“": '"', "”": '"',
                        "„": '"', "«": '"', "»": '"', "–": "-", "—": "-", "−": "-",
                        "\u00ad": None, "\u200b": None, "\u200c": None, "\u200d": None,
                        "\ufeff": None})
WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    """The folded words of `text`, one space apart, with a space at each end."""
    return " " + " ".join(WORD.findall(_fold(text))) + " "


# --- quotes -----------------------------------------------------------------------------

PARTS = re.compile(r"\.\s?\.\s?\.|…|\[[^\]]{0,80}\]")


def quote_found(quote: str, text_words: str) -> bool:
    """Each part of `quote` (split at an ellipsis or a [bracketed insertion]) is in the
    source's words (`_words` of its text), in order."""
    at = 0
    for part in PARTS.split(quote):
        words = _words(part)
        if words.strip():
            at = text_words.find(words, at)
            if at < 0:
                return False
            at += len(words) - 1
    return True


# --- numbers ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Value:
    digits: Decimal  # as written, separators removed
    decimals: int
    scale: int  # a power of ten from a scale word, 0 without one


def _values(text: str) -> Iterator[tuple[re.Match[str], _Value]]:
    for m in NUMBER.finditer(text):
        whole, _, fraction, _, word = m.groups()
        integer = re.sub(GROUP, "", whole)
        try:
            digits = Decimal(f"{integer}.{fraction}" if fraction else integer)
        except InvalidOperation:
            continue
        scale = SCALES.get(word if word and len(word) == 1 else (word or "").lower(), 0)
        yield m, _Value(digits, len(fraction or ""), scale)


def _counted(m: re.Match[str]) -> bool:
    """Not a year or a one-digit count."""
    whole, sep, _, percent, word = m.groups()
    plain = not (sep or percent or word) and re.fullmatch(r"\d+", whole)
    return not (plain and (len(whole) == 1 or 1800 <= int(whole) <= 2100))


def _keys(value: _Value) -> set[tuple[int, Decimal]]:
    """What a page's number can be cited as: itself, and at each scale (thousand, million,
    billion) and each coarser precision, as (scale, rounded value)."""
    real = value.digits.scaleb(value.scale)
    keys = set()
    for scale in (0, 3, 6, 9, 12):
        shown = real.scaleb(-scale)
        if scale and abs(shown) < 1:
            break
        most = value.decimals + (scale - value.scale if scale > value.scale else 0)
        for places in range(min(most, 3) + 1):
            keys.add((scale, _round(shown, places)))
    return keys


def _round(value: Decimal, places: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP).normalize()


@functools.lru_cache(maxsize=256)
def _page_numbers(text: str) -> frozenset[tuple[int, Decimal]]:
    keys: set[tuple[int, Decimal]] = set()
    for _, value in _values(unicodedata.normalize("NFKC", text)):
        keys |= _keys(value)
    return frozenset(keys)


def number_traced(value: _Value, texts: Iterable[str]) -> bool:
    key = (value.scale, _round(value.digits, value.decimals))
    plain = (0, _round(value.digits.scaleb(value.scale), value.decimals))
    return any(key in (keys := _page_numbers(t)) or plain in keys for t in texts)


# --- the check --------------------------------------------------------------------------

def content_words(text: str) -> set[str]:
    """The words of `text` that carry its content: folded, not a stopword, three letters or
    more (or a number)."""
    return {w for w in WORD.findall(_fold(text)) if w not in STOPWORDS and
            (len(w) > 2 or w.isdigit())}


def _stating(claim: str, among: Sequence[Sentence]) -> Sentence | None:
    """The sentence stating `claim`: the one holding most of its content words."""
    words = content_words(claim)
    if not words:
        return None
    best, score = None, 0.0
    for sentence in among:
        share = len(words & content_words(sentence.masked)) / len(words)
        if share > score:
            best, score = sentence, share
    return best if score >= CLAIM_MATCH else None


def _sources_of(sentences_: Sequence[Sentence], i: int) -> tuple[str, ...]:
    """What sentence i cites, else what the sentence right after it cites (same paragraph:
    adjacent in the report)."""
    here = sentences_[i]
    if here.sources or i + 1 >= len(sentences_):
        return here.sources
    after = sentences_[i + 1]
    return after.sources if not after.quotes and after.block == here.block else ()


def check(report: str, claims: Sequence[Mapping[str, Any]],
          sources: Sequence[Mapping[str, Any]], texts: Mapping[str, str],
          records: Iterable[Fetched] = ()) -> Integrity:
    """The report's integrity. `claims`: claims.json's claims (claimcheck.listed);
    `sources`: sources.json's sources (its "sources" list: n, url, variants); `texts`:
    canonical URL → stored text (fetch.texts); `records`: the store's fetch records."""
    report = MARKERS.sub(lambda m: " " * len(m.group(0)), report)  # a report marked before
    numbered = {int(s["n"]): s["url"] for s in sources if isinstance(s.get("n"), int)}
    known = {c for s in sources for u in (s.get("url"), *(s.get("variants") or []))
             if isinstance(u, str) and (c := canonical(u))}
    records = list(records)
    store = _Store(texts, {c for r in records
                           if r.truncated and (c := r.canonical or canonical(r.url))})
    said = sentences(report, numbered)
    citations, stated = _citations(claims, said, known)
    quotes, unattributed = _quotes(report, said, store)
    numbers = _numbers(report, said, stated, store)
    return Integrity(tuple(quotes), tuple(numbers), tuple(citations),
                     tuple(_problems(records, said, claims)), unattributed, len(texts))


@dataclass
class _Store:
    """The evidence store's texts as the checks search them: `cut`, the canonical URLs whose
    stored text was cut off at the store's limits."""
    texts: Mapping[str, str]
    cut: set[str]
    folded: dict[str, str] = field(default_factory=dict)

    def words_of(self, url: str) -> str | None:
        """The source's folded words (`_words`), each source folded once; None: no text."""
        if url not in self.texts:
            return None
        if url not in self.folded:
            self.folded[url] = _words(self.texts[url])
        return self.folded[url]

    def verdict(self, hit: bool, stored: Iterable[str]) -> bool | None:
        """Found; not found; or None when every source searched was cut off."""
        return True if hit else None if all(u in self.cut for u in stored) else False


def _citations(claims: Sequence[Mapping[str, Any]], said: Sequence[Sentence],
               known: set[str]) -> tuple[list[ClaimCitation], dict[int, list[Mapping[str, Any]]]]:
    """Each claim's citation, and the claims each sentence (by index) states."""
    stated: dict[int, list[Mapping[str, Any]]] = {}
    citations = []
    for claim in claims:
        cid = str(claim.get("id", ""))
        sentence = _stating(str(claim.get("claim", "")), said)
        if sentence is None:
            citations.append(ClaimCitation(cid, None))
            continue
        i = said.index(sentence)
        stated.setdefault(i, []).append(claim)
        linked = tuple(u for u in _sources_of(said, i) if u in known)
        citations.append(ClaimCitation(cid, sentence.text.strip(), sentence.start,
                                       sentence.end, bool(linked), linked))
    return citations, stated


def _quotes(report: str, said: Sequence[Sentence], store: _Store) -> tuple[list[Quote], int]:
    """The attributed quotes, each searched in its sources' texts, and how many were not
    attributed."""
    quotes, unattributed = [], 0
    for i, sentence in enumerate(said):
        cited = _sources_of(said, i)
        for a, b in sentence.quotes:
            body = report[a + 1:b - 1]
            if len(WORD.findall(body)) < QUOTE_WORDS:
                continue
            if not cited:
                unattributed += 1
                continue
            stored = [(u, w) for u in cited if (w := store.words_of(u)) is not None]
            where = next((u for u, w in stored if quote_found(body, w)), None)
            quotes.append(Quote(body, a, b, cited, None if not stored else
                                store.verdict(where is not None, (u for u, _ in stored)),
                                where))
    return quotes, unattributed


def _numbers(report: str, said: Sequence[Sentence],
             stated: Mapping[int, list[Mapping[str, Any]]], store: _Store) -> list[Number]:
    """The numbers of each sentence that cites a source or states a claim (outside its
    quotes), each traced in the texts of the sources behind it."""
    numbers = []
    for i, sentence in enumerate(said):
        of_claims = stated.get(i, [])
        extra = tuple(c for claim in of_claims for u in claim.get("sources") or []
                      if (c := canonical(str(u))))
        behind = tuple(dict.fromkeys(_sources_of(said, i) + extra))
        if not behind:
            continue
        masked = sentence.masked
        for qa, qb in sentence.quotes:  # a quote is checked whole, not its numbers
            masked = masked[:qa - sentence.start] + " " * (qb - qa) + masked[qb - sentence.start:]
        stored_urls = [u for u in behind if u in store.texts]
        pages = [store.texts[u] for u in stored_urls]
        for m, value in _values(masked):
            if not _counted(m):
                continue
            start, end = sentence.start + m.start(), sentence.start + m.end()
            numbers.append(Number(report[start:end].strip(), start, end, behind,
                                  store.verdict(number_traced(value, pages), stored_urls)
                                  if pages else None,
                                  str(of_claims[0].get("id")) if of_claims else None))
    return numbers


def _problems(records: Iterable[Fetched], said: Sequence[Sentence],
              claims: Sequence[Mapping[str, Any]]) -> list[SourceProblem]:
    """The cited sources (by the report or by a claim) whose record says gone or retracted."""
    cited_anywhere = {u for s in said for u in s.sources} | {
        c for claim in claims for u in claim.get("sources") or [] if (c := canonical(str(u)))}
    problems = []
    for record in records:
        name = record.canonical or canonical(record.url)
        if name not in cited_anywhere:
            continue
        if record.gone:
            problems.append(SourceProblem(record.url, f"gone (HTTP {record.status})"))
        elif record.retracted:
            problems.append(SourceProblem(record.url, f"retracted: {record.retracted}"))
    return problems


def summary(result: Integrity) -> str:
    return result.summary()


# --- marking the report -----------------------------------------------------------------

def mark(report: str, result: Integrity) -> str:
    """The report with each failure marked where it stands: after a quote not found, after a
    number not traced, at the end of a claim sentence without a citation, and after each
    link to a source that is gone or retracted. `result` must be check()'s of this same
    text (its offsets); marking twice adds nothing."""
    plain = MARKERS.sub(lambda m: " " * len(m.group(0)), report)  # offsets as check() saw
    inserts: list[tuple[int, str]] = []
    inserts += [(q.end, QUOTE_MISSING) for q in result.quotes if q.found is False]
    inserts += [(n.end, NUMBER_MISSING) for n in result.numbers if n.traced is False]
    for c in result.claims:
        if c.sentence is not None and not c.cited:
            end = c.end
            while end > c.start and plain[end - 1].isspace():
                end -= 1
            inserts.append((end, UNCITED))
    flagged = {canonical(p.url): GONE if p.why.startswith("gone") else RETRACTED
               for p in result.problems}
    for m in LINK.finditer(report):
        url = extract(m.group(0))[0]  # a bare URL without the sentence's full stop
        if (marker := flagged.get(canonical(url))) is not None:
            inserts.append((m.start(3) + len(url) if m.group(3) else m.end(), marker))
    out = report
    for at, marker in sorted(set(inserts), reverse=True):
        if out.startswith(marker, at):
            continue
        out = out[:at] + marker + out[at:]
    return out
