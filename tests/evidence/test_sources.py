from __future__ import annotations

import json

import pytest
import yaml
from conftest import Council

from council.evidence.sources import (
    build,
    canonical,
    disappeared,
    extract,
    replace_sources,
    sources_section,
)


@pytest.mark.parametrize(
    ("variant", "same_as"),
    [
        ("HTTPS://Example.ORG/paper/", "https://example.org/paper"),
        ("https://example.org:443/paper#section-2", "https://example.org/paper"),
        ("https://example.org/paper?utm_source=x&utm_medium=y&fbclid=z", "https://example.org/paper"),
        ("https://example.org/paper?id=7&gclid=abc", "https://example.org/paper?id=7"),
        ("http://example.org:8080/a/", "http://example.org:8080/a"),
        ("www.example.org/paper", "https://example.org/paper"),
        ("https://example.org", "https://example.org/"),
    ],
)
def test_canonical_spellings(variant: str, same_as: str) -> None:
    assert canonical(variant) == same_as


# Two spellings of one source each: one row in the ledger, one number in the report.
@pytest.mark.parametrize(("one", "other"), [
    ("https://www.example.org/paper", "https://example.org/paper"),  # www. and the bare host
    ("https://example.org/search?b=2&a=1", "https://example.org/search?a=1&b=2"),  # order
    ("https://example.org/%7Euser/notes", "https://example.org/~user/notes"),  # %7E and ~
    ("https://bücher.example/katalog", "https://xn--bcher-kva.example/katalog"),  # IDNA host
    ("https://example.org/caf%c3%a9", "https://example.org/café"),  # escapes, either case
    ("https://example.org/a?utm_source=feed&id=3", "https://example.org/a?id=3"),  # tracking
    ("https://example.org:443/a#intro", "https://EXAMPLE.org/a/"),  # port, fragment, case
    ("http://example.org:80/", "http://example.org"),
])
def test_two_spellings_are_one_source(one: str, other: str) -> None:
    assert canonical(one) is not None
    assert canonical(one) == canonical(other)


@pytest.mark.parametrize(("one", "other"), [
    ("https://example.org/a%2Fb", "https://example.org/a/b"),  # an escaped slash is data
    ("https://example.org/a?x=1", "https://example.org/a?x=2"),
    ("http://example.org/a", "https://example.org/a"),
    ("https://docs.example.org/a", "https://example.org/a"),  # only www. is dropped
])
def test_different_sources_stay_apart(one: str, other: str) -> None:
    assert canonical(one) != canonical(other)


@pytest.mark.parametrize("bad", ["https://", "mailto:someone@example.org", "https://localhost/x",
                                 "javascript:alert(1)", "https://exa mple.org/x",
                                 "https://example.org:99999/"])
def test_malformed_links(bad: str) -> None:
    assert canonical(bad) is None


def test_extract_markdown_links_autolinks_and_bare_urls() -> None:
    text = ("See [the paper](https://example.org/a \"title\"), <https://example.org/b>, "
            "and https://example.org/c. Also (https://en.wikipedia.org/wiki/Foo_(bar)) and "
            "www.example.org/d; `code` [broken](not-a-url)")
    assert extract(text) == ["https://example.org/a", "https://example.org/b",
                             "https://example.org/c", "https://en.wikipedia.org/wiki/Foo_(bar)",
                             "www.example.org/d", "not-a-url"]


def test_ledger_dedups_and_records_who_cited_what() -> None:
    ledger = build([
        ("claude", "research", "[x](https://Example.org/p/) and [bad](https:///nohost)"),
        ("codex", "research", "https://example.org/p?utm_campaign=z"),
        ("codex", "refinement", "https://example.org/p#top and https://solo.example.net/q"),
        ("claude", "synthesis", "https://example.org/p and https://invented.example.com/"),
    ])
    data = ledger.to_dict()
    first, *rest = data["sources"]
    assert first["url"] == "https://example.org/p"
    assert first["cited_by"] == {"claude": ["research", "synthesis"],
                                 "codex": ["refinement", "research"]}
    assert first["single_agent"] is False
    assert len(first["variants"]) == 3  # other spellings than the canonical one
    flags = {s["url"]: (s["single_agent"], s["synthesis_only"]) for s in rest}
    assert flags == {"https://solo.example.net/q": (True, False),
                     "https://invented.example.com/": (False, True)}
    assert data["malformed"] == [{"url": "https:///nohost", "agent": "claude",
                                  "phase": "research"}]
    section = sources_section(ledger)
    assert "1. <https://example.org/p> — cited by claude, codex\n" in section
    assert "— cited by codex †" in section
    assert "only in the synthesis ‡" in section
    assert "`https:///nohost`" in section


