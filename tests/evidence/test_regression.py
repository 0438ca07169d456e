"""Claim-level regression between an agent's research and refined reports."""

from __future__ import annotations

from council.evidence.regression import MAX_LISTED, dropped_claims, listed, total

RESEARCH = """# Tides

## Key Findings
- Spring tides occur near new and full moon, when the sun and moon align [1].
- The Bay of Fundy has the highest tidal range, about 16 m (https://example.org/fundy).
- Tidal friction slows the Earth's rotation by about 2.3 ms per century [2].
Tides are fun to watch.

## Sources
1. https://example.org/spring — spring tides near new and full moon in many places
2. https://example.org/friction — tidal friction slows the rotation of the Earth
"""


def test_kept_reworded_and_dropped_claims() -> None:
    refined = """# Tides, refined

## Findings
The Bay of Fundy has the world's highest tidal range, about 16 m (https://example.org/fundy).
Spring tides occur near the new and full moon, when sun and moon align
([NOAA](https://example.org/noaa)).

## Sources
- https://example.org/friction — Tidal friction slows the Earth's rotation by about 2.3 ms per
  century.
"""
    # The friction claim survives only in the Sources list: that is not a claim kept.
    assert list(dropped_claims(RESEARCH, refined)) == [
        "Tidal friction slows the Earth's rotation by about 2.3 ms per century [2]."]


def test_a_changed_figure_is_a_dropped_claim() -> None:
    # Only the figures change: every other word is kept.
    refined = RESEARCH.replace("about 16 m", "about 21 m").replace("2.3 ms", "1.7 ms")
    assert list(dropped_claims(RESEARCH, refined)) == [
        "The Bay of Fundy has the highest tidal range, about 16 m (https://example.org/fundy).",
        "Tidal friction slows the Earth's rotation by about 2.3 ms per century [2]."]


def test_uncited_and_short_statements_are_not_tracked() -> None:
    assert list(dropped_claims(RESEARCH, RESEARCH)) == []
    assert list(dropped_claims("Tides are fun to watch.\n- See [1].\n", "# empty\n")) == []


def test_the_list_kept_in_state_is_bounded_and_counts_the_rest() -> None:
    before = "\n".join(f"- Finding number {i} concerns topic {i} in depth "
                       f"{'and more ' * 40}[{i}]." for i in range(MAX_LISTED + 5))
    dropped = list(dropped_claims(before, "# nothing left\n"))
    assert len(dropped) == MAX_LISTED + 5
    assert all(len(d) <= 200 for d in dropped)
    assert dropped[0].endswith("…")
    kept = listed(dropped)
    assert kept[-1] == "… and 5 more"
    assert (len(kept), total(kept), total(dropped[:3])) == (MAX_LISTED + 1, MAX_LISTED + 5, 3)


def test_headings_code_and_tables() -> None:
    before = """## Reference architecture
- The gateway terminates TLS for every tenant at the edge [1].

```python
# Sources
x = 1
```
- Retries back off exponentially with full jitter here (https://example.org/retry).

Option | Latency | Source
---|---|---
Redis | 1 ms median at 10k ops | [2]
Postgres | 4 ms median at 10k ops | [3]
"""
    after = """## Reference architecture
- The gateway terminates TLS for every tenant at the edge [1].
- Retries back off exponentially with full jitter here (https://example.org/retry).

Option | Latency | Source
---|---|---
Redis | 1 ms median at 10k ops | [2]
"""
    # A heading that starts with "Reference" is not a Sources section, a "# Sources" comment
    # in code is not a heading, and a table row dropped is a claim dropped.
    assert list(dropped_claims(before, after)) == ["Postgres | 4 ms median at 10k ops | [3]"]
    assert list(dropped_claims(before, "## Reference architecture\n")) == [
        "The gateway terminates TLS for every tenant at the edge [1].",
        "Retries back off exponentially with full jitter here (https://example.org/retry).",
        "Redis | 1 ms median at 10k ops | [2]",
        "Postgres | 4 ms median at 10k ops | [3]"]


def test_a_pasted_page_without_blank_lines_is_one_pass() -> None:
    # 40,000 hard-wrapped cited lines, no blank line: one block of 40,000 sentences, every
    # one of them dropped by a refinement that kept one.
    lines = [f"Line {i}: the gauge at {i} rose by {i % 97} cm, see https://example.net/{i}."
             for i in range(40_000)]
    before = "\n".join(lines) + "\n"
    after = lines[7] + "\n"
    dropped = listed(dropped_claims(before, after))
    assert total(dropped) == 39_999
    assert dropped[0].startswith("Line 0:")
    assert not any(d.startswith("Line 7:") for d in dropped[:MAX_LISTED])
