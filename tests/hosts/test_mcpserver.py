"""`council mcp` driven by the MCP SDK's own client over stdio, with the fake CLIs doing the
research: a run that outlives its server, one run per request, bad input in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from conftest import Council, wait_for
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, TextResourceContents

from council.topic import MAX_TOPIC_BYTES

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connected(council: Council, env: dict[str, str] | None = None
                    ) -> AsyncIterator[ClientSession]:
    """A client session with a `council mcp` started for it, in the project folder; its
    stderr goes to server-stderr.log (stdout is the protocol)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "council", "mcp"],
                                   env=env or council.env, cwd=council.root)
    with (council.root / "server-stderr.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def until_ended(session: ClientSession, run_id: str) -> dict[str, Any]:
    """research_status with wait, again until the run has ended."""
    for _ in range(10):
        status = data(await session.call_tool("research_status",
                                              {"run_id": run_id, "wait": 20}))
        if status["ended"]:
            return status
    raise AssertionError(f"run {run_id} did not end: {status}")


def runs(council: Council) -> list[Path]:
    if not council.research.is_dir():
        return []
    return sorted(p for p in council.research.iterdir() if p.name[0].isdigit())


def no_traceback(council: Council) -> None:
    log = council.root / "server-stderr.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


async def test_a_run_outlives_its_server_and_a_new_server_reports_it(council: Council) -> None:
    council.script({"*": {"delay": 0.4}})  # each agent turn takes a while: ~3 s in all
    steps: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, message))

    async with connected(council) as session:
        started = time.monotonic()
        result = await session.call_tool("start_research",
                                         {"topic": "How do tides work?", "test": True},
                                         progress_callback=on_progress)
        answered = time.monotonic() - started
        start = data(result)
        supervisor = psutil.Process(start["supervisor_pid"])
        server = psutil.Process(supervisor.ppid())
        assert "python" in server.name()
        assert "mcp" in server.cmdline()
    assert answered < 2.0, answered
    run_id = start["run_id"]
    assert start["agents"] == ["claude", "codex", "gemini"]
    assert start["paths"]["final_report"] == str(council.research / run_id / "final-report.md")
    assert f"council run {run_id}: 3 agents (claude, codex, gemini), profile test" in \
        text(result)
    assert [m for _, m in steps][:2] == ["checking the request: options, config file, CLIs",
                                         f"run {run_id} created; starting its supervisor"]
    assert steps[-1][0] == 100

    # The client and its server are gone; the run goes on, supervised, in its own session.
    assert not server.is_running()
    assert supervisor.is_running()
    assert os.getsid(supervisor.pid) == supervisor.pid
    assert supervisor.cmdline()[-4:-2] == ["resume", run_id]
    state = (council.research / run_id / "state.yaml").read_text()
    assert "phase: done" not in state

    steps.clear()
    async with connected(council) as session:
        first = data(await session.call_tool("research_status", {"wait": 20},
                                             progress_callback=on_progress))
        assert first["id"] == run_id  # the newest run, by default
        status = first if first["ended"] else await until_ended(session, run_id)
        assert status["phase"] == "done"
        assert status["percent"] == 100
        assert {a["agent"]: a["status"] for a in status["agents"]} == {
            "claude": "complete", "codex": "complete", "gemini": "complete"}
        assert status["spent"]["tokens_in"] + status["spent"]["tokens_out"] > 0
        assert any("run done" in line for line in status["progress"])
        assert steps
        assert "%" in str(steps[-1][1])

        report = await session.call_tool("get_report", {"run_id": run_id})
        final = (council.research / run_id / "final-report.md").read_text()
        assert data(report)["done"] is True
        assert data(report)["markdown"] == final
        assert f"-----\n{final.rstrip(chr(10))}\n----- END COUNCIL REPORT " in text(report)
        assert "3 of 3 agents contributed" in text(report)
        assert data(report)["paths"]["report_html"] in text(report)

        listed = await session.list_resources()
        uris = {str(r.uri) for r in listed.resources}
        assert f"council://runs/{run_id}/final-report.md" in uris
        assert f"council://runs/{run_id}/report.html" in uris
        templates = await session.list_resource_templates()
        assert "council://runs/{run_id}/sources.json" in {
            t.uri_template for t in templates.resource_templates}
        read = await session.read_resource(f"council://runs/{run_id}/final-report.md")
        (content,) = read.contents
        assert isinstance(content, TextResourceContents)
        assert content.text == final
        assert content.mime_type == "text/markdown"
        with pytest.raises(MCPError, match=r"is not a council resource"):
            await session.read_resource(f"council://runs/{run_id}/nothing.md")

    wait_for(lambda: not supervisor.is_running(), timeout=15)
    no_traceback(council)


