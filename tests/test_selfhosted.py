"""Self-hosted seats: their keys' checks, each CLI's settings, the endpoint decisions."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from council.agents import adapter_for, selfhosted
from council.agents.base import AgentJob
from council.agents.environment import agent_env
from council.errors import ConfigError
from council.readiness import endpoint
from council.runoptions import Seat

URL = "http://127.0.0.1:11434"
USER = {"ANTHROPIC_API_KEY": "sk-ant-user", "ANTHROPIC_BASE_URL": "https://api.anthropic.com",
        "OPENAI_API_KEY": "sk-user", "GEMINI_API_KEY": "AIza-user", "CODEX_HOME": "/u/.codex",
        "GOOGLE_APPLICATION_CREDENTIALS": "/u/adc.json", "PATH": "/bin", "MY_LOCAL_KEY": "s3"}


def seat(cli: str, **more: object) -> Seat:
    return Seat.from_dict(cli, {"cli": cli, "model": "qwen3", "base_url": URL, **more}, "t")


@pytest.mark.parametrize("bad", ["ftp://h", "http://", "http://u:p@h:1", "h:1", "http://h/?x=1",
                                 "http://h:port"])
def test_base_url_must_be_http_with_a_host(bad: str) -> None:
    with pytest.raises(ConfigError, match="base_url"):
        seat("claude", base_url=bad)


def test_a_self_hosted_seat_needs_a_model_and_has_no_fallback() -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        Seat.from_dict("c", {"cli": "claude", "base_url": URL}, "t")
    with pytest.raises(ConfigError, match="no fallback"):
        seat("claude", fallback="codex")
    with pytest.raises(ConfigError, match="base_url"):
        Seat.from_dict("c", {"cli": "claude", "context_window": 65536}, "t")
    assert Seat.from_dict("codex", seat("codex").to_dict(), "t") == seat("codex")


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_no_vendor_variable_reaches_a_self_hosted_seat(cli: str) -> None:
    seen = agent_env(cli, USER, vendor_vars=False)
    assert set(seen) == {"PATH"}
    assert "ANTHROPIC_API_KEY" in agent_env("claude", USER)  # a vendor seat still gets its own


def job(tmp_path: Path, s: Seat) -> AgentJob:
    cwd = tmp_path / "agents" / s.name
    cwd.mkdir(parents=True)
    (tmp_path / "loops").mkdir(exist_ok=True)
    prompt = cwd / "p.md"
    prompt.write_text("Report file: x")
    return AgentJob(seat=s, tag="research", cwd=cwd, prompt_file=prompt, hook_args=(),
                    max_iterations=2, home=tmp_path / "homes" / s.name,
                    private_dir=tmp_path / "loops")


def test_claude_gets_the_server_a_token_its_model_and_window(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setenv("MY_LOCAL_KEY", "s3cret-local")
    inv = adapter_for("claude").prepare(job(tmp_path, seat(
        "claude", context_window=65536, api_key_env="MY_LOCAL_KEY")))
    env = inv.env
    assert env["ANTHROPIC_BASE_URL"] == URL
    assert env["ANTHROPIC_AUTH_TOKEN"] == "s3cret-local"
    assert env["ANTHROPIC_API_KEY"] == ""
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] == env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "qwen3"
    assert env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] == env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] \
        == "65536"
    assert env["HOME"] == str(tmp_path / "homes" / "claude")
    plain = adapter_for("claude").prepare(job(tmp_path / "v", Seat("claude", "claude")))
    assert "ANTHROPIC_BASE_URL" not in plain.env
    assert "HOME" not in plain.env


def test_codex_gets_a_provider_of_its_own_in_a_private_home(tmp_path: Path) -> None:
    j = job(tmp_path, seat("codex", context_window=65536, api_key_env="MY_LOCAL_KEY"))
    inv = adapter_for("codex").prepare(j)
    home = tmp_path / "homes" / "codex" / ".codex"
    assert inv.env["CODEX_HOME"] == str(home)
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model_provider"] == "council-codex"
    assert config["model"] == "qwen3"
    assert config["model_context_window"] == 65536
    assert config["model_providers"]["council-codex"] == {
        "name": "council-codex", "base_url": URL + "/v1", "wire_api": "responses",
        "env_key": "MY_LOCAL_KEY"}


def test_gemini_gets_the_server_and_its_utility_aliases_on_the_seats_model(
        tmp_path: Path) -> None:
    import json

    j = job(tmp_path, seat("gemini", context_window=65536, effort="low"))
    inv = adapter_for("gemini").prepare(j)
    assert inv.env["GOOGLE_GEMINI_BASE_URL"] == URL
    assert inv.env["GEMINI_API_KEY"] == selfhosted.PLACEHOLDER_KEY
    user = json.loads((tmp_path / "homes/gemini/.gemini/settings.json").read_text())
    assert user["security"]["auth"]["selectedType"] == "gemini-api-key"
    work = json.loads((j.cwd / ".gemini/settings.json").read_text())
    aliases = work["modelConfigs"]["customAliases"]
    assert aliases["classifier"]["modelConfig"]["model"] == "qwen3"
    assert aliases["chat-compression-default"]["modelConfig"]["model"] == "qwen3"
    assert "chat-base-3" in aliases  # the effort's thinking settings are kept
    assert 0 < work["model"]["compressionThreshold"] < 0.1


def test_the_listing_decides_model_and_window() -> None:
    s = seat("codex", context_window=65536)
    ok = endpoint.Answer("u", 200, {"data": [{"id": "qwen3", "max_model_len": 131072}]})
    assert endpoint.problems(s, [ok]) == []
    ollama = endpoint.Answer("u", 200, {"models": [{"name": "qwen3:latest"}]})
    assert endpoint.problems(s, [endpoint.Answer("u", 404), ollama]) == []
    missing = endpoint.problems(s, [endpoint.Answer("u", 200, {"data": [{"id": "llama3"}]})])
    (gone,) = missing
    assert "never pulls" in gone
    assert "llama3" in gone
    small = endpoint.Answer("u", 200, {"data": [{"id": "qwen3", "context_length": 4096}]})
    (line,) = endpoint.problems(s, [small])
    assert "4096" in line
    (down,) = endpoint.problems(s, [endpoint.Answer("u", None, error="refused")])
    assert down.startswith(f"codex (codex at {URL}): the server does not answer")
    (tiny,) = endpoint.problems(seat("claude", context_window=4096), [ok])
    assert "below the 32768" in tiny
    assert endpoint.listing_urls(seat("gemini")) == [URL + "/v1beta/models"]
    assert endpoint.listing_urls(seat("claude", base_url=URL + "/v1/")) == [
        URL + "/v1/models", URL + "/api/tags"]


def test_claudes_mcp_server_is_started_without_the_seats_server_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """claude gets the self-hosted server's key as ANTHROPIC_AUTH_TOKEN; a search server it
    starts is not given it (it is started without every variable of claude's own)."""
    import json

    from council.runoptions import McpServer

    monkeypatch.setenv("MY_LOCAL_KEY", "s3cret-local")
    s = seat("claude", context_window=65536, api_key_env="MY_LOCAL_KEY")
    s = Seat.from_dict("claude", {**s.to_dict(), "mcp_servers": {
        "search": {"command": "/usr/bin/search-mcp", "search": True}}}, "t")
    assert s.mcp_servers == (McpServer("search", "/usr/bin/search-mcp", search=True),)
    inv = adapter_for("claude").prepare(job(tmp_path, s))
    assert inv.env["ANTHROPIC_AUTH_TOKEN"] == "s3cret-local"
    config = inv.argv[list(inv.argv).index("--mcp-config") + 1]
    started = json.loads(Path(config).read_text())["mcpServers"]["search"]
    assert started["command"] == "env"
    unset = [a for i, a in enumerate(started["args"]) if i and started["args"][i - 1] == "-u"]
    assert "ANTHROPIC_AUTH_TOKEN" in unset
    assert "ANTHROPIC_BASE_URL" in unset


# ------------------------------------------------- who checks the claims (issue 43, item 3)

def test_self_hosted_seats_of_one_model_family_are_one_vendor() -> None:
    """Three CLIs on one server running one model family are not "agents of other vendors":
    a claim's checker is a seat of another vendor (claimcheck.assign), which they are not."""
    from council.evidence.claimcheck import Claim, assign
    from council.runoptions import checkers, family

    local = [seat(cli, model=model) for cli, model in (
        ("claude", "qwen3-coder:30b"), ("codex", "Qwen/Qwen3-32B"), ("gemini", "qwen3"))]
    assert {s.vendor for s in local} == {"qwen (self-hosted)"}
    assert family("hf.co/unsloth/Llama-3.1-8B") == "llama"
    assert checkers(local) == "another seat of the same model family (qwen)"
    vendors = [Seat.from_dict(cli, {"cli": cli}, "t") for cli in ("claude", "codex")]
    assert checkers(vendors) == "agents of other vendors"
    assert checkers([*local[:1], seat("codex", model="llama3.3")]) == "agents of other vendors"
    assert checkers([*local[:1], vendors[0]]) == "agents of other vendors"
    # The checks go to another seat, as for seats of one vendor, not by CLI.
    claims = [Claim("c1", "claude", "x", ()), Claim("c2", "codex", "y", ())]
    plan = assign(claims, {s.name: s.vendor for s in local})
    assert {c.id: s for s, batch in plan.items() for c in batch} == {"c1": "codex",
                                                                     "c2": "claude"}


def test_the_plan_and_the_header_say_what_the_checking_really_was(tmp_path: Path) -> None:
    import json

    from council.evidence import finalreport
    from council.graph import plan
    from council.runoptions import RunOptions
    from council.store.state import AgentPhase, AgentRecord, RunState, StateFile, create_state
    from council.store.workspace import CLAIMS, Workspace

    local = tuple(seat(cli) for cli in ("claude", "codex", "gemini"))
    options = RunOptions(seats=local)
    depth = plan(options)[0]
    assert "claims checked by another seat of the same model family (qwen)" in depth, depth
    assert "other vendors" not in depth
    ws = Workspace(tmp_path / "20261122-031441-88dba5")
    ws.root.mkdir()
    create_state(ws.root, RunState(
        id=ws.id, topic="q", created_at="2026-11-22T03:14:41Z", options=options,
        phase="synthesis", synthesizer="claude", agents={
            s.name: AgentRecord(cli=s.cli, phases={"research": AgentPhase(status="complete")})
            for s in local}))
    (ws.root / CLAIMS).write_text(json.dumps({"claims": [], "tally": {"SUPPORTED": 2}}))
    ws.final_report.write_text("# The answer\n")
    finalreport.stamp_final_report(ws, StateFile(ws.root), [s.name for s in local], 3,
                                   "claude")
    header = ws.final_report.read_text().splitlines()[0]
    assert ("claims: 2 supported, checked by another seat of the same model family (qwen)"
            in header), header
