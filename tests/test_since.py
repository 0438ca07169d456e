"""`council run --since` end to end with the fake CLIs (tests/fakes): the verifiers' verdicts
are scripted, so a second run flips one claim and a third changes nothing (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Council

from council import graph
from council.config import load_options
from council.evidence.finalreport import body_of
from council.options import Overrides
from council.run.prepare import plan

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
    assert changes["sources"]["new"] == []
    assert changes["sources"]["gone"] == []
    assert changes["sources"]["changed"] == []  # offline: no store to fetch again
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
    (three,) = set(runs(council)) - {one, two}
    said = third.stdout.strip().splitlines()
    assert f"no change since {two.name}: 2 claims verified again, 0 flipped" in said
    # The report it wrote is named, as every run's is (issue 43).
    assert f"final report: {three / 'final-report.md'}" in said


def test_exit_code_without_since_is_refused(council: Council) -> None:
    proc = council.run("run", "--test", "--exit-code", "q")
    assert proc.returncode == 2
    assert "--exit-code needs --since" in proc.stderr
    assert not council.research.exists() or runs(council) == []


def quiet_since(council: Council, *extra: str) -> Any:
    """A watched question's re-run, as docs/watch.md schedules it."""
    return council.run("run", "--test", "--agents", "claude,codex", *extra,
                       "--since", "latest", "--exit-code", "--quiet")


def test_quick_since_verifies_again_and_prints_one_line(council: Council) -> None:
    """--since forces the claims and verification at depth quick and in the test profile
    (verification off there): the earlier claims are verified again, not read as retracted;
    an unchanged --quiet run prints its one line, then where its report is, as any run."""
    script(council, "SUPPORTED")
    assert council.run(*RUN, "Do tides follow the moon?").returncode == 0
    (one,) = runs(council)
    again = quiet_since(council, "--depth", "quick")
    assert again.returncode == 0, again.stderr
    (two,) = set(runs(council)) - {one}
    assert again.stdout.splitlines()[:2] == \
        [f"no change since {one.name}: 2 claims verified again, 0 flipped",
         f"final report: {two / 'final-report.md'}"]
    changes = json.loads((two / "changes.json").read_text())
    assert changes["claims"]["retracted"] == []
    assert changes["compared"] is True
    assert (two / "agents" / "claude" / "claims-prompt.md").is_file()


def test_since_a_run_without_claims_lists_them_as_new(council: Council) -> None:
    """An earlier run of the test profile checked no claims: the --since run lists and
    verifies them (so they are new), rather than saying "0 claims verified again"."""
    script(council, "SUPPORTED")
    first = council.run("run", "--test", "--agents", "claude,codex", "Do tides follow the moon?")
    assert first.returncode == 0, first.stderr
    (one,) = runs(council)
    assert not (one / "claims.json").exists()
    again = quiet_since(council)
    assert again.returncode == 1, again.stderr
    (two,) = set(runs(council)) - {one}
    changes = json.loads((two / "changes.json").read_text())
    assert changes["claims"]["new"] == [c["claim"] for c in CLAIMS["claims"]]


def test_since_whose_claims_judgement_fails_cannot_compare(council: Council) -> None:
    """A claims judgement that lists nothing has not retracted the earlier claims: the
    comparison is recorded as not made, and --exit-code exits 3, neither 0 nor 1."""
    script(council, "SUPPORTED")
    assert council.run(*RUN, "Do tides follow the moon?").returncode == 0
    (one,) = runs(council)
    council.script({"*": {"finish_after": 1}, "claude:claims": {"content": "no JSON here"}})
    again = quiet_since(council)
    assert again.returncode == 3, (again.stdout, again.stderr)
    assert again.stdout == ""
    assert f"council: could not compare with {one.name}: this run's claims judgement " \
        "listed no claims" in again.stderr
    (two,) = set(runs(council)) - {one}
    changes = json.loads((two / "changes.json").read_text())
    assert changes["compared"] is False
    assert changes["changed"] is None
    assert changes["claims"]["retracted"] == []


def test_since_with_no_verify_is_refused(council: Council) -> None:
    script(council, "SUPPORTED")
    assert council.run(*RUN, "Do tides follow the moon?").returncode == 0
    before = runs(council)
    proc = council.run("run", "--test", "--since", "latest", "--no-verify")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "council: error: --since with --no-verify: a --since run verifies the earlier claims "
        "again to say what changed; drop --no-verify"]
    assert runs(council) == before
    assert proc.stdout == ""


def test_since_plans_the_checks_at_depth_quick_in_the_test_profile() -> None:
    options = load_options(Overrides(test=True, agents="claude,codex", depth="quick",
                                     since="20260101-000000-abcdef"))
    assert {graph.CLAIMS.name, graph.VERIFICATION.name} <= set(graph.planned(options))
    assert graph.plan(options)[0].startswith(
        "depth quick (--depth quick|standard|deep): claims checked by agents of other vendors "
        "(--since checks them at any depth and profile)")


def test_a_configs_verify_false_is_named_in_the_plan_of_a_since_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43, item 15: a config file's `verify: false` does not stop a --since run from
    verifying (the earlier claims are what changed is judged on); on a0243e7 that was
    silent, now the plan says why it verifies."""
    config = tmp_path / "council.yaml"
    config.write_text("verify: false\n")
    options = load_options(Overrides(config=str(config), agents="claude,codex",
                                     since="20260101-000000-abcdef"))
    assert options.verify is False
    assert graph.VERIFICATION.name in graph.planned(options)
    shown = "\n".join(plan(options))
    assert ("your config sets verify: false, but a --since run verifies anyway: what "
            "changed is judged on the claims") in shown
    plain = load_options(Overrides(config=str(config), agents="claude,codex"))
    assert "verifies anyway" not in "\n".join(plan(plain))
