"""What changed between two runs' claims and sources (evidence/changes.py)."""

from council.evidence import changes


def claim(cid: str, text: str, verdict: str = "SUPPORTED", evidence: str = "") -> dict[str, str]:
    return {"id": cid, "claim": text, "verdict": verdict, "evidence": evidence}


BEFORE = [claim("c1", "Tides follow the moon."), claim("c2", "The sea is salty."),
          claim("c3", "Waves are wind-driven.")]


def test_nothing_changed_is_unchanged_and_not_changed() -> None:
    out = changes.compare("R1", BEFORE, [dict(c) for c in BEFORE], ["https://a"], ["https://a"])
    assert out["claims"] == {"new": [], "flipped": [], "retracted": [], "unchanged": 3}
    assert out["sources"] == {"new": [], "gone": []}
    assert out["changed"] is False
    assert changes.headline(out) == "no change since R1: 3 claims verified again, 0 flipped"


def test_a_flip_lists_claim_before_after_and_evidence() -> None:
    after = [claim("c1", "Tides follow the moon."),
             claim("c2", "The sea is salty.", "CONTRADICTED", "a page says otherwise"),
             claim("c3", "Waves are wind-driven.")]
    out = changes.compare("R1", BEFORE, after, [], [])
    assert out["claims"]["flipped"] == [{"claim": "The sea is salty.", "id": "c2",
                                         "before": "SUPPORTED", "after": "CONTRADICTED",
                                         "evidence": "a page says otherwise"}]
    assert out["claims"]["unchanged"] == 2
    assert out["changed"] is True
    assert "SUPPORTED → CONTRADICTED: The sea is salty." in changes.markdown(out)


def test_new_and_retracted_claims() -> None:
    after = [claim("c1", "Tides follow the moon."), claim("n1", "Sea level rises.")]
    out = changes.compare("R1", BEFORE, after, [], [])
    assert out["claims"]["new"] == ["Sea level rises."]
    assert out["claims"]["retracted"] == ["The sea is salty.", "Waves are wind-driven."]
    assert out["claims"]["unchanged"] == 1
    assert out["changed"] is True


def test_a_carried_id_matches_a_reworded_claim_and_text_matches_without_the_id() -> None:
    after = [claim("c1", "The tides follow the Moon's pull."),  # carried id, reworded
             claim("x9", "  the SEA is   salty "),  # other id, same text once normalised
             claim("c3", "Waves are wind-driven.")]
    out = changes.compare("R1", BEFORE, after, [], [])
    assert out["claims"]["new"] == []
    assert out["claims"]["retracted"] == []
    assert out["claims"]["unchanged"] == 3


def test_sources_new_and_gone() -> None:
    out = changes.compare("R1", BEFORE, BEFORE, ["https://a", "https://b"],
                          ["https://b", "https://c"])
    assert out["sources"] == {"new": ["https://c"], "gone": ["https://a"]}
    assert out["changed"] is True
    md = changes.markdown(out)
    assert "- https://c" in md
    assert "- https://a" in md


def test_cited_leaves_out_what_only_the_synthesis_cites() -> None:
    ledger = {"sources": [{"url": "https://a", "synthesis_only": False},
                          {"url": "https://s", "synthesis_only": True}]}
    assert changes.cited(ledger) == ["https://a"]
    assert changes.cited(None) == []


def test_seed_is_bounded() -> None:
    long = claim("c1", "x" * 5000)
    seeded = changes.seed("R1", [long], [f"https://e/{i}" for i in range(500)])
    assert len(seeded["claims"][0]["claim"]) == changes.MAX_CLAIM_CHARS
    assert len(seeded["sources"]) == changes.MAX_SOURCES
