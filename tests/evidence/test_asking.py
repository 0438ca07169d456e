"""The decisions about a follow-up answer (evidence/asking.py): its file name from an
untrusted question, and council's check of what it cites and names."""

from __future__ import annotations

from pathlib import Path

import pytest

from council.evidence import asking

SOURCES = {"sources": [{"n": 1, "url": "https://example.org/a", "variants":
                        ["https://example.org/a?utm_source=x"]},
                       {"n": 2, "url": "https://example.org/b", "variants": []}]}
CLAIMS = {"claims": [{"id": "c1", "verdict": "SUPPORTED"},
                     {"id": "c2", "verdict": "CONTRADICTED"}]}
NONE = asking.Quoted()  # an answer without quotes


@pytest.mark.parametrize(("question", "expected"), [
    ("Which source is the most recent?", "which-source-is-the-most-recent"),
    ("../../etc/passwd", "etc-passwd"),
    ("/abs\\path\x00nul\n$(rm -rf ~)", "abs-path-nul-rm-rf"),
    ("Что нового?", "question"),
    ("?!", "question"),
    ("a" * 200, "a" * asking.SLUG_CHARS),
])
def test_a_slug_holds_only_safe_characters_and_is_bounded(question: str,
                                                          expected: str) -> None:
    assert asking.slug(question) == expected


def test_a_long_question_is_cut_at_a_words_end() -> None:
    got = asking.slug("word " * 40)
    assert len(got) <= asking.SLUG_CHARS
    assert not got.endswith("-")
    assert set(got.split("-")) == {"word"}


def test_answers_are_numbered_after_the_highest_answer_there() -> None:
    assert asking.answer_name("Why?", []) == "1-why.md"
    assert asking.answer_name("Why?", ["1-a.md", "7-b.md", "notes.txt", "9.md"]) == "8-why.md"


def test_urls_outside_the_runs_sources_are_flagged_and_claims_named_with_verdicts() -> None:
    answer = ("Per c2 and c1 (see [a](https://example.org/a?utm_source=x)), and "
              "https://made.up/page; c9 is no claim of the run.")
    found = asking.check(answer, asking.run_sources(SOURCES), CLAIMS, research=False)
    assert found.cited == ("https://example.org/a",)
    assert found.flagged == ("https://made.up/page",)
    assert found.claims == (("c2", "CONTRADICTED"), ("c1", "SUPPORTED"))
    text = asking.footer(found, "1k tok", NONE)
    assert "c2 (CONTRADICTED), c1 (SUPPORTED)" in text
    assert "Not among the run's sources" in text
    assert "https://made.up/page" in text


def test_with_research_an_outside_url_is_a_new_source_not_a_flag() -> None:
    found = asking.check("See https://new.example/x", asking.run_sources(SOURCES), CLAIMS,
                         research=True)
    assert found.flagged == ()
    assert found.outside == ("https://new.example/x",)
    assert "New sources" in asking.footer(found, "1k tok", NONE)
    assert found.to_dict()["new"] == ["https://new.example/x"]


@pytest.mark.parametrize(("written", "read"), [
    ("[a](//evil.example/p)", "https://evil.example/p"),  # protocol-relative
    ("HTTPS://Shout.example/x.", "https://shout.example/x"),  # a viewer links it as https
    ("<HTTPS://auto.example/y>", "https://auto.example/y"),
    ("[a](https://evil。example/z)", "https://evil.example/z"),  # ideographic full stop
    ("https://evil．example/w", "https://evil.example/w"),  # full-width full stop
])
def test_every_spelling_of_a_web_link_is_read_and_flagged(written: str, read: str) -> None:
    found = asking.check(f"As {written} shows.", asking.run_sources(SOURCES), CLAIMS,
                         research=False)
    assert found.flagged == (read,)
    assert f"  - {read}" in asking.footer(found, "1k tok", NONE)


def test_a_full_width_dot_in_a_run_source_is_that_source() -> None:
    found = asking.check("See https://example。org/a", asking.run_sources(SOURCES), CLAIMS,
                         research=False)
    assert (found.cited, found.flagged) == (("https://example.org/a",), ())


