"""issue 35's acceptance for `council ask`, with the real CLIs against the scripted model:
the answer cites only the run's own sources and names its claims with their verdicts; a
question the evidence cannot answer gets an answer that says so; an ask stays within its
request bound; an unknown id is one line, exit 2, and no request."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from council import graph

from .server import ScriptedServer
from .test_council import council, the_run
from .test_depth_real import requests

pytestmark = pytest.mark.realcli

# A turn of the scripted model is two requests (the write, then the text that ends the turn);
# the ask's seat gets graph.ASK.cap turns at most.
BOUND = 2 * (graph.ASK.cap or 1)


def ask(env: dict[str, str], folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "council", "ask", *args],
        env={**env, "COUNCIL_RESEARCH_DIR": str(folder / "research")}, cwd=folder,
        capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)


def test_an_ask_answers_from_the_runs_evidence_within_its_bound(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = council(cli_env, tmp_path, "--verify", "--agents", "claude,codex",
                   "--synthesizer", "claude", "How do tides work?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = the_run(tmp_path)
    claims = {c["id"]: c["verdict"] for c in
              json.loads((run / "claims.json").read_text())["claims"]}
    assert claims

    before = requests(server)
    proc = ask(cli_env, tmp_path, "Which claim is best supported?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sent = requests(server) - before
    assert 0 < sent <= BOUND, sent
    answer = Path(proc.stdout.strip()).read_text()
    cited = re.findall(r"https://\S+?(?=[\s.)]*$|[\s)])", answer.split("## Checked by council")[0],
                       re.M)
    run_sources = {s["url"] for s in json.loads((run / "sources.json").read_text())["sources"]}
    assert cited
    assert set(cited) <= run_sources, (cited, run_sources)
    assert "Not among the run's sources" not in answer
    named = re.search(r"Claims of the run it names: (c\d+) \((\w+)\)", answer)
    assert named is not None, answer
    assert claims[named.group(1)] == named.group(2)
    assert "does not answer" not in answer

    # A question the evidence cannot answer: the scripted model says so, and council's
    # check finds nothing it rests on.
    server.script = {"anthropic": {"write": "The run's evidence does not answer this: no "
                                            "report covers tides on Mars."}}
    proc = ask(cli_env, tmp_path, "What are the tides like on Mars?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    answer = Path(proc.stdout.strip()).read_text()
    assert "The run's evidence does not answer this" in answer
    assert "It names no claim of the run." in answer
    assert "- Sources of the run it cites: 0." in answer


def test_an_unknown_id_is_one_line_exit_2_and_no_request(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = council(cli_env, tmp_path, "--agents", "claude", "How do tides work?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    before = requests(server)
    proc = ask(cli_env, tmp_path, "20990101-000000-abcdef", "Why?")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("council: error: no run 20990101-000000-abcdef in ")
    assert requests(server) == before
