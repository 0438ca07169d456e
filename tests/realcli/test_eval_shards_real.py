"""`council eval … --shard I/N` with the real, pinned CLIs, offline against the scripted model
server: two workers started at once share one log folder (2 questions × single:claude and
single:codex, judged by the real gemini), then the same command without --shard closes the
set without a single research request."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from council.evaluation import shards

from .server import ScriptedServer
from .test_eval_real import JUDGE, judged

pytestmark = pytest.mark.realcli

QUESTIONS = [{"id": "tides", "question": "How do tides work?",
              "criteria": ["Explains the Moon's role", "Names spring and neap tides"]},
             {"id": "sky", "question": "Why is the sky blue?",
              "criteria": ["Names Rayleigh scattering", "Explains the wavelength dependence"]}]
RESEARCH_APIS = ("anthropic", "openai")  # single:claude and single:codex's agents


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer({"gemini": JUDGE}, tmp_path / "server-log.jsonl",
                        log_bodies=True) as srv:
        yield srv


@pytest.fixture
def data_home() -> Iterator[Path]:
    """A worker binds Inspect's ACP socket in Inspect's data folder, under HOME: the test's
    HOME is too deep for a socket path (108 bytes), a user's is not."""
    with tempfile.TemporaryDirectory(prefix="isd-", dir="/tmp") as folder:
        yield Path(folder)


def research_requests(server: ScriptedServer) -> int:
    return sum(len(server.records(api)) for api in RESEARCH_APIS)


@pytest.mark.timeout(600)
def test_two_real_workers_share_the_set_and_the_close_sends_no_research_request(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path,
        data_home: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    log_dir = tmp_path / "eval"
    cli_env = {**cli_env, "XDG_DATA_HOME": str(data_home)}
    args = [sys.executable, "-m", "council", "eval", str(questions), "--config",
            "single:claude", "--config", "single:codex", "--judge", "cli:gemini",
            "--log-dir", str(log_dir), "--test", "--max-runs", "2"]
    workers = [subprocess.Popen([*args, "--shard", f"{i}/2"], env=cli_env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL) for i in (1, 2)]
    outputs = [w.communicate(timeout=420) for w in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, out[-4000:] + err[-4000:]

    found: dict[tuple[str, str], int] = {}
    for header in shards.newest_logs(log_dir).values():
        log = read_eval_log(header.location)
        assert log.status == "success"
        for sample in log.samples or []:
            assert sample.scores is not None
            assert sample.scores["rubric"].value == 0.5  # c1 met, c2 not
            key = (str(log.eval.task_args["configuration"]), str(sample.id))
            found[key] = found.get(key, 0) + 1
    assert found == {(c, q["id"]): 1 for c in ("single:claude", "single:codex")
                     for q in QUESTIONS}
    assert len(list(log_dir.glob("runs/*/*/research/2*"))) == 4
    assert len(judged(server)) == 8  # each sample judged once: rubric and citations

    before, judgements = research_requests(server), len(judged(server))
    assert before > 0
    closed = subprocess.run(args, env=cli_env, cwd=tmp_path, capture_output=True, text=True,
                            timeout=180, stdin=subprocess.DEVNULL)
    assert closed.returncode == 0, closed.stdout[-4000:] + closed.stderr[-4000:]
    assert research_requests(server) == before, "the close sent a research request"
    assert len(judged(server)) == judgements
    summary = (log_dir / "summary.md").read_text()
    assert "| single:claude | 2 | 50.0" in summary
    assert "| single:codex | 2 | 50.0" in summary
