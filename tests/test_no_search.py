"""A seat that cannot search the web (issue 36): neither its vendor's web search (a
self-hosted seat's server has none) nor an MCP server of its own declared `search: true`. It
is marked "no web search" in the plan, doctor, status (text and --json), report.html, and the
synthesis is told; a seat that searches through an MCP server is named with that server."""

from __future__ import annotations

from pathlib import Path

import pytest

from council import commands, runoptions
from council.commands import status as status_command
from council.config import plan_lines
from council.phases import synthesis
from council.readiness.doctor import search_lines
from council.runoptions import RunOptions, Seat
from council.store.state import (
    AgentPhase,
    AgentRecord,
    RunState,
    create_state,
    load_state,
    read_spec,
)
from council.store.workspace import Workspace
from council.views import page, status

WEB = {"command": "/usr/bin/search-mcp", "search": True}
TOOLS = {"command": "/usr/bin/files-mcp"}  # a server that does not search


@pytest.fixture(autouse=True)
def self_hosted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seats named local* stand for self-hosted ones (`base_url`): no vendor search."""
    monkeypatch.setattr(runoptions, "has_vendor_search",
                        lambda seat: not seat.name.startswith("local"))


def seats() -> tuple[Seat, ...]:
    return (Seat("claude", "claude"),
            Seat.from_dict("local-web", {"cli": "codex", "mcp_servers": {"web": WEB}}, "a"),
            Seat.from_dict("local-blind", {"cli": "gemini", "mcp_servers": {"f": TOOLS}}, "a"))


def run(tmp_path: Path) -> tuple[Workspace, RunState]:
    ws = Workspace(tmp_path / "20261123-100000-abcdef")
    ws.root.mkdir()
    state = RunState(id=ws.root.name, topic="q", created_at="2026-11-23T10:00:00Z",
                     options=RunOptions(seats=seats()), phase="done", agents={
                         s.name: AgentRecord(cli=s.cli, phases={"research": AgentPhase(
                             status="complete", iteration=1, max_iterations=2)})
                         for s in seats()})
    create_state(ws.root, state)
    return ws, state


def test_search_path_names_vendor_search_the_search_server_or_none() -> None:
    assert [runoptions.search_path(s) for s in seats()] == [
        "vendor search", "MCP server web", "no web search"]
    assert runoptions.no_search(seats()) == ["local-blind"]


def test_the_plan_marks_the_seat_that_cannot_search() -> None:
    lines = plan_lines(RunOptions(seats=seats()))
    blind = [line for line in lines if "no web search" in line]
    assert len(blind) == 1
    assert blind[0].startswith("  local-blind:")


def test_doctor_gives_each_seats_search_path() -> None:
    lines = search_lines(seats())
    assert "  claude: vendor search" in lines
    assert "  local-web: MCP server web" in lines
    assert any(line.startswith("  local-blind: no web search") for line in lines)


def test_status_marks_it_in_text_and_json(tmp_path: Path) -> None:
    ws, state = run(tmp_path)
    shown = status.overview(state, ws)
    assert [n for n in shown.notes if n.startswith("no web search: local-blind ")]
    agents = {a["agent"]: a for a in commands.data(status_command.of(state, ws))["agents"]}
    assert agents["local-blind"]["web_search"] == "no web search"
    assert agents["local-web"]["web_search"] == "MCP server web"
    assert agents["claude"]["web_search"] == "vendor search"


def test_report_page_marks_it(tmp_path: Path) -> None:
    ws, state = run(tmp_path)
    html = page.render(ws, state)
    assert "no web search: <strong>local-blind</strong>" in html
    assert "local-web</strong>" not in html


def test_the_synthesis_is_told_which_seats_could_not_search(tmp_path: Path) -> None:
    ws, state = run(tmp_path)
    text = synthesis.prompt(ws, state, state.options, list(seats()), "research",
                            ws.root / "final.md")
    told = text[text.index("could not search the web"):]
    assert told.split("\n")[1].startswith("local-blind.")
    everyone = synthesis.prompt(ws, state, state.options, list(seats()[:2]), "research",
                                ws.root / "final.md")
    assert "could not search" not in everyone  # only contributors are named
    assert "/usr/bin" not in text  # names only: no server's command reaches the prompt


def test_a_search_servers_key_is_kept_in_neither_state_yaml_nor_run_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43, item 12: the server's env names the variables its values are read from, so
    state.yaml and run.json keep names, never the value nor a placeholder a resume would hand
    the server (on a0243e7 both held `REDACTED:BRAVE_API_KEY`)."""
    key = "brave-0123456789abcdef0123"
    monkeypatch.setenv("COUNCIL_BRAVE_KEY", key)
    keyed = Seat.from_dict("local-web", {"cli": "codex", "mcp_servers": {"web": {
        **WEB, "env": {"BRAVE_API_KEY": "COUNCIL_BRAVE_KEY", "REGION": "COUNCIL_REGION"}}}},
        "a")
    ws = Workspace(tmp_path / "20261123-100000-abcdef")
    ws.root.mkdir()
    create_state(ws.root, RunState(id=ws.root.name, topic="q",
                                   created_at="2026-11-23T10:00:00Z",
                                   options=RunOptions(seats=(keyed,)), phase="research"))
    for name in ("state.yaml", "run.json"):
        text = (ws.root / name).read_text()
        assert key not in text, name
        assert "REDACTED" not in text, name
    assert read_spec(ws.root).options.seats == (keyed,)  # a rebuild starts the same server
    assert load_state(ws.root).options.seats == (keyed,)
