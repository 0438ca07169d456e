"""One answer per question (council/commands/): `council status --json`, the MCP tool
research_status and the live view (views/watch.py) show one run with the same percent and
the same phase word, mid-run, starting and interrupted; `council list --json` and
list_research give the same objects."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from council import cli
from council.config import Overrides, load_options
from council.hosts import mcptools
from council.store import provenance
from council.store.runlock import RunLock
from council.store.state import AgentPhase, AgentRecord, RunState, create_state
from council.store.workspace import Workspace
from council.views.watch import table

RUN_ID = "20261123-100000-abcdef"


def made(base: Path, created: str, phases: dict[str, AgentPhase],
         steps: dict[str, str] | None = None, phase: str = "research") -> Workspace:
    """A run of three seats on disk, each in `phases`, made by council here."""
    ws = Workspace(base / RUN_ID)
    ws.root.mkdir(parents=True)
    create_state(ws.root, RunState(
        id=RUN_ID, topic="How do tides work?", created_at=created,
        options=load_options(Overrides(test=True)), phase=phase, steps=steps,
        agents={s: AgentRecord(cli=s, phases=dict(phases)) for s in ("claude", "codex",
                                                                      "gemini")}))
    provenance.record(ws.root)
    return ws


def surfaces(base: Path) -> dict[str, tuple[str, int | None]]:
    """(phase word, percent) as each surface shows the run."""
    result = CliRunner().invoke(cli.main, ["status", "--json", RUN_ID, "--research-dir",
                                           str(base)])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    answer = mcptools.run_status({"run_id": RUN_ID}, mcptools.Call(base, "test"))
    first = re.fullmatch(r"run \S+: (\S+) \((\d+)%\)", answer.text.splitlines()[0])
    assert first is not None
    console = Console(record=True, width=200)
    ws = Workspace(base / RUN_ID)
    from council.store.state import load_state

    console.print(table(load_state(ws.root), ws))
    watched = console.export_text()
    title = re.search(rf"council {RUN_ID} · (\S+) · ", watched)
    overall = re.search(r"overall .* (\d+)% done, ", watched)
    assert title is not None
    return {"council status --json": (shown["phase"], shown["percent"]),
            "research_status data": (answer.data["phase"], answer.data["percent"]),
            "research_status text": (first[1], int(first[2])),
            "live view": (title[1], int(overall[1]) if overall else None)}


def test_mid_run_every_surface_shows_the_same_percent_and_phase(tmp_path: Path) -> None:
    ws = made(tmp_path, "2026-11-23T10:00:00Z",
              {"research": AgentPhase(status="complete", iteration=2, max_iterations=2),
               "refinement": AgentPhase(status="running", iteration=1, max_iterations=2)},
              steps={"research": "done"}, phase="refinement")
    with RunLock(ws.root):  # as its supervisor holds it
        seen = surfaces(tmp_path)
    assert set(seen.values()) == {seen["live view"]}, seen
    phase, percent = seen["live view"]
    assert phase == "refinement"
    assert percent is not None
    assert 0 < percent < 100


@pytest.mark.parametrize(("phases", "launched", "word"), [
    ({}, True, "starting"),
    ({}, False, "interrupted"),
    ({"research": AgentPhase(status="running", iteration=1, max_iterations=2)}, True,
     "interrupted"),
])
def test_without_a_supervisor_every_surface_says_the_same_word(
        tmp_path: Path, phases: dict[str, AgentPhase], launched: bool, word: str) -> None:
    """A run nothing has worked on whose detached supervisor was just launched (an MCP
    request's) is `starting`; any other run no supervisor holds is `interrupted`, on every
    surface (the MCP tools said `starting` where `council status` said `interrupted`)."""
    ws = made(tmp_path, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), phases)
    if launched:
        (ws.root / "logs").mkdir(exist_ok=True)
        (ws.root / "logs" / "supervisor.log").touch()
    seen = surfaces(tmp_path)
    assert {phase for phase, _ in seen.values()} == {word}, seen
    cli_percent = seen["council status --json"][1]
    assert seen["research_status data"][1] == seen["research_status text"][1] == cli_percent


def test_list_json_and_list_research_give_the_same_runs(tmp_path: Path) -> None:
    made(tmp_path, "2026-11-23T10:00:00Z", {}, phase="done")
    broken = tmp_path / "20261124-100000-abcdef"  # a run whose state cannot be read
    broken.mkdir()
    (broken / "state.yaml").write_text("::: not yaml [")
    result = CliRunner().invoke(cli.main, ["list", "--json", "--research-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    listed: list[dict[str, Any]] = json.loads(result.output)
    answer = mcptools.list_research({}, mcptools.Call(tmp_path, "test"))
    assert answer.data["runs"] == listed
    assert [run["id"] for run in listed] == [RUN_ID, "20261124-100000-abcdef"]
    assert listed[1]["error"]
    assert listed[1]["phase"] is None
    schema = mcptools.BY_NAME["list_research"].output["properties"]["runs"]["items"]
    assert list(schema["properties"]) == list(listed[0])
