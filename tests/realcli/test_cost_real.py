"""What the real CLIs send their model on a whole run, against the plan's estimate and the
volume docs/cost.md records (the scripted model server logs each request's size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from council.config import Overrides, load_options
from council.evidence.estimate import estimate

from .server import ScriptedServer
from .test_council import council

pytestmark = pytest.mark.realcli

API_CLI = {"anthropic": "claude", "openai": "codex", "gemini": "gemini"}


def test_the_default_pipeline_sends_what_the_plan_estimates(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = council(cli_env, tmp_path, "--depth", "deep", "--verify", "How do tides work?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sent = [r for r in server.records() if r.get("api") in API_CLI
            and r.get("method") == "POST" and "bytes" in r]
    by_cli: dict[str, list[int]] = {}
    for r in sent:
        by_cli.setdefault(API_CLI[r["api"]], []).append(int(r["bytes"]))
    total = sum(map(sum, by_cli.values()))
    planned = estimate(load_options(Overrides(test=True, verify=True, depth="deep")))
    assert 0.5 <= planned.requests / len(sent) <= 2, (planned.requests, len(sent))
    assert 0.5 <= planned.sent_bytes / total <= 2, (planned.sent_bytes, total)
    # half of what 60519a8 sent (4.18 MB), and claude's mean request at most 20 KB
    assert total <= 2_090_000, total
    assert sum(by_cli["claude"]) / len(by_cli["claude"]) <= 20_000, by_cli["claude"]
