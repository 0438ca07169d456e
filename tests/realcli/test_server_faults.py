"""The scripted server's vendor faults on their own, over HTTP, without any CLI (runs even
when none is installed): the bodies and headers, from which request, for how many or how
long, a cut stream and a stall that ends when its client gives up."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from .server import FAULTS, ScriptedServer

pytestmark = pytest.mark.realcli

PROMPT = "Question: widgets?\n\nReport file: /r/report.md\n"
ANTHROPIC = {"model": "claude-x", "stream": True,
             "messages": [{"role": "user", "content": PROMPT}]}


def post(srv: ScriptedServer, path: str, body: dict[str, Any]
         ) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        try:
            data = response.read()
        except http.client.IncompleteRead as cut:
            data = b"CUT:" + cut.partial
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


@pytest.fixture
def srv(tmp_path: Path) -> Any:
    with ScriptedServer({}, tmp_path / "log.jsonl") as server:
        yield server


def test_every_vendor_fault_has_its_vendors_shape(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"fault": {"name": "plan_limit"}}}
    status, headers, data = post(srv, "/v1/messages", ANTHROPIC)
    assert status == 429
    assert headers["anthropic-ratelimit-unified-status"] == "rejected"
    assert headers["anthropic-ratelimit-unified-representative-claim"] == "five_hour"
    assert headers["retry-after"] == "9000"
    assert int(headers["anthropic-ratelimit-unified-reset"]) > 1_700_000_000
    assert json.loads(data)["error"]["type"] == "rate_limit_error"

    srv.script = {"openai": {"fault": {"name": "usage_limit", "resets_in": 60}}}
    status, _, data = post(srv, "/v1/responses", {"model": "gpt-x", "input": PROMPT})
    error = json.loads(data)["error"]
    assert (status, error["type"], error["resets_in_seconds"]) == (429, "usage_limit_reached", 60)
    assert isinstance(error["resets_at"], int)

    srv.script = {"gemini": {"fault": {"name": "minute_quota", "retry_delay": "33s"}}}
    status, _, data = post(srv, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
                           {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]})
    error = json.loads(data)["error"]
    assert (status, error["status"]) == (429, "RESOURCE_EXHAUSTED")
    kinds = {d["@type"].rsplit(".", 1)[1]: d for d in error["details"]}
    assert kinds["RetryInfo"]["retryDelay"] == "33s"
    assert "PerMinute" in kinds["QuotaFailure"]["violations"][0]["quotaId"]
    assert "model: gemini-x" in error["message"]
    assert set(FAULTS["gemini"]) == {"minute_quota", "daily_quota", "overloaded", "auth"}


def test_a_fault_from_the_nth_request_for_a_count(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"fault": {"name": "overloaded", "from": 2, "count": 2,
                                          "retry_after": 3}}}
    got = [post(srv, "/v1/messages", ANTHROPIC) for _ in range(5)]
    assert [status for status, _, _ in got] == [200, 529, 529, 200, 200]
    assert got[1][1]["retry-after"] == "3"
    assert [r["answer"] for r in srv.records("anthropic")][1:3] == ["fault overloaded"] * 2


def test_a_fault_for_a_time_ends_by_itself(srv: ScriptedServer) -> None:
    srv.script = {"openai": {"fault": {"name": "overloaded", "seconds": 0}}}
    body = {"model": "gpt-x", "input": PROMPT}
    # The first fault starts the clock; a window of 0 s lets none after it through.
    assert [post(srv, "/v1/responses", body)[0] for _ in range(2)] == [503, 200]


def test_a_fault_from_a_report_turn_on(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"fault": {"name": "auth", "from_turn": 2}}}
    first = {**ANTHROPIC, "stream": False}
    assert post(srv, "/v1/messages", first)[0] == 200  # writes turn 1
    history: list[dict[str, Any]] = [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write",
                                           "input": {"file_path": "/r/report.md"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}]}]
    second = {**first, "messages": history}
    assert post(srv, "/v1/messages", second)[0] == 200  # turn 1's result: still turn 1
    third = {**first, "messages": [*history,
                                    {"role": "assistant", "content": "Report updated."},
                                    {"role": "user", "content": "Continue the research."}]}
    assert post(srv, "/v1/messages", third)[0] == 401  # turn 2


def test_a_cut_stream_stops_mid_answer(srv: ScriptedServer) -> None:
    srv.script = {"gemini": {"fault": {"name": "cut"}}}
    status, _, data = post(srv, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
                           {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]})
    assert status == 200
    assert data.startswith(b"CUT:")
    assert b"A partial answer" in data
    assert b"finishReason" not in data


def test_a_stall_lasts_until_the_client_gives_up(srv: ScriptedServer) -> None:
    srv.script = {"anthropic": {"fault": {"name": "stall"}}}
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as client:
        raw = json.dumps(ANTHROPIC).encode()
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: "
                       b"application/json\r\ncontent-length: " + str(len(raw)).encode() +
                       b"\r\n\r\n" + raw)
        client.settimeout(0.5)
        with pytest.raises(TimeoutError):  # nothing, not even headers
            client.recv(1)
        assert [r.get("answer") for r in srv.records("anthropic")] == ["fault stall"]
    # The handler sees the closed socket on its next look at it.
    assert srv.wait_stalls(ended=1) == ["client gave up"]
    (record,) = [r for r in srv.records() if "stall_ended" in r]
    assert record["stall_ended"] == "client gave up"


def test_release_ends_a_stall(srv: ScriptedServer) -> None:
    srv.script = {"openai": {"fault": {"name": "stall"}}}
    said: list[BaseException] = []

    def ask() -> None:
        try:
            post(srv, "/v1/responses", {"model": "gpt-x", "input": PROMPT})
        except (http.client.HTTPException, OSError) as exc:
            said.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    srv.wait_stalls(started=1)
    srv.release_stalls()
    assert srv.wait_stalls(ended=1) == ["released"]
    worker.join(10)
    assert not worker.is_alive()
    # The connection closed with no answer at all.
    assert [type(e) for e in said] == [http.client.RemoteDisconnected]
