"""A seat's MCP server gets its `env` from council's environment, by name (issue 43, item 12),
with each real CLI offline: the scripted model calls the server's tool (mcp_search.py), and
the server reports the key it was handed (its sha256) and which process above it holds the
key on its command line, read while the CLI runs. The key reaches the server, and is in
none of state.yaml, run.json, any file of the run (claude's --mcp-config, gemini's
workspace settings.json) and the CLI's command line. On a0243e7 state.yaml and run.json
held `REDACTED:SEARCH_KEY`, codex's argv (`-c mcp_servers={…}`) and gemini's settings.json
held the key."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from .server import ScriptedServer
from .test_seat_tools_real import CLI, SERVER, TOOL

pytestmark = pytest.mark.realcli

# A key-shaped value under a name no CLI's allow-list passes: only the seat's server env can
# bring it to the CLI, and from there to the server.
KEY = "sk-mcp-env-7f3a9c1e5b2d4f6a8c0e"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer({}, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


@pytest.mark.timeout(300)
@pytest.mark.parametrize("api", ["anthropic", "openai", "gemini"])
def test_a_servers_key_reaches_it_through_the_environment_only(
        api: str, cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    log = tmp_path / "search-log.jsonl"
    cli_env = {**cli_env, "SEARCH_LOG": str(log), "MY_SEARCH_SECRET": KEY}
    web = {"command": sys.executable, "args": [str(SERVER)], "search": True,
           "env": {"SEARCH_LOG": "SEARCH_LOG", "SEARCH_KEY": "MY_SEARCH_SECRET"}}
    config = project / "seats.yaml"
    config.write_text(yaml.safe_dump({"synthesizer": CLI[api], "agents": {
        CLI[api]: {"cli": CLI[api], "mcp_servers": {"web": web}}}}))
    server.script = {api: {"finish_after": 1,
                           "probe": [{"tool": TOOL[api], "args": {"query": "tides"}}]}}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--config", str(config),
         "--depth", "quick", "Tides?"], env=cli_env, cwd=project, capture_output=True,
        text=True, timeout=280, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls, f"{CLI[api]}: the server's tool was never called"
    for call in calls:
        assert call["key_sha256"] == hashlib.sha256(KEY.encode()).hexdigest()
        assert call["argv_holding_key"] == [], call["above"]
        assert any(CLI[api] in name or name == "node" for name in call["above"]), call
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    state = yaml.safe_load((run / "state.yaml").read_text())
    (seat,) = state["options"]["seats"]
    assert seat["mcp_servers"]["web"]["env"] == {"SEARCH_KEY": "MY_SEARCH_SECRET",
                                                 "SEARCH_LOG": "SEARCH_LOG"}
    spec = json.loads((run / "run.json").read_text())
    assert spec["options"]["seats"][0]["mcp_servers"]["web"]["env"] == seat[
        "mcp_servers"]["web"]["env"]
    holding = [str(p) for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()
               and KEY.encode() in p.read_bytes()]
    assert holding == []
