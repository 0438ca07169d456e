"""`council eval` with the real, pinned claude, codex and gemini, offline against the scripted
model server: one question, `single:claude` against the whole `council`, judged by the real
gemini CLI (`cli:gemini`), whose scripted answers the server gives to the judge's prompts."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessageUser, GenerateConfig

from council.evaluation import judging
from council.evaluation.judge import CliJudge
from council.evaluation.questions import Criterion

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

QUESTION = {"id": "tides", "question": "How do tides work?",
            "criteria": ["Explains the Moon's role", "Names spring and neap tides"]}
RUBRIC = json.dumps({"criteria": [{"id": "c1", "met": True, "reason": "scripted"},
                                  {"id": "c2", "met": False, "reason": "scripted"}]})
VERDICTS = json.dumps({"verdicts": [{"id": "p1", "verdict": "supported", "reason": "scripted"},
                                    {"id": "p2", "verdict": "unsupported",
                                     "reason": "scripted"}]})
JUDGE = {"answers": [{"contains": '{"verdicts"', "text": VERDICTS},
                     {"contains": '{"criteria"', "text": RUBRIC}]}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """The conftest's server, with request bodies logged (what the judge was offered)."""
    with ScriptedServer({"gemini": JUDGE}, tmp_path / "server-log.jsonl",
                        log_bodies=True) as srv:
        yield srv


def judged(server: ScriptedServer) -> list[dict[str, Any]]:
    return [r for r in server.records("gemini")
            if str(r.get("answer", "")).startswith("text answers")]


@pytest.mark.timeout(600)  # ~20 s here; two council runs of real CLIs on a slow CI machine
def test_single_claude_against_the_council_judged_by_gemini(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(QUESTION) + "\n")
    log_dir = tmp_path / "eval"
    args = [sys.executable, "-m", "council", "eval", str(questions), "--config",
            "single:claude", "--config", "council", "--judge", "cli:gemini",
            "--log-dir", str(log_dir), "--test", "--max-runs", "2"]
    done = subprocess.run(args, env=cli_env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=420, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]

    found = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        assert log.status == "success"
        (sample,) = log.samples or []
        found[log.eval.task_args["configuration"]] = sample
    assert sorted(found) == ["council", "single:claude"]
    for conf, sample in found.items():
        assert sample.scores is not None
        assert sample.scores["rubric"].value == 0.5, conf  # c1 met, c2 not
        citations = sample.scores["citations"].value
        assert isinstance(citations, dict)
        assert citations["supported"] == 1, conf  # p1 supported, p2 not
        usage = sample.output.usage
        assert usage is not None
        assert usage.total_tokens > 0, conf  # read from the real CLIs' own output
    council_run = Path(found["council"].metadata["council"]["run_dir"])
    assert (council_run / "claims.json").is_file()  # the whole pipeline ran

    # Two judgements per sample, each by the real gemini, which was offered no tool.
    calls = judged(server)
    assert len(calls) == 4
    for call in calls:
        declared = [f.get("name") for t in call["body"].get("tools") or []
                    for f in t.get("functionDeclarations") or []]
        assert declared == [], "the judge was offered tools"
    summary = (log_dir / "summary.md").read_text()
    assert "Judge: **cli:gemini**" in summary
    assert "| single:claude | 1 | 50.0 (one value: no interval)" in summary
    assert "| council | 1 | 50.0 (one value: no interval)" in summary

    again = subprocess.run(args, env=cli_env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stderr[-4000:]
    assert len(judged(server)) == 4  # nothing judged again
    assert "0 runs to do, 1 done" in again.stdout


def test_the_server_answers_a_report_less_prompt_from_its_answers(server: ScriptedServer) -> None:
    """The additive `answers` script key: the first entry whose `contains` the prompt holds."""

    def ask(text: str) -> str:
        body = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
        request = urllib.request.Request(
            server.url + "/v1beta/models/m:generateContent", data=json.dumps(body).encode(),
            headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            data = json.loads(response.read())
        return str(data["candidates"][0]["content"]["parts"][0]["text"])

    assert ask('Grade: {"verdicts": ...}') == VERDICTS
    assert ask('Grade: {"criteria": ...}') == RUBRIC
    assert ask("Reply with OK.") == "OK."


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_each_cli_judges_headless(cli_env: dict[str, str], server: ScriptedServer,
                                  monkeypatch: pytest.MonkeyPatch, cli: str) -> None:
    """The judge's invocation of each real CLI: it answers from stdin, through the server;
    claude and gemini are offered no tool, codex no web search."""
    api = {"claude": "anthropic", "codex": "openai", "gemini": "gemini"}[cli]
    server.script = {api: JUDGE}
    for name in list(cli_env):
        monkeypatch.setenv(name, cli_env[name])
    prompt = judging.rubric_prompt("How do tides work?", "The Moon does it.",
                                   [Criterion("a"), Criterion("b")])
    model = CliJudge(cli)

    async def ask() -> str:
        output = await model.generate([ChatMessageUser(content=prompt)], [], "auto",
                                      GenerateConfig())
        return output.completion

    met = judging.parse_rubric(anyio.run(ask), 2)
    assert (met["c1"].met, met["c2"].met) == (True, False)
    (call,) = [r for r in server.records(api)
               if str(r.get("answer", "")).startswith("text answers")]
    tools = call["body"].get("tools") or []
    if cli == "codex":  # its shell is always there, in council's read-nothing sandbox
        assert "web_search" not in json.dumps(tools)
    elif cli == "claude":
        assert tools == []
    else:
        assert [f for t in tools for f in t.get("functionDeclarations") or []] == []
