"""The scripted server on its own, over HTTP, without any CLI (runs even when none is installed)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .server import MARKER, ScriptedServer, report, update_patch

pytestmark = pytest.mark.realcli

PROMPT = "Question: widgets?\n\nReport file: /r/report.md\n"


def post(srv: ScriptedServer, path: str, body: dict[str, Any],
         headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


def sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in text.splitlines()
            if line.startswith("data: ")]


@pytest.fixture
def srv(tmp_path: Path) -> Any:
    with ScriptedServer({}, tmp_path / "log.jsonl") as server:
        yield server


def test_report_grows_one_section_per_turn_and_ends_with_the_marker() -> None:
    assert "## Turn 2" not in report("claude", 1, 2)
    assert MARKER not in report("claude", 1, 2)
    two = report("claude", 2, 2)
    assert "## Executive Summary" in two
    assert "https://example.org/claude/2" in two
    assert two.rstrip().endswith(MARKER)


def test_update_patch_appends_after_the_last_line_and_moves_the_marker() -> None:
    patch = update_patch("r.md", report("codex", 2, 2), report("codex", 3, 2))
    lines = patch.splitlines()
    assert lines[:3] == ["*** Begin Patch", "*** Update File: r.md", "@@"]
    assert lines[3].startswith(" Finding 2 from codex")
    assert f"-{MARKER}" in lines
    assert lines[-2:] == [f"+{MARKER}", "*** End Patch"]


def test_anthropic_tool_call_then_text(srv: ScriptedServer) -> None:
    first = {"model": "m", "stream": True, "messages": [
        {"role": "system", "content": "context"},
        {"role": "user", "content": [{"type": "text", "text": PROMPT}]}]}
    status, text = post(srv, "/v1/messages?beta=true", first,
                        {"x-claude-code-session-id": "s1"})
    assert status == 200
    events = sse_data(text)
    assert [e["type"] for e in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop"]
    assert events[1]["content_block"]["name"] == "Write"
    args = json.loads(events[2]["delta"]["partial_json"])
    assert args["file_path"] == "/r/report.md"
    assert "## Turn 1" in args["content"]
    assert events[4]["delta"]["stop_reason"] == "tool_use"

    history: list[Any] = first["messages"]  # type: ignore[assignment]
    second = {**first, "messages": [*history,
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                 "name": "Write", "input": args}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                            "content": "ok"}]}]}
    events = sse_data(post(srv, "/v1/messages?beta=true", second)[1])
    assert events[4]["delta"]["stop_reason"] == "end_turn"
    log = srv.records("anthropic")
    assert [r["answer"] for r in log] == ["tool Write turn 1", "text"]
    assert log[0]["headers"]["x-claude-code-session-id"] == "s1"
    assert log[1]["t"] == 1


def test_openai_adds_the_file_then_answers_text(srv: ScriptedServer, tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    user = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": f"Report file: {target}"}]}
    events = sse_data(post(srv, "/v1/responses", {"model": "m", "input": [user]})[1])
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["usage"]["output_tokens"] > 0
    call = events[-1]["response"]["output"][0]
    assert call["type"] == "custom_tool_call"
    assert call["input"].startswith(f"*** Begin Patch\n*** Add File: {target}\n+# Mock report")
    result = {"type": "custom_tool_call_output", "call_id": call["call_id"], "output": "ok"}
    events = sse_data(post(srv, "/v1/responses", {"input": [user, call, result]})[1])
    assert [e["type"] for e in events][1:-1] == [
        "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.done",
        "response.output_item.done"]


def test_gemini_router_side_call_and_main_turn(srv: ScriptedServer) -> None:
    schema = {"type": "object", "properties": {"complexity_reasoning": {"type": "string"},
                                                "complexity_score": {"type": "integer"}}}
    status, text = post(srv, "/v1beta/models/flash-lite:generateContent",
                        {"contents": [{"role": "user", "parts": [{"text": "x"}]}],
                         "generationConfig": {"responseJsonSchema": schema}})
    assert status == 200
    answer = json.loads(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer["complexity_score"] >= 1

    body = {"contents": [{"role": "user", "parts": [{"text": "<session_context>…"},
                                                     {"text": PROMPT}]}]}
    chunks = sse_data(post(srv, "/v1beta/models/pro:streamGenerateContent?alt=sse", body)[1])
    call = chunks[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call["name"] == "write_file"
    assert call["args"]["file_path"] == "/r/report.md"
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in chunks[-1]


def test_no_report_path_answers_ok(srv: ScriptedServer) -> None:
    body = {"stream": True, "messages": [{"role": "user", "content": "hi"}]}
    events = sse_data(post(srv, "/v1/messages", body)[1])
    assert events[2]["delta"]["text"] == "OK."


@pytest.mark.parametrize(("api", "path", "key"), [
    ("anthropic", "/v1/messages?beta=true", "type"),
    ("openai", "/v1/responses", "error"),
    ("gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", "error"),
])
def test_scripted_status_and_delay(srv: ScriptedServer, api: str, path: str, key: str) -> None:
    srv.script = {api: {"status": 503, "delay": 0.3}}
    started = time.monotonic()
    status, text = post(srv, path, {"messages": [], "input": [], "contents": []})
    assert time.monotonic() - started >= 0.3
    assert status == 503
    assert key in json.loads(text)
    assert srv.records(api)[-1]["answer"] == "status 503"


def test_anything_else_is_harmless_and_logged(srv: ScriptedServer) -> None:
    assert post(srv, "/v1/messages/count_tokens", {})[0] == 200
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(urllib.request.Request(
            srv.url + "/v1/responses", headers={"upgrade": "websocket", "connection": "upgrade"}),
            timeout=10)
    info.value.close()
    assert info.value.code == 404
    assert [r["answer"] for r in srv.records()] == ["200 stub", "404 websocket"]


def test_a_main_session_calls_its_scripted_tools_in_turn(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"tool_calls": [
        {"tool": "mcp__x__start", "args": {"topic": "t"}},
        {"tool": "mcp__x__status", "args": {"run_id": "{run_id}"}, "until": "done"},
        {"tool": "mcp__x__report", "args": {"run_id": "{run_id}"}}]}}
    tools = [{"name": n, "input_schema": {"type": "object"}}
             for n in ("mcp__x__start", "mcp__x__status", "mcp__x__report")]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Research t."}]

    def turn(result: str | None) -> tuple[str, dict[str, Any]] | str:
        """The model's answer, after `result` came back for its last call."""
        if result is not None:
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{len(messages)}",
                 "content": [{"type": "text", "text": result}]}]})
        events = sse_data(post(srv, "/v1/messages", {"stream": True, "tools": tools,
                                                     "messages": messages})[1])
        block = events[1]["content_block"]
        if block["type"] == "text":
            return str(events[2]["delta"]["text"])
        args = json.loads(events[2]["delta"]["partial_json"])
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{len(messages) + 1}", "name": block["name"],
             "input": args}]})
        return block["name"], args

    assert turn(None) == ("mcp__x__start", {"topic": "t"})
    assert turn("started run 20261122-031441-88dba5") == \
        ("mcp__x__status", {"run_id": "20261122-031441-88dba5"})
    assert turn("research, 40%")[0] == "mcp__x__status"  # polled again until "done"
    assert turn("done, 100%") == ("mcp__x__report", {"run_id": "20261122-031441-88dba5"})
    assert turn("# The report") == "Report updated."
    assert srv.records("anthropic")[-1]["tool_result"] == "# The report"


def test_a_main_session_waits_for_its_mcp_server_first(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"tool_calls": [{"tool": "mcp__x__start", "args": {}}]}}
    body = {"stream": True, "tools": [{"name": "WaitForMcpServers"}],
            "messages": [{"role": "user", "content": "Research t."}]}
    events = sse_data(post(srv, "/v1/messages", body)[1])
    assert events[1]["content_block"]["name"] == "WaitForMcpServers"
