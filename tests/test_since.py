"""`council run --since` end to end with the fake CLIs (tests/fakes): the verifiers' verdicts
are scripted, so a second run flips one claim and a third changes nothing (issue 35)."""

from __future__ import annotations

import json
from typing import Any

from conftest import Council

from council.evidence.finalreport import body_of

CLAIMS = {"claims": [
    {"id": "c1", "agent": "claude", "claim": "Tides follow the moon.",
     "sources": ["https://example.org/tides"]},
    {"id": "c2", "agent": "codex", "claim": "Spring tides come every fortnight.",
     "sources": []}]}
RUN = ("run", "--test", "--agents", "claude,codex", "--verify", "--depth", "standard")


def script(council: Council, c2: str) -> None:
    """Each claim is checked by the other vendor: codex checks c1, claude checks c2."""
    council.script({
        "*": {"finish_after": 1}, "claude:claims": {"content": json.dumps(CLAIMS)},
        "codex:verification": {"content": json.dumps({"verdicts": [
            {"id": "c1", "verdict": "SUPPORTED", "evidence": "the moon"}]})},
        "claude:verification": {"content": json.dumps({"verdicts": [
            {"id": "c2", "verdict": c2, "evidence": f"scripted {c2.lower()}"}]})}})


def findings(report: str) -> str:
    return body_of(report).split("\n## Completeness", 1)[0]


def runs(council: Council) -> list[Any]:
    return sorted(p for p in council.research.iterdir() if p.name[0].isdigit())


def test_since_flips_one_claim_then_changes_nothing(council: Council) -> None:
    script(council, "SUPPORTED")
    first = council.run(*RUN, "Do tides follow the moon?")
    assert first.returncode == 0, first.stderr
    (one,) = runs(council)

    script(council, "CONTRADICTED")
    second = council.run(*RUN, "--since", "latest", "--exit-code")
    assert second.returncode == 1, second.stderr  # something changed
    assert f"since run {one.name}: seeded with its claims" in second.stdout  # the plan
    (two,) = set(runs(council)) - {one}  # not the last by name: ids of one second sort at random
    changes = json.loads((two / "changes.json").read_text())
    assert changes["claims"]["flipped"] == [
        {"claim": "Spring tides come every fortnight.", "id": "c2", "before": "SUPPORTED",
         "after": "CONTRADICTED", "evidence": "scripted contradicted"}]
    assert changes["claims"]["unchanged"] == 1
    assert changes["sources"] == {"new": [], "gone": []}
    assert "- SUPPORTED → CONTRADICTED: Spring tides come every fortnight." in \
        (two / "changes.md").read_text()
    claims_prompt = (two / "agents" / "claude" / "claims-prompt.md").read_text()
    assert "- c2 [SUPPORTED]: Spring tides come every fortnight." in claims_prompt
    # The synthesiser was offered Edit, not Write, and patched the earlier report.
    synthesis = [e for e in council.fake_log() if e["event"] == "turn"
                 and str(e.get("report") or "").startswith(str(two))
                 and str(e["report"]).endswith("final-report.md") and e["tool_call"]]
    assert {e["tool"] for e in synthesis} == {"Edit"}
    then, now = (one / "final-report.md").read_text(), (two / "final-report.md").read_text()
    assert findings(now) == findings(then)  # what the edit did not touch, byte for byte
    assert now.index(f"## What changed since {one.name}") < now.index(findings(then))

    third = council.run(*RUN, "--since", "latest", "--exit-code")
    assert third.returncode == 0, third.stderr
    assert third.stdout.strip().splitlines()[-1] == \
        f"no change since {two.name}: 2 claims verified again, 0 flipped"


def test_exit_code_without_since_is_refused(council: Council) -> None:
    proc = council.run("run", "--test", "--exit-code", "q")
    assert proc.returncode == 2
    assert "--exit-code needs --since" in proc.stderr
    assert not council.research.exists() or runs(council) == []
