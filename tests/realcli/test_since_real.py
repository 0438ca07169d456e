"""`council run --since latest --exit-code` with the real claude and codex, offline against
the scripted model (issue 35): a second run where the verifiers give one claim another verdict
says exactly that claim flipped and exits 1; a third where nothing changed prints one line and
exits 0; the synthesis patches the earlier final report (Read and Edit, no Write), so the
paragraphs it did not touch are byte-identical. With a page server on loopback the seats cite
(allowed by the test user's own `sources: {allow_private: true}`), a --since run after the
server changed one page and lost another names the first as changed and the second as gone,
beside the claims that cite them, and does not download an unchanged page again (issue 44)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pageserver import Page, PageServer, serving

from council.evidence import fetch
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


@pytest.fixture
def web() -> Iterator[PageServer]:
    with serving() as pages:
        yield pages


def html(text: str) -> str:
    return f"<html><body><main><p>{text}</p></main></body></html>"


def test_since_names_the_cited_page_that_changed_and_the_one_that_is_gone(
        cli_env: dict[str, str], server: ScriptedServer, web: PageServer,
        tmp_path: Path) -> None:
    # the seats cite {base}/{cli}/{turn}; each claim {base}/{agent}/1 and {base}/shared
    for agent in ("claude", "codex"):
        web.add(f"/{agent}/1", html(f"Scripted claim, made by {agent}: the moon pulls."))
        web.add(f"/{agent}/2", html(f"More on tides from {agent}."))
    web.add("/shared", Page(html("Tide tables for every scripted claim.").encode(),
                            headers={"ETag": '"shared-1"'}))
    own = Path(cli_env["HOME"]) / ".config" / "council" / "config.yaml"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("sources: {allow_private: true}\n")
    env = {k: v for k, v in cli_env.items() if k != fetch.OFFLINE_ENV}  # about fetching
    given = {"c1": "SUPPORTED", "c2": "SUPPORTED"}
    server.script = {api: {"cite": web.base, "verdicts": given}
                     for api in ("anthropic", "openai")}
    first = council(env, tmp_path, TOPIC)
    assert first.returncode == 0, first.stderr[-3000:]
    (one,) = runs(tmp_path)
    assert {"/claude/1", "/codex/1", "/shared"} <= set(web.asked())
    assert all(r.ok for r in fetch.load_index(one / "evidence"))

    web.requests.clear()
    web.add("/claude/1", html("The sun, not the moon, pulls the scripted tides."))
    web.add("/codex/1", Page(html("Not found").encode(), status=404))
    second = council(env, tmp_path, "--since", "latest", "--exit-code")
    assert second.returncode == 1, second.stderr[-3000:]  # a cited page changed
    (two,) = set(runs(tmp_path)) - {one}

    changed_url, gone_url = f"{web.base}/claude/1", f"{web.base}/codex/1"
    found = json.loads((two / "changes.json").read_text())
    assert found["changed"] is True
    pages = found["sources"]
    assert [p["url"] for p in pages["changed"]] == [changed_url]
    assert [c["id"] for c in pages["changed"][0]["claims"]] == ["c1"]
    assert [(p["url"], p["status"]) for p in pages["disappeared"]] == [(gone_url, 404)]
    assert [c["id"] for c in pages["disappeared"][0]["claims"]] == ["c2"]
    assert pages["unreachable"] == []
    assert pages["unchanged"] >= 1  # /shared at least
    (headline,) = [line for line in second.stdout.splitlines()
                   if line.startswith(f"changed since {one.name}")]
    assert f"1 changed ({changed_url})" in headline
    assert f"1 gone ({gone_url}, HTTP 404)" in headline
    md = (two / "changes.md").read_text()
    assert f"- {changed_url}\n  - c1 [" in md
    assert f"- {gone_url} (HTTP 404)\n  - c2 [" in md

    # each page asked for once; the unchanged /shared conditionally, answered 304, and its
    # earlier text kept in this run's store
    asked = [path for path, _ in web.requests]
    assert sorted(set(asked)) == sorted(asked)
    shared = next(headers for path, headers in web.requests if path == "/shared")
    assert shared.get("if-none-match") == '"shared-1"'
    records = {r.url: r for r in fetch.load_index(two / "evidence")}
    kept = records[f"{web.base}/shared"]
    assert kept.ok
    assert "Tide tables" in (fetch.load_text(two / "evidence", kept) or "")
    # the verifiers judged c1 against the page as it is now
    told = "".join((two / "agents" / seat / "verification-prompt.md").read_text()
                   for seat in ("claude", "codex"))
    assert "The sun, not the moon" in told