async def test_two_requests_make_two_runs_and_a_request_asked_again_makes_none(
        council: Council) -> None:
    council.env["COUNCIL_MAX_RUNS"] = "3"  # the three runs may all be running at once
    async with connected(council) as session:
        found: dict[str, dict[str, Any]] = {}

        async def start(topic: str) -> None:
            found[topic] = data(await session.call_tool(
                "start_research", {"topic": topic, "test": True}))

        async with anyio.create_task_group() as group:
            group.start_soon(start, "How do tides work?")
            group.start_soon(start, "Why is the sky blue?")
        assert len({d["run_id"] for d in found.values()}) == 2

        keyed = {"topic": "What is a council?", "test": True, "request_key": "req-1"}
        first = data(await session.call_tool("start_research", keyed))
        assert first["reused"] is False
    async with connected(council) as session:  # a new server: the key is remembered
        again = data(await session.call_tool("start_research", keyed))
        assert (again["run_id"], again["reused"]) == (first["run_id"], True)
        other = await session.call_tool("start_research", {**keyed, "topic": "Another?"})
        assert other.is_error
        assert text(other) == (f"council: error: this request_key already started run "
                               f"{first['run_id']} with other arguments: use a new key for "
                               "a new request")
        for run in [*found.values(), first]:
            await until_ended(session, run["run_id"])
    assert len(runs(council)) == 3
    records = json.loads((council.research / ".sessions" / "mcp.json").read_text())
    assert len(records["requests"]) == 3
    no_traceback(council)


def test_the_same_json_rpc_request_twice_starts_one_run(council: Council) -> None:
    """A client that sends one request twice (the same id), as a retry does."""
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "start_research", "arguments": {"topic": "How do tides work?", "test": True}}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "retrying-client", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, call, call]
    with subprocess.Popen([sys.executable, "-m", "council", "mcp"], cwd=council.root,
                          env=council.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(3)]
        server.stdin.close()
        assert server.wait(timeout=30) == 0
        assert server.stderr is not None
        assert "Traceback" not in server.stderr.read()
    calls = [a for a in answers if a["id"] == 7]
    assert len(calls) == 2
    ids = {a["result"]["structuredContent"]["run_id"] for a in calls}
    assert len(ids) == 1
    assert sorted(a["result"]["structuredContent"]["reused"] for a in calls) == [False, True]
    (run,) = runs(council)
    wait_for(lambda: "phase: done" in (run / "state.yaml").read_text())


async def test_bad_input_is_one_line_and_the_server_keeps_serving(council: Council) -> None:
    async with connected(council) as session:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("get_report", {"run_id": "20990101-000000-abcdef"},
             f"council: error: no run 20990101-000000-abcdef in {council.research}"),
            ("research_status", {"run_id": "nope"},
             "council: error: 'nope' is not a run id (expected YYYYMMDD-HHMMSS-xxxxxx)"),
            ("cancel_research", {}, "council: error: cancel_research needs 'run_id'"),
            ("start_research", {"topic": "x" * (MAX_TOPIC_BYTES + 1)},
             f"council: error: the topic from start_research is larger than "
             f"{MAX_TOPIC_BYTES} bytes"),
            ("start_research", {"topic": "  "},
             "council: error: the topic from start_research is empty"),
            ("start_research", {"topic": "x", "mode": "vibes"},
             "council: error: --mode must be one of exploratory, compliance, decision"),
            ("start_research", {"topic": "x", "agents": ["claude", "hal"]},
             "council: error: unknown agent 'hal': this council has claude, codex, gemini"),
            ("start_research", {"topic": "x", "max_cost": 0},
             "council: error: --max-cost must be a positive number of US dollars"),
            ("start_research", {"topic": "x", "depth": 3},
             "council: error: --depth must be one of quick, standard, deep"),
            ("start_research", {"topic": "x", "debate": "force"},
             "council: error: unknown option 'debate' for start_research: it takes topic, "
             "agents, depth, mode, verify, max_iterations, max_cost, test, since, request_key"),
        ]
        for tool, arguments, line in cases:
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert text(result) == line
        listed = await session.call_tool("list_research", {})
        assert text(listed) == f"no council runs yet in {council.research}"
        with pytest.raises(MCPError, match="unknown tool 'research'"):
            await session.call_tool("research", {})
        assert data(await session.call_tool("list_research", {}))["runs"] == []
    assert runs(council) == []
    no_traceback(council)


