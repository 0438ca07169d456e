"""A seat's own MCP servers (issue 36): checked in the config, shown before trust, given to
each CLI with its own switch, without the CLI's keys; a seat that cannot search is named."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from council.agents import adapter_for, claude, codex, gemini
from council.agents.base import AgentJob
from council.config import summary
from council.errors import ConfigError
from council.runoptions import McpServer, Seat, can_search, no_search

WEB = {"command": "/usr/bin/search-mcp", "args": ["--fast"],
       "env": {"BRAVE_KEY": "COUNCIL_BRAVE_KEY"}, "search": True}
VALUE = "brave-key-value-0123456789"


def make_job(tmp_path: Path, seat: Seat) -> AgentJob:
    cwd = tmp_path / "run" / "agents" / seat.name
    cwd.mkdir(parents=True)
    (tmp_path / "run" / "loops").mkdir()
    prompt = cwd / "research-prompt.md"
    prompt.write_text("Report file: x")
    return AgentJob(seat=seat, tag="research", cwd=cwd, prompt_file=prompt,
                    hook_args=("--run-dir", str(tmp_path / "run"), "--seat", seat.name),
                    max_iterations=3, private_dir=tmp_path / "run" / "loops",
                    home=tmp_path / "run" / "homes" / seat.name)


def seat(**servers: object) -> Seat:
    return Seat.from_dict("s", {"cli": "claude", "mcp_servers": servers}, "agents.s")


@pytest.mark.parametrize(("servers", "words"), [
    ({"a.b": {"command": "x"}}, "MCP server name"),
    ({"a__b": {"command": "x"}}, "MCP server name"),
    ({"w": {"command": "x", "url": "http://h"}}, "either command"),
    ({"w": {"command": "x", "args": "--y"}}, "list of strings"),
    ({"w": {"command": "x", "env": {"A": 1}}}, "mapping of the server's variable names"),
    ({"w": {"command": "x", "env": {"A-B": "B"}}}, "not an environment variable name"),
    # issue 43, item 12: the old form, a value, is refused naming the new one
    ({"w": {"command": "x", "env": {"REGION": "eu-west-1"}}},
     r"REGION: name the variable of council's environment .*\(REGION: COUNCIL_MCP_REGION\)"),
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
    assert "COUNCIL_BRAVE_KEY" not in line  # the server's names; the review shows the rest
    listed = seat(web={"command": "x", "env": ["BRAVE_KEY", "A"]})
    assert listed.mcp_servers[0].env == (("A", "A"), ("BRAVE_KEY", "BRAVE_KEY"))


def test_no_search_names_a_seat_without_vendor_search_or_a_search_server() -> None:
    plain, searching = seat(), seat(web=WEB)
    assert can_search(plain)  # vendor search
    assert can_search(searching)
    local = type("Local", (), {"base_url": "http://127.0.0.1:1", "mcp_servers": (),
                               "name": "l"})()
    assert no_search([local]) == ["l"]


def test_each_cli_gets_the_server_without_its_keys() -> None:
    (server,) = seat(web=WEB).mcp_servers
    cli_env = ["PATH", "HOME", "ANTHROPIC_API_KEY", "COUNCIL_BRAVE_KEY", "LC_ALL"]
    config = claude.mcp_config([server], cli_env)["mcpServers"]["web"]
    assert config["command"] == "env"
    assert config["args"] == ["-u", "ANTHROPIC_API_KEY", "-u", "COUNCIL_BRAVE_KEY", "--",
                              "/usr/bin/search-mcp", "--fast"]
    # issue 43, item 12: a reference claude expands from its environment, never the value
    assert config["env"] == {"BRAVE_KEY": "${COUNCIL_BRAVE_KEY}"}
    assert claude.mcp_allowed([server]) == ["mcp__web"]
    assert gemini.mcp_args([server]) == ["--allowed-mcp-server-names", "web"]
    assert gemini.mcp_args() == ["--allowed-mcp-server-names", gemini.NO_MCP_SERVER]
    assert gemini.mcp_servers([server], cli_env)["web"]["trust"] is True
    assert gemini.mcp_servers([server], cli_env)["web"]["env"] == {
        "BRAVE_KEY": "${COUNCIL_BRAVE_KEY}"}
    # gemini's tools.core denies every tool it does not name, a trusted server's too
    assert gemini.mcp_core([server]) == ["mcp_web_*"]
    table = codex.mcp_table([server], ["users"])
    assert table == ('{"users"={enabled=false}, "web"={command="/usr/bin/search-mcp", '
                     'args=["--fast"], env_vars=["BRAVE_KEY"], required=true, '
                     'default_tools_approval_mode="approve"}}')
    # codex expands nothing: its environment holds the server's variable by its own name
    assert codex.mcp_env([server], {"COUNCIL_BRAVE_KEY": VALUE}, {}) == {"BRAVE_KEY": VALUE}


def test_a_variable_of_the_servers_env_is_read_when_the_cli_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43, item 12: each adapter reads the value from council's environment when it
    prepares the CLI, puts it in the CLI's environment only, and writes no file and no
    argument that holds it (on a0243e7 codex's `-c mcp_servers=` carried it, gemini's
    settings.json and claude's --mcp-config file held it)."""
    monkeypatch.setenv("COUNCIL_BRAVE_KEY", VALUE)
    s = seat(web=WEB)
    for cli in ("claude", "codex", "gemini"):
        job = make_job(tmp_path / cli, replace(s, cli=cli))
        invocation = adapter_for(cli).prepare(job)
        assert VALUE not in json.dumps(invocation.argv), cli
        written = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert [p for p in written if VALUE in p.read_text(errors="replace")] == [], cli
        wanted = "BRAVE_KEY" if cli == "codex" else "COUNCIL_BRAVE_KEY"
        assert invocation.env[wanted] == VALUE, cli
    monkeypatch.delenv("COUNCIL_BRAVE_KEY")
    with pytest.raises(ConfigError, match=r"BRAVE_KEY is read from COUNCIL_BRAVE_KEY, a "
                       r"variable of council's environment that is not set"):
        adapter_for("gemini").prepare(make_job(tmp_path / "unset", s))


