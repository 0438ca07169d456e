"""Each adapter's argv and output parsing, against the CLIs' recorded real behaviour."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import FAKES_BIN

from council.agents import adapter_for
from council.agents import codex as codex_agent
from council.agents import gemini as gemini_agent
from council.agents.base import TURNS_PER_ITERATION, AgentJob, turn_cap
from council.agents.codex import CodexConfigError
from council.domains import Policy
from council.graph import FILES
from council.runoptions import Seat


def job(tmp_path: Path, seat: Seat) -> AgentJob:
    cwd = tmp_path / "run dir" / "agents" / seat.name
    cwd.mkdir(parents=True)
    loops = tmp_path / "run dir" / "loops"
    loops.mkdir(exist_ok=True)
    prompt = cwd / "research-prompt.md"
    prompt.write_text("Report file: x")
    return AgentJob(seat=seat, tag="research", cwd=cwd, prompt_file=prompt,
                    hook_args=("--run-dir", str(tmp_path / "run dir"), "--seat", seat.name),
                    max_iterations=12, private_dir=loops)


def hook_words(command: str, job: AgentJob, cli: str) -> list[str]:
    """The hook command's words after its HOME=…, checked as the shell will read them: an
    empty HOME of council's, this interpreter in isolated mode, the entry file."""
    words = shlex.split(command)
    assert words[0] == f"HOME={job.council_dir() / 'hook-home'}"
    assert (job.council_dir() / "hook-home").is_dir()
    assert not list((job.council_dir() / "hook-home").iterdir())
    assert words[2] == "-I"  # no PYTHONPATH, no user site, not the cwd
    assert words[3].endswith("council/__main__.py")
    assert words[4:6] == ["hook", cli]
    return words


def write_log(tmp_path: Path, events: list[object]) -> Path:
    log = tmp_path / "out.jsonl"
    log.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n"
                           for e in events))
    return log


