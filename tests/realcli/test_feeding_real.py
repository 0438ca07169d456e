"""The one rule for which reports feed the phases after the research (graph.feeding), with the
real claude, codex and gemini, offline: a run whose budget is reached while the refinement
runs is killed with codex and gemini refined and claude still refining; `council resume`
skips the interrupted refinement (the budget is spent), and the synthesis's prompt, the final
report's header and Completeness section, `council status --json` and the host's hand-off
all name the same reports: the three research reports, none of the two refined ones.

On c2cd4ea (before the one rule) this failed: the synthesis chose its reports by
`steps` (refinement not done: the research reports, 3 of 3 in the header), while the score
and the hand-off took the refined reports wherever some seat had one (report.contributions:
codex and gemini), so the Completeness section said "cap 0.9 (1 of 3 agents failed)" beside
a header of "3 of 3 agents contributed", and the hand-off named codex-refined.md and
gemini-refined.md. tests/test_feeding.py is the same case with fakes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml
from conftest import wait_for

from council.hosts import handover
from council.store.workspace import Workspace

from .helpers import end, kill_supervisor, leftovers, resume_killed
from .server import REPORT_RE, ScriptedServer, anthropic_conversation
from .test_council import state, the_run
from .test_graph_real import start

pytestmark = pytest.mark.realcli

SEATS = ("claude", "codex", "gemini")
RESEARCH = {f"{seat}-report.md" for seat in SEATS}
# The server books 150 tokens a request, a seat's research (two turns) 600: the research
# spends 1800 and stays under the budget; the first refinement turn booked (300, codex's or
# gemini's) passes it, while claude's refinement is still waiting for its first answer.
MAX_TOKENS = 2000
# Who answers slowly: codex and gemini a little (claude's research ends well before theirs),
# claude not at all until its research has ended, then (its refinement) long enough to be
# killed in it. The refined reports end in one turn, the turn the budget lets them finish.
SLOW = {"delay": 0.5}
ONE_TURN = {"finish_after": 1}
SCRIPT: dict[str, Any] = {
    "anthropic": {},
    "openai": {**SLOW, "reports": {"codex-refined.md": ONE_TURN}},
    "gemini": {**SLOW, "reports": {"gemini-refined.md": ONE_TURN}},
}
REPORT_NAME = re.compile(r"\b(?:claude|codex|gemini)-(?:report|refined)\.md\b")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """The scripted server, logging each request's body: the synthesis's prompt is read there."""
    with ScriptedServer(SCRIPT, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


def current(tmp_path: Path) -> dict[str, Any] | None:
    """state.yaml as the supervisor left it, or None while it is not there or half written."""
    try:
        return state(the_run(tmp_path))
    except (OSError, ValueError, TypeError, yaml.YAMLError):
        return None


def status_of(st: dict[str, Any] | None, seat: str, phase: str) -> str | None:
    if st is None:
        return None
    found = (st["agents"][seat]["phases"].get(phase) or {}).get("status")
    return None if found is None else str(found)


def named(text: str) -> set[str]:
    """The agents' report files a text names."""
    return set(REPORT_NAME.findall(text))


def synthesis_prompts(server: ScriptedServer, since: float) -> list[str]:
    """The prompt of each request of the synthesis (its report file is final-report.md) made
    after `since`."""
    out = []
    for record in server.records():
        if record["time"] < since or \
                not str(record.get("report_path") or "").endswith("final-report.md"):
            continue
        assert record["api"] == "anthropic", record["api"]  # claude is the synthesiser
        texts = anthropic_conversation(record["body"]).texts
        out.append(next(t for t in texts if REPORT_RE.search(t)))
    return out


def test_a_resume_whose_budget_skipped_the_interrupted_refinement_names_one_set_of_reports(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = start(cli_env, tmp_path, "run", "--test", "--max-tokens", str(MAX_TOKENS), "q")
    tree: list[psutil.Process] = []
    try:
        wait_for(lambda: status_of(current(tmp_path), "claude", "research") == "complete",
                 timeout=90)
        # Claude's research has ended (its process with it); the refinement waits for codex's
        # and gemini's: claude's next request is its refinement's, held past the kill.
        server.script = {**SCRIPT, "anthropic": {"delay": 60}}

        def two_refined_one_refining() -> bool:
            st = current(tmp_path)
            return st is not None and bool(st.get("budget_exhausted")) and \
                status_of(st, "codex", "refinement") == "complete" and \
                status_of(st, "gemini", "refinement") == "complete" and \
                status_of(st, "claude", "refinement") == "running"

        wait_for(two_refined_one_refining, timeout=90)
        run = the_run(tmp_path)
        killed = state(run)
        assert killed["steps"]["research"] == "done"
        assert "refinement" not in killed["steps"], killed["steps"]  # interrupted, not ended
        assert all(status_of(killed, seat, "research") == "complete" for seat in SEATS)
        tree = kill_supervisor(proc)
        server.script = {}  # the synthesis answers at once
        resumed_at = time.time()
        # Nothing of the killed run's agents may be left: claude's held refinement included.
        resumed = resume_killed(run, cli_env, timeout=90)
    finally:
        end([proc, *tree])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = state(run)
    assert after["phase"] == "done"
    assert after["steps"]["refinement"].startswith("skipped: "), after["steps"]
    assert "budget" in after["steps"]["refinement"]
    assert after["steps"]["synthesis"] == "done"
    # The two refined reports are there, published: an older rule would have built on them.
    assert (run / "codex-refined.md").is_file()
    assert (run / "gemini-refined.md").is_file()
    assert status_of(after, "codex", "refinement") == "complete"
    assert status_of(after, "gemini", "refinement") == "complete"
    assert status_of(after, "claude", "refinement") != "complete"
    assert not (run / "claude-refined.md").exists()

    # The synthesis was given the three research reports, and only those.
    prompts = synthesis_prompts(server, since=resumed_at)
    assert prompts, "the resume asked for no synthesis"
    for prompt in prompts:
        assert named(prompt) == RESEARCH, named(prompt)
        assert "3 of 3 agents contributed to this report (claude, codex, gemini)" in prompt
    ws = Workspace(run)
    given = {p.name for p in ws.peers_dir("claude", "synthesis").iterdir()}
    assert {n for n in given if REPORT_NAME.fullmatch(n)} == RESEARCH, given

    # The final report's header and Completeness section count the same three.
    final = (run / "final-report.md").read_text()
    header = final.split("\n", 1)[0]
    assert "3 of 3 agents contributed (claude, codex, gemini)" in header, header
    assert "(refinement skipped)" in header, header
    assert "cut short by the budget" in header, header
    assert "(all 3 agents contributed)" in final.split("## Completeness", 1)[1], final
    assert after["completeness"]["cap_reason"] == "all 3 agents contributed"
    shown = subprocess.run(
        [sys.executable, "-m", "council", "status", "--json", run.name],
        env={**cli_env, "COUNCIL_RESEARCH_DIR": str(run.parent)}, cwd=tmp_path,
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert shown.returncode == 0, shown.stderr[-2000:]
    status = json.loads(shown.stdout)
    assert status["phase"] == "done"
    assert (status["completeness"]["cap"], status["completeness"]["cap_reason"]) == \
        (1.0, "all 3 agents contributed")

    # The host's hand-off, asked of the finished run, names the same three reports.
    text = handover.handover(ws)
    assert named(text) == RESEARCH, named(text)
    for seat in SEATS:
        assert str(ws.published_output(seat, "research")) in text
    assert leftovers(run) == []
