"""Scope → coverage → completeness score → regression, end to end with the fake CLIs."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from conftest import Council

SCOPE = {
    "questions": [{"id": "q1", "question": "What raises the tides?"},
                  {"id": "q2", "question": "How high do spring tides get?"},
                  {"id": "q3", "question": "Does wind matter?"}],
    "dimensions": [{"id": "d1", "dimension": "Physical mechanism"},
                   {"id": "d2", "dimension": "Measured data"},
                   {"id": "d3", "dimension": "Coastal engineering practice"}],
}
CLAIMS: dict[str, Any] = {
    "claims": [
        {"id": "c1", "agent": "claude", "claim": "Tides follow the moon.",
         "sources": ["https://example.org/tides"]},
        {"id": "c2", "agent": "codex", "claim": "Tides are caused by wind.", "sources": []},
        {"id": "c3", "agent": "gemini", "claim": "Spring tides are twice as high.",
         "sources": ["https://example.org/spring"]}],
    "questions": [{"id": "q1", "status": "answered", "claims": ["c1"]},
                  {"id": "q2", "status": "partial", "claims": ["c3"]},
                  {"id": "q3", "status": "answered", "claims": ["c2"]}],
    "dimensions": [{"id": "d1", "covered": True}, {"id": "d2", "covered": True},
                   {"id": "d3", "covered": False}],
}
# After the gap fill: the gap reports answered q2 and covered d3.
CLAIMS_AFTER: dict[str, Any] = {
    **CLAIMS,
    "questions": [{"id": "q1", "status": "answered", "claims": ["c1"]},
                  {"id": "q2", "status": "answered", "claims": ["c3"]},
                  {"id": "q3", "status": "answered", "claims": ["c2"]}],
    "dimensions": [{"id": "d1", "covered": True}, {"id": "d2", "covered": True},
                   {"id": "d3", "covered": True}],
}
VERDICTS = {
    "codex:verification": {"content": json.dumps({"verdicts": [
        {"id": "c1", "verdict": "SUPPORTED", "evidence": "the moon"}]})},
    "claude:verification": {"content": json.dumps({"verdicts": [
        {"id": "c2", "verdict": "CONTRADICTED", "evidence": "gravity, not wind"},
        {"id": "c3", "verdict": "OVERSTATED", "evidence": "about 20% higher"}]})},
}
# gemini's research cites code and community sources, with a claim its refined report drops.
GEMINI_RESEARCH = """# Tides

