"""At most max_runs council runs at once on this machine (run/supervisor.py): a supervisor
holds one run slot for its whole life; a run past the limit is refused in one line naming
the active runs (ids and folders), exit 2, before anything is spent; the limit is the
user's own setting; `council eval`'s sample runs are exempt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Council, write_trusted_config

from council import spawn
from council.commands.report import publish
from council.config import Overrides, load_options, max_runs, trust_file
from council.errors import ConfigError
from council.options import EVAL_RUN_ENV, MAX_RUNS_ENV
from council.run import supervisor
from council.run.supervisor import EXIT_REFUSED, RUN_KIND, RUN_SLOTS, TooManyRuns
from council.store import slots
from council.store.owner import owned
from council.store.progress import PROGRESS_FILE
from council.store.state import AgentPhase, RunState, load_state
from council.store.workspace import Workspace

ACTIVE = ("20260101-000000-aaaaaa in /elsewhere/research/20260101-000000-aaaaaa",
          "20260101-000001-bbbbbb in /other/research/20260101-000001-bbbbbb")


def others_hold(labels: tuple[str, ...] = ACTIVE) -> list[int]:
    """The machine's run slots, held (by this process, as two other supervisors would)."""
    held = []
    for label in labels:
        got = slots.take_counted(slots.cache_folder(RUN_SLOTS), RUN_KIND, 99, label)
        assert got.fd is not None
        held.append(got.fd)
    return held


def new_run(base: Path) -> Workspace:
    return supervisor.start_run("Tides?", load_options(Overrides(test=True)), base)


def test_a_run_past_the_limit_is_refused_naming_the_active_runs(isolated: Path) -> None:
    first, second = new_run(isolated / "research"), new_run(isolated / "research")
    with supervisor.reserve(first), supervisor.reserve(second):
        with pytest.raises(TooManyRuns) as refused:
            supervisor.reserve(base=isolated / "research")
        with pytest.raises(TooManyRuns):
            supervisor.check_room()
    line = str(refused.value)
    assert refused.value.exit_code == 2
    assert "\n" not in line
    assert line.startswith("2 council runs are already active on this machine, which allows "
                           "2 at once (max_runs: the default; ")
    for ws in (first, second):
        assert f"{ws.id} in {ws.root}" in line
    with supervisor.reserve(base=isolated / "research") as again:  # both let go: room
        assert again.fd is not None
        supervisor.check_room()


