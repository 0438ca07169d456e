"""Claim-level regression between an agent's research and refined reports."""

from __future__ import annotations

from council.regression import MAX_LISTED, dropped_claims

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
    assert dropped_claims(RESEARCH, refined) == [
        "Tidal friction slows the Earth's rotation by about 2.3 ms per century [2]."]


def test_a_changed_number_is_a_dropped_claim() -> None:
    refined = RESEARCH.replace("about 16 m", "about 21 m").replace("2.3 ms", "1.7 ms")
    refined = refined.replace("highest tidal range", "largest range")
    dropped = dropped_claims(RESEARCH, refined)
    assert dropped == ["The Bay of Fundy has the highest tidal range, about 16 m "
                       "(https://example.org/fundy)."]


def test_uncited_and_short_statements_are_not_tracked() -> None:
    assert dropped_claims(RESEARCH, RESEARCH) == []
    assert dropped_claims("Tides are fun to watch.\n- See [1].\n", "# empty\n") == []


def test_the_list_is_bounded_and_clipped() -> None:
    before = "\n".join(f"- Finding number {i} concerns topic {i} in depth "
                       f"{'and more ' * 40}[{i}]." for i in range(MAX_LISTED + 5))
    dropped = dropped_claims(before, "# nothing left\n")
    assert len(dropped) == MAX_LISTED
    assert all(len(d) <= 200 for d in dropped)
    assert dropped[0].endswith("…")