async def test_a_bad_option_is_refused_with_the_line_council_run_prints(
        council: Council) -> None:
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"mode": "vibes"}, ["--mode", "vibes"]),
        ({"max_iterations": 0}, ["--max-iterations", "0"]),
        ({"max_iterations": 51}, ["--max-iterations", "51"]),
        ({"max_cost": -1}, ["--max-cost", "-1"]),
        ({"agents": []}, ["--agents", ""])]
    async with connected(council) as session:
        for arguments, flags in cases:
            cli = council.run("run", *flags, "How do tides work?")
            assert cli.returncode == 2
            result = await session.call_tool("start_research",
                                             {"topic": "How do tides work?", **arguments})
            assert result.is_error
            assert text(result) == cli.stderr.splitlines()[0]
    assert runs(council) == []


async def test_an_untrusted_project_config_is_refused_and_nothing_starts(
        council: Council) -> None:
    (council.root / "council.yaml").write_text("agents:\n  claude: {extra_args: [--x]}\n")
    async with connected(council) as session:
        result = await session.call_tool("start_research", {"topic": "Tides?"})
    assert result.is_error
    line = text(result)
    assert line.startswith(f"council: error: {council.root / 'council.yaml'} is not trusted")
    # The model is told to ask the user, and given no command to run.
    assert line.endswith("ask the user to review the file and trust it in a terminal")
    assert "council trust" not in line
    assert "`" not in line
    assert "\n" not in line
    assert runs(council) == []


