"""Cited claims, read from the report as a reader reads it, and the pages the agents fetched."""

from __future__ import annotations

import json
from pathlib import Path

from council.evaluation.citations import (
    Citation,
    choose,
    cited_claims,
    cites_blocked,
    fetched_pages,
    for_judging,
    numbered_sources,
)

REPORT = """\
> council run `20261122-031441-88dba5` · 3 of 3 agents contributed (claude, codex, gemini) ·
> completeness 61/100

# Tides

The Moon's pull on the near side of the Earth is stronger than on the far side, which \
raises two bulges [1]. The Sun's effect is a bit under half the Moon's \
([NOAA](https://oceanservice.noaa.gov/education/tides/tides02.html)).

- Spring tides come when Sun and Moon line up.
- https://en.wikipedia.org/wiki/Tide

| region | tide |
|---|---|
| Gulf of Mexico has diurnal tides in many places | <https://tidesandcurrents.noaa.gov/> |

Finding 2 from gemini: the scripted server answered turn 2. Source: https://example.org/gemini/2

```
Ignored example with https://example.org/in-code that is code
```

## Completeness

Score 61/100 https://example.org/completeness-is-council-s

## Sources

1. <https://www.britannica.com/science/tide> — cited by claude
2. <https://example.org/unused> — cited by codex
"""


def test_the_judge_sees_neither_councils_header_nor_its_completeness_section() -> None:
    text = for_judging(REPORT)
    assert text.startswith("# Tides")
    assert "council run" not in text
    assert "Completeness" not in text
    assert "## Sources" in text  # the sources are the report's own


def test_numbered_references_resolve_through_the_sources_list() -> None:
    assert numbered_sources(REPORT) == {"1": "https://www.britannica.com/science/tide",
                                        "2": "https://example.org/unused"}


def test_each_cited_claim_with_its_source() -> None:
    pairs = cited_claims(for_judging(REPORT))
    expected = [
        ("The Moon's pull on the near side", "https://britannica.com/science/tide"),
        ("The Sun's effect is a bit under half",
         "https://oceanservice.noaa.gov/education/tides/tides02.html"),
        ("Spring tides come when", "https://en.wikipedia.org/wiki/Tide"),
        ("Gulf of Mexico has diurnal tides", "https://tidesandcurrents.noaa.gov/"),
        ("Finding 2 from gemini", "https://example.org/gemini/2"),
    ]
    assert [p.url for p in pairs] == [url for _, url in expected]
    for pair, (start, _) in zip(pairs, expected, strict=True):
        assert pair.claim.startswith(start)
    assert not any("[1]" in p.claim for p in pairs)  # the reference is not part of the claim
    # A link standing alone cites the statement before it.
    assert pairs[2].claim == "Spring tides come when Sun and Moon line up."
    assert pairs[4].claim == "Finding 2 from gemini: the scripted server answered turn 2."


def test_the_sample_is_the_same_every_time_and_in_report_order() -> None:
    pairs = [Citation(f"claim {i}", f"https://example.org/{i}") for i in range(20)]
    first = choose(pairs, 5, "sample-a")
    assert first == choose(pairs, 5, "sample-a")
    assert first != choose(pairs, 5, "sample-b")
    assert first == sorted(first, key=pairs.index)
    assert choose(pairs[:3], 5, "x") == pairs[:3]


def test_a_forbidden_article_among_the_citations_is_named() -> None:
    pairs = [Citation("c", "https://mdpi.com/2073-445X/11/9/1529")]
    assert cites_blocked(pairs, ["https://www.mdpi.com/2073-445X/11/9/1529/"]) == [
        "https://mdpi.com/2073-445X/11/9/1529"]
    assert cites_blocked(pairs, ["https://other.org/x"]) == []


def test_pages_the_agents_fetched_are_read_from_their_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    claude = [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "WebFetch",
             "input": {"url": "https://www.example.org/page/", "prompt": "what"}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "text", "text": "The page says the Moon does it."}]}]}},
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t2", "name": "Write", "input": {"file_path": "x"}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "written"}]}},
    ]
    gemini = [
        {"type": "tool_use", "tool_name": "web_fetch", "tool_id": "g1",
         "parameters": {"prompt": "Summarise https://noaa.gov/tides please"}},
        {"type": "tool_result", "tool_id": "g1", "status": "success", "output": "NOAA text"},
    ]
    (logs / "claude-research.jsonl").write_text("\n".join(map(json.dumps, claude)) + "\n")
    (logs / "gemini-research.jsonl").write_text("not json\n" +
                                                "\n".join(map(json.dumps, gemini)) + "\n")
    assert fetched_pages(tmp_path) == {
        "https://example.org/page": "The page says the Moon does it.",
        "https://noaa.gov/tides": "NOAA text"}
    assert fetched_pages(tmp_path / "nothing") == {}