def test_replace_sources_keeps_what_follows() -> None:
    report = "# T\n## Key Findings\nx\n## Sources\n1. old\n## Methodology\nm\n"
    out = replace_sources(report, "## Sources\n\n1. new\n")
    assert out == "# T\n## Key Findings\nx\n## Sources\n\n1. new\n\n## Methodology\nm\n"
    assert replace_sources("# T\nbody\n", "## Sources\n").endswith("body\n\n## Sources\n")


def test_disappeared_sources() -> None:
    before = "https://a.example.org/1 https://b.example.org/2 https://c.example.org/3"
    after = "https://A.example.org/1/ https://c.example.org/3"
    assert disappeared(before, after) == ["https://b.example.org/2"]


def test_a_run_writes_sources_json_and_the_sources_section(council: Council) -> None:
    council.script({"*": {"finish_after": 2}})
    assert council.run("run", "--test", "q").returncode == 0
    run = council.only_run()
    data = json.loads((run / "sources.json").read_text())
    urls = {s["url"] for s in data["sources"]}
    assert "https://example.org/codex/codex/1" in urls
    final = (run / "final-report.md").read_text()
    assert final.count("## Sources") == 1
    assert "cited by codex" in final
    state = yaml.safe_load((run / "state.yaml").read_text())
    assert state["agents"]["codex"]["phases"]["refinement"]["dropped_sources"] == []


def test_sources_only_from_the_gap_filling_round_are_marked() -> None:
    ledger = build([
        ("claude", "research", "https://example.org/a"),
        ("codex", "gapfill", "https://example.org/a https://example.org/gap"),
        ("claude", "synthesis", "https://example.org/gap"),
    ])
    section = sources_section(ledger)
    assert "<https://example.org/gap> — cited by codex † §\n" in section
    assert "<https://example.org/a> — cited by claude, codex\n" in section  # not only gap fill
    flags = {s["url"]: s["gap_fill_only"] for s in ledger.to_dict()["sources"]}
    assert flags == {"https://example.org/a": False, "https://example.org/gap": True}


def test_a_page_of_unclosed_brackets_is_read_in_one_pass() -> None:
    # 400,000 `[` with no `]` and one real link at the end: each `[` looks at most one line.
    text = ("[" * 79 + "\n") * 5_000 + "See [the gauge](https://example.org/gauge).\n"
    assert extract(text) == ["https://example.org/gauge"]


def test_state_keeps_the_first_dropped_sources_and_how_many_more(council: Council) -> None:
    """A report that drops 30 sources in refinement: state.yaml lists 20 and says how many
    more, progress.log and the synthesis's facts give the whole count."""
    research = "# R\n\n" + "".join(f"- Fact {i} (https://example.org/s/{i})\n"
                                   for i in range(30))
    council.script({"codex:research": {"finish_after": 1, "content": research},
                    "codex:refinement": {"finish_after": 1, "content": "# Refined\n\nNone.\n"},
                    "*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude,codex", "q").returncode == 0
    run = council.only_run()
    state = yaml.safe_load((run / "state.yaml").read_text())
    dropped = state["agents"]["codex"]["phases"]["refinement"]["dropped_sources"]
    assert len(dropped) == 21
    assert dropped[-1] == "… and 10 more"
    assert "refinement codex dropped 30 sources" in (run / "progress.log").read_text()
    data = json.loads((run / "sources.json").read_text())
    assert len(data["dropped_in_refinement"]["codex"]) == 20  # URLs only
    assert data["dropped_in_refinement_total"] == {"codex": 30}