async def test_no_ready_agent_is_refused_with_each_fix(council: Council) -> None:
    env = {k: v for k, v in council.env.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")}
    async with connected(council, env) as session:
        result = await session.call_tool("start_research", {"topic": "Tides?"})
        assert result.is_error
        assert text(result).splitlines()[0] == "council: error: no agent can run here"
        assert "claude has no credentials" in text(result)
        assert data(await session.call_tool("list_research", {}))["runs"] == []
    assert runs(council) == []


async def test_cancel_research_stops_a_running_council(council: Council) -> None:
    council.script({"*": {"hang": True}})
    async with connected(council) as session:
        start = data(await session.call_tool("start_research",
                                             {"topic": "Tides?", "test": True}))
        run_id = start["run_id"]
        run = council.research / run_id
        wait_for(lambda: len(list((run / "logs").glob("*-research.jsonl"))) == 3)
        cancelled = data(await session.call_tool("cancel_research", {"run_id": run_id}))
        assert cancelled["message"].startswith(f"cancelled run {run_id}")
        assert cancelled["phase"] == "cancelled"
        status = data(await session.call_tool("research_status", {"run_id": run_id}))
        assert status["ended"]
        assert status["phase"] == "cancelled"
        report = data(await session.call_tool("get_report", {"run_id": run_id}))
        assert report["done"] is False
        assert report["markdown"] is None
        again = await session.call_tool("cancel_research", {"run_id": run_id})
        assert text(again) == (f"council: error: run {run_id} has already ended "
                               "(cancelled); nothing to cancel")
    assert not [p for p in psutil.process_iter(["cmdline"])
                if str(run) in " ".join(p.info["cmdline"] or [])]


def test_an_unforeseen_error_is_one_line_naming_its_crash_log(isolated: Path) -> None:
    from council.hosts.mcpserver import failure

    try:
        raise ValueError("boom\nsecond line")
    except ValueError as exc:
        result = failure(exc, "get_report")
    assert result.is_error
    line = text(result)
    assert line.startswith("council: internal error (ValueError: boom); details in ")
    log = Path(line.rsplit("details in ", 1)[1])
    assert log.is_file()
    assert "Traceback" in log.read_text()
    assert "council mcp get_report crashed" in log.read_text()


async def test_a_third_run_at_once_is_refused_naming_the_two_active(council: Council) -> None:
    """The machine runs at most max_runs (2 by default) council runs at once: a client's
    model that keeps calling start_research gets a one-line tool error, and no run folder."""
    from council.store.runlock import live_supervisor

    council.script({"*": {"hang": True}})  # the two runs stay active
    async with connected(council) as session:
        answers = [data(await session.call_tool("start_research", {
            "topic": topic, "test": True, "agents": ["claude"]}))
            for topic in ("Tides?", "Why is the sky blue?")]
        started = [answer["run_id"] for answer in answers]
        # A supervisor holds its run slot before it holds its run.
        wait_for(lambda: all(live_supervisor(council.research / run_id) is not None
                             for run_id in started))
        third = await session.call_tool("start_research", {"topic": "And the wind?",
                                                           "test": True})
        assert third.is_error
        line = text(third)
        assert "\n" not in line
        assert line.startswith("council: error: 2 council runs are already active on this "
                               "machine, which allows 2 at once")
        for run_id in started:
            assert f"{run_id} in {council.research / run_id}" in line
        assert [p.name for p in runs(council)] == sorted(started)
        for answer in answers:  # an MCP run has a budget unless the client gives one
            assert "limits: spend limit $10 (--max-cost N to change" in "\n".join(answer["plan"])
        for run_id in started:
            await session.call_tool("cancel_research", {"run_id": run_id})
        # A run slot is free again once a run has ended.
        fourth = data(await session.call_tool("start_research", {
            "topic": "And the wind?", "test": True, "agents": ["claude"], "max_cost": 2}))
        assert "limits: spend limit $2 (--max-cost N to change" in "\n".join(fourth["plan"])
        await session.call_tool("cancel_research", {"run_id": fourth["run_id"]})
    no_traceback(council)


async def test_ask_research_answers_a_finished_run_through_the_server(council: Council) -> None:
    """ask_research runs `council ask` while the client waits: one seat of the run answers,
    and the tool gives the answer file, its text and council's check of it as data."""
    proc = council.run("run", "--test", "--agents", "claude,codex", "--synthesizer", "claude",
                       "Tides?")
    assert proc.returncode == 0, proc.stderr
    (run,) = runs(council)
    council.script({"claude:ask": {"marker_first_turn": True, "content":
                    "The run found it: https://example.org/claude/claude/1 and "
                    "https://invented.example/page\n<!-- RESEARCH_COMPLETE -->\n"}})
    before = len(council.fake_log())
    assert "What about the moon?" not in (run / "report.html").read_text()
    async with connected(council) as session:
        result = await session.call_tool("ask_research", {"question": "What about the moon?"})
        answered = data(result)
    path = run / "asks" / "1-what-about-the-moon.md"
    # Issue 43, item 15: the run's page is rebuilt with the answer in its follow-ups.
    page = (run / "report.html").read_text()
    assert 'id="followups"' in page
    assert "What about the moon?" in page
    assert answered["run_id"] == run.name  # the newest run, by default
    assert answered["answer_file"] == str(path)
    assert answered["markdown"] == path.read_text()
    assert answered["markdown"].startswith("# Q: What about the moon?\n")
    assert answered["agent"] == "claude"
    assert answered["cited"] == ["https://example.org/claude/claude/1"]
    assert answered["outside"] == ["https://invented.example/page"]
    assert text(result).endswith(f"\n\n---\nanswer file: {path}")
    starts = [e for e in council.fake_log()[before:] if e["event"] == "start"]
    assert [(e["cli"], e["seat"]) for e in starts] == [("claude", "claude.ask")]
    no_traceback(council)
