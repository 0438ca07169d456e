"""`council doctor` with seats on a server the user runs: such a seat needs no vendor login, so
a config whose seats are all self-hosted, with servers that answer, is ready (exit 0, `ok`
true) and no CLI is told to log in; a server that is down still fails doctor."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml
from conftest import Council
from local_server import LocalServer, serving

from council.paths import user_config_file
from council.readiness.doctor import search_lines
from council.runoptions import Seat

MODELS = {"claude": "qwen3-coder", "codex": "gpt-oss-20b", "gemini": "gemma3"}
VENDOR_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    with serving() as server:
        listing = [{"id": m, "object": "model"} for m in MODELS.values()]
        server.routes[("GET", "/v1/models")] = (200, {"data": listing})
        server.routes[("GET", "/v1beta/models")] = (200, {"models": [
            {"name": f"models/{m}"} for m in MODELS.values()]})
        server.routes[("GET", "/props")] = (200, {"default_generation_settings": {
            "n_ctx": 65536}})
        yield server


def configure(url_of: dict[str, str | None]) -> None:
    config = user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(yaml.safe_dump({"agents": {
        name: ({"cli": name, "model": MODELS[name], "base_url": url, "context_window": 65536}
               if url else {"cli": name}) for name, url in url_of.items()}}))


def doctor(council: Council, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in council.env.items() if k not in VENDOR_KEYS}
    return subprocess.run([sys.executable, "-m", "council", "doctor", *args], env=env,
                          cwd=council.root, capture_output=True, text=True, timeout=60)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_all_seats_self_hosted_and_answering_is_ready_with_no_login(
        council: Council, local_server: LocalServer) -> None:
    configure({cli: local_server.url for cli in MODELS})
    shown = doctor(council)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "no agent can run here" not in shown.stderr
    assert "has no credentials" not in shown.stdout
    for cli in MODELS:
        assert f"{cli} needs no login: its seats use a self-hosted server" in shown.stdout
        row = next(line for line in shown.stdout.splitlines() if line.startswith(f"{cli} "))
        assert row.endswith("not needed (self-hosted)")
    found = doctor(council, "--json")
    assert found.returncode == 0
    data = json.loads(found.stdout)
    assert data["ok"] is True
    assert all(c["ready"] is True and c["problem"] is None for c in data["clis"])
    assert [e["problems"] for e in data["endpoints"]] == [[], [], []]


def test_a_self_hosted_seat_whose_server_is_down_still_fails_doctor(
        council: Council) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    configure({cli: down for cli in MODELS})
    shown = doctor(council)
    assert shown.returncode == 1
    assert "has no credentials" not in shown.stdout
    assert ("claude needs no login: its seats use a self-hosted server, which has a problem "
            "(below)") in shown.stdout
    assert f"claude at {down}, model qwen3-coder, window 65536 tokens: the server does not " \
           "answer" in shown.stdout
    data = json.loads(doctor(council, "--json").stdout)
    assert data["ok"] is False
    assert not [c for c in data["clis"] if c["ready"]]


def test_a_cli_a_vendor_seat_uses_is_still_told_to_log_in(
        council: Council, local_server: LocalServer) -> None:
    configure({"claude": None, "codex": local_server.url})
    shown = doctor(council)
    assert shown.returncode == 0  # codex's self-hosted seat can run
    assert "claude has no credentials: log in" in shown.stdout
    assert "codex needs no login: its seats use a self-hosted server" in shown.stdout
    assert "claude needs no login" not in shown.stdout


def test_a_seat_with_no_search_says_so_once() -> None:
    blind = Seat.from_dict("local", {"cli": "claude", "model": "qwen3",
                                     "base_url": "http://127.0.0.1:1"}, "t")
    (line,) = [line for line in search_lines((blind,)) if line.startswith("  local:")]
    assert line == "  local: no web search (give it an MCP server with `search: true`)"


def test_doctor_and_the_preflight_decide_alike_and_the_config_is_read_once(
        monkeypatch: pytest.MonkeyPatch, local_server: LocalServer) -> None:
    """Issue 43, item 15. One CLI with a vendor seat (no login here) and a self-hosted seat
    whose server answers: the run's preflight starts the self-hosted seat, so doctor says
    an agent of that CLI can run (on a0243e7 doctor decided "needs a login" on its own, and
    said no). Doctor reads the config once, and takes each seat's endpoint result as data,
    not by matching lines."""
    from dataclasses import replace as replaced

    from council.commands import doctor as command
    from council.readiness import doctor as checks
    from council.readiness import endpoint, preflight
    from council.readiness.preflight import Readiness
    from council.runoptions import RunOptions

    seats = (Seat("vendor", "claude"),
             Seat("local", "claude", model=MODELS["claude"], base_url=local_server.url,
                  context_window=65536))
    claude = Readiness("claude", "/usr/bin/claude", "2.1.332", "2.1.332", None)
    monkeypatch.setattr(preflight, "check", lambda clis, *a, **k: {"claude": claude})
    prepared, _ = preflight.prepare(RunOptions(seats=seats, synthesizer="vendor"), False)
    assert [s.name for s in prepared.seats] == ["local"]
    loads: list[int] = []

    def load(*args: object) -> RunOptions:
        loads.append(1)
        return RunOptions(seats=seats, synthesizer="vendor")

    monkeypatch.setattr(checks, "load_options", load)
    monkeypatch.setattr(checks, "checked", lambda live: ([claude], None))
    found = command.doctor([])
    assert loads == [1]
    assert found.ready == [True]
    (row,) = found.endpoints
    assert (row["agent"], row["problems"], row["faults"]) == ("local", [], [])
    down = replaced(seats[1], base_url=f"http://127.0.0.1:{closed_port()}")
    (check,) = endpoint.checks((seats[0], down))
    assert check.faults[0].startswith("the server does not answer")
    assert check.problems == [f"local (claude at {down.base_url}): {check.faults[0]}"]
