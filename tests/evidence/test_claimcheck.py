from __future__ import annotations

from typing import Any

import pytest

from council.evidence.claimcheck import (
    Claim,
    Verdict,
    assign,
    tally,
    validate_claims,
    validate_verdicts,
)

GOOD = {"claims": [
    {"id": "c1", "agent": "claude", "claim": "A", "sources": ["https://a.example.org/"]},
    {"id": "c2", "agent": "codex", "claim": "B", "sources": []},
    {"id": "c3", "agent": "gemini", "claim": "C"},
]}


def test_valid_claims() -> None:
    claims = validate_claims(GOOD, ["claude", "codex", "gemini"])
    assert [c.id for c in claims] == ["c1", "c2", "c3"]
    assert claims[0].sources == ("https://a.example.org/",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected an object"),
        ({"claims": []}, "empty"),
        ({"claims": [{"id": "c1", "agent": "bard", "claim": "x"}]}, "'agent' must be one of"),
        ({"claims": [{"id": "c1", "agent": "claude", "claim": " "}]}, "'claim' must be"),
        ({"claims": [{"id": "c1", "agent": "claude", "claim": "x"},
                     {"id": "c1", "agent": "codex", "claim": "y"}]}, "unique"),
        ({"claims": [{"id": "c1", "agent": "claude", "claim": "x", "sources": "u"}]},
         "list of URLs"),
        ({"claims": [{"id": f"c{i}", "agent": "claude", "claim": "x"} for i in range(41)]},
         "more than 40"),
    ],
)
def test_invalid_claims(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_claims(data, ["claude", "codex", "gemini"])


def test_claims_go_to_another_vendor() -> None:
    claims = validate_claims(GOOD, ["claude", "codex", "gemini"])
    clis = {"claude": "claude", "codex": "codex", "gemini": "gemini"}
    plan = assign(claims, clis)
    for seat, batch in plan.items():
        assert all(clis[c.agent] != clis[seat] for c in batch)
    assert sorted(c.id for batch in plan.values() for c in batch) == ["c1", "c2", "c3"]
    # Two claude seats and one codex seat: claude claims go to codex, codex claims to claude.
    two = assign([Claim("x", "opus", "t", ()), Claim("y", "codex", "t", ())],
                 {"opus": "claude", "sonnet": "claude", "codex": "codex"})
    assert [c.id for c in two["codex"]] == ["x"]
    assert [c.id for batch in two.values() for c in batch if c.id == "y"] == ["y"]
    assert "codex" not in [s for s, b in two.items() if any(c.id == "y" for c in b)]
    # Only one seat: nobody may check its own claims.
    assert assign([Claim("z", "claude", "t", ())], {"claude": "claude"}) == {}


def test_verdicts() -> None:
    data = {"verdicts": [{"id": "c1", "verdict": "SUPPORTED", "evidence": "quote"},
                         {"id": "c2", "verdict": "OVERSTATED"}]}
    got = validate_verdicts(data, ["c1", "c2"], "gemini")
    assert got["c1"] == Verdict("SUPPORTED", "quote", "gemini")
    with pytest.raises(ValueError, match="unknown claim id"):
        validate_verdicts({"verdicts": [{"id": "c9", "verdict": "SUPPORTED"}]}, ["c1"], "g")
    with pytest.raises(ValueError, match="verdict must be one of"):
        validate_verdicts({"verdicts": [{"id": "c1", "verdict": "TRUE"}]}, ["c1"], "g")
    claims = validate_claims(GOOD, ["claude", "codex", "gemini"])
    assert tally(claims, got) == {"SUPPORTED": 1, "UNSUPPORTED": 0, "OVERSTATED": 1,
                                  "CONTRADICTED": 0, "UNVERIFIED": 1}