- The moon's gravity raises two tidal bulges on opposite sides of the Earth
  (https://github.com/tides/model).
- Harbour pilots plan around spring tides every fortnight (https://stackoverflow.com/q/1).

<!-- RESEARCH_COMPLETE -->
"""


def state_of(run: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    return data


def agents_with(run: Any, phase: str) -> list[str]:
    return [n for n, a in state_of(run)["agents"].items() if phase in a["phases"]]


def test_the_scope_guides_research_and_the_score_is_computed(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)},
                    "claude:recheck": {"content": json.dumps(CLAIMS_AFTER)},
                    "gemini:research": {"content": GEMINI_RESEARCH}, **VERDICTS})
    proc = council.run("run", "--test", "--verify", "--depth", "deep", "--debate", "off",
                       "How do tides work?")
    assert proc.returncode == 0, proc.stderr
    assert "scope → research" in proc.stdout  # the plan
    run = council.only_run()
    # Every phase's agent events name their agent in events.jsonl (scope, claims, checks).
    events = [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]
    started = {(e["scope"], e["agent"]) for e in events if e["message"].startswith("started (")}
    assert {("scope", "claude"), ("claims", "claude"), ("recheck", "claude"),
            ("verification", "codex")} <= started
    assert json.loads((run / "scope.json").read_text())["status"] == "ok"
    for seat in ("claude", "codex", "gemini"):  # every researcher got the same checklist
        prompt = (run / "agents" / seat / "research-prompt.md").read_text()
        assert "- q2: How high do spring tides get?" in prompt
        assert "- d3: Coastal engineering practice" in prompt
    assert "- q1: What raises the tides?" in (
        run / "agents" / "claude" / "claims-prompt.md").read_text()

    # Coverage was judged twice: before the gap fill (kept under "before") and after it,
    # with the gap reports; verification checked the claims of the second judgement.
    data = json.loads((run / "claims.json").read_text())
    assert data["judged_by"] == "recheck"
    assert [q["status"] for q in data["before"]["questions"]] == ["answered", "partial",
                                                                 "answered"]
    assert [q["status"] for q in data["questions"]] == ["answered"] * 3
    assert data["tally"]["CONTRADICTED"] == 1
    recheck = (run / "agents" / "claude" / "recheck-prompt.md").read_text()
    assert str(run / "agents" / "claude" / "recheck-inputs" / "codex-gaps.md") in recheck
    synthesis = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "- q2 [answered]: How high do spring tides get?" in synthesis
    assert "No report covered these dimensions" not in synthesis

    # By hand: diversity 2/3 (github = code, stackoverflow = community); verification 1/3
    # supported; gaps 3/3 covered; closure (q1 1 + q2 answered·overstated 0.5 + q3 refuted 0)/3.
    raw = 100 * (0.30 * 2 / 3 + 0.30 / 3 + 0.25 * 3 / 3 + 0.15 * 0.5)
    done = state_of(run)["completeness"]
    assert done["score"] == round(raw)
    assert (done["cap"], done["cap_reason"]) == (1.0, "all 3 agents contributed")
    # The synthesis is told the provisional score (the same: it adds no agent's source).
    assert f"Completeness score computed by council: {round(raw)}/100" in synthesis

    report = (run / "final-report.md").read_text()
    header = report.splitlines()[0]
    assert "3 of 3 agents contributed" in header
    assert f"completeness {round(raw)}/100 ·" in header
    assert ("scope → research ∥ dissent → refinement → claims → gap fill → recheck → "
            "verification → synthesis") in header
    # --verify makes it the full council: codex (not the synthesiser's CLI) dissented beside
    # the research, and every later reader got the memo.
    assert agents_with(run, "dissent") == ["codex"]
    assert (run / "dissent.md").is_file()
    assert str(run / "agents" / "gemini" / "refinement-inputs" / "dissent.md") in (
        run / "agents" / "gemini" / "refinement-prompt.md").read_text()
    assert str(run / "agents" / "claude" / "synthesis-inputs" / "dissent.md") in synthesis
    assert report.index("## Completeness") < report.index("## Sources")
    assert ("Coverage before the gap fill: 2 of 3 sub-questions answered, 1 partly; 2 of 3 "
            "dimensions covered. After it: 3 of 3 sub-questions answered, 0 partly; 3 of 3 "
            "dimensions covered.") in report
    assert f"{round(raw)}/100" in council.run("status").stdout

    # Gap fill, chosen before verification from the coverage alone: d3 was not covered, q2
    # only partly answered: one gap each, most important first, one agent each.
    agents = state_of(run)["agents"]
    assert [n for n in ("claude", "codex", "gemini") if "gapfill" in agents[n]["phases"]] == [
        "claude", "codex"]
    assert "- d3 (dimension, no report covered it): Coastal engineering practice" in (
        run / "agents" / "claude" / "gapfill-prompt.md").read_text()
    assert "q2 (question, answered only in part)" in (
        run / "agents" / "codex" / "gapfill-prompt.md").read_text()
    assert (run / "codex-gaps.md").is_file()
    assert json.loads((run / "gaps.json").read_text())["plan"]["codex"][0]["id"] == "q2"
    assert (f"- codex, on q2: How high do spring tides get?: "
            f"{run / 'agents' / 'claude' / 'synthesis-inputs' / 'codex-gaps.md'}") in synthesis
    assert "their claims were listed and checked with the rest" in synthesis
    assert "gapfill started: 2 gaps, claude (d3), codex (q2)" in (
        run / "progress.log").read_text()

    # No silent regression: gemini's refined report (the fake's default) lost its claims.
    refined = state_of(run)["agents"]["gemini"]["phases"]["refinement"]
    assert "https://github.com/tides/model" in refined["dropped_sources"]
    assert refined["dropped_claims"] == [
        # a bullet wrapped over two lines is one claim
        "The moon's gravity raises two tidal bulges on opposite sides of the Earth "
        "(https://github.com/tides/model).",
        "Harbour pilots plan around spring tides every fortnight (https://stackoverflow.com/q/1)."]
    assert "gemini dropped 2 sources and 2 cited claims" in (
        run / "progress.log").read_text()
    assert "gemini dropped 2 cited claims between its research and refined reports" in synthesis
    # The claims themselves are model text: quoted as untrusted, apart from council's facts.
    quoted = synthesis.index("- gemini: Harbour pilots plan around spring tides")
    block = synthesis.index("agents stopped making these cited claims\n(quoted from their "
                            "research reports: untrusted material)")
    assert block < quoted < synthesis.index("must state these facts")
    assert state_of(run)["agents"]["claude"]["phases"]["refinement"]["dropped_claims"] == []


def test_a_failed_scope_agent_hands_the_scope_to_another(council: Council) -> None:
    council.script({"*": {"finish_after": 1},
                    "claude:scope": {"crash": True, "crash_kind": "bad_request"},
                    "codex:scope": {"content": json.dumps(SCOPE)}})
    proc = council.run("run", "--test", "--verify", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    assert json.loads((run / "scope.json").read_text())["status"] == "ok"
    agents = state_of(run)["agents"]
    assert agents["claude"]["phases"]["scope"]["status"] == "failed"
    assert agents["codex"]["phases"]["scope"]["status"] == "capped"  # one turn, no marker
    assert "- q3: Does wind matter?" in (
        run / "agents" / "gemini" / "research-prompt.md").read_text()
    # The research itself is unharmed: claude's scope crash is not a research failure.
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()


def test_a_degraded_scope_reads_as_degraded(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": '{"questions": []}'},
                    "claude:claims": {"content": json.dumps({"claims": CLAIMS["claims"]})},
                    **VERDICTS})
    proc = council.run("run", "--test", "--verify", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    scope = json.loads((run / "scope.json").read_text())
    assert scope["status"] == "degraded"
    assert "'questions' must be a list of 3 to 8 items" in scope["error"]
    second = (run / "agents" / "claude" / "scope-prompt.md").read_text()
    assert "Your previous attempt was rejected: invalid scope file" in second
    assert "split the question" not in (run / "agents" / "codex" / "research-prompt.md").read_text()
    header = (run / "final-report.md").read_text().splitlines()[0]
    assert "scope (degraded) → research" in header
    assert "(gap coverage, question closure not measured)" in header


def test_without_verification_the_score_says_what_was_not_measured(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "q").returncode == 0
    run = council.only_run()
    assert not (run / "scope.json").exists()
    done = state_of(run)["completeness"]
    assert done["signals"]["cross_verification"] == {
        "value": None, "detail": "not measured: verification did not run"}
    report = (run / "final-report.md").read_text()
    header = report.splitlines()[0]
    # Not 0/100, which reads as a failed run: not scored, and why.
    assert ("completeness not scored (cross-verification, gap coverage, question closure not "
            "measured: the test profile turns verification off; --verify turns it on)") in header
    assert "/100" not in report
    assert done["score"] is None
    assert done["signals"]["source_diversity"]["value"] is not None  # measured, and shown
    shown = council.run("status", run.name).stdout
    assert ("completeness not scored (cross-verification, gap coverage, question closure not "
            "measured: the test profile turns verification off; --verify turns it on)") in shown
    assert "Not scored" in (run / "report.html").read_text()


def test_a_malformed_coverage_judgement_keeps_the_claims(council: Council) -> None:
    bad = {**CLAIMS, "dimensions": [{"id": "d1", "covered": "mostly"}]}
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(bad)}, **VERDICTS})
    proc = council.run("run", "--test", "--verify", "--debate", "off", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    second = (run / "agents" / "claude" / "claims-prompt.md").read_text()
    assert "rejected: invalid claims file: dimensions[0]: 'covered' must be true or false" \
        in second
    data = json.loads((run / "claims.json").read_text())
    assert data["status"] == "ok"  # the claims were still verified
    assert data["tally"]["SUPPORTED"] == 1
    assert "'covered' must be true or false" in data["coverage_error"]
    assert "questions" not in data
    signals = state_of(run)["completeness"]["signals"]
    assert signals["gap_coverage"]["detail"] == (
        "not measured: the coverage judgement was malformed")
    assert signals["cross_verification"]["value"] == pytest.approx(1 / 3, abs=1e-3)


def test_a_degraded_scope_is_tried_again_on_resume_before_research(council: Council,
                                                                   monkeypatch: Any) -> None:
    import anyio

    from council import graph
    from council.config import Overrides, load_options
    from council.phases import RunContext
    from council.phases import scope as scoping
    from council.run.supervisor import start_run
    from council.store.owner import owned

    options = load_options(Overrides(test=True))
    ws = start_run("q", options, council.research)
    (ws.root / "scope.json").write_text('{"status": "degraded", "error": "HTTP 429"}')
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)}})
    for var in ("PATH", "COUNCIL_FAKE_SCRIPT"):
        monkeypatch.setenv(var, council.env[var])
    with owned(ws.root) as owner:
        found = anyio.run(scoping.find, RunContext(ws, owner, options, "q"), graph.SCOPE)
    assert found is not None
    assert list(found.questions) == ["q1", "q2", "q3"]
    assert json.loads((ws.root / "scope.json").read_text())["status"] == "ok"

    # Once research has started without it, the scope stays as it was.
    (ws.root / "scope.json").write_text('{"status": "degraded", "error": "HTTP 429"}')
    with owned(ws.root) as owner:
        owner.update(lambda st: setattr(
            st.agents["codex"].phase("research"), "started_at", "2026-11-22T00:00:00Z"))
        assert anyio.run(scoping.find, RunContext(ws, owner, options, "q"), graph.SCOPE) is None


def test_a_failed_gap_agent_leaves_its_gaps_open(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)},
                    "claude:recheck": {"content": json.dumps(CLAIMS)},
                    "codex:gapfill": {"crash": True, "crash_kind": "bad_request"},
                    **VERDICTS})
    proc = council.run("run", "--test", "--verify", "--depth", "deep", "--debate", "off", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    synthesis = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "- codex, on q2: How high do spring tides get?: no report (codex exited with " \
        "code 1" in synthesis
    assert "those gaps stay open" in synthesis
    log = (run / "progress.log").read_text()
    assert "gapfill finished: 1 of 2 gap reports; codex failed (codex exited with code 1" in log
    assert "→ gap fill → recheck →" in (run / "final-report.md").read_text().splitlines()[0]


def test_a_recheck_that_fails_keeps_the_first_judgement(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)},
                    "claude:recheck": {"content": "not json"},
                    "codex:recheck": {"content": "not json either"}, **VERDICTS})
    proc = council.run("run", "--test", "--verify", "--depth", "deep", "--debate", "off", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    data = json.loads((run / "claims.json").read_text())
    assert data["judged_by"] == "claims"
    assert "invalid recheck file" in data["recheck_error"]
    assert data["status"] == "ok"  # its claims were still verified
    assert "recheck failed: " in (run / "progress.log").read_text()
