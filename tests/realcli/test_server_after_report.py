"""The scripted server's `after_report` and `reports` keys, and its reading of the report on
disk, over HTTP without any CLI (runs even when none is installed)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .server import MARKER, ScriptedServer, plain_text
from .test_server import post, sse_data

pytestmark = pytest.mark.realcli


@pytest.fixture
def srv(tmp_path: Path) -> Any:
    with ScriptedServer({}, tmp_path / "log.jsonl") as server:
        yield server


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def respond(srv: ScriptedServer, items: list[dict[str, Any]]) -> dict[str, Any]:
    """POST the history to /v1/responses; the one output item of the answer."""
    events = sse_data(post(srv, "/v1/responses", {"model": "m", "input": items})[1])
    output: dict[str, Any] = events[-1]["response"]["output"][0]
    return output


def result(call: dict[str, Any]) -> dict[str, Any]:
    kind = "custom_tool_call_output" if call["type"] == "custom_tool_call" else \
        "function_call_output"
    return {"type": kind, "call_id": call["call_id"], "output": "ok"}


def test_codex_runs_after_report_commands_once_the_report_is_complete(
        srv: ScriptedServer, tmp_path: Path) -> None:
    target = tmp_path / "codex-report.md"
    srv.script = {"openai": {"finish_after": 1,
                             "after_report": ["ln -sf /x {report}", "mkfifo {dir}/y"]}}
    history = [user(f"Report file: {target}")]
    write = respond(srv, history)
    assert write["name"] == "apply_patch"
    assert MARKER in write["input"]  # turn 1 completes the report
    history += [write, result(write)]
    first = respond(srv, history)
    assert (first["name"], json.loads(first["arguments"])["cmd"]) == \
        ("exec_command", f"ln -sf /x {target}")
    history += [first, result(first)]
    second = respond(srv, history)
    assert json.loads(second["arguments"])["cmd"] == f"mkfifo {tmp_path}/y"
    history += [second, result(second)]
    assert respond(srv, history)["type"] == "message"  # then the text that ends the turn
    assert [r["answer"] for r in srv.records("openai")][1:] == [
        f"after_report ln -sf /x {target}", f"after_report mkfifo {tmp_path}/y", "text"]


def test_after_report_waits_for_the_write_that_completes_the_report(
        srv: ScriptedServer, tmp_path: Path) -> None:
    target = tmp_path / "codex-report.md"
    srv.script = {"openai": {"finish_after": 2, "after_report": ["true"]}}
    history = [user(f"Report file: {target}")]
    write = respond(srv, history)
    history += [write, result(write)]
    assert respond(srv, history)["type"] == "message"  # turn 1 of 2: no after_report yet


def test_reports_script_one_report_apart(srv: ScriptedServer, tmp_path: Path) -> None:
    srv.script = {"anthropic": {"finish_after": 2, "reports": {
        "b-report.md": {"finish_after": 1,
                        "after_report": [{"tool": "Glob", "args": {"path": "{dir}"}}]}}}}
    for name, after in (("a-report.md", None), ("b-report.md", "Glob")):
        prompt = {"role": "user", "content": [{"type": "text",
                                               "text": f"Report file: {tmp_path / name}"}]}
        body: dict[str, Any] = {"model": "m", "stream": True, "messages": [prompt]}
        events = sse_data(post(srv, "/v1/messages", body)[1])
        args = json.loads(events[2]["delta"]["partial_json"])
        assert (MARKER in args["content"]) == (after is not None)
        call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                  "name": "Write", "input": args}]}
        done = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                             "content": "ok"}]}
        events = sse_data(post(srv, "/v1/messages", {**body, "messages": [prompt, call,
                                                                           done]})[1])
        block = events[1]["content_block"]
        assert block.get("name") == after, name
        if after:
            assert json.loads(events[2]["delta"]["partial_json"]) == {"path": str(tmp_path)}


def test_gemini_after_report_reads_with_its_own_tool(srv: ScriptedServer) -> None:
    srv.script = {"gemini": {"finish_after": 1, "after_report": ["/proc/self/environ"]}}
    prompt = {"role": "user", "parts": [{"text": "Report file: /r/gemini-report.md"}]}
    path = "/v1beta/models/m:streamGenerateContent?alt=sse"
    chunks = sse_data(post(srv, path, {"contents": [prompt]})[1])
    write = chunks[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]
    answered = [prompt, {"role": "model", "parts": [{"functionCall": write}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "write_file",
                                                                 "response": {}}}]}]
    chunks = sse_data(post(srv, path, {"contents": answered})[1])
    call = chunks[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call == {"name": "read_file", "args": {"file_path": "/proc/self/environ"}}


def test_plain_text_reads_only_a_plain_file(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("text")
    (tmp_path / "link").symlink_to(tmp_path / "plain")
    os.mkfifo(tmp_path / "fifo")  # opening it to read would block without O_NONBLOCK
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(1 << 40)
    assert plain_text(tmp_path / "plain") == "text"
    assert [plain_text(tmp_path / n) for n in ("link", "fifo", "sparse", "missing")] == \
        [None] * 4


def test_probes_name_the_agents_folder(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"probe": ["{dir}/refinement-inputs/a-report.md"]}}
    prompt = {"role": "user", "content": [{"type": "text", "text": "Report file: /r/x.md"}]}
    events = sse_data(post(srv, "/v1/messages", {"model": "m", "stream": True,
                                                 "messages": [prompt]})[1])
    assert events[1]["content_block"]["name"] == "Read"
    assert json.loads(events[2]["delta"]["partial_json"]) == \
        {"file_path": "/r/refinement-inputs/a-report.md"}
    assert srv.records()[-1]["answer"] == "probe /r/refinement-inputs/a-report.md"
