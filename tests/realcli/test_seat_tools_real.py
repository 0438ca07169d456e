"""A seat's own tools (issue 36): a tiny stdio MCP search server (mcp_search.py), given to
each seat with `mcp_servers:` in the config, is offered by each real CLI to its model under
the CLI's own name for it; the scripted model calls it, and the next request carries the
server's result. The server sees none of the CLI's keys: only the basics and its own env."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .mcp_search import RESULTS
from .server import ScriptedServer

pytestmark = pytest.mark.realcli

SERVER = Path(__file__).with_name("mcp_search.py")
# How each CLI names the `search` tool of the server `web` to its model.
TOOL = {"anthropic": "mcp__web__search", "openai": "mcp__web__search",
        "gemini": "mcp_web_search"}
CLI = {"anthropic": "claude", "openai": "codex", "gemini": "gemini"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer({}, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


def tools_offered(body: dict[str, Any]) -> set[str]:
    """The tool names a request offers, in each wire API's shape; for codex also those an
    answered `tool_search` returned (codex 0.171 defers MCP tools there, in a namespace:
    `mcp__web` holding `search`), named as the namespace and the tool joined by `__`."""
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.add(str(tool.get("name")))
            for decl in tool.get("functionDeclarations") or []:
                names.add(str(decl.get("name")))
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            names |= {f"{space.get('name')}__{inner.get('name')}"
                      for space in item.get("tools") or [] for inner in space.get("tools") or []}
    return names


@pytest.mark.parametrize("api", ["anthropic", "openai", "gemini"])
def test_a_cli_offers_and_calls_a_seats_mcp_search_server(
        api: str, cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    log = tmp_path / "search-log.jsonl"
    cli_env = {**cli_env, "SEARCH_LOG": str(log)}  # read by name (env: [SEARCH_LOG])
    web = {"command": sys.executable, "args": [str(SERVER)], "env": ["SEARCH_LOG"],
           "search": True}
    config = project / "seats.yaml"
    config.write_text(yaml.safe_dump({"synthesizer": CLI[api], "agents": {
        CLI[api]: {"cli": CLI[api], "mcp_servers": {"web": web}}}}))
    server.script = {api: {"finish_after": 1,
                           "probe": [{"tool": TOOL[api], "args": {"query": "tides"}}]}}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--config", str(config),
         "--depth", "quick", "Tides?"], env=cli_env, cwd=project, capture_output=True,
        text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "mcp_servers" in proc.stderr + proc.stdout  # the plan lists them
    cli = CLI[api]
    bodies = [r["body"] for r in server.records(api) if isinstance(r.get("body"), dict)]
    offered = set().union(*(tools_offered(b) for b in bodies))
    assert TOOL[api] in offered, (cli, sorted(offered))
    back = [b for b in bodies if RESULTS[0] in json.dumps(b)]
    assert back, f"{cli}: no request carried the search tool's result"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls
    assert all(c["query"] == "tides" for c in calls)
    for call in calls:  # the server got the basics and its own env, no key of a CLI
        leaked = [n for n in call["env"] if "KEY" in n or n.startswith(("ANTHROPIC_",
                                                                        "GEMINI_", "OPENAI_"))]
        assert not leaked, leaked
        assert "SEARCH_LOG" in call["env"]
