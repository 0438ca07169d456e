"""The integrity scorer: a run's integrity.json figures (evidence/reportcheck.figures) as a
score, with what the run did not check left out of the means, never counted as 0."""

from __future__ import annotations

import math
from typing import Any

from council.evaluation import scorers


def figures(offline: bool = False, **parts: Any) -> dict[str, Any]:
    return {"summary": "quotes 3 of 4 found, …", "offline": offline, "failures": 2,
            "file": "/r/integrity.json",
            "quotes": {"found": 3, "checked": 4, "not_checked": 1, "unattributed": 0},
            "numbers": {"traced": 9, "checked": 10, "not_checked": 0},
            "citations": {"stated": 5, "cited": 4, "share": 0.8},
            "sources": {"fetched": 6, "problems": [
                {"url": "https://a.example/x", "why": "gone (HTTP 404)"},
                {"url": "https://b.example/y", "why": "retracted: its title reads RETRACTED"}]},
            **parts}


def test_a_checked_run_gives_its_shares_and_lost_sources() -> None:
    value, meta = scorers.integrity_value(figures())
    assert value == {"quotes_found": 0.75, "numbers_traced": 0.9, "claims_cited": 0.8,
                     "sources_gone": 1.0, "sources_retracted": 1.0}
    assert meta["quotes"] == [3, 4]
    assert meta["numbers"] == [9, 10]
    assert meta["cited"] == [4, 5]
    assert (meta["gone"], meta["retracted"], meta["offline"]) == (1, 1, False)


def test_an_offline_run_did_not_check_quotes_numbers_or_sources() -> None:
    value, meta = scorers.integrity_value(figures(offline=True))
    assert math.isnan(value["quotes_found"])
    assert math.isnan(value["numbers_traced"])
    assert math.isnan(value["sources_gone"])
    assert math.isnan(value["sources_retracted"])
    assert value["claims_cited"] == 0.8  # counted offline too: no fetch needed
    assert meta["quotes"] is None
    assert meta["numbers"] is None
    assert meta["gone"] is None
    assert meta["cited"] == [4, 5]


def test_a_run_without_integrity_json_checked_nothing() -> None:
    value, meta = scorers.integrity_value(None)
    assert set(value) == set(scorers.INTEGRITY_KEYS)
    assert all(math.isnan(v) for v in value.values())
    assert meta["checked"] is False
    assert meta["quotes"] is None
    assert meta["cited"] is None


def test_nothing_to_check_is_no_share_but_is_checked() -> None:
    value, meta = scorers.integrity_value(figures(
        quotes={"found": 0, "checked": 0}, citations={"stated": 0, "cited": 0}))
    assert math.isnan(value["quotes_found"])
    assert math.isnan(value["claims_cited"])
    assert meta["quotes"] == [0, 0]
    assert meta["cited"] == [0, 0]


def test_a_malformed_part_is_not_checked_rather_than_wrong() -> None:
    value, meta = scorers.integrity_value(figures(quotes={"found": "3", "checked": 4},
                                                  sources="gone"))
    assert math.isnan(value["quotes_found"])
    assert meta["quotes"] is None
    assert math.isnan(value["sources_gone"])
    assert meta["gone"] is None
