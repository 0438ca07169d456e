"""The source policy with the real claude (issue 36): its WebFetch is held to the run's domain
rules by claude's own permission rules. Offline: the fetched URL is the scripted server's own
(127.0.0.1, a name the rules accept), so a fetch the rules failed to stop would reach the
server and be logged, and claude's domain preflight is switched off in its throwaway HOME so
nothing leaves the machine either way."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .server import ScriptedServer

pytestmark = pytest.mark.realcli


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """The scripted server, logging request bodies: claude's answer to the probe is in the
    request after it."""
    with ScriptedServer({}, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


def tool_results(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool result in a request's history."""
    found = []
    for message in (record.get("body") or {}).get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                  ] if isinstance(content, list) else []
    return found


def text_of(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content)


@pytest.mark.parametrize(("rule", "refusal"), [
    # a deny rule
    (("--deny-domain", "127.0.0.1"), "WebFetch denied access to domain:127.0.0.1."),
    # no allow rule for the host, and nobody to ask in print mode
    (("--allow-domain", "example.org"),
     "Claude requested permissions to use WebFetch, but you haven't granted it yet."),
])
def test_claudes_web_fetch_outside_the_policy_is_refused(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path,
        rule: tuple[str, str], refusal: str) -> None:
    settings = Path(cli_env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"skipWebFetchPreflight": True}))
    page = f"{server.url}/outside-the-policy"
    server.script = {"anthropic": {"finish_after": 1, "probe": [
        {"tool": "WebFetch", "args": {"url": page, "prompt": "Summarise the page."}}]}}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--agents", "claude",
         "--depth", "quick", *rule, "What do tides follow?"],
        env={**cli_env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not [r for r in server.records() if "outside-the-policy" in str(r.get("path"))]
    answers = {text_of(res) for r in server.records("anthropic") for res in tool_results(r)
               if "WebFetch" in text_of(res) or "127.0.0.1" in text_of(res)}
    assert answers == {refusal}  # claude 2.1.332's words


def test_codexs_web_search_carries_the_allow_list(cli_env: dict[str, str],
                                                  server: ScriptedServer,
                                                  tmp_path: Path) -> None:
    """codex has no permission rules for domains, but its hosted web_search tool takes an
    allow list: each research request of the codex seat sends it to the model."""
    server.script = {"openai": {"finish_after": 1}}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--agents", "codex",
         "--depth", "quick", "--allow-domain", "Example.org", "What do tides follow?"],
        env={**cli_env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    searches = [t for r in server.records("openai") for t in (r.get("body") or {}).get(
        "tools") or [] if isinstance(t, dict) and t.get("type") == "web_search"]
    assert searches
    assert all(t.get("filters") == {"allowed_domains": ["example.org"]} for t in searches)
