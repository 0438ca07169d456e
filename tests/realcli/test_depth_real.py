"""issue 34's acceptance: the three depths with the real CLIs against the scripted model,
whose loops end at turn 2 (the test profile). The server counts every request; each run has
its own project folder, and its requests are those the server logged while it ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from council import graph
from council.config import Overrides, load_options
from council.evidence.estimate import estimate

from .server import ScriptedServer
from .test_council import council, state

pytestmark = pytest.mark.realcli

API_CLI = {"anthropic": "claude", "openai": "codex", "gemini": "gemini"}


def requests(server: ScriptedServer) -> int:
    """The model requests the CLIs have sent so far (side calls included)."""
    return sum(1 for r in server.records() if r.get("api") in API_CLI
               and r.get("method") == "POST" and "bytes" in r)


def run_at(cli_env: dict[str, str], server: ScriptedServer, folder: Path,
           *args: str) -> tuple[int, Path, dict[str, Any]]:
    """One `council run --test ARGS q` in its own folder: (requests it sent, its run folder,
    its state)."""
    folder.mkdir()
    before = requests(server)
    proc = council(cli_env, folder, *args, "How do tides work?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = [p for p in (folder / "research").iterdir() if p.name[0].isdigit()]
    return requests(server) - before, run, state(run)


def header(run: Path) -> str:
    return (run / "final-report.md").read_text().splitlines()[0]


def planned_requests(depth: str, **more: Any) -> int:
    return estimate(load_options(Overrides(test=True, depth=depth, **more))).requests


def test_quick_sends_at_most_twice_one_agents_requests(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    one, _, _ = run_at(cli_env, server, tmp_path / "one", "--agents", "claude",
                       "--no-verify", "--debate", "off")
    quick, run, st = run_at(cli_env, server, tmp_path / "quick", "--depth", "quick",
                            "--verify")
    assert quick <= 2 * one, (quick, one)
    assert set(st["agents"]) == {"claude", "codex", "gemini"}  # every seat researched
    assert st["steps"]["refinement"] == "skipped: depth quick"
    assert st["steps"]["verification"] == "skipped: depth quick"
    assert st["steps"]["research"] == st["steps"]["synthesis"] == graph.DONE
    top = header(run)
    # the header lists what ran: a phase the depth leaves out is not "skipped"
    assert "· depth quick: research → synthesis ·" in top
    assert "skipped" not in top
    assert "claims not checked: depth quick runs no check" in top
    assert 0.5 <= planned_requests("quick", verify=True) / quick <= 2, quick


def test_standard_checks_claims_across_vendors_in_at_most_65_percent_of_deep(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    deep, deep_run, deep_st = run_at(cli_env, server, tmp_path / "deep", "--depth", "deep",
                                     "--verify")
    # deep runs every phase of the graph
    assert deep_st["steps"] == dict.fromkeys(graph.NAMES, graph.DONE), deep_st["steps"]
    assert "· depth deep: scope → research ∥ dissent → refinement →" in header(deep_run)
    standard, run, st = run_at(cli_env, server, tmp_path / "standard", "--verify")
    assert standard <= 0.65 * deep, (standard, deep)
    assert st["options"]["depth"] == "standard"  # the default
    assert {st["steps"][p] for p in ("claims", "verification")} == {graph.DONE}
    assert st["steps"]["antagonist"] == "skipped: depth standard"
    clis = {seat["name"]: seat["cli"] for seat in st["options"]["seats"]}
    claims = json.loads((run / "claims.json").read_text())["claims"]
    assert claims
    for claim in claims:  # checked by an agent of another vendor than its author's
        assert claim["verifier"] is not None
        assert clis[claim["verifier"]] != clis[claim["agent"]], claim
    top = header(run)
    assert "· depth standard: scope → research → refinement → claims → verification → " \
           "synthesis ·" in top
    assert "· claims: " in top
    for depth, sent in (("deep", deep), ("standard", standard)):
        assert 0.5 <= planned_requests(depth, verify=True) / sent <= 2, (depth, sent)
