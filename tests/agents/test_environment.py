"""Each agent CLI sees an allow-list of council's environment: the basics, council's hooks'
variables and its own vendor's; every other secret stays out of its reach."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Council

from council.agents.environment import agent_env

PLANTED = {
    "ANTHROPIC_API_KEY": "sk-ant-planted", "OPENAI_API_KEY": "sk-openai-planted",
    "GEMINI_API_KEY": "gm-planted", "AWS_SECRET_ACCESS_KEY": "aws-planted",
    "GITHUB_TOKEN": "ghp-planted", "DATABASE_URL": "postgres://u:planted@db/x",
    "SLACK_BOT_TOKEN": "xoxb-planted",
}
BASE = {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "TERM": "xterm", "HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost",
        "SSL_CERT_FILE": "/etc/ssl/ca.pem", "COUNCIL_RESEARCH_DIR": "/r"}
OWN = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


@pytest.mark.parametrize("cli", list(OWN))
def test_each_cli_gets_the_basics_and_its_own_key_only(cli: str) -> None:
    env = agent_env(cli, {**BASE, **PLANTED})
    assert set(env) == {*BASE, OWN[cli]}
    assert env["HTTPS_PROXY"] == "http://proxy:3128"


@pytest.mark.parametrize("cli", list(OWN))
def test_no_cli_gets_a_python_path(cli: str) -> None:
    """council's hooks run `python -I`: PYTHONPATH is nothing they need, and an empty entry
    of it would put an agent's folder on the sys.path of any Python its tools start."""
    env = agent_env(cli, {**BASE, "PYTHONPATH": ":/src", "PYTHONSTARTUP": "/x.py",
                          "VIRTUAL_ENV": "/venv"})
    assert not [name for name in env if name.startswith("PYTHON")]


def test_a_seat_names_more_variables_and_clouds_pass_only_when_used(tmp_path: Path) -> None:
    environ = {**BASE, **PLANTED, "CORP_PROXY_AUTH": "x"}
    assert "CORP_PROXY_AUTH" in agent_env("gemini", environ, extra=["CORP_PROXY_AUTH"])
    assert "AWS_SECRET_ACCESS_KEY" not in agent_env("claude", environ)
    bedrock = agent_env("claude", {**environ, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert "AWS_SECRET_ACCESS_KEY" in bedrock
    assert "AWS_SECRET_ACCESS_KEY" not in agent_env("claude", {**environ,
                                                                "CLAUDE_CODE_USE_BEDROCK": "0"})
    # codex: the key its config.toml tells it to read for a custom provider.
    (tmp_path / "config.toml").write_text(
        'model_provider = "corp"\n[model_providers.corp]\nenv_key = "CORP_LLM_KEY"\n')
    codex = agent_env("codex", {**environ, "CODEX_HOME": str(tmp_path), "CORP_LLM_KEY": "k"})
    assert codex["CORP_LLM_KEY"] == "k"
    assert "CORP_LLM_KEY" not in agent_env("claude", {**environ, "CORP_LLM_KEY": "k"})


def test_a_run_gives_each_cli_only_its_allow_list(council: Council) -> None:
    """End to end: the fake CLIs log the names of the variables they were started with."""
    council.env.update(PLANTED)
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    starts = [e for e in council.fake_log() if e["event"] == "start"]
    assert {e["cli"] for e in starts} == set(OWN)
    for start in starts:
        names = set(start["env_names"])
        assert OWN[start["cli"]] in names, start["cli"]
        leaked = (names & set(PLANTED)) - {OWN[start["cli"]]}
        assert not leaked, (start["cli"], leaked)
    run = council.only_run()
    homes = {e["cli"]: e["home"] for e in starts}
    assert homes["codex"] == str(run / "homes" / "codex")  # its shell reads anywhere
    assert homes["claude"] == homes["gemini"] == council.env["HOME"]


WORKER_KEYS = {"claude": "CLAUDE_CODE_OAUTH_TOKEN", "codex": "CODEX_API_KEY",
               "gemini": "GEMINI_API_KEY"}


@pytest.mark.parametrize("cli", list(WORKER_KEYS))
def test_a_headless_workers_non_rotating_key_reaches_its_own_cli_only(cli: str) -> None:
    """docs/eval.md tells a worker to use `claude setup-token`'s CLAUDE_CODE_OAUTH_TOKEN and
    codex's CODEX_API_KEY: each must reach its own CLI, and no other vendor's."""
    planted = {name: f"{name.lower()}-planted" for name in WORKER_KEYS.values()}
    env = agent_env(cli, {**BASE, **planted})
    assert set(env) == {*BASE, WORKER_KEYS[cli]}
