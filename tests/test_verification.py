"""Cross-vendor claim verification, end to end with the fake CLIs."""

from __future__ import annotations

import json

import yaml
from conftest import Council

CLAIMS = {"claims": [
    {"id": "c1", "agent": "claude", "claim": "Tides follow the moon.",
     "sources": ["https://example.org/tides"]},
    {"id": "c2", "agent": "codex", "claim": "Tides are caused by wind.", "sources": []},
    {"id": "c3", "agent": "gemini", "claim": "Spring tides are twice as high.",
     "sources": ["https://example.org/spring"]},
]}


def test_claims_are_checked_by_another_vendor(council: Council) -> None:
    council.script({
        "*": {"finish_after": 1},
        "claude:claims": {"content": json.dumps(CLAIMS)},
        # c1 (claude's) goes to codex; c2 (codex's) and c3 (gemini's) go to claude.
        "codex:verification": {"content": json.dumps({"verdicts": [
            {"id": "c1", "verdict": "SUPPORTED", "evidence": "'the moon' (example.org)"}]})},
        "claude:verification": {"content": json.dumps({"verdicts": [
            {"id": "c2", "verdict": "CONTRADICTED", "evidence": "gravity, not wind"},
            {"id": "c3", "verdict": "OVERSTATED", "evidence": "about 20% higher"}]})},
    })
    proc = council.run("run", "--test", "--verify", "How do tides work?")
    assert proc.returncode == 0, proc.stderr
    assert "claim verification" in proc.stdout  # in the plan
    run = council.only_run()
    data = json.loads((run / "claims.json").read_text())
    assert data["status"] == "ok"
    by_id = {c["id"]: c for c in data["claims"]}
    assert (by_id["c1"]["verdict"], by_id["c1"]["verifier"]) == ("SUPPORTED", "codex")
    assert (by_id["c2"]["verdict"], by_id["c2"]["verifier"]) == ("CONTRADICTED", "claude")
    assert by_id["c3"]["verdict"] == "OVERSTATED"
    for claim in data["claims"]:  # nobody checked their own vendor's claim
        assert claim["verifier"] != claim["agent"]
    prompt = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "c2 [CONTRADICTED] (codex, checked by claude): Tides are caused by wind." in prompt
    assert "## Claims Dropped in Verification" in prompt
    header = (run / "final-report.md").read_text().splitlines()[0]
    assert "claims: 1 supported, 1 overstated, 1 contradicted" in header
    st = yaml.safe_load((run / "state.yaml").read_text())
    assert st["agents"]["codex"]["phases"]["verification"]["status"] == "capped"


def test_a_malformed_claims_list_is_retried_once_then_degraded(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:claims": {"content": "not JSON at all"}})
    proc = council.run("run", "--test", "--verify", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    data = json.loads((run / "claims.json").read_text())
    assert data["status"] == "degraded"
    assert "invalid claims file" in data["error"]
    attempts = [e for e in council.fake_log()
                if e["event"] == "turn" and e.get("phase") == "claims"]
    assert len(attempts) == 2
    second = (run / "agents" / "claude" / "claims-prompt.md").read_text()
    assert "Your previous attempt was rejected: invalid claims file" in second
    assert "not verified" in (run / "final-report.md").read_text().splitlines()[0]
    assert "did not complete" in (run / "agents" / "claude" / "synthesis-prompt.md").read_text()


def test_verification_is_off_in_the_test_profile_and_on_request(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "q").returncode == 0
    assert not (council.only_run() / "claims.json").exists()


def test_antagonist_triggers() -> None:
    from council.phases.antagonist import should_run

    def tally(**n: int) -> dict[str, object]:
        return {"status": "ok", "tally": {"SUPPORTED": 0, "UNSUPPORTED": 0, "OVERSTATED": 0,
                                          "CONTRADICTED": 0, "UNVERIFIED": 0, **n}}

    assert should_run("force", None)[0]
    assert not should_run("off", tally(CONTRADICTED=3))[0]
    assert should_run("auto", tally(SUPPORTED=5, CONTRADICTED=1)) == (
        True, "1 claim(s) contradicted")
    assert should_run("auto", tally(SUPPORTED=1, UNSUPPORTED=2)) == (
        True, "only 1 of 3 checked claims supported")
    assert not should_run("auto", tally(SUPPORTED=2, OVERSTATED=2))[0]  # exactly half holds
    assert not should_run("auto", {"status": "degraded"})[0]
    assert not should_run("auto", None)[0]


def test_the_antagonist_is_answered_in_the_synthesis(council: Council) -> None:
    council.script({
        "*": {"finish_after": 1},
        "claude:claims": {"content": json.dumps(CLAIMS)},
        "codex:verification": {"content": json.dumps({"verdicts": [
            {"id": "c1", "verdict": "SUPPORTED", "evidence": "q"}]})},
        "claude:verification": {"content": json.dumps({"verdicts": [
            {"id": "c2", "verdict": "CONTRADICTED", "evidence": "no"},
            {"id": "c3", "verdict": "SUPPORTED", "evidence": "yes"}]})},
    })
    proc = council.run("run", "--test", "--verify", "q")  # debate auto: c2 is contradicted
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    assert "antagonist started: 1 claim(s) contradicted" in (run / "progress.log").read_text()
    st = yaml.safe_load((run / "state.yaml").read_text())
    # Another vendor than the synthesiser (claude) plays the antagonist.
    assert [n for n, a in st["agents"].items() if "antagonist" in a["phases"]] == ["codex"]
    assert (run / "counterpoints.md").is_file()
    prompt = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "## Counterpoints" in prompt
    assert str(run / "agents" / "claude" / "synthesis-inputs" / "counterpoints.md") in prompt
    assert "→ antagonist →" in (run / "final-report.md").read_text().splitlines()[0]


def test_debate_off_and_force(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--debate", "force", "q").returncode == 0
    run = council.only_run()
    assert (run / "counterpoints.md").is_file()
    assert "antagonist started: forced" in (run / "progress.log").read_text()


def test_modes_shape_prompts_and_the_debate_trigger(council: Council) -> None:
    from council.phases.antagonist import should_run

    mostly = {"status": "ok", "tally": {"SUPPORTED": 6, "UNSUPPORTED": 4, "OVERSTATED": 0,
                                        "CONTRADICTED": 0, "UNVERIFIED": 0}}
    assert not should_run("auto", mostly, "exploratory")[0]  # 60 % holds: enough to explore
    assert should_run("auto", mostly, "decision")[0]  # a decision asks for 70 %
    assert should_run("auto", None, "compliance") == (
        True, "compliance research is always challenged")
    assert not should_run("off", mostly, "decision")[0]

    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--mode", "compliance", "q").returncode == 0
    run = council.only_run()
    assert "This is compliance research" in (
        run / "agents" / "codex" / "research-prompt.md").read_text()
    assert "This is compliance research" in (
        run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "antagonist started: compliance research is always challenged" in (
        run / "progress.log").read_text()
    refused = council.run("run", "--test", "--mode", "compliance", "--debate", "off", "q")
    assert refused.returncode == 2
    assert "compliance research is always challenged" in refused.stderr
    bad = council.run("run", "--mode", "vibes", "q")
    assert bad.returncode == 2
