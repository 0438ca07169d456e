"""A self-hosted seat's tokens cost the user nothing: a run with the fake CLIs, whose seats'
servers are a scripted server on 127.0.0.1 (the preflight lists its models). The fake claude
prices its turns as the real one does (total_cost_usd from Anthropic's list, whatever the
model) and the fake codex serves `gpt-5.5`, a vendor's name council has a list price for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import Council
from realcli.server import ScriptedServer

from council.evidence import ledger
from council.store.state import load_state

MODELS = {"claude": "local-claude-model", "codex": "gpt-5.5"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer({"models": list(MODELS.values())}, tmp_path / "server.jsonl") as srv:
        yield srv


def test_self_hosted_seats_cost_nothing_and_never_reach_the_budget(
        council: Council, server: ScriptedServer, tmp_path: Path) -> None:
    config = tmp_path / "local.yaml"
    config.write_text(yaml.safe_dump({"agents": {
        cli: {"cli": cli, "model": model, "base_url": server.url, "context_window": 65536}
        for cli, model in MODELS.items()}}))
    proc = council.run("run", "--test", "--config", str(config), "--max-cost", "0.001",
                       "How do local models do research?", timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "~$0.00 at list prices" in proc.stdout + proc.stderr  # the plan's estimate
    run = council.only_run()
    state = load_state(run)
    assert state.budget_exhausted is None
    for name in MODELS:
        used = ledger.of_agent(state.agents[name])
        assert used.tokens > 0, name  # counted
        assert (used.cost_usd, used.estimated, used.self_hosted) == (0.0, False, True), name
    assert ledger.spent(state).cost_usd == 0.0

    status = council.run("status", run.name)
    assert status.returncode == 0, status.stderr
    rows = [line for line in status.stdout.splitlines() if line.lstrip().startswith(
        tuple(MODELS))]
    assert len(rows) == 2, status.stdout
    assert all("$0 (self-hosted)" in row for row in rows), status.stdout
    page = (run / "report.html").read_text()
    assert "$0 (self-hosted)" in page
    assert "$0.0" not in page