@pytest.mark.parametrize("research", [False, True])
@pytest.mark.parametrize("written", [
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<data:text/html,<b>hi>", "[x](javascript:alert(1))"])
def test_a_link_council_cannot_check_is_flagged_even_with_research(
        written: str, research: bool) -> None:
    found = asking.check(f"Proof: {written}", asking.run_sources(SOURCES), CLAIMS, research)
    (link,) = found.unchecked
    assert link.startswith(("data:", "javascript:"))
    assert found.flagged == (link,)
    text = asking.footer(found, "1k tok", NONE)
    assert "Links that are no web address council can check" in text
    assert f"  - `{link}`" in text
    assert found.to_dict()["unchecked"] == [link]


def test_an_answer_citing_only_the_run_flags_nothing() -> None:
    found = asking.check("c1 https://example.org/b", asking.run_sources(SOURCES), CLAIMS,
                         research=False)
    assert (found.cited, found.outside) == (("https://example.org/b",), ())
    assert "Not among" not in asking.footer(found, "x", NONE)


# --- the stored pages an ask is shown, and its quotes --------------------------------------

A, B, C, D = (f"https://example.org/{x}" for x in "abcd")
PAGE_A = "Spring tides happen when the sun and moon line up, twice a month."


def test_the_pages_shown_are_those_behind_what_shares_the_questions_words() -> None:
    claims = [{"id": "c1", "claim": "Neap tides follow the quarter moons.", "sources": [B]},
              {"id": "c2", "claim": "Spring tides come when sun and moon align.",
               "sources": [A, C]}]
    report = (f"# Tides\n\nThe moon drives the tides ([d]({D})). Storm surges add height "
              f"[2].\n")
    stored = {A, B, C, D, "https://example.org/b"}
    # "spring" and "tides" meet c2 most: its sources first, then c1's ("tides"), then the
    # report sentence with "tides"; the report's own sources fill what is left.
    got = asking.relevant("When do spring tides happen?", claims, report,
                          SOURCES["sources"], stored)
    assert got == [A, C, B, D]
    assert asking.relevant("When do spring tides happen?", claims, report,
                           SOURCES["sources"], stored, limit=2) == [A, C]
    # a page the store holds no text of is never chosen; a question sharing no word still
    # gets the final report's sources ([2] read through sources.json)
    assert asking.relevant("Why?", claims, report, SOURCES["sources"], {B, D}) == [D, B]
    assert asking.relevant("Spring?", claims, report, SOURCES["sources"], set()) == []


def test_an_answers_quotes_are_checked_against_the_pages_they_cite() -> None:
    answer = (f'The page says "the sun and moon line up, twice a month" ([a]({A})). '
              f'It also says "the tides stop entirely every winter" [1]. '
              f'Elsewhere "this is a quote with no source" is claimed. '
              f'And "a page council never stored says this" ([b]({B})).')
    # the texts to read: the pages its sentences cite, a [1] mark read through sources.json
    assert asking.attributed(answer, SOURCES["sources"]) == {A, B}
    quotes = asking.quoted(answer, SOURCES["sources"], {A: PAGE_A})
    assert (quotes.found, quotes.checked, quotes.open, quotes.unattributed) == (1, 2, 1, 1)
    assert quotes.missing == ("the tides stop entirely every winter",)
    text = asking.footer(asking.check(answer, asking.run_sources(SOURCES), CLAIMS, False),
                         "1k tok", quotes)
    assert ("- Quotes: 1 of 2 found in the stored pages; 1 not checked (no stored text of "
            "the page it cites); 1 not checked (no source named beside it).") in text
    listed = text.split("- Not found in the stored text of the page it cites", 1)[1]
    assert '  - "the tides stop entirely every winter"' in listed
    assert "line up" not in listed


def test_without_a_store_the_footer_says_quotes_were_not_checked_and_why() -> None:
    found = asking.check(f'"the sun and moon line up" ({A})', asking.run_sources(SOURCES),
                         CLAIMS, False)
    text = asking.footer(found, "x", asking.Quoted(unchecked="the run ran offline"))
    assert "- Quotes: not checked: the run ran offline." in text
    assert "Not found in the stored text" not in text
    assert "- Quotes: none to check." in asking.footer(found, "x", NONE)


def test_listed_reads_only_answer_files_and_follows_no_link(tmp_path: Path) -> None:
    asks = tmp_path / asking.ASKS
    asks.mkdir()
    for name in ("10-b.md", "2-a.md", "notes.md"):
        (asks / name).write_text("x")
    (asks / "3-link.md").symlink_to(tmp_path / "elsewhere")
    assert asking.listed(tmp_path) == ["2-a.md", "10-b.md"]
    other = tmp_path / "other"
    other.mkdir()
    (other / asking.ASKS).symlink_to(asks)
    assert asking.listed(other) == []
