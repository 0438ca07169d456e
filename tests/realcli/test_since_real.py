"""`council run --since latest --exit-code` with the real claude and codex, offline against
the scripted model (issue 35): a second run where the verifiers give one claim another verdict
says exactly that claim flipped and exits 1; a third where nothing changed prints one line and
exits 0; the synthesis patches the earlier final report (Read and Edit, no Write), so the
paragraphs it did not touch are byte-identical."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from council.evidence.finalreport import body_of

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

AGENTS = ("--agents", "claude,codex", "--verify", "--depth", "standard")
TOPIC = "Do tides follow the moon?"


def council(env: dict[str, str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", *AGENTS, *args],
        env={**env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=400, stdin=subprocess.DEVNULL)


def verdicts(given: dict[str, str]) -> dict[str, Any]:
    return {api: {"verdicts": given} for api in ("anthropic", "openai", "gemini")}


def runs(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit())


def findings(report: str) -> str:
    """The synthesis's own text: after council's stamp and "What changed", before the
    Completeness and Sources council rebuilds."""
    return body_of(report).split("\n## Completeness", 1)[0]


def test_since_says_what_flipped_and_is_silent_when_nothing_did(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = verdicts({"c1": "SUPPORTED", "c2": "SUPPORTED"})
    first = council(cli_env, tmp_path, TOPIC)
    assert first.returncode == 0, first.stderr[-3000:]
    (one,) = runs(tmp_path)
    claims_then = json.loads((one / "claims.json").read_text())["claims"]
    assert [c["verdict"] for c in claims_then] == ["SUPPORTED", "SUPPORTED"]

    server.script = verdicts({"c1": "SUPPORTED", "c2": "CONTRADICTED"})
    second = council(cli_env, tmp_path, "--since", "latest", "--exit-code")
    assert second.returncode == 1, second.stderr[-3000:]  # changed, with --exit-code
    (two,) = set(runs(tmp_path)) - {one}  # ids made in one second sort at random
    changes = json.loads((two / "changes.json").read_text())
    assert changes["since"] == one.name
    assert changes["changed"] is True
    assert [(f["claim"], f["before"], f["after"]) for f in changes["claims"]["flipped"]] == \
        [(claims_then[1]["claim"], "SUPPORTED", "CONTRADICTED")]
    assert changes["claims"]["new"] == []
    assert changes["claims"]["retracted"] == []
    assert changes["claims"]["unchanged"] == 1
    assert f"changed since {one.name}: 1 flipped" in second.stdout
    assert (two / "state.yaml").read_text().count(TOPIC) >= 1  # the earlier run's topic
    # The agents were told the earlier claims, with their verdicts and ids.
    told = (two / "agents" / "codex" / "research-prompt.md").read_text()
    assert f"council run {one.name}" in told
    assert f"c2 [SUPPORTED]: {claims_then[1]['claim']}" in told

    report_then = (one / "final-report.md").read_text()
    report_now = (two / "final-report.md").read_text()
    assert report_now.split("\n\n", 1)[1].startswith(f"## What changed since {one.name}")
    # Patched, not rewritten: the only change to the synthesis's text is its one edit.
    edited = next(line for line in findings(report_then).splitlines()
                  if line.startswith("Finding "))
    assert findings(report_now) == findings(report_then).replace(
        edited, edited + " Checked again.", 1)
    synthesis = [r for r in server.records("anthropic")
                 if str(r.get("report_path") or "").startswith(str(two))
                 and str(r.get("report_path")).endswith("final-report.md")]
    answers = [str(r.get("answer")) for r in synthesis]
    assert any(a.startswith("tool Edit") for a in answers), answers
    assert not any(a.startswith("tool Write") for a in answers), answers  # Write not offered

    third = council(cli_env, tmp_path, "--since", "latest", "--exit-code")
    assert third.returncode == 0, third.stderr[-3000:]
    (three,) = set(runs(tmp_path)) - {one, two}
    said = third.stdout.strip().splitlines()
    # The headline, then where the report is (issue 43: an unchanged run names its report).
    assert f"no change since {two.name}: 2 claims verified again, 0 flipped" in said, said
    assert any(line.startswith("final report: ") for line in said), said
    quiet = json.loads((three / "changes.json").read_text())
    assert quiet["changed"] is False
    assert quiet["claims"]["flipped"] == []


def test_since_refuses_a_run_without_a_report_and_spawns_nothing(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = council(cli_env, tmp_path, "--since", "20260101-000000-abcdef")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "--since 20260101-000000-abcdef" in \
        proc.stderr
    assert server.records() == []
