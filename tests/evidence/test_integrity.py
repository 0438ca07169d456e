"""The integrity check: quotes found, numbers traced and claim sentences cited, computed from
the stored texts alone, and every failure marked in the report where it stands."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from council.evidence import integrity
from council.evidence.integrity import Integrity, check, mark
from council.evidence.sources import canonical

STUDY = "https://example.org/study"
SURVEY = "https://example.org/survey"
FLEET = "https://example.org/fleet"
GONE = "https://example.org/gone"
SOURCES = [{"n": i, "url": u, "variants": []} for i, u in
           enumerate((STUDY, SURVEY, FLEET, GONE), 1)]
TEXTS = {
    STUDY: "Capacity fell by 12.47 % after 1000 cycles.\n\n“Cold weather shortens the range "
           "of every car we tested,” the authors said.",
    SURVEY: "Range dropped 40 percent in winter. Sales: 3,412,000 units. Prices rose 7.2%.",
    FLEET: "The fleet is partly electric.",
}
REPORT = f"""# Batteries

## Key Findings

Capacity fell by 12.5% after 1,000 cycles ([study]({STUDY})). The authors wrote that
"cold weather shortens the range of every car" in their tests [1].

Range dropped 40% in 2023 and prices rose 9.1% according to [the survey]({SURVEY}).

Sales reached 3.4 million units.

Chargers doubled to 5000 units in two years.

- The operator says "the fleet is entirely electric now" ([fleet]({FLEET}))
- An archived page: <{GONE}>.

## Sources