def test_the_limit_is_the_users_own_setting(isolated: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_runs()[0] == 2
    own = isolated / "config" / "config.yaml"
    own.parent.mkdir()
    own.write_text("max_runs: 3\n")
    assert max_runs() == (3, f"max_runs in {own}")
    assert load_options(Overrides()).profile == "production"  # a known key of the user's file
    monkeypatch.setenv(MAX_RUNS_ENV, "1")
    assert max_runs() == (1, "$COUNCIL_MAX_RUNS")
    monkeypatch.setenv(MAX_RUNS_ENV, "lots")
    with pytest.raises(ConfigError, match=r"^\$COUNCIL_MAX_RUNS takes a whole number"):
        max_runs()
    monkeypatch.delenv(MAX_RUNS_ENV)
    own.write_text("max_runs: 0\n")
    with pytest.raises(ConfigError, match=r"config.yaml: max_runs must be a whole number, "
                                          r"at least 1$"):
        max_runs()


def test_a_projects_config_cannot_set_the_machines_limit(isolated: Path) -> None:
    """Not even once its user trusted it for its seats, nor named with --config: the limit
    holds what a cloned repository's config and an MCP client's model start."""
    project = isolated / "council.yaml"
    project.write_text("max_runs: 50\n")
    refusal = r"council.yaml: max_runs is a setting of this machine: set it in your own"
    with pytest.raises(ConfigError, match=refusal):
        trust_file(project)
    with pytest.raises(ConfigError, match=refusal):
        load_options(Overrides(config=project))
    write_trusted_config(isolated, "mode: decision\n")
    (isolated / "council.yaml").write_text("mode: decision\nmax_runs: 50\n")
    with pytest.raises(ConfigError):  # changed since trusted, and its max_runs is refused
        load_options(Overrides())
    assert max_runs()[0] == 2


def test_council_run_is_refused_before_it_makes_a_run(council: Council) -> None:
    held = others_hold()
    try:
        proc = council.run("run", "--test", "q")
    finally:
        slots.release(held)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("council: error: 2 council runs are already active")
    assert all(label in line for label in ACTIVE)
    assert proc.stdout == ""  # said before the plan
    assert not council.research.exists()  # nothing made: not even the research folder
    assert council.fake_log() == []  # no CLI started


def test_a_fresh_run_whose_supervisor_finds_no_slot_ends_failed_with_the_line(
        isolated: Path) -> None:
    """The MCP server's race: it saw room, another run took the last slot, and the detached
    supervisor of its run finds none."""
    ws = new_run(isolated / "research")
    held = others_hold()
    try:
        result = supervisor.execute(ws, publish)
    finally:
        slots.release(held)
    assert result.exit_code == EXIT_REFUSED == 2
    assert result.message.startswith("2 council runs are already active")
    state = load_state(ws.root)
    assert (state.phase, state.error) == ("failed", result.message)
    assert f"run failed: {result.message}" in (ws.root / PROGRESS_FILE).read_text()


def test_the_page_at_a_runs_end_is_written_by_the_writer_handed_down(isolated: Path) -> None:
    """The engine imports no view: whoever starts the supervisor hands it what writes the
    page (execute's `publish`), called once the run has ended; the command line's writes
    report.html."""
    given, default = new_run(isolated / "research"), new_run(isolated / "research")
    written: list[tuple[Workspace, str]] = []
    held = others_hold()
    try:
        supervisor.execute(given, lambda ws, state: written.append((ws, state.phase)))
        supervisor.execute(default, publish)
    finally:
        slots.release(held)
    assert written == [(given, "failed")]
    assert not (given.root / "report.html").exists()
    assert (default.root / "report.html").is_file()


def test_a_begun_run_refused_a_slot_is_left_to_resume(isolated: Path) -> None:
    ws = new_run(isolated / "research")

    def begin(state: RunState) -> None:
        state.agents["claude"].phases["research"] = AgentPhase(status="running",
                                                               iteration=1)

    with owned(ws.root) as owner:
        owner.update(begin)
    held = others_hold()
    try:
        result = supervisor.execute(ws, publish)
    finally:
        slots.release(held)
    assert result.exit_code == 2
    state = load_state(ws.root)
    assert (state.phase, state.error) == ("research", None)


def test_councils_eval_runs_are_exempt(council: Council) -> None:
    """Its own --max-runs and --per-vendor hold them, so `council eval --max-runs 3` runs
    three even with the machine's runs at their limit."""
    held = others_hold()
    try:
        refused = council.run("run", "--test", "--agents", "claude", "q")
        council.env[EVAL_RUN_ENV] = "1"
        ran = council.run("run", "--test", "--agents", "claude", "q")
    finally:
        slots.release(held)
    assert refused.returncode == 2
    assert ran.returncode == 0, ran.stderr


def test_evals_sample_runs_are_marked_exempt(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from council.evaluation import solver

    seen: dict[str, Any] = {}

    async def run(argv: tuple[str, ...], **kwargs: Any) -> int:
        seen.update(kwargs, argv=argv)
        return 0

    monkeypatch.setattr(spawn, "run", run)
    assert anyio.run(solver._council, tmp_path, "resume", "20260101-000000-aaaaaa") == 0
    assert seen["argv"][-2:] == ("resume", "20260101-000000-aaaaaa")
    assert seen["env"][EVAL_RUN_ENV] == "1"