def test_claude_invocation(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("claude", "claude", model="opus", effort="high",
                           extra_args=("--max-turns", "80")))
    inv = adapter_for("claude").prepare(j)
    argv = list(inv.argv)
    assert argv[:2] == ["claude", "-p"]
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert argv[argv.index("--setting-sources") + 1] == "user"  # nothing from its folder
    assert "--strict-mcp-config" in argv  # no .mcp.json from its folder either
    assert "--dangerously-skip-permissions" not in argv
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert "--verbose" in argv  # stream-json requires it
    assert "Bash" not in argv[argv.index("--allowedTools") + 1]
    assert argv[-2:] == ["--max-turns", "80"]
    assert inv.stdin_file == j.prompt_file
    assert int(inv.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"]) > j.max_iterations
    settings_file = Path(argv[argv.index("--settings") + 1])
    # In council's own folder, out of the agent's reach; nothing of it in the agent's.
    assert settings_file == j.council_dir() / "claude-research-claude-settings.json"
    assert not [p for p in j.cwd.iterdir() if "settings" in p.name]
    assert settings_file.stat().st_mode & 0o077 == 0
    settings = json.loads(settings_file.read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    words = hook_words(command, j, "claude")
    assert str(tmp_path / "run dir") in words  # a path with a space survives the shell


def test_claudes_argv_carries_the_source_policy(tmp_path: Path) -> None:
    """The run's source policy (domains.py) as claude's WebFetch permission rules: only the
    allowed domains pre-approved, the denied ones refused, each with its subdomains."""
    j = replace(job(tmp_path, Seat("claude", "claude")),
                sources=Policy(allow=("example.org",), deny=("evil.example.org",)))
    argv = list(adapter_for("claude").prepare(j).argv)
    assert argv.count("--allowedTools") == argv.count("--disallowedTools") == 1
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    refused = argv[argv.index("--disallowedTools") + 1].split(",")
    assert "WebFetch" not in allowed  # not every domain
    assert {"WebFetch(domain:example.org)", "WebFetch(domain:*.example.org)"} <= set(allowed)
    assert {"Bash", "WebFetch(domain:evil.example.org)",
            "WebFetch(domain:*.evil.example.org)"} <= set(refused)


def test_codexs_web_search_is_filtered_to_the_allowed_domains(tmp_path: Path) -> None:
    j = replace(job(tmp_path, Seat("codex", "codex")),
                sources=Policy(allow=("example.org", "xn--bcher-kva.de"), deny=("a.org",)))
    argv = list(adapter_for("codex").prepare(j).argv)
    assert 'tools.web_search={allowed_domains=["example.org", "xn--bcher-kva.de"]}' in argv
    # a deny list alone gives codex nothing to hold its search to; nor does a phase without web
    denied = replace(j, sources=Policy(deny=("a.org",)))
    assert not [a for a in adapter_for("codex").prepare(denied).argv if "allowed_domains" in a]
    files = replace(j, tools=FILES, tag="claims")
    assert not [a for a in adapter_for("codex").prepare(files).argv if "allowed_domains" in a]


def test_claude_loads_no_settings_from_the_agents_folder(tmp_path: Path) -> None:
    """The fake claude, like 2.1.197, runs the hooks of a .claude/settings(.local).json in its
    cwd unless --setting-sources leaves them out; council's own hook still runs."""
    j = job(tmp_path, Seat("claude", "claude"))
    witness, log = tmp_path / "ran", tmp_path / "fake-log.jsonl"
    (j.cwd / ".claude").mkdir()
    for name in ("settings.json", "settings.local.json"):
        hook = {"type": "command", "command": f"echo {name} >> {shlex.quote(str(witness))}"}
        (j.cwd / ".claude" / name).write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    inv = adapter_for("claude").prepare(j)
    env = {**os.environ, **inv.env, "PATH": f"{FAKES_BIN}{os.pathsep}{os.environ['PATH']}",
           "COUNCIL_FAKE_LOG": str(log)}
    with j.prompt_file.open("rb") as stdin:
        subprocess.run(inv.argv, cwd=inv.cwd, env=env, stdin=stdin, capture_output=True,
                       timeout=60, check=True)
    assert not witness.exists()
    hooks = [json.loads(line) for line in log.read_text().splitlines()
             if json.loads(line)["event"] == "hook"]
    (ours,) = hooks  # one stop, and council's hook alone ran at it (its usage: no loop)
    assert "usage: council hook" in ours["stderr"]


def test_claude_settings_replace_a_link_planted_at_their_name(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("claude", "claude"))
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's")
    (j.council_dir() / "claude-research-claude-settings.json").symlink_to(victim)
    adapter_for("claude").prepare(j)
    assert victim.read_text() == "the user's"
    assert not (j.council_dir() / "claude-research-claude-settings.json").is_symlink()


def test_an_adapter_needs_council_s_private_folder(tmp_path: Path) -> None:
    from dataclasses import replace

    for cli in ("claude", "gemini"):
        bare = replace(job(tmp_path / cli, Seat(cli, cli)), private_dir=None)
        with pytest.raises(ValueError, match="no private folder"):
            adapter_for(cli).prepare(bare)


def test_claude_outcome_uses_is_error_not_subtype(tmp_path: Path) -> None:
    log = write_log(tmp_path, [
        {"type": "system", "subtype": "init", "session_id": "s-1"},
        {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 500,
         "result": "API Error: 500 Internal server error.", "session_id": "s-1"},
    ])
    out = adapter_for("claude").outcome(log, 1)
    assert out.session_id == "s-1"
    assert out.error == "claude exited with code 1: API Error: 500 Internal server error."
    ok = write_log(tmp_path, [{"type": "result", "subtype": "success", "is_error": False,
                               "result": "", "session_id": "s-2"}])
    assert adapter_for("claude").outcome(ok, 0).error is None


def test_codex_invocations(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("codex", "codex", model="gpt-5.5", effort="xhigh"))
    codex = adapter_for("codex")
    first = list(codex.prepare(j).argv)
    assert first[:3] == ["codex", "exec", "--json"]
    assert "--skip-git-repo-check" in first
    assert first[-1] == "-"  # prompt on stdin
    assert "--full-auto" not in first
    assert "model_reasoning_effort=xhigh" in first
    nxt = codex.resume(j, "01a2-thread", "Iteration 2 of 3.")
    argv = list(nxt.argv)
    i = argv.index("resume")
    assert argv[argv.index("-C") + 1] == str(j.cwd)
    # A permission profile: reads of system folders only, writes to the agent's folder.
    assert "-s" not in argv
    assert argv[argv.index("-c") + 1] == 'default_permissions="council"'
    assert 'permissions.council.filesystem={":minimal"="read", ":project_roots"={"."="write"}' \
        in " ".join(argv)
    assert argv.index("-C") < i
    assert argv[i + 1:] == ["--skip-git-repo-check", "--json", "01a2-thread",
                            "Iteration 2 of 3."]
    assert "--last" not in argv
    # council's own codex plugin must not run inside its agents (its hooks would recurse).
    assert [argv[k + 1] for k, a in enumerate(argv) if a == "--disable"][-1:] == ["plugins"]
    assert nxt.stdin_file is None  # /dev/null: codex waits for EOF on stdin


def test_codex_falls_back_to_the_older_sandbox_when_config_forces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox_mode in the user's config.toml makes codex ignore permission profiles: then
    council asks for workspace-write, which still contains writes."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    (tmp_path / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    argv = list(adapter_for("codex").prepare(job(tmp_path, Seat("codex", "codex"))).argv)
    assert argv[argv.index("-s") + 1] == "workspace-write"
    assert "sandbox_workspace_write.exclude_slash_tmp=true" in argv
    assert 'default_permissions="council"' not in argv
    (tmp_path / "config.toml").write_text('profile = "p"\n[profiles.p]\nsandbox_mode = "x"\n')
    assert "-s" in adapter_for("codex").prepare(job(tmp_path / "2", Seat("codex", "codex"))).argv


def test_codex_outcome(tmp_path: Path) -> None:
    log = write_log(tmp_path, [
        {"type": "thread.started", "thread_id": "01a20071-354c"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5"},  # a retry, not a failure
        {"type": "turn.completed", "usage": {"input_tokens": 300, "output_tokens": 60}},
    ])
    out = adapter_for("codex").outcome(log, 0)
    assert (out.session_id, out.error) == ("01a20071-354c", None)
    offset = log.stat().st_size
    with log.open("a") as f:
        f.write(json.dumps({"type": "thread.started", "thread_id": "01a20071-354c"}) + "\n")
        f.write("not json\n")
        f.write(json.dumps({"type": "turn.failed", "error": {"message": "Quota exceeded."}})
                + "\n")
    failed = adapter_for("codex").outcome(log, 1, offset)
    assert failed.error == "codex exited with code 1: Quota exceeded."


def test_gemini_invocation(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("gemini", "gemini", model="pro"))
    inv = adapter_for("gemini").prepare(j)
    argv = list(inv.argv)
    assert argv[argv.index("--approval-mode") + 1] == "auto_edit"  # write_file, no shell
    assert argv[argv.index("-o") + 1] == "stream-json"
    assert argv[argv.index("-e") + 1] == "none"  # no extension, council's own included
    assert inv.env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"  # else hooks are ignored
    assert inv.env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    settings = json.loads((j.cwd / ".gemini" / "settings.json").read_text())
    hook = settings["hooks"]["AfterAgent"][0]["hooks"][0]
    hook_words(hook["command"], j, "gemini")
    # The shell gemini starts the hook in: council's empty HOME, no start-up file sourced.
    assert hook["env"] == {"HOME": str(j.council_dir() / "hook-home"), "SHLVL": "1",
                           "BASH_ENV": ""}
    assert settings["general"]["maxAttempts"] <= 3  # fail in seconds, not minutes
    assert "modelConfigs" not in settings  # no effort: gemini's own thinking defaults
    # An empty .gemini/.env: gemini's search for a .env ends in the agent's own folder.
    assert (j.cwd / ".gemini" / ".env").read_bytes() == b""


def test_gemini_workspace_is_made_afresh_whatever_an_agent_left(tmp_path: Path) -> None:
    """A `.gemini` that an agent replaced with a link is removed, not written through; one
    it filled (commands, agents, its own settings) is council's alone again."""
    j = job(tmp_path, Seat("gemini", "gemini"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text("the user's")
    (j.cwd / ".gemini").symlink_to(elsewhere)
    adapter_for("gemini").prepare(j)
    assert (elsewhere / "settings.json").read_text() == "the user's"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["settings.json"]
    assert not (j.cwd / ".gemini").is_symlink()
    (j.cwd / ".gemini" / "commands").mkdir()
    (j.cwd / ".gemini" / "commands" / "x.toml").write_text("prompt = 'obey'")
    (j.cwd / ".gemini" / ".env").unlink()
    (j.cwd / ".gemini" / ".env").symlink_to(elsewhere / "settings.json")
    adapter_for("gemini").prepare(j)
    assert sorted(p.name for p in (j.cwd / ".gemini").iterdir()) == [".env", "settings.json"]
    assert not (j.cwd / ".gemini" / ".env").is_symlink()
    assert (elsewhere / "settings.json").read_text() == "the user's"


def test_gemini_effort_becomes_thinking_settings(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("gemini", "gemini", model="pro", effort="low"))
    adapter_for("gemini").prepare(j)
    aliases = json.loads((j.cwd / ".gemini" / "settings.json").read_text())[
        "modelConfigs"]["customAliases"]
    assert aliases["chat-base-3"]["extends"] == "chat-base"
    thinking = {name: a["modelConfig"]["generateContentConfig"]["thinkingConfig"]
                for name, a in aliases.items()}
    assert thinking == {"chat-base-3": {"thinkingLevel": "LOW"},
                        "chat-base-2.5": {"thinkingBudget": 1024}}


@pytest.mark.parametrize(
    ("code", "events", "error"),
    [
        (244, [{"type": "result", "status": "error",
                "error": {"type": "API", "message": "Internal error"}}],
         "gemini exited with code 244 (server error (HTTP 500)): Internal error"),
        (55, [], "gemini exited with code 55 (workspace not trusted)"),
        (0, [{"type": "init", "session_id": "g-1"},
             {"type": "result", "status": "success", "stats": {}}], None),
    ],
)
def test_gemini_outcome(tmp_path: Path, code: int, events: list[object],
                        error: str | None) -> None:
    assert adapter_for("gemini").outcome(write_log(tmp_path, events), code).error == error


@pytest.mark.parametrize(("cli", "said", "lost"), [
    # What each CLI says when asked to resume a session it has no record of (the notes).
    ("claude", "claude exited with code 1: No conversation found with session ID: 5bf9", True),
    ("codex", "Error: thread/resume: thread/resume failed: no rollout found for thread id 01",
     True),
    ("gemini", "Error resuming session: Invalid session identifier 'x'", True),
    # Any other failure of a resumed session fails the seat as usual.
    ("claude", "claude exited with code 1: API Error: 500", False),
    ("codex", "thread-store conflict: thread 01 already has an active writer", False),
])
def test_each_cli_says_in_its_own_words_that_a_session_is_gone(cli: str, said: str,
                                                               lost: bool) -> None:
    assert adapter_for(cli).lost_session(said) is lost


# ------------------------------------------------------------ MCP servers and turn caps
def mcp_override(argv: list[str]) -> dict[str, object] | None:
    """The table of codex's `-c mcp_servers=…`, parsed as codex parses a -c value (TOML), or
    None when there is none."""
    values = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    tables = [tomllib.loads(f"x = {v.partition('=')[2]}")["x"] for v in values
              if v.partition("=")[0] == "mcp_servers"]
    assert len(tables) <= 1
    return tables[0] if tables else None


def test_codex_turns_off_every_mcp_server_its_configs_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """codex starts the user's servers as the user, outside the sandbox: each one the system
    config, the user's config.toml and the seat's profile name is turned off, names with a
    dot, a space or a quote included (codex splits a -c key at every dot)."""
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    (home / "config.toml").write_text(
        'model = "m"\n[mcp_servers.github]\ncommand = "gh-mcp"\n'
        '[mcp_servers."council.research"]\ncommand = "council"\n'
        '[mcp_servers."a b\\"=c"]\nurl = "http://127.0.0.1:1/mcp"\n'
        '[profiles.p.mcp_servers.ignored]\ncommand = "x"\n')  # codex 0.169 reads no such table
    system = tmp_path / "etc-codex.toml"
    system.write_text('[mcp_servers.fleet]\ncommand = "fleet"\n')
    monkeypatch.setattr(codex_agent, "SYSTEM_CONFIG", system)
    (home / "work.config.toml").write_text('[mcp_servers.db]\ncommand = "db"\n')
    off = {name: {"enabled": False} for name in ("fleet", "github", "council.research",
                                                 'a b"=c')}
    adapter = adapter_for("codex")

    plain = job(tmp_path / "1", Seat("codex", "codex"))
    first, resumed = list(adapter.prepare(plain).argv), list(adapter.resume(plain, "t", "go").argv)
    for argv in (first, resumed):  # resume does not remember config: every call says it
        assert mcp_override(argv) == off
        # No `.codex/config.toml` above the agent's folder (a trusted project's) is loaded.
        assert argv[argv.index("project_root_markers=[]") - 1] == "-c"
    # A profile the seat selects adds its servers; an unselected profile's would make codex
    # refuse to start ("invalid transport": a server named only in an override).
    for args in (("-p", "work"), ("--profile=work",), ("--profile", "work"), ("-pwork",)):
        profiled = job(tmp_path / args[0].strip("-="), Seat("codex", "codex", extra_args=args))
        assert mcp_override(list(adapter.prepare(profiled).argv)) == {**off, "db": off["fleet"]}


def test_codex_names_no_server_when_no_config_has_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "empty-codex-home"))
    monkeypatch.setattr(codex_agent, "SYSTEM_CONFIG", tmp_path / "no-such.toml")
    argv = list(adapter_for("codex").prepare(job(tmp_path, Seat("codex", "codex"))).argv)
    assert mcp_override(argv) is None
    assert "project_root_markers=[]" in argv


def test_codex_reads_a_linked_config_and_refuses_a_fifo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's config.toml linked from a dotfiles folder is read as codex reads it (its
    servers turned off); a FIFO there is neither waited on nor guessed at: the seat fails,
    saying why, rather than letting codex start servers council cannot name."""
    home = tmp_path / "codex-home"
    home.mkdir()
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text('[mcp_servers.github]\ncommand = "gh-mcp"\n')
    (home / "config.toml").symlink_to(elsewhere)
    monkeypatch.setenv("CODEX_HOME", str(home))
    argv = adapter_for("codex").prepare(job(tmp_path, Seat("codex", "codex"))).argv
    assert 'mcp_servers={"github"={enabled=false}}' in argv
    os.unlink(home / "config.toml")
    os.mkfifo(home / "config.toml")
    with pytest.raises(CodexConfigError, match="a FIFO"):
        adapter_for("codex").prepare(job(tmp_path / "2", Seat("codex", "codex")))


@pytest.mark.parametrize("name", ["plain", "a.b", "a b", 'q"=x', "back\\slash", "tab\there",
                                  "del\x7f", "é✓"])
def test_a_server_name_is_one_toml_key(name: str) -> None:
    table = tomllib.loads(f"x = {{{codex_agent.toml_string(name)}={{enabled=false}}}}")["x"]
    assert table == {name: {"enabled": False}}


def test_gemini_allows_no_mcp_server_and_caps_its_session(tmp_path: Path) -> None:
    j = job(tmp_path, Seat("gemini", "gemini", model="pro"))
    argv = list(adapter_for("gemini").prepare(j).argv)
    # gemini checks this list before it starts any server, whichever settings file names it.
    assert argv[argv.index("--allowed-mcp-server-names") + 1] == gemini_agent.NO_MCP_SERVER
    assert gemini_agent.NO_MCP_SERVER  # an empty name crashes gemini 0.61 at start
    settings = json.loads((j.cwd / ".gemini" / "settings.json").read_text())
    # The hook loop runs in this one process: the session's cap covers every iteration.
    assert settings["model"]["maxSessionTurns"] == j.max_iterations * TURNS_PER_ITERATION


def test_claude_caps_its_requests_by_the_iteration_cap(tmp_path: Path) -> None:
    for n in (1, 12):
        j = replace(job(tmp_path / str(n), Seat("claude", "claude")), max_iterations=n)
        argv = list(adapter_for("claude").prepare(j).argv)
        assert argv.count("--max-turns") == 1
        assert int(argv[argv.index("--max-turns") + 1]) == n * TURNS_PER_ITERATION
        assert "--strict-mcp-config" in argv


def test_turn_cap_scales_with_the_iteration_cap() -> None:
    assert [turn_cap(n) for n in (1, 2, 10)] == [50, 100, 500]
    assert turn_cap(0) == TURNS_PER_ITERATION  # never 0, which both CLIs read as "no cap"


def test_requests_are_claudes_num_turns_per_process() -> None:
    """Each process's num_turns, summed; a later result of one process replaces its earlier
    one (a running total); no result: not reported."""
    from council.agents.claude import ClaudeAdapter

    adapter = ClaudeAdapter()
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init"}, {"type": "result", "num_turns": 3},
        {"type": "result", "num_turns": 2},  # a second process (a resume)
        {"type": "result", "num_turns": 5, "result_index": 1}]  # its running total
    assert adapter.requests(iter(events)) == 8
    assert adapter.requests(iter([{"type": "assistant"}])) is None


def test_codex_reports_no_requests() -> None:
    from council.agents.codex import CodexAdapter

    assert CodexAdapter().requests(iter([{"type": "turn.completed", "usage": {}}])) is None


def test_a_clis_log_is_read_as_a_plain_file_a_line_at_a_time_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever stands where a log should be (a link to a file of the user's, a FIFO), it
    has no events; a line past the bound is skipped, not held whole."""
    import os

    from council.agents import base

    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"type": "result", "secret": "PRIVATE"}\n')
    (tmp_path / "link.jsonl").symlink_to(secret)
    assert list(base.json_events(tmp_path / "link.jsonl")) == []
    os.mkfifo(tmp_path / "fifo.jsonl")
    assert list(base.json_events(tmp_path / "fifo.jsonl")) == []  # and it did not block
    monkeypatch.setattr(base, "MAX_LOG_LINE", 64)
    log = tmp_path / "log.jsonl"
    log.write_text('{"long": "' + "x" * 200 + '"}\n{"type": "ok"}\n')
    assert list(base.json_events(log)) == [{"type": "ok"}]