1. <{STUDY}> — cited by claude, 12 times
"""
CLAIMS = [
    {"id": "c1", "claim": "Capacity fell by 12.5% after 1000 cycles", "sources": [STUDY]},
    {"id": "c2", "claim": "Chargers doubled to 5000 units", "sources": []},
    {"id": "c3", "claim": "Sales reached 3.4 million units", "sources": [SURVEY]},
    {"id": "c4", "claim": "Quantum batteries were found on Mars", "sources": []},
]


@dataclass(frozen=True)
class Rec:
    url: str
    status: int | None = 200
    retracted: str | None = None
    truncated: bool = False

    @property
    def canonical(self) -> str:
        return self.url

    @property
    def gone(self) -> bool:
        return self.status in (404, 410)


def result() -> Integrity:
    return check(REPORT, CLAIMS, SOURCES, TEXTS, [Rec(GONE, 404), Rec(STUDY)])


def test_a_true_quote_is_found_and_an_invented_one_is_not() -> None:
    quotes = {q.text: q.found for q in result().quotes}
    assert quotes == {"cold weather shortens the range of every car": True,
                      "the fleet is entirely electric now": False}


def test_each_number_of_a_cited_sentence_is_traced_or_not() -> None:
    numbers = {n.text: n.traced for n in result().numbers}
    # 12.5% rounds 12.47 %, 1,000 is 1000, 40% is 40 percent, 3.4 million rounds 3,412,000
    # (through claim c3's source, its sentence cites none); 9.1% is on no cited page;
    # 2023 (a year) and 5000 (a sentence citing nothing, a claim with no source) are not
    # counted.
    assert numbers == {"12.5%": True, "1,000": True, "40%": True, "9.1%": False,
                       "3.4 million": True}
    assert next(n for n in result().numbers if n.text == "3.4 million").claim == "c3"


def test_claim_sentences_without_a_link_are_counted() -> None:
    cited = {c.claim: (c.sentence is not None, c.cited) for c in result().claims}
    assert cited == {"c1": (True, True), "c2": (True, False), "c3": (True, False),
                     "c4": (False, False)}
    assert result().cited_share == pytest.approx(1 / 3)


def test_a_gone_cited_source_is_named() -> None:
    assert [(p.url, p.why) for p in result().problems] == [(GONE, "gone (HTTP 404)")]


def test_the_summary_line_and_integrity_json_agree() -> None:
    r = result()
    line = "quotes 1 of 2 found, numbers 4 of 5 traced, 33% of claim sentences cited; " \
           "cited sources 1 gone"
    assert r.summary() == line
    data = json.loads(json.dumps(r.to_dict()))
    assert data["summary"] == line
    assert (data["quotes"]["found"], data["quotes"]["checked"]) == (1, 2)
    assert (data["numbers"]["traced"], data["numbers"]["checked"]) == (4, 5)
    assert (data["citations"]["stated"], data["citations"]["cited"]) == (3, 1)
    assert data["failures"] == 1 + 1 + 2 + 1


def test_every_failure_is_marked_where_it_stands_and_marking_twice_adds_nothing() -> None:
    marked = mark(REPORT, result())
    assert '"the fleet is entirely electric now"' + integrity.QUOTE_MISSING in marked
    assert "9.1%" + integrity.NUMBER_MISSING in marked
    assert "Sales reached 3.4 million units." + integrity.UNCITED in marked
    assert "in two years." + integrity.UNCITED in marked
    assert f"<{GONE}>" + integrity.GONE + "." in marked
    assert marked.count(integrity.MARK) == 5
    assert '"cold weather shortens the range of every car"' + integrity.MARK not in marked
    again = check(marked, CLAIMS, SOURCES, TEXTS, [Rec(GONE, 404)])
    assert again.summary() == result().summary()
    assert mark(marked, again) == marked


def test_nothing_stored_means_nothing_checked_not_everything_failed() -> None:
    r = check(REPORT, CLAIMS, SOURCES, {}, [])
    assert r.summary() == ("quotes and numbers not checked (no source text stored), 33% of "
                           "claim sentences cited")
    assert {q.found for q in r.quotes} == {None}
    assert mark(REPORT, r).count(integrity.MARK) == 2  # the uncited claims only


def test_what_is_not_found_in_a_page_cut_off_is_not_checked_rather_than_failed() -> None:
    r = check(REPORT, CLAIMS, SOURCES, TEXTS, [Rec(FLEET, truncated=True),
                                               Rec(SURVEY, truncated=True)])
    quotes = {q.text: q.found for q in r.quotes}
    assert quotes["the fleet is entirely electric now"] is None
    assert {n.text: n.traced for n in r.numbers}["9.1%"] is None
    assert {n.text: n.traced for n in r.numbers}["40%"] is True


def test_a_retracted_source_is_named() -> None:
    r = check(REPORT, CLAIMS, SOURCES, TEXTS,
              [Rec(STUDY, retracted="its title reads 'RETRACTED: x'")])
    assert [p.why for p in r.problems] == ["retracted: its title reads 'RETRACTED: x'"]
    assert r.summary().endswith("; cited sources 1 retracted")


@pytest.mark.parametrize(("quote", "found"), [
    ("Cold weather shortens the range", True),
    ("COLD   weather\nshortens the range", True),  # case and whitespace
    ("cold weather shortens the range of every car we tested,", True),  # punctuation
    ("cold weather … of every car", True),  # an ellipsis: parts in order
    ("cold weather [in Norway] shortens the range", True),  # an insertion
    ("of every car … cold weather", False),  # parts out of order
    ("warm weather shortens the range", False),
])
def test_a_quote_is_matched_after_normalising(quote: str, found: bool) -> None:
    assert integrity.quote_found(quote, integrity._words(TEXTS[STUDY])) is found


def test_short_quoted_terms_and_unattributed_quotes_are_not_checked() -> None:
    report = ('The so-called "smart grid" is here ([s](https://example.org/study)).\n\n'
              '"This quote cites nothing at all" was said.\n')
    r = check(report, [], SOURCES, TEXTS)
    assert (r.quotes, r.unattributed_quotes) == ((), 1)


@pytest.mark.parametrize(("sentence", "numbers"), [
    ("COVID-19 cases rose with GPT-4 and 5G in 2021", []),
    ("It cost $1.2M, 10k or 3 bn units", ["1.2M", "10k", "3 bn"]),
    ("Grouped 1 000 000 and 1\u202f000 and 12,5 percent", ["1 000 000", "1\u202f000",
                                                            "12,5 percent"]),
    ("Between 10–20% of 7 cars", ["10", "20%"]),
])
def test_which_numbers_are_counted(sentence: str, numbers: list[str]) -> None:
    report = f"{sentence} ([s](https://example.org/study)).\n"
    assert [n.text for n in check(report, [], SOURCES, TEXTS).numbers] == numbers


def test_numbers_match_across_spellings_and_scales() -> None:
    page = ["Revenue was 1,234,567 dollars; 2.5 billion users; a 12 percent rise; 1 000 units."]
    for written, traced in [("1.2 million", True), ("1,234,567", True), ("1234567", True),
                            ("2,500,000,000", True), ("2.5bn", True), ("12%", True),
                            ("1000", True), ("1.3 million", False), ("13%", False)]:
        value = next(v for _, v in integrity._values(written))
        assert integrity.number_traced(value, page) is traced, written


def test_links_and_numbered_references_both_cite() -> None:
    report = "Range dropped 40% in winter [2]. Capacity fell 12.5% [^1].\n"
    r = check(report, [], SOURCES, TEXTS)
    assert [(n.text, n.sources, n.traced) for n in r.numbers] == [
        ("40%", (SURVEY,), True), ("12.5%", (STUDY,), True)]


def test_a_citation_right_after_the_sentence_counts() -> None:
    report = f'He said "cold weather shortens the range of every car". ([study]({STUDY}))\n'
    [quote] = check(report, [], SOURCES, TEXTS).quotes
    assert quote.found is True


def test_a_bare_url_in_parentheses_ends_its_sentence() -> None:
    """The ")." after a bare URL is the sentence's: the next sentence's quote is not credited
    to this sentence's link."""
    report = (f"Winter cuts range ({STUDY}). Then he said "
              f'"cold weather shortens the range of every car" to the press.\n')
    [first, second] = integrity.sentences(report)
    assert first.sources == (canonical(STUDY),)
    assert second.sources == ()
    assert check(report, [], SOURCES, TEXTS).quotes == ()  # attributed to nothing
