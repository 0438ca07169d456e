"""Cross-vendor claim verification, end to end with the fake CLIs."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import yaml
from conftest import Council

from council.config import Overrides, load_options

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
    assert re.search(r"· depth standard: scope( \(degraded\))? → research → refinement → "
                     r"claims → verification → synthesis ·", header), header  # the default
    st = yaml.safe_load((run / "state.yaml").read_text())
    assert st["agents"]["codex"]["phases"]["verification"]["status"] == "capped"


def test_a_run_that_checks_no_claims_says_why_in_the_plan_and_the_header(
        council: Council) -> None:
    """`--test` keeps the test profile's verification off at depth standard, whose help says
    "claims checked": the plan and the header say it was the profile, and how to turn it on.
    A phase the depth leaves out is not shown as skipped: the header lists what ran."""
    council.script({"*": {"finish_after": 1}})
    why = "the test profile turns verification off; --verify turns it on"
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    assert f"depth standard (--depth quick|standard|deep): claims not checked ({why})" \
        in proc.stdout
    standard = council.only_run()
    header = (standard / "final-report.md").read_text().splitlines()[0]
    assert f" · claims not checked: {why}" in header
    proc = council.run("run", "--test", "--depth", "quick", "q")
    assert proc.returncode == 0, proc.stderr
    (quick,) = [p for p in council.research.iterdir()
                if p.is_dir() and not p.is_symlink() and p != standard]
    header = (quick / "final-report.md").read_text().splitlines()[0]
    assert "· depth quick: research → synthesis ·" in header, header
    assert "skipped" not in header
    assert " · claims not checked: depth quick runs no check; --depth standard --verify " \
           "checks them" in header  # --test: the depth alone would not check them


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


def test_when_the_antagonist_runs_is_declared_in_the_graph() -> None:
    from council.graph import Facts, skip_antagonist

    def why(facts: Facts) -> str | None:
        return skip_antagonist(facts)

    full = load_options(Overrides())  # verification on: auto runs it beside verification
    cheap = load_options(Overrides(test=True))
    assert why(Facts(full)) is None
    assert why(Facts(full, survivors=2)) is None
    assert why(Facts(full, survivors=1)) == "fewer than 2 agents have a report to attack"
    assert why(Facts(full, budget_exhausted="$5 spent")) == "$5 spent"
    assert "verification, which is off" in (why(Facts(cheap)) or "")
    assert why(Facts(replace(cheap, debate="force"), survivors=1)) is None
    assert why(Facts(replace(cheap, mode="compliance"))) is None  # always challenged
    assert why(Facts(replace(full, debate="off"))) == "off (--debate off)"


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
    # debate auto: beside verification, at depth deep
    proc = council.run("run", "--test", "--verify", "--depth", "deep", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    log = (run / "progress.log").read_text()
    assert "antagonist started: codex attacks the consensus" in log
    # The antagonist ran beside the verification: it started before the verdicts were in.
    assert log.index("antagonist started") < log.index("verification finished")
    assert "- c2 (codex): Tides are caused by wind." in (
        run / "agents" / "codex" / "antagonist-prompt.md").read_text()
    st = yaml.safe_load((run / "state.yaml").read_text())
    # Another vendor than the synthesiser (claude) plays the antagonist.
    assert [n for n, a in st["agents"].items() if "antagonist" in a["phases"]] == ["codex"]
    assert (run / "counterpoints.md").is_file()
    prompt = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "## Counterpoints" in prompt
    assert str(run / "agents" / "claude" / "synthesis-inputs" / "counterpoints.md") in prompt
    assert "→ verification ∥ antagonist → synthesis" in (
        run / "final-report.md").read_text().splitlines()[0]


def test_debate_off_and_force(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--debate", "force", "q").returncode == 0
    run = council.only_run()
    assert (run / "counterpoints.md").is_file()
    assert "antagonist started: codex attacks the consensus" in (run / "progress.log").read_text()


def test_modes_shape_prompts_and_the_debate_trigger(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--mode", "compliance", "q").returncode == 0
    run = council.only_run()
    assert "This is compliance research" in (
        run / "agents" / "codex" / "research-prompt.md").read_text()
    assert "This is compliance research" in (
        run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "antagonist started: codex attacks the consensus" in (run / "progress.log").read_text()
    refused = council.run("run", "--test", "--mode", "compliance", "--debate", "off", "q")
    assert refused.returncode == 2
    assert "compliance research is always challenged" in refused.stderr
    bad = council.run("run", "--mode", "vibes", "q")
    assert bad.returncode == 2
