"""Self-hosted seats with the real CLIs, offline: the scripted server stands in for a server
the user runs, and each seat reaches it through its own `base_url` in the config, never
through a vendor variable of council's environment."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from council.evidence import ledger
from council.store.state import load_state

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

MODELS = {"claude": "local-claude-model", "codex": "gpt-5.5", "gemini": "local-gemini-model"}
# What no self-hosted seat may be given: a vendor's key, login or base URL.
VENDOR = ("ANTHROPIC_", "CLAUDE_CODE_OAUTH", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_",
          "MOCK_API_KEY")


def local_env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """cli_env with every vendor key, login home and base URL taken out."""
    env = {k: v for k, v in cli_env.items() if not k.startswith(VENDOR)}
    env["COUNCIL_RESEARCH_DIR"] = str(tmp_path / "research")
    return env


def write_config(tmp_path: Path, url: str) -> Path:
    config = tmp_path / "local.yaml"
    config.write_text(yaml.safe_dump({"agents": {
        cli: {"cli": cli, "model": model, "base_url": url, "context_window": 65536}
        for cli, model in MODELS.items()}}))
    return config


def council(env: dict[str, str], tmp_path: Path, config: Path
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--config", str(config),
         "How do local models do research?"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)


def test_a_council_of_three_self_hosted_seats(cli_env: dict[str, str], server: ScriptedServer,
                                              tmp_path: Path) -> None:
    server.script = {**server.script, "models": list(MODELS.values())}
    env = local_env(cli_env, tmp_path)
    assert not [k for k in env if k.startswith(VENDOR)]
    proc = council(env, tmp_path, write_config(tmp_path, server.url))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for cli, model in MODELS.items():  # the plan names each seat's endpoint and model
        assert f"{cli}: {cli}, model {model} at {server.url} (window 65536)" in proc.stdout
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()
    # Their tokens are counted and cost nothing: not claude's own total_cost_usd, nor
    # OpenAI's list price for the codex seat's `gpt-5.5` (ledger.charge).
    state = load_state(run)
    for cli in MODELS:
        used = ledger.of_agent(state.agents[cli])
        assert used.tokens > 0, cli
        assert (used.cost_usd, used.estimated, used.self_hosted) == (0.0, False, True), cli

    for api, cli in (("anthropic", "claude"), ("openai", "codex"), ("gemini", "gemini")):
        # The model requests (the preflight's GET of the listing is not one).
        turns = [r for r in server.records(api) if r.get("method") == "POST"]
        assert len(turns) >= 2, api
        # Every request of the seat's CLI, side calls included, names the seat's model.
        assert {r.get("model") for r in turns} == {MODELS[cli]}, api
    headers = [r["headers"] for r in server.records()]
    # claude sent the placeholder as a bearer token, none of the user's keys.
    assert not any("x-api-key" in h and h["x-api-key"] for h in headers
                   if "x-claude-code-session-id" in h)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_seat_whose_server_is_down_is_named_and_nothing_is_created(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {**server.script, "models": list(MODELS.values())}
    config = write_config(tmp_path, server.url)
    data = yaml.safe_load(config.read_text())
    down = f"http://127.0.0.1:{closed_port()}"
    data["agents"]["codex"]["base_url"] = down
    config.write_text(yaml.safe_dump(data))
    proc = council(local_env(cli_env, tmp_path), tmp_path, config)
    assert proc.returncode != 0
    said = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len([line for line in said if down in line]) == 1, proc.stderr
    assert any(line.startswith(f"error: codex (codex at {down}): the server does not answer")
               or f"codex (codex at {down}): the server does not answer" in line
               for line in said), proc.stderr
    assert not (tmp_path / "research").exists() or not [
        p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    # Only the preflight's listings were asked: no CLI was started.
    assert not [r for r in server.records() if r.get("method") != "GET"]


def test_the_example_of_docs_local_runs_to_a_final_report(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """issue 43 item 1: docs/local.md's example, copied as written into the user's own
    config file, runs to a final report. Only the servers' addresses change (the scripted
    server stands in for Ollama on :11434 and LiteLLM on :4000, its Gemini route included);
    the seats, models, windows and `api_key_env` are the example's."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "local.md").read_text()
    (block,) = re.findall(r"^```yaml\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    addresses = set(re.findall(r"http://127\.0\.0\.1:\d+", block))
    assert addresses == {"http://127.0.0.1:11434", "http://127.0.0.1:4000"}
    for address in addresses:
        block = block.replace(address, server.url)
    seats = yaml.safe_load(block)["agents"]
    server.script = {**server.script, "models": [s["model"] for s in seats.values()]}
    env = local_env(cli_env, tmp_path)
    env["LITELLM_KEY"] = "sk-litellm-local"
    config = Path(env["HOME"]) / ".config" / "council" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(block)
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "How do local models do research?"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "final report: written by local-claude, the first agent" in proc.stdout
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    # Every seat wrote its reports: codex offers no apply_patch for `gpt-oss:20b` (outside its
    # catalog), and the scripted model writes through codex's shell, as a model would.
    assert "all 3 agents contributed" in (run / "final-report.md").read_text()
    assert load_state(run).synthesizer == "local-claude"
    for api, name in (("anthropic", "local-claude"), ("openai", "local-codex"),
                      ("gemini", "local-gemini")):
        turns = [r for r in server.records(api) if r.get("method") == "POST"]
        assert {r.get("model") for r in turns} == {seats[name]["model"]}, api