def test_codex_refuses_to_rename_into_a_variable_of_its_own() -> None:
    moved = McpServer("web", command="x", env=(("HOME", "COUNCIL_HOME"),))
    with pytest.raises(codex.CodexConfigError, match=r"HOME is a variable codex's own"):
        codex.mcp_env([moved], {"COUNCIL_HOME": "/h", "HOME": "/r"}, {"HOME": "/private"})
    kept = McpServer("web", command="x", env=(("HOME", "HOME"),))
    assert codex.mcp_env([kept], {"HOME": "/r"}, {"HOME": "/private"}) == {}


def test_codex_refuses_a_seat_server_named_like_the_users(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(codex, "user_mcp_servers", lambda *a, **k: ("web",))
    with pytest.raises(codex.CodexConfigError, match="rename"):
        codex.mcp_args(servers=[McpServer("web", command="x")])


def test_the_old_form_with_a_name_like_value_is_refused_before_the_run_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`env: {REGION: eu}` (README's example until issue 43) reads as "REGION from $eu": the
    run's preflight refuses it in one line naming the form, before any CLI starts."""
    from council.readiness import preflight
    from council.runoptions import RunOptions

    monkeypatch.delenv("eu", raising=False)
    old = seat(web={"command": "x", "env": {"REGION": "eu"}})
    ready = preflight.Readiness("claude", "/usr/bin/claude", "1", "1", "ANTHROPIC_API_KEY")
    monkeypatch.setattr(preflight, "check", lambda clis, *a, **k: {"claude": ready})
    with pytest.raises(ConfigError) as refused:
        preflight.prepare(RunOptions(seats=(old,), synthesizer="s"), False)
    assert str(refused.value) == (
        "agents.s.mcp_servers.web.env: REGION is read from eu, a variable of council's "
        "environment that is not set (env maps the server's variables to council's: REGION: "
        "COUNCIL_MCP_REGION)")
    monkeypatch.setenv("eu", "eu-west-1")
    assert preflight.prepare(RunOptions(seats=(old,), synthesizer="s"), False)[0].seats
