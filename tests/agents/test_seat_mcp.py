"""A seat's own MCP servers (issue 36): checked in the config, shown before trust, given to
each CLI with its own switch, without the CLI's keys; a seat that cannot search is named."""

from __future__ import annotations

import pytest

from council.agents import claude, codex, gemini
from council.config import summary
from council.errors import ConfigError
from council.runoptions import McpServer, Seat, can_search, no_search

WEB = {"command": "/usr/bin/search-mcp", "args": ["--fast"], "env": {"BRAVE_KEY": "v"},
       "search": True}


def seat(**servers: object) -> Seat:
    return Seat.from_dict("s", {"cli": "claude", "mcp_servers": servers}, "agents.s")


@pytest.mark.parametrize(("servers", "words"), [
    ({"a.b": {"command": "x"}}, "MCP server name"),
    ({"a__b": {"command": "x"}}, "MCP server name"),
    ({"w": {"command": "x", "url": "http://h"}}, "either command"),
    ({"w": {"command": "x", "args": "--y"}}, "list of strings"),
    ({"w": {"command": "x", "env": {"A": 1}}}, "mapping of names to strings"),
    ({"w": {"command": "x", "env": {"A-B": "1"}}}, "not an environment variable name"),
    ({"w": {"url": "file:///etc/passwd"}}, "http"),
    ({"w": {"command": "x", "serach": True}}, "did you mean 'search'"),
])
def test_bad_mcp_servers_are_refused(servers: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        seat(**servers)


def test_mcp_servers_round_trip_and_are_shown_before_trust() -> None:
    s = seat(web=WEB)
    assert Seat.from_dict("s", s.to_dict(), "options") == s
    line = summary({}, (s,))
    assert 'mcp_servers [web=["/usr/bin/search-mcp", "--fast"] env [BRAVE_KEY] (search)]' in line
    assert '"v"' not in line  # names of variables, never their values


def test_no_search_names_a_seat_without_vendor_search_or_a_search_server() -> None:
    plain, searching = seat(), seat(web=WEB)
    assert can_search(plain)  # vendor search
    assert can_search(searching)
    local = type("Local", (), {"base_url": "http://127.0.0.1:1", "mcp_servers": (),
                               "name": "l"})()
    assert no_search([local]) == ["l"]


def test_each_cli_gets_the_server_without_its_keys() -> None:
    (server,) = seat(web=WEB).mcp_servers
    cli_env = ["PATH", "HOME", "ANTHROPIC_API_KEY", "BRAVE_KEY", "LC_ALL"]
    config = claude.mcp_config([server], cli_env)["mcpServers"]["web"]
    assert config["command"] == "env"
    assert config["args"] == ["-u", "ANTHROPIC_API_KEY", "--", "/usr/bin/search-mcp", "--fast"]
    assert config["env"] == {"BRAVE_KEY": "v"}
    assert claude.mcp_allowed([server]) == ["mcp__web"]
    assert gemini.mcp_args([server]) == ["--allowed-mcp-server-names", "web"]
    assert gemini.mcp_args() == ["--allowed-mcp-server-names", gemini.NO_MCP_SERVER]
    assert gemini.mcp_servers([server], cli_env)["web"]["trust"] is True
    # gemini's tools.core denies every tool it does not name, a trusted server's too
    assert gemini.mcp_core([server]) == ["mcp_web_*"]
    table = codex.mcp_table([server], ["users"])
    assert table == ('{"users"={enabled=false}, "web"={command="/usr/bin/search-mcp", '
                     'args=["--fast"], env={BRAVE_KEY="v"}, required=true, '
                     'default_tools_approval_mode="approve"}}')


def test_codex_refuses_a_seat_server_named_like_the_users(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(codex, "user_mcp_servers", lambda *a, **k: ("web",))
    with pytest.raises(codex.CodexConfigError, match="rename"):
        codex.mcp_args(servers=[McpServer("web", command="x")])
